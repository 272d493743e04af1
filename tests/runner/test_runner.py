"""The notebook runner: key/glob selection, progress, failures reported, claims gathered and checked.

The notebooks here are tiny fakes in ``tmp_path``; their claim specifications are defined by
``SPECS_SRC``, executed both in the notebooks and in the tests.
"""

import io
import os

import nbformat
import pytest

from dpcore import runner
from dpcore.claims import COLUMNS, ClaimsLog, ClaimSpec, Erratum, Finding, NotebookClaims, read_claims_csv

SPECS_SRC = """
from dpcore.claims import ClaimSpec, Erratum
SPECS = (
    ClaimSpec("ref", "t.value", "test", "value", 2.0, "reference", "a test publication", rtol=1e-3),
    ClaimSpec("000", "t.wrong", "Table 8", "epsilon of row 3", 1.5, "printed", "Table 8, row 3", rtol=1e-3,
              explanation=Erratum(1.25, "s = 1267 gives 1.25 (Thm 3.1)", rtol=1e-3)),
)
"""


def _specs(src=SPECS_SRC):
    scope = {}
    exec(src, scope)  # noqa: S102 - the test's own literal source
    return scope["SPECS"]


SPECS = _specs()
# which fake notebook checks which claim (as dpcore.papers.notebook_claims() says for the real ones)
NOTEBOOKS = [
    NotebookClaims.of("aa/good", "published values", SPECS[:1]),
    NotebookClaims.of("aa/good", "a table", SPECS[1:]),
]
# the fake paper's root cause (as the FINDINGS of a paper's claims.py): the runner checks and prints them
FINDINGS = [
    Finding("000", "row3_s", "erratum", "Table 8's row 3 takes s = 1500 where Thm 3.1 gives 1267 (ε = 1.25).",
            "Table 8's row 3 is wrong", True, ("t.wrong",), "Thm 3.1 with s = 1267"),
]  # fmt: skip


@pytest.fixture(autouse=True)
def fake_findings(monkeypatch):
    """The runner's checks, scorecard and ERRATA.md take the findings of :mod:`dpcore.papers` (through
    ``dpcore.runner.sources``); these tests run fake papers, so their findings are the fake ones."""
    monkeypatch.setattr(runner, "_findings", lambda: list(FINDINGS))
    monkeypatch.setattr(runner.sources, "findings", lambda: list(FINDINGS))
    monkeypatch.setattr(runner.sources, "gpu_keys", lambda: {})


def _notebook(path, body):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell(
        'profile = "quick"\nfigures_dir = None\nreduced = False\nvalue = 1.0\nwrong = 1.25\nsleep = 0.0'
    )
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


GOOD = (
    SPECS_SRC
    + """
import time
from dpcore.report import Report
time.sleep(sleep)
report = Report("aa", "good", profile=profile, figures_dir=figures_dir)
report.check(SPECS[0], value)
report.check(SPECS[1], wrong)
report.save_claims()
"""
)

BAD_STATUS = """
import pathlib
out = pathlib.Path(figures_dir) / "cc"
out.mkdir(parents=True, exist_ok=True)
header = "paper,key,artifact,quantity,source,location,paper_value,our_value,tolerance,status,profile,note"
(out / "bad.claims.csv").write_text(header + "\\n000,x.y,T,q,printed,p. 1,1,1,exact,fine,quick,\\n")
"""


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "notebooks"
    _notebook(root / "aa" / "good.ipynb", GOOD)
    _notebook(root / "bb" / "bad.ipynb", "raise RuntimeError('deliberate failure')")
    _notebook(root / "cc" / "badstatus.ipynb", BAD_STATUS)
    (root / "profiles").mkdir()
    (root / "profiles" / "quick.yaml").write_text("aa/good:\n  value: 2.0\n")
    (root / "profiles" / "paper.yaml").write_text("aa/good:\n  value: 2.001\n")
    return root


def _keys(paths, root):
    return [runner.notebook_key(p, root) for p in paths]


def test_discover_takes_exact_keys_and_globs(project):
    assert _keys(runner.discover("*", project), project) == ["aa/good", "bb/bad", "cc/badstatus"]
    assert _keys(runner.discover("aa/*", project), project) == ["aa/good"]
    assert _keys(runner.discover("bb/bad", project), project) == ["bb/bad"]
    assert _keys(runner.discover(["bb/bad", "aa/*"], project), project) == ["aa/good", "bb/bad"]


@pytest.mark.parametrize("pattern", ["", "  ", [], "good", "aa/goo", "zz/*"])
def test_discover_refuses_empty_and_unmatched_patterns(project, pattern):
    with pytest.raises(ValueError, match="pattern"):
        runner.discover(pattern, project)


def test_discover_suggests_the_key_for_a_bare_name(project):
    with pytest.raises(ValueError, match="did you mean aa/good"):
        runner.discover("good", project)


def test_run_reports_start_progress_failure_and_continues(project, tmp_path):
    (project / "profiles" / "quick.yaml").write_text("aa/good:\n  value: 2.0\n  sleep: 1.5\n")
    stream = io.StringIO()
    paths = runner.discover(["bb/bad", "aa/good"], project)[::-1]  # failing one first: the other must still run
    results = runner.run_notebooks(
        paths,
        profile="quick",
        out_figures=tmp_path / "fig",
        out_build=tmp_path / "build",
        root=project,
        stream=stream,
        progress_every=0.4,
    )
    assert [r.ok for r in results] == [False, True]
    text = stream.getvalue()
    assert "start  [1/2] bb/bad" in text and "start  [2/2] aa/good" in text
    assert "FAILED" in text and "RuntimeError: deliberate failure" in text and "cell 2" in text and "starting" in text
    assert "  ... aa/good: cell 3/3, " in text  # periodic progress while the slow cell runs (3 = after injection)
    assert (tmp_path / "build" / "aa" / "good.ipynb").exists()
    rows = runner.write_claims_summary(tmp_path / "fig")
    assert [r["status"] for r in rows] == ["reproduced", "erratum"]  # the quick profile injected 2.0
    assert runner.claim_problems(rows, SPECS, profile="quick") == []
    header = (tmp_path / "fig" / "claims.csv").read_text().splitlines()[0]
    assert header == ",".join(COLUMNS)
    assert (tmp_path / "fig" / "SCORECARD.md").read_text().startswith("# Scorecard")


def test_parallel_notebooks_run_at_once_and_report_in_the_given_order(project, tmp_path):
    _notebook(
        project / "aa" / "slow.ipynb", "import time\ntime.sleep(sleep)\nimport sys\nprint('to stderr', file=sys.stderr)"
    )
    (project / "profiles" / "quick.yaml").write_text("aa/good:\n  value: 2.0\n  sleep: 3.0\naa/slow:\n  sleep: 3.0\n")
    paths = runner.discover(["aa/good", "aa/slow"], project)
    kw = dict(profile="quick", out_figures=tmp_path / "fig", out_build=tmp_path / "build", root=project)
    stream = io.StringIO()
    stderr_before = (os.fstat(2).st_dev, os.fstat(2).st_ino)
    results = runner.run_notebooks(paths, stream=stream, jobs=2, progress_every=0.5, **kw)
    assert [(r.key, r.ok) for r in results] == [("aa/good", True), ("aa/slow", True)], stream.getvalue()
    text = stream.getvalue()
    # both slept 3 s at the same time: the first ends after the second started
    assert text.index("start  [2/2]") < text.index("ok    "), text
    assert "  ... aa/good: cell" in text and "  ... aa/slow: cell" in text
    # each kernel inherited its own log as stderr (its start-up lines), and this process has its stderr back
    for key in ("good", "slow"):
        assert "IPKernelApp" in (tmp_path / "build" / "aa" / f"{key}.stderr.log").read_text(), key
    assert (os.fstat(2).st_dev, os.fstat(2).st_ino) == stderr_before
    timings = runner._read_timings(tmp_path / "build" / "timings.json")
    assert set(timings) == {"aa/good", "aa/slow"} and all(t >= 3.0 for t in timings.values())
    # the longest notebook of the last run starts first next time
    last = {"aa/good": 1.0, "aa/slow": 9.0}
    assert runner._launch_order(paths, project, {}, last) == [1, 0]
    assert runner._launch_order(paths, project, {"aa/slow": {"train_missing": True}}, {}) == [1, 0]
    assert runner._launch_order(paths, project, {}, {}) == [0, 1]


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_run_notebooks_refuses_a_bad_job_count(project, tmp_path, jobs):
    with pytest.raises(ValueError, match="jobs"):
        runner.run_notebooks([], profile="quick", out_figures=tmp_path, out_build=tmp_path, root=project, jobs=jobs)


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_cli_refuses_a_bad_job_count(value, capsys):
    with pytest.raises(SystemExit) as info:
        runner.main(["--jobs", value])
    assert info.value.code == 2 and "--jobs" in capsys.readouterr().err


def _fresh(tmp_path, name, value=2.0, wrong=1.25, specs=SPECS):
    log = ClaimsLog()
    log.check(specs[0], value)
    log.check(specs[1], wrong)
    log.write(tmp_path / name / "aa" / "good.claims.csv")
    return tmp_path / name


@pytest.fixture
def committed(tmp_path):
    fresh = _fresh(tmp_path, "committed-run", value=1.999)
    runner.write_claims_summary(fresh)
    return fresh / "claims.csv"


def _check(fresh, committed, specs=SPECS):
    stream = io.StringIO()
    code = runner.check_claims(fresh, committed, specs, stream=stream)
    return code, stream.getvalue()


def test_check_claims_passes_when_nothing_moved(tmp_path, committed):
    code, text = _check(_fresh(tmp_path, "fresh", value=1.9995), committed)
    assert code == 0 and "check-claims ok" in text, text


def test_check_claims_fails_when_a_claim_flips_to_differs(tmp_path, committed):
    code, text = _check(_fresh(tmp_path, "fresh", value=2.5), committed)
    assert code == 1 and "t.value: differs" in text and "status reproduced committed, differs now" in text


def test_check_claims_fails_when_an_erratum_no_longer_matches(tmp_path, committed):
    edited = _specs(SPECS_SRC.replace("Erratum(1.25", "Erratum(1.3"))
    code, text = _check(_fresh(tmp_path, "fresh", specs=edited), committed, specs=edited)
    assert code == 1 and "000/t.wrong: differs" in text
    # the committed claims, computed under the old erratum, no longer follow from the edited spec
    code, text = _check(_fresh(tmp_path, "fresh2"), committed, specs=edited)
    assert code == 1 and "status erratum, but ours = 1.25 gives differs by the spec" in text


def test_check_claims_fails_on_drift_within_the_status(tmp_path, committed):
    code, text = _check(_fresh(tmp_path, "fresh", value=2.0015), committed)  # still reproduced, but moved
    assert code == 1 and "drift: ref/t.value: ours 1.999 committed, 2.0015 now" in text


def test_check_claims_fails_on_missing_and_unknown_rows(tmp_path, committed):
    fresh = tmp_path / "fresh"
    log = ClaimsLog()
    log.check(SPECS[0], 1.999)
    log.write(fresh / "aa" / "good.claims.csv")
    code, text = _check(fresh, committed)
    assert code == 1 and "000/t.wrong: in the committed claims but not in the fresh run" in text
    code, text = _check(_fresh(tmp_path, "f2", value=1.999), committed, specs=SPECS[1:])
    assert code == 1 and "no such claim" in text
    code, text = _check(tmp_path / "empty", committed)
    assert code == 1 and "no *.claims.csv" in text


def test_check_claims_cli_exit_code(tmp_path, committed, monkeypatch):
    monkeypatch.setattr(runner, "_specs", lambda: list(SPECS))
    monkeypatch.setattr(runner, "_notebooks", lambda: list(NOTEBOOKS))
    fresh = _fresh(tmp_path, "fresh", value=2.5)
    stream = io.StringIO()
    assert runner.main(["--check-claims", str(fresh), "--committed", str(committed)], stream=stream) == 1
    assert "check-claims FAILED" in stream.getvalue()
    stream = io.StringIO()
    ok = _fresh(tmp_path, "fresh-ok", value=1.999)
    assert runner.main(["--check-claims", str(ok), "--committed", str(committed)], stream=stream) == 0


def test_errata_markdown_lists_printed_corrected_evidence_and_ours(tmp_path, committed):
    rows = {(r["paper"], r["key"]): r for r in read_claims_csv(committed)}
    text = runner.errata_markdown(SPECS, {"quick": rows}, FINDINGS)
    assert "## Paper 000" in text and "Paper ref" not in text  # only specs with an explanation
    assert "counts: 1 of 2 reproduced, 1 erratum." in " ".join(text.split())  # the one count
    # grouped by finding: its short clause heads it, then its weight, row count and evidence, then its rows (the
    # finding's sentence leads SCORECARD.md); a finding's one row is inline
    head = text.index("### erratum: Table 8's row 3 is wrong\n")
    assert "\nChanges a conclusion; 1 row; evidence: Thm 3.1 with s = 1267.\n" in text[head:]
    assert "\n- `t.wrong`: 1.5 → 1.25\n" in text[head:]
    assert "under no finding" not in text and max(len(line) for line in text.splitlines()) <= 300
    # an explained row no finding covers is listed last under its paper, not dropped
    bare = runner.errata_markdown(SPECS, {"quick": rows})
    assert "### explained rows under no finding\n" in bare and "- `t.wrong`: 1.5 → 1.25" in bare
    assert "### erratum:" not in bare


def test_errata_shows_a_few_rows_per_finding_and_the_undecided_and_audit_rows(tmp_path):
    """Issue 41: at most ROWS_SHOWN rows per finding (the others counted), the rows a notebook's data found
    undecidable under their inconclusive finding, the audit rows under their audit finding."""
    many = [ClaimSpec("000", f"t.row{i}", "Table 8", "epsilon", 1.5, "printed", "Table 8", rtol=1e-3,
                      explanation=Erratum(1.25, "Thm 3.1", rtol=1e-3)) for i in range(runner.ROWS_SHOWN + 3)]
    undecided = ClaimSpec("000", "t.order", "Fig. 9", "s = 10 worst", True, "derived", "Fig. 9")
    audit = ClaimSpec("000", "t.authors", "Table 3", "the authors' code reaches it", True, "audit", "their code")
    log = ClaimsLog()
    for s in many:
        log.check(s, 1.25)
    log.check(undecided, True, inconclusive="both runs end below 20 % (2x chance)")
    log.check(audit, True)
    rows = {(r["paper"], r["key"]): r for r in read_claims_csv(log.write(tmp_path / "claims.csv"))}
    findings = [
        Finding("000", "rows", "erratum", "Many rows.", "many rows are wrong", False, ("t.row*",), "Thm 3.1"),
        Finding("000", "chance", "inconclusive", "At chance.", "the order is noise", False, ("t.order",), "runs"),
        Finding("000", "authors", "audit", "Their code.", "reached only under the authors' code", True,
                ("t.authors",), "runs"),
    ]  # fmt: skip
    text = runner.errata_markdown([*many, undecided, audit], {"quick": rows}, findings)
    shown = [line for line in text.splitlines() if line.startswith("- `t.row")]
    assert len(shown) == runner.ROWS_SHOWN and "\n- … 3 more rows in claims.csv\n" in text
    assert "### inconclusive: the order is noise\n" in text and "- `t.order`: True → True (undecided)" in text
    assert "### audit of the authors' code: reached only under the authors' code\n" in text
    assert "Rows `t.authors`: of 1 run here, 1 reached only under the authors' code." in text
    assert "audit rows: 1 reached only under the authors' code." in " ".join(text.split())
    # at another profile where none of a finding's rows ran, the finding is only counted
    other = runner.errata_markdown([*many, undecided, audit], {"paper": {}, "quick": rows}, findings)
    assert "### " not in other
    assert "Run at the other profile only: 1 erratum, 1 inconclusive, 1 audit finding(s)." in other


@pytest.fixture
def repo(project, tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_ROOT", str(tmp_path))
    monkeypatch.setattr(runner, "_specs", lambda: list(SPECS))
    monkeypatch.setattr(runner, "_notebooks", lambda: list(NOTEBOOKS))
    monkeypatch.setattr(runner, "_titles", lambda: {"000": "A. Author, The fake paper"})
    return tmp_path


def test_main_profiles_never_mix_and_errata_is_written_per_profile(repo):
    stream = io.StringIO()
    assert runner.main(["--profile", "quick", "--nb", "aa/good"], stream=stream) == 0, stream.getvalue()
    assert "summary: 1 ok, 0 failed" in stream.getvalue()
    quick_errata = (repo / "figures" / "ERRATA.md").read_text()
    assert "- `t.wrong`: 1.5 → 1.25\n" in quick_errata and ", paper" not in quick_errata
    assert "### erratum: Table 8's row 3 is wrong" in quick_errata
    assert runner.main(["--profile", "paper", "--nb", "aa/*"], stream=stream) == 0, stream.getvalue()
    quick = read_claims_csv(repo / "figures" / "claims.csv")
    paper = read_claims_csv(repo / "figures" / "paper" / "claims.csv")
    assert {r["profile"] for r in quick} == {"quick"} and {r["profile"] for r in paper} == {"paper"}
    assert [r["our_value"] for r in quick] == ["2.0", "1.25"] and [r["our_value"] for r in paper] == ["2.001", "1.25"]
    card = (repo / "figures" / "paper" / "SCORECARD.md").read_text()
    assert (
        card.startswith("# Scorecard")
        and "- **Paper 000** (A. Author, The fake paper): Table 8's row 3 is wrong." in card
    )
    assert "\n0 of 1 reproduced, 1 erratum.\n" in card
    # the paper run wrote its own ERRATA.md (its values first) and left the quick profile's file alone
    assert (repo / "figures" / "ERRATA.md").read_text() == quick_errata
    paper_errata = (repo / "figures" / "paper" / "ERRATA.md").read_text()
    assert "- `t.wrong`: 1.5 → 1.25\n" in paper_errata and ", quick" not in paper_errata  # its own value


def test_errata_says_not_run_at_a_profile_without_the_row(tmp_path, committed):
    rows = {(r["paper"], r["key"]): r for r in read_claims_csv(committed)}
    # ours: the first profile's value, else another profile's, named (a finding none of whose rows ran at the first
    # profile is only counted; an unexplained row is listed under its paper)
    text = runner.errata_markdown(SPECS, {"paper": {}, "quick": rows}, FINDINGS)
    assert "Run at the other profile only: 1 erratum finding(s)." in text and "t.wrong" not in text
    text = runner.errata_markdown(SPECS, {"paper": {}, "quick": rows})
    assert "- `t.wrong`: 1.5 → 1.25, quick" in text and "not in claims.csv" not in text
    text = runner.errata_markdown(SPECS, {"quick": rows, "paper": {}}, FINDINGS)
    assert "- `t.wrong`: 1.5 → 1.25\n" in text
    assert "- `t.wrong`: 1.5 → not run (expected 1.25)" in runner.errata_markdown(SPECS, {"paper": {}})
    with pytest.raises(ValueError, match="profile"):
        runner.errata_markdown(SPECS, {"fast": rows})


def test_coverage_problems_missing_extra_and_silent_notebooks():
    rows = {"aa/good": [{"paper": "ref", "key": "t.value"}, {"paper": "ref", "key": "t.stray"}]}
    problems = runner.coverage_problems(rows, NOTEBOOKS, ran=["aa/good", "aa/quiet"])
    assert problems == [
        "aa/good: 1 of its claims not reported (not-run needs a row with the reason): 000/t.wrong",
        "aa/good: reports claims another notebook (or none) owns: ref/t.stray",
    ]
    quiet = [*NOTEBOOKS, NotebookClaims("ref", "aa/quiet", "q", ("t.q",))]
    assert runner.coverage_problems({}, quiet, ran=["aa/quiet"]) == ["aa/quiet: ran but wrote no claims (1 owned)"]
    complete = {"aa/good": [{"paper": "ref", "key": "t.value"}, {"paper": "000", "key": "t.wrong"}]}
    assert runner.coverage_problems(complete, NOTEBOOKS, ran=["aa/good"]) == []


def test_gather_by_notebook_keys_are_notebook_keys_and_skip_other_profiles(tmp_path):
    _fresh(tmp_path, "fig")
    ClaimsLog().write(tmp_path / "fig" / "paper" / "aa" / "good.claims.csv")
    assert list(runner.gather_by_notebook(tmp_path / "fig", "quick")) == ["aa/good"]
    assert list(runner.gather_by_notebook(tmp_path / "fig" / "paper", "paper")) == ["aa/good"]
    assert len(runner.gather_by_notebook(tmp_path / "fig", "quick")["aa/good"]) == 2


def test_check_claims_fails_when_a_fresh_notebook_misses_a_claim(tmp_path, committed):
    stream = io.StringIO()
    assert runner.check_claims(_fresh(tmp_path, "ok", value=1.999), committed, SPECS, notebooks=NOTEBOOKS,
                               stream=stream) == 0, stream.getvalue()  # fmt: skip
    fresh = tmp_path / "partial"
    log = ClaimsLog()
    log.check(SPECS[0], 1.999)
    log.write(fresh / "aa" / "good.claims.csv")
    stream = io.StringIO()
    assert runner.check_claims(fresh, committed, SPECS, notebooks=NOTEBOOKS, stream=stream) == 1
    assert "aa/good: 1 of its claims not reported" in stream.getvalue()


def test_main_fails_loudly_but_always_prints_the_summary(repo):
    stream = io.StringIO()
    code = runner.main(["--nb", "*"], stream=stream)
    text = stream.getvalue()
    assert code == 1
    assert "summary: 2 ok, 1 failed" in text
    assert "failed: bb/bad" in text
    assert "status 'fine' is not one of" in text
    assert "Traceback" not in text


def test_main_fails_on_a_differs_row_and_on_an_unreported_claim(repo, monkeypatch):
    (repo / "notebooks" / "profiles" / "quick.yaml").write_text("aa/good:\n  value: 2.5\n")
    other = ClaimSpec("ref", "t.other", "test", "value", 3.0, "reference", "a test publication")
    monkeypatch.setattr(runner, "_specs", lambda: [*SPECS, other])
    monkeypatch.setattr(runner, "_notebooks", lambda: [*NOTEBOOKS, NotebookClaims.of("aa/good", "more", [other])])
    stream = io.StringIO()
    assert runner.main(["--nb", "aa/good"], stream=stream) == 1
    text = stream.getvalue()
    assert "**1 differ unexplained**" in text and "ref/t.value: differs" in text
    assert "aa/good: 1 of its claims not reported (not-run needs a row with the reason): ref/t.other" in text


@pytest.mark.parametrize("pattern", ["", "good"])
def test_main_refuses_bad_patterns(repo, pattern):
    stream = io.StringIO()
    assert runner.main(["--nb", pattern], stream=stream) == 2
    assert "error: pattern" in stream.getvalue()
    assert not (repo / "build").exists()


def test_prepare_nbval_injects_quick_parameters(project, tmp_path):
    stale = tmp_path / "nbval" / "old" / "renamed.ipynb"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    written = runner.prepare_nbval(tmp_path / "nbval", root=project)
    assert not stale.exists()
    nb = nbformat.read(written[0], as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
    assert injected and "value = 2.0" in injected[0].source
    assert str(tmp_path / "nbval" / "figures") in injected[0].source


def test_bad_profile(project):
    with pytest.raises(ValueError, match="profile"):
        runner.load_profile("fast", project)


def test_a_profile_key_that_is_not_a_parameter_fails_make_figures_before_anything_runs(repo):
    """Issue 54: ``max_epoch`` for ``max_epochs`` was dropped by papermill (a log line under build/) and the notebook
    ran with its default, exit 0; now nothing runs and the message names the key, the notebook and its parameters."""
    (repo / "notebooks" / "profiles" / "quick.yaml").write_text("aa/good:\n  value: 2.0\n  valeu: 3.0\n")
    stream = io.StringIO()
    assert runner.main(["--nb", "aa/*"], stream=stream) == 2
    text = stream.getvalue()
    assert "'valeu' for aa/good, which is not a parameter of good.ipynb (did you mean 'value'?)" in text, text
    assert "its parameters: reduced, value, wrong, sleep" in text and "nothing ran" in text
    assert not (repo / "figures" / "aa").exists() and not (repo / "build").exists()
    with pytest.raises(ValueError, match="'valeu' for aa/good"):
        runner.prepare_nbval(repo / "nbval", root=repo / "notebooks")
    (repo / "notebooks" / "profiles" / "quick.yaml").write_text("aa/good:\n  figures_dir: /tmp\n")
    assert runner.main(["--nb", "aa/good"], stream=stream) == 2
    assert "sets 'figures_dir' for aa/good, but the runner sets figures_dir itself" in stream.getvalue()


def test_declared_parameters_are_the_names_of_the_parameters_cell(project):
    assert runner.declared_parameters(project / "aa" / "good.ipynb") == [
        "profile", "figures_dir", "reduced", "value", "wrong", "sleep"]  # fmt: skip
    assert runner.profile_problems(runner.discover("*", project), "quick", project) == []
