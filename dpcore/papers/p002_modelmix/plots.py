"""Figures of paper 002 (Xiao, Wan, Devadas, ModelMix), drawn with :mod:`dpcore.plots`.

* :func:`fig3_figure` -- Fig. 3: ε against iterations, one panel per (q, τ), four curves each, the end
  values written next to the curves' ends;
* :func:`sweeps_figure` -- ε at T against τ (with the fitted log-log slopes) and against p (§4.3's rate
  statements).
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from dpcore.papers.p002_modelmix.fig3 import CURVES, FIG3, FIG3_TAUS, PANELS
from dpcore.plots import epsilon_curves, new_axes, series_style

__all__ = ["fig3_figure", "sweeps_figure"]


def _annotate_ends(ax, steps, curves: dict[str, pd.Series]) -> None:
    """Write each curve's value at T right of its end, nudged apart so that close values stay legible."""
    ends = sorted(((float(v.iloc[-1]), i) for i, v in enumerate(curves.values())), reverse=True)
    last_y = None
    for value, i in ends:
        y = value if last_y is None else min(value, last_y / 1.28)  # log axis: at least ~10 % apart
        text = f"{value:.0f}" if value >= 100 else f"{value:#.3g}"
        colour = series_style(i, n=len(curves))["color"]
        ax.annotate(text, (steps[-1], value), xytext=(steps[-1] * 1.03, y), fontsize=7, va="center", color=colour)
        last_y = y


def fig3_figure(curves: pd.DataFrame) -> Figure:
    """Fig. 3 from :func:`dpcore.papers.p002_modelmix.fig3.panel_curves` (rows of panels: one per q)."""
    if curves.empty:
        raise ValueError("curves must hold at least one panel")
    rates = sorted(curves["q"].unique())
    taus = sorted(curves["tau_over_eta"].unique())
    fig, axes = new_axes(len(taus), len(rates), width=4.0 * len(taus), height=3.1 * len(rates) + 0.5, sharey=True)
    letters = {v: k for k, v in PANELS.items()}
    for (letter, q, tau), panel in curves.groupby(["panel", "q", "tau_over_eta"], sort=True):
        ax = axes[rates.index(q), taus.index(tau)]
        series = {c: panel[c] for c in CURVES}
        epsilon_curves(panel["steps"], series, xlabel="iteration", ylabel=f"ε at δ = {FIG3['delta']:g}",
                       title=f"({letters.get((q, tau), letter)}) q = {q:g}, τ = {tau:g}η", logy=True,
                       legend="none", ax=ax)  # fmt: skip
        ax.set_xlim(0, FIG3["steps"] * 1.2)
        if taus.index(tau) > 0:
            ax.set_ylabel("")
        _annotate_ends(ax, panel["steps"].to_numpy(), series)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)
    fig.suptitle(f"Fig. 3: privacy amplification from ModelMix (n = {FIG3['n'] // 1000}K, c = {FIG3['clip']:g}, "
                 f"T = {FIG3['steps']}, Mironov conversion)")  # fmt: skip
    return fig


def sweeps_figure(taus: pd.DataFrame, ps: pd.DataFrame, slopes: dict[str, float], regular_eps: float) -> Figure:
    """ε at T against τ/η (from :func:`~dpcore.papers.p002_modelmix.fig3.tau_sweep`, slopes in the legend)
    and against p (from :func:`~dpcore.papers.p002_modelmix.fig3.p_sweep`), regular DP-SGD dashed."""
    fig, axes = new_axes(2, 1, width=11.0, height=4.0)
    series = {f"{c} (slope {slopes[c]:.2f})": taus[c] for c in CURVES[1:]}
    epsilon_curves(taus["tau/eta"], series, xlabel="τ / η", ylabel=f"ε at T = {FIG3['steps']}", logx=True, logy=True,
                   reference=regular_eps, reference_label="regular DP-SGD",
                   title="ε against the mixing threshold τ (q = 0.02; shaded: slope fit range)",
                   ax=axes[0, 0])  # fmt: skip
    axes[0, 0].axvspan(min(FIG3_TAUS), max(FIG3_TAUS), color="0.5", alpha=0.12, zorder=0, linewidth=0)
    columns = [c for c in ps.columns if c != "p"]
    epsilon_curves(ps["p"], {c.replace("tau=", "τ = ").replace("eta", "η"): ps[c] for c in columns},
                   xlabel="ℓ∞ parameter p", ylabel=f"ε at T = {FIG3['steps']}", logx=True, logy=True,
                   reference=regular_eps, reference_label="regular DP-SGD",
                   title="ε against p (integer orders 2..64)", ax=axes[0, 1])  # fmt: skip
    return fig
