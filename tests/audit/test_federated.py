"""One ISRL-DP silo's messages audited against its per-silo ε (dpcore.audit.federated, paper 001)."""

import pytest

from dpcore.audit import SiloSetting, audit_silo
from dpcore.audit.federated import silo_messages, silo_scores
from dpcore.papers.p001_isrl.accounting import mbsgd_epsilon

DELTA = 1e-3
SETTING = SiloSetting(records=4, batch_size=2, rounds=8, noise_std=1.0)


def per_silo_epsilon(record, delta, *, noise_factor=1.0):
    """Paper 001's with-replacement PLD accountant (replace-one) for a silo record (noise std on the sum: K·σ)."""
    k = record.batch_size
    return mbsgd_epsilon(noise_std=noise_factor * record.noise_std / k, lipschitz=record.clip_norm, batch_size=k,
                         n=record.dataset_size, rounds=record.steps, delta=delta)  # fmt: skip


def test_messages_are_the_silos_noisy_minibatch_means():
    """The canary (gradient −C e) is drawn Binomial(K, 1/n) times: the message coordinate has mean −C/n."""
    msgs, record = silo_messages(SETTING, 4000, canary=True, seed=1)
    assert msgs.shape == (4000, 8)
    assert msgs.mean() == pytest.approx(-0.25, abs=0.03)
    out, _ = silo_messages(SETTING, 4000, canary=False, seed=2)
    assert out.mean() == pytest.approx(0.25, abs=0.03)
    assert record.sampling == "replacement" and record.dataset_size == 4 and record.batch_size == 2
    assert record.steps == 8 and record.noise_std == pytest.approx(2.0)  # K·σ on the sum


def test_silo_stays_below_its_per_silo_epsilon():
    result = audit_silo(SETTING, 20_000, accountant=per_silo_epsilon, delta=DELTA, seed=0)
    assert result.epsilon_claimed == pytest.approx(4.71, abs=0.02)  # PLD, replace-one
    assert 1.5 < result.epsilon_lower <= result.epsilon_claimed and not result.flagged
    assert result.threat.neighbouring == "replace-one" and result.threat.runs == 10_000


def test_a_miscalibrated_silo_is_flagged():
    """A silo that claims the ε of 4× its real noise (a calibration bug) is caught."""
    result = audit_silo(SETTING, 20_000, delta=DELTA, seed=0,
                        accountant=lambda r, d: per_silo_epsilon(r, d, noise_factor=4.0))  # fmt: skip
    assert result.flagged and result.epsilon_lower > result.epsilon_claimed + 0.5


def test_validation():
    with pytest.raises(ValueError, match="batch_size"):
        SiloSetting(records=4, batch_size=5, rounds=2, noise_std=1.0)
    with pytest.raises(ValueError, match="accountant"):
        audit_silo(SETTING, 100, accountant=None, delta=DELTA)
    with pytest.raises(ValueError, match="score"):
        silo_scores(silo_messages(SETTING, 4, canary=True)[0], SETTING, "max")
