"""JupyterLab as ``make lab`` runs it: notebooks save without outputs, so a tracked notebook stays clean.

:func:`strip_outputs_pre_save` is a contents-manager pre-save hook (``ContentsManager.pre_save_hook``, Jupyter
Server's documented extension point, run before every save, autosave included): it empties each code cell's
outputs and execution count in the model being saved.  ``etc/jupyter_server_config.py`` installs it, and roots
Lab's file browser at the repository so that ``notebooks/`` and the scratch folder notebooks write to
(``build/scratch/``) are both reachable.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

__all__ = ["strip_outputs", "strip_outputs_pre_save"]


def strip_outputs(notebook: MutableMapping[str, Any]) -> int:
    """Empty every code cell's ``outputs`` and ``execution_count`` in place; returns the cells changed."""
    if not isinstance(notebook, MutableMapping) or not isinstance(notebook.get("cells"), list):
        raise ValueError("notebook must be a notebook mapping with a 'cells' list")
    changed = 0
    for cell in notebook["cells"]:
        if not isinstance(cell, MutableMapping) or cell.get("cell_type") != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            changed += 1
        cell["outputs"] = []
        cell["execution_count"] = None
    return changed


def strip_outputs_pre_save(model: MutableMapping[str, Any], **kwargs: Any) -> None:
    """The pre-save hook: strips a notebook model's outputs (other files are saved as they are)."""
    if not isinstance(model, MutableMapping):
        raise ValueError(f"model must be a contents model mapping, got {type(model).__name__}")
    if model.get("type") == "notebook" and model.get("content") is not None:
        strip_outputs(model["content"])
