"""Rényi DP of the subsampled Gaussian mechanism, and RDP → (ε, δ).

One implementation of each primitive:

* :func:`subsampled_gaussian_rdp` -- RDP of one step at any real order α > 1.

  - ``sampling="poisson"`` (add/remove-one): D_α((1−q)N(0,z²) + qN(1,z²) ‖ N(0,z²)), which dominates the
    other direction (Mironov, Talwar, Zhang 2019, Thm 5).  Integer α: the exact binomial sum
    log Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2z²)} / (α−1) (Mironov et al. 2019, §3.3), in log space.
    Fractional α: the same expectation E_{N(0,z²)}[((1−q) + q·e^{(2x−1)/(2z²)})^α] integrated numerically
    on a fine grid in log space (accurate to ~1e-10 relative; dp_accounting's series for fractional
    orders can over-estimate or stop converging, e.g. α = 1.25 at z ≈ 0.37).  Both are evaluated as
    log(1 + S) with S a sum (integral) of non-negative terms -- the terms of order 0 and 1 of the binomial
    expansion cancel exactly, E[e^{(2x−1)/(2z²)}] = 1 -- so the RDP is never negative and keeps its relative
    accuracy when it is tiny (q = 1e-300 gives 0 to float precision, not round-off).  For tiny z, where the grid
    would be too fine, the chord between the neighbouring integer orders bounds it from above (the
    log-moment is convex in α).
  - ``sampling="fixed"`` (sampling ``batch_size`` of ``dataset_size`` records without replacement,
    replace-one neighbours): Wang, Balle, Kasiviswanathan 2019, Thm 9 (as implemented by dp_accounting's
    ``SampledWithoutReplacementDpEvent``; fractional orders are bounded through the neighbouring integers).

* :func:`rdp_curve` -- T composed steps (RDP adds up, Mironov 2017, Prop. 1).
* :func:`rdp_to_epsilon` -- Mironov 2017, Prop. 3 (``"mironov"``) or Balle et al. 2020, Thm 21 (``"balle"``).

>>> round(float(subsampled_gaussian_rdp([2.5], sample_rate=0.1, noise_multiplier=1.0)[0]), 5)
0.0235
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import gammaln, logsumexp

from dpcore.accounting.events import check_sampling, effective_noise_multiplier, sample_rate_of
from dpcore.accounting.gaussian import as_real_array
from dpcore.validation import (
    check_bool,
    check_choice,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_range,
    check_rate,
)

__all__ = [
    "RDP_ORDERS",
    "CONVERSIONS",
    "check_orders",
    "MAX_ORDER",
    "subsampled_gaussian_rdp",
    "rdp_curve",
    "rdp_to_epsilon",
]

#: Opacus' default orders (1.1 … 10.9 in steps of 0.1, then 12 … 63), as used by the legacy numbers.
#: The largest order :func:`subsampled_gaussian_rdp` evaluates (each order costs about α terms; 10⁴ takes
#: milliseconds, while 10¹² would allocate terabytes).  The library's orders go up to 256 (paper 000: 512).
MAX_ORDER = 10_000.0
RDP_ORDERS: tuple[float, ...] = tuple([1 + x / 10 for x in range(1, 100)] + list(range(12, 64)))
CONVERSIONS = ("balle", "mironov")
RDP_SAMPLINGS = ("poisson", "fixed")

_POINTS_PER_SCALE = 20  # grid points per noise standard deviation
_TAIL = 20.0  # grid margin in noise standard deviations
_MAX_POINTS = 300_000
_PLAIN_ENOUGH = 1e-2  # log-moments above this are summed directly (relative round-off < 1e-12)


#: Range of the Gaussian's multiplier z the Poisson RDP accepts: below 1e-100 the moments exceed every float
#: (the RDP would be reported as ∞); above 1e100 it is 0 to float precision (and the standardised grid of the
#: fractional orders stays finite).
MIN_NOISE, MAX_NOISE = 1e-100, 1e100


def check_orders(
    orders: Sequence[float] | np.ndarray, *, integer: bool = False, maximum: float | None = None
) -> np.ndarray:
    """``orders`` as a 1-D float array of finite numbers > 1 (integers when ``integer``), at most ``maximum``."""
    check_bool("integer", integer)
    if isinstance(orders, (str, bytes)) or orders is None:
        raise ValueError(f"orders must be a sequence of real numbers > 1, got {orders!r}")
    a = as_real_array("orders", orders, low=1.0)
    if a.ndim != 1 or np.any(a <= 1):
        raise ValueError(f"orders must be a non-empty 1-D sequence of finite numbers > 1, got {orders!r}")
    if integer and np.any(a != np.round(a)):
        raise ValueError(f"orders must be integers here, got {orders!r}")
    if maximum is not None:
        maximum = check_range("maximum", maximum, 1.0, math.inf)
    if maximum is not None and np.any(a > maximum):
        raise ValueError(
            f"orders must be in (1, {maximum:g}]: the subsampled Gaussian's RDP sums about α terms per order "
            f"(a binomial expansion or quadrature), got a largest order of {a.max():g}"
        )
    return a


def _log_expm1(c: np.ndarray) -> np.ndarray:
    """log(e^c − 1) for c ≥ 0 (−∞ at 0), without overflow for large c."""
    c = np.asarray(c, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(c > 30.0, c + np.log1p(-np.exp(-np.minimum(c, 700.0))), np.log(np.expm1(np.minimum(c, 30.0))))


def _binomial_log_moments(alphas: np.ndarray, q: float, z: float) -> np.ndarray:
    """log E[(1 − q + q·r)^α] at integer orders α ≥ 2, r = e^{(2x−1)/(2z²)}, x ~ N(0, z²) (Mironov et al. 2019,
    §3.3), written as log1p of a sum of non-negative terms:

        Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2z²)} = 1 + Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k (e^{(k²−k)/(2z²)} − 1)

    (the binomial weights sum to 1 and the k = 0, 1 exponents are 0), so the result is ≥ 0 and keeps its
    relative accuracy when it is tiny (small q, large z), where the plain sum would cancel to round-off.
    """
    top = int(alphas.max())
    k = np.arange(2, top + 1, dtype=float)[None, :]
    a = alphas.astype(float)[:, None]
    log_1mq = math.log1p(-q)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = gammaln(a + 1) - gammaln(k + 1) - gammaln(np.maximum(a - k, 0) + 1) + k * math.log(q)
        terms = terms + np.where(k < a, (a - k) * log_1mq, 0.0) + _log_expm1((k * k - k) / (2 * z * z))
    terms = np.where(k <= a, terms, -np.inf)
    return np.logaddexp(0.0, logsumexp(terms, axis=1))


def _lse_rows(x: np.ndarray) -> np.ndarray:
    """log Σ exp(x) along the last axis (plain NumPy: scipy's logsumexp costs ~1 ms per call)."""
    top = np.max(x, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(x - top), axis=-1)) + top[..., 0]


def _log_phi(y: np.ndarray, lm: np.ndarray, log_y: np.ndarray, alpha: float) -> np.ndarray:
    """log φ(y), φ(y) = (1+y)^α − 1 − αy ≥ 0 (α > 1, y ≥ −1), at points y sorted increasingly, given
    log(1+y) = ``lm`` and, where y > 0, log y = ``log_y``.  Three pieces: a Taylor series to y⁶ where
    |y| < 1e-3/α (no cancellation), the direct difference below, and log space above (no overflow)."""
    t = 1e-3 / alpha
    i0, i1 = int(np.searchsorted(y, -t, side="right")), int(np.searchsorted(y, t, side="left"))
    out = np.empty(y.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        ys = y[i0:i1]
        series = 1 + ys * (alpha - 2) / 3 * (
            1 + ys * (alpha - 3) / 4 * (1 + ys * (alpha - 4) / 5 * (1 + ys * (alpha - 5) / 6))
        )
        out[i0:i1] = math.log(alpha * (alpha - 1) / 2) + 2 * np.log(np.abs(ys)) + np.log(series)
        # y < 0 (|y| <= q <= 1): φ = (1+y)^α − (1+αy), where 1 + αy may be of either sign
        a, v = alpha * lm[:i0], 1 + alpha * y[:i0]
        b = np.log(np.abs(v))
        out[:i0] = np.where(v > 0, a + np.log(-np.expm1(np.minimum(b - a, 0.0))), np.logaddexp(a, b))
        # y > 0: log(1 + αy) in log space (αy may overflow)
        a, b = alpha * lm[i1:], np.logaddexp(0.0, math.log(alpha) + log_y[i1:])
        out[i1:] = a + np.log(-np.expm1(np.minimum(b - a, 0.0)))
    return out


def _lse(x: np.ndarray) -> float:
    """log Σ exp(x) (plain NumPy: scipy's logsumexp costs ~1 ms per call)."""
    top = float(np.max(x))
    if not math.isfinite(top):
        return top
    return math.log(float(np.sum(np.exp(x - top)))) + top


def _integral_log_moments(alphas: np.ndarray, q: float, z: float) -> np.ndarray | None:
    """log E_{x~N(0,z²)}[(1 − q + q·r)^α], r = e^{(2x−1)/(2z²)}, for each (fractional) α by a Riemann sum in
    log space on the standardised variable s = x/z; ``None`` when the grid would be too fine (tiny z).

    Written as log1p(E[φ(q(r − 1))]) with φ(y) = (1+y)^α − 1 − αy ≥ 0 (E[r] = 1 exactly, so the linear
    term is dropped rather than integrated): the result is ≥ 0 and keeps its relative accuracy when tiny.
    """
    top = float(alphas.max())
    s_lo = -_TAIL - 2.0 / z
    s_hi = (top + 2.0) / z + _TAIL  # the integrand's mass sits near x ≈ α (Gaussian tail of width z)
    span = (s_hi - s_lo) * _POINTS_PER_SCALE
    if not span < _MAX_POINTS:
        return None
    s = np.linspace(s_lo, s_hi, max(int(math.ceil(span)) + 1, 2001))
    lw = -0.5 * s * s
    return mixture_log_moments(lw - logsumexp(lw), s / z - 0.5 / (z * z), q, alphas)  # log r at x = s·z


def mixture_log_moments(log_weights: np.ndarray, log_ratio: np.ndarray, q: float, orders: np.ndarray) -> np.ndarray:
    """log Σ_i w_i (1 − q + q·r_i)^α for each order α > 1: the Rényi moment of the q-mixture (1 − q)P + qQ
    against P, by a quadrature with normalised weights w_i of P at points where r_i = Q/P = e^{``log_ratio``}.

    Requires E_P[Q/P] = 1 (true for densities), so that with y = q(r − 1) the moment is
    1 + E[φ(y)], φ(y) = (1+y)^α − 1 − αy ≥ 0: the linear term is dropped instead of integrated, the result is
    ≥ 0 and keeps its relative accuracy when it is tiny (Mironov, Talwar, Zhang 2019, §3.3, for the moment).
    Log-moments above 1e-2 are summed directly (no cancellation to fear there).  Shared by
    :mod:`dpcore.accounting.modelmix` (Gaussian ⊛ uniform); not part of the public API.
    """
    lw, lr = np.asarray(log_weights, dtype=float), np.asarray(log_ratio, dtype=float)
    order = np.argsort(lr, kind="stable")  # φ's pieces are located by bisection on y, increasing in r
    lw, lr = lw[order], lr[order]
    alphas = np.asarray(orders, dtype=float)
    with np.errstate(over="ignore", divide="ignore"):
        lm = lr if q == 1.0 else np.logaddexp(math.log1p(-q), math.log(q) + lr)  # log(1 + y)
        y = q * np.expm1(np.minimum(lr, 700.0))
        log_y = math.log(q) + lr + np.log1p(-np.exp(-np.maximum(lr, 1e-300)))  # log y where y > 0
    chunks = max(1, alphas.size * lw.size // 2**21)  # bounded memory
    plain = np.concatenate([_lse_rows(lw + part[:, None] * lm) for part in np.array_split(alphas, chunks)])
    small = plain < _PLAIN_ENOUGH
    plain[small] = [np.logaddexp(0.0, _lse(lw + _log_phi(y, lm, log_y, float(a)))) for a in alphas[small]]
    return plain


def _chord_log_moments(alphas: np.ndarray, q: float, z: float) -> np.ndarray:
    """Upper bound on log E[...^α] at fractional α by the chord between ⌊α⌋ and ⌈α⌉ (the log-moment is
    convex in α and 0 at α = 1), from the exact integer-order values."""
    floor = np.floor(alphas)
    right = _binomial_log_moments(floor + 1, q, z)
    left = np.zeros(alphas.size)
    above = floor >= 2
    if np.any(above):
        left[above] = _binomial_log_moments(floor[above], q, z)
    return left + (alphas - floor) * (right - left)


def _poisson_rdp(a: np.ndarray, q: float, z: float) -> np.ndarray:
    if q == 1.0:
        return a / (2 * z * z)
    out = np.empty_like(a)
    integer = a == np.round(a)
    if np.any(integer):
        out[integer] = _binomial_log_moments(a[integer], q, z) / (a[integer] - 1)
    if np.any(~integer):
        frac = a[~integer]
        logs = _integral_log_moments(frac, q, z)
        if logs is None:
            logs = _chord_log_moments(frac, q, z)
        out[~integer] = logs / (frac - 1)
    return out


def _fixed_rdp(a: np.ndarray, z: float, dataset_size: int, batch_size: int) -> np.ndarray:
    import dp_accounting
    from dp_accounting import rdp

    gaussian = dp_accounting.GaussianDpEvent(z)
    if batch_size == dataset_size:
        event = gaussian
    else:
        event = dp_accounting.SampledWithoutReplacementDpEvent(dataset_size, batch_size, gaussian)
    accountant = rdp.RdpAccountant(orders=list(a), neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    accountant.compose(event)
    # dp_accounting 0.6.0 keeps the composed curve in ``_rdp`` (pinned; tested against α·2/z² at q = 1).
    return np.asarray(accountant._rdp, dtype=float)


def subsampled_gaussian_rdp(
    orders: Sequence[float] | np.ndarray,
    *,
    noise_multiplier: float,
    sample_rate: float | None = None,
    sampling: str = "poisson",
    dataset_size: int | None = None,
    batch_size: int | None = None,
    noise_convention: str = "standard",
) -> np.ndarray:
    """RDP ε(α) of ONE subsampled Gaussian step at each order (see the module docstring).

    ``noise_multiplier`` σ: noise std σ·C on a sum of terms clipped to C (``noise_convention="standard"``, the
    DP-SGD convention) or 2σC (``"replace_one"``, e.g. van Dijk et al.'s N(0, (2Cσ)²)), for both samplings.
    The neighbouring relation is applied here (:func:`dpcore.accounting.events.effective_noise_multiplier`):
    the Gaussian's multiplier is z = κσ against sensitivity C for ``"poisson"`` (add/remove-one) and
    z = κσ/2 against 2C for ``"fixed"`` (replace-one).  ``"poisson"`` needs ``sample_rate`` q ∈ (0, 1];
    ``"fixed"`` needs ``dataset_size`` and ``batch_size`` (integers, batch ≤ n).
    """
    check_positive("noise_multiplier", noise_multiplier)
    check_sampling(sampling, allowed=RDP_SAMPLINGS)
    z = effective_noise_multiplier(noise_multiplier, sampling, noise_convention)
    if not MIN_NOISE <= z <= MAX_NOISE:
        raise ValueError(
            f"noise_multiplier must make the Gaussian's multiplier lie in [{MIN_NOISE:g}, {MAX_NOISE:g}], got "
            f"noise_multiplier={noise_multiplier} (multiplier {z:g})"
        )
    a = check_orders(orders, maximum=MAX_ORDER)
    for name, value in (("dataset_size", dataset_size), ("batch_size", batch_size)):
        if value is not None:
            check_positive_int(name, value)
    if sampling == "poisson":
        if sample_rate is None:
            raise ValueError("sample_rate must be given (a number in (0, 1]) for sampling='poisson'")
        return _poisson_rdp(a, check_rate("sample_rate", sample_rate), z)
    sample_rate_of(batch_size, dataset_size, sample_rate)  # b in [1, n], a given q = b/n: events' one rule
    return _fixed_rdp(a, z, int(dataset_size), int(batch_size))  # type: ignore[arg-type]


def rdp_curve(
    noise_multiplier: float,
    *,
    sample_rate: float | None = None,
    steps: int,
    orders: Sequence[float] = RDP_ORDERS,
    sampling: str = "poisson",
    dataset_size: int | None = None,
    batch_size: int | None = None,
    noise_convention: str = "standard",
) -> np.ndarray:
    """RDP of ``steps`` composed subsampled Gaussian steps at each order (Mironov 2017, Prop. 1); σ and
    ``noise_convention`` as in :func:`subsampled_gaussian_rdp` (noise std σ·C by default, every sampling)."""
    steps = check_positive_int("steps", steps, minimum=0)
    if steps > 10**300:
        raise ValueError(f"steps must be an integer in [0, 1e300], got {steps:.3g}")
    one = subsampled_gaussian_rdp(
        orders,
        noise_multiplier=noise_multiplier,
        sample_rate=sample_rate,
        sampling=sampling,
        dataset_size=dataset_size,
        batch_size=batch_size,
        noise_convention=noise_convention,
    )
    return steps * one


def rdp_to_epsilon(
    orders: Sequence[float], rdp_values: Sequence[float], delta: float, *, conversion: str = "balle"
) -> float:
    """(ε, δ) from an RDP curve: the minimum over orders of the conversion.

    ``conversion="mironov"``: Mironov 2017, Prop. 3, ε = min_α RDP(α) + log(1/δ)/(α−1).
    ``conversion="balle"``: Balle et al. 2020, Thm 21,
    ε = min_α RDP(α) + log((α−1)/α) − (log δ + log α)/(α−1).

    RDP values must be ≥ 0 or +∞ (an order whose RDP is +∞ gives no bound); NaN, −∞ or negative
    values are refused.  Returns +∞ when no order gives a finite bound.
    """
    delta = check_open_unit("delta", delta)
    check_choice("conversion", conversion, CONVERSIONS)
    a = check_orders(orders)
    r = as_real_array("rdp_values", rdp_values, low=0.0, allow_inf=True)
    if a.shape != r.shape:
        raise ValueError(f"orders and rdp_values must have the same length, got {a.size} and {r.size}")
    if conversion == "mironov":
        eps = r + (math.log(1 / delta) if delta > 1e-300 else -math.log(delta)) / (a - 1)  # 1/δ overflows below
    else:
        eps = r + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    eps = eps[np.isfinite(eps)]
    return float(max(0.0, eps.min())) if eps.size else math.inf
