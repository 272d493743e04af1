"""Rényi DP of the subsampled Gaussian mechanism, and RDP → (ε, δ).

One implementation of each primitive:

* :func:`subsampled_gaussian_rdp` -- RDP of one step at any real order α > 1.

  - ``sampling="poisson"`` (add/remove-one): D_α((1−q)N(0,z²) + qN(1,z²) ‖ N(0,z²)), which dominates the
    other direction (Mironov, Talwar, Zhang 2019, Thm 5).  Integer α: the exact binomial sum
    log Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2z²)} / (α−1) (Mironov et al. 2019, §3.3), in log space.
    Fractional α: the same expectation E_{N(0,z²)}[((1−q) + q·e^{(2x−1)/(2z²)})^α] integrated numerically
    on a fine grid in log space (accurate to ~1e-10 relative; dp_accounting's series for fractional
    orders can over-estimate or stop converging, e.g. α = 1.25 at z ≈ 0.37).  For tiny z, where the grid
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

from dpcore.accounting.events import check_sampling
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int, check_rate

__all__ = [
    "RDP_ORDERS",
    "CONVERSIONS",
    "check_orders",
    "subsampled_gaussian_rdp",
    "rdp_curve",
    "rdp_to_epsilon",
]

#: Opacus' default orders (1.1 … 10.9 in steps of 0.1, then 12 … 63), as used by the legacy numbers.
RDP_ORDERS: tuple[float, ...] = tuple([1 + x / 10 for x in range(1, 100)] + list(range(12, 64)))
CONVERSIONS = ("balle", "mironov")
RDP_SAMPLINGS = ("poisson", "fixed")

_POINTS_PER_SCALE = 20  # grid points per noise standard deviation
_TAIL = 20.0  # grid margin in noise standard deviations
_MAX_POINTS = 300_000


def check_orders(orders: Sequence[float] | np.ndarray, *, integer: bool = False) -> np.ndarray:
    """``orders`` as a 1-D float array of finite numbers > 1 (integers when ``integer``)."""
    try:
        a = np.asarray(orders, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"orders must be a sequence of real numbers > 1, got {orders!r}") from exc
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 1):
        raise ValueError(f"orders must be a non-empty 1-D sequence of finite numbers > 1, got {orders!r}")
    if integer and np.any(a != np.round(a)):
        raise ValueError(f"orders must be integers here, got {orders!r}")
    return a


def _binomial_log_moment(alpha: int, q: float, z: float) -> float:
    """log Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2z²)} (integer α ≥ 2)."""
    k = np.arange(alpha + 1, dtype=float)
    log_1mq = math.log1p(-q) if q < 1 else -math.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = gammaln(alpha + 1) - gammaln(k + 1) - gammaln(alpha - k + 1) + k * math.log(q)
        terms = terms + np.where(k < alpha, (alpha - k) * log_1mq, 0.0) + (k * k - k) / (2 * z * z)
    return float(logsumexp(terms))


def _integral_log_moments(alphas: np.ndarray, q: float, z: float) -> np.ndarray | None:
    """log E_{x~N(0,z²)}[((1−q) + q·e^{(2x−1)/(2z²)})^α] for each α by a Riemann sum in log space;
    ``None`` when the grid would be too fine (tiny z)."""
    top = float(alphas.max())
    lo = -_TAIL * z - 2.0
    hi = top + _TAIL * z + 2.0  # the integrand's mass sits near x ≈ α (Gaussian tail of width z)
    points = int(math.ceil((hi - lo) / (z / _POINTS_PER_SCALE))) + 1
    if points > _MAX_POINTS:
        return None
    x = np.linspace(lo, hi, max(points, 2001))
    lw = -0.5 * (x / z) ** 2
    lw = lw - logsumexp(lw)
    lr = (2 * x - 1) / (2 * z * z)
    log_mix = np.logaddexp(math.log1p(-q), math.log(q) + lr) if q < 1 else lr
    out = np.empty(alphas.size)
    chunk = max(1, 4_000_000 // x.size)  # bounded memory
    for k in range(0, alphas.size, chunk):
        part = alphas[k : k + chunk]
        out[k : k + chunk] = logsumexp(lw[None, :] + part[:, None] * log_mix[None, :], axis=1)
    return out


def _chord_log_moments(alphas: np.ndarray, q: float, z: float) -> np.ndarray:
    """Upper bound on log E[...^α] at fractional α by the chord between ⌊α⌋ and ⌈α⌉ (the log-moment is
    convex in α and 0 at α = 1), from the exact integer-order values."""
    out = np.empty(alphas.size)
    for i, a in enumerate(alphas):
        k = math.floor(a)
        left = 0.0 if k == 1 else _binomial_log_moment(k, q, z)
        right = _binomial_log_moment(k + 1, q, z)
        out[i] = left + (a - k) * (right - left)
    return out


def _binomial_log_moments(alphas: np.ndarray, q: float, z: float) -> np.ndarray:
    """:func:`_binomial_log_moment` for many integer orders at once (one masked matrix)."""
    top = int(alphas.max())
    k = np.arange(top + 1, dtype=float)[None, :]
    a = alphas.astype(float)[:, None]
    log_1mq = math.log1p(-q) if q < 1 else -math.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = gammaln(a + 1) - gammaln(k + 1) - gammaln(np.maximum(a - k, 0) + 1) + k * math.log(q)
        terms = terms + np.where(k < a, (a - k) * log_1mq, 0.0) + (k * k - k) / (2 * z * z)
    terms = np.where(k <= a, terms, -np.inf)
    return logsumexp(terms, axis=1)


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
) -> np.ndarray:
    """RDP ε(α) of ONE subsampled Gaussian step at each order (see the module docstring).

    ``noise_multiplier`` z: noise std over the sensitivity of one record (add/remove for ``"poisson"``,
    the replace-one sensitivity for ``"fixed"``... which for the sum of clipped terms is 2C: pass
    z = noise_std / (2C) there).  ``"poisson"`` needs ``sample_rate`` q ∈ (0, 1]; ``"fixed"`` needs
    ``dataset_size`` and ``batch_size`` (integers, batch ≤ n).
    """
    z = check_positive("noise_multiplier", noise_multiplier)
    check_sampling(sampling, allowed=RDP_SAMPLINGS)
    a = check_orders(orders)
    if sampling == "poisson":
        if sample_rate is None:
            raise ValueError("sample_rate must be given (a number in (0, 1]) for sampling='poisson'")
        return _poisson_rdp(a, check_rate("sample_rate", sample_rate), z)
    n = check_positive_int("dataset_size", dataset_size)
    b = check_positive_int("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must be in [1, dataset_size={n}], got {b}")
    if sample_rate is not None and not math.isclose(float(sample_rate), b / n, rel_tol=1e-12):
        raise ValueError(f"sample_rate={sample_rate} disagrees with batch_size/dataset_size = {b}/{n}")
    return _fixed_rdp(a, z, n, b)


def rdp_curve(
    noise_multiplier: float,
    *,
    sample_rate: float | None = None,
    steps: int,
    orders: Sequence[float] = RDP_ORDERS,
    sampling: str = "poisson",
    dataset_size: int | None = None,
    batch_size: int | None = None,
) -> np.ndarray:
    """RDP of ``steps`` composed subsampled Gaussian steps at each order (Mironov 2017, Prop. 1)."""
    steps = check_positive_int("steps", steps, minimum=0)
    one = subsampled_gaussian_rdp(
        orders,
        noise_multiplier=noise_multiplier,
        sample_rate=sample_rate,
        sampling=sampling,
        dataset_size=dataset_size,
        batch_size=batch_size,
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
    try:
        r = np.asarray(rdp_values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rdp_values must be a sequence of numbers, got {rdp_values!r}") from exc
    if a.shape != r.shape:
        raise ValueError(f"orders and rdp_values must have the same length, got {a.size} and {r.size}")
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError(f"rdp_values must be in [0, inf], got {rdp_values!r}")
    if conversion == "mironov":
        eps = r + math.log(1 / delta) / (a - 1)
    else:
        eps = r + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    eps = eps[np.isfinite(eps)]
    return float(max(0.0, eps.min())) if eps.size else math.inf
