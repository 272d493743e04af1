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

``method="envelope"`` is that bound.  ``method="recursive"`` is Mahloujifar et al.'s own, sharper test (their
analysis of the guessing game with abstentions, §4-5 of arXiv 2410.22235, the recursion over the number of correct
guesses; implemented here from the description, as :func:`recursive_consistent`): it uses f itself through its
*inverse blow-up* B⁻¹(x) = inf{p : 1 − f(p) ≥ x} (for an f-DP pair, an event of probability p under one world has
probability ≤ 1 − f(p) under the other), not f's (ε, δ(ε)) envelope.  With c' guesses of m canaries, c of them
right, and level β: set τ = β·c'/m, r_c = τ·c/c', h_c = τ·(c' − c)/c', and for i = c − 1, …, 0

    h_i = max(h_{i+1}, B⁻¹(r_{i+1})),    r_i = r_{i+1} + i/(c' − i) · (h_i − h_{i+1});

f is consistent with the observation (not rejected) iff r_0 + h_0 ≤ c'/m.  B⁻¹ of the accountant's family is
computed from its δ(ε) curve in closed form (:func:`inverse_blow_up`): the trade-off of an ε grid,
f(α) = max_ε max(0, 1 − δ_ε − e^ε α, e^{−ε}(1 − δ_ε − α)) (Dong, Roth, Su 2022, Prop. 2.12), is a lower bound on
the true curve when δ_ε are upper bounds (PLD's pessimistic estimate) and the grid is finite, so B⁻¹ is
under-estimated and the test only loses power, never validity.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dpcore.audit.estimators import one_run_p_value
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int

__all__ = [
    "METHODS",
    "FamilyOneRunBound",
    "family_p_value",
    "inverse_blow_up",
    "gaussian_inverse_blow_up",
    "recursive_consistent",
    "one_run_family_bound",
]

METHODS = ("envelope", "recursive")

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


def inverse_blow_up(
    eps_grid: Sequence[float] | np.ndarray, deltas: Sequence[float] | np.ndarray
) -> Callable[[float], float]:
    """B⁻¹(x) = inf{p : 1 − f(p) ≥ x} of the trade-off f of the (ε, δ_ε) pairs ``eps_grid``/``deltas`` (module
    docstring): max(0, max_ε max((x − δ_ε)e^{−ε}, 1 − δ_ε − e^ε(1 − x))), exact for that f.

    >>> b = inverse_blow_up([1.0], [0.0])  # pure 1-DP: B⁻¹(x) = max(x/e, 1 − e(1 − x))
    >>> round(b(0.5), 4), round(b(0.99), 4)
    (0.1839, 0.9728)
    """
    e = np.asarray(eps_grid, dtype=float).reshape(-1)
    d = np.asarray(deltas, dtype=float).reshape(-1)
    if e.size == 0 or e.shape != d.shape:
        raise ValueError(f"eps_grid and deltas must be non-empty and of one length, got {e.size} and {d.size}")
    if not (np.all(np.isfinite(e)) and np.all(e >= 0)):
        raise ValueError("eps_grid must hold finite numbers >= 0")
    if not (np.all(np.isfinite(d)) and np.all((d >= 0) & (d <= 1))):
        raise ValueError("deltas must hold numbers in [0, 1]")
    down, up = np.exp(-e), np.exp(e)

    def inverse(x: float) -> float:
        x = min(max(float(x), 0.0), 1.0)
        return float(max(0.0, np.max(np.maximum((x - d) * down, 1.0 - d - up * (1.0 - x)))))

    return inverse


def gaussian_inverse_blow_up(mu: float) -> Callable[[float], float]:
    """B⁻¹ of the Gaussian trade-off G_μ: Φ(Φ⁻¹(x) − μ) (Dong, Roth, Su 2022, Def. 2.7)."""
    mu = check_positive("mu", mu)

    def inverse(x: float) -> float:
        x = min(max(float(x), 0.0), 1.0)
        return float(stats.norm.cdf(stats.norm.ppf(x) - mu))

    return inverse


def recursive_consistent(m: int, r: int, v: int, inverse: Callable[[float], float], *, confidence: float) -> bool:
    """Mahloujifar et al.'s test (module docstring): True when the trade-off whose inverse blow-up is ``inverse`` is
    consistent with ``v`` right guesses of ``r`` (``m`` canaries) at ``confidence``; False when it is rejected."""
    m = check_positive_int("m", m)
    r = check_positive_int("r", r, minimum=0)
    v = check_positive_int("v", v, minimum=0)
    if not v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if not callable(inverse):
        raise ValueError("inverse must be a callable x -> B^-1(x)")
    confidence = check_open_unit("confidence", confidence)
    if r == 0:
        return True
    tau = (1.0 - confidence) * r / m
    rr, hh = tau * v / r, tau * (r - v) / r
    for i in range(v - 1, -1, -1):
        h_new = max(hh, inverse(rr))
        rr = rr + i / (r - i) * (h_new - hh)
        hh = h_new
    return rr + hh <= r / m


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
    method: str = "envelope",
) -> FamilyOneRunBound:
    """The family one-run bound (module docstring).  ``delta_of(theta, eps)``: δ of the family member θ at ε;
    ``epsilon_of(theta, delta)``: its ε at δ; both non-decreasing in θ.  θ is searched in (0, ``theta_max``] by
    bisection to ``tol`` (rejection is monotone in θ for a nested family).  ``method``: ``"envelope"`` (Steinke et
    al.'s p-value along f's (ε, δ(ε)) curve) or ``"recursive"`` (Mahloujifar et al.'s recursion with B⁻¹ of f on
    ``eps_grid``), chosen before the data are seen: the larger of the two would not hold at the confidence.  Returns
    θ_lb = 0 and ε = 0 when even a nearly non-private member cannot be rejected."""
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
    check_choice("method", method, METHODS)
    beta = 1.0 - confidence
    grid = [float(e) for e in eps_grid]

    def rejected(theta: float) -> bool:
        if method == "recursive":
            inverse = inverse_blow_up(grid, [min(1.0, max(0.0, float(delta_of(theta, e)))) for e in grid])
            return not recursive_consistent(m, r, v, inverse, confidence=confidence)
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
