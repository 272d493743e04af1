"""Paper 003's batch and mixed clipping under shuffling, audited through the trainer (dpcore.audit.shuffled)."""

import numpy as np
import pytest
import torch

from dpcore.accounting.gaussian import epsilon_from_mu
from dpcore.audit import AuditResult, ShuffleSetting, ThreatModel, audit_shuffled, broken
from dpcore.audit.shuffled import heuristic_epsilon, shuffled_scores, shuffled_updates

DELTA = 1e-3
#: |S_b| = 4, b = 2, E = 2, σ = 1: A_1 ε = ε(G_{√2}) ≈ 4.85 at δ = 1e-3
BC = ShuffleSetting("batch", batch_size=4, rounds_per_epoch=2, epochs=2, noise_multiplier=1.0)
MC = ShuffleSetting("mixed", batch_size=4, rounds_per_epoch=2, epochs=2, noise_multiplier=1.0, group_size=2)


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.mark.parametrize("setting", [BC, MC], ids=["BC", "MC"])
def test_updates_are_algorithm_1_under_shuffling(setting):
    """Each epoch exactly one round holds the canary; there U = C + N(0, (2Cσ)²) (clipped group mean, divided by m
    and multiplied back), elsewhere N(0, (2Cσ)²); the record is a shuffled replace-one run."""
    u, mask, record = shuffled_updates(setting, 60, canary=True, seed=7)
    assert u.shape == mask.shape == (60, 4)
    assert (mask.reshape(60, 2, 2).sum(2) == 1).all()  # one round per epoch
    assert u[mask].mean() == pytest.approx(1.0, abs=0.6)  # 120 draws, std 2: 3.3 standard errors
    assert abs(u[~mask].mean()) < 0.6 and u[~mask].std() == pytest.approx(2.0, rel=0.2)
    assert record.sampling == "shuffle" and record.noise_convention == "replace_one" and record.steps == 4
    assert record.clipping == setting.clipping and record.noise_std == pytest.approx(2.0)
    out, out_mask, _ = shuffled_updates(setting, 60, canary=False, seed=7)
    assert out[out_mask].mean() == pytest.approx(-1.0, abs=0.6)  # the neighbour's gradient −G, clipped to −C


@pytest.mark.parametrize("setting", [BC, MC], ids=["BC", "MC"])
def test_shuffled_clipping_stays_below_the_a1_epsilon(setting):
    results = audit_shuffled(setting, 200, delta=DELTA, seed=3)
    a1 = epsilon_from_mu(np.sqrt(2) / 1.0, DELTA)  # G_{√E/σ}, van Dijk et al. Thm F.1
    assert set(results) == {"A_1", "A_0", "A_0_heuristic"}
    for key in ("A_1", "A_0"):
        r = results[key]
        assert r.epsilon_claimed == pytest.approx(a1, rel=1e-3) and r.claim == "accountant"
        assert r.epsilon_lower <= r.epsilon_claimed and not r.flagged
    assert results["A_1"].threat.knows_batches and not results["A_0"].threat.knows_batches
    assert results["A_1"].epsilon_lower > 0.5  # the A_1 audit has power with 100 held-out runs per world
    h = results["A_0_heuristic"]
    assert h.claim == "heuristic" and "HEURISTIC" in h.claim_label
    assert h.epsilon_claimed == pytest.approx(heuristic_epsilon(setting, DELTA))
    assert h.epsilon_lower == results["A_0"].epsilon_lower  # same test, only the claimed ε differs


def test_batch_clipping_disabled_is_flagged():
    """Clipping off: the canary's full batch-mean gradient (10 C) reaches the update; σ = 4 claims A_1 ε ≈ 0.8."""
    setting = ShuffleSetting("batch", 4, 2, 2, noise_multiplier=4.0, canary_scale=10.0)
    with broken("clipping-disabled"):
        results = audit_shuffled(setting, 200, delta=DELTA, seed=5)
    assert results["A_1"].flagged and results["A_0"].flagged
    assert results["A_1"].epsilon_lower > results["A_1"].epsilon_claimed + 1.0


def test_validation():
    with pytest.raises(ValueError, match="group_size"):
        ShuffleSetting("mixed", 4, 2, 2, 1.0)
    with pytest.raises(ValueError, match="group_size"):
        ShuffleSetting("mixed", 4, 2, 2, 1.0, group_size=3)
    with pytest.raises(ValueError, match="group_size"):
        ShuffleSetting("batch", 4, 2, 2, 1.0, group_size=2)
    with pytest.raises(ValueError, match="clipping"):
        ShuffleSetting("none", 4, 2, 2, 1.0)
    with pytest.raises(ValueError, match="score"):
        shuffled_scores(np.zeros((2, 4)), np.zeros((2, 4), bool), BC, "max")
    with pytest.raises(ValueError, match="mask"):
        shuffled_scores(np.zeros((2, 4)), np.zeros((2, 3), bool), BC, "known")
    with pytest.raises(ValueError, match="runs"):
        audit_shuffled(BC, 2, delta=DELTA)
    with pytest.raises(ValueError, match="knows_batches"):
        ThreatModel("all", "replace-one", "x", "many-runs", 0.95, 10, knows_batches="yes")
    threat = ThreatModel("all", "replace-one", "x", "many-runs", 0.95, 10, knows_batches=True)
    assert "A_1" in threat.describe()
    with pytest.raises(ValueError, match="claim"):
        AuditResult("m", threat, 1.0, 1.0, 2.0, 1e-3, "known", 0.0, claim="guess")


@pytest.mark.parametrize(("scope", "shift"), [("global", 1.0), ("per_tensor", np.sqrt(2.0))])
def test_two_tensor_toy_moves_by_the_clip_scopes_bound(scope, shift):
    """Two parameter tensors, the canary in both: along its unit direction the canary's round moves by C (global
    clipping: the 2-vector clipped to C) or C·√2 (each tensor clipped to C, the authors' per-tensor scope); the noise
    stays N(0, (2Cσ)²); the record reports clip norm C·√k and σ/√k for per-tensor clipping (the mechanism that ran)."""
    setting = ShuffleSetting("batch", 4, 2, 2, 1.0, clip_scope=scope, tensors=2)
    assert setting.clipped_shift == pytest.approx(shift)
    u, mask, record = shuffled_updates(setting, 60, canary=True, seed=9)
    assert u[mask].mean() == pytest.approx(shift, abs=0.6) and u[~mask].std() == pytest.approx(2.0, rel=0.2)
    assert record.clip_norm == pytest.approx(shift) and record.noise_multiplier == pytest.approx(1.0 / shift)
    assert record.noise_std == pytest.approx(2.0)


def test_per_tensor_needs_two_tensors_and_a_known_scope():
    with pytest.raises(ValueError, match="tensors"):
        ShuffleSetting("batch", 4, 2, 2, 1.0, clip_scope="per_tensor")
    with pytest.raises(ValueError, match="clip_scope"):
        ShuffleSetting("batch", 4, 2, 2, 1.0, clip_scope="per_layer", tensors=2)
    with pytest.raises(ValueError, match="tensors"):
        ShuffleSetting("batch", 4, 2, 2, 1.0, tensors=0)


def test_shuffled_suite_lower_bounds_are_the_librarys_below_a1():
    """The shuffled rows' lower bounds for shuffling (replace-one pair, the canary's Dirac pair) are the library's,
    below the A_1 upper bound; a bad setting is refused by name."""
    from dpcore.accounting.shuffle_lower import DIRAC_PAIR, REPLACE_ONE_PAIR, shuffle_lower_epsilon
    from dpcore.papers.audit.suite import shuffled_lower_bounds

    lower = shuffled_lower_bounds(BC, DELTA)
    kw = dict(rounds_per_epoch=2, epochs=2, delta=DELTA)
    assert lower["shuffled_lower"] == shuffle_lower_epsilon(1.0, pair=REPLACE_ONE_PAIR, **kw)
    assert lower["shuffled_lower_canary"] == shuffle_lower_epsilon(1.0, pair=DIRAC_PAIR, **kw)
    assert 0 < lower["shuffled_lower_canary"] < lower["shuffled_lower"] < epsilon_from_mu(np.sqrt(2.0), DELTA)
    with pytest.raises(ValueError, match="setting"):
        shuffled_lower_bounds("BC", DELTA)
    with pytest.raises(ValueError, match="delta"):
        shuffled_lower_bounds(BC, 0.0)
