"""Shuffled and subsampled batch clipping: the exact trade-off under the labelled adversary A_1.

Mechanism (van Dijk, P. H. Nguyen, T. N. Nguyen, L. M. Nguyen, "Generalizing DP-SGD with Shuffling and
Batch Clipping", Algorithm 1): each round adds N(0, (2Cσ)² I) to Σ_{h≤m} [a_h]_C, the clipped means of m
subsets of size s; batches are drawn by shuffling (``"shuffle"``: one permutation per epoch, disjoint
batches) or by sampling a fixed-size subset without replacement each round (``"fixed"``).  A round whose
subsets touch the g differentiating samples in k subsets is G_{k/σ} (sensitivity 2kC).  Against the
adversary A_1 -- who also sees which rounds touch the differentiating samples -- E epochs are the labelled
mixture Σ_c q_E(c) G_{c/σ}, c² = Σ_k c_k k² (same paper, Def. 5.1/5.2, Lemma B.5), whose exact trade-off
:class:`~dpcore.accounting.mixture.GaussianMixture` evaluates.  For g = 1 with shuffling it is exactly
G_{√E/σ} (Lemma F.2).  This bounds the standard adversary too (A_1 knows more), so it is rigorous for
shuffled batches, but loose: no tight standard-adversary accountant for shuffling exists here.

>>> round(mixture_tradeoff("shuffle", sigma=2.0, E=100, N=60_000, m=256).epsilon(1e-5), 3)
33.104
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from dpcore.accounting.events import check_sampling, steps_per_epoch
from dpcore.accounting.mixture import MAX_COMPONENTS, GaussianMixture, convolve_power
from dpcore.validation import check_choice, check_positive, check_positive_int

__all__ = [
    "rounds_per_epoch",
    "batch_clipping_q",
    "subsampling_round_pmf",
    "shuffle_collision_pmf",
    "mixture_tradeoff",
]


def _ratio_comb(a: int, b: int, k: int) -> float:
    """C(a, k) / C(b, k) as a float without overflow (exact rational arithmetic)."""
    if k < 0 or k > a:
        return 0.0
    return float(Fraction(math.comb(a, k), math.comb(b, k)))


def rounds_per_epoch(N: int, batch: int) -> int:
    """⌊N/|S_b|⌋ rounds per epoch (Algorithm 1 with N not divisible by ms drops the remainder): the shuffling
    rounds of :func:`dpcore.accounting.events.steps_per_epoch`, validated under this paper's names."""
    N = check_positive_int("N", N)
    batch = check_positive_int("batch", batch)
    if batch > N:
        raise ValueError(f"batch (= m·s) must be <= N, got batch={batch}, N={N}")
    return steps_per_epoch("shuffle", N, batch)


def batch_clipping_q(N: int, s: int, g: int) -> tuple[float, float]:
    """App. E.5 (m = 1, subsampling): q_1 = 1 − C(N−g, s)/C(N, s) per round, and q = (N/s)·q_1 (≈ g for gs ≪ N)."""
    N = check_positive_int("N", N)
    s = check_positive_int("s", s)
    g = check_positive_int("g", g)
    if g > N or s > N:
        raise ValueError(f"g and s must be <= N, got g={g}, s={s}, N={N}")
    q1 = 1.0 - _ratio_comb(N - g, N, s) if N - g >= s else 1.0
    return q1, N / s * q1


def subsampling_round_pmf(N: int, g: int, s: int, m: int) -> np.ndarray:
    """Pr[L = k], k = 0..min(g, m): the number of subsets S_{b,h} of one subsampled round touching z (App. E.1).

    Polynomial form of the paper's formula (verified equal to it and to Monte Carlo):
    q_k = Σ_{k'} Hyp(k'; N, g, ms) · C(m, k) Σ_i (−1)^i C(k, i) C((k − i)s, k') / C(ms, k'), evaluated in
    exact rational arithmetic.  For s = 1 this is the hypergeometric C(N−g, m−k) C(g, k)/C(N, m).
    """
    N = check_positive_int("N", N)
    g = check_positive_int("g", g)
    s = check_positive_int("s", s)
    m = check_positive_int("m", m)
    ms = m * s
    if ms > N or g > N:
        raise ValueError(f"m·s and g must be <= N, got m·s={ms}, g={g}, N={N}")
    kmax = min(g, m)
    out = [Fraction(0)] * (kmax + 1)
    denom_N = math.comb(N, ms)
    for kp in range(0, min(g, ms) + 1):
        hyp = Fraction(math.comb(g, kp) * math.comb(N - g, ms - kp), denom_N)
        if hyp == 0:
            continue
        if kp == 0:
            out[0] += hyp
            continue
        c_ms = math.comb(ms, kp)
        for k in range(1, min(kmax, kp) + 1):
            ways = sum((-1) ** i * math.comb(k, i) * math.comb((k - i) * s, kp) for i in range(k + 1))
            if ways:
                out[k] += hyp * Fraction(math.comb(m, k) * ways, c_ms)
    return np.array([float(x) for x in out])


def shuffle_collision_pmf(N: int, s: int, g: int) -> np.ndarray:
    """Pr[the g differentiating samples fall in exactly j rounds], j = 1..g, one shuffled epoch, m = 1.

    A uniform permutation cut into n = ⌊N/s⌋ blocks of size s (inclusion–exclusion):
        q_j = C(n, j) Σ_i (−1)^i C(j, i) C((j − i)s, g) / C(ns, g).
    Returns an array of length g (index j − 1).  With N not a multiple of s the remainder is dropped and
    the g samples are placed among the ns used positions.
    """
    N = check_positive_int("N", N)
    s = check_positive_int("s", s)
    g = check_positive_int("g", g)
    n = N // s
    if n < 1:
        raise ValueError(f"s must be <= N, got s={s}, N={N}")
    N = n * s
    if g > N:
        raise ValueError(f"g must be <= ⌊N/s⌋·s, got g={g}, N={N}")
    out = np.zeros(g)
    den = math.comb(N, g)
    for j in range(1, min(g, n) + 1):
        ways = sum((-1) ** i * math.comb(j, i) * math.comb((j - i) * s, g) for i in range(j + 1))
        out[j - 1] = float(Fraction(math.comb(n, j) * ways, den))
    return out


def _sum_width(pmf: np.ndarray, n: int) -> float:
    """Estimated number of entries above 1e-300 of the pmf of a sum of ``n`` iid copies of an integer variable
    with pmf ``pmf`` (on 0, 1, …): the smaller of its span and a Gaussian estimate (±40 sd: Φ(−40) < 1e-300)."""
    k = np.arange(pmf.size)
    w = pmf / pmf.sum()
    var = float(np.dot(w, k * k) - np.dot(w, k) ** 2)
    return min(n * (pmf.size - 1) + 1.0, 80.0 * math.sqrt(max(n * var, 0.0)) + pmf.size)


def _check_epochs(E: int, width) -> None:
    """Refuse an E whose exact mixture would have more than ``MAX_COMPONENTS`` components (``width(E)``
    estimates it), naming the largest E this setting allows (bisection on the estimate)."""
    if width(E) <= MAX_COMPONENTS:
        return
    lo, hi = 0, E
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if width(mid) <= MAX_COMPONENTS else (lo, mid)
    raise ValueError(
        f"E={E} epochs is too large for the exact A_1 mixture of this setting: it would have about {width(E):.3g} "
        f"components (at most {MAX_COMPONENTS}); E must be in [1, {lo}] here (shuffling with g = 1 is the closed "
        "form G_{√E/σ} at any E)"
    )


def mixture_tradeoff(
    sampling: str,
    *,
    sigma: float,
    E: int,
    N: int,
    s: int = 1,
    m: int = 1,
    g: int = 1,
    epoch_pmf=None,
    round_count: str = "floor",
) -> GaussianMixture:
    """The exact A_1 trade-off of Def. 5.2 (Lemma B.5) from q_E(c), as a :class:`GaussianMixture`.

    * shuffle, g = 1: c² = E (a point mass: exactly G_{sqrt(E)/σ}, Lemma F.2);
    * shuffle, m = 1 (batch clipping): per epoch c² = j (rounds hit) with q_j from
      :func:`shuffle_collision_pmf` (or ``epoch_pmf(n_used, s, g)``, e.g. a paper's own law), convolved
      over E epochs;
    * shuffle, m > 1, g = 2: per epoch c² ∈ {1, 4, 2} with probabilities (s−1)/(N−1), (m−1)s/(N−1), rest;
    * fixed (subsampling without replacement): ⌊N/(ms)⌋·E independent rounds (``round_count="floor"``,
      Algorithm 1 with the remainder dropped) or round(E·N/(ms)) (``"paper"``, the count of the paper's
      App. E); per round L ~ :func:`subsampling_round_pmf`, c² = Σ L² (for g = 1 or m = 1 a binomial).

    Bounded time: except for the closed form (shuffling, g = 1: any E), an E whose exact mixture would have
    more than :data:`~dpcore.accounting.mixture.MAX_COMPONENTS` components is refused with a ``ValueError``
    that names E and the largest E of the setting (e.g. E = 10⁹ epochs).
    """
    check_sampling(sampling, allowed=("fixed", "shuffle"))
    sigma = check_positive("sigma", sigma)
    E = check_positive_int("E", E)
    N = check_positive_int("N", N)
    s = check_positive_int("s", s)
    m = check_positive_int("m", m)
    g = check_positive_int("g", g)
    check_choice("round_count", round_count, ("floor", "paper"))
    if epoch_pmf is not None and not callable(epoch_pmf):
        raise ValueError(f"epoch_pmf must be None or a callable (n_used, s, g) -> pmf, got {epoch_pmf!r}")
    rounds = rounds_per_epoch(N, m * s)
    if g > N:
        raise ValueError(f"g must be <= N, got g={g}, N={N}")
    if sampling == "shuffle":
        if g == 1:
            return GaussianMixture.point_mass(E, sigma)
        if m == 1:
            n_used = rounds * s
            pmf = np.concatenate([[0.0], (shuffle_collision_pmf if epoch_pmf is None else epoch_pmf)(n_used, s, g)])
            _check_epochs(E, lambda e: _sum_width(pmf, e))
            epoch = GaussianMixture.from_pmf(pmf, sigma)
            return epoch.power_of(E) if E > 1 else epoch
        if g == 2:
            p1 = (s - 1) / (N - 1)
            p4 = (m - 1) * s / (N - 1)
            pmf = np.array([0.0, p1, 1.0 - p1 - p4, 0.0, p4])
            _check_epochs(E, lambda e: _sum_width(pmf, e))
            epoch = GaussianMixture.from_pmf(pmf, sigma)
            return epoch.power_of(E) if E > 1 else epoch
        raise ValueError("exact q_E for shuffling with m > 1 is implemented for g <= 2 only; use tradeoff_bounds")

    def total_rounds(e: int) -> int:
        return rounds * e if round_count == "floor" else max(1, int(round(e * N / (m * s))))

    if g == 1 or m == 1:
        p = m * s / N if g == 1 else batch_clipping_q(N, s, g)[0]
        _check_epochs(E, lambda e: _sum_width(np.array([1.0 - p, p]), total_rounds(e)))
        return GaussianMixture.binomial(total_rounds(E), p, sigma)
    qk = subsampling_round_pmf(N, g, s, m)
    kmax = len(qk) - 1
    pmf_c2 = np.zeros(kmax * kmax + 1)  # support k² for k = 0..kmax
    for k, p in enumerate(qk):
        pmf_c2[k * k] += p
    _check_epochs(E, lambda e: _sum_width(pmf_c2, total_rounds(e)))
    pmf, offset, dropped = convolve_power(pmf_c2, total_rounds(E))
    return GaussianMixture.from_pmf(pmf, sigma, offset=offset, tail=dropped)
