"""JupyterLab in a real browser: an explorer notebook runs, a slider moves, the displayed ε is the library's.

Starts JupyterLab on 127.0.0.1 with a random token on a free port (stopped at the end, also on failure), checks that a
request without the token is refused, opens ``notebooks/explore/dpsgd.ipynb``, runs all cells, types a new σ into
the σ slider's readout (as a person does) and compares every ε of the read-out with
:func:`dpcore.accounting.dpsgd.dpsgd_epsilon` at those values.  A screenshot goes to ``/tmp/screens/``.
"""

from __future__ import annotations

import secrets
import shutil
import urllib.error
import urllib.request

import pytest
from conftest import ROOT, free_port, lab_command, readout_values, serve, type_into_slider

from dpcore.accounting.dpsgd import dpsgd_epsilon
from dpcore.accounting.events import epochs_to_steps, steps_per_epoch
from dpcore.explore import dpsgd

pytestmark = pytest.mark.timeout(300)

NEW_SIGMA = 2.0


@pytest.fixture
def lab(tmp_path, kernel_env):
    port, token = free_port(), secrets.token_hex(16)
    root = tmp_path / "notebooks"  # a copy: JupyterLab saves what it opens, the committed notebooks stay untouched
    shutil.copytree(ROOT / "notebooks" / "explore", root / "explore")
    command = lab_command(port, token, root)
    url = f"http://127.0.0.1:{port}"
    with serve(command, f"{url}/api/status?token={token}", log=tmp_path / "lab.log", env=kernel_env):
        yield url, token


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_lab_refuses_a_request_without_the_token(lab):
    url, token = lab
    assert _status(f"{url}/api/contents?token={token}") == 200
    assert _status(f"{url}/api/contents") == 403
    assert _status(f"{url}/api/contents?token=wrong") == 403


def test_dpsgd_explorer_in_jupyterlab_shows_the_library_epsilon(lab, page, screens):
    url, token = lab
    page.goto(f"{url}/lab/tree/explore/dpsgd.ipynb?token={token}")
    page.locator(".jp-Notebook").wait_for()
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=90_000)  # the kernel is up
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    readout = page.locator(".dpcore-readout-box td.dpcore-value[data-key='eps[rdp]']")
    try:
        readout.wait_for(timeout=120_000)
    finally:  # also on failure: what the page showed
        page.screenshot(path=str(screens / "jupyterlab_dpsgd_explorer_run.png"), full_page=True)
    before = readout_values(page)
    defaults = dpsgd.DEFAULTS
    q, n = defaults["batch_size"] / defaults["dataset_size"], defaults["dataset_size"]
    # the trainer's T for this run (the one epochs -> steps rule)
    steps = epochs_to_steps(defaults["epochs"], steps_per_epoch("poisson", n, defaults["batch_size"]))
    kw = dict(sample_rate=q, steps=steps, delta=defaults["delta"], dataset_size=n)
    assert before["eps[rdp]"] == pytest.approx(dpsgd_epsilon(defaults["sigma"], method="rdp", **kw), rel=1e-5)

    # move the σ slider: its readout is editable, as in the browser by hand
    slider = page.locator(".widget-slider").filter(has_text="noise σ")
    type_into_slider(page, slider, NEW_SIGMA, watch="eps[rdp]")
    after = readout_values(page)
    for method in ("pld", "rdp", "rdp-mironov", "gdp"):
        ours = dpsgd_epsilon(NEW_SIGMA, method=method, **kw)
        assert after[f"eps[{method}]"] == pytest.approx(ours, rel=1e-5), method
    assert after["eps[rdp]"] < before["eps[rdp]"]
    page.screenshot(path=str(screens / "jupyterlab_dpsgd_explorer.png"), full_page=True)
