"""dpcore.audit.fdp_one_run: the family one-run bound holds its confidence on a simulated Gaussian guessing game,
is at least Steinke et al.'s (ε, δ) bound's information, and refuses bad input."""

from __future__ import annotations

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
