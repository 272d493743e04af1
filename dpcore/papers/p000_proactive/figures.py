"""Paper 000 (van Dijk et al., "Proactive DP"): the notebook's figures, drawn with :mod:`dpcore.plots`.

Each function takes the regenerated tables (see :mod:`~dpcore.papers.p000_proactive.tables` and
:mod:`~dpcore.papers.p000_proactive.results`) and returns a matplotlib figure; ``Report.figure`` writes it.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from dpcore.plots import epsilon_curves, new_axes, series_style

__all__ = ["sigma_vs_epsilon_figure", "sample_sizes_figure", "tightness_figure", "schedule_figure"]

#: vertical markers of the tightness figure: column of tightness_summary, label, line style
_ROUND_MARKERS = (
    ("T_min", "T_min, γ = F(2) (Tables 9–11)", "-", "0.25"),
    ("T_min_gamma_star", "T_min, γ = γ* (Thm 3.1)", "--", "0.25"),
    ("T_min_asym", "T_min_asym = T_min/(2γ)", ":", "#c0392b"),
    ("T_k2_over_4eps", "k²/(4ε): where the printed asym. ε_f-DP was computed", "-.", "#8e44ad"),
)


def _frame(name: str, data) -> pd.DataFrame:
    frame = pd.DataFrame(data)
    if frame.empty:
        raise ValueError(f"{name} must be a non-empty table")
    return frame


def sigma_vs_epsilon_figure(curves: pd.DataFrame) -> Figure:
    """σ against ε for several δ: eq. (6) (solid) and the Tables 3–8 rule σ = sqrt(2 ln(1/δ)/ε) (dashed)."""
    curves = _frame("curves", curves)
    fig, axes = new_axes(1, 1, width=7.0, height=4.2)
    ax = axes[0, 0]
    for i, (delta, grp) in enumerate(curves.groupby("delta")):
        style = series_style(i, markers=False)
        ax.plot(grp["epsilon"], grp["sigma_theorem"], color=style["color"], lw=1.8, label=f"eq. (6), δ = {delta:.3g}")
        ax.plot(grp["epsilon"], grp["sigma_paper"], color=style["color"], ls="--", lw=1.0)
    ax.plot([], [], color="0.3", ls="--", lw=1.0, label="Tables 3–8 rule (no '+ε')")
    ax.set(xscale="log", yscale="log", xlabel="ε", ylabel="σ", title="σ(ε, δ): eq. (6) (solid) vs the Tables 3–8 rule")
    ax.legend(fontsize=8)
    return fig


def sample_sizes_figure(t68: pd.DataFrame) -> Figure:
    """Tables 6–8: the printed s, the paper-mode E.1 search and the theorem-mode E.1 maximum per ε target."""
    t68 = _frame("t68", t68)
    tables = list(dict.fromkeys(t68["table"]))
    fig, axes = new_axes(len(tables), 1, width=4.4 * len(tables), height=3.8)
    for ax, name in zip(axes[0], tables, strict=True):
        grp = t68[t68.table == name]
        epsilon_curves(
            grp["paper_epsilon"].to_numpy(),
            {
                "printed s": grp["paper_s"].to_numpy(),
                "paper-mode E.1 search (ours)": grp["s_paper_mode_search"].to_numpy(),
                "theorem mode: eq. (6), γ* (ours)": grp["s_theorem"].to_numpy(),
            },
            xlabel="ε target",
            ylabel="largest sample size s",
            title=f"{name} ({grp['setting'].iloc[0]})",
            logx=True,
            legend="none",
            ax=ax,
        )
        for line in ax.get_lines():
            line.set_markevery(1)
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, frameon=False)
    return fig


def tightness_figure(tight: pd.DataFrame, summary: pd.DataFrame) -> Figure:
    """Theorem 3.2 in numbers: ε of the GDP CLT (the paper's accountant) and of RDP at T rounds against ε_target,
    with the round counts of Tables 9–11 as vertical lines (identified in the legend below the panels) and the
    point where each accountant loses ε_target."""
    tight, summary = _frame("tight", tight), _frame("summary", summary)
    settings = list(summary["setting"])
    fig, axes = new_axes(len(settings), 1, width=4.4 * len(settings), height=3.6)
    for ax, setting in zip(axes[0], settings, strict=True):
        grp = tight[tight.setting == setting]
        row = summary[summary.setting == setting].iloc[0]
        epsilon_curves(
            grp["T"].to_numpy(),
            {"GDP CLT, uniform (the paper's accountant)": grp["eps_gdp_uniform"].to_numpy(),
             "RDP (rigorous upper bound)": grp["eps_rdp"].to_numpy()},
            xlabel="rounds T",
            ylabel="ε",
            title=f"{setting} (δ = {row.delta:.3g})",
            logx=True,
            markers=False,
            reference=float(row.epsilon_target),
            reference_label="ε_target (eq. (6))",
            legend="none",
            ax=ax,
        )
        for column, _, ls, colour in _ROUND_MARKERS:
            ax.axvline(float(row[column]), color=colour, ls=ls, lw=1.1, zorder=1)
        ax.plot([row.T_clt, row.T_rdp], [row.epsilon_target] * 2, "o", color="k", ms=4, zorder=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    handles += [Line2D([], [], color=colour, ls=ls, lw=1.1) for _, _, ls, colour in _ROUND_MARKERS]
    labels += [label for _, label, _, _ in _ROUND_MARKERS]
    handles.append(Line2D([], [], color="k", marker="o", ls="", ms=4))
    labels.append("ε_target lost (CLT, RDP)")
    fig.legend(handles, labels, loc="outside lower center", ncols=4, frameon=False, fontsize=7)
    return fig


def schedule_figure(sched: pd.DataFrame, epsilon_target: float) -> Figure:
    """App. E: Fig. 15's flow chart redrawn, the sample size per phase, and ε and θ after each phase."""
    sched = _frame("sched", sched)
    fig, axes = new_axes(3, 1, width=13.0, height=3.8)
    ax0, ax1, ax2 = axes[0]
    boxes = ["Utility graph\n(C_i, σ-range R_i), K", "DP calculator\nlargest σ in R_i,\nmax s by Thm B.4",
             "FLwithDP\nT = K/s rounds", "accuracy ≥ target?", "stop participating"]
    ys = np.linspace(0.92, 0.08, len(boxes))
    texts = [
        ax0.text(0.4, y, text, ha="center", va="center", fontsize=7, bbox={"boxstyle": "round", "fc": "0.93"})
        for y, text in zip(ys, boxes, strict=True)
    ]
    arrow = {"arrowstyle": "->", "color": "0.2", "shrinkA": 1, "shrinkB": 1}
    for upper, lower in zip(texts[:-1], texts[1:], strict=True):  # box edge to box edge, in the boxes' own coordinates
        ax0.annotate("", xy=(0.5, 1.0), xycoords=lower, xytext=(0.5, 0.0), textcoords=upper, arrowprops=arrow)
    ax0.annotate("", xy=(1.0, 0.5), xycoords=texts[1], xytext=(1.0, 0.5), textcoords=texts[3],
                 arrowprops={**arrow, "connectionstyle": "arc,angleA=0,angleB=0,armA=40,armB=40,rad=8"})
    ax0.text(0.6, 0.5 * (ys[1] + ys[3]), "no: lower σ,\n(raise C),\nadd K_j", fontsize=7, va="center")
    ax0.text(0.43, 0.5 * (ys[3] + ys[4]), "yes", fontsize=7, va="center")
    ax0.set(xlim=(0, 1), ylim=(0, 1), title="Fig. 15 (redrawn)")
    ax0.set_axis_off()
    ax1.bar(sched["phase"], sched["s_j"], color=series_style(0)["color"])
    ax1.set(xlabel="phase j", ylabel="s_j", title="sample size per phase", xticks=sched["phase"])
    epsilon_curves(
        sched["phase"].to_numpy(),
        {"ε after phase j": sched["epsilon"].to_numpy(), "θ = s_max/s̄": sched["theta"].to_numpy()},
        xlabel="phase j",
        ylabel="",
        title="budget spent",
        reference=float(epsilon_target),
        reference_label="ε_target",
        ax=ax2,
    )
    for line in ax2.get_lines():
        line.set_markevery(1)
    ax2.set_xticks(sched["phase"])
    return fig
