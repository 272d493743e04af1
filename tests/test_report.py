"""Figures are written atomically with mode 0644, labelled with the profile, footer below everything."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from dpcore.claims import ClaimSpec, collect  # noqa: E402
from dpcore.report import (  # noqa: E402
    FOOTER_GID,
    FOOTER_KEY,
    LAYOUT_KEY,
    MIN_AXES_SPAN,
    REPEATABLE_VAR,
    SIGNIFICANT_DIGITS,
    FigureLayout,
    Report,
    add_footer,
    atomic_path,
    figure_layout,
    finish_figure,
    table_csv,
    timing_columns,
    wrap_to_width,
)

SPEC = ClaimSpec("ref", "abadi.eps", "Abadi et al. 2016", "epsilon", 1.26, "reference", "CCS 2016 §3.1", atol=0.005)
FULL = ClaimSpec("001", "fig4.acc", "Fig. 4", "accuracy", 0.9, "printed", "Fig. 4, p. 9", atol=0.01, scale="full")


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_figure_writes_png_pdf_csv_with_mode_and_metadata(tmp_path):
    report = Report("00_x", "nb", figures_dir=tmp_path, reduced=True, reduced_note="2 epochs", provenance="MNIST")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    written = report.figure(fig, "line", data=pd.DataFrame({"x": [0, 1]}))
    assert {p.name for p in written.values()} == {"line.png", "line.pdf", "line.csv"}
    assert all(p.stat().st_size > 0 for p in written.values())
    assert all(p.stat().st_mode & 0o777 == 0o666 & ~_umask() for p in written.values())
    assert report.label == "dpcore · profile=quick · REDUCED SCALE: 2 epochs · data: MNIST"
    with Image.open(written["png"]) as image:
        assert image.text[FOOTER_KEY] == report.label
    assert b"REDUCED SCALE" in written["pdf"].read_bytes() or written["pdf"].stat().st_size > 0
    assert [t.get_text() for t in fig.texts if t.get_gid() == FOOTER_GID] == [report.label]
    assert not list(tmp_path.rglob(".*tmp*"))
    report.figure(fig, "line")  # a second save replaces the footer rather than stacking another one
    assert len([t for t in fig.texts if t.get_gid() == FOOTER_GID]) == 1


def _extents_while_saving(fig, path):
    """Window extents of the footer and every other text/legend during the draw that ``savefig`` makes."""
    seen = {}

    def record(event):
        renderer = event.renderer
        footer = next(t for t in fig.texts if t.get_gid() == FOOTER_GID)
        others = [*fig.legends, *(t for t in fig.texts if t is not footer)]
        for ax in fig.axes:
            others += [ax.xaxis.label, ax.title, *ax.get_xticklabels()]
            if ax.get_legend() is not None:
                others.append(ax.get_legend())
        seen["footer"] = footer.get_window_extent(renderer)
        seen["others"] = [(a, a.get_window_extent(renderer)) for a in others if a.get_visible() and _get_text(a) != ""]

    cid = fig.canvas.mpl_connect("draw_event", record)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    fig.canvas.mpl_disconnect(cid)
    return seen


@pytest.mark.parametrize("layout", [None, "constrained", "tight"])
@pytest.mark.parametrize("figure_legend", [False, True])
def test_footer_sits_below_everything_in_the_saved_image(layout, figure_legend, tmp_path):
    fig, axes = plt.subplots(1, 2, figsize=(6, 3), layout=layout)
    for ax in axes:
        ax.plot([0, 1], [0, 1], label="a very long legend entry")
        ax.set_xlabel("a long x label that reaches the bottom\nwith a second line")
    if figure_legend:
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center" if layout else "lower center")
    else:
        axes[0].legend(loc="upper left", bbox_to_anchor=(0.0, -0.35))  # axes legend below the axes
    add_footer(fig, "dpcore · profile=quick · REDUCED SCALE: a long note about the reduction")
    seen = _extents_while_saving(fig, tmp_path / "f.png")
    for artist, extent in seen["others"]:
        assert seen["footer"].y1 <= extent.y0 + 1e-6, f"footer overlaps {artist}"
    plt.close(fig)


def _get_text(artist):
    return artist.get_text() if hasattr(artist, "get_text") else "legend"


def test_saved_png_contains_the_footer_strip(tmp_path):
    report = Report("00_x", "nb", figures_dir=tmp_path)
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_xlabel("x label")
    png = report.figure(fig, "empty")["png"]
    with Image.open(png) as image:
        width, height = image.size
        bottom = image.convert("L").crop((0, int(height * 0.93), width, height))
        assert np.asarray(bottom).min() < 200  # the footer's grey text is inside the saved image


def test_check_uses_profile_and_reduced(tmp_path):
    report = Report("00_x", "nb", profile="paper", figures_dir=tmp_path, reduced=True)
    assert report.check(SPEC, 1.2586).status == "reproduced"
    claim = report.check(FULL, 0.5, note="2 epochs")
    assert claim.status == "not-run" and "ours = 0.5" in claim.note
    path = report.save_claims()
    assert path == tmp_path / "00_x" / "nb.claims.csv"
    assert [r["profile"] for r in collect(tmp_path)] == ["paper", "paper"]
    assert not hasattr(report, "record")


def test_default_folder_is_the_scratch_folder_of_the_profile(monkeypatch, tmp_path, capsys):
    """Outside the runner (no figures_dir) a report never writes figures/: build/scratch/<profile>/ instead."""
    monkeypatch.setenv("DPCORE_ROOT", str(tmp_path))
    quick = Report("a", "nb")
    assert quick.out_dir == tmp_path / "build" / "scratch" / "quick" / "a" and quick.scratch
    assert "scratch" in capsys.readouterr().out
    assert Report("a", "nb", profile="paper").out_dir == tmp_path / "build" / "scratch" / "paper" / "a"
    assert "scratch/paper/a" in capsys.readouterr().out
    given = Report("a", "nb", figures_dir=tmp_path / "figures")  # what the runner does
    assert given.out_dir == tmp_path / "figures" / "a" and not given.scratch
    assert capsys.readouterr().out == ""


def test_failed_write_leaves_previous_file(tmp_path):
    target = tmp_path / "fig.png"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("boom")
    assert target.read_bytes() == b"old"
    assert list(tmp_path.iterdir()) == [target]


def test_bad_arguments():
    with pytest.raises(ValueError, match="profile"):
        Report("00_x", "nb", profile="fast")
    with pytest.raises(ValueError, match="folder"):
        Report("", "nb")
    with pytest.raises(ValueError, match="provenance"):
        Report("a", "nb", provenance=None)


# --------------------------------------------------------------------------- issue 25: readable, repeatable
LONG_NOTE = "Table I: CIFAR-10 1000 train / 500 test, batch 164, T = 16, 1 seed(s); Table II: CIFAR-10 1000 train"
LONG_DATA = "CIFAR-10 train (50,000; JPEG q75 mirror, sha256 caee4964...) + test (SVHN, Fashion-MNIST: paper only)"


def _small_figure():
    fig, ax = plt.subplots(figsize=(4.0, 3.0), layout="constrained")
    ax.plot([0.2, 1.0, 8.0], [9.0, 15.0, 33.0], marker="o", label="ours")
    ax.set(xlabel="ε", ylabel="test accuracy (%)", title="CIFAR-10")
    return fig


def test_long_footer_wraps_and_never_widens_the_saved_image(tmp_path):
    fig = _small_figure()
    fig.canvas.draw()
    content = fig.get_tightbbox(fig.canvas.get_renderer()).width  # inches, before the footer
    report = Report("00_x", "nb", figures_dir=tmp_path, reduced=True, reduced_note=LONG_NOTE, provenance=LONG_DATA)
    png = report.figure(fig, "small")["png"]
    with Image.open(png) as image:
        width = image.size[0]
        layout = FigureLayout.parse(image.text[LAYOUT_KEY])
    assert width <= (content + 2 * 0.08) * 150 + 3, "the footer widened the saved image"
    assert layout.footer_lines > 1 and layout.axes_span > 0.9 and not layout.problems()
    assert report.layouts["small"] == layout
    plt.close(fig)


def test_report_label_is_wrapped_at_separators(tmp_path):
    report = Report("00_x", "nb", figures_dir=tmp_path, reduced=True, reduced_note="x" * 30, provenance="y " * 200)
    fig = _small_figure()
    report.figure(fig, "wrapped")
    footer = next(t for t in fig.texts if t.get_gid() == FOOTER_GID)
    lines = footer.get_text().split("\n")
    words = [w for w in " ".join(lines).split() if w != "·"]
    assert len(lines) > 2 and words == [w for w in report.label.split() if w != "·"]  # nothing lost
    plt.close(fig)


def test_wrap_to_width_breaks_at_separators_first_then_at_spaces():
    lines = wrap_to_width("aaaa · bbbb · cc dd ee ff gg", 11, len)
    assert lines == ["aaaa · bbbb", "cc dd ee ff", "gg"]
    assert wrap_to_width("short", 100, len) == ["short"]
    assert wrap_to_width("averyveryverylongword x", 5, len) == ["averyveryverylongword", "x"]  # never cut a word
    with pytest.raises(ValueError, match="width"):
        wrap_to_width("a", 0, len)


def test_a_plot_squeezed_into_a_corner_is_measured_and_warned_about(tmp_path):
    fig = _small_figure()
    fig.text(-2.0, 0.5, "a stray text far to the left widens the canvas")
    with pytest.warns(UserWarning, match="squeezed into a corner"):
        Report("00_x", "nb", figures_dir=tmp_path).figure(fig, "squeezed")
    with Image.open(tmp_path / "00_x" / "squeezed.png") as image:
        assert FigureLayout.parse(image.text[LAYOUT_KEY]).axes_span < MIN_AXES_SPAN
    plt.close(fig)


@pytest.mark.parametrize("layout", [None, "constrained", "tight"])
@pytest.mark.parametrize("extras", ["plain", "figure_legend", "stray_text", "empty_panel"])
def test_finish_figure_layout_equals_the_public_figure_layout(layout, extras):
    """finish_figure measures the Axes once and adds the footer's box to the union instead of calling
    figure_layout again: both must give the same record (span, aspect), whatever the layout engine and extras."""
    fig, axes = plt.subplots(1, 3, figsize=(7, 2.5), layout=layout)
    for ax in axes[:2]:
        ax.plot([0, 1], [0, 1], label="a long legend entry")
        ax.set_xlabel("x label\nsecond line")
    if extras == "figure_legend":
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center" if layout else "lower center")
    elif extras == "stray_text":
        fig.text(-0.4, 0.5, "a text left of the canvas")
    if extras != "empty_panel":
        axes[2].plot([0, 1], [1, 0])
    _, got = finish_figure(fig, "dpcore · profile=quick · a footer long enough to wrap over two lines " * 2)
    fig.canvas.draw()  # the layout is frozen: a draw moves nothing
    want = figure_layout(fig, legends_moved=got.legends_moved, not_run_panels=got.not_run_panels,
                         footer_lines=got.footer_lines)  # fmt: skip
    assert got == want
    assert got.not_run_panels == (1 if extras == "empty_panel" else 0)
    plt.close(fig)


def test_layout_record_round_trips_and_names_problems():
    layout = FigureLayout(axes_span=0.5, aspect=9.0, legends_moved=1, not_run_panels=2, footer_lines=3)
    assert FigureLayout.parse(layout.text()) == FigureLayout(0.5, 9.0, 1, 2, 3)
    assert len(layout.problems()) == 2
    assert FigureLayout(0.95, 2.5).problems() == []
    with pytest.raises(ValueError, match="FigureLayout"):
        FigureLayout.parse("axes_span=0.9")


def test_empty_panel_and_covering_legend_are_fixed_when_saved(tmp_path):
    fig, axes = plt.subplots(1, 2, figsize=(8, 3), layout="constrained")
    x = np.linspace(0, 1, 40)
    for k in range(5):
        axes[0].plot(x, 0.2 * k + 0.05 * np.cos(7 * x), label=f"series {k}")
    axes[0].legend(loc="center")
    Report("00_x", "nb", figures_dir=tmp_path).figure(fig, "fixed")
    with Image.open(tmp_path / "00_x" / "fixed.png") as image:
        layout = FigureLayout.parse(image.text[LAYOUT_KEY])
    assert layout.legends_moved == 1 and layout.not_run_panels == 1
    assert [t.get_text() for t in axes[1].texts] == ["not run: no result for this panel"]
    plt.close(fig)


def test_saved_files_have_fixed_metadata_and_repeat_byte_for_byte(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    written = []
    for run in ("a", "b"):
        fig = _small_figure()
        frame = pd.DataFrame({"eps": [0.2, 1.0], "acc": [1 / 3, 2 / 3]})
        written.append(Report("00_x", "nb", figures_dir=tmp_path / run).figure(fig, "same", data=frame))
        plt.close(fig)
    for ext in ("png", "pdf", "csv"):
        assert written[0][ext].read_bytes() == written[1][ext].read_bytes(), ext
    with Image.open(written[0]["png"]) as image:
        assert image.text["Software"] == "dpcore"
    pdf = written[0]["pdf"].read_bytes()
    assert b"/CreationDate" not in pdf and b"Matplotlib" not in pdf and b"/Producer (dpcore)" in pdf
    assert b"matplotlib" not in written[0]["png"].read_bytes().lower()


def test_tables_have_a_stated_precision_and_no_timings(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_ROOT", str(tmp_path))
    report = Report("00_x", "nb", figures_dir=tmp_path / "figures")
    frame = pd.DataFrame(
        {
            "run": ["a", "b"],
            "acc": [0.1 + 0.2, 1 / 3],
            "mixed": ["n/a", 2 / 3],
            "steps": [1, 2],
            "wall_seconds": [1.5, 2.5],
        }
    )
    path = report.table(frame, "runs")
    assert path.read_text() == "run,acc,mixed,steps\na,0.3,n/a,1\nb,0.333333,0.666667,2\n"
    assert SIGNIFICANT_DIGITS == 6
    timings = tmp_path / "build" / "timings" / "quick" / "00_x" / "runs.csv"
    assert timings.read_text().splitlines()[0] == "run,acc,mixed,steps,wall_seconds"
    small = pd.DataFrame({"k": [1, 2, 3], "x": [123456.789, np.nan, 1e-7]})
    assert table_csv(small, significant=3) == "k,x\n1,1.23e+05\n2,\n3,1e-07\n"
    assert timing_columns(["seconds", "cpu_s", "epoch_seconds", "s", "second"]) == ["seconds", "cpu_s", "epoch_seconds"]
    with pytest.raises(ValueError, match="significant"):
        table_csv(frame, significant=0)
    with pytest.raises(ValueError, match="data"):
        report.table([1, 2], "x")


@pytest.fixture
def _torch_state():
    import torch

    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    yield torch
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(deterministic)


def test_runner_environment_makes_torch_repeatable(tmp_path, monkeypatch, _torch_state):
    torch = _torch_state
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(False)
    monkeypatch.delenv(REPEATABLE_VAR, raising=False)
    Report("00_x", "nb", figures_dir=tmp_path)
    assert torch.get_num_threads() == 2 and not torch.are_deterministic_algorithms_enabled()
    monkeypatch.setenv(REPEATABLE_VAR, "1")
    Report("00_x", "nb", figures_dir=tmp_path)
    assert torch.get_num_threads() == 1 and torch.are_deterministic_algorithms_enabled()
