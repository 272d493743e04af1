"""Which notebooks run and with which parameters: keys and globs over ``notebooks/`` (:func:`discover`), the
profile YAMLs (:func:`load_profile`, :func:`notebook_parameters`), the explorer notebooks (:func:`is_explorer`)."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

import yaml

from dpcore.paths import PROFILES, notebooks_dir
from dpcore.validation import check_choice

__all__ = ["EXPLORER_FOLDER", "is_explorer", "notebook_key", "discover", "load_profile", "notebook_parameters"]


_GLOB_CHARS = set("*?[")
#: the folder of the explorer notebooks under notebooks/: they report no claims (see :mod:`dpcore.runner`)
EXPLORER_FOLDER = "explore"


def is_explorer(key: str) -> bool:
    """Whether the notebook ``key`` (e.g. ``explore/dpsgd``) is an explorer: no claims, no files."""
    return key.split("/", 1)[0] == EXPLORER_FOLDER


def notebook_key(path: Path, root: Path | None = None) -> str:
    """``notebooks/00_accounting/x.ipynb`` -> ``00_accounting/x``."""
    root = root or notebooks_dir()
    return path.relative_to(root).with_suffix("").as_posix()


def _all_notebooks(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts]


def discover(pattern: str | Sequence[str] = "*", root: Path | None = None) -> list[Path]:
    """Notebooks under ``root`` whose key equals ``pattern`` or matches it as a glob, sorted.

    ``pattern`` may be a list of patterns (their union).  Raises ``ValueError`` for an empty
    pattern and for a pattern that matches no notebook (a bare name such as
    ``dpsgd_accountants`` is not a key: the message suggests the matching keys).
    """
    root = root or notebooks_dir()
    patterns = [pattern] if isinstance(pattern, str) else list(pattern)
    if not patterns:
        raise ValueError("pattern must name at least one notebook key or glob")
    paths = _all_notebooks(root)
    keys = {notebook_key(p, root): p for p in paths}
    chosen: set[str] = set()
    for pat in patterns:
        if not isinstance(pat, str) or not pat.strip():
            raise ValueError(f"pattern must be a non-empty notebook key or glob, got {pat!r}")
        if _GLOB_CHARS & set(pat):
            matched = {k for k in keys if fnmatch.fnmatchcase(k, pat)}
        else:
            matched = {pat} if pat in keys else set()
        if not matched:
            hint = sorted(k for k in keys if k.rsplit("/", 1)[-1] == pat or pat in k)
            raise ValueError(
                f"pattern {pat!r} matches no notebook key under {root}"
                + (f"; did you mean {', '.join(hint)}?" if hint else f"; keys look like {next(iter(keys), '?')!r}")
            )
        chosen |= matched
    return [keys[k] for k in sorted(chosen)]


def load_profile(profile: str, root: Path | None = None) -> dict[str, dict]:
    """The ``{notebook key: parameters}`` mapping of one profile YAML."""
    check_choice("profile", profile, PROFILES)
    path = (root or notebooks_dir()) / "profiles" / f"{profile}.yaml"
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict) or not all(isinstance(v, dict | type(None)) for v in data.values()):
        raise ValueError(f"{path}: expected a mapping of notebook key -> parameter mapping")
    return {k: dict(v or {}) for k, v in data.items()}


def notebook_parameters(key: str, profile: str, out_figures: Path, table: dict[str, dict]) -> dict:
    """Parameters injected into one notebook: its profile entry plus profile and figures_dir."""
    return {**table.get(key, {}), "profile": profile, "figures_dir": str(out_figures)}
