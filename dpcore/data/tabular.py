"""Tabular data sets: insurance, UCI obesity (paper 001), LIBSVM ijcnn1 / a9a (paper 000), sklearn digits.

Files go through :func:`dpcore.data.resolve.fetch` (cache, mirror, download; verified).
"""

from __future__ import annotations

import os

import numpy as np

from dpcore.data.arrays_cache import cached_arrays
from dpcore.data.manifest import DataError, load_manifest
from dpcore.data.resolve import fetch, find_entry
from dpcore.validation import check_choice

__all__ = ["LIBSVM_SETS", "load_insurance", "load_obesity", "load_libsvm", "load_digits"]

LIBSVM_SETS = ("ijcnn1", "a9a")
PathLike = str | os.PathLike | None


def load_insurance(root: PathLike = None, *, mirror: PathLike = None, manifest: PathLike = None):
    """Medical Cost Personal Datasets (1,338 rows): age, sex, bmi, children, smoker, region, charges.

    The insurance data of Lowy & Razaviyayn (ICLR 2023), App. I.2.
    """
    import pandas as pd

    return pd.read_csv(fetch("insurance", "insurance.csv", root=root, mirror=mirror, manifest=manifest))


def load_obesity(root: PathLike = None, *, mirror: PathLike = None, manifest: PathLike = None):
    """UCI obesity levels (2,111 rows, 17 columns; target ``NObeyesdad`` with 7 classes).

    The obesity data of Lowy & Razaviyayn (ICLR 2023), App. I.3.
    """
    import pandas as pd

    relative = "ObesityDataSet_raw_and_data_sinthetic.csv"
    return pd.read_csv(fetch("obesity", relative, root=root, mirror=mirror, manifest=manifest))


def load_libsvm(
    name: str, split: str, root: PathLike = None, *, mirror: PathLike = None, manifest: PathLike = None
) -> tuple[np.ndarray, np.ndarray]:
    """LIBSVM binary set ``name`` ("ijcnn1": 22 features, 49,990 / 91,701 rows; "a9a": 123 features,
    32,561 / 16,281 rows) as dense ``(float32 [n, d], int64 labels in {0, 1} [n])``.

    van Dijk et al., Proactive DP (arXiv 2102.09030), §5 trains logistic regression on an
    unnamed LIBSVM set with 5 clients x 10,000 records; ijcnn1 (49,990 training rows) is our
    documented stand-in, not confirmed as the paper's.  The feature count is fixed per set so
    train and test shapes agree.  Parsed arrays are cached under ``data/cache/``.
    """
    check_choice("name", name, LIBSVM_SETS)
    dataset = load_manifest(manifest)[name]
    check_choice("split", split, tuple(dataset.splits))
    spec = dataset.splits[split]
    relative = spec["files"][0]
    path = fetch(name, relative, root=root, mirror=mirror, manifest=manifest)
    options = dataset.extra.get("svmlight", {})

    def parse() -> dict[str, np.ndarray]:
        from sklearn.datasets import load_svmlight_file

        x, y = load_svmlight_file(
            str(path), n_features=int(options["n_features"]), zero_based=bool(options["zero_based"])
        )
        if not set(np.unique(y)) <= {-1.0, 1.0}:
            raise DataError(f"{path}: labels {sorted(set(np.unique(y)))} are not in {{-1, +1}}")
        return {"x": np.asarray(x.toarray(), dtype=np.float32), "y": (y > 0).astype(np.int64)}

    arrays = cached_arrays(find_entry(name, relative, manifest), split, ("x", "y"), parse, root)
    x, y = arrays["x"], arrays["y"]
    if x.ndim != 2 or y.shape != (len(x),) or not np.isin(y, (0, 1)).all():
        raise DataError(f"{name} {split}: decoded arrays have shapes {x.shape} / {y.shape} or labels outside {{0, 1}}")
    if spec.get("rows") is not None and len(x) != spec["rows"]:
        raise DataError(f"{name} {split}: {len(x)} rows, the manifest says {spec['rows']}")
    return x, y


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits: ``(X float64 [1797, 64] in [0, 16], y int64 [1797])``."""
    from sklearn.datasets import load_digits as sk_load_digits

    bunch = sk_load_digits()
    return bunch.data.astype(np.float64), bunch.target.astype(np.int64)
