"""Decoded arrays cached under ``data/cache/``, keyed by the checksum of the source file.

Decoding 50,000 JPEGs or parsing a LIBSVM text file takes seconds; the arrays it gives are
saved once as plain ``.npy`` files whose names carry the source's checksum, so a changed
source never reuses a stale decode and a second load takes well under a second.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from dpcore.data.manifest import DataError, FileEntry
from dpcore.data.resolve import tmp_beside
from dpcore.paths import data_dir

__all__ = ["cache_path", "cached_arrays"]


def cache_path(entry: FileEntry, tag: str, key: str, root: str | os.PathLike | None = None) -> Path:
    """``<root>/cache/<data set>-<tag>-<first 16 hex digits of the source checksum>.<key>.npy``."""
    base = Path(root) if root is not None else data_dir()
    return base / "cache" / f"{entry.dataset}-{tag}-{entry.digest[:16]}.{key}.npy"


def cached_arrays(
    entry: FileEntry,
    tag: str,
    keys: Sequence[str],
    decode: Callable[[], dict[str, np.ndarray]],
    root: str | os.PathLike | None = None,
) -> dict[str, np.ndarray]:
    """The arrays ``keys`` that ``decode()`` gives for the verified source ``entry``, from the cache when there."""
    paths = {key: cache_path(entry, tag, key, root) for key in keys}
    if all(path.is_file() for path in paths.values()):
        try:
            return {key: np.load(path, allow_pickle=False) for key, path in paths.items()}
        except (OSError, ValueError, EOFError) as exc:
            raise DataError(f"decoded-array cache {paths} is unreadable ({exc}); delete it to decode again") from exc
    arrays = decode()
    if set(arrays) != set(keys):
        raise ValueError(f"decode() gave arrays {sorted(arrays)}, expected {sorted(keys)}")
    for key, path in paths.items():
        tmp = tmp_beside(path)
        try:
            with open(tmp, "wb") as handle:
                np.save(handle, arrays[key], allow_pickle=False)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    return arrays
