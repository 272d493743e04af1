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


def _fig1_cells() -> pd.DataFrame:
    return pd.read_csv(FIG1).set_index("run")


def _committed_pairs(cells: pd.DataFrame) -> dict[int, tuple[float, ...]]:
    """{|S_b|: (BC SS, BC SH, IC SS, IC SH)} for every |S_b| whose four MNIST cells have a result."""
    out = {}
    for batch in sorted({int(b) for b in cells["batch_size"]}):
        runs = [f"mnist/{s}/{fam}/b{batch}" for fam in ("BC", "IC") for s in ("SS", "SH")]
        if all(r in cells.index and cells.loc[r, "status"] == "done" for r in runs):
            out[batch] = tuple(round(100 * float(cells.loc[r, "best_accuracy"]), 1) for r in runs)
    return out


def test_bc_not_comparable_quotes_every_committed_fig1_pair():
    found = _finding("bc_not_comparable")
    committed = _committed_pairs(_fig1_cells())
    assert _quoted_pairs(found.readings[0]) == committed  # every |S_b| with its four cells, and only those


def test_bc_not_comparable_sentence_quotes_the_ranges_of_those_pairs():
    committed = _committed_pairs(_fig1_cells())
    bc = [v for values in committed.values() for v in values[:2]]
    ic = [v for values in committed.values() for v in values[2:]]
    sizes = sorted(committed)
    text = _finding("bc_not_comparable").text
    assert f"BC {min(bc):.1f}–{max(bc):.1f} % vs IC {min(ic):.1f}–{max(ic):.1f} %" in text, text
    assert f"|S_b| = {', '.join(map(str, sizes))}" in text, text


def test_bc_not_comparable_names_no_quoted_size_as_untested():
    found = _finding("bc_not_comparable")
    for batch in _quoted_pairs(found.readings[0]):
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


def test_nondp_baseline_quotes_the_committed_best_and_512_cells():
    table = pd.read_csv(FIG1.with_name("table3_printed_vs_ours.csv"))
    table = table[table["dataset"] == "mnist"].groupby("sampling").first()
    cells = _fig1_cells()
    best = " / ".join(f"{table.loc[s, 'nondp_best_pct']:.2f}" for s in ("SS", "SH"))
    printed = " / ".join(f"{table.loc[s, 'printed_nondp']:g}" for s in ("SS", "SH"))
    at512 = " / ".join(f"{100 * cells.loc[f'mnist/{s}/NP/b512', 'best_accuracy']:.2f}" for s in ("SS", "SH"))
    found = _finding("nondp_baseline")
    assert f"({best} % vs {printed} %" in found.text and f"{at512} % at 512" in found.text, found.text
    assert found.closest == f"|S_b| = 512 alone: {at512} %"


def test_table3_mnist_finding_quotes_each_complete_family_against_the_printed_values():
    table = pd.read_csv(FIG1.with_name("table3_printed_vs_ours.csv"))
    table = table[table["dataset"] == "mnist"].set_index(["clipping", "sampling"])
    text = _finding("table3_mnist_below_printed").text.replace("\n", " ")
    quoted = 0
    for family in ("IC", "BC", "MC"):
        rows = table.loc[family].loc[["SS", "SH"]]
        if (rows["missing_dp"] != 0).any():
            continue
        ours = " / ".join(f"{v:.2f}" for v in rows["best_epoch_pct"])
        printed = " / ".join(f"{v:g}" for v in rows["printed_dp"])
        assert f"{family} {ours} % vs {printed} %" in text, (family, ours, printed, text)
        quoted += 1
    assert quoted == 3, "every MNIST family has run: the sentence quotes all three"
