"""The README's per-paper verdict table is generated from the committed claims (docs/build_site.py) and kept in
sync by a test, not by `make docs` rewriting a tracked file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _build_site():
    spec = importlib.util.spec_from_file_location("dpcore_docs_build_site", ROOT / "docs" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_verdict_table_matches_the_committed_claims():
    site = _build_site()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert site.readme_with_verdicts(text) == text, "stale verdicts: run `.venv/bin/python docs/build_site.py --readme`"


def test_a_stale_verdict_table_is_noticed():
    site = _build_site()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(site.README_START) + len(site.README_START)
    stale = text[:start] + "\n| 000 | everything reproduced |\n" + text[text.index(site.README_END):]
    assert site.readme_with_verdicts(stale) != stale
