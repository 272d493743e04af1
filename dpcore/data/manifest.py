"""``data/manifest.json``: every data file dpcore reads, where to get it and how to verify it.

The manifest maps data set name -> ``{title, publisher, origin, license, splits, files}``;
``files`` maps the file's path under the cache folder (``data/``) to its entry:
``urls`` (tried in order), ``mirror`` (path under the mirror folder, ``null`` when the
mirror does not hold it), ``bytes``, exactly one checksum (``md5`` or ``sha256``) and
``digest_of``: ``"content"`` (the decompressed content of a ``.gz``/``.bz2`` file, so a
re-compressed copy of the same content verifies) or ``"file"`` (the bytes as published).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from dpcore.paths import repo_root

__all__ = ["DataError", "ManifestError", "FileEntry", "Dataset", "manifest_path", "load_manifest"]

_COMPRESSED = (".gz", ".bz2")


class DataError(FileNotFoundError):
    """A data file cannot be had (missing everywhere, corrupt, or unknown to the manifest)."""


class ManifestError(DataError):
    """The manifest itself is unreadable or malformed (the message names the manifest file)."""


@dataclass(frozen=True)
class FileEntry:
    """One manifest file: ``relative`` is its path under the cache folder."""

    dataset: str
    relative: str
    urls: tuple[str, ...]
    mirror: str | None
    algorithm: str
    digest: str
    digest_of: str
    bytes: int | None
    member: str | None = None
    variant: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class Dataset:
    """One manifest data set: its metadata and its files."""

    name: str
    title: str
    license: str
    origin: str
    splits: dict[str, dict[str, Any]]
    files: dict[str, FileEntry]
    extra: dict[str, Any]


def manifest_path() -> Path:
    """The shipped manifest: ``data/manifest.json`` of the checkout (``DPCORE_MANIFEST`` overrides it)."""
    env = os.environ.get("DPCORE_MANIFEST")
    return Path(env).resolve() if env else repo_root() / "data" / "manifest.json"


def _parse_file(path: Path, dataset: str, relative: str, raw: Any) -> FileEntry:
    where = f"{path}: data set {dataset!r}, file {relative!r}"
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: the entry must be a JSON object")
    algorithms = [a for a in ("md5", "sha256") if a in raw]
    if len(algorithms) != 1 or not isinstance(raw[algorithms[0]], str):
        raise ManifestError(f"{where}: needs exactly one checksum, 'md5' or 'sha256'")
    algorithm = algorithms[0]
    digest = raw[algorithm].lower()
    if len(digest) != {"md5": 32, "sha256": 64}[algorithm] or any(c not in "0123456789abcdef" for c in digest):
        raise ManifestError(f"{where}: {algorithm} {raw[algorithm]!r} is not a hex digest")
    digest_of = raw.get("digest_of")
    if digest_of not in ("content", "file"):
        raise ManifestError(f"{where}: digest_of must be 'content' or 'file', got {digest_of!r}")
    if digest_of == "content" and not relative.endswith(_COMPRESSED):
        raise ManifestError(f"{where}: digest_of='content' needs a .gz or .bz2 file")
    urls = raw.get("urls", [])
    mirror = raw.get("mirror")
    if not isinstance(urls, list) or not all(isinstance(u, str) and u for u in urls):
        raise ManifestError(f"{where}: urls must be a list of URLs")
    if mirror is not None and (not isinstance(mirror, str) or not mirror or Path(mirror).is_absolute()):
        raise ManifestError(f"{where}: mirror must be null or a relative path")
    if Path(relative).is_absolute() or ".." in Path(relative).parts:
        raise ManifestError(f"{where}: the file key must be a relative path inside the cache folder")
    size = raw.get("bytes")
    if size is not None and (not isinstance(size, int) or size < 0):
        raise ManifestError(f"{where}: bytes must be null or a non-negative integer")
    return FileEntry(
        dataset, relative, tuple(urls), mirror, algorithm, digest, digest_of, size,
        member=raw.get("member"), variant=raw.get("variant"), label=raw.get("label"),
    )


def _parse(path: Path, text: str) -> dict[str, Dataset]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{path}: malformed manifest (not valid JSON: {exc})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("datasets"), dict):
        raise ManifestError(f"{path}: malformed manifest (expected an object with a 'datasets' object)")
    out = {}
    for name, raw in doc["datasets"].items():
        if not isinstance(raw, dict) or not isinstance(raw.get("files"), dict) or not raw["files"]:
            raise ManifestError(f"{path}: data set {name!r} needs a non-empty 'files' object")
        splits = raw.get("splits", {})
        if not isinstance(splits, dict):
            raise ManifestError(f"{path}: data set {name!r}: 'splits' must be an object")
        files = {rel: _parse_file(path, name, rel, entry) for rel, entry in raw["files"].items()}
        for split, spec in splits.items():
            listed = spec.get("files", []) if isinstance(spec, dict) else None
            if listed is None or any(f not in files for f in listed):
                raise ManifestError(f"{path}: data set {name!r}, split {split!r} names files that are not listed")
        known = {"title", "license", "origin", "splits", "files"}
        out[name] = Dataset(
            name, str(raw.get("title", name)), str(raw.get("license", "")), str(raw.get("origin", "")),
            splits, files, {k: v for k, v in raw.items() if k not in known},
        )
    return out


_WHAT_TO_DO = "point DPCORE_MANIFEST (or manifest=) at a manifest JSON file such as the checkout's data/manifest.json"


@lru_cache(maxsize=8)
def _load_cached(path: str, size: int, mtime_ns: int, ctime_ns: int) -> dict[str, Dataset]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(
            f"{path}: cannot read the data manifest ({type(exc).__name__}: {exc}); {_WHAT_TO_DO}"
        ) from exc
    return _parse(Path(path), text)


def load_manifest(path: str | os.PathLike | None = None) -> dict[str, Dataset]:
    """``{data set name: Dataset}`` of the manifest at ``path`` (default :func:`manifest_path`).

    Raises :class:`ManifestError` naming the file when it is missing or malformed.
    """
    path = Path(path) if path is not None else manifest_path()
    try:
        st = path.stat()
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read the data manifest ({exc}); {_WHAT_TO_DO}") from exc
    if not path.is_file():
        what = "a directory" if path.is_dir() else "not a regular file"
        raise ManifestError(f"{path}: the data manifest must be a JSON file, and this is {what}; {_WHAT_TO_DO}")
    return _load_cached(str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns)
