"""Small helpers the training notebooks share: image tensors, reduced splits, side-by-side runs with their ε.

>>> x, y = image_tensors(np.zeros((2, 28, 28), np.uint8), np.array([3, 1]), mean=0.1307, std=0.3081)
>>> tuple(x.shape), round(float(x[0, 0, 0, 0]), 4), y.tolist()
((2, 1, 28, 28), -0.4242, [3, 1])
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from dpcore.accounting.records import choose_accountant, epsilon_for_record
from dpcore.training.config import TrainConfig
from dpcore.training.trainer import LossFn, train
from dpcore.validation import check_open_unit, check_positive_int

__all__ = ["MNIST_MEAN", "MNIST_STD", "image_tensors", "reduced_split", "compare_runs"]

#: public normalisation constants (fixed, not computed from the private data: outside the accounted mechanism)
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081


def image_tensors(images: np.ndarray, labels: np.ndarray, *, mean: float, std: float) -> tuple[Tensor, Tensor]:
    """uint8 images [n, H, W] or [n, H, W, C] → float32 [n, C, H, W] normalised by public constants."""
    arr = np.asarray(images)
    if arr.ndim == 3:
        arr = arr[:, None]
    elif arr.ndim == 4:
        arr = arr.transpose(0, 3, 1, 2)
    else:
        raise ValueError(f"images must have 3 or 4 dimensions, got shape {arr.shape}")
    x = (torch.tensor(arr, dtype=torch.float32) / 255.0 - mean) / std
    return x, torch.as_tensor(np.asarray(labels), dtype=torch.int64)


def reduced_split(
    x: Tensor, y: Tensor, n_train: int, n_test: int, *, seed: int = 0
) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor]]:
    """A seeded random split of (x, y) into disjoint train / test parts of the given sizes."""
    n_train = check_positive_int("n_train", n_train)
    n_test = check_positive_int("n_test", n_test)
    if n_train + n_test > x.shape[0]:
        raise ValueError(f"n_train + n_test must be <= {x.shape[0]}, got {n_train + n_test}")
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(seed))
    tr, te = perm[:n_train], perm[n_train : n_train + n_test]
    return (x[tr], y[tr]), (x[te], y[te])


def _epsilon(record: Mapping, delta: float, **kw) -> tuple[float, str]:
    try:
        return epsilon_for_record(record, delta, **kw), choose_accountant(record, **kw).description
    except ValueError as exc:  # an honest refusal is part of the result
        return math.nan, f"refused: {exc}"


def compare_runs(
    runs: Mapping[str, TrainConfig],
    model_fn: Callable[[], nn.Module],
    train_data: tuple[Tensor, Tensor],
    eval_fn: Callable[[nn.Module], dict[str, float]],
    *,
    delta: float,
    loss: str | LossFn = "cross_entropy",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train one fresh ``model_fn()`` per configuration; return (history, summary) frames.

    history: one row per evaluation (run, epoch, step, metrics); summary: one row per run with the
    record's sampling, clipping, noise convention and std, final metrics, wall time, ε at ``delta``
    from :func:`dpcore.accounting.records.epsilon_for_record` (NaN with the reason when refused) and,
    for ModelMix runs, the plain DP-SGD ε as well.
    """
    delta = check_open_unit("delta", delta)
    hist_rows, summary = [], []
    for name, cfg in runs.items():
        start = time.perf_counter()
        result = train(model_fn(), train_data, cfg, loss=loss, eval_fn=eval_fn)
        seconds = time.perf_counter() - start
        for h in result.history:
            hist_rows.append({"run": name, **h})
        rec = result.record
        eps, how = _epsilon(rec, delta)
        row = {
            "run": name,
            "sampling": rec["sampling"],
            "clipping": rec["clipping"],
            "group_size": rec["group_size"],
            "noise_convention": rec["noise_convention"],
            "noise_std": rec["noise_std"],
            "steps": rec["steps"],
            "epochs": rec["epochs"],
            **{k: v for k, v in result.history[-1].items() if k not in ("step", "epoch", "lr")},
            "epsilon": eps,
            "accountant": how,
            "seconds": seconds,
        }
        if rec.get("modelmix") is not None:
            row["epsilon_plain"] = _epsilon(rec, delta, modelmix="plain")[0]
        summary.append(row)
    return pd.DataFrame(hist_rows), pd.DataFrame(summary)
