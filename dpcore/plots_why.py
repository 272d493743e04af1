"""The "why ours differs" bar chart: a printed number beside ours under each named reading of the paper.

For each quantity (a group of bars) the first bar is the number the paper printed and the next ones are ours under
each reading (the algorithm as printed, the authors' practice as a named mode, ...), every bar annotated with its
value and with the ε of the mechanism that ran (a mode's ε is that of its own noise, never the paper's claim).
Readings without a run are drawn as an empty slot with "not run".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes

from dpcore.plots import PALETTE

__all__ = ["why_differs_bars", "bar_inputs"]


def why_differs_bars(
    ax: Axes,
    quantities: Sequence[str],
    printed: Sequence[float],
    readings: Sequence[str],
    ours: Sequence[Sequence[float]],
    eps_text: Sequence[Sequence[str]],
    *,
    ylabel: str = "value",
    fmt: str = "{:.1f}",
    missing_text: Sequence[Sequence[str]] | None = None,
) -> Axes:
    """Grouped bars on ``ax``: per quantity, ``printed`` then ``ours[r][q]`` for each reading ``r`` (NaN: not run),
    each of ours annotated with its value and ``eps_text[r][q]`` (e.g. "ε 0.15 (PLD 0.04)").  ``missing_text[r][q]``
    (default "not run") is written where ``ours[r][q]`` is NaN, e.g. "n/a" for a reading that has no such run."""
    quantities = [str(q) for q in quantities]
    readings = [str(r) for r in readings]
    if not quantities or not readings:
        raise ValueError("quantities and readings must be non-empty")
    pub = np.asarray(printed, dtype=float)
    if pub.shape != (len(quantities),):
        raise ValueError(f"printed must have one value per quantity ({len(quantities)})")
    mine = np.asarray(ours, dtype=float)
    if mine.shape != (len(readings), len(quantities)):
        raise ValueError(f"ours must be {len(readings)} readings × {len(quantities)} quantities, got {mine.shape}")
    if len(eps_text) != len(readings) or any(len(row) != len(quantities) for row in eps_text):
        raise ValueError(f"eps_text must be {len(readings)} readings × {len(quantities)} quantities")
    if missing_text is None:
        missing_text = [["not run"] * len(quantities) for _ in readings]
    if len(missing_text) != len(readings) or any(len(row) != len(quantities) for row in missing_text):
        raise ValueError(f"missing_text must be {len(readings)} readings × {len(quantities)} quantities")
    colours = sns.color_palette(PALETTE, len(readings) + 1)
    width = 0.8 / (len(readings) + 1)
    pos = np.arange(len(quantities))
    ax.bar(pos - 0.4 + width / 2, np.where(np.isfinite(pub), pub, 0.0), width, label="printed", color=colours[0])
    for q, value in enumerate(pub):
        text = fmt.format(value) if math.isfinite(value) else "not printed"
        ax.annotate(text, (pos[q] - 0.4 + width / 2, value if math.isfinite(value) else 0.0), ha="center",
                    va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points")  # fmt: skip
    for r, reading in enumerate(readings):
        x = pos - 0.4 + width * (r + 1.5)
        ax.bar(x, np.where(np.isfinite(mine[r]), mine[r], 0.0), width, label=reading, color=colours[r + 1])
        for q, value in enumerate(mine[r]):
            text = f"{fmt.format(value)}\n{eps_text[r][q]}" if math.isfinite(value) else str(missing_text[r][q])
            ax.annotate(text, (x[q], value if math.isfinite(value) else 0.0), ha="center", va="bottom", fontsize=6,
                        xytext=(0, 2), textcoords="offset points", rotation=90)  # fmt: skip
    ax.set_xticks(pos, quantities)
    ax.set_ylabel(ylabel)
    # headroom above the tallest bar and its rotated label, then the legend in one row across the top: it never
    # covers a bar or a label
    ax.margins(y=0.6)
    ax.legend(fontsize=7, loc="upper center", ncols=min(len(readings) + 1, 4), framealpha=0.9)
    return ax


def bar_inputs(
    frame: pd.DataFrame, readings: Sequence[str], *, value: str, eps_text: Callable[[Mapping[str, Any]], str]
) -> tuple[list[str], list[float], list[list[float]], list[list[str]], list[list[str]]]:
    """The arguments of :func:`why_differs_bars` from a long frame with one row per (``reading``, ``cell``) and the
    columns ``printed_pct``, ``status`` and ``value``: (cells in order of appearance, printed per cell, ours,
    ε texts (``eps_text(row)``) and missing texts (the row's status) per reading and cell)."""
    need = {"reading", "cell", "printed_pct", "status", value}
    if not isinstance(frame, pd.DataFrame) or not need <= set(frame.columns):
        raise ValueError(f"frame must be a data frame with columns {sorted(need)}")
    cells = list(dict.fromkeys(frame["cell"]))
    printed = [float(frame[frame["cell"] == c]["printed_pct"].iloc[0]) for c in cells]
    ours, texts, missing = [], [], []
    for reading in readings:
        part = frame[frame["reading"] == reading].set_index("cell")
        ours.append([float(part.loc[c, value]) for c in cells])
        texts.append([eps_text(part.loc[c]) for c in cells])
        missing.append([str(part.loc[c, "status"]) for c in cells])
    return cells, printed, ours, texts, missing
