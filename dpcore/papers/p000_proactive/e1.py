"""Paper 000, App. E.1: the DP calculator based on Theorem B.4, and the multi-phase schedule of App. E (Fig. 15).

A client has already run phases 0..j−1 with sample sizes s_i over K_i gradient computations (T_i = K_i/s_i
rounds) and now wants K_j more with a lower σ_j (j > 0) or a first σ_0 (j = 0).  For a candidate s_j = s:

1. δ = 1/N, T_j = K_j/s, K = Σ K_i, T = Σ T_i, s̄ = K/T, θ = max_i s_i / s̄;
2. γ = 2;
3. ε = γθ²s̄K/N² ((34) with equality); j = 0: σ = sqrt(2(ε + ln(1/δ))/ε) ((35) with equality);
   j > 0: σ = σ_j and ε = max{ε solving σ_j = eq. (6), γθ²s̄K/N²}; ᾱ = εN/(γK);
4. γ_new = F(ᾱ, σ); 5. repeat 3–4 until γ has converged;
6. accept when (32), (33) and ε ≤ ε_target hold, then try a larger s; the last accepted s is the maximum.

``mode="theorem"`` solves step 5 exactly: γ is the smallest solution of γ ≥ F(ᾱ(γ), σ(γ)) (a sign-change scan
then brentq; γ − F is negative at γ = 2 because F > 2).  ``mode="paper"`` reproduces Tables 6–8: a single
update γ = F(2) and the σ rule σ = sqrt(2 ln(1/δ)/ε) (reproduces Tables 6–8).

>>> round(e1_paper_sigma(168, 10_000, 50_000, 1e-4)[2], 5)      # Table 6, row (0.5, 1e-4)
6.05868
>>> r = max_sample_size_e1(10_000, 50_000, 0.04945, delta=1e-4)  # App. E.1 with eq. (6) and γ solved
>>> r.s, round(r.sigma, 4)
(31, 19.5966)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from dpcore.papers.p000_proactive import calculator as pr
from dpcore.validation import check_choice, check_open_unit, check_positive_int, check_sequence

__all__ = ["E1Result", "e1_evaluate", "e1_paper_sigma", "max_sample_size_e1", "schedule"]


@dataclass(frozen=True)
class E1Result:
    """One evaluation of the E.1 calculator at sample size ``s`` for phase j.  Where the γ iteration has no
    solution (no candidate), ``epsilon`` and ``gamma`` are ∞ (no guarantee), ``sigma`` is σ_j or ∞, and
    ``admissible`` is False."""

    s: int
    epsilon: float
    sigma: float
    gamma: float
    theta: float
    s_bar: float
    K: float
    T: float
    T_j: float
    conditions: dict = field(default_factory=dict)
    admissible: bool = False

    def accepted(self, epsilon_target: float) -> bool:
        return self.admissible and self.epsilon <= epsilon_target * (1 + 1e-12)


def e1_paper_sigma(s: int, N: int, K: float, delta: float) -> tuple[float, float, float]:
    """The paper-mode E.1 step at a given s (j = 0, θ = 1): (γ_1, ε_1, σ) with γ_1 = F(2; σ_0, ε_0, k),
    ε_0 = 2sK/N², σ_0 = sqrt(2 ln(1/δ)/ε_0), ε_1 = γ_1 sK/N², σ = sqrt(2 ln(1/δ)/ε_1): the σ column of
    Tables 6–8 (∞ where the γ update is undefined)."""
    K = pr.check_count("K", K)
    if K < check_positive_int("s", s):
        raise ValueError(f"K must be at least s (one round), got K={K:g}, s={s}")
    delta = check_open_unit("delta", delta)
    r = e1_evaluate(s, N, K, delta=delta, mode="paper")
    return r.gamma, r.epsilon, r.sigma


def _history(history: Sequence[tuple[float, float]], N: int) -> list[tuple[float, float]]:
    """[(s_i, K_i)] of the earlier phases: at most 1000 pairs of counts with s_i <= N."""
    out = []
    for item in check_sequence("history", history, min_len=0):
        if len(out) == 1000 or isinstance(item, str) or not hasattr(item, "__len__") or len(item) != 2:
            raise ValueError(f"history must be a sequence of at most 1000 pairs (s_i, K_i), got {item!r}")
        s_i, k_i = pr.check_count("history", item[0]), pr.check_count("history", item[1])
        if s_i > N:
            raise ValueError(f"history sample sizes must be <= N={N}, got {s_i}")
        out.append((s_i, k_i))
    return out


def _phase(s: int, K_j: float, history: Sequence[tuple[float, float]]) -> tuple[float, float, float, float]:
    Ks = [float(k) for _, k in history] + [float(K_j)]
    Ts = [float(k) / float(si) for si, k in history] + [float(K_j) / s]
    K = sum(Ks)
    T = sum(Ts)
    s_bar = K / T
    theta = max([float(si) for si, _ in history] + [float(s)]) / s_bar
    return K, T, s_bar, theta


def e1_evaluate(
    s: int,
    N: int,
    K_j: float,
    *,
    delta: float | None = None,
    history: Sequence[tuple[float, float]] = (),
    sigma_j: float | None = None,
    mode: str = "theorem",
    formula: str = "paper",
) -> E1Result:
    """Steps 1–6 of App. E.1 for one candidate s (``history`` = [(s_i, K_i)] of the earlier phases; ``sigma_j``
    is required for j > 0).  ``admissible`` says whether (32) and (33) hold (the ε target is checked by the caller)."""
    N = pr.check_size("N", N)
    s = check_positive_int("s", s)
    if s > N:
        raise ValueError(f"s must be in [1, N={N}], got {s}")
    K_j = pr.check_count("K_j", K_j)
    if K_j < s:
        raise ValueError(f"K_j must be at least s (one round), got K_j={K_j}, s={s}")
    check_choice("mode", mode, pr.MODES)
    check_choice("formula", formula, pr.GAMMA_FORMULAS)
    delta = 1.0 / N if delta is None else check_open_unit("delta", delta)
    if delta >= 1:
        raise ValueError(f"delta = 1/N must be below 1: N must be at least 2, got N={N}")
    history = _history(history, N)
    if history and sigma_j is None:
        raise ValueError("sigma_j is required for a phase j > 0 (non-empty history)")
    if sigma_j is not None:
        sigma_j = pr.check_sigma("sigma_j", sigma_j)
    K, T, s_bar, theta = _phase(s, K_j, history)
    if K / N > pr.EPOCHS_MAX or theta > pr.THETA_MAX:
        raise ValueError(f"K_j and history give K/N = {K / N:.3g} epochs (at most {pr.EPOCHS_MAX:g}) and theta = "
                         f"{theta:.3g} (at most {pr.THETA_MAX:g})")  # fmt: skip
    rule = "theorem" if mode == "theorem" else "paper"
    if sigma_j is not None and rule == "theorem" and sigma_j**2 <= 2:
        raise ValueError(f"sigma_j must satisfy sigma_j**2 > 2 for eq. (6), got {sigma_j}")
    eps_floor = pr.epsilon(sigma_j, delta, mode=rule) if sigma_j is not None else 0.0

    def eps_of(g: float) -> float:
        return max(eps_floor, g * theta**2 * s_bar * K / N**2)

    def sig_of(eps: float) -> float:
        return sigma_j if sigma_j is not None else pr.sigma(eps, delta, mode=rule)

    def in_domain(eps: float) -> bool:
        """ε and its σ inside the calculator's domain (outside it there is no candidate)."""
        if not pr.EPSILON_RANGE[0] <= eps <= pr.EPSILON_RANGE[1]:
            return False
        sigmas = (sig_of(eps), pr.sigma(eps, delta, mode=rule))
        return all(pr.SIGMA_RANGE[0] <= v <= pr.SIGMA_RANGE[1] for v in sigmas)

    def rhs(g: float) -> float:
        eps = eps_of(g)
        if not in_domain(eps):
            return math.inf
        return pr.gamma_rhs_alpha(min(eps * N / (g * K), 1e300), sig_of(eps), formula=formula)

    def result(g: float | None) -> E1Result:
        eps = eps_of(g) if g is not None and math.isfinite(g) else math.inf
        if not in_domain(eps):
            no_sigma = math.inf if sigma_j is None else sigma_j
            return E1Result(s, math.inf, no_sigma, math.inf, theta, s_bar, K, T, K_j / s, {}, False)
        sig = sig_of(eps)
        c32 = theta * s_bar <= pr.g_bound(pr.sigma(eps, delta, mode=rule)) * N * (1 + 1e-12)
        c33 = eps <= g * pr.h_bound(sig) * K / N * (1 + 1e-12)
        return E1Result(s, eps, sig, g, theta, s_bar, K, T, K_j / s, {"32": c32, "33": c33}, c32 and c33)

    if mode == "paper":
        g1 = rhs(2.0)
        return result(g1 if math.isfinite(g1) else None)
    return result(_smallest_fixed_point(rhs))


def _smallest_fixed_point(rhs, *, g_lo: float = 2.0, g_cap: float = 1e6, n_grid: int = 240) -> float | None:
    """Smallest γ ≥ 2 with γ ≥ rhs(γ): scan a geometric grid for the first sign change of γ − rhs(γ), then brentq.

    rhs is +inf outside its domain; None when no solution exists below ``g_cap``.
    """

    def diff(g: float) -> float:
        r = rhs(g)
        return g - r if math.isfinite(r) else -math.inf

    grid = np.geomspace(g_lo, g_cap, n_grid)
    prev = g_lo
    if diff(prev) >= 0:  # pragma: no cover - rhs > 2 always
        return prev
    for g in grid[1:]:
        if diff(g) >= 0:
            lo, hi = prev, g
            # the left end may sit at -inf (outside the domain): bisect to a finite point first
            return float(optimize.brentq(lambda x: max(diff(x), -1e300), lo, hi, xtol=1e-14, rtol=1e-15))
        prev = g
    return None


def max_sample_size_e1(
    N: int,
    K_j: float,
    epsilon_target: float,
    *,
    delta: float | None = None,
    history: Sequence[tuple[float, float]] = (),
    sigma_j: float | None = None,
    mode: str = "theorem",
    formula: str = "paper",
    search: str = "bisect",
    s_limit: int | None = None,
    s_start: int | None = None,
) -> E1Result:
    """Largest s accepted by the E.1 calculator (the fewest rounds), with its (ε, σ, γ).

    The search starts at ``s_start``: 1 for the first phase (App. E.1 "we start our calculation with s_j = 1"),
    and by default the largest earlier s_i for a later phase.  Erratum: for j > 0 the literal start s_j = 1 makes
    θ = s_max/s̄ ≫ 1 and is rejected at once, although larger s_j are accepted (θ²s̄ is smallest at s_j = max s_i);
    ``s_start=1`` reproduces the literal loop.  ``search="scan"`` is the loop s, s + 1, … until the first
    rejection; ``"bisect"`` finds the same s by bisection, relying on acceptance failing once beyond the start
    (ε grows with s there, and (32)/(33) fail once); the tests check both agree.  ``s_limit`` caps s (default
    min(N, K_j)).  Raises ValueError when the start itself is rejected.
    """
    N = pr.check_size("N", N)
    K_j = pr.check_count("K_j", K_j)
    epsilon_target = pr.check_epsilon("epsilon_target", epsilon_target)
    check_choice("search", search, ("bisect", "scan"))
    history = _history(history, N)
    s_limit = int(min(N, K_j)) if s_limit is None else check_positive_int("s_limit", s_limit, maximum=N)
    if search == "scan" and s_limit > 10**6:
        raise ValueError(f"s_limit must be at most 1e6 with search='scan' (one evaluation per s), got {s_limit}")
    if s_start is None:
        s_start = min(s_limit, int(max(si for si, _ in history))) if history else 1
    s_start = check_positive_int("s_start", s_start)
    if s_start > s_limit:
        raise ValueError(f"s_start must be <= s_limit, got {s_start} > {s_limit}")

    def ev(s: int) -> E1Result:
        return e1_evaluate(s, N, K_j, delta=delta, history=history, sigma_j=sigma_j, mode=mode, formula=formula)

    first = ev(s_start)
    if not first.accepted(epsilon_target):
        raise ValueError(
            f"no sample size is accepted for N={N}, K_j={K_j:g}, epsilon_target={epsilon_target:g}, sigma_j={sigma_j}: "
            f"at s = {s_start}, epsilon = {first.epsilon:.4g}, theta = {first.theta:.4g}, conditions {first.conditions}"
        )
    if search == "scan":
        best = first
        for s in range(s_start + 1, s_limit + 1):
            r = ev(s)
            if not r.accepted(epsilon_target):
                break
            best = r
        return best
    top = ev(s_limit)
    if top.accepted(epsilon_target):
        return top
    lo, lo_res, hi = s_start, first, s_limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = ev(mid)
        if r.accepted(epsilon_target):
            lo, lo_res = mid, r
        else:
            hi = mid
    return lo_res


def schedule(
    N: int,
    phases: Sequence[tuple],
    epsilon_target: float,
    *,
    delta: float | None = None,
    mode: str = "theorem",
    formula: str = "paper",
    on_infeasible: str = "raise",
) -> list[E1Result]:
    """The App. E / Fig. 15 loop as a function: ``phases`` = [(σ_j, K_j) or (σ_j, K_j, s_limit_j)] with σ_0 = None
    (chosen by the calculator from ε), then a decreasing σ_j for every continuation after an unsatisfactory
    accuracy check; ``s_limit_j`` optionally caps the batch of a phase (e.g. memory).

    Each phase gets the E.1 maximum s_j given the earlier (s_i, K_i), pretending that all earlier rounds used
    the new, lower σ_j (conservative).  Returns one :class:`E1Result` per phase.  A phase that cannot meet
    ε_target means the client must stop participating: ``on_infeasible="raise"`` raises ValueError,
    ``"stop"`` returns the phases completed so far.
    """
    check_choice("on_infeasible", on_infeasible, ("raise", "stop"))
    phases = check_sequence("phases", phases)
    if len(phases) > 100:
        raise ValueError(f"phases must hold at most 100 phases, got {len(phases)}")
    out: list[E1Result] = []
    history: list[tuple[float, float]] = []
    prev_sigma = math.inf
    for j, phase in enumerate(phases):
        if isinstance(phase, str) or not hasattr(phase, "__len__") or len(phase) not in (2, 3):
            raise ValueError(f"phases: phase {j} must be (sigma_j, K_j) or (sigma_j, K_j, s_limit_j), got {phase!r}")
        sigma_j, K_j = phase[0], phase[1]
        s_limit = phase[2] if len(phase) == 3 else None
        if j == 0 and sigma_j is not None:
            raise ValueError("sigma_0 must be None: the first phase derives sigma from epsilon")
        if j > 0:
            if sigma_j is None:
                raise ValueError(f"phase {j} needs sigma_j")
            if not pr.check_sigma("sigma_j", sigma_j) < prev_sigma:
                raise ValueError(f"sigma_j must decrease from phase to phase, got {sigma_j} after {prev_sigma}")
        try:
            r = max_sample_size_e1(
                N,
                K_j,
                epsilon_target,
                delta=delta,
                history=history,
                sigma_j=sigma_j,
                mode=mode,
                formula=formula,
                s_limit=s_limit,
            )
        except ValueError:
            if on_infeasible == "stop" and j > 0:
                break
            raise
        out.append(r)
        history.append((float(r.s), float(K_j)))
        prev_sigma = r.sigma
    return out
