"""Standard DP-SGD accounting: the Poisson-subsampled Gaussian mechanism.

One step of DP-SGD with sampling rate q and noise multiplier σ (noise std σ·C on a
sum of per-example gradients clipped to norm C) is the Poisson-subsampled Gaussian
mechanism of Abadi et al. (CCS 2016); T steps are its T-fold composition under the
add/remove-one neighbouring relation.  Methods:

* ``"pld"``         -- privacy-loss distributions, dp_accounting's ``PLDAccountant``
                       (Koskela et al. 2020; Doroshenko et al. 2022), pessimistic
                       discretisation 1e-4: tight up to the grid.
* ``"rdp"``         -- Rényi DP (Mironov 2017; Mironov, Talwar, Zhang 2019) with the
                       conversion of Balle et al. 2020, Thm 21 (dp_accounting's default).
* ``"rdp-mironov"`` -- the same RDP curve with Mironov 2017, Prop. 3:
                       ε = min_α RDP(α) + log(1/δ)/(α − 1).  Every legacy published
                       number (Abadi's moments accountant, TF Privacy, Opacus < 1.0) uses it.
* ``"gdp"``         -- the Gaussian-DP central limit theorem of Bu et al. 2020
                       (asymptotic; optimistic at finite T).

Sampling: ``"poisson"`` (all methods) or ``"uniform"`` (fixed-size batches without
replacement; only ``"gdp"``, via Bu et al.'s μ_uniform).  ``"shuffle"`` is refused:
none of these methods accounts for shuffled disjoint batches (see
:mod:`dpcore.accounting.shuffling` for paper 003's analysis).

>>> round(dpsgd_epsilon(4.0, 0.01, 10000, 1e-5, method="rdp-mironov"), 3)  # Abadi et al. 2016
1.259
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import dp_accounting
import numpy as np
from dp_accounting import pld, rdp

from dpcore.accounting import gdp
from dpcore.accounting.calibration import smallest_sigma
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int, check_rate

__all__ = [
    "METHODS",
    "SAMPLINGS",
    "RDP_ORDERS",
    "dpsgd_epsilon",
    "dpsgd_noise_multiplier",
    "rdp_curve",
    "rdp_to_epsilon",
    "epsilon_curve",
]

METHODS = ("pld", "rdp", "rdp-mironov", "gdp")
SAMPLINGS = ("poisson", "uniform", "shuffle")
#: Opacus' default orders (1.1 … 10.9 in steps of 0.1, then 12 … 63), as used by the legacy numbers.
RDP_ORDERS: tuple[float, ...] = tuple([1 + x / 10 for x in range(1, 100)] + list(range(12, 64)))
PLD_GRID = 1e-4


def _check_common(noise_multiplier: float, sample_rate: float, steps: int, delta: float) -> tuple:
    return (
        check_positive("noise_multiplier", noise_multiplier),
        check_rate("sample_rate", sample_rate),
        check_positive_int("steps", steps),
        check_open_unit("delta", delta),
    )


def _check_sampling(method: str, sampling: str) -> None:
    check_choice("method", method, METHODS)
    check_choice("sampling", sampling, SAMPLINGS)
    if sampling == "shuffle":
        raise ValueError(
            f"sampling='shuffle' cannot be accounted for by method={method!r}: it analyses Poisson "
            "subsampling only; use dpcore.accounting.shuffling for shuffled batches"
        )
    if sampling == "uniform" and method != "gdp":
        raise ValueError(
            f"sampling='uniform' (fixed-size batches) is only supported by method='gdp'; "
            f"method={method!r} assumes Poisson subsampling"
        )


def _event(noise_multiplier: float, sample_rate: float, steps: int) -> dp_accounting.DpEvent:
    gaussian = dp_accounting.GaussianDpEvent(noise_multiplier)
    step = gaussian if sample_rate == 1.0 else dp_accounting.PoissonSampledDpEvent(sample_rate, gaussian)
    return dp_accounting.SelfComposedDpEvent(step, steps)


def rdp_curve(
    noise_multiplier: float, sample_rate: float, steps: int, orders: Sequence[float] = RDP_ORDERS
) -> np.ndarray:
    """RDP ε(α) of T Poisson-subsampled Gaussian steps at each order (Mironov et al. 2019).

    Computed by dp_accounting 0.6.0, like the legacy numbers.  Its series for fractional orders
    in (1, 2) over-estimates the RDP (conservative, e.g. 0.00482 instead of the exact 0.00335 at
    α = 1.25, q = 0.1, σ = 1.5); integer orders are exact.  The effect on ε at the usual DP-SGD
    settings is below 1e-3 relative; :func:`dpcore.accounting.modelmix.sampled_gaussian_rdp`
    gives the exact values.
    """
    noise_multiplier = check_positive("noise_multiplier", noise_multiplier)
    sample_rate = check_rate("sample_rate", sample_rate)
    steps = check_positive_int("steps", steps)
    accountant = rdp.RdpAccountant(orders=list(orders))
    accountant.compose(_event(noise_multiplier, sample_rate, steps))
    # dp_accounting 0.6.0 keeps the composed curve in ``_rdp``; pinned, and tested
    # against the closed form α/(2σ²) at q = 1.
    return np.asarray(accountant._rdp, dtype=float)


def rdp_to_epsilon(
    orders: Sequence[float], rdp_values: Sequence[float], delta: float, *, conversion: str = "balle"
) -> float:
    """(ε, δ) from an RDP curve.

    ``conversion="mironov"``: Mironov 2017, Prop. 3, ε = min_α RDP(α) + log(1/δ)/(α−1).
    ``conversion="balle"``: Balle et al. 2020, Thm 21,
    ε = min_α RDP(α) + log((α−1)/α) − (log δ + log α)/(α−1).
    """
    delta = check_open_unit("delta", delta)
    check_choice("conversion", conversion, ("balle", "mironov"))
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp_values, dtype=float)
    if a.shape != r.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("orders and rdp_values must be 1-D sequences of the same non-zero length")
    if np.any(a <= 1):
        raise ValueError("orders must all be > 1")
    if conversion == "mironov":
        eps = r + math.log(1 / delta) / (a - 1)
    else:
        eps = r + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    eps = eps[np.isfinite(eps)]
    return float(max(0.0, eps.min())) if eps.size else math.inf


def _pld_epsilon(sigma: float, q: float, steps: int, delta: float, grid: float) -> float:
    accountant = pld.PLDAccountant(value_discretization_interval=grid)
    accountant.compose(_event(sigma, q, steps))
    return float(accountant.get_epsilon(delta))


def dpsgd_epsilon(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    delta: float,
    *,
    method: str = "pld",
    sampling: str = "poisson",
) -> float:
    """ε of ``steps`` DP-SGD steps at (σ = ``noise_multiplier``, q = ``sample_rate``) and δ.

    See the module docstring for the methods.  Raises ``ValueError`` for bad input
    and for a sampling scheme the method cannot account for.
    """
    sigma, q, steps, delta = _check_common(noise_multiplier, sample_rate, steps, delta)
    _check_sampling(method, sampling)
    if method == "gdp":
        mu = (gdp.mu_poisson if sampling == "poisson" else gdp.mu_uniform)(sigma, q, steps)
        return gdp.epsilon_from_mu(mu, delta)
    if method == "pld":
        return _pld_epsilon(sigma, q, steps, delta, PLD_GRID)
    conversion = "mironov" if method == "rdp-mironov" else "balle"
    return rdp_to_epsilon(RDP_ORDERS, rdp_curve(sigma, q, steps), delta, conversion=conversion)


def dpsgd_noise_multiplier(
    target_epsilon: float,
    delta: float,
    sample_rate: float,
    steps: int,
    *,
    method: str = "pld",
    sampling: str = "poisson",
    rtol: float = 1e-3,
) -> float:
    """Smallest σ (to ``rtol`` relative) whose ε does not exceed ``target_epsilon``.

    Bisection on σ with the bracket kept so that the returned σ always satisfies
    ``dpsgd_epsilon(σ, …) <= target_epsilon``: calibration never overshoots.
    """
    target = check_positive("target_epsilon", target_epsilon)
    delta = check_open_unit("delta", delta)
    q = check_rate("sample_rate", sample_rate)
    steps = check_positive_int("steps", steps)
    rtol = check_positive("rtol", rtol)
    _check_sampling(method, sampling)

    def eps(sigma: float) -> float:
        return dpsgd_epsilon(sigma, q, steps, delta, method=method, sampling=sampling)

    if method == "pld":
        # Locate σ on a coarse grid first (cheap), then refine on the 1e-4 grid
        # inside a bracket that is re-checked with the fine accountant.
        guess = smallest_sigma(lambda s: _pld_epsilon(s, q, steps, delta, 1e-3), target, rtol=1e-2)
        return smallest_sigma(eps, target, rtol=rtol, start=guess, factor=1.02)
    return smallest_sigma(eps, target, rtol=rtol)


def epsilon_curve(
    noise_multiplier: float,
    sample_rate: float,
    steps: Sequence[int],
    delta: float,
    variants: Sequence[tuple[str, str]] = (
        ("rdp-mironov", "poisson"),
        ("rdp", "poisson"),
        ("pld", "poisson"),
        ("gdp", "poisson"),
        ("gdp", "uniform"),
    ),
) -> dict[str, list[float]]:
    """ε after each entry of ``steps`` for every (method, sampling) in ``variants``.

    Returns ``{"steps": [...], "<method>/<sampling>": [...], ...}``, ready for a DataFrame.
    """
    steps = [check_positive_int("steps", s) for s in steps]
    if not steps:
        raise ValueError("steps must be a non-empty sequence of positive integers")
    out: dict[str, list[float]] = {"steps": list(steps)}
    for method, sampling in variants:
        out[f"{method}/{sampling}"] = [
            dpsgd_epsilon(noise_multiplier, sample_rate, s, delta, method=method, sampling=sampling) for s in steps
        ]
    return out
