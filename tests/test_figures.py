"""Every figure under figures/ is a readable, non-blank PNG of sane size with its dpcore footer.

The footer check reads the PNG text chunk ``dpcore-footer`` that :meth:`dpcore.report.Report.figure`
writes (the same text is drawn under the figure).  Figures written before that metadata existed
are listed in ``WRITTEN_BEFORE_FOOTER_METADATA``: for them a missing footer is an expected
failure (xfail) until ``make figures`` regenerates them; every other PNG must carry the footer.
After regenerating all figures, empty that set.

Readable layout (issue 25): no plot squeezed into a corner.  Two checks per PNG: the layout that
:meth:`~dpcore.report.Report.figure` measured at save time (text chunk ``dpcore-layout``: the axes span
at least :data:`~dpcore.report.MIN_AXES_SPAN` of the width, sane aspect ratio), and, independent of
the metadata, the columns with ink in the image above its footer strip span most of the width.  PNGs
written before the layout record are an expected failure (xfail) of the first check; those squeezed by
their footer before issue 25's fix are listed in ``SQUEEZED_BEFORE_ISSUE_25`` (xfail) until ``make
figures`` regenerates them: then empty that set.
"""

import functools
from typing import NamedTuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from dpcore.paths import figures_dir  # noqa: E402
from dpcore.report import FOOTER_KEY, LAYOUT_KEY, FigureLayout  # noqa: E402

ROOT = figures_dir()
PNGS = sorted(ROOT.rglob("*.png"))

MIN_SIDE, MAX_SIDE = 200, 6000  # pixels (Report saves at 150 dpi)
MAX_ASPECT = 8.0
MIN_STD = 10.0  # grey-level standard deviation of a figure with any content (blank: 0)
MIN_INK = 0.01  # fraction of pixels darker than near-white

WRITTEN_BEFORE_FOOTER_METADATA: frozenset[str] = frozenset()  # every committed figure is regenerated
MIN_INK_SPAN = 0.85  # the inked columns above the footer strip span this fraction of the width
FOOTER_STRIP = 0.15  # bottom fraction of the image left out of the ink span (the footer, wrapped)
#: committed before issue 25: a footer wider than the plot widened the canvas (`make figures` fixes them)
SQUEEZED_BEFORE_ISSUE_25: frozenset[str] = frozenset(
    {
        "000_proactive_dp/fig06_utility_graphs.png",
        "000_proactive_dp/fig09_mnist_sample_sizes.png",
        "000_proactive_dp/fig10_cifar10_sample_sizes.png",
        "000_proactive_dp/fig13_mnist_privacy_budgets.png",
        "000_proactive_dp/fig14_cifar10_privacy_budgets.png",
        "001_isrl_dp/fig4_mnist.png",
        "002_modelmix/table1_accuracy_vs_eps.png",
        "002_modelmix/table1_printed_vs_ours.png",
        "002_modelmix/table2_accuracy_vs_eps.png",
        "002_modelmix/table2_printed_vs_ours.png",
        "002_modelmix/table3_eps_for_accuracy.png",
    }
)

IDS = [p.relative_to(ROOT).as_posix() for p in PNGS]


class PngFacts(NamedTuple):
    """What the checks below read from one PNG: decoded once per file (five checks per figure, issue 54)."""

    width: int
    height: int
    grey_std: float
    ink: float  # fraction of pixels darker than near-white (grey < 250)
    ink_span: float  # see ink_span()
    text: dict[str, str]  # the PNG text chunks (footer, layout, caption)


@functools.cache
def png_facts(path) -> PngFacts:
    """The size, grey-level statistics, ink span and text chunks of the PNG at ``path`` (verified first: a truncated
    or corrupt file raises here)."""
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        width, height = image.size
        grey = np.asarray(image.convert("L"), dtype=float)
        text = dict(image.text)
    return PngFacts(width, height, float(grey.std()), float((grey < 250).mean()), _ink_span(grey), text)


def test_there_are_figures():
    assert PNGS, f"no PNG under {ROOT}: run `make figures`"


@pytest.mark.parametrize("path", PNGS, ids=IDS)
def test_png_is_readable_sane_and_not_blank(path):
    facts = png_facts(path)  # a truncated or corrupt file raises here
    width, height = facts.width, facts.height
    assert MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE, f"size {width}x{height}"
    assert max(width, height) / min(width, height) <= MAX_ASPECT, f"aspect of {width}x{height}"
    assert facts.grey_std > MIN_STD, f"blank figure: grey-level std {facts.grey_std:.2f}"
    assert facts.ink > MIN_INK, f"blank figure: {facts.ink:.4f} of the pixels have ink"


@pytest.mark.parametrize("path", PNGS, ids=IDS)
def test_png_has_the_dpcore_footer(path):
    footer = png_facts(path).text.get(FOOTER_KEY, "")
    name = path.relative_to(ROOT).as_posix()
    if not footer and name in WRITTEN_BEFORE_FOOTER_METADATA:
        pytest.xfail("written before the footer metadata existed; `make figures` regenerates it")
    assert footer.startswith("dpcore · profile="), f"{name}: no dpcore footer in the PNG metadata"
    profile = "paper" if path.relative_to(ROOT).parts[0] == "paper" else "quick"
    assert f"profile={profile}" in footer, f"{name}: footer {footer!r} is from another profile's run"


@pytest.mark.parametrize("path", PNGS, ids=IDS)
def test_png_has_its_pdf(path):
    assert path.with_suffix(".pdf").exists(), "Report.figure writes a PDF next to every PNG"


@pytest.mark.parametrize("path", PNGS, ids=IDS)
def test_png_layout_recorded_at_save_time_is_readable(path):
    record = png_facts(path).text.get(LAYOUT_KEY)
    if record is None:
        pytest.xfail("written before the layout record existed (issue 25); `make figures` regenerates it")
    problems = FigureLayout.parse(record).problems()
    assert problems == [], f"{path.relative_to(ROOT).as_posix()}: {problems}"


def ink_span(path) -> float:
    """The fraction of the width between the first and the last column with ink (grey < 245) in the image
    above its bottom :data:`FOOTER_STRIP` (the footer)."""
    return png_facts(path).ink_span


def _ink_span(grey: np.ndarray) -> float:
    """:func:`ink_span` of a decoded grey-level image."""
    top = grey[: int(grey.shape[0] * (1 - FOOTER_STRIP))]
    columns = np.flatnonzero((top < 245).any(axis=0))
    return (columns[-1] - columns[0] + 1) / grey.shape[1] if columns.size else 0.0


@pytest.mark.parametrize("path", PNGS, ids=IDS)
def test_png_plot_spans_the_width(path):
    name = path.relative_to(ROOT).as_posix()
    span = ink_span(path)
    if span < MIN_INK_SPAN and name in SQUEEZED_BEFORE_ISSUE_25:
        pytest.xfail("squeezed by its footer before issue 25; `make figures` regenerates it")
    assert span >= MIN_INK_SPAN, f"{name}: the plot spans {span:.0%} of the width: squeezed into a corner"


def test_squeezed_figure_is_caught(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1])
    fig.text(-3.0, 0.0, "a footer far wider than the plot")
    fig.savefig(tmp_path / "squeezed.png", bbox_inches="tight")
    plt.close(fig)
    assert ink_span(tmp_path / "squeezed.png") < MIN_INK_SPAN
    with pytest.raises(AssertionError, match="squeezed"):
        test_png_plot_spans_the_width(tmp_path / "squeezed.png")


def test_blank_figure_is_caught(tmp_path):
    blank = tmp_path / "blank.png"
    Image.new("RGB", (800, 600), "white").save(blank)
    with pytest.raises(AssertionError, match="blank"):
        test_png_is_readable_sane_and_not_blank(blank)


def test_footer_check_catches_a_figure_without_footer(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    plain = tmp_path / "a" / "plain.png"
    plain.parent.mkdir()
    Image.new("RGB", (400, 300), "black").save(plain)
    with pytest.raises(AssertionError, match="no dpcore footer"):
        test_png_has_the_dpcore_footer(plain)


#: committed figures drawn on CIFAR-10 (besides every PNG named *cifar10*): each must say that its images are the
#: offline mirror's JPEG re-encoding when its footer names that copy (issue 41)
CIFAR10_FIGURES = frozenset(
    {
        "002_modelmix/table1_printed_vs_ours.png",
        "002_modelmix/table1_accuracy_vs_eps.png",
        "002_modelmix/table1_where_the_gap_goes.png",
        "002_modelmix/fig2_curves.png",
    }
)


@pytest.mark.parametrize("path", PNGS, ids=IDS)
def test_cifar10_figures_say_their_images_are_the_jpeg_reencoding(path):
    from dpcore.data.describe import reencoding_captions
    from dpcore.report import CAPTION_KEY

    text = png_facts(path).text
    footer, caption = text.get(FOOTER_KEY, ""), text.get(CAPTION_KEY)
    name = path.relative_to(ROOT).as_posix()
    expected = reencoding_captions(footer)
    short = name.removeprefix("paper/")
    if expected and ("cifar10" in short or short in CIFAR10_FIGURES):
        assert caption, f"{name}: drawn on the JPEG CIFAR-10 copy but carries no caption saying so"
    if caption:
        assert caption in expected.values(), f"{name}: caption {caption!r} is not the rule's ({expected})"


def test_caption_check_catches_a_cifar10_figure_without_caption(tmp_path, monkeypatch):
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    plain = tmp_path / "x_cifar10.png"
    fig.savefig(plain, metadata={FOOTER_KEY: "dpcore · profile=quick · data: CIFAR-10 train (50,000; JPEG q75 mirror, "
                                             "sha256 caee4964…)"})  # fmt: skip
    plt.close(fig)
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    with pytest.raises(AssertionError, match="no caption"):
        test_cifar10_figures_say_their_images_are_the_jpeg_reencoding(plain)
