"""Every figure under figures/ is a readable, non-blank PNG of sane size with its dpcore footer.

The footer check reads the PNG text chunk ``dpcore-footer`` that :meth:`dpcore.report.Report.figure`
writes (the same text is drawn under the figure).  Figures written before that metadata existed
are listed in ``WRITTEN_BEFORE_FOOTER_METADATA``: for them a missing footer is an expected
failure (xfail) until ``make figures`` regenerates them; every other PNG must carry the footer.
After regenerating all figures, empty that set.
"""

import numpy as np
import pytest
from PIL import Image

from dpcore.paths import figures_dir
from dpcore.report import FOOTER_KEY

ROOT = figures_dir()
PNGS = sorted(ROOT.rglob("*.png"))

MIN_SIDE, MAX_SIDE = 200, 6000  # pixels (Report saves at 150 dpi)
MAX_ASPECT = 8.0
MIN_STD = 10.0  # grey-level standard deviation of a figure with any content (blank: 0)
MIN_INK = 0.01  # fraction of pixels darker than near-white

WRITTEN_BEFORE_FOOTER_METADATA: frozenset[str] = frozenset()  # every committed figure is regenerated

IDS = [p.relative_to(ROOT).as_posix() for p in PNGS]


def test_there_are_figures():
    assert PNGS, f"no PNG under {ROOT}: run `make figures`"


@pytest.mark.parametrize("path", PNGS, ids=IDS)
def test_png_is_readable_sane_and_not_blank(path):
    with Image.open(path) as image:
        image.verify()  # a truncated or corrupt file raises here
    with Image.open(path) as image:
        width, height = image.size
        grey = np.asarray(image.convert("L"), dtype=float)
    assert MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE, f"size {width}x{height}"
    assert max(width, height) / min(width, height) <= MAX_ASPECT, f"aspect of {width}x{height}"
    assert grey.std() > MIN_STD, f"blank figure: grey-level std {grey.std():.2f}"
    assert (grey < 250).mean() > MIN_INK, f"blank figure: {(grey < 250).mean():.4f} of the pixels have ink"


@pytest.mark.parametrize("path", PNGS, ids=IDS)
def test_png_has_the_dpcore_footer(path):
    with Image.open(path) as image:
        footer = image.text.get(FOOTER_KEY, "")
    name = path.relative_to(ROOT).as_posix()
    if not footer and name in WRITTEN_BEFORE_FOOTER_METADATA:
        pytest.xfail("written before the footer metadata existed; `make figures` regenerates it")
    assert footer.startswith("dpcore · profile="), f"{name}: no dpcore footer in the PNG metadata"
    profile = "paper" if path.relative_to(ROOT).parts[0] == "paper" else "quick"
    assert f"profile={profile}" in footer, f"{name}: footer {footer!r} is from another profile's run"


@pytest.mark.parametrize("path", PNGS, ids=IDS)
def test_png_has_its_pdf(path):
    assert path.with_suffix(".pdf").exists(), "Report.figure writes a PDF next to every PNG"


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
