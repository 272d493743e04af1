"""Paper 000 (Proactive DP): σ–ε rule, γ, calculators D.4 / E.1, schedule, Lemma B.3 / Theorem B.2 engine.

Golden numbers are those of the paper (Tables 3–11, App. B.4, D.4, E.1) and of dpcore's own reproduction of them.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpcore.papers.p000_proactive import calculator as pr
from dpcore.papers.p000_proactive import e1
from dpcore.papers.p000_proactive import moments as pm
from dpcore.papers.p000_proactive import tables as tb

SETTINGS = [  # (sigma, N, k, delta)
    (19.29962, 10_000, 5, 1e-4),
    (12.10881, 60_000, 6, 1 / 60_000),
    (6.572, 50_000, 7, 2e-5),
]


# --------------------------------------------------------------------------- σ ↔ ε
def test_sigma_golden():
    assert pr.sigma(0.5, 1e-4) == pytest.approx(6.2323, abs=1e-4)
    assert pr.sigma(0.5, 1e-5) == pytest.approx(6.9319, abs=1e-4)
    assert pr.sigma(0.049455, 1e-4, mode="paper") == pytest.approx(19.29962, abs=2e-4)


def test_epsilon_golden():
    assert pr.epsilon(19.29962, 1e-4) == pytest.approx(0.049722, abs=1e-6)
    assert pr.epsilon(12.10881, 1 / 60_000) == pytest.approx(0.152146, abs=3e-6)
    assert pr.epsilon(6.572, 2e-5) == pytest.approx(0.525344, abs=1e-6)
    # Tables 3–5 used 2 ln(1/δ)/σ²
    assert pr.epsilon(19.29962, 1e-4, mode="paper") == pytest.approx(0.049455, abs=1e-6)
    assert pr.epsilon(12.10881, 1 / 60_000, mode="paper") == pytest.approx(0.15007, abs=1e-5)
    assert pr.epsilon(6.572, 2e-5, mode="paper") == pytest.approx(0.50102, abs=1e-5)


def test_h_g_golden():
    assert pr.h_bound(6) == pytest.approx(0.4158, abs=1e-4)
    assert pr.h_bound(10) == pytest.approx(0.5844, abs=1e-4)
    assert pr.g_bound(6) == pytest.approx(1 / (math.e * 6))  # h(σ) > 1/(eσ) for σ ≥ 2.5


@given(st.floats(0.01, 5), st.floats(0.01, 5), st.floats(1e-8, 0.1))
def test_sigma_decreases_in_epsilon(e1_, e2_, delta):
    lo, hi = sorted((e1_, e2_))
    if hi - lo < 1e-6:
        return
    for mode in pr.MODES:
        assert pr.sigma(hi, delta, mode=mode) < pr.sigma(lo, delta, mode=mode)


@given(st.floats(0.01, 5), st.floats(1e-10, 0.5), st.floats(1e-10, 0.5))
def test_sigma_decreases_in_delta(eps, d1, d2):
    lo, hi = sorted((d1, d2))
    if hi / lo < 1 + 1e-6:
        return
    for mode in pr.MODES:
        assert pr.sigma(eps, hi, mode=mode) < pr.sigma(eps, lo, mode=mode)


@given(st.floats(0.001, 10), st.floats(1e-10, 0.5))
def test_sigma_epsilon_roundtrip(eps, delta):
    for mode in pr.MODES:
        assert pr.epsilon(pr.sigma(eps, delta, mode=mode), delta, mode=mode) == pytest.approx(eps, rel=1e-9)


# --------------------------------------------------------------------------- γ
@pytest.mark.parametrize(
    ("setting", "g_star", "g_paper", "g_corr"),
    [(0, 3.12524, 3.81495, 3.13103), (1, 3.66788, 5.28111, 3.68599), (2, 4.62462, 9.22533, 4.68855)],
)
def test_gamma_golden(setting, g_star, g_paper, g_corr):
    sigma, N, k, delta = SETTINGS[setting]
    eps = pr.epsilon(sigma, delta)
    assert pr.gamma(sigma, eps, k) == pytest.approx(g_star, abs=1e-5)
    assert pr.gamma(sigma, eps, k, mode="paper") == pytest.approx(g_paper, abs=1e-5)
    assert pr.gamma(sigma, eps, k, formula="corrected") == pytest.approx(g_corr, abs=1e-4)


@given(st.floats(3.0, 40.0), st.floats(0.01, 3.0), st.floats(1.0, 50.0))
def test_gamma_is_smallest_fixed_point(sigma, eps, k):
    g = pr.gamma(sigma, eps, k)
    assert g > 2
    assert pr.gamma_rhs(g, sigma, eps, k) == pytest.approx(g, rel=1e-9)
    # any smaller γ fails the inequality γ ≥ F(γ)
    for frac in (0.9, 0.99, 0.999):
        gg = g * frac
        assert gg < pr.gamma_rhs(gg, sigma, eps, k)
    # one update from 2 (the paper's γ) is larger, i.e. conservative
    try:
        assert pr.gamma(sigma, eps, k, mode="paper") >= g
    except ValueError:
        pass  # F(2) outside the domain


def test_gamma_asymptotic_for_small_alpha():
    sigma, eps, k = 20.0, 0.01, 100.0
    g = pr.gamma(sigma, eps, k)
    assert pr.gamma_asymptotic(sigma, eps / (g * k)) == pytest.approx(g, rel=1e-3)


def test_gamma_not_close_to_two_in_paper_settings():
    """Sec. 3.3 says γ is 'generally close to 2'; in the paper's own settings γ* is 3.1–4.6."""
    for sigma, _, k, delta in SETTINGS:
        assert pr.gamma(sigma, pr.epsilon(sigma, delta), k) > 3.1


# --------------------------------------------------------------------------- D.4 (Tables 9–11)
@pytest.mark.parametrize(
    ("setting", "eps_target", "s_paper", "s_asym", "s_star", "eps_fdp"),
    [
        (0, 0.0497, 26, 198, 31.819, 0.0105),
        (1, 0.1521, 288, 3042, 414.813, 0.0389),
        (2, 0.5253, 406, 7504, 811.409, 0.1133),
    ],
)
def test_dp_calculator_golden(setting, eps_target, s_paper, s_asym, s_star, eps_fdp):
    sigma, N, k, delta = SETTINGS[setting]
    paper = pr.dp_calculator(sigma, N, k, mode="paper")
    theorem = pr.dp_calculator(sigma, N, k)
    assert round(paper.epsilon, 4) == eps_target
    assert paper.s_max_int == s_paper
    assert paper.s_max_asym_int == s_asym
    assert paper.condition_7 and theorem.condition_7
    assert theorem.s_max == pytest.approx(s_star, abs=1e-3)
    assert pr.max_sample_size(N, k, sigma=sigma, mode="paper") == s_paper
    assert pr.max_sample_size(N, k, sigma=sigma) == math.floor(s_star)
    # the paper evaluated the f-DP accountant at T = T_min, i.e. at the real-valued s_max
    assert pr.gdp_epsilon(sigma, N, k, paper.s_max, delta) == pytest.approx(eps_fdp, abs=5e-5)


@pytest.mark.parametrize(
    ("setting", "stated", "doubled"), [(0, 0.0355, 0.0533), (1, 0.1433, 0.2097), (2, 0.5625, 0.8239)]
)
def test_fdp_asym_column_is_at_twice_the_batch(setting, stated, doubled):
    """Erratum: the printed T_min_asym f-DP values (0.0533/0.2097/0.8239) are at 2·s_max_asym."""
    sigma, N, k, delta = SETTINGS[setting]
    s_asym = pr.dp_calculator(sigma, N, k, mode="paper").s_max_asym
    assert pr.gdp_epsilon(sigma, N, k, s_asym, delta) == pytest.approx(stated, abs=2e-4)  # note: at ⌊s⌋
    assert pr.gdp_epsilon(sigma, N, k, 2 * s_asym, delta) == pytest.approx(doubled, abs=5e-5)


def test_rdp_golden_and_libsvm_tightness_counterexample():
    assert pr.rdp_epsilon(19.29962, 10_000, 5, 26, 1e-4) == pytest.approx(0.0125, abs=5e-5)
    # at s_max_asym = 198 the rigorous RDP bound is below ε_target = 0.0497: 'cannot be achieved' fails
    assert pr.rdp_epsilon(19.29962, 10_000, 5, 198, 1e-4) == pytest.approx(0.0411, abs=1e-4)
    assert pr.rdp_epsilon(12.10881, 60_000, 6, 3042, 1 / 60_000) == pytest.approx(0.1572, abs=1e-4)


def test_poisson_gaussian_rdp_matches_dp_accounting():
    from dpa_reference import dpa_poisson_rdp

    orders = np.arange(2, 40)
    ours = 500 * pr.poisson_gaussian_rdp(0.02, 3.0, orders)
    ref = dpa_poisson_rdp(3.0, 0.02, 500, orders)
    np.testing.assert_allclose(ours, ref, rtol=1e-10)


def test_table_3_route():
    eps = pr.epsilon(19.29962, 1e-4, mode="paper")
    g = pr.gamma(19.29962, eps, 5, mode="paper")
    assert g == pytest.approx(3.80442, abs=1e-5)
    assert 5 * 10_000 / (g * 25 / eps) == pytest.approx(25.999, abs=1e-3)


def test_theorem_3_1_and_remarks():
    res = pr.theorem_3_1(0.049722, 1e-4, 10_000, 5, 1923)
    assert res["holds"]
    assert not pr.theorem_3_1(0.6, 1e-4, 10_000, 5, 1e5)["holds"]  # ε < 0.5 required
    assert pr.condition_7(5, 1e-4) and not pr.condition_7(1, 1e-4)
    assert pr.min_epochs(1e-4) == pytest.approx(math.e / 2 * math.sqrt(0.5 + math.log(1e4)))
    # k ≤ εN/(γθ²): ε = 0.2, γθ² ≈ 2, N = 10000 gives k ≤ 1000
    assert 0.2 * 10_000 / 2 == 1000


# --------------------------------------------------------------------------- E.1 (Tables 6–8)
T6_SIGMA = [(55, 13.06742), (103, 8.59143), (168, 6.05868), (265, 4.27273), (400, 3.03241)]
T7_SIGMA = [
    (370, 12.10881),
    (460, 10.48452),
    (543, 9.37379),
    (889, 6.63120),
    (1168, 5.41887),
    (1409, 4.69244),
    (2159, 3.31648),
]
T8_SIGMA = [(417, 9.29838), (689, 6.57192), (909, 5.36937), (1099, 4.65014), (1267, 4.16111), (1690, 3.28831)]


@pytest.mark.parametrize(
    ("rows", "N", "K", "delta"),
    [(T6_SIGMA, 10_000, 50_000, 1e-4), (T7_SIGMA, 60_000, 360_000, 1 / 60_000), (T8_SIGMA, 50_000, 350_000, 2e-5)],
)
def test_e1_paper_sigma_reproduces_tables_6_to_8(rows, N, K, delta):
    for s, sigma_printed in rows:
        _, _, sigma = e1.e1_paper_sigma(s, N, K, delta)
        assert sigma == pytest.approx(sigma_printed, abs=1e-5)  # the paper truncates to 5 decimals


def test_e1_errata_rows():
    g, eps, sigma = e1.e1_paper_sigma(1267, 50_000, 350_000, 2e-5)
    assert eps == pytest.approx(1.24976, abs=1e-5)  # labelled ε = 1.5
    assert sigma == pytest.approx(4.16112, abs=1e-5)
    _, _, sigma = e1.e1_paper_sigma(1994, 50_000, 350_000, 2e-5)
    assert sigma == pytest.approx(2.85105, abs=1e-5)  # printed 2.68273: not reproducible
    assert pr.sigma(3.00674, 2e-5, mode="paper") == pytest.approx(2.68273, abs=1e-4)
    _, eps, _ = e1.e1_paper_sigma(55, 10_000, 50_000, 1e-4)
    assert eps == pytest.approx(0.10788, abs=1e-5)  # labelled 0.1


@pytest.mark.parametrize(
    ("N", "K", "delta", "target", "s", "sigma"),
    [
        (10_000, 50_000, 1e-4, 0.04945, 31, 19.5966),
        (10_000, 50_000, 1e-4, 0.1, 56, 13.7904),
        (10_000, 50_000, 1e-4, 2.0, 419, 3.3482),
        (60_000, 360_000, 1 / 60_000, 0.15007, 410, 12.1956),
        (60_000, 360_000, 1 / 60_000, 2.0, 2337, 3.6067),
        (50_000, 350_000, 2e-5, 1.25, 1421, 4.3958),
        (50_000, 350_000, 2e-5, 3.0, 2087, 3.0355),
    ],
)
def test_e1_theorem_golden(N, K, delta, target, s, sigma):
    r = e1.max_sample_size_e1(N, K, target, delta=delta)
    assert r.s == s
    assert r.sigma == pytest.approx(sigma, abs=1e-4)
    assert r.epsilon <= target
    assert pr.theorem_b4(r.sigma, r.epsilon, delta, N, K, r.s, gamma_value=r.gamma)["holds"]


def test_e1_scan_equals_bisect():
    for mode in pr.MODES:
        a = e1.max_sample_size_e1(10_000, 50_000, 0.25, delta=1e-4, mode=mode, search="scan")
        b = e1.max_sample_size_e1(10_000, 50_000, 0.25, delta=1e-4, mode=mode, search="bisect")
        assert a.s == b.s
    hist = [(50.0, 5e4)]
    a = e1.max_sample_size_e1(10_000, 5e4, 1.0, delta=1e-4, history=hist, sigma_j=12.0, search="scan")
    b = e1.max_sample_size_e1(10_000, 5e4, 1.0, delta=1e-4, history=hist, sigma_j=12.0)
    assert a.s == b.s == 103


def test_e1_literal_start_fails_for_later_phases():
    """Erratum: App. E.1 starts every phase at s_j = 1, where θ = s_max/s̄ is huge."""
    with pytest.raises(ValueError, match="no sample size"):
        e1.max_sample_size_e1(10_000, 5e4, 1.0, delta=1e-4, history=[(50.0, 5e4)], sigma_j=12.0, s_start=1)


def test_max_sample_size_e1_dispatch():
    assert e1.max_sample_size_e1(10_000, 5 * 10_000, 0.04945, delta=1e-4).s == 31


def test_schedule():
    phases = e1.schedule(10_000, [(None, 5e4, 20), (15.0, 5e4, 60), (10.0, 5e4)], 2.0, delta=1e-4)
    assert [p.s for p in phases] == [20, 60, 87]
    assert phases[0].theta == 1 and all(p.theta >= 1 for p in phases)
    assert [p.K for p in phases] == [5e4, 1e5, 1.5e5]
    assert all(p.epsilon <= 2.0 for p in phases)
    assert phases[1].sigma == 15.0 and phases[2].sigma == 10.0
    stopped = e1.schedule(10_000, [(None, 5e4, 50), (12.0, 5e4), (9.0, 5e4)], 1.0, delta=1e-4, on_infeasible="stop")
    assert len(stopped) == 2
    with pytest.raises(ValueError, match="sigma_j must decrease"):
        e1.schedule(10_000, [(None, 5e4, 20), (30.0, 5e4)], 2.0, delta=1e-4)


# --------------------------------------------------------------------------- honest ε (§3.12)
def test_honest_rows_all_satisfy_b4():
    rows = tb.honest_rows()
    assert len(rows) == 20
    assert all(r["theorem_b4"] for r in rows)
    by = {(r["table"], r["paper_epsilon"]): r for r in rows}
    assert by[("Table 6", 2.0)]["epsilon_eq6"] == pytest.approx(2.5600, abs=1e-4)
    assert by[("Table 8", 3.0)]["epsilon_eq6"] == pytest.approx(4.1638, abs=1e-4)
    assert by[("Table 8", 3.0)]["gamma_star"] == pytest.approx(13.1725, abs=1e-4)
    assert by[("Table 7", 0.15007)]["epsilon_gdp_uniform"] == pytest.approx(0.0447, abs=1e-4)
    assert by[("Table 6", 0.5)]["theorem_3_1"] is False and by[("Table 6", 0.25)]["theorem_3_1"] is True


def test_table_9_11_rows_factors():
    rows = tb.table_9_11_rows()
    for row, (paper, paper_asym) in zip(rows, ((4.7234, 0.9328), (3.9147, 0.7257), (4.6372, 0.6376)), strict=True):
        assert round(row["factor_s_max"], 4) == paper
        assert round(row["factor_2x_s_max_asym"], 4) == paper_asym
        assert row["factor_s_max_asym"] > 0.9  # at the stated batch: 1.40 / 1.06 / 0.93


# --------------------------------------------------------------------------- Lemma B.3 / Theorem B.2
@given(st.integers(1, 60), st.sampled_from([(26, 10_000, 19.3), (288, 60_000, 12.1), (400, 50_000, 6.6)]))
def test_lemma_b3_dominates_exact_log_moment(lam, case):
    s, N, sigma = case
    bound = pm.lemma_b3_bound(lam, s, N, sigma)
    if not math.isfinite(bound):
        return
    exact = lam * pr.poisson_gaussian_rdp(s / N, sigma, np.array([lam + 1]))[0]
    assert bound >= exact * (1 - 1e-12)


def test_moments_accountant_between_rdp_and_eq6():
    eps = pm.moments_epsilon(19.29962, 26, 10_000, 1e-4, rounds=1923)
    assert pr.rdp_epsilon(19.29962, 10_000, 5, 26, 1e-4) < eps < pr.epsilon(19.29962, 1e-4)
    seq = pm.moments_epsilon(19.29962, [26] * 1923, 10_000, 1e-4)
    assert seq == pytest.approx(eps)


def test_theorem_b2_reduces_to_eq6():
    """With the 2/(ρ̂c1) branch active (the B.4 regime) the required σ is exactly eq. (6)."""
    for sigma, N, k, delta in SETTINGS:
        eps = pr.epsilon(sigma, delta)
        s = math.floor(pr.dp_calculator(sigma, N, k, mode="paper").s_max)
        res = pm.theorem_b2(sigma, eps, delta, [s] * math.ceil(k * N / s), N)
        assert res["holds"]
        assert res["sigma_required"] == pytest.approx(pr.sigma(eps, delta), rel=1e-9)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: pr.sigma(0.0, 1e-5), "epsilon"),
        (lambda: pr.sigma(-1.0, 1e-5), "epsilon"),
        (lambda: pr.sigma(1.0, 1.0), "delta"),
        (lambda: pr.sigma(1.0, 0.0), "delta"),
        (lambda: pr.sigma(1.0, 1e-5, mode="exact"), "mode"),
        (lambda: pr.epsilon(1.4, 1e-5), "sigma"),
        (lambda: pr.epsilon(-2.0, 1e-5), "sigma"),
        (lambda: pr.gamma(10.0, 0.1, 0.0), "k"),
        (lambda: pr.gamma(10.0, 0.1, 5, formula="new"), "formula"),
        (lambda: pr.min_rounds(10.0, 0.1, 5, theta=0.5), "theta"),
        (lambda: pr.dp_calculator(10.0, 0, 5), "N"),
        (lambda: pr.dp_calculator(10.0, 1000, -1), "k"),
        (lambda: pr.max_sample_size(-5, 5, 0.1, 1e-4), "N"),
        (lambda: e1.max_sample_size_e1(10_000, 5e4, 0.0), "epsilon_target"),
        (lambda: e1.e1_evaluate(0, 10_000, 5e4), "s"),
        (lambda: pm.lemma_b3_bound(2, 26, 10_000, 1.0), "sigma"),
    ],
)
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_paper_gamma_outside_domain_raises():
    with pytest.raises(ValueError, match="F\\(2\\) is undefined"):
        pr.gamma(3.0, 50.0, 1.0, mode="paper")


def test_honest_row_refuses_a_noise_whose_epsilon_leaves_the_range_naming_the_noise():
    """The fuzz found honest_row(noise=429194, delta=1e-4) failing inside gamma() with a message about 'epsilon', a
    parameter the caller never passed; like the calculator, it now names its own parameter."""
    from dpcore.papers.p000_proactive.calculator import EPSILON_RANGE, epsilon, honest_row

    noise = 429194.0
    assert epsilon(noise, 1e-4) < EPSILON_RANGE[0]
    with pytest.raises(ValueError, match=r"^noise=429194\.0 gives epsilon"):
        honest_row(noise, 26.0, 10_000, 50_000.0, 1e-4)
    assert honest_row(19.3, 26.0, 10_000, 50_000.0, 1e-4)["epsilon_eq6"] == epsilon(19.3, 1e-4)
