"""The documentation site in a real browser: build it (``docs/build_site.py``, as ``make docs`` does) into a
temporary folder, serve it on 127.0.0.1, open every page in Chromium (Playwright) and check that no page
logs a console error or a page error, that no same-origin request fails, that every image loads, and that
every internal link (and its #fragment) points at something that exists; that at 1280 px nothing of a paper page
or an explorer page scrolls sideways, that the explorer pages show their static figure, that every figure of a
paper page links to the notebook cell that draws it, and that no page holds the checkout's absolute path.

``DPCORE_DOCS_FIGURES`` (optional) names another figures tree to build from (``docs/build_site.py --figures``).

Chromium and the session's ``browser`` come from ``tests/browser/conftest.py`` (it installs Chromium with
``make chromium`` when missing, and skips, saying why, only when it cannot).
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urldefrag

import pytest

from dpcore.claims import OWN_CHECKS

ROOT = Path(__file__).resolve().parents[2]
PAGE_TIMEOUT_MS = 30_000
#: the figures tree the site is built from (its claims.csv is what the pages must count)
FIGURES = Path(os.environ.get("DPCORE_DOCS_FIGURES", str(ROOT / "figures")))


@pytest.fixture(scope="module")
def docs_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from this checkout into a temporary folder (never into build/docs)."""
    base = tmp_path_factory.mktemp("docs")
    out, src = base / "html", base / "src"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    figures = str(FIGURES)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "build_site.py"), "--out", str(out), "--src", str(src)]
        + ["--figures", figures],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    assert proc.returncode == 0, f"docs build failed (exit {proc.returncode}):\n{output}"
    assert (out / "index.html").is_file()
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A browser that closes a connection early (page left while loading) is no error of the site."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture(scope="module")
def docs_url(docs_build: Path) -> Iterator[str]:
    """Serve the built site on 127.0.0.1 at a free port (port 0: the OS picks it); always stopped."""
    handler = functools.partial(_QuietHandler, directory=str(docs_build))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if "_static" not in p.parts)


class _Tab:
    """One browser tab that visits the site's pages one after another and reports, per page, what went wrong.

    One tab rather than a fresh context per page (issue 25): a new context starts a new renderer process and
    fetches and compiles the theme's scripts, styles and fonts again for every page, about twice the CPU time of
    the whole visit.  Nothing a check sees is lost: each page is a full navigation whose scripts run again (console
    and page errors), each distinct URL is requested at least once and its failure or HTTP error reported (the
    cache only serves again what already loaded with 200; an error response is not cached), every image's load
    state is read per page, and cookies and storage are emptied after each page, so that every page starts as a
    first visit does.  An error logged while a page is left counts for the next page: the test still fails.
    """

    def __init__(self, browser, origin: str) -> None:  # noqa: ANN001
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.problems: list[str] = []
        page = self.page
        page.on(
            "console",
            lambda msg: (
                self.problems.append(f"console {msg.type}: {msg.text} ({msg.location.get('url', '')})")
                if msg.type == "error"
                else None
            ),
        )
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        page.on("requestfailed", lambda req: self.problems.append(f"request failed: {req.url} ({req.failure})"))
        page.on(
            "response",
            lambda resp: (
                self.problems.append(f"HTTP {resp.status}: {resp.url}")
                if resp.status >= 400 and resp.url.startswith(origin)
                else None
            ),
        )

    def visit(self, url: str) -> dict:
        """Open one page; what went wrong on it, its images, links and element ids."""
        self.problems = []
        page = self.page
        response = page.goto(url, wait_until="load", timeout=PAGE_TIMEOUT_MS)
        if response is None or response.status != 200:
            self.problems.append(f"HTTP {None if response is None else response.status} for the page itself")
        page.evaluate("document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })")
        page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=PAGE_TIMEOUT_MS)
        images = page.evaluate(
            "Array.from(document.images).map(i => ({src: i.currentSrc || i.src, width: i.naturalWidth}))"
        )
        links = page.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
        ids = page.evaluate("Array.from(document.querySelectorAll('[id], a[name]')).map(e => e.id || e.name)")
        page.wait_for_timeout(200)  # late console errors of scripts run on load
        page.evaluate("localStorage.clear(); sessionStorage.clear()")  # the next page starts as a first visit
        self.context.clear_cookies()
        return {"problems": self.problems, "images": images, "links": links, "ids": set(ids)}

    def close(self) -> None:
        self.context.close()


def test_docs_site_pages_links_and_images(docs_build: Path, docs_url: str, browser) -> None:  # noqa: ANN001
    pages = _pages(docs_build)
    expected = {"index.html", "sharp_edges.html", "explorers.html", "quickstart.html", "reference.html"}
    expected |= {f"{p}.html" for p in ("running", "data", "cli", "scale")}  # the README's reference (issue 54)
    expected |= {f"papers/{p}.html" for p in ("000", "001", "002", "003", "004", "ref")}
    expected |= {f"api/{m}.html" for m in ("accounting", "training", "federated", "experiments", "audit", "data")}
    assert expected <= set(pages), f"missing pages: {sorted(expected - set(pages))}"

    seen: dict[str, dict] = {}
    failures: list[str] = []
    tab = _Tab(browser, docs_url)
    try:
        for rel in pages:
            info = tab.visit(f"{docs_url}/{rel}")
            seen[f"{docs_url}/{rel}"] = info
            failures += [f"{rel}: {p}" for p in info["problems"]]
            failures += [f"{rel}: image did not load: {img['src']}" for img in info["images"] if not img["width"]]
    finally:
        tab.close()

    # every internal link: the target exists (HTTP 200) and a #fragment names an element of an HTML target
    checked: dict[str, int] = {}
    for rel_url, info in seen.items():
        rel = rel_url[len(docs_url) + 1 :]
        for link in info["links"]:
            if not link.startswith(docs_url):
                continue  # external (the theme's footer credits): not followed
            target, fragment = urldefrag(link)
            if target not in checked:
                try:
                    with urllib.request.urlopen(target, timeout=30) as resp:  # noqa: S310 - 127.0.0.1 only
                        checked[target] = resp.status
                except urllib.error.HTTPError as exc:
                    checked[target] = exc.code
            if checked[target] != 200:
                failures.append(f"{rel}: broken link {link} (HTTP {checked[target]})")
            elif fragment and target.endswith(".html"):
                ids = seen[target]["ids"] if target in seen else None
                if ids is not None and fragment not in ids:
                    failures.append(f"{rel}: link {link}: no element with id {fragment!r} on the target page")
    assert not failures, f"{len(failures)} problem(s):\n" + "\n".join(failures[:60])


def test_docs_site_content_comes_from_the_data(docs_build: Path) -> None:
    """The landing page has a verdict per paper, and each paper page shows every committed figure of it."""
    import csv

    index = (docs_build / "index.html").read_text(encoding="utf-8")
    rows = list(csv.DictReader((FIGURES / "claims.csv").open(encoding="utf-8")))
    for paper in sorted({r["paper"] for r in rows}):
        assert f"papers/{paper}.html" in index, f"no verdict row links paper {paper}"
        # our own checks (consistency, audit) that ran are counted apart; one not run counts among the claims
        n = sum(r["paper"] == paper and (r["source"] not in OWN_CHECKS or r["status"] == "not-run") for r in rows)
        assert f" of {n} reproduced" in index, f"paper {paper}: the landing page does not count its {n} claims"
    page = (docs_build / "papers" / "003.html").read_text(encoding="utf-8")
    pngs = sorted((FIGURES / "003_shuffling_batch_clipping").glob("*.png"))
    assert pngs
    for png in pngs:
        assert png.stem in page, f"papers/003.html does not show {png.name}"
    for nb in sorted((ROOT / "notebooks" / "explore").glob("*.ipynb")):
        html = docs_build / "explore" / f"{nb.stem}.html"
        assert html.is_file(), f"explorer {nb.name} has no page"
        assert "Static default state" in html.read_text(encoding="utf-8")


def test_no_page_holds_the_checkouts_absolute_path(docs_build: Path) -> None:
    """Papermill's injected ``figures_dir`` and any printed path are made relative to the repository."""
    found = [
        p.relative_to(docs_build).as_posix()
        for p in sorted(docs_build.rglob("*"))
        if p.is_file() and p.suffix in (".html", ".txt", ".js", ".ipynb") and str(ROOT) in p.read_text(errors="replace")
    ]
    assert not found, f"{len(found)} file(s) of the site hold {ROOT}: {found[:10]}"


#: every token (a run of non-blank characters between two line-break opportunities the site allows: blanks, <wbr>,
#: a hyphen or dash between two letters) of every table cell that the browser laid out on more than one line (issue
#: 54: "16909 / 7", "erratu / m"); folded rows are opened first so that they are laid out too
_BROKEN_TOKENS_JS = """() => {
  document.querySelectorAll('article.bd-article details').forEach(d => { d.open = true; });
  const broken = [];
  let tokens = 0;
  const walker = document.createTreeWalker(document.querySelector('article.bd-article'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.closest('td, th')) continue;
    const text = node.textContent;
    const re = /[^\\s]+/g;
    let m;
    while ((m = re.exec(text)) !== null) {
      // a hyphen or dash between two letters is a place a compound may break (replace-one); split the token there
      const parts = m[0].split(/(?<=[A-Za-z][-–])(?=[A-Za-z])/);
      let at = m.index;
      for (const part of parts) {
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + part.length);
        const tops = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
        tokens += 1;
        if (tops.size > 1) broken.push(part);
        at += part.length;
      }
    }
  }
  return {tokens, broken};
}"""

#: what overflows an element's box sideways (the main column, the page, each table and the box around it).  A table
#: too wide for the column even with every cell wrapped between words may scroll inside its own box (issue 54:
#: "stack or scroll"; the box is the table's nearest scroll container inside the article: the claim tables' wrapper,
#: a notebook output's ``div.output``) -- counted in ``scrolling`` -- but nothing else may overflow
_OVERFLOW_JS = """() => {
  const main = document.querySelector('main#main-content');
  const article = document.querySelector('article.bd-article');
  const out = [];
  const check = (what, el) => {
    if (el.scrollWidth > el.clientWidth + 1) out.push(`${what}: scrollWidth ${el.scrollWidth} > ${el.clientWidth}`);
  };
  check('document', document.documentElement);
  check('main', main);
  check('article', article);
  const right = article.getBoundingClientRect().right;
  let scrolling = 0;
  document.querySelectorAll('article.bd-article table').forEach((t, i) => {
    let box = t.parentElement;
    for (let el = t.parentElement; el && el !== article; el = el.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(el).overflowX)) { box = el; break; }
    }
    const scrolls = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
    if (scrolls && box.scrollWidth > box.clientWidth + 1) {
      scrolling += 1;
      const r = box.getBoundingClientRect().right;
      if (r > right + 1) out.push(`table ${i}'s box ends at ${r.toFixed(0)} px, the column at ${right.toFixed(0)} px`);
      return;
    }
    check(`table ${i} box`, box);
    const r = t.getBoundingClientRect().right;
    if (r > right + 1) out.push(`table ${i} ends at ${r.toFixed(0)} px, the column at ${right.toFixed(0)} px`);
  });
  return {problems: out, scrolling, tables: document.querySelectorAll('article.bd-article table').length};
}"""


#: the pages test_nothing_scrolls_sideways_at_1280_px checks one by one (with a screenshot each)
SIDEWAYS_PAGES = (
    *(f"papers/{p}.html" for p in ("000", "001", "002", "003", "004", "ref")),
    *("index.html", "sharp_edges.html", "explore/dpsgd.html", "api/experiments.html"),
)


@pytest.mark.parametrize("rel", SIDEWAYS_PAGES)
def test_nothing_scrolls_sideways_at_1280_px(docs_build: Path, docs_url: str, browser, screens, rel: str) -> None:  # noqa: ANN001
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{docs_url}/{rel}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=PAGE_TIMEOUT_MS)
        page.screenshot(path=str(screens / f"docs_1280_{rel.replace('/', '_')}.png"), full_page=False)
        tokens = page.evaluate(_BROKEN_TOKENS_JS)  # opens the folded rows first
        result = page.evaluate(_OVERFLOW_JS)
        if rel.startswith("papers/") and rel != "papers/ref.html":
            assert result["tables"] >= 3, f"{rel}: expected its claim tables, found {result['tables']}"
        assert not result["problems"], f"{rel} at 1280 px: " + "; ".join(result["problems"])
        assert not tokens["broken"], (
            f"{rel} at 1280 px: {len(tokens['broken'])} of {tokens['tokens']} table tokens broken across lines: "
            + ", ".join(repr(t) for t in tokens["broken"][:20])
        )
    finally:
        context.close()


def test_no_table_of_any_page_breaks_a_token_at_1280_px(docs_build: Path, docs_url: str, browser) -> None:  # noqa: ANN001
    """Every other page that holds a table -- the Markdown pages (running: ``(LeNet-5/MNIST,``) and the notebook
    pages, whose output tables broke ``2.482661e-05``, ``CIFAR-10`` and ``φD/√(Nn)`` before docs/build_site.py kept
    them whole -- breaks no token of a table cell and overflows only inside a table's scroll box."""
    rels = sorted(
        p.relative_to(docs_build).as_posix()
        for p in docs_build.rglob("*.html")
        if "<table" in p.read_text(encoding="utf-8")
        and p.name not in ("genindex.html", "search.html", "py-modindex.html")
    )
    rels = [r for r in rels if r not in SIDEWAYS_PAGES]
    assert any(r.startswith("notebooks/") for r in rels) and "running.html" in rels, rels
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    failures: list[str] = []
    try:
        page = context.new_page()
        for rel in rels:
            page.goto(f"{docs_url}/{rel}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
            tokens = page.evaluate(_BROKEN_TOKENS_JS)
            result = page.evaluate(_OVERFLOW_JS)
            if tokens["broken"]:
                failures.append(f"{rel}: {len(tokens['broken'])} of {tokens['tokens']} table tokens broken: "
                                + ", ".join(repr(t) for t in tokens["broken"][:10]))  # fmt: skip
            failures += [f"{rel}: {problem}" for problem in result["problems"]]
    finally:
        context.close()
    assert not failures, f"{len(failures)} problem(s) at 1280 px:\n" + "\n".join(failures[:40])


def test_an_explorer_page_shows_its_static_figure(docs_build: Path, docs_url: str, page) -> None:  # noqa: ANN001
    """The explorer's default state as a rendered image (the PNG stored beside its widget view), loaded."""
    page.goto(f"{docs_url}/explore/dpsgd.html", wait_until="load", timeout=PAGE_TIMEOUT_MS)
    page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=PAGE_TIMEOUT_MS)
    images = page.evaluate(
        "Array.from(document.querySelectorAll('article.bd-article .cell_output img'))"
        ".map(i => ({src: i.currentSrc, width: i.naturalWidth, shown: i.getBoundingClientRect().width}))"
    )
    assert images, "explore/dpsgd.html shows no rendered figure in its cell outputs"
    assert all(i["width"] > 100 and i["shown"] > 100 for i in images), images


def test_paper_pages_lead_with_findings_and_link_figures_to_their_cells(docs_build: Path) -> None:
    """The first section of a paper page is its findings; each figure's caption links into the notebook cell that
    draws it (the link test above checks that the cell's anchor exists)."""
    import re

    for paper in ("000", "001", "002", "003", "004"):
        text = (docs_build / "papers" / f"{paper}.html").read_text(encoding="utf-8")
        headings = re.findall(r"<h2[^>]*>(.*?)<", text)
        assert headings and headings[0].startswith("Findings"), f"papers/{paper}.html starts with {headings[:2]}"
        captions = re.findall(r"<figcaption>(.*?)</figcaption>", text, flags=re.S)
        linked = [c for c in captions if re.search(r'href="\.\./notebooks/[^"#]+\.html#nbcell-', c)]
        assert captions and len(linked) == len(captions) == text.count("<figure "), (
            f"papers/{paper}.html: {len(linked)} of {len(captions)} figures link to their cell"
        )


def _embedded_grids(html_text: str) -> list[dict]:
    """The explorer grids a page embeds (``docs/build_site.py``'s ``static_explorer_block``)."""
    import json
    import re

    found = re.findall(r'<div class="dpcore-static-explorer"[^>]*>\s*<script type="application/json">(.*?)</script>',
                       html_text, flags=re.S)  # fmt: skip
    return [json.loads(text.replace("<\\/", "</")) for text in found]


def test_explorer_pages_embed_grids_of_the_explorers_own_numbers(docs_build: Path) -> None:
    """Every explorer page embeds its grid(s); a few points of the DP-SGD grid are ``compute``'s and the library's."""
    from dpcore.accounting import dpsgd_epsilon
    from dpcore.explore import TOPICS, dpsgd

    for topic in TOPICS:
        grids = _embedded_grids((docs_build / "explore" / f"{topic}.html").read_text(encoding="utf-8"))
        assert grids and all(g["points"] and g["axes"] for g in grids), topic
    (grid,) = _embedded_grids((docs_build / "explore" / "dpsgd.html").read_text(encoding="utf-8"))
    axes = [a["values"] for a in grid["axes"]]
    n, delta = dpsgd.DEFAULTS["dataset_size"], dpsgd.DEFAULTS["delta"]
    for at in (0, len(grid["points"]) // 2, len(grid["points"]) - 1):
        i, rest = at, []
        for values in reversed(axes):
            rest.insert(0, values[i % len(values)])
            i //= len(values)
        sigma, batch, epochs = rest
        point = grid["points"][at]
        view = dpsgd.compute(**{**dpsgd.DEFAULTS, "sigma": sigma, "batch_size": batch, "epochs": epochs})
        for key, value in view.values.items():
            assert point["values"][key] == pytest.approx(value, rel=1e-6), (at, key)
        library = dpsgd_epsilon(sigma, sample_rate=batch / n, steps=int(view.values["steps"]), delta=delta)
        assert point["values"]["eps[pld]"] == pytest.approx(float(library), rel=1e-6)


#: what a static explorer shows: its read-out's text and its plot
_EXPLORER_STATE_JS = "b => b.querySelector('.dpcore-static-readout').textContent + b.querySelector('svg').innerHTML"


def test_explorer_pages_move_without_a_kernel(docs_build: Path, docs_url: str, browser, screens) -> None:  # noqa: ANN001
    """On every explorer page the sliders are drawn and each moves the read-out or the plot (no kernel: the page's
    grid); on DP-SGD's, moving σ one step changes the headline ε to the library's value at the new σ and redraws its
    line; on the shuffling page a button switches the sampling."""
    from dpcore.accounting import dpsgd_epsilon
    from dpcore.explore import TOPICS, dpsgd

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        stuck: list[str] = []
        for topic in TOPICS:
            page.goto(f"{docs_url}/explore/{topic}.html", wait_until="load", timeout=PAGE_TIMEOUT_MS)
            page.wait_for_selector(".dpcore-static-explorer.dpcore-static-ready", timeout=PAGE_TIMEOUT_MS)
            assert page.locator(".dpcore-static-explorer svg path[data-series]").count() >= 1, topic
            assert page.locator(".dpcore-static-explorer td.dpcore-value").count() >= 1, topic
            assert page.locator(".dpcore-static-explorer input[type=range]").count() >= 1, topic
            boxes = page.locator(".dpcore-static-explorer")
            for box in (boxes.nth(j) for j in range(boxes.count())):  # every slider moves the read-out or the plot
                sliders = box.locator("input[type=range]")
                for slider in (sliders.nth(i) for i in range(sliders.count())):
                    before = box.evaluate(_EXPLORER_STATE_JS)
                    slider.focus()
                    at_end = slider.evaluate("s => s.value === s.max")
                    page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")  # one step of the grid
                    if box.evaluate(_EXPLORER_STATE_JS) == before:
                        stuck.append(f"{topic}: {slider.get_attribute('aria-label')}")
        assert not stuck, f"sliders that change neither the read-out nor the plot: {stuck}"

        page.goto(f"{docs_url}/explore/dpsgd.html", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        box = page.locator(".dpcore-static-explorer.dpcore-static-ready").first
        box.wait_for(timeout=PAGE_TIMEOUT_MS)
        cell = box.locator("td.dpcore-value[data-key='eps[pld]']")
        line = box.locator("svg path[data-series^='pld']")
        before, d_before = float(cell.inner_text()), line.get_attribute("d")
        (grid,) = _embedded_grids((docs_build / "explore" / "dpsgd.html").read_text(encoding="utf-8"))
        sigma_axis = next(a for a in grid["axes"] if a["name"] == "sigma")
        at = {a["name"]: a["values"][a["default"]] for a in grid["axes"]}
        slider = box.locator("[data-axis='sigma'] input[type=range]")
        slider.focus()
        page.keyboard.press("ArrowRight")  # one step of the slider: the next σ of the grid (redrawn on "input")
        after, d_after = float(cell.inner_text()), line.get_attribute("d")
        sigma = sigma_axis["values"][sigma_axis["default"] + 1]
        assert box.locator("[data-axis='sigma'] output").inner_text() == f"{sigma:g}"
        steps = dpsgd.compute(**{**dpsgd.DEFAULTS, **at, "sigma": sigma}).values["steps"]
        n, delta = dpsgd.DEFAULTS["dataset_size"], dpsgd.DEFAULTS["delta"]
        library = dpsgd_epsilon(sigma, sample_rate=at["batch_size"] / n, steps=int(steps), delta=delta)
        assert after == pytest.approx(float(library), rel=1e-5) and after < before
        assert d_after != d_before, "the PLD line was not redrawn"
        page.screenshot(path=str(screens / "docs_explorer_dpsgd_moved.png"), full_page=True)

        page.goto(f"{docs_url}/explore/shuffling.html", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        box = page.locator(".dpcore-static-explorer.dpcore-static-ready").first
        box.wait_for(timeout=PAGE_TIMEOUT_MS)
        a1 = box.locator("td.dpcore-value[data-key='eps[A1]']")
        old = a1.inner_text()
        box.locator("[data-axis='sampling'] button", has_text="fixed").click()
        assert box.locator("[data-axis='sampling'] button[aria-checked=true]").inner_text() == "fixed"
        assert a1.inner_text() != old
    finally:
        context.close()
    assert not problems, problems


def test_every_committed_figure_is_on_its_notebooks_page(docs_build: Path) -> None:
    """Every PNG of every folder of the figures tree is a ``<figure>`` of a page of ``notebooks/<folder>/``, its caption
    naming the file and its image built into the site (the browser test below loads those of 003)."""
    import re

    missing = []
    folders = sorted(f for f in FIGURES.iterdir() if f.is_dir() and any(f.glob("*.png")))
    assert folders
    for folder in folders:
        figures = []
        for html in (docs_build / "notebooks" / folder.name).glob("*.html"):
            for block in re.findall(r"<figure\b.*?</figure>", html.read_text(encoding="utf-8"), flags=re.S):
                src = re.search(r'<img\b[^>]*\bsrc="([^"]+)"', block)
                if src and (html.parent / src.group(1)).resolve().is_file():
                    figures.append(block)
        for png in sorted(folder.glob("*.png")):
            if not any(f"figures/{folder.name}/{png.name}" in block for block in figures):
                missing.append(f"{folder.name}/{png.name}")
    assert not missing, f"committed figures shown on no notebook page: {missing}"


def test_notebook_pages_show_their_figures(docs_build: Path, docs_url: str, page) -> None:  # noqa: ANN001
    """Every figure of ``figures/003_shuffling_batch_clipping/`` shows, loaded, on the page of the notebook that draws
    it (issue 54: the pages printed ``{'png': PosixPath('figures/...')}``), and no notebook page prints such a dict."""
    folder = "003_shuffling_batch_clipping"
    pages = sorted((docs_build / "notebooks" / folder).glob("*.html"))
    assert pages
    shown: set[str] = set()
    for html in pages:
        rel = html.relative_to(docs_build).as_posix()
        assert "PosixPath(" not in html.read_text(encoding="utf-8"), rel
        page.goto(f"{docs_url}/{rel}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        page.evaluate("document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })")
        page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=PAGE_TIMEOUT_MS)
        images = page.evaluate(
            "Array.from(document.querySelectorAll('article.bd-article figure img'))"
            ".map(i => ({alt: i.alt, width: i.naturalWidth, shown: i.getBoundingClientRect().width}))"
        )
        assert all(i["width"] > 100 and i["shown"] > 100 for i in images), (rel, images)
        shown |= {i["alt"] for i in images}
    committed = {p.stem for p in (FIGURES / folder).glob("*.png")}
    assert committed and committed <= shown, f"not shown on any notebook page: {sorted(committed - shown)}"
