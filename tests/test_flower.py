"""dpcore.federated.flower: ISRL-DP insurance silos on Flower equal the in-process algorithm; only noised
messages reach the server (simulation engine, and separate processes over 127.0.0.1)."""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from dpcore.data import load_insurance
from dpcore.federated import algorithms
from dpcore.federated import flower as fl
from dpcore.papers.p001_isrl.flower_insurance import insurance_setup
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
    return insurance_setup(load_insurance(), num_silos=3, silos_per_round=2, rounds=ROUNDS, epsilon=1.0)


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
    w_flower = fl.simulate(silos, plan, observer=seen)
    flower_s = time.perf_counter() - start
    start = time.perf_counter()
    w_local = fl.in_process(silos, plan)
    local_s = time.perf_counter() - start
    print(f"\nFlower simulation {flower_s:.1f}s vs in-process {local_s:.3f}s")
    np.testing.assert_allclose(w_flower, w_local, rtol=1e-5, atol=1e-6)
    _check_only_noised(silos, plan, seen.seen)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_silos_as_separate_processes_over_loopback(setup):
    """The server runs here (with the recorder); each silo is its own process talking gRPC over 127.0.0.1."""
    silos, plan = setup
    address = f"127.0.0.1:{_free_port()}"
    env = {**os.environ, "PYTHONPATH": str(repo_root()), "OMP_NUM_THREADS": "1"}
    args = ["--address", address, "--num-silos", "3", "--silos-per-round", "2", "--rounds", str(ROUNDS)]
    procs = [
        subprocess.Popen([sys.executable, "-m", SILO_MODULE, "silo", "--silo", str(i), *args],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        for i in range(len(silos))
    ]  # fmt: skip
    try:
        seen = Recorder()
        start = time.perf_counter()
        w_net = fl.serve(plan, address=address, observer=seen)
        print(f"\nloopback run {time.perf_counter() - start:.1f}s (server side, silos' start-up included)")
        for p in procs:
            assert p.wait(timeout=120) == 0, p.stderr.read().decode()[-2000:]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=30)
    np.testing.assert_allclose(w_net, fl.in_process(silos, plan), rtol=1e-5, atol=1e-6)
    _check_only_noised(silos, plan, seen.seen)
