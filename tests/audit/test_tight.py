"""dpcore.audit.tight: a correct mechanism's GDP / family audit stays below its accountant's ε, a broken one (noise
divided by m) is flagged above the claim, the last-iterate ceiling is the Gaussian one at q = 1, the record's family
is its own accountant, and refusals name the parameter.  Small settings (a few seconds)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.accounting.gaussian import epsilon_from_mu
from dpcore.accounting.records import epsilon_for_record
from dpcore.audit import DiracSetting
from dpcore.audit.broken import noise_scaled
from dpcore.audit.dirac import dirac_updates
from dpcore.audit.shuffled import ShuffleSetting
from dpcore.audit.tight import (
    audit_dirac_gdp,
    audit_one_run_family,
    audit_shuffled_gdp,
    last_iterate_shift,
    one_run_bounds,
    record_family,
    sum_release_delta,
    sum_release_epsilon,
)

#: σ = 2, q = 1/2, T = 4, 100 runs per trainer call: ε ≈ 1.5 at δ = 1e-3
SMALL = dict(noise_multiplier=2.0, sample_rate=0.5, steps=4, clip_norm=1.0, block=100)
M = 4  # the "m" the broken variant divides the noise by


@pytest.mark.parametrize("iterates", ["all", "last"])
def test_correct_dpsgd_stays_below_its_accountant(iterates):
    r = audit_dirac_gdp(DiracSetting(**SMALL), 800, delta=1e-3, iterates=iterates, seed=3)
    assert 0.3 * r.epsilon_claimed < r.epsilon_lower <= r.epsilon_claimed  # informative and valid
    assert not r.flagged


def test_noise_divided_by_m_is_flagged_above_the_claim():
    with noise_scaled(1.0 / M):
        r = audit_dirac_gdp(DiracSetting(**SMALL), 400, delta=1e-3, seed=4)
    assert r.flagged and r.epsilon_lower > 2 * r.epsilon_claimed
    # and the bound stays below the ε of the mechanism that ran (noise multiplier σ/m)
    ran = record_family(dirac_updates(DiracSetting(**SMALL), 100, canary=False)[1], 1.0)
    assert r.epsilon_lower <= ran(M / SMALL["noise_multiplier"], 1e-3)


def test_shuffled_noise_over_m_exceeds_the_claim_but_not_the_mechanism_that_ran():
    """Paper 003's authors' placement (noise divided by m = |S_b| for individual clipping) through the trainer."""
    kw = dict(batch_size=4, rounds_per_epoch=2, epochs=2, noise_multiplier=2.0)
    claim = float(epsilon_from_mu(math.sqrt(kw["epochs"]) / kw["noise_multiplier"], 1e-5))
    broken = audit_shuffled_gdp(ShuffleSetting("individual", noise_placement="clipped_sum_noise_over_m", **kw), 60,
                                delta=1e-5, seed=1)  # fmt: skip
    assert broken.epsilon_lower > claim
    assert broken.epsilon_lower <= broken.epsilon_claimed  # the record accounts the σ/m that ran
    correct = audit_shuffled_gdp(ShuffleSetting("batch", **kw), 60, delta=1e-5, seed=2)
    assert correct.epsilon_lower <= correct.epsilon_claimed == pytest.approx(claim, rel=1e-6)


def test_one_run_family_bound_is_valid_for_a_correct_run():
    fam, plain = audit_one_run_family(DiracSetting(**{**SMALL, "block": 1000}), guesses=100, delta=1e-5, seed=0)
    assert 0.0 <= fam.epsilon_lower <= fam.epsilon_claimed
    assert 0.0 <= plain.epsilon_lower <= plain.epsilon_claimed
    assert fam.threat.estimator == "one-run-fdp" and plain.threat.estimator == "one-run"


def test_sum_release_at_q1_is_the_gaussian_of_sqrt_t_mu():
    for mu, steps in ((0.5, 4), (0.3, 9)):
        assert sum_release_epsilon(mu, 1.0, steps, 1e-3) == pytest.approx(
            float(epsilon_from_mu(math.sqrt(steps) * mu, 1e-3)), abs=2e-3
        )
    # subsampling (q < 1) releases less than q = 1
    assert sum_release_epsilon(0.5, 0.5, 4, 1e-3) < sum_release_epsilon(0.5, 1.0, 4, 1e-3)


def test_record_family_is_the_records_own_accountant():
    record = dirac_updates(DiracSetting(**SMALL), 100, canary=False)[1]
    compose = record_family(record, 1.0)
    assert compose(1.0 / SMALL["noise_multiplier"], 1e-3) == pytest.approx(float(epsilon_for_record(record, 1e-3)),
                                                                           rel=1e-6)  # fmt: skip
    # replace-one (paper 003's Algorithm 1, noise 2Cσ): a canary of norm C has per-step μ = 1/(2σ) (κ = 2)
    from dpcore.audit.shuffled import shuffled_updates

    shuffled = shuffled_updates(ShuffleSetting("batch", 4, 2, 2, 1.5), 1, canary=False)[2]
    assert shuffled.noise_convention == "replace_one"
    assert record_family(shuffled, 1.0)(1.0 / (2 * 1.5), 1e-3) == pytest.approx(
        float(epsilon_for_record(shuffled, 1e-3)), rel=1e-6
    )


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: audit_dirac_gdp(DiracSetting(**SMALL, reduce="mean", modelmix_tau_ratio=0.01), 100, delta=1e-3),
         "modelmix_tau_ratio"),
        (lambda: audit_dirac_gdp(DiracSetting(**SMALL), 100, delta=1e-3, iterates="middle"), "iterates"),
        (lambda: audit_dirac_gdp(DiracSetting(**SMALL), 100, delta=0.0), "delta"),
        (lambda: audit_dirac_gdp(DiracSetting(**SMALL), 100, delta=1e-3, confidence=1.0), "confidence"),
        (lambda: audit_dirac_gdp(DiracSetting(**SMALL), 50, delta=1e-3), "runs"),
        (lambda: audit_dirac_gdp("setting", 100, delta=1e-3), "setting"),
        (lambda: audit_one_run_family("setting", guesses=10, delta=1e-5), "setting"),
        (lambda: audit_one_run_family(DiracSetting(**SMALL), guesses=10, delta=2.0), "delta"),
        (lambda: audit_shuffled_gdp(ShuffleSetting("batch", 4, 2, 2, 1.0), 2, delta=1e-3), "runs"),
        (lambda: audit_shuffled_gdp(DiracSetting(**SMALL), 10, delta=1e-3), "setting"),
        (lambda: record_family("record", 1.0), "record"),
        (lambda: sum_release_delta(0.0, 0.5, 4, 1.0), "mu"),
        (lambda: sum_release_delta(0.5, 1.5, 4, 1.0), "rate"),
        (lambda: sum_release_delta(0.5, 0.5, 0, 1.0), "steps"),
        (lambda: sum_release_delta(0.5, 0.5, 4, -1.0), "epsilon"),
        (lambda: sum_release_epsilon(0.5, 0.5, 4, 1.0), "delta"),
    ],
)  # fmt: skip
def test_refusals_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_one_run_bounds_from_a_count_and_refusals():
    setting = DiracSetting(**{**SMALL, "block": 1000})
    record = dirac_updates(DiracSetting(**SMALL), 100, canary=False)[1]
    fam, plain = one_run_bounds(setting, record, guesses=100, correct=90, delta=1e-5)
    weak, _ = one_run_bounds(setting, record, guesses=100, correct=60, delta=1e-5)
    assert fam.epsilon > weak.epsilon >= 0 and plain > 0 and fam.m == 1000
    with pytest.raises(ValueError, match="record"):
        one_run_bounds(setting, "record", guesses=100, correct=90, delta=1e-5)
    with pytest.raises(ValueError, match="setting"):
        one_run_bounds("setting", record, guesses=100, correct=90, delta=1e-5)


def test_record_family_refuses_a_bad_canary():
    record = dirac_updates(DiracSetting(**SMALL), 100, canary=False)[1]
    with pytest.raises(ValueError, match="canary"):
        record_family(record, -1.0)


def test_last_iterate_path_covers_the_true_mu():
    """The last-iterate path of :func:`audit_dirac_gdp` on simulated final models, c·Binomial(T, q) + N(0, T s²)
    against N(0, T s²) (the setting of the audit table, σ = 2, q = 1/2, T = 8, C = c = 1): the per-step μ lower bound
    of :func:`last_iterate_shift` stays below c/s at its confidence over repeated draws, and is informative."""
    rng = np.random.default_rng(5)
    c, s, q, steps, n, conf, reps = 1.0, 2.0, 0.5, 8, 2000, 0.95, 300
    below, bounds = 0, []
    for _ in range(reps):
        sums_in = c * rng.binomial(steps, q, n) + rng.normal(0.0, s * math.sqrt(steps), n)
        sums_out = rng.normal(0.0, s * math.sqrt(steps), n)
        b = last_iterate_shift(sums_in, sums_out, steps=steps, rate=q, confidence=conf)
        below += b.mu_lower <= c / s
        bounds.append(b.mu_lower)
    assert below / reps >= conf - 3 * math.sqrt(conf * (1 - conf) / reps)
    assert below / reps <= 0.995 and np.median(bounds) > 0.8 * c / s
    # and ε: the sum's release ε at the bound stays below the truth whenever μ does (monotone in μ)
    assert sum_release_epsilon(min(bounds), q, steps, 1e-3) <= sum_release_epsilon(c / s, q, steps, 1e-3)
