"""Claims registry: specifications are validated, statuses computed (never typed), errata are data."""

import csv
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpcore.claims import (
    AUDIT_VERDICT,
    COLUMNS,
    REASON_CHARS,
    STATUSES,
    ClaimsLog,
    ClaimSpec,
    Erratum,
    Explanation,
    Finding,
    Inconclusive,
    Interval,
    NotebookClaims,
    NotReproduced,
    collect,
    compute_status,
    finding_problems,
    format_value,
    parse_value,
    scorecard_markdown,
    short_reason,
    specs_by_key,
    unchecked,
    values_match,
    verdicts,
)
from dpcore.plots import VERDICT_MARKS


def spec(value=1.26, *, key="k", rtol=0.0, atol=0.0, explanation=None, scale="any", source="printed", note=""):
    return ClaimSpec(
        "000", key, "Table 3", "epsilon", value, source, "Table 3, row 1, p. 12",
        rtol=rtol, atol=atol, explanation=explanation, scale=scale, note=note,
    )  # fmt: skip


# --- the edge cases found when probing the old registry (issue 11), each a separate test ----------
def test_inf_paper_value_is_not_reproduced_by_a_finite_value():
    # old code: |1.0 - inf| <= atol + rtol * inf  ->  inf <= inf  ->  "reproduced"
    assert compute_status(spec(math.inf, rtol=1e-3), 1.0) == "differs"
    assert compute_status(spec(math.inf, rtol=1e-3), math.inf) == "reproduced"
    assert compute_status(spec(math.inf), -math.inf) == "differs"
    assert compute_status(spec(1.0, rtol=1e-3), math.inf) == "differs"


@pytest.mark.parametrize("nan", [np.float32("nan"), np.float16("nan"), np.float64("nan"), math.nan])
def test_nan_of_any_float_type_is_not_run(nan):
    # old code: isinstance(np.float32(nan), float) is False  ->  compared  ->  "differs"
    assert compute_status(spec(), nan) == "not-run"
    claim = ClaimsLog().check(spec(), nan)
    assert claim.status == "not-run" and claim.our_value is None


def test_erratum_is_a_dataclass_not_a_flag():
    # old code: erratum=False was accepted and turned a miss into "differs-explained" with note "False"
    with pytest.raises(ValueError, match="explanation must be an Erratum, NotReproduced, Inconclusive or None"):
        spec(1.5, explanation=False)
    with pytest.raises(ValueError, match="explanation must be an Erratum"):
        spec(1.5, explanation="s = 1267 gives 1.2498")


def test_explanation_base_is_refused_and_each_kind_gives_its_status():
    with pytest.raises(ValueError, match="not the Explanation base class"):
        Explanation(1.25, "evidence")
    kinds = {Erratum: "erratum", NotReproduced: "not-reproduced", Inconclusive: "inconclusive"}
    for kind, status in kinds.items():
        why = kind(1.25, "ours, three seeds", rtol=1e-3)
        assert why.status == status
        explained = spec(1.5, rtol=1e-3, explanation=why)
        assert compute_status(explained, 1.2501) == status and compute_status(explained, 1.4) == "differs"
        assert compute_status(explained, 1.5) == "reproduced"
        row = ClaimsLog().check(explained, 1.2501)
        assert row.status == status and row.note.startswith(f"{status}: ours matches the expected 1.25 (rel 0.001); ")
        miss = ClaimsLog().check(explained, 1.4)
        assert miss.note.startswith(f"{status}: ours does NOT match the expected 1.25")
    assert NotReproduced(0.7428, "ours", readings=("as printed: 74.28 %",), closest="as printed").readings
    with pytest.raises(ValueError, match="readings"):
        NotReproduced(0.7428, "ours", readings=["as printed"])
    with pytest.raises(ValueError, match="readings"):
        NotReproduced(0.7428, "ours", readings=("",))
    with pytest.raises(ValueError, match="closest"):
        NotReproduced(0.7428, "ours", closest=None)
    with pytest.raises(ValueError, match="floor"):
        Inconclusive(True, "ours", floor=0.2)
    with pytest.raises(ValueError, match="summary"):
        Inconclusive(True, "ours", summary="x" * (REASON_CHARS + 1))
    assert Erratum(1.0, "e", by="dpcore.claims:compute_status").by
    with pytest.raises(ValueError, match="module:function"):
        Erratum(1.0, "e", by="compute_status")


def test_inconclusive_from_the_data_overrides_the_value():
    s = spec(1.5, rtol=1e-3)
    row = ClaimsLog().check(s, 1.5, inconclusive="every run ends below 20 %, twice chance")
    assert row.status == "inconclusive" and row.note.startswith("inconclusive: every run ends below 20 %")
    assert compute_status(s, 1.5, inconclusive=True) == "inconclusive"
    assert compute_status(s, None, inconclusive=True) == "not-run"  # nothing ran: nothing to decide
    assert compute_status(spec(1.5, scale="full"), 1.5, reduced=True, inconclusive=True) == "not-run"
    assert ClaimsLog().check(s, 1.5, inconclusive="").status == "reproduced"
    with pytest.raises(ValueError, match="inconclusive"):
        ClaimsLog().check(s, 1.5, inconclusive=True)


def test_string_value_refuses_tolerance():
    # old code: a string paper value silently ignored atol
    with pytest.raises(ValueError, match="str/bool"):
        spec("12", atol=1)
    with pytest.raises(ValueError, match="str/bool"):
        spec(True, rtol=0.1)
    with pytest.raises(ValueError, match="str/bool"):
        Erratum("x", "evidence", atol=1)
    assert compute_status(spec("12"), "12") == "reproduced"
    assert compute_status(spec("12"), "12.0") == "differs"
    assert compute_status(spec("12"), 12) == "differs"


def test_bool_only_equals_bool():
    # old code: abs(float(True) - 1) == 0  ->  "reproduced"
    assert compute_status(spec(1), True) == "differs"
    assert compute_status(spec(True), 1) == "differs"
    assert compute_status(spec(True), np.bool_(True)) == "reproduced"
    assert compute_status(spec(False), False) == "reproduced"
    assert compute_status(spec(False), True) == "differs"


def test_erratum_explains_only_its_expected_value():
    # old code: any erratum string made every miss "differs-explained"
    wrong = spec(1.5, rtol=1e-3, explanation=Erratum(1.2498, "Thm 3.1 with s = 1267 gives 1.2498", rtol=1e-3))
    assert compute_status(wrong, 1.2497) == "erratum"
    assert compute_status(wrong, 1.4) == "differs"
    assert compute_status(wrong, 1.5004) == "reproduced"  # the printed value wins when we match it
    miss = ClaimsLog().check(wrong, 1.4)
    assert miss.status == "differs" and "does NOT match the expected 1.2498" in miss.note
    hit = ClaimsLog().check(wrong, 1.2497)
    assert "matches the expected 1.2498" in hit.note and "Thm 3.1" in hit.note


def test_erratum_uses_its_own_tolerance():
    loose = spec(1.5, rtol=0.1, explanation=Erratum(1.0, "evidence", atol=1e-6))
    assert compute_status(loose, 1.05) == "differs"  # within the spec's rtol of 1.0 but not the erratum's
    assert compute_status(loose, 1.0000005) == "erratum"


# --- the remaining rules ---------------------------------------------------------------------------
def test_numbers_within_tolerance():
    assert compute_status(spec(1.26, atol=0.005), 1.2586) == "reproduced"
    assert compute_status(spec(1.26, atol=0.005), 1.30) == "differs"
    assert compute_status(spec(100.0, rtol=1e-3), 100.09) == "reproduced"
    assert compute_status(spec(100.0, rtol=1e-3), 100.2) == "differs"
    assert compute_status(spec(26), 26) == "reproduced"
    assert compute_status(spec(26), np.int64(26)) == "reproduced"
    assert compute_status(spec(26), 26.0) == "reproduced"
    assert compute_status(spec(26), None) == "not-run"


def test_full_scale_claims_are_not_run_when_reduced():
    full = spec(0.97, atol=0.01, scale="full")
    assert compute_status(full, 0.5, reduced=True) == "not-run"
    assert compute_status(full, 0.97, reduced=False) == "reproduced"
    assert compute_status(spec(0.97, atol=0.01), 0.5, reduced=True) == "differs"  # scale "any" is compared
    claim = ClaimsLog().check(full, 0.5, reduced=True, note="2 epochs")
    assert claim.status == "not-run" and claim.our_value is None
    assert "at reduced scale ours = 0.5" in claim.note and "2 epochs" in claim.note


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"paper": "005"}, "paper"),
        ({"key": ""}, "key"),
        ({"key": "a b"}, "key"),
        ({"key": "a,b"}, "key"),
        ({"artifact": " "}, "artifact"),
        ({"quantity": ""}, "quantity"),
        ({"value": None}, "value"),
        ({"value": math.nan}, "value"),
        ({"value": np.float32("nan")}, "value"),
        ({"value": [1.0]}, "value"),
        ({"source": "computed"}, "source"),
        ({"location": ""}, "location"),
        ({"rtol": -1e-3}, "rtol"),
        ({"atol": math.inf}, "atol"),
        ({"rtol": True}, "rtol"),
        ({"scale": "half"}, "scale"),
        ({"note": None}, "note"),
        ({"explanation": Erratum(1.26, "same value")}, "ours would reproduce it"),
        ({"explanation": NotReproduced(1.26, "same value")}, "ours would reproduce it"),
        ({"explanation": "s = 1267"}, "explanation must be"),
    ],
)
def test_spec_validation(kwargs, match):
    fields = dict(
        paper="000", key="k", artifact="Table 3", quantity="eps", value=1.26, source="printed", location="Table 3"
    )
    fields.update(kwargs)
    with pytest.raises(ValueError, match=match):
        ClaimSpec(**fields)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((None, "e"), {}, "expected"),
        ((np.float32("nan"), "e"), {}, "expected"),
        ((1.0, ""), {}, "evidence"),
        ((1.0, None), {}, "evidence"),
        ((1.0, "e"), {"rtol": -1}, "rtol"),
        ((1.0, "e"), {"atol": math.nan}, "atol"),
        ((True, "e"), {"rtol": 0.1}, "str/bool"),
    ],
)
def test_erratum_validation(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        Erratum(*args, **kwargs)


def test_compute_status_refuses_non_scalars():
    with pytest.raises(ValueError, match="our_value"):
        compute_status(spec(), [1.26])
    with pytest.raises(ValueError, match="spec"):
        compute_status("not a spec", 1.26)


def test_specs_by_key_refuses_duplicates():
    table = specs_by_key([spec(key="a"), spec(key="b")])
    assert list(table) == ["a", "b"]
    with pytest.raises(ValueError, match="duplicate"):
        specs_by_key([spec(key="a"), spec(key="a")])


def test_check_validates_profile_and_replaces_a_rechecked_key():
    log = ClaimsLog()
    with pytest.raises(ValueError, match="profile"):
        log.check(spec(), 1.26, profile="fast")
    log.check(spec(), 1.0)
    log.check(spec(), 1.26, profile="paper")
    assert [(c.status, c.profile) for c in log.claims] == [("reproduced", "paper")]


def test_statuses_are_the_vocabulary():
    assert STATUSES == ("reproduced", "erratum", "not-reproduced", "inconclusive", "differs", "not-run",
                        "fails-audit", "passes-audit", "authors-code")  # audit rows in their own words (issue 50)


@given(
    value=st.floats(allow_nan=False, allow_infinity=False, width=64),
    ours=st.floats(allow_nan=False, allow_infinity=True),
    rtol=st.floats(0, 1),
    atol=st.floats(0, 10),
)
def test_status_is_reproduced_iff_within_tolerance(value, ours, rtol, atol):
    expected = math.isfinite(ours) and abs(ours - value) <= atol + rtol * abs(value)
    assert (compute_status(spec(value, rtol=rtol, atol=atol), ours) == "reproduced") == expected


@given(st.one_of(st.floats(allow_nan=False), st.integers(), st.booleans(), st.text(min_size=1)))
def test_format_parse_round_trip(value):
    text = format_value(value)
    back = parse_value(text, like=value)
    assert values_match(value, back) or (isinstance(value, str) and back == value)


# --- CSV and scorecard ------------------------------------------------------------------------------
def test_csv_round_trip_and_scorecard(tmp_path):
    log = ClaimsLog()
    log.check(spec(1.26, key="a", atol=0.005, source="reference"), 1.2586)
    log.check(spec(17.9, key="b", rtol=0.01), 20.0)
    log.check(spec(2.0211e-3, key="c"), None, note="paper profile only")
    path = log.write(tmp_path / "a" / "nb.claims.csv")
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()
    rows = collect(tmp_path)
    with open(path) as handle:
        assert tuple(next(csv.reader(handle))) == COLUMNS
    assert [r["status"] for r in rows] == ["reproduced", "differs", "not-run"]
    assert [r["profile"] for r in rows] == ["quick"] * 3
    assert rows[0]["our_value"] == "1.2586" and rows[0]["source"] == "reference" and rows[0]["key"] == "a"
    card = scorecard_markdown(rows)
    assert "| 000 | 1 | 1 | 1 | 0/0 | 3 |"  # statuses that occur in card
    assert "\n1 of 3 reproduced, **1 differ unexplained**, 1 not run here.\n" in card
    assert "- **Paper 000**: 1 row differs, not yet investigated." in card
    assert "| b | 17.9 | 20 | **differs** | matches neither the paper (rel 0.01) |" in card
    assert "- reduced at this profile (other claims): 1 — `c`" in card


def test_scorecard_refuses_unknown_status():
    with pytest.raises(ValueError, match="status"):
        scorecard_markdown([{"paper": "000", "key": "k", "status": "fine"}])


def test_collect_rejects_wrong_columns_and_skips_excluded(tmp_path):
    ClaimsLog().write(tmp_path / "paper" / "x.claims.csv")
    (tmp_path / "paper" / "y.claims.csv").write_text("paper,value\n000,1\n")
    assert collect(tmp_path, exclude=[tmp_path / "paper"]) == []
    with pytest.raises(ValueError, match="columns"):
        collect(tmp_path)


def _umask():
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --- dpcore.papers.all_specs ------------------------------------------------------------------------
CLAIMS_PY = """
from dpcore.claims import ClaimSpec, Erratum
SPECS = (
    ClaimSpec("004", "{key}", "Fig. 2", "delta", 2.0e-3, "derived", "Theorem 2 at the Fig. 2 parameters", rtol=1e-3),
)
"""


@pytest.fixture
def fake_papers(tmp_path, monkeypatch):
    import sys

    import dpcore.papers as papers

    root = tmp_path / "fakepapers"
    root.mkdir()
    monkeypatch.setattr(papers, "__path__", [str(root)])
    before = set(sys.modules)
    yield root
    for name in set(sys.modules) - before:
        if name.startswith("dpcore.papers."):
            del sys.modules[name]


def _package(root, name, claims=None):
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""fake paper package"""\n')
    if claims is not None:
        (pkg / "claims.py").write_text(claims)


def test_all_specs_discovers_claims_modules(fake_papers):
    from dpcore.papers import all_specs, claims_modules

    _package(fake_papers, "zz_a", CLAIMS_PY.format(key="a.one"))
    _package(fake_papers, "zz_b")  # no claims.py: skipped
    _package(fake_papers, "zz_c", CLAIMS_PY.format(key="c.one"))
    assert claims_modules() == ["dpcore.papers.zz_a.claims", "dpcore.papers.zz_c.claims"]
    assert [s.key for s in all_specs()] == ["a.one", "c.one"]


def test_all_specs_requires_specs_and_unique_keys(fake_papers):
    from dpcore.papers import all_specs

    _package(fake_papers, "zz_a", CLAIMS_PY.format(key="same"))
    _package(fake_papers, "zz_b", CLAIMS_PY.format(key="same"))
    with pytest.raises(ValueError, match="twice"):
        all_specs()


def test_all_specs_refuses_claims_without_specs(fake_papers):
    from dpcore.papers import all_specs

    _package(fake_papers, "zz_c", "X = 1\n")
    with pytest.raises(ValueError, match="SPECS"):
        all_specs()


def test_real_paper_packages_have_unique_keys():
    from dpcore.papers import all_specs

    specs = all_specs()
    assert len({(s.paper, s.key) for s in specs}) == len(specs)


def _literal_constants(path):
    """Every literal value in a module (numbers, negated numbers, strings, bools, math.inf)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and node.value is not None:
            found.add((type(node.value), node.value))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            if isinstance(node.operand.value, int | float) and not isinstance(node.operand.value, bool):
                found.add((type(node.operand.value), -node.operand.value))
        elif isinstance(node, ast.Attribute) and node.attr == "inf":
            found.add((float, math.inf))
    return found


def computed_printed_values():
    """``printed`` specs whose value is not written as a literal in their claims.py (i.e. computed)."""
    import importlib

    from dpcore.papers import claims_modules

    bad = []
    for name in claims_modules():
        module = importlib.import_module(name)
        constants = _literal_constants(Path(module.__file__))

        def literal(value, constants=constants):
            if isinstance(value, Interval):  # a printed range: both ends are literals
                return literal(value.low) and literal(value.high)
            return (type(value), value) in constants or (
                isinstance(value, int) and not isinstance(value, bool) and (float, float(value)) in constants
            )

        for s in module.SPECS:
            value = s.value
            if s.source == "printed" and not literal(value):
                bad.append(f"{s.paper}/{s.key}: {value!r}")
    return bad


def test_printed_values_are_literals_not_computed():
    assert computed_printed_values() == []


def test_literal_check_catches_a_computed_printed_value(fake_papers):
    _package(fake_papers, "zz_a", CLAIMS_PY.format(key="a.one").replace('"derived"', '"printed"'))
    assert computed_printed_values() == []
    computed = CLAIMS_PY.format(key="b.one").replace('"derived"', '"printed"').replace("2.0e-3", "2.0e-3 * 1.5")
    _package(fake_papers, "zz_b", computed)
    assert computed_printed_values() == ["004/b.one: 0.003"]


# --- printed ranges, consistency checks, notebooks, the scorecard (issue 23) --------------------------------------
def test_interval_is_compared_as_a_range():
    naive = spec(Interval(0.3, 0.4))
    assert [compute_status(naive, v) for v in (0.3, 0.35, 0.4)] == ["reproduced"] * 3
    assert [compute_status(naive, v) for v in (0.2999, 0.41, math.inf, True, "0.35")] == ["differs"] * 5
    widened = spec(Interval(18, 22), atol=1)
    assert compute_status(widened, 23) == "reproduced" and compute_status(widened, 23.01) == "differs"
    assert widened.tolerance == "in range, abs 1 at each end" and naive.tolerance == "in range"
    per_silo = spec(Interval(0.1, 0.3), explanation=Erratum(0.012, "ours, per silo", atol=1e-3))
    assert compute_status(per_silo, 0.0121) == "erratum"
    with pytest.raises(ValueError, match="ours would reproduce it"):
        spec(Interval(0.1, 0.3), explanation=Erratum(0.2, "inside the range"))
    with pytest.raises(ValueError, match="our_value"):
        values_match(1.0, Interval(0.0, 2.0))


@pytest.mark.parametrize("bounds", [(0.4, 0.3), (0.3, 0.3), (math.nan, 1.0), (0.0, math.inf), ("0", 1), (True, 2)])
def test_interval_validation(bounds):
    with pytest.raises(ValueError, match="interval"):
        Interval(*bounds)


def test_interval_round_trips_through_the_csv(tmp_path):
    log = ClaimsLog()
    log.check(spec(Interval(18, 22), key="r"), 20.5)
    log.write(tmp_path / "x.claims.csv")
    (row,) = collect(tmp_path)
    assert row["paper_value"] == "[18, 22]" and row["tolerance"] == "in range" and row["status"] == "reproduced"
    assert parse_value(row["paper_value"], like=Interval(18, 22)) == Interval(18, 22)
    assert parse_value("20.5", like=Interval(18, 22)) == 20.5
    assert Interval(0.3, 0.4) == Interval(0.3, 0.4) and len({Interval(1, 2), Interval(1, 2)}) == 1


def test_consistency_rows_are_counted_apart_in_the_scorecard():
    log = ClaimsLog()
    log.check(spec(200.0, key="target", source="consistency", atol=0.05), 200.0)
    log.check(spec(1.0, key="printed"), 1.0)
    card = scorecard_markdown(log.to_rows())
    assert "1 of 1 reproduced, 1/1 consistency checks hold" in card
    assert "| 000 | 1 | 1/1 | 2 |" in card


def test_audit_rows_are_counted_apart_and_read_as_the_authors_code():
    """Issue 41: a value reached only under the authors' code (an ``audit`` row) is never counted as reproduced."""
    log = ClaimsLog()
    log.check(spec(True, key="authors_mode_reaches_printed", source="audit"), True)
    log.check(spec(True, key="authors_mode_other", source="audit"), None, note="needs a result")
    log.check(spec(1.0, key="printed"), 1.0)
    card = scorecard_markdown(log.to_rows())
    # issue 50: audit rows have statuses of their own words, counted by the one count, never reproduced
    assert "1 of 2 reproduced, 1 not run here, audit rows: 1 reached only under the authors' code" in card
    assert "| 000 | 1 | 1 | 1 | 0/0 | 3 |" in card
    assert verdicts(log.claims) == {"authors_mode_reaches_printed": AUDIT_VERDICT, "authors_mode_other": "not run",
                                    "printed": "reproduced"}  # fmt: skip
    assert AUDIT_VERDICT in VERDICT_MARKS  # figures can mark it
    finding = Finding("000", "authors", "audit", "The authors' code reaches it at ε 1e8.", "authors' code only",
                      True, ("authors_mode_*",), "runs")  # fmt: skip
    card = scorecard_markdown(log.to_rows(), findings=[finding])
    # an audit finding without a bound at a stated confidence is an estimate: it cannot change a conclusion
    assert "*audit of the authors' code* (an estimate (no confidence bound); 1 row)" in card
    assert "**audit of the authors' code**: authors' code only (1 rows in claims.csv)" in card  # notes name the runs
    specs = [spec(True, key="authors_mode_reaches_printed", source="audit"), spec(1.0, key="printed")]
    assert finding_problems([finding], specs, log.to_rows()) == []
    as_reproduced = dataclasses.replace(finding, kind="reproduced")
    assert any("an audit claim must be covered by exactly one finding, of kind audit" in p
               for p in finding_problems([as_reproduced], specs))  # fmt: skip
    too_wide = dataclasses.replace(finding, keys=("*",))
    assert "000/printed: a printed claim under the audit finding(s) ['authors']" in finding_problems([too_wide], specs)


def test_notebook_claims_validation_and_of():
    nb = NotebookClaims.of("001_isrl_dp/mnist_logistic", "Fig. 4", [spec(key="a"), spec(key="b")])
    assert nb.paper == "000" and nb.keys == ("a", "b")
    with pytest.raises(ValueError, match="notebook"):
        NotebookClaims("000", "mnist_logistic", "Fig. 4", ("a",))
    with pytest.raises(ValueError, match="keys"):
        NotebookClaims("000", "x/y", "Fig. 4", ())
    with pytest.raises(ValueError, match="distinct"):
        NotebookClaims("000", "x/y", "Fig. 4", ("a", "a"))
    with pytest.raises(ValueError, match="one paper"):
        NotebookClaims.of("x/y", "t", [spec(key="a"), ClaimSpec("001", "b", "T", "q", 1.0, "printed", "p. 1")])


def test_unchecked_lists_what_a_notebook_has_not_reported():
    log = ClaimsLog()
    a, b = spec(key="a"), spec(key="b")
    log.check(a, 1.26)
    assert unchecked(log, [a, b]) == [b]
    log.check(b, None, note="ε = 6 not in the quick grid")
    assert unchecked(log, [a, b]) == [] and log.claims[-1].status == "not-run"


def test_short_reason_is_one_line_from_the_erratum_or_the_note():
    evidence = ("Thm 3.1 with s = 1267 gives eps = 1.2498 (see Fig. 2 and eq. (6)); the printed 1.5 needs s = 1500. "
                "More text follows.")  # fmt: skip
    wrong = spec(1.5, rtol=1e-3, explanation=Erratum(1.2498, evidence, rtol=1e-3))
    row = ClaimsLog().check(wrong, 1.2497).__dict__
    assert short_reason(row, wrong) == "Thm 3.1 with s = 1267 gives eps = 1.2498 (see Fig. 2 and eq. (6))"
    reduced = ClaimsLog().check(spec(0.9, scale="full"), 0.8312345, reduced=True).__dict__
    assert short_reason(reduced) == "full-scale claim, run at reduced scale here (ours there: 0.8312)"
    grid = ClaimsLog().check(spec(), None, note="ε = 6 not in the quick grid; more").__dict__
    assert short_reason(grid) == "ε = 6 not in the quick grid"
    long = ClaimsLog().check(spec(), None, note="x" * 500).__dict__
    assert len(short_reason(long)) == REASON_CHARS and short_reason(long).endswith("…")
    miss = ClaimsLog().check(wrong, 1.4).__dict__
    assert short_reason(miss, wrong) == "matches neither the paper (rel 0.001) nor the erratum value 1.2498"
    unreached = spec(1.5, rtol=1e-3, explanation=NotReproduced(0.7428, "ours ends at 74.28 %; more", rtol=1e-3))
    assert short_reason(ClaimsLog().check(unreached, 0.7428).__dict__, unreached) == "ours ends at 74.28 %"
    assert short_reason(ClaimsLog().check(unreached, 0.7428).__dict__) == "ours ends at 74.28 %"  # from the note
    assert short_reason(ClaimsLog().check(unreached, 0.5).__dict__, unreached) == (
        "matches neither the paper (rel 0.001) nor the not-reproduced value 0.7428"
    )


def test_scorecard_of_every_real_claim_stays_short():
    """The worst case: every claim with an explanation matches it, every other not run with a long note.

    The bound grows with the number of claims and the papers' findings: at most 30 bytes per claim (a short row
    per explained claim under its finding, grouped keys for the rest; the full notes live in claims.csv) plus each
    finding's sentence twice (the paper's lead and its section) and its short clause once (the verdict line).
    Before issue 41 (reasons per row, no findings) it was 46 bytes per claim."""
    from dpcore.claims import verdict_line
    from dpcore.papers import all_specs, findings, gpu_keys, notebook_claims, titles

    log = ClaimsLog()
    for s in all_specs():
        if s.explanation is not None:
            log.check(s, s.explanation.expected, note="n" * 400)
        else:
            log.check(s, None, note="full-scale claim; at reduced scale ours = 0.123456789; " + "n" * 400)
    rows = log.to_rows()
    card = scorecard_markdown(rows, specs=all_specs(), notebooks=notebook_claims(), titles=titles(),
                              findings=findings(), gpu_keys=gpu_keys())  # fmt: skip
    text = sum(2 * len(f.text.encode()) + len(f.short.encode()) for f in findings())
    assert len(card.encode()) < 30 * len(all_specs()) + text
    lines = card.splitlines()
    assert max(len(line) for line in lines) <= 300
    assert sum(line.startswith("- **") for line in lines) == len({s.paper for s in all_specs()})
    flat = " ".join(card.split())  # the verdicts and findings are wrapped over Markdown lines
    for paper in {s.paper for s in all_specs()}:  # a verdict line is the paper's findings' clauses, nothing more
        assert f": {verdict_line(paper, findings(), rows)}." in flat, paper
    # here only explained rows ran: every not-run finding and every finding over explained claims is shown
    explained = [s for s in all_specs() if s.explanation is not None]
    shown = [
        f for f in findings() if f.kind == "not-run" or any(s.paper == f.paper and f.covers(s.key) for s in explained)
    ]
    assert shown and all(" ".join(f.text.split()) in flat for f in shown)
    assert any(line.startswith(f"{len(all_specs())} claims checked at the quick profile") for line in lines)
    assert "- **Paper 001** (Lowy & Razaviyayn" in card
    assert "n" * 100 not in card and "0.123456789" not in card  # notes stay in claims.csv


def test_a_not_run_row_does_not_claim_to_miss_its_erratum():
    wrong = spec(1.5, rtol=1e-3, explanation=Erratum(1.2498, "Thm 3.1 with s = 1267 gives eps = 1.2498", rtol=1e-3))
    row = ClaimsLog().check(wrong, None, note="ε = 6 not in the quick grid")
    assert row.status == "not-run" and row.note == "ε = 6 not in the quick grid"


def test_scorecard_writes_a_shared_reason_once_under_its_finding():
    specs = [spec(1.5, key=k, rtol=1e-3, explanation=Erratum(1.25, "s = 1267 gives 1.25", rtol=1e-3)) for k in "ab"]
    log = ClaimsLog()
    for s in specs:
        log.check(s, 1.25)
    # rows under no finding carry their reason
    card = scorecard_markdown(log.to_rows(), specs=specs)
    assert "| a | 1.5 | 1.25 | erratum | s = 1267 gives 1.25 |" in card
    assert "| b | 1.5 | 1.25 | erratum | s = 1267 gives 1.25 |" in card
    # under a finding, its sentence leads the paper and heads the rows (once each), the rows carry none
    found = Finding("000", "wrong_s", "erratum", "Table 3 takes s = 1267 where eq. (6) gives 1500.",
                    "Table 3's s is wrong", False, ("a", "b"), "Thm 3.1")  # fmt: skip
    card = scorecard_markdown(log.to_rows(), specs=specs, findings=[found])
    assert "- **Paper 000**: Table 3's s is wrong." in card
    assert "  - *erratum* (cosmetic; 2 rows): Table 3 takes s = 1267 where eq. (6) gives 1500." in card
    # the paper's section heads the rows with the finding's short phrase (its sentence is in the list above)
    assert "**erratum**: Table 3's s is wrong\n" in card
    assert card.count("Table 3 takes s = 1267") == 1 and "s = 1267 gives 1.25" not in card
    assert "| a | 1.5 | 1.25 | erratum |\n\n… 1 more in claims.csv.\n" in card  # one row per finding shown
    assert "Not under a finding" not in card
