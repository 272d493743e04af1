"""Issue 52's faults, found by probing with bad and extreme inputs: each now a ValueError naming the parameter (or
an answer) within a laptop's memory and time."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.accounting import shuffle_lower as sl
from dpcore.accounting.dpsgd import dpsgd_epsilon
from dpcore.accounting.records import epsilon_for_record
from dpcore.audit import tight
from dpcore.audit.gdp import gaussian_shift
from dpcore.cli import main


def test_a_with_replacement_schedule_is_refused_by_name():
    rec = dict(private=True, sampling="replacement", clipping="individual", clip_norm=1.0, noise_multiplier=1.0,
               noise_std=1.0, dataset_size=100, batch_size=(5, 6, 5), steps=3)  # fmt: skip
    with pytest.raises(ValueError, match="batch_size schedule"):
        epsilon_for_record(rec, 1e-5)


def _dense_sum_release_delta(mu: float, rate: float, steps: int, epsilon: float, points: int = 40_001) -> float:
    """The former (T+1) × points quadrature, for small T only."""
    k = np.arange(steps + 1)
    w = stats.binom.pmf(k, steps, rate)
    sd = math.sqrt(steps)
    x = np.linspace(-10 * sd, steps * mu + 10 * sd, points)
    p = (w[:, None] * stats.norm.pdf(x[None, :], loc=(k * mu)[:, None], scale=sd)).sum(0)
    q = stats.norm.pdf(x, scale=sd)
    e = math.exp(epsilon)
    return float(max(np.clip(p - e * q, 0, None).sum(), np.clip(q - e * p, 0, None).sum()) * (x[1] - x[0]))


@pytest.mark.parametrize("mu,rate,steps,epsilon", [(0.5, 0.1, 60, 0.5), (2.0, 0.5, 30, 3.0), (0.05, 0.01, 200, 0.0)])
def test_the_sum_release_keeps_its_value_in_memory_that_does_not_grow(mu, rate, steps, epsilon):
    dense = _dense_sum_release_delta(mu, rate, steps, epsilon)
    assert tight.sum_release_delta(mu, rate, steps, epsilon) == pytest.approx(dense, rel=1e-9, abs=1e-14)
    assert tight.sum_release_delta(mu, rate, steps, epsilon) >= dense - 1e-15  # never below (the tail is charged)


def test_the_sum_release_at_many_steps_answers_or_names_steps():
    assert 0 < tight.sum_release_epsilon(0.05, 0.01, 3000, 1e-5) < 1  # 5.2 GB and 144 s before
    with pytest.raises(ValueError, match="steps must be"):
        tight.sum_release_epsilon(0.05, 0.01, tight.SUM_RELEASE_MAX_STEPS + 1, 1e-5)


def test_shuffle_lower_names_epochs_beyond_its_range():
    with pytest.raises(ValueError, match="epochs must be"):
        sl.shuffle_lower_epsilon(1.0, rounds_per_epoch=1, epochs=sl.MAX_EPOCHS + 1, delta=1e-5)
    with pytest.raises(ValueError, match="epochs must be at most about"):  # stops at MAX_BINS, before the memory
        sl.shuffle_lower_delta(1.0, rounds_per_epoch=100, epochs=100_000, epsilon=1.0, grid=5e-3, slices=400)


@pytest.mark.parametrize("pair", [("a", "b"), (1.0, None), (True, 0.0), (1.0, 1.0)])
def test_shuffle_lower_names_a_bad_pair(pair):
    with pytest.raises(ValueError, match="pair must (be|hold)"):
        sl.shuffle_lower_epsilon(1.0, rounds_per_epoch=1, epochs=2, delta=1e-5, pair=pair)


def test_strings_where_numbers_belong_name_the_parameter():
    with pytest.raises(ValueError, match="obs_in must be real numbers"):
        gaussian_shift(["a", "b"], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="obs_out must be real numbers"):
        gaussian_shift([1.0, 2.0, 3.0], [0.0, "x"])


def test_a_billion_epochs_names_epochs(capsys):
    with pytest.raises(ValueError, match=r"^epochs=1000000000 is T = \d+ steps"):
        dpsgd_epsilon(1.1, sample_rate=256 / 60000, epochs=10**9, delta=1e-5)
    argv = ["epsilon", "--noise-multiplier", "1.1", "--sample-rate", "0.004", "--epochs", "1e9", "--delta", "1e-5"]
    with pytest.raises(SystemExit):
        main(argv)
    assert "argument --epochs: epochs=1e+09" in capsys.readouterr().err
