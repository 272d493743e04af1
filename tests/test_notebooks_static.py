"""Committed notebooks: no outputs, a `parameters` cell, an entry in every profile, no function defined in a cell."""

import ast

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from dpcore.paths import notebooks_dir
from dpcore.runner import discover, load_profile, notebook_key

NOTEBOOKS = discover()
#: every tracked notebook, the runner's and the others (explorers' dashboards), outside Jupyter's checkpoints
ALL_NOTEBOOKS = sorted(p for p in notebooks_dir().rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
#: what a notebook cell may not define (issue 43: code lives in the library, where it is tested and documented)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def test_there_are_notebooks():
    assert any(notebook_key(p) == "00_accounting/dpsgd_accountants" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[notebook_key(p) for p in NOTEBOOKS])
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.outputs, f"{path.name}: cell {index} has outputs"
            assert cell.execution_count is None, f"{path.name}: cell {index} has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[notebook_key(p) for p in NOTEBOOKS])
def test_has_parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
    source = tagged[0].source
    for name in ("profile", "figures_dir", "reduced"):
        assert f"{name} =" in source, f"{path.name}: parameters cell lacks {name}"


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_every_notebook_has_a_profile_entry(profile):
    table = load_profile(profile)
    keys = {notebook_key(p) for p in NOTEBOOKS}
    assert keys <= set(table), f"missing in {profile}.yaml: {sorted(keys - set(table))}"
    assert set(table) <= keys, f"{profile}.yaml names unknown notebooks: {sorted(set(table) - keys)}"


def test_profiles_only_set_declared_parameters():
    for profile in ("quick", "paper"):
        for key, params in load_profile(profile).items():
            nb = nbformat.read(notebooks_dir() / f"{key}.ipynb", as_version=4)
            source = next(c.source for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", []))
            for name in params:
                assert f"{name} =" in source or f"{name}:" in source, f"{profile}.yaml sets {name} unknown to {key}"


def _definitions(nb: nbformat.NotebookNode) -> list[str]:
    """``cell i, line j: Kind`` for every function, lambda or class defined in a code cell (magics transformed)."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tree = ast.parse(TransformerManager().transform_cell(cell.source))
        found += [f"cell {index}, line {node.lineno}: {type(node).__name__}"
                  for node in ast.walk(tree) if isinstance(node, DEFINITIONS)]  # fmt: skip
    return found


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=[str(p.relative_to(notebooks_dir())) for p in ALL_NOTEBOOKS])
def test_no_notebook_defines_a_function(path):
    """No ``def``, ``async def``, ``lambda`` or ``class`` in a code cell: put it in the library, call it here."""
    found = _definitions(nbformat.read(path, as_version=4))
    assert not found, f"{path.name} defines code a library module should hold: {found}"


@pytest.mark.parametrize(
    "source,kind",
    [("def f(x):\n    return x", "FunctionDef"), ("async def g():\n    pass", "AsyncFunctionDef"),
     ("h = sorted([2, 1], key=lambda v: -v)", "Lambda"), ("class K:\n    pass", "ClassDef"),
     ("%matplotlib inline\nif True:\n    def nested():\n        pass", "FunctionDef")],
)  # fmt: skip
def test_the_definition_check_finds_a_planted_definition(source, kind):
    cells = [nbformat.v4.new_markdown_cell("def in markdown is text"), nbformat.v4.new_code_cell("x = 1"),
             nbformat.v4.new_code_cell(source)]  # fmt: skip
    nb = nbformat.v4.new_notebook(cells=cells)
    found = _definitions(nb)
    assert len(found) == 1 and found[0].startswith("cell 2, ") and found[0].endswith(kind), found
