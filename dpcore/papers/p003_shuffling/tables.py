"""Paper 003: Tables 1–2 evaluated at the Appendix H settings, and the comparison tables of the notebook.

Appendix H trains with σ = 2, E = 100, |S_b| = ms ∈ {64, 128, 256, 512, 1024} (the paper's "1028" read as
1024: MC with s = 64 has |S_b| = 64·m and 1028 is no multiple of 64), MC with s = 64, on MNIST
(N = 60000) and CIFAR-10 (N = 50000).  Every function returns a list
of row dicts (one DataFrame each in the notebook); a cell that is not computed (no exact mixture for the row,
the PLD switched off, a curve that is not Gaussian) is ``None``, never NaN, and an ε is ∞ only where the bound
it comes from certifies nothing (a vacuous lemma bound, a CLT μ that overflows).
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.accounting import fdp
from dpcore.papers.p003_shuffling import bounds as sh
from dpcore.validation import (
    check_bool,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_range,
    check_real_array,
    check_sequence,
)

__all__ = [
    "APP_H",
    "row_mechanism",
    "exact_mixture",
    "table_1_2_rows",
    "a0_a1_rows",
    "group_rows",
    "hoeffding_rows",
    "collision_rows",
    "h_series_rows",
    "thinning_rows",
    "containment_rows",
]

APP_H = {"sigma": 2.0, "E": 100, "N": {"MNIST": 60_000, "CIFAR-10": 50_000}, "batches": (64, 128, 256, 512, 1024)}


def _sigma(name: str, sigma: float) -> float:
    return check_range(name, check_positive(name, sigma), *sh.SIGMA_RANGE)


def _run(sigma: float, E: int, N: int, batch: int) -> tuple[float, int, int, int]:
    """σ, E, N and |S_b| of one run, validated."""
    N = check_positive_int("N", N, maximum=sh.MAX_N)
    batch = check_positive_int("batch", batch, maximum=sh.MAX_N)
    if batch > N:
        raise ValueError(f"batch must be <= N, got batch={batch}, N={N}")
    return _sigma("sigma", sigma), check_positive_int("E", E, maximum=sh.MAX_EPOCHS), N, batch


def _ints(name: str, values, *, limit: int = 100, maximum: int | None = None) -> list[int]:
    """A sequence of at most ``limit`` positive integers (a table's rows)."""
    values = check_sequence(name, values)
    if len(values) > limit:
        raise ValueError(f"{name} must hold at most {limit} values, got {len(values)}")
    return [check_positive_int(name, v, maximum=maximum) for v in values]


def _settings(name: str, settings) -> list[tuple[int, int, int]]:
    """A sequence of at most 20 triples of positive integers."""
    out = []
    for item in check_sequence(name, settings):
        if len(out) == 20 or isinstance(item, str) or not hasattr(item, "__len__") or len(item) != 3:
            raise ValueError(f"{name} must be a sequence of at most 20 triples of positive integers, got {item!r}")
        out.append(tuple(check_positive_int(name, v, maximum=sh.MAX_N) for v in item))
    return out


def row_mechanism(table: int, row: int, batch: int) -> dict:
    """The (sampling, s, m) of Algorithm 1 each row describes at batch size |S_b| (IC: s = 1, BC: m = 1)."""
    table, row = check_positive_int("table", table), check_positive_int("row", row)
    if (table, row) not in {(t, r) for t, r, _, _ in sh.table_rows()}:
        raise ValueError(f"table and row must name a row of Tables 1-2 (table 1 rows 1-6, table 2 rows 1-3), "
                         f"got table={table}, row={row}")  # fmt: skip
    batch = check_positive_int("batch", batch, maximum=sh.MAX_N)
    batch_clip = {(1, 1), (1, 5), (1, 6)}
    shuffled = {(1, 3), (1, 4), (1, 5), (1, 6)}
    s, m = (batch, 1) if (table, row) in batch_clip else (1, batch)
    return {"sampling": "shuffle" if (table, row) in shuffled else "fixed", "s": s, "m": m}


def _eps(f, delta: float) -> float:
    return float(f.epsilon(delta))


def exact_mixture(table: int, row: int, *, sigma: float, E: int, N: int, batch: int, g: int):
    """The exact A_1 mixture of the row's mechanism where :func:`bounds.mixture_tradeoff` covers it (None for the
    A_0 rows of Table 2 and for shuffling with m > 1 and g > 2)."""
    mech = row_mechanism(table, row, batch)
    sigma, E, N, batch = _run(sigma, E, N, batch)
    g = check_positive_int("g", g, maximum=sh.MAX_N)
    if table == 2 and row in (1, 2):
        return None
    if mech["sampling"] == "shuffle" and mech["m"] > 1 and g > 2:
        return None
    return sh.mixture_tradeoff(mech["sampling"], sigma=sigma, E=E, N=N, s=mech["s"], m=mech["m"], g=g)


def table_1_2_rows(
    *, sigma: float, E: int, N: int, batch: int, groups=(1, 2, 10), delta: float = 1e-5, exact: bool = True
) -> list[dict]:
    """Every row of Tables 1 and 2 at one (σ, E, N, |S_b|), for each group size g the row allows.

    Columns: the printed Gaussian range (μ and ε(δ) of its two ends), the precise lemma bounds (ε(δ) of the
    lower and upper functions, with the validity condition), and the exact A_1 ε(δ) of Def. 5.2 where available
    (None elsewhere; μ columns are None for a bound that is not Gaussian).
    """
    groups = _ints("groups", groups)
    delta = check_open_unit("delta", delta)
    exact = check_bool("exact", exact)
    sigma, E, N, batch = _run(sigma, E, N, batch)
    rows = []
    for table, row, desc, adversary in sh.table_rows():
        for g in groups:
            mech = row_mechanism(table, row, batch)
            if (table, row) in {(1, 2), (1, 3), (2, 1)} and g != 1:
                continue
            if (table, row) == (1, 6) and g > mech["s"]:
                continue
            kw = {"sigma": sigma, "E": E, "g": g, "s": mech["s"], "m": mech["m"], "N": N}
            tab = sh.tradeoff_bounds(table, row, form="table", **kw)
            lem = sh.tradeoff_bounds(table, row, form="lemma", **kw)
            ex = exact_mixture(table, row, sigma=sigma, E=E, N=N, batch=batch, g=g) if exact else None
            rows.append(
                {
                    "table": table,
                    "row": row,
                    "description": desc,
                    "adversary": adversary,
                    "g": g,
                    "sampling": mech["sampling"],
                    "s": mech["s"],
                    "m": mech["m"],
                    "mu_lower_table": getattr(tab.lower, "mu", None),
                    "mu_upper_table": getattr(tab.upper, "mu", None),
                    "eps_lower_table": _eps(tab.lower, delta),
                    "eps_upper_table": _eps(tab.upper, delta),
                    "eps_lower_lemma": _eps(lem.lower, delta),
                    "eps_upper_lemma": _eps(lem.upper, delta),
                    "eps_exact_A1": _eps(ex, delta) if ex is not None else None,
                    "condition": lem.condition,
                    "condition_value": lem.condition_value,
                    "valid": lem.valid,
                    "note": lem.note,
                }
            )
    return rows


def containment_rows(
    *, sigma: float, E: int, N: int, batch: int, groups=(1, 2), alpha: np.ndarray | None = None
) -> list[dict]:
    """Does the exact A_1 trade-off lie between each row's claimed lower and upper functions (lemma form)?

    Compared in power terms 1 − f on a log-spaced α grid (down to 1e-40) with relative tolerance 1e-6.
    """
    alpha = np.logspace(-40, math.log10(0.999), 300) if alpha is None else alpha
    alpha = check_real_array("alpha", alpha, low=0.0, high=1.0, ndim=1)
    groups = _ints("groups", groups)
    sigma, E, N, batch = _run(sigma, E, N, batch)
    rows = []
    for table, row, desc, adversary in sh.table_rows():
        if adversary != "A_1":
            continue
        for g in groups:
            mech = row_mechanism(table, row, batch)
            if (table, row) in {(1, 2), (1, 3)} and g != 1 or (table, row) == (1, 6) and g > mech["s"]:
                continue
            ex = exact_mixture(table, row, sigma=sigma, E=E, N=N, batch=batch, g=g)
            if ex is None:
                continue
            lem = sh.tradeoff_bounds(table, row, form="lemma", sigma=sigma, E=E, g=g, s=mech["s"], m=mech["m"], N=N)
            p_exact = np.asarray(ex.power(alpha))
            p_lower = np.asarray(lem.lower.power(alpha))
            below_lower = p_exact > p_lower * (1 + 1e-6) + 1e-300
            above_upper = np.asarray(lem.upper.power(alpha)) > p_exact * (1 + 1e-6) + 1e-300
            rows.append(
                {
                    "table": table,
                    "row": row,
                    "description": desc,
                    "g": g,
                    "lemma_valid": lem.valid,
                    "lower_violations": int(below_lower.sum()),
                    "upper_violations": int(above_upper.sum()),
                    "n_alpha": int(alpha.size),
                    "worst_power_ratio_lower": float(np.max(p_exact / p_lower)),
                }
            )
    return rows


def a0_a1_rows(
    *, sigma: float, E_values, N: int, batches, delta: float = 1e-5, pld: bool = True, pld_grid: float = 1e-4
) -> list[dict]:
    """ε(δ) against E for the same DP-SGD runs under A_1 (shuffling: G_{√E/σ}; subsampling: exact mixture) and
    A_0 (CLT uniform, the paper's formula; CLT Poisson; dp_accounting PLD, Poisson/add-remove comparator; None
    with ``pld=False``)."""
    batches = _ints("batches", batches, maximum=sh.MAX_N)
    E_values = _ints("E_values", E_values, maximum=sh.MAX_EPOCHS)
    delta = check_open_unit("delta", delta)
    pld = check_bool("pld", pld)
    sigma, _, N, _ = _run(sigma, 1, N, 1)
    pld_grid = check_range("pld_grid", pld_grid, *sh.PLD_GRID_RANGE)
    rows = []
    for batch in batches:
        for E in E_values:
            kw = {"sigma": sigma, "E": E, "N": N, "s": 1, "m": batch}
            row = {
                "N": N,
                "batch": batch,
                "E": E,
                "A1_shuffling": sh.mixture_tradeoff("shuffle", **kw).epsilon(delta),
                "A1_subsampling": sh.mixture_tradeoff("fixed", **kw).epsilon(delta),
                "A0_clt_uniform": sh.a0_epsilon(sigma=sigma, N=N, batch=batch, E=E, delta=delta),
                "A0_clt_poisson": sh.a0_epsilon(sigma=sigma, N=N, batch=batch, E=E, delta=delta, method="clt-poisson"),
            }
            row["A0_pld_poisson"] = (
                sh.a0_epsilon(sigma=sigma, N=N, batch=batch, E=E, delta=delta, method="pld-poisson", grid=pld_grid)
                if pld
                else None
            )
            rows.append(row)
    return rows


def group_rows(*, sigma: float, E: int, N: int, batch: int, groups, delta: float = 1e-5, gamma_slack: float = 0.1):
    """μ and ε(δ) against the group size g: A_1 BC+SH sqrt(gE)/σ (√g), A_1 IC+SS (Lemma E.4, linear for g ≤ m),
    the generic group transform of the g = 1 result g·sqrt(E)/σ, and A_0's group bound g·μ_{A_0} (CLT)."""
    groups = _ints("groups", groups, maximum=10**6)
    delta = check_open_unit("delta", delta)
    sigma, E, N, batch = _run(sigma, E, N, batch)
    gamma_slack = check_range("gamma_slack", gamma_slack, 0.0, 100.0)
    mu_a0 = sh.a0_tradeoff(sigma=sigma, N=N, batch=batch, E=E).mu
    rows = []
    for g in groups:
        mus = {
            "A1_BC_SH_sqrt_gE": math.sqrt(g * E) / sigma,
            "A1_IC_SS_lemma_E4": math.sqrt((math.e + gamma_slack) * min(batch, g) * g * E) / sigma,
            "A1_generic_group": fdp.group_gaussian(math.sqrt(E) / sigma, g),
            "A0_group_clt": fdp.group_gaussian(mu_a0, g),
        }
        row = {"g": g, **{f"mu_{k}": v for k, v in mus.items()}}
        row.update({f"eps_{k}": fdp.mu_to_epsilon(v, delta) for k, v in mus.items()})
        rows.append(row)
    return rows


def hoeffding_rows(settings=((60_000, 64, 100), (60_000, 256, 100), (50_000, 1024, 100), (60_000, 64, 10))):
    """Erratum (App. E.2 Hoeffding step): true binomial tails vs the claimed e^{−E} (:func:`bounds.hoeffding_check`)."""
    return [sh.hoeffding_check(N, b, E) for N, b, E in _settings("settings", settings)]


def collision_rows(settings=((600, 64, 2), (6_400, 64, 3), (59_392, 1024, 3)), *, draws: int = 50_000, seed: int = 0):
    """Erratum (App. F.3 collision law): the paper's q_j, the uniform-shuffle law and Monte Carlo (j = 1..g)."""
    rows = []
    for N, s, g in _settings("settings", settings):
        paper = sh.shuffle_collision_pmf(N, s, g, method="paper")
        true = sh.shuffle_collision_pmf(N, s, g, method="true")
        mc = sh.shuffle_collision_monte_carlo(N, s, g, draws=draws, seed=seed)
        for j in range(g):
            rows.append(
                {"N": N, "s": s, "g": g, "j": j + 1, "q_paper": paper[j], "q_true": true[j], "q_monte_carlo": mc[j]}
            )
    return rows


def h_series_rows(sigmas=(0.5, 1.0, 2.0, 4.0, 8.0)) -> list[dict]:
    """App. G's h(σ): exact, the paper's series and the corrected series, against 1/σ."""
    sigmas = check_sequence("sigmas", sigmas)
    if len(sigmas) > 1000:
        raise ValueError(f"sigmas must hold at most 1000 values, got {len(sigmas)}")
    sigmas = [_sigma("sigmas", s) for s in sigmas]
    return [
        {
            "sigma": s,
            "h_exact": fdp.clt_factor(s),
            "h_paper_series": sh.clt_h_series(s),
            "h_corrected_series": sh.clt_h_series(s, which="corrected"),
            "one_over_sigma": 1 / s,
        }
        for s in sigmas
    ]


def thinning_rows(*, sigma: float, E_values=(10, 100), delta: float = 1e-5) -> list[dict]:
    """App. D: ε(δ) unthinned, with labelled thinning (exact), G_{sqrt(E/2)/σ} and the paper's factor-2 heuristic."""
    E_values = _ints("E_values", E_values, maximum=sh.MAX_EPOCHS)
    delta = check_open_unit("delta", delta)
    sigma = _sigma("sigma", sigma)
    return [
        {
            "E": E,
            "unthinned": fdp.mu_to_epsilon(math.sqrt(E) / sigma, delta),
            "thinned_exact": sh.thinned_shuffle_mixture(sigma=sigma, E=E).epsilon(delta),
            "gaussian_sqrt_E_over_2": fdp.mu_to_epsilon(math.sqrt(E / 2) / sigma, delta),
            "paper_factor_2": fdp.mu_to_epsilon(math.sqrt(E) / (2 * sigma), delta),
        }
        for E in E_values
    ]
