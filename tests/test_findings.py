"""Issue 41: findings a reader can trust -- "erratum" only for a proven mistake in the paper, each paper's explained
rows grouped under a few findings that match the committed claims, short ERRATA.md files, not-run reasons in a fixed
vocabulary and a verdict line per paper that never hides a ``differs`` row."""

from __future__ import annotations

import dataclasses
import re

import pytest

from dpcore.claims import (
    EXPLAINED,
    FINDING_CHARS,
    NOT_RUN_REASONS,
    TRAINING_NOTEBOOKS,
    ClaimSpec,
    Erratum,
    Finding,
    NotebookClaims,
    NotReproduced,
    explanation_problems,
    finding_problems,
    not_run_reason,
    read_claims_csv,
    verdict_line,
)
from dpcore.papers import all_specs, findings, gpu_keys, notebook_claims
from dpcore.paths import figures_dir, repo_root
from dpcore.runner import claim_problems, committed_summaries

PAPERS = sorted({s.paper for s in all_specs()})


def _rows(profile_dir: str = "") -> list[dict]:
    return read_claims_csv(figures_dir() / profile_dir / "claims.csv")


def _both() -> list[dict]:
    return _rows() + _rows("paper")


def _spec(key: str, explanation, *, scale: str = "any") -> ClaimSpec:
    return ClaimSpec("002", key, "Table I", "accuracy (%)", 58.5, "printed", "Table I, row 1", atol=0.5,
                     explanation=explanation, scale=scale)  # fmt: skip


# ------------------------------------------------------------------ (1) no erratum whose evidence is a training run
def test_no_training_measured_claim_carries_an_erratum_without_by():
    assert explanation_problems(all_specs(), notebook_claims()) == []


def test_a_training_claim_with_a_plain_erratum_is_reported():
    plain = Erratum(40.1, "our five seeds' median")
    trained = _spec("t.trained", plain)
    notebooks = [NotebookClaims.of(TRAINING_NOTEBOOKS[0], "training", [trained])]
    (problem,) = explanation_problems([trained], notebooks)
    assert problem.startswith("002/t.trained: an erratum on a training-measured claim") and "NotReproduced" in problem
    full = _spec("t.full", plain, scale="full")  # full scale: trained, whichever notebook checks it
    assert len(explanation_problems([full], [])) == 1
    # the same miss as NotReproduced, an erratum that names (by) a function that proves it, or a deterministic
    # notebook's erratum are fine; a 'by' that does not resolve is not
    assert explanation_problems([_spec("t.trained", NotReproduced(40.1, "ours"))], notebooks) == []
    proven = _spec("t.trained", Erratum(40.1, "composed", by="dpcore.claims:compute_status"))
    assert explanation_problems([proven], notebooks) == []
    deterministic = [NotebookClaims.of("002_modelmix/modelmix_accountant", "t", [trained])]
    assert explanation_problems([trained], deterministic) == []
    broken = _spec("t.trained", Erratum(40.1, "composed", by="dpcore.claims:no_such_function"))
    (problem,) = explanation_problems([broken], notebooks)
    assert "does not resolve" in problem


# ------------------------------------------------------------------ (2) the findings match the committed claims
@pytest.mark.parametrize("profile_dir", ["", "paper"])
def test_findings_match_the_committed_claims(profile_dir):
    rows = _rows(profile_dir)
    assert rows and finding_problems(findings(), all_specs(), rows) == []


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_committed_rows_follow_their_specs(profile):
    """Paper value, source and status of every committed row follow from the current specification (a claim moved
    to ``source = audit`` without re-deriving its rows is caught at both profiles, not only by make test's quick
    check)."""
    rows = _rows("paper" if profile == "paper" else "")
    assert claim_problems(rows, all_specs(), profile=profile) == []


def test_a_mislabelled_or_missing_finding_is_reported():
    real = list(findings())
    slips = next(f for f in real if f.paper == "002" and f.key == "cor41_as_printed")
    assert slips.kind == "erratum"
    wrong = [dataclasses.replace(f, kind="inconclusive") if f is slips else f for f in real]
    problems = finding_problems(wrong, all_specs(), _both())
    assert any("erratum claim under the inconclusive finding cor41_as_printed" in p for p in problems), problems
    dropped = finding_problems([f for f in real if f is not slips], all_specs())
    assert any(p.startswith("002/cor41.as_printed.fig3c.p25: a erratum claim must be covered") for p in dropped)
    stray = Finding("002", "stray", "erratum", "Covers nothing.", "nothing", False, ("no.such.*",), "none")
    assert "finding 002/stray covers no claim (keys ('no.such.*',))" in finding_problems([*real, stray], all_specs())
    twice = finding_problems([*real, slips], all_specs())
    assert "finding 002/cor41_as_printed is defined twice" in twice
    # a committed row of an erratum finding that no longer has the finding's status is stale
    rows = [dict(r, status="reproduced") if r["key"] == "cor41.as_printed.fig3c.p25" else r for r in _rows()]
    assert any(p.startswith("002/cor41.as_printed.fig3c.p25: status reproduced under the erratum finding")
               for p in finding_problems(real, all_specs(), rows))  # fmt: skip


# ------------------------------------------------------------------ (3) findings are short, and every paper has them
def test_every_finding_is_one_line_within_its_limits():
    assert findings()
    for f in findings():
        assert "\n" not in f.text and 0 < len(f.text) <= FINDING_CHARS, (f.paper, f.key)
        assert "\n" not in f.short and 0 < len(f.short) <= 100, (f.paper, f.key)
        assert "\n" not in f.evidence and len(f.evidence) <= FINDING_CHARS, (f.paper, f.key)
    with pytest.raises(ValueError, match="text must be one line"):
        Finding("002", "long", "erratum", "x" * (FINDING_CHARS + 1), "short", False, ("k",), "e")
    with pytest.raises(ValueError, match="short must be one line"):
        Finding("002", "two", "erratum", "text", "one\ntwo", False, ("k",), "e")
    with pytest.raises(ValueError, match="kind"):
        Finding("002", "kind", "differs", "text", "short", False, ("k",), "e")


def test_every_paper_with_explained_claims_has_findings_of_those_kinds():
    explained: dict[str, set[str]] = {}
    for s in all_specs():
        if s.explanation is not None:
            explained.setdefault(s.paper, set()).add(s.explanation.status)
    assert set(explained) >= {"000", "001", "002", "003", "004"}
    for paper, kinds in explained.items():
        have = {f.kind for f in findings() if f.paper == paper and f.kind in EXPLAINED}
        assert kinds <= have, (paper, kinds - have)


def test_the_files_a_finding_cites_exist():
    """A finding's evidence names committed result folders and files (``results/paper/<exp>/<hash>.json`` or
    ``results/paper/<exp>/: <hash>.json, ...``) and figures: a typo or an uncommitted file fails here."""
    cited = 0
    for f in findings():
        for path in re.findall(r"\b((?:results|figures)/[\w./-]*)", f.evidence):
            cited += 1
            assert (repo_root() / path.rstrip("/.")).exists(), (f.paper, f.key, path)
            if path.endswith("/"):  # "<folder>/: a.json, b.json"
                tail = f.evidence.split(path, 1)[1]
                names = re.match(r":\s*((?:[\w-]+\.json(?:,\s*)?)+)", tail)
                for name in re.findall(r"[\w-]+\.json", names.group(1)) if names else []:
                    cited += 1
                    assert (repo_root() / path / name).is_file(), (f.paper, f.key, path + name)
    assert cited >= 8


# ------------------------------------------------------------------ (4) ERRATA.md stays readable
@pytest.mark.parametrize("profile_dir", ["", "paper"])
def test_committed_errata_are_short(profile_dir):
    text = (figures_dir() / profile_dir / "ERRATA.md").read_text(encoding="utf-8")
    long = [(i + 1, len(line)) for i, line in enumerate(text.splitlines()) if len(line) > 300]
    assert not long, f"lines over 300 characters (line, length): {long[:5]}"
    # a tenth of the former 96 KB (issue 41: 9.6 KB), plus the three findings that decide paper 003's MNIST column
    # (issue 44: BC vs IC at every |S_b|, Table 3's entries, the non-private baseline; about 1.2 KB)
    # (issue 51: plus the positive controls' finding, about 0.5 KB)
    assert len(text.encode()) < 11_600
    assert text.startswith("# Findings") and "differs-explained" not in text


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_committed_scorecard_and_errata_are_what_the_committed_claims_and_findings_give(profile):
    """SCORECARD.md and ERRATA.md regenerated from the committed claims.csv and the current findings and
    specifications equal the committed files: a finding's text edited without regenerating fails here
    (``python -m dpcore.runner --errata --profile <profile>`` rewrites both)."""
    folder = figures_dir() / ("paper" if profile == "paper" else "")
    for name, text in committed_summaries(figures_dir(), profile).items():
        assert (folder / name).read_text(encoding="utf-8") == text, (
            f"{folder / name} is stale: python -m dpcore.runner --errata --profile {profile}"
        )


def test_a_finding_edited_without_regenerating_is_noticed(monkeypatch):
    from dpcore.runner import sources

    real = list(findings())
    edited = [dataclasses.replace(f, text=f.text + " Edited.") if f.kind == "erratum" else f for f in real]
    monkeypatch.setattr(sources, "findings", lambda: edited)
    fresh = committed_summaries(figures_dir(), "quick")
    assert fresh["SCORECARD.md"] != (figures_dir() / "SCORECARD.md").read_text(encoding="utf-8")
    shorter = [dataclasses.replace(f, short=f.short + " (edited)") if f.kind == "erratum" else f for f in real]
    monkeypatch.setattr(sources, "findings", lambda: shorter)
    assert committed_summaries(figures_dir(), "quick")["ERRATA.md"] != (figures_dir() / "ERRATA.md").read_text(
        encoding="utf-8")


# ------------------------------------------------------------------ (5) not-run reasons in a fixed vocabulary
@pytest.mark.parametrize("profile_dir", ["", "paper"])
def test_every_committed_not_run_row_has_a_reason_of_the_vocabulary(profile_dir):
    rows = [r for r in _rows(profile_dir) if r["status"] == "not-run"]
    assert rows
    reasons = {not_run_reason(r, gpu_keys().get(r["paper"], ())) for r in rows}
    assert reasons <= set(NOT_RUN_REASONS)
    if profile_dir == "paper":  # the paper profile says why: GPU grids and data we do not have among them
        assert {"needs a GPU", "needs a data set we do not have"} <= reasons
        assert "reduced at this profile" not in reasons


def test_not_run_reason_refuses_other_rows_and_picks_by_note_profile_and_key():
    row = {"paper": "002", "key": "table2.svhn.eps1", "status": "not-run", "profile": "paper", "note": ""}
    assert not_run_reason(row, ("table2.*",)) == "needs a GPU"
    assert not_run_reason(row) == "needs CPU time not yet spent"
    assert not_run_reason(dict(row, profile="quick"), ("table2.*",)) == "reduced at this profile"
    svhn = dict(row, note="needs SVHN, download-only")
    assert not_run_reason(svhn, ("table2.*",)) == "needs a data set we do not have"
    for status in ("reproduced", "erratum", "differs", ""):
        with pytest.raises(ValueError, match="not-run row"):
            not_run_reason(dict(row, status=status))
    with pytest.raises(ValueError, match="not-run row"):
        not_run_reason(next(r for r in _rows() if r["status"] != "not-run"))


# ------------------------------------------------------------------ (6) the verdict line per paper
def test_every_paper_has_a_verdict_line_from_its_findings():
    rows = _both()
    for paper in PAPERS:
        line = verdict_line(paper, findings(), rows)
        assert line and line != "no finding yet" and "\n" not in line, paper
        shorts = [f.short for f in findings() if f.paper == paper]
        assert all(part in shorts for part in line.split("; ")), (paper, line)  # nothing but its findings' clauses


def test_a_differs_row_is_never_hidden_by_the_verdict():
    rows = _both()
    for paper in PAPERS:
        mine = [r for r in rows if r["paper"] == paper]
        assert "differ" not in verdict_line(paper, findings(), rows)  # none committed
        one = [*rows, dict(mine[0], key="t.new", status="differs")]
        assert verdict_line(paper, findings(), one).endswith("; 1 row differs, not yet investigated"), paper
        two = [*one, dict(mine[0], key="t.newer", status="differs")]
        assert verdict_line(paper, findings(), two).endswith("; 2 rows differ, not yet investigated"), paper
    alone = [{"paper": "004", "key": "x", "status": "differs"}]
    assert verdict_line("004", [], alone) == "1 row differs, not yet investigated"
    assert verdict_line("004", [], []) == "no finding yet"
