"""dpcore.audit.modelmix_exact: the exact ModelMix toy curve, the trajectory likelihood ratio and the audit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from dpcore.accounting import modelmix as mm
from dpcore.accounting.pld import pld_epsilon
from dpcore.audit import DiracSetting
from dpcore.audit.estimators import held_out_bound
from dpcore.audit.modelmix_exact import (
    _states,
    audit_modelmix,
    exact_delta,
    exact_epsilon,
    interval_residuals,
    residual_bound,
    simulate_toy,
    toy_epsilon_mc,
    trajectory_llr,
    width_monotone,
)

torch.set_num_threads(1)
TOY = dict(steps=8, tau=5.0, canary=1.0, noise=2.0, rate=0.5)


def test_tiny_width_brackets_the_subsampled_gaussian_pld():
    lo, hi = exact_epsilon(1e-3, noise=2.0, width=1e-3, rate=0.5, steps=8)
    truth = pld_epsilon(2.0, sample_rate=0.5, steps=8, delta=1e-3)
    assert lo <= truth + 1e-3 and truth <= hi + 1e-3 and hi - lo < 0.01


def test_one_step_q1_matches_direct_quadrature():
    # one unsubsampled step: δ(ε) = ∫ (p1 − e^ε p0)₊ by a fine Riemann sum, a different method
    x = np.linspace(-40, 42, 800_001)
    lp0 = mm.log_mixture_density(x, shift=0.0, noise=2.0, width=5.0)
    lp1 = mm.log_mixture_density(x, shift=1.0, noise=2.0, width=5.0)
    for eps in (0.0, 0.1, 0.3):
        direct = float(np.clip(np.exp(lp1) - math.exp(eps) * np.exp(lp0), 0, None).sum() * (x[1] - x[0]))
        lo, hi = exact_delta(eps, noise=2.0, width=5.0, rate=1.0, steps=1)
        assert lo - 1e-6 <= direct <= hi + 1e-6


def test_exact_below_the_rdp_accountant_and_monotone_in_width():
    lo, hi = exact_epsilon(1e-3, noise=2.0, width=5.0, rate=0.5, steps=8)
    setting = mm.ModelMixSetting(n=1000, batch_size=500, noise_multiplier=2.0, clip=1.0, tau=0.01)
    acc = mm.epsilon(setting, steps=8, delta=1e-3)
    assert hi < acc  # the RDP bound is an upper bound, and a loose one here
    assert 1.80 < lo <= hi < 1.90
    assert width_monotone(noise=2.0, widths=np.array([5.0, 6.0, 8.0]), rate=0.5, epsilons=np.array([0.1, 0.5, 1.0]),
                          loss_grid=1e-3)  # fmt: skip


def test_mc_toy_epsilon_covers_the_exact_curve_when_widths_are_constant():
    # τ much wider than any gap: every width is exactly τ, so the toy's ε is the exact curve's
    kw = dict(steps=3, tau=60.0, canary=1.0, noise=1.0, rate=0.5)
    y = simulate_toy(2000, present=False, rng=np.random.default_rng(1), **kw)
    _, widths = interval_residuals(y, tau=60.0)
    assert np.allclose(widths, 60.0)
    lo, hi = exact_epsilon(1e-2, noise=1.0, width=60.0, rate=0.5, steps=3)
    mc = toy_epsilon_mc(1e-2, samples=100_000, seed=3, **kw)
    assert mc.epsilon_lower <= hi + 1e-3 and lo <= mc.epsilon_upper + 1e-3


def test_trainer_states_match_the_numpy_replica():
    setting = DiracSetting(noise_multiplier=2.0, sample_rate=0.5, steps=8, block=500, reduce="mean",
                           modelmix_tau_ratio=0.02)  # fmt: skip
    tau = 0.02 * 250
    y, record = _states(setting, 1000, canary=True, seed=4)
    assert record.modelmix is not None
    ref = simulate_toy(4000, present=True, rng=np.random.default_rng(2), **{**TOY, "tau": tau})
    a = trajectory_llr(y, tau=tau, canary=1.0, noise=2.0, rate=0.5)
    b = trajectory_llr(ref, tau=tau, canary=1.0, noise=2.0, rate=0.5)
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    # near-zero noise: every residual lies in its interval (the intervals are read off the released states)
    quiet = DiracSetting(noise_multiplier=1e-6, sample_rate=0.5, steps=8, block=500, reduce="mean",
                         modelmix_tau_ratio=0.02)  # fmt: skip
    yq, _ = _states(quiet, 500, canary=False, seed=0)
    e, w = interval_residuals(yq, tau=tau)
    assert np.all(np.abs(e) <= w / 2 + 1e-4) and np.all(w >= tau - 1e-9)


def test_residual_bound_coverage_on_known_truth():
    rng = np.random.default_rng(7)
    cover_c = cover_s = 0
    reps, conf = 200, 0.9
    for _ in range(reps):
        y1 = simulate_toy(200, present=True, rng=rng, **TOY)
        y0 = simulate_toy(200, present=False, rng=rng, **TOY)
        e1, w1 = interval_residuals(y1, tau=5.0)
        e0, w0 = interval_residuals(y0, tau=5.0)
        b = residual_bound(e1, w1, e0, w0, rate=0.5, confidence=conf)
        cover_c += b.shift_lower <= 1.0
        cover_s += b.noise_upper >= 2.0
    # each one-sided bound is at level (1 − conf)/2 = 0.05: coverage 0.95, binomial slack for 200 draws
    assert cover_c / reps >= 0.90 and cover_s / reps >= 0.90


def test_llr_threshold_bound_stays_below_the_toy_epsilon():
    rng = np.random.default_rng(11)
    truth = toy_epsilon_mc(1e-2, samples=100_000, seed=5, **TOY).epsilon_lower
    above = 0
    for _ in range(30):
        s1 = trajectory_llr(simulate_toy(1000, present=True, rng=rng, **TOY), tau=5.0, canary=1.0, noise=2.0, rate=0.5)
        s0 = trajectory_llr(simulate_toy(1000, present=False, rng=rng, **TOY), tau=5.0, canary=1.0, noise=2.0,
                            rate=0.5)  # fmt: skip
        _, bound, _ = held_out_bound(lambda _n, a=s1, b=s0: (a, b), ["llr"], delta=1e-2, confidence=0.9)
        above += bound.epsilon > truth
    assert above <= 6  # at most 10 % expected; binomial slack


def test_audit_rows_are_below_the_truth_and_labelled():
    setting = DiracSetting(noise_multiplier=2.0, sample_rate=0.5, steps=8, block=250, reduce="mean",
                           modelmix_tau_ratio=0.04)  # fmt: skip
    r = audit_modelmix(setting, 1000, delta=1e-3, mc_samples=20_000)
    assert r.family.threat.estimator == "many-runs-gdp" and r.threshold.threat.estimator == "many-runs"
    assert 0 <= r.threshold.epsilon_lower <= r.toy.epsilon_upper
    assert 0 <= r.family.epsilon_lower <= r.family.epsilon_claimed
    assert r.exact_width_tau[1] < r.family.epsilon_claimed
    assert "accountant is loose" in r.family.claim_label and "statistical factor" in r.family.claim_label


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: exact_epsilon(1e-3, noise=-1.0, width=5.0, rate=0.5, steps=8), "noise"),
        (lambda: exact_epsilon(1e-3, noise=2.0, width=0.0, rate=0.5, steps=8), "width"),
        (lambda: exact_epsilon(1e-3, noise=2.0, width=5.0, rate=1.5, steps=8), "rate"),
        (lambda: exact_epsilon(1e-3, noise=2.0, width=5.0, rate=0.5, steps=0), "steps"),
        (lambda: exact_epsilon(2.0, noise=2.0, width=5.0, rate=0.5, steps=8), "delta"),
        (lambda: exact_delta(-1.0, noise=2.0, width=5.0, rate=0.5, steps=8), "epsilon"),
        (lambda: exact_epsilon(1e-3, noise=2.0, width=5.0, rate=0.5, steps=8, loss_grid=1.0), "loss_grid"),
        (lambda: interval_residuals(np.zeros((3, 1)), tau=1.0), "states"),
        (lambda: interval_residuals(np.zeros((3, 4)), tau=-1.0), "tau"),
        (lambda: interval_residuals(np.zeros((3, 4)), tau=1.0, gap_rule="wide"), "gap_rule"),
        (lambda: residual_bound(np.zeros(5), np.zeros(5), np.zeros(200), np.zeros(200), rate=0.5), "e_in"),
        (lambda: toy_epsilon_mc(1e-3, samples=10, **TOY), "samples"),
        (
            lambda: audit_modelmix(DiracSetting(noise_multiplier=2.0, sample_rate=0.5, steps=8), 2000, delta=1e-3),
            "modelmix_tau_ratio",
        ),
    ],
)
def test_refuses_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_the_gaussian_shift_audit_refuses_modelmix():
    """The Gaussian-shift estimate composed by the ModelMix accountant is no valid lower bound: refused, naming it."""
    from dpcore.audit.tight import audit_dirac_gdp

    mixed = DiracSetting(2.0, 0.5, 8, block=10, reduce="mean", modelmix_tau_ratio=0.02)
    with pytest.raises(ValueError, match="modelmix_tau_ratio.*audit_modelmix"):
        audit_dirac_gdp(mixed, 10, delta=1e-3)


def test_audit_ceiling_is_quoted_one_way():
    """The ModelMix ceiling (the toy's exact ε over the claim) is quoted by one function in every table."""
    from dpcore.audit.modelmix_exact import ToyEpsilon, audit_ceiling, ceiling_text

    toy = ToyEpsilon(1.832, 1.815, 1.851, 400_000, 0.95)
    point, upper = audit_ceiling(toy, 2.205)
    assert point == pytest.approx(1.832 / 2.205) and upper == pytest.approx(1.851 / 2.205)
    assert ceiling_text(toy, 2.205) == ("no valid audit of this toy exceeds ratio 0.83 (MC estimate; 0.84 at its "
                                        "95 % upper bound)")  # fmt: skip
    with pytest.raises(ValueError, match="toy"):
        audit_ceiling(1.8, 2.2)
    with pytest.raises(ValueError, match="claimed"):
        audit_ceiling(toy, 0.0)
