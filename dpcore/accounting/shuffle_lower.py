"""A LOWER bound on ε for shuffled batches under the standard adversary (Chua et al. 2024).

Shuffled DP-SGD (one permutation per epoch, b disjoint batches) has no tight accountant: the A_1 analysis of
:mod:`dpcore.accounting.shuffled` (G_{√E/σ} for batch clipping with g = 1) is a rigorous *upper* bound, and the common
practice of accounting the run as if Poisson-subsampled at q = 1/b is not a bound at all.  Chua, Ghazi, Kamath,
Kumar, Manurangsi, Sinha, Zhang ("How Private are DP-SGD Implementations?", ICML 2024, §4, single epoch; "Scalable
DP-SGD: Shuffling vs. Poisson Subsampling", NeurIPS 2024, §3, E epochs with reshuffling) bound it from *below*:
a pair of neighbouring inputs whose outputs, per epoch, are

    P = (1/b) Σ_t N(a·e_t, σ² I_b)   and   Q = (1/b) Σ_t N(a'·e_t, σ² I_b)

(the differing example lands in a uniform one of the b rounds; noise σ per unit sensitivity), and the hockey-stick
divergence of P^⊗E against Q^⊗E is at least that of any post-processing -- they use the events {max_t x_t > C}.

This module computes that lower bound from the statistic M = max_t x_t of each epoch, whose CDF is closed-form,
Φ((c − a)/σ)·Φ(c/σ)^{b−1}: M is cut into slices (a post-processing, so the slices' divergence is still a lower
bound), the per-epoch privacy losses of the slices are rounded *down* to a grid (which can only lower
E_P[(1 − e^{ε−L})₊]), and the E epochs are composed exactly on that grid (FFT).  Both directions (P‖Q, Q‖P) are
computed and the larger δ kept.  The result is a lower bound on the δ(ε) -- hence on the ε(δ) -- of the mechanism,
up to floating-point error, for any neighbouring pair that yields (P, Q).

Pairs: :data:`DIRAC_PAIR` (a, a') = (1, 0) is the replace-one Dirac canary of :mod:`dpcore.audit.shuffled` in
sensitivity units (its gradient +G against −G moves one round by 2C against noise 2Cσ, i.e. by 1 against σ after a
common shift), realisable by paper 003's Algorithm 1 with shuffling; :data:`CHUA_PAIR` (2, 1) is the pair of Chua et
al.'s code (google-research ``dpsgd_batch_sampler_accounting``, class ``ShuffleAccountant``), kept for comparison.
With b = 1 round per epoch both pairs are the Gaussian G_{1/σ} per epoch, so the bound meets the A_1 upper bound
G_{√E/σ} there (tests).

>>> round(shuffle_lower_epsilon(2.0, rounds_per_epoch=1, epochs=4, delta=1e-5), 2)  # = ε(G_1) = 4.36 within grid
4.36
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import signal, stats

from dpcore.validation import check_open_unit, check_positive, check_positive_int

__all__ = ["DIRAC_PAIR", "CHUA_PAIR", "shuffle_lower_delta", "shuffle_lower_epsilon"]

DIRAC_PAIR = (0.5, -0.5)
CHUA_PAIR = (2.0, 1.0)


def _check_pair(pair: tuple[float, float]) -> tuple[float, float]:
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise ValueError(f"pair must be a tuple (a, a') of two shifts, got {pair!r}")
    a, b = (float(v) for v in pair)
    if not (math.isfinite(a) and math.isfinite(b)) or a == b:
        raise ValueError(f"pair must hold two different finite shifts, got {pair!r}")
    return a, b


def _log_cdf(c: np.ndarray, shift: float, sigma: float, rounds: int) -> np.ndarray:
    """log P[max_t x_t ≤ c] under (1/b) Σ_t N(shift·e_t, σ² I_b)."""
    return stats.norm.logcdf((c - shift) / sigma) + (rounds - 1) * stats.norm.logcdf(c / sigma)


def _slice_probs(edges: np.ndarray, shift: float, sigma: float, rounds: int) -> np.ndarray:
    """Probabilities of (−∞, e_0], (e_0, e_1], …, (e_{n−1}, ∞) under the shift (CDF below the middle, survival above,
    so that neither tail loses precision)."""
    log_f = _log_cdf(edges, shift, sigma, rounds)
    cdf = np.exp(log_f)
    surv = -np.expm1(log_f)
    lower = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    upper = -np.diff(np.concatenate([[1.0], surv, [0.0]]))
    use_upper = np.concatenate([cdf > 0.5, [True]])
    return np.clip(np.where(use_upper, upper, lower), 0.0, None)


@lru_cache(maxsize=32)
def _composed(sigma: float, rounds: int, epochs: int, pair: tuple[float, float], grid: float, slices: int):
    """For both directions: the pmf of the E-epoch privacy loss (rounded down per epoch to ``grid``) under the first
    distribution, as (offset index, pmf)."""
    a, b = pair
    lo = min(a, b) + sigma * stats.norm.ppf(1e-18 ** (1.0 / rounds)) if rounds > 1 else min(a, b) - 12 * sigma
    hi = max(a, b) + 12 * sigma
    edges = np.linspace(lo, hi, slices)
    p, q = _slice_probs(edges, a, sigma, rounds), _slice_probs(edges, b, sigma, rounds)
    out = []
    for first, second in ((p, q), (q, p)):
        keep = (first > 0) & (second > 0)
        loss = np.log(first[keep]) - np.log(second[keep])
        k = np.floor(loss / grid).astype(np.int64)
        base = int(k.min())
        pmf = np.bincount(k - base, weights=first[keep])
        total, offset = np.array([1.0]), 0
        power, poff, n = pmf, base, epochs
        while n:  # exponentiation by squaring of the per-epoch pmf
            if n & 1:
                total, offset = np.clip(signal.fftconvolve(total, power), 0, None), offset + poff
            n >>= 1
            if n:
                power, poff = np.clip(signal.fftconvolve(power, power), 0, None), 2 * poff
        out.append((offset, total))
    return tuple(out)


def shuffle_lower_delta(
    sigma: float,
    *,
    rounds_per_epoch: int,
    epochs: int,
    epsilon: float,
    pair: tuple[float, float] = DIRAC_PAIR,
    grid: float = 5e-4,
    slices: int = 4000,
) -> float:
    """A lower bound on δ(ε) of E = ``epochs`` epochs of b = ``rounds_per_epoch`` shuffled rounds with noise σ per
    unit sensitivity (module docstring; Chua et al. 2024).  ``grid``: the loss grid (each epoch's loss is rounded down
    by < ``grid``); ``slices``: cuts of max_t x_t."""
    sigma = check_positive("sigma", sigma)
    rounds = check_positive_int("rounds_per_epoch", rounds_per_epoch)
    epochs = check_positive_int("epochs", epochs)
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 <= epsilon < math.inf:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    pair = _check_pair(pair)
    grid = check_positive("grid", grid)
    slices = check_positive_int("slices", slices, minimum=10)
    best = 0.0
    for offset, pmf in _composed(sigma, rounds, epochs, pair, grid, slices):
        losses = (offset + np.arange(pmf.size)) * grid
        gain = -np.expm1(np.minimum(epsilon - losses, 0.0))  # (1 − e^{ε − L})₊
        best = max(best, float(np.sum(pmf * gain)))
    return min(1.0, best)


def shuffle_lower_epsilon(
    sigma: float,
    *,
    rounds_per_epoch: int,
    epochs: int,
    delta: float,
    pair: tuple[float, float] = DIRAC_PAIR,
    grid: float = 5e-4,
    slices: int = 4000,
    tol: float = 1e-3,
) -> float:
    """The ε(δ) lower bound: the largest ε whose :func:`shuffle_lower_delta` still exceeds ``delta`` (bisection to
    ``tol``); 0 when δ(0) ≤ ``delta``.  The mechanism's true ε(δ) is at least this (Chua et al. 2024)."""
    delta = check_open_unit("delta", delta)
    tol = check_positive("tol", tol)

    def d(e: float) -> float:
        return shuffle_lower_delta(sigma, rounds_per_epoch=rounds_per_epoch, epochs=epochs, epsilon=e, pair=pair,
                                   grid=grid, slices=slices)  # fmt: skip

    if d(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while d(hi) > delta:
        lo, hi = hi, 2 * hi
        if hi > 1e4:
            return math.inf
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if d(mid) > delta:
            lo = mid
        else:
            hi = mid
    return lo
