"""Where things live in a checkout: data, figures, build outputs, notebooks."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["repo_root", "data_dir", "figures_dir", "build_dir", "notebooks_dir"]


def repo_root() -> Path:
    """The checkout that holds this package (``DPCORE_ROOT`` overrides it)."""
    env = os.environ.get("DPCORE_ROOT")
    if env:
        return Path(env).resolve()
    return Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """``data/`` of the checkout (``DPCORE_DATA`` overrides it)."""
    env = os.environ.get("DPCORE_DATA")
    return Path(env).resolve() if env else repo_root() / "data"


def figures_dir() -> Path:
    """``figures/`` of the checkout: what ``make figures`` writes."""
    return repo_root() / "figures"


def build_dir() -> Path:
    """``build/`` of the checkout: executed notebooks and scratch (git-ignored)."""
    return repo_root() / "build"


def notebooks_dir() -> Path:
    """``notebooks/`` of the checkout."""
    return repo_root() / "notebooks"
