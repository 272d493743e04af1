"""Corollary 4.1 of Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix": as printed
and as corrected.

The corrected form is the ModelMix mixing accountant of :mod:`dpcore.accounting.modelmix` (Theorem 4.1 and
Appendix C) with the paper's conversion (Mironov 2017, Prop. 3) and integer orders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpcore.accounting.modelmix import INTEGER_ORDERS, per_step_rdp
from dpcore.accounting.rdp import rdp_to_epsilon
from dpcore.validation import check_choice, check_open_unit, check_positive_int

__all__ = ["corollary41_epsilon"]


def corollary41_epsilon(
    *,
    n: int,
    batch_size: float,
    steps: int,
    noise_multiplier: float,
    clip: float,
    tau: float,
    delta: float,
    linf_blocks: int,
    mode: str = "corrected",
    orders: Sequence[float] = INTEGER_ORDERS,
) -> float:
    """Corollary 4.1 as printed (``mode="printed"``) or corrected (``mode="corrected"``).

    Printed: ε ≤ min_α [log Σ_k C(α,k)(1−q)^{α−k} q^k A_k + log(1/δ)] / (1 − α) -- the factor T is
    missing and the denominator has the wrong sign, so the value is negative and meaningless.
    Corrected (Theorem 4.1 and Appendix C): min_α [T·log Σ(...) + log(1/δ)] / (α − 1), identical to
    :func:`epsilon` with ``bound="modelmix"``, ``conversion="mironov"`` and integer orders.
    """
    check_choice("mode", mode, ("corrected", "printed"))
    delta = check_open_unit("delta", delta)
    steps = check_positive_int("steps", steps)
    a, per_step = per_step_rdp(
        orders,
        n=n,
        batch_size=batch_size,
        noise_multiplier=noise_multiplier,
        clip=clip,
        tau=tau,
        linf_blocks=linf_blocks,
        bound="modelmix",
    )
    if mode == "corrected":
        return rdp_to_epsilon(a, steps * per_step, delta, conversion="mironov")
    log_sum = per_step * (a - 1)  # log Σ_k C(α,k)(1−q)^{α−k} q^k A_k
    return float(np.min((log_sum + math.log(1 / delta)) / (1 - a)))
