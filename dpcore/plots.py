"""Shared plotting: one style for every figure and the plots the papers' figures are made of.

:func:`use_style` sets a seaborn theme (white grid, colour-blind-safe palette, paper context)
once per process; :class:`dpcore.report.Report` calls it, and so does every function here.
The functions draw and return matplotlib objects; they write no files (``Report.figure`` does).

* :func:`epsilon_curves`   -- ε (or δ) against steps/epochs/rounds for several accountants;
* :func:`tradeoff_curves`  -- f-DP trade-off functions β = f(α) with the perfect-privacy line
  β = 1 − α (Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 2022, Def. 2.1);
* :func:`accuracy_vs_epsilon` -- utility against ε with optional error bands and a non-private line;
* :func:`privacy_utility_panels` -- several accuracy-vs-ε panels side by side;
* :func:`printed_vs_ours`  -- grouped bars of published vs regenerated values, annotated.

Layout helpers that :meth:`dpcore.report.Report.figure` applies to every figure before saving:

* :func:`not_run` / :func:`mark_empty_panels` -- a panel without a result says "not run: …" instead of
  showing an empty frame;
* :func:`legend_covers_data` / :func:`move_covering_legends` -- an axes legend that covers plotted data
  (``loc="best"`` found no free spot, or a fixed ``loc`` was unlucky) moves below its axes;
* :func:`log_scale_if_wide` -- a log axis for values spanning orders of magnitude (e.g. a loss panel).

Series that coincide stay visible: each series gets its own colour, marker and line style,
and later series are drawn thinner on top of earlier ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Bbox, offset_copy

__all__ = [
    "use_style",
    "table_panel",
    "VERDICT_MARKS",
    "verdict_label",
    "mark_verdict_cells",
    "series_style",
    "new_axes",
    "epsilon_curves",
    "tradeoff_curves",
    "accuracy_vs_epsilon",
    "privacy_utility_panels",
    "printed_vs_ours",
    "NOT_RUN_GID",
    "not_run",
    "is_empty_panel",
    "mark_empty_panels",
    "log_scale_if_wide",
    "legend_covers_data",
    "move_legend_below",
    "move_covering_legends",
]

PALETTE = "colorblind"
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
_LINESTYLES = ("-", "--", "-.", ":")
_LEGEND_LOCS = ("best", "outside", "none")
_styled = False


def use_style(*, force: bool = False) -> None:
    """Set the project's seaborn theme once (``force`` sets it again, e.g. after ``plt.rcdefaults()``)."""
    global _styled
    if _styled and not force:
        return
    sns.set_theme(context="paper", style="whitegrid", palette=PALETTE, rc={"figure.dpi": 100, "savefig.dpi": 150})
    _styled = True


def series_style(index: int, *, n: int | None = None, markers: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``ax.plot`` of the ``index``-th series: colour, marker, line style, width.

    Later series are drawn on top, thinner (``linewidth`` from 2.6 down to 1.2) and with smaller
    markers, so a series lying exactly on an earlier one still shows both.
    """
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError(f"index must be an integer >= 0, got {index!r}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"n must be an integer >= 1 or None, got {n!r}")
    colours = sns.color_palette(PALETTE, max(10, n or 0))
    style: dict[str, Any] = {
        "color": colours[index % len(colours)],
        "linestyle": _LINESTYLES[index % len(_LINESTYLES)],
        "linewidth": max(1.2, 2.6 - 0.35 * index),
        "zorder": 2 + index,
    }
    if markers:
        # markevery as a fraction of the axes: markers stay readable on long curves
        style.update(marker=_MARKERS[index % len(_MARKERS)], markersize=max(3.0, 6.0 - 0.8 * index), markevery=0.1)
    return style


def new_axes(
    ncols: int = 1, nrows: int = 1, *, width: float | None = None, height: float | None = None, sharey: bool = False,
    height_ratios: Sequence[float] | None = None,
) -> tuple[Figure, np.ndarray]:
    """A styled figure with an ``nrows x ncols`` grid (constrained layout); axes always as a 2-D array.
    ``height_ratios``: one positive relative height per row (default: equal rows)."""
    for name, value in (("ncols", ncols), ("nrows", nrows)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    for name, value in (("width", width), ("height", height)):
        if value is not None and not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number of inches or None, got {value!r}")
    if height_ratios is not None and (len(height_ratios) != nrows or not all(
            isinstance(h, int | float) and math.isfinite(h) and h > 0 for h in height_ratios)):  # fmt: skip
        raise ValueError(f"height_ratios must be {nrows} positive numbers (one per row) or None, got {height_ratios!r}")
    use_style()
    size = (width or 4.2 * ncols, height or 3.2 * nrows)
    fig, axes = plt.subplots(nrows, ncols, figsize=size, sharey=sharey, squeeze=False, layout="constrained",
                             height_ratios=None if height_ratios is None else list(height_ratios))
    return fig, axes


def _axes(ax: Axes | None) -> Axes:
    use_style()
    if ax is None:
        return new_axes()[1][0, 0]
    if not isinstance(ax, Axes):
        raise ValueError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return ax


def _array(name: str, values: Any) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers, got shape {arr.shape}")
    return arr


def _pair(name: str, x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = _array(f"{name} x", x), _array(f"{name} y", y)
    if xs.shape != ys.shape:
        raise ValueError(f"{name}: x and y must have the same length, got {xs.size} and {ys.size}")
    return xs, ys


def _series(name: str, series: Any) -> Mapping[str, Any]:
    if not isinstance(series, Mapping) or not series:
        raise ValueError(f"{name} must be a non-empty mapping label -> data, got {type(series).__name__}")
    return series


def _legend(ax: Axes, legend: str) -> None:
    if legend not in _LEGEND_LOCS:
        raise ValueError(f"legend must be one of {_LEGEND_LOCS}, got {legend!r}")
    if legend == "none" or not ax.get_legend_handles_labels()[0]:
        return
    if legend == "outside":
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
    else:
        ax.legend(loc="best", framealpha=0.9)


def _scales(ax: Axes, logx: bool, logy: bool) -> None:
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")


def epsilon_curves(
    x: Sequence[float] | Mapping[str, Sequence[float]],
    curves: Mapping[str, Sequence[float]],
    *,
    xlabel: str = "steps",
    ylabel: str = "ε",
    title: str = "",
    logx: bool = False,
    logy: bool = False,
    markers: bool = True,
    reference: float | None = None,
    reference_label: str = "",
    legend: str = "best",
    ax: Axes | None = None,
) -> Axes:
    """Privacy loss against training length for several accountants (one curve per label).

    ``x`` is shared by every curve, or a mapping with the same labels as ``curves``.
    ``reference`` draws a horizontal line (e.g. a target ε or a published value).
    """
    curves = _series("curves", curves)
    ax = _axes(ax)
    for i, (label, ys) in enumerate(curves.items()):
        xs = x[label] if isinstance(x, Mapping) else x
        xs, ys = _pair(f"curve {label!r}", xs, ys)
        ax.plot(xs, ys, label=str(label), **series_style(i, n=len(curves), markers=markers))
    if reference is not None:
        if not (isinstance(reference, int | float) and math.isfinite(reference)):
            raise ValueError(f"reference must be a finite number or None, got {reference!r}")
        ax.axhline(reference, color="0.3", linestyle=":", linewidth=1.2, label=reference_label or None, zorder=1)
    _scales(ax, logx, logy)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    _legend(ax, legend)
    return ax


def tradeoff_curves(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str = "",
    identity: bool = True,
    markers: bool = False,
    legend: str = "best",
    ax: Axes | None = None,
) -> Axes:
    """f-DP trade-off functions: type II error β against type I error α, on the unit square.

    ``curves`` maps a label to ``(alpha, beta)``; values must lie in [0, 1].  ``identity`` adds
    the perfect-privacy line β = 1 − α (Dong, Roth & Su 2022, Def. 2.1: Id(α) = 1 − α).
    """
    curves = _series("curves", curves)
    ax = _axes(ax)
    if identity:
        ax.plot([0, 1], [1, 0], color="0.45", linestyle="--", linewidth=1.0, label="perfect privacy (β = 1 − α)")
    for i, (label, pair) in enumerate(curves.items()):
        if not isinstance(pair, Sequence) or len(pair) != 2:
            raise ValueError(f"curve {label!r} must be a pair (alpha, beta)")
        alpha, beta = _pair(f"curve {label!r}", *pair)
        if alpha.min() < 0 or alpha.max() > 1 or beta.min() < 0 or beta.max() > 1:
            raise ValueError(f"curve {label!r}: alpha and beta must lie in [0, 1]")
        ax.plot(alpha, beta, label=str(label), **series_style(i, n=len(curves), markers=markers))
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="type I error α", ylabel="type II error β", title=title)
    ax.set_aspect("equal")
    _legend(ax, legend)
    return ax


def accuracy_vs_epsilon(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    bands: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    non_private: float | None = None,
    non_private_label: str = "non-private",
    xlabel: str = "ε",
    ylabel: str = "accuracy",
    title: str = "",
    logx: bool = False,
    markers: bool = True,
    legend: str = "best",
    ax: Axes | None = None,
) -> Axes:
    """Utility against privacy: one line per label from ``(epsilon, accuracy)``.

    ``bands`` maps some labels to ``(lower, upper)`` arrays drawn as shaded bands (e.g. ± one
    standard deviation over seeds); ``non_private`` draws the non-private reference as a
    horizontal line.
    """
    series = _series("series", series)
    ax = _axes(ax)
    bands = dict(bands or {})
    unknown = set(bands) - set(series)
    if unknown:
        raise ValueError(f"bands has labels not in series: {sorted(map(str, unknown))}")
    for i, (label, pair) in enumerate(series.items()):
        if not isinstance(pair, Sequence) or len(pair) != 2:
            raise ValueError(f"series {label!r} must be a pair (epsilon, accuracy)")
        eps, acc = _pair(f"series {label!r}", *pair)
        style = series_style(i, n=len(series), markers=markers)
        ax.plot(eps, acc, label=str(label), **style)
        if label in bands:
            low, high = bands[label]
            low, high = _array(f"band {label!r} lower", low), _array(f"band {label!r} upper", high)
            if low.shape != eps.shape or high.shape != eps.shape:
                raise ValueError(f"band {label!r} must have the length of its series ({eps.size})")
            if np.any(low > high):
                raise ValueError(f"band {label!r}: lower must be <= upper")
            ax.fill_between(eps, low, high, color=style["color"], alpha=0.18, linewidth=0, zorder=1)
    if non_private is not None:
        if not (isinstance(non_private, int | float) and math.isfinite(non_private)):
            raise ValueError(f"non_private must be a finite number or None, got {non_private!r}")
        ax.axhline(non_private, color="0.2", linestyle=":", linewidth=1.3, label=non_private_label, zorder=1)
    _scales(ax, logx, False)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    _legend(ax, legend)
    return ax


def privacy_utility_panels(
    panels: Mapping[str, Mapping[str, tuple[Sequence[float], Sequence[float]]]],
    *,
    bands: Mapping[str, Mapping[str, tuple[Sequence[float], Sequence[float]]]] | None = None,
    non_private: Mapping[str, float] | None = None,
    xlabel: str = "ε",
    ylabel: str = "accuracy",
    logx: bool = False,
    sharey: bool = False,
    ncols: int | None = None,
    suptitle: str = "",
) -> Figure:
    """Several :func:`accuracy_vs_epsilon` panels side by side (one per data set or model).

    ``panels`` maps a panel title to its series; ``bands`` and ``non_private`` are keyed by panel
    title.  The legend is shown once, below the panels, when all panels share their labels.
    """
    panels = _series("panels", panels)
    bands = dict(bands or {})
    non_private = dict(non_private or {})
    for name, table in (("bands", bands), ("non_private", non_private)):
        unknown = set(table) - set(panels)
        if unknown:
            raise ValueError(f"{name} has panel titles not in panels: {sorted(map(str, unknown))}")
    n = len(panels)
    if ncols is None:
        ncols = min(n, 3)
    if isinstance(ncols, bool) or not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"ncols must be an integer >= 1 or None, got {ncols!r}")
    nrows = math.ceil(n / ncols)
    fig, axes = new_axes(ncols, nrows, sharey=sharey)
    labels = [tuple(map(str, s)) for s in panels.values()]
    shared_legend = n > 1 and all(lab == labels[0] for lab in labels)
    for ax, (title, series) in zip(axes.flat, panels.items(), strict=False):
        accuracy_vs_epsilon(
            series,
            bands=bands.get(title),
            non_private=non_private.get(title),
            xlabel=xlabel,
            ylabel=ylabel,
            title=str(title),
            logx=logx,
            legend="none" if shared_legend else "best",
            ax=ax,
        )
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if shared_legend:
        handles, names = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, names, loc="outside lower center", ncols=min(len(names), 4), frameon=False)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def table_panel(ax: Axes, body: Sequence[Sequence[str]], header: Sequence[str], title: str, *,
                col_widths: Sequence[float] | None = None) -> Any:  # fmt: skip
    """Fill ``ax`` with a centred table (``header`` row, then ``body``; small font) titled ``title``; return the
    matplotlib table (its cell ``(i + 1, j)`` holds ``body[i][j]``).  ``col_widths``: relative column widths
    (default: equal)."""
    if any(len(row) != len(header) for row in body):
        raise ValueError(f"every body row must have {len(header)} cells (one per header)")
    if col_widths is not None and (len(col_widths) != len(header) or not all(
            isinstance(w, int | float) and math.isfinite(w) and w > 0 for w in col_widths)):  # fmt: skip
        raise ValueError(f"col_widths must be {len(header)} positive numbers (one per header) or None")
    widths = None if col_widths is None else [w / sum(col_widths) for w in col_widths]
    tab = ax.table(cellText=body, colLabels=header, bbox=(0.0, 0.0, 1.0, 1.0), cellLoc="center", colWidths=widths)
    tab.auto_set_font_size(False)
    tab.set_fontsize(7.5)
    ax.set_title(title, fontsize=9)
    return tab


#: verdict word (:data:`dpcore.claims.VERDICT_WORDS`) -> (mark, cell colour, text colour) of the figures' verdict
#: marks
VERDICT_MARKS: dict[str, tuple[str, str, str]] = {
    "reproduced": ("✓", "#d5ecd4", "#1b7a1b"), "not reproduced": ("✗", "#f6d0cc", "#b2221b"),
    "not run": ("–", "#ececec", "#6b6b6b"), "erratum": ("!", "#fbe3c2", "#a05a00"),
    "inconclusive": ("?", "#e4e0f2", "#5a4a9a"), "differs": ("≠", "#f6d0cc", "#b2221b"),
    # an audit row that holds (dpcore.claims.AUDIT_VERDICT): reached under the authors' code, at another ε
    "authors' code": ("⚑", "#ede4f7", "#6e3fa3"),
}


def verdict_label(verdict: str) -> str:
    """``"✓ reproduced"``, ``"✗ not reproduced"``, ``"– not run"``, … (:data:`VERDICT_MARKS`)."""
    if verdict not in VERDICT_MARKS:
        raise ValueError(f"verdict must be one of {tuple(VERDICT_MARKS)}, got {verdict!r}")
    return f"{VERDICT_MARKS[verdict][0]} {verdict}"


def mark_verdict_cells(table: Any, column: int, verdicts: Sequence[str | None]) -> None:
    """Colour body cell ``(i + 1, column)`` of a :func:`table_panel` table by ``verdicts[i]`` (:data:`VERDICT_MARKS`;
    ``None`` leaves the cell white)."""
    cells = table.get_celld()
    for i, verdict in enumerate(verdicts):
        if verdict is None:
            continue
        if verdict not in VERDICT_MARKS:
            raise ValueError(f"verdicts must be among {tuple(VERDICT_MARKS)} or None, got {verdict!r}")
        if (i + 1, column) not in cells:
            raise ValueError(f"the table has no body cell ({i + 1}, {column})")
        cells[(i + 1, column)].set_facecolor(VERDICT_MARKS[verdict][1])


def printed_vs_ours(
    labels: Sequence[str],
    printed: Sequence[float],
    ours: Sequence[float],
    *,
    statuses: Sequence[str] | None = None,
    ylabel: str = "value",
    title: str = "",
    logy: bool = False,
    fmt: str = "{:.3g}",
    ax: Axes | None = None,
) -> Axes:
    """Grouped bars: the published value next to ours for each label, each bar annotated with its value.

    ``statuses`` (e.g. the claim statuses) are written under the labels.  A NaN in ``ours``
    (not run) leaves its bar out and writes "not run".
    """
    labels = [str(label) for label in labels]
    if not labels:
        raise ValueError("labels must be non-empty")
    pub = np.asarray(printed, dtype=float)
    mine = np.asarray(ours, dtype=float)
    if pub.shape != (len(labels),) or mine.shape != (len(labels),):
        raise ValueError(f"printed and ours must have one value per label ({len(labels)})")
    if not np.all(np.isfinite(pub)):
        raise ValueError("printed values must be finite")
    if statuses is not None and len(statuses) != len(labels):
        raise ValueError(f"statuses must have one entry per label ({len(labels)})")
    ax = _axes(ax)
    colours = sns.color_palette(PALETTE, 2)
    pos = np.arange(len(labels))
    width = 0.38
    bars_p = ax.bar(pos - width / 2, pub, width, label="published", color=colours[0])
    shown = np.where(np.isfinite(mine), mine, 0.0)
    bars_o = ax.bar(pos + width / 2, shown, width, label="dpcore", color=colours[1])
    for bar, value in zip(bars_p, pub, strict=True):
        ax.annotate(
            fmt.format(value),
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=7,
            xytext=(0, 2),
            textcoords="offset points",
        )
    for bar, value in zip(bars_o, mine, strict=True):
        text = fmt.format(value) if math.isfinite(value) else "not run"
        ax.annotate(
            text,
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=7,
            xytext=(0, 2),
            textcoords="offset points",
        )
    ticks = labels if statuses is None else [f"{lab}\n({st})" for lab, st in zip(labels, statuses, strict=True)]
    ax.set_xticks(pos, ticks)
    if logy:
        ax.set_yscale("log")
    ax.margins(y=0.12)
    ax.set(ylabel=ylabel, title=title)
    _legend(ax, "best")
    return ax


# ---------------------------------------------------------------------------------------------
# layout: empty panels, log axes, legends that cover data
# ---------------------------------------------------------------------------------------------
NOT_RUN_GID = "dpcore-not-run"  # gid of the "not run: …" text of a panel without a result
_SAMPLE_PX = 2.0  # spacing (pixels) of the points sampled along a line when testing it against a legend
_MAX_VERTICES = 5000  # longer lines are tested at their vertices only
_LEGEND_ROUNDS = 3  # draw / move rounds: moving one legend changes the layout, and "best" places are redrawn


def not_run(ax: Axes, reason: str) -> Text:
    """Write ``not run: <reason>`` in the middle of ``ax``: the panel of a run without a result says so
    instead of showing an empty frame.  Returns the text artist (gid :data:`NOT_RUN_GID`)."""
    if not isinstance(ax, Axes):
        raise ValueError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"reason must be a non-empty string, got {reason!r}")
    return ax.text(
        0.5,
        0.5,
        f"not run: {reason.strip()}",
        transform=ax.transAxes,
        ha="center",
        va="center",
        wrap=True,
        fontsize=9,
        color="0.3",
        gid=NOT_RUN_GID,
    )


def is_empty_panel(ax: Axes) -> bool:
    """True for a visible axes with its frame on and no data drawn in it (no line, collection, patch, image,
    table or other artist; a note such as "missing: …" does not count), not yet marked by :func:`not_run`:
    the frame of a run that produced no result.  Text-only panels (notes, flow charts) turn their frame off."""
    if not isinstance(ax, Axes):
        raise ValueError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    if not ax.get_visible() or not ax.axison or any(t.get_gid() == NOT_RUN_GID for t in ax.texts):
        return False
    drawn = (ax.lines, ax.collections, ax.patches, ax.images, ax.tables, ax.artists)
    return not any(len(group) for group in drawn) and ax.get_legend() is None


def mark_empty_panels(fig: Figure, reason: str = "no result for this panel") -> int:
    """:func:`not_run` on every empty panel of ``fig`` (:func:`is_empty_panel`); returns how many."""
    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    empty = [ax for ax in fig.axes if is_empty_panel(ax)]
    for ax in empty:
        not_run(ax, reason)
    return len(empty)


def log_scale_if_wide(ax: Axes, *, decades: float = 1.0) -> bool:
    """Put the y axis of ``ax`` on a log scale when its plotted lines span more than ``decades`` orders of
    magnitude (max / min > 10^decades), e.g. a loss panel where one diverging run flattens all the others.

    Only strictly positive data can go on a log axis: with a value <= 0 the axis stays linear.  Returns
    whether the scale is log afterwards.
    """
    if not isinstance(ax, Axes):
        raise ValueError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    if not (isinstance(decades, int | float) and math.isfinite(decades) and decades > 0):
        raise ValueError(f"decades must be a positive number, got {decades!r}")
    values = [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines() if line.get_visible()]
    ys = np.concatenate([v.ravel() for v in values]) if values else np.empty(0)
    ys = ys[np.isfinite(ys)]
    if ys.size and ys.min() > 0 and math.log10(ys.max() / ys.min()) > decades:
        ax.set_yscale("log")
    return ax.get_yscale() == "log"


def _line_points(points: np.ndarray, dense: bool) -> np.ndarray:
    """Display points of a polyline: its vertices and, when ``dense``, points every ~2 px along each segment."""
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    if not dense or len(points) < 2 or len(points) > _MAX_VERTICES:
        return points[np.isfinite(points).all(axis=1)]
    out = [points[np.isfinite(points).all(axis=1)]]
    for a, b in zip(points[:-1], points[1:], strict=True):
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            continue
        n = min(int(np.hypot(*(b - a)) / _SAMPLE_PX), 2000)
        if n > 1:
            t = np.linspace(0.0, 1.0, n)[:, None]
            out.append(a + t * (b - a))
    return np.concatenate(out)


def _data_points(ax: Axes) -> list[np.ndarray]:
    """Display coordinates of what ``ax`` plots: lines (sampled along their segments), scatter offsets and
    error-bar segments."""
    found = []
    for line in ax.get_lines():
        if line.get_visible() and line.get_gid() != NOT_RUN_GID:
            dense = line.get_linestyle() not in ("None", "none", "", " ")
            found.append(_line_points(line.get_transform().transform(line.get_xydata()), dense))
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, PathCollection) and len(coll.get_offsets()):
            found.append(coll.get_offset_transform().transform(coll.get_offsets()))
        elif isinstance(coll, LineCollection):
            transform = coll.get_transform()
            found += [_line_points(transform.transform(seg), True) for seg in coll.get_segments() if len(seg)]
    return found


def legend_covers_data(ax: Axes, renderer: RendererBase) -> bool:
    """True when the legend of ``ax`` lies on plotted data: a point of a line (sampled along its segments),
    a scatter point, an error bar, or a bar of non-zero size inside the legend's box (1 px margin).  Shaded
    bands and spans (``fill_between``, ``axvspan``) do not count: a legend may sit on a background.  The
    data of twin axes (``twinx``: same place on the figure) count too.

    ``renderer`` is the one of the figure's last draw (the legend's ``"best"`` place is found at draw time).
    """
    if not isinstance(ax, Axes):
        raise ValueError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    legend = ax.get_legend()
    if legend is None or not legend.get_visible():
        return False
    # plotted artists are clipped to the axes: only the part of the legend inside the axes can hide data
    box = Bbox.intersection(legend.get_window_extent(renderer).padded(-1.0), ax.bbox)
    if box is None:
        return False
    twins = [a for a in ax.get_figure(root=True).axes if a is not ax and a.bbox.bounds == ax.bbox.bounds]
    for pts in (p for a in (ax, *twins) for p in _data_points(a)):
        inside = (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)
        if inside.any():
            return True
    containers = [c for a in (ax, *twins) for c in a.containers]
    bars = [patch for container in containers if isinstance(container, BarContainer) for patch in container]
    for patch in bars:
        if isinstance(patch, Rectangle) and patch.get_visible() and patch.get_width() and patch.get_height():
            extent = patch.get_window_extent(renderer)
            if extent.width > 0 and extent.height > 0 and Bbox.intersection(extent, box) is not None:
                return True
    return False


def move_legend_below(ax: Axes, renderer: RendererBase) -> Legend:
    """Re-create the legend of ``ax`` below the axes (under its tick labels and x label), centred, without a
    frame, in as many columns as fit the axes' width; returns the new legend.

    It is anchored with an offset in points from the axes' bottom, so it stays clear of the x label when a
    layout engine resizes the axes afterwards (constrained layout makes room for it).
    """
    legend = ax.get_legend()
    if legend is None:
        raise ValueError("ax has no legend to move")
    fig = ax.get_figure(root=True)
    handles, labels = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
    fontsize = legend.get_texts()[0].get_fontsize() if labels else None
    title = legend.get_title().get_text() or None
    below_px = max(ax.bbox.y0 - ax.xaxis.get_tightbbox(renderer).y0, 0.0)
    offset = offset_copy(ax.transAxes, fig=fig, y=-(below_px * 72.0 / fig.dpi + 3.0), units="points")
    common = {"loc": "upper center", "bbox_to_anchor": (0.5, 0.0), "bbox_transform": offset, "frameon": False}
    single = ax.legend(handles, labels, fontsize=fontsize, title=title, ncols=1, **common)
    width = single.get_window_extent(renderer).width
    ncols = max(1, min(len(labels), int(ax.bbox.width // max(width, 1.0))))
    return ax.legend(handles, labels, fontsize=fontsize, title=title, ncols=ncols, **common)


def move_covering_legends(fig: Figure) -> int:
    """Draw ``fig`` and move every axes legend that covers data (:func:`legend_covers_data`) below its axes
    (:func:`move_legend_below`); repeats while a move uncovers another (a relayout moves ``"best"`` legends).
    Returns the number of legends moved."""
    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    moved: set[int] = set()
    for _ in range(_LEGEND_ROUNDS):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        covering = [ax for ax in fig.axes if id(ax) not in moved and legend_covers_data(ax, renderer)]
        if not covering:
            break
        for ax in covering:
            move_legend_below(ax, renderer)
            moved.add(id(ax))
    return len(moved)
