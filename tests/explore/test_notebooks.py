"""Outside the runner nothing committed changes: a notebook run as in JupyterLab writes to build/scratch/, and an
explorer notebook executed headless renders its default state as a static figure and writes no file.

Runs ``git status --porcelain`` read-only before and after (skipped when this is not a git checkout).
"""

from __future__ import annotations

import shutil
import subprocess

import nbformat
import pytest

from dpcore.paths import notebooks_dir, repo_root, scratch_dir

pytestmark = pytest.mark.timeout(600)


def _status() -> str:
    if shutil.which("git") is None or not (repo_root() / ".git").exists():
        pytest.skip("not a git checkout: git status cannot tell whether committed files changed")
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo_root(), capture_output=True, text=True,
        check=True,
    ).stdout  # fmt: skip


#: Coarser grids for contraction_fig2 (its ``parameters`` cell; defaults 61, 2001 and 6): every cell still runs and
#: writes its figures, tables and claims, which is all the test looks at, for about a third less CPU (issue 25).
FIG2_COARSE = {"eps_points": 7, "grid_points": 201, "max_log10_rounds": 2}


def _execute(key: str, out, monkeypatch, parameters: dict | None = None) -> nbformat.NotebookNode:
    """Execute notebook ``key`` headless as in JupyterLab (papermill, no runner), ``parameters`` injected."""
    import papermill

    monkeypatch.setenv("MPLBACKEND", "Agg")
    path = notebooks_dir() / f"{key}.ipynb"
    papermill.execute_notebook(
        str(path), str(out), kernel_name="python3", cwd=str(path.parent), progress_bar=False,
        parameters=parameters or {},
    )  # fmt: skip
    return nbformat.read(out, as_version=4)


def test_a_notebook_run_outside_the_runner_writes_scratch_not_figures(tmp_path, monkeypatch):
    before = _status()
    nb = _execute("004_contraction/contraction_fig2", tmp_path / "out.ipynb", monkeypatch, FIG2_COARSE)
    assert _status() == before, "running a notebook outside the runner changed the checkout"
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "scratch" in printed and "only the runner writes figures/" in printed
    assert (scratch_dir("quick") / "004_contraction" / "contraction_fig2.claims.csv").exists()


def test_an_explorer_notebook_renders_a_static_figure_and_writes_nothing(tmp_path, monkeypatch):
    before = _status()
    nb = _execute("explore/contraction", tmp_path / "out.ipynb", monkeypatch)
    assert _status() == before
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "execute_result"]
    assert outputs, "the display cell shows the explorer"
    data = outputs[-1]["data"]
    assert data["image/png"] and "application/vnd.jupyter.widget-view+json" in data
    assert "δ at T = 100" in data["text/plain"]


def test_explorer_notebooks_are_a_category_that_reports_no_claims():
    from dpcore.runner import coverage_problems, discover, is_explorer, notebook_key

    keys = [notebook_key(p) for p in discover("explore/*")]
    assert sorted(keys) == sorted(f"explore/{t}" for t in ("dpsgd", "modelmix", "shuffling", "contraction",
                                                          "calculators"))  # fmt: skip
    assert all(is_explorer(k) for k in keys) and not is_explorer("004_contraction/contraction_fig2")
    assert coverage_problems({}, [], ran=keys) == []  # no claims owned, none expected
    row = {"paper": "004", "key": "x", "status": "reproduced"}
    assert "explorer notebook reports claims" in coverage_problems({"explore/dpsgd": [row]}, [])[0]
