"""Shared fixtures of the browser tests: Debian's Chromium driven by Playwright, free ports, servers that always stop.

* :func:`chromium_path` -- ``$DPCORE_CHROMIUM`` or ``/usr/bin/chromium``.  When it is missing the project's own setup
  step installs it (``make chromium``: ``apt-get install -y chromium`` as root); a test skips, saying why, only when
  that is impossible (not root, no apt-get, the install failed).  Playwright cannot download its own browser here, so
  it is launched with ``executable_path``.
* :func:`free_port` -- a TCP port on 127.0.0.1 nobody listens on.
* :func:`lab_command` -- the JupyterLab command line of a test (127.0.0.1, a token, a root folder; optionally the
  project's ``make lab`` config), without update checks or news.
* :func:`serve` -- context manager: start a server process (its own process group, output to a log file), wait until
  a URL answers, yield, and always terminate the group (kill after a grace period), also on failure.
* fixtures ``browser`` (one Chromium per session), ``page`` (a fresh context and page per test) and ``screens``
  (``/tmp/screens/``, where tests put screenshots for a person to look at; never committed).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
SCREENS = Path(os.environ.get("DPCORE_SCREENS", "/tmp/screens"))

__all__ = ["ROOT", "VENV_BIN", "SCREENS", "chromium_path", "free_port", "lab_command", "serve", "wait_for_url"]


def _install_chromium(target: Path) -> str:
    """Run the project's setup step (``make chromium``); return why chromium is still missing ('' when present)."""
    if os.geteuid() != 0:
        return f"{target} is missing and the tests do not run as root (install it: apt-get install chromium)"
    if shutil.which("apt-get") is None or shutil.which("make") is None:
        return f"{target} is missing and apt-get or make is not available to install it"
    result = subprocess.run(
        ["make", "-C", str(ROOT), "chromium", f"CHROMIUM={target}"], capture_output=True, text=True, timeout=900
    )
    if target.exists():
        return ""
    return f"`make chromium` could not install {target}: {(result.stdout + result.stderr).strip()[-500:]}"


def chromium_path() -> Path:
    """The Chromium the browser tests drive (installed by ``make chromium`` if missing); skips with the reason when
    it cannot be installed."""
    target = Path(os.environ.get("DPCORE_CHROMIUM", "/usr/bin/chromium"))
    if not target.exists():
        reason = _install_chromium(target)
        if reason:
            pytest.skip(f"browser tests need Chromium: {reason}")
    return target


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (bound then released: the server binds it right after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_url(url: str, *, timeout: float, process: subprocess.Popen | None = None, log: Path | None = None) -> int:
    """Poll ``url`` until it answers (any HTTP status); return the status.  Raises ``RuntimeError`` with the server's
    log tail when ``process`` exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"the server exited with {process.returncode} before {url} answered:\n{tail}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:  # the server answers, if only to refuse
            return int(exc.code)
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"{url} did not answer within {timeout:.0f} s:\n{tail}")
        time.sleep(0.5)


def lab_command(port: int, token: str, root: Path, *, config: Path | None = None) -> list[str]:
    """``jupyter lab`` on 127.0.0.1:``port`` with ``token``, rooted at ``root``; with ``config`` (e.g.
    ``etc/jupyter_server_config.py``, what ``make lab`` passes) its settings apply, except the root folder, which the
    command line overrides so that a test never serves (and saves into) the repository."""
    command = [str(VENV_BIN / "jupyter"), "lab"]
    if config is not None:
        command.append(f"--config={config}")
    return command + [
        "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", f"--ServerApp.preferred_dir={root}",
        "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]  # fmt: skip


@contextlib.contextmanager
def serve(
    command: Sequence[str],
    ready_url: str,
    *,
    log: Path,
    timeout: float = 90.0,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen]:
    """Start ``command`` in its own process group (stdout and stderr to ``log``), wait until ``ready_url`` answers,
    yield the process, and always stop the whole group: SIGTERM, then SIGKILL after 10 s."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        process = subprocess.Popen(
            list(command),
            cwd=str(cwd or ROOT),
            env={**os.environ, **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for_url(ready_url, timeout=timeout, process=process, log=log)
            yield process
        finally:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=10)


@pytest.fixture(scope="session")
def chromium() -> Path:
    return chromium_path()


@pytest.fixture(scope="session")
def browser(chromium: Path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as playwright:
        # --no-sandbox: Chromium refuses to start its sandbox as root (the tests' user in CI containers)
        instance = playwright.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"], headless=True)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(scope="session")
def screens() -> Path:
    SCREENS.mkdir(parents=True, exist_ok=True)
    return SCREENS


@pytest.fixture
def kernel_env(tmp_path: Path) -> dict[str, str]:
    """Environment of a Jupyter/Voilà server under test: the venv first on PATH, one BLAS thread, no user config."""
    return {
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "OMP_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter_config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter_runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab_workspaces"),
    }


READOUT_CELLS = ".dpcore-readout-box td.dpcore-value"
UPDATE_TIMEOUT_MS = 180_000  # a loaded 2-core CI machine (a training notebook beside it) needs more than 60 s


def readout_values(page) -> dict[str, float]:
    """Every number of an explorer's read-out box, by its ``data-key``."""
    cells = page.locator(READOUT_CELLS)
    return {cells.nth(i).get_attribute("data-key"): float(cells.nth(i).inner_text()) for i in range(cells.count())}


def type_into_slider(page, slider, value: float, *, watch: str) -> None:
    """Type ``value`` into ``slider``'s editable read-out (as a person does) and wait until read-out ``watch`` changes.

    The watched text is read *before* typing: read after ``Enter``, a fast kernel may already have answered, and the
    wait would then compare the new text with itself until it times out.
    """
    selector = f"{READOUT_CELLS}[data-key='{watch}']"
    old = page.locator(selector).inner_text()
    slider.locator(".widget-readout").click()
    page.keyboard.press("Control+A")
    page.keyboard.type(str(value))
    page.keyboard.press("Enter")
    page.wait_for_function(
        "([sel, old]) => { const c = document.querySelector(sel); return c !== null && c.textContent !== old; }",
        arg=[selector, old],
        timeout=UPDATE_TIMEOUT_MS,
    )
