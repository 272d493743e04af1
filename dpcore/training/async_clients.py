"""Asynchronous DP-SGD clients of paper 000 (Algorithms 2–4), simulated deterministically.

Each of n clients runs Algorithm 4 on its own data set d_j: at local round i it Poisson-samples s_i
examples, computes U = Σ_h [∇f(ŵ, ξ_h)]_C + N(0, C²σ² I) at its local model ŵ, updates
ŵ ← ŵ − η̄_i U (the printed "+" in van Dijk et al.'s Algorithm 4 is a sign slip) and sends (i, U) to the server,
which adds −η̄_i U to the global model v on arrival.  Once every client's updates for rounds ≤ k−1
are in, the server broadcasts (k, v_k); the interrupt routine (Algorithm 3) replaces ŵ by v_k unless
a newer model has arrived.  The permissible-delay predicate of the experiments is Υ(k, i) = [k ≥ i−1]:
a client may run at most one local round ahead of the latest global model it has received.

The paper simulates this with threads (non-deterministic).  Here round i of
every client happens at virtual time i, in a seeded random client order; updates reach the server at
once; broadcast v_k reaches client j either before its round k (delay 0) or one round late (delay 1),
with P(delay 1) = ``delay_prob`` drawn from a seeded generator.  Υ then always holds.  Every client's
privacy is that of its own local DP-SGD run, so each gets its own run record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from dpcore.accounting.run_record import RunRecord
from dpcore.training.config import TrainConfig
from dpcore.training.sampling import BatchPlan, derive_seed, make_generator
from dpcore.training.schedules import schedule_from_dict
from dpcore.training.trainer import (
    LossFn,
    NonFiniteError,
    Privatizer,
    build_record,
    check_model,
    make_loss,
    resolve_device,
)
from dpcore.validation import check_range

__all__ = ["AsyncResult", "run_async_clients", "broadcast_delays"]


@dataclass
class AsyncResult:
    """The server's final model, its evaluation history and one run record per client."""

    model: nn.Module
    history: list[dict[str, float]]
    records: list[RunRecord]
    received: list[list[int]]  # received[j][i]: global round index client j's round i started from


def broadcast_delays(n_clients: int, rounds: int, delay_prob: float, seed: int) -> Tensor:
    """delays[j, k] ∈ {0, 1}: how many rounds late broadcast v_k reaches client j (v_0 is never late)."""
    gen = make_generator(seed, "async-delays")
    d = (torch.rand(n_clients, rounds + 1, generator=gen) < delay_prob).to(torch.int64)
    d[:, 0] = 0
    return d


def run_async_clients(
    model: nn.Module,
    client_data: Sequence[tuple[Tensor, Tensor]],
    config: TrainConfig,
    *,
    delay_prob: float = 0.5,
    loss: str | LossFn = "cross_entropy",
    eval_fn: Callable[[nn.Module], dict[str, float]] | None = None,
    eval_every: int | None = None,
) -> AsyncResult:
    """Simulate paper 000's asynchronous DP-SGD with ``len(client_data)`` clients.

    ``config`` is each client's local DP-SGD (paper 000: ``sampling="poisson"``,
    ``clipping="individual"``, ``reduce="sum"``, ``noise_convention="standard"``, plain SGD and an
    :class:`~dpcore.training.schedules.InverseTimeDecay` step size with t = Σ_{j<i} s_j).  The number
    of rounds T is ``config.steps`` or the length of a ``batch_size`` schedule (epochs are taken
    relative to the first client's data).  ``model`` holds the default initial model v_0 and is
    returned holding the server's final model.
    """
    if not client_data:
        raise ValueError("client_data must hold at least one client")
    delay_prob = check_range("delay_prob", delay_prob, 0.0, 1.0)
    if config.optimizer != "sgd" or config.optimizer_kwargs or config.modelmix is not None:
        raise ValueError("the asynchronous simulation implements plain SGD (paper 000): optimizer='sgd', no kwargs")
    check_model(model, private=config.private)
    device = resolve_device(config.device)
    model = model.to(device)
    model.train()
    loss_fn = make_loss(loss)
    schedule = schedule_from_dict(config.lr)
    plans, privatizers, data = [], [], []
    for j, (x, y) in enumerate(client_data):
        cfg_j = replace(config, seed=derive_seed(config.seed, "client", j))
        plans.append(BatchPlan(config.sampling, x.shape[0], config.batch_size, seed=cfg_j.seed))
        privatizers.append(Privatizer(model, loss_fn, cfg_j, device))
        data.append((x.to(device), y.to(device)))
    if plans[0].scheduled:
        rounds = len(plans[0].batch_sizes)  # type: ignore[arg-type]
    elif config.steps is not None:
        rounds = config.steps
    else:
        assert config.epochs is not None
        rounds = max(1, round(config.epochs * plans[0].steps_per_epoch()))
    params = [p for p in model.parameters() if p.requires_grad]
    server = [p.detach().clone() for p in params]
    versions = [[t.clone() for t in server]]  # versions[k] = v_k
    local = [[t.clone() for t in server] for _ in client_data]
    received = [0 for _ in client_data]
    started_from: list[list[int]] = [[] for _ in client_data]
    delays = broadcast_delays(len(client_data), rounds, delay_prob, config.seed)
    history: list[dict[str, float]] = []
    samples = 0.0
    every = eval_every or max(1, rounds // 20)

    def load(values: list[Tensor]) -> None:
        with torch.no_grad():
            for p, v in zip(params, values, strict=True):
                p.copy_(v)

    for i in range(rounds):
        planned = plans[0].size(i)
        lr = schedule.lr(i, samples)
        order = torch.randperm(len(client_data), generator=make_generator(config.seed, "async-order", i)).tolist()
        for j in order:
            # Algorithm 3 (ISR): newest broadcast v_k that has reached client j by time i
            newest = max(k for k in range(i + 1) if k + int(delays[j, k]) <= i)
            if newest > received[j]:
                local[j] = [t.clone() for t in versions[newest]]
                received[j] = newest
            if received[j] < i - 1:  # Υ(k, i) = [k ≥ i − 1]
                raise AssertionError("permissible-delay predicate violated")
            started_from[j].append(received[j])
            load(local[j])
            x, y = data[j]
            idx = plans[j].indices(i).to(device)
            with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
                torch.manual_seed(derive_seed(privatizers[j].config.seed, "model", i))
                u = privatizers[j].gradient(x[idx], y[idx], i, plans[j].size(i))
            if not all(bool(torch.isfinite(g).all()) for g in u):
                raise NonFiniteError(f"step {i}, client {j}: the loss or the noisy update is not finite; run stopped")
            with torch.no_grad():
                for t, g in zip(local[j], u, strict=True):
                    t.sub_(lr * g)
                for t, g in zip(server, u, strict=True):
                    t.sub_(lr * g)
        versions.append([t.clone() for t in server])
        if len(versions) > 3:  # only v_{i}, v_{i+1} can still be delivered
            versions[-4] = []
        samples += planned
        if eval_fn is not None and ((i + 1) % every == 0 or i + 1 == rounds):
            load(server)
            model.eval()
            with torch.no_grad():
                metrics = {k: float(v) for k, v in eval_fn(model).items()}
            model.train()
            history.append({"step": float(i + 1), "samples": samples, "lr": lr, **metrics})
    load(server)
    records = []
    for j, (plan, priv) in enumerate(zip(plans, privatizers, strict=True)):
        rec = build_record(
            priv.config,
            plan,
            steps=rounds,
            samples=samples,
            total_steps=rounds,
            optimizer=None,
            schedule=schedule,
            engines=priv.engine_used,
            device=device,
            dtype=params[0].dtype if params else None,
            async_info={
                "n_clients": len(client_data),
                "client": j,
                "delay_prob": delay_prob,
                "delay_predicate": "k >= i - 1",
            },
        )
        records.append(rec)
    return AsyncResult(model, history, records, started_from)
