"""The Gaussian mechanism (dpcore.accounting.gaussian) against dp_accounting's PLD, and the CLT μ (fdp)."""

import dp_accounting
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpcore.accounting.fdp import clt_mu
from dpcore.accounting.gaussian import delta_from_mu, epsilon_from_mu


def test_mu_one_reference():
    # dp_accounting test_gaussian_basic: Gaussian(sqrt 3) composed 1+2 times == mu=1 GDP; delta(1) = 0.126936
    assert delta_from_mu(1.0, 1.0) == pytest.approx(0.126936, abs=1e-5)


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_delta_matches_pld_of_gaussian(mu, eps):
    accountant = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.GaussianDpEvent(1.0 / mu))
    assert delta_from_mu(mu, eps) == pytest.approx(accountant.get_delta(eps), rel=2e-3, abs=1e-9)


def test_historic_opacus_gdp_script():
    assert clt_mu(1.3, 256 / 60_000, 3516, "poisson") == pytest.approx(0.227, abs=5e-4)


def test_fixed_mu_larger_than_poisson():
    assert clt_mu(1.5, 0.04, 2250, "fixed") > clt_mu(1.5, 0.04, 2250, "poisson")


def test_large_epsilon_is_stable():
    assert 0.0 <= delta_from_mu(0.5, 200.0) < 1e-300 or delta_from_mu(0.5, 200.0) == 0.0
    assert np.isfinite(epsilon_from_mu(5.0, 1e-12))


@given(st.floats(0.05, 6.0), st.floats(1e-10, 0.5))
def test_round_trip(mu, delta):
    eps = epsilon_from_mu(mu, delta)
    if eps > 0:
        assert delta_from_mu(mu, eps) == pytest.approx(delta, rel=1e-6, abs=1e-15)
    else:
        assert delta_from_mu(mu, 0.0) <= delta


@given(st.floats(0.05, 6.0), st.floats(0.0, 20.0), st.floats(0.0, 20.0))
def test_delta_decreasing_in_epsilon(mu, e1, e2):
    lo, hi = sorted((e1, e2))
    assert delta_from_mu(mu, hi) <= delta_from_mu(mu, lo) + 1e-15


def test_bad_input():
    with pytest.raises(ValueError, match="mu"):
        delta_from_mu(-1.0, 1.0)
    with pytest.raises(ValueError, match="mu"):
        delta_from_mu(float("nan"), 1.0)
    assert delta_from_mu(0.0, 1.0) == 0.0 and epsilon_from_mu(0.0, 1e-5) == 0.0
    with pytest.raises(ValueError, match="epsilon"):
        delta_from_mu(1.0, -1.0)
    with pytest.raises(ValueError, match="delta"):
        epsilon_from_mu(1.0, 0.0)
