"""Issue 41: every figure drawn on the offline mirror's JPEG CIFAR-10 says so on the figure (one rule:
dpcore.data.describe.reencoding_captions, applied by Report.figure); verdict words and marks for figures."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402

from dpcore.claims import ClaimsLog, verdicts  # noqa: E402
from dpcore.data.describe import reencoding_captions  # noqa: E402
from dpcore.papers.p004_contraction.claims import CLAIMS as CLAIMS_004  # noqa: E402
from dpcore.plots import mark_verdict_cells, new_axes, table_panel, verdict_label  # noqa: E402
from dpcore.report import CAPTION_GID, CAPTION_KEY, FOOTER_GID, Report, add_footer  # noqa: E402

JPEG = "MNIST train (60,000; content md5 6bbc9ace…) + test; CIFAR-10 train (50,000; JPEG q75 mirror, sha256 caee4964…)"
PICKLES = "CIFAR-10 train (50,000; publisher python pickles, md5 c58f3010…) + test"


def test_reencoding_captions_name_only_the_jpeg_copy():
    captions = reencoding_captions(JPEG)
    assert list(captions) == ["CIFAR-10"]
    assert "lossy JPEG re-encoding (quality 75)" in captions["CIFAR-10"] and "offline mirror" in captions["CIFAR-10"]
    assert reencoding_captions(PICKLES) == {} and reencoding_captions("MNIST train (60,000; …)") == {}
    with pytest.raises(ValueError, match="provenance_text"):
        reencoding_captions(None)


def _figure(title: str):
    fig, axes = new_axes(1, 1)
    axes[0, 0].plot([0, 1], [0, 1])
    axes[0, 0].set_title(title)
    return fig


def test_report_captions_the_figures_that_name_the_reencoded_data_set(tmp_path):
    report = Report("x", "nb", figures_dir=tmp_path, provenance=JPEG)
    fig = _figure("CIFAR-10: test accuracy")
    report.figure(fig, "cifar")
    caption = Image.open(tmp_path / "x" / "cifar.png").text[CAPTION_KEY]
    assert caption == reencoding_captions(JPEG)["CIFAR-10"]
    drawn = {t.get_gid(): t for t in fig.texts}
    assert drawn[CAPTION_GID].get_text().replace("\n", " ") == caption  # drawn, wrapped
    renderer = fig.canvas.get_renderer()
    footer, note = drawn[FOOTER_GID].get_window_extent(renderer), drawn[CAPTION_GID].get_window_extent(renderer)
    assert footer.y1 <= note.y0 + 1e-6 and note.y1 <= fig.axes[0].get_tightbbox(renderer).y0 + 1e-6
    report.figure(fig, "cifar")  # a second save replaces the caption
    assert len([t for t in fig.texts if t.get_gid() == CAPTION_GID]) == 1
    report.figure(_figure("MNIST: test accuracy"), "mnist")  # a figure not drawn on CIFAR-10: no caption
    assert CAPTION_KEY not in Image.open(tmp_path / "x" / "mnist.png").text
    plain = Report("x", "nb", figures_dir=tmp_path, provenance=PICKLES)  # the publisher's files: nothing to say
    assert plain.data_caption(_figure("CIFAR-10")) == ""
    plt.close("all")


def test_add_footer_refuses_a_caption_that_is_not_text():
    fig = _figure("t")
    with pytest.raises(ValueError, match="caption"):
        add_footer(fig, "dpcore · profile=quick", caption=None)
    plt.close(fig)


def test_verdicts_read_claim_rows_and_refuse_other_rows():
    log = ClaimsLog()
    spec = next(iter(CLAIMS_004.values()))
    row = log.check(spec, spec.value)
    assert verdicts(log.claims) == {spec.key: "reproduced"}
    assert verdicts([{"key": "a", "status": "not-reproduced"}, {"key": "b", "status": "not-run"}]) == {
        "a": "not reproduced", "b": "not run"}
    assert row.status == "reproduced"
    with pytest.raises(ValueError, match="rows"):
        verdicts([{"key": "a", "status": "fine"}])


def test_verdict_marks_label_and_colour_table_cells():
    assert verdict_label("not reproduced") == "✗ not reproduced" and verdict_label("not run") == "– not run"
    with pytest.raises(ValueError, match="verdict"):
        verdict_label("ok")
    fig, axes = new_axes(1, 1)
    tab = table_panel(axes[0, 0], [["a", "x"], ["b", "y"]], ["name", "verdict"], "t", col_widths=(1, 3))
    mark_verdict_cells(tab, 1, ["reproduced", None])
    cells = tab.get_celld()
    assert cells[(1, 1)].get_facecolor()[:3] != cells[(2, 1)].get_facecolor()[:3]
    assert cells[(1, 1)].get_width() == pytest.approx(3 * cells[(1, 0)].get_width())
    with pytest.raises(ValueError, match="verdicts"):
        mark_verdict_cells(tab, 1, ["great"])
    with pytest.raises(ValueError, match="col_widths"):
        table_panel(axes[0, 0], [["a"]], ["name"], "t", col_widths=(0,))
    with pytest.raises(ValueError, match="height_ratios"):
        new_axes(1, 2, height_ratios=(1,))
    plt.close("all")
