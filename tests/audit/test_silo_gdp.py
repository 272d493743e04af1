"""dpcore.audit.silo_gdp and paper 001's audited modes: the unit-shift bound covers the truth on synthetic taps of
both clip scopes (and fails to with a wrong inclusion rate: the test has power), the real silo's taps have the
model's structure, the bound stays below the exact ε of the canary's pair, and bad inputs are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dpcore.audit.federated import SiloSetting, silo_noise_tap
from dpcore.audit.gdp import gaussian_shift
from dpcore.audit.silo_gdp import audit_silo_gdp, inclusion_rate, pair_epsilon
from dpcore.papers.p001_isrl import audit_claims, audit_modes
from dpcore.papers.p001_isrl.claims import CLAIMS, NOTEBOOKS

torch.set_num_threads(1)
_N, _K, _R, _SIGMA = 16, 5, 4, 0.4163


def _taps(rng, scope: str, taps: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Synthetic sign-corrected taps h(c) + σZ and pure noise σZ of the module's model; returns the true a."""
    c = rng.binomial(_K, 1.0 / _N, taps)
    h = c / _K if scope == "example" else (c >= 1).astype(float)
    a = 1.0 / (_K * _SIGMA) if scope == "example" else 1.0 / _SIGMA
    return h + rng.normal(0, _SIGMA, taps), rng.normal(0, _SIGMA, taps), a


@pytest.mark.parametrize("scope", ["example", "batch_mean"])
def test_unit_shift_bound_covers_the_truth_on_synthetic_taps(scope):
    rate = inclusion_rate(SiloSetting(records=_N, batch_size=_K, rounds=_R, noise_std=_SIGMA, clip_scope=scope))
    rng = np.random.default_rng(3)
    reps, conf, below, below_wrong = 300, 0.9, 0, 0
    for _ in range(reps):
        obs, noise, a = _taps(rng, scope, 4000)
        below += gaussian_shift(obs, noise, confidence=conf, rate=rate).mu_lower <= a
        below_wrong += gaussian_shift(obs, noise, confidence=conf, rate=0.5 * rate).mu_lower <= a
    assert below / reps >= conf - 3 * math.sqrt(conf * (1 - conf) / reps)
    assert below / reps <= 0.99  # informative, not always far below
    assert below_wrong / reps < 0.5  # a wrong inclusion rate breaks the coverage: the check can fail


def test_inclusion_rates():
    ex = SiloSetting(records=8, batch_size=4, rounds=1, noise_std=1.0)
    bm = SiloSetting(records=8, batch_size=4, rounds=1, noise_std=1.0, clip_scope="batch_mean")
    assert inclusion_rate(ex) == 0.5
    assert inclusion_rate(bm) == pytest.approx(1 - (7 / 8) ** 4)


def test_real_taps_have_the_model_structure():
    s = SiloSetting(records=_N, batch_size=_K, rounds=_R, noise_std=_SIGMA, clip_scope="batch_mean")
    u, z, record = silo_noise_tap(s, 3000, canary=True, seed=5)
    assert u.shape == z.shape == (3000, _R)
    assert z.std() == pytest.approx(_SIGMA, rel=0.03)  # the zero-gradient coordinate is the message noise
    assert abs(z.mean()) < 0.02
    # canary world: −C·1[c ≥ 1] + σZ, so E[−U] = C·p
    assert (-u).mean() == pytest.approx(inclusion_rate(s), abs=0.03)
    assert record.clipping == "batch"


@pytest.mark.parametrize("scope", ["example", "batch_mean"])
def test_audit_stays_below_the_exact_pair_epsilon(scope):
    s = SiloSetting(records=_N, batch_size=_K, rounds=_R, noise_std=_SIGMA, clip_scope=scope)
    truth = pair_epsilon(s, 1.0 / (_K * _SIGMA) if scope == "example" else 1.0 / _SIGMA, 1 / 256)
    res = audit_silo_gdp(s, 500, delta=1 / 256, seed=2)
    assert 0 < res.epsilon_lower <= truth <= res.epsilon_claimed + 1e-6
    if scope == "example":  # the canary's pair is the tight accountant's pair
        assert truth == pytest.approx(res.epsilon_claimed, rel=1e-6)


def test_refusals():
    with pytest.raises(ValueError, match="clip_scope"):
        SiloSetting(records=4, batch_size=2, rounds=1, noise_std=1.0, clip_scope="mean")
    s = SiloSetting(records=4, batch_size=2, rounds=1, noise_std=1.0)
    with pytest.raises(ValueError, match="unit_shift"):
        pair_epsilon(s, -0.1, 1e-3)
    with pytest.raises(ValueError, match="delta"):
        pair_epsilon(s, 0.1, 1.5)
    assert pair_epsilon(s, 0.0, 1e-3) == 0.0
    with pytest.raises(ValueError, match="runs"):
        audit_silo_gdp(s, 1, delta=1e-3)
    with pytest.raises(ValueError, match="setting"):
        audit_silo_gdp("silo", 10, delta=1e-3)
    with pytest.raises(ValueError, match="setting"):
        inclusion_rate(None)
    with pytest.raises(ValueError, match="records"):
        audit_modes.toy_setting("example", records=1, rounds=2, epsilon=1.0, clip_norm=1.0)
    with pytest.raises(ValueError, match="runs"):
        audit_modes.mode_audits(runs=0)


def test_p001_modes_batch_mean_exceeds_the_claim_and_per_record_does_not():
    df = audit_modes.mode_audits(runs=400, seed=1).set_index("mode")
    bm, ex = df.loc["authors_batch_mean"], df.loc["algorithm2_per_record"]
    assert bm.exceeds_claim and bm.within_accountant and bm.audited_lower > 3 * bm.claimed
    assert not ex.exceeds_claim and ex.within_accountant and ex.accounted <= ex.claimed
    assert set(audit_claims.AUDIT_CLAIMS) <= set(CLAIMS)
    assert any(nb.notebook == "audit/privacy_audit" for nb in NOTEBOOKS)
