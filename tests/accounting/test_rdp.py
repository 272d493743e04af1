"""The subsampled-Gaussian RDP accountant (dpcore.accounting.rdp): closed forms, dp_accounting's reference
curves, the two RDP -> (ε, δ) conversions, fractional orders."""

import math

import numpy as np
import pytest
from dpa_reference import dpa_poisson_rdp

from dpcore.accounting.rdp import rdp_curve, rdp_to_epsilon


def test_rdp_curve_closed_form_at_full_batch():
    sigma = 2.0
    orders = np.array([2.0, 3.5, 10.0])
    ours = rdp_curve(sigma, sample_rate=1.0, steps=7, orders=orders)
    assert ours == pytest.approx(7 * orders / (2 * sigma**2), rel=1e-9)


def test_rdp_poisson_reference_curve():
    # dp_accounting's test_compute_rdp_poisson_sampled_gaussian; at α = 1.5 its series over-estimates:
    # the exact value (mpmath quadrature, 30 digits) is 6.50070897188e-4, not 6.70579741e-4.
    orders = [1.5, 2.5, 5, 50, 100]
    expected = [6.50070897188e-04, 1.08548710e-03, 2.18075656e-03, 2.38460375e-02, 1.67416308e02]
    assert rdp_curve(2.5, sample_rate=0.01, steps=50, orders=orders) == pytest.approx(expected, rel=1e-4)


def test_pure_dp_conversion_reference():
    # dp_accounting's test_compute_epsilon_delta_pure_dp: constant rdp 1.1 on orders 2..32
    orders = list(range(2, 33))
    assert rdp_to_epsilon(orders, [1.1] * len(orders), 1e-5) == pytest.approx(1.32783806176, rel=1e-9)


def test_mironov_conversion_formula():
    orders, rdp = [2.0, 10.0], [0.5, 1.0]
    expected = min(0.5 + math.log(1e5) / 1, 1.0 + math.log(1e5) / 9)
    assert rdp_to_epsilon(orders, rdp, 1e-5, conversion="mironov") == pytest.approx(expected)


def test_dp_accounting_fractional_orders_are_conservative():
    """dp_accounting 0.6.0's fractional-order series over-estimates RDP for α in (1, 2) (it adds
    terms whose binomial coefficients are negative); our exact integral (checked against mpmath:
    0.0033507 at α=1.25, q=0.1, σ=1.5) is smaller. Integer orders agree."""
    ours = rdp_curve(1.5, sample_rate=0.1, steps=1, orders=[1.25, 2.0, 3.0])
    dpa = dpa_poisson_rdp(1.5, 0.1, 1, [1.25, 2.0, 3.0])
    assert ours[0] == pytest.approx(0.0033507, rel=1e-4)
    assert dpa[0] == pytest.approx(0.0048164, rel=1e-4) and dpa[0] > ours[0]
    assert ours[1:] == pytest.approx(dpa[1:], rel=1e-9)
