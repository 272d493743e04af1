"""make lab: the pre-save hook strips outputs, and the config Makefile points at installs it."""

import copy
import json
import runpy
from pathlib import Path

import pytest

from dpcore.lab import keep_kernel_metadata, strip_outputs, strip_outputs_pre_save

ROOT = Path(__file__).resolve().parents[1]


def _notebook() -> dict:
    return {
        "cells": [
            {"cell_type": "markdown", "source": "# t", "metadata": {}},
            {"cell_type": "code", "source": "1", "metadata": {}, "execution_count": 3,
             "outputs": [{"output_type": "display_data", "data": {"image/png": "iVBOR"}, "metadata": {}}]},
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip


def test_hook_strips_outputs_and_counts_of_a_notebook_model():
    model = {"type": "notebook", "content": _notebook()}
    strip_outputs_pre_save(model, path="x.ipynb", contents_manager=None)
    code = model["content"]["cells"][1]
    assert code["outputs"] == [] and code["execution_count"] is None
    assert model["content"]["cells"][0] == _notebook()["cells"][0]
    assert "iVBOR" not in json.dumps(model)


def test_hook_leaves_other_files_alone_and_refuses_garbage():
    model = {"type": "file", "content": "text"}
    strip_outputs_pre_save(copy.deepcopy(model))
    assert strip_outputs(_notebook()) == 1
    with pytest.raises(ValueError, match="notebook"):
        strip_outputs({"cells": None})
    with pytest.raises(ValueError, match="model"):
        strip_outputs_pre_save(None)


def test_make_lab_uses_the_config_that_installs_the_hook():
    assert "--config=etc/jupyter_server_config.py" in (ROOT / "Makefile").read_text(encoding="utf-8")

    class Section:
        pass

    class Config(dict):
        def __getattr__(self, name):
            return self.setdefault(name, Section())

    config = Config()
    runpy.run_path(str(ROOT / "etc" / "jupyter_server_config.py"), init_globals={"get_config": lambda: config})
    assert config.ContentsManager.pre_save_hook is strip_outputs_pre_save
    root = Path(config.ServerApp.root_dir)
    assert (root / "notebooks").is_dir() and (root / "build" / "scratch").is_dir()


def test_hook_keeps_the_kernel_metadata_of_the_file_it_replaces(tmp_path):
    """Lab rewrites kernelspec and language_info from the running kernel; the file's own values stay."""
    on_disk = _notebook()
    on_disk["metadata"] = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                           "language_info": {"name": "python"}}  # fmt: skip
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "a.ipynb").write_text(json.dumps(on_disk), encoding="utf-8")
    saved = _notebook()
    saved["metadata"] = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python", "version": "3.11.7"}, "tags": ["mine"]}  # fmt: skip

    class Manager:
        root_dir = str(tmp_path)

    model = {"type": "notebook", "content": saved}
    strip_outputs_pre_save(model, path="nb/a.ipynb", contents_manager=Manager())
    assert model["content"]["metadata"] == {**on_disk["metadata"], "tags": ["mine"]}
    assert model["content"]["cells"][1]["outputs"] == []
    # a new file (nothing on disk) keeps what Lab sent
    fresh = {"type": "notebook", "content": _notebook() | {"metadata": {"language_info": {"version": "3.11.7"}}}}
    strip_outputs_pre_save(fresh, path="nb/new.ipynb", contents_manager=Manager())
    assert fresh["content"]["metadata"] == {"language_info": {"version": "3.11.7"}}
    with pytest.raises(ValueError, match="on_disk"):
        keep_kernel_metadata({}, None)
