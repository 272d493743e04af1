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
