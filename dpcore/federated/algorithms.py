"""Server side of the federated algorithms of Lowy & Razaviyayn (ICLR 2023), batched over runs.

Every function here talks to the silos only through a :class:`~dpcore.federated.silos.SiloPool`'s
public methods: it broadcasts models, chooses who participates, and aggregates the
(noised) messages it gets back.  It never sees a record or a clean gradient.

* :func:`mb_sgd` -- Noisy ISRL-DP MB-SGD (Algorithm 2; ``noise_std=0``: non-private MB-SGD).
* :func:`local_sgd` -- ISRL-DP Local SGD (App. I; ``noise_std=0``: Local SGD / FedAvg).
* :func:`accelerated_mb_sgd` -- One-Pass Accelerated Noisy MB-SGD (Algorithm 1, AC-SA form).
* :func:`shuffled_mb_sgd` -- Shuffled Noisy MB-SGD (Section 5, App. G.1): a :class:`Shuffler`
  permutes each round's messages before the server sees them.

Runs: S streams (``trial_of_stream[s]`` says which trial's federation stream s runs on)
× C configurations (``stepsize`` [C], ``noise_std`` [T, C, N], ``clip`` [C]); see
:mod:`dpcore.federated.silos` for the common-random-numbers convention.  In each round a
uniformly random subset of M of the N silos participates (Assumption 1.4 with M_r = M),
drawn by the server per stream.  The server averages the M messages (the paper's
1/M_r Σ; the authors' MNIST and insurance scripts sum, which is the same with the
stepsize multiplied by M).

>>> import torch
>>> from dpcore.federated.models import SquaredLoss
>>> from dpcore.federated.silos import SiloPool
>>> x = torch.ones(1, 2, 4, 1); y = torch.full((1, 2, 4), 3.0)
>>> pool = SiloPool(x, y, [[4, 4]], SquaredLoss())
>>> w = mb_sgd(pool, rounds=50, silos_per_round=2, stepsize=[0.5], batch_size=2, trial_of_stream=[0], output="last")
>>> round(float(w[0, 0, 0, 0]), 4)
3.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch

from dpcore.federated.records import silo_records
from dpcore.federated.silos import SILO_CLIP_TARGETS, SiloPool
from dpcore.validation import check_choice, check_nonnegative, check_positive_int

__all__ = ["OUTPUTS", "Shuffler", "mb_sgd", "local_sgd", "accelerated_mb_sgd", "shuffled_mb_sgd", "participants"]

OUTPUTS = ("last", "window", "uniform")


# --------------------------------------------------------------------------- argument handling


def _streams(pool: SiloPool, trial_of_stream) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(trial_of_stream), dtype=torch.long).reshape(-1)
    if t.numel() == 0 or bool((t < 0).any()) or bool((t >= pool.num_trials).any()):
        raise ValueError(f"trial_of_stream must be a non-empty list of trial indices in [0, {pool.num_trials - 1}]")
    return t


def _stepsize(stepsize) -> torch.Tensor:
    eta = torch.as_tensor(np.asarray(stepsize, dtype=float), dtype=torch.float64).reshape(-1)
    if eta.numel() == 0 or not bool(torch.isfinite(eta).all()) or bool((eta <= 0).any()):
        raise ValueError(f"stepsize must be a non-empty list of numbers in (0, inf), got {stepsize!r}")
    return eta


def _per_silo(pool: SiloPool, value, name: str, *, cap_by_size: bool) -> torch.Tensor:
    """An int per silo ([T, N], or broadcast from a scalar / [N]), each in [1, n_i] when ``cap_by_size``."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or arr.size == 0:
        raise ValueError(f"{name} must be a positive integer or an integer array, got {value!r}")
    full = np.broadcast_to(arr, (pool.num_trials, pool.num_silos)).astype(np.int64)
    if (full < 1).any():
        raise ValueError(f"{name} must be >= 1, got {value!r}")
    if cap_by_size and (full > pool.sizes).any():
        raise ValueError(f"{name} must be in [1, n] for every silo (n = its number of records), got {value!r}")
    return torch.as_tensor(full.copy())


def _noise(pool: SiloPool, noise_std, configs: int) -> torch.Tensor:
    """σ as [T, C, N] from a scalar, [C], [C, N] or [T, C, N] (all ≥ 0)."""
    if noise_std is None:
        noise_std = 0.0
    arr = np.asarray(noise_std, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    try:
        full = np.broadcast_to(arr, (pool.num_trials, configs, pool.num_silos))
    except ValueError:
        raise ValueError(
            f"noise_std must broadcast to [trials, configurations, silos] = "
            f"[{pool.num_trials}, {configs}, {pool.num_silos}], got shape {arr.shape}"
        ) from None
    if np.isnan(full).any() or (full < 0).any():
        raise ValueError("noise_std must be in [0, inf]")
    return torch.as_tensor(full.copy(), dtype=pool.dtype)


def _clip(clip, configs: int, dtype: torch.dtype) -> torch.Tensor | None:
    if clip is None:
        return None
    arr = np.broadcast_to(np.asarray(clip, dtype=float).reshape(-1), (configs,))
    if np.isnan(arr).any() or (arr <= 0).any():
        raise ValueError(f"clip must be in (0, inf], got {clip!r}")
    if np.isinf(arr).all():
        return None
    return torch.as_tensor(arr.copy(), dtype=dtype)


def _check_participation(pool: SiloPool, silos_per_round: int) -> int:
    m = check_positive_int("silos_per_round", silos_per_round)
    if m > pool.num_silos:
        raise ValueError(f"silos_per_round must be in [1, N={pool.num_silos}] (M ≤ N), got {m}")
    return m


def participants(generator: torch.Generator, streams: int, num_silos: int, per_round: int) -> torch.Tensor:
    """A uniformly random subset of ``per_round`` of ``num_silos`` silos for each stream: [S, M]."""
    keys = torch.rand((streams, num_silos), generator=generator)
    return keys.argsort(dim=1)[:, :per_round]


class _Averager:
    """The algorithm's output from its iterates w_0, ..., w_R."""

    def __init__(self, output: str, window: int, rounds: int, w0: torch.Tensor) -> None:
        self.output = check_choice("output", output, OUTPUTS)
        self.window = check_positive_int("window", window)
        self.rounds = rounds
        self.first = {"last": rounds, "window": max(0, rounds + 1 - self.window), "uniform": 0}[output]
        self.last = rounds - 1 if output == "uniform" else rounds
        self.total = torch.zeros_like(w0)
        self.count = 0
        self.add(0, w0)

    def add(self, r: int, w: torch.Tensor) -> None:
        if self.first <= r <= self.last:
            self.total += w
            self.count += 1

    def result(self) -> torch.Tensor:
        return self.total / self.count


class Shuffler:
    """A secure shuffler (Section 5): hands the server each round's M messages in a uniformly random order."""

    def __init__(self, seed: int) -> None:
        self._gen = torch.Generator().manual_seed(int(seed) + 0x5AFF)

    def __call__(self, messages: torch.Tensor) -> torch.Tensor:
        s, m = messages.shape[:2]
        order = torch.rand((s, m), generator=self._gen).argsort(dim=1)
        index = order.view(s, m, *([1] * (messages.ndim - 2))).expand_as(messages)
        return torch.gather(messages, 1, index)


def _initial(pool: SiloPool, streams: int, configs: int, init) -> torch.Tensor:
    shape = (streams, configs, pool.num_outputs, pool.dim)
    if init is None:
        return torch.zeros(shape, dtype=pool.dtype)
    w0 = torch.as_tensor(np.asarray(init), dtype=pool.dtype)
    return w0.expand(shape).clone()


class _Run(NamedTuple):
    silos_per_round: int
    stepsize: torch.Tensor
    streams: torch.Tensor
    noise_std: torch.Tensor
    clip: torch.Tensor | None
    server: torch.Generator


def _prepare(pool: SiloPool, silos_per_round: int, stepsize, trial_of_stream, noise_std, clip, seed: int) -> _Run:
    """Validate the arguments every algorithm shares, reset the silos' randomness and seed the server."""
    m = _check_participation(pool, silos_per_round)
    eta = _stepsize(stepsize)
    t = _streams(pool, trial_of_stream)
    sigma = _noise(pool, noise_std, eta.numel())
    clip_t = _clip(clip, eta.numel(), pool.dtype)
    pool.reset_randomness(seed)
    return _Run(m, eta, t, sigma, clip_t, torch.Generator().manual_seed(int(seed) + 1))


def _records(pool, kind, rounds, per_silo, sigma, clip_t, lipschitz, streams, data):
    trials = sorted({int(x) for x in streams.tolist()})
    return silo_records(
        pool, kind=kind, rounds=rounds, per_silo=per_silo, noise_std=sigma, clip=clip_t, lipschitz=lipschitz,
        trials=trials, data=data,
    )


# --------------------------------------------------------------------------- algorithms


def mb_sgd(
    pool: SiloPool,
    *,
    rounds: int,
    silos_per_round: int,
    stepsize: Sequence[float],
    batch_size,
    trial_of_stream: Sequence[int],
    noise_std=0.0,
    clip=None,
    seed: int = 0,
    output: str = "window",
    window: int = 8,
    init=None,
    shuffler: Shuffler | None = None,
    return_records: bool = False,
    lipschitz: float | None = None,
    data: str = "",
    clip_scope: str = "example",
):
    """(Noisy ISRL-DP) minibatch SGD, Algorithm 2: w_{r+1} = w_r − η (1/M) Σ_{i∈S_r} g̃_r^i.

    Returns the output model of every run, [S, C, k, d].  ``output``: ``"last"`` (w_R),
    ``"window"`` (mean of the last ``window`` iterates -- the authors' code, window 8) or
    ``"uniform"`` (mean of w_0..w_{R−1}, Algorithm 2 with γ_r = 1/R).  Unconstrained (W = ℝ^d).
    ``return_records=True`` returns ``(models, records)`` with one run record per (configuration, silo)
    (:func:`dpcore.federated.records.silo_records`; needs ``clip`` or ``lipschitz``; ``data`` = provenance).
    ``clip_scope``: ``"example"`` clips each record's gradient (the paper); ``"batch_mean"`` clips each silo's
    minibatch mean once (the authors' insurance script, a named mode:
    :data:`dpcore.federated.silos.SILO_CLIP_TARGETS`).
    """
    rounds = check_positive_int("rounds", rounds)
    scope = check_choice("clip_scope", clip_scope, SILO_CLIP_TARGETS)
    k = _per_silo(pool, batch_size, "batch_size", cap_by_size=True)
    m, eta, t, sigma, clip_t, server = _prepare(pool, silos_per_round, stepsize, trial_of_stream, noise_std, clip, seed)
    w = _initial(pool, t.numel(), eta.numel(), init)
    avg = _Averager(output, window, rounds, w)
    step = eta.to(pool.dtype)[None, :, None, None]
    for r in range(rounds):
        chosen = participants(server, t.numel(), pool.num_silos, m)
        messages = pool.mb_sgd_messages(
            w, trial_of_stream=t, participants=chosen, batch_size=k, noise_std=sigma, clip=clip_t, clip_scope=scope
        )
        if shuffler is not None:
            messages = shuffler(messages)
        w = w - step * messages.mean(dim=1)
        avg.add(r + 1, w)
    if return_records:
        kind = "mb_sgd" if scope == "example" else "mb_sgd_batch_mean"
        return avg.result(), _records(pool, kind, rounds, k, sigma, clip_t, lipschitz, t, data)
    return avg.result()


def shuffled_mb_sgd(pool: SiloPool, **kwargs) -> torch.Tensor:
    """Shuffled Noisy MB-SGD (Section 5, Thm G.1): :func:`mb_sgd` behind a :class:`Shuffler`.

    The server's average does not depend on the order of the messages, so the model is
    MB-SGD's; what changes is the privacy analysis (central DP by amplification by
    shuffling, Lowy & Razaviyayn, Thm G.1).
    """
    return mb_sgd(pool, shuffler=Shuffler(kwargs.get("seed", 0)), **kwargs)


def local_sgd(
    pool: SiloPool,
    *,
    rounds: int,
    silos_per_round: int,
    stepsize: Sequence[float],
    local_steps,
    trial_of_stream: Sequence[int],
    noise_std=0.0,
    clip=None,
    seed: int = 0,
    output: str = "window",
    window: int = 8,
    init=None,
    return_records: bool = False,
    lipschitz: float | None = None,
    data: str = "",
):
    """(ISRL-DP) Local SGD (App. I; FedAvg when ``noise_std=0``): w_{r+1} = (1/M) Σ_{i∈S_r} w_r^{i,K}.

    Each participating silo runs ``local_steps`` K single-sample noisy SGD steps from w_r
    with the configuration's stepsize and sends its last local iterate.  Returns [S, C, k, d]
    (with ``return_records=True``: ``(models, records)``, see :func:`mb_sgd`).
    """
    rounds = check_positive_int("rounds", rounds)
    steps = _per_silo(pool, local_steps, "local_steps", cap_by_size=False)
    m, eta, t, sigma, clip_t, server = _prepare(pool, silos_per_round, stepsize, trial_of_stream, noise_std, clip, seed)
    w = _initial(pool, t.numel(), eta.numel(), init)
    avg = _Averager(output, window, rounds, w)
    for r in range(rounds):
        chosen = participants(server, t.numel(), pool.num_silos, m)
        local = pool.local_sgd_messages(
            w, trial_of_stream=t, participants=chosen, local_steps=steps, stepsize=eta, noise_std=sigma, clip=clip_t
        )
        w = local.mean(dim=1)
        avg.add(r + 1, w)
    if return_records:
        return avg.result(), _records(pool, "local_sgd", rounds, steps, sigma, clip_t, lipschitz, t, data)
    return avg.result()


def accelerated_mb_sgd(
    pool: SiloPool,
    *,
    silos_per_round: int,
    stepsize: Sequence[float],
    batch_size,
    trial_of_stream: Sequence[int],
    noise_std=0.0,
    rounds: int | None = None,
    mu: float = 0.0,
    clip=None,
    seed: int = 0,
    init=None,
    return_records: bool = False,
    lipschitz: float | None = None,
    data: str = "",
):
    """One-Pass Accelerated Noisy MB-SGD (Algorithm 1) with the AC-SA schedule of App. E.1.

    α_r = 2/(r+1) and η_r = 4υ/(r(r+1)); the tuned ``stepsize`` γ = 1/(2υ) makes the
    μ = 0 update w_r = w_{r−1} − γ r g̃_r.  With the note's closed form of the argmin,

        w_r^md = [(1−α)(μ+η) w^ag_{r−1} + α((1−α)μ+η) w_{r−1}] / (η + (1−α²)μ),
        w_r    = [α μ w_r^md + ((1−α)μ + η) w_{r−1} − α g̃_r] / (μ + η),
        w^ag_r = α w_r + (1−α) w^ag_{r−1},

    with g̃_r the average of the silos' noised gradients at w_r^md on fresh disjoint
    batches (each record used at most once: :meth:`SiloPool.one_pass_messages`).
    ``rounds`` defaults to ⌊min_i n_i / K_i⌋ (one pass).  Returns w^ag_R, [S, C, k, d] (with
    ``return_records=True``: ``(models, records)``, see :func:`mb_sgd`).
    """
    k = _per_silo(pool, batch_size, "batch_size", cap_by_size=True)
    most = int((torch.as_tensor(pool.sizes) // k).min())
    rounds = most if rounds is None else check_positive_int("rounds", rounds)
    if rounds > most:
        raise ValueError(f"rounds must be in [1, {most}] for one pass over the data (n_i // K_i), got {rounds}")
    mu = check_nonnegative("mu", mu)
    run = _prepare(pool, silos_per_round, stepsize, trial_of_stream, noise_std, clip, seed)
    m, eta0, t, sigma, clip_t, server = run
    configs = eta0.numel()
    s = t.numel()
    ranks = pool.one_pass_orders(t)
    usage = torch.zeros((s, pool.num_silos), dtype=torch.long)
    w_prev = _initial(pool, s, configs, init)
    w_ag = w_prev.clone()
    gamma = eta0.to(torch.float64)
    for r in range(1, rounds + 1):
        alpha = 2.0 / (r + 1)
        eta = 2.0 / (gamma * r * (r + 1))  # η_r = 4υ/(r(r+1)) with υ = 1/(2γ), per configuration
        denom = eta + (1 - alpha**2) * mu
        a_ag = ((1 - alpha) * (mu + eta) / denom).to(pool.dtype)[None, :, None, None]
        a_prev = (alpha * ((1 - alpha) * mu + eta) / denom).to(pool.dtype)[None, :, None, None]
        w_md = a_ag * w_ag + a_prev * w_prev
        chosen = participants(server, s, pool.num_silos, m)
        messages = pool.one_pass_messages(
            w_md, trial_of_stream=t, participants=chosen, batch_size=k, noise_std=sigma, usage=usage, ranks=ranks,
            clip=clip_t,
        )
        usage[torch.arange(s)[:, None], chosen] += 1
        g = messages.mean(dim=1)
        inv = (1.0 / (mu + eta)).to(pool.dtype)[None, :, None, None]
        keep = ((1 - alpha) * mu + eta).to(pool.dtype)[None, :, None, None]
        w_new = inv * (alpha * mu * w_md + keep * w_prev - alpha * g)
        w_ag = alpha * w_new + (1 - alpha) * w_ag
        w_prev = w_new
    if return_records:
        return w_ag, _records(pool, "one_pass", rounds, k, sigma, clip_t, lipschitz, t, data)
    return w_ag
