"""The audit findings of 001 and 002 (issue 42) quote the committed audit table (figures/audit/authors_modes.csv)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpcore.papers import findings

CSV = Path(__file__).resolve().parents[3] / "figures" / "audit" / "authors_modes.csv"


def test_002_audit_finding_is_an_estimate_backed_by_the_committed_table():
    """Issue 50: the finding quotes no audited value of ours (the table has them) and, without a bound at a stated
    confidence, is an estimate that changes no conclusion; the committed table shows what it says."""
    table = pd.read_csv(CSV, dtype={"paper": str}).set_index(["paper", "mode"])
    finding = next(f for f in findings() if (f.paper, f.key) == ("002", "authors_configuration_audited"))
    assert finding.weight_words == "an estimate (no confidence bound)" and not finding.changes_a_conclusion
    assert bool(table.loc[("002", "authors_configuration.eps0.2"), "exceeds_claim"])
    assert not bool(table.loc[("002", "authors_configuration.eps1"), "exceeds_claim"])


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


