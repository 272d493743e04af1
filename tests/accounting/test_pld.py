"""The PLD accountant (dpcore.accounting.pld): golden values, pessimism, monotonicity, calibration, bad input."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from dp_accounting import dp_event, pld, rdp
from dp_accounting.pld import privacy_loss_distribution as dp_pld
from dp_accounting.pld import privacy_loss_mechanism as dp_plm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import special

from dpcore.accounting import pld as P
from dpcore.accounting.pld import pld_delta, pld_epsilon, pld_noise_multiplier

MNIST_Q = 256 / 60000  # Opacus / TF Privacy MNIST example: batch 256 of 60000, σ = 1.1, 60 epochs
MNIST_STEPS = 14062

# ε (δ = 1e-5 and 1e-3) and δ (ε = 1) of dp_accounting 0.6.0's PLDAccountant() (default grid 1e-4,
# pessimistic) composing SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T).
GOLDEN = [
    # (q, σ, T, ε at δ=1e-5, ε at δ=1e-3, δ at ε=1)
    (MNIST_Q, 1.1, MNIST_STEPS, 2.3816860032302603, 1.6195444807939172, 0.01552988424244149),
    (0.01, 4.0, 10000, 0.9469993059852784, 0.6050973812723561, 4.253214139482548e-06),  # Abadi et al. 2016
    (1.0, 1.0, 1, 4.3771781000249295, 3.138670552625377, 0.12693673750666357),
    (0.1, 2.0, 1000, 8.279293379674034, 6.123647883394249, 0.3829931854082376),
    (0.004, 1.0, 30000, 3.9954313215850203, 2.8211072275991813, 0.09538908945309242),
]
FLOAT_NOISE = 1e-9  # relative; the round-off allowance keeps ours above dp_accounting by more than this


def _reference(q: float, sigma: float, steps: int) -> pld.PLDAccountant:
    event = dp_event.GaussianDpEvent(sigma)
    if q < 1:
        event = dp_event.PoissonSampledDpEvent(q, event)
    accountant = pld.PLDAccountant()
    accountant.compose(dp_event.SelfComposedDpEvent(event, steps))
    return accountant


def _gaussian_delta(mu: float, eps: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism with μ = sensitivity/σ (Balle & Wang 2018, Thm 8)."""
    return float(special.ndtr(-eps / mu + mu / 2) - math.exp(eps) * special.ndtr(-eps / mu - mu / 2))


# --------------------------------------------------------------------------- golden values


@pytest.mark.parametrize(("q", "sigma", "steps", "eps5", "eps3", "delta1"), GOLDEN)
def test_golden_epsilon_matches_dp_accounting_from_above(q, sigma, steps, eps5, eps3, delta1):
    for delta, ref in ((1e-5, eps5), (1e-3, eps3)):
        ours = pld_epsilon(sigma, sample_rate=q, steps=steps, delta=delta)
        assert ours >= ref * (1 - FLOAT_NOISE)
        assert ours <= ref * (1 + 1e-3)
    ours_delta = pld_delta(sigma, sample_rate=q, steps=steps, epsilon=1.0)
    assert ours_delta >= delta1 * (1 - FLOAT_NOISE)
    assert ours_delta <= delta1 * (1 + 1e-3) + 1e-12


def test_dp_accounting_own_test_value_from_above():
    # dp_accounting's test: q = 0.2, σ = 0.5, 3 steps has δ(1) = 0.15594; at large δ the sums' round-off matters
    ref = _reference(0.2, 0.5, 3).get_epsilon(0.15594)
    ours = pld_epsilon(0.5, sample_rate=0.2, steps=3, delta=0.15594)
    assert ref <= ours <= ref * (1 + 1e-6)


def test_legacy_settings_are_below_their_rdp_values():
    # The PLD is tighter than the RDP numbers the legacy tools printed (TF Privacy/Opacus: 2.92 and 1.26).
    assert pld_epsilon(1.1, sample_rate=MNIST_Q, steps=MNIST_STEPS, delta=1e-5) < 2.92
    assert pld_epsilon(4.0, sample_rate=0.01, steps=10000, delta=1e-5) < 1.26


@pytest.mark.parametrize(("sigma", "steps"), [(1.0, 1), (2.0, 50), (0.8, 3)])
def test_no_subsampling_is_an_upper_bound_on_the_exact_gaussian(sigma, steps):
    mu = math.sqrt(steps) / sigma
    for delta in (1e-3, 1e-6):
        ours = pld_epsilon(sigma, sample_rate=1.0, steps=steps, delta=delta)
        assert _gaussian_delta(mu, ours) <= delta  # ours is at least the exact ε
        exact = _solve(lambda e, mu=mu, d=delta: _gaussian_delta(mu, e) - d, 0.0, 100.0)
        assert ours <= exact * (1 + 1e-3)


def _solve(f, lo: float, hi: float) -> float:
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return hi


# --------------------------------------------------------------------------- the stages vs dp_accounting


@pytest.mark.parametrize("remove", [True, False])
def test_one_step_pmf_and_composition_match_dp_accounting(remove):
    sigma, q, steps = 1.1, MNIST_Q, 300
    adjacency = dp_plm.AdjacencyType.REMOVE if remove else dp_plm.AdjacencyType.ADD
    loss = dp_plm.GaussianPrivacyLoss(sigma, sampling_prob=q, adjacency_type=adjacency)
    eps = np.linspace(-0.3, 1.5, 41)
    np.testing.assert_allclose(P._one_step_delta(sigma, q, eps, remove), loss.get_delta_for_epsilon(eps), atol=1e-15)
    ref = dp_pld.from_gaussian_mechanism(sigma, sampling_prob=q)
    ref_pmf = ref._pmf_remove if remove else ref._pmf_add  # dp_accounting 0.6 internals, pinned
    ours = P._one_step_pmf(sigma, q, P.GRID, remove)
    assert ours.lower == ref_pmf._lower_loss
    np.testing.assert_allclose(ours.probs, ref_pmf._probs, atol=1e-10)
    composed = P._self_compose(ours, steps, P._chernoff_window(ours.probs, steps, P.TAIL_MASS_TRUNCATION))
    ref_composed = ref_pmf.self_compose(steps)
    assert composed.lower == ref_composed._lower_loss
    np.testing.assert_allclose(composed.probs, ref_composed._probs, atol=1e-13)
    assert composed.inf_mass == pytest.approx(ref_composed._infinity_mass, rel=1e-9)


# --------------------------------------------------------------------------- properties

_cheap = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_cheap
@given(
    q=st.floats(0.01, 1.0),
    sigma=st.floats(1.0, 4.0),
    steps=st.integers(1, 60),
    log10_delta=st.integers(-8, -2),
)
def test_never_below_dp_accounting(q, sigma, steps, log10_delta):
    delta = 10.0**log10_delta
    ref = _reference(q, sigma, steps).get_epsilon(delta)
    ours = pld_epsilon(sigma, sample_rate=q, steps=steps, delta=delta)
    assert ours >= ref * (1 - FLOAT_NOISE) - 1e-12
    assert ours <= ref * (1 + 1e-3) + 1e-9


def test_monotone_in_sigma_steps_and_rate():
    kw = dict(delta=1e-5)
    sigmas = [pld_epsilon(s, sample_rate=0.02, steps=500, **kw) for s in (0.8, 1.0, 1.3, 2.0)]
    assert sigmas == sorted(sigmas, reverse=True) and sigmas[-1] < sigmas[0]
    steps = [pld_epsilon(1.0, sample_rate=0.02, steps=t, **kw) for t in (1, 10, 100, 1000)]
    assert steps == sorted(steps) and steps[0] < steps[-1]
    rates = [pld_epsilon(1.0, sample_rate=q, steps=200, **kw) for q in (0.001, 0.01, 0.1, 1.0)]
    assert rates == sorted(rates) and rates[0] < rates[-1]


def test_zero_steps_is_zero_and_delta_is_consistent():
    assert pld_epsilon(1.0, sample_rate=0.1, steps=0, delta=1e-5) == 0.0
    assert pld_delta(1.0, sample_rate=0.1, steps=0, epsilon=0.5) == 0.0
    eps = pld_epsilon(1.1, sample_rate=MNIST_Q, steps=2000, delta=1e-6)
    assert pld_delta(1.1, sample_rate=MNIST_Q, steps=2000, epsilon=eps) <= 1e-6
    assert pld_delta(1.1, sample_rate=MNIST_Q, steps=2000, epsilon=eps * 0.99) > 1e-6


# --------------------------------------------------------------------------- calibration


@pytest.mark.parametrize(
    ("target", "q", "steps", "delta"),
    [
        (2.3816860032302603, MNIST_Q, MNIST_STEPS, 1e-5),
        (1.0, 0.004, 30000, 1e-5),
        (8.0, 0.01, 10000, 1e-5),
        (1.0, 1.0, 1, 1e-5),
        (0.5, 0.5, 100, 1e-7),
    ],
)
def test_calibration_never_overshoots_and_is_tight(target, q, steps, delta):
    sigma = pld_noise_multiplier(target, sample_rate=q, steps=steps, delta=delta)
    assert pld_epsilon(sigma, sample_rate=q, steps=steps, delta=delta) <= target
    assert pld_epsilon(sigma * (1 - 1.5e-3), sample_rate=q, steps=steps, delta=delta) > target


def test_calibration_recovers_the_mnist_sigma():
    sigma = pld_noise_multiplier(2.3816860032302603, sample_rate=MNIST_Q, steps=MNIST_STEPS, delta=1e-5)
    assert 1.1 * (1 - 1e-3) <= sigma <= 1.1 * (1 + 1e-3)


@_cheap
@given(target=st.floats(0.3, 20.0), q=st.floats(0.001, 1.0), steps=st.integers(1, 300))
def test_calibration_never_overshoots_property(target, q, steps):
    sigma = pld_noise_multiplier(target, sample_rate=q, steps=steps, delta=1e-5)
    assert pld_epsilon(sigma, sample_rate=q, steps=steps, delta=1e-5) <= target


def test_calibration_unreachable_target_raises():
    with pytest.raises(ValueError, match="target_epsilon"):
        pld_noise_multiplier(1e-7, sample_rate=1.0, steps=10**6, delta=1e-5)
    with pytest.raises(ValueError, match="met by every noise_multiplier"):
        pld_noise_multiplier(1e9, sample_rate=0.5, steps=10, delta=1e-5)


# --------------------------------------------------------------------------- the two fixed bugs


def test_tiny_noise_returns_an_upper_bound_in_time():
    # Old dpsgd_epsilon(0.01, 0.01, 100, 1e-5, method="pld") hung (killed after 500 s).
    start = time.process_time()
    eps = pld_epsilon(0.01, sample_rate=0.01, steps=100, delta=1e-5)
    assert time.process_time() - start < 10
    # P(sampled >= 7 times in 100 steps) > 1e-5 and each sampled step leaks ≈ 1/(2σ²) - 3/σ = 4700 nats.
    assert 6 * 4700 < eps < _rdp_epsilon(0.01, 0.01, 100, 1e-5)


def _rdp_epsilon(q: float, sigma: float, steps: int, delta: float) -> float:
    accountant = rdp.RdpAccountant()
    accountant.compose(
        dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    )
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("args", [(0.02, 0.5, 10000), (0.01, 1.0, 1), (0.3, 1.0, 100000)])
def test_small_noise_settings_finish_in_time(args):
    sigma, q, steps = args
    start = time.process_time()
    eps = pld_epsilon(sigma, sample_rate=q, steps=steps, delta=1e-5)
    assert time.process_time() - start < 10
    assert math.isfinite(eps) and eps > 100


def test_tiny_delta_is_refused_not_infinite():
    # Old PLD gave ε = ∞ for δ <= 1e-15, and calibration then returned σ = 831 for ε = 5.
    with pytest.raises(ValueError, match=r"delta must be in \[.*RDP"):
        pld_epsilon(1.1, sample_rate=MNIST_Q, steps=MNIST_STEPS, delta=1e-15)
    with pytest.raises(ValueError, match="delta must be in"):
        pld_noise_multiplier(5.0, sample_rate=MNIST_Q, steps=MNIST_STEPS, delta=1e-15)
    low = P.min_delta(100)
    assert math.isfinite(pld_epsilon(1.0, sample_rate=0.01, steps=100, delta=low))


# --------------------------------------------------------------------------- bad input

GOOD = dict(sample_rate=0.01, steps=100, delta=1e-5)
BAD_REALS = [math.nan, math.inf, -math.inf, True, "1.0", None, 0.0, -1.0]


@pytest.mark.parametrize("value", BAD_REALS)
def test_bad_noise_multiplier(value):
    with pytest.raises(ValueError, match="noise_multiplier"):
        pld_epsilon(value, **GOOD)


@pytest.mark.parametrize("value", BAD_REALS + [1.5])
def test_bad_sample_rate(value):
    with pytest.raises(ValueError, match="sample_rate"):
        pld_epsilon(1.0, **{**GOOD, "sample_rate": value})


@pytest.mark.parametrize("value", [2.5, -1, True, "100", math.nan, None])
def test_bad_steps(value):
    with pytest.raises(ValueError, match="steps"):
        pld_epsilon(1.0, **{**GOOD, "steps": value})


@pytest.mark.parametrize("value", BAD_REALS + [1.0, 2.0])
def test_bad_delta(value):
    with pytest.raises(ValueError, match="delta"):
        pld_epsilon(1.0, **{**GOOD, "delta": value})


@pytest.mark.parametrize("value", [math.nan, math.inf, -0.5, False, "1"])
def test_bad_epsilon_for_delta(value):
    with pytest.raises(ValueError, match="epsilon"):
        pld_delta(1.0, sample_rate=0.01, steps=100, epsilon=value)


@pytest.mark.parametrize("value", BAD_REALS)
def test_bad_target_epsilon(value):
    with pytest.raises(ValueError, match="target_epsilon"):
        pld_noise_multiplier(value, **GOOD)


def test_calibration_needs_steps():
    with pytest.raises(ValueError, match="steps"):
        pld_noise_multiplier(1.0, sample_rate=0.01, steps=0, delta=1e-5)


def test_sampling_choices():
    with pytest.raises(ValueError, match="SampledWithoutReplacementDpEvent"):
        pld_epsilon(1.0, **GOOD, sampling="fixed")
    with pytest.raises(ValueError, match="shuffle"):
        pld_epsilon(1.0, **GOOD, sampling="shuffle")
    with pytest.raises(ValueError, match="sampling must be .poisson."):
        pld_epsilon(1.0, **GOOD, sampling="uniform")
    with pytest.raises(ValueError, match="sampling"):
        pld_noise_multiplier(1.0, **GOOD, sampling="fixed")


def test_arguments_after_the_first_are_keyword_only():
    with pytest.raises(TypeError):
        pld_epsilon(1.0, 0.01, 100, 1e-5)  # type: ignore[misc]


@pytest.mark.parametrize(("sigma", "q", "steps", "delta"), [
    (1.1, MNIST_Q, 2000, 1e-6), (0.8, 0.01, 500, 1e-5), (2.0, 0.1, 50, 1e-8), (1.0, 1.0, 10, 1e-5),
    (5.0, 0.004, 10_000, 1e-10), (0.6, 0.02, 300, 1e-3),
])  # fmt: skip
def test_round_trip_delta_of_the_reported_epsilon_never_exceeds_delta(sigma, q, steps, delta):
    """pld_epsilon's ε meets the module's own δ bound at every setting, whatever the processor's SIMD paths make of
    the last bits of the two sums (on an AVX-512 machine the first setting's δ came out 3e-13 relative above)."""
    eps = pld_epsilon(sigma, sample_rate=q, steps=steps, delta=delta)
    assert math.isfinite(eps) and eps > 0
    assert pld_delta(sigma, sample_rate=q, steps=steps, epsilon=eps) <= delta


def test_cached_one_step_pld_and_window_moments_change_no_value():
    """A curve (ε at several step counts) reuses the one-step PMF and its Chernoff moments: same numbers as fresh."""
    q, sigma = 256 / 60_000, 1.1
    counts = (878, 3510, 14040)
    warm = [P.pld_epsilon(sigma, sample_rate=q, steps=t, delta=1e-5) for t in counts]
    P.cache_clear()
    fresh = []
    for t in counts:
        P.cache_clear()
        fresh.append(P.pld_epsilon(sigma, sample_rate=q, steps=t, delta=1e-5))
    assert warm == fresh
    pmf = P._one_step_pmf(sigma, q, P.GRID, True)
    assert not pmf.probs.flags.writeable  # shared by every composition: read-only
    moments = P._window_moments(pmf.probs)
    for t in counts:
        assert P._chernoff_window(pmf.probs, t, P.TAIL_MASS_TRUNCATION, moments) == P._chernoff_window(
            pmf.probs, t, P.TAIL_MASS_TRUNCATION
        )
