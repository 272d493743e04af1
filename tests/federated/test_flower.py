"""dpcore.federated.flower: ISRL-DP insurance silos on Flower equal the in-process algorithm (model and every
silo's run record); only noised messages reach the server (simulation engine, and separate processes over
127.0.0.1)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.run_record import RunRecord
from dpcore.data import load_insurance, provenance
from dpcore.federated import algorithms
from dpcore.federated import flower as fl
from dpcore.papers.p001_isrl import accounting as isrl
from dpcore.papers.p001_isrl.flower_insurance import insurance_setup, silo_epsilon, write_records
from dpcore.paths import build_dir, repo_root

flwr = pytest.importorskip("flwr")
SILO_MODULE = "dpcore.papers.p001_isrl.flower_insurance"

torch.set_num_threads(1)

ROUNDS = 4


@pytest.fixture(scope="module")
def setup():
    for var, sub in (("FLWR_HOME", "flwr"), ("RAY_TMPDIR", "ray")):
        path = build_dir() / sub
        path.mkdir(parents=True, exist_ok=True)
        os.environ[var] = str(path)
    # the silo processes of the loopback test describe their data the same way (flower_insurance.main)
    return insurance_setup(load_insurance(), num_silos=3, silos_per_round=2, rounds=ROUNDS, epsilon=1.0,
                           source=provenance("insurance"))  # fmt: skip


class Recorder:
    """The server-side view: every (round, silo, model sent, message received)."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, int, np.ndarray, np.ndarray]] = []

    def __call__(self, round_, silo, model, message) -> None:
        self.seen.append((round_, silo, model, message))


def _check_only_noised(silos, plan, seen) -> None:
    """Each message minus the silo's clean message (same minibatch, σ = 0) is σ_i times fresh N(0, I) noise."""
    assert len(seen) == plan.rounds * plan.silos_per_round
    z = []
    for round_, silo, model, message in seen:
        spec = silos[silo]
        clean = fl.silo_message(fl._one_silo_pool(spec), dataclasses.replace(spec, noise_std=0.0), model,
                                seed=plan.seed, round_index=round_ - 1)  # fmt: skip
        diff = (message.astype(np.float64) - clean) / spec.noise_std
        assert np.all(np.abs(message - clean) > 0), "a coordinate reached the server un-noised"
        z.append(diff.ravel())
    z = np.concatenate(z)
    # the differences have the calibrated variance σ_i² (χ² test, ≥ 50 coordinates: loose 4-sigma bounds)
    assert len(z) >= 50
    assert abs(z.mean()) < 4 / np.sqrt(len(z)) and 1 - 4 * np.sqrt(2 / len(z)) < np.mean(z**2) < 1 + 4 * np.sqrt(
        2 / len(z)
    )


def _check_records(silos, records, reference) -> None:
    """Flower's records equal the in-process ones, describe each silo's run and give the same ε."""
    assert set(records) == {(0, s.index) for s in silos} and records == reference
    for s in silos:
        rec, ref = records[(0, s.index)], reference[(0, s.index)]
        assert isinstance(rec, RunRecord) and rec.to_dict() == ref.to_dict()
        n = len(s.labels)
        assert (rec.sampling, rec.dataset_size, rec.batch_size, rec.steps) == ("replacement", n, s.batch_size, ROUNDS)
        assert (rec.clip_norm, rec.clipping, rec.private) == (1.0, "individual", True)
        assert rec.noise_std == pytest.approx(s.batch_size * s.noise_std, rel=1e-6)  # K·σ on the sum
        assert rec.data.startswith("insurance (1,338; sha256") and "split seed 3" in rec.data
        eps = silo_epsilon(rec, 1 / n**2)
        assert epsilon_for_record(rec, 1 / n**2) == pytest.approx(eps, rel=1e-12)  # the library's with-replacement PLD
        assert eps == silo_epsilon(ref, 1 / n**2)
        direct = isrl.mbsgd_epsilon(noise_std=s.noise_std, lipschitz=1.0, batch_size=s.batch_size, n=n,
                                    rounds=ROUNDS, delta=1 / n**2)  # fmt: skip
        assert eps == pytest.approx(direct, rel=1e-5) and 0 < eps <= 1.0  # App. I's σ at ε = 1 is not exceeded


def test_insurance_setup_uses_the_paper_calibration(setup):
    from dpcore.papers.p001_isrl import accounting as isrl

    silos, plan = setup
    for s in silos:
        n = len(s.labels)
        assert s.batch_size == isrl.batch_size_experiments(n, ROUNDS, 3.0)
        assert s.noise_std == pytest.approx(
            isrl.noise_std(lipschitz=1.0, rounds=ROUNDS, n=n, batch_size=s.batch_size, epsilon=1.0, delta=1 / n**2)
        )
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


def test_silo_record_is_the_in_process_record_and_the_client_keeps_to_its_rounds(setup):
    """Without clipping the Lipschitz bound is the record's C; a silo refuses a round beyond its R."""
    from flwr.common import Code, FitIns, GetPropertiesIns, ndarrays_to_parameters

    silos, plan = setup
    free = [dataclasses.replace(s, clip=None, lipschitz=2.5, data="toy") for s in silos]
    _, reference = fl.in_process(free, plan, return_records=True)
    assert {(0, s.index): fl.silo_record(s) for s in free} == reference
    assert reference[(0, 1)].clip_norm == 2.5 and reference[(0, 1)].data == "toy"
    with pytest.raises(ValueError, match="lipschitz"):
        fl.silo_record(dataclasses.replace(silos[0], clip=None))
    client = fl.make_client(silos[0], plan.seed)
    props = client.get_properties(GetPropertiesIns({"record": True})).properties
    assert props["silo"] == 0 and RunRecord.from_dict(json.loads(props["record"])) == fl.silo_record(silos[0])
    assert "record" not in client.get_properties(GetPropertiesIns({})).properties
    model = ndarrays_to_parameters([np.zeros((1, plan.dim), np.float32)])
    assert client.fit(FitIns(model, {"round": ROUNDS})).status.code == Code.OK
    with pytest.raises(ValueError, match=f"round must be in \\[1, {ROUNDS}\\]"):
        client.fit(FitIns(model, {"round": ROUNDS + 1}))


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
    assert isinstance(pool, algorithms.SiloPool)


def test_flower_simulation_equals_in_process_and_sees_only_noised_messages(setup):
    silos, plan = setup
    seen = Recorder()
    start = time.perf_counter()
    w_flower, records = fl.simulate(silos, plan, observer=seen, return_records=True)
    flower_s = time.perf_counter() - start
    start = time.perf_counter()
    w_local, reference = fl.in_process(silos, plan, return_records=True)
    local_s = time.perf_counter() - start
    print(f"\nFlower simulation {flower_s:.1f}s vs in-process {local_s:.3f}s")
    np.testing.assert_allclose(w_flower, w_local, rtol=1e-5, atol=1e-6)
    _check_only_noised(silos, plan, seen.seen)
    _check_records(silos, records, reference)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_silos_as_separate_processes_over_loopback(setup, tmp_path):
    """The server runs here (with the recorder); each silo is its own process talking gRPC over 127.0.0.1 and
    writes its own run record (``--record``)."""
    silos, plan = setup
    address = f"127.0.0.1:{_free_port()}"
    env = {**os.environ, "PYTHONPATH": str(repo_root()), "OMP_NUM_THREADS": "1"}
    args = ["--address", address, "--num-silos", "3", "--silos-per-round", "2", "--rounds", str(ROUNDS)]
    procs = [
        subprocess.Popen([sys.executable, "-m", SILO_MODULE, "silo", "--silo", str(i), *args,
                          "--record", str(tmp_path / f"silo{i}.json")],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        for i in range(len(silos))
    ]  # fmt: skip
    try:
        seen = Recorder()
        start = time.perf_counter()
        w_net, records = fl.serve(plan, address=address, observer=seen, return_records=True)
        print(f"\nloopback run {time.perf_counter() - start:.1f}s (server side, silos' start-up included)")
        for p in procs:
            assert p.wait(timeout=120) == 0, p.stderr.read().decode()[-2000:]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=30)
    w_local, reference = fl.in_process(silos, plan, return_records=True)
    np.testing.assert_allclose(w_net, w_local, rtol=1e-5, atol=1e-6)
    _check_only_noised(silos, plan, seen.seen)
    _check_records(silos, records, reference)
    for i in range(len(silos)):  # each silo's own copy is the one the server got
        kept = RunRecord.from_dict(json.loads((tmp_path / f"silo{i}.json").read_text()))
        assert kept == records[(0, i)]
    written = json.loads(write_records(tmp_path / "records.json", records).read_text())
    assert sorted(written) == ["silo 0", "silo 1", "silo 2"]
    assert math.isfinite(written["silo 2"].pop("epsilon_at_delta_1_over_n2"))
    assert RunRecord.from_dict(written["silo 2"]) == reference[(0, 2)]
