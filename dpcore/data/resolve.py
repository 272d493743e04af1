"""One resolution order for every data file: cache, then mirror, then download; always verified.

For a file listed in the manifest (:mod:`dpcore.data.manifest`), :func:`fetch` returns its
path under the cache folder (``data/``) once its checksum verifies, trying in order:

1. the cached copy in ``data/``;
2. the offline mirror folder (``DPCORE_DATA_MIRROR``; by default ``../shared/data`` beside
   the checkout when that folder exists): the file is copied into ``data/`` and verified;
3. each canonical URL of the manifest (short timeout, ``DPCORE_DOWNLOAD_TIMEOUT`` seconds).

If none works it raises :class:`DataError` naming the data set, the file, the mirror folder
checked, the URLs tried and how to provide the file.  A file the manifest does not list is
refused.  Checksums of ``.gz``/``.bz2`` files are taken over the decompressed content.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from pathlib import Path
from typing import IO

from dpcore.data.manifest import DataError, FileEntry, load_manifest, manifest_path
from dpcore.paths import data_dir, repo_root

__all__ = ["mirror_dir", "tmp_beside", "download_timeout", "file_digest", "verify", "find_entry", "fetch", "download"]

_CHUNK = 1 << 20
_DIGESTS: dict[tuple, str] = {}


def mirror_dir(mirror: str | os.PathLike | None = None) -> Path | None:
    """The offline mirror folder: ``mirror``, else ``$DPCORE_DATA_MIRROR`` (empty: none),
    else ``../shared/data`` beside the checkout if it exists, else ``None``."""
    if mirror is not None:
        return Path(mirror)
    env = os.environ.get("DPCORE_DATA_MIRROR")
    if env is not None:
        return Path(env) if env.strip() else None
    default = repo_root().parent / "shared" / "data"
    return default if default.is_dir() else None


def download_timeout() -> float:
    """Seconds a download may wait for the server (``DPCORE_DOWNLOAD_TIMEOUT``, default 30)."""
    raw = os.environ.get("DPCORE_DOWNLOAD_TIMEOUT", "30")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"DPCORE_DOWNLOAD_TIMEOUT must be a positive number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ValueError(f"DPCORE_DOWNLOAD_TIMEOUT must be a positive number of seconds, got {raw!r}")
    return value


def _open(path: Path, digest_of: str, name: str) -> IO[bytes]:
    if digest_of == "content":
        if name.endswith(".gz"):
            return gzip.open(path, "rb")
        if name.endswith(".bz2"):
            return bz2.open(path, "rb")
        raise ValueError(f"digest_of='content' needs a .gz or .bz2 name, got {name!r}")
    return open(path, "rb")


def file_digest(path: str | os.PathLike, algorithm: str, digest_of: str = "file", *, name: str | None = None) -> str:
    """Hex digest of a file (``digest_of="content"``: of its decompressed .gz/.bz2 content,
    the compression read from ``name``, default the file's own name).

    Digests are remembered per (inode, size, mtime_ns, ctime_ns), so a rewritten file is
    hashed again even if its mtime was restored (the ctime changes on every write).
    """
    path = Path(path)
    name = name or path.name
    st = path.stat()
    key = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, algorithm, digest_of, name)
    if key not in _DIGESTS:
        h = hashlib.new(algorithm)
        with _open(path, digest_of, name) as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                h.update(chunk)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


def verify(path: Path, entry: FileEntry) -> str | None:
    """``None`` if ``path`` matches ``entry``'s checksum, else why not (one line)."""
    try:
        got = file_digest(path, entry.algorithm, entry.digest_of, name=entry.relative)
    except (OSError, EOFError, zlib.error, ValueError) as exc:
        return f"unreadable ({type(exc).__name__}: {exc})"
    if got != entry.digest:
        what = "content " if entry.digest_of == "content" else ""
        return f"{what}{entry.algorithm} {got} != expected {entry.digest}"
    return None


def find_entry(dataset: str | None, relative: str, manifest: str | os.PathLike | None = None) -> FileEntry:
    """The manifest entry of ``relative`` (in ``dataset``, or in whichever data set lists it)."""
    datasets = load_manifest(manifest)
    where = Path(manifest) if manifest is not None else manifest_path()
    if dataset is not None:
        if dataset not in datasets:
            raise DataError(f"data set {dataset!r} is not in the manifest {where} (known: {sorted(datasets)})")
        candidates = [datasets[dataset]]
    else:
        candidates = list(datasets.values())
    for ds in candidates:
        if relative in ds.files:
            return ds.files[relative]
    raise DataError(
        f"data file {relative!r} has no entry in the manifest {where}: refusing to load it unverified "
        "(add it with its checksum to the manifest first)"
    )


def tmp_beside(target: Path) -> Path:
    """A new empty temporary file in ``target``'s folder (created if needed), to be moved onto ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    os.close(fd)
    os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is an ordinary folder
    return Path(tmp)


def _install(tmp: Path, target: Path, entry: FileEntry) -> str | None:
    """Verify ``tmp`` and move it to ``target``; on failure remove it and say why."""
    reason = verify(tmp, entry)
    if reason is None:
        os.replace(tmp, target)
    else:
        tmp.unlink(missing_ok=True)
    return reason


def _download(url: str, tmp: Path, entry: FileEntry, timeout: float) -> None:
    if not url.startswith(("http://", "https://")):
        raise ValueError("only http(s) URLs are downloaded")
    request = urllib.request.Request(url, headers={"User-Agent": "dpcore"})
    with urllib.request.urlopen(request, timeout=timeout) as response, open(tmp, "wb") as out:
        shutil.copyfileobj(response, out, _CHUNK)
    if entry.member:
        with zipfile.ZipFile(tmp) as archive:
            payload = archive.read(entry.member)
        tmp.write_bytes(payload)


def fetch(
    dataset: str | None,
    relative: str,
    *,
    root: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
    manifest: str | os.PathLike | None = None,
    allow_download: bool = True,
) -> Path:
    """Verified path of ``relative`` under the cache folder ``root`` (default ``data/``); see the module doc."""
    entry = find_entry(dataset, relative, manifest)
    base = Path(root) if root is not None else data_dir()
    target = base / relative
    tried = []
    if target.is_file():
        reason = verify(target, entry)
        if reason is None:
            return target
        tried.append(f"cache {target}: {reason}")
    else:
        tried.append(f"cache {target}: missing")

    folder = mirror_dir(mirror)
    if entry.mirror is None:
        tried.append("mirror: does not hold this data set (download only)")
    elif folder is None:
        tried.append("mirror: none (DPCORE_DATA_MIRROR empty or unset, and no ../shared/data)")
    elif not (folder / entry.mirror).is_file():
        tried.append(f"mirror {folder}: no {entry.mirror}")
    else:
        tmp = tmp_beside(target)
        try:
            shutil.copyfile(folder / entry.mirror, tmp)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            reason = f"cannot copy ({exc})"
        else:
            reason = _install(tmp, target, entry)
        if reason is None:
            return target
        tried.append(f"mirror {folder / entry.mirror}: {reason}")

    if not allow_download:
        tried.append("download: not attempted")
    elif not entry.urls:
        tried.append("download: no public URL for this file")
    for url in entry.urls if allow_download else ():
        tmp = tmp_beside(target)
        try:
            _download(url, tmp, entry, download_timeout())
        except (OSError, urllib.error.URLError, ValueError, zipfile.BadZipFile, KeyError) as exc:
            tmp.unlink(missing_ok=True)
            tried.append(f"download {url}: {type(exc).__name__}: {exc}")
            continue
        reason = _install(tmp, target, entry)
        if reason is None:
            return target
        tried.append(f"download {url}: {reason}")

    how = (
        f"To provide it, put a verified copy at {target}"
        + (f", or point DPCORE_DATA_MIRROR (make ... DATA_MIRROR=/path) at a folder holding {entry.mirror}"
           if entry.mirror else "")
        + (", or run with network access" if entry.urls else "")
        + "; see data/README.md."
    )
    raise DataError(
        f"cannot obtain data set {entry.dataset!r} file {relative!r} ({entry.algorithm} "
        f"{entry.digest[:8]}...): " + "; ".join(tried) + f". {how}"
    )


def download(
    name: str,
    root: str | os.PathLike | None = None,
    *,
    mirror: str | os.PathLike | None = None,
    manifest: str | os.PathLike | None = None,
) -> Path:
    """Fetch every file of data set ``name`` (cache, mirror, download; verified); returns the cache folder."""
    datasets = load_manifest(manifest)
    if name not in datasets:
        raise ValueError(f"name must be one of {sorted(datasets)}, got {name!r}")
    for relative in datasets[name].files:
        fetch(name, relative, root=root, mirror=mirror, manifest=manifest)
    return Path(root) if root is not None else data_dir()
