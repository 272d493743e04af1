"""Paper 003 (shuffling + batch clipping): Tables 1–2, the exact A_1 mixture, A_0, and the two proof defects.

Golden numbers were computed independently (exact binomial / inclusion–exclusion / brute-force sums) when the
paper's formulas were first implemented; the paper itself prints formulas only.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.accounting import fdp
from dpcore.papers.p003_shuffling import bounds as sh
from dpcore.papers.p003_shuffling import tables as stab

SIGMA, E100 = 2.0, 100
LOG_ALPHA = np.logspace(-40, math.log10(0.999), 200)


# --------------------------------------------------------------------------- q distributions
def _paper_qk_sum(N, g, s, m):
    """App. E.1's formula as printed: sum over (k'_1..k'_m) of counted outcomes (tiny cases only)."""
    total = math.comb(N, m * s) * math.factorial(m * s) // math.factorial(s) ** m
    out = [0] * (min(g, m) + 1)
    for ks in itertools.product(range(min(s, g) + 1), repeat=m):
        kp = sum(ks)
        if kp > g:
            continue
        k = sum(1 for x in ks if x)
        count = math.comb(N - g, m * s - kp) * math.comb(g, kp)
        count *= math.factorial(kp) // math.prod(math.factorial(x) for x in ks)
        count *= math.factorial(m * s - kp) // math.prod(math.factorial(s - x) for x in ks)
        out[k] += count
    return np.array(out) / total


@pytest.mark.parametrize(("N", "g", "s", "m"), [(40, 3, 3, 2), (30, 4, 2, 3), (20, 2, 1, 4), (25, 3, 2, 2)])
def test_subsampling_round_pmf_equals_paper_formula(N, g, s, m):
    np.testing.assert_allclose(sh.subsampling_round_pmf(N, g, s, m), _paper_qk_sum(N, g, s, m), atol=1e-15)


def test_subsampling_round_pmf_golden_and_monte_carlo():
    np.testing.assert_allclose(sh.subsampling_round_pmf(40, 3, 3, 2), [0.6057, 0.3615, 0.0328], atol=1e-4)
    np.testing.assert_allclose(sh.subsampling_round_pmf(30, 4, 2, 3), [0.3877, 0.4733, 0.1315, 0.0074], atol=1e-4)
    mc = sh.subsampling_round_monte_carlo(40, 3, 3, 2, draws=20_000, seed=1)
    np.testing.assert_allclose(mc, sh.subsampling_round_pmf(40, 3, 3, 2), atol=0.012)


@given(st.integers(20, 200), st.integers(1, 5), st.integers(1, 10))
@settings(max_examples=20)
def test_individual_clipping_pmf_is_hypergeometric(N, g, m):
    from scipy import stats

    ours = sh.subsampling_round_pmf(N, g, 1, m)
    ref = stats.hypergeom.pmf(np.arange(len(ours)), N, g, m)
    np.testing.assert_allclose(ours, ref, atol=1e-12)


@pytest.mark.parametrize(
    ("N", "s", "g", "paper", "true"),
    [
        (600, 64, 2, [0.2, 0.8], [0.10957, 0.89043]),
        (6_400, 64, 3, [5.80e-4, 5.766e-2, 0.94176], [1.0e-4, 2.925e-2, 0.97065]),
        (59_392, 1024, 3, [0.00169, 0.09661, 0.90169], [3.0e-4, 0.05079, 0.94892]),
    ],
)
def test_shuffle_collision_pmf_golden(N, s, g, paper, true):
    np.testing.assert_allclose(sh.shuffle_collision_pmf(N, s, g, method="paper"), paper, atol=2e-5, rtol=2e-3)
    np.testing.assert_allclose(sh.shuffle_collision_pmf(N, s, g), true, atol=2e-5, rtol=2e-3)


def test_shuffle_collision_true_law_matches_monte_carlo_and_paper_does_not():
    true = sh.shuffle_collision_pmf(600, 64, 2)
    paper = sh.shuffle_collision_pmf(600, 64, 2, method="paper")
    mc = sh.shuffle_collision_monte_carlo(600, 64, 2, draws=20_000, seed=3)
    assert np.max(np.abs(mc - true)) < 0.01
    assert np.max(np.abs(mc - paper)) > 0.08  # erratum: App. F.3 collision law


@pytest.mark.parametrize(
    ("N", "s", "q2", "q10", "q100"),
    [
        (60_000, 64, 1.9989, 9.9529, 94.9736),
        (60_000, 1024, 1.9829, 9.2666, 48.1313),
        (50_000, 1024, 1.9795, 9.1277, 42.6749),
    ],
)
def test_batch_clipping_q_golden(N, s, q2, q10, q100):
    assert sh.batch_clipping_q(N, s, 1)[1] == pytest.approx(1.0, abs=1e-9)
    assert sh.batch_clipping_q(N, s, 2)[1] == pytest.approx(q2, abs=1e-4)
    assert sh.batch_clipping_q(N, s, 10)[1] == pytest.approx(q10, abs=1e-4)
    assert sh.batch_clipping_q(N, s, 100)[1] == pytest.approx(q100, abs=1e-4)


# --------------------------------------------------------------------------- Defs 5.3 / 5.4
def test_upper_bound_function_c14_golden():
    f = sh.upper_bound_function(2.0, 0.05)  # u = 0.05, c^U = 4, σ = 2
    # kink points β0 = 0.15253, β1 = 0.20669: linear piece of slope −1 between them
    assert float(f(0.15253)) + 0.15253 == pytest.approx(float(f(0.20669)) + 0.20669, abs=1e-4)
    a = np.linspace(0.0, 1.0, 501)
    assert np.max(np.abs(np.asarray(f(np.asarray(f(a)))) - a)) < 1e-9  # symmetric
    assert all(fdp.check_tradeoff(f, grid=a).values())
    hat = np.asarray(sh.upper_bound_function(2.0, 0.05, symmetric=False)(a))
    assert np.all(np.asarray(f(a)) <= hat + 1e-12)


def test_lower_bound_function_c13_golden():
    f = sh.lower_bound_function(2.0, 0.01)  # l = 0.01, c^L = 4, σ = 2
    from scipy import optimize

    beta = optimize.brentq(lambda b: fdp.gaussian_tradeoff(2.0, b) - 0.01 - b, 0, 1)
    assert beta == pytest.approx(0.15371, abs=1e-5)
    a = np.linspace(0.0, 1.0, 501)
    assert all(fdp.check_tradeoff(f, grid=a, tol=1e-7).values())
    hat = np.asarray(sh.lower_bound_function(2.0, 0.01, symmetric=False)(a))
    assert np.all(np.asarray(f(a)) >= hat - 1e-12)


# --------------------------------------------------------------------------- Table 1 / Table 2
@pytest.mark.parametrize(
    ("E", "g", "lo", "hi", "mid"),
    [
        (1, 1, 0.271, 0.653, 0.5),
        (10, 2, 2.052, 2.406, 2.236),
        (100, 1, 4.820, 5.174, 5.0),
        (100, 10, 15.634, 15.987, 15.811),
    ],
)
def test_table_1_row_1_gaussian_parts(E, g, lo, hi, mid):
    b = sh.tradeoff_bounds(1, 1, sigma=SIGMA, E=E, g=g)
    assert b.lower.mu == pytest.approx(hi, abs=1e-3)  # the lower trade-off has the larger μ
    assert b.upper.mu == pytest.approx(lo, abs=1e-3)
    assert sh.tradeoff_bounds(1, 5, sigma=SIGMA, E=E, g=g).lower.mu == pytest.approx(mid, abs=1e-3)


def test_table_rows_shapes():
    assert len(sh.table_rows()) == 9
    b = sh.tradeoff_bounds(1, 3, sigma=SIGMA, E=E100)
    assert b.lower.mu == b.upper.mu == 5.0 and b.lower.epsilon(1e-5) == pytest.approx(33.104, abs=5e-4)
    b = sh.tradeoff_bounds(1, 5, sigma=SIGMA, E=E100, g=2, s=256)
    assert b.upper.mu == 0.0  # G_0: cannot be improved beyond no leakage
    b = sh.tradeoff_bounds(2, 1, sigma=SIGMA, E=E100, m=256, N=60_000)
    assert b.adversary == "A_0" and b.lower.epsilon(1e-5) == pytest.approx(1.598, abs=1e-3)
    assert sh.tradeoff_bounds(2, 2, sigma=SIGMA, E=E100, g=3, m=256, N=60_000).lower.mu == pytest.approx(
        3 * 0.409916, 1e-5
    )


@pytest.mark.parametrize(
    ("gamma", "g", "beta", "mu", "l"),
    [
        (0.1, 1, 2.8212, 8.398, 4.54e-5),
        (0.1, 10, 2.8216, 83.989, 3.72e-44),
        (0.1, 100, 2.8257, 672.398, 0.0),
        (1.0, 1, 3.7212, 9.645, 3.72e-44),
    ],
)
def test_table_2_row_3_lemma_e4(gamma, g, beta, mu, l):
    b = sh.tradeoff_bounds(2, 3, sigma=SIGMA, E=E100, g=g, m=64, N=60_000, form="lemma", gamma_slack=gamma)
    assert b.note == f"β = {beta:.5g}"
    assert b.condition_value == pytest.approx(l, rel=2e-3, abs=1e-300)
    assert (
        b.lower.label.startswith(f"f^L(μ={mu:.4g}") or abs(float(b.lower.label.split("=")[1].split(",")[0]) - mu) < 1e-2
    )


def test_row_4_and_row_6_validity():
    b = sh.tradeoff_bounds(1, 4, sigma=SIGMA, E=E100, g=1, s=1, m=64, N=60_000, form="lemma")
    assert b.condition_value == pytest.approx(0.1012, abs=1e-4)  # 1 − (1 − 0.001067)^100
    b = sh.tradeoff_bounds(1, 4, sigma=SIGMA, E=E100, g=2, s=1, m=64, N=60_000, form="lemma")
    assert b.condition_value == pytest.approx(0.3479, abs=1e-4)  # δ floor at g = 2
    for g, u in [(2, 0.004294), (5, 0.02755), (10, 0.1208)]:
        b = sh.tradeoff_bounds(1, 6, sigma=SIGMA, E=1, g=g, s=64, N=60_000, form="lemma")
        assert b.condition_value == pytest.approx(u, rel=1e-3)
    b = sh.tradeoff_bounds(1, 6, sigma=SIGMA, E=1, g=10, s=1024, N=60_000, form="lemma")
    assert not b.valid and b.condition_value == pytest.approx(-1.945, abs=1e-3)


# --------------------------------------------------------------------------- exact A_1
def test_exact_mixtures_golden():
    assert sh.mixture_tradeoff("shuffle", sigma=SIGMA, E=E100, N=60_000, m=256).epsilon(1e-5) == pytest.approx(
        33.104, abs=5e-4
    )
    for batch, eps in [(64, 35.013), (256, 34.982), (1024, 34.759)]:
        mx = sh.mixture_tradeoff("fixed", sigma=SIGMA, E=E100, N=60_000, m=batch)
        assert mx.epsilon(1e-5) == pytest.approx(eps, abs=1e-3)
    assert sh.mixture_tradeoff("fixed", sigma=SIGMA, E=1, N=60_000, m=64).epsilon(1e-5) == pytest.approx(
        3.583, abs=1e-3
    )
    for N, s, g, true, paper in [
        (59_968, 64, 2, 54.357, 54.336),
        (59_392, 1024, 3, 72.705, 71.831),
        (59_392, 1024, 10, 179.959, 170.436),
    ]:
        assert sh.mixture_tradeoff("shuffle", sigma=SIGMA, E=E100, N=N, s=s, g=g).epsilon(1e-5) == pytest.approx(
            true, abs=1e-3
        )
        mx = sh.mixture_tradeoff("shuffle", sigma=SIGMA, E=E100, N=N, s=s, g=g, q_method="paper")
        assert mx.epsilon(1e-5) == pytest.approx(paper, abs=1e-3)


def test_general_subsampling_mixture_matches_direct_convolution():
    N, s, m, g, E = 600, 2, 16, 2, 3
    mx = sh.mixture_tradeoff("fixed", sigma=SIGMA, E=E, N=N, s=s, m=m, g=g)
    qk = sh.subsampling_round_pmf(N, g, s, m)
    per_round = np.zeros(len(qk) ** 2)
    for k, p in enumerate(qk):
        per_round[k * k] += p
    pmf = np.array([1.0])
    for _ in range((N // (m * s)) * E):
        pmf = np.convolve(pmf, per_round)
    np.testing.assert_allclose(
        mx.delta(np.array([0.5, 2.0])),
        [
            sum(p * fdp.mu_to_delta(math.sqrt(c2) / SIGMA, e) for c2, p in enumerate(pmf) if c2 > 0 and p > 0)
            for e in (0.5, 2.0)
        ],
        rtol=1e-9,
    )


def test_thinning_gives_sqrt2_not_2():
    assert sh.thinned_shuffle_mixture(sigma=SIGMA, E=100).epsilon(1e-5) == pytest.approx(21.595, abs=1e-3)
    assert sh.thinned_shuffle_mixture(sigma=SIGMA, E=10).epsilon(1e-5) == pytest.approx(5.836, abs=1e-3)


# ---------------------------------------------------------------- errata (App. E.2, App. F.3) and containment
@pytest.mark.parametrize(
    ("N", "batch", "E", "below", "above"),
    [
        (60_000, 64, 100, 0.2287, 0.2243),
        (60_000, 256, 100, 0.2282, 0.2240),
        (50_000, 1024, 100, 0.2262, 0.2223),
        (60_000, 64, 10, 0.2201, 0.2083),
    ],
)
def test_hoeffding_tails(N, batch, E, below, above):
    res = sh.hoeffding_check(N, batch, E)
    assert res["tail_below_cU"] == pytest.approx(below, abs=1e-4)
    assert res["tail_above_cL"] == pytest.approx(above, abs=1e-4)
    assert res["claimed"] == pytest.approx(math.exp(-E))
    assert res["tail_below_cU"] > 1e3 * res["claimed"]


def test_hoeffding_correct_bound_and_quantile():
    res = sh.hoeffding_check(60_000, 64, 100)
    assert res["hoeffding_correct"] == pytest.approx(0.998934, abs=1e-6)
    assert math.sqrt(res["c2_for_tail_1e-6"]) == pytest.approx(math.sqrt(151), abs=1e-9)


def test_claimed_lower_bound_is_violated_by_exact_tradeoff():
    """Documented failure (App. E.2 Hoeffding step): Table 1 row 2's lower bound is above the exact A_1 curve."""
    exact = sh.mixture_tradeoff("fixed", sigma=SIGMA, E=E100, N=60_000, m=256, round_count="paper")
    bound = sh.tradeoff_bounds(1, 2, sigma=SIGMA, E=E100, form="lemma")
    assert exact.epsilon(1e-5) == pytest.approx(35.020, abs=1e-3)
    assert bound.lower.epsilon(1e-5) == pytest.approx(34.722, abs=1e-3)
    assert exact.epsilon(1e-5) > bound.lower.epsilon(1e-5)
    assert sh.bound_violations(exact, bound.lower, LOG_ALPHA).sum() > 0
    assert sh.bound_violations(bound.upper, exact, LOG_ALPHA).sum() == 0  # the upper bound holds


def test_containment_where_the_paper_is_right():
    rows = stab.containment_rows(sigma=SIGMA, E=10, N=6_000, batch=64, groups=(1, 2), alpha=LOG_ALPHA)
    by = {(r["table"], r["row"], r["g"]): r for r in rows}
    for key in [(1, 3, 1), (1, 4, 1), (1, 4, 2), (1, 5, 1), (1, 5, 2), (1, 6, 1), (1, 6, 2), (2, 3, 1), (2, 3, 2)]:
        assert by[key]["lower_violations"] == 0 and by[key]["upper_violations"] == 0, key
    assert by[(1, 2, 1)]["lower_violations"] > 0  # App. E.2 Hoeffding step
    assert all(r["upper_violations"] == 0 for r in rows)


@pytest.mark.parametrize("row", [1, 2, 4, 6])
def test_bound_curves_are_tradeoff_functions(row):
    kw = {"sigma": SIGMA, "E": 10, "N": 60_000, "form": "lemma"}
    kw.update({1: {"s": 64, "g": 2}, 2: {}, 4: {"s": 1, "m": 64, "g": 1}, 6: {"s": 64, "g": 2}}[row])
    b = sh.tradeoff_bounds(1, row, **kw)
    a = np.linspace(0, 1, 801)
    for f in (b.lower, b.upper):
        assert all(fdp.check_tradeoff(f, grid=a, tol=1e-7).values()), (row, f)


# --------------------------------------------------------------------------- A_0, groups, h(σ)
def test_a0_golden():
    for batch, clt, pld in [(64, 0.745, 0.625), (256, 1.598, 1.343), (1024, 3.483, 2.930)]:
        assert sh.a0_epsilon(sigma=SIGMA, N=60_000, batch=batch, E=E100, delta=1e-5) == pytest.approx(clt, abs=1e-3)
        ours = sh.a0_epsilon(sigma=SIGMA, N=60_000, batch=batch, E=E100, delta=1e-5, method="pld-poisson")
        assert ours == pytest.approx(pld, abs=5e-3)
    assert sh.a0_tradeoff(sigma=SIGMA, N=60_000, batch=256, E=E100, method="clt-poisson").mu == pytest.approx(
        0.3481, abs=1e-4
    )


def test_a0_pld_curve_is_a_tradeoff_function():
    f = sh.a0_tradeoff(sigma=SIGMA, N=60_000, batch=1024, E=10, method="pld-poisson")
    a = np.linspace(0, 1, 401)
    assert all(fdp.check_tradeoff(f, grid=a, tol=1e-7).values())
    assert np.all(np.asarray(f(a)) <= 1 - a + 1e-12)


def test_group_crossover_and_h_series():
    assert [round(sh.group_crossover(60_000, m, SIGMA), 1) for m in (64, 256, 1024)] == [595.1, 148.8, 37.2]
    for sigma, paper in [(0.5, 1.41608), (1, 0.86641), (2, 0.46780), (4, 0.24208), (8, 0.12304)]:
        assert sh.clt_h_series(sigma) == pytest.approx(paper, abs=1e-5)
        assert fdp.clt_factor(sigma) > 1 / sigma > sh.clt_h_series(sigma)  # "slightly smaller than 1/σ" is false
    rows = stab.group_rows(sigma=SIGMA, E=E100, N=60_000, batch=256, groups=(1, 2, 10))
    assert [round(r["mu_A0_group_clt"], 3) for r in rows] == [0.410, 0.820, 4.099]
    assert [round(r["mu_A1_BC_SH_sqrt_gE"], 3) for r in rows] == [5.0, 7.071, 15.811]


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: sh.tradeoff_bounds(3, 1, sigma=2, E=1), "table"),
        (lambda: sh.tradeoff_bounds(1, 7, sigma=2, E=1), "row"),
        (lambda: sh.tradeoff_bounds(1, 3, sigma=0, E=1), "sigma"),
        (lambda: sh.tradeoff_bounds(1, 3, sigma=2, E=0), "E"),
        (lambda: sh.tradeoff_bounds(1, 3, sigma=2, E=1, g=2), "g"),
        (lambda: sh.tradeoff_bounds(1, 1, sigma=2, E=1, form="lemma"), "N"),
        (lambda: sh.tradeoff_bounds(1, 6, sigma=2, E=1, g=5, s=2, N=100, form="lemma"), "g <= s"),
        (lambda: sh.tradeoff_bounds(1, 3, sigma=2, E=1, form="exact"), "form"),
        (lambda: sh.mixture_tradeoff("poisson", sigma=2, E=1, N=100), "sampling"),
        (lambda: sh.mixture_tradeoff("fixed", sigma=2, E=1, N=100, m=200), "batch"),
        (lambda: sh.mixture_tradeoff("shuffle", sigma=2, E=1, N=1000, m=4, g=3), "g <= 2"),
        (lambda: sh.subsampling_round_pmf(0, 1, 1, 1), "N"),
        (lambda: sh.shuffle_collision_pmf(100, 10, 2, method="bose"), "method"),
        (lambda: sh.a0_epsilon(sigma=2, N=100, batch=10, E=1, delta=2.0), "delta"),
        (lambda: sh.lower_bound_function(1.0, 1.5), "l"),
        (lambda: sh.upper_bound_function(1.0, 1.0), "u"),
    ],
)
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
