"""The one noise calibrator: the smallest σ whose ε meets a target, never overshooting.

Every "σ for a target ε" function in dpcore goes through :func:`smallest_sigma` (the idea of
dp_accounting's ``calibrate_dp_mechanism``: a bracket, a root search, then a feasibility fix-up).  The
returned σ always satisfies ``eps(σ) <= target``: the bracket's upper end is feasible at every step and
is what is returned, and the result is re-checked at the end.

>>> round(smallest_sigma(lambda s: 1.0 / s, 0.5, rtol=1e-6), 4)
2.0
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpcore.validation import check_choice, check_finite, check_positive

__all__ = ["smallest_sigma", "SIGMA_MIN", "SIGMA_MAX", "MIN_RTOL"]  # epsilon_at_delta: internal (trusted inputs)

SIGMA_MIN = 1e-3
SIGMA_MAX = 1e6
#: Smallest relative tolerance a calibration accepts: σ is a float64 (resolution 2.2e-16), and the bisection
#: needs log2(1/rtol) accountant evaluations; below 1e-12 the tolerance is not resolvable in practice.
MIN_RTOL = 1e-12
#: Bracketing steps taken with the caller's ``factor`` before the step is squared at every move (so that a
#: factor close to 1 with a far-away answer still brackets it in O(log log) steps).
_PLAIN_STEPS = 60


def check_rtol(rtol: object) -> float:
    """``rtol`` as a float in [``MIN_RTOL``, 1): a relative tolerance on σ that floating point can resolve."""
    rtol = check_finite("rtol", rtol)
    if not MIN_RTOL <= rtol < 1.0:
        raise ValueError(
            f"rtol must be in [{MIN_RTOL:g}, 1) (a relative tolerance on the noise multiplier that float64 "
            f"resolves), got {rtol:g}"
        )
    return rtol


def _checked(eps: Callable[[float], float], sigma: float) -> float:
    value = eps(sigma)
    try:
        value = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the accountant returned {value!r} at noise_multiplier={sigma:g}, not a number") from exc
    if math.isnan(value) or value < 0:
        raise ValueError(f"the accountant returned ε = {value} at noise_multiplier={sigma:g}: not a valid ε")
    return value


def smallest_sigma(
    eps: Callable[[float], float],
    target: float,
    *,
    rtol: float = 1e-3,
    start: float = 1.0,
    factor: float = 2.0,
    sigma_min: float = SIGMA_MIN,
    sigma_max: float = SIGMA_MAX,
    below_min: str = "return",
) -> float:
    """Smallest σ (to ``rtol`` relative) with ``eps(σ) <= target``, for ε non-increasing in σ.

    Brackets the answer by multiplying/dividing ``start`` by ``factor`` (the step is squared at every move
    after 60 plain ones, so the bracketing is fast even for a factor close to 1), then bisects, always keeping
    the upper end feasible: the result never overshoots the target.  When even ``sigma_min`` meets the target,
    it is returned (``below_min="return"``: feasible, maybe not minimal) or refused (``"raise"``).  A target
    not met by ``sigma_max`` raises ``ValueError``, and so does an ε that is NaN or negative (a broken
    accountant is never read as "feasible").  ``rtol`` must be in [``MIN_RTOL``, 1) = [1e-12, 1): the
    bisection then takes at most ~40 evaluations.
    """
    if not callable(eps):
        raise ValueError(f"eps must be a callable noise_multiplier -> epsilon, got {eps!r}")
    target = check_positive("target", target)
    rtol = check_rtol(rtol)
    hi = check_positive("start", start)
    factor = check_finite("factor", factor)
    if factor <= 1:
        raise ValueError(f"factor must be in (1, inf), got {factor}")
    sigma_min = check_positive("sigma_min", sigma_min)
    sigma_max = check_positive("sigma_max", sigma_max)
    check_choice("below_min", below_min, ("return", "raise"))
    if not sigma_min < sigma_max:
        raise ValueError(f"sigma_min must be < sigma_max, got {sigma_min} and {sigma_max}")
    seen: dict[float, float] = {}

    def value(sigma: float) -> float:
        if sigma not in seen:
            seen[sigma] = _checked(eps, sigma)
        return seen[sigma]

    hi = min(max(hi, sigma_min), sigma_max)
    step, moves = factor, 0
    while value(hi) > target:
        if hi >= sigma_max:
            raise ValueError(
                f"target_epsilon (target) = {target} is not reachable with noise_multiplier <= sigma_max = "
                f"{sigma_max:g}"
            )
        hi, step, moves = min(hi * step, sigma_max), _next_step(step, moves), moves + 1
    lo = hi / step
    while True:
        if lo <= sigma_min:
            if value(sigma_min) <= target:
                if below_min == "raise":
                    raise ValueError(
                        f"target_epsilon (target) = {target} needs noise_multiplier < sigma_min = {sigma_min:g}: "
                        "outside the accountant's range"
                    )
                return sigma_min
            lo = sigma_min
            break
        if value(lo) > target:
            break
        step, moves = _next_step(step, moves), moves + 1
        hi, lo = lo, lo / step
    while (hi - lo) / hi > rtol:
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # float resolution reached (cannot happen for rtol >= MIN_RTOL)
            break
        if value(mid) <= target:
            hi = mid
        else:
            lo = mid
    if value(hi) > target:  # feasibility fix-up (a non-monotone accountant): never overshoot
        raise ValueError(f"calibration failed: ε({hi:g}) exceeds the target {target}; the accountant is not monotone")
    return hi


def epsilon_at_delta(
    delta_of: Callable[[float], float], delta: float, *, tol: float, cap: float = 1e4, lower: bool = False
) -> float:
    """The ε(δ) read off a δ(ε) curve that decreases in ε: doubling from ε = 1 until δ(ε) ≤ ``delta``, then bisection
    to ``tol``; the upper end (δ ≤ ``delta`` there) is returned, or with ``lower`` the lower end (δ > ``delta``: a
    lower bound's ε), ``inf`` when ε would pass ``cap``.  The one ε
    bisection of :func:`dpcore.audit.tight.sum_release_epsilon` and
    :func:`dpcore.accounting.shuffle_lower.shuffle_lower_epsilon` (inputs checked by them)."""
    lo, hi = 0.0, 1.0
    while delta_of(hi) > delta:
        lo, hi = hi, 2 * hi
        if hi > cap:
            return math.inf
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if delta_of(mid) > delta:
            lo = mid
        else:
            hi = mid
    return lo if lower else hi


def _next_step(step: float, moves: int) -> float:
    """The bracketing step after ``moves`` moves: unchanged for the first 60, then squared (capped at 1e100)."""
    return step if moves < _PLAIN_STEPS else min(step * step, 1e100)
