"""The Voilà dashboard (``make explore``) in a real browser: a widget moves, the displayed δ is the library's.

Starts Voilà on 127.0.0.1 on a free port with the code hidden and the ``dpcore`` template (as ``make explore``;
stopped at the end, also on failure) over a copy of ``notebooks/explore/``, opens the paper-004 explorer, types a new
ε into the ε slider's readout and compares Theorem 2's δ and the baselines' with
:func:`dpcore.papers.p004_contraction.baselines.baseline_deltas`; no request of the page may fail (offline, Voilà's
own template fetched Font Awesome from a CDN).  A screenshot goes to ``/tmp/screens/``.  Without a browser, the
landing page and a notebook page are read over HTTP: every explorer listed with its title, no CDN link.
"""

from __future__ import annotations

import re
import shutil
import urllib.request

import pytest
from conftest import ROOT, VENV_BIN, free_port, readout_values, serve, type_into_slider

from dpcore.explore import dashboard as voila_site
from dpcore.papers.p004_contraction import explore as contraction
from dpcore.papers.p004_contraction.baselines import baseline_deltas

pytestmark = pytest.mark.timeout(300)

NEW_EPSILON = 2.0


@pytest.fixture
def dashboard(tmp_path, kernel_env):
    port = free_port()
    root = tmp_path / "explore"
    shutil.copytree(ROOT / "notebooks" / "explore", root)
    voila_site.write_template(tmp_path / "jupyter", root)  # as `make explore`: JUPYTER_PATH and --template=dpcore
    command = [
        str(VENV_BIN / "voila"), "--no-browser", "--Voila.ip=127.0.0.1", f"--port={port}", "--strip_sources=True",
        f"--template={voila_site.TEMPLATE}", str(root),
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    env = {**kernel_env, "JUPYTER_PATH": str(tmp_path / "jupyter")}
    with serve(command, f"{url}/", log=tmp_path / "voila.log", env=env):
        yield url


def _get(url: str, timeout: float = 240) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read().decode("utf-8", errors="replace")


#: a stylesheet, script, font or image the page would fetch from another host
EXTERNAL = re.compile(r"<(?:link|script|img)\b[^>]*\b(?:href|src)=[\"']https?://[^>]*>", re.I)


def test_landing_page_lists_each_explorer_and_no_page_fetches_from_a_cdn(dashboard):
    landing = _get(f"{dashboard}/")
    for entry in voila_site.explorers():
        assert f'href="/voila/render/{entry.path}?' in landing and entry.title.replace("&", "&amp;") in landing
    assert not EXTERNAL.findall(landing)
    page = _get(f"{dashboard}/voila/render/contraction.ipynb")  # runs the notebook (the kernel answers in the page)
    assert "application/vnd.jupyter.widget-view+json" in page and "contraction.build()" not in page
    assert not EXTERNAL.findall(page), EXTERNAL.findall(page)


def test_contraction_dashboard_shows_the_library_delta(dashboard, page, screens):
    failed: list[str] = []  # every request the page could not complete (a CDN offline, a missing asset)
    page.on("requestfailed", lambda request: failed.append(f"{request.url} ({request.failure})"))
    page.goto(f"{dashboard}/voila/render/contraction.ipynb")
    readout = page.locator(".dpcore-readout-box td.dpcore-value[data-key='delta[B0]']")
    try:
        readout.wait_for(timeout=120_000)
    finally:  # also on failure: what the page showed
        page.screenshot(path=str(screens / "voila_contraction_loaded.png"), full_page=True)
    assert "contraction.build()" not in page.content(), "the code must be hidden (--strip_sources)"
    d = contraction.DEFAULTS
    kw = dict(n=d["batch_size"] * d["rounds"], batch_size=d["batch_size"], eta=d["eta"], sigma=d["sigma"],
              radius=d["radius"])  # fmt: skip
    before = readout_values(page)
    assert before["delta[B0]"] == pytest.approx(float(baseline_deltas(d["epsilon"], **kw)["B0"][0]), rel=1e-5)

    slider = page.locator(".widget-slider").filter(has_text="ε").first
    type_into_slider(page, slider, NEW_EPSILON, watch="delta[B0]")
    after = readout_values(page)
    library = baseline_deltas(NEW_EPSILON, **kw)
    for key in ("B0", "B1", "B2", "B3a", "B3b", "B4"):
        assert after[f"delta[{key}]"] == pytest.approx(float(library[key][0]), rel=1e-5), key
    assert after["delta[B0]"] < before["delta[B0]"]
    page.screenshot(path=str(screens / "voila_contraction_dashboard.png"), full_page=True)
    assert not failed, f"requests of the dashboard failed: {failed}"
