"""Fig. 3 of Lowy & Razaviyayn (ICLR 2023): the rates table of dpcore.papers.p001_isrl.rates and its claims."""

from __future__ import annotations

import math

import pytest

from dpcore.claims import compute_status as evaluate_status
from dpcore.papers.p001_isrl import rates
from dpcore.papers.p001_isrl.claims import CLAIMS, NOTEBOOKS, RATES_SPECS

P = rates.Problem(n=10_000, num_silos=25, dim=50, epsilon=1.0)


def test_eq4_value_is_the_printed_formula():
    # eq. (4) with M = N: (LD/√N)(1/√n + √d/(ε0 n)), logs omitted
    p = rates.Problem(n=400, num_silos=4, dim=16, epsilon=0.5, lipschitz=2.0, diameter=3.0)
    expected = 6.0 / 2.0 * (1 / 20 + 4 / (0.5 * 400))
    assert rates.rate("iid-convex", "isrl-upper", p) == pytest.approx(expected, rel=1e-12)


def test_eq6_privacy_term_and_lower_bound_saturates():
    p = rates.Problem(n=100, num_silos=4, dim=9, epsilon=2.0, beta=16.0, diameter=4.0, lipschitz=1.0)
    scale = 16**0.25 * 1.0 * 4**1.5 * 3 / (2.0 * 100 * 2)
    assert rates.rate_terms("noniid-convex", "isrl-upper", p)["privacy"] == pytest.approx(scale**0.8, rel=1e-12)
    tiny = rates.Problem(n=1, num_silos=1, dim=10_000, epsilon=0.01)  # √d/(ε0 n √N) ≫ 1: LD·min{1, ·} = LD
    assert rates.rate_terms("iid-convex", "isrl-lower", tiny)["privacy"] == pytest.approx(1.0)


@pytest.mark.parametrize(("setting", "bound", "n_exp", "silo_exp"), [
    ("iid-convex", "isrl-upper", -1.0, -0.5),
    ("iid-strongly-convex", "isrl-upper", -2.0, -1.0),
    ("noniid-convex", "isrl-upper", -0.8, -0.4),
    ("noniid-strongly-convex", "sdp-upper", -2.0, -2.0),
    ("noniid-convex", "sdp-upper", -0.8, -0.8),
    ("iid-convex", "sdp-upper", -1.0, -1.0),
])
def test_exponents(setting, bound, n_exp, silo_exp):
    assert rates.exponent(setting, bound, "n", P) == pytest.approx(n_exp, abs=1e-9)
    assert rates.exponent(setting, bound, "num_silos", P) == pytest.approx(silo_exp, abs=1e-9)


def test_noniid_lower_bound_uses_c_squared():
    # LD·√d/(ε0 n √N C²) with C² ∝ (ε0 n)^{2/5}: slope −7/5 in n
    assert rates.exponent("noniid-convex", "isrl-lower", "n", P) == pytest.approx(-1.4, abs=1e-9)


def test_gap_between_6_and_4_is_the_reciprocal_of_the_printed_factor():
    slope_n = rates.ratio_exponent(("noniid-convex", "isrl-upper"), ("iid-convex", "isrl-upper"), "n", P)
    assert slope_n == pytest.approx(0.2, abs=1e-9)  # (6)/(4) grows with n: ∝ x^(−1/5), x ∝ 1/n
    spec = CLAIMS["fig3.noniid_vs_iid.gap_exponent"]
    assert evaluate_status(spec, -slope_n) == "erratum"
    assert evaluate_status(spec, 0.2) == "reproduced"  # the printed value is stored as printed


def test_privacy_for_free_crossing():
    p = rates.Problem(n=500, num_silos=3, dim=1, epsilon=0.3)
    assert rates.privacy_for_free_dimension("iid-convex", p) == pytest.approx(0.3**2 * 500, rel=1e-9)
    assert rates.privacy_for_free_dimension("iid-strongly-convex", p) == pytest.approx(0.3**2 * 500, rel=1e-9)


def test_one_pass_rounds_scale_as_c_squared():
    low, high = rates.one_pass_rounds(P), rates.one_pass_rounds(rates.Problem(n=10_000, num_silos=25, dim=50,
                                                                                epsilon=3.0))
    assert math.log(high / low) / math.log(3.0) == pytest.approx(0.4, abs=1e-9)


def test_table_has_every_setting_and_bound():
    table = rates.fig3_table()
    assert list(table["key"]) == list(rates.SETTINGS)
    assert set(rates.BOUNDS) <= set(table.columns)
    assert table.loc[table["key"] == "erm-convex", "sdp-upper"].item() == "—"


def test_claim_values_cover_the_rates_specs_and_reproduce_or_explain():
    values = rates.claim_values()
    assert set(values) == {s.key for s in RATES_SPECS}
    statuses = {key: evaluate_status(CLAIMS[key], value) for key, (value, _) in values.items()}
    assert statuses.pop("fig3.noniid_vs_iid.gap_exponent") == "erratum"
    assert set(statuses.values()) == {"reproduced"}
    owner = {nb.notebook: nb for nb in NOTEBOOKS}["001_isrl_dp/privacy_accounting"]
    assert {s.key for s in RATES_SPECS} <= set(owner.keys)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: rates.Problem(n=0, num_silos=1, dim=1, epsilon=1.0), "n"),
    (lambda: rates.Problem(n=1, num_silos=1, dim=1, epsilon=-1.0), "epsilon"),
    (lambda: rates.rate("iid", "isrl-upper", P), "setting"),
    (lambda: rates.rate("iid-convex", "upper", P), "bound"),
    (lambda: rates.rate("erm-convex", "sdp-upper", P), "sdp-upper"),
    (lambda: rates.exponent("iid-convex", "isrl-upper", "M", P), "variable"),
    (lambda: rates.exponent("iid-convex", "isrl-upper", "n", P, factor=1.0), "factor"),
    (lambda: rates.exponent("erm-convex", "isrl-upper", "n", P, term="statistical"), "statistical"),
    (lambda: rates.privacy_for_free_dimension("noniid-convex", P), "setting"),
    (lambda: rates.rate_terms("iid-convex", "isrl-upper", {"n": 1}), "problem"),
    (lambda: rates.claim_values(rates.Problem(n=1, num_silos=1, dim=100, epsilon=1.0)), "problem"),
])
def test_validation(call, message):
    with pytest.raises(ValueError, match=message):
        call()
