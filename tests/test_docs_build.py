"""docs/build_site.py without Sphinx: statuses, findings, the figure -> notebook cell -> claims links, the explorers'
static outputs and the repository's absolute path (issue 41).  The site in a browser: tests/browser/test_docs_site.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load():
    spec = importlib.util.spec_from_file_location("dpcore_docs_build_site_test", ROOT / "docs" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


site_mod = _load()
WIDGET = site_mod.WIDGET_MIME


# ------------------------------------------------------------------------------------------------
# statuses
# ------------------------------------------------------------------------------------------------
def test_the_site_knows_exactly_the_statuses_of_the_claims_code():
    from dpcore.claims import STATUSES

    assert site_mod.STATUSES == STATUSES


@pytest.mark.parametrize("status", ["differs-explained", "", "reproduced ", "unknown"])
def test_an_unknown_status_is_an_error_everywhere(status):
    with pytest.raises(ValueError, match="status must be one of"):
        site_mod.status_cell(status)
    with pytest.raises(ValueError, match="status must be one of"):
        site_mod.status_label(status)
    with pytest.raises(ValueError, match=r"status must be one of .*rows: 000/k"):
        site_mod.counts([{"paper": "000", "key": "k", "source": "printed", "status": status}])


def test_the_retired_status_says_what_to_do():
    with pytest.raises(ValueError, match="make figures"):
        site_mod.check_status("differs-explained")


def test_counts_and_badges_of_every_status():
    rows = [{"paper": "000", "key": f"k{i}", "source": "printed", "status": s} for i, s in enumerate(site_mod.STATUSES)]
    rows.append({"paper": "000", "key": "c", "source": "consistency", "status": "reproduced"})
    rows += [{"paper": "003", "key": "b", "source": "audit", "status": "not-run"}]  # audit rows: own statuses
    c = site_mod.counts(rows)
    assert all(c[s] == 1 for s in site_mod.STATUSES if s != "not-run") and c["consistency"] == c["consistency-ok"] == 1
    assert c["not-run"] == 2  # an own check not run is not run (issue 50: one count, dpcore.verdicts)
    from dpcore.claims import OWN_CHECKS

    assert site_mod.OWN_CHECKS == OWN_CHECKS
    assert site_mod.finding_badge("audit") == (
        '<span class="dpcore-status dpcore-audit">audit of the authors&#x27; code</span>'
    )
    assert site_mod.finding_badge("erratum") == site_mod.status_cell("erratum")
    assert site_mod.status_cell("not-reproduced") == (
        '<span class="dpcore-status dpcore-not-reproduced">not reproduced</span>'
    )
    css = (ROOT / "docs" / "_static" / "dpcore.css").read_text(encoding="utf-8")
    for status in (*site_mod.STATUSES, "audit"):
        assert f".dpcore-{status} " in css, f"dpcore.css has no colour for {status}"


def test_the_fallback_verdict_names_each_kind_of_miss():
    zero = dict.fromkeys(site_mod.STATUSES, 0)
    assert site_mod.verdict({**zero, "reproduced": 3}, None) == "every number run at the quick profile is reproduced"
    line = site_mod.verdict({**zero, "erratum": 2, "not-reproduced": 1}, {**zero, "inconclusive": 1})
    assert "2 printed number(s) wrong" in line and "1 result(s) not reproduced at either profile" in line
    assert "1 claim(s) the data cannot decide" in line and "is reproduced" not in line


def test_html_table_rows_must_match_the_header():
    with pytest.raises(ValueError, match="rows must have 2 cells"):
        site_mod.html_table(["a", "b"], [["1"]])
    assert 'data-label="a"' in site_mod.html_table(["a"], [["1"]])


# ------------------------------------------------------------------------------------------------
# explorers: the PNG beside the widget view stays; no absolute path of the repository
# ------------------------------------------------------------------------------------------------
def _explorer_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    injected = nbformat.v4.new_code_cell(f'figures_dir = "{ROOT}/figures/explore"\nprofile = "quick"')
    injected.metadata["tags"] = [site_mod.INJECTED_TAG]
    shown = nbformat.v4.new_code_cell("explorer")
    shown.outputs = [
        nbformat.v4.new_output(
            "execute_result",
            data={WIDGET: {"model_id": "abc"}, "image/png": "iVBORw0KGgo=", "text/plain": "DP-SGD explorer"},
            execution_count=1,
        ),
        nbformat.v4.new_output("display_data", data={WIDGET: {"model_id": "def"}}),
        nbformat.v4.new_output("stream", name="stderr", text=f"{ROOT}/.venv/lib/x.py:1: UserWarning: w\n"),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# Explorer"), injected, shown]
    nb.metadata["widgets"] = {"state": {}}
    nb.metadata["papermill"] = {"input_path": f"{ROOT}/notebooks/explore/x.ipynb"}
    return nb


def test_widget_views_go_and_the_static_png_stays():
    nb = _explorer_notebook()
    site_mod._drop_widgets(nb)
    outputs = nb.cells[2].outputs
    assert len(outputs) == 2, "a widget-only output goes, the explorer's bundle and the stream stay"
    assert set(outputs[0].data) == {"image/png", "text/plain"}
    assert "widgets" not in nb.metadata


def test_no_absolute_path_of_the_repository_stays_in_a_staged_notebook():
    nb = _explorer_notebook()
    site_mod._relative_paths(nb)
    text = nbformat.writes(nb)
    assert str(ROOT) not in text
    assert nb.cells[1].source.startswith('figures_dir = "figures/explore"')
    assert nb.cells[2].outputs[2].text.startswith(".venv/lib/x.py:1")
    assert site_mod.relative_text(f"cd {ROOT} && ls {ROOT}/figures") == "cd . && ls figures"


# ------------------------------------------------------------------------------------------------
# figure -> cell -> claims
# ------------------------------------------------------------------------------------------------
FIGURE_CELL = """\
for name, chosen in (("fig5_insurance", a), ("fig8_insurance", b)):
    report.figure(fig, name, data=None)
report.figure(fig, f"fig{no}_utility_graph_{ds}")
plt.figure(1, 2)
"""


def test_figure_calls_resolve_strings_f_strings_and_loop_variables():
    calls = site_mod.figure_calls("%matplotlib inline\n" + FIGURE_CELL, "001_isrl_dp/x", 3)
    patterns = {c.pattern for c in calls}
    assert patterns == {"fig5_insurance", "fig8_insurance", "fig.+_utility_graph_.+"}
    assert {c.label for c in calls} == {"nbcell-001-isrl-dp-x-3"}
    assert site_mod.figure_calls("def broken(:\n", "a/b", 0) == []


def test_the_most_specific_call_wins_and_a_tie_is_no_guess():
    generic = site_mod.FigureCall("a/one", 1, "fig.+_.+_.+", 3)
    specific = site_mod.FigureCall("a/one", 2, "fig.+_utility_graph_.+", 18)
    assert site_mod.drawn_by([generic, specific], "fig04_utility_graph_a9a") == specific
    assert site_mod.drawn_by([generic, specific], "fig01_strongly_convex_a9a") == generic
    other = site_mod.FigureCall("a/two", 5, "fig.+_.+_.+", 3)
    assert site_mod.drawn_by([generic, other], "fig01_strongly_convex_a9a") is None
    assert site_mod.drawn_by([specific], "sigma_vs_epsilon") is None


def test_labels_go_before_the_drawing_cells_and_number_cells_as_committed():
    nb = nbformat.v4.new_notebook()
    injected = nbformat.v4.new_code_cell("profile = 'paper'")
    injected.metadata["tags"] = [site_mod.INJECTED_TAG]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# T"),
        nbformat.v4.new_code_cell("profile = 'quick'"),
        injected,
        nbformat.v4.new_code_cell('report.figure(fig, "fig3_amplification")'),
    ]
    calls = site_mod._label_figure_cells(nb, "002_modelmix/acc")
    assert [(c.cell, c.pattern) for c in calls] == [(2, "fig3_amplification")]
    assert nb.cells[3].source == "(nbcell-002-modelmix-acc-2)="
    assert nb.cells[4].source.startswith("report.figure")


@pytest.mark.parametrize(
    ("artifact", "refs"),
    [
        ("Figs 1(c), 2(c), 11, 12", {("fig", 1), ("fig", 2), ("fig", 11), ("fig", 12)}),
        ("Fig. 3c / Fig. 13", {("fig", 3), ("fig", 13)}),
        ("Fig. 6 (MNIST) / Fig. 3a", {("fig", 6), ("fig", 3)}),
        ("Table II (authors' script)", {("table", 2)}),
        ("Figs. 8-9, mode authors_batch_mean", {("fig", 8), ("fig", 9)}),
        ("Table 1 row 3", {("table", 1)}),
        ("Tables 3–5", {("table", 3), ("table", 4), ("table", 5)}),
        ("App. I.1", set()),
        ("Corollary 4.1", set()),
    ],
)
def test_artifact_refs(artifact, refs):
    assert site_mod.artifact_refs(artifact) == refs


def test_stem_refs():
    assert site_mod.stem_refs("fig01_strongly_convex_ijcnn1") == {("fig", 1)}
    assert site_mod.stem_refs("table1_printed_vs_ours") == {("table", 1)}
    assert site_mod.stem_refs("tables_6_8_sample_sizes") == {("table", 6), ("table", 8)}
    assert site_mod.stem_refs("why_ours_differs_mnist") == set()
    assert site_mod.stem_refs("figure_of_merit") == set()


def _real_calls() -> dict[str, list]:
    from dpcore.papers import notebook_claims

    drawing: dict[str, list] = {}
    for key in sorted({nb.notebook for nb in notebook_claims()}):
        nb = nbformat.read(ROOT / "notebooks" / f"{key}.ipynb", as_version=4)
        drawing.setdefault(key.split("/")[0], []).extend(site_mod._label_figure_cells(nb, key))
    return drawing


def test_every_committed_figure_of_a_paper_page_is_drawn_by_a_known_cell():
    """Each PNG the paper pages show (figures/<folder>/, figures/paper/<folder>/) is matched to exactly one notebook
    cell of its folder: a renamed figure or a call this matcher cannot read fails here, not silently on the page."""
    drawing = _real_calls()
    missing = []
    for folder, calls in drawing.items():
        for base in (ROOT / "figures", ROOT / "figures" / "paper"):
            for png in sorted((base / folder).glob("*.png")):
                if site_mod.drawn_by(calls, png.stem) is None:
                    missing.append(str(png.relative_to(ROOT)))
    assert not missing, f"no (or no unique) drawing cell for: {missing}"


def test_a_figure_decides_the_claims_naming_its_number():
    from dpcore.papers import all_specs, notebook_claims

    fake = SimpleNamespace(specs=all_specs(), notebooks=notebook_claims())
    keys = site_mod.decided_keys(fake, "003", "003_shuffling_batch_clipping/training", "table3_printed_vs_ours")
    artifacts = {s.key: s.artifact for s in fake.specs if s.paper == "003"}
    assert keys and all("Table 3" in artifacts[k] for k in keys)
    assert len(keys) == sum("Table 3" in a for a in artifacts.values()), "every Table 3 claim of the notebook"
    assert site_mod.decided_keys(fake, "003", "003_shuffling_batch_clipping/training", "why_ours_differs_mnist") == []


# ------------------------------------------------------------------------------------------------
# paper pages: findings first
# ------------------------------------------------------------------------------------------------
def _site(tmp_path: Path, findings) -> object:  # noqa: ANN001
    import csv

    figures = tmp_path / "figures"
    figures.mkdir()
    rows = list(csv.DictReader((ROOT / "figures" / "claims.csv").open(encoding="utf-8")))
    rows = [{**r, "status": "erratum" if r["status"] == "differs-explained" else r["status"]} for r in rows]
    rows = [r for r in rows if r["paper"] == "004"]
    with (figures / "claims.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    site = site_mod.Site(tmp_path / "src", "quick", figures=figures)
    site.findings = findings
    return site


def test_a_paper_page_starts_with_its_findings(tmp_path):
    from dpcore.claims import Finding

    finding = Finding(
        paper="004",
        key="theorem2",
        kind="reproduced",
        text="Theorem 2's `delta` bound holds <on every instance>.",
        short="Theorem 2 holds",
        conclusion=True,
        keys=("*",),
        evidence="dpcore.papers.p004_contraction",
    )
    findings = site_mod.Findings((finding,), lambda paper, fs, rows: f"{paper}: " + "; ".join(f.short for f in fs))
    page = site_mod.paper_page(_site(tmp_path, findings), "004", {})
    sections = [line for line in page.splitlines() if line.startswith("## ")]
    assert sections[0] == "## Findings"
    assert "**Verdict:** 004: Theorem 2 holds." in page
    assert "<code>delta</code> bound holds &lt;on every instance&gt;" in page
    assert "changes a conclusion" in page and 'id="finding-004-theorem2"' in page


def test_without_the_findings_api_the_page_says_so(tmp_path):
    page = site_mod.paper_page(_site(tmp_path, None), "004", {})
    assert page.splitlines().index("## Findings") < page.splitlines().index("## Counts")
    assert site_mod.NO_FINDINGS_API.capitalize() in page


def test_the_verdict_table_uses_the_findings_verdict_line(tmp_path):
    findings = site_mod.Findings((), lambda paper, fs, rows: f"plain verdict of {paper} | {len(rows)} rows")
    text = site_mod.verdicts_fragment(_site(tmp_path, findings), links=False)
    assert "plain verdict of 004 \\| " in text
