"""f-DP toolkit: trade-off functions, subsampling, composition, group privacy, (ε, δ) conversion.

Dong, Roth, Su, "Gaussian Differential Privacy" (JRSS-B 2022) -- cited as [DRS]:

* trade-off function T(P, Q)(α) = inf{β_φ : α_φ ≤ α}; f is a trade-off function iff it is convex,
  continuous, non-increasing and 0 ≤ f(α) ≤ 1 − α ([DRS] Prop. 2.2);
* Gaussian trade-off G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) ([DRS] Def. 2.7), and f_{ε,δ} ([DRS] eq. (2.5));
* μ-GDP ⇔ (ε, δ(ε))-DP for all ε ≥ 0 ([DRS] Cor. 2.13; computed by :mod:`dpcore.accounting.gaussian`);
* a symmetric or general f converts to (ε, δ(ε)) with δ(ε) = 1 + f*(−e^ε) ([DRS] Prop. 2.12);
* subsampling operator C_p(f) = min{f_p, f_p⁻¹}** with f_p = p f + (1 − p)(1 − α) ([DRS] Thm 4.2);
* composition G_{μ1} ⊗ G_{μ2} = G_{sqrt(μ1² + μ2²)} ([DRS] Cor. 3.3) and the CLT for subsampled
  Gaussians ([DRS] Cor. 5.4 uniform; Bu et al. 2020 Poisson);
* group privacy: f-DP ⇒ [1 − (1 − f)^{∘g}]-DP for groups of size g ([DRS] Thm 2.14), G_μ ↦ G_{gμ}.

Trade-off functions are represented by two small classes sharing one interface:
:class:`Gaussian` (closed form, carries μ) and :class:`Curve` (any vectorised callable).
Both give ``f(alpha)``, ``.delta(epsilon)`` and ``.epsilon(delta)``.

>>> round(float(gaussian_tradeoff(1.0, 0.05)), 4)
0.7405
>>> round(mu_to_epsilon(5.0, 1e-5), 3)   # G_5: paper 003's A_1 guarantee at σ=2, E=100
33.104
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from dpcore.accounting import gaussian
from dpcore.validation import (
    check_bool,
    check_choice,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_range,
)

__all__ = [
    "ALPHA_GRID",
    "Gaussian",
    "Curve",
    "gaussian_tradeoff",
    "gaussian_power",
    "eps_delta_tradeoff",
    "mu_to_delta",
    "mu_to_epsilon",
    "tradeoff_to_delta",
    "tradeoff_to_epsilon",
    "tradeoff_from_delta_curve",
    "lower_convex_envelope",
    "inverse_tradeoff",
    "subsample",
    "subsampled_gaussian_tradeoff",
    "compose_gaussian",
    "clt_factor",
    "clt_mu",
    "group_tradeoff",
    "group_gaussian",
    "pld_gaussian_delta",
    "check_tradeoff",
    "check_curve",
]

ArrayLike = float | np.ndarray


def _alpha_grid(n_log: int = 3000, n_lin: int = 2000) -> np.ndarray:
    """α grid for sup/inf searches: log-spaced down to 1e-300 plus a linear part on [0, 1]."""
    return np.unique(np.concatenate([np.logspace(-300, -1e-12, n_log), np.linspace(0.0, 1.0, n_lin)]))


#: Default α grid used by the numerical conversions (covers α down to 1e-300).
ALPHA_GRID = _alpha_grid()


def _as_alpha(alpha: ArrayLike, name: str = "alpha") -> np.ndarray:
    """``alpha`` as a float array (its own shape) of numbers in [0, 1]."""
    return gaussian.as_real_array(name, alpha, low=0.0, high=1.0).reshape(np.shape(alpha))


def _grid(grid: object, default: np.ndarray) -> np.ndarray:
    """``grid`` (None: ``default``) as a 1-D array of α values in [0, 1]."""
    if grid is None:
        return default
    g = gaussian.as_real_array("grid", grid, low=0.0, high=1.0)
    if g.ndim != 1:
        raise ValueError(f"grid must be a 1-D array of alpha values in [0, 1], got shape {g.shape}")
    return g


def _callable(name: str, f: object) -> None:
    if not callable(f):
        raise ValueError(f"{name} must be a callable alpha -> f(alpha) (a trade-off function), got {f!r}")


def _out(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


# --------------------------------------------------------------------------- Gaussian
def gaussian_tradeoff(mu: float, alpha: ArrayLike) -> float | np.ndarray:
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) ([DRS] Def. 2.7): :func:`dpcore.accounting.gaussian.tradeoff`.

    ``mu = 0`` is G_0(α) = 1 − α (no leakage); ``mu = inf`` is the zero function.
    """
    return gaussian.tradeoff(mu, _as_alpha(alpha))


def gaussian_power(mu: float, alpha: ArrayLike) -> np.ndarray:
    """1 − G_μ(α) = Φ(Φ⁻¹(α) + μ) (:func:`dpcore.accounting.gaussian.power`)."""
    return np.asarray(gaussian.power(mu, _as_alpha(alpha)))


def eps_delta_tradeoff(epsilon: float, delta: float, alpha: ArrayLike) -> float | np.ndarray:
    """f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} ([DRS] eq. (2.5)).

    Paper 003 (§4) prints ``min`` instead of ``max``; that is a typo (the min is identically ≤ 0).
    """
    epsilon = check_nonnegative("epsilon", epsilon)
    delta = check_range("delta", delta, 0.0, 1.0)
    a = _as_alpha(alpha)
    with np.errstate(divide="ignore", over="ignore"):
        scaled = np.where(a > 0, np.exp(epsilon + np.log(np.where(a > 0, a, 1.0))), 0.0)  # e^ε α, ∞ if it overflows
    out = np.maximum.reduce([np.zeros_like(a), 1 - delta - scaled, math.exp(-epsilon) * (1 - delta - a)])
    return _out(out)


def mu_to_delta(mu: float, epsilon: ArrayLike) -> float | np.ndarray:
    """δ(ε) of μ-GDP, [DRS] Cor. 2.13 (:func:`dpcore.accounting.gaussian.delta_from_mu`)."""
    return gaussian.delta_from_mu(mu, epsilon)


def mu_to_epsilon(mu: float, delta: float) -> float:
    """Smallest ε with δ(ε) ≤ δ for μ-GDP (:func:`dpcore.accounting.gaussian.epsilon_from_mu`)."""
    return gaussian.epsilon_from_mu(mu, delta)


# --------------------------------------------------------------------------- generic curves
def check_curve(f: Callable[[np.ndarray], np.ndarray], grid: np.ndarray | None = None, *, tol: float = 1e-9) -> None:
    """``ValueError`` unless ``f`` is finite with 0 ≤ f(α) ≤ 1 − α on ``grid`` (a trade-off function,
    [DRS] Prop. 2.2): a curve with NaN, ∞ or values above 1 − α has no (ε, δ) meaning."""
    _callable("f", f)
    grid = _grid(grid, ALPHA_GRID)
    tol = check_nonnegative("tol", tol)
    with np.errstate(all="ignore"):
        values = np.asarray(f(grid), dtype=float)
    if values.shape != grid.shape:
        raise ValueError(f"f must return one value per alpha, got shape {values.shape} for {grid.shape}")
    bad = ~np.isfinite(values)
    if np.any(bad):
        raise ValueError(f"f must be finite on [0, 1]; it is {values[bad][0]} at alpha={grid[bad][0]:.3g}")
    over = (values < -tol) | (values > 1.0 - grid + tol)
    if np.any(over):
        i = int(np.flatnonzero(over)[0])
        raise ValueError(f"f is not a trade-off function: f({grid[i]:.3g}) = {values[i]:.6g} is outside [0, 1 − alpha]")


def _sup_refined(objective: Callable[[np.ndarray], np.ndarray], grid: np.ndarray) -> float:
    """max of ``objective`` on ``grid``, refined by a bounded 1-D search between the neighbours of the best point."""
    vals = np.asarray(objective(grid), dtype=float)
    i = int(np.argmax(vals))
    best = float(vals[i])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if hi > lo:
        res = optimize.minimize_scalar(
            lambda t: -float(objective(np.array([t]))[0]),
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-14 * hi},
        )
        if not math.isfinite(res.fun):
            raise ValueError(f"f is not finite near alpha={grid[i]:.3g}")
        best = max(best, -float(res.fun))
    return best


#: Smallest δ :func:`tradeoff_to_epsilon` resolves for a curve given only as f (1 − f(α) is computed with an
#: absolute error ~1e-16, so smaller δ would be read as 0 and ε under-estimated) ...
CURVE_DELTA_FLOOR = 1e-12
#: ... and for one that provides 1 − f without cancellation (fdp.Gaussian, a Curve with power_func, a
#: GaussianMixture): the α grid reaches 1e-300.
POWER_DELTA_FLOOR = 1e-200
#: ε is read at δ·(1 − 1e-8): the refined grid suprema of δ(ε) fall short of the true δ by up to ~1e-11 relative,
#: which would otherwise put ε ~1e-11 below the exact one (checked against G_μ's closed form down to δ = 1e-200).
_SUP_MARGIN = 1e-8


def _power_and_floor(f: Callable) -> tuple[Callable[[np.ndarray], np.ndarray], float]:
    """1 − f(α) -- without cancellation when ``f`` provides it -- and the smallest δ it resolves."""
    from dpcore.accounting.mixture import GaussianMixture

    if isinstance(f, (Gaussian, GaussianMixture)) or (isinstance(f, Curve) and f.power_func is not None):
        return (lambda a: np.asarray(f.power(a), dtype=float)), POWER_DELTA_FLOOR
    return (lambda a: 1.0 - np.asarray(f(a), dtype=float)), CURVE_DELTA_FLOOR


def _delta_from_callable(f: Callable[[np.ndarray], np.ndarray], epsilon: float, grid: np.ndarray, symmetric: bool):
    """δ(ε) = max{sup_α 1 − f(α) − e^ε α, sup_α 1 − α − e^ε f(α)} ([DRS] Prop. 2.12), grid + local refinement."""
    e = math.exp(min(epsilon, 700.0))
    power, _ = _power_and_floor(f)
    best = _sup_refined(lambda a: power(a) - e * a, grid)
    if not symmetric:
        best = max(best, _sup_refined(lambda a: 1.0 - a - e * np.asarray(f(a), dtype=float), grid))
    return min(1.0, max(0.0, best))


def tradeoff_to_delta(
    f: Callable[[np.ndarray], np.ndarray],
    epsilon: ArrayLike,
    *,
    symmetric: bool = False,
    grid: np.ndarray | None = None,
) -> float | np.ndarray:
    """δ(ε) of an f-DP mechanism for a general trade-off curve ``f`` ([DRS] Prop. 2.12).

    f ≥ f_{ε,δ} iff δ ≥ sup_α [1 − f(α) − e^ε α] and δ ≥ sup_α [1 − α − e^ε f(α)]; the second term is
    redundant for a symmetric f.  The suprema are taken on ``grid`` (default :data:`ALPHA_GRID`, α down to
    1e-300) and refined by a bounded search around the best grid point (tested against the closed form of G_μ).
    """
    _callable("f", f)
    symmetric = check_bool("symmetric", symmetric)
    grid = _grid(grid, ALPHA_GRID)
    eps = gaussian.as_real_array("epsilon", epsilon, low=0.0).reshape(np.shape(epsilon))
    check_curve(f, grid)
    out = np.array([_delta_from_callable(f, float(e), grid, symmetric) for e in eps.ravel()]).reshape(eps.shape)
    return _out(out)


def tradeoff_to_epsilon(
    f: Callable[[np.ndarray], np.ndarray], delta: float, *, symmetric: bool = False, grid: np.ndarray | None = None
) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ δ for the curve ``f`` (brentq on :func:`tradeoff_to_delta`, which is continuous
    and non-increasing in ε); ∞ if ε exceeds 700.

    δ must be at least :data:`CURVE_DELTA_FLOOR` = 1e-12 for a plain callable ``f`` (1 − f(α) loses everything
    below ~1e-16 to cancellation, which would read a small δ as 0 and under-state ε), or
    :data:`POWER_DELTA_FLOOR` = 1e-200 for a curve that computes 1 − f without cancellation
    (:class:`Gaussian`, a :class:`Curve` with ``power_func``, a ``GaussianMixture``).
    """
    delta = check_open_unit("delta", delta)
    _callable("f", f)
    floor = _power_and_floor(f)[1]
    if delta < floor:
        raise ValueError(
            f"delta must be in [{floor:g}, 1) for this curve, got {delta:g}: smaller δ is below what 1 − f(α) "
            "resolves in float64 (pass a curve with power_func, 1 − f without cancellation, for δ down to 1e-200)"
        )
    symmetric = check_bool("symmetric", symmetric)
    grid = _grid(grid, ALPHA_GRID)
    check_curve(f, grid)

    def d(e: float) -> float:
        return _delta_from_callable(f, e, grid, symmetric)

    target = delta * (1.0 - _SUP_MARGIN)  # the grid suprema can fall short of the true δ by ~1e-11 relative
    if d(0.0) <= target:
        return 0.0
    lo, hi = 0.0, 1.0
    while d(hi) > target:
        lo, hi = hi, hi * 2.0
        if hi > 700:
            return math.inf
    return gaussian.upper_root(lambda e: d(e) - target, lo, hi)


def tradeoff_from_delta_curve(epsilons: np.ndarray, deltas: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The trade-off function implied by a family of (ε_i, δ_i) guarantees: sup_i f_{ε_i,δ_i} ([DRS] Prop. 2.5).

    Used to draw a curve for an accountant that only reports δ(ε) (e.g. a PLD).
    """
    eps = gaussian.as_real_array("epsilons", epsilons, low=0.0)
    dl = gaussian.as_real_array("deltas", deltas, low=0.0, high=1.0)
    if eps.shape != dl.shape or eps.ndim != 1 or eps.size == 0:
        raise ValueError("epsilons and deltas must be 1-D arrays of the same non-zero length")

    def f(alpha: ArrayLike) -> np.ndarray:
        a = np.atleast_1d(_as_alpha(alpha))[:, None]
        with np.errstate(divide="ignore", over="ignore"):  # e^ε·α in log space (∞ when it overflows, 0 at α = 0)
            scaled = np.where(a > 0, np.exp(eps + np.log(np.where(a > 0, a, 1.0))), 0.0)
        vals = np.maximum(1 - dl - scaled, np.exp(-eps) * (1 - dl - a))
        return np.clip(vals.max(axis=1), 0.0, 1.0).reshape(np.shape(alpha))

    return f


def lower_convex_envelope(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the lower convex hull of the points (x, y) (Andrew's monotone chain), x increasing.

    The double conjugate h** of a function sampled at x is the piecewise-linear interpolation of these vertices.
    """
    x = gaussian.as_real_array("x", x)
    y = gaussian.as_real_array("y", y)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"x and y must be 1-D arrays of the same length, got shapes {x.shape} and {y.shape}")
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    hull: list[int] = []
    for i in range(x.size):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            cross = (x[i1] - x[i0]) * (y[i] - y[i0]) - (y[i1] - y[i0]) * (x[i] - x[i0])
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    return x[hull], y[hull]


def inverse_tradeoff(f: Callable[[np.ndarray], np.ndarray], alpha: ArrayLike, grid: np.ndarray | None = None):
    """f⁻¹(α) = inf{t ∈ [0, 1] : f(t) ≤ α} (paper 003 eq. (8)), numerically by reflecting the graph of f."""
    _callable("f", f)
    grid = _grid(grid, ALPHA_GRID)
    a = _as_alpha(alpha)
    fx = np.minimum.accumulate(np.asarray(f(grid), dtype=float))  # enforce non-increasing
    # graph points (t, f(t)); reflected: x = f(t), y = t; sort by x
    xs, ys = fx[::-1], grid[::-1]
    out = np.interp(a, xs, ys, left=1.0, right=0.0)
    return _out(np.where(a >= fx[0], 0.0, out))


# --------------------------------------------------------------------------- subsampling
def subsampled_gaussian_tradeoff(mu: float, p: float, alpha: ArrayLike) -> float | np.ndarray:
    """C_p(G_μ) in closed form (the symmetric-f case of [DRS] Thm 4.2, §4.1).

    With f_p = p G_μ + (1 − p)(1 − α) and x* = Φ(−μ/2) (the point where f_p' = −1):
    C_p(G_μ)(α) = f_p(α) on [0, x*], x* + f_p(x*) − α on [x*, f_p(x*)], f_p⁻¹(α) on [f_p(x*), 1].
    """
    mu = check_nonnegative("mu", mu)
    p = check_range("p", p, 0.0, 1.0)
    a = _as_alpha(alpha)
    x_star = float(special.ndtr(-mu / 2))
    fp_star = p * float(gaussian_tradeoff(mu, x_star)) + (1 - p) * (1 - x_star)
    fp = p * np.asarray(gaussian_tradeoff(mu, a)) + (1 - p) * (1 - a)
    # f_p^{-1}(α): solve p G_μ(t) + (1 − p)(1 − t) = α for t (monotone), vectorised bisection
    lo = np.zeros_like(a)
    hi = np.ones_like(a)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        val = p * np.asarray(gaussian_tradeoff(mu, mid)) + (1 - p) * (1 - mid)
        go_right = val > a
        lo = np.where(go_right, mid, lo)
        hi = np.where(go_right, hi, mid)
    fp_inv = 0.5 * (lo + hi)
    out = np.where(a <= x_star, fp, np.where(a <= fp_star, x_star + fp_star - a, fp_inv))
    return _out(np.clip(out, 0.0, 1.0))


def subsample(f: Callable[[np.ndarray], np.ndarray], p: float, *, grid: np.ndarray | None = None) -> Callable:
    """The subsampling operator C_p(f) = min{f_p, f_p⁻¹}** ([DRS] Thm 4.2), numerically.

    Returns a vectorised callable: f_p on ``grid``, its reflection, the pointwise minimum and the lower
    convex envelope (double conjugate), interpolated linearly.
    """
    _callable("f", f)
    p = check_range("p", p, 0.0, 1.0)
    grid = _grid(grid, np.linspace(0.0, 1.0, 4001))

    def fp(a: np.ndarray) -> np.ndarray:
        return p * np.asarray(f(a), dtype=float) + (1 - p) * (1 - a)

    m = np.minimum(fp(grid), np.asarray(inverse_tradeoff(fp, grid, grid=grid)))
    hx, hy = lower_convex_envelope(grid, m)

    def cp(alpha: ArrayLike) -> float | np.ndarray:
        return _out(np.interp(_as_alpha(alpha), hx, hy))

    return cp


# --------------------------------------------------------------------------- composition
def compose_gaussian(*mus: float) -> float:
    """G_{μ1} ⊗ … ⊗ G_{μn} = G_μ with μ = sqrt(Σ μ_i²) ([DRS] Cor. 3.3)."""
    if not mus:
        raise ValueError("mus must contain at least one value")
    mu = math.hypot(*(check_nonnegative(f"mus[{i}]", m) for i, m in enumerate(mus)))
    if not math.isfinite(mu):
        raise ValueError(f"mus are too large: sqrt(Σ mu²) overflows, got {mus!r}")
    return mu


CLT_SAMPLINGS = ("poisson", "fixed")


def _erf_difference(a: float) -> float:
    """0.5·erf(1.5a/√2) − 1.5·erf(0.5a/√2) for small a by its power series (the linear terms cancel)."""
    z = a / (2.0 * math.sqrt(2.0))
    total, term = 0.0, z
    for n in range(1, 12):
        term *= -z * z / n  # (−1)^n z^{2n+1} / n!
        total += term / (2 * n + 1) * (0.5 * 3.0 ** (2 * n + 1) - 1.5)
    return 2.0 / math.sqrt(math.pi) * total


def _log_clt_factor(sigma: float, sampling: str) -> float:
    """log of the per-unit CLT factor, in log space so that σ → 0 does not overflow (+∞ for σ < 1e-150)
    and without cancellation for large σ (−∞ once the factor underflows, σ ≳ 1e154)."""
    if sigma < 1e-150:
        return math.inf
    x = sigma**-2
    if x == 0.0:
        return -math.inf
    if sampling == "poisson":
        # log sqrt(e^x − 1) = (x + log(1 − e^{−x}))/2
        return 0.5 * (x + math.log(-math.expm1(-x)))
    # h(σ)² = 2(e^x Φ(1.5/σ) + 3Φ(−0.5/σ) − 2); for large x the first term dominates.
    if sigma > 10.0:  # = 2(expm1(x)Φ(1.5/σ) + 0.5 erf(1.5/(σ√2)) − 1.5 erf(0.5/(σ√2))), series for the erf part
        inner = math.expm1(x) * special.ndtr(1.5 / sigma) + _erf_difference(1.0 / sigma)
        return 0.5 * math.log(2 * inner) if inner > 0 else -math.inf
    if x < 600:
        inner = math.exp(x) * special.ndtr(1.5 / sigma) + 3 * special.ndtr(-0.5 / sigma) - 2
        return 0.5 * math.log(2 * inner)
    log_first = x + float(special.log_ndtr(1.5 / sigma))
    rest = 3 * special.ndtr(-0.5 / sigma) - 2  # in [−2, −0.5]: negligible against e^{600}
    return 0.5 * (math.log(2.0) + log_first + math.log1p(rest * math.exp(-log_first)))


def clt_factor(sigma: float, sampling: str = "fixed") -> float:
    """The per-unit CLT factor: μ = p·sqrt(T)·clt_factor(σ); ``inf`` when it overflows (σ ≲ 0.04).

    ``"fixed"``: h(σ) = sqrt(2(e^{σ⁻²}Φ(1.5/σ) + 3Φ(−0.5/σ) − 2)) ([DRS] Cor. 5.4, uniform subsampling
    without replacement); ``"poisson"``: sqrt(e^{σ⁻²} − 1) (Bu, Dong, Long, Su 2020, Thm 5).
    Both are asymptotic (T → ∞) and can under-estimate ε at finite T: approximate accountants.

    >>> round(clt_factor(2.0), 5)
    0.62755
    """
    sigma = check_positive("sigma", sigma)
    check_choice("sampling", sampling, CLT_SAMPLINGS)
    log_h = _log_clt_factor(sigma, sampling)
    return math.exp(log_h) if log_h < 700 else math.inf


def clt_mu(sigma: float, p: float, steps: float, sampling: str = "fixed") -> float:
    """μ of T-fold composition of a p-subsampled Gaussian (noise multiplier σ) by the CLT (approximate).

    μ = p·sqrt(T)·:func:`clt_factor` (Bu et al. 2020, Thm 5 for Poisson; [DRS] Cor. 5.4 for fixed-size
    batches).  ``steps`` may be real (TF Privacy's ``compute_mu_uniform`` uses T = epochs·N/batch,
    e.g. 1923.08) or 0 (μ = 0).  Computed in log space; ``inf`` when μ overflows.
    """
    p = check_range("p", p, 0.0, 1.0)
    steps = check_nonnegative("steps", steps)
    sigma = check_positive("sigma", sigma)
    check_choice("sampling", sampling, CLT_SAMPLINGS)
    if p == 0.0 or steps == 0.0:
        return 0.0
    log_mu = math.log(p) + 0.5 * math.log(steps) + _log_clt_factor(sigma, sampling)
    return math.exp(log_mu) if log_mu < 700 else math.inf


# --------------------------------------------------------------------------- group privacy
def group_tradeoff(f: Callable[[np.ndarray], np.ndarray], g: int) -> Callable:
    """1 − (1 − f)^{∘g} ([DRS] Thm 2.14): the group-g trade-off implied by f-DP."""
    g = check_positive_int("g", g)

    def h(alpha: ArrayLike) -> float | np.ndarray:
        x = _as_alpha(alpha).astype(float)
        for _ in range(g):
            x = np.clip(1.0 - np.asarray(f(x), dtype=float), 0.0, 1.0)
        return _out(1.0 - x)

    return h


def group_gaussian(mu: float, g: int) -> float:
    """G_μ-DP ⇒ G_{gμ}-DP for groups of size g ([DRS] Thm 2.14 applied to G_μ)."""
    out = check_nonnegative("mu", mu) * check_positive_int("g", g)
    if not math.isfinite(out):
        raise ValueError(f"mu·g overflows: mu={mu}, g={g}")
    return out


# --------------------------------------------------------------------------- cross-check
def pld_gaussian_delta(mu: float, epsilon: float, *, grid: float = 1e-4) -> float:
    """δ(ε) of the Gaussian mechanism G_μ from dp_accounting's PLD (σ = 1/μ, sensitivity 1).

    Independent cross-check of :func:`mu_to_delta` (pessimistic discretisation ``grid`` in (0, 1]).  Bounded
    time: ``mu`` >= 1e-6, and (μ² + 30μ)/grid -- the loss range in bins -- at most 7e5 (μ <= 2.3 at grid 1e-4).
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    mu = check_range("mu", check_positive("mu", mu), 1e-6, math.inf)
    epsilon = check_nonnegative("epsilon", epsilon)
    grid = check_range("grid", check_positive("grid", grid), 0.0, 1.0)
    bins = (mu * mu + 30.0 * mu) / grid  # the loss range of G_μ (±15 noise sd) in grid steps
    if not bins <= 7e5:
        raise ValueError(
            f"mu={mu:g} at grid={grid:g} needs about {bins:.3g} PLD bins (at most 7e5): use a smaller mu or a "
            "coarser grid"
        )
    pld = pld_mod.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=grid)
    return float(pld.get_delta_for_epsilon(epsilon))


def check_tradeoff(f: Callable[[np.ndarray], np.ndarray], *, grid: np.ndarray | None = None, tol: float = 1e-9) -> dict:
    """Diagnostics of the trade-off-function axioms on ``grid``: non-increasing, convex, 0 ≤ f ≤ 1 − α.

    Returns ``{"nonincreasing": bool, "convex": bool, "below_diagonal": bool, "nonnegative": bool}``.
    Convexity is checked through the slopes of consecutive chords (tolerance ``tol``).
    """
    _callable("f", f)
    grid = _grid(grid, np.linspace(0.0, 1.0, 2001))
    tol = check_nonnegative("tol", tol)
    y = np.asarray(f(grid), dtype=float)
    slopes = np.diff(y) / np.diff(grid)
    # a tolerance so large that tol·|slope| overflows admits every chord: −inf is the right threshold
    with np.errstate(over="ignore"):
        convex_floor = -tol * np.maximum(1.0, np.abs(slopes[1:]))
    return {
        "nonincreasing": bool(np.all(np.diff(y) <= tol)),
        "convex": bool(np.all(np.diff(slopes) >= convex_floor)),
        "below_diagonal": bool(np.all(y <= 1 - grid + tol)),
        "nonnegative": bool(np.all(y >= -tol)),
    }


# --------------------------------------------------------------------------- objects
@dataclass(frozen=True)
class Gaussian:
    """The Gaussian trade-off function G_μ (``mu = 0``: no leakage; ``mu = inf``: none left)."""

    mu: float

    def __post_init__(self) -> None:
        if self.mu != math.inf:
            check_nonnegative("mu", self.mu)

    def __call__(self, alpha: ArrayLike) -> float | np.ndarray:
        return gaussian_tradeoff(self.mu, alpha)

    def power(self, alpha: ArrayLike) -> float | np.ndarray:
        """1 − G_μ(α), without cancellation."""
        if self.mu == math.inf:
            return _out(np.ones_like(_as_alpha(alpha)))
        return _out(gaussian_power(self.mu, alpha))

    def delta(self, epsilon: ArrayLike) -> float | np.ndarray:
        if self.mu == 0:
            return _out(np.zeros_like(np.asarray(epsilon, dtype=float)))
        if self.mu == math.inf:
            return _out(np.ones_like(np.asarray(epsilon, dtype=float)))
        return mu_to_delta(self.mu, epsilon)

    def epsilon(self, delta: float) -> float:
        delta = check_open_unit("delta", delta)
        if self.mu == 0:
            return 0.0
        if self.mu == math.inf:
            return math.inf
        return mu_to_epsilon(self.mu, delta)

    @property
    def label(self) -> str:
        return f"G_{self.mu:.4g}"


@dataclass(frozen=True)
class Curve:
    """A trade-off curve given by a vectorised callable (``symmetric`` speeds up the (ε, δ) conversion)."""

    func: Callable[[np.ndarray], np.ndarray]
    label: str = "f"
    symmetric: bool = False
    power_func: Callable[[np.ndarray], np.ndarray] | None = None  # 1 − f without cancellation, if available

    def __post_init__(self) -> None:
        _callable("func", self.func)
        if not isinstance(self.label, str):
            raise ValueError(f"label must be a string, got {self.label!r}")
        check_bool("symmetric", self.symmetric)
        if self.power_func is not None:
            _callable("power_func", self.power_func)

    def __call__(self, alpha: ArrayLike) -> float | np.ndarray:
        return _out(np.asarray(self.func(_as_alpha(alpha)), dtype=float))

    def power(self, alpha: ArrayLike) -> float | np.ndarray:
        """1 − f(α) (from ``power_func`` when given, which keeps precision where f is close to 1)."""
        a = _as_alpha(alpha)
        if self.power_func is not None:
            return _out(np.asarray(self.power_func(a), dtype=float))
        return _out(1.0 - np.asarray(self.func(a), dtype=float))

    def delta(self, epsilon: ArrayLike) -> float | np.ndarray:
        return tradeoff_to_delta(self.func, epsilon, symmetric=self.symmetric)

    def epsilon(self, delta: float) -> float:
        return tradeoff_to_epsilon(self.func, delta, symmetric=self.symmetric)
