"""f-DP toolkit (dpcore.accounting.fdp): trade-off curves, GDP duality, conversions, subsampling, CLT."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import special, stats

from dpcore.accounting import fdp
from dpcore.accounting import gaussian as gdp

ALPHA = np.linspace(0.0, 1.0, 1001)


# --------------------------------------------------------------------------- Gaussian trade-off
@given(st.floats(0.0, 20.0))
def test_gaussian_tradeoff_is_a_tradeoff_function(mu):
    checks = fdp.check_tradeoff(fdp.Gaussian(mu), grid=ALPHA)
    assert all(checks.values()), checks


@given(st.floats(0.01, 8.0), st.floats(0.001, 0.999))
def test_gaussian_tradeoff_symmetric(mu, a):
    assert fdp.gaussian_tradeoff(mu, fdp.gaussian_tradeoff(mu, a)) == pytest.approx(a, abs=1e-9)


def test_gaussian_tradeoff_values():
    assert fdp.gaussian_tradeoff(0.0, 0.3) == pytest.approx(0.7)
    assert fdp.gaussian_tradeoff(5.0, 0.05) == pytest.approx(3.966e-4, rel=1e-3)
    # power stays accurate where G is ~1
    assert fdp.Gaussian(1.0).power(1e-30) == pytest.approx(special.ndtr(special.ndtri(1e-30) + 1.0), rel=1e-12)


@pytest.mark.parametrize(
    ("mu", "eps5", "eps6"),
    [(0.5, 1.993, 2.254), (1.0, 4.377, 4.887), (2.5, 13.207, 14.451), (5.0, 33.104, 35.566), (10.0, 91.817, 96.717)],
)
def test_gdp_duality_golden(mu, eps5, eps6):
    assert fdp.mu_to_epsilon(mu, 1e-5) == pytest.approx(eps5, abs=5e-4)
    assert fdp.mu_to_epsilon(mu, 1e-6) == pytest.approx(eps6, abs=5e-4)


def test_mu_to_delta_golden_and_delegation():
    assert fdp.mu_to_delta(5.0, 20.0) == pytest.approx(0.0473230, abs=1e-7)
    assert fdp.mu_to_delta(1.3, 0.7) == gdp.delta_from_mu(1.3, 0.7)


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.0])  # μ <= ~2.3 at the default grid (pld_gaussian_delta's bin bound)
@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0])
def test_mu_to_delta_against_dp_accounting_pld(mu, eps):
    ours = fdp.mu_to_delta(mu, eps)
    pld = fdp.pld_gaussian_delta(mu, eps)
    assert pld >= ours - 1e-9  # the PLD is pessimistic
    assert pld == pytest.approx(ours, abs=2e-4)


def test_eps_delta_tradeoff():
    f = lambda a: fdp.eps_delta_tradeoff(1.0, 0.01, a)  # noqa: E731
    assert all(fdp.check_tradeoff(f, grid=ALPHA).values())
    assert f(0.0) == pytest.approx(0.99)
    assert fdp.tradeoff_to_delta(f, 1.0, symmetric=True) == pytest.approx(0.01, abs=1e-9)


# --------------------------------------------------------------------------- conversions
@pytest.mark.parametrize("mu", [0.5, 1.0, 5.0, 15.8])
def test_generic_conversion_matches_closed_form(mu):
    G = fdp.Gaussian(mu)
    for eps in (0.5, 2.0, 10.0):
        assert fdp.tradeoff_to_delta(G, eps, symmetric=True) == pytest.approx(G.delta(eps), rel=1e-6, abs=1e-15)
    assert fdp.tradeoff_to_epsilon(G, 1e-5, symmetric=True) == pytest.approx(G.epsilon(1e-5), rel=1e-6)
    # the asymmetric route gives the same for a symmetric f
    assert fdp.tradeoff_to_delta(G, 1.0) == pytest.approx(G.delta(1.0), rel=1e-6)


def test_asymmetric_conversion_takes_both_directions():
    f = lambda a: np.maximum(0.0, 1 - 2 * np.asarray(a))  # noqa: E731  (not symmetric)
    one_sided = fdp.tradeoff_to_delta(f, 0.0, symmetric=True)
    both = fdp.tradeoff_to_delta(f, 0.0)
    assert both >= one_sided
    assert both == pytest.approx(0.5, abs=1e-6)


def test_tradeoff_from_delta_curve_is_below_gaussian():
    eps = np.linspace(0, 8, 200)
    f = fdp.tradeoff_from_delta_curve(eps, np.asarray(fdp.mu_to_delta(1.0, eps)))
    g = np.asarray(fdp.gaussian_tradeoff(1.0, ALPHA))
    assert np.all(np.asarray(f(ALPHA)) <= g + 1e-12)
    assert np.max(g - np.asarray(f(ALPHA))) < 5e-3


def test_lower_convex_envelope():
    x = np.linspace(0, 1, 11)
    y = np.minimum(1 - x, 0.5 * np.ones_like(x))  # concave kink: hull is the chord
    hx, hy = fdp.lower_convex_envelope(x, y)
    assert list(hx) == [0.0, 1.0] and list(hy) == [0.5, 0.0]


# --------------------------------------------------------------------------- subsampling, composition, groups
@pytest.mark.parametrize(("mu", "p"), [(1.0, 0.1), (2.0, 0.3), (4.0, 0.5)])
def test_subsample_numeric_matches_closed_form(mu, p):
    closed = np.asarray(fdp.subsampled_gaussian_tradeoff(mu, p, ALPHA))
    numeric = np.asarray(fdp.subsample(fdp.Gaussian(mu), p)(ALPHA))
    assert np.max(np.abs(closed - numeric)) < 2e-3
    assert all(fdp.check_tradeoff(lambda a: fdp.subsampled_gaussian_tradeoff(mu, p, a), grid=ALPHA).values())
    # C_p(f) is symmetric
    back = np.asarray(fdp.subsampled_gaussian_tradeoff(mu, p, closed))
    assert np.max(np.abs(back - ALPHA)[1:-1]) < 1e-6


def test_subsample_limits():
    assert np.allclose(fdp.subsampled_gaussian_tradeoff(2.0, 1.0, ALPHA), fdp.gaussian_tradeoff(2.0, ALPHA), atol=1e-9)
    assert np.allclose(fdp.subsampled_gaussian_tradeoff(2.0, 0.0, ALPHA), 1 - ALPHA, atol=1e-9)


def test_composition_and_clt():
    assert fdp.compose_gaussian(3.0, 4.0) == pytest.approx(5.0)
    assert fdp.compose_gaussian(*([0.5] * 100)) == pytest.approx(5.0)
    for sigma, h in [(0.5, 10.29567), (1.0, 1.71014), (2.0, 0.62755), (4.0, 0.27795), (8.0, 0.13159)]:
        assert fdp.clt_factor(sigma) == pytest.approx(h, abs=1e-5)
    h = math.sqrt(2 * (math.exp(1.1**-2) * stats.norm.cdf(1.5 / 1.1) + 3 * stats.norm.cdf(-0.5 / 1.1) - 2))
    assert fdp.clt_mu(1.1, 0.01, 1000) == pytest.approx(0.01 * math.sqrt(1000) * h, rel=1e-12)
    assert fdp.clt_mu(1.1, 0.01, 1000, "poisson") == pytest.approx(0.01 * math.sqrt(1000 * math.expm1(1.1**-2)))
    assert fdp.clt_mu(1.1, 0.01, 1000.5) > fdp.clt_mu(1.1, 0.01, 1000)  # real-valued T allowed


@pytest.mark.parametrize(("mu", "g"), [(0.5, 2), (1.0, 3), (0.3, 10)])
def test_group_privacy_of_gaussian(mu, g):
    h = fdp.group_tradeoff(fdp.Gaussian(mu), g)
    a = np.linspace(0.001, 0.999, 200)
    assert np.allclose(h(a), fdp.gaussian_tradeoff(g * mu, a), atol=1e-9)
    assert fdp.group_gaussian(mu, g) == pytest.approx(g * mu)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: fdp.gaussian_tradeoff(-1.0, 0.5), "mu"),
        (lambda: fdp.gaussian_tradeoff(1.0, 1.5), "alpha"),
        (lambda: fdp.mu_to_epsilon(1.0, 0.0), "delta"),
        (lambda: fdp.mu_to_delta(-1.0, 1.0), "mu"),
        (lambda: fdp.subsampled_gaussian_tradeoff(1.0, 1.5, 0.5), "p"),
        (lambda: fdp.group_tradeoff(fdp.Gaussian(1.0), 0), "g"),
        (lambda: fdp.clt_mu(0.0, 0.1, 10), "sigma"),
        (lambda: fdp.clt_factor(1.0, "shuffle"), "sampling"),
        (lambda: fdp.eps_delta_tradeoff(-1.0, 0.1, 0.5), "epsilon"),
    ],
)
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
