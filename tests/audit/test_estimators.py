"""Estimators of dpcore.audit: Clopper–Pearson, the many-runs threshold bound, the one-run bound."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpcore.accounting.gaussian import epsilon_from_mu
from dpcore.audit.estimators import (
    clopper_pearson,
    epsilon_from_rates,
    one_run_epsilon,
    one_run_p_value,
    select_threshold,
    threshold_epsilon,
)


@given(st.integers(1, 400), st.data(), st.sampled_from([0.01, 0.05, 0.2]))
def test_clopper_pearson_matches_scipy_exact_interval(n, data, alpha):
    k = data.draw(st.integers(0, n))
    lo, hi = clopper_pearson(k, n, alpha)
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=1 - alpha, method="exact")
    assert lo == pytest.approx(ref.low, abs=1e-9) and hi == pytest.approx(ref.high, abs=1e-9)


def test_clopper_pearson_one_sided():
    _, hi = clopper_pearson(0, 100, 0.05, side="upper")
    assert hi == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-9)  # closed form for k = 0
    assert clopper_pearson(3, 10, 0.05, side="upper")[0] == 0.0
    assert clopper_pearson(3, 10, 0.05, side="lower")[1] == 1.0
    assert clopper_pearson(10, 10, 0.05, side="upper")[1] == 1.0


@pytest.mark.parametrize(
    "kwargs",
    [dict(successes=5, trials=4, alpha=0.05), dict(successes=-1, trials=4, alpha=0.05),
     dict(successes=1, trials=0, alpha=0.05), dict(successes=1, trials=4, alpha=1.0),
     dict(successes=1, trials=4, alpha=0.05, side="both")],
)  # fmt: skip
def test_clopper_pearson_rejects_bad_input(kwargs):
    with pytest.raises(ValueError):
        clopper_pearson(**kwargs)


def test_epsilon_from_rates():
    assert epsilon_from_rates(0.5, 0.5, 0.0) == 0.0
    assert epsilon_from_rates(0.1, 0.5, 0.0) == pytest.approx(math.log(5))
    assert epsilon_from_rates(0.5, 0.1, 0.0) == pytest.approx(math.log(5))  # symmetric test
    assert epsilon_from_rates(0.0, 0.5, 1e-5) == math.inf
    with pytest.raises(ValueError, match="fpr"):
        epsilon_from_rates(1.5, 0.1, 0.0)
    with pytest.raises(ValueError, match="delta"):
        epsilon_from_rates(0.1, 0.1, 1.0)


def test_threshold_bound_counts_and_validation():
    b = threshold_epsilon([1.0, 2.0, 3.0], [0.0, 0.5, 2.5], 1.5, delta=1e-5, confidence=0.9)
    assert (b.false_positives, b.false_negatives, b.runs_in, b.runs_out) == (1, 1, 3, 3)
    assert b.fpr_upper == pytest.approx(clopper_pearson(1, 3, 0.05, side="upper")[1])
    with pytest.raises(ValueError, match="scores_in"):
        threshold_epsilon([], [0.0], 0.0, delta=1e-5)
    with pytest.raises(ValueError, match="NaN"):
        threshold_epsilon([np.nan], [0.0], 0.0, delta=1e-5)
    with pytest.raises(ValueError, match="confidence"):
        threshold_epsilon([1.0], [0.0], 0.0, delta=1e-5, confidence=1.0)


def test_gaussian_scores_bound_is_valid_and_close_with_many_samples():
    """Scores N(μ, 1) vs N(0, 1) are the Gaussian mechanism: its exact ε(δ) is the GDP conversion (Dong, Roth,
    Su 2022, Cor. 2.13).  The bound (threshold selected on half, evaluated on the other half) stays below it and
    comes within 20 % of it at δ = 1e-2 with 200,000 samples per world."""
    mu, delta = 1.0, 1e-2
    true_eps = epsilon_from_mu(mu, delta)
    rng = np.random.default_rng(0)
    n = 200_000
    s_in, s_out = rng.normal(mu, 1.0, n), rng.normal(0.0, 1.0, n)
    sel = select_threshold(s_in[: n // 2], s_out[: n // 2], delta=delta)
    bound = threshold_epsilon(s_in[n // 2 :], s_out[n // 2 :], sel.threshold, delta=delta)
    assert bound.epsilon <= true_eps
    assert bound.epsilon >= 0.8 * true_eps, (bound.epsilon, true_eps)
    assert bound.point == pytest.approx(true_eps, rel=0.15)


def test_gaussian_scores_coverage_at_fixed_threshold():
    """At a fixed threshold the bound exceeds the true ε in at most ~5 % of repetitions (confidence 0.95)."""
    mu, delta = 2.0, 1e-3
    true_eps = epsilon_from_mu(mu, delta)
    rng = np.random.default_rng(1)
    exceed = 0
    reps = 300
    for _ in range(reps):
        s_in, s_out = rng.normal(mu, 1.0, 300), rng.normal(0.0, 1.0, 300)
        exceed += threshold_epsilon(s_in, s_out, 2.0, delta=delta).epsilon > true_eps
    assert exceed <= 0.05 * reps + 10  # binomial slack; 95 % confidence, both CP bounds hold jointly


def test_one_run_pure_dp_is_the_binomial_tail():
    p = math.exp(1.0) / (1 + math.exp(1.0))
    assert one_run_p_value(100, 50, 40, 1.0, 0.0) == pytest.approx(stats.binom.sf(39, 50, p))
    # the δ term: 2mδ · max_i P[v-i <= Bin < v]/i, computed independently by a loop
    m, r, v, eps, delta = 200, 60, 45, 1.0, 1e-4
    p = 1 / (1 + math.exp(-eps))
    alpha = max(sum(stats.binom.pmf(v - j, r, p) for j in range(1, i + 1)) / i for i in range(1, v + 1))
    expected = stats.binom.sf(v - 1, r, p) + 2 * m * delta * alpha
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(expected, rel=1e-9)


def test_one_run_p_value_decreases_in_v_and_increases_in_eps():
    ps = [one_run_p_value(1000, 100, v, 1.0, 1e-5) for v in range(60, 100, 5)]
    assert all(a >= b for a, b in zip(ps, ps[1:], strict=False))
    qs = [one_run_p_value(1000, 100, 90, e, 1e-5) for e in (0.5, 1.0, 2.0, 4.0)]
    assert all(a <= b for a, b in zip(qs, qs[1:], strict=False))


def test_one_run_bound_on_randomised_response():
    """Each canary's membership bit released by ε0-randomised response (an ε0-DP mechanism); guessing the
    released bit is right with probability e^ε0/(1+e^ε0).  The bound stays below ε0 and, with 10,000 guesses,
    comes within 25 % of it."""
    eps0 = 2.0
    rng = np.random.default_rng(3)
    m = 10_000
    correct = int((rng.random(m) < 1 / (1 + math.exp(-eps0))).sum())
    lb = one_run_epsilon(m, m, correct, delta=0.0, confidence=0.95)
    assert 0.75 * eps0 <= lb <= eps0
    assert one_run_epsilon(m, m, m // 2, delta=0.0) == 0.0  # chance level proves nothing


def test_one_run_rejects_bad_input():
    with pytest.raises(ValueError):
        one_run_p_value(10, 20, 5, 1.0, 0.0)  # r > m
    with pytest.raises(ValueError, match="epsilon"):
        one_run_p_value(10, 5, 5, -1.0, 0.0)
    with pytest.raises(ValueError, match="confidence"):
        one_run_epsilon(10, 5, 5, delta=0.0, confidence=0.0)
