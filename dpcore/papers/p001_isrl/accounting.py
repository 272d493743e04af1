"""ISRL-DP accounting for Lowy & Razaviyayn, "Private Federated Learning Without a Trusted Server" (ICLR 2023).

Inter-silo record-level DP (ISRL-DP, Def. 2): the transcript of messages that silo i
sends must be (ε0, δ0)-DP with respect to *replacing* one record of its data X_i
(n records).  This module has

* the noise calibrations the paper prints -- Theorem D.1 (theory, advanced composition)
  and App. I (experiments, "moments accountant") for ISRL-DP MB-SGD (Algorithm 2),
  App. I for the ISRL-DP Local SGD baseline, Thm E.1 for the one-pass accelerated
  Algorithm 1 and Thm G.1 for shuffled MB-SGD -- with their batch-size rules;
* a tight accountant: the privacy-loss distribution (PLD) of one silo's R messages.
  In each round the silo draws K of its n records uniformly *with replacement* and
  sends (1/K) Σ_j ∇f(w, x_j) + N(0, σ² I_d), gradients of norm ≤ L.  The differing
  record is drawn c ~ Binomial(K, 1/n) times, so one round is a mixture of Gaussians:

  - ``"add-remove"`` (zero-out: the record vs. a record with zero gradient):
    P = Σ_c b_c N(c·a, 1) against Q = N(0, 1), a = L/(Kσ), both directions: the pair of
    dp_accounting's ``MixtureOfGaussiansDpEvent`` (the tests check our PLD against it).
  - ``"replace-one"`` (the paper's Def. 2): P = Σ_c b_c N(+c·a, 1) against
    Q = Σ_c b_c N(−c·a, 1), i.e. the two gradients antipodal (g' = −g, ‖g‖ = L).  Its
    PLD is built here from the exact hockey-stick curve of the pair (the privacy loss is
    monotone) with dp_accounting's pessimistic connect-the-dots discretisation, then
    composed R times.  The antipodal pair is
    the worst case among the configurations we checked numerically
    (``tests/test_isrl_accounting.py`` compares other angles and norms in 2-D).

The discretisation interval Δ defaults to max(1e-4, loss range/150,000), which bounds the
cost when the noise is small; connect-the-dots keeps the error far below T·Δ.

Silo participation (M of N silos per round) gives no amplification under ISRL-DP
(the server knows who sent what), so every silo is accounted over all R rounds.

>>> round(noise_std(lipschitz=1.0, rounds=35, n=1238, epsilon=18.0, delta=1 / 1238**2, batch_size=443), 6)
0.002834
>>> batch_size_experiments(1238, 35, 18.0)
443
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from dp_accounting import pld
from scipy import special, stats

from dpcore.accounting import gaussian
from dpcore.accounting.calibrate import SIGMA_MAX, check_rtol, smallest_sigma
from dpcore.accounting.dpsgd import PLD_GRID
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
    "FORMULAS",
    "NEIGHBOURS",
    "noise_std",
    "noise_variance",
    "local_sgd_noise_std",
    "one_pass_noise_std",
    "shuffled_noise_std",
    "batch_size_experiments",
    "batch_size_theory_min",
    "variance_ratio_theory_to_experiments",
    "moments_accountant_epsilon_limit",
    "theory_epsilon_limit",
    "mbsgd_epsilon",
    "batch_mean_epsilon_upper",
    "local_sgd_epsilon",
    "one_pass_epsilon",
    "with_replacement_pld",
    "mixture_pld",
    "mixture_pld_pmf",
    "calibrate_mbsgd_noise_std",
    "shuffle_round_epsilon",
    "CalibrationAudit",
    "audit_calibration",
]

FORMULAS = ("theory", "experiments")
NEIGHBOURS = ("replace-one", "add-remove")
MAX_PLD_POINTS = 150_000
_TAIL = 1e-15
#: Domain of the tight accountant (outside it a ValueError names the parameters): at most ``MAX_ROUNDS``
#: composed releases (the PLD is composed numerically; 10⁵ takes about a second at σ = L, K = 10, n = 100),
#: a largest mean shift c_max·L/(Kσ) of at most ``MAX_SHIFT`` noise standard deviations (c_max the top of the
#: Binomial(K, 1/n) support; the App. I Local SGD audit reaches 17) and σ/L at most the library's largest noise
#: multiplier; data sets of at most 2**53 records.
MAX_ROUNDS = 10**5
MAX_SHIFT = 20.0
MAX_N = 2**53
#: Means of the mixtures :func:`mixture_pld` accepts, and its discretisation interval.
MAX_MEAN = 1e4
GRID_RANGE = (1e-6, 1.0)


# --------------------------------------------------------------------------- calibrations


def _check_sizes(rounds: int, n: int, batch_size: int | None) -> tuple[int, int, int | None]:
    """Validated (R, n, K); ``batch_size=None`` only where the formula has no K (Thm G.1)."""
    rounds = check_positive_int("rounds", rounds, maximum=MAX_N)
    n = check_positive_int("n", n, maximum=MAX_N)
    if batch_size is not None:
        batch_size = check_positive_int("batch_size", batch_size)
        if batch_size > n:
            raise ValueError(f"batch_size must be in [1, n={n}], got {batch_size}")
    return rounds, n, batch_size


def noise_variance(
    *,
    lipschitz: float,
    rounds: int,
    n: int,
    epsilon: float,
    delta: float,
    batch_size: int,
    formula: str = "experiments",
) -> float:
    """σ² of the per-silo Gaussian noise of ISRL-DP MB-SGD (Algorithm 2).

    * ``formula="theory"`` -- Theorem D.1: σ² = 256 L² R ln(2.5R/δ0) ln(2/δ0) / (n² ε0²)
      (advanced composition; needs ε0 ≤ 2 ln(2/δ0) and K ≥ :func:`batch_size_theory_min`).
    * ``formula="experiments"`` -- App. I: σ² = 8 L² ln(1/δ) R / (n² ε²)
      ("Theorem 1 of Abadi et al. 2016 if K = n√ε/(2√R)").

    σ² does not depend on K (the K-fold averaging and the K/n amplification cancel);
    ``batch_size`` is validated (1 ≤ K ≤ n).  ``epsilon=inf`` gives 0 (non-private).
    """
    lipschitz = check_positive("lipschitz", lipschitz)
    rounds, n, _ = _check_sizes(rounds, n, check_positive_int("batch_size", batch_size))
    epsilon = check_positive("epsilon", epsilon, allow_inf=True)
    delta = check_open_unit("delta", delta)
    check_choice("formula", formula, FORMULAS)
    if math.isinf(epsilon):
        return 0.0
    if formula == "theory":
        logs = (math.log(2.5 * rounds) - math.log(delta)) * (math.log(2) - math.log(delta))
        value = 256 * rounds * logs * _square(lipschitz / (n * epsilon))
    else:
        value = 8 * -math.log(delta) * rounds * _square(lipschitz / (n * epsilon))
    return _finite("noise_variance", value, "lipschitz, rounds, n and epsilon")


def noise_std(
    *,
    lipschitz: float,
    rounds: int,
    n: int,
    epsilon: float,
    delta: float,
    batch_size: int,
    formula: str = "experiments",
) -> float:
    """σ of ISRL-DP MB-SGD's per-silo noise: the square root of :func:`noise_variance`.

    >>> s = noise_std(lipschitz=2.0, rounds=10, n=100, epsilon=1.0, delta=1e-4, batch_size=10, formula="theory")
    >>> round(s**2, 4) == round(256 * 4 * 10 * math.log(2.5 * 10 / 1e-4) * math.log(2 / 1e-4) / 100**2, 4)
    True
    """
    return math.sqrt(
        noise_variance(
            lipschitz=lipschitz,
            rounds=rounds,
            n=n,
            epsilon=epsilon,
            delta=delta,
            batch_size=batch_size,
            formula=formula,
        )
    )


def local_sgd_noise_std(
    *, lipschitz: float, rounds: int, n: int, epsilon: float, delta: float, batch_size: int
) -> float:
    """σ of the ISRL-DP Local SGD baseline (App. I): σ² = 8 L² R K ln(1/δ) / (ε² n²).

    Added to each of the K single-sample local gradient steps of a round (K = ``batch_size``,
    the number of local steps).  ``epsilon=inf`` gives 0.
    """
    lipschitz = check_positive("lipschitz", lipschitz)
    rounds, n, batch_size = _check_sizes(rounds, n, check_positive_int("batch_size", batch_size))
    epsilon = check_positive("epsilon", epsilon, allow_inf=True)
    delta = check_open_unit("delta", delta)
    if math.isinf(epsilon):
        return 0.0
    value = math.sqrt(8 * rounds * batch_size * -math.log(delta)) * lipschitz / epsilon / n
    return _finite("local_sgd_noise_std", value, "lipschitz, rounds, batch_size, n and epsilon")


def _square(x: float) -> float:
    return x * x  # ∞ on overflow (x**2 raises OverflowError)


def _finite(what: str, value: float, inputs: str) -> float:
    """``value`` when finite and positive; a ValueError naming the ``inputs`` whose size over- or underflowed."""
    if not 0 <= value < math.inf:
        raise ValueError(f"{what} = {value} is not a finite number: {inputs} are out of the double range")
    return value


def one_pass_noise_std(*, lipschitz: float, epsilon: float, delta: float, batch_size: int) -> float:
    """σ of One-Pass Accelerated Noisy MB-SGD (Algorithm 1, Thm E.1): σ² = 32 L² ln(1.25/δ0) / (ε0² K²).

    Every record is used once (disjoint batches), so privacy is one Gaussian mechanism
    of sensitivity 2L/K (parallel composition); the constant 8Δ² comes from the zCDP
    conversion under ε0 ≤ 8 ln(1/δ0).
    """
    lipschitz = check_positive("lipschitz", lipschitz)
    epsilon = check_positive("epsilon", epsilon, allow_inf=True)
    delta = check_open_unit("delta", delta)
    batch_size = check_positive_int("batch_size", batch_size)
    if math.isinf(epsilon):
        return 0.0
    value = math.sqrt(32 * (math.log(1.25) - math.log(delta))) * lipschitz / epsilon / batch_size
    return _finite("one_pass_noise_std", value, "lipschitz, epsilon and batch_size")


def shuffled_noise_std(
    *,
    lipschitz: float,
    rounds: int,
    n: int,
    num_silos: int,
    silos_per_round: int,
    epsilon: float,
    delta: float,
    constant: float = 1.0,
) -> float:
    """σ of Shuffled Noisy MB-SGD (Thm G.1), central (ε, δ)-DP via a secure shuffler:

    σ² = C L² R M ln(R M²/(N δ)) ln(R/δ) ln(1/δ) / (n² N² ε²).

    The paper leaves the absolute constant C unspecified (``constant``).
    """
    lipschitz = check_positive("lipschitz", lipschitz)
    rounds, n, _ = _check_sizes(rounds, n, None)
    num_silos = check_positive_int("num_silos", num_silos, maximum=MAX_N)
    m = check_positive_int("silos_per_round", silos_per_round)
    if m > num_silos:
        raise ValueError(f"silos_per_round must be in [1, num_silos={num_silos}], got {m}")
    epsilon = check_positive("epsilon", epsilon, allow_inf=True)
    delta = check_open_unit("delta", delta)
    constant = check_positive("constant", constant)
    if math.isinf(epsilon):
        return 0.0
    log_d = -math.log(delta)
    first = math.log(rounds) + 2 * math.log(m) - math.log(num_silos) + log_d
    logs = first * (math.log(rounds) + log_d) * log_d
    if logs <= 0:
        raise ValueError("delta is too large for Thm G.1: the logarithms must be positive")
    value = math.sqrt(constant * rounds * m * logs) * lipschitz / n / num_silos / epsilon
    return _finite("shuffled_noise_std", value, "lipschitz, constant, n, num_silos and epsilon")


def batch_size_experiments(n: int, rounds: int, epsilon: float) -> int:
    """K of App. I as the authors' code computes it: int(max(1, n·sqrt(ε/(4R)))).

    The paper writes K = n√ε/(2√R); the code evaluates it once, at the largest tested ε.
    """
    rounds, n, _ = _check_sizes(rounds, n, None)
    epsilon = check_positive("epsilon", epsilon)
    k = n * math.sqrt(epsilon / (4 * rounds))
    return n if k >= n else int(max(1.0, k))


def batch_size_theory_min(n: int, rounds: int, epsilon: float, delta: float) -> int:
    """Smallest K allowed by Theorem D.1: K ≥ ε0 n / (4 sqrt(2R ln(2/δ0))) (rounded up, ≥ 1)."""
    rounds, n, _ = _check_sizes(rounds, n, None)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    k = epsilon * n / (4 * math.sqrt(2 * rounds * (math.log(2) - math.log(delta))))
    if not math.isfinite(k):
        raise ValueError(f"epsilon·n overflows: epsilon={epsilon}, n={n}")
    return max(1, math.ceil(k))


def variance_ratio_theory_to_experiments(rounds: int, delta: float) -> float:
    """σ²_theory / σ²_experiments = 256 ln(2.5R/δ) ln(2/δ) / (8 ln(1/δ)) (independent of L, n, ε)."""
    rounds = check_positive_int("rounds", rounds, maximum=MAX_N)
    delta = check_open_unit("delta", delta)
    log_d = -math.log(delta)
    return 32 * (math.log(2.5 * rounds) + log_d) * (math.log(2) + log_d) / log_d


def moments_accountant_epsilon_limit(delta: float) -> float:
    """2 ln(1/δ): the largest ε for which the App. I calibration is claimed (Bassily et al. 2019, Thm 3.1)."""
    return -2 * math.log(check_open_unit("delta", delta))


def theory_epsilon_limit(delta: float) -> float:
    """2 ln(2/δ0): Theorem D.1's condition on ε0."""
    return 2 * (math.log(2) - math.log(check_open_unit("delta", delta)))


# --------------------------------------------------------------------------- tight accountant


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
    _, n, batch_size = _check_sizes(1, n, check_positive_int("batch_size", batch_size))
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


def _smallest_multiplier(batch_size: int, n: int) -> float:
    """The smallest z = σ/L of the tight accountant's domain: c_max/(K z) = ``MAX_SHIFT``."""
    return float(_binomial_counts(batch_size, n)[0][-1]) / (batch_size * MAX_SHIFT)


def _check_shift(z: float, batch_size: int, n: int, name: str) -> None:
    """z = σ/L within the tight accountant's domain (see the module constants)."""
    low = _smallest_multiplier(batch_size, n)
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


def mbsgd_epsilon(
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
    rounds, n, batch_size = _check_sizes(rounds, n, check_positive_int("batch_size", batch_size))
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
    return gaussian.epsilon_from_mu(2.0 * clip * math.sqrt(rounds) / sigma, delta)


def local_sgd_epsilon(
    *,
    noise_std: float,
    lipschitz: float,
    n: int,
    rounds: int,
    local_steps: int,
    delta: float,
    neighbours: str = "replace-one",
    value_discretization_interval: float | None = None,
) -> float:
    """Tight ε of ISRL-DP Local SGD (App. I): R·K noisy single-sample steps per silo.

    The silo releases only its last local iterate each round, a post-processing of its
    K noisy gradients g(w, x_t) + N(0, σ² I) (x_t drawn uniformly from n records), so
    the R·K-fold composition of the with-replacement mechanism with K = 1 bounds it.  R·K at most
    ``MAX_ROUNDS``; ∞ as in :func:`mbsgd_epsilon`.
    """
    local_steps = check_positive_int("local_steps", local_steps)
    rounds = check_positive_int("rounds", rounds)
    if rounds * local_steps > MAX_ROUNDS:
        raise ValueError(f"rounds·local_steps must be at most {MAX_ROUNDS} releases for the tight (PLD) accountant, "
                         f"got rounds={rounds}, local_steps={local_steps}")  # fmt: skip
    return mbsgd_epsilon(
        noise_std=noise_std,
        lipschitz=lipschitz,
        batch_size=1,
        n=n,
        rounds=rounds * local_steps,
        delta=delta,
        neighbours=neighbours,
        value_discretization_interval=value_discretization_interval,
    )


def one_pass_epsilon(
    *, noise_std: float, lipschitz: float, batch_size: int, delta: float, neighbours: str = "replace-one"
) -> float:
    """Exact ε of One-Pass Algorithm 1: each record enters one Gaussian release of sensitivity 2L/K (L/K).
    ∞ where μ = sensitivity/σ overflows (σ tiny against L/K): no finite ε."""
    sigma = check_positive("noise_std", noise_std)
    lipschitz = check_positive("lipschitz", lipschitz)
    batch_size = check_positive_int("batch_size", batch_size)
    delta = check_open_unit("delta", delta)
    check_choice("neighbours", neighbours, NEIGHBOURS)
    sensitivity = (2.0 if neighbours == "replace-one" else 1.0) * lipschitz / batch_size
    from dpcore.accounting.gaussian import epsilon_from_mu

    with np.errstate(over="ignore"):
        mu = float(np.float64(sensitivity) / np.float64(sigma))
    return epsilon_from_mu(mu, delta)


def calibrate_mbsgd_noise_std(
    *,
    target_epsilon: float,
    lipschitz: float,
    batch_size: int,
    n: int,
    rounds: int,
    delta: float,
    neighbours: str = "replace-one",
    rtol: float = 1e-3,
) -> float:
    """Smallest σ (to ``rtol``) whose tight ε (:func:`mbsgd_epsilon`) is ≤ ``target_epsilon``."""
    target = check_positive("target_epsilon", target_epsilon)
    rtol = check_rtol(rtol)
    lipschitz = check_positive("lipschitz", lipschitz)
    rounds, n, batch_size = _check_sizes(rounds, n, check_positive_int("batch_size", batch_size))
    if rounds > MAX_ROUNDS:
        raise ValueError(f"rounds must be in [1, {MAX_ROUNDS}] for the tight (PLD) accountant, got {rounds}")

    def eps(sigma: float) -> float:
        return mbsgd_epsilon(
            noise_std=sigma,
            lipschitz=lipschitz,
            batch_size=batch_size,
            n=n,
            rounds=rounds,
            delta=delta,
            neighbours=neighbours,
        )

    # start from App. I's σ, which is usually within a factor 2 of the tight one
    start = noise_std(lipschitz=lipschitz, rounds=rounds, n=n, epsilon=target, delta=delta, batch_size=batch_size)
    low = lipschitz * _smallest_multiplier(batch_size, n) * (1 + 1e-12)  # the accountant's domain (mbsgd_epsilon)
    high = lipschitz * SIGMA_MAX
    if not low < high < math.inf:
        raise ValueError(f"lipschitz={lipschitz:g} and batch_size={batch_size} leave no noise_std in the accountant's "
                         "range")  # fmt: skip
    return smallest_sigma(eps, target, rtol=rtol, start=min(max(start, low), high), factor=1.5, sigma_min=low,
                          sigma_max=high, below_min="raise")  # fmt: skip


# --------------------------------------------------------------------------- shuffle DP (Section 5)


def shuffle_round_epsilon(eps0: float, n: int, num_silos: int, delta: float) -> float:
    """Central ε of one shuffled round of N silos' (ε0, ·)-ISRL-DP reports, eq. (21) of Thm D.5:

    ε = ln[1 + ((e^{ε0} − 1)/(e^{ε0} + 1)) (8 sqrt(e^{nε0} ln(4/δ))/√N + 8 e^{nε0}/N)].

    Valid when ε0 ≤ ln(N/(16 ln(2/δ)))/n (raises ``ValueError`` naming ``eps0`` otherwise).
    With n = 1 this is Feldman et al. (2020b)'s amplification by shuffling.
    """
    eps0 = check_positive("eps0", eps0)
    n = check_positive_int("n", n, maximum=MAX_N)
    num_silos = check_positive_int("num_silos", num_silos, maximum=MAX_N)
    delta = check_open_unit("delta", delta)
    bound = (math.log(num_silos) - math.log(16 * (math.log(2) - math.log(delta)))) / n
    if bound <= 0:
        raise ValueError(f"num_silos must exceed 16 ln(2/delta) = {16 * (math.log(2) - math.log(delta)):.4g} for "
                         f"Thm D.5, got num_silos={num_silos} (delta={delta:g})")  # fmt: skip
    if eps0 > bound:
        raise ValueError(f"eps0 must be in (0, ln(N/(16 ln(2/δ)))/n = {bound:.4g}] for Thm D.5, got {eps0}")
    e = math.exp(n * eps0)  # <= N/(16 ln(2/δ)) by the condition above
    factor = math.tanh(eps0 / 2)  # (e^ε0 − 1)/(e^ε0 + 1)
    log4d = math.log(4) - math.log(delta)
    return math.log1p(factor * (8 * math.sqrt(e * log4d) / math.sqrt(num_silos) + 8 * e / num_silos))


# --------------------------------------------------------------------------- audit of a setting


@dataclass(frozen=True)
class CalibrationAudit:
    """What the printed calibration delivers in one experimental setting (one silo, one ε)."""

    setting: str
    algorithm: str
    epsilon: float
    delta: float
    n: int
    batch_size: int
    rounds: int
    noise_std_over_L: float
    epsilon_replace_one: float
    epsilon_add_remove: float

    @property
    def holds(self) -> bool:
        """Whether the claimed ε holds under the paper's own (replace-one) ISRL-DP."""
        return self.epsilon_replace_one <= self.epsilon * (1 + 1e-9)


def audit_calibration(
    *,
    setting: str,
    algorithm: str,
    epsilon: float,
    n: int,
    rounds: int,
    batch_size: int,
    delta: float | None = None,
    value_discretization_interval: float | None = None,
) -> CalibrationAudit:
    """Tight ε (both neighbour relations) of the App. I noise for ``algorithm`` ∈ {"mb-sgd", "local-sgd"}.

    δ defaults to 1/n² (the paper's choice).  L cancels (σ ∝ L), so L = 1 is used.
    """
    check_choice("algorithm", algorithm, ("mb-sgd", "local-sgd"))
    if not isinstance(setting, str):
        raise ValueError(f"setting must be a string (the setting's tag), got {setting!r}")
    n = check_positive_int("n", n, maximum=MAX_N)
    delta = 1.0 / (n * n) if delta is None else check_open_unit("delta", delta)
    if delta >= 1:
        raise ValueError(f"delta = 1/n² must be below 1: n must be at least 2, got n={n}")
    kwargs = dict(lipschitz=1.0, rounds=rounds, n=n, epsilon=epsilon, delta=delta, batch_size=batch_size)
    eps = {}
    if algorithm == "mb-sgd":
        sigma = noise_std(**kwargs)
        for rel in NEIGHBOURS:
            eps[rel] = mbsgd_epsilon(
                noise_std=sigma,
                lipschitz=1.0,
                batch_size=batch_size,
                n=n,
                rounds=rounds,
                delta=delta,
                neighbours=rel,
                value_discretization_interval=value_discretization_interval,
            )
    else:
        sigma = local_sgd_noise_std(**kwargs)
        for rel in NEIGHBOURS:
            eps[rel] = local_sgd_epsilon(
                noise_std=sigma,
                lipschitz=1.0,
                n=n,
                rounds=rounds,
                local_steps=batch_size,
                delta=delta,
                neighbours=rel,
                value_discretization_interval=value_discretization_interval,
            )
    return CalibrationAudit(
        setting,
        algorithm,
        float(epsilon),
        float(delta),
        n,
        batch_size,
        rounds,
        sigma,
        eps["replace-one"],
        eps["add-remove"],
    )
