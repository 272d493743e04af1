"""The notebook runner: parameters from the profile, failures reported, claims gathered."""

import io

import nbformat
import pytest

from dpcore import runner
from dpcore.claims import COLUMNS


def _notebook(path, body):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell('profile = "quick"\nfigures_dir = None\nreduced = False\nvalue = 1')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


GOOD = """
from dpcore.claims import ClaimSpec
from dpcore.report import Report
SPEC = ClaimSpec("ref", "test.value", "test", "value", 2, "reference", "a test")
report = Report("aa", "good", profile=profile, figures_dir=figures_dir)
report.check(SPEC, value)
report.save_claims()
"""


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "notebooks"
    _notebook(root / "aa" / "good.ipynb", GOOD)
    _notebook(root / "bb" / "bad.ipynb", "raise RuntimeError('deliberate failure')")
    (root / "profiles").mkdir()
    (root / "profiles" / "quick.yaml").write_text("aa/good:\n  value: 2\n")
    (root / "profiles" / "paper.yaml").write_text("aa/good:\n  value: 3\n")
    return root


def test_discover_and_glob(project):
    assert [runner.notebook_key(p, project) for p in runner.discover("*", project)] == ["aa/good", "bb/bad"]
    assert [runner.notebook_key(p, project) for p in runner.discover("aa/*", project)] == ["aa/good"]


def test_run_reports_failure_and_continues(project, tmp_path):
    stream = io.StringIO()
    paths = runner.discover("*", project)[::-1]  # failing one first: the other must still run
    results = runner.run_notebooks(
        paths, profile="quick", out_figures=tmp_path / "fig", out_build=tmp_path / "build", root=project, stream=stream
    )
    assert [r.ok for r in results] == [False, True]
    text = stream.getvalue()
    assert "FAILED" in text and "RuntimeError: deliberate failure" in text and "cell 2" in text and "starting" in text
    assert (tmp_path / "build" / "aa" / "good.ipynb").exists()
    rows = runner.write_claims_summary(tmp_path / "fig")
    assert rows[0]["status"] == "reproduced"  # the quick profile injected value = 2
    header = (tmp_path / "fig" / "claims.csv").read_text().splitlines()[0]
    assert header == ",".join(COLUMNS)
    assert (tmp_path / "fig" / "SCORECARD.md").read_text().startswith("# Scorecard")


def test_prepare_nbval_injects_quick_parameters(project, tmp_path):
    stale = tmp_path / "nbval" / "old" / "renamed.ipynb"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    written = runner.prepare_nbval(tmp_path / "nbval", root=project)
    assert not stale.exists()
    nb = nbformat.read(written[0], as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
    assert injected and "value = 2" in injected[0].source and "figures_dir" in injected[0].source


def test_bad_profile(project):
    with pytest.raises(ValueError, match="profile"):
        runner.load_profile("fast", project)
