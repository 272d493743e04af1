"""Paper 001's authors' batch-mean clipping, audited at toy scale with the mechanism that ran (issue 42).

The authors' insurance script clips each silo's minibatch *mean* once (mode ``authors_batch_mean``,
:func:`dpcore.papers.p001_isrl.panels.insurance_batch_mean_mode`; lowya/Private-Federated-Learning-Without-a-Trusted-
Server@421aeb6, ``DP_FL_insurance_linreg_FINAL.py`` l. 187-190) with App. I's σ, which is calibrated for Algorithm
2's per-record clipping: one record then moves a message by 2L instead of 2L/K, the noise is K× too small.  Both clip
scopes run through :func:`dpcore.federated.algorithms.mb_sgd` (``clip_scope``) at one toy silo setting (n = 16
records, R = 4 rounds, K and σ from App. I at the claimed ε = 2, δ = 1/n², as the panels' calibration does:
:func:`~dpcore.papers.p001_isrl.accounting.noise_std` and ``batch_size_experiments``),
audited by :func:`dpcore.audit.silo_gdp.audit_silo_gdp` (every message of silo 0, replace-one canary, GDP-style
estimator with the noise measured in the same messages).  Each row: ``claimed`` (App. I's ε), ``accounted`` (the
record's accountant: tight with-replacement PLD for per-record clipping, the no-amplification GDP upper bound
:func:`dpcore.accounting.replacement.batch_mean_epsilon_upper` for the batch mean) and ``audited_lower``.
"""

from __future__ import annotations

import time

import pandas as pd

from dpcore.audit.federated import SiloSetting
from dpcore.audit.silo_gdp import audit_silo_gdp
from dpcore.papers.p001_isrl import accounting as isrl
from dpcore.validation import check_open_unit, check_positive, check_positive_int

__all__ = ["TOY", "MODES", "toy_setting", "mode_audits"]

#: the toy silo: n records, R rounds, the claimed ε (δ = 1/n², App. I), clip C = L = 1, two silos
TOY = dict(records=16, rounds=4, epsilon=2.0, clip_norm=1.0)
#: mode name -> MB-SGD clip scope: the paper's Algorithm 2 (the reference) and the authors' insurance script
MODES = {"algorithm2_per_record": "example", "authors_batch_mean": "batch_mean"}


def toy_setting(clip_scope: str, *, records: int, rounds: int, epsilon: float, clip_norm: float) -> SiloSetting:
    """The silo of App. I's calibration at (ε, δ = 1/n²): K = :func:`isrl.batch_size_experiments`, σ =
    :func:`isrl.noise_std` (``formula="experiments"``, L = C), with ``clip_scope`` ("example" or "batch_mean")."""
    records = check_positive_int("records", records, minimum=2)
    rounds = check_positive_int("rounds", rounds)
    epsilon = check_positive("epsilon", epsilon)
    clip_norm = check_positive("clip_norm", clip_norm)
    k = isrl.batch_size_experiments(records, rounds, epsilon)
    sigma = isrl.noise_std(lipschitz=clip_norm, rounds=rounds, n=records, epsilon=epsilon, delta=1.0 / records**2,
                           batch_size=k)  # fmt: skip
    return SiloSetting(records=records, batch_size=k, rounds=rounds, noise_std=sigma, clip_norm=clip_norm,
                       clip_scope=clip_scope)  # fmt: skip


def mode_audits(*, runs: int, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """One row per mode of :data:`MODES` at :data:`TOY`: ``claimed``, ``accounted``, ``audited_lower`` (95 %),
    ``audited_point``, ``exceeds_claim``, ``within_accountant``, ``cpu_s`` (CPU seconds of the row)."""
    runs = check_positive_int("runs", runs, minimum=2)
    confidence = check_open_unit("confidence", confidence)
    delta = 1.0 / TOY["records"] ** 2
    rows = []
    for i, (mode, scope) in enumerate(MODES.items()):
        start = time.process_time()
        setting = toy_setting(scope, **TOY)
        res = audit_silo_gdp(setting, runs, delta=delta, confidence=confidence, seed=seed + 100 * i,
                             mechanism=f"ISRL-DP MB-SGD ({mode}), one silo's messages")  # fmt: skip
        rows.append({
            "paper": "001", "mode": mode, "clipping": scope, "runs_per_world": runs, "delta": delta,
            "claimed": TOY["epsilon"], "accounted": res.epsilon_claimed, "audited_lower": res.epsilon_lower,
            "audited_point": res.epsilon_point, "exceeds_claim": bool(res.epsilon_lower > TOY["epsilon"]),
            "within_accountant": bool(res.epsilon_lower <= res.epsilon_claimed),
            "cpu_s": time.process_time() - start,
            "note": f"n = {setting.records}, K = {setting.batch_size}, R = {setting.rounds}, "
                    f"σ = {setting.noise_std:.4g} (App. I at ε = {TOY['epsilon']:g}); {res.claim_label}",
        })  # fmt: skip
    return pd.DataFrame(rows)
