"""DP training engine: one trainer for Algorithm 1 of paper 003 (so DP-SGD, ModelMix and Proactive DP).

>>> from dpcore.training import TrainConfig, train                       # doctest: +SKIP
>>> cfg = TrainConfig(sampling="poisson", batch_size=256, epochs=1, clipping="individual",
...                   clip_norm=1.0, noise_multiplier=1.0, lr=0.1)       # doctest: +SKIP
>>> result = train(model, (x, y), cfg, eval_fn=make_classification_eval(x_test, y_test))  # doctest: +SKIP
>>> epsilon_for_record(result.record, 1e-5)                              # doctest: +SKIP

Modules: :mod:`~dpcore.training.config` (what a run is), :mod:`~dpcore.training.sampling`,
:mod:`~dpcore.training.persample` (clipped sums of per-group gradients), :mod:`~dpcore.training.schedules`,
:mod:`~dpcore.training.modelmix`, :mod:`~dpcore.training.trainer`, :mod:`~dpcore.training.async_clients`.
"""

from dpcore.training.allocator import tune_cpu_allocator
from dpcore.training.async_clients import AsyncResult, run_async_clients
from dpcore.training.config import CLIPPINGS, NOISE_CONVENTIONS, REDUCTIONS, TrainConfig
from dpcore.training.modelmix import ModelMixConfig
from dpcore.training.persample import clip_factors, clipped_group_sum, layer_engine_supported, per_group_gradients
from dpcore.training.sampling import SAMPLINGS, BatchPlan
from dpcore.training.schedules import ConstantLR, DecayOnMetricDrop, InverseTimeDecay, MultiStepLR
from dpcore.training.trainer import (
    LOSSES,
    NonFiniteError,
    Privatizer,
    Trainer,
    TrainResult,
    check_model,
    make_classification_eval,
    make_loss,
    resolve_device,
    train,
)

__all__ = [
    "NonFiniteError",
    "check_model",
    "AsyncResult",
    "BatchPlan",
    "CLIPPINGS",
    "ConstantLR",
    "DecayOnMetricDrop",
    "InverseTimeDecay",
    "LOSSES",
    "ModelMixConfig",
    "MultiStepLR",
    "NOISE_CONVENTIONS",
    "Privatizer",
    "REDUCTIONS",
    "SAMPLINGS",
    "TrainConfig",
    "TrainResult",
    "Trainer",
    "clip_factors",
    "clipped_group_sum",
    "layer_engine_supported",
    "make_classification_eval",
    "make_loss",
    "per_group_gradients",
    "resolve_device",
    "run_async_clients",
    "train",
    "tune_cpu_allocator",
]
