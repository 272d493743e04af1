"""A disk memo for slow, deterministic functions of plain arguments (the noise calibration of paper 002's grids).

Planning paper 002's full-scale grids calibrates σ for every (method, ε, T, p) cell: about 60 s of CPU, paid again
by every process that plans them (``make figures``, the notebooks, the dry-run tests).  :class:`DiskMemo` keeps the
values in ``build/cache/<name>-<stamp>.json`` (git-ignored), where the stamp hashes everything that computes them:
the source files the caller names and the versions of Python, numpy and scipy.  Change one of those and the stamp
changes, so a stored value is never returned for code that would compute another; the old file is simply no longer
read.  The values are the function's own, bit for bit (JSON writes a float's shortest repr, which reads back
exactly).  ``DPCORE_MEMO=off`` turns the memo off (every call computes).

Writers replace the file atomically (:func:`dpcore.paths.atomic_write_text`) after merging what is on disk, so
concurrent processes (pytest-xdist workers) never leave a torn file; at worst one of two racing entries is
computed again later.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import platform
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import scipy

from dpcore.paths import atomic_write_text, build_dir

__all__ = ["DiskMemo", "source_stamp", "memo_enabled"]


def memo_enabled() -> bool:
    """False when the environment variable ``DPCORE_MEMO`` is ``off`` (or ``0``/``false``/``no``)."""
    return os.environ.get("DPCORE_MEMO", "on").strip().lower() not in {"off", "0", "false", "no"}


def source_stamp(paths: Iterable[str | os.PathLike]) -> str:
    """SHA-256 (hex) of the named files' bytes, in the given order, plus the Python, numpy and scipy versions.

    A folder stands for every ``*.py`` file under it (sorted); a path that does not exist is a ``ValueError``.
    """
    digest = hashlib.sha256()
    for key in (platform.python_version(), np.__version__, scipy.__version__):
        digest.update(key.encode() + b"\0")
    count = 0
    for entry in paths:
        path = Path(entry)
        if path.is_dir():
            files = sorted(path.rglob("*.py"))
        elif path.is_file():
            files = [path]
        else:
            raise ValueError(f"paths: {path} is neither a file nor a folder")
        for file in files:
            digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
            count += 1
    if count == 0:
        raise ValueError("paths must name at least one source file")
    return digest.hexdigest()


class _Unkeyable(Exception):
    """An argument without an unambiguous JSON form: the call is computed, not memoised."""


def _plain(value: Any) -> Any:
    """``value`` as JSON-able plain data (tuples as lists); :class:`_Unkeyable` for anything else (non-finite
    floats included, so that the function's own validation answers them)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    raise _Unkeyable


class DiskMemo:
    """Decorator: memoise a function of plain arguments whose value is a finite float, on disk.

    Calls whose arguments are not plain (None, bool, int, finite float, str, tuples of them) are computed every
    time and not stored; a value that is not a finite float is a ``ValueError``.

    ``name`` names the cache file (letters, digits, ``_`` and ``-``); ``sources`` are the files (or folders of
    ``*.py`` files) whose code computes the value (:func:`source_stamp`); ``folder`` defaults to
    ``build/cache/`` of the checkout.

    >>> import tempfile
    >>> memo = DiskMemo("demo", [__file__], folder=tempfile.mkdtemp())
    >>> calls = []
    >>> @memo
    ... def square(x: float) -> float:
    ...     calls.append(x)
    ...     return x * x
    >>> square(3.0), square(3.0), len(calls)
    (9.0, 9.0, 1)
    """

    def __init__(self, name: str, sources: Iterable[str | os.PathLike], *, folder: str | os.PathLike | None = None):
        if not name or not all(ch.isalnum() or ch in "_-" for ch in name):
            raise ValueError(f"name must be letters, digits, '_' or '-', got {name!r}")
        self.name = name
        self.sources = [Path(s) for s in sources]
        self.folder = Path(folder) if folder is not None else build_dir() / "cache"
        self._stamp: str | None = None
        self._values: dict[str, float] | None = None

    @property
    def path(self) -> Path:
        """The cache file of the current stamp (computed once per process)."""
        if self._stamp is None:
            self._stamp = source_stamp(self.sources)
        return self.folder / f"{self.name}-{self._stamp[:16]}.json"

    def _read(self) -> dict[str, float]:
        path = self.path
        if not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path} is not a memo file ({exc}); delete it to rebuild it") from exc
        if not isinstance(data, dict) or not all(isinstance(v, float) for v in data.values()):
            raise ValueError(f"{path} is not a memo file (not a JSON object of floats); delete it to rebuild it")
        return data

    def _store(self, key: str, value: float) -> None:
        merged = self._read()
        merged[key] = value
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path, json.dumps(merged, sort_keys=True, indent=0) + "\n")
        self._values = merged

    def __call__(self, fn: Callable[..., float]) -> Callable[..., float]:
        @functools.wraps(fn)
        def memoised(*args: Any, **kwargs: Any) -> float:
            if not memo_enabled():
                return fn(*args, **kwargs)
            try:
                key = json.dumps([fn.__qualname__, _plain(list(args)),
                                  {k: _plain(v) for k, v in sorted(kwargs.items())}])  # fmt: skip
            except _Unkeyable:  # computed (and validated) by the function itself, never stored
                return fn(*args, **kwargs)
            if self._values is None or key not in self._values:
                self._values = self._read()
            if key in self._values:
                return self._values[key]
            value = fn(*args, **kwargs)
            if not isinstance(value, float) or not math.isfinite(value):
                raise ValueError(f"{self.name}: {fn.__qualname__} returned {value!r}; only finite floats are memoised")
            self._store(key, value)
            return value

        return memoised
