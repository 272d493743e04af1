"""Noise calibration shared by every accountant: the smallest σ meeting an ε target."""

from __future__ import annotations

from collections.abc import Callable

from dpcore.validation import check_positive

__all__ = ["smallest_sigma"]


def smallest_sigma(
    eps: Callable[[float], float], target: float, *, rtol: float = 1e-3, start: float = 1.0, factor: float = 2.0
) -> float:
    """Smallest σ (to ``rtol`` relative) with ``eps(σ) <= target``, for ε decreasing in σ.

    Brackets the answer by multiplying/dividing ``start`` by ``factor``, then bisects,
    always keeping the upper end feasible: the result never overshoots the target.
    """
    target = check_positive("target", target)
    rtol = check_positive("rtol", rtol)
    hi = check_positive("start", start)
    if factor <= 1:
        raise ValueError(f"factor must be in (1, inf), got {factor}")
    while eps(hi) > target:
        hi *= factor
        if hi > 1e6:
            raise ValueError(f"target_epsilon={target} is not reachable with noise_multiplier <= 1e6")
    lo = hi / factor
    while eps(lo) <= target:
        hi, lo = lo, lo / factor
        if lo < 1e-3:
            return hi
    while (hi - lo) / hi > rtol:
        mid = 0.5 * (lo + hi)
        if eps(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi
