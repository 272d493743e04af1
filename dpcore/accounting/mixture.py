"""Labelled mixtures of Gaussian mechanisms: the exact trade-off of Lemma B.5 / Def. 5.2 of paper 003.

van Dijk, Nguyen, Nguyen, Nguyen, "Generalizing DP-SGD with Shuffling and Batch Clipping" (paper 003):
a mechanism that runs G_{μ_i} with probability q_i, *the adversary knowing which component ran*
(their adversary A_1), has the trade-off function (Lemma B.1, B.5)

    f(α) = Σ_i q_i Φ(Λ(α)/μ_i − μ_i/2),   where   1 − α = Σ_i q_i Φ(Λ(α)/μ_i + μ_i/2).

For Algorithm 1 the components are indexed by c² = Σ_k c_k k² (Def. 5.1/5.2): μ = c/σ = sqrt(c²)/σ, and
q_E(c) is a pmf on the integers c² ≥ 0.  Because the label is observed, composition over rounds or
epochs is the convolution of the pmfs of c² (:func:`convolve_power`), and the (ε, δ) curve is the
q-weighted average of Gaussian δ's:  δ(ε) = Σ_c q_E(c) δ_{c/σ}(ε).

Numerics (no 1 − x cancellation):
α(Λ) = Σ_{c>0} q_c Φ(−Λ/μ_c − μ_c/2) + q_0·1[Λ < 0],  1 − β(Λ) = Σ_{c>0} q_c Φ(μ_c/2 − Λ/μ_c) + q_0·1[Λ < 0];
Λ(α) by vectorised bisection on log α(Λ); the c = 0 atom (G_0) contributes the linear piece on the jump of
α at Λ = 0.  Mass dropped by truncation is kept in ``tail`` and treated as a fully distinguishable
component (it adds to δ and to the power), so truncation never under-reports leakage.

>>> m = GaussianMixture.point_mass(100, sigma=2.0)      # shuffling, g = 1, E = 100: exactly G_5
>>> round(m.epsilon(1e-5), 3)
33.104
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from dpcore.accounting import gaussian
from dpcore.accounting.gaussian import as_real_array, upper_root
from dpcore.validation import check_nonnegative, check_open_unit, check_positive, check_positive_int, check_range

__all__ = ["GaussianMixture", "convolve_power", "trim_pmf", "MAX_COMPONENTS"]

_TINY = 1e-300
#: Most entries a composed pmf (components of a mixture) may have: beyond it a composition is refused
#: (the direct convolutions and every δ(ε) over the components would take more than a second or two).
MAX_COMPONENTS = 20_000


def _lse(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log Σ exp(x) along ``axis`` (plain numpy; -inf rows give -inf)."""
    m = np.max(x, axis=axis, keepdims=True)
    m_safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m_safe), axis=axis)) + np.squeeze(m_safe, axis=axis)
    return out


def _check_pmf(pmf: object) -> np.ndarray:
    """``pmf`` as a 1-D array of finite non-negative numbers with a positive sum."""
    arr = as_real_array("pmf", pmf, low=0.0)
    if arr.ndim != 1 or not arr.sum() > 0:
        raise ValueError(f"pmf must be a 1-D array of non-negative numbers with a positive sum, got {pmf!r}")
    return arr


def _check_offset(offset: object) -> int:
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, numbers.Integral):
        raise ValueError(f"offset must be an integer, got {offset!r}")
    return int(offset)


def trim_pmf(pmf: np.ndarray, offset: int = 0, *, floor: float = _TINY) -> tuple[np.ndarray, int, float]:
    """Drop leading/trailing entries below ``floor``; returns (pmf, new offset, dropped mass)."""
    pmf = _check_pmf(pmf)
    offset = _check_offset(offset)
    floor = check_range("floor", check_positive("floor", floor), 0.0, 1.0)
    return _trim(pmf, offset, floor)


def _trim(pmf: np.ndarray, offset: int, floor: float) -> tuple[np.ndarray, int, float]:
    """:func:`trim_pmf` on checked inputs (:func:`convolve_power`'s products: its entry checks them once)."""
    keep = np.nonzero(pmf > floor)[0]
    if keep.size == 0:
        raise ValueError("pmf has no entry above the floor")
    lo, hi = int(keep[0]), int(keep[-1]) + 1
    dropped = float(pmf[:lo].sum() + pmf[hi:].sum())
    return pmf[lo:hi], offset + lo, dropped


def convolve_power(pmf: np.ndarray, n: int, *, floor: float = _TINY) -> tuple[np.ndarray, int, float]:
    """The pmf of the sum of ``n`` iid copies of an integer variable with pmf ``pmf`` on 0, 1, 2, …

    Binary exponentiation with direct convolutions; negligible entries (< ``floor``) are trimmed after each
    product.  Returns (pmf, offset, dropped mass): entry i is Pr[sum = offset + i].  A product with more than
    :data:`MAX_COMPONENTS` entries is refused (``ValueError`` naming ``n``): the time stays bounded for any n.
    """
    n = n_copies = check_positive_int("n", n)
    base, base_off, dropped = trim_pmf(pmf, 0, floor=floor)
    result: np.ndarray | None = None
    res_off = 0
    while n:
        if n & 1:
            if result is None:
                result, res_off = base.copy(), base_off
            else:
                result = _checked_convolve(result, base, n)
                res_off += base_off
                result, res_off, d = _trim(result, res_off, floor)
                dropped += d
        n >>= 1
        if n:
            base = _checked_convolve(base, base, n)
            base_off *= 2
            base, base_off, d = _trim(base, base_off, floor)
            dropped += d
    assert result is not None
    if result.size > MAX_COMPONENTS:
        raise ValueError(
            f"n={n_copies} is too large for an exact composition: the pmf of the sum has {result.size} entries "
            f"(at most {MAX_COMPONENTS})"
        )
    return result, res_off, min(1.0, max(dropped, 1.0 - float(result.sum()), 0.0))


def _checked_convolve(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """np.convolve, refused beyond 2·MAX_COMPONENTS entries before trimming (a bounded O(size²) product)."""
    size = a.size + b.size - 1
    if size > 2 * MAX_COMPONENTS:
        raise ValueError(
            f"n is too large for an exact composition: the pmf of the sum would have more than {size} entries "
            f"(at most {2 * MAX_COMPONENTS} before trimming); n must be smaller (still {n} to go at this point)"
        )
    return np.convolve(a, b)


@dataclass(frozen=True)
class GaussianMixture:
    """The labelled Gaussian mixture Σ q_c G_{c/σ} of Def. 5.2 (paper 003), c² on the integers.

    ``pmf[i]`` is Pr[c² = offset + i]; ``tail`` is probability mass not represented (treated as a
    component with μ = ∞).  Build it with :meth:`from_pmf`, :meth:`point_mass` or :meth:`binomial`.
    """

    support: np.ndarray  # values of c² with positive mass
    weights: np.ndarray
    sigma: float
    tail: float = 0.0
    _mus: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_positive("sigma", self.sigma)
        check_range("tail", self.tail, 0.0, 1.0)
        support = as_real_array("support", self.support, low=0.0)
        weights = as_real_array("weights", self.weights, low=0.0)
        if support.shape != weights.shape or support.ndim != 1 or support.size == 0:
            raise ValueError("support and weights must be 1-D arrays of the same non-zero length")
        if np.any(support < 0) or np.any(weights < 0):
            raise ValueError("support (values of c²) and weights must be non-negative")
        if abs(weights.sum() + self.tail - 1.0) > 1e-9:
            raise ValueError(f"weights plus tail must sum to 1, got {weights.sum() + self.tail}")
        with np.errstate(over="ignore"):
            mus = np.sqrt(support) / self.sigma
        if not np.all(np.isfinite(mus)):
            raise ValueError(f"sigma={self.sigma} is too small for the support: sqrt(c²)/sigma overflows")
        object.__setattr__(self, "support", support)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "_mus", mus)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_pmf(cls, pmf: np.ndarray, sigma: float, *, offset: int = 0, tail: float = 0.0) -> GaussianMixture:
        """From a pmf of c² on offset, offset+1, …; entries ≤ 1e-300 are dropped into ``tail``."""
        tail = check_range("tail", tail, 0.0, 1.0)
        pmf, offset, dropped = trim_pmf(pmf, offset)
        support = offset + np.arange(pmf.size, dtype=float)
        keep = pmf > 0
        total = pmf[keep].sum()
        tail = min(1.0, tail + dropped)
        weights = pmf[keep] * ((1.0 - tail) / total)  # renormalise the represented mass exactly
        return cls(support[keep], weights, float(sigma), tail)

    @classmethod
    def point_mass(cls, c2: float, sigma: float) -> GaussianMixture:
        """A single component G_{sqrt(c2)/σ}."""
        return cls(np.array([check_nonnegative("c2", c2)]), np.array([1.0]), float(sigma))

    @classmethod
    def binomial(cls, n: int, p: float, sigma: float) -> GaussianMixture:
        """c² ~ Binomial(n, p): e.g. subsampling with g = 1 (n rounds, each touching z w.p. p)."""
        from scipy import stats

        n = check_positive_int("n", n)
        p = check_range("p", p, 0.0, 1.0)
        sigma = check_positive("sigma", sigma)
        mean, sd = n * p, math.sqrt(n * p * (1 - p))
        if 120 * sd + 121 > 4 * MAX_COMPONENTS:
            raise ValueError(
                f"n={n} is too large for an exact binomial mixture at p={p:g}: it would have about "
                f"{76 * sd:.3g} components (at most {MAX_COMPONENTS}); n·p·(1 − p) must be at most "
                f"{(MAX_COMPONENTS / 76) ** 2:.3g}"
            )
        lo = max(0, int(mean - 60 * sd - 60))
        hi = min(n, int(mean + 60 * sd + 60))
        k = np.arange(lo, hi + 1)
        pmf = stats.binom.pmf(k, n, p)
        tail = min(1.0, max(0.0, 1.0 - pmf.sum()))
        out = cls.from_pmf(pmf, sigma, offset=lo, tail=tail)
        if out.support.size > MAX_COMPONENTS:
            raise ValueError(
                f"n={n} is too large for an exact binomial mixture at p={p:g}: it has {out.support.size} components "
                f"(at most {MAX_COMPONENTS}); n·p·(1 − p) must be at most {(MAX_COMPONENTS / 76) ** 2:.3g}"
            )
        return out

    # ------------------------------------------------------------------ basic quantities
    @property
    def mus(self) -> np.ndarray:
        """μ_c = c/σ of every component."""
        return self._mus

    @property
    def q0(self) -> float:
        """Mass of the c = 0 atom (G_0, no leakage)."""
        return float(self.weights[self.support == 0].sum())

    def mean_c2(self) -> float:
        return float(np.dot(self.weights, self.support)) + (math.inf if self.tail > 0 else 0.0)

    def _pos(self) -> tuple[np.ndarray, np.ndarray]:
        pos = self.support > 0
        return self.weights[pos], self._mus[pos]

    def _log_alpha(self, lam: np.ndarray) -> np.ndarray:
        """log α(Λ) for an array of Λ (c > 0 components plus the q0 atom for Λ < 0)."""
        w, mu = self._pos()
        lam = np.asarray(lam, dtype=float)[..., None]
        with np.errstate(divide="ignore"):
            terms = np.log(w) + special.log_ndtr(-lam / mu - mu / 2) if w.size else np.full(lam.shape, -np.inf)
            out = _lse(terms, axis=-1) if w.size else np.full(lam.shape[:-1], -np.inf)
            q0 = self.q0
            if q0 > 0:
                out = np.where(lam[..., 0] < 0, np.logaddexp(out, math.log(q0)), out)
        return out

    def _log_alpha_and_slope(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log α(Λ) and d log α/dΛ (the c = 0 atom only shifts α for Λ < 0; its slope is 0 there)."""
        w, mu = self._pos()
        lam2 = lam[:, None]
        z = -lam2 / mu - mu / 2
        logw = np.log(w)
        log_alpha = _lse(logw + special.log_ndtr(z), axis=1)
        log_dens = _lse(logw - 0.5 * z * z - 0.5 * math.log(2 * math.pi) - np.log(mu), axis=1)
        if self.q0 > 0:
            log_alpha = np.where(lam < 0, np.logaddexp(log_alpha, math.log(self.q0)), log_alpha)
        return log_alpha, -np.exp(log_dens - log_alpha)

    def _solve_lambda(self, target: np.ndarray) -> np.ndarray:
        """Λ with log α(Λ) = target: Newton steps safeguarded by a bisection bracket (vectorised)."""
        _, mu = self._pos()
        big = float(np.max(mu)) if mu.size else 1.0
        span = big * (40.0 + big / 2) + 1.0
        lo = np.full(target.shape, -span)
        hi = np.full(target.shape, span)
        x = np.zeros(target.shape)
        for _ in range(200):
            f, slope = self._log_alpha_and_slope(x)
            resid = f - target
            above = resid > 0  # α(x) too large -> root is to the right
            lo = np.where(above, x, lo)
            hi = np.where(above, hi, x)
            with np.errstate(divide="ignore", invalid="ignore"):
                newton = x - resid / slope
            ok = np.isfinite(newton) & (newton > lo) & (newton < hi)
            x_new = np.where(ok, newton, 0.5 * (lo + hi))
            done = (np.abs(resid) <= 1e-13) | (hi - lo <= 1e-13 * np.maximum(1.0, np.abs(x)))
            if np.all(done):
                break
            x = np.where(done, x, x_new)
        return x

    def _power_at(self, lam: np.ndarray) -> np.ndarray:
        """1 − β(Λ) = Σ_{c>0} q_c Φ(μ_c/2 − Λ/μ_c) + q0·1[Λ < 0] + tail."""
        w, mu = self._pos()
        lam = np.asarray(lam, dtype=float)[..., None]
        out = (w * special.ndtr(mu / 2 - lam / mu)).sum(axis=-1) if w.size else np.zeros(lam.shape[:-1])
        return out + np.where(lam[..., 0] < 0, self.q0, 0.0) + self.tail

    # ------------------------------------------------------------------ trade-off function
    def power(self, alpha: float | np.ndarray) -> float | np.ndarray:
        """1 − f(α), the power of the optimal test at level α (no cancellation for f close to 1)."""
        a = as_real_array("alpha", alpha, low=0.0, high=1.0).reshape(np.shape(alpha))
        flat = a.ravel()
        out = np.empty_like(flat)
        w, mu = self._pos()
        alpha0p = float((w * special.ndtr(-mu / 2)).sum()) if w.size else 0.0  # α(0+)
        beta0p_power = float((w * special.ndtr(mu / 2)).sum()) if w.size else 0.0  # power at Λ = 0+
        q0 = self.q0
        represented = 1.0 - self.tail
        # regions
        top = flat >= represented  # the μ = ∞ tail makes f = 0 there
        jump = (~top) & (flat >= alpha0p) & (flat <= alpha0p + q0) & (q0 > 0)
        zero = flat <= 0
        rest = ~(top | jump | zero)
        out[top] = 1.0
        out[zero] = self.tail
        out[jump] = beta0p_power + self.tail + (flat[jump] - alpha0p)
        if np.any(rest):
            out[rest] = self._power_at(self._solve_lambda(np.log(flat[rest])))
        out = np.clip(out, 0.0, 1.0)
        return float(out[0]) if a.ndim == 0 else out.reshape(a.shape)

    def __call__(self, alpha: float | np.ndarray) -> float | np.ndarray:
        """f(α) of Def. 5.2 / Lemma B.5."""
        p = self.power(alpha)
        return 1.0 - p if np.ndim(p) == 0 else 1.0 - np.asarray(p)

    # ------------------------------------------------------------------ (ε, δ)
    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray:
        """δ(ε) = Σ_c q_c δ_{c/σ}(ε) + tail (the labelled mixture; c = 0 contributes 0)."""
        eps = as_real_array("epsilon", epsilon, low=0.0).reshape(np.shape(epsilon))
        w, mu = self._pos()
        d = np.asarray(gaussian.delta_from_mu(mu, eps[..., None]))
        out = (w * d).sum(axis=-1) + self.tail
        return float(out) if eps.ndim == 0 else out

    def epsilon(self, delta: float) -> float:
        """Smallest ε ≥ 0 with δ(ε) ≤ δ (brentq)."""
        delta = check_open_unit("delta", delta)
        if self.tail >= delta:
            return math.inf
        if self.delta(0.0) <= delta:
            return 0.0
        hi = max(1.0, float(np.max(self._mus)) ** 2)
        while self.delta(hi) > delta:
            hi *= 2
        return upper_root(lambda e: self.delta(e) - delta, 0.0, hi)

    def compose(self, other: GaussianMixture) -> GaussianMixture:
        """Composition of two independent labelled mixtures (same σ): convolution of the c² pmfs."""
        if not isinstance(other, GaussianMixture):
            raise ValueError(f"other must be a GaussianMixture, got {other!r}")
        if other.sigma != self.sigma:
            raise ValueError("sigma must be equal to compose two mixtures")
        a = _dense(self)
        b = _dense(other)
        pmf = np.convolve(a[0], b[0])
        tail = 1.0 - (1.0 - self.tail) * (1.0 - other.tail)
        return GaussianMixture.from_pmf(pmf, self.sigma, offset=a[1] + b[1], tail=tail)

    def power_of(self, n: int) -> GaussianMixture:
        """n-fold composition with itself (e.g. one epoch's pmf → E epochs)."""
        pmf, off = _dense(self)
        out, offset, dropped = convolve_power(pmf, n)
        tail = 1.0 - (1.0 - self.tail) ** n
        return GaussianMixture.from_pmf(out, self.sigma, offset=off * n + offset, tail=min(1.0, tail + dropped))


def _dense(m: GaussianMixture) -> tuple[np.ndarray, int]:
    if np.any(m.support != np.round(m.support)):
        raise ValueError("composition needs integer values of c²")
    s = m.support.astype(int)
    off = int(s.min())
    pmf = np.zeros(int(s.max()) - off + 1)
    np.add.at(pmf, s - off, m.weights)
    return pmf / (1.0 - m.tail) if m.tail < 1 else pmf, off
