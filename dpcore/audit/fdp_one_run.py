"""One-run audit evaluated with a trade-off family (f-DP), beside the (ε, δ) one-run bound.

Mahloujifar, Melis, Chaudhuri 2024 ("Auditing f-Differential Privacy in One Run", arXiv 2410.22235) observe that the
one-run guessing game of Steinke, Nasr, Jagielski 2023 ("Privacy Auditing with One (1) Training Run") is loose
when the hypothesis is a single (ε, δ) pair, and test instead a whole hypothesised trade-off curve f.  This module
does the same with the accountant's family {f_θ} (θ: the per-step μ of the mechanism's Gaussian, larger = less
private), using a bound that follows directly from Steinke et al.'s Thm 5.2: an f_θ-DP mechanism is
(ε, δ_θ(ε))-DP for *every* ε (Dong, Roth, Su 2022, Prop. 2.12), so the probability of v or more right guesses out
of r is at most

    p_θ = min_ε  P_Steinke(m, r, v; ε, δ_θ(ε)),

each term being a valid bound on the same probability (no multiple-testing correction is needed: the minimum of
valid upper bounds on one number is one).  θ is rejected at level β = 1 − confidence when p_θ < β; the audit's
lower bound is θ_lb = sup{θ : p_θ < β} and ε_lb = ε_{θ_lb}(δ), valid with probability ≥ confidence *if the
mechanism's trade-off lies in the family* (its curve is f_θ for some θ) -- the assumption of every family-based
audit; for the (ε, δ) bound alone no such assumption is needed.

This is not Mahloujifar et al.'s sharper recursive bound (their Thm on the guessing game with abstentions, which
uses f directly rather than its (ε, δ(ε)) envelope); it gives up some tightness for a proof that is one line from
Steinke et al.'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpcore.audit.estimators import one_run_p_value
from dpcore.validation import check_open_unit, check_positive, check_positive_int

__all__ = ["FamilyOneRunBound", "family_p_value", "one_run_family_bound"]

_EPS_GRID = tuple(np.round(np.linspace(0.0, 12.0, 97), 6))


@dataclass(frozen=True)
class FamilyOneRunBound:
    """The one-run bound under a trade-off family: θ_lb and ε_lb = ε_{θ_lb}(δ)."""

    theta_lower: float
    epsilon: float
    delta: float
    confidence: float
    m: int
    r: int
    v: int


def family_p_value(
    m: int,
    r: int,
    v: int,
    delta_of: Callable[[float], float],
    *,
    eps_grid: Sequence[float] = _EPS_GRID,
) -> float:
    """min over ``eps_grid`` of Steinke et al.'s p-value at (ε, ``delta_of(ε)``): the probability of ≥ ``v`` right
    guesses of ``r`` (``m`` canaries) under a mechanism that is (ε, delta_of(ε))-DP for every ε (module docstring)."""
    if not callable(delta_of):
        raise ValueError("delta_of must be a callable epsilon -> delta")
    grid = [float(e) for e in eps_grid]
    if not grid or any(not math.isfinite(e) or e < 0 for e in grid):
        raise ValueError("eps_grid must be a non-empty sequence of finite numbers >= 0")
    best = 1.0
    for e in grid:
        d = float(delta_of(e))
        if not 0.0 <= d <= 1.0:
            raise ValueError(f"delta_of({e}) must be in [0, 1], got {d}")
        best = min(best, one_run_p_value(m, r, v, e, d))
    return best


def one_run_family_bound(
    m: int,
    r: int,
    v: int,
    *,
    delta_of: Callable[[float, float], float],
    epsilon_of: Callable[[float, float], float],
    delta: float,
    confidence: float = 0.95,
    theta_max: float = 20.0,
    tol: float = 1e-3,
    eps_grid: Sequence[float] = _EPS_GRID,
) -> FamilyOneRunBound:
    """The family one-run bound (module docstring).  ``delta_of(theta, eps)``: δ of the family member θ at ε;
    ``epsilon_of(theta, delta)``: its ε at δ; both non-decreasing in θ.  θ is searched in (0, ``theta_max``] by
    bisection to ``tol`` (p_θ is non-decreasing in θ for a nested family).  Returns θ_lb = 0 and ε = 0 when even a
    nearly non-private member cannot be rejected."""
    m = check_positive_int("m", m)
    r = check_positive_int("r", r, minimum=0)
    v = check_positive_int("v", v, minimum=0)
    if not v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if not callable(delta_of) or not callable(epsilon_of):
        raise ValueError("delta_of and epsilon_of must be callables")
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    theta_max = check_positive("theta_max", theta_max)
    tol = check_positive("tol", tol)
    beta = 1.0 - confidence

    def rejected(theta: float) -> bool:
        return family_p_value(m, r, v, lambda e: delta_of(theta, e), eps_grid=eps_grid) < beta

    lo, hi = 0.0, float(theta_max)
    if not rejected(tol):
        return FamilyOneRunBound(0.0, 0.0, delta, confidence, m, r, v)
    lo = tol
    if rejected(hi):
        return FamilyOneRunBound(hi, float(epsilon_of(hi, delta)), delta, confidence, m, r, v)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if rejected(mid):
            lo = mid
        else:
            hi = mid
    return FamilyOneRunBound(lo, float(epsilon_of(lo, delta)), delta, confidence, m, r, v)
