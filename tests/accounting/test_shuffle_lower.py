"""dpcore.accounting.shuffle_lower: the shuffled-batch lower bound (Chua et al. 2024) against independent
computations.  No printed value of either paper was available to us (see the module docstring); the checks are the
b = 1 limit (the pair is then exactly the Gaussian G_{1/σ} per epoch, so the bound must meet ε(G_{√E/σ})), a Monte
Carlo estimate of the single-epoch hockey-stick divergence of the max statistic, and the ordering lower ≤ A_1."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.accounting.gaussian import epsilon_from_mu
from dpcore.accounting.shuffle_lower import CHUA_PAIR, DIRAC_PAIR, shuffle_lower_delta, shuffle_lower_epsilon


@pytest.mark.parametrize("pair", [DIRAC_PAIR, CHUA_PAIR])
@pytest.mark.parametrize(("sigma", "epochs"), [(1.0, 1), (2.0, 4), (2.0, 25)])
def test_one_round_per_epoch_is_the_gaussian(pair, sigma, epochs):
    exact = epsilon_from_mu(math.sqrt(epochs) / sigma, 1e-5)
    low = shuffle_lower_epsilon(sigma, rounds_per_epoch=1, epochs=epochs, delta=1e-5, pair=pair)
    assert low <= exact + 1e-3
    assert low == pytest.approx(exact, abs=0.02 + epochs * 5e-4)


@pytest.mark.parametrize("pair", [DIRAC_PAIR, CHUA_PAIR])
def test_single_epoch_matches_monte_carlo_of_the_cube_sets(pair):
    sigma, rounds, eps = 0.6, 5, 1.0
    rng = np.random.default_rng(0)
    n = 400_000
    x = rng.normal(0, sigma, (n, rounds))
    t = rng.integers(rounds, size=n)
    mp = (x + pair[0] * np.eye(rounds)[t]).max(1)
    mq = (x + pair[1] * np.eye(rounds)[t]).max(1)
    caps = np.linspace(-1, 4, 200)
    mc = max(np.max((mp[:, None] > caps).mean(0) - math.e**eps * (mq[:, None] > caps).mean(0)), 0)
    low = shuffle_lower_delta(sigma, rounds_per_epoch=rounds, epochs=1, epsilon=eps, pair=pair)
    assert low >= mc - 4e-3  # slicing finely is at least as strong as the best single cube set
    # and it is a lower bound: the exact divergence of the max statistic by quadrature is not exceeded
    grid = np.linspace(-8 * sigma, 8 * sigma + 3, 200_001)

    def pdf(a):
        return np.gradient(stats.norm.cdf((grid - a) / sigma) * stats.norm.cdf(grid / sigma) ** (rounds - 1), grid)

    p, q = pdf(pair[0]), pdf(pair[1])
    dx = grid[1] - grid[0]
    exact = max(np.clip(p - math.e**eps * q, 0, None).sum(), np.clip(q - math.e**eps * p, 0, None).sum()) * dx
    assert low <= exact + 1e-4


def test_below_the_a1_upper_bound_and_growing_with_epochs():
    a1 = epsilon_from_mu(math.sqrt(10) / 2.0, 1e-5)
    e = [shuffle_lower_epsilon(2.0, rounds_per_epoch=10, epochs=k, delta=1e-5, pair=CHUA_PAIR) for k in (1, 5, 10)]
    assert e[0] < e[1] < e[2] <= a1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"sigma": 0.0}, "sigma"), ({"rounds_per_epoch": 0}, "rounds_per_epoch"), ({"epochs": 0}, "epochs"),
     ({"epsilon": -1.0}, "epsilon"), ({"pair": (1.0, 1.0)}, "pair"), ({"grid": 0.0}, "grid")],
)  # fmt: skip
def test_refuses_bad_input(kwargs, name):
    args = dict(sigma=1.0, rounds_per_epoch=2, epochs=1, epsilon=1.0) | kwargs
    with pytest.raises(ValueError, match=name):
        shuffle_lower_delta(**args)


def test_three_numbers_of_a_shuffled_run_are_ordered_and_labelled():
    from dpcore.accounting.shuffle_lower import REPLACE_ONE_PAIR, shuffled_epsilons

    r = shuffled_epsilons(2.0, rounds_per_epoch=10, epochs=5, delta=1e-5)
    assert r.upper == pytest.approx(epsilon_from_mu(math.sqrt(5) / 2.0, 1e-5))
    # the replace-one pair (1, 0) moves the differing round further than the Dirac pair (½, −½): a larger bound
    dirac = shuffle_lower_epsilon(2.0, rounds_per_epoch=10, epochs=5, delta=1e-5, pair=DIRAC_PAIR)
    low = shuffle_lower_epsilon(2.0, rounds_per_epoch=10, epochs=5, delta=1e-5, pair=REPLACE_ONE_PAIR)
    assert dirac < low == max(v for k, v in r.lower.items() if "replace-one" in k)
    assert all(0 < v <= r.upper for v in r.lower.values()) and 0 < r.poisson < r.upper
    rows = r.rows()
    assert "NOT valid" in rows[0]["status"] and "upper" in rows[-1]["status"]
    assert all("lower bound" in row["status"] for row in rows[1:-1]) and len(rows) == 2 + len(r.lower)
    with pytest.raises(ValueError, match="pairs"):
        shuffled_epsilons(2.0, rounds_per_epoch=10, epochs=5, delta=1e-5, pairs=())
    with pytest.raises(ValueError, match="delta"):
        shuffled_epsilons(2.0, rounds_per_epoch=10, epochs=5, delta=0.0)
