"""dpcore.federated.flower on Flower's Message API: the ISRL-DP insurance silos (ClientApp handlers) and the server's
main loop equal the in-process algorithm (model and every silo's run record) and see only noised messages -- on a
grid in this process (fast), and under Flower's simulation runtime with ``flwr run``; malformed replies are refused
naming the field; a silo asked in a round spends it whether or not its update arrives.  The deployment runtime
(SuperLink and SuperNodes as processes) is tests/federated/test_flower_deployment.py."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys
import tempfile
import time
import uuid

import numpy as np
import pytest
import torch

from dpcore.accounting.records import epsilon_for_record
from dpcore.federated import flower as fl
from dpcore.papers.p001_isrl import accounting as isrl
from dpcore.paths import repo_root

from .flower_checks import ROUNDS, RUN_CONFIG, check_equals_in_process

flwr = pytest.importorskip("flwr")
from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Error, Message, RecordDict  # noqa: E402
from flwr.supercore.task_identity import TaskIdentity  # noqa: E402

from dpcore.federated import flower_app, flower_loopback  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def setup():
    return fl.load_federation(RUN_CONFIG)


class LocalGrid:
    """A Flower ``Grid`` in this process: one Context per node (partition-id i), each message handled by the real
    ``client_app``; ``tamper(silo, round, reply)`` may keep a reply, drop it (None) or replace it (a RecordDict or an
    Error, sent as the reply) -- a test hook."""

    def __init__(self, run_config, num_nodes: int, tamper=None) -> None:
        self.contexts = {
            1000 + i: Context(run_id=1, node_id=1000 + i, node_config={"partition-id": i, "num-partitions": num_nodes},
                              state=RecordDict(), run_config=dict(run_config))
            for i in range(num_nodes)
        }  # fmt: skip
        self.tamper = tamper

    def get_node_ids(self):
        return list(self.contexts)

    def push_messages(self, messages):
        """Each message handled at once by its node's ClientApp; the replies wait for :meth:`pull_messages`."""
        self.replies = getattr(self, "replies", [])
        for m in messages:
            m.metadata.__dict__["_message_id"] = uuid.uuid4().hex  # as Flower's grids do when they push
            context = self.contexts[m.metadata.dst_node_id]
            try:
                reply = flower_app.client_app(m, context)
            except ValueError as err:  # as Flower's ClientApp runner: the exception becomes an error reply
                reply = Message(Error(code=2, reason=f"{type(err)}:<'{err}'>"), reply_to=m)
            if self.tamper is not None and m.metadata.message_type == fl.TRAIN:
                changed = self.tamper(int(context.node_config["partition-id"]), int(m.metadata.group_id), reply)
                reply = changed if changed is None or changed is reply else Message(changed, reply_to=m)
            if reply is not None:
                self.replies.append(reply)
        return [m.metadata.message_id for m in messages]

    def pull_messages(self, message_ids):
        ids = set(message_ids)
        out = [r for r in self.replies if r.metadata.reply_to_message_id in ids]
        self.replies = [r for r in self.replies if r.metadata.reply_to_message_id not in ids]
        return out


@pytest.fixture
def task_identity():
    """The ServerApp's identity Flower sets in its process (Message() needs it to address a message)."""
    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, 1, 1
    yield
    TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = saved


def test_insurance_setup_uses_the_paper_calibration(setup):
    silos, plan = setup
    for s in silos:
        n = len(s.labels)
        assert s.batch_size == isrl.batch_size_experiments(n, ROUNDS, 3.0)
        assert s.noise_std == pytest.approx(
            isrl.noise_std(lipschitz=1.0, rounds=ROUNDS, n=n, batch_size=s.batch_size, epsilon=1.0, delta=1 / n**2)
        )
    assert (plan.num_silos, plan.silos_per_round, plan.rounds, plan.seed) == (3, 2, ROUNDS, 0)
    with pytest.raises(ValueError, match="silos_per_round"):
        fl.IsrlPlan(3, 4, 0.1, 3, 1, 7)
    with pytest.raises(ValueError, match="batch_size"):
        dataclasses.replace(silos[0], batch_size=0)
    with pytest.raises(ValueError, match="rounds"):
        dataclasses.replace(silos[0], rounds=0)
    with pytest.raises(ValueError, match="lipschitz"):
        dataclasses.replace(silos[0], lipschitz=-1.0)
    with pytest.raises(ValueError, match="rounds must equal plan.rounds"):
        fl.in_process([dataclasses.replace(s, rounds=ROUNDS + 1) for s in silos], plan)
    with pytest.raises(ValueError, match="silo-source"):
        fl.load_federation({"num-silos": 3})
    with pytest.raises(ValueError, match="partition-id"):
        fl.silo_of({"partition-id": 3}, RUN_CONFIG)


def test_silo_record_is_the_in_process_record_and_the_silo_keeps_to_its_rounds(setup):
    """Without clipping the Lipschitz bound is the record's C; a silo refuses a round beyond its R and a replay,
    and its ledger (Context.state) holds every round it trained."""
    silos, plan = setup
    free = [dataclasses.replace(s, clip=None, lipschitz=2.5, data="toy") for s in silos]
    _, reference = fl.in_process(free, plan, return_records=True)
    assert {(0, s.index): fl.silo_record(s) for s in free} == reference
    assert reference[(0, 1)].clip_norm == 2.5 and reference[(0, 1)].data == "toy"
    with pytest.raises(ValueError, match="lipschitz"):
        fl.silo_record(dataclasses.replace(silos[0], clip=None))
    spec, state = silos[0], RecordDict()
    described = fl.silo_description(spec)["silo"]
    assert (described["index"], described["rounds"]) == (0, ROUNDS)
    model = np.zeros((1, plan.dim), np.float32)
    reply = fl.silo_train(spec, plan.seed, fl.train_instruction(model, ROUNDS), state)
    expected = fl.silo_message(fl._one_silo_pool(spec), spec, model, seed=0, round_index=ROUNDS - 1)
    np.testing.assert_array_equal(reply["update"]["update"].numpy(), expected)
    assert fl.read_update(reply, silo=0, round_=ROUNDS, plan=plan, record=fl.silo_record(spec)).shape == (1, plan.dim)
    assert fl.silo_ledger(state) == [ROUNDS] and reply["silo"]["rounds-trained"] == 1
    with pytest.raises(ValueError, match=f"config.round must be in \\[1, {ROUNDS}\\]"):
        fl.silo_train(spec, plan.seed, fl.train_instruction(model, ROUNDS + 1), state)
    with pytest.raises(ValueError, match="already trained"):
        fl.silo_train(spec, plan.seed, fl.train_instruction(model, ROUNDS), state)
    with pytest.raises(ValueError, match="field 'model.model' must be float32 of shape"):
        fl.silo_train(spec, plan.seed, fl.train_instruction(np.zeros((2, plan.dim)), 1), state)
    assert fl.silo_ledger(state) == [ROUNDS]  # refused rounds are not entered
    # the silo keeps its records and parameters in its node state: read back equal (clip absent or not)
    for kept in (spec, free[2]):
        fl.keep_silo(state, kept, 7)
        back, seed = fl.kept_silo(state)
        assert seed == 7 and fl.silo_record(back) == fl.silo_record(kept)
        assert all(np.array_equal(getattr(back, f.name), getattr(kept, f.name)) for f in dataclasses.fields(kept))
    assert fl.kept_silo(RecordDict()) is None


def test_per_silo_pool_is_mb_sgd_with_independent_silo_generators(setup):
    """One silo, all rounds: PerSiloPool + algorithms.mb_sgd equals the plain SiloPool driven round by round."""
    silos, plan = setup
    spec = silos[0]
    one = fl.IsrlPlan(ROUNDS, 1, plan.stepsize, 1, 1, plan.dim, seed=5, window=2)
    w_twin = fl.in_process([dataclasses.replace(spec, index=0)], one)
    pool = fl._one_silo_pool(spec)
    w, iterates = np.zeros((1, plan.dim), np.float32), []
    for r in range(ROUNDS):
        g = fl.silo_message(pool, spec, w, seed=5, round_index=r)
        w = (torch.as_tensor(w) - torch.tensor(plan.stepsize, dtype=torch.float32) * torch.as_tensor(g)).numpy()
        iterates.append(w)
    np.testing.assert_allclose(w_twin, np.mean(iterates[-2:], axis=0), rtol=1e-5, atol=1e-7)


def test_server_main_loop_on_a_local_grid_equals_in_process(setup, task_identity, tmp_path):
    """The ServerApp's loop with the real ClientApp handlers (a grid in this process): the in-process model and
    records, only noised messages; the result survives its JSON file."""
    silos, plan = setup
    grid = LocalGrid(RUN_CONFIG, 3)
    result = fl.run_server(grid, plan, connect_timeout=5, round_timeout=5)
    check_equals_in_process(result, silos, plan)
    for i, context in enumerate(grid.contexts.values()):  # each node kept its own silo and its ledger
        assert fl.kept_silo(context.state)[0].index == i and fl.silo_ledger(context.state) == result.asked(i)
    back = fl.read_result(fl.write_result(tmp_path, result).parent)
    np.testing.assert_array_equal(back.model, result.model)
    assert back.records == result.records and back.plan == plan and len(back.observed()) == len(result.observed())
    for (r1, s1, m1, g1), (r2, s2, m2, g2) in zip(back.observed(), result.observed(), strict=True):
        assert (r1, s1) == (r2, s2) and np.array_equal(m1, m2) and np.array_equal(g1, g2)
    assert {s: rec.steps for s, rec in result.spent_records().items()} == {s: len(result.asked(s)) for s in range(3)}
    with pytest.raises(fl.FederationError, match="boom"):
        fl.read_result(fl.write_result(tmp_path / "err", RuntimeError("boom")).parent)


def _tampered(content: RecordDict, field: str) -> RecordDict:
    """A copy of a valid reply with ``field`` broken."""
    out = RecordDict({"update": ArrayRecord(dict(content["update"])), "silo": ConfigRecord(dict(content["silo"]))})
    if field == "update":
        del out["update"]
    elif field == "update.update":
        out["update"] = ArrayRecord({"update": Array(np.zeros((1, 8), np.float32))})
    elif field == "update.nan":
        out["update"] = ArrayRecord({"update": Array(np.full((1, 7), np.nan, np.float32))})
    elif field == "silo":
        del out["silo"]
    elif field == "silo.index":
        out["silo"]["index"] = 2
    elif field == "silo.round":
        out["silo"]["round"] = 3
    elif field == "silo.rounds-trained":
        out["silo"]["rounds-trained"] = 0
    elif field == "silo.record":
        out["silo"]["record"] = "{}"
    elif field == "silo.record.other":
        out["silo"]["record"] = out["silo"]["record"].replace('"data": "insurance', '"data": "other')
    return out


@pytest.mark.parametrize(
    ("field", "message"),
    [("update", "field 'update' is missing"), ("update.update", "field 'update.update' must be float32 of shape"),
     ("update.nan", "field 'update.update' has non-finite"), ("silo", "field 'silo' is missing"),
     ("silo.index", "field 'silo.index' is 2"), ("silo.round", "field 'silo.round' is 3"),
     ("silo.rounds-trained", "field 'silo.rounds-trained' must be in"),
     ("silo.record", "field 'silo.record' is not a run record"), ("silo.record.other", "field 'silo.record' differs")],
)  # fmt: skip
def test_a_malformed_reply_is_refused_naming_the_field(setup, field, message):
    silos, plan = setup
    good = fl.silo_train(
        silos[1], plan.seed, fl.train_instruction(np.zeros((1, plan.dim), np.float32), 1), RecordDict()
    )
    record = fl.silo_record(silos[1])
    fl.read_update(good, silo=1, round_=1, plan=plan, record=record)
    with pytest.raises(fl.MalformedReply, match=re.escape(message)) as err:
        fl.read_update(_tampered(good, field), silo=1, round_=1, plan=plan, record=record)
    assert str(err.value).startswith("silo 1, round 1: field '")


def test_refused_and_lost_silos_are_left_out_and_still_spend(setup, task_identity):
    """All three silos asked every round; silo 1's update is malformed, silo 2's reply is lost in round 2 (after it
    trained) and refused by the silo itself in round 3: each round averages the accepted messages; every asked round
    counts against the silo's budget (ε of its spent record), whether or not its update was used."""
    config = {**RUN_CONFIG, "silos-per-round": 3}
    silos, plan = fl.load_federation(config)

    def tamper(silo, round_, reply):
        if silo == 1:
            return _tampered(reply.content, "update.update")
        if silo == 2 and round_ == 2:
            return None
        if silo == 2 and round_ == 3:
            return Error(code=2, reason="ValueError: the silo refused")
        return reply

    result = fl.run_server(LocalGrid(config, 3, tamper), plan, connect_timeout=5, round_timeout=5)
    for r in result.rounds:
        assert sorted(r.asked) == [0, 1, 2] and 1 in r.refused and "field 'update.update'" in r.refused[1]
    assert [sorted(r.answered) for r in result.rounds] == [[0, 2], [0], [0], [0, 2]]
    assert result.rounds[1].lost == {2: "no reply within 5 s"} and "the silo refused" in result.rounds[2].refused[2]
    # each round steps with the mean of the messages it accepted (the silos' true messages at the model sent)
    w = np.zeros((1, plan.dim), np.float32)
    for r in result.rounds:
        np.testing.assert_array_equal(r.model, w)
        for s, g in r.messages.items():
            np.testing.assert_array_equal(g, fl.silo_message(fl._one_silo_pool(silos[s]), silos[s], w, seed=0,
                                                             round_index=r.round - 1))  # fmt: skip
        step = torch.tensor([plan.stepsize], dtype=torch.float64).to(torch.float32)
        w = torch.as_tensor(w) - step * torch.stack([torch.as_tensor(r.messages[s]) for s in r.answered]).mean(0)
        w = w.numpy()
    spent = result.spent_records()
    assert {s: rec.steps for s, rec in spent.items()} == {0: 4, 1: 4, 2: 4}
    assert (result.used(1), result.used(2)) == ([], [1, 4])
    n = spent[2].dataset_size
    used_only = spent[2].replace(steps=len(result.used(2)))
    assert epsilon_for_record(spent[2], 1 / n**2) > epsilon_for_record(used_only, 1 / n**2)


def test_server_names_the_silos_that_never_connected(setup, task_identity):
    silos, plan = setup
    grid = LocalGrid(RUN_CONFIG, 3)
    del grid.contexts[1002]
    with pytest.raises(fl.FederationError, match=re.escape("2 of 3 SuperNodes connected within 0.5 s: silos [2]")):
        fl.run_server(grid, plan, connect_timeout=0.5, round_timeout=5)
    grid = LocalGrid(RUN_CONFIG, 3)
    grid.contexts[1002].node_config["partition-id"] = 1
    with pytest.raises(fl.FederationError, match=re.escape("silos [1] are each held by several SuperNodes")):
        fl.run_server(grid, plan, connect_timeout=5, round_timeout=5)
    # a fourth node that cannot describe itself (no such silo) is left out and logged; the run goes on
    grid = LocalGrid(RUN_CONFIG, 4)
    lines: list[str] = []
    result = fl.run_server(grid, plan, connect_timeout=5, round_timeout=5, log=lines.append)
    assert sorted({s for r in result.rounds for s in r.answered}) == [0, 1, 2]
    assert any(line.startswith("nodes left out") and "partition-id must be a silo index" in line for line in lines)
    grid = LocalGrid(RUN_CONFIG, 3)
    grid.contexts[1001].node_config["partition-id"] = 7
    with pytest.raises(fl.FederationError, match=re.escape("silos [1] are held by no SuperNode that described")):
        fl.run_server(grid, plan, connect_timeout=5, round_timeout=5)


def test_flower_simulation_runtime_equals_in_process_and_sees_only_noised_messages(setup, tmp_path):
    """``flwr run`` of the app project on a SuperLink --simulation (127.0.0.1, free port): 3 simulated SuperNodes
    on a local Ray instance (started here with retries, as flower_loopback.simulate does); nothing of the
    federation is left running afterwards."""
    from dpcore.experiments.ray_backend import start_local_ray

    silos, plan = setup
    ray = pytest.importorskip("ray")
    start = time.perf_counter()
    ray_tmp = tempfile.mkdtemp(prefix="dpfl-ray-")  # Ray's sockets need a short path
    try:
        start_local_ray(2, temp_dir=ray_tmp, runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(sys.path)}})
        ray_s = time.perf_counter() - start
        with flower_loopback.LocalFederation(tmp_path, simulation=True,
                                             ray_address=ray.get_runtime_context().gcs_address) as fed:  # fmt: skip
            result = fed.run(RUN_CONFIG, timeout_s=600,
                             federation_config={"num-supernodes": 3, "client-resources-num-cpus": 1})  # fmt: skip
    finally:
        if ray.is_initialized():
            ray.shutdown()
        shutil.rmtree(ray_tmp, ignore_errors=True)
    print(f"\nFlower simulation runtime: {time.perf_counter() - start:.1f}s (Ray start {ray_s:.1f}s, flwr run, "
          "SuperLink start and stop)")  # fmt: skip
    assert fed.processes() == []
    check_equals_in_process(result, silos, plan)


def test_no_legacy_flower_api_is_left():
    """Flower's retired APIs (its NumPy client, the legacy server/client entry points and simulation function,
    the strategy module of flwr.server) appear nowhere in dpcore."""
    legacy = re.compile(r"NumPyClient|start_server|start_client|run_simulation|flwr\.server\.strategy")
    hits = [f"{p}:{i}" for p in sorted((repo_root() / "dpcore").rglob("*.py"))
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if legacy.search(line)]  # fmt: skip
    assert hits == []
