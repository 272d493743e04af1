"""Longest first (issue 54): the runner starts the notebooks by their last recorded duration, longest first, also on a
fresh clone (the committed ``notebooks/durations.json``), so that no long notebook runs alone at the end."""

import importlib.util
import io
import json
from pathlib import Path

import nbformat

from dpcore import runner
from dpcore.runner.discovery import discover, load_profile, notebook_key
from dpcore.runner.execute import _launch_order, durations_path, record_durations, recorded_durations


def test_the_committed_durations_cover_every_notebook_and_start_the_longest_first():
    paths = discover("*")
    keys = [notebook_key(p) for p in paths]
    committed = recorded_durations("quick", out_build=None)
    assert set(committed) == set(keys), set(keys) ^ set(committed)
    order = [keys[i] for i in _launch_order(paths, None, load_profile("quick"), committed)]
    assert order[0] == max(committed, key=committed.get)
    assert [committed[k] for k in order] == sorted(committed.values(), reverse=True)


def test_a_local_run_overrides_the_committed_durations_and_can_be_recorded(tmp_path):
    root = tmp_path / "notebooks"
    root.mkdir()
    durations_path(root).write_text(json.dumps({"_note": "x", "quick": {"a/x": 10, "a/y": 50}, "paper": {"a/x": 7}}))
    build = tmp_path / "build"
    build.mkdir()
    (build / "timings.json").write_text(json.dumps({"a/x": 99.6}))
    assert recorded_durations("quick", root, build) == {"a/x": 99.6, "a/y": 50.0}
    assert recorded_durations("paper", root, None) == {"a/x": 7.0}
    record_durations("quick", root, build)
    data = json.loads(durations_path(root).read_text())
    assert data["quick"] == {"a/x": 100, "a/y": 50} and data["paper"] == {"a/x": 7} and data["_note"] == "x"


def test_the_runner_records_durations_on_request(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_ROOT", str(tmp_path))
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "build" / "quick").mkdir(parents=True)
    (tmp_path / "build" / "quick" / "timings.json").write_text(json.dumps({"a/x": 12.0}))
    stream = io.StringIO()
    assert runner.main(["--record-durations"], stream=stream) == 0
    assert json.loads((tmp_path / "notebooks" / "durations.json").read_text())["quick"] == {"a/x": 12}


def test_nbval_runs_the_notebooks_longest_first(tmp_path, monkeypatch):
    """make test: --prepare-nbval writes a conftest that orders the notebooks as make figures does (longest first),
    each notebook's cells in order, before the other tests."""
    root = tmp_path / "notebooks"
    for key in ("aa/short", "bb/long"):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        params = nbformat.v4.new_code_cell('profile = "quick"\nfigures_dir = None')
        params.metadata["tags"] = ["parameters"]
        nb.cells = [params, nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("y = 2")]
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, root / f"{key}.ipynb")
    (root / "profiles").mkdir()
    (root / "profiles" / "quick.yaml").write_text("aa/short:\nbb/long:\n")
    durations_path(root).write_text(json.dumps({"quick": {"aa/short": 5, "bb/long": 500}}))
    runner.prepare_nbval(tmp_path / "nbval", root=root)
    monkeypatch.setenv("DPCORE_ROOT", str(tmp_path))
    spec = importlib.util.spec_from_file_location("nbval_conftest", tmp_path / "nbval" / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)

    class Item:  # what the hook reads of a pytest item
        def __init__(self, path, name):
            self.fspath, self.name = path, name

    short, long = tmp_path / "nbval" / "aa" / "short.ipynb", tmp_path / "nbval" / "bb" / "long.ipynb"
    other = tmp_path / "tests" / "test_x.py"
    items = [Item(other, "t1"), Item(short, "Cell 0"), Item(short, "Cell 1"), Item(long, "Cell 0"),
             Item(long, "Cell 1"), Item(other, "t2")]  # fmt: skip
    conftest.pytest_collection_modifyitems(None, None, items)
    assert [(Path(str(i.fspath)).stem, i.name) for i in items] == [
        ("long", "Cell 0"), ("long", "Cell 1"), ("short", "Cell 0"), ("short", "Cell 1"), ("test_x", "t1"),
        ("test_x", "t2")]  # fmt: skip
