"""Checks shared by the Flower tests (tests/federated/test_flower*.py): the insurance federation of the tests, the
server sees only noised messages, the silos' records equal the in-process ones."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.run_record import RunRecord
from dpcore.federated import flower as fl
from dpcore.papers.p001_isrl import accounting as isrl
from dpcore.papers.p001_isrl.flower_insurance import silo_epsilon

ROUNDS = 4
#: The run config of the tests' federation: paper 001's insurance silos (N = 3, M = 2, R = 4, ε = 1).
RUN_CONFIG = {
    "silo-source": "dpcore.papers.p001_isrl.flower_insurance:silos_from_config", "num-silos": 3,
    "silos-per-round": 2, "rounds": ROUNDS, "epsilon": 1.0, "seed": 0,
}  # fmt: skip


def check_only_noised(silos, plan, seen, min_coords: int = 50) -> None:
    """Each message minus the silo's clean message (same minibatch, σ = 0) is σ_i times fresh N(0, I) noise (a χ²
    check over at least ``min_coords`` coordinates)."""
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
    # the differences have the calibrated variance σ_i² (χ² test, loose 4-sigma bounds)
    assert len(z) >= min_coords
    assert abs(z.mean()) < 4 / np.sqrt(len(z)) and 1 - 4 * np.sqrt(2 / len(z)) < np.mean(z**2) < 1 + 4 * np.sqrt(
        2 / len(z)
    )


def check_records(silos, records, reference) -> None:
    """Flower's records equal the in-process ones, describe each silo's run and give the same ε."""
    assert set(records) == {(0, s.index) for s in silos} and records == reference
    for s in silos:
        rec, ref = records[(0, s.index)], reference[(0, s.index)]
        assert isinstance(rec, RunRecord) and rec.to_dict() == ref.to_dict()
        n = len(s.labels)
        assert (rec.sampling, rec.dataset_size, rec.batch_size, rec.steps) == ("replacement", n, s.batch_size, s.rounds)
        assert (rec.clip_norm, rec.clipping, rec.private) == (1.0, "individual", True)
        assert rec.noise_std == pytest.approx(s.batch_size * s.noise_std, rel=1e-6)  # K·σ on the sum
        assert rec.data.startswith("insurance (1,338; sha256") and "split seed 3" in rec.data
        eps = silo_epsilon(rec, 1 / n**2)
        assert epsilon_for_record(rec, 1 / n**2) == pytest.approx(eps, rel=1e-12)  # the library's with-replacement PLD
        assert eps == silo_epsilon(ref, 1 / n**2)
        direct = isrl.mbsgd_epsilon(noise_std=s.noise_std, lipschitz=1.0, batch_size=s.batch_size, n=n,
                                    rounds=s.rounds, delta=1 / n**2)  # fmt: skip
        assert eps == pytest.approx(direct, rel=1e-5) and 0 < eps <= 1.0  # App. I's σ at ε = 1 is not exceeded


def check_equals_in_process(result: fl.FederatedResult, silos, plan, min_coords: int = 50) -> None:
    """A Flower run in which every silo answered: the in-process model and records, only noised messages seen
    (:func:`check_only_noised` over at least ``min_coords`` coordinates)."""
    assert all(r.answered == r.asked and not r.lost and not r.refused for r in result.rounds)
    w_local, reference = fl.in_process(silos, plan, return_records=True)
    np.testing.assert_allclose(result.model, w_local, rtol=1e-5, atol=1e-6)
    check_only_noised(silos, plan, result.observed(), min_coords)
    check_records(silos, result.records, reference)
    assert result.plan == plan
