"""dpcore.audit.fdp_one_run: the family one-run bound holds its confidence on a simulated Gaussian guessing game,
is at least Steinke et al.'s (ε, δ) bound's information, and refuses bad input."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from dpcore.accounting.gaussian import delta_from_mu, epsilon_from_mu
from dpcore.audit.estimators import one_run_p_value
from dpcore.audit.fdp_one_run import family_p_value, one_run_family_bound


def _delta_of(theta, eps):
    return float(delta_from_mu(theta, eps))


def _epsilon_of(theta, delta):
    return float(epsilon_from_mu(theta, delta))


def _game(rng, mu, m, r):
    """m canaries in w.p. 1/2; score N(±mu/2, 1) (a mu-GDP mechanism per canary); guess the r/2 top and bottom."""
    present = rng.random(m) < 0.5
    scores = rng.normal(np.where(present, mu / 2, -mu / 2), 1.0)
    order = np.argsort(scores)
    k = r // 2
    return int(present[order[-k:]].sum() + (~present[order[:k]]).sum())


def test_family_bound_covers_the_true_mu():
    mu, m, r, reps = 2.0, 1000, 100, 20
    rng = np.random.default_rng(0)
    ok = 0
    for _ in range(reps):
        v = _game(rng, mu, m, r)
        b = one_run_family_bound(m, r, v, delta_of=_delta_of, epsilon_of=_epsilon_of, delta=1e-5, confidence=0.95,
                                 tol=2e-2, eps_grid=np.linspace(0, 8, 17))  # fmt: skip
        ok += b.theta_lower <= mu
    assert ok >= reps - 2  # 95 % confidence, allowing Monte Carlo slack
    assert b.theta_lower > 0.5  # and informative


def test_family_p_value_is_the_minimum_over_epsilon():
    p = family_p_value(100, 50, 45, lambda e: _delta_of(1.0, e), eps_grid=(0.5, 1.0))
    direct = min(one_run_p_value(100, 50, 45, e, _delta_of(1.0, e)) for e in (0.5, 1.0))
    assert p == pytest.approx(direct)


def test_nothing_to_reject_gives_zero():
    b = one_run_family_bound(100, 10, 5, delta_of=_delta_of, epsilon_of=_epsilon_of, delta=1e-5)
    assert b.theta_lower == 0.0 and b.epsilon == 0.0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"v": 11}, "v"), ({"delta": 0.0}, "delta"), ({"confidence": 1.0}, "confidence"), ({"tol": -1.0}, "tol")],
)
def test_refuses_bad_input(kwargs, name):
    args = dict(m=100, r=10, v=8, delta_of=_delta_of, epsilon_of=_epsilon_of, delta=1e-5) | kwargs
    with pytest.raises(ValueError, match=name):
        one_run_family_bound(**args)


# ---------------------------------------------------------------------------------------------- recursive (MMC 2024)
@functools.cache
def _gaussian_mu_lower(m: int, r: int, v: int, conf: float) -> float:
    """sup of the μ the recursive test rejects (bisection to 0.005; rejection is monotone in μ): the μ lower bound.

    Cached: it depends on the game's outcome only through the count ``v`` of correct guesses, which repeats across
    the simulated games (the same bounds, computed once per distinct count; issue 54)."""
    from dpcore.audit.fdp_one_run import gaussian_inverse_blow_up, recursive_consistent

    lo, hi = 0.0, 6.0
    while hi - lo > 0.005:
        mid = 0.5 * (lo + hi)
        consistent = recursive_consistent(m, r, v, gaussian_inverse_blow_up(mid), confidence=conf)
        lo, hi = (lo, mid) if consistent else (mid, hi)
    return lo


def test_recursive_bound_covers_the_true_mu_of_a_gaussian_guessing_game():
    """m canaries, each in w.p. 1/2, each score N(μ·b, 1) (every canary μ-GDP); the auditor guesses 'in' for the
    top r/2 scores and 'out' for the bottom r/2.  The μ lower bound stays below the true μ at its confidence, and is
    not vacuous."""
    rng = np.random.default_rng(11)
    m, r, mu, conf, reps = 1000, 200, 1.0, 0.9, 150
    below, bounds = 0, []
    for _ in range(reps):
        b = rng.random(m) < 0.5
        s = rng.normal(mu * b, 1.0)
        order = np.argsort(s)
        v = int(b[order[-r // 2 :]].sum() + (~b[order[: r // 2]]).sum())
        lb = _gaussian_mu_lower(m, r, v, conf)
        bounds.append(lb)
        below += lb <= mu
    assert below / reps >= conf - 3 * np.sqrt(conf * (1 - conf) / reps)
    assert np.median(bounds) > 0.5 * mu


def test_recursive_bound_refutes_a_too_private_claim_and_keeps_a_true_one():
    from dpcore.audit.fdp_one_run import gaussian_inverse_blow_up, recursive_consistent

    assert not recursive_consistent(1000, 200, 190, gaussian_inverse_blow_up(0.2), confidence=0.95)
    assert recursive_consistent(1000, 200, 190, gaussian_inverse_blow_up(3.0), confidence=0.95)
    assert recursive_consistent(1000, 200, 100, gaussian_inverse_blow_up(0.01), confidence=0.95)  # chance level


def test_inverse_blow_up_from_the_delta_curve_is_below_the_exact_gaussian_one():
    from dpcore.accounting.gaussian import delta_from_mu
    from dpcore.audit.fdp_one_run import gaussian_inverse_blow_up, inverse_blow_up

    grid = np.linspace(0.0, 8.0, 161)
    approx = inverse_blow_up(grid, [float(delta_from_mu(1.0, e)) for e in grid])
    exact = gaussian_inverse_blow_up(1.0)
    xs = np.linspace(0.001, 0.999, 200)
    gap = np.array([exact(x) - approx(x) for x in xs])
    assert gap.min() >= -1e-9 and gap.max() < 0.02  # conservative (never above) and close


def test_recursive_bound_with_a_family_and_refusals():
    from dpcore.audit.fdp_one_run import inverse_blow_up, recursive_consistent

    envelope = one_run_family_bound(5000, 400, 344, delta_of=_delta_of, epsilon_of=_epsilon_of, delta=1e-5)
    recursive = one_run_family_bound(5000, 400, 344, delta_of=_delta_of, epsilon_of=_epsilon_of, delta=1e-5,
                                     method="recursive")  # fmt: skip
    assert recursive.theta_lower > envelope.theta_lower > 0
    with pytest.raises(ValueError, match="method"):
        one_run_family_bound(10, 5, 4, delta_of=_delta_of, epsilon_of=_epsilon_of, delta=1e-5, method="best")
    with pytest.raises(ValueError, match="inverse"):
        recursive_consistent(10, 5, 4, "f", confidence=0.95)
    with pytest.raises(ValueError, match="confidence"):
        recursive_consistent(10, 5, 4, lambda x: x, confidence=1.0)
    with pytest.raises(ValueError, match="v <= r <= m"):
        recursive_consistent(10, 5, 6, lambda x: x, confidence=0.95)
    with pytest.raises(ValueError, match="deltas"):
        inverse_blow_up([0.0, 1.0], [0.0, 2.0])
    with pytest.raises(ValueError, match="one length"):
        inverse_blow_up([0.0, 1.0], [0.0])


def test_recursive_test_keeps_the_true_subsampled_gaussian_of_the_audit_table():
    """The path of the committed one-run row (:func:`dpcore.audit.tight.audit_one_run_family`): the game of
    :func:`dpcore.audit.dirac.one_run_guesses` at the audit table's setting (m = 5,000 Dirac canaries, each in w.p.
    1/2, T = 8 Poisson steps at q = 1/2, noise σC = 2, likelihood score, 400 guesses) simulated 200 times, tested by
    :func:`recursive_consistent` with the library's :func:`inverse_blow_up` built from the PLD δ(ε) curve of the
    true member (σ = 2) on the bound's ε grid.  The true member is rejected in at most 1 − confidence of the draws
    (the bound's coverage: θ_lb ≤ θ iff θ is not rejected), and a member twice as private (σ = 4) is rejected in
    most draws (the test has power)."""
    from dpcore.accounting.pld import pld_delta
    from dpcore.audit.fdp_one_run import _EPS_GRID, inverse_blow_up, recursive_consistent

    m, r, steps, q, s, conf, reps = 5000, 400, 8, 0.5, 2.0, 0.95, 200

    def inverse(sigma):
        return inverse_blow_up(_EPS_GRID, [min(1.0, pld_delta(sigma, sample_rate=q, steps=steps, epsilon=e))
                                           for e in _EPS_GRID])  # fmt: skip

    true, private = inverse(s), inverse(2 * s)
    rng = np.random.default_rng(17)
    rejected_true = rejected_private = 0
    for _ in range(reps):
        present = rng.random(m) < 0.5
        u = rng.normal(0.0, s, (m, steps)) + (present[:, None] & (rng.random((m, steps)) < q))
        score = np.logaddexp(np.log1p(-q), np.log(q) + (2 * u - 1) / (2 * s * s)).sum(1)
        order = np.argsort(score, kind="stable")
        v = int(present[order[-r // 2 :]].sum() + (~present[order[: r // 2]]).sum())
        rejected_true += not recursive_consistent(m, r, v, true, confidence=conf)
        rejected_private += not recursive_consistent(m, r, v, private, confidence=conf)
    assert rejected_true / reps <= (1 - conf) + 3 * np.sqrt(conf * (1 - conf) / reps)
    assert rejected_private / reps >= 0.5
