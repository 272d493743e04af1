"""Empirical privacy auditing: statistically valid *lower* bounds on ε, to set against the accountant's upper bound.

If an audit's lower bound exceeds the ε the accountant claims, the implementation leaks more than it claims.

* :mod:`~dpcore.audit.estimators` -- many-runs (Jagielski et al. 2020; Nasr et al. 2021/2023) and one-run
  (Steinke, Nasr, Jagielski 2023) estimators with Clopper–Pearson / binomial confidence;
* :mod:`~dpcore.audit.threat` -- the threat model every result carries, and :class:`AuditResult`;
* :mod:`~dpcore.audit.dirac` -- gradient-space Dirac canary audit of DP-SGD through :class:`dpcore.training.Trainer`;
* :mod:`~dpcore.audit.shuffled` -- batch and mixed clipping under shuffling (van Dijk et al.), against the A_1 ε
  and a labelled Poisson heuristic;
* :mod:`~dpcore.audit.federated` -- one ISRL-DP silo's messages (Lowy & Razaviyayn), against its per-silo ε;
* :mod:`~dpcore.audit.broken` -- broken variants (no clipping, half noise, reused noise seed) the audit must flag.
"""

from dpcore.audit.broken import BROKEN, broken, clipping_disabled, noise_scaled, noise_seed_reused
from dpcore.audit.dirac import SCORES, DiracSetting, audit_dirac, audit_one_run, dirac_scores, dirac_updates
from dpcore.audit.estimators import (
    ThresholdBound,
    clopper_pearson,
    epsilon_from_rates,
    one_run_epsilon,
    one_run_p_value,
    select_threshold,
    threshold_epsilon,
)
from dpcore.audit.federated import SiloSetting, audit_silo
from dpcore.audit.shuffled import ShuffleSetting, audit_shuffled
from dpcore.audit.threat import AuditResult, ThreatModel

__all__ = [
    "AuditResult",
    "BROKEN",
    "DiracSetting",
    "SCORES",
    "ShuffleSetting",
    "SiloSetting",
    "ThreatModel",
    "ThresholdBound",
    "audit_dirac",
    "audit_one_run",
    "audit_shuffled",
    "audit_silo",
    "broken",
    "clipping_disabled",
    "clopper_pearson",
    "dirac_scores",
    "dirac_updates",
    "epsilon_from_rates",
    "noise_scaled",
    "noise_seed_reused",
    "one_run_epsilon",
    "one_run_p_value",
    "select_threshold",
    "threshold_epsilon",
]
