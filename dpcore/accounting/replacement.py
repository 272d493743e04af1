"""Sampling *with* replacement: the tight accountant of a release that averages K draws from n records.

The mechanism (Lowy & Razaviyayn, "Private Federated Learning Without a Trusted Server", ICLR 2023, Algorithm 2,
ISRL-DP MB-SGD; the silos of :mod:`dpcore.federated`): in each round the silo draws K of its n records uniformly
*with replacement* and sends (1/K) Σ_j ∇f(w, x_j) + N(0, σ² I_d), gradients of norm ≤ L.  The differing record
is drawn c ~ Binomial(K, 1/n) times, so one round is a mixture of Gaussians:

- ``"add-remove"`` (zero-out: the record vs. a record with zero gradient): P = Σ_c b_c N(c·a, 1) against
  Q = N(0, 1), a = L/(Kσ), both directions: the pair of dp_accounting's ``MixtureOfGaussiansDpEvent``.
- ``"replace-one"`` (the paper's Def. 2): P = Σ_c b_c N(+c·a, 1) against Q = Σ_c b_c N(−c·a, 1), i.e. the two
  gradients antipodal (g' = −g, ‖g‖ = L).  Its PLD is built here from the exact hockey-stick curve of the pair
  (the privacy loss is monotone) with dp_accounting's pessimistic connect-the-dots discretisation (Doroshenko
  et al. 2022), then composed R times.  The antipodal pair is the worst case among the configurations checked
  numerically (``tests/papers/p001_isrl/test_accounting.py`` compares other angles and norms in 2-D).

The discretisation interval Δ defaults to max(1e-4, loss range/150,000), which bounds the cost when the noise is
small; connect-the-dots keeps the error far below T·Δ.  :func:`batch_mean_epsilon_upper` bounds the variant that
clips the minibatch *mean* once.  :mod:`dpcore.accounting.registry` applies both to run records with
``sampling="replacement"``; paper 001's package re-exports them under its own names.

>>> round(with_replacement_epsilon(noise_std=1.0, lipschitz=1.0, batch_size=2, n=4, rounds=8, delta=1e-3), 2)
4.71
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting import pld
from scipy import special, stats

from dpcore.accounting import gaussian
from dpcore.accounting.calibrate import SIGMA_MAX
from dpcore.accounting.events import step_sensitivity
from dpcore.accounting.pld import GRID as PLD_GRID
from dpcore.validation import (
    check_bool,
    check_choice,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_range,
    check_real_array,
)

__all__ = [
    "NEIGHBOURS",
    "MAX_ROUNDS",
    "MAX_SHIFT",
    "MAX_N",
    "check_sizes",
    "mixture_pld_pmf",
    "mixture_pld",
    "with_replacement_pld",
    "smallest_multiplier",
    "with_replacement_epsilon",
    "batch_mean_epsilon_upper",
]

NEIGHBOURS = ("replace-one", "add-remove")
MAX_PLD_POINTS = 150_000
_TAIL = 1e-15
#: Domain of the tight accountant (outside it a ValueError names the parameters): at most ``MAX_ROUNDS``
#: composed releases (the PLD is composed numerically; 10⁵ takes about a second at σ = L, K = 10, n = 100),
#: a largest mean shift c_max·L/(Kσ) of at most ``MAX_SHIFT`` noise standard deviations (c_max the top of the
#: Binomial(K, 1/n) support; paper 001's App. I Local SGD audit reaches 17) and σ/L at most the library's largest
#: noise multiplier; data sets of at most 2**53 records.
MAX_ROUNDS = 10**5
MAX_SHIFT = 20.0
MAX_N = 2**53
#: Means of the mixtures :func:`mixture_pld` accepts, and its discretisation interval.
MAX_MEAN = 1e4
GRID_RANGE = (1e-6, 1.0)


def check_sizes(rounds: int, n: int, batch_size: int | None) -> tuple[int, int, int | None]:
    """Validated (R, n, K): R and n in [1, 2**53], K in [1, n]; ``batch_size=None`` where a formula has no K."""
    rounds = check_positive_int("rounds", rounds, maximum=MAX_N)
    n = check_positive_int("n", n, maximum=MAX_N)
    if batch_size is not None:
        batch_size = check_positive_int("batch_size", batch_size)
        if batch_size > n:
            raise ValueError(f"batch_size must be in [1, n={n}], got {batch_size}")
    return rounds, n, batch_size


def _binomial_counts(batch_size: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Support and pmf of c ~ Binomial(K, 1/n), truncated where the tail is < 1e-16 (added to the top)."""
    q = 1.0 / n
    if n == 1:
        return np.array([batch_size], dtype=float), np.array([1.0])
    upper = int(stats.binom.isf(1e-16, batch_size, q)) + 1
    upper = min(batch_size, max(upper, 1))
    counts = np.arange(upper + 1, dtype=float)
    probs = stats.binom.pmf(counts, batch_size, q)
    probs[-1] += stats.binom.sf(upper, batch_size, q)
    return counts, probs / probs.sum()


def _logsumexp_rows(a: np.ndarray) -> np.ndarray:
    top = a.max(axis=1)
    return top + np.log(np.exp(a - top[:, None]).sum(axis=1))


def _log_mixture_pdf(x: np.ndarray, means: np.ndarray, logw: np.ndarray) -> np.ndarray:
    return _logsumexp_rows(logw[None, :] - 0.5 * (x[:, None] - means[None, :]) ** 2) - 0.5 * math.log(2 * math.pi)


def _mixture_cdf_sf(x: np.ndarray, means: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    z = x[:, None] - means[None, :]
    return special.ndtr(z) @ weights, special.ndtr(-z) @ weights


def _mixture_quantile(means: np.ndarray, weights: np.ndarray, tail: float, upper: bool) -> float:
    """x with P(X > x) = tail (``upper``) or P(X < x) = tail, for X ~ Σ w_i N(μ_i, 1)."""
    from scipy import optimize

    lo, hi = means.min() - 40.0, means.max() + 40.0

    def f(x: float) -> float:
        cdf, sf = _mixture_cdf_sf(np.array([x]), means, weights)
        return math.log(max(sf[0] if upper else cdf[0], 1e-300)) - math.log(tail)

    return float(optimize.brentq(f, lo, hi, xtol=1e-10))


def mixture_pld_pmf(
    upper_means: np.ndarray,
    upper_weights: np.ndarray,
    lower_means: np.ndarray,
    lower_weights: np.ndarray,
    *,
    value_discretization_interval: float = PLD_GRID,
    tail: float = _TAIL,
) -> pld.pld_pmf.PLDPmf:
    """Pessimistic "connect-the-dots" PLD of P = Σ u_i N(μ_i, 1) against Q = Σ l_j N(ν_j, 1) (1-D).

    Requires the privacy loss ℓ(x) = ln p(x)/q(x) to be non-decreasing (checked on a
    grid), so that the hockey-stick divergence is δ(ε) = P(X > x_ε) − e^ε Q(X > x_ε)
    with x_ε = ℓ^{-1}(ε).  δ is evaluated at every multiple of Δ between the losses at
    P's (tail, 1 − tail) quantiles and turned into a PLD by Doroshenko et al. (2022)'s
    pessimistic connect-the-dots (dp_accounting), whose error does not grow like
    T·Δ under T-fold composition (the privacy-buckets rounding does).
    """
    grid = check_range("value_discretization_interval", value_discretization_interval, *GRID_RANGE)
    tail = check_range("tail", tail, 1e-300, 1e-3)
    um, uw, lm, lw = _check_mixtures(upper_means, upper_weights, lower_means, lower_weights)
    keep_u, keep_l = uw > 0, lw > 0
    um, uw, lm, lw = um[keep_u], uw[keep_u], lm[keep_l], lw[keep_l]
    log_uw, log_lw = np.log(uw), np.log(lw)

    def loss(x: np.ndarray) -> np.ndarray:
        return _log_mixture_pdf(x, um, log_uw) - _log_mixture_pdf(x, lm, log_lw)

    def dloss(x: np.ndarray) -> np.ndarray:
        def score(means: np.ndarray, logw: np.ndarray) -> np.ndarray:
            logits = logw[None, :] - 0.5 * (x[:, None] - means[None, :]) ** 2
            post = np.exp(logits - _logsumexp_rows(logits)[:, None])
            return post @ means - x

        return score(um, log_uw) - score(lm, log_lw)

    lo = _mixture_quantile(um, uw, tail, upper=False)
    hi = _mixture_quantile(um, uw, tail, upper=True)
    xs = np.linspace(lo, hi, 100001)
    ls = loss(xs)
    if np.any(np.diff(ls) < -1e-9 * (1 + np.abs(ls[1:]))):
        raise ValueError("the privacy loss of this pair is not monotone; mixture_pld_pmf needs it non-decreasing")
    ls = np.maximum.accumulate(ls)
    if (ls[-1] - ls[0]) / grid > 10 * MAX_PLD_POINTS:
        raise ValueError(f"value_discretization_interval={grid:g} is too fine for this pair: the loss range "
                         f"{ls[-1] - ls[0]:.4g} would need more than {10 * MAX_PLD_POINTS} grid points")  # fmt: skip
    k_lo, k_hi = math.floor(ls[0] / grid), math.ceil(ls[-1] / grid)
    eps = np.arange(k_lo, k_hi + 1) * grid
    x = np.interp(eps, ls, xs)
    inside = (eps > ls[0]) & (eps < ls[-1])
    for _ in range(2):  # Newton polish of x_ε = ℓ^{-1}(ε) inside the resolved range
        step = (loss(x) - eps) / np.maximum(dloss(x), 1e-300)
        x = np.where(inside, np.clip(x - step, lo, hi), x)
    _, sf_p = _mixture_cdf_sf(x, um, uw)
    _, sf_q = _mixture_cdf_sf(x, lm, lw)
    # the mass of P beyond the resolved range is at most `tail` on each side: add it
    deltas = np.clip(sf_p - np.exp(eps) * sf_q + np.where(x >= hi, tail, 0.0), 0.0, 1.0)
    deltas = np.minimum.accumulate(deltas)
    if k_hi == k_lo:
        return pld.pld_pmf.create_pmf_pessimistic_connect_dots(grid, [k_lo], deltas[:1])
    return pld.pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(grid, k_lo, k_hi, deltas)


def _check_mixtures(upper_means, upper_weights, lower_means, lower_weights) -> tuple[np.ndarray, ...]:
    """The two mixtures' means (|mean| <= ``MAX_MEAN``) and weights (non-negative, summing to 1), as arrays."""
    out = []
    for side in ("upper", "lower"):
        means, weights = (upper_means, upper_weights) if side == "upper" else (lower_means, lower_weights)
        m = check_real_array(f"{side}_means", means, low=-MAX_MEAN, high=MAX_MEAN, ndim=1)
        w = check_real_array(f"{side}_weights", weights, low=0.0, high=1.0, ndim=1)
        if w.shape != m.shape or m.size > 10_000 or not math.isclose(float(w.sum()), 1.0, abs_tol=1e-9):
            raise ValueError(f"{side}_weights must be as long as {side}_means (at most 10000) and sum to 1, got "
                             f"{w.size} weights summing to {w.sum():.6g}")  # fmt: skip
        out += [m, w]
    return tuple(out)


def _loss_span(um, uw, lm, lw, tail: float = _TAIL) -> float:
    """Width of the privacy-loss range over P's central 1 − 2·tail (P = Σ uw N(um, 1), Q = Σ lw N(lm, 1))."""
    um, uw, lm, lw = (np.asarray(a, float) for a in (um, uw, lm, lw))
    keep_u, keep_l = uw > 0, lw > 0
    um, uw, lm, lw = um[keep_u], uw[keep_u], lm[keep_l], lw[keep_l]
    ends = np.array([_mixture_quantile(um, uw, tail, upper=False), _mixture_quantile(um, uw, tail, upper=True)])
    losses = _log_mixture_pdf(ends, um, np.log(uw)) - _log_mixture_pdf(ends, lm, np.log(lw))
    return float(abs(losses[1] - losses[0]))


def mixture_pld(
    upper_means: np.ndarray,
    upper_weights: np.ndarray,
    lower_means: np.ndarray,
    lower_weights: np.ndarray,
    *,
    value_discretization_interval: float | None = None,
    symmetric: bool = False,
) -> pld.privacy_loss_distribution.PrivacyLossDistribution:
    """dp_accounting PLD of a pair (P, Q) of 1-D unit-variance Gaussian mixtures, both directions.

    The "remove" direction is ln p/q under P; the "add" direction ln q/p under Q
    (computed after reflecting x → −x, so that its loss is non-decreasing too).
    ``symmetric=True`` uses one direction for both (valid when Q is P reflected).
    ``value_discretization_interval=None`` picks Δ = max(1e-4, span/``MAX_PLD_POINTS``), with
    span the width of the loss range, to bound the cost when the noise is small.
    """
    _check_mixtures(upper_means, upper_weights, lower_means, lower_weights)
    symmetric = check_bool("symmetric", symmetric)
    if value_discretization_interval is None:
        span = _loss_span(upper_means, upper_weights, lower_means, lower_weights)
        if not symmetric:
            span = max(
                span,
                _loss_span(
                    -np.asarray(lower_means, float), lower_weights, -np.asarray(upper_means, float), upper_weights
                ),
            )
        value_discretization_interval = max(PLD_GRID, span / MAX_PLD_POINTS)
    kw = dict(value_discretization_interval=value_discretization_interval)
    remove = mixture_pld_pmf(upper_means, upper_weights, lower_means, lower_weights, **kw)
    if symmetric:
        return pld.privacy_loss_distribution.PrivacyLossDistribution(remove)
    add = mixture_pld_pmf(
        -np.asarray(lower_means, float), lower_weights, -np.asarray(upper_means, float), upper_weights, **kw
    )
    return pld.privacy_loss_distribution.PrivacyLossDistribution(remove, add)


def with_replacement_pld(
    noise_multiplier: float,
    batch_size: int,
    n: int,
    *,
    neighbours: str = "replace-one",
    value_discretization_interval: float | None = None,
) -> pld.privacy_loss_distribution.PrivacyLossDistribution:
    """PLD of one release (1/K) Σ_{j≤K} g(x_j) + N(0, σ²I), x_j drawn from n records with replacement.

    ``noise_multiplier`` z = σ/L (noise std over the per-example gradient bound), so one
    copy of the differing record moves the mean by at most a = 1/(K z) noise standard
    deviations (zero-out), or its two versions are 2a apart (replace-one).
    """
    z = check_positive("noise_multiplier", noise_multiplier)
    _, n, batch_size = check_sizes(1, n, check_positive_int("batch_size", batch_size))
    check_choice("neighbours", neighbours, NEIGHBOURS)
    _check_shift(z, batch_size, n, "noise_multiplier")
    if value_discretization_interval is not None:
        check_range("value_discretization_interval", value_discretization_interval, *GRID_RANGE)
    counts, probs = _binomial_counts(batch_size, n)
    shift = counts / (batch_size * z)
    grid = value_discretization_interval
    if neighbours == "add-remove":
        return mixture_pld(shift, probs, np.zeros(1), np.ones(1), value_discretization_interval=grid)
    return mixture_pld(shift, probs, -shift, probs, value_discretization_interval=grid, symmetric=True)


def smallest_multiplier(batch_size: int, n: int) -> float:
    """The smallest z = σ/L of the tight accountant's domain: c_max/(K z) = ``MAX_SHIFT``."""
    return float(_binomial_counts(batch_size, n)[0][-1]) / (batch_size * MAX_SHIFT)


def _check_shift(z: float, batch_size: int, n: int, name: str) -> None:
    """z = σ/L within the tight accountant's domain (see the module constants)."""
    low = smallest_multiplier(batch_size, n)
    if not low <= z <= SIGMA_MAX:
        raise ValueError(f"{name} must be in [{low:.4g}, {SIGMA_MAX:g}] for batch_size={batch_size}, n={n} (the "
                         f"largest mean shift of a message, c_max/(K·{name}), at most {MAX_SHIFT:g} noise std), "
                         f"got {z:g}: out of the accountant's range")  # fmt: skip


def _composed_epsilon(single: pld.privacy_loss_distribution.PrivacyLossDistribution, steps: int, delta: float) -> float:
    composed = single.self_compose(steps) if steps > 1 else single
    with np.errstate(over="ignore", invalid="ignore"):
        eps = float(composed.get_epsilon_for_delta(delta))
    if math.isnan(eps):
        raise ValueError(
            "the privacy-loss distribution of this setting is not computable (noise_std too small against the "
            "Lipschitz bound, ε beyond the grid): out of the accountant's range"
        )
    return eps


def with_replacement_epsilon(
    *,
    noise_std: float,
    lipschitz: float,
    batch_size: int,
    n: int,
    rounds: int,
    delta: float,
    neighbours: str = "replace-one",
    value_discretization_interval: float | None = None,
) -> float:
    """Tight ε of one silo's R messages in ISRL-DP MB-SGD (Algorithm 2) for the given σ.

    Each message is the mean of K with-replacement draws of gradients of norm ≤ L plus
    N(0, σ² I); see the module docstring for the neighbouring relations.

    Returns ε ≥ 0, or ``math.inf`` for ``noise_std=0`` (no noise: the messages reveal the gradients, and no
    finite ε holds; a documented answer, not an error) and for a ``delta`` below the mass the pessimistic PLD
    puts at infinite loss (its truncated tails, about 1e-15 per release): no finite ε is certified there.
    Refuses (``ValueError`` naming the parameter and its range) more than ``MAX_ROUNDS`` rounds -- the PLD is
    composed numerically, and 10⁹ rounds would take hours; the refusal takes microseconds -- and a noise so small
    that a message's largest mean shift c_max·L/(Kσ) exceeds ``MAX_SHIFT`` noise standard deviations (the answer
    would be far beyond any meaningful ε, at a cost of minutes).
    """
    sigma = check_nonnegative("noise_std", noise_std)
    lipschitz = check_positive("lipschitz", lipschitz)
    rounds, n, batch_size = check_sizes(rounds, n, check_positive_int("batch_size", batch_size))
    if rounds > MAX_ROUNDS:
        raise ValueError(f"rounds must be in [1, {MAX_ROUNDS}] for the tight (PLD) accountant, got {rounds}")
    delta = check_open_unit("delta", delta)
    check_choice("neighbours", neighbours, NEIGHBOURS)
    if value_discretization_interval is not None:
        check_range("value_discretization_interval", value_discretization_interval, *GRID_RANGE)
    if sigma == 0:
        return math.inf
    with np.errstate(over="ignore", under="ignore"):
        z = float(np.float64(sigma) / np.float64(lipschitz))
    _check_shift(z, batch_size, n, "noise_std/lipschitz")
    grid = value_discretization_interval
    single = with_replacement_pld(z, batch_size, n, neighbours=neighbours, value_discretization_interval=grid)
    return _composed_epsilon(single, rounds, delta)


def batch_mean_epsilon_upper(*, noise_std: float, clip: float, rounds: int, delta: float) -> float:
    """An upper bound on ε of one silo's R messages when the silo clips its minibatch *mean* once.

    The authors' insurance script (lowya/Private-Federated-Learning-Without-a-Trusted-Server@421aeb6,
    ``DP_FL_insurance_linreg_FINAL.py`` lines 187-190, ``ACnoisyMB_sgd``) sends clip_L((1/K) Σ_j ∇f(w, x_j)) +
    N(0, σ² I) with App. I's σ, which assumes the per-record bound of Algorithm 2.  Replacing one record (the
    paper's Def. 2) can move a clipped mean anywhere in the ball of radius L: sensitivity 2L, for every draw of
    the minibatch.  Each message is then the Gaussian mechanism with sensitivity 2L and std σ, (2L/σ)-GDP for
    every fixed draw (Dong, Roth & Su 2022, Thm 2.7), hence for the mixture over draws (the same mixture on both
    neighbours: joint convexity of the hockey-stick divergence), and R adaptive messages are (2L√R/σ)-GDP
    (their Cor. 3.3); ε is read off the GDP curve at ``delta`` (their Cor. 2.13).

    No amplification by the K-of-n draw is credited (no accountant here covers a clipped mean of draws with
    replacement), so this is an upper bound, never below the truth; ``math.inf`` for ``noise_std=0``.

    >>> round(batch_mean_epsilon_upper(noise_std=1.0, clip=0.5, rounds=4, delta=1e-5), 3)  # μ = 2
    9.997
    """
    sigma = check_nonnegative("noise_std", noise_std)
    clip = check_positive("clip", clip)
    rounds = check_positive_int("rounds", rounds)
    delta = check_open_unit("delta", delta)
    if sigma == 0:
        return math.inf
    sensitivity = step_sensitivity("replacement", "batch") * clip  # 2L: replace-one moves a clipped mean by 2L
    return gaussian.epsilon_from_mu(sensitivity * math.sqrt(rounds) / sigma, delta)
