"""The "why ours differs" bars: the legend never covers a bar or a label; bad shapes are refused."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from dpcore.plots_why import why_differs_bars  # noqa: E402


def test_legend_covers_no_bar_and_no_label():
    fig, ax = plt.subplots(figsize=(12, 5.2))
    quantities = ["SS IC", "SS BC", "SH IC", "SH BC"]
    ours = [[93.0, 62.9, 92.9, 55.8], [math.nan, math.nan, 97.1, math.nan], [math.nan, 97.2, math.nan, 97.3]]
    eps = [["ε 35.2"] * 4, ["ε 1.31e+08 (claimed 33.1)"] * 4, ["ε 7.65e+07 (claimed 35.2)"] * 4]
    why_differs_bars(ax, quantities, [98.4, 98.2, 98.4, 98.3], ["as printed", "mode a", "mode b"], ours, eps,
                     ylabel="accuracy (%)")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    covered = [t.get_text() for t in ax.texts if t.get_window_extent(renderer).overlaps(legend)]
    covered += [f"bar {p.get_height():g}" for p in ax.patches if p.get_height() > 0
                and p.get_window_extent(renderer).overlaps(legend)]
    plt.close(fig)
    assert not covered, f"the legend covers {covered}"


def test_bad_shapes_name_the_argument():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="ours"):
        why_differs_bars(ax, ["a", "b"], [1.0, 2.0], ["r"], [[1.0]], [["x", "y"]])
    with pytest.raises(ValueError, match="printed"):
        why_differs_bars(ax, ["a", "b"], [1.0], ["r"], [[1.0, 2.0]], [["x", "y"]])
    plt.close(fig)
