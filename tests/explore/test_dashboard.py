"""dpcore.explore.dashboard: the Voilà landing page lists every explorer with its title, and the ``dpcore`` template
removes the CDN links of Voilà's ``lab`` page (issue 43: the index listed file names only; offline, two icon-font
requests failed).  The served pages are checked over HTTP in tests/browser/test_voila.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from dpcore.explore import TOPICS, dashboard
from dpcore.paths import notebooks_dir


def test_every_explorer_is_listed_with_the_title_of_its_notebook():
    entries = dashboard.explorers()
    assert [e.path for e in entries] == sorted(f"{topic}.ipynb" for topic in TOPICS)
    for entry in entries:
        nb = nbformat.read(notebooks_dir() / "explore" / entry.path, as_version=4)
        first = next(c for c in nb.cells if c.cell_type == "markdown").source.splitlines()[0]
        assert first == f"# {entry.title}" and len(entry.title) > 20, entry


def test_the_template_is_a_landing_page_without_cdn_requests(tmp_path):
    target = dashboard.write_template(tmp_path)
    assert target == tmp_path / "voila" / "templates" / "dpcore"
    assert json.loads((target / "conf.json").read_text()) == {"base_template": "lab"}
    for name in ("tree.html", "tree-lab.html"):
        page = (target / name).read_text()
        assert "extends" not in page and not re.search(r"(href|src)=\"https?://", page), name  # no base page, no CDN
        for entry in dashboard.explorers():
            assert f"voila/render/{{% raw %}}{entry.path}{{% endraw %}}" in page
            assert f"{{% raw %}}{entry.title.replace('&', '&amp;')}{{% endraw %}}" in page
    index = (target / "index.html.j2").read_text()
    assert index.startswith("{%- extends 'voila/templates/lab/index.html.j2' -%}")
    for link in dashboard.CDN_LINKS:
        assert json.dumps(link) in index


def test_the_links_removed_are_those_voila_ships():
    """If a Voilà upgrade changes its lab page, the links to remove change: this says so."""
    from jupyter_core.paths import jupyter_path

    lab = next(p for p in map(Path, jupyter_path("voila", "templates", "lab", "index.html.j2")) if p.exists())
    text = lab.read_text()
    for link in dashboard.CDN_LINKS:
        assert link in text
    assert not set(re.findall(r"<link[^>]*https?://[^>]*>", text)) - set(dashboard.CDN_LINKS)


def test_landing_page_escapes_and_validates(tmp_path):
    page = dashboard.landing_page([dashboard.Explorer("a&b.ipynb", "x < y {{ z }}")])
    assert "{% raw %}x &lt; y {{ z }}{% endraw %}" in page and "a&amp;b.ipynb" in page
    with pytest.raises(ValueError, match="entries"):
        dashboard.landing_page([])
    with pytest.raises(ValueError, match="entries"):
        dashboard.landing_page([("a.ipynb", "t")])
    with pytest.raises(ValueError, match="folder"):
        dashboard.explorers(tmp_path)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("no title")]), tmp_path / "x.ipynb")
    with pytest.raises(ValueError, match="title"):
        dashboard.explorers(tmp_path)


def test_main_writes_the_template(tmp_path, capsys):
    assert dashboard.main([str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "voila" / "templates" / "dpcore")


def test_pages_set_the_xsrf_cookie_their_shutdown_beacon_needs():
    """Issue 54: etc/voila.py (loaded by `make explore` and the browser tests) makes leaving a page shut its kernel
    down: the prelaunch hook reads the handler's xsrf_token (Tornado then sets the _xsrf cookie) and a culler ends
    kernels whose page died without a beacon.  tests/browser/test_voila.py counts the kernels."""
    from traitlets.config import Config

    from dpcore.paths import repo_root

    etc = repo_root() / "etc"
    assert dashboard.VOILA_OPTIONS == (f"--Voila.config_file_paths={etc}",)
    make = (repo_root() / "Makefile").read_text()
    assert "--Voila.config_file_paths=$(CURDIR)/etc" in make
    namespace = {"get_config": lambda: namespace.setdefault("c", Config())}
    exec(compile((etc / "voila.py").read_text(), str(etc / "voila.py"), "exec"), namespace)
    c = namespace["c"]
    assert c.VoilaConfiguration.prelaunch_hook is dashboard.set_xsrf_cookie
    assert c.MappingKernelManager.cull_idle_timeout == dashboard.CULL_IDLE_SECONDS > 0

    class Handler:
        xsrf_token = b"2|abcd|ef01|1234"
        read = 0

        def __getattribute__(self, name):
            if name == "xsrf_token":
                type(self).read += 1
            return object.__getattribute__(self, name)

    assert dashboard.set_xsrf_cookie(Handler(), None, "") is None and Handler.read == 1
    with pytest.raises(ValueError, match="req"):
        dashboard.set_xsrf_cookie(object(), None, "")


def test_share_scope_notices_are_debug_level_and_nothing_else_is(tmp_path):
    """The notebook page's script demotes exactly the messages of SHARE_SCOPE_NOTICES, verbatim (module docstring):
    the list is what the page logs, checked by tests/browser/test_voila.py; a near miss stays a warning."""
    index = (dashboard.write_template(tmp_path) / "index.html.j2").read_text()
    assert "{%- block html_head_js -%}" in index and dashboard.SHARE_SCOPE_NOTICE_JS in index
    assert index.index("super()", index.index("html_head_js")) < index.index("<script>")  # after Voilà's wrapper
    listed = re.search(r"var notices = new Set\((\[.*?\])\);", dashboard.SHARE_SCOPE_NOTICE_JS).group(1)
    assert tuple(json.loads(listed)) == dashboard.SHARE_SCOPE_NOTICES
    assert len(set(dashboard.SHARE_SCOPE_NOTICES)) == len(dashboard.SHARE_SCOPE_NOTICES) == 13
    assert "voila-dashboards/voila#1539" in dashboard.SHARE_SCOPE_NOTICE_JS
    assert "notices.has(arguments[0])" in dashboard.SHARE_SCOPE_NOTICE_JS  # a Set lookup: no pattern, no prefix match


def test_share_scope_notices_name_the_installed_versions():
    """SHARE_SCOPE_NOTICES were read off the console with these packages installed; when a pin moves, the list must
    be read again (tests/browser/test_voila.py shows any notice that is not listed as a warning)."""
    from importlib.metadata import version

    installed = {name: version(name) for name in dashboard.SHARE_SCOPE_NOTICES_FOR}
    assert installed == dashboard.SHARE_SCOPE_NOTICES_FOR, (
        "a pin moved: rerun tests/browser/test_voila.py, update SHARE_SCOPE_NOTICES to what the console shows "
        f"(none, ideally) and SHARE_SCOPE_NOTICES_FOR to {installed}"
    )
