"""Stacked runs (dpcore.training.stacked, issue 44) against the same runs trained alone by the public trainer.

Paper 003 (van Dijk et al., Algorithm 1): per round each run draws its batch, clips (individually or the batch
mean) to its own C, adds its own noise N(0, (2Cσ)² I) and divides by m.  Equal bit for bit between a stacked
run and the run alone: the batch indices of every round, the noise of every round, which samples the clipping
changes (‖a‖ > C), the run record apart from its ``engine`` field, and so ε.  Equal to a tolerance only: the clip
factors (rtol 1e-5) and the parameters after training (atol 1e-5): the batched kernels sum in another order than the
single-run engines, so the norms differ in the last bits.  A stacked run resumed from a checkpoint ends bit for bit
as an uninterrupted stacked run.  Tiny model and data: the whole module takes seconds.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from dpcore.accounting.records import epsilon_for_record
from dpcore.training import TrainConfig, Trainer, make_classification_eval
from dpcore.training.persample import clip_factors
from dpcore.training.sampling import BatchPlan
from dpcore.training.stacked import STACKED_ENGINE, StackedTrainer, _StackedPrivatizer, check_stackable
from dpcore.training.trainer import Privatizer

N, BATCH, CLASSES = 96, 16, 3


def _model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.Tanh(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(2 * 2 * 2, 6),
                         nn.Tanh(), nn.Linear(6, CLASSES))  # fmt: skip


def _data(seed: int = 0, n: int = N) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, 1, 6, 6, generator=gen), torch.randint(0, CLASSES, (n,), generator=gen)


EVAL = make_classification_eval(*_data(99, 48))
#: (sampling, clipping, seed, C): C about the median norm, so that some samples are clipped and some are not
RUNS = [("fixed", "individual", 0, 0.5), ("shuffle", "individual", 1, 0.3), ("fixed", "batch", 2, 0.1),
        ("shuffle", "batch", 3, 0.05)]  # fmt: skip


def _config(sampling: str, clipping: str, seed: int, clip: float, **kw) -> TrainConfig:
    base = dict(sampling=sampling, batch_size=BATCH, epochs=3, clipping=clipping, clip_norm=clip, noise_multiplier=2.0,
                noise_convention="replace_one", device="cpu", seed=seed,
                lr={"kind": "decay_on_metric_drop", "lr0": 0.1, "factor": 0.9, "metric": "test_accuracy"})  # fmt: skip
    return TrainConfig(**{**base, **kw})


def _trainer(sampling: str, clipping: str, seed: int, clip: float, **kw) -> Trainer:
    return Trainer(_model(seed), _data(), _config(sampling, clipping, seed, clip, **kw), eval_fn=EVAL)


@pytest.fixture
def taps(monkeypatch):
    """Per (seed, step): the noise, the batch indices and the pre-clipping norms every round used."""
    seen: dict[str, dict] = {"noise": {}, "indices": {}, "norms": {}}
    noise, indices = Privatizer.noise, BatchPlan.indices

    def tap_noise(self, step):
        out = noise(self, step)
        seen["noise"][(self.config.seed, step)] = torch.cat([t.flatten() for t in out]).clone()
        return out

    def tap_indices(self, step):
        out = indices(self, step)
        seen["indices"].setdefault((self.seed, step), out.clone())
        return out

    def tap_sum(original):
        def wrapped(self, x, y):
            res = original(self, x, y)
            seen["norms"][(self.config.seed, len(seen["norms"]))] = res.norms.clone()
            return res

        return wrapped

    monkeypatch.setattr(Privatizer, "noise", tap_noise)
    monkeypatch.setattr(BatchPlan, "indices", tap_indices)
    monkeypatch.setattr(Privatizer, "clipped_sum", tap_sum(Privatizer.clipped_sum))
    monkeypatch.setattr(_StackedPrivatizer, "clipped_sum", tap_sum(_StackedPrivatizer.clipped_sum))

    def take() -> dict[str, dict]:
        out = {k: dict(v) for k, v in seen.items()}
        for v in seen.values():
            v.clear()
        return out

    return take


def _norms_by_seed(norms: dict) -> dict[int, list[torch.Tensor]]:
    out: dict[int, list[torch.Tensor]] = {}
    for (seed, _), v in sorted(norms.items(), key=lambda kv: kv[0][1]):
        out.setdefault(seed, []).append(v)
    return out


@pytest.mark.parametrize("runs", [RUNS, RUNS[2:]], ids=["ic_and_bc", "bc_only"])
def test_stacked_runs_match_the_runs_alone(taps, runs):
    alone = [_trainer(*r) for r in runs]
    for tr in alone:
        tr.run()
    single = taps()
    stack = StackedTrainer([_trainer(*r) for r in runs])
    stack.run()
    stacked = taps()
    assert not stack.failed
    assert single["noise"].keys() == stacked["noise"].keys() and len(single["noise"]) == sum(
        tr.total_steps for tr in alone)
    for key, value in single["noise"].items():  # the noise of every round: bit for bit
        assert torch.equal(value, stacked["noise"][key]), key
    assert single["indices"].keys() == stacked["indices"].keys()
    for key, value in single["indices"].items():  # the batches of every round: bit for bit
        assert torch.equal(value, stacked["indices"][key]), key
    one, many = _norms_by_seed(single["norms"]), _norms_by_seed(stacked["norms"])
    clipped = 0
    for (_, clipping, seed, clip), tr_alone, tr_stacked in zip(runs, alone, stack.trainers, strict=True):
        assert len(one[seed]) == len(many[seed]) == tr_alone.total_steps
        for a, b in zip(one[seed], many[seed], strict=True):
            assert a.shape == b.shape == ((BATCH,) if clipping == "individual" else (1,))
            assert torch.equal(a > clip, b > clip)  # which groups the clipping changes: exactly
            torch.testing.assert_close(clip_factors(b, clip), clip_factors(a, clip), rtol=1e-5, atol=0)
            clipped += int((a > clip).sum())
        for p, q in zip(tr_alone.model.parameters(), tr_stacked.model.parameters(), strict=True):
            torch.testing.assert_close(q, p, rtol=0, atol=1e-5)
        ra, rs = tr_alone.record(), tr_stacked.record()
        assert rs.engine == (STACKED_ENGINE,) and ra.engine != rs.engine
        assert {**ra.to_dict(), "engine": None} == {**rs.to_dict(), "engine": None}
        ea, es = epsilon_for_record(ra, 1e-5), epsilon_for_record(rs, 1e-5)
        assert math.isfinite(ea) and float(ea) == float(es)
        assert [h["lr"] for h in tr_alone.history] == [h["lr"] for h in tr_stacked.history]
        assert tr_alone.history[-1]["clipped_fraction"] == tr_stacked.history[-1]["clipped_fraction"]
    assert clipped > 0  # the test exercises the clipping


def test_a_resumed_stack_ends_as_an_uninterrupted_one():
    runs = [RUNS[0], RUNS[2]]
    whole = StackedTrainer([_trainer(*r) for r in runs])
    whole.run()
    first = StackedTrainer([_trainer(*r) for r in runs])
    half = first.trainers[0].total_steps // 2
    while first.trainers[0].step_index < half:
        first.step()
    states = [tr.state_dict() for tr in first.trainers]
    resumed = [_trainer(*r) for r in runs]
    for tr, state in zip(resumed, states, strict=True):
        tr.load_state_dict(state)
    StackedTrainer(resumed).run()
    for a, b in zip(whole.trainers, resumed, strict=True):
        assert b.step_index == a.total_steps and a.history == b.history
        for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True):
            assert torch.equal(p, q)


def test_runs_of_different_lengths_leave_the_stack_when_done():
    short = _trainer(*RUNS[0], epochs=1)
    long = _trainer(*RUNS[1])
    stack = StackedTrainer([short, long])
    assert stack.run() == [0, 1]
    assert short.step_index == short.total_steps < long.step_index == long.total_steps


@pytest.mark.parametrize(("change", "name"), [
    (dict(clipping="mixed", group_size=4), "clipping"),
    (dict(sampling="poisson"), "sampling"),
    (dict(batch_size=8), "batch_size"),
    (dict(optimizer_kwargs={"momentum": 0.9}), "optimizer"),
    (dict(noise_placement="clipped_sum_noise_over_m"), "noise_placement"),
    (dict(lr={"kind": "inverse_time", "lr0": 0.1, "beta": 0.01}), "lr"),
    (dict(secure_rng=True), "secure_rng"),
    (dict(clipping="none", noise_multiplier=0.0), "clipping"),
])  # fmt: skip
def test_unsupported_configurations_are_refused(change, name):
    other = _trainer(**{"sampling": "fixed", "clipping": "individual", "seed": 1, "clip": 0.5, **change})
    with pytest.raises(ValueError, match=name):
        check_stackable([_trainer(*RUNS[0]), other])


def test_other_refusals():
    tr = _trainer(*RUNS[0])
    with pytest.raises(ValueError, match="trainers"):
        check_stackable([])
    with pytest.raises(ValueError, match="distinct"):
        check_stackable([tr, tr])
    wide = Trainer(nn.Sequential(nn.Flatten(), nn.Linear(36, CLASSES)), _data(), _config("fixed", "individual", 5, 1.0))
    with pytest.raises(ValueError, match="model"):
        check_stackable([tr, wide])
    with pytest.raises(ValueError, match="max_stacked_samples"):
        StackedTrainer([tr], max_stacked_samples=0)
