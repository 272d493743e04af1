"""Committed notebooks: no outputs, a `parameters` cell, an entry in every profile."""

import nbformat
import pytest

from dpcore.paths import notebooks_dir
from dpcore.runner import discover, load_profile, notebook_key

NOTEBOOKS = discover()


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
