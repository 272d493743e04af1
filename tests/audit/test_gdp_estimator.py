"""dpcore.audit.gdp: the Gaussian-shift bound covers μ at its confidence, the trade-off bands cover the truth, and
bad inputs are refused with the parameter's name."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.accounting.gaussian import epsilon_from_mu, tradeoff
from dpcore.audit.gdp import (
    empirical_tradeoff,
    gaussian_shift,
    gdp_epsilon,
    threshold_mu_lower,
    tradeoff_violation,
)


@pytest.mark.parametrize(("rate", "n"), [(1.0, 300), (0.5, 4000)])
def test_mu_lower_bound_covers_the_true_mu(rate, n):
    mu, reps, conf = 0.8, 300, 0.9
    rng = np.random.default_rng(7)
    below = 0
    for _ in range(reps):
        shifted = rng.random(n) < rate
        b = gaussian_shift(rng.normal(0, 1, n) + mu * shifted, rng.normal(0, 1, n), confidence=conf, rate=rate)
        below += b.mu_lower <= mu
    # coverage at least the confidence, up to 3 binomial standard errors of the Monte Carlo
    assert below / reps >= conf - 3 * math.sqrt(conf * (1 - conf) / reps)
    # and not trivially (the bound is informative: it is not always far below mu)
    assert below / reps <= 0.99


def test_bound_tightens_with_runs_and_epsilon_follows_gdp():
    rng = np.random.default_rng(1)
    small = gaussian_shift(rng.normal(1, 1, 200), rng.normal(0, 1, 200))
    large = gaussian_shift(rng.normal(1, 1, 20_000), rng.normal(0, 1, 20_000))
    assert small.mu_lower < large.mu_lower < 1.0 < large.mu_lower + 0.05
    g = gdp_epsilon(large, 1e-5)
    assert g.epsilon == pytest.approx(epsilon_from_mu(large.mu_lower, 1e-5))
    assert g.epsilon < g.point


def test_composition_family_is_used():
    rng = np.random.default_rng(2)
    b = gaussian_shift(rng.normal(0.5, 1, 5000), rng.normal(0, 1, 5000))
    g = gdp_epsilon(b, 1e-3, compose=lambda mu, d: epsilon_from_mu(mu * 2.0, d))
    assert g.epsilon == pytest.approx(epsilon_from_mu(2 * b.mu_lower, 1e-3))


def test_threshold_mu_lower_is_distribution_free_gdp_inversion():
    a = 0.1
    beta = float(tradeoff(1.5, a))
    assert threshold_mu_lower(a, beta) == pytest.approx(1.5, abs=1e-9)
    assert threshold_mu_lower(1.0, 0.3) == 0.0
    assert threshold_mu_lower(0.0, 0.3) == math.inf


def test_tradeoff_bands_cover_the_gaussian_curve_and_flag_a_wrong_claim():
    rng = np.random.default_rng(3)
    c = empirical_tradeoff(rng.normal(1.0, 1, 3000), rng.normal(0, 1, 3000), points=100)
    truth = np.asarray(tradeoff(1.0, c.fpr_upper))
    assert not tradeoff_violation(c, lambda a: np.asarray(tradeoff(1.0, a)))  # the true G_1 is not excluded
    assert tradeoff_violation(c, lambda a: np.asarray(tradeoff(0.3, a)))  # a claim of G_0.3 is refuted
    assert np.all(c.fnr_lower <= c.fnr_upper) and np.all(truth >= 0)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"obs_in": [1.0], "obs_out": [0.0, 1.0]}, "obs_in"),
        ({"obs_in": [0.0, 1.0], "obs_out": [0.0, math.nan]}, "obs_out"),
        ({"obs_in": [0.0, 1.0], "obs_out": [0.0, 1.0], "confidence": 1.5}, "confidence"),
        ({"obs_in": [0.0, 1.0], "obs_out": [0.0, 1.0], "rate": 0.0}, "rate"),
        ({"obs_in": [1.0, 1.0], "obs_out": [0.0, 1.0]}, "obs_in"),
    ],
)
def test_gaussian_shift_refuses_what_it_cannot_handle(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gaussian_shift(**kwargs)


def test_other_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="shift"):
        gdp_epsilon(0.5, 1e-3)  # type: ignore[arg-type]
    b = gaussian_shift([0.0, 1.0, 2.0], [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="delta"):
        gdp_epsilon(b, 0.0)
    with pytest.raises(ValueError, match="fpr_upper"):
        threshold_mu_lower(1.2, 0.1)
    with pytest.raises(ValueError, match="points"):
        empirical_tradeoff([1.0], [0.0], points=1)


def test_dkw_bands_contain_the_true_curve_at_their_confidence():
    """Over 200 draws of Gaussian scores (N(μ, 1) with the canary, N(0, 1) without), the simultaneous DKW bands of
    :func:`empirical_tradeoff` contain the true FPR and FNR at every threshold in at least ``confidence`` of the
    draws (up to Monte Carlo slack), and the true G_μ is flagged by :func:`tradeoff_violation` in at most 1 − that;
    a band half as wide would not hold (checked: it fails the same count)."""
    from scipy import stats

    rng = np.random.default_rng(13)
    mu, n, conf, reps = 1.0, 400, 0.9, 200
    inside = flagged = inside_half = 0
    for _ in range(reps):
        c = empirical_tradeoff(rng.normal(mu, 1, n), rng.normal(0, 1, n), confidence=conf, points=60)
        fpr, fnr = stats.norm.sf(c.thresholds), stats.norm.cdf(c.thresholds - mu)
        inside += bool(np.all((c.fpr_lower <= fpr + 1e-12) & (fpr <= c.fpr_upper + 1e-12)
                              & (c.fnr_lower <= fnr + 1e-12) & (fnr <= c.fnr_upper + 1e-12)))  # fmt: skip
        flagged += tradeoff_violation(c, lambda a: np.asarray(tradeoff(mu, a)))
        half_fpr, half_fnr = (c.fpr_upper - c.fpr_lower) / 4, (c.fnr_upper - c.fnr_lower) / 4
        inside_half += bool(np.all((np.abs(c.fpr - fpr) <= half_fpr) & (np.abs(c.fnr - fnr) <= half_fnr)))
    slack = 3 * math.sqrt(conf * (1 - conf) / reps)
    assert inside / reps >= conf - slack
    assert flagged / reps <= 1 - conf + slack
    assert inside_half / reps < conf - slack  # the test can fail: narrower bands do not cover
