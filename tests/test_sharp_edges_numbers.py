"""docs/sharp_edges.md quotes numbers it does not compute: each one is checked here against the committed table it
comes from (figures/003_shuffling_batch_clipping/shuffled_three_numbers.csv, figures/audit/audit_tightness.csv) or
against the library (the Dirac-pair lower bound, which no table holds), at the printed precision."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from dpcore.accounting.shuffle_lower import DIRAC_PAIR, shuffle_lower_epsilon

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "sharp_edges.md").read_text(encoding="utf-8")
THREE = ROOT / "figures" / "003_shuffling_batch_clipping" / "shuffled_three_numbers.csv"
TIGHT = ROOT / "figures" / "audit" / "audit_tightness.csv"


def _section() -> str:
    start = PAGE.index("**A shuffled run has three numbers, not one**")
    return PAGE[start : PAGE.index("**Tight audits assume what they say.**", start)]


def _value(row_start: str) -> float:
    """The ε cell of the table row whose first cell starts with ``row_start``."""
    rows = [line for line in _section().splitlines() if line.startswith(f"| {row_start}")]
    assert len(rows) == 1, (row_start, rows)
    return float(rows[0].split("|")[2])


def _decimals(row_start: str) -> int:
    rows = [line for line in _section().splitlines() if line.startswith(f"| {row_start}")]
    return len(rows[0].split("|")[2].strip().split(".")[1])


@pytest.fixture(scope="module")
def setting() -> dict:
    m = re.search(r"σ = (\d+(?:\.\d+)?), b = ⌊(\d+)/(\d+)⌋ = (\d+) rounds per epoch, E = (\d+), δ = ([0-9.e-]+)\)",
                  _section())  # fmt: skip
    assert m, "the section names its setting (σ, b, E, δ)"
    sigma, n, batch, rounds, epochs, delta = m.groups()
    assert int(n) // int(batch) == int(rounds)
    return dict(sigma=float(sigma), N=int(n), batch=int(batch), rounds=int(rounds), E=int(epochs), delta=float(delta))


def test_three_numbers_are_the_committed_table_row(setting):
    table = pd.read_csv(THREE)
    row = table[(table.N == setting["N"]) & (table.batch == setting["batch"]) & (table.E == setting["E"])
                & (table.sigma == setting["sigma"])]  # fmt: skip
    assert len(row) == 1 and int(row.rounds_per_epoch.iloc[0]) == setting["rounds"]
    row = row.iloc[0]
    quoted = {"Poisson accounting": "poisson_not_valid", "lower bound for shuffling, Chua": "lower_chua_pair",
              "lower bound, the replace-one pair": "lower_replace_one", "A_1 analysis": "upper_A1"}
    for start, column in quoted.items():
        assert _value(start) == round(float(row[column]), _decimals(start)), (start, row[column])
    assert f"The truth lies between the lower bound and {row.upper_A1:.2f}" in _section()


def test_dirac_pair_value_is_the_librarys(setting):
    value = shuffle_lower_epsilon(setting["sigma"], rounds_per_epoch=setting["rounds"], epochs=setting["E"],
                                  delta=setting["delta"], pair=DIRAC_PAIR)  # fmt: skip
    start = "lower bound, the Dirac canary pair"
    assert _value(start) == round(value, _decimals(start))


def test_tight_audit_ratio_quoted_is_the_committed_one():
    m = re.search(r"reaches ~(\d\.\d+) of\s+the accountant's ε with ([\d,]+) runs", PAGE)
    assert m, "the tight-audit sentence quotes a ratio and a number of runs"
    row = pd.read_csv(TIGHT).set_index("label").loc["gdp_all"]
    assert int(m.group(2).replace(",", "")) == int(row.threat_runs)
    assert round(float(row.ratio), len(m.group(1).split(".")[1])) == float(m.group(1))
