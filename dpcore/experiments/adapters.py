"""The one place where :mod:`dpcore.experiments` meets APIs that other branches are changing.

* run records: :meth:`dpcore.training.Trainer.record` returns a dict today and a frozen ``RunRecord``
  dataclass later; :func:`record_to_dict` accepts both and returns plain JSON-able data;
* data: :func:`load_dataset` calls the loaders of :mod:`dpcore.data` (``load_mnist(split)``,
  ``load_cifar10(split)``) and raises :class:`DatasetUnavailable` naming what is missing;
  :func:`library_provenance` returns the data module's provenance string when it offers one.
* accounting: :func:`standard_epsilon` calls the record accountant of :mod:`dpcore.accounting.records`.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = [
    "DatasetUnavailable",
    "record_to_dict",
    "load_dataset",
    "library_provenance",
    "LOADERS",
    "PROVENANCE_FUNCTION",
    "standard_epsilon",
]

#: dataset name -> function of :mod:`dpcore.data` returning ``(images uint8, labels int64)`` for a split
LOADERS = {"mnist": "load_mnist", "cifar10": "load_cifar10", "svhn": "load_svhn", "fashion_mnist": "load_fashion_mnist"}
#: function of :mod:`dpcore.data` giving a provenance string ``(name, split) -> str`` (optional)
PROVENANCE_FUNCTION = "provenance"


class DatasetUnavailable(FileNotFoundError):
    """A dataset's loader or files are not available in this checkout."""


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return [_plain(v) for v in items]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


def record_to_dict(record: Any) -> dict[str, Any]:
    """A run record (dict, or a dataclass such as ``RunRecord``, via its ``to_dict`` if any) as JSON-able data."""
    if callable(getattr(record, "to_dict", None)):
        return _plain(record.to_dict())
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return _plain(dataclasses.asdict(record))
    if isinstance(record, Mapping):
        return _plain(record)
    raise ValueError(f"record must be a dict or a dataclass instance, got {type(record).__name__}")


def load_dataset(name: str, split: str) -> tuple[np.ndarray, np.ndarray]:
    """``(images uint8 [n, H, W(, C)], labels int64 [n])`` of ``split`` from :mod:`dpcore.data`."""
    if name not in LOADERS:
        raise ValueError(f"name must be one of {', '.join(map(repr, LOADERS))}; got {name!r}")
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    data = importlib.import_module("dpcore.data")
    loader = getattr(data, LOADERS[name], None)
    if loader is None:
        raise DatasetUnavailable(f"dpcore.data has no {LOADERS[name]}(split); the {name} loader is not merged here")
    try:
        images, labels = loader(split)
    except FileNotFoundError as exc:  # dpcore.data.DataError: a missing or corrupt file, with how to get it
        raise DatasetUnavailable(f"{name} {split} is not available: {exc}") from exc
    images, labels = np.asarray(images), np.asarray(labels)
    if images.dtype != np.uint8 or labels.shape != (images.shape[0],):
        raise ValueError(
            f"{LOADERS[name]}({split!r}) returned images {images.dtype} {images.shape} and labels {labels.shape}; "
            "expected uint8 images and one label per image"
        )
    return images, labels.astype(np.int64)


def library_provenance(name: str, split: str) -> str | None:
    """The provenance string of :mod:`dpcore.data` for (name, split), or ``None`` if it offers none."""
    data = importlib.import_module("dpcore.data")
    fn = getattr(data, PROVENANCE_FUNCTION, None)
    if fn is None:
        return None
    text = fn(name, split)
    return None if text is None else str(text)



def standard_epsilon(record: Mapping[str, Any], delta: float) -> tuple[float, str]:
    """ε at ``delta`` of a run record with the library's accountant for its sampler, and that accountant's label.

    (:func:`dpcore.accounting.records.epsilon_for_record`: Poisson -> PLD of the subsampled Gaussian,
    fixed-size -> the GDP CLT for uniform subsampling; see that module for the table.)
    """
    records = importlib.import_module("dpcore.accounting.records")
    choice = records.choose_accountant(record)
    return float(records.epsilon_for_record(record, delta)), choice.description
