"""E_γ contraction accounting (paper 004): Lemma 1, Theorem 1/2, Corollaries, baselines, stability."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from dpcore.papers.p004_contraction import baselines as B
from dpcore.papers.p004_contraction import contraction as C

FIG2 = dict(n=100, eta=0.5, sigma=1.5)  # L = 1, ρ = 1 (defaults)
EPS = np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0])
# paper 004 Theorem 2, closed form with exponent n/m
FIG2_TABLE = {
    10: [1.6695e-01, 8.0544e-02, 3.0798e-02, 2.0211e-03, 4.0631e-05, 2.3027e-07, 1.4001e-13],
    20: [1.1850e-01, 3.7674e-02, 7.3409e-03, 5.0375e-05, 2.8244e-08, 1.1303e-12, 5.2244e-25],
    30: [9.6876e-02, 2.1722e-02, 2.2805e-03, 1.7561e-06, 2.8451e-11, 8.1907e-18, 2.9271e-36],
}
EPS_AT_DELTA = {
    10: [0.7321, 1.1029, 1.3977, 1.6485, 1.8701],
    20: [0.4584, 0.7299, 0.9434, 1.1241, 1.2831],
    30: [0.3468, 0.5736, 0.7505, 0.8997, 1.0307],
}


# ----------------------------------------------------------------------------------------------
# Lemma 1
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("eps", "r"), [(0.0, 0.3), (0.5, 0.42), (1.0, 1.0), (2.0, 3.0), (0.1, 8.0), (3.0, 0.9)])
def test_theta_by_brute_force_integration(eps, r):
    def integrand(x):
        return max(stats.norm.pdf(x - r) - math.exp(eps) * stats.norm.pdf(x), 0.0)

    crossing = eps / r + r / 2  # the positive part starts here
    value, _ = integrate.quad(integrand, crossing, crossing + 40, epsabs=1e-15, epsrel=1e-12, limit=200)
    assert C.theta(eps, r) == pytest.approx(value, rel=1e-7, abs=1e-15)


def test_theta_at_zero_is_total_variation_and_limits():
    r = np.array([0.01, 0.5, 2.0, 10.0])
    assert C.theta(0.0, r) == pytest.approx(2 * stats.norm.cdf(r / 2) - 1, rel=1e-12)
    assert C.theta(1.0, 0.0) == 0.0
    assert C.theta(1.0, math.inf) == 1.0
    assert C.log_theta(0.5, 0.0) == -math.inf


def test_theta_matches_dp_accounting_gaussian_pld():
    """Note 004 §3.2: exact Gaussian PLD (REPLACE_ONE, q = 1) at m = 10, σ = 1.5 gives 0.002021508003908."""
    a = C.sensitivity_ratio(batch_size=10, sigma=1.5)
    assert C.theta(1.0, a) == pytest.approx(0.002021508003908, rel=1e-9)
    assert B.parallel_delta(1.0, batch_size=10, sigma=1.5) == pytest.approx(0.002021508003908, rel=1e-9)
    assert B.gaussian_pld_delta(1.0, batch_size=10, sigma=1.5) == pytest.approx(C.theta(1.0, a), rel=1e-9)


@pytest.mark.parametrize(("eps", "r"), [(20.0, 0.5), (250.0, 2.0), (40.0, 0.1), (1e4, 30.0), (0.05, 1e-3)])
def test_log_theta_in_the_far_tail_against_mpmath(eps, r):
    mpmath.mp.dps = 60
    e, x = mpmath.mpf(eps), mpmath.mpf(r)

    def q(t):
        return mpmath.erfc(t / mpmath.sqrt(2)) / 2

    exact = mpmath.log(q(e / x - x / 2) - mpmath.exp(e) * q(e / x + x / 2))
    assert C.log_theta(eps, r) == pytest.approx(float(exact), rel=1e-9)


def test_delta_near_1e300_has_no_spurious_underflow():
    kw = dict(n=100, batch_size=10, eta=0.5, sigma=1.5)
    eps = C.epsilon_for_delta(lambda e: C.last_iterate_delta(e, **kw), 1e-300)
    assert 0 < eps < 100
    value = C.last_iterate_delta(eps, **kw)
    assert value == pytest.approx(1e-300, rel=1e-6)
    logs = C.log_last_iterate_delta(np.array([eps, 2 * eps, 10 * eps]), **kw)
    assert np.all(np.isfinite(logs)) and np.all(np.diff(logs) < 0) and logs[-1] < -3000


@given(eps=st.floats(0, 10), r=st.floats(1e-3, 50), dr=st.floats(1e-3, 5), de=st.floats(1e-3, 5))
def test_theta_is_increasing_in_r_and_decreasing_in_eps(eps, r, dr, de):
    base = C.log_theta(eps, r)
    assert C.log_theta(eps, r + dr) >= base
    assert C.log_theta(eps + de, r) <= base
    assert 0.0 <= C.theta(eps, r) <= 1.0


# ----------------------------------------------------------------------------------------------
# Theorem 1 and Lemma 2
# ----------------------------------------------------------------------------------------------
def test_theorem1_on_a_random_kernel():
    rng = np.random.default_rng(1)
    kernel = rng.dirichlet(np.ones(5), size=5)
    eps = 0.5
    eta = C.kernel_contraction(kernel, eps)
    assert 0.0 <= eta <= 1.0
    best = 0.0
    for _ in range(4000):
        mu, nu = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        before = C.hockey_stick(mu, nu, eps)
        if before > 1e-9:
            best = max(best, C.hockey_stick(mu @ kernel, nu @ kernel, eps) / before)
    assert best <= eta + 1e-12
    # the appendix construction attains the two-point value as δ → 1
    pairs = [(i, j) for i in range(5) for j in range(5)]
    y1, y2 = max(pairs, key=lambda ij: C.hockey_stick(kernel[ij[0]], kernel[ij[1]], eps))
    y0 = next(k for k in range(5) if k not in (y1, y2))
    d = 0.999
    mu = np.zeros(5)
    nu = np.zeros(5)
    mu[y0], mu[y1] = 1 - d, d
    nu[y0], nu[y2] = (1 - d) * math.exp(-eps), 1 - (1 - d) * math.exp(-eps)
    ratio = C.hockey_stick(mu @ kernel, nu @ kernel, eps) / C.hockey_stick(mu, nu, eps)
    assert ratio == pytest.approx(eta, rel=2e-3) and ratio <= eta + 1e-12


def test_dobrushin_at_eps_zero():
    kernel = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.25, 0.25, 0.5]])
    tv = max(0.5 * np.abs(kernel[i] - kernel[j]).sum() for i in range(3) for j in range(3))
    assert C.kernel_contraction(kernel, 0.0) == pytest.approx(tv)


@given(eps=st.floats(0, 5), diameter=st.floats(1e-3, 100), noise=st.floats(0.05, 10))
def test_gaussian_kernel_contraction_is_a_coefficient(eps, diameter, noise):
    value = C.gaussian_kernel_contraction(eps, diameter=diameter, noise_std=noise)
    assert 0.0 <= value <= 1.0
    assert value == pytest.approx(C.theta(eps, diameter / noise), rel=1e-12)
    assert C.gaussian_kernel_contraction(eps, diameter=math.inf, noise_std=noise) == 1.0


# ----------------------------------------------------------------------------------------------
# Theorem 2: Fig. 2 and its variants
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("m", [10, 20, 30])
def test_fig2_regression_table(m):
    ours = C.last_iterate_delta(EPS, batch_size=m, **FIG2)
    assert ours == pytest.approx(FIG2_TABLE[m], rel=1e-4)


@pytest.mark.parametrize("m", [10, 20, 30])
def test_fig2_epsilon_at_delta(m):
    ours = [
        C.epsilon_for_delta(lambda e: C.last_iterate_delta(e, batch_size=m, **FIG2), d)
        for d in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
    ]
    assert ours == pytest.approx(EPS_AT_DELTA[m], abs=1.5e-4)


def test_fig2_ordering_and_proof_typo_reverses_it():
    grid = np.linspace(0, 3, 31)
    d = [C.last_iterate_delta(grid, batch_size=m, **FIG2) for m in (10, 20, 30)]
    assert np.all(d[2] < d[1]) and np.all(d[1] < d[0])
    typo = [C.last_iterate_delta(0.0, batch_size=m, mode="proof-typo", **FIG2) for m in (10, 20, 30)]
    assert typo[0] < typo[1] < typo[2]
    # paper 004 Theorem 2 proof (typo check): θ_0(2L√m/σ) = 0.96499 / 0.99713 / 0.99974 bounds the typo δ(0)
    assert [C.theta(0.0, 2 * math.sqrt(m) / 1.5) for m in (10, 20, 30)] == pytest.approx(
        [0.96499, 0.99713, 0.99974], abs=1e-5
    )


def test_contraction_factor_is_one_at_fig2():
    """Note 004 §3.12: 1 − θ_0(b) = 2.483e-05 at q = 0.1, so F = δ/θ(a) = 0.99988829."""
    b = C.contraction_ratio(batch_size=10, eta=0.5, sigma=1.5)
    assert b == pytest.approx(8.4327, abs=1e-4)
    assert 1 - C.theta(0.0, b) == pytest.approx(2.483e-05, rel=1e-3)
    factor = C.last_iterate_delta(0.0, batch_size=10, **FIG2) / C.worst_position_delta(0.0, batch_size=10, sigma=1.5)
    assert factor == pytest.approx(0.99988829, abs=1e-8)


def test_closed_form_equals_sum_form_for_integer_rounds():
    for m, radius in ((10, 1.0), (20, 0.1), (5, 0.3)):
        closed = C.last_iterate_delta(EPS, batch_size=m, radius=radius, **FIG2)
        summed = C.last_iterate_delta_schedule(EPS, batch_sizes=[m] * (100 // m), etas=0.5, sigmas=1.5, radius=radius)
        assert closed == pytest.approx(summed, rel=1e-10)


def test_ragged_batches_for_q03():
    for batches, expected in (
        ([30, 30, 30, 10], [1.0388e-01, 2.0373e-04, 2.3034e-08]),
        ([34, 33, 33], [9.1925e-02, 6.0080e-07, 1.8682e-19]),
    ):
        ours = C.last_iterate_delta_schedule([0.0, 1.0, 2.0], batch_sizes=batches, etas=0.5, sigmas=1.5)
        assert ours == pytest.approx(expected, rel=2e-4)
    first = C.last_iterate_delta_schedule([1.0], batch_sizes=[10, 30, 30, 30], etas=0.5, sigmas=1.5)
    assert first == pytest.approx(2.0373e-04, rel=2e-4)


def test_delta_scaling_with_rounds():
    """Note 004 §3.10: δ(1) against T with m = 10, for ρ = 1 and ρ = 0.1."""
    rho1 = [2.0215e-03, 2.0211e-03, 2.0174e-03, 1.9810e-03, 1.6609e-03, 4.8853e-04, 4.9704e-05]
    rho01 = [2.0215e-03, 2.1870e-04, 2.1870e-05, 2.1870e-06]
    rounds = [1, 10, 100, 1000, 10**4, 10**5, 10**6]
    ours = [C.last_iterate_delta(1.0, n=10 * t, batch_size=10, eta=0.5, sigma=1.5) for t in rounds]
    assert ours == pytest.approx(rho1, rel=2e-4)
    ours = [C.last_iterate_delta(1.0, n=10 * t, batch_size=10, eta=0.5, sigma=1.5, radius=0.1) for t in rounds[:4]]
    assert ours == pytest.approx(rho01, rel=2e-4)
    m_sweep = [8.8195e-03, 2.2344e-02, 1.7594e-02, 2.0211e-03, 5.0375e-05, 9.1726e-06, 3.1170e-09, 9.0269e-16]
    ours = [C.last_iterate_delta(1.0, batch_size=m, **FIG2) for m in (1, 2, 5, 10, 20, 25, 50, 100)]
    assert ours == pytest.approx(m_sweep, rel=2e-4)


@given(
    eps=st.floats(0, 4),
    m=st.sampled_from([1, 5, 10, 25]),
    sigma=st.floats(0.2, 5),
    radius=st.floats(0.01, 5),
    convex=st.booleans(),
)
def test_delta_properties(eps, m, sigma, radius, convex):
    kw = dict(n=100, batch_size=m, eta=0.5, radius=radius, convex=convex)
    log_d = C.log_last_iterate_delta(eps, sigma=sigma, **kw)
    assert C.log_last_iterate_delta(eps + 0.1, sigma=sigma, **kw) <= log_d + 1e-12
    assert C.log_last_iterate_delta(eps, sigma=sigma * 1.1, **kw) <= log_d + 1e-12
    # δ ≤ θ_ε(a), the paper's "straightforward upper bound"
    assert math.exp(log_d) <= C.worst_position_delta(eps, batch_size=m, sigma=sigma) * (1 + 1e-12)
    assert 0.0 <= C.theta(eps, C.contraction_ratio(batch_size=m, eta=0.5, sigma=sigma, radius=radius)) <= 1.0


def test_nonconvex_diameter_is_looser():
    convex = C.last_iterate_delta(EPS, batch_size=10, radius=0.1, **FIG2)
    loose = C.last_iterate_delta(EPS, batch_size=10, radius=0.1, convex=False, **FIG2)
    assert np.all(loose >= convex)
    assert C.contraction_ratio(batch_size=10, eta=0.5, sigma=1.5, radius=0.1, convex=False) == pytest.approx(
        2 * (0.1 + 0.5) * math.sqrt(10) / 0.75
    )


def test_varying_schedule_reduces_to_constant():
    etas = np.full(10, 0.5)
    sigmas = np.full(10, 1.5)
    assert C.last_iterate_delta_schedule(1.0, batch_sizes=[10] * 10, etas=etas, sigmas=sigmas) == pytest.approx(
        C.last_iterate_delta(1.0, batch_size=10, **FIG2), rel=1e-12
    )
    # more noise in one round can only help
    sigmas[3] = 3.0
    assert C.last_iterate_delta_schedule(1.0, batch_sizes=[10] * 10, etas=etas, sigmas=sigmas) < C.last_iterate_delta(
        1.0, batch_size=10, **FIG2
    )


def test_corollary1_corrected_printed_and_bound():
    kw = dict(n=100, batch_size=10, strong_convexity=0.05, sigma=1.5, radius=0.05)
    corrected = C.corollary1_delta(EPS, **kw)
    bound = C.corollary1_delta(EPS, mode="bound", **kw)
    printed = C.corollary1_delta(EPS, mode="printed", **kw)
    assert np.all(corrected <= bound * (1 + 1e-12))
    assert not np.allclose(corrected, printed)
    etas = 1 / (0.05 * np.arange(1, 11))
    schedule = C.last_iterate_delta_schedule(EPS, batch_sizes=[10] * 10, etas=etas, sigmas=1.5, radius=0.05)
    assert corrected == pytest.approx(schedule, rel=1e-12)


def test_corollary3_numbers_and_forms():
    """Note 004 §3.9: δ(0) = 9.183e-02, δ(1) = 1.112e-03 at the Fig. 2 parameters, q = 0.1."""
    general = C.random_stop_delta([0.0, 1.0], batch_sizes=[10] * 10, etas=0.5, sigmas=1.5)
    closed = C.corollary3_delta([0.0, 1.0], n=100, batch_size=10, eta_min=0.5, sigma_min=1.5)
    assert general == pytest.approx([9.183e-02, 1.112e-03], rel=5e-4)
    assert closed == pytest.approx(general, rel=1e-10)
    assert np.all(general < C.last_iterate_delta(np.array([0.0, 1.0]), batch_size=10, **FIG2))


def test_exact_1d_instance_sits_below_the_bound():
    eps = np.array([0.0, 0.25, 0.5, 1.0])
    exact = C.exact_1d_delta(eps, batch_size=10, **FIG2)
    assert exact[0] == pytest.approx(5.3059e-02, rel=1e-4)
    assert exact[2] == 0.0 and exact[3] == 0.0
    assert np.all(exact <= C.last_iterate_delta(eps, batch_size=10, **FIG2))
    small = C.exact_1d_delta(eps, batch_size=10, radius=0.1, **FIG2)
    assert np.all(small <= C.last_iterate_delta(eps, batch_size=10, radius=0.1, **FIG2))


# ----------------------------------------------------------------------------------------------
# Baselines: contraction vs composition (paper 004, Sec. III)
# ----------------------------------------------------------------------------------------------
BASELINES = {  # q -> method -> (ε@1e-3, ε@1e-5, δ(0.5), δ(1), δ(2))
    10: {
        "B2": (1.2673, 1.7940, 6.560e-02, 5.872e-03, 1.113e-06),
        "B3b": (0.3318, 0.5162, 1.600e-05, 3.244e-14, 6.552e-43),
        "B3a": (0.1623, 0.2785, 4.547e-11, 2.598e-27, 2.838e-67),
        "B4": (0.9196, 1.5511, 9.355e-03, 6.066e-04, 1.113e-07),
    },
    30: {
        "B2": (0.6670, 0.9834, 6.147e-03, 7.539e-06, 6.438e-17),
        "B3b": (0.3308, 0.5131, 1.474e-05, 1.164e-14, 5.876e-48),
        "B3a": (0.1572, 0.2673, 6.145e-12, 4.100e-32, 4.797e-86),
        "B4": (0.5738, 0.9169, 2.190e-03, 2.513e-06, 2.146e-17),
    },
}


def _baseline(name, m):
    kw = dict(batch_size=m, sigma=1.5)
    if name == "B2":
        return lambda e: B.gaussian_rdp_delta(e, **kw)
    if name == "B4":
        return lambda e: B.pabi_delta(e, n=100, **kw)
    relation = "replace_one" if name == "B3b" else "add_remove"
    orders, values = B.poisson_rdp(n=100, relation=relation, **kw)  # computed once, converted per ε
    assert B.poisson_rdp_delta(1.0, n=100, relation=relation, **kw) == B.rdp_to_delta(orders, values, 1.0)
    return lambda e: B.rdp_to_delta(orders, values, e)


@pytest.mark.parametrize(("m", "name"), [(m, name) for m in BASELINES for name in BASELINES[m]])
def test_baseline_table(m, name):
    fn = _baseline(name, m)
    e3, e5, *deltas = BASELINES[m][name]
    assert C.epsilon_for_delta(fn, 1e-3) == pytest.approx(e3, abs=1.5e-4)
    assert C.epsilon_for_delta(fn, 1e-5) == pytest.approx(e5, abs=1.5e-4)
    assert fn(np.array([0.5, 1.0, 2.0])) == pytest.approx(deltas, rel=2e-3)


def test_contraction_equals_parallel_composition_at_fig2():
    for m in (10, 20, 30):
        thm2 = C.epsilon_for_delta(lambda e, m=m: C.last_iterate_delta(e, batch_size=m, **FIG2), 1e-5)
        b1 = C.epsilon_for_delta(lambda e, m=m: B.parallel_delta(e, batch_size=m, sigma=1.5), 1e-5)
        assert thm2 <= b1 and b1 - thm2 < 2e-4


def test_dp_accounting_cross_checks():
    """Note 004 §7: tight PLD (Poisson, REPLACE_ONE) 0.4683; WOR RDP (REPLACE_ONE) 1.2037 at q = 0.1."""
    assert B.poisson_pld_epsilon(1e-5, n=100, batch_size=10, sigma=1.5) == pytest.approx(0.4683, abs=2e-4)
    assert B.wor_rdp_epsilon(1e-5, n=100, batch_size=10, sigma=1.5) == pytest.approx(1.2037, abs=2e-4)
    # our add/remove Poisson RDP equals dp_accounting's RdpAccountant at integer orders
    a, ours = B.poisson_rdp(n=100, batch_size=10, sigma=1.5, orders=range(2, 65))
    from dpa_reference import dpa_poisson_rdp

    assert ours == pytest.approx(dpa_poisson_rdp(1.5 * math.sqrt(10), 0.1, 10, list(a)), rel=1e-10)


def test_rdp_to_delta_inverts_rdp_to_epsilon():
    from dpcore.accounting import rdp

    orders = np.array(B.BASELINE_ORDERS)
    values = orders * 0.3**2 / 2 * 40
    for conversion in ("balle", "mironov"):
        eps = rdp.rdp_to_epsilon(orders, values, 1e-6, conversion=conversion)
        assert B.rdp_to_delta(orders, values, eps, conversion=conversion) == pytest.approx(1e-6, rel=1e-6)


# ----------------------------------------------------------------------------------------------
# Input validation
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("epsilon", -1.0),
        ("epsilon", math.nan),
        ("n", 0),
        ("batch_size", 0),
        ("batch_size", 1000),
        ("eta", 0.0),
        ("sigma", -1.0),
        ("lipschitz", 0.0),
        ("radius", -1.0),
        ("mode", "paper"),
    ],
)
def test_bad_input_names_the_parameter(name, value):
    kw = dict(epsilon=1.0, n=100, batch_size=10, eta=0.5, sigma=1.5)
    kw[name] = value
    with pytest.raises(ValueError, match=name):
        C.last_iterate_delta(kw.pop("epsilon"), **kw)


def test_more_bad_inputs():
    with pytest.raises(ValueError, match="batch_sizes"):
        C.last_iterate_delta_schedule(1.0, batch_sizes=[10, 2.5], etas=0.5, sigmas=1.5)
    with pytest.raises(ValueError, match="etas"):
        C.last_iterate_delta_schedule(1.0, batch_sizes=[10, 10], etas=[0.5], sigmas=1.5)
    with pytest.raises(ValueError, match="n must be at least"):
        C.last_iterate_delta_schedule(1.0, batch_sizes=[10, 10], etas=0.5, sigmas=1.5, n=15)
    with pytest.raises(ValueError, match="r must be"):
        C.theta(1.0, -0.5)
    with pytest.raises(ValueError, match="kernel"):
        C.kernel_contraction([[0.5, 0.6]], 0.0)
    with pytest.raises(ValueError, match="delta"):
        C.epsilon_for_delta(lambda e: 0.1, 0.0)
    with pytest.raises(ValueError, match="batch_size must divide n"):
        C.exact_1d_delta(0.0, n=100, batch_size=30, eta=0.5, sigma=1.5)
    with pytest.raises(ValueError, match="relation"):
        B.poisson_rdp(n=100, batch_size=10, sigma=1.5, relation="swap")


def test_baseline_helpers_agree_with_the_functions():
    rows = {r["method"]: r for r in B.baseline_table(n=100, batch_size=10, eta=0.5, sigma=1.5)}
    assert rows["B0"]["eps@1e-05"] == pytest.approx(1.6485, abs=1.5e-4)
    assert rows["B1"]["delta(1)"] == pytest.approx(2.0215e-03, rel=1e-4)
    assert rows["B3a"]["valid for Algorithm 1"] is False and rows["B4"]["valid for Algorithm 1"] is True
    curves = B.baseline_deltas(np.array([0.5, 1.0]), n=100, batch_size=10, eta=0.5, sigma=1.5)
    assert set(curves) == set(B.METHODS)
    for key, row in rows.items():
        assert curves[key][1] == pytest.approx(row["delta(1)"], rel=1e-12)
