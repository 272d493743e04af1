"""The Voilà site of the explorers (``make explore``): a landing page that lists each explorer with a one-line
description, and pages that request nothing from the network.

Voilà 0.5's templates reach a CDN for icon fonts, which fails offline: the ``lab`` notebook page links Font
Awesome 5's ``all.min.css`` and ``v4-shims.min.css`` from cdn.jsdelivr.net (``voila/templates/lab/index.html.j2``,
:data:`CDN_LINKS`), and every page extending ``voila/templates/base/page.html`` (the tree page) links Font
Awesome 4.5 there, outside any block.  Voilà's own bundle (``static/voila-style.js``) already carries Font Awesome 5
with its fonts, so nothing is lost without them.  :func:`write_template` writes the ``dpcore`` template
(:data:`TEMPLATE`): the ``lab`` notebook page with :data:`CDN_LINKS` removed, and in place of Voilà's file list a
self-contained landing page (no base page, no CDN) with one row per notebook of ``notebooks/explore/``: its link and
its title, the first line of its first markdown cell (:func:`explorers`), so the description lives once, in the
notebook.

``python -m dpcore.explore.dashboard ROOT`` writes the template under ``ROOT/voila/templates/dpcore/``; Voilà finds
it with ``JUPYTER_PATH=ROOT`` and ``--template=dpcore`` (the Makefile's ``explore`` target).

Kernels that end with their page (issue 54).  Voilà starts one kernel per page view and shuts it down when the page
is left or closed: its widget manager sends ``navigator.sendBeacon(".../voila/api/shutdown/<kernel>")`` on
``beforeunload`` with the ``_xsrf`` form field copied from the ``_xsrf`` cookie.  Voilà 0.5's render page never sets
that cookie, so the beacon carried an empty token and the server refused it (403 "'_xsrf' argument missing from
POST"): every visit left a kernel of about 200 MB running until the server stopped.  :func:`set_xsrf_cookie`, Voilà's
``prelaunch_hook`` (``etc/voila.py``, loaded with ``--Voila.config_file_paths``: :data:`VOILA_OPTIONS`), reads the
handler's ``xsrf_token``, which makes Tornado set the cookie on the render page; XSRF protection stays on.  As a
safety net for a browser that dies without sending the beacon, ``etc/voila.py`` also culls kernels that have had no
connection for :data:`CULL_IDLE_SECONDS`.

Console noise, a packaging bug of Voilà that no setting of ours removes (issue 54).  Each notebook page logs 13
webpack module-federation notices ("Unsatisfied version … of shared singleton module …", one "No satisfying
version …"): Voilà 0.5.13's page bundle (``voila.js``) shares the JupyterLab 4.2.5 packages (services 7.2.5,
coreutils 6.2.5), while the two federated extensions it must load were built against newer ones -- its own
``@voila-dashboards/widgets-manager8`` 0.5.13 requires ``^4.5.10`` (4 notices) and jupyterlab_widgets 3.0.17's
``@jupyter-widgets/jupyterlab-manager`` (the version ipywidgets 8.1.9 requires) ``^4.6.2`` (9 notices).  Webpack
uses the 4.2.5 singletons anyway and the widgets work (tests/browser/test_voila.py).  Upstream:
voila-dashboards/voila#1539 (open; the same notices against Voilà's 4.2.5 core) and #1514.  What was tried:
``VoilaConfiguration.extension_denylist`` of the jupyterlab-manager removes its 9 notices but breaks every widget
("No version of module @jupyter-widgets/base is registered"); Voilà 0.5.10, 0.5.12 and 0.5.13 all ship the
mismatch (0.5.8's widgets-manager8 requires ``^4.2.5``, jupyterlab_widgets 3.0.13's manager ``^4.2.4``), so silence
by pins would mean voila 0.5.8, jupyterlab_widgets 3.0.13 and an ipywidgets older than 8.1.9 (which requires
jupyterlab_widgets ~=3.0.17) -- a year of fixes back, for a console message -- which the project does not take.  The
notebook page's script :data:`SHARE_SCOPE_NOTICE_JS` therefore logs exactly the messages of
:data:`SHARE_SCOPE_NOTICES` (for the versions :data:`SHARE_SCOPE_NOTICES_FOR`; a test fails when a pin moves) at
debug level (the browser's "Verbose" level); any other warning, including another version notice, stays a warning,
and the browser test asserts there is none.
"""

from __future__ import annotations

import argparse
import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from dpcore.paths import notebooks_dir, repo_root

__all__ = [
    "TEMPLATE", "CDN_LINKS", "VOILA_OPTIONS", "CULL_IDLE_SECONDS", "SHARE_SCOPE_NOTICES", "SHARE_SCOPE_NOTICES_FOR",
    "SHARE_SCOPE_NOTICE_JS", "Explorer", "explorers",
    "landing_page", "write_template", "set_xsrf_cookie", "main",
]  # fmt: skip

#: The name of the Voilà template (``--template=dpcore``).
TEMPLATE = "dpcore"
#: The stylesheet links of Voilà's ``lab`` notebook page that fetch Font Awesome from a CDN (removed).
CDN_LINKS: tuple[str, ...] = (
    '<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@^5/css/all.min.css" '
    'type="text/css" />',
    '<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@^5/css/v4-shims.min.css" '
    'type="text/css" />',
)

#: Voilà's options of ``make explore`` and of the browser tests besides the template: load ``etc/voila.py`` (the
#: shutdown fix and the culler).
VOILA_OPTIONS: tuple[str, ...] = (f"--Voila.config_file_paths={repo_root() / 'etc'}",)
#: seconds without a connected page after which ``etc/voila.py`` has Voilà cull a kernel (a page that died without
#: sending its shutdown beacon); checked every minute.
CULL_IDLE_SECONDS = 600
#: The installed versions :data:`SHARE_SCOPE_NOTICES` were read from (tests/explore/test_dashboard.py fails when a pin
#: moves: rerun tests/browser/test_voila.py without the list and write down what the console shows then).
SHARE_SCOPE_NOTICES_FOR: dict[str, str] = {"voila": "0.5.13", "jupyterlab_widgets": "3.0.17", "ipywidgets": "8.1.9"}
_CORE = "from _JUPYTERLAB.CORE_OUTPUT of shared singleton module"
#: Every console warning of a Voilà notebook page that :data:`SHARE_SCOPE_NOTICE_JS` logs at debug level, verbatim:
#: webpack's notices that the JupyterLab 4.2.5 packages of Voilà 0.5.13's page do not satisfy the ranges of
#: jupyterlab_widgets 3.0.17's jupyterlab-manager (``^4.6.2``) and of Voilà's own widgets-manager8 (``^4.5.10``)
#: (voila-dashboards/voila#1539; module docstring).
SHARE_SCOPE_NOTICES: tuple[str, ...] = (
    *(f"Unsatisfied version 4.2.5 {_CORE} @jupyterlab/{name} (required ^4.6.2)"
      for name in ("console", "logconsole", "mainmenu", "notebook", "rendermime", "settingregistry", "translation")),
    f"Unsatisfied version 7.2.5 {_CORE} @jupyterlab/services (required ^7.6.2)",
    "No satisfying version (^4.6.2) of shared module @jupyterlab/outputarea found in shared scope default.\n"
    "Available versions: 4.2.5 from _JUPYTERLAB.CORE_OUTPUT",
    *(f"Unsatisfied version 4.2.5 {_CORE} @jupyterlab/{name} (required ^4.5.10)" for name in ("rendermime", "statedb")),
    f"Unsatisfied version 7.2.5 {_CORE} @jupyterlab/services (required ^7.5.10)",
    f"Unsatisfied version 6.2.5 {_CORE} @jupyterlab/coreutils (required ^6.5.10)",
)  # fmt: skip
#: The notebook page's script: a ``console.warn`` whose message is one of :data:`SHARE_SCOPE_NOTICES` (verbatim) goes
#: to ``console.debug`` with the prefix ``[share-scope notice]``; every other call is passed on unchanged.
SHARE_SCOPE_NOTICE_JS = """<script>
(function () {
  /* dpcore (dpcore/explore/dashboard.py): Voila 0.5.13's page shares JupyterLab 4.2.5, its widgets-manager8 and
     jupyterlab_widgets 3.0.17 were built against 4.5.10 and 4.6.2 (voila-dashboards/voila#1539). Exactly these
     notices go to the debug level; everything else is untouched. */
  var notices = new Set(NOTICES);
  var warn = console.warn;
  console.warn = function () {
    if (arguments.length === 1 && notices.has(arguments[0])) {
      console.debug("[share-scope notice] " + arguments[0]);
      return;
    }
    return warn.apply(console, arguments);
  };
})();
</script>""".replace("NOTICES", json.dumps(list(SHARE_SCOPE_NOTICES)))


def set_xsrf_cookie(req: Any, notebook: Any = None, cwd: str = "") -> None:
    """Voilà's ``prelaunch_hook`` (``etc/voila.py``): read the handler's ``xsrf_token``, so that Tornado sets the
    ``_xsrf`` cookie on the notebook page and the page's shutdown beacon passes the XSRF check (module docstring).
    Returns None: the notebook is left as it is."""
    token = getattr(req, "xsrf_token", None)
    if not token:
        raise ValueError(f"req must be a Tornado request handler with an xsrf_token, got {type(req).__name__}")


class Explorer(NamedTuple):
    """One explorer notebook: its file name (relative to the served folder) and its one-line description."""

    path: str
    title: str


def explorers(folder: Path | None = None) -> list[Explorer]:
    """The notebooks of ``folder`` (default ``notebooks/explore/``), sorted by file name, each with the first line of
    its first markdown cell, ``#`` marks removed; ``ValueError`` for a folder without notebooks or a notebook whose
    first markdown cell does not open with a ``#`` title."""
    root = Path(notebooks_dir() / "explore" if folder is None else folder)
    paths = sorted(p for p in root.glob("*.ipynb") if p.is_file())
    if not paths:
        raise ValueError(f"folder must hold explorer notebooks (*.ipynb), found none in {root}")
    out = []
    for path in paths:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        markdown = next((c for c in cells if c.get("cell_type") == "markdown"), None)
        source = "" if markdown is None else "".join(markdown.get("source", ""))
        first = source.strip().splitlines()[0] if source.strip() else ""
        if not first.startswith("#"):
            raise ValueError(f"{path.name}: its first markdown cell must open with a '# title' line (the landing "
                             f"page's description), got {first[:60]!r}")  # fmt: skip
        out.append(Explorer(path.name, first.lstrip("#").strip()))
    return out


_LANDING = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>dpcore explorers</title>
<link rel="icon" href="data:,">
<style>
  body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; background: #f5f5f5;
         color: #212121; }}
  main {{ max-width: 960px; margin: 48px auto; padding: 0 24px; }}
  h1 {{ font-size: 1.6em; margin-bottom: 0.2em; }}
  p.lead {{ color: #555; margin-top: 0; }}
  ul.explorers {{ list-style: none; padding: 0; margin: 24px 0; background: #fff; border: 1px solid #ddd;
                  border-radius: 4px; }}
  ul.explorers li {{ border-bottom: 1px solid #eee; }}
  ul.explorers li:last-child {{ border-bottom: none; }}
  ul.explorers a {{ display: block; padding: 14px 18px; color: inherit; text-decoration: none; }}
  ul.explorers a:hover {{ background: #eef4fb; }}
  .title {{ font-weight: 600; color: #1565c0; }}
  .file {{ color: #777; font-size: 0.85em; margin-left: 0.6em; }}
</style>
</head>
<body>
<main>
<h1>dpcore explorers</h1>
<p class="lead">Interactive views of the library's accountants and the papers' calculators. Each opens in a new
tab and starts its own kernel; move a control and the numbers and curves are recomputed by the library.</p>
<ul class="explorers">
{rows}
</ul>
</main>
</body>
</html>
"""


def landing_page(entries: Sequence[Explorer]) -> str:
    """The landing page (a Jinja template for Voilà's tree handler, which supplies ``base_url`` and ``query``): one
    link per explorer to ``voila/render/<file>``, with its description; escaped for HTML and for Jinja."""
    if not entries:
        raise ValueError("entries must list at least one explorer")
    rows = []
    for entry in entries:
        if not isinstance(entry, Explorer):
            raise ValueError(f"entries must be Explorer values, got {entry!r}")
        path, title = html.escape(entry.path), html.escape(entry.title)
        rows.append(
            f'<li><a href="{{{{ base_url }}}}voila/render/{{% raw %}}{path}{{% endraw %}}?{{{{ query }}}}" '
            f'target="_blank" rel="noopener"><span class="title">{{% raw %}}{title}{{% endraw %}}</span>'
            f'<span class="file">{{% raw %}}{path}{{% endraw %}}</span></a></li>'
        )
    return _LANDING.format(rows="\n".join(rows))


_INDEX = """{{%- extends 'voila/templates/lab/index.html.j2' -%}}
{{#- Voilà's lab notebook page without its Font Awesome CDN links (dpcore.explore.dashboard.CDN_LINKS): voila-style.js
    bundles the same icons, and offline the CDN requests fail. -#}}
{{%- block notebook_css -%}}
{{{{ super(){replaces} }}}}
{{%- endblock notebook_css -%}}
{{#- After Voilà's console wrapper: webpack's share-scope version notices at debug level (SHARE_SCOPE_NOTICE_JS). -#}}
{{%- block html_head_js -%}}
{{{{ super() }}}}
{{% raw %}}{notice}{{% endraw %}}
{{%- endblock html_head_js -%}}
"""


def write_template(root: Path, folder: Path | None = None) -> Path:
    """Write the ``dpcore`` Voilà template under ``root/voila/templates/dpcore/`` (``conf.json``, the notebook page
    ``index.html.j2``, the landing page as ``tree.html`` and ``tree-lab.html``) for the notebooks of ``folder``
    (default ``notebooks/explore/``); returns the template's folder.  Files of an earlier call are replaced."""
    entries = explorers(folder)
    target = Path(root) / "voila" / "templates" / TEMPLATE
    target.mkdir(parents=True, exist_ok=True)
    (target / "conf.json").write_text(json.dumps({"base_template": "lab"}, indent=2) + "\n", encoding="utf-8")
    replaces = "".join(f" | replace({json.dumps(link)}, '')" for link in CDN_LINKS)
    (target / "index.html.j2").write_text(
        _INDEX.format(replaces=replaces, notice=SHARE_SCOPE_NOTICE_JS), encoding="utf-8"
    )
    page = landing_page(entries)
    for name in ("tree.html", "tree-lab.html"):  # Voilà's classic and lab file lists: both are the landing page
        (target / name).write_text(page, encoding="utf-8")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dpcore.explore.dashboard ROOT [--notebooks FOLDER]``: write the template, print its folder."""
    parser = argparse.ArgumentParser(prog="python -m dpcore.explore.dashboard", description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, help="folder to use as JUPYTER_PATH (the template goes to voila/templates/)")
    parser.add_argument(
        "--notebooks", type=Path, default=None, help="the explorer notebooks (default notebooks/explore)"
    )
    args = parser.parse_args(argv)
    print(write_template(args.root, args.notebooks))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
