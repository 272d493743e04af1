"""The vectorised asynchronous DP-SGD simulator for logistic regression (dpcore.training.async_logreg)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from dpcore.training.async_clients import broadcast_delays, run_async_clients
from dpcore.training.async_logreg import (
    LogRegRun,
    SimDraws,
    classification_metrics,
    poisson_subsets,
    simulate_async_logreg,
)
from dpcore.training.config import TrainConfig
from dpcore.training.sampling import BatchPlan, derive_seed, make_generator

torch.set_num_threads(1)


def _clients(n=3, N=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, N, d))
    w = rng.normal(size=d)
    y = (x @ w + 0.3 * rng.normal(size=(n, N)) > 0).astype(np.int64)
    return x, y


def _torch_draws(n, N, d, s, rounds, seed, delay_prob, noise_multiplier, clip):
    """The batches, noise directions and delays run_async_clients draws, in the layout of SimDraws."""
    indices, noise = [], np.zeros((rounds, n, d + 1))
    for i in range(rounds):
        indices.append([])
        for j in range(n):
            cseed = derive_seed(seed, "client", j)
            indices[i].append(BatchPlan("poisson", N, s, seed=cseed).indices(i).numpy())
            gen = make_generator(cseed, "noise", i)
            noise[i, j] = torch.randn(d + 1, generator=gen, dtype=torch.float64).numpy()
    delays = broadcast_delays(n, rounds, delay_prob, seed)[:, :rounds].T.numpy().astype(bool)
    return SimDraws(indices, noise, delays)


@pytest.mark.parametrize("delay_prob", [0.0, 0.5, 1.0])
def test_agrees_with_the_torch_simulator_of_algorithms_2_to_4(delay_prob):
    n, N, d, s, rounds, seed = 3, 40, 3, 5, 9, 7
    sigma, clip = 0.7, 0.3
    x, y = _clients(n, N, d)
    cfg = TrainConfig(
        sampling="poisson", batch_size=s, steps=rounds, clipping="individual", clip_norm=clip,
        noise_multiplier=sigma, reduce="sum", seed=seed, device="cpu",
        lr={"kind": "inverse_time", "lr0": 0.1, "beta": 0.01, "power": 0.5},
    )  # fmt: skip
    model = nn.Linear(d, 1).double()
    with torch.no_grad():
        model.weight.fill_(0.05)
        model.bias.fill_(-0.1)
    data = [(torch.tensor(x[j]), torch.tensor(y[j], dtype=torch.float64)) for j in range(n)]
    res = run_async_clients(model, data, cfg, delay_prob=delay_prob, loss="bce")
    theirs = np.concatenate([res.model.weight.detach().numpy().ravel(), res.model.bias.detach().numpy()])

    draws = _torch_draws(n, N, d, s, rounds, seed, delay_prob, sigma, clip)
    init = np.concatenate([np.full(d, 0.05), [-0.1]])
    run = LogRegRun(clip=clip, sigma=sigma, lr0=0.1, beta=0.01, power=0.5)
    ours = simulate_async_logreg(
        x, y, [run], sample_size=s, K=s * rounds, init=init, draws=draws, delay_prob=delay_prob
    )
    assert ours.rounds == rounds
    np.testing.assert_allclose(ours.weights[0, 0], theirs, rtol=1e-9, atol=1e-11)
    # and the model moved: the test can fail
    assert np.abs(theirs - init).max() > 1e-3


def test_batched_configurations_equal_separate_runs():
    x, y = _clients(n=2, N=60, d=4)
    runs = [
        LogRegRun(0.1, 3.0, 0.1, 0.001, 1.0, 1 / 60),
        LogRegRun(0.1, 3.0, 0.1, 0.01, 0.5, 0.0),
        LogRegRun(0.5, 0.0, 0.2, 0.01, 0.5, 0.0),
    ]
    ev = classification_metrics(x.reshape(-1, 4), y.reshape(-1))
    both = simulate_async_logreg(x, y, runs, sample_size=3, K=300, seeds=(1, 2), evaluate=ev, n_eval=5)
    for c, run in enumerate(runs):
        for k, seed in enumerate((1, 2)):
            alone = simulate_async_logreg(x, y, [run], sample_size=3, K=300, seeds=(seed,), evaluate=ev, n_eval=5)
            np.testing.assert_array_equal(both.weights[c, k], alone.weights[0, 0])
            np.testing.assert_array_equal(both.metrics["test_accuracy"][c, k], alone.metrics["test_accuracy"][0, 0])
    assert not np.allclose(both.weights[0, 0], both.weights[0, 1])  # seeds differ


def test_deterministic_and_many_chunks():
    x, y = _clients(n=2, N=30, d=2)
    run = [LogRegRun(0.2, 1.0, 0.1, 0.01, 0.5)]
    a = simulate_async_logreg(x, y, run, sample_size=1, K=2500, seeds=(3,))
    b = simulate_async_logreg(x, y, run, sample_size=1, K=2500, seeds=(3,))
    assert a.rounds == 2500
    np.testing.assert_array_equal(a.weights, b.weights)
    assert abs(a.batch_sizes.mean() - 1.0) < 0.1  # Poisson: mean batch size s


def test_noise_free_unclipped_training_learns():
    x, y = _clients(n=2, N=200, d=3, seed=1)
    ev = classification_metrics(x.reshape(-1, 3), y.reshape(-1))
    res = simulate_async_logreg(x, y, [LogRegRun(np.inf, 0.0, 0.1, 0.0)], sample_size=10, K=2000, evaluate=ev)
    assert res.metrics["test_accuracy"][0, 0, -1] > 0.8


@settings(max_examples=25, deadline=None)
@given(N=st.integers(1, 200), q=st.floats(0.0, 1.0), rounds=st.integers(1, 20), seed=st.integers(0, 10))
def test_poisson_subsets_are_distinct_and_in_range(N, q, rounds, seed):
    counts, idx = poisson_subsets(np.random.default_rng(seed), N, q, rounds)
    assert counts.shape == (rounds,) and idx.size == counts.sum()
    assert ((idx >= 0) & (idx < N)).all()
    for part in np.split(idx, np.cumsum(counts)[:-1]):
        assert len(np.unique(part)) == len(part)


def test_poisson_subsets_marginals():
    rng = np.random.default_rng(0)
    counts, idx = poisson_subsets(rng, 50, 0.2, 4000)
    assert abs(counts.mean() - 10) < 0.2 and abs(counts.var() - 8) < 0.8  # Binomial(50, 0.2)
    freq = np.bincount(idx, minlength=50) / 4000
    assert np.abs(freq - 0.2).max() < 0.03  # each element joins w.p. q


def test_balanced_accuracy():
    x = np.array([[1.0], [2.0], [-1.0], [-2.0], [-3.0]])
    y = np.array([1, 1, 1, 0, 0])
    m = classification_metrics(x, y, loss=True)(np.array([[1.0, 0.0], [-1.0, 0.0]]))
    np.testing.assert_allclose(m["test_accuracy"], [4 / 5, 1 / 5])
    np.testing.assert_allclose(m["test_balanced_accuracy"], [0.5 * (2 / 3 + 1), 0.5 * (1 / 3 + 0)])
    assert m["test_loss"][0] < m["test_loss"][1]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sample_size": 0}, "sample_size"),
        ({"sample_size": 41}, "sample_size"),
        ({"K": 2}, "K must be"),
        ({"delay_prob": 1.5}, "delay_prob"),
        ({"seeds": ()}, "seeds"),
        ({"runs": []}, "runs"),
        ({"init": np.zeros(7)}, "init"),
        ({"t0": -1.0}, "t0"),
    ],
)
def test_input_validation(kwargs, match):
    x, y = _clients(n=2, N=40, d=3)
    args = {"runs": [LogRegRun(0.1, 1.0, 0.1, 0.01)], "sample_size": 4, "K": 40} | kwargs
    runs = args.pop("runs")
    with pytest.raises(ValueError, match=match):
        simulate_async_logreg(x, y, runs, **args)


def test_data_and_run_validation():
    x, y = _clients(n=2, N=40, d=3)
    run = [LogRegRun(0.1, 1.0, 0.1, 0.01)]
    with pytest.raises(ValueError, match="client_x"):
        simulate_async_logreg(x[0], y, run, sample_size=4, K=40)
    with pytest.raises(ValueError, match="labels"):
        simulate_async_logreg(x, y + 1, run, sample_size=4, K=40)
    with pytest.raises(ValueError, match="clip"):
        LogRegRun(0.0, 1.0, 0.1, 0.01)
    with pytest.raises(ValueError, match="sigma must be 0"):
        LogRegRun(np.inf, 1.0, 0.1, 0.01)
    with pytest.raises(ValueError, match="power"):
        LogRegRun(0.1, 1.0, 0.1, 0.01, power=2.0)
    with pytest.raises(ValueError, match="q"):
        poisson_subsets(np.random.default_rng(0), 10, 1.5, 3)
