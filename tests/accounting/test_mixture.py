"""Labelled Gaussian mixtures (dpcore.accounting.mixture): Lemma B.5 / Def. 5.2 trade-offs, powers, trimming."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from dpcore.accounting import fdp
from dpcore.accounting.mixture import GaussianMixture, convolve_power, trim_pmf

ALPHA = np.linspace(0.0, 1.0, 1001)


# --------------------------------------------------------------------------- mixtures (Lemma B.5 / Def. 5.2)
def _brute_force_inf(weights, mus, alpha):
    """inf Σ q_i G_{μ_i}(α_i) s.t. Σ q_i α_i = α by direct minimisation over α_1 (2 components)."""
    q1, q2 = weights

    def obj(a1):
        a1 = np.atleast_1d(np.asarray(a1, dtype=float))
        a2 = (alpha - q1 * a1) / q2
        ok = (a2 >= 0) & (a2 <= 1)
        val = q1 * fdp.gaussian_tradeoff(mus[0], a1) + q2 * fdp.gaussian_tradeoff(mus[1], np.clip(a2, 0, 1))
        return np.where(ok, val, 10.0)

    lo = max(0.0, (alpha - q2) / q1)
    hi = min(1.0, alpha / q1)
    grid = np.linspace(lo, hi, 20001)
    vals = obj(grid)
    i = int(np.argmin(vals))
    res = optimize.minimize_scalar(
        lambda a: float(obj(a)[0]),
        bounds=(grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]),
        method="bounded",
        options={"xatol": 1e-13},
    )
    return min(float(vals[i]), float(res.fun))


@pytest.mark.parametrize(
    ("support", "weights", "alphas", "expected"),
    [
        ((1.0, 9.0), (0.3, 0.7), (0.01, 0.1, 0.3), (0.82828817, 0.52090328, 0.25862908)),
        ((0.0, 4.0), (0.5, 0.5), (0.01, 0.2, 0.5, 0.8), (0.92700053, 0.60853754, 0.30853754, 0.05251985)),
    ],
)
def test_lemma_b5_golden(support, weights, alphas, expected):
    m = GaussianMixture(np.array(support), np.array(weights), 2.0)
    np.testing.assert_allclose(m(np.array(alphas)), expected, atol=2e-8)


@settings(max_examples=15)
@given(st.floats(0.05, 0.95), st.floats(0.1, 3.0), st.floats(0.1, 3.0), st.floats(0.01, 0.95))
def test_lemma_b5_equals_brute_force(q, mu1, mu2, alpha):
    m = GaussianMixture(np.array([(2 * mu1) ** 2, (2 * mu2) ** 2]), np.array([q, 1 - q]), 2.0)
    assert m(alpha) == pytest.approx(_brute_force_inf((q, 1 - q), (mu1, mu2), alpha), abs=1e-6)


def test_labelled_delta_equals_generic_conversion():
    m = GaussianMixture(np.array([1.0, 9.0]), np.array([0.3, 0.7]), 2.0)
    for eps, expected in [(0.5, 0.318008), (1.0, 0.226323), (2.0, 0.0996275)]:
        assert m.delta(eps) == pytest.approx(expected, abs=2e-6)
        assert fdp.tradeoff_to_delta(m, eps) == pytest.approx(m.delta(eps), abs=2e-6)


@given(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=5), st.integers(0, 4))
@settings(max_examples=20)
def test_mixture_is_a_tradeoff_function(ws, zero_index):
    w = np.array(ws) / sum(ws)
    support = np.arange(len(w), dtype=float) * 3
    support[0] = 0.0 if zero_index % 2 == 0 else 1.0
    m = GaussianMixture(support, w, 1.5)
    checks = fdp.check_tradeoff(m, grid=ALPHA, tol=1e-7)
    assert all(checks.values()), checks


def test_point_mass_is_gaussian():
    m = GaussianMixture.point_mass(100, 2.0)
    a = np.logspace(-20, -1e-9, 50)
    np.testing.assert_allclose(m.power(a), fdp.Gaussian(5.0).power(a), rtol=1e-9)
    assert m.epsilon(1e-5) == pytest.approx(33.104, abs=5e-4)


def test_convolve_power_and_compose():
    pmf = np.array([0.5, 0.3, 0.2])
    out, off, dropped = convolve_power(pmf, 3)
    direct = np.convolve(np.convolve(pmf, pmf), pmf)
    assert off == 0 and dropped < 1e-15
    np.testing.assert_allclose(out, direct)
    a = GaussianMixture.from_pmf(pmf, 2.0)
    b = a.power_of(3)
    c = a.compose(a).compose(a)
    np.testing.assert_allclose(b.weights, c.weights)
    # a binomial is the power of a Bernoulli
    bern = GaussianMixture.from_pmf(np.array([0.9, 0.1]), 2.0).power_of(50)
    bino = GaussianMixture.binomial(50, 0.1, 2.0)
    assert bern.epsilon(1e-5) == pytest.approx(bino.epsilon(1e-5), rel=1e-9)


def test_trim_and_tail_are_conservative():
    pmf, off, dropped = trim_pmf(np.array([0.0, 1e-320, 0.6, 0.4, 0.0]))
    assert off == 2 and dropped < 1e-300 and list(pmf) == [0.6, 0.4]
    base = GaussianMixture(np.array([1.0]), np.array([1.0]), 2.0)
    tailed = GaussianMixture(np.array([1.0]), np.array([0.99]), 2.0, tail=0.01)
    assert tailed.delta(1.0) >= base.delta(1.0) * 0.99 + 0.01 - 1e-12
    assert tailed.epsilon(0.005) == math.inf


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: GaussianMixture(np.array([1.0]), np.array([0.5]), 2.0), "sum to 1"),
        (lambda: GaussianMixture(np.array([1.0]), np.array([1.0]), 0.0), "sigma"),
        (lambda: GaussianMixture.point_mass(1.0, 2.0).epsilon(2.0), "delta"),
        (lambda: GaussianMixture.binomial(0, 0.5, 2.0), "n"),
    ],
)
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
