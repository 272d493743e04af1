"""ISRL-DP silos on Flower: each silo a Flower client, the server a Flower strategy (optional extra ``scale``).

Noisy ISRL-DP MB-SGD (Lowy & Razaviyayn, ICLR 2023, Algorithm 2) with real message passing:

* :class:`SiloClient` holds one silo's records (and nothing else).  Asked for round r at model w_r it
  draws K_i of its records with replacement and sends (1/K_i) Σ_j clip(∇f(w_r, x_j)) + u_i with
  u_i ~ N(0, σ_i² I) -- the same computation as :meth:`dpcore.federated.silos.SiloPool.mb_sgd_messages`,
  on a one-silo pool.  The noise is added inside the client, before the message leaves it (ISRL-DP,
  Def. 2); the clean gradient never leaves :meth:`SiloClient.fit`.
* :class:`IsrlStrategy` is the server: each round it picks M of the N silos uniformly at random
  (Assumption 1.4), averages the M messages it receives and steps w_{r+1} = w_r − η (1/M) Σ_i g̃_i;
  the output is the mean of the last ``window`` iterates (as :func:`dpcore.federated.algorithms.mb_sgd`).

Randomness.  Silo i's minibatch and noise in round r come from its own generators, seeded with
``derive_seed(seed, "silo", i, "round", r)``; nothing is shared between silos.  :class:`PerSiloPool`
is a :class:`~dpcore.federated.silos.SiloPool` that draws the same way, so
``algorithms.mb_sgd(PerSiloPool(...), ...)`` -- the in-process algorithm -- and a Flower run with the
same seeds give the same model up to float rounding (:func:`in_process`).  σ_i is calibrated exactly
as in :mod:`dpcore.papers.p001_isrl.experiments` (:func:`dpcore.papers.p001_isrl.accounting.noise_std`).

Run records.  Each silo keeps the :class:`~dpcore.accounting.run_record.RunRecord` of what it sends
(:func:`silo_record`: its n_i, K_i draws with replacement per round, σ_i, clip norm or Lipschitz bound,
R rounds, data provenance), built by the same code as the in-process algorithm's records
(:func:`dpcore.federated.records.silo_records`), so a Flower run and ``mb_sgd(..., return_records=True)``
give equal records.  A silo answers at most ``spec.rounds`` rounds (the R its σ_i is calibrated for);
after the last round the server asks every silo for its record.

Engines: :func:`simulate` runs the N clients and the server under Flower's simulation engine (Ray,
in this process, started by :func:`dpcore.experiments.ray_backend.start_local_ray`); :func:`serve` and
:func:`connect` run the server and each silo as separate processes (or machines) over gRPC;
``python -m dpcore.papers.p001_isrl.flower_insurance server|silo ...`` does so from a shell for paper
001's insurance silos (see the README).  ``flwr`` is imported inside the functions that need it.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from dpcore.accounting.run_record import RunRecord
from dpcore.federated.models import make_loss
from dpcore.federated.records import silo_records
from dpcore.federated.silos import SiloPool
from dpcore.training.sampling import derive_seed
from dpcore.validation import check_positive_int

__all__ = [
    "SiloSpec",
    "IsrlPlan",
    "PerSiloPool",
    "round_seed",
    "silo_message",
    "silo_record",
    "in_process",
    "make_client",
    "make_strategy",
    "simulate",
    "serve",
    "connect",
]


def round_seed(seed: int, silo: int, round_index: int) -> int:
    """Seed of silo ``silo``'s generators in round ``round_index`` (0-based) of run ``seed``."""
    return derive_seed(int(seed), "silo", int(silo), "round", int(round_index)) % (2**62)


@dataclass(frozen=True)
class SiloSpec:
    """What silo ``index`` holds: its records and its privacy parameters (K_i, σ_i, clip, R).

    ``rounds``: the number of rounds R its σ_i is calibrated for (the silo answers no more);
    ``lipschitz``: the loss's per-record gradient bound (needed for the run record when the silo does
    not clip); ``data``: provenance of its records, copied into its run record.
    """

    index: int
    features: np.ndarray  # [n_i, d]
    labels: np.ndarray  # [n_i]
    loss: str
    num_outputs: int
    batch_size: int
    noise_std: float
    rounds: int
    clip: float | None = None
    lipschitz: float | None = None
    data: str = ""

    def __post_init__(self) -> None:
        if self.features.ndim != 2 or self.labels.shape != self.features.shape[:1]:
            raise ValueError(f"features must be [n, d] and labels [n], got {self.features.shape}, {self.labels.shape}")
        n = self.features.shape[0]
        if not 1 <= int(self.batch_size) <= n:
            raise ValueError(f"batch_size must be in [1, n={n}], got {self.batch_size}")
        if not self.noise_std >= 0 or math.isinf(self.noise_std):
            raise ValueError(f"noise_std must be in [0, inf), got {self.noise_std}")
        check_positive_int("rounds", self.rounds)
        if self.clip is not None and not self.clip > 0:
            raise ValueError(f"clip must be in (0, inf] or None, got {self.clip}")
        if self.lipschitz is not None and not 0 < self.lipschitz < math.inf:
            raise ValueError(f"lipschitz must be in (0, inf) or None, got {self.lipschitz}")
        if not isinstance(self.data, str):
            raise ValueError(f"data must be a str (provenance), got {self.data!r}")


@dataclass(frozen=True)
class IsrlPlan:
    """The server's side: rounds R, silos per round M, stepsize η, run seed, output window, initial model shape."""

    rounds: int
    silos_per_round: int
    stepsize: float
    num_silos: int
    num_outputs: int
    dim: int
    seed: int = 0
    window: int = 8

    def __post_init__(self) -> None:
        check_positive_int("rounds", self.rounds)
        check_positive_int("num_silos", self.num_silos)
        if not 1 <= self.silos_per_round <= self.num_silos:
            raise ValueError(f"silos_per_round must be in [1, N={self.num_silos}], got {self.silos_per_round}")
        if not 0 < self.stepsize < math.inf:
            raise ValueError(f"stepsize must be in (0, inf), got {self.stepsize}")
        check_positive_int("window", self.window)


def _one_silo_pool(spec: SiloSpec) -> SiloPool:
    x = spec.features[None, None]
    y = spec.labels[None, None]
    return SiloPool(x, y, [[x.shape[2]]], make_loss(spec.loss, spec.num_outputs))


def _clip_tensor(clip: float | None, dtype: torch.dtype = torch.float32) -> torch.Tensor | None:
    return None if clip is None or math.isinf(clip) else torch.tensor([float(clip)], dtype=dtype)


def silo_record(spec: SiloSpec) -> RunRecord:
    """Silo ``spec.index``'s run record: R = ``spec.rounds`` messages of K_i draws with replacement + N(0, σ_i²).

    Built by :func:`dpcore.federated.records.silo_records` on a one-silo pool, i.e. exactly the record
    ``algorithms.mb_sgd(..., return_records=True)`` gives this silo (every round counted, an upper bound
    for a silo that sits rounds out; per-record bound = the clip norm, or ``spec.lipschitz`` when smaller
    or when the silo does not clip).  Raises ``ValueError`` when neither bounds the sensitivity.
    """
    pool = _one_silo_pool(spec)
    records = silo_records(
        pool, kind="mb_sgd", rounds=int(spec.rounds), per_silo=torch.tensor([[int(spec.batch_size)]]),
        noise_std=torch.tensor([[[float(spec.noise_std)]]], dtype=pool.dtype), clip=_clip_tensor(spec.clip, pool.dtype),
        lipschitz=spec.lipschitz, trials=[0], data=spec.data,
    )  # fmt: skip
    return records[(0, 0)]


def silo_message(pool: SiloPool, spec: SiloSpec, model: np.ndarray, *, seed: int, round_index: int) -> np.ndarray:
    """Silo ``spec.index``'s noised MB-SGD message at ``model`` [k, d] in round ``round_index`` (Algorithm 2)."""
    pool.reset_randomness(round_seed(seed, spec.index, round_index))
    w = torch.as_tensor(np.asarray(model), dtype=pool.dtype).reshape(1, 1, spec.num_outputs, -1)
    msg = pool.mb_sgd_messages(
        w, trial_of_stream=torch.tensor([0]), participants=torch.tensor([[0]]),
        batch_size=torch.tensor([[int(spec.batch_size)]]), noise_std=torch.tensor([[[float(spec.noise_std)]]]),
        clip=_clip_tensor(spec.clip),
    )  # fmt: skip
    return msg[0, 0, 0].numpy().copy()


class PerSiloPool(SiloPool):
    """A :class:`SiloPool` whose silos draw from their own per-round generators (:func:`round_seed`).

    One trial, one stream, one configuration: what a deployment runs.  :func:`dpcore.federated.algorithms.mb_sgd`
    on it is the in-process twin of a Flower run.
    """

    __slots__ = ("_base_seed", "_round")

    def reset_randomness(self, seed: int) -> None:
        """Start run ``seed`` (``mb_sgd`` calls this): round 0, silo generators seeded by :func:`round_seed`."""
        super().reset_randomness(seed)
        self._base_seed = int(seed)
        self._round = 0

    def mb_sgd_messages(self, models, *, trial_of_stream, participants, batch_size, noise_std, clip=None,
                        clip_scope="example"):
        if models.shape[0] != 1 or models.shape[1] != 1 or self.num_trials != 1:
            raise ValueError("PerSiloPool runs one trial, one stream and one configuration")
        out = []
        for i in participants[0].tolist():
            super().reset_randomness(round_seed(self._base_seed, i, self._round))
            out.append(
                super().mb_sgd_messages(
                    models, trial_of_stream=trial_of_stream, participants=torch.tensor([[i]]), batch_size=batch_size,
                    noise_std=noise_std, clip=clip, clip_scope=clip_scope,
                )  # fmt: skip
            )
        self._round += 1
        return torch.cat(out, dim=1)


def _one_value(silos: Sequence[SiloSpec], name: str) -> Any:
    values = {getattr(s, name) for s in silos}
    if len(values) != 1:
        raise ValueError(f"in_process needs one {name} for all silos, got {sorted(values, key=repr)}")
    return values.pop()


def in_process(silos: Sequence[SiloSpec], plan: IsrlPlan, *, return_records: bool = False):
    """:func:`dpcore.federated.algorithms.mb_sgd` on a :class:`PerSiloPool` of ``silos``: the model [k, d].

    ``return_records=True`` returns ``(model, records)`` with ``records`` = ``{(0, silo): RunRecord}`` from
    ``mb_sgd(..., return_records=True)`` (one configuration).  The silos must share R (= ``plan.rounds``),
    the clip norm, the Lipschitz bound and the data provenance (``mb_sgd`` takes one of each).
    """
    from dpcore.federated import algorithms

    if sorted(s.index for s in silos) != list(range(len(silos))) or len(silos) != plan.num_silos:
        raise ValueError(f"silos must be indexed 0..{plan.num_silos - 1} (plan.num_silos), got {len(silos)} silos")
    if _one_value(silos, "rounds") != plan.rounds:
        raise ValueError(f"the silos' rounds must equal plan.rounds = {plan.rounds}, got {silos[0].rounds}")
    by_index = sorted(silos, key=lambda s: s.index)
    n_max = max(s.features.shape[0] for s in silos)
    d = silos[0].features.shape[1]
    x = np.zeros((1, len(silos), n_max, d), np.float32)
    y = np.zeros((1, len(silos), n_max), np.float32)
    for s in by_index:
        x[0, s.index, : len(s.labels)] = s.features
        y[0, s.index, : len(s.labels)] = s.labels
    sizes = [[len(s.labels) for s in by_index]]
    pool = PerSiloPool(x, y, sizes, make_loss(silos[0].loss, silos[0].num_outputs))
    clip = _one_value(silos, "clip")
    out = algorithms.mb_sgd(
        pool, rounds=plan.rounds, silos_per_round=plan.silos_per_round, stepsize=[plan.stepsize],
        batch_size=np.array([[s.batch_size for s in by_index]]), trial_of_stream=[0],
        noise_std=np.array([[[s.noise_std for s in by_index]]]), clip=None if clip is None else [clip],
        seed=plan.seed, output="window", window=plan.window, return_records=return_records,
        lipschitz=_one_value(silos, "lipschitz"), data=_one_value(silos, "data"),
    )  # fmt: skip
    if return_records:
        return out[0][0, 0].numpy(), out[1]
    return out[0, 0].numpy()


# --------------------------------------------------------------------------- Flower side


def make_client(spec: SiloSpec, seed: int) -> Any:
    """A Flower ``Client`` for silo ``spec``: answers ``fit`` with its noised message only (rounds 1..R only,
    R = ``spec.rounds``), and ``get_properties`` with its index and, when asked (``{"record": True}``), its
    run record (:func:`silo_record`) as JSON."""
    from flwr.client import NumPyClient

    pool = _one_silo_pool(spec)

    class SiloClient(NumPyClient):
        def get_properties(self, config):
            props: dict[str, Any] = {"silo": int(spec.index)}
            if config.get("record"):
                props["record"] = json.dumps(silo_record(spec).to_dict())
            return props

        def fit(self, parameters, config):
            round_ = int(config["round"])
            if not 1 <= round_ <= spec.rounds:
                raise ValueError(f"silo {spec.index}: round must be in [1, {spec.rounds}] (σ is calibrated for "
                                 f"{spec.rounds} rounds), got {round_}")  # fmt: skip
            message = silo_message(pool, spec, parameters[0], seed=seed, round_index=round_ - 1)
            return [message], int(spec.batch_size), {"silo": int(spec.index)}

    return SiloClient().to_client()


def make_strategy(plan: IsrlPlan, *, observer=None) -> Any:
    """The server of Noisy ISRL-DP MB-SGD as a Flower ``Strategy``; ``observer(round, silo, model, message)``
    sees every message as it arrives, with the model the round sent (a test hook).  After the run
    ``strategy.output`` is the model [k, d] and ``strategy.records`` the silos' run records
    ``{(0, silo): RunRecord}`` (asked from every silo after the last round, as ``algorithms.mb_sgd`` keys them)."""
    from flwr.common import FitIns, GetPropertiesIns, ndarrays_to_parameters, parameters_to_ndarrays
    from flwr.server.strategy import Strategy

    from dpcore.federated.algorithms import participants

    class IsrlStrategy(Strategy):
        def __init__(self) -> None:
            self.w = torch.zeros((plan.num_outputs, plan.dim), dtype=torch.float32)
            self.server = torch.Generator().manual_seed(int(plan.seed) + 1)  # as algorithms.mb_sgd
            first = max(0, plan.rounds + 1 - plan.window)
            self.first = first
            self.total = self.w.clone() if first == 0 else torch.zeros_like(self.w)
            self.count = 1 if first == 0 else 0
            self.silo_of: dict[str, int] = {}
            self.output: np.ndarray | None = None
            self.records: dict[tuple[int, int], RunRecord] | None = None

        def initialize_parameters(self, client_manager):
            return ndarrays_to_parameters([self.w.numpy()])

        def _map(self, client_manager) -> dict[int, Any]:
            client_manager.wait_for(plan.num_silos, timeout=120)
            proxies = client_manager.all()
            for cid, proxy in proxies.items():
                if cid not in self.silo_of:
                    res = proxy.get_properties(GetPropertiesIns({}), timeout=120, group_id=None)
                    self.silo_of[cid] = int(res.properties["silo"])
            by_silo = {self.silo_of[cid]: proxy for cid, proxy in proxies.items()}
            if sorted(by_silo) != list(range(plan.num_silos)):
                raise ValueError(f"expected silos 0..{plan.num_silos - 1}, got {sorted(by_silo)}")
            return by_silo

        def configure_fit(self, server_round, parameters, client_manager):
            by_silo = self.by_silo = self._map(client_manager)
            chosen = participants(self.server, 1, plan.num_silos, plan.silos_per_round)[0].tolist()
            self.chosen = chosen
            ins = FitIns(ndarrays_to_parameters([self.w.numpy()]), {"round": int(server_round)})
            return [(by_silo[i], ins) for i in chosen]

        def aggregate_fit(self, server_round, results, failures):
            if failures:
                raise RuntimeError(f"round {server_round}: {len(failures)} silos failed: {failures[:1]}")
            got = {}
            for _proxy, res in results:
                silo = int(res.metrics["silo"])
                msg = parameters_to_ndarrays(res.parameters)[0]
                if observer is not None:
                    observer(server_round, silo, self.w.numpy().copy(), msg.copy())
                got[silo] = torch.as_tensor(msg)
            messages = torch.stack([got[i] for i in self.chosen])[None, :, None]  # [1, M, 1, k, d]
            step = torch.tensor([plan.stepsize], dtype=torch.float64).to(torch.float32)[None, :, None, None]
            self.w = (self.w[None, None] - step * messages.mean(dim=1))[0, 0]
            if server_round >= self.first:
                self.total += self.w
                self.count += 1
            if server_round == plan.rounds:
                self.output = (self.total / self.count).numpy()
                self.records = self._records()
            return ndarrays_to_parameters([self.w.numpy()]), {}

        def _records(self) -> dict[tuple[int, int], RunRecord]:
            records = {}
            for silo, proxy in sorted(self.by_silo.items()):
                res = proxy.get_properties(GetPropertiesIns({"record": True}), timeout=120, group_id=None)
                if int(res.properties["silo"]) != silo or "record" not in res.properties:
                    raise RuntimeError(f"silo {silo} did not send its run record: {dict(res.properties)}")
                records[(0, silo)] = RunRecord.from_dict(json.loads(str(res.properties["record"])))
            return records

        def configure_evaluate(self, server_round, parameters, client_manager):
            return []

        def aggregate_evaluate(self, server_round, results, failures):
            return None, {}

        def evaluate(self, server_round, parameters):
            return None

    return IsrlStrategy()


def _result(strategy, what: str, return_records: bool):
    if strategy.output is None:
        raise RuntimeError(f"the {what} ended before the last round")
    if strategy.records is None:
        raise RuntimeError(f"the {what} ended without the silos' run records")
    return (strategy.output, strategy.records) if return_records else strategy.output


def simulate(
    silos: Sequence[SiloSpec], plan: IsrlPlan, *, observer=None, return_records: bool = False, num_cpus: int = 2,
    client_resources: dict | None = None, start_timeout: float | None = None,
):  # fmt: skip
    """Run the federation under Flower's simulation engine (one virtual client per silo); returns the model
    (with ``return_records=True``: ``(model, {(0, silo): RunRecord})``, the records the silos sent).

    Ray is started here (``num_cpus`` cores, :func:`dpcore.experiments.ray_backend.start_local_ray`, which raises
    ``RayStartError`` naming the failure; ``start_timeout`` in seconds) unless it already runs in this process;
    Flower shuts it down at the end.  ``client_resources``: Flower's per-client resources (default one CPU).
    """
    from flwr.client import ClientApp
    from flwr.server import ServerApp, ServerAppComponents, ServerConfig
    from flwr.simulation import run_simulation

    from dpcore.experiments.ray_backend import require, start_local_ray

    check_positive_int("num_cpus", num_cpus)
    if sorted(s.index for s in silos) != list(range(plan.num_silos)):
        raise ValueError(f"silos must be indexed 0..{plan.num_silos - 1} (plan.num_silos), got {len(silos)} silos")
    strategy = make_strategy(plan, observer=observer)
    by_index = {s.index: s for s in silos}

    def client_fn(context):
        return make_client(by_index[int(context.node_config["partition-id"])], plan.seed)

    def server_fn(context):
        return ServerAppComponents(strategy=strategy, config=ServerConfig(num_rounds=plan.rounds))

    ray = require("ray")
    started = not ray.is_initialized()
    if started:  # as Flower's own start: the workers see this process's import path
        path = os.pathsep.join([*sys.path, *filter(None, [os.environ.get("PYTHONPATH")])])
        start_local_ray(num_cpus, timeout_s=start_timeout, runtime_env={"env_vars": {"PYTHONPATH": path}})
    config = {"client_resources": client_resources or {"num_cpus": 1, "num_gpus": 0.0}}
    try:
        run_simulation(server_app=ServerApp(server_fn=server_fn), client_app=ClientApp(client_fn=client_fn),
                       num_supernodes=len(silos), backend_config=config)  # fmt: skip
    finally:
        if started and ray.is_initialized():
            ray.shutdown()
    return _result(strategy, "Flower simulation", return_records)


def serve(plan: IsrlPlan, *, address: str = "127.0.0.1:8080", observer=None, return_records: bool = False):
    """Run the server (a blocking gRPC server at ``address``) until ``plan.rounds`` rounds are done; returns the
    model (with ``return_records=True``: ``(model, {(0, silo): RunRecord})``, the records the silos sent)."""
    import flwr.server

    strategy = make_strategy(plan, observer=observer)
    flwr.server.start_server(server_address=address, config=flwr.server.ServerConfig(num_rounds=plan.rounds),
                             strategy=strategy)  # fmt: skip
    return _result(strategy, "Flower server", return_records)


def connect(spec: SiloSpec, *, seed: int, address: str = "127.0.0.1:8080") -> RunRecord:
    """Run silo ``spec`` as a client of the server at ``address`` until the server ends the run; returns the
    silo's own run record (:func:`silo_record`, the one it sent the server)."""
    import flwr.client

    flwr.client.start_client(server_address=address, client=make_client(spec, seed), insecure=True)
    return silo_record(spec)
