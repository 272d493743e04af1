"""dpcore.restatus: statuses re-derived from the stored values and the current specifications (issue 41)."""

from __future__ import annotations

import dataclasses

import pytest

from dpcore.claims import ClaimSpec, Erratum, NotReproduced
from dpcore.restatus import SPEC_COLUMNS, restatus_rows


def _specs():
    e = ClaimSpec("000", "t8.eps", "Table 8", "epsilon", 1.5, "printed", "Table 8", rtol=1e-3,
                  explanation=Erratum(1.2498, "s = 1267 gives 1.2498 (Thm 3.1)", rtol=1e-3))
    n = ClaimSpec("000", "acc", "Fig. 3", "accuracy", 93.0, "printed", "Sec. 4.3", atol=2.0, scale="full",
                  explanation=NotReproduced(74.28, "ours ends at 74.28 %", atol=2.0))
    return {(s.paper, s.key): s for s in (e, n)}


def _row(key, ours, status, note=""):
    return {"paper": "000", "key": key, "artifact": "a", "quantity": "q", "source": "printed", "location": "l",
            "paper_value": "", "our_value": ours, "tolerance": "", "status": status, "profile": "paper", "note": note}


def test_old_vocabulary_is_re_derived_by_kind_and_values_never_change():
    rows = [_row("t8.eps", "1.2497", "differs-explained", "erratum: ours matches the expected 1.2498 (rel 0.001); s"),
            _row("acc", "74.3", "differs-explained", "erratum: ours matches the expected 74.28 (abs 2); ours"),
            _row("acc", "", "not-run", "missing runs")]  # fmt: skip
    out, changed = restatus_rows(rows, _specs())
    assert [r["status"] for r in out] == ["erratum", "not-reproduced", "not-run"] and changed == 3
    assert out[1]["note"].startswith("not-reproduced: ours matches the expected ")
    assert [r["our_value"] for r in out] == [r["our_value"] for r in rows]
    assert [r["paper_value"] for r in out] == [r["paper_value"] for r in rows]  # a value is never rewritten


def test_the_columns_copied_from_the_spec_are_refreshed():
    """Issue 41: a claim moved to ``source = audit`` (the authors' code) is counted apart without a rerun."""
    specs = _specs()
    moved = {**specs, ("000", "acc"): dataclasses.replace(specs[("000", "acc")], source="audit", artifact="Fig. 3c")}
    (out,), changed = restatus_rows([_row("acc", "", "not-run", "missing runs")], moved)
    assert changed == 1 and (out["source"], out["artifact"], out["status"]) == ("audit", "Fig. 3c", "not-run")
    assert {c: out[c] for c in SPEC_COLUMNS} == {c: str(getattr(moved[("000", "acc")], c)) for c in SPEC_COLUMNS}
    assert out["note"] == "missing runs" and out["our_value"] == ""


def test_a_value_that_no_longer_matches_becomes_differs_and_an_unknown_claim_is_refused():
    out, _ = restatus_rows([_row("t8.eps", "1.4", "differs-explained")], _specs())
    assert out[0]["status"] == "differs"
    with pytest.raises(ValueError, match="no longer a claim"):
        restatus_rows([_row("gone", "1", "reproduced")], _specs())
