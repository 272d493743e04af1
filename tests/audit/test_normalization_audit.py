"""dpcore.audit.normalization and paper 002's audited authors' configuration: the toy keeps the median thresholds
fixed, the released sums follow the Gaussian model, the μ bound covers 1/σ, the claims are registered, and bad
inputs are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dpcore.audit.gdp import gaussian_shift
from dpcore.audit.normalization import audit_normalization_gdp, released_means, toy_features
from dpcore.papers.p002_modelmix import audit_claims, audit_modes
from dpcore.papers.p002_modelmix.claims import CLAIMS, NOTEBOOKS
from dpcore.training.private_norm import median_thresholds

torch.set_num_threads(1)


def test_toy_thresholds_do_not_move_with_the_canary():
    assert median_thresholds(toy_features(50, canary=True)) == median_thresholds(toy_features(50, canary=False))
    x = toy_features(5, canary=True)
    assert x.shape == (6, 3, 2, 2) and float(x[:-1, 0].abs().sum()) == 0.0


def test_released_sums_follow_the_gaussian_model():
    c_m = median_thresholds(toy_features(20, canary=False))[0]
    s_in = released_means(3000, records=20, noise_multiplier=2.0, canary=True, seed=1)
    s_out = released_means(3000, records=20, noise_multiplier=2.0, canary=False, seed=1)
    assert s_in.mean() == pytest.approx(c_m, abs=4 * 2.0 * c_m / math.sqrt(3000))
    assert abs(s_out.mean()) < 4 * 2.0 * c_m / math.sqrt(3000)
    assert s_out.std() == pytest.approx(2.0 * c_m, rel=0.05) and s_in.std() == pytest.approx(2.0 * c_m, rel=0.05)


def test_mu_bound_covers_one_over_sigma():
    reps, conf, below = 60, 0.9, 0
    for r in range(reps):
        s_in = released_means(100, records=10, noise_multiplier=2.0, canary=True, seed=10 + r)
        s_out = released_means(100, records=10, noise_multiplier=2.0, canary=False, seed=10 + r)
        below += gaussian_shift(s_in, s_out, confidence=conf).mu_lower <= 0.5
    assert below / reps >= conf - 3 * math.sqrt(conf * (1 - conf) / reps)


def test_audit_row_and_refusals():
    res = audit_normalization_gdp(500, records=10, noise_multiplier=1.0, delta=1e-5, claimed_epsilon=10.0)
    assert 0 < res.epsilon_lower < res.epsilon_point and not res.flagged
    with pytest.raises(ValueError, match="runs"):
        audit_normalization_gdp(1, records=10, noise_multiplier=1.0, delta=1e-5, claimed_epsilon=1.0)
    with pytest.raises(ValueError, match="claimed_epsilon"):
        audit_normalization_gdp(10, records=10, noise_multiplier=1.0, delta=1e-5, claimed_epsilon=-1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        released_means(10, records=10, noise_multiplier=0.0, canary=True)
    with pytest.raises(ValueError, match="records"):
        toy_features(1, canary=False)
    with pytest.raises(ValueError, match="target_epsilon"):
        audit_modes.calibrated_training(0.0)
    with pytest.raises(ValueError, match="runs"):
        audit_modes.mode_audits(runs=1)


def test_p002_calibration_hits_the_column_and_claims_are_registered():
    from dpcore.accounting.records import epsilon_for_record

    record = audit_modes.calibrated_training(0.2)
    assert epsilon_for_record(record, 1e-5) == pytest.approx(0.2, rel=1e-3)
    assert set(audit_claims.AUDIT_CLAIMS) <= set(CLAIMS)
    assert set(audit_claims.COLUMN_KEYS) == set(audit_modes.COLUMNS)
    assert any(nb.notebook == "audit/privacy_audit" and nb.paper == "002" for nb in NOTEBOOKS)
    assert np.isfinite(record.noise_multiplier)
