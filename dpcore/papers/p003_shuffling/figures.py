"""Paper 003: the notebook's figures, drawn with :mod:`dpcore.plots` (style, axes, series styles).

Every function returns ``(figure, data frame of what is drawn)`` for :meth:`dpcore.report.Report.figure`.

* :func:`tradeoff_panels` -- one panel per row of Tables 1–2 (van Dijk et al.): the printed range, the lemma
  bounds and the exact A_1 trade-off.  The A_0 rows (Table 2 rows 1–2) lie within 0.02 of the no-leakage
  line β = 1 − α at E = 1 and would look empty on the unit square, so those panels plot the gap
  1 − α − β(α) on their own (zoomed) scale instead; their titles say so.
* :func:`hoeffding_violation` -- Table 1 row 2 (Lemma E.3): the exact trade-off against the claimed bounds.
* :func:`epsilon_vs_epochs` -- ε(δ) against E for A_1 and A_0 accounting (the disclaimer in numbers).
* :func:`group_privacy` -- μ against the group size g (App. G).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpcore import plots
from dpcore.papers.p003_shuffling.bounds import group_crossover
from dpcore.validation import check_positive

__all__ = [
    "CURVES",
    "GAP_ROWS",
    "coincidence_text",
    "tradeoff_panels",
    "hoeffding_violation",
    "epsilon_vs_epochs",
    "group_privacy",
]

# fixed style index per curve name, so a name has the same colour and line style in every panel
CURVES = ("exact A_1", "table lower", "table upper", "lemma lower", "lemma upper", "A_0 PLD (Poisson)")
GAP_ROWS = {(2, 1), (2, 2)}  # A_0 rows: drawn as the gap 1 − α − β


def _check_curve_names(curves: dict) -> None:
    unknown = set(curves) - set(CURVES)
    if unknown:
        raise ValueError(f"curve names must be among {CURVES}, got {sorted(unknown)}")


def coincidence_text(alpha: np.ndarray, curves: dict[str, np.ndarray], *, atol: float = 2e-3, width: int = 36) -> str:
    """Lines naming curves drawn on top of each other (max |Δβ| ≤ ``atol``), and curves on β = 1 − α.

    Coinciding curves hide each other on a plot; the panel says which ones coincide instead (chains wrapped
    at about ``width`` characters).
    """
    alpha = np.asarray(alpha, dtype=float)
    groups: list[list[str]] = []
    diagonal = [n for n, b in curves.items() if np.max(np.abs(b - (1 - alpha))) <= atol]
    for name, beta in curves.items():
        if name in diagonal:
            continue
        for group in groups:
            if np.max(np.abs(curves[group[0]] - beta)) <= atol:
                group.append(name)
                break
        else:
            groups.append([name])
    chains = [group for group in groups if len(group) > 1]
    if diagonal:
        chains.append([*diagonal, "1 − α"])
    return "\n".join(_wrap_chain(chain, width) for chain in chains)


def _wrap_chain(names: list[str], width: int) -> str:
    """``a = b = c`` broken into lines of at most about ``width`` characters (continuation lines start with '=')."""
    lines = [names[0]]
    for name in names[1:]:
        if len(lines[-1]) + 3 + len(name) <= width:
            lines[-1] += f" = {name}"
        else:
            lines.append(f"= {name}")
    return "\n".join(lines)


def tradeoff_panels(panels: dict, alpha: np.ndarray, *, suptitle: str = "", ncols: int = 3):
    """A grid of trade-off panels from ``{(table, row, g): {curve name: trade-off function}}``.

    Table 1 rows and Table 2 row 3: β = h(α) on the unit square with the no-leakage line.  Table 2 rows 1–2
    (A_0, within 0.02 of β = 1 − α at the notebook's settings): the gap 1 − α − h(α) against α, on a y-axis
    scaled to the data (titles say "zoomed").  One legend for the figure, below the panels.
    """
    if not panels:
        raise ValueError("panels must be a non-empty mapping (table, row, g) -> curves")
    alpha = np.asarray(alpha, dtype=float)
    if alpha.ndim != 1 or alpha.size < 2 or alpha.min() < 0 or alpha.max() > 1:
        raise ValueError("alpha must be a 1-D grid in [0, 1]")
    nrows = -(-len(panels) // ncols)
    fig, axes = plots.new_axes(ncols, nrows, width=4.0 * ncols, height=3.6 * nrows)
    data = {"alpha": alpha}
    handles = {}
    for ax, ((table, row, g), curves) in zip(axes.flat, panels.items(), strict=False):
        _check_curve_names(curves)
        gap = (table, row) in GAP_ROWS
        if not gap:
            ax.plot([0, 1], [1, 0], color="0.6", lw=0.9, ls="--", zorder=1)
        drawn = {}
        for name, f in curves.items():
            beta = np.asarray(f(alpha), dtype=float)
            data[f"T{table}R{row} g={g} {name}"] = drawn[name] = beta
            y = 1.0 - alpha - beta if gap else beta
            (line,) = ax.plot(alpha, y, label=name, **plots.series_style(CURVES.index(name), n=len(CURVES),
                                                                          markers=False))
            handles.setdefault(name, line)
        text = coincidence_text(alpha, drawn)
        if text:  # a handle-less legend: matplotlib's "best" placement keeps the note off the curves
            note = ax.legend(handles=[], title=text, loc="best", title_fontsize=7, framealpha=0.9)
            note._legend_box.align = "left"
        if gap:
            ax.set(xlim=(0, 1), ylim=(0, None), xlabel="type I error α", ylabel="1 − α − β (zoomed)",
                   title=f"Table {table} row {row} (A_0), g={g}: gap below β = 1 − α")
        else:
            ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="type I error α", ylabel="type II error β = h(α)",
                   title=f"Table {table} row {row} (A_1), g={g}")
        ax.title.set_fontsize(9)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    names = [n for n in CURVES if n in handles]
    fig.legend([handles[n] for n in names], names, loc="outside lower center", ncols=len(names), frameon=False)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    return fig, pd.DataFrame(data)


def hoeffding_violation(row2: dict, *, reference=None, title: str = ""):
    """Power 1 − f of the exact trade-off and the claimed bounds (log–log), and the ratio exact/lower bound.

    ``row2`` holds the α grid "alpha" and the curves "exact", "lower", "upper" (as returned by
    :func:`results.hoeffding_claims`);
    ``reference`` an optional ``(label, curve)``.  A ratio above 1 means the exact curve lies below the
    claimed *lower* bound (the bound fails there).
    """
    alpha = np.asarray(row2["alpha"], dtype=float)
    p_exact, p_lower, p_upper = (np.asarray(row2[k].power(alpha), dtype=float) for k in ("exact", "lower", "upper"))
    fig, axes = plots.new_axes(2, 1, width=11.5, height=4.0)
    ax0, ax1 = axes[0]
    series = {"exact A_1 (Def. 5.2)": p_exact, "claimed lower bound (Lemma E.3)": p_lower,
              "claimed upper bound (Lemma E.3)": p_upper}
    if reference is not None:
        series[reference[0]] = np.asarray(reference[1].power(alpha), dtype=float)
    plots.epsilon_curves(alpha, series, xlabel="type I error α", ylabel="power 1 − h(α)", title=title, logx=True,
                         logy=True, markers=False, ax=ax0)
    ratio = p_exact / p_lower
    ax1.plot(alpha, ratio, **plots.series_style(0, markers=False), label="power(exact) / power(lower bound)")
    ax1.axhline(1.0, color="0.3", lw=1.0, ls=":")
    ax1.fill_between(alpha, 1.0, np.maximum(1.0, ratio), color="C3", alpha=0.3, label="exact below the bound")
    ax1.set(xscale="log", xlabel="type I error α", ylabel="power ratio", title="ratio > 1: the lower bound fails")
    ax1.legend(loc="best", framealpha=0.9)
    return fig, pd.DataFrame({"alpha": alpha, "power_exact": p_exact, "power_lower": p_lower, "power_upper": p_upper})


_GAP_COLUMNS = {"A1_shuffling": "A_1 shuffling (G_{√E/σ})", "A1_subsampling": "A_1 subsampling (exact)",
                "A0_clt_uniform": "A_0 CLT fixed-size (App. G)", "A0_clt_poisson": "A_0 CLT Poisson",
                "A0_pld_poisson": "A_0 PLD Poisson (dp_accounting)"}


def epsilon_vs_epochs(gap: pd.DataFrame, *, delta: float, suptitle: str = ""):
    """ε(δ) against epochs, one panel per batch size, from :func:`tables.a0_a1_rows` (log–log, shared y)."""
    check_positive("delta", delta)
    batches = sorted(gap["batch"].unique())
    fig, axes = plots.new_axes(len(batches), 1, width=4.2 * len(batches), height=3.8, sharey=True)
    for ax, batch in zip(axes[0], batches, strict=True):
        grp = gap[gap.batch == batch].sort_values("E")
        curves = {label: grp[col].to_numpy() for col, label in _GAP_COLUMNS.items() if grp[col].notna().all()}
        plots.epsilon_curves(grp["E"].to_numpy(), curves, xlabel="epochs E", ylabel=f"ε at δ = {delta:g}",
                             title=f"|S_b| = {batch}", logx=True, logy=True, legend="none", ax=ax)
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=len(names), frameon=False)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    return fig, gap


_GROUP_COLUMNS = {"mu_A1_BC_SH_sqrt_gE": "A_1 BC+SH: √(gE)/σ", "mu_A1_IC_SS_lemma_E4": "A_1 IC+SS (Lemma E.4)",
                  "mu_A1_generic_group": "generic group: g√E/σ", "mu_A0_group_clt": "A_0 DP-SGD: g·μ_A0 (CLT)"}


def group_privacy(grp: pd.DataFrame, *, N: int, batch: int, sigma: float, E: int, title: str = ""):
    """μ against the group size g from :func:`tables.group_rows`, with the A_0 / A_1 BC+SH crossover
    g* = N/(|S_b| σ² h(σ)²) (:func:`bounds.group_crossover`) marked."""
    crossover = group_crossover(N, batch, sigma)
    title = title or f"Group privacy, σ={sigma:g}, E={E}, N={N}, |S_b|={batch}"
    fig, axes = plots.new_axes(1, 1, width=7.0, height=4.4)
    ax = axes[0, 0]
    curves = {label: grp[col].to_numpy() for col, label in _GROUP_COLUMNS.items()}
    plots.epsilon_curves(grp["g"].to_numpy(), curves, xlabel="group size g", ylabel="μ (G_μ guarantee)", title=title,
                         logx=True, logy=True, markers=False, ax=ax)
    ax.axvline(crossover, color="0.4", ls=":", lw=1.2)
    # horizontal, in the empty lower right (all curves are above μ = 5 there), off the crossing point
    ax.annotate(f"g* = {crossover:.0f}: A_0 DP-SGD = A_1 BC+SH", (crossover, 0.04), xycoords=("data", "axes fraction"),
                xytext=(5, 0), textcoords="offset points", fontsize=8, va="bottom", ha="left")
    return fig, grp
