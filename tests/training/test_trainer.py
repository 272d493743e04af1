"""The training loop: non-private equivalence, noise calibration, checkpoint/resume, records, ModelMix, async."""

import math

import pytest
import torch
from torch import nn

from dpcore.models import CNN003, SoftmaxRegression
from dpcore.training import (
    DecayOnMetricDrop,
    InverseTimeDecay,
    ModelMixConfig,
    MultiStepLR,
    NonFiniteError,
    TrainConfig,
    Trainer,
    make_classification_eval,
    run_async_clients,
    train,
)
from dpcore.training.modelmix import enforce_gap, mix
from dpcore.training.sampling import derive_seed, make_generator


def _blobs(n=96, d=6, k=3, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, k, (n,), generator=g)
    centers = torch.randn(k, d, generator=g, dtype=dtype) * 2
    return centers[y] + torch.randn(n, d, generator=g, dtype=dtype), y


def _mlp(seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).to(dtype)


def _params(model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])


@pytest.mark.parametrize(
    "clipping,group", [("individual", None), ("batch", None), ("mixed", 4)]
)  # fmt: skip
def test_nonprivate_equals_dp_at_zero_noise_and_infinite_clip(clipping, group):
    data = _blobs()
    common = dict(sampling="shuffle", batch_size=16, epochs=2, lr=0.3, seed=1, device="cpu", optimizer="sgd",
                  optimizer_kwargs={"momentum": 0.5})  # fmt: skip
    plain = train(_mlp(), data, TrainConfig(clipping="none", noise_multiplier=0.0, **common))
    dp = train(
        _mlp(),
        data,
        TrainConfig(clipping=clipping, group_size=group, clip_norm=math.inf, noise_multiplier=0.0, **common),
    )
    torch.testing.assert_close(_params(dp.model), _params(plain.model), rtol=1e-12, atol=1e-13)
    # ... and a finite clip norm does change the result (the comparison can fail)
    clipped = train(
        _mlp(), data, TrainConfig(clipping=clipping, group_size=group, clip_norm=1e-3, noise_multiplier=0.0, **common)
    )
    assert not torch.allclose(_params(clipped.model), _params(plain.model))


@pytest.mark.parametrize("convention,factor", [("standard", 1.0), ("replace_one", 2.0)])
def test_empirical_noise_std_matches_specification(convention, factor):
    """With zero gradients, each SGD step (lr = 1) moves the weights by −N(0, (κCσ)²)/D."""
    n, d, batch, steps = 64, 25, 8, 200
    x = torch.zeros(n, d)
    y = torch.zeros(n)
    model = nn.Linear(d, 1, bias=False)
    nn.init.zeros_(model.weight)
    clip, sigma = 0.7, 1.3
    cfg = TrainConfig(sampling="fixed", batch_size=batch, steps=steps, clipping="individual", clip_norm=clip,
                      noise_multiplier=sigma, noise_convention=convention, lr=1.0, seed=4, device="cpu")  # fmt: skip
    trainer = Trainer(model, (x, y), cfg, loss="mse")
    deltas = []
    for _ in range(steps):
        before = model.weight.detach().clone()
        trainer.step()
        deltas.append((model.weight.detach() - before).flatten())
    deltas = torch.cat(deltas)
    expected = factor * clip * sigma / batch  # D = batch size for reduce="mean", individual clipping
    sd_err = expected / math.sqrt(2 * deltas.numel())
    assert abs(float(deltas.std()) - expected) < 4 * sd_err
    assert abs(float(deltas.mean())) < 4 * expected / math.sqrt(deltas.numel())
    assert trainer.record()["noise_std"] == pytest.approx(factor * clip * sigma)


def _resumable_config(**kw):
    base = dict(sampling="poisson", batch_size=12, epochs=6, clipping="individual", clip_norm=0.5,
                noise_multiplier=0.8, optimizer="sgd", optimizer_kwargs={"momentum": 0.9},
                lr={"kind": "decay_on_metric_drop", "lr0": 0.2, "factor": 0.5, "metric": "test_accuracy"},
                modelmix=ModelMixConfig(tau_ratio=[(0.5, 0.1), (1.0, 0.05)]), seed=11, device="cpu")  # fmt: skip
    base.update(kw)
    return TrainConfig(**base)


def test_killed_and_resumed_run_matches_uninterrupted(tmp_path):
    data = _blobs(n=60)
    evaluate = make_classification_eval(*_blobs(n=40, seed=0))
    full = train(_mlp(), data, _resumable_config(), eval_fn=evaluate)

    class Killed(RuntimeError):
        pass

    def kill(trainer):
        if trainer.step_index == 21:
            raise Killed

    ckpt = tmp_path / "run.pt"
    with pytest.raises(Killed):
        Trainer(_mlp(), data, _resumable_config(), eval_fn=evaluate, checkpoint=ckpt, checkpoint_every=4,
                on_step=kill).run()  # fmt: skip
    state = torch.load(ckpt, weights_only=True)  # plain tensors and numbers only
    assert state["step"] == 20
    resumed = Trainer(_mlp(seed=99), data, _resumable_config(), eval_fn=evaluate, checkpoint=ckpt, resume=True)
    assert resumed.step_index == 20
    assert len({h["lr"] for h in full.history}) > 1  # the schedule's state matters
    result = resumed.run()
    assert torch.equal(_params(result.model), _params(full.model))
    assert result.history == full.history
    assert result.record == full.record
    # a different configuration refuses the checkpoint
    with pytest.raises(ValueError, match="different configuration"):
        Trainer(_mlp(), data, _resumable_config(clip_norm=0.6), checkpoint=ckpt, resume=True)


def test_runs_are_deterministic_and_seed_dependent():
    data = _blobs()
    cfg = dict(sampling="poisson", batch_size=16, steps=10, clip_norm=1.0, noise_multiplier=1.0, lr=0.1, device="cpu")
    a = train(_mlp(), data, TrainConfig(seed=0, **cfg))
    b = train(_mlp(), data, TrainConfig(seed=0, **cfg))
    c = train(_mlp(), data, TrainConfig(seed=1, **cfg))
    assert torch.equal(_params(a.model), _params(b.model))
    assert not torch.equal(_params(a.model), _params(c.model))


def test_record_describes_the_run():
    data = _blobs(n=100)
    res = train(
        _mlp(),
        data,
        TrainConfig(
            sampling="fixed",
            batch_size=20,
            epochs=2,
            clipping="mixed",
            group_size=5,
            clip_norm=0.3,
            noise_multiplier=2.0,
            noise_convention="replace_one",
            lr=0.1,
            device="cpu",
        ),  # fmt: skip
    )
    r = res.record
    assert r["sampling"] == "fixed" and r["clipping"] == "mixed"
    assert (r["dataset_size"], r["batch_size"], r["steps"], r["epochs"]) == (100, 20, 10, 2.0)
    assert (r["group_size"], r["groups_per_round"]) == (5, 4.0)
    assert r["noise_std"] == pytest.approx(2 * 0.3 * 2.0) and r["noise_convention"] == "replace_one"
    assert r["sample_rate"] == 0.2 and r["modelmix"] is None and r["engine"] == ["layer"]
    assert len(res.history) == 2 and 0.0 <= res.history[-1]["clipped_fraction"] <= 1.0


def test_config_validation():
    with pytest.raises(ValueError, match="noise_multiplier=0"):
        TrainConfig(clipping="none", noise_multiplier=1.0, steps=1)
    with pytest.raises(ValueError, match="finite clip_norm"):
        TrainConfig(clip_norm=math.inf, noise_multiplier=1.0, steps=1)
    with pytest.raises(ValueError, match="group_size"):
        TrainConfig(clipping="mixed", steps=1)
    with pytest.raises(ValueError, match="exactly one"):
        TrainConfig(steps=1, epochs=1)
    with pytest.raises(ValueError, match="linf_p"):
        TrainConfig(clip_norm_type="l2_linf", steps=1)
    with pytest.raises(ValueError, match="noise_convention"):
        TrainConfig(noise_convention="double", steps=1)
    with pytest.raises(ValueError, match="multiples"):
        Trainer(_mlp(), _blobs(), TrainConfig(sampling="shuffle", batch_size=10, clipping="mixed", group_size=4,
                                              steps=1, device="cpu"))  # fmt: skip


def test_schedules():
    s = InverseTimeDecay(0.1, 0.001)
    assert s.lr(0, 0.0) == 0.1 and s.lr(5, 1000.0) == pytest.approx(0.05)
    assert InverseTimeDecay(0.1, 0.01, power=0.5).lr(0, 10000.0) == pytest.approx(0.05)
    d = DecayOnMetricDrop(0.025, factor=0.9)
    for acc in (0.5, 0.6, 0.55, 0.56, 0.4):
        d.on_epoch_end(0, {"test_accuracy": acc})
    assert d.lr(0, 0) == pytest.approx(0.025 * 0.9**2)
    with pytest.raises(ValueError, match="metric"):
        d.on_epoch_end(0, {"loss": 1.0})
    assert MultiStepLR(1.0, [10, 20], 0.5).lr(25, 0) == 0.25


def test_scheduled_batch_sizes_and_inverse_time_step_sizes():
    """Paper 000: step size η0/(1 + β t) with t = planned gradient computations before the round."""
    data = _blobs(n=50)
    sizes = [5, 10, 5, 20]
    cfg = TrainConfig(sampling="poisson", batch_size=sizes, clipping="individual", clip_norm=1.0,
                      noise_multiplier=1.0, reduce="sum", lr=InverseTimeDecay(0.1, 0.01), device="cpu")  # fmt: skip
    trainer = Trainer(_mlp(), data, cfg)
    res = trainer.run()
    assert res.record["steps"] == 4 and res.record["epochs"] == pytest.approx(40 / 50)
    assert res.record["sample_rate"] is None and res.record["batch_size"] == sizes
    assert trainer.samples == 40
    assert trainer.schedule.lr(3, 20.0) == pytest.approx(0.1 / 1.2)


def test_modelmix_gap_and_envelope():
    w1 = torch.tensor([0.0, 1.0, 2.0, 3.0], dtype=torch.float64)
    w0 = torch.tensor([0.0, 1.02, 1.0, 3.0 + 1e-9], dtype=torch.float64)
    for rule in ("exact", "paper"):
        a, b = enforce_gap(w1, w0, 0.1, rule)
        assert torch.all((a - b).abs() >= 0.1 - 1e-12)
        assert torch.equal(a[2], w1[2]) and torch.equal(b[2], w0[2])  # already wide enough: untouched
        torch.testing.assert_close((a + b) / 2, (w1 + w0) / 2)  # pushed symmetrically
    a, b = enforce_gap(w1, w0, 0.1, "exact")
    assert torch.allclose((a - b).abs()[[0, 1, 3]], torch.full((3,), 0.1, dtype=torch.float64))
    draws = torch.stack([mix(w1, w0, 0.1, "exact", make_generator(0, "t", k)) for k in range(2000)])
    lo, hi = torch.minimum(a, b), torch.maximum(a, b)
    assert torch.all(draws >= lo - 1e-12) and torch.all(draws <= hi + 1e-12)
    torch.testing.assert_close(draws.mean(0), (a + b) / 2, atol=0.01 * 2, rtol=0)


def test_modelmix_run_records_tau_phases_and_differs_from_plain():
    data = _blobs()
    cfg = dict(sampling="poisson", batch_size=16, steps=8, clip_norm=1.0, noise_multiplier=0.5, lr=0.2, device="cpu")
    mm = train(_mlp(), data, TrainConfig(modelmix=ModelMixConfig(tau_ratio=[(0.5, 0.2), (1.0, 0.1)]), **cfg))
    plain = train(_mlp(), data, TrainConfig(**cfg))
    assert mm.record["modelmix"]["phases"] == [{"steps": 4, "tau_ratio": 0.2}, {"steps": 4, "tau_ratio": 0.1}]
    assert not torch.allclose(_params(mm.model), _params(plain.model))


def test_l2_linf_and_adam_run_on_a_cnn():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(24, 1, 16, 16, generator=g), torch.randint(0, 10, (24,), generator=g)
    torch.manual_seed(0)
    cfg = TrainConfig(batch_size=8, steps=3, clip_norm=1.0, clip_norm_type="l2_linf", linf_p=100,
                      noise_multiplier=1.0, optimizer="adam", lr=1e-3, device="cpu")  # fmt: skip
    res = train(CNN003(in_channels=1), (x, y), cfg)
    assert res.record["linf_p"] == 100 and res.record["optimizer"]["name"] == "adam"
    assert all(torch.isfinite(p).all() for p in res.model.parameters())


def test_async_clients_one_client_without_delay_is_sequential_dpsgd():
    data = _blobs(n=48)
    cfg = TrainConfig(sampling="poisson", batch_size=8, steps=6, clip_norm=1.0, noise_multiplier=1.0, reduce="sum",
                      lr=InverseTimeDecay(0.05, 0.01, power=0.5), seed=3, device="cpu")  # fmt: skip
    res = run_async_clients(_mlp(), [data], cfg, delay_prob=0.0, loss="cross_entropy")
    seq_cfg = TrainConfig(**{**cfg.__dict__, "seed": derive_seed(3, "client", 0)})
    seq = train(_mlp(), data, seq_cfg)
    torch.testing.assert_close(_params(res.model), _params(seq.model), rtol=1e-12, atol=1e-14)
    assert res.received == [[0, 1, 2, 3, 4, 5]]


def test_async_clients_respect_the_delay_predicate_and_are_deterministic():
    clients = [_blobs(n=40, seed=s) for s in range(3)]
    cfg = TrainConfig(sampling="poisson", batch_size=8, steps=8, clip_norm=1.0, noise_multiplier=1.0, reduce="sum",
                      lr=0.01, seed=5, device="cpu")  # fmt: skip
    ev = make_classification_eval(*_blobs(n=30, seed=0))
    a = run_async_clients(_mlp(), clients, cfg, delay_prob=0.5, eval_fn=ev, eval_every=4)
    b = run_async_clients(_mlp(), clients, cfg, delay_prob=0.5, eval_fn=ev, eval_every=4)
    assert torch.equal(_params(a.model), _params(b.model)) and a.history == b.history
    for started in a.received:
        assert all(i - 1 <= k <= i for i, k in enumerate(started))  # Υ(k, i) = [k ≥ i − 1]
    assert any(k == i - 1 for started in a.received for i, k in enumerate(started))  # some delays happened
    assert len(a.records) == 3 and a.records[1]["async"]["client"] == 1 and a.records[0]["dataset_size"] == 40
    assert [h["step"] for h in a.history] == [4.0, 8.0]


def test_softmax_regression_learns():
    x, y = _blobs(n=300, dtype=torch.float32)
    x, y, xt, yt = x[:200], y[:200], x[200:], y[200:]
    torch.manual_seed(0)
    res = train(SoftmaxRegression(6, 3), (x, y), TrainConfig(sampling="shuffle", batch_size=20, epochs=5,
                clip_norm=1.0, noise_multiplier=0.5, lr=0.5, device="cpu"),
                eval_fn=make_classification_eval(xt, yt))  # fmt: skip
    assert res.history[-1]["test_accuracy"] > 0.8


# --------------------------------------------------------------------------- what the trainer refuses
def _private_cfg(**kw):
    base = dict(sampling="poisson", batch_size=16, steps=3, clip_norm=1.0, noise_multiplier=1.0, lr=0.1, device="cpu")
    return TrainConfig(**(base | kw))


@pytest.mark.parametrize(
    "layer",
    [nn.BatchNorm1d(8), nn.BatchNorm1d(8, track_running_stats=False), nn.InstanceNorm1d(8, track_running_stats=True)],
)
def test_private_runs_refuse_modules_that_mix_samples(layer):
    # (n, 8, 1): a shape every one of these layers takes (the trainer probes the model on the data)
    model = nn.Sequential(nn.Linear(6, 8), nn.Unflatten(1, (8, 1)), layer, nn.Flatten(), nn.ReLU(), nn.Linear(8, 3))
    model = model.double()
    with pytest.raises(ValueError, match=r"'2'.*GroupNorm"):
        Trainer(model, _blobs(), _private_cfg())
    # a non-private run may use them
    Trainer(model, _blobs(), _private_cfg(clipping="none", noise_multiplier=0.0))
    # GroupNorm is per-example: accepted
    ok = nn.Sequential(nn.Linear(6, 8), nn.GroupNorm(2, 8), nn.ReLU(), nn.Linear(8, 3)).double()
    Trainer(ok, _blobs(), _private_cfg()).run()


def test_model_without_trainable_parameters_is_refused():
    model = _mlp()
    for p in model.parameters():
        p.requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameters"):
        Trainer(model, _blobs(), _private_cfg())
    with pytest.raises(ValueError, match="no trainable parameters"):
        Trainer(nn.ReLU(), _blobs(), _private_cfg(clipping="none", noise_multiplier=0.0))


class _NaNOut(nn.Module):
    """A model whose outputs, and so its loss and gradients, are NaN on finite data."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = _mlp()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * math.nan


@pytest.mark.parametrize("private", [True, False])
def test_non_finite_step_stops_the_run_and_leaves_no_record(private):
    x, y = _blobs()  # finite data (non-finite data is refused at construction: test_integrity.py), a NaN model
    kw = {} if private else dict(clipping="none", noise_multiplier=0.0)
    trainer = Trainer(_NaNOut(), (x, y), _private_cfg(**kw))
    with pytest.raises(NonFiniteError, match="step 0"):
        trainer.run()
    with pytest.raises(NonFiniteError, match="step 0"):
        trainer.record()
    with pytest.raises(NonFiniteError):
        trainer.step()


def test_secure_rng_noise_is_not_reproducible_and_the_seed_is_not_recorded():
    cfg = _private_cfg(secure_rng=True, noise_multiplier=5.0, seed=7)
    a = train(_mlp(), _blobs(), cfg)
    b = train(_mlp(), _blobs(), cfg)
    assert not all(torch.equal(p, q) for p, q in zip(_params(a.model), _params(b.model), strict=True))
    assert a.record["seed"] is None and a.record["secure_rng"] is True
    seeded = train(_mlp(), _blobs(), _private_cfg(noise_multiplier=5.0, seed=7))
    assert seeded.record["seed"] == 7 and seeded.record["secure_rng"] is False


def test_record_is_a_frozen_validated_run_record_with_provenance():
    from dataclasses import FrozenInstanceError

    from dpcore.accounting.run_record import RunRecord

    res = train(_mlp(), _blobs(), _private_cfg(data="blobs: seeded synthetic (tests)"))
    assert isinstance(res.record, RunRecord) and res.record.data == "blobs: seeded synthetic (tests)"
    with pytest.raises(FrozenInstanceError):
        res.record.steps = 0  # type: ignore[misc]
    assert RunRecord.from_dict(res.record.to_dict()) == res.record
