"""Privacy-loss-distribution (PLD) accounting for DP-SGD: fast, and never optimistic.

One DP-SGD step with sampling rate q and noise multiplier σ is the Poisson-subsampled
Gaussian mechanism; ``steps`` steps are its ``steps``-fold composition under the
add/remove-one neighbouring relation.  Its privacy loss distribution is computed as in
Google's ``dp_accounting`` (the reference this module is tested against, value by value):

1. one step's PLD, for the REMOVE and the ADD direction separately, is discretised on a
   grid of width h = 1e-4 (``dp_accounting``'s default) with the pessimistic
   *connect-the-dots* algorithm (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022,
   "Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions",
   Alg. 1), from the exact hockey-stick divergence δ(ε) of one step on that grid.  The
   noise is truncated where its tails hold e^-50 of mass, and that mass is put on +∞
   (dp_accounting's ``log_mass_truncation_bound=-50``);
2. the T-fold composition is the T-fold self-convolution of that PMF (Koskela, Jälkö,
   Honkela 2020, "Computing tight differential privacy guarantees using FFT";
   Meiser & Mohammadi 2018, "Tight on budget?", privacy buckets), computed with one
   real FFT, the T-th power of its coefficients and one inverse FFT, on a window chosen
   by a Chernoff bound; the mass the window leaves out is at most ``1e-15`` and is put
   on +∞ (dp_accounting's ``tail_mass_truncation``);
3. ε(δ) (and δ(ε)) of the composed PLD is the hockey-stick divergence read off the
   PMF, δ(ε) = Σ_ℓ max(0, 1 − e^{ε−ℓ})·p_ℓ (Koskela et al. 2020), the larger of the two directions.

Every rounding is pessimistic, so the result is an upper bound on the true ε: every probability mass the
discretisation or a truncation leaves out (the noise tails beyond e^-50, the composition's window, negative
FFT bins) is put on the loss +∞ or added, never dropped.  ε(δ) is read in log space (Σ p·e^{-ℓ} is
accumulated as a logarithm), so it stays an upper bound at any ε: dp_accounting's ``get_epsilon_for_delta``
accumulates Σ p·e^{-ℓ} in linear space, which underflows for losses above ~745 nats and then returns the
first loss whose tail mass exceeds δ -- an over-estimate, even for its optimistic PLD (q = 0.5, σ = 0.3,
T = 1000, δ = 1e-8: it reports 2855.09 (optimistic) and 2855.14 (pessimistic), while its own pessimistic PMF
has δ(2854.17) = 9.9975e-9 <= 1e-8, and ours gives 2854.17).  The tests compare with dp_accounting's
optimistic PLD read in log space (a certified lower bound on the true ε) on 200 configurations.

Range: ``noise_multiplier`` in ``NOISE_RANGE`` = [1e-6, 1e100], ``steps`` <= ``MAX_STEPS`` = 1e12, and a
setting whose losses would need a grid wider than ``MAX_GRID`` = 10 nats (ε in the millions, or ~1e10
steps, where a coarse pessimistic grid keeps widening the composition's window) is refused with a
``ValueError`` naming the accountant to use instead (RDP).  The one
error that is not one-sided is floating-point round-off, mostly in the FFT (its noise
floor grows about linearly in T, ~1e-12 in δ at T = 14062); it is covered by charging δ
an allowance (see ``ROUNDOFF_PER_STEP`` and ``ROUNDOFF_RELATIVE``): ε is read at
δ·(1 − 1e-9) − η, δ is reported as δ(ε)·(1 + 1e-9) + η, and δ below 2η is refused with a
``ValueError`` (dp_accounting instead returns ε = ∞ for δ <= 1e-15 and a value dominated
by round-off just above).  For δ >= 1e-8 the allowance
moves ε by less than 1e-3 relative at the usual settings.

This is the computation that ``dp_accounting.pld.PLDAccountant()`` does with its default
discretisation, re-written in vectorised NumPy (dp_accounting evaluates δ(ε) and ε(δ)
in Python loops); the tests check every stage against dp_accounting 0.6.

Speed comes from three things: vectorised one-step δ(ε) and ε(δ); a real FFT and
exponentiation by squaring for the composition; and, for calibration, a coarse
(h = 1e-3, nested, hence also pessimistic) grid to locate σ before a handful of fine
evaluations, with the composed PLD of each σ cached.

Sampling: ``"poisson"`` only (``SAMPLINGS``).  ``"fixed"`` (fixed-size batches drawn without
replacement, replace-one neighbours) is refused: ``dp_accounting``'s PLD has no
dominating pair for it, and Lebeda, Regehr, Kamath, Steinke 2024 ("Avoiding Pitfalls
for Privacy Accounting of Subsampled Mechanisms under Composition") show that the
Poisson PLD can under-estimate its ε; account it with RDP
(``dp_accounting.SampledWithoutReplacementDpEvent`` under ``REPLACE_ONE``).

Very small noise (e.g. σ = 0.01): the grid of width 1e-4 would need more than
``MAX_BINS`` bins, so the grid is widened to a multiple of 1e-4 until it fits (the
coarser grid contains the finer one, and connect-the-dots on fewer points is more
pessimistic, so the result stays an upper bound; it is then looser than
dp_accounting's, which would not finish).  Such settings have ε in the hundreds or
thousands: the number is an honest upper bound, not a useful guarantee.  A setting that needs a grid
wider than ``MAX_GRID`` is refused (see "Range" above).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np
from scipy import fft, special

from dpcore.accounting.calibrate import smallest_sigma
from dpcore.validation import check_finite, check_nonnegative, check_positive, check_positive_int, check_rate

__all__ = [
    "GRID",
    "MIN_DELTA",
    "MAX_BINS",
    "MAX_GRID",
    "MAX_STEPS",
    "NOISE_RANGE",
    "SAMPLINGS",
    "cache_clear",
    "min_delta",
    "roundoff",
    "pld_epsilon",
    "pld_epsilon_runs",
    "pld_delta",
    "pld_noise_multiplier",
    "BLAS_THREADS",
]

#: Width of the privacy-loss grid: dp_accounting's default ``value_discretization_interval``.
GRID = 1e-4
#: Coarse grid used to locate σ during calibration (a multiple of ``GRID``: nested, so pessimistic too).
COARSE_GRID = 1e-3
#: Round-off allowance of the composition, per step and fixed (in units of the float64 epsilon 2^-52):
#: δ is charged η = (ROUNDOFF_PER_STEP·T + ROUNDOFF_FIXED)·2^-52.  The disagreement between
#: this implementation and dp_accounting's (two float64 FFT pipelines) stays below η/8 at
#: every setting in the tests (it is ~1e-12 at T = 14062 and grows about linearly in T).
ROUNDOFF_PER_STEP = 10.0
ROUNDOFF_FIXED = 1000.0
#: Relative part of the allowance: δ is also scaled by (1 ∓ ROUNDOFF_RELATIVE), covering the
#: round-off of sums over ~1e5 bins at large δ (seen up to ~5e-11 relative against dp_accounting).
ROUNDOFF_RELATIVE = 1e-9
#: Absolute floor for δ (the composition puts up to 1e-15 on +∞); the real floor is 2η.
MIN_DELTA = 1e-13
#: Most bins a composed PLD may have before the grid is widened (memory and time bound).
MAX_BINS = 2**21
#: Widest grid the accountant widens to: a setting that needs a wider one (ε in the millions, or so many steps
#: that the pessimism of a coarse grid keeps widening the composition's window) is refused with a ValueError.
MAX_GRID = 10.0
#: Largest number of steps (the round-off allowance then asks for δ >= 4.4e-3).
MAX_STEPS = 10**12
#: Range of noise multipliers the accountant accepts (outside it the loss range overflows or underflows;
#: within it, settings whose losses would need a grid wider than ``MAX_GRID`` are refused).
NOISE_RANGE = (1e-6, 1e100)
#: ln of the noise mass put on +∞ when one step is discretised (dp_accounting's default).
LOG_MASS_TRUNCATION = -50.0
#: Mass of the composed PLD outside the convolution window, put on +∞.
TAIL_MASS_TRUNCATION = 1e-15
#: Samplings this accountant supports ("fixed" is recognised and refused with the accountant to use).
SAMPLINGS = ("poisson",)
#: Largest σ calibration searches; beyond it the target ε is reported unreachable.
MAX_NOISE_MULTIPLIER = 1e4
#: Smallest σ calibration searches; a target met there is reported as out of range.
MIN_NOISE_MULTIPLIER = 1e-2
#: Relative tolerance on σ of the calibration.
CALIBRATION_RTOL = 1e-3
#: BLAS threads the numerics run with (threadpoolctl), whatever the environment says: the dot products here are
#: ~1e5 long, where a multi-threaded OpenBLAS spends ~100x longer waking threads than computing (issue 52: one call
#: 766 ms with the default threads against 7.7 ms with one).
BLAS_THREADS = 1

_F = TypeVar("_F", bound=Callable[..., Any])
_CONTROLLER: Any = None


def _blas_limited(fn: _F) -> _F:
    """Run ``fn`` with :data:`BLAS_THREADS` BLAS threads (threadpoolctl's controller, built once, after NumPy)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _CONTROLLER
        if _CONTROLLER is None:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER = ThreadpoolController()
        with _CONTROLLER.limit(limits=BLAS_THREADS, user_api="blas"):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


# --------------------------------------------------------------------------- validation


def _check_int(name: str, value: object, minimum: int) -> int:
    return check_positive_int(name, value, minimum=minimum)


def _check_steps(steps: object, minimum: int = 0) -> int:
    steps = _check_int("steps", steps, minimum)
    if steps > MAX_STEPS:
        raise ValueError(
            f"steps must be an integer in [{minimum}, {MAX_STEPS:.0e}] for the PLD accountant, got {steps:.3g}: "
            "beyond it the round-off allowance of the FFT composition leaves no usable delta; use RDP"
        )
    return steps


def roundoff(steps: int) -> float:
    """Round-off allowance η charged to δ for a ``steps``-fold composition (see ``ROUNDOFF_PER_STEP``)."""
    return float((ROUNDOFF_PER_STEP * _check_steps(steps) + ROUNDOFF_FIXED) * np.finfo(float).eps)


def min_delta(steps: int) -> float:
    """Smallest δ the accountant resolves for ``steps`` steps: max(``MIN_DELTA``, 2η)."""
    return max(MIN_DELTA, 2.0 * roundoff(steps))


def _check_delta(delta: object, steps: int) -> float:
    delta = check_finite("delta", delta)
    low = min_delta(steps)
    if not low <= delta < 1.0:
        raise ValueError(
            f"delta must be in [{low:.3g}, 1) for the PLD accountant at steps={steps}, got {delta:g}: below "
            f"{low:.3g} the floating-point round-off of the FFT composition (about {roundoff(steps):.1g}) is not "
            "negligible against delta; use an RDP accountant (method='rdp') for smaller delta (or fewer steps)"
        )
    return delta


def _check_sampling(sampling: object) -> None:
    if sampling == "fixed":
        raise ValueError(
            "sampling='fixed' (fixed-size batches without replacement, replace-one neighbours) has no PLD "
            "accountant here: dp_accounting's PLD has no dominating pair for it and the Poisson PLD can "
            "under-estimate it (Lebeda et al. 2024); use an RDP accountant with "
            "dp_accounting.SampledWithoutReplacementDpEvent under NeighboringRelation.REPLACE_ONE"
        )
    if sampling == "shuffle":
        raise ValueError(
            "sampling='shuffle' (shuffled disjoint batches) has no PLD accountant: the Poisson PLD does not "
            "bound it; use an accountant for shuffling (the per-paper analyses) or Poisson sampling"
        )
    if sampling != "poisson":
        raise ValueError(f"sampling must be 'poisson' (the only sampling the PLD accountant handles); got {sampling!r}")


def _check_common(noise_multiplier: object, sample_rate: object, steps: object, sampling: object) -> tuple:
    """Validated (σ, q, steps); ``sampling`` must be supported."""
    sigma = _check_noise(noise_multiplier)
    q = check_rate("sample_rate", sample_rate)
    steps = _check_steps(steps)
    _check_sampling(sampling)
    return sigma, q, steps


def _check_noise(noise_multiplier: object) -> float:
    sigma = check_positive("noise_multiplier", noise_multiplier)
    low, high = NOISE_RANGE
    if not low <= sigma <= high:
        raise ValueError(f"noise_multiplier must be in [{low:g}, {high:g}] for the PLD accountant, got {sigma:g}")
    return sigma


# --------------------------------------------------------------------------- one step


@dataclass(frozen=True)
class _Pmf:
    """A PLD on the grid: mass ``probs[i]`` at loss ``(lower + i) * grid``, plus ``inf_mass`` at +∞."""

    lower: int
    probs: np.ndarray
    inf_mass: float
    grid: float

    @property
    def losses(self) -> np.ndarray:
        return (np.arange(self.probs.size) + self.lower) * self.grid


def _unsubsample(eps: np.ndarray, q: float) -> np.ndarray:
    """log(1 + (e^ε − 1)/q) for ε > log(1 − q), without overflow for large ε.

    Equal to ε − log q + log(1 − (1 − q)e^{−ε}); the first form is used for ε ≤ 1 (accurate
    near the lower end), the second above (no overflow of e^ε).  Where (e^ε − 1)/q itself overflows
    (a subnormal q), the first form is taken in logs: log(e^ε − 1) − log q, exact to rounding there.
    """
    small = eps <= 1.0
    out = np.empty_like(eps)
    grown = np.expm1(eps[small])
    with np.errstate(over="ignore"):
        ratio = grown / q
    huge = np.isposinf(ratio)  # only e^ε − 1 > 0 can overflow upward; below 0 the ratio lies in (−1, 0)
    ratio[huge] = 0.0
    low = np.log1p(ratio)
    low[huge] = np.log(grown[huge]) - math.log(q)
    out[small] = low
    big = eps[~small]
    out[~small] = big - math.log(q) + np.log1p(-(1.0 - q) * np.exp(-big))
    return out


def _one_step_delta(sigma: float, q: float, eps: np.ndarray, remove: bool) -> np.ndarray:
    """Hockey-stick divergence δ(ε) of one Poisson-subsampled Gaussian step, at every ε in ``eps``.

    REMOVE: P = (1−q)·N(0, σ²) + q·N(−1, σ²) against Q = N(0, σ²); ADD: P = N(0, σ²) against
    Q = (1−q)·N(0, σ²) + q·N(1, σ²) (the dominating pairs of dp_accounting's
    ``GaussianPrivacyLoss``; Zhu, Dong, Wang 2022).  The loss is monotone in the
    outcome x, so δ(ε) = P(X ≤ x_ε) − e^ε·Q(X ≤ x_ε) with x_ε where the loss equals ε.
    """
    eps = np.asarray(eps, dtype=float)
    delta = np.zeros_like(eps)
    s2 = sigma * sigma
    if remove:
        if q == 1.0:
            inside = np.ones_like(eps, dtype=bool)
        else:
            inside = eps > math.log1p(-q)
            delta[~inside] = -np.expm1(eps[~inside])
        e = eps[inside]
        # loss without subsampling: log(1 + (e^ε − 1)/q); outcome where it is attained
        base = e if q == 1.0 else _unsubsample(e, q)
        x = -0.5 - base * s2
        upper = (1.0 - q) * special.ndtr(x / sigma) + q * special.ndtr((x + 1.0) / sigma)
        lower_log = special.log_ndtr(x / sigma)
    else:
        inside = np.ones_like(eps, dtype=bool) if q == 1.0 else eps < -math.log1p(-q)
        e = eps[inside]
        base = e if q == 1.0 else -_unsubsample(-e, q)
        x = 0.5 - base * s2
        upper = special.ndtr(x / sigma)
        if q == 1.0:
            lower_log = special.log_ndtr((x - 1.0) / sigma)
        else:
            lower_log = np.logaddexp(
                math.log1p(-q) + special.log_ndtr(x / sigma), math.log(q) + special.log_ndtr((x - 1.0) / sigma)
            )
    delta[inside] = upper - np.exp(e + lower_log)
    return np.clip(delta, 0.0, 1.0)


def _remove_loss(sigma: float, q: float, x: float) -> float:
    """REMOVE-direction privacy loss ln P(x)/Q(x) = ln(1 − q + q·e^{−(2x+1)/(2σ²)}) at outcome x."""
    base = -(2.0 * x + 1.0) / (2.0 * sigma * sigma)
    if q == 1.0:
        return base
    return float(np.logaddexp(math.log1p(-q), math.log(q) + base))


@lru_cache(maxsize=64)
def _loss_range(sigma: float, q: float, remove: bool) -> tuple[float, float]:
    """(lowest, highest) finite loss of one step once the noise is truncated at e^-50 of mass.

    As dp_accounting's ``GaussianPrivacyLoss.connect_dots_bounds``: the outcome is cut where
    each Gaussian tail holds ½·e^-50, widened by the sensitivity on the shifted side.  The
    ADD loss at x is minus the REMOVE loss at −x.
    """
    x_low = sigma * float(special.ndtri(0.5 * math.exp(LOG_MASS_TRUNCATION)))
    x_high = -x_low
    if remove:
        x_low -= 1.0
        return _remove_loss(sigma, q, x_high), _remove_loss(sigma, q, x_low)
    x_high += 1.0
    return -_remove_loss(sigma, q, -x_high), -_remove_loss(sigma, q, -x_low)


@lru_cache(maxsize=32)
def _one_step_pmf(sigma: float, q: float, grid: float, remove: bool) -> _Pmf:
    """Pessimistic connect-the-dots PMF of one step (Doroshenko et al. 2022, Alg. 1), cached (read-only arrays):
    ε after several step counts at one (σ, q) -- a curve -- composes the same one-step PMF at each count.

    With δ_i = δ(ε_i) on the grid ε_i = (k_lo + i)·h, the PLD whose privacy profile joins
    the points (e^ε_i, δ_i) by straight lines has mass
    p_1 = 1 − δ_1 + (δ_2 − δ_1)/(e^h − 1),
    p_i = ((δ_{i+1} − δ_i) − e^h (δ_i − δ_{i−1}))/(e^h − 1),
    p_n = (δ_n − δ_{n−1})/(e^{−h} − 1), and δ_n at +∞.  Since δ is convex in e^ε this
    profile lies above the true one: the PMF dominates the step (is pessimistic).
    """
    lo, hi = _loss_range(sigma, q, remove)
    k_lo, k_hi = math.floor(lo / grid), math.ceil(hi / grid)
    deltas = _one_step_delta(sigma, q, np.arange(k_lo, k_hi + 1) * grid, remove)
    deltas = np.minimum.accumulate(deltas)
    if deltas.size == 1:
        probs = np.array([1.0 - deltas[0]])
        probs.flags.writeable = False
        return _Pmf(k_lo, probs, float(deltas[0]), grid)
    diffs = np.diff(deltas)
    em1 = math.expm1(grid)
    probs = np.empty_like(deltas)
    probs[0] = 1.0 - deltas[0] + diffs[0] / em1
    probs[1:-1] = (diffs[1:] - diffs[:-1] * math.exp(grid)) / em1
    probs[-1] = diffs[-1] / math.expm1(-grid)
    probs = np.maximum(probs, 0.0)
    probs.flags.writeable = False  # cached: shared by every composition of this step
    return _Pmf(k_lo, probs, float(deltas[-1]), grid)


@lru_cache(maxsize=32)
def _one_step_moments(sigma: float, q: float, grid: float, remove: bool) -> tuple[tuple[float, int, int, float], ...]:
    """:func:`_window_moments` of :func:`_one_step_pmf` (cached with it: a curve's points reuse them)."""
    return _window_moments(_one_step_pmf(sigma, q, grid, remove).probs)


# --------------------------------------------------------------------------- composition


def _window_moments(probs: np.ndarray) -> tuple[tuple[float, int, int, float], ...]:
    """The part of :func:`_chernoff_window` that does not depend on the step count: (sign, ref, k, E e^{t(i − ref)})
    for the orders t = ±k/n, k = 1…20, of one step's PMF (cached per one-step PLD by :func:`_one_step_moments`)."""
    n = probs.size
    rel = np.arange(n) / n
    out = []
    for sign, ref in ((1.0, n - 1), (-1.0, 0)):
        # E e^{t i} = e^{t·ref} · Σ p_i e^{t (i − ref)}, with t(i − ref) ≤ 0: no overflow
        z = np.exp(sign * (rel - ref / n))
        power = np.ones(n)
        for k in range(1, 21):
            power *= z
            out.append((sign, ref, k, float(np.dot(probs, power))))
    return tuple(out)


def _chernoff_window(
    probs: np.ndarray,
    steps: int,
    tail_mass: float,
    moments: tuple[tuple[float, int, int, float], ...] | None = None,
) -> tuple[int, int]:
    """Index range [a, b] of the ``steps``-fold self-convolution holding all but ``tail_mass`` of its mass.

    Chernoff: P(S ≥ b) ≤ exp(T·log E e^{tX} − t·b) ≤ tail_mass/2 for t > 0 (and the mirror
    image for the lower end), minimised over the orders t = ±k/n, k = 1…20 (as dp_accounting).
    The moment generating functions are taken by repeated multiplication of e^{±i/n}
    (:func:`_window_moments`; pass ``moments`` to reuse them for another step count).
    """
    n = probs.size
    a, b = 0, (n - 1) * steps
    if n == 1:
        return a, b
    log_slack = math.log(2.0 / tail_mass)
    for sign, ref, k, mgf in _window_moments(probs) if moments is None else moments:
        if mgf <= 0:
            continue
        t = sign * k / n
        bound = (steps * (t * ref + math.log(mgf)) + log_slack) / t
        if sign > 0:
            b = min(b, math.ceil(bound))
        else:
            a = max(a, math.floor(bound))
    return a, max(b, a)


def _self_compose(pmf: _Pmf, steps: int, window: tuple[int, int], tail_mass: float = TAIL_MASS_TRUNCATION) -> _Pmf:
    """``steps``-fold composition: the ``steps``-th convolution power by one real FFT.

    ``window`` is the Chernoff window of :func:`_chernoff_window` for ``tail_mass``: the mass
    outside it (≤ ``tail_mass``) is charged to +∞; what wraps around the FFT's period only
    adds mass, which can only raise δ.
    """
    a, b = window
    out_len = b - a + 1
    size = fft.next_fast_len(max(out_len, pmf.probs.size), real=True)
    coeffs = fft.rfft(pmf.probs, size)
    power = np.ones_like(coeffs)
    base, k = coeffs, steps
    while k:  # exponentiation by squaring: log2(T) products, round-off ~log2(T)·u
        if k & 1:
            power = power * base
        k >>= 1
        if k:
            base = base * base
    conv = fft.irfft(power, size)
    probs = np.roll(conv, -a)[:out_len]
    inf_mass = tail_mass - math.expm1(steps * math.log1p(-pmf.inf_mass))
    return _Pmf(pmf.lower * steps + a, probs, min(1.0, inf_mass), pmf.grid)


def _epsilon_of(pmf: _Pmf, delta: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) = inf_mass + Σ_{ℓ > ε} p_ℓ (1 − e^{ε−ℓ}) ≤ delta (Koskela et al. 2020).

    Only losses ℓ > 0 matter for ε ≥ 0.  Walking down from the largest loss, on the segment
    [ℓ_{j+1}, ℓ_j) δ(ε) = U_j − e^ε L_j (U_j: mass at losses ≥ ℓ_j and at +∞; L_j: the same
    mass weighted by e^{−ℓ}), which equals delta at ε_j = log(U_j − delta) − log L_j; the
    answer is ε_j for the first segment that contains it.  L_j is accumulated in log space
    (losses can be in the thousands).  Negative bins (FFT round-off) are set to 0, which can
    only raise δ.
    """
    if pmf.inf_mass >= delta:
        return math.inf
    losses = pmf.losses
    keep = losses > 0
    if not np.any(keep):
        return 0.0
    p = np.maximum(pmf.probs[keep], 0.0)[::-1]
    ell = losses[keep][::-1]
    upper = pmf.inf_mass + np.cumsum(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_lower = np.logaddexp.accumulate(np.log(p) - ell)
        crossing = np.log(upper - delta) - log_lower
    below = np.append(ell[1:], 0.0)  # lower end of each segment; the last one ends at ε = 0
    hits = np.flatnonzero((upper > delta) & (crossing >= below))
    if hits.size == 0:  # δ(0) <= delta
        return 0.0
    return float(crossing[hits[0]])


def _delta_of(pmf: _Pmf, epsilon: float) -> float:
    losses = pmf.losses
    above = losses > epsilon
    probs = np.maximum(pmf.probs[above], 0.0)  # negative bins are FFT round-off; dropping them raises δ
    return float(pmf.inf_mass + np.dot(-np.expm1(epsilon - losses[above]), probs))


@lru_cache(maxsize=8)
def _composed(sigma: float, q: float, steps: int, grid: float, max_bins: int = MAX_BINS) -> tuple[_Pmf, ...]:
    """The composed PLDs (REMOVE, and ADD unless q = 1, where the two coincide).

    The grid is ``grid``, widened to an integer multiple of it when one step or the
    composition would need more than ``max_bins`` bins (coarser nested grid: still pessimistic).
    """
    directions = (True,) if q == 1.0 else (True, False)
    width = max(hi - lo for lo, hi in (_loss_range(sigma, q, remove) for remove in directions))
    factor = max(1, math.ceil(width / grid / (max_bins / 4)))
    while True:
        if grid * factor > MAX_GRID:
            raise ValueError(
                f"noise_multiplier={sigma:g}, sample_rate={q:g}, steps={steps} is outside the PLD accountant's range: "
                f"its privacy losses need a grid wider than {MAX_GRID:g} nats to fit {max_bins} bins (ε in the "
                "millions, or too many steps for a pessimistic grid); use an RDP accountant"
            )
        pmfs = [_one_step_pmf(sigma, q, grid * factor, remove) for remove in directions]
        windows = [
            _chernoff_window(pmf.probs, steps, TAIL_MASS_TRUNCATION, _one_step_moments(sigma, q, grid * factor, remove))
            for pmf, remove in zip(pmfs, directions, strict=True)
        ]
        bins = max(b - a + 1 for a, b in windows)
        if bins <= max_bins:
            return tuple(_self_compose(pmf, steps, w) for pmf, w in zip(pmfs, windows, strict=True))
        factor *= math.ceil(bins / max_bins)


def _delta_bound(pmfs: tuple[_Pmf, ...], epsilon: float, steps: int) -> float:
    """What :func:`pld_delta` reports at ``epsilon``: the larger direction's δ, plus the round-off allowance."""
    return max(_delta_of(pmf, epsilon) for pmf in pmfs) * (1.0 + ROUNDOFF_RELATIVE) + roundoff(steps)


def _epsilon(sigma: float, q: float, steps: int, delta: float, grid: float = GRID, max_bins: int = MAX_BINS) -> float:
    """ε at δ·(1 − ``ROUNDOFF_RELATIVE``) − η (the round-off allowance), the larger of the two directions; then
    raised, if need be, until this module's own δ bound at it (:func:`pld_delta`'s) is <= δ.

    The two allowances cancel, so the round trip δ → ε → δ is decided by the last bits of two sums over the same
    bins in different orders (:func:`_epsilon_of`'s running sums, :func:`_delta_of`'s dot product), which depend on
    the processor's SIMD paths: on an AVX-512 machine δ(ε) came out 3e-13 relative above δ.  The check makes the
    round trip hold everywhere, and can only raise ε (by ~1e-12 relative where it acts)."""
    if steps == 0:
        return 0.0
    return _epsilon_from(_composed(sigma, q, steps, grid, max_bins), steps, delta)


def _epsilon_from(pmfs: tuple[_Pmf, ...], steps: int, delta: float) -> float:
    """ε of the composed ``pmfs`` (one per direction) at δ, read as :func:`_epsilon` says."""
    target = delta * (1.0 - ROUNDOFF_RELATIVE) - roundoff(steps)
    eps = max(_epsilon_of(pmf, target) for pmf in pmfs)
    bump = 1e-12
    while math.isfinite(eps) and _delta_bound(pmfs, eps, steps) > delta:
        if bump > 1e-6:  # never seen: the sums disagree far beyond round-off
            raise RuntimeError(f"PLD accountant: no eps near {eps!r} meets its own delta bound {delta!r}")
        eps = max(eps * (1.0 + bump), eps + 1e-15)
        bump *= 10.0
    return eps


def _convolve(a: _Pmf, b: _Pmf, tail_mass: float = TAIL_MASS_TRUNCATION) -> _Pmf:
    """The composition of two PLDs on one grid: their convolution by one real FFT (no wrap-around: the full
    length), with at most ``tail_mass`` of each end's mass moved to +∞ (pessimistic: a loss only grows)."""
    size = fft.next_fast_len(a.probs.size + b.probs.size - 1, real=True)
    conv = fft.irfft(fft.rfft(a.probs, size) * fft.rfft(b.probs, size), size)[: a.probs.size + b.probs.size - 1]
    cum = np.cumsum(np.maximum(conv, 0.0))
    lo = int(np.searchsorted(cum, 0.5 * tail_mass, side="right"))
    hi = conv.size - int(np.searchsorted(cum[-1] - cum[::-1], 0.5 * tail_mass, side="right"))
    lo, hi = min(lo, conv.size - 1), max(hi, lo + 1)
    moved = float(cum[lo - 1] if lo else 0.0) + float(cum[-1] - cum[hi - 1])
    inf_mass = a.inf_mass + b.inf_mass - a.inf_mass * b.inf_mass + moved
    return _Pmf(a.lower + b.lower + lo, conv[lo:hi], min(1.0, inf_mass), a.grid)


def _composed_runs(sigma: float, runs: tuple[tuple[float, int], ...], max_bins: int = MAX_BINS) -> tuple[_Pmf, ...]:
    """The composed PLDs (REMOVE, ADD) of runs of steps at different rates: each run's ``steps``-fold composition
    (:func:`_composed`) on one common grid (the widest any run needs), then their convolution."""
    grid = GRID
    while True:
        parts = [_composed(sigma, q, c, grid, max_bins) for q, c in runs]
        widest = max(p[0].grid for p in parts)
        if all(p[0].grid == widest for p in parts):
            break
        grid = widest
    out = []
    for direction in (0, 1):
        total = None
        for p in parts:
            pmf = p[min(direction, len(p) - 1)]  # q = 1: one direction serves both
            total = pmf if total is None else _convolve(total, pmf)
        if total.probs.size > max_bins:
            raise ValueError(
                f"a schedule of {len(runs)} runs at noise_multiplier={sigma:g} is outside the PLD accountant's range "
                f"(its composed PLD needs more than {max_bins} bins); use method='rdp'"
            )
        out.append(total)
    return tuple(out)


def cache_clear() -> None:
    """Forget the cached one-step and composed PLDs (for timing)."""
    _composed.cache_clear()
    _one_step_pmf.cache_clear()
    _one_step_moments.cache_clear()


# --------------------------------------------------------------------------- public API


@_blas_limited
def pld_epsilon(
    noise_multiplier: float, *, sample_rate: float, steps: int, delta: float, sampling: str = "poisson"
) -> float:
    """ε of ``steps`` DP-SGD steps (Poisson sampling at ``sample_rate``, noise ``noise_multiplier``) at δ.

    The PLD accountant of Koskela et al. 2020 with the pessimistic connect-the-dots
    discretisation of Doroshenko et al. 2022 on dp_accounting's default grid (1e-4): an
    upper bound on the true ε, never below ``dp_accounting.pld.PLDAccountant()``'s value
    (beyond float noise) and within 1e-3 relative of it for δ >= 1e-8 at the usual
    settings; read at δ − η, the round-off allowance (see the module docstring).  With
    very small σ the grid is widened (looser, still an upper bound).  ``steps = 0`` gives 0.

    Args:
        noise_multiplier: σ, noise std over clipping norm, in (0, ∞).
        sample_rate: Poisson sampling rate q in (0, 1].
        steps: number of steps, an integer ≥ 0.
        delta: target δ in [``min_delta(steps)``, 1) (2η, at least ``MIN_DELTA``; 6.3e-11 at T = 14062).
        sampling: ``"poisson"``; ``"fixed"`` raises ``ValueError`` naming the accountant to use.

    Returns:
        ε ≥ 0, or ``math.inf`` if δ is below the mass the PLD puts on +∞.
    """
    sigma, q, steps = _check_common(noise_multiplier, sample_rate, steps, sampling)
    delta = _check_delta(delta, steps)
    return _epsilon(sigma, q, steps, delta)


@_blas_limited
def pld_epsilon_runs(noise_multiplier: float, *, runs: Sequence[tuple[float, int]], delta: float) -> float:
    """ε at δ of runs of Poisson-subsampled Gaussian steps at different rates: ``runs`` = ((q, steps), ...) (a
    batch-size schedule, run-length encoded), all with ``noise_multiplier`` σ.

    Each run is composed as in :func:`pld_epsilon` and the runs' PLDs are convolved (Koskela et al. 2020: the PLD
    of a composition is the convolution of the PLDs), each direction on its own, on the widest grid any run needs;
    at most 1e-15 of mass per convolution is moved to +∞ (pessimistic).  One run gives :func:`pld_epsilon`'s value
    exactly.  The inputs are trusted (the registry's :class:`~dpcore.accounting.registry.PoissonAccountant` checks
    them): q in (0, 1], steps >= 1, δ in [``min_delta(total steps)``, 1).
    """
    bad = f"runs must be a non-empty sequence of (sample_rate, steps) pairs, got {runs!r}"
    if isinstance(runs, (str, bytes)) or not isinstance(runs, (list, tuple)) or not runs:
        raise ValueError(bad)
    if not all(isinstance(r, (list, tuple)) and len(r) == 2 for r in runs):
        raise ValueError(bad)
    runs = tuple((check_rate("runs", q), _check_int("runs", c, 1)) for q, c in runs)
    steps = sum(c for _, c in runs)
    sigma = _check_noise(noise_multiplier)
    delta = _check_delta(delta, _check_steps(steps))
    if len(runs) == 1:
        return _epsilon(sigma, runs[0][0], runs[0][1], delta)
    return _epsilon_from(_composed_runs(sigma, runs), steps, delta)


@_blas_limited
def pld_delta(
    noise_multiplier: float, *, sample_rate: float, steps: int, epsilon: float, sampling: str = "poisson"
) -> float:
    """δ of ``steps`` DP-SGD steps at ``epsilon`` (an upper bound, like :func:`pld_epsilon`).

    The hockey-stick divergence of the composed pessimistic PLD (Koskela et al. 2020), the
    larger of the REMOVE and ADD directions, plus the round-off allowance η.  ``epsilon`` in [0, ∞);
    ``steps = 0`` gives 0.
    """
    sigma, q, steps = _check_common(noise_multiplier, sample_rate, steps, sampling)
    epsilon = check_nonnegative("epsilon", epsilon)
    if steps == 0:
        return 0.0
    return min(1.0, _delta_bound(_composed(sigma, q, steps, GRID, MAX_BINS), epsilon, steps))


@_blas_limited
def pld_noise_multiplier(
    target_epsilon: float, *, sample_rate: float, steps: int, delta: float, sampling: str = "poisson"
) -> float:
    """Smallest σ (to relative ``CALIBRATION_RTOL`` = 1e-3) with ``pld_epsilon(σ, …) <= target_epsilon``.

    ε(σ) is decreasing in σ.  The one calibrator (:func:`dpcore.accounting.calibrate.smallest_sigma`) first
    locates the root on the coarse grid (1e-3, and at most ``MAX_BINS``/8 bins, so that its evaluations stay
    cheap where σ is small; nested in the fine grid unless a grid is widened, so its ε is then at least the fine
    one and the coarse root feasible on the fine grid) to 4·``CALIBRATION_RTOL``, then on the fine grid from
    there: a bracket with steps of 0.3 % (more if needed) and bisection.  The returned σ is one whose fine ε was
    computed and found ``<= target_epsilon`` (feasibility is checked, never inferred), with a computed
    infeasible σ within ``CALIBRATION_RTOL`` below it: calibration never overshoots.

    σ is searched in [``MIN_NOISE_MULTIPLIER``, ``MAX_NOISE_MULTIPLIER``] = [0.01, 1e4]; a
    target met by every σ down to 0.01, or by none up to 1e4, raises ``ValueError`` (a target above every
    loss the PLD can have at σ = 0.01 without computing anything).  Each fine evaluation costs up to a second or
    two where σ is small (σ ≈ 0.2 at δ = 0.5: the loss range is ~80 nats), so such calibrations take seconds.
    """
    target = check_positive("target_epsilon", target_epsilon)
    _check_sampling(sampling)
    q = check_rate("sample_rate", sample_rate)
    steps = _check_steps(steps, 1)
    delta = _check_delta(delta, steps)
    if _largest_loss(MIN_NOISE_MULTIPLIER, q, steps) <= target:  # met everywhere: refuse without computing
        raise _too_loose(target, q, steps, delta)

    # The one calibrator (dpcore.accounting.calibrate.smallest_sigma), run twice: on the coarse grid
    # (cheap; nested in the fine grid, so pessimistic too) to locate σ, then on the fine grid in a
    # narrow bracket around that guess.  smallest_sigma checks feasibility of what it returns.
    def fine(sigma: float) -> float:
        return _epsilon(sigma, q, steps, delta, GRID)

    def coarse(sigma: float) -> float:  # at most 1/8 of the bins: widened (cheaper) where σ is small
        return _epsilon(sigma, q, steps, delta, COARSE_GRID, MAX_BINS // 8)

    bounds = {"sigma_min": MIN_NOISE_MULTIPLIER, "sigma_max": MAX_NOISE_MULTIPLIER}
    try:
        guess = smallest_sigma(coarse, target, rtol=4 * CALIBRATION_RTOL, below_min="raise", **bounds)
        return smallest_sigma(fine, target, rtol=CALIBRATION_RTOL, start=guess, factor=1.003, **bounds)
    except ValueError as exc:
        if "outside the accountant's range" in str(exc):
            raise _too_loose(target, q, steps, delta) from exc
        raise ValueError(f"{exc} (calibrating at sample_rate={q:g}, steps={steps}, delta={delta:g})") from exc


def _largest_loss(sigma: float, q: float, steps: int) -> float:
    """An upper bound on every finite loss of the composed PLD at any grid the accountant uses: ``steps`` times
    (the largest one-step loss + ``MAX_GRID``).  ε(δ) is at most that loss (the mass on +∞ is far below δ)."""
    return steps * (max(_loss_range(sigma, q, True)[1], _loss_range(sigma, q, False)[1]) + MAX_GRID)


def _too_loose(target: float, q: float, steps: int, delta: float) -> ValueError:
    return ValueError(
        f"target_epsilon={target} is met by every noise_multiplier down to {MIN_NOISE_MULTIPLIER} at "
        f"sample_rate={q:g}, steps={steps}, delta={delta:g}; the calibration searches noise_multiplier in "
        f"[{MIN_NOISE_MULTIPLIER}, {MAX_NOISE_MULTIPLIER:g}]"
    )
