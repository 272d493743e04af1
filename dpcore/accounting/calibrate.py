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

from dpcore.validation import check_positive

__all__ = ["smallest_sigma", "SIGMA_MIN", "SIGMA_MAX"]

SIGMA_MIN = 1e-3
SIGMA_MAX = 1e6


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

    Brackets the answer by multiplying/dividing ``start`` by ``factor``, then bisects, always keeping the
    upper end feasible: the result never overshoots the target.  When even ``sigma_min`` meets the target,
    it is returned (``below_min="return"``: feasible, maybe not minimal) or refused (``"raise"``).  A target
    not met by ``sigma_max`` raises ``ValueError``, and so does an ε that is NaN or negative (a broken
    accountant is never read as "feasible").
    """
    target = check_positive("target", target)
    rtol = check_positive("rtol", rtol)
    hi = check_positive("start", start)
    seen: dict[float, float] = {}

    def value(sigma: float) -> float:
        if sigma not in seen:
            seen[sigma] = _checked(eps, sigma)
        return seen[sigma]

    sigma_min = check_positive("sigma_min", sigma_min)
    sigma_max = check_positive("sigma_max", sigma_max)
    if factor <= 1 or not math.isfinite(factor):
        raise ValueError(f"factor must be in (1, inf), got {factor}")
    if below_min not in ("return", "raise"):
        raise ValueError(f"below_min must be 'return' or 'raise', got {below_min!r}")
    if not sigma_min < sigma_max:
        raise ValueError(f"sigma_min must be < sigma_max, got {sigma_min} and {sigma_max}")
    hi = min(max(hi, sigma_min), sigma_max)
    while value(hi) > target:
        if hi >= sigma_max:
            raise ValueError(f"target_epsilon={target} is not reachable with noise_multiplier <= {sigma_max:g}")
        hi = min(hi * factor, sigma_max)
    lo = hi / factor
    while True:
        if lo <= sigma_min:
            if value(sigma_min) <= target:
                if below_min == "raise":
                    raise ValueError(
                        f"target_epsilon={target} needs noise_multiplier < {sigma_min:g}: "
                        "outside the accountant's range"
                    )
                return sigma_min
            lo = sigma_min
            break
        if value(lo) > target:
            break
        hi, lo = lo, lo / factor
    while (hi - lo) / hi > rtol:
        mid = 0.5 * (lo + hi)
        if value(mid) <= target:
            hi = mid
        else:
            lo = mid
    if value(hi) > target:  # feasibility fix-up (a non-monotone accountant): never overshoot
        raise ValueError(f"calibration failed: ε({hi:g}) exceeds the target {target}; the accountant is not monotone")
    return hi
