"""dpcore.federated on Flower's deployment runtime: a SuperLink and SuperNodes as separate processes on 127.0.0.1
(free ports, started and stopped here, nothing left running), the app project run with ``flwr run``.  The tests
share one SuperLink and SuperNodes 0..2 (each ``flwr run`` a new run; started again after a test killed a
SuperNode); the module's teardown checks that every process started here has ended.

* every silo answering: the in-process model and records, only noised messages reach the server;
* faults: a SuperNode killed mid-round after its silo trained (the round goes on with the silos that answered;
  the killed silo's round counts against its budget), a silo sending a malformed update (refused, the field
  named), a SuperNode that never connects (a clear error after the connect limit, no hang).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import torch

from dpcore.accounting.records import epsilon_for_record
from dpcore.federated import flower as fl

from .flower_checks import RUN_CONFIG, check_equals_in_process

pytest.importorskip("flwr")
from dpcore.federated import flower_loopback  # noqa: E402

#: A ClientApp whose silo 1 sends an update of the wrong shape and whose silo 2, in round 2, trains (and says so in
#: a marker file) and then stalls until its SuperNode is killed; the ServerApp is dpcore's.
FAULTY_APP = {
    "pyproject.toml": """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "faulty-silos"
version = "1.0.0"
description = "ISRL-DP insurance silos, two of them faulty (dpcore tests)"
license = "MIT"
dependencies = ["flwr[simulation]>=1.42.0"]

[tool.hatch.build.targets.wheel]
packages = ["."]

[tool.flwr.app]
publisher = "dpcore"

[tool.flwr.app.components]
serverapp = "dpcore.federated.flower_app:server_app"
clientapp = "faulty_silos:client_app"

[tool.flwr.app.config]
silo-source = "dpcore.papers.p001_isrl.flower_insurance:silos_from_config"
num-silos = 3
silos-per-round = 3
rounds = 2
epsilon = 1.0
seed = 0
connect-timeout = 120.0
round-timeout = 300.0
out-dir = ""
marker-dir = ""
""",
    "faulty_silos.py": '''"""Silo 1 sends a malformed update; silo 2 trains round 2, then stalls (killed)."""

import time
from pathlib import Path

import numpy as np
from flwr.app import Array, ArrayRecord, Message
from flwr.clientapp import ClientApp

from dpcore.federated import flower as fl
from dpcore.federated import flower_app

client_app = ClientApp()
client_app.query("describe")(flower_app.describe)


@client_app.train()
def train(msg, context):
    spec, plan = fl.silo_of(context.node_config, context.run_config)
    content = fl.silo_train(spec, plan.seed, msg.content, context.state)
    round_ = int(msg.content["config"]["round"])
    if spec.index == 1:
        content["update"] = ArrayRecord({"update": Array(np.zeros((plan.num_outputs, plan.dim + 1), np.float32))})
    if spec.index == 2 and round_ == 2:
        Path(context.run_config["marker-dir"], "silo-2-trained-round-2").write_text(str(fl.silo_ledger(context.state)))
        time.sleep(3600)
    return Message(content, reply_to=msg)
''',
}


#: The equality run on the deployment runtime: N = 3, M = 2, R = 2 (the smallest run in which the server samples
#: and averages several rounds; 4 messages of 7 coordinates reach the server -- the noise law is checked over more
#: coordinates on the local grid and the simulation runtime, tests/federated/test_flower.py).
DEPLOY_CONFIG = {**RUN_CONFIG, "rounds": 2}
#: Each SuperNode of the shared deployment: silo ``partition-id`` of 3.
NODES = [{"partition-id": i, "num-partitions": 3} for i in range(3)]


class SharedDeployment:
    """A SuperLink and SuperNodes 0..2 (:data:`NODES`) as processes on 127.0.0.1, shared by this module's tests:
    each ``flwr run`` is a new run (fresh node state, a new ServerApp and new ClientApp processes), so a test's run
    sees none of another's.  :meth:`get` starts it, or starts a new one when a test killed one of its SuperNodes;
    :meth:`close` stops every federation started here."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.federations: list[flower_loopback.LocalFederation] = []

    def get(self) -> flower_loopback.LocalFederation:
        fed = self.federations[-1] if self.federations else None
        if fed is not None and any(node["process"].poll() is not None for node in fed.supernodes[: len(NODES)]):
            fed.stop()
            fed = None
        if fed is None:
            fed = flower_loopback.LocalFederation(self.workdir / f"federation-{len(self.federations)}")
            self.federations.append(fed)
            fed.start()
            for node in NODES:
                fed.add_supernode(node)
        return fed

    def close(self) -> None:
        for fed in self.federations:
            fed.stop()

    def left_running(self) -> list[int]:
        """Every process of every federation started here still alive (tagged: SuperLink, SuperNodes, SuperExecs,
        ServerApp, ClientApps, ``flwr run``)."""
        return sorted(pid for fed in self.federations for pid in fed.processes())


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """The module's :class:`SharedDeployment`; at the end every process it started has ended."""
    shared = SharedDeployment(tmp_path_factory.mktemp("flower-deployment"))
    try:
        yield shared
    finally:
        shared.close()
    assert shared.left_running() == []


def test_silos_as_separate_processes_over_loopback(deployment):
    """A SuperLink and 3 SuperNodes (partition-id 0..2) as processes; ``flwr run`` of the app project: the same
    model and records as the in-process algorithm, only noised messages."""
    silos, plan = fl.load_federation(DEPLOY_CONFIG)
    start = time.perf_counter()
    result = deployment.get().run(DEPLOY_CONFIG, timeout_s=600)
    print(f"\nFlower deployment runtime, SuperLink + 3 SuperNodes: {time.perf_counter() - start:.1f}s (start when "
          f"first, flwr run of {plan.rounds} rounds)")  # fmt: skip
    assert [r.round for r in result.rounds] == [1, 2] and all(len(r.asked) == 2 for r in result.rounds)
    check_equals_in_process(result, silos, plan, min_coords=plan.rounds * plan.silos_per_round * plan.dim)


def test_a_supernode_that_never_connects_is_a_clear_error(deployment):
    """SuperNodes 0..2 are connected; SuperNode 3 (partition-id 3) is pointed at a port nobody listens on.  A run of 4
    silos: the ServerApp gives up after its connect limit, naming silo 3; ``flwr run`` ends (no hang); SuperNode 3
    is then stopped, nothing of it left running.  (The connected nodes read only their partition-id.)"""
    fed = deployment.get()
    fed.wait_for_supernodes(range(len(NODES)), timeout_s=300)
    lost = fed.add_supernode({"partition-id": 3, "num-partitions": 4},
                             superlink=f"127.0.0.1:{flower_loopback.free_port()}")  # fmt: skip
    config = {**RUN_CONFIG, "num-silos": 4, "connect-timeout": 5.0, "round-timeout": 300.0}
    try:
        with pytest.raises(fl.FederationError) as err:
            fed.run(config, timeout_s=400)
    finally:
        fed.kill_supernode(lost)
    assert "3 of 4 SuperNodes connected within 5 s: silos [3] never connected" in str(err.value)
    assert _ended(fed, f"supernode-{lost}")


def _ended(fed: flower_loopback.LocalFederation, role: str, timeout: float = 60.0) -> bool:
    """Whether every process of ``role`` (e.g. ``supernode-2`` and what it started) has ended within ``timeout``
    seconds (SIGKILLed children are reaped by init)."""
    deadline = time.monotonic() + timeout
    while flower_loopback._tagged(fed.tag, role) and time.monotonic() < deadline:
        time.sleep(0.2)
    return flower_loopback._tagged(fed.tag, role) == []


def _wait_for(path: Path, fed: flower_loopback.LocalFederation, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} did not appear; SuperNode 2's log: {fed.log_tail('supernode-2')}")
        time.sleep(0.2)


def test_faults_a_killed_supernode_and_a_malformed_update(deployment, tmp_path):
    """N = M = 3, R = 2.  Silo 1's updates are refused (the field named); silo 2 trains round 2 and its SuperNode
    is then killed: round 2 completes with silo 0 alone, the record says which silos answered, and silo 2's spent
    record counts round 2 (it trained) though its update never arrived."""
    import threading

    app = tmp_path / "faulty-silos"
    app.mkdir()
    for name, text in FAULTY_APP.items():
        (app / name).write_text(text)
    markers = tmp_path / "markers"
    markers.mkdir()
    config = {**RUN_CONFIG, "silos-per-round": 3, "rounds": 2, "round-timeout": 90.0, "marker-dir": str(markers)}
    silos, plan = fl.load_federation({k: v for k, v in config.items() if k != "marker-dir"})
    killed: list[int] = []
    fed = deployment.get()

    def kill_when_trained() -> None:
        _wait_for(markers / "silo-2-trained-round-2", fed, 500)
        killed.extend(fed.kill_supernode(2))

    killer = threading.Thread(target=kill_when_trained, daemon=True)
    killer.start()
    result = fed.run(config, app=app, timeout_s=500)
    killer.join(timeout=60)
    assert killed and _ended(fed, "supernode-2")
    assert (markers / "silo-2-trained-round-2").read_text() == "[1, 2]"  # silo 2's own ledger: it trained round 2
    r1, r2 = result.rounds
    assert sorted(r1.asked) == sorted(r2.asked) == [0, 1, 2]
    assert sorted(r1.answered) == [0, 2] and r2.answered == (0,)
    for r in (r1, r2):
        assert list(r.refused) == [1] and r.refused[1].startswith(f"silo 1, round {r.round}: field 'update.update'")
    assert list(r2.lost) == [2] and ("node unavailable" in r2.lost[2] or "no reply within" in r2.lost[2])
    print(f"\nround 1 refused {r1.refused}\nround 2 refused {r2.refused}, lost {r2.lost}")
    # the rounds stepped with the accepted messages only: the silos' true messages at the model sent
    w = np.zeros((1, plan.dim), np.float32)
    for r in result.rounds:
        np.testing.assert_array_equal(r.model, w)
        got = [fl.silo_message(fl._one_silo_pool(silos[s]), silos[s], w, seed=0, round_index=r.round - 1)
               for s in r.answered]  # fmt: skip
        for s, g in zip(r.answered, got, strict=True):
            np.testing.assert_array_equal(r.messages[s], g)
        step = torch.tensor([plan.stepsize], dtype=torch.float64).to(torch.float32)
        w = (torch.as_tensor(w) - step * torch.stack([torch.as_tensor(g) for g in got]).mean(0)).numpy()
    spent = result.spent_records()
    assert {s: rec.steps for s, rec in spent.items()} == {0: 2, 1: 2, 2: 2}
    assert (result.used(0), result.used(1), result.used(2)) == ([1, 2], [], [1])
    n = spent[2].dataset_size
    assert epsilon_for_record(spent[2], 1 / n**2) > epsilon_for_record(spent[2].replace(steps=1), 1 / n**2)
    assert result.records == {k: v for k, v in fl.in_process(silos, plan, return_records=True)[1].items()}
