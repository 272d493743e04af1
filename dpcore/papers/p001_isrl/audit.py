"""The experimental settings of Lowy & Razaviyayn (ICLR 2023), App. I, and an audit of their noise.

Silo sizes come from the partition code (:mod:`dpcore.federated.datasets`), never from
typed-in numbers: MNIST (App. I.1: 25 odd/even digit-pair silos, ⌊fraction·(smallest digit
count)⌋ images per digit, 80/20 split per silo), insurance (App. I.2: N silos by level of
charges, ⌈1338/N⌉ records each, 80/20 per silo) and obesity (App. I.3: one silo per class,
balanced to the smallest class after a global 80/20 split).

:func:`audit_settings` runs :func:`dpcore.papers.p001_isrl.accounting.audit_calibration` on
every (setting, algorithm, ε): the tight ε that App. I's σ delivers to one silo after R rounds,
under the paper's replace-one ISRL-DP (Def. 2) and under add/remove neighbours.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.claims import ClaimSpec
from dpcore.federated import datasets as fd
from dpcore.papers.p001_isrl import accounting as isrl
from dpcore.validation import check_positive, check_positive_int

__all__ = [
    "pooled_split_sizes",
    "insurance_split_totals",
    "Setting",
    "mnist_silo_sizes",
    "insurance_train_size",
    "obesity_train_size",
    "experiment_settings",
    "noise_ratio_table",
    "audit_settings",
    "audit_frame",
    "calibration_key",
    "calibration_value",
    "one_pass_table",
    "shuffle_table",
]


@dataclass(frozen=True)
class Setting:
    """One experiment of App. I as the audit sees it: silo size n, rounds R, the ε tested, K's ε."""

    name: str  # claim-key tag: "mnist", "insurance-N10", "obesity"
    n: int
    rounds: int
    eps_max: float
    epsilons: tuple[float, ...]

    def __post_init__(self) -> None:
        check_positive_int("n", self.n)
        check_positive_int("rounds", self.rounds)
        check_positive("eps_max", self.eps_max)
        if not self.epsilons or any(not (0 < e <= self.eps_max) for e in self.epsilons):
            raise ValueError(f"epsilons must be non-empty numbers in (0, eps_max={self.eps_max}], got {self.epsilons}")

    @property
    def batch_size(self) -> int:
        """K = int(n·sqrt(ε_max/(4R))) (App. I, evaluated at the largest tested ε as the authors' code does)."""
        return isrl.batch_size_experiments(self.n, self.rounds, self.eps_max)

    @property
    def delta(self) -> float:
        """δ = 1/n² (App. I.1)."""
        return 1.0 / self.n**2


def mnist_silo_sizes(labels: np.ndarray, *, fraction: float, test_fraction: float = 0.2) -> tuple[int, int]:
    """(training, test) records per silo of :func:`dpcore.federated.datasets.mnist_odd_even` for these labels.

    The sizes depend only on the labels: the partition is run on a one-pixel stand-in for the
    images (the features it computes are discarded), so no PCA of the 784 pixels is needed.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D array, got shape {labels.shape}")
    stand_in = np.zeros((labels.size, 1, 1), dtype=np.uint8)
    trials = fd.mnist_odd_even(stand_in, labels, trials=1, fraction=fraction, dim=1, test_fraction=test_fraction)
    silos = trials.sizes.shape[1]
    return int(trials.sizes[0, 0]), int(trials.test_sizes[0]) // silos


def insurance_train_size(frame: pd.DataFrame, num_silos: int) -> int:
    """Training records of the first (largest) insurance silo for N = ``num_silos`` (App. I.2)."""
    trials = fd.insurance_by_charges(frame, num_silos=num_silos, trials=1)
    return int(trials.sizes[0].max())


def pooled_split_sizes(n_total: int, *, test_fraction: float = 0.2) -> tuple[int, int]:
    """(training, test) sizes of one pooled split of ``n_total`` records with scikit-learn's rule (test =
    ⌈test_fraction · n_total⌉): App. I.2's N_0 ∈ {1070, 268} of Lowy & Razaviyayn is this split of the 1,338
    insurance records at 80/20 (the per-silo splits the experiments use give slightly different totals)."""
    if isinstance(n_total, bool) or not isinstance(n_total, int | np.integer) or n_total < 2:
        raise ValueError(f"n_total must be an integer >= 2, got {n_total!r}")
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, float | int) or not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    test = math.ceil(round(test_fraction * int(n_total), 9))
    return int(n_total) - test, test


def insurance_split_totals(frame: pd.DataFrame, num_silos: int) -> tuple[int, int]:
    """(training, test) records summed over the N = ``num_silos`` insurance silos of trial 0 (App. I.2)."""
    trials = fd.insurance_by_charges(frame, num_silos=num_silos, trials=1)
    return int(np.sum(trials.sizes[0])), int(trials.test_sizes[0])


def obesity_train_size(frame: pd.DataFrame, *, seed: int = 0) -> int:
    """Training records per obesity silo (all seven are balanced to the smallest class) of trial 0."""
    return int(fd.obesity_by_class(frame, trials=1, seed=seed).sizes[0, 0])


def experiment_settings(
    *,
    mnist_n: int,
    insurance_n: Mapping[int, int],
    obesity_n: int,
    mnist_epsilons: Sequence[float],
    insurance_epsilons: Sequence[float],
    obesity_epsilons: Sequence[float],
) -> list[Setting]:
    """The App. I settings: MNIST (R = 35, K at ε = 18), insurance per N (R = 35, K at ε = 3), obesity (R = 100,
    K at ε = 9)."""
    settings = [Setting("mnist", int(mnist_n), 35, 18.0, tuple(map(float, mnist_epsilons)))]
    for num_silos, n in insurance_n.items():
        settings.append(Setting(f"insurance-N{int(num_silos)}", int(n), 35, 3.0, tuple(map(float, insurance_epsilons))))
    settings.append(Setting("obesity", int(obesity_n), 100, 9.0, tuple(map(float, obesity_epsilons))))
    return settings


def noise_ratio_table(settings: Sequence[Setting]) -> pd.DataFrame:
    """Per setting: σ²_theory/σ²_experiments (Thm D.1 vs App. I), Thm D.1's smallest K and 2 ln(1/δ)."""
    rows = []
    for s in settings:
        ratio = isrl.variance_ratio_theory_to_experiments(s.rounds, s.delta)
        rows.append(dict(setting=s.name, n=s.n, R=s.rounds, K=s.batch_size, delta=s.delta, variance_ratio=ratio,
                         std_ratio=math.sqrt(ratio),
                         K_min_theory_at_eps_max=isrl.batch_size_theory_min(s.n, s.rounds, s.eps_max, s.delta),
                         eps_limit_2ln_1_over_delta=isrl.moments_accountant_epsilon_limit(s.delta)))
    return pd.DataFrame(rows)


def audit_settings(settings: Sequence[Setting], local_epsilons: Sequence[float]) -> list[isrl.CalibrationAudit]:
    """Tight ε of App. I's σ for MB-SGD at each setting's ε, and for Local SGD at ``local_epsilons`` ≤ ε_max."""
    audits = []
    for s in settings:
        common = dict(setting=s.name, n=s.n, rounds=s.rounds, batch_size=s.batch_size)
        audits += [isrl.audit_calibration(algorithm="mb-sgd", epsilon=e, **common) for e in s.epsilons]
        audits += [isrl.audit_calibration(algorithm="local-sgd", epsilon=float(e), **common)
                   for e in local_epsilons if e <= s.eps_max]
    return audits


def audit_frame(audits: Sequence[isrl.CalibrationAudit]) -> pd.DataFrame:
    """One row per audit (the figure's and the CSV's data)."""
    return pd.DataFrame([dict(setting=a.setting, algorithm=a.algorithm, claimed_epsilon=a.epsilon, n=a.n,
                              K=a.batch_size, R=a.rounds, delta=a.delta, sigma_over_L=a.noise_std_over_L,
                              epsilon_replace_one=a.epsilon_replace_one, epsilon_add_remove=a.epsilon_add_remove,
                              holds=a.holds) for a in audits])


def calibration_key(audit: isrl.CalibrationAudit) -> str:
    """The claim key of an audit, e.g. ``calib.mnist.mb-sgd.eps=12``."""
    return f"calib.{audit.setting}.{audit.algorithm}.eps={audit.epsilon:g}"


def calibration_value(spec: ClaimSpec, audit: isrl.CalibrationAudit) -> bool | float:
    """Our value for a calibration claim: ``holds`` for a bool claim, the tight replace-one ε for a numeric one.

    A setting where App. I's σ meets its ε is a bool claim (True); one where it does not is a
    numeric claim (the claimed ε, with an erratum giving the tight ε) -- see ``claims.py``.
    """
    if not isinstance(spec, ClaimSpec) or spec.key != calibration_key(audit):
        raise ValueError(f"spec must be the ClaimSpec {calibration_key(audit)!r}")
    return audit.holds if isinstance(spec.value, bool) else audit.epsilon_replace_one


def one_pass_table(epsilons: Sequence[float], batch_sizes: Sequence[int], n: int) -> pd.DataFrame:
    """σ/L of One-Pass Algorithm 1 (Thm E.1) and its exact ε at δ = 1/n², per (ε, K)."""
    delta = 1.0 / check_positive_int("n", n) ** 2
    rows = []
    for eps in epsilons:
        for k in batch_sizes:
            sigma = isrl.one_pass_noise_std(lipschitz=1.0, epsilon=eps, delta=delta, batch_size=k)
            rows.append(dict(epsilon=float(eps), K=int(k), n=n, sigma_over_L=sigma,
                             exact_epsilon=isrl.one_pass_epsilon(noise_std=sigma, lipschitz=1.0, batch_size=k,
                                                                 delta=delta)))
    return pd.DataFrame(rows)


def shuffle_table(eps0_values: Sequence[float], silo_counts: Sequence[int], *, delta: float = 1e-6) -> pd.DataFrame:
    """Central ε of one shuffled round of N silos' ε0-ISRL-DP reports (eq. (21), Thm D.5), n = 1."""
    return pd.DataFrame([dict(eps0=float(e0), n=1, N=int(num), delta=delta,
                              round_epsilon=isrl.shuffle_round_epsilon(e0, 1, num, delta))
                         for e0 in eps0_values for num in silo_counts])
