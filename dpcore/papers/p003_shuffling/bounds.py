"""Paper 003: f-DP of Algorithm 1 with subsampling/shuffling and individual/batch/mixed clipping.

van Dijk, P. H. Nguyen, T. N. Nguyen, L. M. Nguyen, "Generalizing DP-SGD with Shuffling and Batch
Clipping".  Each round adds N(0, (2Cσ)² I) to Σ_{h≤m} [a_h]_C; a round whose m subsets S_{b,h} (size s)
touch the g differentiating samples in k subsets is G_{k/σ} (sensitivity 2kC).  Under the paper's
adversary **A_1** (who sees which rounds touch the differentiating samples) E epochs are the labelled
mixture Σ_c q_E(c) G_{c/σ}, c² = Σ_k c_k k² (Def. 5.1/5.2, :mod:`dpcore.accounting.mixture`).  The
standard adversary **A_0** gets C_{ms/N}(G_{1/σ})^{⊗T} (Dong et al. Thm 5.1; App. G), with T = E·N/(ms).

* :func:`tradeoff_bounds` -- every row of Table 1 (A_1) and Table 2 (A_0 / A_1) as lower and upper
  trade-off functions (``Gaussian`` μ where the row is Gaussian, a ``Curve`` otherwise);
  ``form="table"`` gives the printed Gaussian approximations, ``form="lemma"`` the precise statements
  (additive l/u terms of Defs 5.3/5.4 and Lemmas E.2–E.5, F.3, F.4).
* :func:`mixture_tradeoff` -- the exact A_1 trade-off (Def. 5.2) from q_E(c) for subsampling and shuffling.
* :func:`a0_epsilon` -- the A_0 accounting of the same runs (CLT uniform / Poisson, or dp_accounting PLD).
* Errata made numerical: :func:`hoeffding_check` (Lemmas E.2/E.3/E.5 drop the 1/n of Hoeffding's bound)
  and :func:`shuffle_collision_pmf` (App. F.3's q_j counts multisets, not uniform shuffles).

Symbols follow the paper: N data set size, E epochs, s subset size, m subsets per round (|S_b| = ms),
g group size, σ noise multiplier.

>>> b = tradeoff_bounds(1, 3, sigma=2.0, E=100)        # shuffling, g = 1: exactly G_{sqrt(E)/σ}
>>> b.lower.mu, b.upper.mu
(5.0, 5.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import special, stats

from dpcore.accounting import fdp
from dpcore.accounting import shuffled as core
from dpcore.accounting.calibrate import SIGMA_MAX, SIGMA_MIN
from dpcore.accounting.mixture import GaussianMixture
from dpcore.accounting.shuffled import batch_clipping_q, rounds_per_epoch, subsampling_round_pmf
from dpcore.validation import (
    check_bool,
    check_choice,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_range,
    check_real_array,
)

__all__ = [
    "SAMPLINGS",
    "CLIPPINGS",
    "TradeoffBounds",
    "rounds_per_epoch",
    "lower_bound_function",
    "upper_bound_function",
    "batch_clipping_q",
    "subsampling_round_pmf",
    "shuffle_collision_pmf",
    "shuffle_collision_monte_carlo",
    "subsampling_round_monte_carlo",
    "tradeoff_bounds",
    "mixture_tradeoff",
    "a0_epsilon",
    "a0_tradeoff",
    "hoeffding_check",
    "bound_violations",
    "clt_h_series",
    "group_crossover",
    "thinned_shuffle_mixture",
    "table_rows",
]

SAMPLINGS = ("fixed", "shuffle")  # the paper's "subsampling" and "shuffling"
CLIPPINGS = ("individual", "batch", "mixed")
A0_METHODS = ("clt-fixed", "clt-poisson", "pld-poisson")
#: Ranges of the inputs (beyond them a ValueError names the parameter): σ as the library's accountants
#: (:mod:`dpcore.accounting.calibrate`), epochs, data set size (exact integers in a float), Monte Carlo draws,
#: rounds of the dp_accounting PLD and its discretisation interval.
SIGMA_RANGE = (SIGMA_MIN, SIGMA_MAX)
MAX_EPOCHS = 10**6
MAX_N = 2**53
MAX_DRAWS = 10**6
MAX_PLD_STEPS = 10**6
PLD_GRID_RANGE = (1e-6, 0.1)


def _sigma(sigma: float) -> float:
    return check_range("sigma", check_positive("sigma", sigma), *SIGMA_RANGE)


def _epochs(E: int) -> int:
    return check_positive_int("E", E, maximum=MAX_EPOCHS)


def _size(name: str, value: int) -> int:
    return check_positive_int(name, value, maximum=MAX_N)


# --------------------------------------------------------------------------- Defs 5.3 / 5.4
def lower_bound_function(mu: float, l: float, *, symmetric: bool = True) -> fdp.Curve:
    """Def. 5.4: f̂^L(α) = G_μ(min{1, α + l}); symmetric: f^L = max{f̂^L, (f̂^L)⁻¹} with (f̂^L)⁻¹ = max{0, G_μ − l}.

    ``mu = c^L/σ`` and ``l ≥ Σ_{c > c^L} q_E(c)``.  Thm 5.6: the exact f satisfies f ≥ f^L ≥ f̂^L.
    """
    mu = check_nonnegative("mu", mu)
    l = check_range("l", l, 0.0, 1.0)
    symmetric = check_bool("symmetric", symmetric)

    def hat_power(a: np.ndarray) -> np.ndarray:
        return fdp.gaussian_power(mu, np.minimum(1.0, a + l))

    def power(a: np.ndarray) -> np.ndarray:
        p = hat_power(a)
        if symmetric:
            p = np.minimum(p, np.minimum(1.0, fdp.gaussian_power(mu, a) + l))
        return p

    kind = "f^L" if symmetric else "f̂^L"
    return fdp.Curve(
        lambda a: 1.0 - power(a), label=f"{kind}(μ={mu:.4g}, l={l:.3g})", symmetric=symmetric, power_func=power
    )


def upper_bound_function(mu: float, u: float, *, symmetric: bool = True) -> fdp.Curve:
    """Def. 5.3: f̂^U = u + (1 − u) G_μ; symmetric f^U = min{f̂^U, (f̂^U)⁻¹}** (closed form, C.14).

    f^U = u + (1 − u)G_μ(α) on [0, β0], β0 + β1 − α on [β0, β1], G_μ((α − u)/(1 − u)) on [β1, 1], with
    β0 = 1 − Φ(μ/2 − ln(1 − u)/μ), β1 = u + (1 − u)(1 − Φ(μ/2 + ln(1 − u)/μ)).  ``mu = c^U/σ``,
    ``u ≥ Σ_{c < c^U} q_E(c)``.  Thm 5.5: every valid h satisfies h ≤ f^U ≤ f̂^U.
    """
    mu = check_nonnegative("mu", mu)
    u = check_nonnegative("u", u)
    if u >= 1:
        raise ValueError(f"u must be in [0, 1), got {u}")
    symmetric = check_bool("symmetric", symmetric)
    if not symmetric or mu == 0:
        return fdp.Curve(
            lambda a: u + (1 - u) * fdp.gaussian_tradeoff(mu, a),
            label=f"f̂^U(μ={mu:.4g}, u={u:.3g})",
            symmetric=mu == 0,
            power_func=lambda a: (1 - u) * fdp.gaussian_power(mu, a),
        )
    log1mu = math.log1p(-u)
    beta0 = float(special.ndtr(-(mu / 2 - log1mu / mu)))
    beta1 = u + (1 - u) * float(special.ndtr(-(mu / 2 + log1mu / mu)))

    def power(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        first = (1 - u) * fdp.gaussian_power(mu, a)
        mid = 1.0 - (beta0 + beta1 - a)
        last = fdp.gaussian_power(mu, np.clip((a - u) / (1 - u), 0.0, 1.0))
        return np.where(a <= beta0, first, np.where(a <= beta1, mid, last))

    return fdp.Curve(lambda a: 1.0 - power(a), label=f"f^U(μ={mu:.4g}, u={u:.3g})", symmetric=True, power_func=power)


# --------------------------------------------------------------------------- q distributions
def shuffle_collision_pmf(N: int, s: int, g: int, *, method: str = "true") -> np.ndarray:
    """Pr[the g differentiating samples fall in exactly j rounds], j = 1..g, one shuffled epoch, m = 1.

    ``method="true"`` -- a uniform permutation (:func:`dpcore.accounting.shuffled.shuffle_collision_pmf`);
    ``method="paper"`` -- App. F.3's balls-in-bins law q_j = C(n, j) C(g−1, j−1) / C(n − 1 + g, g), which counts
    multisets as equally likely (Bose–Einstein) and roughly doubles the collision probability (erratum).
    """
    check_choice("method", method, ("true", "paper"))
    if method == "true":
        return core.shuffle_collision_pmf(N, s, g)
    N = _size("N", N)
    s = check_positive_int("s", s)
    g = check_positive_int("g", g, maximum=10_000)
    n = N // s
    if n < 1:
        raise ValueError(f"s must be <= N, got s={s}, N={N}")
    if g > n * s:
        raise ValueError(f"g must be <= ⌊N/s⌋·s, got g={g}, N={n * s}")
    out = np.zeros(g)
    den = math.comb(n - 1 + g, g)
    for j in range(1, min(g, n) + 1):
        out[j - 1] = float(Fraction(math.comb(n, j) * math.comb(g - 1, j - 1), den))
    return out


def shuffle_collision_monte_carlo(N: int, s: int, g: int, *, draws: int = 100_000, seed: int = 0) -> np.ndarray:
    """Monte Carlo of :func:`shuffle_collision_pmf` (positions of the g samples under a uniform permutation);
    ``draws`` at most :data:`MAX_DRAWS` (and draws·N at most 5e7 below N = 2000, where whole permutations are drawn)."""
    N, s, g = _size("N", N), check_positive_int("s", s), check_positive_int("g", g)
    draws = check_positive_int("draws", draws, maximum=MAX_DRAWS)
    seed = check_positive_int("seed", seed, minimum=0)
    if s > N or g > (N // s) * s:
        raise ValueError(f"s and g must satisfy s <= N and g <= ⌊N/s⌋·s, got N={N}, s={s}, g={g}")
    if N <= 2000 and draws * N > 5 * 10**7:
        raise ValueError(f"draws must be at most {5 * 10**7 // N} for N={N} (whole permutations), got {draws}")
    rng = np.random.default_rng(seed)
    N = (N // s) * s
    pos = np.argsort(rng.random((draws, N)), axis=1)[:, :g] if N <= 2000 else _sample_positions(rng, N, g, draws)
    blocks = np.sort(pos // s, axis=1)
    distinct = 1 + (np.diff(blocks, axis=1) != 0).sum(axis=1)
    return np.bincount(distinct, minlength=g + 1)[1:] / draws


def _sample_positions(rng: np.random.Generator, N: int, g: int, draws: int) -> np.ndarray:
    """``draws`` samples of g distinct positions out of N (rejection of collisions)."""
    out = rng.integers(0, N, size=(draws, g))
    for _ in range(100):
        srt = np.sort(out, axis=1)
        bad = (np.diff(srt, axis=1) == 0).any(axis=1)
        if not bad.any():
            return out
        out[bad] = rng.integers(0, N, size=(int(bad.sum()), g))
    raise RuntimeError("could not sample distinct positions")  # pragma: no cover


def subsampling_round_monte_carlo(N: int, g: int, s: int, m: int, *, draws: int = 100_000, seed: int = 0):
    """Monte Carlo of :func:`subsampling_round_pmf`: draw S_b (size ms), split it at random into m subsets
    (``draws`` at most :data:`MAX_DRAWS`; one draw costs O(ms))."""
    N, g, s, m = _size("N", N), check_positive_int("g", g), check_positive_int("s", s), check_positive_int("m", m)
    draws = check_positive_int("draws", draws, maximum=MAX_DRAWS)
    seed = check_positive_int("seed", seed, minimum=0)
    if m * s > N or g > N:
        raise ValueError(f"m·s and g must be at most N, got m·s={m * s}, g={g}, N={N}")
    if draws * m * s > 10**8:
        raise ValueError(f"draws·m·s must be at most 1e8 (cost), got draws={draws}, m·s={m * s}")
    rng = np.random.default_rng(seed)
    ms = m * s
    kmax = min(g, m)
    counts = np.zeros(kmax + 1)
    for _ in range(draws):
        chosen = rng.choice(N, size=ms, replace=False)  # positions 0..g-1 are the differentiating samples
        hit = np.nonzero(chosen < g)[0]
        k = np.unique(hit // s).size  # the random split = the order of ``chosen``
        counts[k] += 1
    return counts / draws


# --------------------------------------------------------------------------- Table 1 and Table 2
@dataclass(frozen=True)
class TradeoffBounds:
    """Lower and upper trade-off functions of one table row: lower ≤ h ≤ upper for the true h."""

    table: int
    row: int
    lower: fdp.Gaussian | fdp.Curve
    upper: fdp.Gaussian | fdp.Curve
    description: str
    adversary: str
    condition: str = ""
    condition_value: float = 0.0
    valid: bool = True
    note: str = ""


_ROWS = {
    (1, 1): ("batch clipping, subsampling, g ≥ 1", "A_1", "e^{-qE} and gs/N small"),
    (1, 2): ("general clipping, subsampling, g = 1", "A_1", "e^{-E} small"),
    (1, 3): ("general clipping, shuffling, g = 1", "A_1", "exact"),
    (1, 4): ("general clipping, shuffling, g ≥ 1", "A_1", "E·g²ms/(N−g) small"),
    (1, 5): ("batch clipping, shuffling, g ≥ 1", "A_1", "exact lower bound"),
    (1, 6): ("batch clipping, shuffling, g ≤ s", "A_1", "E·g²/(N/s − g − g²) small"),
    (2, 1): ("individual clipping, subsampling, g = 1", "A_0", "CLT (T large) or PLD"),
    (2, 2): ("individual clipping, subsampling, g ≥ 1 (group privacy)", "A_0", "CLT (T large) or PLD"),
    (2, 3): ("individual clipping, subsampling, g ≥ 1", "A_1", "e^{-γgE} small"),
}


def table_rows() -> list[tuple[int, int, str, str]]:
    """(table, row, description, adversary) of every row :func:`tradeoff_bounds` knows."""
    return [(t, r, d, a) for (t, r), (d, a, _) in _ROWS.items()]


def _hoeffding_mus(x: float, sigma: float) -> tuple[float, float]:
    """(μ_L, μ_U) = (sqrt((1 + 1/sqrt(2x))x)/σ, sqrt((1 − 1/sqrt(2x))x)/σ) of Table 1 rows 1–2."""
    shift = 1 / math.sqrt(2 * x)
    return math.sqrt((1 + shift) * x) / sigma, math.sqrt(max(0.0, (1 - shift) * x)) / sigma


def tradeoff_bounds(
    table: int,
    row: int,
    *,
    sigma: float,
    E: int,
    g: int = 1,
    s: int = 1,
    m: int = 1,
    N: int | None = None,
    form: str = "table",
    gamma_slack: float = 0.1,
    a0_method: str = "clt-fixed",
) -> TradeoffBounds:
    """Lower and upper trade-off bounds of Table 1 (rows 1–6) or Table 2 (rows 1–3) of paper 003.

    ``form="table"``: the Gaussian approximations exactly as printed (μ from σ, E, g; q for row 1);
    ``form="lemma"``: the precise statements with their additive terms -- Lemma E.5 (row 1, with
    q = (N/s)q_1), Lemma E.2/E.3 (row 2, l = u = e^{−E}), Lemma F.3 (row 4, with the multi-epoch
    l_E = 1 − (1 − g²ms/(N−g))^E (our multi-epoch extension) in place of the per-epoch tensor power), Lemma F.4 (row 6,
    u_E = 1 − (1 − u)^E with u = g²/(N/s − g − g²)) and Lemma E.4 (Table 2 row 3, β = e^{N/(N−g−m)} + γ,
    l = e^{−γgE}).  Table 2 rows 1–2 (A_0) use ``a0_method``: the CLT (a Gaussian) or dp_accounting's
    PLD (a curve, Poisson / add-remove comparator).

    The lower function is the guarantee (h ≥ lower); the upper one says h cannot be improved beyond it.
    Rows 1–2 are valid as printed only if the flawed Hoeffding step held (see :func:`hoeffding_check`).
    """
    table = check_choice("table", check_positive_int("table", table), (1, 2))
    row = check_positive_int("row", row)
    if (table, row) not in _ROWS:
        raise ValueError(f"row must be 1..6 for table 1 and 1..3 for table 2, got table={table}, row={row}")
    sigma = _sigma(sigma)
    E = _epochs(E)
    g = _size("g", g)
    s = _size("s", s)
    m = _size("m", m)
    N = None if N is None else _size("N", N)
    check_choice("form", form, ("table", "lemma"))
    gamma_slack = check_range("gamma_slack", gamma_slack, 0.0, 100.0)
    if gamma_slack == 0:
        raise ValueError("gamma_slack must be in (0, 100], got 0.0")
    check_choice("a0_method", a0_method, A0_METHODS)
    needs_n = form == "lemma" and (table, row) in {(1, 1), (1, 4), (1, 6), (2, 3)} or table == 2 and row in (1, 2)
    if needs_n:
        if N is None:
            raise ValueError(f"N is required for table {table} row {row} with form={form!r}")
        if m * s > N:
            raise ValueError(f"m·s must be <= N, got m·s={m * s}, N={N}")
    desc, adversary, cond = _ROWS[(table, row)]
    G0 = fdp.Gaussian(0.0)

    def out(lower, upper, value=0.0, valid=True, note=""):
        return TradeoffBounds(table, row, lower, upper, desc, adversary, cond, float(value), bool(valid), note)

    if table == 1 and row in (1, 2):
        if row == 2 and g != 1:
            raise ValueError(f"table 1 row 2 is for g = 1, got g={g}")
        if row == 1 and m != 1:
            raise ValueError(f"table 1 row 1 is batch clipping (m = 1), got m={m}")
        if form == "table":
            x = g * E
            mu_l, mu_u = _hoeffding_mus(x, sigma)
            return out(
                fdp.Gaussian(mu_l), fdp.Gaussian(mu_u), math.exp(-x), note="as printed (App. E.2 Hoeffding step flawed)"
            )
        if row == 1:
            q = batch_clipping_q(N, s, g)[1]
        else:
            q = 1.0
        x = q * E
        mu_l, mu_u = _hoeffding_mus(x, sigma)
        tail = math.exp(-x)
        return out(
            lower_bound_function(mu_l, tail),
            upper_bound_function(mu_u, tail),
            tail,
            note=f"Lemma E.{5 if row == 1 else 2} with q={q:.6g}; Hoeffding step of App. E.2 flawed",
        )
    if table == 1 and row == 3:
        if g != 1:
            raise ValueError(f"table 1 row 3 is for g = 1, got g={g}")
        mu = math.sqrt(E) / sigma
        return out(fdp.Gaussian(mu), fdp.Gaussian(mu), 0.0, note="exact (Lemma F.2)")
    if table == 1 and row == 4:
        mu = math.sqrt(g * E) / sigma
        if form == "table":
            return out(fdp.Gaussian(mu), G0)
        l1 = g * g * m * s / (N - g) if N > g else math.inf
        lE = 1.0 - (1.0 - l1) ** E if l1 < 1 else 1.0
        return out(
            lower_bound_function(mu, lE),
            G0,
            lE,
            valid=lE < 1,
            note=f"per-epoch l = g²ms/(N−g) = {l1:.4g}; E-epoch l_E = {lE:.4g} (our multi-epoch extension)",
        )
    if table == 1 and row == 5:
        if m != 1:
            raise ValueError(f"table 1 row 5 is batch clipping (m = 1), got m={m}")
        return out(fdp.Gaussian(math.sqrt(g * E) / sigma), G0, 0.0, note="exact lower bound (Lemma F.4)")
    if table == 1 and row == 6:
        if m != 1:
            raise ValueError(f"table 1 row 6 is batch clipping (m = 1), got m={m}")
        if g > s:
            raise ValueError(f"table 1 row 6 needs g <= s, got g={g}, s={s}")
        mu = math.sqrt(g * E) / sigma
        if form == "table":
            return out(fdp.Gaussian(mu), fdp.Gaussian(mu))
        n = N / s
        den = n - g - g * g
        u1 = g * g / den if den != 0 else math.inf
        if not (den > 0 and 0 <= u1 < 1):
            return out(
                fdp.Gaussian(mu),
                G0,
                u1,
                valid=False,
                note=f"u = g²/(N/s − g − g²) = {u1:.4g} is meaningless (Lemma F.4 needs N/s > g + g²)",
            )
        uE = 1.0 - (1.0 - u1) ** E
        if uE >= 1.0 - 1e-12:
            return out(
                fdp.Gaussian(mu), G0, uE, valid=False, note=f"u_E = 1 − (1 − u)^E = {uE:.4g}: vacuous (Lemma F.4)"
            )
        return out(
            fdp.Gaussian(mu),
            upper_bound_function(mu, uE),
            uE,
            note=f"per-epoch u = {u1:.4g}; E-epoch u_E = {uE:.4g} (our multi-epoch extension)",
        )
    if table == 2 and row in (1, 2):
        if row == 1 and g != 1:
            raise ValueError(f"table 2 row 1 is for g = 1, got g={g}")
        f0 = a0_tradeoff(sigma=sigma, N=N, batch=m * s, E=E, method=a0_method)
        if isinstance(f0, fdp.Gaussian):
            return out(fdp.Gaussian(g * f0.mu), fdp.Gaussian(g * f0.mu), note=a0_method)
        f = f0 if g == 1 else fdp.Curve(fdp.group_tradeoff(f0, g), label=f"group {g} of {f0.label}")
        return out(f, f, note=a0_method)
    # table 2 row 3: A_1, individual clipping, subsampling, general g (Lemma E.4)
    if form == "table":
        mu = math.sqrt((math.e + gamma_slack) * min(m, g) * g * E) / sigma
        return out(fdp.Gaussian(mu), G0, math.exp(-gamma_slack * g * E))
    if N - g - m <= 0:
        raise ValueError(f"Lemma E.4 needs N > g + m, got N={N}, g={g}, m={m}")
    beta = math.exp(N / (N - g - m)) + gamma_slack
    mu = math.sqrt(beta * min(m, g) * g * E) / sigma
    l = math.exp(-gamma_slack * g * E)
    return out(lower_bound_function(mu, l), G0, l, note=f"β = {beta:.5g}")


# --------------------------------------------------------------------------- exact A_1
def mixture_tradeoff(
    sampling: str,
    *,
    sigma: float,
    E: int,
    N: int,
    s: int = 1,
    m: int = 1,
    g: int = 1,
    q_method: str = "true",
    round_count: str = "floor",
) -> GaussianMixture:
    """The exact A_1 trade-off of Def. 5.2 (:func:`dpcore.accounting.shuffled.mixture_tradeoff`).

    ``sampling``: ``"shuffle"`` (the paper's shuffling) or ``"fixed"`` (its subsampling).  ``q_method="paper"``
    uses App. F.3's collision law (an erratum, see :func:`shuffle_collision_pmf`) for shuffling with m = 1.
    """
    check_choice("q_method", q_method, ("true", "paper"))
    sigma = _sigma(sigma)
    E = _epochs(E)
    epoch_pmf = None
    if q_method == "paper":

        def epoch_pmf(n_used: int, s_: int, g_: int) -> np.ndarray:
            return shuffle_collision_pmf(n_used, s_, g_, method="paper")

    return core.mixture_tradeoff(
        sampling, sigma=sigma, E=E, N=N, s=s, m=m, g=g, epoch_pmf=epoch_pmf, round_count=round_count
    )


def thinned_shuffle_mixture(*, sigma: float, E: int) -> GaussianMixture:
    """App. D (batch clipping, shuffling, g = 1) with each round kept w.p. 1/2, under A_1-labelled accounting.

    The round holding the differentiating sample is dropped with probability 1/2, so c² ~ Binomial(E, 1/2).
    The paper's heuristic claims "a factor 2 improvement (at best)" (G_{sqrt(E)/(2σ)}); this gives ~sqrt(2).
    """
    return GaussianMixture.binomial(_epochs(E), 0.5, _sigma(sigma))


# --------------------------------------------------------------------------- A_0
def a0_tradeoff(*, sigma: float, N: int, batch: int, E: int, method: str = "clt-fixed", grid: float = 1e-4):
    """A_0 trade-off of E epochs of subsampled rounds (rate p = |S_b|/N, T = E·N/|S_b| rounds; App. G).

    ``"clt-fixed"``: G_μ with μ = sqrt(E·|S_b|/N)·h(σ) (Dong et al. Cor. 5.4, the paper's formula);
    ``"clt-poisson"``: μ = p·sqrt(T(e^{1/σ²} − 1));
    ``"pld-poisson"``: dp_accounting PLD of the Poisson-subsampled Gaussian (add/remove; an approximate
    comparator for the paper's fixed-size/replace-one sampling), as a :class:`~dpcore.accounting.fdp.Curve`
    (at most :data:`MAX_PLD_STEPS` rounds, ``grid`` in :data:`PLD_GRID_RANGE`).  The CLT's μ is ∞ where it
    overflows (σ tiny): no finite guarantee.
    """
    sigma, N, batch, E = _a0_inputs(sigma, N, batch, E, method)
    grid = check_range("grid", grid, *PLD_GRID_RANGE)
    p = batch / N
    if method.startswith("clt"):
        return fdp.Gaussian(fdp.clt_mu(sigma, p, E * N / batch, method.split("-")[1]))
    pld = _a0_pld(sigma, p, E * N // batch, grid)
    eps = np.concatenate([np.linspace(0.0, 0.5, 201), np.linspace(0.51, 2.0, 150), np.geomspace(2.05, 60.0, 120)])
    deltas = np.array([pld.get_delta_for_epsilon(float(e)) for e in eps])
    return fdp.Curve(fdp.tradeoff_from_delta_curve(eps, deltas), label=f"A_0 PLD (p={p:.4g})", symmetric=False)


def _a0_inputs(sigma: float, N: int, batch: int, E: int, method: str) -> tuple[float, int, int, int]:
    sigma, N, batch, E = _sigma(sigma), _size("N", N), check_positive_int("batch", batch), _epochs(E)
    check_choice("method", method, A0_METHODS)
    if batch > N:
        raise ValueError(f"batch must be <= N, got batch={batch}, N={N}")
    if method == "pld-poisson" and E * N // batch > MAX_PLD_STEPS:
        raise ValueError(f"E·N/batch must be at most {MAX_PLD_STEPS} rounds for the PLD, got E={E}, N={N}, "
                         f"batch={batch}")  # fmt: skip
    return sigma, N, batch, E


def _a0_pld(sigma: float, p: float, steps: int, grid: float):
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    one = pld_mod.from_gaussian_mechanism(sigma, sampling_prob=p, value_discretization_interval=grid)
    return one.self_compose(steps)


def a0_epsilon(
    *, sigma: float, N: int, batch: int, E: int, delta: float, method: str = "clt-fixed", grid: float = 1e-4
) -> float:
    """ε(δ) of the A_0 accounting (see :func:`a0_tradeoff`); the PLD uses T = ⌊E·N/|S_b|⌋ steps.  ∞ where the
    CLT's μ overflows (σ tiny) or δ is below the PLD's mass at infinite loss: no finite ε is certified."""
    delta = check_open_unit("delta", delta)
    sigma, N, batch, E = _a0_inputs(sigma, N, batch, E, method)
    grid = check_range("grid", grid, *PLD_GRID_RANGE)
    if method.startswith("clt"):
        return a0_tradeoff(sigma=sigma, N=N, batch=batch, E=E, method=method).epsilon(delta)
    return float(_a0_pld(sigma, batch / N, E * N // batch, grid).get_epsilon_for_delta(delta))


# --------------------------------------------------------------------------- errata
def hoeffding_check(N: int, batch: int, E: int) -> dict:
    """Erratum (App. E.2 Hoeffding step): the tails of Lemmas E.2/E.3 (g = 1, subsampling) vs the claimed e^{−E}.

    c_1 ~ Binomial(n, p) with n = (N/|S_b|)·E rounds (the paper's count, rounded) and p = |S_b|/N.  The paper
    claims Pr[c_1 < (c^U)²] ≤ e^{−E} and Pr[c_1 > (c^L)²] ≤ e^{−E} for (c^{U/L})² = (1 ∓ 1/sqrt(2E))E;
    Hoeffding for n trials actually gives exp(−2(E − c_1)²/n).
    """
    N = _size("N", N)
    batch = check_positive_int("batch", batch)
    E = _epochs(E)
    if batch > N:
        raise ValueError(f"batch must be <= N, got batch={batch}, N={N}")
    n = int(round(E * N / batch))
    p = batch / N
    c2_u = (1 - 1 / math.sqrt(2 * E)) * E
    c2_l = (1 + 1 / math.sqrt(2 * E)) * E
    below = float(stats.binom.cdf(math.ceil(c2_u) - 1, n, p))
    above = float(stats.binom.sf(math.floor(c2_l), n, p))
    return {
        "N": N,
        "batch": batch,
        "E": E,
        "rounds": n,
        "c2_upper": c2_u,
        "c2_lower": c2_l,
        "tail_below_cU": below,
        "tail_above_cL": above,
        "claimed": math.exp(-E),
        "hoeffding_correct": math.exp(-2 * (E - c2_u) ** 2 / n),
        "c2_for_tail_1e-6": float(stats.binom.isf(1e-6, n, p)),
    }


def bound_violations(exact: GaussianMixture, bound, alpha: np.ndarray, *, rtol: float = 1e-6) -> np.ndarray:
    """Boolean mask of the α where ``exact`` lies strictly below a claimed *lower* bound (in power terms).

    The power 1 − f is compared (no cancellation): a violation is exact.power(α) > bound.power(α)(1 + rtol).
    """
    for name, obj in (("exact", exact), ("bound", bound)):
        if not callable(getattr(obj, "power", None)):
            raise ValueError(f"{name} must be a trade-off function with a power(alpha) method, got {obj!r}")
    alpha = check_real_array("alpha", alpha, low=0.0, high=1.0)
    rtol = check_nonnegative("rtol", rtol)
    return np.asarray(exact.power(alpha)) > np.asarray(bound.power(alpha)) * (1 + rtol) + 1e-300


def clt_h_series(sigma: float, *, which: str = "paper") -> float:
    """Series for h(σ) of App. G: the paper's σ⁻¹·sqrt(1 − (5/8)σ⁻¹/sqrt(2π)) (wrong) or the corrected
    σ⁻¹·sqrt(1 + 2σ⁻¹/sqrt(2π)).  The exact value is :func:`dpcore.accounting.fdp.clt_factor`."""
    sigma = _sigma(sigma)
    check_choice("which", which, ("paper", "corrected"))
    c = -5 / 8 if which == "paper" else 2.0
    return math.sqrt(max(0.0, 1 + c / sigma / math.sqrt(2 * math.pi))) / sigma


def group_crossover(N: int, batch: int, sigma: float) -> float:
    """Our comparison (not in the paper): group size beyond which the A_0 group bound g·sqrt(E|S_b|/N)·h(σ)
    exceeds A_1's
    BC+SH sqrt(gE)/σ: g* = N / (|S_b| σ² h(σ)²) (different mechanisms; App. G's comparison)."""
    N = _size("N", N)
    batch = check_positive_int("batch", batch)
    if batch > N:
        raise ValueError(f"batch must be <= N, got batch={batch}, N={N}")
    h = fdp.clt_factor(_sigma(sigma))
    return N / (batch * sigma**2 * h**2)
