"""The tight audits of issue 42 at the privacy-audit notebook's DP-SGD setting (suite.SETTING):
the GDP estimator with every update / the last iterate / ModelMix's mixed states observed, and the one-run game bounded
under the accountant's trade-off family beside Steinke et al.'s (ε, δ) bound (:mod:`dpcore.audit.tight`).  Each row
carries the goal of the issue (ratio lower bound / accountant ε) and whether it is met.
"""

from __future__ import annotations

import time

import pandas as pd

from dpcore.audit import DiracSetting
from dpcore.audit.tight import audit_dirac_gdp, audit_one_run_family
from dpcore.papers.audit.suite import MODELMIX_TAU_RATIO, SETTING
from dpcore.validation import check_open_unit, check_positive_int

__all__ = ["GOALS", "run_tight_suite"]

#: issue 42's goals: ratio of the audit's lower bound to the accountant's ε
GOALS = {"gdp_all": 0.90, "gdp_last": 0.80, "gdp_modelmix": 0.80, "one_run_fdp": 0.60, "one_run": 0.60}


def run_tight_suite(
    *, runs: int, one_run_canaries: int, one_run_guesses: int, delta: float, delta_small: float,
    confidence: float = 0.95, block: int = 1000, seed: int = 0,
) -> pd.DataFrame:  # fmt: skip
    """One row per tight audit (``label`` in :data:`GOALS`), with ``goal``, ``goal_met`` and ``cpu_s``."""
    runs = check_positive_int("runs", runs, minimum=block)
    delta, delta_small = check_open_unit("delta", delta), check_open_unit("delta_small", delta_small)
    plain = DiracSetting(**SETTING, block=block)
    mixed = DiracSetting(**SETTING, block=block, reduce="mean", modelmix_tau_ratio=MODELMIX_TAU_RATIO)
    jobs = {
        "gdp_all": lambda: [audit_dirac_gdp(plain, runs, delta=delta, confidence=confidence, seed=seed,
                                            mechanism="DP-SGD, all iterates, GDP estimator")],
        "gdp_last": lambda: [audit_dirac_gdp(plain, runs, delta=delta, confidence=confidence, seed=seed,
                                             iterates="last", mechanism="DP-SGD, last iterate, GDP estimator")],
        "gdp_modelmix": lambda: [audit_dirac_gdp(mixed, runs, delta=delta, confidence=confidence, seed=seed,
                                                 mechanism="ModelMix, mixed states, GDP estimator")],
        "one_run_fdp": lambda: list(audit_one_run_family(
            DiracSetting(**SETTING, block=one_run_canaries), guesses=one_run_guesses, delta=delta_small,
            confidence=confidence, seed=seed, mechanism="DP-SGD, one run, f-DP family")),
    }  # fmt: skip
    rows = []
    for label, job in jobs.items():
        start = time.process_time()
        results = job()
        cpu = time.process_time() - start
        for r, name in zip(results, (label, "one_run"), strict=False):
            rows.append({"label": name, **r.as_row(), "goal": GOALS[name], "goal_met": bool(r.ratio >= GOALS[name]),
                         "cpu_s": cpu})  # fmt: skip
    return pd.DataFrame(rows)
