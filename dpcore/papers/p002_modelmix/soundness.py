"""Numerical checks of the ModelMix accountant's soundness at the Fig. 3 setting (Xiao, Wan, Devadas).

The proof of Theorem 4.1 / Corollary 4.1 (Appendix C) rests on three steps it asserts without proof:

1. the worst case of the differing record's gradient is one-hot (ℓ2 clipping) or p-sparse (Algorithm 2):
   spreading the ℓ2 budget evenly over m coordinates (exactly ``linf_blocks=m``) must lower ε
   (:func:`split_epsilons`);
2. g(x) = h(√x) is convex (the "simple calculation on the second-order derivative"), checked by second
   differences of log M_k(√x) on a grid (:func:`g_second_differences`);
3. the direction swap to D_α(mixture ‖ P0), justified by Mironov et al. 2019, Thm 5, proven for Gaussians
   only: the other direction D_α(P0 ‖ mixture) must not be larger (:func:`direction_ratios`).

Any Rényi divergence is non-decreasing in the order α and (α − 1)·D_α is convex in α (van Erven and
Harremoës 2014, Thms 3 and 11); :func:`order_checks` tests both on the per-step RDP the accountant
computes.  :func:`appendix_c_table` gathers every check in one table with a ``passed`` column that the
notebook asserts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpcore.accounting import modelmix as mm
from dpcore.papers.p002_modelmix.fig3 import (
    CURVES,
    FIG3,
    FIG3_TAUS,
    accountant_range,
    check_counts,
    check_tau,
    check_taus,
)
from dpcore.validation import check_nonnegative, check_positive, check_positive_int, check_rate, check_real_array

__all__ = ["split_epsilons", "g_second_differences", "direction_ratios", "order_checks", "appendix_c_table"]

_ORDER_TOL = 1e-12  # round-off allowance of the order checks (per-step RDP values are ~1e-4 .. 1e-1)


def split_epsilons(z: float, *, q: float = 0.02, tau: float = 0.075, ms: Sequence[int] = (1, 2, 4, 8)) -> list[float]:
    """ε at the Fig. 3 T when the differing gradient's ℓ2 budget is spread evenly over m coordinates
    (``linf_blocks=m``, integer orders 2..64, Theorem 4.1 bound alone), for each m in ``ms``."""
    z, q, tau = check_positive("z", z), check_rate("q", q), check_tau("tau", tau)
    ms = check_counts("ms", ms, maximum=mm.MAX_LINF_BLOCKS)
    n = FIG3["n"]
    with accountant_range(z=z, q=q, tau=tau):
        return [
            mm.epsilon(
                mm.ModelMixSetting(
                    n=n, batch_size=q * n, noise_multiplier=z, clip=FIG3["clip"], tau=tau, linf_blocks=m
                ),
                steps=FIG3["steps"],
                delta=FIG3["delta"],
                orders=mm.INTEGER_ORDERS,
                conversion="mironov",
                bound="modelmix",
            )  # fmt: skip
            for m in ms
        ]


def g_second_differences(
    z: float, *, width: float, ks: Sequence[int] = (2, 3, 4, 5, 8), points: int = 20
) -> dict[int, float]:
    """Smallest second difference of g_k(x) = log M_k(shift √x) on x = 1/points, ..., 1, per k.

    ``z`` and ``width`` in sensitivity units (:func:`dpcore.accounting.modelmix.envelope_width`);
    g_k convex means every second difference is > 0.
    """
    z = check_positive("z", z)
    width = check_nonnegative("width", width)
    points = check_positive_int("points", points, minimum=3, maximum=1000)
    ks = check_counts("ks", ks, maximum=1000)
    xs = np.linspace(0.0, 1.0, points + 1)[1:]
    out = {}
    with accountant_range(z=z, width=width):
        for k in ks:
            g = [mm.log_moments([k], noise=z, width=width, shift=math.sqrt(x))[0] for x in xs]
            out[k] = float(np.diff(g, 2).min())
    return out


def direction_ratios(z: float, *, q: float = 0.02, taus: Sequence[float] = FIG3_TAUS) -> dict[float, float]:
    """max over TF-Privacy's orders ≤ 64 of D_α(P0 ‖ mix) / D_α(mix ‖ P0) per τ/η (p = 1, one step);
    ≤ 1 means the direction Appendix C keeps dominates."""
    z, q, taus = check_positive("z", z), check_rate("q", q), check_taus("taus", taus)
    out = {}
    orders = np.asarray(mm.DEFAULT_ORDERS)
    for tau in taus:
        width = mm.envelope_width(tau, clip=FIG3["clip"], batch_size=q * FIG3["n"])
        kw = dict(sample_rate=q, noise_multiplier=z, width=width)
        with accountant_range(z=z, q=q, taus=taus):
            forward = mm.step_rdp(orders, **kw)
            reverse = mm.step_rdp(orders, direction="reverse", **kw)
        if not np.all(forward > 0):
            raise ValueError(f"z={z:g}, q={q:g}: the forward RDP underflows to 0, so the ratio is undefined")
        out[tau] = float(np.max(reverse / forward))
    return out


def order_checks(orders: Sequence[float], rdp: Sequence[float]) -> dict[str, float]:
    """Margins of the two order properties of a Rényi divergence curve (≥ 0 within round-off when they hold):
    ``nondecreasing`` = min_i (RDP(α_{i+1}) − RDP(α_i)); ``convex`` = the smallest increase of the slope of
    (α − 1)·RDP(α) between consecutive intervals (orders may be unevenly spaced)."""
    a = check_real_array("orders", orders, low=1.0, low_open=True, ndim=1)
    r = check_real_array("rdp", rdp, low=0.0, ndim=1)
    if a.shape != r.shape or a.size < 3 or np.any(np.diff(a) <= 0):
        raise ValueError("orders must be increasing and rdp of the same length (at least 3 values)")
    slopes = np.diff((a - 1) * r) / np.diff(a)
    return {"nondecreasing": float(np.diff(r).min()), "convex": float(np.diff(slopes).min())}


def appendix_c_table(z: float, *, q: float = 0.02) -> pd.DataFrame:
    """Every check above at the Fig. 3 (a–c) setting: columns ``check``, ``setting``, ``value``, ``passed``."""
    z, q = check_positive("z", z), check_rate("q", q)
    rows = []
    split = split_epsilons(z, q=q)
    rows.append({"check": "one-hot worst case: eps falls as the l2 budget is split over m = 1, 2, 4, 8",
                 "setting": "tau=0.075eta, integer orders",
                 "value": " > ".join(f"{e:.2f}" for e in split),
                 "passed": bool(np.all(np.diff(split) < 0))})  # fmt: skip
    width = mm.envelope_width(0.075, clip=FIG3["clip"], batch_size=q * FIG3["n"])
    for k, low in g_second_differences(z, width=width).items():
        rows.append({"check": "g_k(x) = h_k(sqrt x) convex (smallest 2nd difference)", "setting": f"k={k}",
                     "value": f"{low:.3g}", "passed": low > 0})  # fmt: skip
    for tau, ratio in direction_ratios(z, q=q).items():
        rows.append({"check": "reverse direction dominated (max reverse/forward)", "setting": f"tau={tau}eta",
                     "value": f"{ratio:.4f}", "passed": ratio <= 1.0})  # fmt: skip
    for curve in CURVES[1:]:
        p = None if curve == "ModelMix" else int(curve.split("=")[1])
        for tau in FIG3_TAUS:
            setting = mm.ModelMixSetting(n=FIG3["n"], batch_size=q * FIG3["n"], noise_multiplier=z, clip=FIG3["clip"],
                                         tau=tau, linf_blocks=p)  # fmt: skip
            a, per_step = mm.per_step_rdp(setting, bound="modelmix")
            margins = order_checks(a, per_step)
            for name, text in (("nondecreasing", "RDP non-decreasing in the order"),
                               ("convex", "(alpha-1)*RDP convex in the order")):  # fmt: skip
                rows.append({"check": text, "setting": f"{curve}, tau={tau}eta", "value": f"{margins[name]:.3g}",
                             "passed": margins[name] >= -_ORDER_TOL})  # fmt: skip
    return pd.DataFrame(rows)
