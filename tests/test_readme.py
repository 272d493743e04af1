"""The README is the front page and stays true (issue 54): what dpcore is, the two commands, the verdicts, a quick
start and where the rest lives, under 15 KB; nothing in it that drifts is typed by hand (test counts, timings,
notebook counts): the verdict table is generated (tests/test_readme_verdicts.py fails while it is stale) and the
quick start runs as doctests in ``make test``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START, END = "<!-- verdicts:start -->", "<!-- verdicts:end -->"


def _typed() -> str:
    """The README without its generated verdict block."""
    text = README.read_text(encoding="utf-8")
    return text[: text.index(START)] + text[text.index(END) + len(END) :]


def test_the_readme_is_a_front_page_under_15_kb():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) < 15_000, f"README.md is {len(text.encode())} bytes: move reference material to docs/"
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["The two commands", "Results at a glance", "Quick start", "Where the rest lives"], headings
    assert "make figures" in text and "make test" in text


@pytest.mark.parametrize(
    "pattern",
    [
        r"\b\d[\d,]*\s+(?:unit\s+)?tests?\b",  # "1,845 tests"
        r"\b\d+\s+notebooks\b",  # "16 notebooks"
        r"\b\d+\s*min(?:utes?)?\s+\d+\s*s\b",  # "26 min 36 s"
        r"\b\d+(?:\.\d+)?\s*(?:s|seconds|minutes|min|hours|h)\s+(?:wall|of CPU|CPU)\b",
        r"\btook\s+\d",
    ],
)
def test_nothing_that_drifts_is_typed_by_hand(pattern):
    found = re.findall(pattern, _typed(), flags=re.IGNORECASE)
    assert not found, f"README.md types a count or timing that drifts ({found}): generate it or remove it"


def test_the_pages_the_readme_points_to_exist():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:docs|figures)/[^)#]+)\)", text)
    assert links, "the README links its docs pages"
    for link in links:
        assert (ROOT / link).is_file(), link
