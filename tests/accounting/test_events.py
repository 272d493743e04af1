"""dpcore.accounting.events: the one epochs → steps rule, group-count rule and noise-factor table.

The trainer, the samplers, the asynchronous clients, the CLI, the explorer and ``dpsgd_epsilon(epochs=…)`` all give
the same T for the same run, including n/b just above and below a half-integer (issue 43: σ = 1, b = 624,
n = 1,000, 10 epochs read T = 16 in the explorer and T = 20 in the trainer).
"""

import argparse
import math

import pytest
import torch
from torch import nn

from dpcore import cli
from dpcore.accounting import dpsgd, events
from dpcore.accounting import run_record as rr
from dpcore.explore import dpsgd as explorer
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
