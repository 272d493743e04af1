"""ISRL-DP accounting for Lowy & Razaviyayn, "Private Federated Learning Without a Trusted Server" (ICLR 2023).

Inter-silo record-level DP (ISRL-DP, Def. 2): the transcript of messages that silo i
sends must be (ε0, δ0)-DP with respect to *replacing* one record of its data X_i
(n records).  This module has

* the noise calibrations the paper prints -- Theorem D.1 (theory, advanced composition)
  and App. I (experiments, "moments accountant") for ISRL-DP MB-SGD (Algorithm 2),
  App. I for the ISRL-DP Local SGD baseline, Thm E.1 for the one-pass accelerated
  Algorithm 1 and Thm G.1 for shuffled MB-SGD -- with their batch-size rules;
* a tight accountant: the privacy-loss distribution (PLD) of one silo's R messages (the mechanism lives in
  the library, :mod:`dpcore.accounting.replacement`; re-exported here, ``mbsgd_epsilon`` being its
  ``with_replacement_epsilon``).
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
    (``tests/papers/p001_isrl/test_accounting.py`` compares other angles and norms in 2-D).

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

from dpcore.accounting.calibrate import SIGMA_MAX, check_rtol, smallest_sigma
from dpcore.accounting.replacement import (  # the with-replacement accountant lives in the library
    MAX_N,
    MAX_ROUNDS,
    MAX_SHIFT,
    NEIGHBOURS,
    batch_mean_epsilon_upper,
    mixture_pld,
    mixture_pld_pmf,
    with_replacement_pld,
)
from dpcore.accounting.replacement import check_sizes as _check_sizes
from dpcore.accounting.replacement import smallest_multiplier as _smallest_multiplier
from dpcore.accounting.replacement import with_replacement_epsilon as mbsgd_epsilon
from dpcore.validation import (
    check_choice,
    check_open_unit,
    check_positive,
    check_positive_int,
)

__all__ = [
    "MAX_ROUNDS",
    "MAX_SHIFT",
    "MAX_N",
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


# --------------------------------------------------------------------------- calibrations


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


# --------------------------------------------------------------------------- tight accountant (library)


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
    # the algorithm's App. I noise and its tight accountant (K is the batch for MB-SGD, the local steps for Local SGD)
    if algorithm == "mb-sgd":
        sigma, accountant, k = noise_std(**kwargs), mbsgd_epsilon, {"batch_size": batch_size}
    else:
        sigma, accountant, k = local_sgd_noise_std(**kwargs), local_sgd_epsilon, {"local_steps": batch_size}
    run = dict(noise_std=sigma, lipschitz=1.0, n=n, rounds=rounds, delta=delta,
               value_discretization_interval=value_discretization_interval, **k)  # fmt: skip
    eps = {rel: accountant(**run, neighbours=rel) for rel in NEIGHBOURS}
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
