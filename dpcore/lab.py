"""JupyterLab as ``make lab`` runs it: notebooks save without outputs, so a tracked notebook stays clean.

:func:`strip_outputs_pre_save` is a contents-manager pre-save hook (``ContentsManager.pre_save_hook``, Jupyter
Server's documented extension point, run before every save, autosave included): it empties each code cell's
outputs and execution count in the model being saved, and keeps the kernel metadata the file already has on disk
(:data:`KERNEL_METADATA`: Lab rewrites ``kernelspec`` and ``language_info`` from the running kernel, e.g.
"Python 3" -> "Python 3 (ipykernel)" and the interpreter's patch version, which alone made ``git status`` dirty).
``etc/jupyter_server_config.py`` installs it, and roots
Lab's file browser at the repository so that ``notebooks/`` and the scratch folder notebooks write to
(``build/scratch/``) are both reachable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

__all__ = ["KERNEL_METADATA", "strip_outputs", "keep_kernel_metadata", "strip_outputs_pre_save"]

#: Notebook metadata JupyterLab rewrites from the running kernel on every save (not what a person edited).
KERNEL_METADATA = ("kernelspec", "language_info")


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


def keep_kernel_metadata(notebook: MutableMapping[str, Any], on_disk: Mapping[str, Any]) -> list[str]:
    """Set each :data:`KERNEL_METADATA` entry of ``notebook`` to its value in ``on_disk`` (the saved file's
    notebook), where ``on_disk`` has one; returns the keys changed.  Other metadata is the person's: untouched."""
    if not isinstance(notebook, MutableMapping):
        raise ValueError(f"notebook must be a notebook mapping, got {type(notebook).__name__}")
    if not isinstance(on_disk, Mapping):
        raise ValueError(f"on_disk must be a notebook mapping, got {type(on_disk).__name__}")
    old = on_disk.get("metadata")
    if not isinstance(old, Mapping):
        return []
    metadata = notebook.setdefault("metadata", {})
    changed = []
    for key in KERNEL_METADATA:
        if key in old and metadata.get(key) != old[key]:
            metadata[key] = json.loads(json.dumps(old[key]))  # a copy
            changed.append(key)
    return changed


def _on_disk(path: Any, contents_manager: Any) -> Mapping[str, Any] | None:
    """The notebook saved at API path ``path`` under the contents manager's ``root_dir``, or None (new file, not
    JSON, no root_dir).  Read directly: the hook is synchronous and Jupyter Server's default manager is async."""
    root = getattr(contents_manager, "root_dir", None)
    if not isinstance(path, str) or not isinstance(root, str):
        return None
    file = Path(root) / path.lstrip("/")
    try:
        notebook = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return notebook if isinstance(notebook, Mapping) else None


def strip_outputs_pre_save(
    model: MutableMapping[str, Any], path: str | None = None, contents_manager: Any = None, **kwargs: Any
) -> None:
    """The pre-save hook: strips a notebook model's outputs and keeps the kernel metadata of the file it replaces
    (other files are saved as they are).  ``path`` is the API path and ``contents_manager`` the manager saving it, as
    Jupyter Server passes them."""
    if not isinstance(model, MutableMapping):
        raise ValueError(f"model must be a contents model mapping, got {type(model).__name__}")
    if model.get("type") == "notebook" and model.get("content") is not None:
        strip_outputs(model["content"])
        on_disk = _on_disk(path, contents_manager)
        if on_disk is not None:
            keep_kernel_metadata(model["content"], on_disk)
