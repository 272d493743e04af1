"""Every claim is counted, in every profile (issue 23): the committed claims and scorecards.

``figures/claims.csv`` (quick: every notebook runs) holds exactly the claims of every notebook;
``figures/paper/claims.csv`` holds exactly the claims of the notebooks the paper profile ran (those
with a ``<folder>/<notebook>.claims.csv`` under ``figures/paper/``).  A claim that no notebook reports
fails here.  These tests read the committed files: after a change to the registry, re-run the
notebooks concerned (``make figures NB=...``) and commit ``figures/``.
"""

from __future__ import annotations

import re

import pytest

from dpcore import runner
from dpcore.claims import read_claims_csv
from dpcore.papers import all_specs, notebook_claims
from dpcore.paths import figures_dir, notebooks_dir, repo_root

NOTEBOOKS = notebook_claims()


def _owned(notebooks) -> set[tuple[str, str]]:
    return {(nb.paper, key) for nb in NOTEBOOKS if nb.notebook in notebooks for key in nb.keys}


def test_every_claim_belongs_to_one_existing_notebook():
    keys = [(nb.paper, key) for nb in NOTEBOOKS for key in nb.keys]
    assert len(keys) == len(set(keys)) and set(keys) == {(s.paper, s.key) for s in all_specs()}
    missing = sorted({nb.notebook for nb in NOTEBOOKS if not (notebooks_dir() / f"{nb.notebook}.ipynb").exists()})
    assert missing == []


def test_quick_claims_are_exactly_the_claims_of_every_notebook():
    rows = read_claims_csv(figures_dir() / "claims.csv")
    by_notebook = runner.gather_by_notebook(figures_dir(), "quick")
    every = {nb.notebook for nb in NOTEBOOKS}
    assert runner.coverage_problems(by_notebook, NOTEBOOKS, ran=every) == []
    assert {(r["paper"], r["key"]) for r in rows} == _owned(every)


def test_paper_claims_are_exactly_the_claims_of_the_notebooks_the_paper_profile_ran():
    paper = figures_dir() / "paper"
    by_notebook = runner.gather_by_notebook(paper, "paper")
    assert by_notebook, "no paper-profile claims committed"
    assert runner.coverage_problems(by_notebook, NOTEBOOKS) == []
    rows = read_claims_csv(paper / "claims.csv")
    assert {(r["paper"], r["key"]) for r in rows} == _owned(set(by_notebook))


@pytest.mark.parametrize("profile_dir", ["", "paper"])
def test_committed_scorecard_is_short(profile_dir):
    card = (figures_dir() / profile_dir / "SCORECARD.md").read_text(encoding="utf-8")
    assert len(card.encode()) < 20_500  # issue 51 added the positive controls' finding
    assert max(len(line) for line in card.splitlines()) <= 300
    assert "**Paper 001**" in card or profile_dir == "paper"


#: a committed result file an erratum cites: results/paper/<experiment>/<hash>.json or .../{<hash>,<hash>,...}.json
_CITED = re.compile(r"results/paper/([\w.-]+)/(?:\{([\w,]+)\}|([\w.-]+))\.json")


def test_every_result_file_an_erratum_cites_is_committed():
    """Issue 22's Done-when, for every paper: an erratum whose evidence is committed runs names files that exist
    under ``results/paper/`` (a typo or a file left uncommitted fails here); the check sees every citation."""
    root = repo_root() / "results" / "paper"
    missing: list[str] = []
    for s in all_specs():
        text = s.explanation.evidence if s.explanation is not None else ""
        assert text.count("results/paper/") == len(_CITED.findall(text)), s.key  # every citation parsed
        for experiment, group, single in _CITED.findall(text):
            for name in group.split(",") if group else [single]:
                if not (root / experiment / f"{name}.json").is_file():
                    missing.append(f"{s.key}: results/paper/{experiment}/{name}.json")
    # issue 50: no claim cites a result file of ours any more (verdicts are computed from results/ by the rules);
    # a citation that remains must still name a committed file
    assert missing == [], missing
