"""Decoded arrays cached under ``data/cache/``, keyed by the checksum of the source file and verified on load.

Decoding 50,000 JPEGs or parsing a LIBSVM text file takes seconds; the arrays it gives are
saved once as plain ``.npy`` files whose names carry the source's checksum, so a changed
source never reuses a stale decode and a second load takes well under a second.

The cache is verified as the raw files are (:mod:`dpcore.data.resolve`): beside the arrays a
sidecar ``<data set>-<tag>-<16 hex digits>.json`` records the full checksum of the source they
were decoded from and the SHA-256, dtype and shape of each ``.npy`` file.  It is written last,
so it vouches only for arrays that were completely written.  On load every array file is hashed
(memoised per inode, size, mtime and ctime, so a rewrite is noticed) and compared with the
sidecar; a missing or unreadable sidecar, a changed, missing or unreadable array, or a sidecar of
another source is reported with a :class:`CacheWarning` naming the file and why, and the arrays
are decoded again from the verified source and rewritten.  Nothing is loaded unverified.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.data.manifest import FileEntry
from dpcore.data.resolve import file_digest, tmp_beside
from dpcore.paths import data_dir

__all__ = ["CACHE_FORMAT", "CacheWarning", "cache_path", "sidecar_path", "cached_arrays"]

#: version of the sidecar layout; a sidecar of another version is not trusted (the arrays are decoded again)
CACHE_FORMAT = 1


class CacheWarning(UserWarning):
    """A decoded-array cache did not verify and is rebuilt from the verified source (the message names the file)."""


def _stem(entry: FileEntry, tag: str) -> str:
    return f"{entry.dataset}-{tag}-{entry.digest[:16]}"


def cache_path(entry: FileEntry, tag: str, key: str, root: str | os.PathLike | None = None) -> Path:
    """``<root>/cache/<data set>-<tag>-<first 16 hex digits of the source checksum>.<key>.npy``."""
    base = Path(root) if root is not None else data_dir()
    return base / "cache" / f"{_stem(entry, tag)}.{key}.npy"


def sidecar_path(entry: FileEntry, tag: str, root: str | os.PathLike | None = None) -> Path:
    """``<root>/cache/<data set>-<tag>-<16 hex digits>.json``: the digests that vouch for the cached arrays."""
    base = Path(root) if root is not None else data_dir()
    return base / "cache" / f"{_stem(entry, tag)}.json"


def _source(entry: FileEntry) -> dict[str, str]:
    return {"dataset": entry.dataset, "relative": entry.relative, "algorithm": entry.algorithm, "digest": entry.digest}


def _read_sidecar(path: Path) -> dict[str, Any] | str:
    """The sidecar's content, or why it cannot be used (one line)."""
    if not path.is_file():
        return "no digest record (written before the cache was verified, or interrupted)"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"digest record {path.name} is unreadable ({type(exc).__name__}: {exc})"
    if not isinstance(doc, dict) or doc.get("format") != CACHE_FORMAT or not isinstance(doc.get("arrays"), dict):
        return f"digest record {path.name} is not a format-{CACHE_FORMAT} cache record"
    return doc


def _problem(entry: FileEntry, tag: str, paths: dict[str, Path], root: str | os.PathLike | None) -> str | None:
    """``None`` if every array file matches the sidecar written with it, else why not (naming the file)."""
    side = sidecar_path(entry, tag, root)
    doc = _read_sidecar(side)
    if isinstance(doc, str):
        return f"{side}: {doc}"
    if doc.get("source") != _source(entry):
        return f"{side}: records arrays decoded from {doc.get('source')!r}, not from {_source(entry)!r}"
    for key, path in paths.items():
        want = doc["arrays"].get(key)
        if not isinstance(want, dict) or not isinstance(want.get("sha256"), str):
            return f"{side}: no digest for array {key!r}"
        if not path.is_file():
            return f"{path}: missing"
        try:
            got = file_digest(path, "sha256")
        except OSError as exc:
            return f"{path}: unreadable ({type(exc).__name__}: {exc})"
        if got != want["sha256"]:
            return f"{path}: sha256 {got} != {want['sha256']} recorded when it was written (the file was changed)"
    return None


def _load(paths: dict[str, Path], doc: dict[str, Any]) -> dict[str, np.ndarray] | str:
    arrays = {}
    for key, path in paths.items():
        try:
            arrays[key] = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            return f"{path}: unreadable ({type(exc).__name__}: {exc})"
        want, got = doc["arrays"][key], arrays[key]
        if str(got.dtype) != want.get("dtype") or list(got.shape) != want.get("shape"):
            return f"{path}: {got.dtype} {got.shape} != recorded {want.get('dtype')} {want.get('shape')}"
    return arrays


def _write(entry: FileEntry, tag: str, paths: dict[str, Path], arrays: dict[str, np.ndarray], root) -> None:
    """Each array atomically, then the sidecar with their digests (so it vouches only for complete files)."""
    record: dict[str, Any] = {"format": CACHE_FORMAT, "source": _source(entry), "tag": tag, "arrays": {}}
    for key, path in paths.items():
        tmp = tmp_beside(path)
        try:
            with open(tmp, "wb") as handle:
                np.save(handle, arrays[key], allow_pickle=False)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        record["arrays"][key] = {"file": path.name, "sha256": file_digest(path, "sha256"),
                                 "dtype": str(arrays[key].dtype), "shape": list(arrays[key].shape)}  # fmt: skip
    side = sidecar_path(entry, tag, root)
    tmp = tmp_beside(side)
    try:
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, side)
    finally:
        tmp.unlink(missing_ok=True)


def cached_arrays(
    entry: FileEntry,
    tag: str,
    keys: Sequence[str],
    decode: Callable[[], dict[str, np.ndarray]],
    root: str | os.PathLike | None = None,
) -> dict[str, np.ndarray]:
    """The arrays ``keys`` that ``decode()`` gives for the verified source ``entry``, from the cache when it verifies.

    A cache that does not verify (see the module docstring) is reported with a :class:`CacheWarning` naming the
    file and the reason, and rebuilt from ``decode()``.
    """
    if not isinstance(entry, FileEntry):
        raise ValueError(f"entry must be a FileEntry of the manifest, got {type(entry).__name__}")
    if not isinstance(tag, str) or not tag or "/" in tag:
        raise ValueError(f"tag must be a non-empty name without '/', got {tag!r}")
    if isinstance(keys, str) or not keys or not all(isinstance(k, str) and k for k in keys):
        raise ValueError(f"keys must be a non-empty sequence of array names, got {keys!r}")
    paths = {key: cache_path(entry, tag, key, root) for key in keys}
    if any(path.exists() for path in paths.values()) or sidecar_path(entry, tag, root).exists():
        reason = _problem(entry, tag, paths, root)
        if reason is None:
            doc = _read_sidecar(sidecar_path(entry, tag, root))
            assert isinstance(doc, dict)
            loaded = _load(paths, doc)
            if isinstance(loaded, dict):
                return loaded
            reason = loaded
        warnings.warn(
            f"decoded-array cache of {entry.dataset} {tag} does not verify: {reason}; decoding it again from the "
            f"verified source {entry.relative}",
            CacheWarning,
            stacklevel=2,
        )
    arrays = decode()
    if set(arrays) != set(keys):
        raise ValueError(f"decode() gave arrays {sorted(arrays)}, expected {sorted(keys)}")
    _write(entry, tag, paths, arrays, root)
    return arrays
