"""Data sets: one verified loading path for every file, seeded synthetic generators, provenance.

Nothing is committed: ``data/`` is a git-ignored cache.  Every file is listed in
``data/manifest.json`` (URL, mirror path, size, license, checksum) and resolved in one order:
the cache, the offline mirror (``DPCORE_DATA_MIRROR``, default ``../shared/data``), a download
from the canonical URL; each verified, else :class:`DataError` says what was tried and how to
provide the file (:mod:`dpcore.data.resolve`).  :func:`provenance` names what a result used.
"""

from __future__ import annotations

import os
from pathlib import Path

from dpcore.data.describe import provenance
from dpcore.data.images import (
    CIFAR10_CLASSES,
    cifar10_source,
    load_cifar10,
    load_fashion_mnist,
    load_mnist,
    load_svhn,
    read_idx,
)
from dpcore.data.manifest import DataError, ManifestError, load_manifest, manifest_path
from dpcore.data.resolve import download, fetch, find_entry, mirror_dir
from dpcore.data.synthetic import make_linear_regression, make_logistic_regression
from dpcore.data.tabular import LIBSVM_SETS, load_digits, load_insurance, load_libsvm, load_obesity

__all__ = [
    "DataError",
    "ManifestError",
    "CIFAR10_CLASSES",
    "LIBSVM_SETS",
    "load_manifest",
    "manifest_path",
    "mirror_dir",
    "fetch",
    "find_entry",
    "verified_path",
    "download",
    "provenance",
    "read_idx",
    "load_mnist",
    "load_fashion_mnist",
    "load_cifar10",
    "cifar10_source",
    "load_svhn",
    "load_insurance",
    "load_obesity",
    "load_libsvm",
    "load_digits",
    "make_logistic_regression",
    "make_linear_regression",
]


def verified_path(relative: str, root: str | os.PathLike | None = None) -> Path:
    """Verified cache path of the manifest file ``relative`` (whichever data set lists it); see :func:`fetch`."""
    return fetch(None, relative, root=root)
