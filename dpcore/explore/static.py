"""Explorers without a kernel (issue 54): a bounded grid of an explorer's control values, each point computed by the
explorer's own ``compute``, for the documentation site to draw with sliders in the browser.

An explorer is a pure function ``compute(**values) -> View`` (:mod:`dpcore.explore.widgets`).  A :class:`StaticGrid`
names the controls that move (each over a short list of values: the grid's axes), holds the others at their
defaults, and says how a :class:`~dpcore.explore.widgets.View` becomes plotted lines (``series``: name -> (x, y)).
:func:`grid_data` evaluates ``compute`` at every point of the grid (row-major over the axes, the last axis fastest)
and returns plain JSON data: per point the read-out's numbers, their labels, the notes, the title and the lines; a
point whose inputs ``compute`` refuses carries its ``ValueError`` text instead.  Nothing is approximated: each
number is the one the live explorer shows at those control values (``tests/explore/test_static.py`` compares grid
points with ``compute`` and with the library functions behind it).  ``docs/build_site.py`` embeds the data in the
explorer's page and ``docs/_static/dpcore-explorer.js`` draws it.

Size: :data:`MAX_POINTS` points per grid at most (``ValueError`` beyond), numbers rounded to
:data:`SIGNIFICANT_DIGITS` significant digits (the read-out prints 6); non-finite numbers are written as the strings
``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no such numbers).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.explore.widgets import View

__all__ = [
    "MAX_POINTS",
    "SIGNIFICANT_DIGITS",
    "SERIES_DIGITS",
    "Axis",
    "StaticGrid",
    "grid_data",
    "point_index",
    "number",
]

#: the largest grid a page may carry (points), the precision of its read-out numbers and of its plotted lines
MAX_POINTS = 400
SIGNIFICANT_DIGITS = 7
SERIES_DIGITS = 5


@dataclass(frozen=True)
class Axis:
    """One control that moves on the static page: its ``name`` (the keyword of ``compute``), the ``label`` shown
    beside the slider, its ``values`` and the index of the one shown first (``default``)."""

    name: str
    label: str
    values: tuple[Any, ...]
    default: int = 0

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"values must hold at least one value for axis {self.name!r}")
        if not 0 <= self.default < len(self.values):
            raise ValueError(f"default must index values (0 to {len(self.values) - 1}), got {self.default}")


@dataclass(frozen=True)
class StaticGrid:
    """An explorer's grid for the static site.

    ``compute``: the explorer's ``compute(**values) -> View``; ``axes``: the controls that move; ``fixed``: every other
    keyword of ``compute`` (its defaults); ``series(view)``: the plotted lines, name -> (x values, y values);
    ``x_label`` / ``y_label`` / ``log_x`` / ``log_y``: the plot's axes; ``dashed``: names of lines drawn dashed (the
    approximate ones, as the live plot); ``title``: the heading above the sliders.
    """

    title: str
    compute: Callable[..., View]
    axes: tuple[Axis, ...]
    fixed: Mapping[str, Any]
    series: Callable[[View], Mapping[str, tuple[Sequence[float], Sequence[float]]]]
    x_label: str
    y_label: str
    log_x: bool = False
    log_y: bool = False
    dashed: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        names = [a.name for a in self.axes]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"axes must name distinct controls, got {names}")
        overlap = sorted(set(names) & set(self.fixed))
        if overlap:
            raise ValueError(f"fixed must not hold the axes' controls, got {overlap}")
        if self.size > MAX_POINTS:
            raise ValueError(f"axes must give at most {MAX_POINTS} points, got {self.size} ({names})")

    @property
    def size(self) -> int:
        """Points of the grid: the product of the axes' lengths."""
        return math.prod(len(a.values) for a in self.axes)

    def points(self) -> list[dict[str, Any]]:
        """Every point's keyword arguments of ``compute`` (fixed values and the axes'), row-major, the last axis
        fastest (as :func:`point_index`)."""
        return [
            {**self.fixed, **dict(zip((a.name for a in self.axes), combo, strict=True))}
            for combo in itertools.product(*(a.values for a in self.axes))
        ]


def point_index(grid: StaticGrid, **values: Any) -> int:
    """The position in :func:`grid_data`'s ``points`` of the point whose axes take ``values`` (one per axis);
    ``ValueError`` for a missing axis or a value not on it."""
    index = 0
    for axis in grid.axes:
        if axis.name not in values:
            raise ValueError(f"values must give axis {axis.name!r}")
        if values[axis.name] not in axis.values:
            raise ValueError(f"{axis.name} must be one of {axis.values}, got {values[axis.name]!r}")
        index = index * len(axis.values) + axis.values.index(values[axis.name])
    return index


def number(value: Any, digits: int = SIGNIFICANT_DIGITS) -> int | float | str:
    """``value`` as a JSON number at ``digits`` significant digits (a Python or NumPy integer stays an integer, as an
    explorer's integer controls need), or ``"nan"`` / ``"inf"`` / ``"-inf"``."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return int(value)
    x = float(value)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(f"{x:.{digits}g}")


def _axis_value(value: Any) -> Any:
    return value if isinstance(value, str) else number(value)


def grid_data(grid: StaticGrid) -> dict[str, Any]:
    """The grid as JSON data: the axes, the plot's settings and, per point (:meth:`StaticGrid.points`' order), the
    read-out (``values``, ``labels``), ``notes``, ``title`` and ``series`` (name -> [x index, y list]), or ``error``
    (the ``ValueError`` text ``compute`` raised there).  Labels and notes repeated from point to point are stored
    once, in ``strings``, and the lines' x values once, in ``xs``, each referred to by index; the lines' numbers have
    :data:`SERIES_DIGITS` significant digits (a plot), the read-out's :data:`SIGNIFICANT_DIGITS`."""
    strings: list[str] = []
    where: dict[str, int] = {}
    xs: list[list[float | str]] = []
    x_where: dict[tuple, int] = {}

    def ref(text: str) -> int:
        if text not in where:
            where[text] = len(strings)
            strings.append(text)
        return where[text]

    def x_ref(values: Any) -> int:
        row = [number(v, SERIES_DIGITS) for v in np.asarray(values, dtype=float)]
        key = tuple(row)
        if key not in x_where:
            x_where[key] = len(xs)
            xs.append(row)
        return x_where[key]

    points: list[dict[str, Any]] = []
    for kwargs in grid.points():
        try:
            view = grid.compute(**kwargs)
        except ValueError as exc:
            points.append({"error": str(exc)})
            continue
        series = {
            name: [x_ref(x), [number(v, SERIES_DIGITS) for v in np.asarray(y, dtype=float)]]
            for name, (x, y) in grid.series(view).items()
        }
        points.append(
            {
                "values": {key: number(value) for key, value in view.values.items()},
                "labels": {key: ref(view.labels.get(key, key)) for key in view.values},
                "notes": [ref(n) for n in view.notes],
                "title": ref(view.title),
                "series": series,
            }
        )
    return {
        "title": grid.title,
        "axes": [
            {"name": a.name, "label": a.label, "values": [_axis_value(v) for v in a.values], "default": a.default}
            for a in grid.axes
        ],
        "fixed": {k: (v if isinstance(v, str) else number(v)) for k, v in grid.fixed.items()},
        "x_label": grid.x_label,
        "y_label": grid.y_label,
        "log_x": grid.log_x,
        "log_y": grid.log_y,
        "dashed": list(grid.dashed),
        "notes": list(grid.notes),
        "strings": strings,
        "xs": xs,
        "points": points,
    }
