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

Pairs (shifts in units of the sensitivity 2C of paper 003's Algorithm 1, noise σ per unit): :data:`REPLACE_ONE_PAIR`
(a, a') = (1, 0) is the strongest replace-one pair of Algorithm 1 -- every other sample's clipped gradient −C, the
differing sample's +C against −C, so the round holding it moves by 2C against the rest in P and not at all in Q
(with batch clipping a canary gradient large enough that its batch's clipped mean is +C does the same);
:data:`DIRAC_PAIR` (½, −½) is the Dirac canary of :mod:`dpcore.audit.shuffled` (±G, every other gradient 0), weaker;
:data:`CHUA_PAIR` (2, 1) is the pair of Chua et al.'s code (google-research ``dpsgd_batch_sampler_accounting``, class
``ShuffleAccountant``: others −1, the differing input 1 against 0, in units of C with noise multiplier σ -- the
zero-out neighbouring relation of standard DP-SGD, the convention of a Poisson number computed at the same σ); it is
not realisable under Algorithm 1's replace-one relation at its σ (a shift of 2 units would need a 4C move).
With b = 1 round per epoch both pairs are the Gaussian G_{1/σ} per epoch, so the bound meets the A_1 upper bound
G_{√E/σ} there (tests).

>>> round(shuffle_lower_epsilon(2.0, rounds_per_epoch=1, epochs=4, delta=1e-5), 2)  # ε(G_1) = 4.377 (grid)
4.38
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import signal, stats

from dpcore.accounting.calibrate import epsilon_at_delta
from dpcore.validation import check_nonnegative, check_open_unit, check_positive, check_positive_int

__all__ = [
    "REPLACE_ONE_PAIR",
    "DIRAC_PAIR",
    "CHUA_PAIR",
    "PAIR_NAMES",
    "ShuffledEpsilons",
    "shuffle_lower_delta",
    "shuffle_lower_epsilon",
    "shuffled_epsilons",
]

REPLACE_ONE_PAIR = (1.0, 0.0)
DIRAC_PAIR = (0.5, -0.5)
CHUA_PAIR = (2.0, 1.0)
PAIR_NAMES = {
    REPLACE_ONE_PAIR: "replace-one pair (+C vs −C, others −C; realisable by Algorithm 1)",
    DIRAC_PAIR: "Dirac canary pair (±C, others 0; dpcore.audit.shuffled)",
    CHUA_PAIR: "Chua et al.'s pair (means (2, 1): zero-out neighbours at multiplier σ)",
}


#: Mass dropped from each end of a convolution's result (:func:`_trimmed`): δ is lowered by at most ~1e-18.
TRIM_MASS = 1e-20
#: Largest number of epochs at any setting; the composed distribution must also fit :data:`MAX_BINS` bins (E = 1,000
#: at σ = 1, b = 100 takes 5 s; a setting beyond either is refused with a ValueError naming ``epochs``).
MAX_EPOCHS = 10**6
#: Most bins of the composed loss distribution (32 MB a copy).
MAX_BINS = 2**22


def _check_epochs(epochs: object) -> int:
    epochs = check_positive_int("epochs", epochs)
    if epochs > MAX_EPOCHS:
        raise ValueError(
            f"epochs must be an integer in [1, {MAX_EPOCHS:.0e}] for the shuffled lower bound, got {epochs}"
        )
    return epochs


def _check_pair(pair: tuple[float, float]) -> tuple[float, float]:
    bad = f"pair must be a tuple (a, a') of two different finite numbers (the shifts), got {pair!r}"
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise ValueError(bad)
    if any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in pair):
        raise ValueError(bad)
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
        total, offset, done = np.array([1.0]), 0, 0
        power, poff, n, span = pmf, base, epochs, 1
        while n:  # exponentiation by squaring of the per-epoch pmf (span: the epochs ``power`` composes)
            if n & 1:
                total, offset = _trimmed(signal.fftconvolve(total, power), offset + poff)
                done += span
                _check_bins(total.size, done, epochs, sigma, rounds, grid)
            n >>= 1
            if n:
                power, poff = _trimmed(signal.fftconvolve(power, power), 2 * poff)
                span *= 2
                _check_bins(power.size, span, epochs, sigma, rounds, grid)
        out.append((offset, total))
    return tuple(out)


def _check_bins(size: int, covered: int, epochs: int, sigma: float, rounds: int, grid: float) -> None:
    """``ValueError`` naming ``epochs`` once a partial composition of ``covered`` epochs holds more than
    :data:`MAX_BINS` bins (memory and time bound: E = 10,000 at σ = 1, b = 100 needed 35M bins, 100 s, 3 GB)."""
    if size > MAX_BINS:
        most = max(1, int(MAX_BINS * covered / size))
        raise ValueError(
            f"epochs must be at most about {most} at sigma={sigma:g}, rounds_per_epoch={rounds}, grid={grid:g} "
            f"(the composed loss distribution would need more than {MAX_BINS} bins), got {epochs}; a coarser grid "
            "allows more"
        )


def _trimmed(pmf: np.ndarray, offset: int) -> tuple[np.ndarray, int]:
    """``pmf`` (clipped at 0) without its end bins holding at most :data:`TRIM_MASS` each side: the composition's
    length then grows like √E rather than E (E = 1,000 took 35 s and 5.3 GB untrimmed).  Dropping mass can only lower
    δ, so the result stays a lower bound (by at most 2·TRIM_MASS per convolution)."""
    pmf = np.clip(pmf, 0, None)
    cum = np.cumsum(pmf)
    lo = int(np.searchsorted(cum, TRIM_MASS, side="right"))
    hi = pmf.size - int(np.searchsorted(cum[-1] - cum[::-1], TRIM_MASS, side="right"))
    if hi <= lo:
        return pmf, offset
    return pmf[lo:hi], offset + lo


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
    setting = _check_setting(sigma, rounds_per_epoch, epochs, pair, grid, slices)
    return _lower_delta(setting, check_nonnegative("epsilon", epsilon))


def _check_setting(sigma: object, rounds: object, epochs: object, pair: object, grid: object, slices: object) -> tuple:
    """(σ, b, E, pair, grid, slices) checked: the entry points' one check (:func:`_lower_delta` trusts it)."""
    sigma, rounds = check_positive("sigma", sigma), check_positive_int("rounds_per_epoch", rounds)
    epochs, pair = _check_epochs(epochs), _check_pair(pair)
    return sigma, rounds, epochs, pair, check_positive("grid", grid), check_positive_int("slices", slices, minimum=10)


def _lower_delta(setting: tuple, epsilon: float) -> float:
    """:func:`shuffle_lower_delta` of a checked ``setting`` (:func:`_check_setting`) at ``epsilon`` >= 0."""
    grid = setting[4]
    best = 0.0
    for offset, pmf in _composed(*setting):
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
    setting = _check_setting(sigma, rounds_per_epoch, epochs, pair, grid, slices)
    delta = check_open_unit("delta", delta)
    tol = check_positive("tol", tol)

    def d(e: float) -> float:
        return _lower_delta(setting, e)

    if d(0.0) <= delta:
        return 0.0
    return epsilon_at_delta(d, delta, tol=tol, lower=True)


@dataclass(frozen=True)
class ShuffledEpsilons:
    """The three numbers of one shuffled run (issue 42; ``docs/sharp_edges.md``), each an ε at ``delta``.

    ``poisson``: Poisson subsampling at q = 1/b for T = E·b steps (PLD) -- what is often reported for a shuffled
    run, and NOT valid for shuffling (Chua et al. 2024 show the true ε can exceed it); ``lower``: pair name ->
    this module's lower bound for shuffling under that neighbouring pair (the true ε is at least this, for a
    mechanism that realises the pair); ``upper``: the A_1 analysis G_{√E/σ} of paper 003 (Lemma F.2, g = 1), the
    rigorous upper bound.
    """

    sigma: float
    rounds_per_epoch: int
    epochs: int
    delta: float
    poisson: float
    lower: dict[str, float]
    upper: float

    def rows(self) -> list[dict[str, object]]:
        """(what, ε, status) rows in reading order: Poisson, each lower bound, upper bound."""
        rows = [{"what": f"Poisson accounting at q = 1/b = 1/{self.rounds_per_epoch}", "epsilon": self.poisson,
                 "status": "often reported; NOT valid for shuffling"}]  # fmt: skip
        rows += [{"what": f"lower bound for shuffling, {name}", "epsilon": value,
                  "status": "lower bound (Chua et al. 2024): the true ε is at least this"}
                 for name, value in self.lower.items()]  # fmt: skip
        rows.append({"what": "A_1 analysis G_{√E/σ} (paper 003, Lemma F.2)", "epsilon": self.upper,
                     "status": "rigorous upper bound"})  # fmt: skip
        return rows


def shuffled_epsilons(
    sigma: float,
    *,
    rounds_per_epoch: int,
    epochs: int,
    delta: float,
    pairs: tuple[tuple[float, float], ...] = (REPLACE_ONE_PAIR, CHUA_PAIR),
    grid: float = 5e-4,
    slices: int = 4000,
) -> ShuffledEpsilons:
    """Poisson accounting, the shuffled lower bound (:func:`shuffle_lower_epsilon`) under each of ``pairs`` and
    the A_1 upper bound of E = ``epochs`` epochs of b = ``rounds_per_epoch`` shuffled rounds with noise σ per unit
    sensitivity (one differentiating sample, g = 1).  Poisson: :func:`dpcore.accounting.dpsgd.dpsgd_epsilon` (PLD)
    at q = 1/b, T = E·b, multiplier σ (Chua et al. 2024 compare both samplers at the same σ); upper: ε(G_{√E/σ})
    (van Dijk et al., Lemma F.2).  Raises ``ValueError`` naming a bad parameter."""
    from dpcore.accounting.dpsgd import dpsgd_epsilon
    from dpcore.accounting.gaussian import epsilon_from_mu

    sigma = check_positive("sigma", sigma)
    rounds = check_positive_int("rounds_per_epoch", rounds_per_epoch)
    epochs = _check_epochs(epochs)
    delta = check_open_unit("delta", delta)
    if not isinstance(pairs, tuple) or not pairs:
        raise ValueError(f"pairs must be a non-empty tuple of (a, a') pairs, got {pairs!r}")
    lower = {PAIR_NAMES.get(p, f"pair {p}"): float(shuffle_lower_epsilon(
        sigma, rounds_per_epoch=rounds, epochs=epochs, delta=delta, pair=_check_pair(p), grid=grid, slices=slices))
        for p in pairs}  # fmt: skip
    upper = float(epsilon_from_mu(math.sqrt(epochs) / sigma, delta))
    if rounds == 1:  # q = 1: no subsampling, the Gaussian itself
        poisson = upper
    else:
        poisson = float(dpsgd_epsilon(sigma, sample_rate=1.0 / rounds, steps=epochs * rounds, delta=delta,
                                      method="pld"))  # fmt: skip
    return ShuffledEpsilons(sigma, rounds, epochs, delta, poisson, lower, upper)
