"""Decoded arrays cached under ``data/cache/``, keyed by the checksum of the source file.

Decoding 50,000 JPEGs or parsing a LIBSVM text file takes seconds; the arrays it gives
are saved once as an uncompressed ``.npz`` whose name carries the source's checksum, so a
changed source never reuses a stale decode and a second load takes well under a second.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dpcore.data.manifest import DataError, FileEntry
from dpcore.data.resolve import tmp_beside
from dpcore.paths import data_dir

__all__ = ["cache_path", "cached_arrays"]


def cache_path(entry: FileEntry, tag: str, root: str | os.PathLike | None = None) -> Path:
    """``<root>/cache/<data set>-<tag>-<first 16 hex digits of the source checksum>.npz``."""
    base = Path(root) if root is not None else data_dir()
    return base / "cache" / f"{entry.dataset}-{tag}-{entry.digest[:16]}.npz"


def cached_arrays(
    entry: FileEntry,
    tag: str,
    decode: Callable[[], dict[str, np.ndarray]],
    root: str | os.PathLike | None = None,
) -> dict[str, np.ndarray]:
    """The arrays ``decode()`` gives for the verified source ``entry``, from the cache when there."""
    path = cache_path(entry, tag, root)
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as saved:
                return {key: saved[key] for key in saved.files}
        except (OSError, ValueError, EOFError) as exc:
            raise DataError(f"decoded-array cache {path} is unreadable ({exc}); delete it to decode again") from exc
    arrays = decode()
    tmp = tmp_beside(path)
    try:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return arrays
