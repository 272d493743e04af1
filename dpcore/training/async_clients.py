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

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import Tensor, nn

from dpcore.accounting.events import epochs_to_steps
from dpcore.accounting.run_record import RunRecord
from dpcore.training.config import TrainConfig
from dpcore.training.integrity import (
    check_state,
    check_training_data,
    data_fingerprint,
    field_defaults,
    model_fingerprint,
)
from dpcore.training.sampling import BatchPlan, derive_seed, make_generator, seeded_default_rng
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
from dpcore.validation import check_positive_int, check_range

__all__ = ["AsyncResult", "AsyncTrainer", "run_async_clients", "broadcast_delays", "CHECKPOINT_FORMAT"]

CHECKPOINT_FORMAT = 1


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


class AsyncTrainer:
    """Step-level control of the simulation (one :meth:`step` = local round i of every client), resumable.

    The interface follows :class:`~dpcore.training.trainer.Trainer` (``total_steps``, ``step_index``,
    ``history``, ``on_step``, :meth:`run`, :meth:`state_dict` / :meth:`load_state_dict`), so the experiment
    runner can drive, checkpoint and resume it; :meth:`record` is client 0's run record and :meth:`records`
    all clients' (every client's privacy is that of its own local DP-SGD run).  Everything random is seeded
    per (client, round), so a run resumed from :meth:`state_dict` ends with exactly the parameters of an
    uninterrupted one on the CPU.
    """

    def __init__(
        self,
        model: nn.Module,
        client_data: Sequence[tuple[Tensor, Tensor]],
        config: TrainConfig,
        *,
        delay_prob: float = 0.5,
        loss: str | LossFn = "cross_entropy",
        eval_fn: Callable[[nn.Module], dict[str, float]] | None = None,
        eval_every: int | None = None,
        on_step: Callable[[AsyncTrainer], None] | None = None,
    ) -> None:
        if not isinstance(config, TrainConfig):
            raise ValueError("config must be a TrainConfig")
        if not client_data:
            raise ValueError("client_data must hold at least one client")
        self.delay_prob = check_range("delay_prob", delay_prob, 0.0, 1.0)
        if config.optimizer != "sgd" or config.optimizer_kwargs or config.modelmix is not None:
            raise ValueError(
                "the asynchronous simulation implements plain SGD (paper 000): optimizer='sgd', no kwargs"
            )
        if eval_every is not None:
            eval_every = check_positive_int("eval_every", eval_every)
        check_model(model, private=config.private)
        make_loss(loss)  # an unknown loss name is refused before the data are checked against it
        self.config = config
        self.device = resolve_device(config.device)
        self.model = model.to(self.device)
        client_data = [
            check_training_data(self.model, pair, loss, name=f"client_data[{j}]", device=self.device)
            for j, pair in enumerate(client_data)
        ]  # labels in range, numpy arrays converted
        self.model.train()
        self.eval_fn = eval_fn
        self.on_step = on_step
        loss_fn = make_loss(loss)
        self.schedule = schedule_from_dict(config.lr)
        self.plans, self.privatizers, self.data = [], [], []
        for j, (x, y) in enumerate(client_data):
            cfg_j = replace(config, seed=derive_seed(config.seed, "client", j))
            self.plans.append(BatchPlan(config.sampling, x.shape[0], config.batch_size, seed=cfg_j.seed))
            self.privatizers.append(Privatizer(self.model, loss_fn, cfg_j, self.device))
            self.data.append((x.to(self.device), y.to(self.device)))
        if self.plans[0].scheduled:
            self.total_steps = len(self.plans[0].batch_sizes)  # type: ignore[arg-type]
        elif config.steps is not None:
            self.total_steps = config.steps
        else:
            assert config.epochs is not None
            self.total_steps = epochs_to_steps(config.epochs, self.plans[0].steps_per_epoch())
        self.n_clients = len(client_data)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.server = [p.detach().clone() for p in self.params]
        self.versions: dict[int, list[Tensor]] = {0: [t.clone() for t in self.server]}  # k -> v_k (last two)
        self.local = [[t.clone() for t in self.server] for _ in client_data]
        self.received = [0] * self.n_clients
        self.started_from: list[list[int]] = [[] for _ in client_data]
        self.delays = broadcast_delays(self.n_clients, self.total_steps, self.delay_prob, config.seed)
        self.history: list[dict[str, float]] = []
        self.samples = 0.0
        self.step_index = 0
        self.eval_every = eval_every or max(1, self.total_steps // 20)
        self._last_lr = self.schedule.lr(0, 0.0)
        self._data_fingerprint: str | None = None  # computed on the first checkpoint (see fingerprints())

    def _load(self, values: list[Tensor]) -> None:
        with torch.no_grad():
            for p, v in zip(self.params, values, strict=True):
                p.copy_(v)

    # ---- one round ------------------------------------------------------------------------
    def step(self) -> None:
        """Local round ``self.step_index`` of every client, in a seeded random order (Algorithms 3 and 4)."""
        if self.step_index >= self.total_steps:
            raise ValueError(f"the run is complete ({self.total_steps} rounds)")
        i = self.step_index
        planned = self.plans[0].size(i)
        lr = self.schedule.lr(i, self.samples)
        order = torch.randperm(self.n_clients, generator=make_generator(self.config.seed, "async-order", i)).tolist()
        for j in order:
            # Algorithm 3 (ISR): newest broadcast v_k that has reached client j by time i
            newest = max(k for k in range(max(i - 1, 0), i + 1) if k + int(self.delays[j, k]) <= i)
            if newest > self.received[j]:
                self.local[j] = [t.clone() for t in self.versions[newest]]
                self.received[j] = newest
            if self.received[j] < i - 1:  # Υ(k, i) = [k ≥ i − 1]
                raise AssertionError("permissible-delay predicate violated")
            self.started_from[j].append(self.received[j])
            self._load(self.local[j])
            x, y = self.data[j]
            priv = self.privatizers[j]
            idx = self.plans[j].indices(i).to(self.device)
            with seeded_default_rng(priv.config.seed, "model", i, device=self.device):
                u = priv.gradient(x[idx], y[idx], i, self.plans[j].size(i))
            if not all(bool(torch.isfinite(g).all()) for g in u):
                raise NonFiniteError(f"step {i}, client {j}: the loss or the noisy update is not finite; run stopped")
            with torch.no_grad():
                for t, g in zip(self.local[j], u, strict=True):
                    t.sub_(lr * g)
                for t, g in zip(self.server, u, strict=True):
                    t.sub_(lr * g)
        self.versions[i + 1] = [t.clone() for t in self.server]
        self.versions.pop(i - 1, None)  # round i + 1 starts from v_i or v_{i+1} (Υ), never older
        self.samples += planned
        self._last_lr = lr
        self.step_index += 1
        if self.step_index % self.eval_every == 0 or self.step_index == self.total_steps:
            self.evaluate()
        self._load(self.server)
        if self.on_step is not None:
            self.on_step(self)

    def evaluate(self) -> dict[str, float]:
        """Log (and return) the evaluation of the server's model v after the current round."""
        entry: dict[str, float] = {
            "step": float(self.step_index),
            "samples": self.samples,
            "epoch": self.samples / self.plans[0].dataset_size,
            "lr": self._last_lr,
        }
        groups = sum(p.groups for p in self.privatizers)
        if groups:
            entry["clipped_fraction"] = float(sum(float(p.clipped) for p in self.privatizers)) / groups
        if self.eval_fn is not None:
            self._load(self.server)
            self.model.eval()
            with torch.no_grad():
                entry.update({k: float(v) for k, v in self.eval_fn(self.model).items()})
            self.model.train()
        self.history.append(entry)
        return entry

    def run(self, until: int | None = None) -> AsyncResult:
        """Run rounds until ``until`` (default: the end); the model then holds the server's model."""
        stop = self.total_steps if until is None else min(until, self.total_steps)
        while self.step_index < stop:
            self.step()
        self._load(self.server)
        return AsyncResult(self.model, list(self.history), self.records(), [list(s) for s in self.started_from])

    def time_client_round(self, examples: int) -> float:
        """Seconds of one client's local round on ``examples`` examples (clipped sum and noise; nothing is
        updated): the dry run's probe, from which it extrapolates a round of s examples linearly."""
        examples = check_positive_int("examples", examples)
        x, y = self.data[0]
        n = min(examples, x.shape[0])
        sync = torch.cuda.synchronize if self.device.type == "cuda" else (lambda: None)
        sync()
        t0 = time.perf_counter()
        self.privatizers[0].gradient(x[:n], y[:n], 0, n)
        sync()
        return (time.perf_counter() - t0) * examples / n

    # ---- records --------------------------------------------------------------------------
    def records(self) -> list[RunRecord]:
        """One run record per client (its own local DP-SGD run; the asynchrony is recorded in ``async_``)."""
        out = []
        for j, (plan, priv) in enumerate(zip(self.plans, self.privatizers, strict=True)):
            out.append(
                build_record(
                    priv.config, plan, steps=self.step_index, samples=self.samples, total_steps=self.total_steps,
                    optimizer=None, schedule=self.schedule, engines=priv.engine_used, device=self.device,
                    dtype=self.params[0].dtype if self.params else None,
                    async_info={"n_clients": self.n_clients, "client": j, "delay_prob": self.delay_prob,
                                "delay_predicate": "k >= i - 1"},
                )  # fmt: skip
            )
        return out

    def record(self) -> RunRecord:
        """Client 0's run record (every client runs the same local DP-SGD; see :meth:`records`)."""
        return self.records()[0]

    # ---- checkpoints ----------------------------------------------------------------------
    def _fingerprint(self) -> str:
        d = self.config.as_dict()
        d.pop("device", None)
        d["n_clients"], d["delay_prob"] = self.n_clients, self.delay_prob
        d["dataset_sizes"] = [p.dataset_size for p in self.plans]
        return json.dumps(d, sort_keys=True, default=str)

    def fingerprints(self) -> dict[str, str]:
        """What a checkpoint of this simulation must continue: every client's data, in order, and the model's
        structure (see :mod:`dpcore.training.integrity`; the data's is computed once, on first use)."""
        if self._data_fingerprint is None:
            self._data_fingerprint = data_fingerprint(self.data)
        return {"data": self._data_fingerprint, "model": model_fingerprint(self.model)}

    def state_dict(self) -> dict[str, Any]:
        def cpu(ts: list[Tensor]) -> list[Tensor]:
            return [t.detach().cpu().clone() for t in ts]

        return {
            "format": CHECKPOINT_FORMAT,
            "fingerprint": self._fingerprint(),
            **{f"{kind}_fingerprint": value for kind, value in self.fingerprints().items()},
            "step": self.step_index,
            "samples": self.samples,
            "last_lr": self._last_lr,
            "server": cpu(self.server),
            "versions": {int(k): cpu(v) for k, v in self.versions.items()},
            "local": [cpu(t) for t in self.local],
            "received": list(self.received),
            "started_from": [list(s) for s in self.started_from],
            "history": [dict(h) for h in self.history],
            "schedule": self.schedule.state_dict(),
            "clipped": [p.clipped.detach().cpu().clone() for p in self.privatizers],
            "groups": [p.groups for p in self.privatizers],
            "engine_used": [sorted(p.engine_used) for p in self.privatizers],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the simulation saved by :meth:`state_dict`; a state of another configuration, other client data
        or another model is refused (:class:`~dpcore.training.integrity.CheckpointError`), one without data and model
        fingerprints (written before they were recorded) is accepted with a warning."""
        check_state(state, fmt=CHECKPOINT_FORMAT, keys=_STATE_KEYS, fingerprint=self._fingerprint(),
                    defaults=field_defaults(TrainConfig), fingerprints=self.fingerprints())  # fmt: skip

        def dev(ts: list[Tensor]) -> list[Tensor]:
            return [t.to(self.device) for t in ts]

        self.step_index = int(state["step"])
        self.samples = float(state["samples"])
        self._last_lr = float(state["last_lr"])
        self.server = dev(state["server"])
        self.versions = {int(k): dev(v) for k, v in state["versions"].items()}
        self.local = [dev(t) for t in state["local"]]
        self.received = [int(k) for k in state["received"]]
        self.started_from = [[int(k) for k in s] for s in state["started_from"]]
        self.history = [dict(h) for h in state["history"]]
        self.schedule.load_state_dict(state["schedule"])
        for p, c, g, e in zip(self.privatizers, state["clipped"], state["groups"], state["engine_used"], strict=True):
            p.clipped, p.groups, p.engine_used = c.clone(), int(g), set(e)
        self._load(self.server)


#: entries every checkpoint of :class:`AsyncTrainer` holds (the data and model fingerprints are checked when present)
_STATE_KEYS = ("fingerprint", "step", "samples", "last_lr", "server", "versions", "local", "received", "started_from",
               "history", "schedule", "clipped", "groups", "engine_used")  # fmt: skip


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
    """Simulate paper 000's asynchronous DP-SGD with ``len(client_data)`` clients (one call; see :class:`AsyncTrainer`).

    ``config`` is each client's local DP-SGD (paper 000: ``sampling="poisson"``,
    ``clipping="individual"``, ``reduce="sum"``, ``noise_convention="standard"``, plain SGD and an
    :class:`~dpcore.training.schedules.InverseTimeDecay` step size with t = Σ_{j<i} s_j).  The number
    of rounds T is ``config.steps`` or the length of a ``batch_size`` schedule (epochs are taken
    relative to the first client's data).  ``model`` holds the default initial model v_0 and is
    returned holding the server's final model.  The server's model is evaluated every ``eval_every``
    rounds (default T/20) and after the last.
    """
    trainer = AsyncTrainer(
        model, client_data, config, delay_prob=delay_prob, loss=loss, eval_fn=eval_fn, eval_every=eval_every
    )
    return trainer.run()
