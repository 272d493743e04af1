"""Figures of the paper-004 notebook, drawn with the project style (:mod:`dpcore.plots`).

* :func:`fig2`                -- Fig. 2: δ(ε) of Theorem 2 for each q (log δ);
* :func:`baselines_figure`    -- Theorem 2 against the composition baselines, one panel per q:
  bounds valid for Algorithm 1 solid, the Poisson accountants (not valid) dashed, the exact 1-D
  instance as dots;
* :func:`sweeps_figure`       -- δ(1) against the number of hidden rounds T and against ρ;
* :func:`instance_figure`     -- the exact 1-D instance against Theorem 2.

The data come from :mod:`dpcore.papers.p004_contraction.figures`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpcore.papers.p004_contraction.baselines import METHODS
from dpcore.plots import epsilon_curves, new_axes, series_style

__all__ = ["fig2", "baselines_figure", "sweeps_figure", "instance_figure"]

_FLOOR = 1e-300  # δ below the double range is drawn at the floor of the log axis
_COLOURS = {"B0": 0, "B1": 1, "B2": 2, "B3a": 3, "B3b": 9, "B4": 4}  # palette index per method: no look-alikes


def fig2(curves: pd.DataFrame, title: str) -> Figure:
    """Fig. 2 from :func:`figures.fig2_curves` (columns ``epsilon``, ``q=…``)."""
    fig, axes = new_axes(width=5.6, height=4.0)
    columns = [c for c in curves.columns if c.startswith("q=")]
    if not columns:
        raise ValueError("curves must have 'q=…' columns (see figures.fig2_curves)")
    epsilon_curves(
        curves["epsilon"],
        {c.replace("q=", "q = "): curves[c] for c in columns},
        xlabel="ε",
        ylabel="δ (Theorem 2)",
        title=title,
        logy=True,
        ax=axes[0, 0],
    )
    return fig


def baselines_figure(curves: pd.DataFrame, qs: Sequence[float], n: int) -> Figure:
    """One panel per q from :func:`figures.baseline_panels`; the legend is shared, below the panels."""
    fig, axes = new_axes(len(qs), width=4.4 * len(qs), height=4.3, sharey=True)
    for ax, q in zip(axes[0], qs, strict=True):
        frame = curves[curves["q"] == q]
        if frame.empty:
            raise ValueError(f"curves has no rows for q = {q}")
        for i, key in enumerate(METHODS):
            label, valid = METHODS[key]
            style = series_style(i, markers=False)
            style.update(color=series_style(_COLOURS[key])["color"], linestyle="-" if valid else "--")
            ax.semilogy(
                frame["epsilon"],
                np.maximum(frame[key], _FLOOR),
                label=f"{key}: {label}" + ("" if valid else " (not valid here)"),
                **style,
            )
        inst = frame["exact 1-D instance"].to_numpy()
        shown = np.isfinite(inst) & (inst > 0)
        if shown.any():
            ax.semilogy(
                frame["epsilon"].to_numpy()[shown],
                inst[shown],
                "o",
                color="0.35",
                ms=3.5,
                zorder=20,
                label="exact 1-D instance (δ > 0 only)",
            )
        gap = float(np.max(np.abs(frame["B0"] / frame["B1"] - 1.0)))  # the contraction factor's distance to 1
        m = int(round(q * n))
        ax.set(
            xlabel="ε",
            ylim=(1e-40, 1.5),
            title=f"q = {q:g} (m = {m}, T = {n / m:.3g})\nB0 lies on B1: relative gap ≤ {gap:.1e}",
        )
    axes[0, 0].set_ylabel("δ")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, frameon=False, fontsize=8)
    return fig


def sweeps_figure(
    rounds: pd.DataFrame, radii: pd.DataFrame, rho: float, *, m: int, n: int, marks: dict[str, float] | None = None
) -> Figure:
    """Left: δ(1) against T (n = mT) per ρ; right: δ(1) against ρ at n, m fixed, with a vertical line at
    Fig. 2's ρ and one per entry of ``marks`` (label → radius, e.g. where Theorem 2 starts to beat B1)."""
    fig, axes = new_axes(2, width=11.5, height=4.4)
    left, right = axes[0]
    panels = (
        (left, rounds, f"rounds T (m = {m}, n = {m} T)", "δ against the number of hidden rounds"),
        (right, radii, f"projection radius ρ (n = {n}, m = {m})", "δ against ρ"),
    )
    for ax, frame, xlabel, title in panels:  # first column: the x axis; the others: one line each
        x = frame.columns[0]
        epsilon_curves(frame[x], {c: frame[c] for c in frame.columns[1:]}, xlabel=xlabel, ylabel="δ at ε = 1",
                       logx=True, logy=True, title=title, legend="none", ax=ax)  # fmt: skip
    right.axvline(rho, color="0.5", lw=0.9, zorder=1)
    right.annotate(
        f"Fig. 2: ρ = {rho:g}",
        (rho, 0.86),
        xycoords=("data", "axes fraction"),
        xytext=(4, 0),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize=8,
        color="0.3",
    )
    for i, (label, value) in enumerate((marks or {}).items()):  # labels alternate right / left of their line
        right.axvline(value, color="0.55", ls=":", lw=1.0, zorder=1)
        right.annotate(
            f"{label}\nbelow ρ = {value:.2f}",
            (value, 0.62),
            xycoords=("data", "axes fraction"),
            xytext=(4 if i % 2 == 0 else -4, 0),
            textcoords="offset points",
            ha="left" if i % 2 == 0 else "right",
            va="top",
            fontsize=7.5,
            color="0.3",
        )
    left.legend(loc="lower left", fontsize=7.5, framealpha=0.9)
    right.legend(loc="lower right", fontsize=7.5, framealpha=0.9)
    return fig


def instance_figure(frame: pd.DataFrame, title: str) -> Figure:
    """Exact instance (dashed, dots) and Theorem 2 (solid) per ρ from :func:`figures.instance_vs_bound`."""
    fig, axes = new_axes(width=5.8, height=4.2)
    ax = axes[0, 0]
    radii = [c.split("rho=")[1] for c in frame.columns if c.startswith("Theorem 2")]
    if not radii:
        raise ValueError("frame must have 'Theorem 2, rho=…' columns (see figures.instance_vs_bound)")
    for i, radius in enumerate(radii):
        colour = series_style(i)["color"]
        ax.plot(
            frame["epsilon"], frame[f"Theorem 2, rho={radius}"], color=colour, lw=2.2, label=f"Theorem 2, ρ = {radius}"
        )
        ax.plot(
            frame["epsilon"],
            frame[f"exact instance, rho={radius}"],
            color=colour,
            ls="--",
            marker="o",
            ms=3.5,
            lw=1.2,
            label=f"exact 1-D instance, ρ = {radius}",
        )
    ax.set(xlabel="ε", ylabel="δ", title=title)
    ax.legend(loc="upper right", fontsize=8)
    return fig
