"""docs/build_site.py, the pages of issue 54 without Sphinx: table cells that break only between words and between the
parts of long keys, rows folded under ``<details>``, notebook pages that show the figures their cells write, and the
explorers' grids embedded in their pages (cached between builds).  The built site is checked in Chromium by
tests/browser/test_docs_site.py."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site_mod():
    spec = importlib.util.spec_from_file_location("dpcore_docs_pages_test", ROOT / "docs" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_long_keys_and_paths_may_break_between_their_parts_numbers_and_words_never(site_mod):
    soft = site_mod.soft_breaks
    assert soft("003.table3.mnist_sh_bc") == "003.<wbr>table3.<wbr>mnist_<wbr>sh_<wbr>bc"
    nowrap = '<span class="dpcore-nowrap">{}</span>'.format
    assert soft("figures/003_shuffling/fig1.png") == f"{nowrap('figures/003_')}<wbr>shuffling/<wbr>fig1.<wbr>png"
    assert soft("(ε_claimed, 1/n²)-ISRL-DP:") == f"(ε_claimed, 1/<wbr>{nowrap('n²)-ISRL-DP:')}"
    hashes = soft("table1/{dd0bd59dc6543bc4,c9de54b6d4997aa6}")
    assert hashes == f"{nowrap('table1/{')}<wbr>dd0bd59dc6543bc4,<wbr>c9de54b6d4997aa6}}"
    for unbroken in ("16909", "0.012345678901234", "16,909,000,000,000", "erratum", "e.g. a.b"):
        assert soft(unbroken) == unbroken
    assert soft("a &amp; b") == "a &amp; b"  # entities and short tokens untouched
    for kept in (
        "5.0375e-05",
        "1e-05",
        "16909/7",
        "L84-85",
        "ln(1/δ)/σ²,",
        "(CIFAR-10)",
        "8-9",
    ):  # browsers break these
        assert soft(f"x {kept} y") == f'x <span class="dpcore-nowrap">{kept}</span> y'
    assert soft("replace-one, inclusion–exclusion") == "replace-one, inclusion–exclusion"  # compounds of words
    assert site_mod.inline_code("see `dpcore.papers.p003_shuffling.bounds`") == (
        "see <code>dpcore.<wbr>papers.<wbr>p003_<wbr>shuffling.<wbr>bounds</code>"
    )


def test_markdown_and_notebook_output_tables_keep_numbers_and_formulas_whole(site_mod, tmp_path):
    """After Sphinx, the cells of the tables the site did not write (Markdown pages, notebooks' pandas outputs) get
    soft_breaks on their text -- not inside code, not twice -- and the claim tables (dpcore-table) are left alone."""
    nowrap = '<span class="dpcore-nowrap">{}</span>'.format
    page = (
        '<p>2.482661e-05 outside a table</p><table class="dataframe"><thead><tr><th>CIFAR-10</th></tr></thead>'
        "<tbody><tr><td>2.482661e-05</td><td><code>a-b/c</code> replace-one φD/√(Nn)</td>"
        f"<td>{nowrap('1-2')}<br/>003.table3.mnist_sh_bc</td></tr></tbody></table>"
        '<table class="table dpcore-table"><tr><td>5.0375e-05</td></tr></table>'
    )
    out = site_mod.whole_tokens_in_tables(page)
    assert out.startswith("<p>2.482661e-05 outside a table</p>")
    assert f"<th>{nowrap('CIFAR-10')}</th>" in out and f"<td>{nowrap('2.482661e-05')}</td>" in out
    assert f"<td><code>a-b/c</code> replace-one {nowrap('φD/√(Nn)')}</td>" in out
    assert f"<td>{nowrap('1-2')}<br/>003.<wbr>table3.<wbr>mnist_<wbr>sh_<wbr>bc</td>" in out
    assert out.endswith('<table class="table dpcore-table"><tr><td>5.0375e-05</td></tr></table>')
    assert site_mod.whole_tokens_in_tables(out) == out  # once is enough
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.html").write_text(page, encoding="utf-8")
    (tmp_path / "b.html").write_text("<p>no table: 1e-05</p>", encoding="utf-8")
    assert site_mod.keep_table_tokens_whole(tmp_path) == 1
    assert (tmp_path / "sub" / "a.html").read_text(encoding="utf-8") == out


def test_tables_fold_under_a_summary(site_mod):
    block = site_mod.html_table(["a", "b"], [["1", "2"]], fold="3 rows")
    assert block.startswith('```{raw} html\n<details class="dpcore-fold"><summary>3 rows</summary>')
    assert block.rstrip().endswith("</details>\n```") and 'data-label="a">1</td>' in block
    assert "<details" not in site_mod.html_table(["a"], [["1"]])
    with pytest.raises(ValueError, match="rows must have 2 cells"):
        site_mod.table_markup(["a", "b"], [["1"]])
    rows = [{"status": "reproduced"}, {"status": "reproduced"}, {"status": "erratum"}]
    assert site_mod.rows_summary(rows) == "3 rows: 2 reproduced, 1 erratum"


def test_notebook_pages_show_the_figures_their_cells_write(site_mod, tmp_path):
    """A cell that draws ``fig01`` gets the staged figure right under it; the dict ``report.figure`` returned goes."""
    key, folder = "003_x/training", "003_x"
    nb = nbformat.v4.new_notebook()
    dict_repr = "{'png': PosixPath('figures/003_x/fig01.png'),\n 'pdf': PosixPath('figures/003_x/fig01.pdf')}"
    code = nbformat.v4.new_code_cell("report.figure(fig, 'fig01')")
    code.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": dict_repr}, execution_count=1),
                    nbformat.v4.new_output("stream", text="kept\n")]  # fmt: skip
    label = nbformat.v4.new_markdown_cell(f"({site_mod.cell_label(key, 1)})=")
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), label, code, nbformat.v4.new_code_cell("x = 1")]
    staged = tmp_path / "notebooks" / f"{key}.ipynb"
    staged.parent.mkdir(parents=True)
    nbformat.write(nb, staged)
    (tmp_path / "figures" / folder).mkdir(parents=True)
    for name in ("fig01.png", "other.png"):
        (tmp_path / "figures" / folder / name).write_bytes(b"png")
    calls = site_mod.figure_calls("report.figure(fig, 'fig01')", key, 1)
    site = SimpleNamespace(src=tmp_path, drawing={folder: calls})
    assert site_mod.embed_figures(site, key) == 1
    cells = nbformat.read(staged, as_version=4).cells
    assert [o.get("text") for o in cells[2].outputs] == ["kept\n"]
    assert cells[3].cell_type == "markdown" and "```{figure} ../../figures/003_x/fig01.png" in cells[3].source
    assert "`figures/003_x/fig01.png`, written by the cell above." in cells[3].source
    assert cells[4].source == "x = 1" and "other" not in json.dumps([c.source for c in cells])


def test_explorer_grids_are_embedded_and_cached(site_mod, tmp_path):
    from dpcore.explore.static import Axis, StaticGrid
    from dpcore.explore.widgets import View

    calls = []

    def compute(*, x: float) -> View:
        calls.append(x)
        return View(values={"y": 2 * x}, labels={"y": "y"}, data={"line": ([0, 1], [0, x])}, title="</script>")

    grid = StaticGrid("g", compute, (Axis("x", "x", (1.0, 2.0)),), {}, lambda v: v.data, "x", "y")
    text, cached = site_mod.grid_json("topic", 0, grid, cache=tmp_path)
    assert not cached and calls == [1.0, 2.0] and json.loads(text)["points"][1]["values"] == {"y": 4.0}
    again, cached = site_mod.grid_json("topic", 0, grid, cache=tmp_path)
    assert cached and again == text and calls == [1.0, 2.0]
    other = StaticGrid("h", compute, (Axis("x", "x", (1.0, 2.0)),), {}, lambda v: v.data, "x", "y")
    assert not site_mod.grid_json("topic", 0, other, cache=tmp_path)[1]  # another grid: computed again
    block = site_mod.static_explorer_block("topic", 0, text)
    assert '<div class="dpcore-static-explorer" id="static-topic-0">' in block and '</script>"' not in block
    embedded = re.search(r'<script type="application/json">(.*)</script>', block).group(1)
    assert json.loads(embedded.replace("<\\/", "</")) == json.loads(text)
    assert [len(site_mod.explorer_grids(t)) for t in ("dpsgd", "calculators", "no-such-topic")] == [1, 2, 0]
