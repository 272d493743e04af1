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
