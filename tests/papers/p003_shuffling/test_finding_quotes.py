"""Paper 003's findings quote numbers of committed results: each quote must equal the committed table it comes from
(a finding's sentence is typed, so a re-rendered table that moves a number must fail here, not go stale)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from dpcore.papers.p003_shuffling.claims import FINDINGS

ROOT = Path(__file__).resolve().parents[3]
FIG1 = ROOT / "figures" / "paper" / "003_shuffling_batch_clipping" / "fig1_best_accuracy_vs_batch.csv"
MODES = ROOT / "figures" / "audit" / "authors_modes.csv"


def _finding(key: str):
    (found,) = [f for f in FINDINGS if f.key == key]
    return found


def _quoted_pairs(text: str) -> dict[int, tuple[float, float, float, float]]:
    """{|S_b|: (BC SS, BC SH, IC SS, IC SH)} from 'a / b % vs c / d % at [|S_b| = ]N'."""
    pat = r"(\d+\.\d) / (\d+\.\d) %? ?vs (\d+\.\d) / (\d+\.\d) %? ?at (?:\|S_b\| = )?(\d+)"
    return {int(m[4]): tuple(float(v) for v in m[:4]) for m in re.findall(pat, text.replace("\n", " "))}


def test_bc_not_comparable_quotes_the_committed_fig1_cells():
    cells = pd.read_csv(FIG1).set_index("run")
    quoted = _quoted_pairs(_finding("bc_not_comparable").text)
    assert set(quoted) == {64, 256, 1024}, quoted
    for batch, values in quoted.items():
        runs = [f"mnist/{s}/{fam}/b{batch}" for fam in ("BC", "IC") for s in ("SS", "SH")]
        committed = tuple(round(100 * float(cells.loc[r, "best_accuracy"]), 1) for r in runs)
        assert values == committed, (batch, values, committed)


def test_bc_not_comparable_names_no_quoted_size_as_untested():
    found = _finding("bc_not_comparable")
    for batch in _quoted_pairs(found.text):
        assert not re.search(rf"\b{batch}\b", found.untested), (batch, found.untested)


def test_authors_modes_audited_quotes_the_committed_audit_range():
    rows = pd.read_csv(MODES)
    rows = rows[rows.paper.astype(str).str.zfill(3) == "003"].set_index("mode")
    text = _finding("authors_modes_audited").text
    code = rows.loc[["IC/authors_8186d9f", "IC/authors_93f6075", "BC/bc_divided_by_batch"], "audited_lower"]
    tensor = rows.loc[["IC/per_tensor", "BC/per_tensor"], "audited_lower"]
    assert f"({code.min():.1f}–{code.max():.1f})" in text, (text, code.tolist())
    assert f"alone {tensor.min():.1f}–{tensor.max():.1f}" in text, (text, tensor.tolist())
    assert f"claims for the run ({rows.loc['BC/algorithm1', 'claimed']:.2f})" in text
