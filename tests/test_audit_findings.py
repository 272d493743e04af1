"""The audit findings of 001 and 002 (issue 42) quote the committed audit table (figures/audit/authors_modes.csv)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dpcore.papers import findings

CSV = Path(__file__).resolve().parents[1] / "figures" / "audit" / "authors_modes.csv"


@pytest.mark.parametrize("paper, key, modes, decimals", [
    ("001", "authors_batch_mean_audited", ("authors_batch_mean", "algorithm2_per_record"), 2),
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


def test_003_authors_modes_finding_quotes_the_committed_paper_rows():
    """Issue 41: Table 3's values reached only under the authors' code are audit rows (counted apart, never
    reproduced); the finding quotes each row's accuracy and the range of the ε of the noise that ran."""
    import re

    from dpcore.claims import read_claims_csv
    from dpcore.papers.p003_shuffling.claims import CLAIMS

    finding = next(f for f in findings() if (f.paper, f.key) == ("003", "authors_modes_reach_printed"))
    assert finding.kind == "audit" and finding.conclusion
    paper = CSV.parents[1] / "paper" / "claims.csv"
    rows = [r for r in read_claims_csv(paper) if r["paper"] == "003" and finding.covers(r["key"])]
    assert len(rows) == 4 and all(CLAIMS[r["key"]].source == "audit" == r["source"] for r in rows)
    eps = []
    for r in rows:
        assert r["status"] in ("reproduced", "not-run"), r["key"]
        if r["status"] == "not-run":
            continue
        accuracy = float(re.search(r"\b(?:IC|BC) (\d+\.\d+) \(C =", r["note"]).group(1))
        assert f"{accuracy:.1f}" in finding.text, (r["key"], accuracy)
        eps.append(float(re.search(r"A_1 (?:of the noise that ran )?(\d\.\d+e\+\d+)", r["note"]).group(1)))
    if eps:
        low, high = (f"{x:.1e}".replace("e+0", "e") for x in (min(eps), max(eps)))
        assert f"{low}–{high}" in finding.text, (low, high)
