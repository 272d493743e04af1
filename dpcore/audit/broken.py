"""Deliberately broken DP-SGD implementations, for checking that an audit catches them.

Each is a context manager that patches the trainer's code *for the duration of the block only* (the trainer
itself is unchanged); inside it, :class:`dpcore.training.Trainer` still records the configuration it was
given, so the accountant still claims the ε of a correct run.

* :func:`clipping_disabled` -- per-example gradients are summed unclipped (clip factors all 1);
* :func:`noise_scaled` -- the Gaussian noise is multiplied by a factor (0.5: half the claimed std);
* :func:`noise_seed_reused` -- every round draws the noise of round 0 (the same seed every step), so the noise
  cancels in the difference of two updates.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import torch
from torch import Tensor

from dpcore.training import persample
from dpcore.training.trainer import Privatizer
from dpcore.validation import check_nonnegative

__all__ = ["BROKEN", "clipping_disabled", "noise_scaled", "noise_seed_reused", "broken"]

BROKEN = ("clipping-disabled", "noise-x0.5", "noise-seed-reused")
_ORIGINAL_NOISE = Privatizer.noise


@contextmanager
def clipping_disabled() -> Iterator[None]:
    """Every clip factor is 1: [a]_C = a (the canary's full gradient reaches the sum)."""

    def no_clip(norms: Tensor, clip_norm: float) -> Tensor:
        return torch.ones_like(norms)

    with mock.patch.object(persample, "clip_factors", no_clip):
        yield


@contextmanager
def noise_scaled(factor: float) -> Iterator[None]:
    """The noise of every round multiplied by ``factor`` (the record still says σ)."""
    factor = check_nonnegative("factor", factor)

    def scaled(self: Privatizer, step: int) -> list[Tensor]:
        return [t * factor for t in _ORIGINAL_NOISE(self, step)]

    with mock.patch.object(Privatizer, "noise", scaled):
        yield


@contextmanager
def noise_seed_reused() -> Iterator[None]:
    """Every round draws the noise of round 0."""

    def same(self: Privatizer, step: int) -> list[Tensor]:
        return _ORIGINAL_NOISE(self, 0)

    with mock.patch.object(Privatizer, "noise", same):
        yield


def broken(name: str):
    """The context manager of a broken variant by name (:data:`BROKEN`)."""
    if name == "clipping-disabled":
        return clipping_disabled()
    if name == "noise-x0.5":
        return noise_scaled(0.5)
    if name == "noise-seed-reused":
        return noise_seed_reused()
    raise ValueError(f"name must be one of {', '.join(map(repr, BROKEN))}; got {name!r}")
