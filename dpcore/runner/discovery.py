"""Which notebooks run and with which parameters: keys and globs over ``notebooks/`` (:func:`discover`), the
profile YAMLs (:func:`load_profile`, :func:`notebook_parameters`), the explorer notebooks (:func:`is_explorer`)."""

from __future__ import annotations

import ast
import fnmatch
import json
from collections.abc import Sequence
from pathlib import Path

import yaml

from dpcore.paths import PROFILES, notebooks_dir
from dpcore.validation import check_choice

__all__ = [
    "EXPLORER_FOLDER",
    "INJECTED",
    "is_explorer",
    "notebook_key",
    "discover",
    "load_profile",
    "notebook_parameters",
    "declared_parameters",
    "profile_problems",
]


_GLOB_CHARS = set("*?[")
#: the parameters the runner injects into every notebook beside its profile entry (:func:`notebook_parameters`)
INJECTED = ("profile", "figures_dir")
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


def declared_parameters(path: Path) -> list[str]:
    """The names a notebook's cell tagged ``parameters`` assigns, in order (papermill's parameters: the names a
    profile may set).  Raises ``ValueError`` naming the notebook when it has no such cell or the cell does not
    parse."""
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a readable notebook ({type(exc).__name__}: {exc})") from None
    sources = [c.get("source", "") for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not sources:
        raise ValueError(f"{path}: no cell tagged 'parameters', so a profile can set nothing in it")
    names: list[str] = []
    for source in sources:
        text = "".join(source) if isinstance(source, list) else source
        try:
            tree = ast.parse(text)
        except SyntaxError as exc:
            raise ValueError(f"{path}: its parameters cell does not parse: {exc}") from None
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) else []  # fmt: skip
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id not in names:
                        names.append(name.id)
    return names


def profile_problems(paths: Sequence[Path], profile: str, root: Path | None = None,
                     table: dict[str, dict] | None = None) -> list[str]:  # fmt: skip
    """Every key of ``profile``'s entry for a notebook of ``paths`` that is not a parameter of that notebook (a
    misspelt ``max_epoch`` for ``max_epochs``: papermill would only log "Passed unknown parameter" and the notebook
    would run with its default), one message each naming the key, the notebook, its profile file and the parameters
    it has; also a key the runner injects itself (:data:`INJECTED`).  Empty: every key is a parameter."""
    root = root or notebooks_dir()
    table = load_profile(profile, root) if table is None else table
    problems = []
    for path in paths:
        key = notebook_key(path, root)
        entry = table.get(key, {})
        if not entry:
            continue
        declared = declared_parameters(path)
        for name in entry:
            if name in INJECTED:
                problems.append(f"profiles/{profile}.yaml sets {name!r} for {key}, but the runner sets {name} itself")
            elif name not in declared:
                close = [d for d in declared if d not in INJECTED and _similar(name, d)]
                problems.append(
                    f"profiles/{profile}.yaml sets {name!r} for {key}, which is not a parameter of "
                    f"{path.name}"
                    + (f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else "")
                    + f"; its parameters: {', '.join(d for d in declared if d not in INJECTED)}"
                )
    return problems


def _similar(a: str, b: str) -> bool:
    """Whether ``a`` looks like a misspelling of ``b`` (difflib ratio at least 0.8)."""
    import difflib

    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8
