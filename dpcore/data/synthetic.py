"""Seeded synthetic regression data (no files): used by tests and the accounting notebooks."""

from __future__ import annotations

import numpy as np

from dpcore.validation import check_nonnegative, check_positive_int

__all__ = ["make_logistic_regression", "make_linear_regression"]


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
