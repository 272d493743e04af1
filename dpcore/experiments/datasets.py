"""Data of an experiment run: named image data sets, seeded subsets and validation splits, cached.

A :class:`DatasetSpec` says how to load a data set's ``"train"`` and ``"test"`` splits (uint8 images and
int64 labels), their sizes and image shape, and the public normalisation constants (fixed, outside the
accounted mechanism, as in paper 003 App. H: normalisation is public).  :func:`prepare` turns a
:class:`~dpcore.experiments.config.RunConfig` into tensors:

* the training pool is the whole training split, or a seeded subset of ``train_size`` examples;
* ``validation_size`` examples of that pool are held out as the validation split (carved from the
  training set, never from the test set); the run trains on the rest, so N = pool − validation;
* the evaluated split is the test split (a seeded subset of ``test_size`` if given) or the validation split.

A spec with ``features`` (paper 002's ScatterNet variants ``cifar10_scatter`` and ``fmnist_scatter``)
maps the images, scaled to [0, 1], through a fixed public feature map (:data:`FEATURES`: the J = 2, L = 8
scattering transform of :class:`dpcore.models.Scattering2D`); the features of exactly the images a run
uses are computed once and cached under ``data/cache/`` (git-ignored), keyed by the feature map and a
checksum of those images.  ``svhn`` is download-only (Fashion-MNIST is in the offline mirror): a missing file raises
:class:`~dpcore.experiments.adapters.DatasetUnavailable` with :mod:`dpcore.data`'s message.

Loaded arrays and prepared tensors are cached (a grid's runs share them).  With ``synthetic_ok=True``
(dry runs only) a data set whose files are missing is replaced by seeded random images of exactly its
shape and size (and a feature data set whose features are not cached yet gets zero features of their
shape: computing them is a one-off cost the dry run does not time), and the returned provenance says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from torch import Tensor

from dpcore.data.arrays_cache import CacheWarning
from dpcore.data.resolve import file_digest
from dpcore.experiments.adapters import DatasetUnavailable, library_provenance, load_dataset
from dpcore.experiments.config import RunConfig
from dpcore.experiments.store import atomic_write_json
from dpcore.paths import data_dir
from dpcore.training.sampling import derive_seed

__all__ = [
    "DatasetSpec",
    "PreparedData",
    "DATASETS",
    "FEATURES",
    "register_dataset",
    "prepare",
    "clear_cache",
    "feature_cache_path",
]

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
    features: str = ""  # a key of FEATURES (paper 002's ScatterNet variants), "" for the images themselves
    library_name: str = ""  # the dpcore.data name whose provenance string is recorded ("" for none)

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


def _svhn(split: str) -> tuple[np.ndarray, np.ndarray]:
    return load_dataset("svhn", split)


def _fashion_mnist(split: str) -> tuple[np.ndarray, np.ndarray]:
    return load_dataset("fashion_mnist", split)


def _scattering_j2_l8(x: Tensor) -> Tensor:
    """S_J x with J = 2, L = 8 (Bruna & Mallat 2013) of images in [0, 1]: 81 channels per input channel at H/4 × W/4
    (Tramèr & Boneh 2021, as paper 002's Table I uses it)."""
    from dpcore.models import Scattering2D
    from dpcore.training.trainer import resolve_device

    device = resolve_device("auto")  # a public, data-independent map: on a GPU when there is one
    scat = Scattering2D(tuple(x.shape[-2:]), J=2, L=8).to(device)
    with torch.no_grad():
        return torch.cat([scat(chunk.to(device)).cpu() for chunk in torch.split(x, 2048)])


#: fixed public feature maps: name -> (map of a float image batch (N, C, H, W), output shape of one image for (C, H, W))
FEATURES: dict[str, tuple[Callable[[Tensor], Tensor], Callable[[tuple[int, int, int]], tuple[int, ...]]]] = {
    "scattering_J2_L8": (_scattering_j2_l8, lambda chw: (81 * chw[0], chw[1] // 4, chw[2] // 4)),
}


DATASETS: dict[str, DatasetSpec] = {
    "mnist": DatasetSpec(
        "mnist", _mnist, (("train", 60_000), ("test", 10_000)), (28, 28), 10, (0.1307,), (0.3081,),
        "MNIST (LeCun et al. 1998), dpcore.data.load_mnist", library_name="mnist",
    ),
    "cifar10": DatasetSpec(
        "cifar10", _cifar10, (("train", 50_000), ("test", 10_000)), (32, 32, 3), 10,
        (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616),
        "CIFAR-10 (Krizhevsky 2009), dpcore.data.load_cifar10", library_name="cifar10",
    ),
    "svhn": DatasetSpec(
        "svhn", _svhn, (("train", 73_257), ("test", 26_032)), (32, 32, 3), 10,
        (0.4377, 0.4438, 0.4728), (0.1980, 0.2010, 0.1970),
        "SVHN cropped digits (Netzer et al. 2011), dpcore.data.load_svhn (download only)", library_name="svhn",
    ),
    "cifar10_scatter": DatasetSpec(
        "cifar10_scatter", _cifar10, (("train", 50_000), ("test", 10_000)), (32, 32, 3), 10,
        (0.0, 0.0, 0.0), (1.0, 1.0, 1.0),
        "CIFAR-10 (Krizhevsky 2009) in [0, 1] -> ScatterNet J=2, L=8 (243x8x8), dpcore.data.load_cifar10",
        features="scattering_J2_L8", library_name="cifar10",
    ),
    "fmnist_scatter": DatasetSpec(
        "fmnist_scatter", _fashion_mnist, (("train", 60_000), ("test", 10_000)), (28, 28), 10, (0.0,), (1.0,),
        "Fashion-MNIST (Xiao et al. 2017) in [0, 1] -> ScatterNet J=2, L=8 (81x7x7), dpcore.data.load_fashion_mnist",
        features="scattering_J2_L8", library_name="fashion-mnist",
    ),
    # reference controls (issue 51): Tramèr & Boneh's pipelines (ftramer/Handcrafted-DP@6568e8f data.py L53-69: MNIST
    # and Fashion-MNIST as ToTensor() only, pixels in [0, 1]; their ScatterNet on those pixels)
    "mnist_scatter": DatasetSpec(
        "mnist_scatter", _mnist, (("train", 60_000), ("test", 10_000)), (28, 28), 10, (0.0,), (1.0,),
        "MNIST (LeCun et al. 1998) in [0, 1] -> ScatterNet J=2, L=8 (81x7x7), dpcore.data.load_mnist",
        features="scattering_J2_L8", library_name="mnist",
    ),
    "mnist01": DatasetSpec(
        "mnist01", _mnist, (("train", 60_000), ("test", 10_000)), (28, 28), 10, (0.0,), (1.0,),
        "MNIST (LeCun et al. 1998) in [0, 1] (Tramer-Boneh's ToTensor only), dpcore.data.load_mnist",
        library_name="mnist",
    ),
    "fmnist01": DatasetSpec(
        "fmnist01", _fashion_mnist, (("train", 60_000), ("test", 10_000)), (28, 28), 10, (0.0,), (1.0,),
        "Fashion-MNIST (Xiao et al. 2017) in [0, 1] (Tramer-Boneh's ToTensor only), dpcore.data.load_fashion_mnist",
        library_name="fashion-mnist",
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
    library = library_provenance(spec.library_name, split) if spec.library_name else None
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


def feature_cache_path(feature: str, images: np.ndarray) -> str:
    """``data/cache/features-<feature>-<sha256 of the images, 16 hex digits>.pt``: one file per image set."""
    if feature not in FEATURES:
        raise ValueError(f"feature must be one of {', '.join(map(repr, FEATURES))}; got {feature!r}")
    digest = hashlib.sha256(np.ascontiguousarray(images).tobytes()).hexdigest()[:16]
    return os.path.join(data_dir(), "cache", f"features-{feature}-{digest}-n{images.shape[0]}.pt")


def _tensor(images: np.ndarray, spec: DatasetSpec, synthetic_ok: bool) -> tuple[Tensor, str]:
    """The model input of ``images`` and a note: normalised images, or their (cached) features."""
    x = _to_tensor(images, spec)
    if not spec.features:
        return x, ""
    fmap, out_shape = FEATURES[spec.features]
    path = feature_cache_path(spec.features, images)
    name = "data/cache/" + os.path.basename(path)
    rebuilt = ""
    if os.path.exists(path):
        cached, problem = _verified_features(path, (images.shape[0], *out_shape(tuple(x.shape[1:]))))
        if cached is not None:
            return cached, f"{spec.features} (cached {name}, verified)"
        if synthetic_ok:  # a dry run never spends minutes on the features
            problem = f"{problem}; not rebuilt in a dry run"
        warnings.warn(f"{name}: {problem} -- recomputing the features", CacheWarning, stacklevel=2)
        rebuilt = f"; the cached file was rejected: {problem}"
    if synthetic_ok:
        shape = (images.shape[0], *out_shape(tuple(x.shape[1:])))  # zeros: cheap for 50,000 x 243 x 8 x 8
        return torch.zeros(shape), f"SYNTHETIC (zero) {spec.features} features: {name} is not computed yet"
    start = time.perf_counter()
    feats = fmap(x).contiguous()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    torch.save(feats, tmp)
    digest = file_digest(tmp, "sha256")
    os.replace(tmp, path)
    atomic_write_json(path + ".json", {"sha256": digest, "shape": list(feats.shape), "dtype": str(feats.dtype)})
    return feats, f"{spec.features} (computed in {time.perf_counter() - start:.0f} s, cached {name}{rebuilt})"


def _verified_features(path: str, shape: tuple[int, ...]) -> tuple[Tensor | None, str]:
    """The cached features at ``path`` if the digest record ``<path>.json`` written with them vouches for the
    file and the tensor has ``shape``; else ``(None, why)`` (issue 26 §5: nothing cached is trusted unverified)."""
    side = path + ".json"
    try:
        with open(side, encoding="utf-8") as fh:
            record = json.load(fh)
        expected = record["sha256"]
    except FileNotFoundError:
        return None, "no digest record (written before the cache was verified, or interrupted)"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"digest record {os.path.basename(side)} is unreadable ({type(exc).__name__}: {exc})"
    got = file_digest(path, "sha256")
    if got != expected:
        return None, f"sha256 {got[:16]}… does not match the digest record ({str(expected)[:16]}…)"
    feats = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(feats, Tensor) or tuple(feats.shape) != shape or not torch.isfinite(feats).all():
        return None, f"the cached tensor is not finite of shape {shape}"
    return feats, ""


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
    x_train, feat_note = _tensor(x_all[train_idx], spec, synthetic_ok)
    train = (x_train, torch.from_numpy(y_all[train_idx]))
    provenance = {
        "train": {**train_info, "used": int(train_idx.size), "train_size": train_size, "data_seed": data_seed},
        "validation_size": validation_size,
    }
    if feat_note:
        provenance["features"] = feat_note
    synthetic = synth_train or feat_note.startswith("SYNTHETIC")
    if eval_split == "validation":
        evaluation = (_tensor(x_all[val_idx], spec, synthetic_ok)[0], torch.from_numpy(y_all[val_idx]))
        provenance["evaluation"] = "validation split carved from the training set"
    else:
        x_te, y_te, test_info, synth_test = _load(name, "test", synthetic_ok)
        idx = _subset(x_te.shape[0], test_size, data_seed, "test", "test_size")
        x_eval, eval_note = _tensor(x_te[idx], spec, synthetic_ok)
        evaluation = (x_eval, torch.from_numpy(y_te[idx]))
        provenance["evaluation"] = {**test_info, "used": int(idx.size), "test_size": test_size}
        synthetic = synthetic or synth_test or eval_note.startswith("SYNTHETIC")
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
