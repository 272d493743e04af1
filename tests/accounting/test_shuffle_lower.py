"""dpcore.accounting.shuffle_lower: the shuffled-batch lower bound (Chua et al. 2024) against independent
computations.

Printed values: none that can be recomputed was within reach.  Of Chua et al., "How Private are DP-SGD
Implementations?" (ICML 2024; arXiv 2403.17673 v1/v2 HTML and the ICML text) and "Scalable DP-SGD: Shuffling vs.
Poisson Subsampling" (NeurIPS 2024; arXiv 2411.04205 and the NeurIPS text) only the abstracts and the first paragraph
of each §1 Introduction were readable to us, and they print no number; the one caption seen (NeurIPS Figure 3,
"bounds on σB values ... for ε = 5, δ = 2.7 · 10−8 and using 1 epoch (top) and 5 epochs (bottom)") is a plot over
batch sizes, not readable to a stated precision.  The authors' code (google-research/google-research,
dpsgd_batch_sampler_accounting/: dpsgd_bounds.py, example.py, at commit 4c42994) ships no tests and no stored
output.  So the checks here are independent computations: the b = 1 limit (the pair is then exactly the Gaussian
G_{1/σ} per epoch, so the bound must meet ε(G_{√E/σ})); a Monte Carlo estimate and a quadrature of the single-epoch
hockey-stick divergence of the max statistic; the ICML paper's own single-epoch method, the cube sets
{max_t x_t > C}, in closed form; the NeurIPS paper's multi-epoch method (per-epoch privacy-loss pmf of the max
statistic, composed) with dp_accounting's PLD composition instead of ours; the Poisson number beside the bound
against dp_accounting; and the ordering lower ≤ A_1."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.accounting.gaussian import epsilon_from_mu
from dpcore.accounting.shuffle_lower import (
    CHUA_PAIR,
    DIRAC_PAIR,
    REPLACE_ONE_PAIR,
    shuffle_lower_delta,
    shuffle_lower_epsilon,
)


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
    from dpcore.accounting.shuffle_lower import shuffled_epsilons

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


def _cube_set_delta(sigma, rounds, eps, pair):
    """The single-epoch lower bound of Chua et al. (ICML 2024) in closed form: the best cube set E_C = {x : max_t x_t
    ≤ C} (its complement, rather), P[max > C] − e^ε Q[max > C] maximised over a fine grid of C, both directions.
    P[max ≤ C] = Φ((C − a)/σ) Φ(C/σ)^{b−1} under the shift a (the idea of their ShuffleAccountant, recomputed here)."""
    caps = np.arange(-3.0, max(pair) + 12 * sigma, 1e-3)
    mass = [-np.expm1(stats.norm.logcdf((caps - m) / sigma) + (rounds - 1) * stats.norm.logcdf(caps / sigma))
            for m in pair]  # fmt: skip
    return max(float(np.max(mass[0] - math.exp(eps) * mass[1])), float(np.max(mass[1] - math.exp(eps) * mass[0])))


def _cube_set_epsilon(sigma, rounds, delta, pair):
    lo, hi = 0.0, 64.0
    while hi - lo > 1e-4:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _cube_set_delta(sigma, rounds, mid, pair) > delta else (lo, mid)
    return lo


@pytest.mark.parametrize("pair", [CHUA_PAIR, REPLACE_ONE_PAIR])
@pytest.mark.parametrize(("sigma", "rounds"), [(0.35, 1000), (0.5, 1000), (0.8, 1000), (1.0, 100)])
def test_single_epoch_refines_the_cube_sets_of_chua_et_al_icml(pair, sigma, rounds):
    """One epoch (ICML 2024's setting, b = 1000 rounds as in the authors' example.py): slicing max_t x_t finely is a
    refinement of every cube set, so our ε(δ) may not fall below the cube sets' one except by our loss grid (each
    loss rounded down by < 5e-4) and the bisection tolerances (1e-3, 1e-4): 0.005 covers both.  Above: for these two
    pairs the best cube set is already (nearly) the optimal test on the max (observed gap ≤ 0.002), so a gap over
    0.02 would mean our slicing found a set the closed form cannot have -- an error, since both use one statistic."""
    ours = shuffle_lower_epsilon(sigma, rounds_per_epoch=rounds, epochs=1, delta=1e-5, pair=pair)
    cube = _cube_set_epsilon(sigma, rounds, 1e-5, pair)
    assert cube > 0.1  # the comparison is not vacuous
    assert cube - 0.005 <= ours <= cube + 0.02


def _epoch_pmfs_by_dp_accounting(sigma, rounds, pair, disc=1e-3):
    """Per-epoch privacy-loss pmfs (both directions) of the max statistic, built as Chua et al. (NeurIPS 2024, §3)
    describe their dynamic-shuffling bound: slices of max_t x_t of width disc·σ² (a loss step of about disc), each
    slice's loss rounded down to the grid disc, as dp_accounting SparsePLDPmf objects (optimistic), for dp_accounting
    to compose.  Independent of dpcore's slicing (4000 equal slices) and of its FFT composition."""
    from dp_accounting import pld

    lo = min(min(pair), 0.0) + sigma * stats.norm.ppf(math.exp(math.log(1e-30) / (rounds - 1)))
    edges = np.arange(lo, max(pair) + 13 * sigma, disc * sigma**2)

    def slices(m):
        lf = stats.norm.logcdf((edges - m) / sigma) + (rounds - 1) * stats.norm.logcdf(edges / sigma)
        inner = np.exp(lf[:-1]) * np.expm1(lf[1:] - lf[:-1])
        return np.concatenate([[math.exp(lf[0])], inner, [-math.expm1(lf[-1])]])

    p, q = slices(pair[0]), slices(pair[1])
    out = []
    for first, second in ((p, q), (q, p)):
        keep = (first > 0) & (second > 0)
        k = np.floor((np.log(first[keep]) - np.log(second[keep])) / disc).astype(np.int64)
        base = int(k.min())
        w = np.bincount(k - base, weights=first[keep])
        out.append(pld.pld_pmf.SparsePLDPmf({base + i: float(v) for i, v in enumerate(w) if v > 0}, disc, 0.0, False))
    return out


@pytest.mark.parametrize("pair", [CHUA_PAIR, REPLACE_ONE_PAIR])
@pytest.mark.parametrize(("sigma", "rounds", "epochs"), [(1.0, 100, 10), (2.0, 10, 5), (1.5, 50, 20)])
def test_multi_epoch_matches_an_independent_composition_by_dp_accounting(pair, sigma, rounds, epochs):
    """E epochs with reshuffling (NeurIPS 2024): ours against the same construction built independently and composed
    by dp_accounting.  Both round each epoch's loss down (grids 5e-4 and 1e-3), so both are lower bounds on one
    divergence and differ by the rounding, at most about E·1e-3 in the worst case and far less on average (observed
    ≤ 0.005 at E = 20): tolerance 0.01.  Both lie below the A_1 upper bound G_{√E/σ}."""
    from dp_accounting import pld

    ours = shuffle_lower_epsilon(sigma, rounds_per_epoch=rounds, epochs=epochs, delta=1e-5, pair=pair)
    theirs = max(pld.privacy_loss_distribution.PrivacyLossDistribution(pmf).self_compose(epochs)
                 .get_epsilon_for_delta(1e-5) for pmf in _epoch_pmfs_by_dp_accounting(sigma, rounds, pair))  # fmt: skip
    assert theirs > 0.5
    assert ours == pytest.approx(theirs, abs=0.01)
    assert max(ours, theirs) <= epsilon_from_mu(math.sqrt(epochs) / sigma, 1e-5)


def test_the_poisson_number_beside_the_bound_matches_dp_accounting():
    """The 'often reported' number of a shuffled run: Poisson subsampling at q = 1/b for T = E·b steps at the same σ,
    as the authors' PoissonPLDAccountant computes it (dp_accounting PLD, pessimistic, connect-the-dots, grid 1e-3).
    Both are upper bounds tight to their grids: they agree to 2e-3.  At σ = 1, b = 100, E = 10 the shuffled lower
    bound under the authors' pair exceeds it five-fold -- the papers' point."""
    from dp_accounting import pld

    from dpcore.accounting.shuffle_lower import shuffled_epsilons

    r = shuffled_epsilons(1.0, rounds_per_epoch=100, epochs=10, delta=1e-5)
    ref = (
        pld.privacy_loss_distribution.from_gaussian_mechanism(
            1.0,
            pessimistic_estimate=True,
            value_discretization_interval=1e-3,
            sampling_prob=0.01,
            use_connect_dots=True,
        )
        .self_compose(1000)
        .get_epsilon_for_delta(1e-5)
    )
    assert r.poisson == pytest.approx(ref, abs=2e-3)
    chua = next(v for k, v in r.lower.items() if "Chua" in k)
    assert chua > 5 * r.poisson
