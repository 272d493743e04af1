"""Clipping bias of per-sample ℓ2 clipping: Example 3.1 of paper 002 (Xiao, Wan, Devadas, ModelMix).

The paper's example: f(w, x) = (w − x)²/2 on the three points x ∈ {−20, −10, 90}, so
F'(w) = w − 20 (minimum at w = 20) and the per-sample gradients w − x have standard deviation
49.7 around it.  With clipping threshold c = 1 the expected clipped gradient is 1/3 both at the
optimum w = 20 (true gradient 0) and at w = 0, where the true gradient is −20: clipping below the
scale of the per-sample gradient noise can point the wrong way (§3.3, the first observation after Example 3.1).

>>> clipped_mean_gradient(0.0, EXAMPLE_31_POINTS, clip=1.0), mean_gradient(0.0, EXAMPLE_31_POINTS)
(0.3333333333333333, -20.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpcore.validation import check_finite, check_positive

__all__ = ["EXAMPLE_31_POINTS", "mean_gradient", "clipped_mean_gradient", "gradient_noise_std", "example31_values"]

EXAMPLE_31_POINTS: tuple[float, ...] = (-20.0, -10.0, 90.0)


def _points(xs: Sequence[float]) -> np.ndarray:
    x = np.asarray(xs, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"xs must be a non-empty 1-D sequence of finite numbers, got {xs!r}")
    return x


def mean_gradient(w: float, xs: Sequence[float]) -> float:
    """F'(w) = mean_i (w − x_i) of F(w) = mean_i (w − x_i)²/2."""
    return float(np.mean(check_finite("w", w) - _points(xs)))


def clipped_mean_gradient(w: float, xs: Sequence[float], *, clip: float) -> float:
    """mean_i CP(w − x_i, c): the expected per-sample-clipped gradient (CP(g, c) = g·min(1, c/|g|))."""
    g = check_finite("w", w) - _points(xs)
    c = check_positive("clip", clip)
    return float(np.mean(g * np.minimum(1.0, c / np.maximum(np.abs(g), 1e-300))))


def gradient_noise_std(w: float, xs: Sequence[float]) -> float:
    """Population standard deviation of the per-sample gradients w − x_i (independent of w here)."""
    return float(np.std(check_finite("w", w) - _points(xs)))


def example31_values(xs: Sequence[float] = EXAMPLE_31_POINTS, *, clip: float = 1.0) -> dict[str, float | bool]:
    """Example 3.1's quantities (claim keys -> value): the per-sample gradient std, the expected clipped
    gradient at the optimum w = 20 and at w = 0, the true gradient at w = 0, and whether the clipped
    gradient at w = 0 points against the true one."""
    at0 = clipped_mean_gradient(0.0, xs, clip=clip)
    true0 = mean_gradient(0.0, xs)
    return {
        "ex3.1.grad_std": gradient_noise_std(0.0, xs),
        "ex3.1.clipped_grad.w20": clipped_mean_gradient(20.0, xs, clip=clip),
        "ex3.1.clipped_grad.w0": at0,
        "ex3.1.true_grad.w0": true0,
        "ex3.1.opposite_direction.w0": bool(at0 * true0 < 0),
    }
