"""``make lab`` + Run All + Ctrl+S leaves ``git status`` clean: a save writes no outputs into a tracked notebook.

A throwaway git repository in ``tmp_path`` tracks a copy of an explorer notebook (:data:`NOTEBOOK`, as committed) and
of the project's ``.gitignore`` (which ignores the ``.ipynb_checkpoints/`` Lab writes beside an opened notebook).
JupyterLab is started with the configuration ``make lab`` passes (``etc/jupyter_server_config.py``: the pre-save hook
:func:`dpcore.lab.strip_outputs_pre_save`), rooted at that repository (never at this one), on 127.0.0.1 with a token.
The test opens the notebook, runs all cells, waits until the explorer's outputs are on the page, presses Ctrl+S and
waits for the file to be written; then the saved notebook has no outputs and no execution counts, is byte-identical
to the tracked one, and ``git status --porcelain`` is empty.

The control (:func:`test_without_the_hook_a_save_writes_outputs`) runs the same steps without the configuration and
sees the file gain outputs and ``git status`` go dirty: the check above can fail, and fails without the hook.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ROOT, free_port, lab_command, serve

pytestmark = pytest.mark.timeout(240)

NOTEBOOK = Path("notebooks") / "explore" / "contraction.ipynb"  # an explorer: a few seconds to run, a PNG output
CONFIG = ROOT / "etc" / "jupyter_server_config.py"  # what `make lab` passes (tests/test_lab.py checks the Makefile)
SAVE_TIMEOUT_S = 30.0


def _git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=test", "-c", "user.email=test@example.invalid", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def tracked(tmp_path: Path) -> Path:
    """A throwaway git repository whose one commit tracks copies of :data:`NOTEBOOK` and the project's .gitignore."""
    repo = tmp_path / "repo"
    (repo / NOTEBOOK).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / NOTEBOOK, repo / NOTEBOOK)
    shutil.copyfile(ROOT / ".gitignore", repo / ".gitignore")
    _git(repo, "init", "-q")
    _git(repo, "add", str(NOTEBOOK), ".gitignore")
    _git(repo, "commit", "-q", "-m", "tracked notebook")
    assert _git(repo, "status", "--porcelain") == ""
    return repo


def _run_all_and_save(page, url: str, token: str, path: Path, screens: Path, name: str) -> None:
    """Open ``path`` in Lab, Run All, wait for the explorer's outputs, press Ctrl+S, wait until the file is written."""
    page.goto(f"{url}/lab/tree/{NOTEBOOK.as_posix()}?token={token}")
    page.locator(".jp-Notebook").wait_for()
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=90_000)  # the kernel is up
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    try:  # the outputs a save would write: the explorer's read-out and its plot
        page.locator(".dpcore-readout-box td.dpcore-value").first.wait_for(timeout=120_000)
        page.locator(".jp-OutputArea-output").first.wait_for()
    finally:
        page.screenshot(path=str(screens / f"lab_save_{name}_run.png"), full_page=True)
    before = path.stat().st_mtime_ns
    page.locator(".jp-Cell .jp-InputPrompt").first.click()  # focus the notebook (command mode), as a person does
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + SAVE_TIMEOUT_S
    while path.stat().st_mtime_ns == before:
        if time.monotonic() > deadline:
            page.screenshot(path=str(screens / f"lab_save_{name}_unsaved.png"), full_page=True)
            raise AssertionError(f"Ctrl+S did not write {path} within {SAVE_TIMEOUT_S:.0f} s")
        time.sleep(0.2)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for()  # the save has completed and nothing runs


def _outputs(path: Path) -> list[tuple[int, int | None]]:
    """(number of outputs, execution count) of each code cell of the notebook at ``path``."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(len(c.get("outputs", [])), c.get("execution_count")) for c in cells if c["cell_type"] == "code"]


def test_make_lab_run_all_and_save_leaves_git_status_clean(tracked, tmp_path, kernel_env, page, screens):
    port, token = free_port(), secrets.token_hex(16)
    committed = (tracked / NOTEBOOK).read_bytes()
    command = lab_command(port, token, tracked, config=CONFIG)
    url = f"http://127.0.0.1:{port}"
    start = time.perf_counter()
    with serve(command, f"{url}/api/status?token={token}", log=tmp_path / "lab.log", env=kernel_env):
        _run_all_and_save(page, url, token, tracked / NOTEBOOK, screens, "hook")
    saved = tracked / NOTEBOOK
    assert all(n == 0 and count is None for n, count in _outputs(saved)), _outputs(saved)
    assert saved.read_bytes() == committed, "the saved notebook differs from the tracked one"
    assert _git(tracked, "status", "--porcelain") == ""
    print(f"make lab + Run All + Ctrl+S: {time.perf_counter() - start:.1f} s")


def test_without_the_hook_a_save_writes_outputs(tracked, tmp_path, kernel_env, page, screens):
    port, token = free_port(), secrets.token_hex(16)
    command = lab_command(port, token, tracked)  # plain `jupyter lab`: no project config
    url = f"http://127.0.0.1:{port}"
    with serve(command, f"{url}/api/status?token={token}", log=tmp_path / "lab.log", env=kernel_env):
        _run_all_and_save(page, url, token, tracked / NOTEBOOK, screens, "control")
    assert any(n > 0 for n, _ in _outputs(tracked / NOTEBOOK)), "the control saved no outputs: the test cannot fail"
    assert _git(tracked, "status", "--porcelain").strip() == f"M {NOTEBOOK.as_posix()}"
