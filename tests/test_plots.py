"""Shared plots: one seaborn style, the right artists drawn, inputs validated, no files written."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from dpcore import plots  # noqa: E402

STEPS = np.arange(1, 11)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_use_style_sets_the_seaborn_theme_once():
    plt.rcdefaults()
    plots.use_style(force=True)
    assert plt.rcParams["axes.grid"] is True  # seaborn whitegrid
    plt.rcParams["axes.grid"] = False
    plots.use_style()  # already styled: leaves the current settings alone
    assert plt.rcParams["axes.grid"] is False
    plots.use_style(force=True)
    assert plt.rcParams["axes.grid"] is True


def test_series_styles_differ_so_coinciding_lines_stay_visible():
    a, b = plots.series_style(0, n=2), plots.series_style(1, n=2)
    assert a["color"] != b["color"] and a["linestyle"] != b["linestyle"] and a["marker"] != b["marker"]
    assert b["linewidth"] < a["linewidth"] and b["zorder"] > a["zorder"] and b["markersize"] < a["markersize"]
    with pytest.raises(ValueError, match="index"):
        plots.series_style(-1)


def test_epsilon_curves_draws_one_line_per_accountant():
    ax = plots.epsilon_curves(STEPS, {"RDP": STEPS * 0.1, "PRV": STEPS * 0.09}, reference=0.5, reference_label="target")
    assert isinstance(ax, Axes)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["RDP", "PRV", "target"]
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), STEPS * 0.09)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == labels
    ax2 = plots.epsilon_curves({"a": [1, 2], "b": [1, 2, 3]}, {"a": [1, 2], "b": [3, 4, 5]}, logy=True, legend="none")
    assert ax2.get_yscale() == "log" and ax2.get_legend() is None


def test_tradeoff_curves_has_identity_line_and_unit_square():
    alpha = np.linspace(0, 1, 11)
    ax = plots.tradeoff_curves({"G_1": (alpha, np.clip(1 - alpha - 0.2, 0, 1))})
    lines = ax.get_lines()
    assert lines[0].get_label().startswith("perfect privacy")
    np.testing.assert_allclose(lines[0].get_ydata(), [1, 0])
    assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        plots.tradeoff_curves({"bad": ([0, 2], [1, 0])})
    with pytest.raises(ValueError, match="pair"):
        plots.tradeoff_curves({"bad": ([0, 1],)})


def test_accuracy_vs_epsilon_bands_and_non_private_line():
    eps = [1.0, 2.0, 4.0]
    ax = plots.accuracy_vs_epsilon(
        {"DP-SGD": (eps, [0.8, 0.85, 0.9])},
        bands={"DP-SGD": ([0.78, 0.83, 0.88], [0.82, 0.87, 0.92])},
        non_private=0.95,
    )
    assert [line.get_label() for line in ax.get_lines()] == ["DP-SGD", "non-private"]
    assert len(ax.collections) == 1  # the band
    with pytest.raises(ValueError, match="bands"):
        plots.accuracy_vs_epsilon({"a": (eps, eps)}, bands={"b": (eps, eps)})
    with pytest.raises(ValueError, match="lower"):
        plots.accuracy_vs_epsilon({"a": (eps, eps)}, bands={"a": ([1, 1, 1], [0, 0, 0])})
    with pytest.raises(ValueError, match="same length"):
        plots.accuracy_vs_epsilon({"a": ([1, 2], [1])})


def test_privacy_utility_panels_side_by_side_with_shared_legend():
    series = {"a": ([1, 2], [0.5, 0.6]), "b": ([1, 2], [0.4, 0.7])}
    fig = plots.privacy_utility_panels({"MNIST": series, "CIFAR": series}, non_private={"MNIST": 0.99})
    assert isinstance(fig, Figure)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["MNIST", "CIFAR"]
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in visible)
    fig4 = plots.privacy_utility_panels({str(i): series for i in range(4)}, ncols=3)
    assert sum(ax.get_visible() for ax in fig4.axes) == 4
    with pytest.raises(ValueError, match="non_private"):
        plots.privacy_utility_panels({"MNIST": series}, non_private={"SVHN": 0.9})


def test_printed_vs_ours_annotates_both_values():
    ax = plots.printed_vs_ours(["row 1", "row 2"], [1.5, 2.0], [1.2498, np.nan], statuses=["not-reproduced", "not-run"])
    texts = [t.get_text() for t in ax.texts]
    assert "1.5" in texts and "1.25" in texts and "not run" in texts
    assert "row 1\n(not-reproduced)" in [t.get_text() for t in ax.get_xticklabels()]
    with pytest.raises(ValueError, match="one value per label"):
        plots.printed_vs_ours(["a"], [1, 2], [1])


def test_inputs_are_validated():
    with pytest.raises(ValueError, match="curves"):
        plots.epsilon_curves(STEPS, {})
    with pytest.raises(ValueError, match="legend"):
        plots.epsilon_curves(STEPS, {"a": STEPS}, legend="left")
    with pytest.raises(ValueError, match="ax"):
        plots.epsilon_curves(STEPS, {"a": STEPS}, ax="axes")
    with pytest.raises(ValueError, match="ncols"):
        plots.new_axes(0)


def test_plots_write_no_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plots.epsilon_curves(STEPS, {"a": STEPS})
    plots.privacy_utility_panels({"p": {"a": ([1], [1])}})
    assert list(tmp_path.iterdir()) == []


def test_table_panel_fills_the_axes_and_refuses_ragged_rows():
    import matplotlib.pyplot as plt

    from dpcore.plots import table_panel

    fig, ax = plt.subplots()
    table_panel(ax, [["a", "1"], ["b", "2"]], ["name", "value"], "t")
    assert ax.get_title() == "t" and len(ax.tables) == 1
    with pytest.raises(ValueError, match="cells"):
        table_panel(ax, [["a"]], ["name", "value"], "t")
    plt.close(fig)


# --------------------------------------------------------------------------- layout helpers (issue 25)
def test_empty_panel_says_not_run_and_drawn_panels_stay_as_they_are():
    fig, axes = plots.new_axes(3)
    axes[0, 0].plot([0, 1], [0, 1])
    axes[0, 1].text(0.01, 0.01, "missing: s/10", transform=axes[0, 1].transAxes)  # a note is not data
    axes[0, 2].axis("off")  # a spacer without a frame is not a panel of a run
    assert [plots.is_empty_panel(ax) for ax in axes.flat] == [False, True, False]
    assert plots.mark_empty_panels(fig, "CIFAR-10 runs are paper-profile only") == 1
    texts = [t.get_text() for t in axes[0, 1].texts]
    assert texts == ["missing: s/10", "not run: CIFAR-10 runs are paper-profile only"]
    assert axes[0, 1].texts[1].get_gid() == plots.NOT_RUN_GID
    assert plots.mark_empty_panels(fig) == 0  # marked once: the text fills the panel now
    with pytest.raises(ValueError, match="reason"):
        plots.not_run(axes[0, 0], "  ")
    with pytest.raises(ValueError, match="fig"):
        plots.mark_empty_panels(axes[0, 0])


def test_log_scale_only_for_positive_values_spanning_decades():
    fig, axes = plots.new_axes(3)
    axes[0, 0].plot([1, 2, 3], [2.3, 48.0, 350.0])  # a diverging loss next to a healthy one
    axes[0, 0].plot([1, 2, 3], [2.3, 1.0, 0.6])
    axes[0, 1].plot([1, 2, 3], [2.3, 1.0, 0.6])  # less than a decade
    axes[0, 2].plot([1, 2, 3], [0.0, 5.0, 350.0])  # a zero cannot go on a log axis
    assert [plots.log_scale_if_wide(ax) for ax in axes.flat] == [True, False, False]
    assert [ax.get_yscale() for ax in axes.flat] == ["log", "linear", "linear"]
    with pytest.raises(ValueError, match="decades"):
        plots.log_scale_if_wide(axes[0, 0], decades=0)


def _legend_box(fig, ax):
    fig.canvas.draw()
    return ax.get_legend().get_window_extent(fig.canvas.get_renderer())


def test_a_legend_on_data_moves_below_its_axes_and_a_free_one_stays():
    fig, axes = plots.new_axes(2)
    x = np.linspace(0, 1, 50)
    for k in range(4):  # lines across the whole panel: no free corner
        axes[0, 0].plot(x, 0.1 + 0.25 * k + 0.05 * np.sin(9 * x), label=f"a long label for series {k}")
    axes[0, 0].legend(loc="upper left")
    axes[0, 1].plot(x, x, label="diagonal")
    axes[0, 1].legend(loc="upper left")  # the diagonal leaves the upper left corner free
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert plots.legend_covers_data(axes[0, 0], renderer) and not plots.legend_covers_data(axes[0, 1], renderer)
    assert plots.move_covering_legends(fig) == 1
    box = _legend_box(fig, axes[0, 0])
    xaxis = axes[0, 0].xaxis.get_tightbbox(fig.canvas.get_renderer())
    assert box.y1 <= xaxis.y0 + 1e-6, "the moved legend sits below the tick labels and the x label"
    assert [t.get_text() for t in axes[0, 0].get_legend().get_texts()] == [
        f"a long label for series {k}" for k in range(4)
    ]
    assert not plots.legend_covers_data(axes[0, 0], fig.canvas.get_renderer())


def test_a_legend_on_bars_counts_as_covering_data():
    fig, axes = plots.new_axes()
    ax = axes[0, 0]
    ax.bar([0, 1, 2], [1.0, 1.0, 1.0], label="bars")
    ax.set_ylim(0, 1)
    ax.legend(loc="center")
    fig.canvas.draw()
    assert plots.legend_covers_data(ax, fig.canvas.get_renderer())
    with pytest.raises(ValueError, match="no legend"):
        plots.move_legend_below(plots.new_axes()[1][0, 0], fig.canvas.get_renderer())
