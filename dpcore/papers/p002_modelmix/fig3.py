"""Fig. 3 of Xiao, Wan, Devadas (ModelMix): ε against iterations for regular DP-SGD and ModelMix.

:data:`FIG3` holds the figure's setting (n = 50K CIFAR-10 records, T = 5000, c = 20, δ = 1e-5, the
Mironov conversion and Theorem 4.1 / Corollary 4.1 alone); the noise multiplier of each panel is
calibrated so that regular DP-SGD reaches ε = 200 (TF-Privacy orders, Mironov conversion).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpcore.accounting.modelmix import TF_PRIVACY_ORDERS, dpsgd_rdp, epsilon_curve
from dpcore.accounting.rdp import rdp_to_epsilon
from dpcore.validation import check_positive_int

__all__ = ["FIG3", "FIG3_SAMPLE_RATES", "FIG3_TAUS", "FIG3_TARGET_REGULAR_EPSILON", "amplification_curves"]

#: Fig. 3's common setting (§5.1 of the paper).
FIG3: dict = dict(n=50_000, steps=5000, clip=20.0, delta=1e-5, conversion="mironov", bound="modelmix")
#: The panels' sampling rates q = B/n and envelope widths τ/η.
FIG3_SAMPLE_RATES: tuple[float, ...] = (0.02, 0.04)
FIG3_TAUS: tuple[float, ...] = (0.075, 0.15, 0.3)
#: Regular DP-SGD's ε at T = 5000 that fixes the noise of each panel.
FIG3_TARGET_REGULAR_EPSILON = 200.0


def amplification_curves(
    steps: Sequence[int],
    *,
    n: int,
    batch_size: float,
    noise_multiplier: float,
    clip: float,
    tau: float,
    delta: float,
    linf_blocks: Sequence[int | None] = (None, 25, 100),
    conversion: str = "mironov",
    bound: str = "modelmix",
    regular_orders: Sequence[float] = TF_PRIVACY_ORDERS,
) -> dict[str, np.ndarray]:
    """Fig. 3's curves: ε after each entry of ``steps`` for regular DP-SGD (same noise, ``regular_orders``)
    and ModelMix with each ℓ∞ parameter in ``linf_blocks`` (None = plain ModelMix, default orders).

    Keys: ``"steps"``, ``"regular DP-SGD"``, ``"ModelMix"``, ``"ModelMix p=<p>"``.  The defaults are the
    paper's: Mironov conversion, Theorem 4.1 / Corollary 4.1 alone (``bound="modelmix"``).
    """
    steps = [check_positive_int("steps", s) for s in steps]
    if not steps:
        raise ValueError("steps must be a non-empty sequence of positive integers")
    a, per_step = dpsgd_rdp(
        n=n, batch_size=batch_size, steps=1, noise_multiplier=noise_multiplier, orders=regular_orders
    )
    out = {
        "steps": np.asarray(steps),
        "regular DP-SGD": np.array([rdp_to_epsilon(a, s * per_step, delta, conversion=conversion) for s in steps]),
    }
    for p in linf_blocks:
        key = "ModelMix" if p is None else f"ModelMix p={p}"
        out[key] = epsilon_curve(
            steps,
            n=n,
            batch_size=batch_size,
            noise_multiplier=noise_multiplier,
            clip=clip,
            tau=tau,
            delta=delta,
            linf_blocks=p,
            conversion=conversion,
            bound=bound,
        )
    return out
