"""The audit findings of 001 and 002 (issue 42) quote the committed audit table (figures/audit/authors_modes.csv)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dpcore.papers import findings

CSV = Path(__file__).resolve().parents[3] / "figures" / "audit" / "authors_modes.csv"


@pytest.mark.parametrize("paper, key, modes, decimals", [
    ("002", "authors_configuration_audited", ("authors_configuration.eps0.2", "authors_configuration.eps1"), 3),
])  # fmt: skip
def test_audit_finding_quotes_the_committed_lower_bounds(paper, key, modes, decimals):
    table = pd.read_csv(CSV, dtype={"paper": str}).set_index(["paper", "mode"])
    finding = next(f for f in findings() if (f.paper, f.key) == (paper, key))
    for mode in modes:
        lower = float(table.loc[(paper, mode), "audited_lower"])
        assert f"{lower:.{decimals}f}" in finding.text, (mode, lower)
    exceeds = table.loc[(paper, modes[0]), "exceeds_claim"]
    assert bool(exceeds) and not bool(table.loc[(paper, modes[1]), "exceeds_claim"])


def test_003_authors_modes_rows_have_their_own_status_and_the_finding_quotes_no_value_of_ours():
    """Issues 41 and 50: Table 3's values reached only under the authors' code are audit rows with a status of their
    own words (never reproduced); the finding's sentence quotes no accuracy or ε of ours (each row's note has them)."""
    import re

    from dpcore.claims import read_claims_csv
    from dpcore.papers.p003_shuffling.claims import CLAIMS

    finding = next(f for f in findings() if (f.paper, f.key) == ("003", "authors_modes_reach_printed"))
    assert finding.kind == "audit" and finding.weight_words == "an estimate (no confidence bound)"
    paper = CSV.parents[1] / "paper" / "claims.csv"
    rows = [r for r in read_claims_csv(paper) if r["paper"] == "003" and finding.covers(r["key"])]
    assert len(rows) == 4 and all(CLAIMS[r["key"]].source == "audit" == r["source"] for r in rows)
    assert all(r["status"] in ("authors-code", "not-run") for r in rows)
    assert not re.search(r"\d+\.\d+ %|\de[+]?\d", finding.text), finding.text


def _finding(paper, key):
    return next(f for f in findings() if (f.paper, f.key) == (paper, key))


def test_001_audit_findings_are_estimates_that_name_their_tables():
    """Issue 50: 001's audit of the authors' batch-mean clipping is a GDP-style estimate without a Clopper–Pearson
    bound: labelled an estimate, it never "changes a conclusion"; its numbers live in the committed table (the
    finding names it, quotes none), and the table says the mode exceeds the claim while Algorithm 2 does not."""
    import re

    table = pd.read_csv(CSV, dtype={"paper": str}).set_index(["paper", "mode"])
    assert bool(table.loc[("001", "authors_batch_mean"), "exceeds_claim"])
    assert not bool(table.loc[("001", "algorithm2_per_record"), "exceeds_claim"])
    for key in ("authors_batch_mean_audited", "batch_mean_mode_orderings"):
        finding = _finding("001", key)
        assert finding.kind == "audit" and finding.confidence is None and not finding.changes_a_conclusion
        assert finding.weight_words == "an estimate (no confidence bound)"
        text = finding.text.replace("printed 0.125–3", "")  # the paper's ε grid
        assert not re.search(r"\d\.\d{2}|\d,\d{3}", text), text  # no measured value in prose
        assert "authors_modes.csv" in finding.evidence or "insurance_authors_batch_mean" in finding.evidence


def test_002_readings_quote_the_committed_table1_cells_and_ablation():
    """Issue 41: Table I's readings name each cell's value, the ε it ran at (training, and total with the authors'
    private normalisation) and the result folders."""
    from dpcore.claims import read_claims_csv

    as_printed, whole, _ = _finding("002", "table1_private").readings
    rows = {r["key"]: r for r in read_claims_csv(CSV.parents[1] / "paper" / "claims.csv") if r["paper"] == "002"}
    for method, name in (("dpsgd", "[19]"), ("mm", "ModelMix")):
        cells = ", ".join(f"{float(rows[f'table1.cifar10.{method}.eps{e}']['our_value']):.1f}"
                          for e in ("0.2", "0.4", "0.6", "0.8", "1"))  # fmt: skip
        assert f"{name} {cells} %" in as_printed, (method, cells)
    runs = pd.read_csv(CSV.parents[1] / "paper" / "002_modelmix" / "table1_ablation_runs.csv")
    for method, name in (("dpsgd", "[19]"), ("mm", "ModelMix")):
        sel = runs[(runs["method"] == method) & (runs["factor"] == "all")].sort_values("target_eps")
        assert f"{name} " + ", ".join(f"{v:.1f}" for v in sel["final_pct"]) + " %" in whole, method
        assert ", ".join(f"{v:.2f}" for v in sel["epsilon_total"]) in whole, method
    evidence = _finding("002", "table1_private").evidence
    assert "(002_table1)" in as_printed and "(002_ablation)" in whole
    assert "results/paper/002_table1/" in evidence and "results/paper/002_ablation/" in evidence
