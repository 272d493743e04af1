"""Note A10's typed evidence (paper 003 claims, ``_A10``) is the plan's current |S_b| = 1024 cells (issue 44)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcore.experiments import registry
from dpcore.experiments.config import config_hash
from dpcore.experiments.store import Store
from dpcore.papers.p003_shuffling import claims

ROOT = Path(__file__).resolve().parents[3] / "results" / "paper" / "003_table3"


@pytest.mark.parametrize("sampling", sorted(claims._A10))
def test_a10_quotes_the_current_cells_and_their_values(sampling):
    bc_file, bc_pct, bc_clip, ic_file, ic_pct = claims._A10[sampling]
    store = Store.default("paper", "003_table3")
    runs = {r.name: r for r in registry.get("003_table3").runs("paper", store.load)}
    for family, digest, pct in (("BC", bc_file, bc_pct), ("IC", ic_file, ic_pct)):
        run = runs[f"mnist/{sampling}/{family}/b1024"]
        assert run.ready, f"{run.name} still waits for its tuning"
        assert config_hash(run.config) == digest, f"{run.name}: _A10 names {digest}, the plan's cell is another run"
        record = json.loads((ROOT / f"{digest}.json").read_text())
        assert record["run"] == run.name and round(100 * record["best_accuracy"], 2) == pct
        if family == "BC":
            assert record["config"]["clip_norm"] == bc_clip
    spec = claims.TRAINING_CLAIMS[f"fig1.mnist.{sampling}.b1024.bc_comparable_to_ic"]
    assert f"{ic_pct:.2f} %" in spec.explanation.evidence and ic_file in spec.explanation.evidence
