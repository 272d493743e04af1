"""The Gaussian mechanism: δ(ε) in log space, ε(δ), and its trade-off curve.

A Gaussian mechanism with sensitivity Δ and noise std s is μ-GDP with μ = Δ/s (Dong, Roth, Su,
"Gaussian Differential Privacy", JRSS-B 2022, Thm 2.7).  Its exact privacy profile is

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)      (Dong et al. 2022, Cor. 2.13;
                                                   Balle & Wang 2018, Thm 8, the analytic Gaussian mechanism)

computed here as a logarithm, stable where δ underflows and where e^ε overflows (the ratio of the two
terms goes through the Mills ratio erfcx).  The trade-off function is G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)
(Dong et al. 2022, Def. 2.7).

>>> round(epsilon_from_mu(1.0, 0.126936), 3)
1.0
>>> round(delta_from_mu(2 / (10**0.5 * 1.5), 1.0), 10)
0.002021508
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import optimize, special
from scipy.special import erfcx, log_ndtr

from dpcore.validation import check_finite, check_open_unit, check_positive

__all__ = ["log_delta_from_mu", "delta_from_mu", "epsilon_from_mu", "tradeoff", "power", "noise_to_mu", "upper_root"]

Array = np.ndarray
_EPS_MAX = 1e300


def _number_ok(number: float, low: float, high: float, allow_inf: bool) -> bool:
    """``number`` is not NaN, finite unless ``allow_inf``, and in [low, high]."""
    return not math.isnan(number) and (allow_inf or not math.isinf(number)) and low <= number <= high


def as_real_array(
    name: str, value: object, *, low: float = -math.inf, high: float = math.inf, allow_inf: bool = False
) -> Array:
    """``value`` (a real number or an array of them) as a float array with every entry in [low, high].

    Refuses, with a ``ValueError`` naming ``name``: bools, strings, complex numbers, None, empty arrays,
    NaN, ±∞ (unless ``allow_inf``) and entries outside [low, high].
    """
    if type(value) in (float, int, np.float64):  # fast path for a plain number (optimisers call with scalars)
        try:
            number = float(value)
        except OverflowError as exc:
            raise ValueError(f"{name} must be a real number or an array of real numbers in [{low:g}, {high:g}], got "
                             f"{value!r}") from exc  # fmt: skip
        if not _number_ok(number, low, high, allow_inf):
            raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {number!r}")
        return np.array(number)
    if type(value) is np.ndarray and value.dtype == np.float64 and value.size:  # fast path for a float array
        if value.size == 1:
            fine = _number_ok(float(value.flat[0]), low, high, allow_inf)
        else:
            fine = bool(((value >= low) & (value <= high)).all()) and (allow_inf or bool(np.isfinite(value).all()))
        if not fine:  # NaN fails both comparisons
            raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
        return value.astype(float)
    original = value

    def bad() -> str:  # built only on refusal: the repr of a large array costs more than the checks
        return f"{name} must be a real number or an array of real numbers in [{low:g}, {high:g}], got {original!r}"

    if value is None or isinstance(value, (bool, np.bool_, str, bytes, complex, np.complexfloating)):
        raise ValueError(bad())
    if isinstance(value, numbers.Real):
        try:
            value = float(value)
        except OverflowError as exc:
            raise ValueError(bad()) from exc
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(bad()) from exc
    if arr.dtype == object and all(
        isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_)) for x in arr.flat
    ):
        try:
            arr = arr.astype(float)
        except OverflowError as exc:
            raise ValueError(bad()) from exc
    if arr.dtype.kind not in "iuf" or arr.size == 0:
        raise ValueError(bad())
    arr = arr.astype(float)
    if np.any(np.isnan(arr)) or (not allow_inf and np.any(np.isinf(arr))) or np.any((arr < low) | (arr > high)):
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
    return arr


def _as_eps(epsilon: float | Array) -> Array:
    return as_real_array("epsilon", epsilon, low=0.0)


def _as_mu(mu: float | Array) -> Array:
    return as_real_array("mu", mu, low=0.0, allow_inf=True)


def _log_delta_core(eps: Array, mu: Array) -> Array:
    """log δ_μ(ε) for broadcastable arrays, eps ≥ 0 finite and mu in [0, inf]."""
    eps, mu = np.broadcast_arrays(eps, mu)
    out = np.empty(eps.shape)
    zero, inf = mu == 0, np.isinf(mu)
    out[zero] = -np.inf
    out[inf] = 0.0
    ok = ~(zero | inf)
    e, x = eps[ok], mu[ok]
    with np.errstate(over="ignore"):  # ε/μ = ∞ for a subnormal μ: handled below (δ = 0)
        t_lo = e / x - x / 2  # δ = Q(t_lo) − e^ε Q(t_hi)
        t_hi = e / x + x / 2
    # log of the ratio e^ε Q(t_hi)/Q(t_lo) (< 0):
    #  * t_lo ≥ 0: exactly log R(t_hi) − log R(t_lo), R(t) = Q(t)/φ(t) = √(π/2)·erfcx(t/√2)
    #  * t_lo < 0: e^ε Q(t_hi) = φ(t_lo) R(t_hi) (as t_hi² − t_lo² = 2ε), so the ratio is
    #    −t_lo²/2 − log 2 + log erfcx(t_hi/√2) − log Q(t_lo), with Q(t_lo) ≥ 1/2; no huge terms cancel (the plain
    #    ε + log Q(t_hi) − log Q(t_lo) loses everything to cancellation once ε is ~1e19, i.e. μ ~ 5e9).
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        mills = np.log(erfcx(t_hi / math.sqrt(2))) - np.log(erfcx(np.maximum(t_lo, 0.0) / math.sqrt(2)))
        lo_neg = np.minimum(t_lo, 0.0)
        direct = -0.5 * lo_neg * lo_neg - math.log(2.0) + np.log(erfcx(t_hi / math.sqrt(2))) - log_ndtr(-lo_neg)
        log_ratio = np.where(t_lo >= 0, mills, direct)
        # ε/μ overflows (μ subnormal): δ = 0
        out[ok] = np.where(t_lo == np.inf, -np.inf, log_ndtr(-t_lo) + np.log(-np.expm1(log_ratio)))
    return out


def log_delta_from_mu(mu: float | Array, epsilon: float | Array) -> float | Array:
    """log δ(ε) of μ-GDP (Dong et al. 2022, Cor. 2.13), accurate where δ underflows; broadcasts.

    ``mu = 0`` gives −∞ (no leakage), ``mu = inf`` gives 0 (δ = 1).
    """
    out = _log_delta_core(_as_eps(epsilon), _as_mu(mu))
    return float(out) if out.ndim == 0 else out


def delta_from_mu(mu: float | Array, epsilon: float | Array) -> float | Array:
    """δ(ε) of μ-GDP = the hockey-stick divergence E_ε(N(μ,1) ‖ N(0,1)) (Dong et al. 2022, Cor. 2.13)."""
    out = np.exp(_log_delta_core(_as_eps(epsilon), _as_mu(mu)))
    return float(out) if out.ndim == 0 else out


def epsilon_from_mu(mu: float, delta: float) -> float:
    """Smallest ε ≥ 0 with δ_μ(ε) ≤ δ (root of Cor. 2.13 in log space).

    ∞ for μ = ∞, and for μ so large that ε exceeds 1e300 (μ ≳ 1e150; ε ≈ μ²/2 is not representable).
    """
    if np.ndim(mu) != 0:
        raise ValueError(f"mu must be a single number in [0, inf], got {mu!r}")
    m = float(_as_mu(mu))
    delta = check_open_unit("delta", delta)
    if m == math.inf:
        return math.inf
    if m == 0.0:
        return 0.0
    target = math.log(delta)

    def f(e: float) -> float:
        return float(_log_delta_core(np.float64(e), np.float64(m))) - target

    if f(0.0) <= 0:
        return 0.0
    hi = min(max(1.0, m * m), _EPS_MAX)
    while f(hi) > 0:
        hi *= 4.0
        if hi > _EPS_MAX:
            return math.inf
    return upper_root(f, 0.0, hi)


def upper_root(f, lo: float, hi: float, *, xtol: float = 1e-12) -> float:
    """Root of a non-increasing ``f`` on [lo, hi] (f(lo) > 0 ≥ f(hi)) returned on its feasible side:
    ``f(result) <= 0``, so an ε found this way is never below the exact one (Brent's method, then a
    fix-up step towards ``hi``).  ``ValueError`` unless ``f`` is callable, lo < hi are finite and
    [lo, hi] brackets the root."""
    if not callable(f):
        raise ValueError(f"f must be a callable float -> float, got {f!r}")
    lo, hi = check_finite("lo", lo), check_finite("hi", hi)
    xtol = check_positive("xtol", xtol)
    if not lo < hi:
        raise ValueError(f"lo must be < hi, got lo={lo}, hi={hi}")
    f_lo, f_hi = float(f(lo)), float(f(hi))
    if not (f_lo > 0 and f_hi <= 0):
        raise ValueError(
            f"[lo, hi] = [{lo}, {hi}] must bracket the root of f: f(lo) > 0 >= f(hi), got f(lo)={f_lo}, f(hi)={f_hi}"
        )
    if f_hi == 0:
        return hi
    root = float(optimize.brentq(f, lo, hi, xtol=xtol, rtol=4 * np.finfo(float).eps))
    step = max(xtol, abs(root) * 1e-12)
    while f(root) > 0:
        root = min(hi, root + step)
        step *= 2
        if root >= hi:
            return hi
    return root


def tradeoff(mu: float, alpha: float | Array) -> float | Array:
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (Dong et al. 2022, Def. 2.7), computed as Φ(−Φ⁻¹(α) − μ).

    ``mu = 0`` is 1 − α (no leakage); ``mu = inf`` is the zero function.
    """
    m = float(_as_mu(mu))
    a = as_real_array("alpha", alpha, low=0.0, high=1.0).reshape(np.shape(alpha))
    if m == math.inf:
        out = np.zeros_like(a)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.clip(special.ndtr(-special.ndtri(a) - m), 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


def power(mu: float, alpha: float | Array) -> float | Array:
    """1 − G_μ(α) = Φ(Φ⁻¹(α) + μ), accurate when G_μ(α) is close to 1."""
    m = float(_as_mu(mu))
    a = as_real_array("alpha", alpha, low=0.0, high=1.0).reshape(np.shape(alpha))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = special.ndtr(special.ndtri(a) + m)
    return float(out) if out.ndim == 0 else out


def noise_to_mu(noise_multiplier: float) -> float:
    """μ = 1/σ of one Gaussian mechanism with noise multiplier σ (Dong et al. 2022, Thm 2.7).

    σ in (0, ∞) with 1/σ finite (σ >= 5.6e-309).
    """
    mu = 1.0 / check_positive("noise_multiplier", noise_multiplier)
    if not math.isfinite(mu):
        raise ValueError(
            f"noise_multiplier must be in [5.6e-309, inf) (1/noise_multiplier overflows), got {noise_multiplier}"
        )
    return mu
