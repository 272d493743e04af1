"""E_γ (hockey-stick) contraction accounting of projected noisy federated SGD that releases only its
last iterate (paper 004: Asoodeh, Chen, Calmon, Özgür, "Differentially Private Federated Learning:
An Information-Theoretic Perspective", ISIT 2021).

Notation (Sec. III and Algorithm 1 of the paper).  n users, batches of m = qn users (T = n/m rounds, one pass over a
*secret* random partition), per-user noise std σ (gradient units), learning rate η, per-user
Lipschitz bound L, projection radius ρ, replace-one neighbours.

* :func:`theta` -- Lemma 1: E_ε(N(m1, σ²I) ‖ N(m2, σ²I)) = θ_ε(‖m1 − m2‖/σ) with
  θ_ε(r) = Q(ε/r − r/2) − e^ε Q(ε/r + r/2).  Computed in log space (:func:`log_theta`) through the
  exact identity e^ε Q(ε/r + r/2)/Q(ε/r − r/2) = R(ε/r + r/2)/R(ε/r − r/2), R the Mills ratio
  (``erfcx``), so δ stays accurate far below 1e-300.
* :func:`kernel_contraction` -- Theorem 1 (generalised Dobrushin) for a finite kernel:
  η_ε(K) = max_{y1,y2} E_ε(K(y1) ‖ K(y2)); :func:`gaussian_kernel_contraction` -- Lemma 2:
  θ_ε(diameter/σ) for a Gaussian kernel with bounded inputs.
* :func:`last_iterate_delta` -- Theorem 2 with constant η, σ (closed form, real exponent n/m as
  plotted in Fig. 2); :func:`last_iterate_delta_schedule` -- the sum form with per-round η_t, σ_t
  and batch sizes m_t (weights m_t/n = Pr(the differing user is in batch t): our generalisation of
  eq. (15)'s q to ragged batches):

      δ = Σ_t (m_t/n) θ_ε(a_t) Π_{j>t} θ_ε(b_j),   a_t = 2L/(√m_t σ_t),   b_j = 2ρ√m_j/(η_j σ_j)

  (b_j = 2(ρ + η_j L)√m_j/(η_j σ_j) without convexity/smoothness, ``convex=False``).
* :func:`corollary1_delta` -- η_t = 1/(λt), with the printed b_j = 2ρ√(λmj)/σ as ``mode="printed"``
  and the correct b_j = 2ρλj√m/σ (default); :func:`random_stop_delta` / :func:`corollary3_delta` --
  the randomly stopped output W_τ, τ ~ uniform[T] (Corollary 3, eq. (12)).
* :func:`exact_1d_delta` -- an exact (grid) instance of Algorithm 1 in one dimension, which must
  sit below every bound.

The composition baselines on the same parameters live in :mod:`dpcore.papers.p004_contraction.baselines`.

>>> float(f"{last_iterate_delta(1.0, n=100, batch_size=10, eta=0.5, sigma=1.5):.4e}")  # Fig. 2, q = 0.1
0.0020211
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy import optimize
from scipy.special import logsumexp, ndtr

from dpcore.accounting import gaussian
from dpcore.validation import (
    check_bool,
    check_callable,
    check_choice,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_real_array,
)

__all__ = [
    "theta",
    "log_theta",
    "hockey_stick",
    "kernel_contraction",
    "gaussian_kernel_contraction",
    "sensitivity_ratio",
    "contraction_ratio",
    "last_iterate_delta",
    "log_last_iterate_delta",
    "last_iterate_delta_schedule",
    "log_last_iterate_delta_schedule",
    "corollary1_delta",
    "random_stop_delta",
    "corollary3_delta",
    "worst_position_delta",
    "epsilon_for_delta",
    "exact_1d_delta",
]

Array = np.ndarray
#: Largest number of rounds T = n/m of the sum forms (arrays of T entries per ε; the closed form of
#: :func:`last_iterate_delta` has no limit).
MAX_ROUNDS = 10**6
#: Largest number of rounds and grid size of :func:`exact_1d_delta` (T products of grid × grid matrices).
MAX_EXACT_ROUNDS = 1000
MAX_EXACT_GRID = 5001


# ----------------------------------------------------------------------------------------------
# Lemma 1: θ_ε(r)
# ----------------------------------------------------------------------------------------------
def _check_eps(epsilon: float | Array) -> Array:
    return check_real_array("epsilon", epsilon, low=0.0)


def _check_r(r: float | Array, name: str = "r") -> Array:
    return check_real_array(name, r, low=0.0, allow_inf=True)


def _log_theta_core(eps: Array, r: Array) -> Array:
    """log θ_ε(r) = log δ(ε) of r-GDP (:func:`dpcore.accounting.gaussian.log_delta_from_mu`), with θ = 0
    (log −∞) where ε/r overflows (r so small against ε that δ underflows any scale)."""
    eps, r = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(r, dtype=float))
    with np.errstate(divide="ignore", over="ignore"):
        vanishing = (eps > 0) & (r > 0) & np.isfinite(r) & ~np.isfinite(eps / r)
    out = np.full(eps.shape, -np.inf)
    keep = ~vanishing
    if np.any(keep):
        out[keep] = np.asarray(gaussian.log_delta_from_mu(r[keep], eps[keep]))
    return out


def _ratio(numerator: float, denominator: float) -> float:
    """numerator/denominator for positive floats, ∞ where the quotient overflows or the denominator underflows."""
    return math.inf if denominator == 0 else numerator / denominator


def _check_rounds(n: int, m: int, limit: int = MAX_ROUNDS) -> int:
    """T = n/m rounds of a sum form, at most ``limit`` (the sum forms hold T entries per ε)."""
    steps = n // m
    if steps > limit:
        raise ValueError(f"n must be at most {limit}·batch_size (T = n/m <= {limit} rounds), got n={n}, "
                         f"batch_size={m}")  # fmt: skip
    return steps


def log_theta(epsilon: float | Array, r: float | Array) -> float | Array:
    """log θ_ε(r) (Lemma 1), accurate where θ itself underflows.  Broadcasts over both arguments.

    >>> round(float(log_theta(0.0, 2.0)), 6) == round(math.log(2 * ndtr(1.0) - 1), 6)
    True
    """
    out = _log_theta_core(_check_eps(epsilon), _check_r(r))
    return float(out) if out.ndim == 0 else out


def theta(epsilon: float | Array, r: float | Array) -> float | Array:
    """θ_ε(r) = Q(ε/r − r/2) − e^ε Q(ε/r + r/2) = E_ε between two Gaussians at normalised distance r
    (Lemma 1, eq. (6); the analytic Gaussian mechanism of Balle & Wang 2018).  θ_ε(0) = 0,
    θ_ε(∞) = 1, θ_0(r) = 2Φ(r/2) − 1 (total variation).

    >>> round(theta(1.0, 2 / (math.sqrt(10) * 1.5)), 10)  # δ of the Gaussian mechanism, Fig. 2 q = 0.1
    0.002021508
    """
    out = np.exp(_log_theta_core(_check_eps(epsilon), _check_r(r)))
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------------------------
# Theorem 1 and Lemma 2: contraction coefficients
# ----------------------------------------------------------------------------------------------
def hockey_stick(p: Sequence[float] | Array, q: Sequence[float] | Array, epsilon: float) -> float:
    """E_ε(p ‖ q) = Σ_i (p_i − e^ε q_i)_+ of two discrete distributions (eq. (2))."""
    eps = float(check_real_array("epsilon", epsilon, low=0.0, ndim=0))
    p = check_real_array("p", p, low=0.0, ndim=1)
    q = check_real_array("q", q, low=0.0, ndim=1)
    if p.shape != q.shape:
        raise ValueError(f"p and q must be non-negative 1-D arrays of the same length, got {p.size} and {q.size}")
    with np.errstate(over="ignore", invalid="ignore"):
        terms = np.where(q > 0, p - np.exp(eps) * q, p)  # e^ε may overflow: q_i > 0 then contributes nothing
    return float(np.sum(np.maximum(terms, 0.0)))


def kernel_contraction(kernel: Sequence[Sequence[float]] | Array, epsilon: float) -> float:
    """η_ε(K) of a finite Markov kernel (rows = K(y), each a distribution), by Theorem 1:
    the largest E_ε(K(y1) ‖ K(y2)) over pairs of rows.  At ε = 0 this is Dobrushin's coefficient."""
    eps = float(check_real_array("epsilon", epsilon, low=0.0, ndim=0))
    k = check_real_array("kernel", kernel, low=0.0, ndim=2)
    if k.shape[0] > 2000 or not np.allclose(k.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("kernel must be a 2-D array of at most 2000 non-negative rows that each sum to 1")
    with np.errstate(over="ignore", invalid="ignore"):
        diff = np.where(k[None, :, :] > 0, k[:, None, :] - np.exp(eps) * k[None, :, :], k[:, None, :])
    return float(np.max(np.sum(np.maximum(diff, 0.0), axis=2)))


def gaussian_kernel_contraction(epsilon: float | Array, *, diameter: float, noise_std: float) -> float | Array:
    """η_ε of y ↦ N(y, noise_std²·I) restricted to inputs of the given diameter (Lemma 2):
    θ_ε(diameter / noise_std); 1 for unbounded inputs (``diameter=inf``)."""
    diameter = check_positive("diameter", diameter, allow_inf=True)
    noise_std = check_positive("noise_std", noise_std)
    return theta(_check_eps(epsilon), _ratio(diameter, noise_std))


# ----------------------------------------------------------------------------------------------
# Theorem 2 and its variants
# ----------------------------------------------------------------------------------------------
def sensitivity_ratio(*, batch_size: float, sigma: float, lipschitz: float = 1.0) -> float:
    """a = 2L/(√m σ): replace-one sensitivity of the averaged update over its noise std (eq. (24)); ∞ where the
    quotient overflows the double range (θ_ε(∞) = 1: no guarantee)."""
    m = check_positive("batch_size", batch_size)
    return _ratio(2 * check_positive("lipschitz", lipschitz), math.sqrt(m) * check_positive("sigma", sigma))


def contraction_ratio(
    *, batch_size: float, eta: float, sigma: float, radius: float = 1.0, lipschitz: float = 1.0, convex: bool = True
) -> float:
    """b = diam Ψ(ball(ρ)) / σ̃ with σ̃ = ησ/√m: 2ρ√m/(ησ) for convex smooth losses with η ≤ 2/β
    (eqs. (16)–(19)), 2(ρ + ηL)√m/(ησ) otherwise (``convex=False``: the diameter 2(ρ + η_t L) the paper gives after
    Theorem 2 for losses that are not convex and smooth).  ∞ where the quotient overflows the double range
    (an unbounded ``radius`` included): θ_ε(∞) = 1, no contraction."""
    m = check_positive("batch_size", batch_size)
    eta = check_positive("eta", eta)
    sigma = check_positive("sigma", sigma)
    radius = check_positive("radius", radius, allow_inf=True)
    lipschitz = check_positive("lipschitz", lipschitz)
    diameter = 2 * radius if check_bool("convex", convex) else 2 * (radius + eta * lipschitz)
    return _ratio(diameter * math.sqrt(m), eta * sigma)


def _log_ratio_sum(log_tb: Array, steps: float | Array) -> Array:
    """log Σ_{k=0}^{T−1} θ_b^k = log[(1 − θ_b^T)/(1 − θ_b)] from log θ_b <= 0 (T real > 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.expm1(steps * log_tb) / np.expm1(log_tb))
    return np.where(log_tb == 0.0, np.log(steps), out)


def log_last_iterate_delta(
    epsilon: float | Array,
    *,
    n: int,
    batch_size: int,
    eta: float,
    sigma: float,
    lipschitz: float = 1.0,
    radius: float = 1.0,
    convex: bool = True,
    mode: str = "theorem",
) -> float | Array:
    """log δ(ε) of Theorem 2 with constant η and σ (closed form, real exponent T = n/m).

    ``mode="proof-typo"`` uses the last display of the paper's proof, θ_ε(2L√m/σ) in place of
    θ_ε(2L/(√m σ)) (a typo; Appendix, proof of Theorem 2): it reverses Fig. 2's ordering in q.
    """
    check_choice("mode", mode, ("theorem", "proof-typo"))
    eps = _check_eps(epsilon)
    n = check_positive_int("n", n)
    m = check_positive_int("batch_size", batch_size)
    if m > n:
        raise ValueError(f"batch_size must be in [1, n={n}], got {m}")
    a = sensitivity_ratio(batch_size=m, sigma=sigma, lipschitz=lipschitz)
    if mode == "proof-typo":
        a *= m
    b = contraction_ratio(batch_size=m, eta=eta, sigma=sigma, radius=radius, lipschitz=lipschitz, convex=convex)
    out = math.log(m / n) + _log_theta_core(eps, np.float64(a)) + _log_ratio_sum(_log_theta_core(eps, b), n / m)
    return float(out) if out.ndim == 0 else out


def last_iterate_delta(
    epsilon: float | Array,
    *,
    n: int,
    batch_size: int,
    eta: float,
    sigma: float,
    lipschitz: float = 1.0,
    radius: float = 1.0,
    convex: bool = True,
    mode: str = "theorem",
) -> float | Array:
    """δ(ε) of Algorithm 1 by Theorem 2 with constant η and σ (the one-pass setting of Fig. 2):

        δ = (m/n) θ_ε(a) (1 − θ_ε(b)^{n/m}) / (1 − θ_ε(b)),   a = 2L/(√m σ),   b = 2ρ√m/(ησ).

    The exponent n/m is real, as in the paper's closed form (q = 0.3, n = 100 gives 10/3); use
    :func:`last_iterate_delta_schedule` for explicit (ragged) batches.  ``convex=False`` uses the
    non-convex diameter 2(ρ + ηL); ``mode="proof-typo"``: see :func:`log_last_iterate_delta`.
    Vectorised over ε; δ below the double range underflows to 0 (use the log form).
    """
    out = np.exp(
        log_last_iterate_delta(
            epsilon,
            n=n,
            batch_size=batch_size,
            eta=eta,
            sigma=sigma,
            lipschitz=lipschitz,
            radius=radius,
            convex=convex,
            mode=mode,
        )
    )
    return float(out) if np.ndim(out) == 0 else out


def _schedule_arrays(batch_sizes, etas, sigmas) -> tuple[Array, Array, Array]:
    m = np.atleast_1d(check_real_array("batch_sizes", batch_sizes, low=1.0, high=2.0**53))
    if m.ndim != 1 or m.size > MAX_ROUNDS or np.any(m != np.round(m)):
        raise ValueError(f"batch_sizes must be a sequence of at most {MAX_ROUNDS} positive integers (<= 2**53), "
                         f"got {batch_sizes!r}")  # fmt: skip
    out = [m]
    for name, values in (("etas", etas), ("sigmas", sigmas)):
        v = check_real_array(name, values, low=0.0, low_open=True)
        v = np.full(m.shape, float(v)) if v.ndim == 0 else v
        if v.shape != m.shape:
            raise ValueError(f"{name} must be a positive number or a positive sequence as long as batch_sizes")
        out.append(v)
    return out[0], out[1], out[2]


def _schedule_logs(
    eps: Array, batch_sizes, etas, sigmas, lipschitz: float, radius: float, convex: bool
) -> tuple[Array, Array, Array]:
    """(log θ_ε(a_t), log θ_ε(b_t)) with shape (len(ε), T), and the batch sizes."""
    m, eta, sigma = _schedule_arrays(batch_sizes, etas, sigmas)
    lipschitz = check_positive("lipschitz", lipschitz)
    radius = check_positive("radius", radius, allow_inf=True)
    with np.errstate(over="ignore", divide="ignore"):
        a = 2 * lipschitz / (np.sqrt(m) * sigma)
        diameter = 2 * radius if check_bool("convex", convex) else 2 * (radius + eta * lipschitz)
        b = diameter * np.sqrt(m) / (eta * sigma)
    e = eps.reshape(-1, 1)
    return _log_theta_core(e, a[None, :]), _log_theta_core(e, b[None, :]), m


def _n_of(m: Array, n: int | None) -> int:
    total = int(m.sum())
    if n is None:
        return total
    n = check_positive_int("n", n)
    if n < total:
        raise ValueError(f"n must be at least sum(batch_sizes)={total}, got {n}")
    return n


def log_last_iterate_delta_schedule(
    epsilon: float | Array,
    *,
    batch_sizes: Sequence[int],
    etas: float | Sequence[float],
    sigmas: float | Sequence[float],
    lipschitz: float = 1.0,
    radius: float = 1.0,
    n: int | None = None,
    convex: bool = True,
) -> float | Array:
    """log δ(ε) of Theorem 2, sum form (see :func:`last_iterate_delta_schedule`)."""
    eps = _check_eps(epsilon)
    la, lb, m = _schedule_logs(eps, batch_sizes, etas, sigmas, lipschitz, radius, convex)
    n = _n_of(m, n)
    after = _log_products_after(lb)
    with np.errstate(invalid="ignore"):
        terms = np.log(m / n)[None, :] + la + after
    out = logsumexp(terms, axis=1).reshape(eps.shape)
    return float(out) if out.ndim == 0 else out


def _log_products_after(log_theta_b: np.ndarray) -> np.ndarray:
    """Σ_{j>t} log θ(b_j) for every t (row-wise suffix sums excluding t itself; 0 for the last round)."""
    suffix = np.cumsum(log_theta_b[:, ::-1], axis=1)[:, ::-1]
    return np.concatenate([suffix[:, 1:], np.zeros((log_theta_b.shape[0], 1))], axis=1)


def last_iterate_delta_schedule(
    epsilon: float | Array,
    *,
    batch_sizes: Sequence[int],
    etas: float | Sequence[float],
    sigmas: float | Sequence[float],
    lipschitz: float = 1.0,
    radius: float = 1.0,
    n: int | None = None,
    convex: bool = True,
) -> float | Array:
    """δ(ε) of Theorem 2 in sum form for per-round η_t, σ_t and batch sizes m_t:

        δ = Σ_t (m_t/n) θ_ε(2L/(√m_t σ_t)) Π_{j>t} θ_ε(b_j),  b_j = 2ρ√m_j/(η_j σ_j)

    (the paper's (m/n) becomes m_t/n = Pr(the differing user is in batch t) for ragged batches;
    n defaults to Σ m_t).  ``etas``/``sigmas`` may be scalars.  Computed in log space.
    """
    out = np.exp(
        log_last_iterate_delta_schedule(
            epsilon,
            batch_sizes=batch_sizes,
            etas=etas,
            sigmas=sigmas,
            lipschitz=lipschitz,
            radius=radius,
            n=n,
            convex=convex,
        )
    )
    return float(out) if np.ndim(out) == 0 else out


def corollary1_delta(
    epsilon: float | Array,
    *,
    n: int,
    batch_size: int,
    strong_convexity: float,
    sigma: float,
    lipschitz: float = 1.0,
    radius: float = 1.0,
    mode: str = "corrected",
) -> float | Array:
    """δ(ε) of Corollary 1 (η_t = 1/(λt), σ_t = σ, T = n/m integer), eq. (11), sum form.

    ``mode="corrected"``: b_j = 2ρλj√m/σ (what η_j = 1/(λj) gives in Theorem 2);
    ``mode="printed"``: the paper's b_j = 2ρ√(λmj)/σ (first line of (11); an erratum);
    ``mode="bound"``: the right-hand side of (11), (m/n)θ(a)(1 − θ(b_T)^{n/m})/(1 − θ(b_T)) with
    b_T = 2ρλn/(√m σ), an upper bound of the corrected sum.
    """
    check_choice("mode", mode, ("corrected", "printed", "bound"))
    eps = _check_eps(epsilon)
    n = check_positive_int("n", n)
    m = check_positive_int("batch_size", batch_size)
    lam = check_positive("strong_convexity", strong_convexity)
    sigma = check_positive("sigma", sigma)
    lipschitz = check_positive("lipschitz", lipschitz)
    radius = check_positive("radius", radius)
    if n % m:
        raise ValueError(f"batch_size must divide n (T = n/m rounds), got n={n}, batch_size={m}")
    steps = _check_rounds(n, m)
    j = np.arange(1, steps + 1)
    a = _ratio(2 * lipschitz, math.sqrt(m) * sigma)
    e = eps.reshape(-1, 1)
    if mode == "bound":
        b_last = _ratio(2 * radius * lam * n, math.sqrt(m) * sigma)
        out = math.log(m / n) + _log_theta_core(e, np.float64(a)) + _log_ratio_sum(_log_theta_core(e, b_last), steps)
        out = out.reshape(eps.shape)
    else:
        with np.errstate(over="ignore"):
            b = (
                2 * radius * lam * j * math.sqrt(m) / sigma
                if mode == "corrected"
                else 2 * radius * np.sqrt(lam * m * j) / sigma
            )
        lb = _log_theta_core(e, b[None, :])
        after = _log_products_after(lb)
        out = logsumexp(math.log(m / n) + _log_theta_core(e, np.float64(a)) + after, axis=1).reshape(eps.shape)
    out = np.exp(out)
    return float(out) if out.ndim == 0 else out


def random_stop_delta(
    epsilon: float | Array,
    *,
    batch_sizes: Sequence[int],
    etas: float | Sequence[float],
    sigmas: float | Sequence[float],
    lipschitz: float = 1.0,
    radius: float = 1.0,
    n: int | None = None,
    convex: bool = True,
) -> float | Array:
    """δ(ε) of the randomly stopped Algorithm 1 (output W_τ, τ ~ uniform{1..T}), Corollary 3 in sum form:

        δ = (1/T) Σ_τ Σ_{t≤τ} (m_t/n) θ_ε(a_t) Π_{j=t+1}^{τ} θ_ε(b_j)

    ((1/T²) Σ_τ Σ_t … for equal batches).  Uses the recursion D_τ = D_{τ−1}θ(b_τ) + (m_τ/n)θ(a_τ)."""
    eps = _check_eps(epsilon)
    if np.size(batch_sizes) > MAX_ROUNDS // 10:
        raise ValueError(f"batch_sizes must hold at most {MAX_ROUNDS // 10} rounds here (a loop over the rounds), "
                         f"got {np.size(batch_sizes)}")  # fmt: skip
    la, lb, m = _schedule_logs(eps, batch_sizes, etas, sigmas, lipschitz, radius, convex)
    n = _n_of(m, n)
    lw = np.log(m / n)
    log_d = np.full(la.shape[0], -np.inf)
    horizons = []
    for t in range(la.shape[1]):
        log_d = np.logaddexp(log_d + lb[:, t], lw[t] + la[:, t])
        horizons.append(log_d)
    out = np.exp(logsumexp(np.stack(horizons, axis=1), axis=1) - math.log(la.shape[1])).reshape(eps.shape)
    return float(out) if out.ndim == 0 else out


def corollary3_delta(
    epsilon: float | Array,
    *,
    n: int,
    batch_size: int,
    eta_min: float,
    sigma_min: float,
    lipschitz: float = 1.0,
    radius: float = 1.0,
) -> float | Array:
    """Corollary 3, eq. (12): (1/T²) θ_ε(a*) Σ_{τ=1}^{T} (1 − θ_ε(b*)^τ)/(1 − θ_ε(b*)) with
    a* = 2L/(√m σ*), b* = 2ρ√m/(η* σ*), η* = min η_t, σ* = min σ_t (T = n/m must be an integer).
    The paper's instance: η_t = 1/(λt) (η* = 1/(λT)) and σ_t² = √n (σ* = n^{1/4})."""
    eps = _check_eps(epsilon)
    n = check_positive_int("n", n)
    m = check_positive_int("batch_size", batch_size)
    if n % m:
        raise ValueError(f"batch_size must divide n (T = n/m rounds), got n={n}, batch_size={m}")
    steps = _check_rounds(n, m, MAX_ROUNDS // 100)  # a T × T/2 sum per ε
    eta_min = check_positive("eta_min", eta_min)
    sigma_min = check_positive("sigma_min", sigma_min)
    a = sensitivity_ratio(batch_size=m, sigma=sigma_min, lipschitz=lipschitz)
    b = contraction_ratio(batch_size=m, eta=eta_min, sigma=sigma_min, radius=radius, lipschitz=lipschitz)
    e = eps.reshape(-1, 1)
    lb = _log_theta_core(e, np.float64(b))
    tau = np.arange(1, steps + 1)[None, :]
    sums = logsumexp(_log_ratio_sum(lb, tau), axis=1)  # broadcasting: one column per τ
    out = np.exp(_log_theta_core(e[:, 0], np.float64(a)) + sums - 2 * math.log(steps)).reshape(eps.shape)
    return float(out) if out.ndim == 0 else out


def worst_position_delta(epsilon: float | Array, *, batch_size: float, sigma: float, lipschitz: float = 1.0):
    """θ_ε(2L/(√m σ)): Theorem 2 for a user in the *last* batch, i.e. with a public schedule
    (eq. (15) without the averaging over the position); also exact parallel composition when every
    iterate is released (baseline B1)."""
    return theta(epsilon, sensitivity_ratio(batch_size=batch_size, sigma=sigma, lipschitz=lipschitz))


def epsilon_for_delta(delta_of_epsilon: Callable[[float], float], delta: float, *, upper: float = 20.0) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ ``delta`` for a non-increasing δ(·) (brentq on log δ, bracket
    doubled from [0, ``upper``] as needed)."""
    check_callable("delta_of_epsilon", delta_of_epsilon)
    delta = check_open_unit("delta", delta)
    upper = min(check_positive("upper", upper), 1e6)

    def f(e: float) -> float:
        d = float(delta_of_epsilon(e))
        if not 0.0 <= d <= 1.0:  # NaN included
            raise ValueError(f"delta_of_epsilon({e:g}) = {d} is not a δ in [0, 1]")
        return (math.log(d) if d > 0 else -math.inf) - math.log(delta)

    if f(0.0) <= 0:
        return 0.0
    while f(upper) > 0:
        upper *= 2
        if upper > 1e6:
            return math.inf
    return float(optimize.brentq(f, 0.0, upper, xtol=1e-12, rtol=1e-12))


# ----------------------------------------------------------------------------------------------
# An exact one-dimensional instance of Algorithm 1 (a check of Theorem 2; not in the paper)
# ----------------------------------------------------------------------------------------------
def _transition(size: int, spacing: float, shift: float, noise: float) -> Array:
    """Transition matrix on a uniform grid of ``size`` points: row i is the law of
    proj(g_i − shift + noise·Z) on the grid cells (cell edges at the midpoints; the end cells absorb
    the tails, which is the projection).  The interior edge CDFs depend on k − i only (Toeplitz)."""
    offsets = np.arange(-(size - 1), size)  # k − i for interior edge k (between cells k−1 and k)
    # a noise so small that the argument overflows: ndtr(±inf) = 0 or 1, the noiseless projection's limit
    with np.errstate(over="ignore"):
        table = ndtr(((offsets - 0.5) * spacing + shift) / noise)
    i = np.arange(size)[:, None]
    k = np.arange(1, size)[None, :]
    cdf = np.empty((size, size + 1))
    cdf[:, 0], cdf[:, -1] = 0.0, 1.0
    cdf[:, 1:-1] = table[k - i + size - 1]
    return np.diff(cdf, axis=1)


def exact_1d_delta(
    epsilon: float | Array,
    *,
    n: int,
    batch_size: int,
    eta: float,
    sigma: float,
    lipschitz: float = 1.0,
    radius: float = 1.0,
    grid: int = 2001,
) -> float | Array:
    """Exact δ(ε) of Algorithm 1 on the 1-D instance ℓ(w, x) = L·x·w (convex, L-Lipschitz, β = 0),
    all users x_j = 0 except the differing one (x = +1 vs −1), W_0 = 0, ball(ρ) = [−ρ, ρ],
    secret uniformly random position of the differing user; discretised on ``grid`` points.

    One round maps w to proj_ρ(w − (η/m)·L·x − (ησ/√m)·Z).  The output laws P, P' are the averages
    over the T = n/m positions; δ(ε) = Σ_i (P_i − e^ε P'_i)_+.  Theorem 2 must bound it.
    """
    eps = _check_eps(epsilon)
    n = check_positive_int("n", n)
    m = check_positive_int("batch_size", batch_size)
    if n % m:
        raise ValueError(f"batch_size must divide n (T = n/m rounds), got n={n}, batch_size={m}")
    eta = check_positive("eta", eta)
    sigma = check_positive("sigma", sigma)
    lipschitz = check_positive("lipschitz", lipschitz)
    radius = check_positive("radius", radius)
    grid = check_positive_int("grid", grid, minimum=3, maximum=MAX_EXACT_GRID)
    steps = _check_rounds(n, m, MAX_EXACT_ROUNDS)
    spacing = 2 * radius / (grid - 1)
    noise = eta * sigma / math.sqrt(m)
    shift = eta * lipschitz / m
    if not (math.isfinite(spacing) and spacing > 0 and 0 < noise < math.inf and math.isfinite(shift)):
        raise ValueError(f"radius, eta, sigma and lipschitz must give a representable grid spacing 2·radius/(grid−1) "
                         f"= {spacing:g}, noise η·σ/√m = {noise:g} and shift η·L/m = {shift:g}")  # fmt: skip
    k0 = _transition(grid, spacing, 0.0, noise)
    kp = _transition(grid, spacing, shift, noise)
    km = _transition(grid, spacing, -shift, noise)
    start = np.zeros(grid)
    start[grid // 2] = 1.0
    prefix = [start]
    for _ in range(steps - 1):
        prefix.append(prefix[-1] @ k0)
    # Horner: Σ_t prefix_t K± K0^{T−1−t}, one pass
    p_out = np.zeros(grid)
    q_out = np.zeros(grid)
    for t in range(steps):
        p_out = p_out @ k0 + prefix[t] @ kp
        q_out = q_out @ k0 + prefix[t] @ km
    p_out, q_out = p_out / steps, q_out / steps
    out = np.array([hockey_stick(p_out, q_out, e) for e in eps.ravel()]).reshape(eps.shape)
    return float(out) if out.ndim == 0 else out
