"""dpcore.accounting.events: the one epochs → steps rule, group-count rule and noise-factor table.

The trainer, the samplers, the asynchronous clients, the CLI, the explorer and ``dpsgd_epsilon(epochs=…)`` all give
the same T for the same run, including n/b just above and below a half-integer (issue 43: σ = 1, b = 624,
n = 1,000, 10 epochs read T = 16 in the explorer and T = 20 in the trainer).
"""

import argparse
import functools
import json
import math
from pathlib import Path

import pytest
import torch
from torch import nn

from dpcore import cli
from dpcore.accounting import dpsgd, events, gaussian, replacement, shuffled
from dpcore.accounting import run_record as rr
from dpcore.experiments.asynchronous import async_train_config
from dpcore.experiments.config import RunConfig
from dpcore.explore import dpsgd as explorer
from dpcore.papers.p000_proactive import training as p000_training
from dpcore.training import TrainConfig
from dpcore.training import config as training_config
from dpcore.training.async_clients import AsyncTrainer
from dpcore.training.sampling import BatchPlan
from dpcore.training.trainer import Trainer

# (n, b, epochs): n/b = 1.60 (rounds up), 2.494 / 2.5 / 2.506 (around a half-integer), 234.4 (MNIST, 256 / 60,000)
CASES = [(1000, 624, 10), (1000, 401, 3), (1000, 400, 3), (1000, 399, 3), (60_000, 256, 60), (1000, 624, 0.5)]


def _trainer_steps(n: int, b: int, epochs: float, sampling: str) -> int:
    cfg = TrainConfig(sampling=sampling, batch_size=b, epochs=epochs, clipping="individual", clip_norm=1.0,
                      noise_multiplier=1.0, device="cpu", seed=0)  # fmt: skip
    return Trainer(nn.Linear(2, 1), (torch.zeros(n, 2), torch.zeros(n)), cfg, loss="mse").total_steps


def _async_steps(n: int, b: int, epochs: float) -> int:
    cfg = TrainConfig(sampling="poisson", batch_size=b, epochs=epochs, clipping="individual", clip_norm=1.0,
                      noise_multiplier=1.0, reduce="sum", device="cpu", seed=0)  # fmt: skip
    data = [(torch.zeros(n, 2), torch.zeros(n))]
    return AsyncTrainer(nn.Linear(2, 1), data, cfg, loss="mse").total_steps


def _cli_steps(n: int, b: int, epochs: float, sampling: str) -> int:
    args = argparse.Namespace(steps=None, epochs=epochs, sampling=sampling, dataset_size=n, batch_size=b,
                              sample_rate=b / n)  # fmt: skip
    return cli._steps(args)


@pytest.mark.parametrize("n,b,epochs", CASES)
@pytest.mark.parametrize("sampling", ["poisson", "fixed", "shuffle"])
def test_every_component_counts_the_same_steps(n, b, epochs, sampling):
    expected = events.epochs_to_steps(epochs, events.steps_per_epoch(sampling, n, b))
    assert BatchPlan(sampling, n, b, seed=0).steps_per_epoch() == events.steps_per_epoch(sampling, n, b)
    assert events.steps_for_epochs(epochs, sampling=sampling, dataset_size=n, batch_size=b) == expected
    assert _trainer_steps(n, b, epochs, sampling) == expected
    assert _cli_steps(n, b, epochs, sampling) == expected
    if sampling != "shuffle":
        assert dpsgd.resolve_steps(b / n, None, epochs, sampling=sampling, dataset_size=n) == expected
    if sampling == "poisson":
        assert _async_steps(n, b, epochs) == expected
    if sampling != "shuffle":  # the DP-SGD explorer (Poisson and fixed-size batches; whole epochs only)
        explore = functools.partial(explorer.compute, sigma=1.0, batch_size=b, dataset_size=n, delta=1e-5,
                                    sampling=sampling)  # fmt: skip
        if float(epochs).is_integer():
            assert explore(epochs=int(epochs)).values["steps"] == expected
        else:
            with pytest.raises(ValueError, match="epochs"):
                explore(epochs=epochs)


def test_the_half_integer_cases_are_what_the_trainer_runs():
    """round(n/b) rounds per epoch (half to even, as Python rounds), then round(E · rounds)."""
    assert [events.steps_for_epochs(e, dataset_size=n, batch_size=b) for n, b, e in CASES] == [20, 6, 6, 9, 14040, 1]
    assert events.steps_for_epochs(10, sampling="shuffle", dataset_size=1000, batch_size=624) == 10  # ⌊n/b⌋ = 1


@pytest.mark.parametrize("n,b,epochs", [(1000, 624, 10), (1000, 399, 3)])
def test_explorer_shows_the_trainers_steps_and_the_librarys_epsilon(n, b, epochs):
    view = explorer.compute(sigma=1.0, batch_size=b, dataset_size=n, delta=1e-5, epochs=epochs, sampling="poisson")
    assert view.values["steps"] == _trainer_steps(n, b, epochs, "poisson")
    for method in ("pld", "rdp", "rdp-mironov"):
        lib = dpsgd.dpsgd_epsilon(1.0, sample_rate=b / n, epochs=epochs, delta=1e-5, method=method, dataset_size=n)
        assert view.values[f"eps[{method}]"] == pytest.approx(float(lib), rel=1e-9), method


def test_explorer_sigma_for_target_holds_for_the_run_the_trainer_does():
    """Issue 43: σ for ε = 2 at b = 624, n = 1,000, 10 epochs gave ε = 2.25 for the trainer's T = 20."""
    view = explorer.inverse(sigma=1.0, batch_size=624, dataset_size=1000, delta=1e-5, epochs=10, sampling="poisson",
                            target_epsilon=2.0, inverse_method="rdp")  # fmt: skip
    sigma = view.values["sigma_for_target"]
    assert "T = 20 steps" in view.labels["sigma_for_target"]
    lib = dpsgd.dpsgd_noise_multiplier(2.0, sample_rate=0.624, epochs=10, delta=1e-5, method="rdp",
                                       dataset_size=1000, rtol=explorer.INVERSE_RTOL)  # fmt: skip
    assert sigma == pytest.approx(lib, rel=1e-12)
    assert dpsgd.dpsgd_epsilon(sigma, sample_rate=0.624, epochs=10, delta=1e-5, method="rdp", dataset_size=1000) <= 2.0


def test_epochs_to_steps_validates_its_inputs():
    assert events.epochs_to_steps(0, 7) == 0 and events.epochs_to_steps(1e-9, 7) == 1
    for bad in (-1, math.nan, math.inf, True, "3"):
        with pytest.raises(ValueError, match="epochs"):
            events.epochs_to_steps(bad, 2)
    for bad in (0, 0.5, True, None):
        with pytest.raises(ValueError, match="per_epoch"):
            events.epochs_to_steps(1, bad)


def test_group_rule():
    assert [events.clipped_group_size(c, 12, 4 if c == "mixed" else None) for c in events.CLIPPINGS] == [1, 12, 4]
    assert [events.groups_per_batch(c, 14, 4 if c == "mixed" else None) for c in events.CLIPPINGS] == [14, 1, 3]
    assert events.groups_per_round("mixed", 10.0, 4) == 2.5 and events.groups_per_round("batch", 10.0) == 1
    with pytest.raises(ValueError, match="group_size"):
        events.clipped_group_size("mixed", 4, None)
    with pytest.raises(ValueError, match="group_size"):
        events.clipped_group_size("mixed", 4, 0)
    assert events.clipped_group_size("mixed", 4, 5) == 5  # a batch shorter than s is one partial group


def test_sensitivity_and_noise_factor_have_one_home():
    assert events.step_sensitivity("poisson", "individual") == 1.0
    assert events.step_sensitivity("poisson", "batch") == 2.0
    assert {events.step_sensitivity(s, c) for s in ("fixed", "shuffle", "replacement") for c in events.CLIPPINGS} == {
        2.0
    }
    with pytest.raises(ValueError, match="mixed clipping"):
        events.step_sensitivity("poisson", "mixed")
    assert rr.NOISE_FACTOR is events.NOISE_FACTOR and training_config.NOISE_FACTOR is events.NOISE_FACTOR
    assert rr.NOISE_CONVENTIONS is events.NOISE_CONVENTIONS


# (n, b, epochs, T): n/b = 2.494 / 2.5 / 2.506 and 0.5·n/b = 1.4995 / 1.5 / 1.5005 around half-integers, then
# 10·n/b = 16.03 (the trainer runs 20 rounds there) and paper 000's MNIST s = 889 (T = 405, the trainer 402)
SAMPLE_COUNT_CASES = [
    (1000, 401, 3, 7), (1000, 400, 3, 8), (1000, 399, 3, 8), (2999, 1000, 0.5, 1), (3000, 1000, 0.5, 2),
    (3001, 1000, 0.5, 2), (1000, 624, 10, 16), (60_000, 889, 6, 405),
]  # fmt: skip


@pytest.mark.parametrize("n,b,epochs,steps", SAMPLE_COUNT_CASES)
def test_paper_000_counts_rounds_by_gradient_computations(n, b, epochs, steps):
    """Paper 000 (Proactive DP, Sec. 2.2): K ≈ kN gradient computations, T = round(kN/s), half to even."""
    assert events.steps_for_sample_count(epochs, n, b) == steps
    assert steps == max(1, round(epochs * n / b))  # the expression the committed runs were sized by


@pytest.mark.parametrize("n,b,epochs,steps", [c for c in SAMPLE_COUNT_CASES if float(c[2]).is_integer()])
def test_the_asynchronous_clients_and_paper_000_use_the_sample_count_rule(n, b, epochs, steps):
    cfg = RunConfig(dataset="mnist", model="softmax", sampling="poisson", clipping="individual", batch_size=b,
                    clip_norm=0.025, noise_multiplier=1.0, epochs=int(epochs), lr=0.1, lr_beta=0.01, lr_power=0.5,
                    clients=5, profile="quick")  # fmt: skip
    assert async_train_config(cfg, n).steps == steps
    eta_last = cfg.lr / (1.0 + cfg.lr_beta * ((steps - 1) * b) ** cfg.lr_power)
    assert p000_training.last_round_factors(cfg, n)["last_round_sum"] == pytest.approx(eta_last * math.sqrt(5))


def test_committed_paper_000_runs_keep_their_step_counts():
    files = sorted((Path(__file__).parents[2] / "results" / "paper" / "000_mnist").glob("*.json"))
    assert files, "no committed paper-000 results"
    for path in files:
        run = json.loads(path.read_text())
        cfg, record = run["config"], run["record"]
        expected = events.steps_for_sample_count(cfg["epochs"], record["dataset_size"], cfg["batch_size"])
        assert record["steps"] == expected, path.name


def test_steps_for_sample_count_validates_its_inputs():
    assert events.steps_for_sample_count(0, 10, 3) == 0 and events.steps_for_sample_count(1e-9, 10, 3) == 1
    for bad in (-1, math.nan, math.inf, True, "3"):
        with pytest.raises(ValueError, match="epochs"):
            events.steps_for_sample_count(bad, 10, 3)
    with pytest.raises(ValueError, match="dataset_size"):
        events.steps_for_sample_count(1, 0, 3)
    with pytest.raises(ValueError, match="batch_size"):
        events.steps_for_sample_count(1, 10, 11)
    with pytest.raises(ValueError, match="overflows"):
        events.steps_for_sample_count(10**400, 10, 3)
    with pytest.raises(ValueError, match="overflows"):
        events.steps_for_sample_count(1e308, 10, 1)


def test_library_accountants_read_sensitivity_and_rounds_from_events(monkeypatch):
    """ISRL-DP's clipped-mean bound takes its 2L from :func:`events.step_sensitivity`, paper 003's ⌊N/|S_b|⌋ from
    :func:`events.steps_per_epoch`: changing the table changes them (no copy typed in place)."""
    kwargs = dict(noise_std=1.0, clip=0.5, rounds=4, delta=1e-5)
    assert replacement.batch_mean_epsilon_upper(**kwargs) == pytest.approx(gaussian.epsilon_from_mu(2.0, 1e-5))
    monkeypatch.setitem(events.BATCH_SENSITIVITY, "replacement", 1.0)
    assert replacement.batch_mean_epsilon_upper(**kwargs) == pytest.approx(gaussian.epsilon_from_mu(1.0, 1e-5))
    for n, b in [(60_000, 256), (1000, 624), (1000, 1000), (1000, 333)]:
        assert shuffled.rounds_per_epoch(n, b) == events.steps_per_epoch("shuffle", n, b) == n // b
    with pytest.raises(ValueError, match="batch"):
        shuffled.rounds_per_epoch(10, 11)


#: The rule's words and what they mean, written out here (no eval of the strings): the help texts' words must be
#: these, and the code must count by them.
_MEANING = {"round(n / b)": lambda n, b: round(n / b), "floor(n / b)": lambda n, b: n // b}


@pytest.mark.parametrize("n,b", [(1000, 624), (1000, 401), (1000, 400), (1000, 399), (60_000, 256), (7, 7)])
def test_the_rule_in_words_is_the_rule_in_code(n, b):
    """The help texts' words (:data:`events.ROUNDS_PER_EPOCH_RULE` …) name the counts the functions make."""
    assert events.EPOCHS_TO_STEPS_RULE == "max(1, round(E * rounds per epoch)), 0 for E = 0"
    assert events.ROUNDS_PER_EPOCH_FROM_RATE_RULE == "round(1 / q)"
    for sampling in events.SAMPLINGS:
        per_epoch = _MEANING[events.ROUNDS_PER_EPOCH_RULE[sampling]](n, b)
        assert per_epoch == events.steps_per_epoch(sampling, n, b), sampling
        for epochs in (0, 0.4, 3):
            expected = 0 if epochs == 0 else max(1, round(epochs * per_epoch))
            assert events.steps_for_epochs(epochs, sampling=sampling, dataset_size=n, batch_size=b) == expected
    from_rate = round(1 / (b / n))  # q alone
    assert events.steps_for_epochs(3, sample_rate=b / n) == 3 * from_rate
