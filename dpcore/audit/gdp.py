"""Parametric (Gaussian-DP) audit estimators and the empirical trade-off curve.

**The many-runs GDP estimator** (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini, Terzis 2023, "Tight
Auditing of Differentially Private Machine Learning", USENIX Security, §5: estimate the privacy curve under a
Gaussian-DP assumption instead of thresholding two error rates).  A score that is N(m_out, v) without the canary and
N(m_out + μ·√v, v) with it separates the worlds exactly as the trade-off G_μ (Dong, Roth, Su 2022, "Gaussian
Differential Privacy", Def. 2.7), so a confidence bound on μ is a confidence bound on the whole curve, and ε(δ)
follows from it (Dong et al., Cor. 2.13) -- no rare event has to be counted, which is why a few thousand runs come
close to ε at small δ.

*Assumptions, and when they hold.*  (i) Both score samples are Gaussian with one common variance; (ii) the runs are
independent.  For DP-SGD with a white-box Dirac canary (Nasr et al. 2023, §4: a gradient c·e_j in a coordinate no
other example touches) the observed update coordinate of one step is exactly c·B + N(0, s²), B the canary's
inclusion: the noise is Gaussian by construction, so (i) holds exactly per step when B = 1 always (full batch, q = 1)
and, per step, as a known-rate mixture for Poisson sampling (``rate`` q < 1: the shift is estimated as
(mean_in − mean_out)/q, the noise std from the canary-free world).  The per-step μ = c/s is then composed by the
caller's accountant (the mechanism's own trade-off family: subsampled Gaussian at noise multiplier 1/μ for q < 1,
G_{μ√T} for q = 1).  The assumptions fail for scores that are not Gaussian (a likelihood-ratio score of a subsampled
mechanism, a broken RNG whose noise repeats): there, use the distribution-free threshold bound of
:mod:`dpcore.audit.estimators`, which assumes nothing.

*The test.*  With q = 1 the statistic t = (x̄_in − x̄_out)/(s_p·√(1/n_in + 1/n_out)) is non-central t with
n_in + n_out − 2 degrees of freedom and non-centrality μ/√(1/n_in + 1/n_out); inverting it gives an exact one-sided
lower confidence bound on μ.  With q < 1 the bound is the Welch-type normal (delta-method) bound on
(x̄_in − x̄_out)/(q·s_out) (asymptotic; thousands of per-step samples make it accurate).  An F test of equal variances
(q = 1) is reported as a check of assumption (i).

**The empirical trade-off curve**: FPR/FNR of every threshold with simultaneous Dvoretzky–Kiefer–Wolfowitz–Massart
bands (Massart 1990: sup_t |F̂_n(t) − F(t)| ≤ √(log(2/α)/(2n)) with probability ≥ 1 − α), to draw against the
accountant's f-DP curve; :func:`tradeoff_violation` says whether the bands exclude a claimed curve anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from dpcore.accounting.gaussian import epsilon_from_mu
from dpcore.validation import check_open_unit, check_positive_int, check_rate, check_real_array

__all__ = [
    "GaussianShift",
    "GDPBound",
    "EmpiricalTradeoff",
    "gaussian_shift",
    "gdp_epsilon",
    "threshold_mu_lower",
    "empirical_tradeoff",
    "tradeoff_violation",
]

#: above this many degrees of freedom the non-central t is replaced by its normal limit (relative error < 1e-4)
_NCT_MAX_DF = 20_000


def _sample(name: str, values: Sequence[float] | np.ndarray, minimum: int = 2) -> np.ndarray:
    arr = check_real_array(name, values, min_size=0).reshape(-1)  # strings, None, NaN, inf: refused, named
    if arr.size < minimum:
        raise ValueError(f"{name} must hold at least {minimum} finite observations, got {arr.size}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must hold finite numbers only (no NaN or inf)")
    return arr


@dataclass(frozen=True)
class GaussianShift:
    """A confidence bound on μ = shift/σ of two Gaussian samples (see :func:`gaussian_shift`)."""

    mu: float  # point estimate
    mu_lower: float  # one-sided lower bound at ``confidence`` (>= 0)
    confidence: float
    samples_in: int
    samples_out: int
    rate: float  # the known probability that an "in" observation carries the shift
    method: str
    variance_ratio: float  # var_in / var_out (1 under the model when rate = 1)
    variance_p_value: float  # two-sided F test of equal variances (rate = 1; NaN otherwise)


def gaussian_shift(
    obs_in: Sequence[float] | np.ndarray,
    obs_out: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    rate: float = 1.0,
) -> GaussianShift:
    """One-sided lower confidence bound on μ = shift/σ when ``obs_out`` ~ N(m, σ²) and each of ``obs_in`` is
    N(m + shift, σ²) with probability ``rate`` and N(m, σ²) otherwise (module docstring: exact non-central t for
    ``rate`` = 1, Welch/delta-method normal bound for ``rate`` < 1).

    >>> rng = np.random.default_rng(0)
    >>> b = gaussian_shift(rng.normal(1.0, 1.0, 4000), rng.normal(0.0, 1.0, 4000))
    >>> round(b.mu, 2), b.mu_lower < b.mu
    (0.97, True)
    """
    x1, x0 = _sample("obs_in", obs_in), _sample("obs_out", obs_out)
    confidence = check_open_unit("confidence", confidence)
    rate = check_rate("rate", rate)
    n1, n0 = x1.size, x0.size
    v1, v0 = float(x1.var(ddof=1)), float(x0.var(ddof=1))
    if v0 <= 0 or v1 <= 0:
        raise ValueError("obs_in and obs_out must not be constant (zero variance): the Gaussian model cannot hold")
    alpha = 1.0 - confidence
    diff = float(x1.mean() - x0.mean())
    if rate == 1.0:
        df = n1 + n0 - 2
        sp = math.sqrt(((n1 - 1) * v1 + (n0 - 1) * v0) / df)
        k = math.sqrt(1.0 / n1 + 1.0 / n0)
        t = diff / (sp * k)
        mu = diff / sp
        if df <= _NCT_MAX_DF:
            method = f"non-central t, {df} df (exact under the equal-variance Gaussian model)"

            def excess(nc: float) -> float:
                return float(stats.nct.sf(t, df, nc)) - alpha

            if excess(0.0) >= 0:
                nc_lo = 0.0
            else:
                hi = max(t, 1.0)
                while excess(hi) < 0:
                    hi *= 2
                nc_lo = optimize.brentq(excess, 0.0, hi, xtol=1e-10)
            mu_lower = nc_lo * k
        else:
            method = f"normal limit of the non-central t, {df} df"
            z = stats.norm.ppf(confidence)
            se = math.sqrt(k * k + mu * mu / (2 * df))
            mu_lower = max(0.0, mu - z * se)
        f_stat = v1 / v0
        p_f = 2 * min(stats.f.cdf(f_stat, n1 - 1, n0 - 1), stats.f.sf(f_stat, n1 - 1, n0 - 1))
        return GaussianShift(mu, max(0.0, mu_lower), confidence, n1, n0, rate, method, f_stat, float(min(1.0, p_f)))
    s0 = math.sqrt(v0)
    mu = diff / (rate * s0)
    # delta method for (x̄_in − x̄_out)/(q·s_out): Var(x̄_in) = v1/n1, Var(x̄_out) = v0/n0, Var(s_out)/s² ≈ 1/(2 n0)
    se = math.sqrt((v1 / n1 + v0 / n0) / (rate * s0) ** 2 + mu * mu / (2 * n0))
    mu_lower = mu - stats.norm.ppf(confidence) * se
    method = f"Welch/delta-method normal bound, known inclusion rate q = {rate:g} (asymptotic)"
    return GaussianShift(mu, max(0.0, mu_lower), confidence, n1, n0, rate, method, v1 / v0, math.nan)


@dataclass(frozen=True)
class GDPBound:
    """An ε lower bound at δ from a μ lower bound, under the Gaussian (family) assumption it states."""

    epsilon: float  # ε of the trade-off family at mu.mu_lower (valid at mu.confidence under the assumption)
    point: float  # ε at the point estimate mu.mu (an estimate, no confidence)
    shift: GaussianShift
    delta: float
    assumption: str


def gdp_epsilon(
    shift: GaussianShift,
    delta: float,
    *,
    compose: Callable[[float, float], float] | None = None,
    assumption: str = "",
) -> GDPBound:
    """ε(δ) of the trade-off family at ``shift.mu_lower`` (and at the point estimate).

    ``compose(mu, delta)`` maps the per-observation μ to the mechanism's ε (e.g. the subsampled-Gaussian accountant
    at noise multiplier 1/μ over T steps); the default is the Gaussian trade-off itself, ε(G_μ) (Dong, Roth, Su
    2022, Cor. 2.13).  μ = 0 gives ε = 0.
    """
    if not isinstance(shift, GaussianShift):
        raise ValueError(f"shift must be a GaussianShift, got {type(shift).__name__}")
    delta = check_open_unit("delta", delta)
    if compose is not None and not callable(compose):
        raise ValueError("compose must be a callable (mu, delta) -> epsilon or None")
    fn = compose or epsilon_from_mu

    def eps(mu: float) -> float:
        return 0.0 if mu <= 0 else float(fn(mu, delta))

    text = assumption or "the mechanism's trade-off is G_μ (scores Gaussian with a common variance)"
    return GDPBound(eps(shift.mu_lower), eps(shift.mu), shift, delta, text)


def threshold_mu_lower(fpr_upper: float, fnr_upper: float) -> float:
    """The distribution-free lower bound on the GDP parameter certified by one test: a μ-GDP mechanism has
    FNR ≥ G_μ(FPR) = Φ(Φ⁻¹(1 − FPR) − μ) for every test (Dong, Roth, Su 2022, Def. 2.7), so upper confidence
    bounds FPR⁺, FNR⁺ give μ ≥ Φ⁻¹(1 − FPR⁺) − Φ⁻¹(FNR⁺) (clipped at 0)."""
    for name, v in (("fpr_upper", fpr_upper), ("fnr_upper", fnr_upper)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            raise ValueError(f"{name} must be a number in [0, 1], got {v!r}")
    if fpr_upper == 0.0 or fnr_upper == 0.0:
        return math.inf
    if fpr_upper == 1.0 or fnr_upper == 1.0:
        return 0.0
    return max(0.0, float(stats.norm.isf(fpr_upper) - stats.norm.ppf(fnr_upper)))


@dataclass(frozen=True)
class EmpiricalTradeoff:
    """FPR and FNR of the tests "in iff score > t" over thresholds t, with simultaneous (DKW) bands."""

    thresholds: np.ndarray
    fpr: np.ndarray
    fnr: np.ndarray
    fpr_lower: np.ndarray
    fpr_upper: np.ndarray
    fnr_lower: np.ndarray
    fnr_upper: np.ndarray
    confidence: float


def empirical_tradeoff(
    scores_in: Sequence[float] | np.ndarray,
    scores_out: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    points: int = 200,
) -> EmpiricalTradeoff:
    """The empirical trade-off curve at ``points`` thresholds (quantiles of the pooled scores), with bands that
    hold simultaneously over all thresholds and both worlds with probability ≥ ``confidence`` (DKW–Massart at level
    (1 − confidence)/2 per world).

    >>> rng = np.random.default_rng(1)
    >>> c = empirical_tradeoff(rng.normal(1, 1, 2000), rng.normal(0, 1, 2000), points=50)
    >>> bool(np.all(c.fpr_lower <= c.fpr) and np.all(c.fnr <= c.fnr_upper))
    True
    """
    s1, s0 = _sample("scores_in", scores_in, 1), _sample("scores_out", scores_out, 1)
    confidence = check_open_unit("confidence", confidence)
    points = check_positive_int("points", points, minimum=2)
    pooled = np.concatenate([s1, s0])
    grid = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, points)))
    grid = np.concatenate([[pooled.min() - 1.0], grid])
    fpr = 1.0 - np.searchsorted(np.sort(s0), grid, side="right") / s0.size
    fnr = np.searchsorted(np.sort(s1), grid, side="right") / s1.size
    a = (1.0 - confidence) / 2
    w0 = math.sqrt(math.log(2 / a) / (2 * s0.size))
    w1 = math.sqrt(math.log(2 / a) / (2 * s1.size))
    return EmpiricalTradeoff(
        grid, fpr, fnr, np.clip(fpr - w0, 0, 1), np.clip(fpr + w0, 0, 1), np.clip(fnr - w1, 0, 1),
        np.clip(fnr + w1, 0, 1), confidence,
    )  # fmt: skip


def tradeoff_violation(curve: EmpiricalTradeoff, f: Callable[[np.ndarray], np.ndarray]) -> bool:
    """True when the bands exclude the claimed trade-off ``f`` somewhere: a test with FNR⁺ < f(FPR⁺) exists, which
    an f-DP mechanism forbids (FNR ≥ f(FPR) for every test, f non-increasing), at the curve's confidence."""
    if not isinstance(curve, EmpiricalTradeoff):
        raise ValueError(f"curve must be an EmpiricalTradeoff, got {type(curve).__name__}")
    if not callable(f):
        raise ValueError("f must be a callable trade-off function alpha -> beta")
    return bool(np.any(curve.fnr_upper < np.asarray(f(curve.fpr_upper), dtype=float) - 1e-12))
