"""Image data sets: MNIST, Fashion-MNIST (IDX), CIFAR-10 (publisher pickles or the JPEG mirror), SVHN.

Every file goes through :func:`dpcore.data.resolve.fetch` (cache, mirror, download; verified).
All loaders return ``(images uint8, labels int64)``: ``[n, 28, 28]`` for the MNIST family and
``[n, 32, 32, 3]`` (height, width, RGB) for CIFAR-10 and SVHN.
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import tarfile
from pathlib import Path

import numpy as np

from dpcore.data.arrays_cache import cached_arrays
from dpcore.data.manifest import DataError, FileEntry, load_manifest
from dpcore.data.resolve import fetch, find_entry
from dpcore.validation import check_choice

__all__ = [
    "CIFAR10_CLASSES",
    "read_idx",
    "load_mnist",
    "load_fashion_mnist",
    "cifar10_source",
    "load_cifar10",
    "load_svhn",
]

# CIFAR-10's label order 0..9 (batches.meta of the publisher's archive)
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
_CIFAR_PYTHON = "cifar-10-python.tar.gz"
_CIFAR_JPEG = "cifar10-jpeg/cifar10-jpeg.tar.gz"

PathLike = str | os.PathLike | None


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an unsigned-byte IDX file (gzip or plain), the format of MNIST and Fashion-MNIST."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as handle:
        raw = handle.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise DataError(f"{path} is not an unsigned-byte IDX file")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    offset = 4 + 4 * ndim
    expected = int(np.prod(dims)) if dims else 0
    data = np.frombuffer(raw, dtype=np.uint8, offset=offset)
    if data.size != expected:
        raise DataError(f"{path}: IDX header says {dims} but the payload has {data.size} bytes")
    return data.reshape(dims)


def _split_spec(dataset: str, split: str, manifest: PathLike) -> dict:
    splits = load_manifest(manifest)[dataset].splits
    check_choice("split", split, tuple(splits))
    return splits[split]


def _check_rows(what: str, got: int, spec: dict) -> None:
    rows = spec.get("rows")
    if rows is not None and got != rows:
        raise DataError(f"{what}: {got} records, the manifest says {rows}")


def _load_idx_pair(dataset: str, split: str, root: PathLike, mirror: PathLike, manifest: PathLike):
    spec = _split_spec(dataset, split, manifest)
    images_rel, labels_rel = spec["files"]
    images = read_idx(fetch(dataset, images_rel, root=root, mirror=mirror, manifest=manifest))
    labels = read_idx(fetch(dataset, labels_rel, root=root, mirror=mirror, manifest=manifest)).astype(np.int64)
    if images.shape[0] != labels.shape[0]:
        raise DataError(f"{dataset} {split}: {images.shape[0]} images but {labels.shape[0]} labels")
    _check_rows(f"{dataset} {split}", images.shape[0], spec)
    return images, labels


def load_mnist(
    split: str, root: PathLike = None, *, mirror: PathLike = None, manifest: PathLike = None
) -> tuple[np.ndarray, np.ndarray]:
    """MNIST ``split`` ("train": 60,000; "test": 10,000) as ``(uint8 [n, 28, 28], int64 [n])``."""
    return _load_idx_pair("mnist", split, root, mirror, manifest)


def load_fashion_mnist(
    split: str, root: PathLike = None, *, mirror: PathLike = None, manifest: PathLike = None
) -> tuple[np.ndarray, np.ndarray]:
    """Fashion-MNIST ``split`` as ``(uint8 [n, 28, 28], int64 [n])`` (mirror ``fashion-mnist/``, else the publisher)."""
    return _load_idx_pair("fashion-mnist", split, root, mirror, manifest)


def cifar10_source(
    variant: str = "auto", root: PathLike = None, *, mirror: PathLike = None, manifest: PathLike = None
) -> tuple[FileEntry, Path]:
    """The verified CIFAR-10 archive :func:`load_cifar10` reads, and its manifest entry.

    ``variant="auto"``: the publisher's python archive if it is in the cache or the mirror,
    else the mirror's JPEG archive, else a download of the publisher's archive.
    ``"python"`` / ``"jpeg"`` ask for one of the two.
    """
    check_choice("variant", variant, ("auto", "python", "jpeg"))
    kw = dict(root=root, mirror=mirror, manifest=manifest)
    if variant != "auto":
        rel = _CIFAR_PYTHON if variant == "python" else _CIFAR_JPEG
        return find_entry("cifar10", rel, manifest), fetch("cifar10", rel, **kw)
    failures = []
    for rel, allow_download in ((_CIFAR_PYTHON, False), (_CIFAR_JPEG, True), (_CIFAR_PYTHON, True)):
        try:
            return find_entry("cifar10", rel, manifest), fetch("cifar10", rel, allow_download=allow_download, **kw)
        except DataError as exc:
            failures.append(str(exc))
    raise DataError("CIFAR-10: neither the publisher's archive nor the JPEG mirror copy can be had: " + " | ".join(
        failures[1:]))


def _decode_python(path: Path, split: str) -> dict[str, np.ndarray]:
    names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    images, labels = [], []
    with tarfile.open(path, "r:gz") as archive:
        for name in names:
            handle = archive.extractfile(f"cifar-10-batches-py/{name}")
            if handle is None:
                raise DataError(f"{path}: no cifar-10-batches-py/{name}")
            batch = pickle.load(handle, encoding="bytes")  # noqa: S301 (checksum-verified publisher file)
            images.append(np.asarray(batch[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
            labels.append(np.asarray(batch[b"labels"], dtype=np.int64))
    return {"images": np.ascontiguousarray(np.concatenate(images)), "labels": np.concatenate(labels)}


def _decode_jpeg(path: Path, split: str) -> dict[str, np.ndarray]:
    from PIL import Image

    found = []
    with tarfile.open(path, "r:gz") as archive:
        for member in archive:
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 3 or parts[0] != split:
                continue
            if parts[1] not in CIFAR10_CLASSES:
                raise DataError(f"{path}: unknown class folder {parts[1]!r}")
            handle = archive.extractfile(member)
            with Image.open(io.BytesIO(handle.read())) as image:
                pixels = np.asarray(image.convert("RGB"), dtype=np.uint8)
            if pixels.shape != (32, 32, 3):
                raise DataError(f"{path}: {member.name} is {pixels.shape}, expected 32x32 RGB")
            found.append((CIFAR10_CLASSES.index(parts[1]), parts[2], pixels))
    found.sort(key=lambda item: (item[0], item[1]))
    if not found:
        raise DataError(f"{path}: no images under {split}/")
    return {
        "images": np.stack([pixels for _, _, pixels in found]),
        "labels": np.array([label for label, _, _ in found], dtype=np.int64),
    }


def load_cifar10(
    split: str,
    root: PathLike = None,
    *,
    variant: str = "auto",
    mirror: PathLike = None,
    manifest: PathLike = None,
) -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 ``split`` ("train": 50,000; "test": 10,000) as ``(uint8 [n, 32, 32, 3], int64 [n])``.

    Labels follow CIFAR-10's class order (:data:`CIFAR10_CLASSES`).  The source is chosen by
    :func:`cifar10_source`; :func:`dpcore.data.provenance` names it.  The JPEG mirror copy
    (quality about 75) is lossy and its records are ordered by class, then file name: shuffle
    before use.  The decoded arrays are cached under ``data/cache/``.
    """
    spec = _split_spec("cifar10", split, manifest)
    entry, path = cifar10_source(variant, root, mirror=mirror, manifest=manifest)
    decode = _decode_python if entry.relative == _CIFAR_PYTHON else _decode_jpeg
    arrays = cached_arrays(entry, split, ("images", "labels"), lambda: decode(path, split), root)
    images, labels = arrays["images"], arrays["labels"]
    if images.dtype != np.uint8 or images.shape[1:] != (32, 32, 3) or len(images) != len(labels):
        raise DataError(f"CIFAR-10 {split}: decoded arrays have shape {images.shape} / {labels.shape}")
    if labels.size and not (labels.min() >= 0 and labels.max() < len(CIFAR10_CLASSES)):
        raise DataError(f"CIFAR-10 {split}: labels outside [0, {len(CIFAR10_CLASSES)}) in the decoded arrays")
    _check_rows(f"CIFAR-10 {split}", len(images), spec)
    return images, labels


def load_svhn(
    split: str, root: PathLike = None, *, mirror: PathLike = None, manifest: PathLike = None
) -> tuple[np.ndarray, np.ndarray]:
    """SVHN cropped digits ``split`` as ``(uint8 [n, 32, 32, 3], int64 [n])``, digit 0 labelled 0 (download only)."""
    from scipy.io import loadmat

    spec = _split_spec("svhn", split, manifest)
    mat = loadmat(fetch("svhn", spec["files"][0], root=root, mirror=mirror, manifest=manifest))
    images = np.ascontiguousarray(np.asarray(mat["X"], dtype=np.uint8).transpose(3, 0, 1, 2))
    labels = np.asarray(mat["y"], dtype=np.int64).reshape(-1) % 10  # the .mat files label digit 0 as 10
    _check_rows(f"SVHN {split}", len(images), spec)
    return images, labels
