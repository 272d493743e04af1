"""Paper 000, App. B.2: the general engine behind Theorems 3.1/B.4 -- Lemma B.3 and Theorem B.2.

**Lemma B.3** (the explicit higher-order term of Abadi et al.'s Lemma 3).  For one round with sample size s,
data set size N, noise multiplier σ ≥ 216/215, r0 < 1 with s/N ≤ r0/σ, and an integer λ ≤ σ² ln(N/(sσ)):

    α(λ) ≤ s²λ(λ+1)/(N(N−s)σ²) + (r/r0)·s³λ²(λ+1)/(N(N−s)²σ³),
    r/r0 = 8(1/(1 − u0) + e³/(σ³(1 − u1)))e^{3/σ²},  u0 = 2sqrt(λr0/σ)/(σ − r0),  u1 = u0·e/σ  (both < 1).

**Composition** (Abadi et al. Thm 2): δ ≥ min_λ exp(Σ_i α_i(λ) − λε), i.e. ε(δ) = min_λ (Σ_i α_i(λ) + ln(1/δ))/λ
over the admissible integers λ: a numerical moments accountant with fully explicit constants
(:func:`moments_epsilon`).  It is a rigorous bound, looser than RDP because of the cruder tail terms.

**Theorem B.2** (closed form): with Ŝ_j = (1/T)Σ s_i^j/(N(N − s_i)^{j−1}), ρ = Ŝ1Ŝ3/Ŝ2², ρ̂ = Ŝ1²/Ŝ2,
c1 = ε/(TŜ1²), c0 = min{(sqrt(2rρc1 + 1) − 1)/(rρc1), 2/(ρ̂c1)}, the mechanism is (ε, δ)-DP if
σ ≥ (2/√c0)·sqrt(Ŝ2 T(ε + ln(1/δ)))/ε, provided r0 ≤ 1/e, u0, u1 < 1 (λ-free versions) and s_i/N ≤ r0/σ.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpcore.papers.p000_proactive.calculator import check_count, check_epsilon, check_sigma, check_size
from dpcore.validation import check_open_unit, check_positive, check_positive_int, check_range, check_real_array

__all__ = ["lemma_b3_bound", "moments_epsilon", "theorem_b2"]

E = math.e
SIGMA_MIN = 216 / 215


def _check_round(s: float, N: int, sigma: float, r0: float | None) -> tuple[float, int, float, float]:
    s = check_count("s", s)
    N = check_size("N", N)
    sigma = check_sigma("sigma", sigma)
    if s >= N:
        raise ValueError(f"s must be < N, got s={s}, N={N}")
    if sigma < SIGMA_MIN:
        raise ValueError(f"sigma must be >= 216/215 for Lemma B.3, got {sigma}")
    r0 = sigma * s / N if r0 is None else check_positive("r0", r0)
    if r0 >= 1:
        raise ValueError(f"r0 must be < 1 (needs s/N <= r0/sigma < 1/sigma), got r0={r0}")
    if s / N > r0 / sigma * (1 + 1e-12):
        raise ValueError(f"Lemma B.3 needs s/N <= r0/sigma, got s/N={s / N:.4g}, r0/sigma={r0 / sigma:.4g}")
    return s, N, sigma, r0


def lemma_b3_bound(lam: int | np.ndarray, s: float, N: int, sigma: float, *, r0: float | None = None):
    """Lemma B.3's bound on the log moment α(λ) of one round (``r0`` defaults to σs/N, the smallest allowed).

    Returns ``inf`` where λ is not admissible (λ > σ² ln(N/(sσ)) or u0, u1 ≥ 1).
    """
    s, N, sigma, r0 = _check_round(s, N, sigma, r0)
    lam = check_real_array("lam", lam, low=0.0)
    u0 = 2 * np.sqrt(lam * r0 / sigma) / (sigma - r0)
    u1 = u0 * E / sigma
    lam_max = sigma**2 * math.log(N / (s * sigma)) if N > s * sigma else 0.0
    ok = (lam >= 1) & (lam <= lam_max) & (u0 < 1) & (u1 < 1)
    # overflow makes the bound +inf, which is still an upper bound (and λ that large is inadmissible anyway)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = 8 * (1 / (1 - u0) + E**3 / (sigma**3 * (1 - u1))) * math.exp(3 / sigma**2)
        val = s**2 * lam * (lam + 1) / (N * (N - s) * sigma**2) + ratio * s**3 * lam**2 * (lam + 1) / (
            N * (N - s) ** 2 * sigma**3
        )
    out = np.where(ok, val, np.inf)
    return float(out) if out.ndim == 0 else out


def moments_epsilon(
    sigma: float, sample_sizes: Sequence[float] | float, N: int, delta: float, *, rounds: int | None = None
) -> float:
    """ε(δ) = min_λ (Σ_i α_i(λ) + ln(1/δ))/λ with α_i from :func:`lemma_b3_bound` (integer λ).

    ``sample_sizes`` is the sequence s_0..s_{T−1}, or one constant s together with ``rounds`` = T.
    Returns ``inf`` when no λ is admissible.
    """
    delta = check_open_unit("delta", delta)
    sigma = check_sigma("sigma", sigma)
    N = check_size("N", N)
    sample_sizes = check_real_array("sample_sizes", sample_sizes, low=1.0)
    if np.max(sample_sizes) >= N:
        raise ValueError(f"sample_sizes must be below N={N}, got a largest value of {np.max(sample_sizes):g}")
    if sample_sizes.ndim == 0:
        if rounds is None:
            raise ValueError("rounds is required with a constant sample size")
        sizes, counts = np.array([float(sample_sizes)]), np.array([check_positive_int("rounds", rounds)])
    else:
        if sample_sizes.ndim != 1 or sample_sizes.size > 10**6:
            raise ValueError("sample_sizes must be a number or a 1-D sequence of at most 1e6 numbers in [1, N)")
        if rounds is not None:
            check_positive_int("rounds", rounds)
        sizes, counts = np.unique(sample_sizes, return_counts=True)
    lam_max = int(sigma**2 * math.log(N / (sizes.max() * sigma))) if N > sizes.max() * sigma else 0
    if lam_max < 1:
        return math.inf
    lam = np.arange(1, min(lam_max, 100_000) + 1, dtype=float)
    total = np.zeros_like(lam)
    for s, c in zip(sizes, counts, strict=True):
        total += c * np.asarray(lemma_b3_bound(lam, s, N, sigma))
    eps = (total + -math.log(delta)) / lam
    return float(np.min(eps))


def theorem_b2(
    sigma: float,
    epsilon: float,
    delta: float,
    sample_sizes: Sequence[float],
    N: int,
    *,
    r0: float | None = None,
) -> dict:
    """Theorem B.2 for a sample-size sequence: the required σ and whether ``sigma`` meets it.

    ``r0`` defaults to σ·max(s_i)/N (the smallest value allowed by s_i/N ≤ r0/σ).  Returns the intermediate
    quantities (Ŝ1..Ŝ3, ρ, ρ̂, r, u0, u1, c1, c0), ``sigma_required``, the side conditions and ``holds``; u0, u1 and
    ``sigma_required`` are ∞ when σ ≤ r0 or u0, u1 ≥ 1 (the theorem does not apply).  ``r0`` in (0, 1].
    """
    sigma = check_sigma("sigma", sigma)
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    N = check_size("N", N)
    s = check_real_array("sample_sizes", sample_sizes, low=1.0, ndim=1)
    if s.size > 10**7:
        raise ValueError(f"sample_sizes must hold at most 1e7 rounds, got {s.size}")
    T = s.size
    if s.max() >= N:
        raise ValueError(f"sample_sizes must be below N={N}, got a largest value of {s.max():g}")
    r0 = sigma * s.max() / N if r0 is None else check_range("r0", check_positive("r0", r0), 0.0, 1.0)
    S = [float(np.sum(s**j / (N * (N - s) ** (j - 1))) / T) for j in (1, 2, 3)]
    rho = S[0] * S[2] / S[1] ** 2
    rho_hat = S[0] ** 2 / S[1]
    u0 = 2 * math.sqrt(r0 * sigma) / (sigma - r0) if sigma > r0 else math.inf
    u1 = 2 * E * math.sqrt(r0 * sigma) / ((sigma - r0) * sigma) if sigma > r0 else math.inf
    side = {
        "sigma>=216/215": sigma >= SIGMA_MIN,
        "r0<=1/e": r0 <= 1 / E,
        "u0<1": u0 < 1,
        "u1<1": u1 < 1,
        "s/N<=r0/sigma": bool(np.all(s / N <= r0 / sigma * (1 + 1e-12))),
    }
    out = {"S1": S[0], "S2": S[1], "S3": S[2], "rho": rho, "rho_hat": rho_hat, "u0": u0, "u1": u1, "r0": r0}
    if not (side["u0<1"] and side["u1<1"]):
        return {**out, **side, "sigma_required": math.inf, "holds": False}
    r = r0 * 8 * (1 / (1 - u0) + E**3 / (sigma**3 * (1 - u1))) * math.exp(3 / sigma**2)
    c1 = epsilon / (T * S[0] ** 2)
    x = r * rho * c1
    c0 = min(2 / (math.sqrt(2 * x + 1) + 1), 2 / (rho_hat * c1))  # (sqrt(2x + 1) − 1)/x, without cancellation
    required = 2 / math.sqrt(c0) * math.sqrt(S[1] * T * (epsilon + -math.log(delta))) / epsilon
    holds = all(side.values()) and sigma >= required * (1 - 1e-12)
    return {**out, **side, "r": r, "c1": c1, "c0": c0, "sigma_required": required, "holds": holds}
