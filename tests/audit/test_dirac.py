"""Dirac-canary audit of DP-SGD through the trainer: a correct run stays below its ε, broken ones are flagged."""

import numpy as np
import pytest
import torch
from torch import nn

from dpcore.accounting.dpsgd import dpsgd_epsilon
from dpcore.audit import (
    BROKEN,
    DiracSetting,
    ThreatModel,
    audit_dirac,
    audit_one_run,
    broken,
    dirac_scores,
    dirac_updates,
    noise_scaled,
)
from dpcore.training import TrainConfig, Trainer, check_model
from dpcore.training.trainer import Privatizer

#: claimed ε(δ = 1e-3) ≈ 2.37 (PLD); the audit measures a lower bound ≈ 1.5 with 5,000 + 5,000 runs
SETTING = DiracSetting(noise_multiplier=2.0, sample_rate=0.5, steps=8, block=1000)
DELTA = 1e-3
RUNS = 10_000


def test_updates_are_the_trainers_mechanism():
    """Without the canary an update coordinate is N(0, (σC)²); with it (q = 1) its mean is C: the vectorised
    trainer runs are the Gaussian mechanism on the canary coordinate."""
    setting = DiracSetting(noise_multiplier=2.0, sample_rate=1.0, steps=2, block=500)
    out, record = dirac_updates(setting, 1000, canary=False, seed=1)
    inn, _ = dirac_updates(setting, 1000, canary=True, seed=1)
    assert out.shape == (1000, 2)
    assert abs(out.mean()) < 0.15 and out.std() == pytest.approx(2.0, rel=0.06)
    assert inn.mean() == pytest.approx(1.0, abs=0.15)
    assert record.sampling == "poisson" and record.noise_multiplier == 2.0 and record.steps == 2
    big = DiracSetting(noise_multiplier=2.0, sample_rate=1.0, steps=2, block=500, canary_norm=5.0)
    clipped, _ = dirac_updates(big, 500, canary=True, seed=1)
    assert clipped.mean() == pytest.approx(1.0, abs=0.2)  # a canary of norm 5 is clipped to C = 1


def test_correct_dpsgd_stays_below_its_epsilon():
    result = audit_dirac(SETTING, RUNS, delta=DELTA, seed=0)
    claimed = dpsgd_epsilon(2.0, sample_rate=0.5, steps=8, delta=DELTA)
    assert result.epsilon_claimed == pytest.approx(claimed, rel=1e-6)
    assert not result.flagged
    assert 0.3 * claimed < result.epsilon_lower <= claimed  # the audit has power, and stays below
    assert result.threat.iterates == "all" and result.threat.neighbouring == "add/remove"
    assert result.threat.runs == RUNS // 2


@pytest.mark.parametrize("name", BROKEN)
def test_broken_variant_is_flagged(name):
    canary = 10.0 if name == "clipping-disabled" else None  # a canary gradient of norm 10 C
    setting = DiracSetting(noise_multiplier=2.0, sample_rate=0.5, steps=8, block=1000, canary_norm=canary)
    with broken(name):
        result = audit_dirac(setting, RUNS if name == "noise-x0.5" else 4000, delta=DELTA, seed=2)
    assert result.flagged, result
    assert result.epsilon_lower > result.epsilon_claimed + 0.3


def test_broken_patches_are_undone():
    original = Privatizer.noise
    with noise_scaled(0.5):
        assert Privatizer.noise is not original
    assert Privatizer.noise is original
    with pytest.raises(ValueError, match="name"):
        broken("no-noise")


def test_last_iterate_only_uses_the_final_model():
    result = audit_dirac(DiracSetting(2.0, 0.5, 8, block=1000), 4000, delta=DELTA, iterates="last", seed=3)
    assert result.score == "sum" and result.threat.iterates == "last"
    assert result.epsilon_lower <= result.epsilon_claimed


def test_batchnorm_on_private_data_is_refused():
    """The fourth broken variant, a BatchNorm layer updated from private data, never runs: the trainer refuses it."""
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    with pytest.raises(ValueError, match="BatchNorm1d"):
        check_model(model, private=True)
    cfg = TrainConfig(sampling="poisson", batch_size=4, steps=1, noise_multiplier=1.0, device="cpu")
    with pytest.raises(ValueError, match="GroupNorm"):
        Trainer(model, (torch.zeros(8, 3), torch.zeros(8, dtype=torch.long)), cfg)


def test_scores_and_validation():
    u = np.array([[1.0, -1.0], [0.0, 0.0]])
    assert dirac_scores(u, SETTING, "sum").tolist() == [0.0, 0.0]
    assert dirac_scores(u, SETTING, "spread").tolist() == [2.0, 0.0]
    lik = dirac_scores(u, SETTING, "likelihood")
    assert lik[0] > lik[1]  # a +1 and a -1 carry more evidence for the canary than two zeros (log-convex)
    with pytest.raises(ValueError, match="score"):
        dirac_scores(u, SETTING, "max")
    with pytest.raises(ValueError, match="sample_rate"):
        DiracSetting(1.0, 0.3333, 4, block=1000)
    with pytest.raises(ValueError, match="multiple"):
        dirac_updates(SETTING, 1500, canary=True)
    with pytest.raises(ValueError, match="iterates"):
        audit_dirac(SETTING, 2000, delta=DELTA, iterates="some")
    with pytest.raises(ValueError, match="estimator"):
        ThreatModel("all", "add/remove", "x", "guess", 0.95, 10)


def test_one_run_audit_stays_below_and_has_power():
    setting = DiracSetting(noise_multiplier=2.0, sample_rate=0.5, steps=8, block=4000)
    result = audit_one_run(setting, guesses=400, delta=1e-5, seed=0)
    assert result.threat.estimator == "one-run" and result.threat.runs == 1
    assert 0.5 < result.epsilon_lower <= result.epsilon_claimed
    with pytest.raises(ValueError, match="guesses"):
        audit_one_run(setting, guesses=401, delta=1e-5)


def test_modelmix_mixed_states_stay_below_the_amplified_epsilon():
    setting = DiracSetting(2.0, 0.5, 8, block=1000, reduce="mean", modelmix_tau_ratio=0.01)
    result = audit_dirac(setting, 6000, delta=DELTA, seed=4, mechanism="ModelMix")
    plain = dpsgd_epsilon(2.0, sample_rate=0.5, steps=8, delta=DELTA)
    assert result.epsilon_claimed < plain  # the amplified ε (the accountant's choice for a ModelMix record)
    assert result.epsilon_lower <= result.epsilon_claimed
