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


def test_bar_inputs_orders_cells_and_readings_from_a_long_frame():
    import pandas as pd

    from dpcore.plots_why import bar_inputs

    frame = pd.DataFrame({
        "reading": ["a", "a", "b", "b"], "cell": ["x", "y", "x", "y"], "printed_pct": [50.0, 60.0, 50.0, 60.0],
        "status": ["done", "not run", "done", "done"], "v": [1.0, float("nan"), 3.0, 4.0],
    })  # fmt: skip
    cells, printed, ours, eps, missing = bar_inputs(frame, ["b", "a"], value="v", eps_text=lambda r: f"e{r['v']}")
    assert cells == ["x", "y"] and printed == [50.0, 60.0]
    assert ours[0] == [3.0, 4.0] and ours[1][0] == 1.0 and ours[1][1] != ours[1][1]  # NaN where not run
    assert eps == [["e3.0", "e4.0"], ["e1.0", "enan"]] and missing == [["done", "done"], ["done", "not run"]]
    with pytest.raises(ValueError, match="frame"):
        bar_inputs(frame, ["a"], value="missing", eps_text=str)
