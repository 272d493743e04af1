"""Gaussian differential privacy (μ-GDP) and its central-limit accountant.

* Dong, Roth, Su, "Gaussian Differential Privacy" (JRSS-B 2022), Cor. 2.13:
  a μ-GDP mechanism is (ε, δ(ε))-DP for all ε ≥ 0 with
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
* Bu, Dong, Long, Su, "Deep Learning with Gaussian Differential Privacy"
  (HDSR 2020), Thm 5 / eq. (6): T-fold Poisson-subsampled Gaussian with rate q and noise
  multiplier σ is asymptotically μ-GDP with μ = q·sqrt(T(e^{1/σ²} − 1)); for uniform
  (fixed-size) subsampling μ = √2·q·sqrt(T(e^{1/σ²}Φ(1.5/σ) + 3Φ(−0.5/σ) − 2)).

The CLT is asymptotic and known to *underestimate* the tight ε at finite T
(Gopi et al. 2021); use it for comparison, not as a guarantee.

>>> round(epsilon_from_mu(1.0, 0.126936), 3)
1.0
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from dpcore.validation import check_open_unit, check_positive, check_positive_int, check_rate

__all__ = ["mu_poisson", "mu_uniform", "delta_from_mu", "epsilon_from_mu"]


def mu_poisson(noise_multiplier: float, sample_rate: float, steps: int) -> float:
    """μ of the Poisson-subsampled Gaussian CLT (Bu et al. 2020, Thm 5)."""
    sigma = check_positive("noise_multiplier", noise_multiplier)
    q = check_rate("sample_rate", sample_rate)
    steps = check_positive_int("steps", steps)
    return q * math.sqrt(steps * math.expm1(sigma**-2))


def mu_uniform(noise_multiplier: float, sample_rate: float, steps: int) -> float:
    """μ of the uniform (fixed-size) subsampled Gaussian CLT (Bu et al. 2020, eq. (6))."""
    sigma = check_positive("noise_multiplier", noise_multiplier)
    q = check_rate("sample_rate", sample_rate)
    steps = check_positive_int("steps", steps)
    ndtr = special.ndtr
    inner = math.exp(sigma**-2) * ndtr(1.5 / sigma) + 3 * ndtr(-0.5 / sigma) - 2
    return math.sqrt(2.0) * q * math.sqrt(steps * inner)


def _log_delta_terms(mu: float, eps: np.ndarray) -> np.ndarray:
    """δ(ε) of μ-GDP computed as Φ(a) − exp(ε + log Φ(b)), stable for large ε."""
    a = -eps / mu + mu / 2
    b = -eps / mu - mu / 2
    return special.ndtr(a) - np.exp(eps + special.log_ndtr(b))


def delta_from_mu(mu: float, epsilon: float | np.ndarray) -> float | np.ndarray:
    """δ(ε) of a μ-GDP mechanism (Dong et al. 2022, Cor. 2.13); vectorised over ε."""
    mu = check_positive("mu", mu)
    eps = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilon must be in [0, inf), got {epsilon}")
    out = np.clip(_log_delta_terms(mu, eps), 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


def epsilon_from_mu(mu: float, delta: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ δ for a μ-GDP mechanism (root of Cor. 2.13)."""
    mu = check_positive("mu", mu)
    delta = check_open_unit("delta", delta)
    if _log_delta_terms(mu, np.float64(0.0)) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while _log_delta_terms(mu, np.float64(hi)) > delta:
        hi *= 2.0
        if hi > 1e6:
            return math.inf
    return float(optimize.brentq(lambda e: _log_delta_terms(mu, np.float64(e)) - delta, 0.0, hi, xtol=1e-12))
