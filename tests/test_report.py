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
from dpcore.report import FOOTER_GID, FOOTER_KEY, Report, add_footer, atomic_path  # noqa: E402

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


def test_default_folder_depends_on_profile(monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_ROOT", str(tmp_path))
    assert Report("a", "nb").out_dir == tmp_path / "figures" / "a"
    assert Report("a", "nb", profile="paper").out_dir == tmp_path / "figures" / "paper" / "a"


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
