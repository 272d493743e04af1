"""Samplers: Poisson batch-size law, shuffling coverage, fixed-size batches, schedules and determinism."""

import math

import numpy as np
import pytest
import torch

from dpcore.training import BatchPlan
from dpcore.training.sampling import derive_seed, make_generator


def test_poisson_batch_sizes_have_binomial_mean_and_variance():
    n, size, steps = 2000, 100, 3000
    plan = BatchPlan("poisson", n, size, seed=3)
    sizes = np.array([plan.indices(k).numel() for k in range(steps)])
    q = size / n
    mean, var = n * q, n * q * (1 - q)
    assert abs(sizes.mean() - mean) < 4 * math.sqrt(var / steps)
    # sample variance of a binomial: sd of s² is about var * sqrt(2 / steps)
    assert abs(sizes.var(ddof=1) - var) < 4 * var * math.sqrt(2 / steps)


def test_poisson_includes_each_example_with_probability_q():
    n, size, steps = 50, 10, 4000
    plan = BatchPlan("poisson", n, size, seed=0)
    counts = np.zeros(n)
    for k in range(steps):
        idx = plan.indices(k)
        assert idx.unique().numel() == idx.numel()  # no duplicates within a round
        counts[idx.numpy()] += 1
    q = size / n
    sd = math.sqrt(steps * q * (1 - q))
    assert np.all(np.abs(counts - steps * q) < 5 * sd)
    # chi-square over examples ~ chi2(n): mean n, sd sqrt(2n)
    chi2 = ((counts - steps * q) ** 2 / (steps * q * (1 - q))).sum()
    assert abs(chi2 - n) < 5 * math.sqrt(2 * n)


@pytest.mark.parametrize("n,batch", [(60, 6), (64, 10)])
def test_shuffling_visits_every_example_once_per_epoch(n, batch):
    plan = BatchPlan("shuffle", n, batch, seed=1)
    per_epoch = plan.steps_per_epoch()
    assert per_epoch == n // batch
    epochs = []
    for e in range(3):
        idx = torch.cat([plan.indices(e * per_epoch + b) for b in range(per_epoch)])
        assert idx.numel() == per_epoch * batch
        assert idx.unique().numel() == idx.numel()  # each example at most once
        if n % batch == 0:
            assert sorted(idx.tolist()) == list(range(n))  # ... and exactly once
        epochs.append(idx)
        assert plan.epoch_of(e * per_epoch) == e
    assert not torch.equal(epochs[0], epochs[1])  # a fresh permutation per epoch


def test_fixed_size_batches():
    plan = BatchPlan("fixed", 30, 7, seed=2)
    seen = set()
    for k in range(200):
        idx = plan.indices(k)
        assert idx.numel() == 7 and idx.unique().numel() == 7
        seen.update(idx.tolist())
    assert seen == set(range(30))
    assert plan.steps_per_epoch() == round(30 / 7)


def test_plans_are_deterministic_and_resumable():
    a = BatchPlan("poisson", 100, 10, seed=5)
    b = BatchPlan("poisson", 100, 10, seed=5)
    c = BatchPlan("poisson", 100, 10, seed=6)
    assert torch.equal(a.indices(17), b.indices(17))  # any step, in any order
    assert not torch.equal(a.indices(17), c.indices(17))
    s1, s2 = BatchPlan("shuffle", 100, 10, seed=5), BatchPlan("shuffle", 100, 10, seed=5)
    later = s1.indices(23)
    for k in range(23):
        s2.indices(k)
    assert torch.equal(later, s2.indices(23))
    assert derive_seed(1, "noise", 2) != derive_seed(1, "noise", 3) != derive_seed(2, "noise", 2)
    g1, g2 = make_generator(1, "x"), make_generator(1, "x")
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))


def test_scheduled_sizes():
    sizes = [2, 3, 5, 4, 6, 1]
    plan = BatchPlan("poisson", 20, sizes, seed=0)
    assert plan.scheduled and [plan.size(k) for k in range(6)] == sizes
    assert plan.sample_rate(2) == 0.25
    with pytest.raises(ValueError, match="beyond"):
        plan.size(6)
    fixed = BatchPlan("fixed", 20, sizes, seed=0)
    assert [fixed.indices(k).numel() for k in range(6)] == sizes
    shuffled = BatchPlan("shuffle", 10, [4, 4, 4, 3, 3], seed=0)
    first = torch.cat([shuffled.indices(0), shuffled.indices(1)])
    assert first.unique().numel() == 8
    assert shuffled.epoch_of(2) == 1 and shuffled.epoch_of(4) == 1  # 4+4 used, next 4 starts epoch 1
    with pytest.raises(ValueError, match="undefined"):
        plan.steps_per_epoch()


def test_plan_validation():
    with pytest.raises(ValueError, match="sampling"):
        BatchPlan("bootstrap", 10, 2)
    with pytest.raises(ValueError, match="batch_size"):
        BatchPlan("poisson", 10, 11)
    with pytest.raises(ValueError, match="batch_size"):
        BatchPlan("poisson", 10, 0)
    with pytest.raises(ValueError, match="non-empty"):
        BatchPlan("poisson", 10, [])


def test_seeded_default_rng_draws_as_manual_seed_did_and_restores_the_global_state():
    """Issue 25: the per-round seeding of the trainer seeds only the default generator; a CPU run is bit-identical
    to the former fork_rng + torch.manual_seed, and the caller's random state is untouched."""
    import torch

    from dpcore.training.sampling import derive_seed, seeded_default_rng

    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    with seeded_default_rng(3, "model", 5):
        ours = (torch.rand(6), torch.nn.functional.dropout(torch.ones(8), 0.5, training=True))
    assert torch.equal(torch.random.get_rng_state(), before)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(3, "model", 5))
        former = (torch.rand(6), torch.nn.functional.dropout(torch.ones(8), 0.5, training=True))
    assert all(torch.equal(a, b) for a, b in zip(ours, former, strict=True))
