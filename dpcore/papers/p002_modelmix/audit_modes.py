"""Paper 002's authors' configuration with its private normalisation, audited at toy scale (issue 42).

The authors' Table I code (mode ``all`` of :data:`dpcore.papers.p002_modelmix.training.MODES`; evidence
``normalization`` of :data:`~dpcore.papers.p002_modelmix.training.EVIDENCE`) releases Tramèr & Boneh's private
normalisation (σ = :data:`~dpcore.papers.p002_modelmix.training.AUTHORS_BN_NOISE` = 8, median thresholds) before
ModelMix training calibrated to the column's ε, and labels the run with the column ε: the normalisation is not in
the column.  Per Table I column ε of the ablation (0.2 and 1.0, :data:`COLUMNS`), at toy scale:

* ``claimed``: the column ε (δ = 1e-5), what the paper prints for the run;
* ``accounted``: the ε of what ran, RDP composition of the normalisation's two releases and the ModelMix training
  record (:func:`dpcore.training.private_norm.composed_epsilon`); the training is a Trainer run of ModelMix
  (τ = 0.01η, q = 1/2, T = 8, n = 1000 records, σ calibrated so that the training alone has the column ε under its
  own accountant, :func:`dpcore.accounting.records.epsilon_for_record`);
* ``audited_lower``: the GDP lower bound from the released channel mean alone
  (:func:`dpcore.audit.normalization.audit_normalization_gdp`, the code path
  :func:`~dpcore.training.private_norm.private_channel_statistics` with the authors' median rule): valid for the
  whole run, which carries the released mean in its model; it credits neither the training nor the second moment,
  so it is ≤ the truth by construction and can exceed the column ε only through the uncounted normalisation.
"""

from __future__ import annotations

import math
import time

import pandas as pd

from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.run_record import RunRecord
from dpcore.audit.dirac import DiracSetting, dirac_updates
from dpcore.audit.normalization import audit_normalization_gdp
from dpcore.papers.p002_modelmix.training import AUTHORS_BN_NOISE, DELTA
from dpcore.training.private_norm import NormalizationRecord, composed_epsilon
from dpcore.validation import check_open_unit, check_positive, check_positive_int

__all__ = ["COLUMNS", "TOY", "calibrated_training", "mode_audits"]

#: the Table I columns the authors' configuration runs at in the ablation (AblationGrid "paper": 1.0 and 0.2)
COLUMNS = (0.2, 1.0)
#: the toy training: ModelMix through the Trainer, q = 1/2, T = 8, n = block = 1000 records, τ = 0.01η
TOY = dict(sample_rate=0.5, steps=8, records=1000, tau_ratio=0.01)


def _setting(sigma: float) -> DiracSetting:
    return DiracSetting(noise_multiplier=sigma, sample_rate=TOY["sample_rate"], steps=TOY["steps"],
                        block=TOY["records"], reduce="mean", modelmix_tau_ratio=TOY["tau_ratio"])  # fmt: skip


def _with_sigma(record: RunRecord, sigma: float) -> RunRecord:
    return record.replace(noise_multiplier=sigma, noise_std=sigma * record.clip_norm)


def calibrated_training(target_epsilon: float, *, seed: int = 0) -> RunRecord:
    """The record of a toy ModelMix Trainer run (:data:`TOY`) whose σ is the smallest (bisection, rel. 1e-4) with
    ε(δ = 1e-5) ≤ ``target_epsilon`` under the record's accountant; the run is made at that σ."""
    target = check_positive("target_epsilon", target_epsilon)
    _, probe = dirac_updates(_setting(1.0), TOY["records"], canary=False, seed=seed)
    lo, hi = 0.05, 1.0
    while epsilon_for_record(_with_sigma(probe, hi), DELTA) > target:
        lo, hi = hi, 2 * hi
        if hi > 1e4:
            raise ValueError(f"target_epsilon must be reachable with σ ≤ 1e4 at the toy, got {target}")
    while hi - lo > 1e-4 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if epsilon_for_record(_with_sigma(probe, mid), DELTA) > target else (lo, mid)
    _, record = dirac_updates(_setting(hi), TOY["records"], canary=False, seed=seed)
    return record


def mode_audits(*, runs: int, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """One row per column of :data:`COLUMNS` (module docstring), with ``cpu_s`` per row."""
    runs = check_positive_int("runs", runs, minimum=2)
    confidence = check_open_unit("confidence", confidence)
    rows = []
    for i, eps in enumerate(COLUMNS):
        start = time.process_time()
        record = calibrated_training(eps, seed=seed + i)
        norm = NormalizationRecord.planned(AUTHORS_BN_NOISE, TOY["records"])
        total = composed_epsilon(record, norm, DELTA)
        res = audit_normalization_gdp(runs, records=TOY["records"], noise_multiplier=AUTHORS_BN_NOISE, delta=DELTA,
                                      claimed_epsilon=total.total, confidence=confidence,
                                      seed=seed + 100 * i)  # fmt: skip
        training = float(epsilon_for_record(record, DELTA))
        rows.append({
            "paper": "002", "mode": f"authors_configuration.eps{eps:g}", "clipping": "individual (ModelMix)",
            "runs_per_world": runs, "delta": DELTA, "claimed": eps, "accounted": total.total,
            "audited_lower": res.epsilon_lower, "audited_point": res.epsilon_point,
            "exceeds_claim": bool(res.epsilon_lower > eps), "within_accountant": bool(res.epsilon_lower <= total.total),
            "cpu_s": time.process_time() - start,
            "note": f"training alone ε {training:.4g} (σ = {record.noise_multiplier:.4g}, its accountant), "
                    f"normalisation alone {total.normalization:.4g} (RDP, σ = {AUTHORS_BN_NOISE:g}); audited from the "
                    f"released mean only; {res.claim_label}",
        })  # fmt: skip
        if not math.isfinite(total.total):
            raise ValueError(f"the composed ε of column {eps} is not finite: {total.description}")
    return pd.DataFrame(rows)
