"""Data of an experiment run: named image data sets, seeded subsets and validation splits, cached.

A :class:`DatasetSpec` says how to load a data set's ``"train"`` and ``"test"`` splits (uint8 images and
int64 labels), their sizes and image shape, and the public normalisation constants (fixed, outside the
accounted mechanism, as in paper 003 App. H: normalisation is public).  :func:`prepare` turns a
:class:`~dpcore.experiments.config.RunConfig` into tensors:

* the training pool is the whole training split, or a seeded subset of ``train_size`` examples;
* ``validation_size`` examples of that pool are held out as the validation split (carved from the
  training set, never from the test set); the run trains on the rest, so N = pool − validation;
* the evaluated split is the test split (a seeded subset of ``test_size`` if given) or the validation split.

Loaded arrays and prepared tensors are cached (a grid's runs share them).  With ``synthetic_ok=True``
(dry runs only) a data set whose files are missing is replaced by seeded random images of exactly its
shape and size, and the returned provenance says so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from torch import Tensor

from dpcore.experiments.adapters import DatasetUnavailable, library_provenance, load_dataset
from dpcore.experiments.config import RunConfig
from dpcore.training.sampling import derive_seed

__all__ = ["DatasetSpec", "PreparedData", "DATASETS", "register_dataset", "prepare", "clear_cache"]

Loader = Callable[[str], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class DatasetSpec:
    """How to load one data set: ``loader(split)``, split sizes, image shape (H, W) or (H, W, C), constants."""

    name: str
    loader: Loader
    sizes: tuple[tuple[str, int], ...]  # (("train", n), ("test", n))
    image_shape: tuple[int, ...]
    classes: int
    mean: tuple[float, ...]
    std: tuple[float, ...]
    source: str = ""

    def size(self, split: str) -> int:
        return dict(self.sizes)[split]


@dataclass(frozen=True)
class PreparedData:
    """Tensors of one run: training (x, y), evaluated (x, y) and where they came from."""

    train: tuple[Tensor, Tensor]
    evaluation: tuple[Tensor, Tensor]
    provenance: dict
    synthetic: bool


def _mnist(split: str) -> tuple[np.ndarray, np.ndarray]:
    return load_dataset("mnist", split)


def _cifar10(split: str) -> tuple[np.ndarray, np.ndarray]:
    return load_dataset("cifar10", split)


DATASETS: dict[str, DatasetSpec] = {
    "mnist": DatasetSpec(
        "mnist", _mnist, (("train", 60_000), ("test", 10_000)), (28, 28), 10, (0.1307,), (0.3081,),
        "MNIST (LeCun et al. 1998), dpcore.data.load_mnist",
    ),
    "cifar10": DatasetSpec(
        "cifar10", _cifar10, (("train", 50_000), ("test", 10_000)), (32, 32, 3), 10,
        (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616),
        "CIFAR-10 (Krizhevsky 2009), dpcore.data.load_cifar10",
    ),
}  # fmt: skip


def register_dataset(spec: DatasetSpec, *, replace: bool = False) -> None:
    """Add a data set (tests add tiny synthetic ones); ``replace`` to overwrite a name."""
    if not isinstance(spec, DatasetSpec):
        raise ValueError(f"spec must be a DatasetSpec, got {type(spec).__name__}")
    if spec.name in DATASETS and not replace:
        raise ValueError(f"name {spec.name!r} is already registered; pass replace=True to overwrite it")
    DATASETS[spec.name] = spec
    clear_cache()


def clear_cache() -> None:
    """Forget loaded arrays and prepared tensors."""
    _load.cache_clear()
    _prepare.cache_clear()


def _spec(name: str) -> DatasetSpec:
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {', '.join(map(repr, DATASETS))}; got {name!r}")
    return DATASETS[name]


def _digest(images: np.ndarray, labels: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(images).tobytes())
    h.update(np.ascontiguousarray(labels).tobytes())
    return h.hexdigest()[:16]


@lru_cache(maxsize=4)
def _load(name: str, split: str, synthetic_ok: bool) -> tuple[np.ndarray, np.ndarray, dict, bool]:
    spec = _spec(name)
    try:
        images, labels = spec.loader(split)
    except DatasetUnavailable as exc:
        if not synthetic_ok:
            raise
        n = spec.size(split)
        rng = np.random.default_rng(derive_seed(0, "synthetic", name, split))
        images = rng.integers(0, 256, size=(n, *spec.image_shape), dtype=np.uint8)
        labels = rng.integers(0, spec.classes, size=n).astype(np.int64)
        shape = "x".join(map(str, (n, *spec.image_shape)))
        what = f"SYNTHETIC stand-in of the shape of {name} {split} ({shape}): {exc}"
        return images, labels, {"source": what, "sha256_16": _digest(images, labels)}, True
    if tuple(images.shape[1:]) != spec.image_shape:
        raise ValueError(f"{name} {split}: images have shape {images.shape[1:]}, expected {spec.image_shape}")
    info = {"source": spec.source, "split": split, "examples": int(images.shape[0])}
    info["sha256_16"] = _digest(images, labels)
    library = library_provenance(name, split) if name in ("mnist", "cifar10") else None
    if library is not None:
        info["library"] = library
    return images, labels, info, False


def _to_tensor(images: np.ndarray, spec: DatasetSpec) -> Tensor:
    arr = images[:, None] if images.ndim == 3 else images.transpose(0, 3, 1, 2)
    x = torch.from_numpy(np.ascontiguousarray(arr)).to(torch.float32).div_(255.0)
    mean = torch.tensor(spec.mean, dtype=torch.float32).view(1, -1, 1, 1)
    std = torch.tensor(spec.std, dtype=torch.float32).view(1, -1, 1, 1)
    return x.sub_(mean).div_(std)


def _subset(n: int, size: int | None, seed: int, stream: str, name: str) -> np.ndarray:
    if size is None:
        return np.arange(n)
    if size > n:
        raise ValueError(f"{name} must be <= {n} (the split's size), got {size}")
    gen = torch.Generator().manual_seed(derive_seed(seed, stream))
    return np.sort(torch.randperm(n, generator=gen)[:size].numpy())


@lru_cache(maxsize=4)
def _prepare(key: tuple, synthetic_ok: bool) -> PreparedData:
    name, train_size, validation_size, test_size, eval_split, data_seed = key
    spec = _spec(name)
    x_all, y_all, train_info, synth_train = _load(name, "train", synthetic_ok)
    pool = _subset(x_all.shape[0], train_size, data_seed, "train-pool", "train_size")
    if validation_size >= pool.size:
        raise ValueError(f"validation_size must be < {pool.size} (the training pool), got {validation_size}")
    if validation_size:
        gen = torch.Generator().manual_seed(derive_seed(data_seed, "validation"))
        order = torch.randperm(pool.size, generator=gen).numpy()
        val_idx, train_idx = np.sort(pool[order[:validation_size]]), np.sort(pool[order[validation_size:]])
    else:
        val_idx, train_idx = pool[:0], pool
    train = (_to_tensor(x_all[train_idx], spec), torch.from_numpy(y_all[train_idx]))
    provenance = {
        "train": {**train_info, "used": int(train_idx.size), "train_size": train_size, "data_seed": data_seed},
        "validation_size": validation_size,
    }
    synthetic = synth_train
    if eval_split == "validation":
        evaluation = (_to_tensor(x_all[val_idx], spec), torch.from_numpy(y_all[val_idx]))
        provenance["evaluation"] = "validation split carved from the training set"
    else:
        x_te, y_te, test_info, synth_test = _load(name, "test", synthetic_ok)
        idx = _subset(x_te.shape[0], test_size, data_seed, "test", "test_size")
        evaluation = (_to_tensor(x_te[idx], spec), torch.from_numpy(y_te[idx]))
        provenance["evaluation"] = {**test_info, "used": int(idx.size), "test_size": test_size}
        synthetic = synthetic or synth_test
    return PreparedData(train, evaluation, provenance, synthetic)


def prepare(config: RunConfig, *, synthetic_ok: bool = False) -> PreparedData:
    """The (cached) tensors of ``config``'s data; see the module docstring."""
    if not isinstance(config, RunConfig):
        raise ValueError(f"config must be a RunConfig, got {type(config).__name__}")
    _spec(config.dataset)
    key = (
        config.dataset,
        config.train_size,
        config.validation_size,
        config.test_size,
        config.eval_split,
        config.data_seed,
    )
    return _prepare(key, bool(synthetic_ok))
