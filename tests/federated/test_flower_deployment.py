"""dpcore.federated on Flower's deployment runtime: a SuperLink and SuperNodes as separate processes on 127.0.0.1
(free ports, started and stopped here, nothing left running), the app project run with ``flwr run``.

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

from .flower_checks import ROUNDS, RUN_CONFIG, check_equals_in_process

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


@pytest.fixture(scope="module")
def setup():
    return fl.load_federation(RUN_CONFIG)


def test_silos_as_separate_processes_over_loopback(setup, tmp_path):
    """A SuperLink and 3 SuperNodes (partition-id 0..2) as processes; ``flwr run`` of the app project: the same
    model and records as the in-process algorithm, only noised messages; nothing left running."""
    silos, plan = setup
    start = time.perf_counter()
    with flower_loopback.LocalFederation(tmp_path) as fed:
        for i in range(3):
            fed.add_supernode({"partition-id": i, "num-partitions": 3})
        result = fed.run(RUN_CONFIG, timeout_s=600)
    print(f"\nFlower deployment runtime, SuperLink + 3 SuperNodes: {time.perf_counter() - start:.1f}s (start, "
          f"flwr run of {ROUNDS} rounds, stop)")  # fmt: skip
    assert fed.processes() == []
    check_equals_in_process(result, silos, plan)


def _wait_for(path: Path, fed: flower_loopback.LocalFederation, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} did not appear; SuperNode 2's log: {fed.log_tail('supernode-2')}")
        time.sleep(0.2)


def test_faults_a_killed_supernode_and_a_malformed_update(tmp_path):
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
    with flower_loopback.LocalFederation(tmp_path / "fed") as fed:
        for i in range(3):
            fed.add_supernode({"partition-id": i, "num-partitions": 3})

        def kill_when_trained() -> None:
            _wait_for(markers / "silo-2-trained-round-2", fed, 500)
            killed.extend(fed.kill_supernode(2))

        killer = threading.Thread(target=kill_when_trained, daemon=True)
        killer.start()
        result = fed.run(config, app=app, timeout_s=500)
        killer.join(timeout=60)
    assert fed.processes() == [] and killed
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


def test_a_supernode_that_never_connects_is_a_clear_error(tmp_path):
    """SuperNodes 0 and 1 connect; SuperNode 2 is pointed at a port nobody listens on.  The ServerApp gives up after
    its connect limit, naming silo 2; ``flwr run`` ends (no hang) and nothing is left running."""
    config = {**RUN_CONFIG, "connect-timeout": 20.0, "round-timeout": 120.0}
    with flower_loopback.LocalFederation(tmp_path) as fed:
        fed.add_supernode({"partition-id": 0, "num-partitions": 3})
        fed.add_supernode({"partition-id": 1, "num-partitions": 3})
        fed.add_supernode(
            {"partition-id": 2, "num-partitions": 3}, superlink=f"127.0.0.1:{flower_loopback.free_port()}"
        )
        with pytest.raises(fl.FederationError) as err:
            fed.run(config, timeout_s=400)
    assert "2 of 3 SuperNodes connected within 20 s: silos [2] never connected" in str(err.value)
    assert fed.processes() == []
