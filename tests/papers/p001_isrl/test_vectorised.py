"""Paper 001's batched silo computations against plain loops (issue 23: the vectorised experiments).

The silos compute every configuration (stepsize × ε × clip) of every repetition in a few matrix
products per step.  Here each message is recomputed by a loop over streams, silos and configurations
that follows the text of Lowy & Razaviyayn (ICLR 2023): Algorithm 2 (a silo sends the mean clipped
gradient of K_i records drawn with replacement plus N(0, σ_i² I)) and App. I's Local SGD baseline
(K_i noisy single-record steps), drawing from generators seeded as :class:`SiloPool` seeds its own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dpcore.federated import silos
from dpcore.federated.datasets import FederatedTrials
from dpcore.federated.models import LogisticLoss, SoftmaxLoss, SquaredLoss
from dpcore.federated.silos import SiloPool
from dpcore.papers.p001_isrl import experiments as fe

LOSSES = {"logistic": (LogisticLoss(), 1), "squared": (SquaredLoss(), 1), "softmax": (SoftmaxLoss(3), 3)}
SEED = 7


def _federation(loss_name: str, rng: np.random.Generator, trials: int = 2, silos: int = 4, n_max: int = 9, d: int = 5):
    loss, k = LOSSES[loss_name]
    x = rng.normal(size=(trials, silos, n_max, d))
    if loss_name == "softmax":
        y = rng.integers(0, k, size=(trials, silos, n_max))
    elif loss_name == "logistic":
        y = rng.integers(0, 2, size=(trials, silos, n_max)).astype(float)
    else:
        y = rng.normal(size=(trials, silos, n_max))
    sizes = rng.integers(5, n_max + 1, size=(trials, silos))
    return x, y, sizes, loss, k


def _clipped_grad(loss, w: torch.Tensor, x: torch.Tensor, y, clip: float) -> torch.Tensor:
    """clip(∇f(W, x)) = min(1, C/‖ψ xᵀ‖) ψ xᵀ for one record (W: k × d)."""
    psi = loss.psi((w @ x)[None], torch.as_tensor([y]))[0]
    grad = torch.outer(psi, x)
    return grad * min(1.0, clip / max(float(grad.norm()), 1e-30))


def _setup(loss_name: str, clipped: bool):
    rng = np.random.default_rng(3)
    x, y, sizes, loss, k = _federation(loss_name, rng)
    pool = SiloPool(x, y, sizes, loss, seed=SEED, dtype=torch.float64)
    s, c = 3, 4
    w = torch.as_tensor(rng.normal(size=(s, c, k, x.shape[3])))
    trial_of_stream = torch.tensor([0, 1, 1])
    participants = torch.tensor([[0, 3], [2, 1], [3, 0]])
    steps = torch.as_tensor(np.minimum(rng.integers(1, 6, size=sizes.shape), sizes))  # unequal K_i
    sigma = torch.as_tensor(rng.uniform(0.1, 1.0, size=(2, c, 4)))
    clip = torch.tensor([0.5, 1.0, 2.0, math.inf], dtype=torch.float64) if clipped else None
    return pool, (x, y, sizes, loss, k), w, trial_of_stream, participants, steps, sigma, clip


@pytest.mark.parametrize("block, group", [(2, 1), (3, 10**9), (32, 50)])  # blocks: several, ragged, one; groups
@pytest.mark.parametrize("clipped", [False, True])
@pytest.mark.parametrize("loss_name", sorted(LOSSES))
def test_local_sgd_messages_equal_the_loop_over_silos_configurations_and_steps(
    loss_name, clipped, block, group, monkeypatch
):
    monkeypatch.setattr(silos, "LOCAL_BLOCK", block)
    monkeypatch.setattr(silos, "LOCAL_GROUP", group)  # silos per group: 1, all, and groups of a few
    pool, (x, y, sizes, loss, k), w, tos, part, steps, sigma, clip = _setup(loss_name, clipped)
    eta = torch.tensor([0.3, 0.1, 0.05, 0.2], dtype=torch.float64)
    got = pool.local_sgd_messages(w, trial_of_stream=tos, participants=part, local_steps=steps, stepsize=eta,
                                  noise_std=sigma, clip=clip)  # fmt: skip
    sample, noise = torch.Generator().manual_seed(SEED), torch.Generator().manual_seed(SEED + 0x5EED)
    s, m = part.shape
    c, d = w.shape[1], w.shape[3]
    local = w.unsqueeze(1).expand(s, m, c, k, d).clone()
    for j in range(int(steps.max())):
        u = torch.rand((s, m), generator=sample, dtype=torch.float64)
        xi = torch.randn((s * m, k, d), generator=noise, dtype=torch.float64).view(s, m, k, d)
        for a in range(s):
            for b in range(m):
                t, i = int(tos[a]), int(part[a, b])
                if j >= int(steps[t, i]):
                    continue
                r = min(int(u[a, b] * int(sizes[t, i])), x.shape[2] - 1)
                record = torch.as_tensor(x[t, i, r])
                for cc in range(c):
                    bound = math.inf if clip is None else float(clip[cc])
                    g = _clipped_grad(loss, local[a, b, cc], record, y[t, i, r], bound)
                    local[a, b, cc] -= eta[cc] * (g + sigma[t, cc, i] * xi[a, b])
    torch.testing.assert_close(got, local, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("clipped", [False, True])
@pytest.mark.parametrize("loss_name", sorted(LOSSES))
def test_mb_sgd_messages_equal_the_loop_over_the_drawn_records(loss_name, clipped):
    pool, (x, y, sizes, loss, k), w, tos, part, steps, sigma, clip = _setup(loss_name, clipped)
    got = pool.mb_sgd_messages(w, trial_of_stream=tos, participants=part, batch_size=steps, noise_std=sigma,
                               clip=clip)  # fmt: skip
    sample, noise = torch.Generator().manual_seed(SEED), torch.Generator().manual_seed(SEED + 0x5EED)
    s, m = part.shape
    c, d = w.shape[1], w.shape[3]
    k_max = int(steps[tos[:, None], part].max())
    u = torch.rand((s, m, k_max), generator=sample, dtype=torch.float64)
    xi = torch.randn((s, m, 1, k, d), generator=noise, dtype=torch.float64)
    want = torch.zeros(s, m, c, k, d, dtype=torch.float64)
    for a in range(s):
        for b in range(m):
            t, i = int(tos[a]), int(part[a, b])
            big_k = int(steps[t, i])
            for cc in range(c):
                bound = math.inf if clip is None else float(clip[cc])
                for j in range(big_k):  # K_i records drawn with replacement (Algorithm 2, App. I)
                    r = min(int(u[a, b, j] * int(sizes[t, i])), x.shape[2] - 1)
                    want[a, b, cc] += _clipped_grad(loss, w[a, cc], torch.as_tensor(x[t, i, r]), y[t, i, r], bound)
                want[a, b, cc] = want[a, b, cc] / big_k + sigma[t, cc, i] * xi[a, b, 0]
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def _trials(x, y, sizes, loss_name, k) -> FederatedTrials:
    test_x, test_y = x[:, 0], y[:, 0]
    return FederatedTrials(
        "toy", LOSSES[loss_name][0].name, "error" if loss_name != "squared" else "relative_rmse", k, x, y, sizes,
        test_x, test_y, np.full(x.shape[0], x.shape[2]),
    )  # fmt: skip


@pytest.mark.parametrize("algorithm", ["mb-sgd", "local-sgd"])
def test_each_chunk_of_trials_has_its_own_seed(algorithm):
    """With one trial per chunk (tiny ``max_elements``) trial t runs with seed + 7919·t: the sweep of trials {0, 1}
    repeats the sweeps of each trial alone with that seed, so chunking is the only thing that moves the draws."""
    rng = np.random.default_rng(11)
    x, y, sizes, _, k = _federation("logistic", rng, trials=2)
    sweep = fe.Sweep(algorithm, (1.0, math.inf), (0.05, 0.2), 3, 2, reps=2, lipschitz=2.0, batch_size=3)
    both = fe.run_sweep(_trials(x, y, sizes, "logistic", k), sweep, seed=5, dtype=torch.float64, max_elements=1)
    for t in range(2):
        alone = fe.run_sweep(_trials(x[t : t + 1], y[t : t + 1], sizes[t : t + 1], "logistic", k), sweep,
                             seed=5 + 7919 * t, dtype=torch.float64, max_elements=1)  # fmt: skip
        np.testing.assert_array_equal(both.train_loss[t : t + 1], alone.train_loss)
        np.testing.assert_array_equal(both.test_metric[t : t + 1], alone.test_metric)
    together = fe.run_sweep(_trials(x, y, sizes, "logistic", k), sweep, seed=5, dtype=torch.float64)
    assert not np.array_equal(together.train_loss[1], both.train_loss[1])  # one chunk of two: other draws
