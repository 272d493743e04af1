"""ISRL-DP silos on Flower's Message API: a ClientApp per silo, a ServerApp main loop (optional extra ``scale``).

Noisy ISRL-DP MB-SGD (Lowy & Razaviyayn, ICLR 2023, Algorithm 2) with real message passing, in the terms of
Flower's Message API (``flwr.app``: ``Message``, ``RecordDict``, ``ArrayRecord``, ``ConfigRecord``; Flower's
"Upgrade to Message API" guide):

* A silo (:func:`silo_train`, the ``train`` handler of :data:`dpcore.federated.flower_app.client_app`) holds one
  silo's records and nothing else.  Asked for round r at model w_r (ArrayRecord ``model``, ConfigRecord
  ``config.round``) it draws K_i of its records with replacement and replies with
  (1/K_i) Σ_j clip(∇f(w_r, x_j)) + u_i, u_i ~ N(0, σ_i² I) -- the computation of
  :meth:`dpcore.federated.silos.SiloPool.mb_sgd_messages` on a one-silo pool -- as ArrayRecord ``update``, with its
  run record in ConfigRecord ``silo``.  The noise is added inside the silo, before anything leaves it (ISRL-DP,
  Def. 2).  The silo keeps a ledger of the rounds it trained in Flower's per-node ``Context.state`` and refuses a
  round outside 1..R or one it already trained.
* The server (:func:`run_server`, the main loop of :data:`dpcore.federated.flower_app.server_app`) asks every
  SuperNode which silo it holds (``query.describe``), then each round picks M of the N silos uniformly at random
  (Assumption 1.4), checks each reply (:func:`read_update`: a malformed one is refused naming the field), averages
  the accepted messages and steps w_{r+1} = w_r − η · mean; the output is the mean of the last ``window`` iterates
  (as :func:`dpcore.federated.algorithms.mb_sgd`).  Its :class:`FederatedResult` keeps every round: the silos
  asked, answered, lost or refused, the model sent and every message received.

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
give equal records.  It sends it before round 1 and with every update.  A silo that was asked in a round has spent
it whether or not its update arrived: :meth:`FederatedResult.spent_records` counts every round a silo was asked in.

Where the silos come from: the run config names a *silo source* (:data:`SILO_SOURCE`, ``"module:function"``,
:func:`load_federation`), e.g. paper 001's insurance silos
(:func:`dpcore.papers.p001_isrl.flower_insurance.silos_from_config`); a SuperNode's node config ``partition-id``
says which silo it holds.  :mod:`dpcore.federated.flower_app` holds the ``ClientApp`` and ``ServerApp``;
:mod:`dpcore.federated.flower_loopback` starts a SuperLink and SuperNodes on 127.0.0.1 and runs ``flwr run``
(simulation and deployment runtimes); the app project is ``flower/isrl-insurance/`` (see the README).
``flwr`` is imported inside the functions that need it.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
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
    "TRAIN",
    "DESCRIBE",
    "SILO_SOURCE",
    "FederationError",
    "MalformedReply",
    "train_instruction",
    "silo_train",
    "silo_ledger",
    "keep_silo",
    "kept_silo",
    "silo_description",
    "read_update",
    "read_description",
    "RoundLog",
    "FederatedResult",
    "write_result",
    "read_result",
    "run_server",
    "load_federation",
    "silo_of",
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

    def mb_sgd_messages(
        self, models, *, trial_of_stream, participants, batch_size, noise_std, clip=None, clip_scope="example"
    ):
        if models.shape[0] != 1 or models.shape[1] != 1 or self.num_trials != 1:
            raise ValueError("PerSiloPool runs one trial, one stream and one configuration")
        out = []
        for i in participants[0].tolist():
            super().reset_randomness(round_seed(self._base_seed, i, self._round))
            out.append(
                super().mb_sgd_messages(
                    models,
                    trial_of_stream=trial_of_stream,
                    participants=torch.tensor([[i]]),
                    batch_size=batch_size,
                    noise_std=noise_std,
                    clip=clip,
                    clip_scope=clip_scope,
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


# --------------------------------------------------------------------------- the messages (Flower's Message API)

#: The server's instruction to a silo for one round (Flower's ``train`` message type).
TRAIN = "train"
#: The server's question to every SuperNode before round 1: which silo it holds, and that silo's run record.
DESCRIBE = "query.describe"
#: Default limits (seconds): for the N SuperNodes to connect, and for each round's replies.
CONNECT_TIMEOUT_S = 120.0
ROUND_TIMEOUT_S = 300.0
#: The keys of a silo's ledger (the rounds it has trained) and of its kept spec in Flower's per-node ``Context.state``.
LEDGER = "dpcore-silo-ledger"
SPEC = "dpcore-silo-spec"
# Flower's error codes (flwr.common.constant.ErrorCode) that mean the reply never came: the node was gone, the
# message or its reply expired, or the ClientApp process died
_LOST_CODES = {3: "message unavailable", 4: "reply unavailable", 5: "node unavailable", 8: "ClientApp crashed"}


class FederationError(RuntimeError):
    """The federation cannot run: SuperNodes missing after the time limit, two SuperNodes holding one silo, a silo
    calibrated for another number of rounds, a run that failed or produced no result."""


class MalformedReply(ValueError):
    """A silo's reply the server refuses; the message names the field (``update.update``, ``silo.round``, ...)."""


def _flwr_app() -> Any:
    try:
        import flwr.app
    except ImportError as err:  # the optional extra
        raise ImportError("dpcore.federated.flower needs flwr: pip install -e '.[scale]'") from err
    return flwr.app


def _record_json(spec: SiloSpec) -> str:
    return json.dumps(silo_record(spec).to_dict(), sort_keys=True)


def train_instruction(model: np.ndarray, round_: int) -> Any:
    """The content of round ``round_``'s ``train`` message: ArrayRecord ``model`` (array ``model``, [k, d], float32)
    and ConfigRecord ``config`` (``round``, 1-based)."""
    app = _flwr_app()
    array = app.Array(np.ascontiguousarray(model, dtype=np.float32))
    return app.RecordDict(
        {"model": app.ArrayRecord({"model": array}), "config": app.ConfigRecord({"round": int(round_)})}
    )


def _field(content: Any, record: str, key: str, where: str) -> Any:
    records = {"model": content.array_records, "update": content.array_records}.get(record, content.config_records)
    if record not in records:
        raise MalformedReply(f"{where}: field '{record}' is missing")
    if key not in records[record]:
        raise MalformedReply(f"{where}: field '{record}.{key}' is missing")
    return records[record][key]


def _int_field(content: Any, record: str, key: str, where: str) -> int:
    value = _field(content, record, key, where)
    if isinstance(value, bool) or not isinstance(value, int):
        raise MalformedReply(f"{where}: field '{record}.{key}' must be an integer, got {value!r}")
    return int(value)


def _array_field(content: Any, record: str, key: str, where: str, shape: tuple[int, ...]) -> np.ndarray:
    array = _field(content, record, key, where)
    try:
        value = array.numpy()
    except (AttributeError, ValueError, TypeError) as err:
        raise MalformedReply(f"{where}: field '{record}.{key}' is not a numpy array: {err}") from err
    if value.dtype != np.float32 or value.shape != shape:
        raise MalformedReply(f"{where}: field '{record}.{key}' must be float32 of shape {shape}, "
                             f"got {value.dtype} of shape {value.shape}")  # fmt: skip
    if not np.all(np.isfinite(value)):
        raise MalformedReply(f"{where}: field '{record}.{key}' has non-finite entries")
    return value


def _record_field(content: Any, where: str, rounds: int) -> RunRecord:
    text = _field(content, "silo", "record", where)
    try:
        record = RunRecord.from_dict(json.loads(text))
    except (TypeError, ValueError) as err:  # json.JSONDecodeError is a ValueError
        raise MalformedReply(f"{where}: field 'silo.record' is not a run record: {err}") from err
    if record.steps != rounds:
        raise MalformedReply(f"{where}: field 'silo.record' counts {record.steps} rounds, the plan runs {rounds}")
    return record


def keep_silo(state: Any, spec: SiloSpec, seed: int) -> None:
    """Keep silo ``spec`` (its records and privacy parameters) and the run ``seed`` in its node's ``Context.state``
    (ArrayRecord and ConfigRecord :data:`SPEC`), where its SuperNode keeps them between messages: later messages
    read them back (:func:`kept_silo`) instead of loading the silo source again."""
    app = _flwr_app()
    arrays = {
        "features": app.Array(np.ascontiguousarray(spec.features)),
        "labels": app.Array(np.ascontiguousarray(spec.labels)),
    }
    scalars: dict[str, Any] = {
        "index": int(spec.index), "loss": spec.loss, "num_outputs": int(spec.num_outputs),
        "batch_size": int(spec.batch_size), "noise_std": float(spec.noise_std), "rounds": int(spec.rounds),
        "data": spec.data, "seed": int(seed),
    }  # fmt: skip
    for name in ("clip", "lipschitz"):
        if getattr(spec, name) is not None:
            scalars[name] = float(getattr(spec, name))
    state[SPEC] = app.ArrayRecord(arrays)
    state[SPEC + "-config"] = app.ConfigRecord(scalars)


def kept_silo(state: Any) -> tuple[SiloSpec, int] | None:
    """``(spec, seed)`` kept by :func:`keep_silo` in ``state``, or None."""
    if SPEC not in state.array_records or SPEC + "-config" not in state.config_records:
        return None
    arrays, c = state.array_records[SPEC], state.config_records[SPEC + "-config"]
    spec = SiloSpec(
        int(c["index"]), arrays["features"].numpy(), arrays["labels"].numpy(), str(c["loss"]), int(c["num_outputs"]),
        int(c["batch_size"]), float(c["noise_std"]), int(c["rounds"]),
        float(c["clip"]) if "clip" in c else None, float(c["lipschitz"]) if "lipschitz" in c else None,
        str(c["data"]),
    )  # fmt: skip
    return spec, int(c["seed"])


def silo_ledger(state: Any) -> list[int]:
    """The rounds silo has trained so far, from its ``Context.state`` (kept by its SuperNode between messages)."""
    if LEDGER not in state.config_records:
        return []
    return [int(r) for r in state.config_records[LEDGER]["rounds"]]


def silo_train(spec: SiloSpec, seed: int, content: Any, state: Any) -> Any:
    """Silo ``spec``'s reply to a ``train`` message (content ``content``, see :func:`train_instruction`).

    The noised MB-SGD message of Algorithm 2 at the model sent, for the round asked (:func:`silo_message`, with the
    silo's own generators), as ArrayRecord ``update`` (array ``update``), and ConfigRecord ``silo`` with its
    ``index``, the ``round``, ``rounds-trained`` (its ledger's length) and its ``record`` (:func:`silo_record` as
    JSON).  Refused with ``ValueError`` naming the field: a round outside 1..R (its σ is calibrated for R rounds), a
    round it has already trained (a replay would spend its ε twice), a model of the wrong shape or not finite.  The
    round enters the ledger (``state``, Flower's per-node ``Context.state``) before the message is computed: a silo
    that trained has spent the round whether or not its reply arrives.
    """
    app = _flwr_app()
    where = f"silo {spec.index}"
    round_ = _int_field(content, "config", "round", where)
    if not 1 <= round_ <= spec.rounds:
        raise ValueError(f"{where}: config.round must be in [1, {spec.rounds}] (σ is calibrated for {spec.rounds} "
                         f"rounds), got {round_}")  # fmt: skip
    trained = silo_ledger(state)
    if round_ in trained:
        raise ValueError(f"{where}: config.round {round_} was already trained (a replay would spend its ε twice)")
    model = _array_field(content, "model", "model", where, (spec.num_outputs, spec.features.shape[1]))
    trained.append(round_)
    state[LEDGER] = app.ConfigRecord({"rounds": trained})
    message = silo_message(_one_silo_pool(spec), spec, model, seed=seed, round_index=round_ - 1)
    silo = {"index": int(spec.index), "round": round_, "rounds-trained": len(trained), "record": _record_json(spec)}
    return app.RecordDict({"update": app.ArrayRecord({"update": app.Array(message)}), "silo": app.ConfigRecord(silo)})


def silo_description(spec: SiloSpec) -> Any:
    """Silo ``spec``'s reply to the ``query.describe`` message: ConfigRecord ``silo`` with its ``index``, the
    ``rounds`` R its σ is calibrated for and its ``record`` (:func:`silo_record` as JSON)."""
    app = _flwr_app()
    silo = {"index": int(spec.index), "rounds": int(spec.rounds), "record": _record_json(spec)}
    return app.RecordDict({"silo": app.ConfigRecord(silo)})


def read_update(content: Any, *, silo: int, round_: int, plan: IsrlPlan, record: RunRecord) -> np.ndarray:
    """The server's check of silo ``silo``'s reply in round ``round_``: its noised message [k, d].

    Raises :class:`MalformedReply` naming the field when the reply lacks ArrayRecord ``update`` or ConfigRecord
    ``silo``, when the update is not float32 [k, d] or not finite, when ``silo.index`` or ``silo.round`` is not the
    silo and round asked, or when ``silo.record`` is not the run record the silo sent before round 1 (``record``).
    """
    where = f"silo {silo}, round {round_}"
    update = _array_field(content, "update", "update", where, (plan.num_outputs, plan.dim))
    if (index := _int_field(content, "silo", "index", where)) != silo:
        raise MalformedReply(f"{where}: field 'silo.index' is {index}, the message went to silo {silo}")
    if (answered := _int_field(content, "silo", "round", where)) != round_:
        raise MalformedReply(f"{where}: field 'silo.round' is {answered}, the message asked for round {round_}")
    if not 1 <= (trained := _int_field(content, "silo", "rounds-trained", where)) <= plan.rounds:
        raise MalformedReply(f"{where}: field 'silo.rounds-trained' must be in [1, {plan.rounds}], got {trained}")
    if _record_field(content, where, plan.rounds) != record:
        raise MalformedReply(f"{where}: field 'silo.record' differs from the record the silo sent before round 1")
    return update


def read_description(content: Any, *, node: int, plan: IsrlPlan) -> tuple[int, RunRecord]:
    """The server's check of a ``query.describe`` reply from node ``node``: (silo index, its run record).  Raises
    :class:`MalformedReply` naming the field (``silo.index`` outside 0..N-1, ``silo.rounds`` other than R, ...)."""
    where = f"node {node}"
    index = _int_field(content, "silo", "index", where)
    if not 0 <= index < plan.num_silos:
        raise MalformedReply(f"{where}: field 'silo.index' must be in [0, {plan.num_silos - 1}], got {index}")
    if (rounds := _int_field(content, "silo", "rounds", where)) != plan.rounds:
        raise MalformedReply(f"{where}: field 'silo.rounds' is {rounds} (the rounds silo {index}'s σ is calibrated "
                             f"for), the plan runs {plan.rounds}")  # fmt: skip
    return index, _record_field(content, where, plan.rounds)


# --------------------------------------------------------------------------- the server's record of a run


@dataclass(frozen=True)
class RoundLog:
    """What the server sent and received in one round: the silos ``asked`` (the M sampled), those whose update
    was used (``answered``), those whose reply never came (``lost``: silo -> why) or was refused (``refused``:
    silo -> the field or the silo's error), the ``model`` sent and every accepted ``messages`` (silo -> [k, d])."""

    round: int
    asked: tuple[int, ...]
    answered: tuple[int, ...]
    lost: dict[int, str]
    refused: dict[int, str]
    model: np.ndarray
    messages: dict[int, np.ndarray]

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round, "asked": list(self.asked), "answered": list(self.answered),
            "lost": {str(k): v for k, v in self.lost.items()}, "refused": {str(k): v for k, v in self.refused.items()},
            "model": self.model.tolist(), "messages": {str(k): v.tolist() for k, v in self.messages.items()},
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RoundLog:
        return cls(
            int(d["round"]), tuple(d["asked"]), tuple(d["answered"]), {int(k): v for k, v in d["lost"].items()},
            {int(k): v for k, v in d["refused"].items()}, np.asarray(d["model"], np.float32),
            {int(k): np.asarray(v, np.float32) for k, v in d["messages"].items()},
        )  # fmt: skip


@dataclass(frozen=True)
class FederatedResult:
    """A Flower run of Noisy ISRL-DP MB-SGD as the server saw it.

    ``model``: the output [k, d] (mean of the last ``plan.window`` iterates); ``records``: each silo's run record
    ``{(0, silo): RunRecord}`` as it sent it before round 1 (R rounds: what its σ is calibrated for, the record
    ``algorithms.mb_sgd(..., return_records=True)`` gives); ``rounds``: one :class:`RoundLog` per round.
    """

    model: np.ndarray
    records: dict[tuple[int, int], RunRecord]
    rounds: tuple[RoundLog, ...]
    plan: IsrlPlan

    def asked(self, silo: int) -> list[int]:
        """The rounds silo ``silo`` was asked to train in."""
        return [r.round for r in self.rounds if silo in r.asked]

    def used(self, silo: int) -> list[int]:
        """The rounds whose average includes silo ``silo``'s update."""
        return [r.round for r in self.rounds if silo in r.answered]

    def spent_records(self) -> dict[int, RunRecord]:
        """Silo -> the run record of what it spent: one step per round it was asked in, whether or not its update
        arrived or was used (a silo that trained has spent the round; one that refused before training is counted
        too, an upper bound).  Silos never asked are absent."""
        return {s: rec.replace(steps=len(self.asked(s))) for (_c, s), rec in sorted(self.records.items())
                if self.asked(s)}  # fmt: skip

    def observed(self) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
        """Every accepted message as (round, silo, model sent, message): all the server ever saw of the silos."""
        return [(r.round, s, r.model, m) for r in self.rounds for s, m in sorted(r.messages.items())]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model.tolist(), "plan": dataclasses.asdict(self.plan),
            "records": {str(s): rec.to_dict() for (_c, s), rec in sorted(self.records.items())},
            "rounds": [r.to_dict() for r in self.rounds],
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FederatedResult:
        return cls(
            np.asarray(d["model"], np.float32), {(0, int(s)): RunRecord.from_dict(r) for s, r in d["records"].items()},
            tuple(RoundLog.from_dict(r) for r in d["rounds"]), IsrlPlan(**d["plan"]),
        )  # fmt: skip


RESULT_FILE = "result.json"


def write_result(out_dir: str | Path, result: FederatedResult | BaseException) -> Path:
    """Write ``result`` (or the error that ended the run) to ``out_dir``/result.json; returns the path."""
    path = Path(out_dir) / RESULT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(result, BaseException):
        body: dict[str, Any] = {"error": f"{type(result).__name__}: {result}"}
    else:
        body = result.to_dict()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body) + "\n")
    tmp.replace(path)
    return path


def read_result(out_dir: str | Path) -> FederatedResult:
    """The result the ServerApp wrote to ``out_dir``; raises :class:`FederationError` with the run's error when it
    failed, or when there is no result."""
    path = Path(out_dir) / RESULT_FILE
    if not path.is_file():
        raise FederationError(f"the ServerApp wrote no result to {path}")
    body = json.loads(path.read_text())
    if "error" in body:
        raise FederationError(body["error"])
    return FederatedResult.from_dict(body)


# --------------------------------------------------------------------------- the server's main loop


#: Seconds between the server's pulls for replies (Flower's ``Grid.send_and_receive`` waits 3 s between pulls).
POLL_S = 0.5


def _send(grid: Any, contents: dict[int, Any], message_type: str, group: str, timeout: float) -> dict[int, Any]:
    """Send ``contents[node]`` to each node; node -> its reply (absent: none within ``timeout`` seconds).

    ``Grid.push_messages`` then ``Grid.pull_messages`` every :data:`POLL_S` seconds until every reply is in or the
    time is up -- what ``Grid.send_and_receive`` does, polling more often.
    """
    app = _flwr_app()
    messages = [app.Message(content, dst_node_id=int(node), message_type=message_type, group_id=group, ttl=timeout)
                for node, content in contents.items()]  # fmt: skip
    deadline = time.monotonic() + timeout
    # the grid sets each message's id when it pushes it; an error reply of the SuperLink itself (node unavailable,
    # message expired) comes from the SuperLink's node id, so replies are matched by the message they answer
    list(grid.push_messages(messages))
    node_of = {m.metadata.message_id: int(m.metadata.dst_node_id) for m in messages}
    pending = set(node_of)
    replies: dict[int, Any] = {}
    while pending:
        for reply in grid.pull_messages(sorted(pending)):
            answered = reply.metadata.reply_to_message_id
            if answered in pending:
                pending.discard(answered)
                replies[node_of[answered]] = reply
        if not pending or time.monotonic() >= deadline:
            break
        time.sleep(POLL_S)
    return replies


def _wait_for_nodes(grid: Any, count: int, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while len(nodes := sorted(int(n) for n in grid.get_node_ids())) < count and time.monotonic() < deadline:
        time.sleep(0.25)
    return nodes


def _describe(
    grid: Any, nodes: list[int], plan: IsrlPlan, timeout: float
) -> tuple[dict[int, tuple[int, RunRecord]], dict[int, str]]:
    """(node -> (silo, record) for the nodes that described themselves, node -> why not for the others); refuses two
    nodes with one silo."""
    replies = _send(grid, {n: _flwr_app().RecordDict() for n in nodes}, DESCRIBE, "describe", timeout)
    out: dict[int, tuple[int, RunRecord]] = {}
    problems = {n: f"no reply within {timeout:g} s" for n in nodes if n not in replies}
    for node, reply in sorted(replies.items()):
        if reply.has_error():
            problems[node] = f"error: {reply.error.reason}"
            continue
        try:
            out[node] = read_description(reply.content, node=node, plan=plan)
        except MalformedReply as err:
            problems[node] = str(err)
    silos = [s for s, _r in out.values()]
    if len(set(silos)) != len(silos):
        twice = sorted({s for s in silos if silos.count(s) > 1})
        raise FederationError(f"silos {twice} are each held by several SuperNodes (check their partition-id)")
    return out, problems


def run_server(
    grid: Any, plan: IsrlPlan, *, connect_timeout: float = CONNECT_TIMEOUT_S, round_timeout: float = ROUND_TIMEOUT_S,
    log: Callable[[str], None] | None = None,
) -> FederatedResult:  # fmt: skip
    """The server of Noisy ISRL-DP MB-SGD (Lowy & Razaviyayn, Algorithm 2) on a Flower ``Grid``.

    Waits up to ``connect_timeout`` seconds for ``plan.num_silos`` SuperNodes, asks each which silo it holds
    (``query.describe``: its index and run record), then for r = 1..R samples M of the N silos uniformly
    (:func:`dpcore.federated.algorithms.participants`, generator seeded ``plan.seed + 1`` as ``mb_sgd``), sends each
    the model w_r (:func:`train_instruction`), waits up to ``round_timeout`` seconds, and steps
    w_{r+1} = w_r − η · mean of the accepted messages.  With every silo answering this is ``algorithms.mb_sgd`` on
    :class:`PerSiloPool` (:func:`in_process`), to float rounding.  A silo whose reply does not come in time, or is
    refused (:func:`read_update`; or the silo raised), is left out of that round's mean and logged
    (:class:`RoundLog`); the round counts against its budget all the same (:meth:`FederatedResult.spent_records`).
    Raises :class:`FederationError` when SuperNodes are missing after ``connect_timeout`` (naming the silos that
    never connected), when a silo is held by no SuperNode that describes itself (a node that does not is logged
    and left out), or when no silo's update arrives in a round.
    """
    from dpcore.federated.algorithms import participants

    say = log or (lambda _line: None)
    if not connect_timeout > 0 or not round_timeout > 0:
        raise ValueError(f"connect_timeout and round_timeout must be > 0, got {connect_timeout}, {round_timeout}")
    nodes = _wait_for_nodes(grid, plan.num_silos, connect_timeout)
    if len(nodes) < plan.num_silos:
        seen, _problems = _describe(grid, nodes, plan, round_timeout) if nodes else ({}, {})
        missing = sorted(set(range(plan.num_silos)) - {s for s, _r in seen.values()})
        raise FederationError(
            f"{len(nodes)} of {plan.num_silos} SuperNodes connected within {connect_timeout:g} s: silos {missing} "
            f"never connected (each silo's SuperNode runs with --node-config 'partition-id=<silo>')"
        )
    described, problems = _describe(grid, nodes, plan, round_timeout)
    node_of = {silo: node for node, (silo, _rec) in described.items()}
    missing = sorted(set(range(plan.num_silos)) - set(node_of))
    if missing:
        raise FederationError(f"silos {missing} are held by no SuperNode that described itself; the others: "
                              f"{problems}")  # fmt: skip
    if problems:  # e.g. a SuperNode restarted: its old node id lingers until its heartbeat runs out
        say(f"nodes left out (every silo is held by another): {problems}")
    records = {(0, silo): described[node][1] for silo, node in sorted(node_of.items())}
    say(f"silos -> SuperNodes: {dict(sorted(node_of.items()))}")

    w = torch.zeros((plan.num_outputs, plan.dim), dtype=torch.float32)
    server = torch.Generator().manual_seed(int(plan.seed) + 1)  # as algorithms.mb_sgd
    first = max(0, plan.rounds + 1 - plan.window)
    total = w.clone() if first == 0 else torch.zeros_like(w)
    count = 1 if first == 0 else 0
    step = torch.tensor([plan.stepsize], dtype=torch.float64).to(torch.float32)[None, :, None, None]
    logs = []
    for r in range(1, plan.rounds + 1):
        chosen = participants(server, 1, plan.num_silos, plan.silos_per_round)[0].tolist()
        sent = w.numpy().copy()
        content = {node_of[i]: train_instruction(sent, r) for i in chosen}
        replies = _send(grid, content, TRAIN, str(r), round_timeout)
        got: dict[int, np.ndarray] = {}
        lost: dict[int, str] = {}
        refused: dict[int, str] = {}
        for i in chosen:
            reply = replies.get(node_of[i])
            if reply is None:
                lost[i] = f"no reply within {round_timeout:g} s"
            elif reply.has_error():
                code = int(reply.error.code)
                (lost if code in _LOST_CODES else refused)[i] = (
                    f"{_LOST_CODES.get(code, 'error')}: {reply.error.reason}"
                )
            else:
                try:
                    got[i] = read_update(reply.content, silo=i, round_=r, plan=plan, record=records[(0, i)])
                except MalformedReply as err:
                    refused[i] = str(err)
        answered = tuple(i for i in chosen if i in got)
        logs.append(RoundLog(r, tuple(chosen), answered, lost, refused, sent, got))
        say(f"round {r}: asked {chosen}, answered {list(answered)}, lost {lost}, refused {refused}")
        if not answered:
            raise FederationError(f"round {r}: no silo's update arrived (lost {lost}, refused {refused})")
        messages = torch.stack([torch.as_tensor(got[i]) for i in answered])[None, :, None]  # [1, M', 1, k, d]
        w = (w[None, None] - step * messages.mean(dim=1))[0, 0]
        if r >= first:
            total += w
            count += 1
    return FederatedResult((total / count).numpy(), records, tuple(logs), plan)


# --------------------------------------------------------------------------- the federation from a run config

#: The run config key naming the silo source, ``"module:function"``: ``function(run_config)`` returns
#: ``(silos, plan)`` (a list of :class:`SiloSpec` indexed 0..N-1, and the :class:`IsrlPlan`).
SILO_SOURCE = "silo-source"
_SOURCES: dict[str, tuple[list[SiloSpec], IsrlPlan]] = {}


def load_federation(run_config: Mapping[str, Any]) -> tuple[list[SiloSpec], IsrlPlan]:
    """``(silos, plan)`` from the silo source the run config names (:data:`SILO_SOURCE`), cached per config.

    The ClientApp keeps only the silo of its SuperNode's ``partition-id``; the ServerApp only the plan.
    """
    ref = run_config.get(SILO_SOURCE)
    if not isinstance(ref, str) or ref.count(":") != 1:
        raise ValueError(f"run config {SILO_SOURCE!r} must be 'module:function', got {ref!r}")
    key = json.dumps(sorted(run_config.items()), default=str)
    if key not in _SOURCES:
        module, _, name = ref.partition(":")
        source = getattr(importlib.import_module(module), name)
        silos, plan = source(run_config)
        silos = sorted(silos, key=lambda s: s.index)
        if [s.index for s in silos] != list(range(plan.num_silos)):
            raise ValueError(f"{ref} must return silos indexed 0..{plan.num_silos - 1}, got {[s.index for s in silos]}")
        _SOURCES[key] = (silos, plan)
    return _SOURCES[key]


def silo_of(node_config: Mapping[str, Any], run_config: Mapping[str, Any]) -> tuple[SiloSpec, IsrlPlan]:
    """The silo a SuperNode holds (node config ``partition-id``) and the plan."""
    silos, plan = load_federation(run_config)
    pid = node_config.get("partition-id")
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 <= pid < len(silos):
        raise ValueError(f"node config partition-id must be a silo index in [0, {len(silos) - 1}], got {pid!r}")
    return silos[pid], plan
