"""Corollary 4.1 of Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix": as printed
and as corrected.

The corrected form is the ModelMix mixing accountant of :mod:`dpcore.accounting.modelmix` (Theorem 4.1 and
Appendix C) with the paper's conversion (Mironov 2017, Prop. 3) and integer orders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpcore.accounting.modelmix import INTEGER_ORDERS, MAX_NOISE_RATIO, ModelMixSetting, per_step_rdp
from dpcore.accounting.rdp import rdp_to_epsilon
from dpcore.papers.p002_modelmix.fig3 import FIG3, PANELS, accountant_range, check_counts, check_frame
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int

__all__ = ["corollary41_epsilon", "fig3_printed_vs_corrected", "claim_values", "CLAIM_PANEL"]

#: The panel whose Corollary 4.1 values are claims (Fig. 3(c), the one the text quotes first: 5.4 and 4.8).
CLAIM_PANEL = "c"


def corollary41_epsilon(
    *,
    n: int,
    batch_size: float,
    steps: int,
    noise_multiplier: float,
    clip: float,
    tau: float,
    delta: float,
    linf_blocks: int | None,
    mode: str = "corrected",
    orders: Sequence[float] = INTEGER_ORDERS,
) -> float:
    """Corollary 4.1 as printed (``mode="printed"``) or corrected (``mode="corrected"``).

    Printed: ε ≤ min_α [log Σ_k C(α,k)(1−q)^{α−k} q^k A_k + log(1/δ)] / (1 − α) -- the factor T is
    missing and the denominator has the wrong sign, so the value is negative and meaningless.
    Corrected (Theorem 4.1 and Appendix C): min_α [T·log Σ(...) + log(1/δ)] / (α − 1), identical to
    :func:`epsilon` with ``bound="modelmix"``, ``conversion="mironov"`` and integer orders.  ``linf_blocks=None``
    is ℓ2 clipping (Theorem 4.1, p = 1).  Only the corrected value is an ε (≥ 0); the printed one reproduces the
    erratum and is negative.
    """
    check_choice("mode", mode, ("corrected", "printed"))
    delta = check_open_unit("delta", delta)
    steps = check_positive_int("steps", steps)
    if check_positive("noise_multiplier", noise_multiplier) > MAX_NOISE_RATIO:
        raise ValueError(f"noise_multiplier must be in (0, {MAX_NOISE_RATIO:g}], got {noise_multiplier}")
    setting = ModelMixSetting(n=n, batch_size=batch_size, noise_multiplier=noise_multiplier, clip=clip, tau=tau,
                              linf_blocks=linf_blocks)  # fmt: skip
    a, per_step = per_step_rdp(setting, orders, bound="modelmix")
    if mode == "corrected":
        return rdp_to_epsilon(a, steps * per_step, delta, conversion="mironov")
    log_sum = per_step * (a - 1)  # log Σ_k C(α,k)(1−q)^{α−k} q^k A_k
    return float(np.min((log_sum - math.log(delta)) / (1 - a)))


def fig3_printed_vs_corrected(
    z: float, *, panels: str = "abc", linf_blocks: tuple[int, ...] = (25, 100)
) -> pd.DataFrame:
    """Corollary 4.1 as printed and corrected at each Fig. 3 panel in ``panels`` and each p in ``linf_blocks``.

    ``z`` is the panel's calibrated noise multiplier (:func:`dpcore.papers.p002_modelmix.fig3.calibrate`).
    Columns: ``panel``, ``p``, ``as printed``, ``corrected``, ``key`` (the claim key for
    :data:`CLAIM_PANEL`, else empty).
    """
    z = check_positive("z", z)
    if not isinstance(panels, str) or not panels or not set(panels) <= set(PANELS):
        raise ValueError(f"panels must be a string of letters among {sorted(PANELS)}, got {panels!r}")
    linf_blocks = check_counts("linf_blocks", linf_blocks, maximum=10**6)
    rows = []
    for letter in panels:
        q, tau = PANELS[letter]
        for p in linf_blocks:
            kw = dict(n=FIG3["n"], batch_size=q * FIG3["n"], steps=FIG3["steps"], noise_multiplier=z,
                      clip=FIG3["clip"], tau=tau, delta=FIG3["delta"], linf_blocks=p)  # fmt: skip
            with accountant_range(z=z):
                printed, corrected = (corollary41_epsilon(mode=m, **kw) for m in ("printed", "corrected"))
            rows.append({"panel": letter, "p": p, "as printed": printed, "corrected": corrected,
                         "key": f"cor41.as_printed.fig3{letter}.p{p}" if letter == CLAIM_PANEL else ""})  # fmt: skip
    return pd.DataFrame(rows)


def claim_values(table: pd.DataFrame) -> dict[str, float]:
    """Claim key -> the printed formula's ε, for the rows of :func:`fig3_printed_vs_corrected` that are claims."""
    table = check_frame("table", table, ("key", "as printed"))
    rows = table[table["key"] != ""]
    return {str(k): float(v) for k, v in zip(rows["key"], rows["as printed"], strict=True)}
