"""dpcore.accounting.shuffled: round counts, the per-round and per-epoch laws of how many subsets touch the
differentiating samples (against brute-force / closed forms), and the A_1 mixture's closed-form cases.
(Paper 003's tables over these: ``tests/papers/p003_shuffling/test_bounds.py``; extreme epoch counts:
``tests/accounting/test_extremes.py``.)"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpcore.accounting import fdp
from dpcore.accounting.mixture import GaussianMixture
from dpcore.accounting.shuffled import (
    batch_clipping_q,
    mixture_tradeoff,
    rounds_per_epoch,
    shuffle_collision_pmf,
    subsampling_round_pmf,
)


def test_rounds_per_epoch_drops_the_remainder():
    assert rounds_per_epoch(60_000, 256) == 234
    assert rounds_per_epoch(10, 10) == 1
    with pytest.raises(ValueError, match="batch"):
        rounds_per_epoch(10, 11)


def test_batch_clipping_q_of_one_sample_is_s_over_n():
    q1, q = batch_clipping_q(1000, 10, 1)
    assert q1 == pytest.approx(10 / 1000) and q == pytest.approx(1.0)
    q1, q = batch_clipping_q(1000, 10, 3)
    assert q1 == pytest.approx(1 - math.comb(997, 10) / math.comb(1000, 10))
    with pytest.raises(ValueError, match="g"):
        batch_clipping_q(10, 2, 11)


def test_subsampling_round_pmf_with_s_1_is_the_hypergeometric():
    pmf = subsampling_round_pmf(50, 3, 1, 8)
    np.testing.assert_allclose(pmf, stats.hypergeom(50, 3, 8).pmf(np.arange(4)), rtol=1e-12)


def _brute_force_round(N: int, g: int, s: int, m: int) -> np.ndarray:
    """Pr[k of the m subsets contain one of samples 0..g-1]: every ordered choice of m disjoint s-subsets."""
    counts = np.zeros(min(g, m) + 1)
    for perm in itertools.permutations(range(N), m * s):
        blocks = [set(perm[i * s : (i + 1) * s]) for i in range(m)]
        counts[sum(1 for b in blocks if b & set(range(g)))] += 1
    return counts / counts.sum()


@pytest.mark.parametrize(("N", "g", "s", "m"), [(6, 2, 2, 2), (7, 3, 2, 2), (6, 2, 1, 3)])
def test_subsampling_round_pmf_equals_brute_force(N, g, s, m):
    np.testing.assert_allclose(subsampling_round_pmf(N, g, s, m), _brute_force_round(N, g, s, m), atol=1e-12)


@pytest.mark.parametrize(("N", "s", "g"), [(6, 2, 2), (8, 2, 3), (9, 3, 2), (7, 2, 2)])
def test_shuffle_collision_pmf_equals_brute_force(N, s, g):
    n = N // s
    counts = np.zeros(g)
    for perm in itertools.permutations(range(n * s)):
        hit = {perm.index(i) // s for i in range(g)}
        counts[len(hit) - 1] += 1
    np.testing.assert_allclose(shuffle_collision_pmf(N, s, g), counts / counts.sum(), atol=1e-12)


def test_shuffling_one_sample_is_the_gaussian_of_sqrt_e_over_sigma():
    mix = mixture_tradeoff("shuffle", sigma=2.0, E=100, N=60_000, m=256)
    assert mix.epsilon(1e-5) == pytest.approx(fdp.mu_to_epsilon(math.sqrt(100) / 2.0, 1e-5), rel=1e-6)


def test_fixed_size_one_sample_is_a_binomial_over_the_rounds():
    mix = mixture_tradeoff("fixed", sigma=2.0, E=2, N=1000, s=1, m=100)
    ref = GaussianMixture.binomial(2 * rounds_per_epoch(1000, 100), 100 / 1000, 2.0)
    assert mix.epsilon(1e-5) == pytest.approx(ref.epsilon(1e-5), rel=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(sampling="poisson"), "sampling"),
        (dict(sigma=0.0), "sigma"),
        (dict(E=0), "E"),
        (dict(round_count="ceil"), "round_count"),
        (dict(epoch_pmf=3), "epoch_pmf"),
    ],
)
def test_mixture_tradeoff_refuses_bad_input_naming_it(kwargs, name):
    args = {"sampling": "shuffle", "sigma": 2.0, "E": 1, "N": 100, **kwargs}
    with pytest.raises(ValueError, match=name):
        mixture_tradeoff(args.pop("sampling"), **args)
