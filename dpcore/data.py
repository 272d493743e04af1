"""Datasets: shipped files (verified on load), seeded synthetic generators, downloads.

Shipped in ``data/`` (see ``data/README.md`` and ``data/manifest.json``):
MNIST test set + training labels (IDX gzip, torchvision's ``MNIST/raw`` layout),
the insurance CSV and the UCI obesity CSV.  Every file listed in the manifest is
checked against its SHA-256 (or MD5 for downloaded files) when it is loaded; a
missing or corrupt file raises :class:`DataError` naming the file and saying how
to obtain it.  The paper profile downloads the standard datasets (MNIST,
Fashion-MNIST, CIFAR-10, SVHN) with ``torchvision.datasets`` via :func:`download`;
tests never download.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.paths import data_dir
from dpcore.validation import check_choice, check_nonnegative, check_positive_int

__all__ = [
    "DataError",
    "DATASETS",
    "load_manifest",
    "verified_path",
    "read_idx",
    "load_mnist",
    "load_fashion_mnist",
    "load_insurance",
    "load_obesity",
    "load_digits",
    "load_cifar10",
    "load_svhn",
    "make_logistic_regression",
    "make_linear_regression",
    "download",
]

DATASETS = ("mnist", "fashion-mnist", "cifar10", "svhn")
_IDX_NAMES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
_TORCHVISION_FOLDERS = {"mnist": "MNIST", "fashion-mnist": "FashionMNIST"}


class DataError(FileNotFoundError):
    """A dataset file is missing or does not match its checksum."""


def _root(root: str | os.PathLike | None) -> Path:
    return Path(root) if root is not None else data_dir()


def load_manifest(root: str | os.PathLike | None = None) -> dict[str, dict[str, Any]]:
    """``{relative path: entry}`` of ``<root>/manifest.json`` (empty if there is none)."""
    path = _root(root) / "manifest.json"
    if not path.exists():
        return {}
    return json.loads(path.read_text())["files"]


@lru_cache(maxsize=64)
def _digest(path: str, algorithm: str, size: int, mtime_ns: int) -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verified_path(relative: str, root: str | os.PathLike | None = None) -> Path:
    """Path of a data file after checking it exists and matches the manifest checksum."""
    base = _root(root)
    path = base / relative
    entry = load_manifest(base).get(relative, {})
    how = entry.get("obtain", "see data/README.md")
    if not path.exists():
        raise DataError(f"data file {path} is missing; to obtain it: {how}")
    stat = path.stat()
    for algorithm in ("sha256", "md5"):
        if algorithm in entry:
            got = _digest(str(path), algorithm, stat.st_size, stat.st_mtime_ns)
            if got != entry[algorithm]:
                raise DataError(
                    f"data file {path} is corrupt: {algorithm} {got} != expected {entry[algorithm]}; "
                    f"replace it ({how})"
                )
            break
    return path


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (gzip or plain): unsigned-byte tensors as used by MNIST."""
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


def _with_download(name: str, root: str | os.PathLike | None, fetch: bool, load: Any) -> Any:
    """Call ``load()``; if a file is missing and ``fetch`` is set, download ``name`` once and retry."""
    try:
        return load()
    except DataError:
        if not fetch:
            raise
        download(name, root)
        return load()


def _load_idx_pair(folder: str, split: str, root: str | os.PathLike | None) -> tuple[np.ndarray, np.ndarray]:
    check_choice("split", split, tuple(_IDX_NAMES))
    images_name, labels_name = _IDX_NAMES[split]
    images = read_idx(verified_path(f"{folder}/raw/{images_name}", root))
    labels = read_idx(verified_path(f"{folder}/raw/{labels_name}", root)).astype(np.int64)
    if images.shape[0] != labels.shape[0]:
        raise DataError(f"{folder} {split}: {images.shape[0]} images but {labels.shape[0]} labels")
    return images, labels


def load_mnist(
    split: str = "test", root: str | os.PathLike | None = None, *, download: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """MNIST as ``(images uint8 [n, 28, 28], labels int64 [n])``.

    Only ``split="test"`` (10,000 images) is shipped; ``"train"`` needs the
    training images, fetched by torchvision when ``download=True`` (paper profile).
    """
    return _with_download("mnist", root, download, lambda: _load_idx_pair("MNIST", split, root))


def load_fashion_mnist(
    split: str = "test", root: str | os.PathLike | None = None, *, download: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Fashion-MNIST as ``(images uint8 [n, 28, 28], labels int64 [n])`` (not shipped; ``download=True``)."""
    return _with_download("fashion-mnist", root, download, lambda: _load_idx_pair("FashionMNIST", split, root))


def load_insurance(root: str | os.PathLike | None = None):
    """Medical Cost Personal Datasets (1,338 rows): age, sex, bmi, children, smoker, region, charges."""
    import pandas as pd

    return pd.read_csv(verified_path("insurance.csv", root))


def load_obesity(root: str | os.PathLike | None = None):
    """UCI obesity levels (2,111 rows, 17 columns; target ``NObeyesdad`` with 7 classes)."""
    import pandas as pd

    return pd.read_csv(verified_path("ObesityDataSet_raw_and_data_sinthetic.csv", root))


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits: ``(X float64 [1797, 64] in [0, 16], y int64 [1797])``."""
    from sklearn.datasets import load_digits as sk_load_digits

    bunch = sk_load_digits()
    return bunch.data.astype(np.float64), bunch.target.astype(np.int64)


def _torchvision_split(name: str, split: str, root: str | os.PathLike | None):
    from dpcore.torchvision_compat import import_torchvision

    datasets = import_torchvision().datasets
    base = _root(root)
    try:
        if name == "cifar10":
            return datasets.CIFAR10(str(base), train=split == "train", download=False)
        return datasets.SVHN(str(base), split=split, download=False)
    except RuntimeError as exc:  # torchvision: "Dataset not found or corrupted"
        missing = "cifar-10-batches-py/" if name == "cifar10" else f"{split}_32x32.mat"
        raise DataError(
            f"data file {base / missing} is missing or corrupt ({exc}); to obtain it run "
            f"`make figures PROFILE=paper` or `python -c \"import dpcore.data as d; d.download('{name}')\"`"
        ) from exc


def load_cifar10(
    split: str = "train", root: str | os.PathLike | None = None, *, download: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 as ``(images uint8 [n, 32, 32, 3], labels int64 [n])``; torchvision checks the MD5s."""
    check_choice("split", split, ("train", "test"))
    ds = _with_download("cifar10", root, download, lambda: _torchvision_split("cifar10", split, root))
    return np.asarray(ds.data), np.asarray(ds.targets, dtype=np.int64)


def load_svhn(
    split: str = "train", root: str | os.PathLike | None = None, *, download: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """SVHN as ``(images uint8 [n, 32, 32, 3], labels int64 [n])``; torchvision checks the MD5."""
    check_choice("split", split, ("train", "test"))
    ds = _with_download("svhn", root, download, lambda: _torchvision_split("svhn", split, root))
    return np.ascontiguousarray(ds.data.transpose(0, 2, 3, 1)), np.asarray(ds.labels, dtype=np.int64)


def make_logistic_regression(
    n: int, d: int, *, seed: int, noise: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded logistic-regression data: ``(X [n, d], y in {0, 1} [n], w_true [d])``.

    Rows of X are N(0, I_d/d) (so ‖x‖ ≈ 1), w_true ~ N(0, 4·I_d), and
    y ~ Bernoulli(sigmoid(x·w_true)); ``noise`` flips each label with that probability.
    """
    n = check_positive_int("n", n)
    d = check_positive_int("d", d)
    noise = check_nonnegative("noise", noise)
    if noise > 0.5:
        raise ValueError(f"noise must be in [0, 0.5], got {noise}")
    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, 2.0, size=d)
    x = rng.normal(0.0, 1.0 / np.sqrt(d), size=(n, d))
    p = 1.0 / (1.0 + np.exp(-x @ w))
    y = (rng.random(n) < p).astype(np.int64)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return x, y, w


def make_linear_regression(
    n: int, d: int, *, seed: int, noise: float = 0.1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded linear-regression data: ``(X [n, d], y [n], w_true [d])`` with y = X w + N(0, noise²)."""
    n = check_positive_int("n", n)
    d = check_positive_int("d", d)
    noise = check_nonnegative("noise", noise)
    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, 1.0, size=d)
    x = rng.normal(0.0, 1.0 / np.sqrt(d), size=(n, d))
    return x, x @ w + rng.normal(0.0, noise, size=n), w


def download(name: str, root: str | os.PathLike | None = None, *, dataset_cls: Any = None) -> Path:
    """Download a standard dataset into ``root`` with ``torchvision.datasets`` (paper profile).

    ``name`` is one of :data:`DATASETS`.  ``dataset_cls`` replaces the torchvision
    class (tests pass a subclass whose mirrors point at a local fixture).
    Returns the folder the files were written to.
    """
    check_choice("name", name, DATASETS)
    from dpcore.torchvision_compat import import_torchvision

    datasets = import_torchvision().datasets
    base = _root(root)
    base.mkdir(parents=True, exist_ok=True)
    if name in _TORCHVISION_FOLDERS:
        cls = dataset_cls or getattr(datasets, _TORCHVISION_FOLDERS[name])
        for train in (True, False):
            cls(str(base), train=train, download=True)
        return base / cls.__name__ / "raw" if dataset_cls else base / _TORCHVISION_FOLDERS[name] / "raw"
    if name == "cifar10":
        (dataset_cls or datasets.CIFAR10)(str(base), train=True, download=True)
        return base / "cifar-10-batches-py"
    for split in ("train", "test"):
        (dataset_cls or datasets.SVHN)(str(base), split=split, download=True)
    return base
