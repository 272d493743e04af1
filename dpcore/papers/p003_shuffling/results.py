"""Paper 003: the numbers the notebook checks against :mod:`dpcore.papers.p003_shuffling.claims`.

Each ``*_claims`` function returns ``{claim key: our value}`` for one section of the notebook
(``notebooks/003_shuffling_batch_clipping/fdp_tables.ipynb``), plus the table it was computed from where
there is one.  The soundness check of every plotted curve (:func:`tradeoff_axioms`: convex, continuous,
non-increasing, 0 ≤ f(α) ≤ 1 − α; Dong, Roth & Su 2022, Prop. 2.2, restated in the paper's §4) lives here too.

Settings are Appendix H's: σ = 2, E = 100, N = 60000 (MNIST) and 50000 (CIFAR-10), |S_b| ∈ {64, …, 1024}.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize

from dpcore.accounting import fdp
from dpcore.papers.p003_shuffling import bounds as sh
from dpcore.papers.p003_shuffling import tables as stab
from dpcore.validation import check_open_unit, check_positive, check_positive_int

__all__ = [
    "SIGMA",
    "EPOCHS",
    "N_MNIST",
    "N_CIFAR",
    "BATCHES",
    "DELTA",
    "AXIOMS",
    "PANEL_ALPHA",
    "log_alpha_grid",
    "row_panels",
    "containment_table",
    "a0_a1_table",
    "table3_privacy",
    "shuffled_three_numbers",
    "group_table",
    "h_series_table",
    "thinning_table",
    "gdp_equivalent_mu",
    "tradeoff_axioms",
    "panel_curves",
    "PANELS",
    "app_h_table",
    "axiom_table",
    "mu_claims",
    "containment_claims",
    "hoeffding_claims",
    "collision_claims",
    "disclaimer_claims",
    "group_claims",
    "thinning_claims",
]

# Appendix H: σ = 2, E = 100, MNIST N = 60000, CIFAR-10 N = 50000, |S_b| ∈ {64, …, 1024} ("1028" read as 1024)
SIGMA = float(stab.APP_H["sigma"])
EPOCHS = int(stab.APP_H["E"])
N_MNIST = int(stab.APP_H["N"]["MNIST"])
N_CIFAR = int(stab.APP_H["N"]["CIFAR-10"])
BATCHES = tuple(stab.APP_H["batches"])
DELTA = 1e-5
PANEL_ALPHA = np.linspace(0.0, 1.0, 401)
AXIOMS = ("nonincreasing", "convex", "below_diagonal", "nonnegative", "continuous")
# (table, row, g) of each panel of the per-row trade-off figure: g = 2 where the row allows groups
PANELS = ((1, 1, 2), (1, 2, 1), (1, 3, 1), (1, 4, 2), (1, 5, 2), (1, 6, 2), (2, 1, 1), (2, 2, 2), (2, 3, 2))


# --------------------------------------------------------------------------- generic helpers
def gdp_equivalent_mu(f, delta: float) -> float:
    """The μ whose Gaussian trade-off G_μ has the same ε(δ) as ``f`` (any object with ``.epsilon(delta)``).

    Inverts the μ-GDP to (ε, δ) duality (Dong, Roth & Su 2022, Cor. 2.13) by bisection; ε of G_μ
    increases strictly with μ.  A G_μ-DP mechanism gives back μ.
    """
    delta = check_open_unit("delta", delta)
    eps = float(f.epsilon(delta))
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"f.epsilon(delta) must be finite and >= 0, got {eps}")
    if eps == 0:
        return 0.0
    hi = 1.0
    while fdp.mu_to_epsilon(hi, delta) < eps:
        hi *= 2
        if hi > 1e4:
            raise ValueError(f"epsilon {eps} is beyond G_mu for mu <= 1e4")
    return float(optimize.brentq(lambda mu: fdp.mu_to_epsilon(mu, delta) - eps, 1e-12, hi, xtol=1e-13, rtol=1e-14))


def tradeoff_axioms(f, alpha: np.ndarray | None = None, *, tol: float = 1e-7) -> dict[str, bool]:
    """Whether ``f`` behaves as a trade-off function on ``alpha``: the axioms of the paper's §4 (Dong et al. Prop. 2.2).

    ``nonincreasing``, ``convex`` (chord slopes), ``below_diagonal`` (f(α) ≤ 1 − α), ``nonnegative`` come from
    :func:`dpcore.accounting.fdp.check_tradeoff`; ``continuous`` adds what convexity does not give on the
    closed interval: f(α) → f(0) as α → 0 (checked at α = 1e-300; exact for μ up to about 30, beyond which
    floating point cannot resolve the limit).  Inside (0, 1) a finite convex function is continuous, and at 1 a
    non-increasing convex f with f(1) ≤ 0 (below the diagonal) is continuous.
    """
    alpha = np.linspace(0.0, 1.0, 2001) if alpha is None else np.asarray(alpha, dtype=float)
    if alpha.ndim != 1 or alpha.size < 3 or np.any(np.diff(alpha) <= 0) or alpha[0] < 0 or alpha[-1] > 1:
        raise ValueError("alpha must be an increasing 1-D grid in [0, 1] with at least 3 points")
    tol = check_positive("tol", tol)
    out = fdp.check_tradeoff(f, grid=alpha, tol=tol)
    ends = np.asarray(f(np.array([0.0, 1e-300])), dtype=float)
    out["continuous"] = bool(np.all(np.isfinite(ends)) and abs(ends[0] - ends[1]) <= tol)
    return out


# --------------------------------------------------------------------------- grids and tables
def log_alpha_grid(n: int) -> np.ndarray:
    """``n`` log-spaced type I errors in [1e-40, 0.999] (the containment and violation checks)."""
    n = check_positive_int("n", n)
    if n < 3:
        raise ValueError(f"n must be >= 3, got {n}")
    return np.logspace(-40, math.log10(0.999), n)


def app_h_table(*, sigma: float = SIGMA, E: int = EPOCHS, N: int = N_MNIST, batches=BATCHES, groups=(1, 2, 10),
                delta: float = DELTA) -> pd.DataFrame:
    """Every row of Tables 1–2 at each batch size (see :func:`tables.table_1_2_rows`), one frame."""
    frames = [pd.DataFrame(stab.table_1_2_rows(sigma=sigma, E=E, N=N, batch=int(b), groups=groups, delta=delta))
              .assign(batch=int(b)) for b in batches]
    return pd.concat(frames, ignore_index=True)


def containment_table(*, alpha: np.ndarray, sigma: float = SIGMA, E: int = EPOCHS, N: int = N_MNIST, batch: int = 256,
                      groups=(1, 2)) -> pd.DataFrame:
    """:func:`tables.containment_rows` as a frame (lower ≤ exact ≤ upper per A_1 row and g)."""
    return pd.DataFrame(stab.containment_rows(sigma=sigma, E=E, N=N, batch=batch, groups=groups, alpha=alpha))


def a0_a1_table(*, E_values, batches=(64, 256, 1024), sigma: float = SIGMA, N: int = N_MNIST, delta: float = DELTA,
                pld_grid: float = 1e-4) -> pd.DataFrame:
    """ε(δ) against E under A_1 and A_0 for the same runs (:func:`tables.a0_a1_rows`)."""
    return pd.DataFrame(stab.a0_a1_rows(sigma=sigma, E_values=E_values, N=N, batches=batches, delta=delta,
                                        pld_grid=pld_grid))


def table3_privacy(*, sigma: float = SIGMA, E: int = EPOCHS, batches=BATCHES, delta: float = DELTA,
                   pld_grid: float = 1e-4) -> pd.DataFrame:
    """The privacy column the paper's Table 3 lacks: A_1 and A_0 ε(δ) of every run, MNIST and CIFAR-10 N."""
    return pd.concat([a0_a1_table(E_values=[E], batches=batches, sigma=sigma, N=n, delta=delta, pld_grid=pld_grid)
                      for n in (N_MNIST, N_CIFAR)], ignore_index=True)


def shuffled_three_numbers(*, sigma: float = SIGMA, E: int = EPOCHS, N: int = N_MNIST, batches=BATCHES,
                           delta: float = DELTA) -> pd.DataFrame:
    """Each shuffled Table 3 setting's three numbers (issue 42;
    :func:`~dpcore.accounting.shuffle_lower.shuffled_epsilons`): Poisson accounting at q = 1/b (often reported, NOT
    valid for shuffling), the lower bounds for shuffling of Chua et al. 2024 under the replace-one pair Algorithm 1
    realises and under Chua et al.'s own pair, and the A_1 upper bound G_{√E/σ} (Lemma F.2).  One row per |S_b|
    (b = ⌊N/|S_b|⌋ rounds per epoch)."""
    from dpcore.accounting import shuffle_lower as sl
    from dpcore.accounting.shuffled import rounds_per_epoch

    rows = []
    for batch in batches:
        three = sl.shuffled_epsilons(sigma, rounds_per_epoch=rounds_per_epoch(N, batch), epochs=E, delta=delta)
        lower = {name: three.lower[sl.PAIR_NAMES[pair]] for name, pair in
                 (("replace_one", sl.REPLACE_ONE_PAIR), ("chua_pair", sl.CHUA_PAIR))}  # fmt: skip
        rows.append({"N": N, "batch": batch, "rounds_per_epoch": three.rounds_per_epoch, "E": E, "sigma": sigma,
                     "poisson_not_valid": three.poisson, "lower_replace_one": lower["replace_one"],
                     "lower_chua_pair": lower["chua_pair"], "upper_A1": three.upper})  # fmt: skip
    return pd.DataFrame(rows)


def group_table(*, sigma: float = SIGMA, E: int = EPOCHS, N: int = N_MNIST, batch: int = 256, g_max: int = 2000,
                points: int = 40, delta: float = DELTA) -> pd.DataFrame:
    """μ and ε(δ) against the group size g on a log grid 1..g_max (:func:`tables.group_rows`)."""
    g_grid = np.unique(np.geomspace(1, check_positive_int("g_max", g_max), check_positive_int("points", points))
                       .round().astype(int))
    return pd.DataFrame(stab.group_rows(sigma=sigma, E=E, N=N, batch=batch, groups=g_grid, delta=delta))


def h_series_table(sigmas=(0.5, 1.0, 2.0, 4.0, 8.0)) -> pd.DataFrame:
    """App. G's h(σ): exact, the paper's series and the corrected series (:func:`tables.h_series_rows`)."""
    return pd.DataFrame(stab.h_series_rows(sigmas))


def thinning_table(*, sigma: float = SIGMA, E_values=(10, EPOCHS), delta: float = DELTA) -> pd.DataFrame:
    """App. D's thinning in ε(δ) (:func:`tables.thinning_rows`)."""
    return pd.DataFrame(stab.thinning_rows(sigma=sigma, E_values=E_values, delta=delta))


# --------------------------------------------------------------------------- Tables 1-2: curves and claims
def panel_curves(table: int, row: int, g: int, *, sigma: float = SIGMA, E: int = 1, N: int = N_MNIST, batch: int = 256,
                 pld_grid: float = 1e-4):
    """The curves of one panel of the per-row figure: ``{name: trade-off function}``.

    Names: "table lower/upper" (the printed Gaussian range), "lemma lower/upper" (the precise lemma), "exact A_1"
    (Def. 5.2, where computable) and, for Table 2 rows 1–2, "A_0 PLD (Poisson)" (dp_accounting, add/remove
    comparator; group transform for g > 1).
    """
    mech = stab.row_mechanism(table, row, batch)
    kw = {"sigma": sigma, "E": E, "g": g, "s": mech["s"], "m": mech["m"], "N": N}
    tab = sh.tradeoff_bounds(table, row, form="table", **kw)
    lem = sh.tradeoff_bounds(table, row, form="lemma", **kw)
    curves = {"table lower": tab.lower, "table upper": tab.upper, "lemma lower": lem.lower, "lemma upper": lem.upper}
    if table == 2 and row in (1, 2):
        f0 = sh.a0_tradeoff(sigma=sigma, N=N, batch=batch, E=E, method="pld-poisson", grid=pld_grid)
        curves["A_0 PLD (Poisson)"] = f0 if g == 1 else fdp.Curve(fdp.group_tradeoff(f0, g), label=f"group {g}")
    exact = stab.exact_mixture(table, row, sigma=sigma, E=E, N=N, batch=batch, g=g)
    if exact is not None:
        curves["exact A_1"] = exact
    return curves


def row_panels(*, sigma: float = SIGMA, E: int = 1, N: int = N_MNIST, batch: int = 256, pld_grid: float = 1e-4):
    """``{(table, row, g): panel_curves(...)}`` for every panel of :data:`PANELS`."""
    return {(t, r, g): panel_curves(t, r, g, sigma=sigma, E=E, N=N, batch=batch, pld_grid=pld_grid)
            for t, r, g in PANELS}


def axiom_table(panels: dict, alpha: np.ndarray | None = None, *, tol: float = 1e-7) -> pd.DataFrame:
    """:func:`tradeoff_axioms` of every curve of ``{(table, row, g): {name: curve}}``, one row per curve."""
    alpha = PANEL_ALPHA if alpha is None else alpha
    rows = []
    for (table, row, g), curves in panels.items():
        for name, f in curves.items():
            rows.append({"table": table, "row": row, "g": g, "curve": name, **tradeoff_axioms(f, alpha, tol=tol)})
    return pd.DataFrame(rows)


def mu_claims(*, sigma: float = SIGMA, E: int = EPOCHS, N: int = N_MNIST, delta: float = DELTA) -> dict[str, float]:
    """GDP-equivalent μ of the exact A_1 trade-off for Table 1 row 3 (SH, g = 1) and row 6 (BC+SH, s = 1024, g = 3)."""
    E = check_positive_int("E", E)
    row3 = sh.mixture_tradeoff("shuffle", sigma=sigma, E=E, N=N, m=256)
    row6 = sh.mixture_tradeoff("shuffle", sigma=sigma, E=E, N=(N // 1024) * 1024, s=1024, g=3)
    return {"table1.row3.mu": gdp_equivalent_mu(row3, delta), "table1.row6.mu.g3": gdp_equivalent_mu(row6, delta)}


def containment_claims(contain: pd.DataFrame) -> dict[str, bool]:
    """From :func:`containment_table`: does every checked g of the row have no violation of either bound?"""
    out = {}
    for key, (table, row) in {"table1.row4.contains": (1, 4), "table1.row5.contains": (1, 5),
                              "table1.row6.contains": (1, 6), "table2.row3.contains": (2, 3)}.items():
        sub = contain[(contain.table == table) & (contain.row == row)]
        if sub.empty:
            raise ValueError(f"contain has no rows for table {table} row {row}")
        out[key] = bool(((sub.lower_violations == 0) & (sub.upper_violations == 0)).all())
    return out


def hoeffding_claims(*, alpha: np.ndarray, sigma: float = SIGMA, E: int = EPOCHS, N: int = N_MNIST, batch: int = 256,
                     delta: float = DELTA):
    """Table 1 rows 1–2 (Lemmas E.3/E.5): the tails of App. E.2 and whether the claimed lower bounds hold.

    Returns ``(values, tails, row2)``: ``values`` holds the two exact tails at (N, |S_b|, E) and, per row, whether
    the exact A_1 trade-off is nowhere below the lemma's lower bound on ``alpha``; ``tails`` is
    :func:`tables.hoeffding_rows` as a frame; ``row2`` the α grid, the row-2 exact / lower / upper functions,
    the number of violating α and the ε(δ) of exact and bound for rows 1 and 2.
    """
    tails = sh.hoeffding_check(N, batch, E)
    exact2 = sh.mixture_tradeoff("fixed", sigma=sigma, E=E, N=N, m=batch, round_count="paper")
    bound2 = sh.tradeoff_bounds(1, 2, sigma=sigma, E=E, form="lemma")
    exact1 = sh.mixture_tradeoff("fixed", sigma=sigma, E=E, N=N, s=batch, g=2)
    bound1 = sh.tradeoff_bounds(1, 1, sigma=sigma, E=E, g=2, s=batch, N=N, form="lemma")
    violations2 = sh.bound_violations(exact2, bound2.lower, alpha)
    values = {
        "lemmaE2.tail.below": tails["tail_below_cU"],
        "lemmaE2.tail.above": tails["tail_above_cL"],
        "table1.row2.lower_bound_holds": not bool(violations2.any()),
        "table1.row1.lower_bound_holds": not bool(sh.bound_violations(exact1, bound1.lower, alpha).any()),
    }
    row2 = {
        "alpha": np.asarray(alpha, dtype=float), "exact": exact2, "lower": bound2.lower, "upper": bound2.upper,
        "violations": int(violations2.sum()),
        "eps_exact_row2": exact2.epsilon(delta), "eps_bound_row2": bound2.lower.epsilon(delta),
        "eps_exact_row1": exact1.epsilon(delta), "eps_bound_row1": bound1.lower.epsilon(delta),
    }
    return values, pd.DataFrame(stab.hoeffding_rows()), row2


def collision_claims(*, draws: int, sigma: float = SIGMA, E: int = EPOCHS, delta: float = DELTA, seed: int = 0):
    """App. F.3: q_3 of the uniform-shuffle law at s = 1024, N = 59392 and the exact ε at g = 10 under both laws.

    Returns ``(values, collision table, impact table)``.
    """
    coll = pd.DataFrame(stab.collision_rows(draws=draws, seed=seed))
    impact = []
    for n, s, g in [(59_968, 64, 2), (59_392, 1024, 3), (59_392, 1024, 10)]:
        kw = {"sigma": sigma, "E": E, "N": n, "s": s, "g": g}
        impact.append({"N": n, "s": s, "g": g, "eps_true_qj": sh.mixture_tradeoff("shuffle", **kw).epsilon(delta),
                       "eps_paper_qj": sh.mixture_tradeoff("shuffle", q_method="paper", **kw).epsilon(delta),
                       "eps_G_sqrt_gE": fdp.mu_to_epsilon(math.sqrt(g * E) / sigma, delta)})
    impact = pd.DataFrame(impact)
    last = coll[(coll.N == 59_392) & (coll.j == 3)].iloc[0]
    values = {"appF3.q3": float(last.q_true), "appF3.eps.g10": float(impact.iloc[-1].eps_true_qj)}
    return values, coll, impact


def disclaimer_claims(table3: pd.DataFrame, *, factor: float = 5.0) -> dict[str, bool]:
    """Is the A_1 ε (subsampling, exact) at least ``factor`` times the A_0 ε (App. G's CLT) in every run?"""
    factor = check_positive("factor", factor)
    ratio = table3.A1_subsampling / table3.A0_clt_uniform
    return {"disclaimer.a1_weaker": bool((ratio >= factor).all())}


def group_claims(*, sigma: float = SIGMA, N: int = N_MNIST, gamma_slack: float = 0.1) -> dict:
    """App. G: whether exact h(σ) < 1/σ, and the A_0 / A_1 IC+SS crossover (e+γ)N/(σ h(σ))² against N."""
    h = fdp.clt_factor(check_positive("sigma", sigma))
    crossover = (math.e + check_positive("gamma_slack", gamma_slack)) * N / (sigma * h) ** 2
    return {"appG.h_below_one_over_sigma": bool(h < 1 / sigma), "appG.crossover": crossover,
            "appG.sqrt_g_not_in_A0": bool(crossover > N)}


def thinning_claims(*, sigma: float = SIGMA, E: int = EPOCHS, delta: float = DELTA) -> dict[str, float]:
    """App. D: the μ-improvement factor √E/σ / μ_eq(thinned) of the A_1-labelled thinned mechanism."""
    thinned = sh.thinned_shuffle_mixture(sigma=sigma, E=E)
    return {"appD.factor": (math.sqrt(E) / sigma) / gdp_equivalent_mu(thinned, delta)}
