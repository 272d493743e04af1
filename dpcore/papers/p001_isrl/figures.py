"""Figures of Lowy & Razaviyayn (ICLR 2023): the panels of Figs. 4-9, the calibration audit, Algorithm 1.

Drawn with :mod:`dpcore.plots` styles (one colour, marker and line style per series, later
series thinner on top, so coinciding curves stay visible) and legends below the panels, never
over the data.  Nothing is written here; the notebooks pass the figures to ``Report.figure``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpcore import plots
from dpcore.papers.p001_isrl import experiments as fe

__all__ = ["CURVES", "panels_figure", "audit_figure", "accelerated_figure"]

CURVES = ("Noisy MB SGD", "Noisy Local SGD", "MB SGD", "Local SGD")


def _legend_below(fig: Figure, axes, *, ncols: int = 2) -> None:
    """One legend below the panels, in the order the series were drawn (never over the data)."""
    handles, names = axes.flat[0].get_legend_handles_labels()
    order = sorted(range(len(handles)), key=lambda i: _zorder(handles[i]))  # series_style's zorder = draw order
    fig.legend([handles[i] for i in order], [names[i] for i in order], loc="outside lower center",
               ncols=min(len(names), ncols), frameon=False)


def _zorder(handle) -> float:
    line = handle.lines[0] if hasattr(handle, "lines") else handle  # an errorbar container: its data line
    return float(line.get_zorder())


def panels_figure(results: Mapping[str, fe.PanelResult], *, ylabel: str, suptitle: str,
                  reference: tuple[float, str] | None = None) -> Figure:
    """One panel per result (title -> result): the two ISRL-DP curves with their 90% error bars against ε
    and the two non-private values as horizontal lines, as in Figs. 4-9.  ``reference`` = (level, label)
    adds a thin dotted grey line on every panel (e.g. the error of the zero model, Fig. 6)."""
    if not results:
        raise ValueError("results must hold at least one panel")
    if reference is not None and (len(reference) != 2 or not np.isfinite(float(reference[0]))
                                  or not isinstance(reference[1], str)):
        raise ValueError(f"reference must be (finite level, label), got {reference!r}")
    fig, axes = plots.new_axes(len(results), width=max(4.6 * len(results), 7.5), height=3.8)
    for ax, (title, result) in zip(axes.flat, results.items(), strict=True):
        rounds = result.panel.rounds
        eps = result.private(CURVES[0])["epsilon"].to_numpy(float)
        for i, label in enumerate(CURVES):
            style = plots.series_style(i, n=len(CURVES))
            style.pop("markevery", None)
            if i < 2:
                curve = result.private(label)
                ax.errorbar(curve["epsilon"], curve["mean"], yerr=curve["halfwidth"], capsize=3,
                            label=f"{label} after {rounds} rounds", **style)
            else:
                ax.plot(eps, np.full(eps.shape, result.nonprivate(label)), label=f"{label} after {rounds} rounds",
                        **style)
        if reference is not None:
            ax.plot(eps, np.full(eps.shape, float(reference[0])), color="0.45", linestyle=":", linewidth=1.0,
                    zorder=10, label=reference[1])
        ax.set(xlabel="ε", ylabel=ylabel, title=title)
    _legend_below(fig, axes, ncols=2 if len(results) == 1 else 4)
    fig.suptitle(suptitle)
    return fig


def audit_figure(audit: pd.DataFrame) -> Figure:
    """Tight ε of App. I's σ against the claimed ε, per setting: replace-one (solid) and add/remove (faded)."""
    if audit.empty:
        raise ValueError("audit must not be empty")
    fig, axes = plots.new_axes(2, width=10.0, height=4.0, sharey=True)
    settings = list(dict.fromkeys(audit["setting"]))
    titles = {"mb-sgd": "ISRL-DP MB-SGD", "local-sgd": "ISRL-DP Local SGD (baseline)"}
    for ax, algorithm in zip(axes.flat, ("mb-sgd", "local-sgd"), strict=True):
        part = audit[audit["algorithm"] == algorithm]
        for k, setting in enumerate(settings):
            group = part[part["setting"] == setting]
            if group.empty:
                continue
            style = plots.series_style(k, n=len(settings))
            style.pop("markevery", None)
            ax.plot(group["claimed_epsilon"], group["epsilon_replace_one"], label=f"{setting} (n={group['n'].iloc[0]})",
                    **style)
            style.update(alpha=0.45, linestyle=":")
            ax.plot(group["claimed_epsilon"], group["epsilon_add_remove"], **style)
        ax.plot([0.1, 100], [0.1, 100], color="0.3", linewidth=0.9, label="tight ε = claimed ε")
        ax.set(xscale="log", yscale="log", xlabel="claimed ε (App. I calibration)", title=titles[algorithm])
    axes.flat[0].set_ylabel("tight ε at δ = 1/n²")
    _legend_below(fig, axes, ncols=3)
    fig.suptitle("Tight ε of App. I's noise (bold: replace-one neighbours, faded dotted: add/remove)")
    return fig


def accelerated_figure(
    curves: Mapping[bool, pd.DataFrame], reference: fe.PanelResult | None, *, ylabel: str, title: str
) -> Figure:
    """One-Pass Algorithm 1 (private curve and non-private line) next to Algorithm 2's curve on the same task."""
    fig, axes = plots.new_axes(1, width=6.0, height=4.0)
    ax = axes[0, 0]
    private, nonprivate = curves[True], curves[False]
    eps = private["epsilon"].to_numpy(float)
    entries = [("Noisy one-pass accelerated MB SGD (Alg. 1)", private, None),
               ("one-pass accelerated MB SGD (non-private)", None, float(nonprivate["mean"].iloc[0]))]
    if reference is not None:
        rounds = reference.panel.rounds
        entries += [(f"Noisy MB SGD (Alg. 2) after {rounds} rounds", reference.private("Noisy MB SGD"), None),
                    (f"MB SGD (Alg. 2) after {rounds} rounds", None, reference.nonprivate("MB SGD"))]
    for i, (label, curve, level) in enumerate(entries):
        style = plots.series_style(i, n=len(entries))
        style.pop("markevery", None)
        if curve is not None:
            ax.errorbar(curve["epsilon"], curve["mean"], yerr=curve["halfwidth"], capsize=3, label=label, **style)
        else:
            ax.plot(eps, np.full(eps.shape, level), label=label, **style)
    ax.set(xlabel="ε", ylabel=ylabel, title=title)
    _legend_below(fig, axes)
    return fig
