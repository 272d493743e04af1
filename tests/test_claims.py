"""Claims registry: computed statuses, CSV columns, scorecard."""

import csv
import math

import pytest

from dpcore.claims import COLUMNS, ClaimsLog, collect, compute_status, scorecard_markdown


def test_status_is_computed_from_values():
    assert compute_status(1.26, 1.2586, atol=0.005) == "reproduced"
    assert compute_status(1.26, 1.30, atol=0.005) == "differs"
    assert compute_status(1.26, 1.30, atol=0.005, explained=True) == "differs-explained"
    assert compute_status(1.26, None) == "not-run"
    assert compute_status(1.26, math.nan) == "not-run"
    assert compute_status(100.0, 100.09, rtol=1e-3) == "reproduced"
    assert compute_status(100.0, 100.2, rtol=1e-3) == "differs"
    assert compute_status("12", "12") == "reproduced"
    assert compute_status(26, 26) == "reproduced"


def test_reproduced_ignores_erratum():
    log = ClaimsLog()
    claim = log.record("000", "Table 3", "s_max", 26, 26, erratum="irrelevant")
    assert claim.status == "reproduced"


def test_differs_explained_requires_note():
    log = ClaimsLog()
    with pytest.raises(ValueError, match="erratum"):
        log.record("000", "Table 8", "eps", 1.5, 1.25, erratum="  ")
    claim = log.record("000", "Table 8", "eps", 1.5, 1.25, rtol=1e-3, erratum="s=1267 gives 1.2498")
    assert claim.status == "differs-explained" and "1267" in claim.note


def test_bad_paper_id_and_tolerance():
    log = ClaimsLog()
    with pytest.raises(ValueError, match="paper"):
        log.record("005", "Fig. 1", "x", 1.0, 1.0)
    with pytest.raises(ValueError, match="rtol"):
        log.record("000", "Fig. 1", "x", 1.0, 1.0, rtol=-1)


def test_csv_round_trip_and_scorecard(tmp_path):
    log = ClaimsLog()
    log.record("ref", "Abadi", "eps", 1.26, 1.2586, atol=0.005)
    log.record("002", "Fig. 3", "eps", 17.9, 20.0, rtol=0.01)
    log.record("004", "Fig. 2", "delta", 2.0211e-3, None, note="paper profile only")
    log.write(tmp_path / "a" / "nb.claims.csv")
    rows = collect(tmp_path)
    with open(tmp_path / "a" / "nb.claims.csv") as handle:
        assert tuple(next(csv.reader(handle))) == COLUMNS
    assert [r["status"] for r in rows] == ["reproduced", "differs", "not-run"]
    card = scorecard_markdown(rows)
    assert "| 002 | 0 | 0 | 1 | 0 | 1 |" in card
    assert "Fig. 3" in card and "Abadi" not in card.split("Rows not reproduced")[1]


def test_collect_rejects_wrong_columns(tmp_path):
    (tmp_path / "x.claims.csv").write_text("paper,value\n000,1\n")
    with pytest.raises(ValueError, match="columns"):
        collect(tmp_path)
