"""Fig. 3 of Xiao, Wan, Devadas (ModelMix): ε against iterations for regular DP-SGD and ModelMix.

:data:`FIG3` holds the figure's setting (§4.3: n = 50K CIFAR-10 records, T = 5000, c = 20, δ = 1e-5,
with the Mironov conversion of Theorem 2.2 and Theorem 4.1 / Corollary 4.1 alone); the noise
multiplier of each sampling rate is calibrated so that regular DP-SGD reaches ε = 200 at T
(TF-Privacy orders, Mironov conversion).  Panels (a)–(c) use q = 0.02, (d)–(f) q = 0.04 (the text
calls them "(e-f)"), each with τ = 0.075η, 0.15η, 0.3η.

The functions here compute the figure's curves, the end values the text prints (§4.3, paragraph on
Fig. 3 (a–c)), the sweeps over τ and over p behind the text's rate statements, and the qualitative
checks of those statements (:func:`qualitative_checks`).

>>> PANELS["c"]
(0.02, 0.3)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import pandas as pd

from dpcore.accounting import modelmix as mm
from dpcore.accounting.modelmix import TF_PRIVACY_ORDERS, epsilon_curve, regular_dpsgd_rdp
from dpcore.accounting.rdp import rdp_to_epsilon
from dpcore.validation import (
    check_finite,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_rate,
    check_real_array,
    check_sequence,
)

__all__ = [
    "FIG3",
    "FIG3_SAMPLE_RATES",
    "FIG3_TAUS",
    "FIG3_TARGET_REGULAR_EPSILON",
    "CURVES",
    "PANELS",
    "P_SWEEP",
    "SATURATION_P",
    "amplification_curves",
    "calibrate",
    "panel_curves",
    "end_values",
    "claim_values",
    "literal_units",
    "tau_sweep",
    "p_sweep",
    "tau_slopes",
    "closer_to",
    "is_decreasing",
    "increases_with_steps",
    "saturates",
    "qualitative_checks",
]

#: Fig. 3's common setting (§4.3 of the paper).
FIG3: dict = dict(n=50_000, steps=5000, clip=20.0, delta=1e-5, conversion="mironov", bound="modelmix")
#: The panels' sampling rates q = B/n and envelope widths τ/η.
FIG3_SAMPLE_RATES: tuple[float, ...] = (0.02, 0.04)
FIG3_TAUS: tuple[float, ...] = (0.075, 0.15, 0.3)
#: Regular DP-SGD's ε at T = 5000 that fixes the noise of each panel.
FIG3_TARGET_REGULAR_EPSILON = 200.0
#: The four curves of every panel: regular DP-SGD, ModelMix (ℓ2 clipping) and ModelMix with Algorithm 2's p.
CURVES: tuple[str, ...] = ("regular DP-SGD", "ModelMix", "ModelMix p=25", "ModelMix p=100")
#: Panel letter -> (q, τ/η).
PANELS: dict[str, tuple[float, float]] = {
    letter: (q, tau)
    for letter, (q, tau) in zip("abcdef", [(q, t) for q in FIG3_SAMPLE_RATES for t in FIG3_TAUS], strict=True)
}
#: ℓ∞ parameters of the p sweep (plotted), and the geometric sub-grid (×4) of the saturation check.
P_SWEEP: tuple[int, ...] = (1, 4, 16, 25, 64, 100, 256, 1024)
SATURATION_P: tuple[int, ...] = (1, 4, 16, 64, 256, 1024)
_CURVE_KEY = {"ModelMix": "modelmix", "ModelMix p=25": "p25", "ModelMix p=100": "p100"}
#: Most entries of a sweep or of a list of iteration counts (each is one accountant evaluation), and the
#: largest τ/η accepted (the figure's are 0.075–0.3).
MAX_POINTS = 1000
MAX_TAU = 1e3


@contextmanager
def accountant_range(**given) -> Iterator[None]:
    """Re-raise the ModelMix accountant's range refusals (its noise multiplier too small or too large for the
    envelope width and orders) naming the caller's parameters that set them (``given``), with its reason.
    Every other input is validated before, so these are the only refusals left."""
    try:
        yield
    except ValueError as exc:
        names = ", ".join(f"{k}={v!r}" for k, v in given.items())
        raise ValueError(f"{names}: out of the ModelMix accountant's range ({exc})") from exc


def check_frame(name: str, frame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` a non-empty DataFrame with ``columns``."""
    if not isinstance(frame, pd.DataFrame) or frame.empty or not set(columns) <= set(frame.columns):
        kind = type(frame).__name__
        raise ValueError(f"{name} must be a non-empty DataFrame with columns {list(columns)}, got {kind}")
    return frame


def check_rates(name: str, values) -> list[float]:
    """A sequence of at most :data:`MAX_POINTS` numbers in (0, 1]."""
    out = [check_rate(name, v) for v in check_sequence(name, values)]
    if len(out) > MAX_POINTS:
        raise ValueError(f"{name} must hold at most {MAX_POINTS} values, got {len(out)}")
    return out


def check_taus(name: str, values, *, min_len: int = 1) -> list[float]:
    """A sequence of at most :data:`MAX_POINTS` numbers τ/η in (0, :data:`MAX_TAU`]."""
    out = [check_tau(name, v) for v in check_sequence(name, values, min_len=min_len)]
    if len(out) > MAX_POINTS:
        raise ValueError(f"{name} must hold at most {MAX_POINTS} values, got {len(out)}")
    return out


def check_tau(name: str, value) -> float:
    """A τ/η in (0, :data:`MAX_TAU`]."""
    value = check_positive(name, value)
    if value > MAX_TAU:
        raise ValueError(f"{name} must be in (0, {MAX_TAU:g}], got {value}")
    return value


def check_counts(name: str, values, *, maximum: int | None = None) -> list[int]:
    """A sequence of at most :data:`MAX_POINTS` positive integers."""
    out = [check_positive_int(name, v, maximum=maximum) for v in check_sequence(name, values)]
    if len(out) > MAX_POINTS:
        raise ValueError(f"{name} must hold at most {MAX_POINTS} values, got {len(out)}")
    return out


def _linf(curve: str) -> int | None:
    return None if curve == "ModelMix" else int(curve.split("=")[1])


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
    steps = check_counts("steps", steps)
    delta = check_open_unit("delta", delta)
    linf_blocks = [None if p is None else check_positive_int("linf_blocks", p, maximum=mm.MAX_LINF_BLOCKS)
                   for p in check_sequence("linf_blocks", linf_blocks, min_len=0)]  # fmt: skip
    regular_orders = check_real_array("regular_orders", regular_orders, low=1.0, low_open=True, ndim=1)
    a, per_step = regular_dpsgd_rdp(
        n=n, batch_size=batch_size, steps=1, noise_multiplier=noise_multiplier, orders=regular_orders
    )
    out = {
        "steps": np.asarray(steps),
        "regular DP-SGD": np.array([rdp_to_epsilon(a, s * per_step, delta, conversion=conversion) for s in steps]),
    }
    for p in linf_blocks:
        key = "ModelMix" if p is None else f"ModelMix p={p}"
        setting = mm.ModelMixSetting(n=n, batch_size=batch_size, noise_multiplier=noise_multiplier, clip=clip, tau=tau,
                                     linf_blocks=p)  # fmt: skip
        out[key] = epsilon_curve(steps, setting, delta=delta, conversion=conversion, bound=bound)
    return out


def calibrate(sample_rates: Sequence[float] = FIG3_SAMPLE_RATES) -> pd.DataFrame:
    """Noise multiplier z per sampling rate so that regular DP-SGD has ε = 200 at T = 5000 (§4.3).

    Sampled-Gaussian RDP (Mironov et al. 2019) on TF-Privacy's orders with the Mironov conversion
    (Theorem 2.2); the calibrator never overshoots.  Columns: ``q``, ``expected batch``, ``z``,
    ``regular eps``.
    """
    sample_rates = check_rates("sample_rates", sample_rates)
    n, steps, delta = FIG3["n"], FIG3["steps"], FIG3["delta"]
    rows = []
    for q in sample_rates:
        kw = dict(n=n, batch_size=q * n, steps=steps, delta=delta, conversion="mironov", orders=TF_PRIVACY_ORDERS)
        z = mm.noise_multiplier_for_epsilon(FIG3_TARGET_REGULAR_EPSILON, method="dpsgd", **kw)
        regular = mm.regular_dpsgd_epsilon(noise_multiplier=z, **kw)
        rows.append({"q": q, "expected batch": q * n, "z": z, "regular eps": regular})
    return pd.DataFrame(rows)


def _z(calibration: pd.DataFrame, q: float) -> float:
    match = calibration.loc[np.isclose(calibration["q"], q), "z"]
    if match.empty:
        raise ValueError(f"calibration has no row for q={q}")
    return float(match.iloc[0])


def panel_curves(calibration: pd.DataFrame, *, points: int = 26, taus: Sequence[float] = FIG3_TAUS) -> pd.DataFrame:
    """Every panel's four curves at ``points`` iteration counts up to T (long table, one row per panel and step).

    Columns: ``panel``, ``q``, ``tau_over_eta``, ``steps`` and one column per entry of :data:`CURVES`.
    """
    points = check_positive_int("points", points, minimum=2, maximum=FIG3["steps"])
    calibration = check_frame("calibration", calibration, ("q", "z"))
    taus = check_taus("taus", taus)
    steps = FIG3["steps"]
    grid = np.unique(np.linspace(steps / points, steps, points).round().astype(int))
    frames = []
    for letter, (q, tau) in PANELS.items():
        if q not in set(calibration["q"]) or tau not in taus:
            continue
        curves = amplification_curves(
            grid, n=FIG3["n"], batch_size=q * FIG3["n"], noise_multiplier=_z(calibration, q), clip=FIG3["clip"],
            tau=tau, delta=FIG3["delta"],
        )  # fmt: skip
        frame = pd.DataFrame(curves)
        frame.insert(0, "tau_over_eta", tau)
        frame.insert(0, "q", q)
        frame.insert(0, "panel", letter)
        frames.append(frame)
    if not frames:
        raise ValueError("no panel matches the calibration's sample rates and taus")
    return pd.concat(frames, ignore_index=True)


def end_values(curves: pd.DataFrame) -> pd.DataFrame:
    """ε at T (the last step) of every panel and curve: one row per panel."""
    curves = check_frame("curves", curves, ("panel", "steps"))
    last = curves.loc[curves.groupby("panel")["steps"].idxmax()]
    return last.drop(columns="steps").reset_index(drop=True)


def claim_values(ends: pd.DataFrame) -> dict[str, float]:
    """The printed Fig. 3 numbers' keys (``fig3<panel>.eps.<curve>``, panels a–c) and the calibrated
    regular ε (``fig3.regular_eps.q<q>``) -> our value."""
    ends = check_frame("ends", ends, ("panel", "q", *CURVES))
    out: dict[str, float] = {}
    for _, row in ends.iterrows():
        if row["panel"] in "abc":
            for curve, short in _CURVE_KEY.items():
                out[f"fig3{row['panel']}.eps.{short}"] = float(row[curve])
        out[f"fig3.regular_eps.q{row['q']:g}"] = float(row["regular DP-SGD"])
    return out


def literal_units(z: float, *, q: float = 0.02, taus: Sequence[float] = FIG3_TAUS) -> pd.DataFrame:
    """ε at T of plain ModelMix with τ/η read for the averaged update (u = (τ/η)·B/c, the experiments'
    reading) and literally for Algorithm 1's summed gradient (u = (τ/η)/c)."""
    z, q, taus = check_positive("z", z), check_rate("q", q), check_taus("taus", taus)
    setting = mm.ModelMixSetting(n=FIG3["n"], batch_size=q * FIG3["n"], noise_multiplier=z, clip=FIG3["clip"])
    kw = dict(steps=FIG3["steps"], delta=FIG3["delta"], conversion="mironov", bound="modelmix")
    with accountant_range(z=z, q=q, taus=taus):
        return pd.DataFrame(
            [
                {
                    "tau/eta": t,
                    "averaged-update units": mm.epsilon(setting.replace(tau=t), **kw),
                    "summed-gradient units": mm.epsilon(setting.replace(tau=t), form="sum", **kw),
                }
                for t in taus
            ]
        )


def _epsilon_at_T(z: float, q: float, tau: float, p: int | None, orders=None) -> float:
    with accountant_range(z=z, q=q, tau=tau):
        setting = mm.ModelMixSetting(n=FIG3["n"], batch_size=q * FIG3["n"], noise_multiplier=z, clip=FIG3["clip"],
                                     tau=tau, linf_blocks=p)  # fmt: skip
        return mm.epsilon(setting, steps=FIG3["steps"], delta=FIG3["delta"], orders=orders, conversion="mironov",
                          bound="modelmix")  # fmt: skip


def tau_sweep(z: float, *, q: float = 0.02, points: int = 9, low: float = 0.02, high: float = 1.0) -> pd.DataFrame:
    """ε at T against τ/η (``points`` geometric values in [low, high]) for the three ModelMix curves."""
    z, q = check_positive("z", z), check_rate("q", q)
    points = check_positive_int("points", points, minimum=2, maximum=MAX_POINTS)
    low, high = check_tau("low", low), check_tau("high", high)
    if not low < high:
        raise ValueError(f"low and high must satisfy 0 < low < high, got {low}, {high}")
    rows = []
    for tau in np.geomspace(low, high, points):
        rows.append({"tau/eta": float(tau), **{c: _epsilon_at_T(z, q, tau, _linf(c)) for c in CURVES[1:]}})
    return pd.DataFrame(rows)


def p_sweep(
    z: float, *, q: float = 0.02, ps: Sequence[int] = P_SWEEP, taus: Sequence[float] = FIG3_TAUS
) -> pd.DataFrame:
    """ε at T against Algorithm 2's p (integer orders 2..64 throughout, so p = 1 is Theorem 4.1 at integer α)."""
    z, q = check_positive("z", z), check_rate("q", q)
    ps = check_counts("ps", ps, maximum=mm.MAX_LINF_BLOCKS)
    taus = check_taus("taus", taus)
    return pd.DataFrame(
        [{"p": p, **{f"tau={t}eta": _epsilon_at_T(z, q, t, p, mm.INTEGER_ORDERS) for t in taus}} for p in ps]
    )


def tau_slopes(z: float, *, q: float = 0.02, taus: Sequence[float] = FIG3_TAUS) -> dict[str, float]:
    """Least-squares slope of log ε against log τ over ``taus`` for each ModelMix curve (the rate in τ)."""
    z, q = check_positive("z", z), check_rate("q", q)
    taus = check_taus("taus", taus, min_len=2)
    x = np.log(np.asarray(taus, dtype=float))
    return {c: float(np.polyfit(x, np.log([_epsilon_at_T(z, q, t, _linf(c)) for t in taus]), 1)[0]) for c in CURVES[1:]}


def closer_to(slope: float, target: float, other: float) -> bool:
    """Whether ``slope`` is nearer ``target`` than ``other`` (e.g. −1/2 rather than −1)."""
    slope, target, other = check_finite("slope", slope), check_finite("target", target), check_finite("other", other)
    return abs(slope - target) < abs(slope - other)


def is_decreasing(values: Sequence[float]) -> bool:
    """Strictly decreasing."""
    v = check_real_array("values", values, ndim=1, min_size=0)
    return bool(v.size >= 2 and np.all(np.diff(v) < 0))


def increases_with_steps(curves: pd.DataFrame) -> bool:
    """Every curve of every panel of :func:`panel_curves` strictly increases with the iteration count."""
    curves = check_frame("curves", curves, ("panel", "steps", *CURVES))
    return all(
        bool(np.all(np.diff(panel.sort_values("steps")[c].to_numpy()) > 0))
        for _, panel in curves.groupby("panel")
        for c in CURVES
    )


def saturates(ps: Sequence[int], values: Sequence[float]) -> bool:
    """Decreasing in p with diminishing returns: on a geometric grid of p, the decrease of log ε from one
    grid point to the next shrinks strictly (the text's "will reach some limit as p increases")."""
    p = check_real_array("ps", ps, low=0.0, low_open=True, ndim=1)
    v = check_real_array("values", values, low=0.0, low_open=True, ndim=1)
    ratios = p[1:] / p[:-1]
    if p.size < 3 or not np.allclose(ratios, ratios[0]) or ratios[0] <= 1:
        raise ValueError(f"ps must be an increasing geometric grid of at least 3 values, got {ps!r}")
    if v.shape != p.shape:
        raise ValueError(f"values must hold one value per entry of ps, got {v.size} for {p.size}")
    drops = -np.diff(np.log(v))
    return bool(np.all(drops > 0) and np.all(np.diff(drops) < 0))


def qualitative_checks(
    curves: pd.DataFrame, taus: pd.DataFrame, ps: pd.DataFrame, slopes: dict[str, float]
) -> dict[str, bool]:
    """The text's qualitative statements about Fig. 3 (§4.3), each as a bool (keys of the claims):

    * ``fig3.ordering``: regular DP-SGD > ModelMix > p=25 > p=100 at every plotted step of every panel;
    * ``fig3.tau.decreasing``: ε at T strictly decreases in τ on the τ sweep, for all three ModelMix curves;
    * ``fig3.rate.modelmix``: plain ModelMix's log-log slope in τ is nearer −1/2 (Õ(1/√τ)) than −1;
    * ``fig3.rate.p100``: with p = 100 the slope is nearer −1 (O(1/τ)) than −1/2;
    * ``fig3.p.saturates``: ε decreases in p with diminishing returns on the ×4 grid, at every τ.
    """
    curves = check_frame("curves", curves, CURVES)
    taus = check_frame("taus", taus, CURVES[1:])
    ps = check_frame("ps", ps, ("p",))
    if not isinstance(slopes, dict) or not {"ModelMix", "ModelMix p=100"} <= set(slopes):
        raise ValueError(f"slopes must be a dict with the keys 'ModelMix' and 'ModelMix p=100', got {slopes!r}")
    cols = list(CURVES)
    ordered = bool(np.all(np.diff(curves[cols].to_numpy(), axis=1) < 0))
    sub = ps[ps["p"].isin(SATURATION_P)].sort_values("p")
    tau_cols = [c for c in ps.columns if c != "p"]
    return {
        "fig3.ordering": ordered,
        "fig3.tau.decreasing": all(is_decreasing(taus[c]) for c in CURVES[1:]),
        "fig3.rate.modelmix": closer_to(slopes["ModelMix"], -0.5, -1.0),
        "fig3.rate.p100": closer_to(slopes["ModelMix p=100"], -1.0, -0.5),
        "fig3.p.saturates": all(saturates(sub["p"], sub[c]) for c in tau_cols),
    }
