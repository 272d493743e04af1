"""Table 3's MNIST numbers typed in paper 003's claims (``_T3_MNIST``, issue 44) are the committed best cells: each
entry equals the paper profile's rendered table (best epoch, |S_b|, C), names the plan's current run for that cell, and
every family whose cells have all run has an entry (so a finished family cannot be left without its verdict)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from dpcore.experiments import registry
from dpcore.experiments.config import config_hash
from dpcore.experiments.store import Store
from dpcore.papers.p003_shuffling import claims

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "results" / "paper" / "003_table3"
FIGURES = ROOT / "figures" / "paper" / "003_shuffling_batch_clipping"


def _table() -> pd.DataFrame:
    table = pd.read_csv(FIGURES / "table3_printed_vs_ours.csv")
    return table[table["dataset"] == "mnist"].set_index(["sampling", "clipping"])


def _best_np(sampling: str) -> pd.Series:
    cells = pd.read_csv(FIGURES / "fig1_best_accuracy_vs_batch.csv")
    cells = cells[(cells["dataset"] == "mnist") & (cells["sampling_label"] == sampling) & (cells["family"] == "NP")]
    return cells.loc[cells["best_accuracy"].idxmax()]


@pytest.fixture(scope="module")
def plan() -> dict:
    store = Store.default("paper", "003_table3")
    return {r.name: r for r in registry.get("003_table3").runs("paper", store.load)}


def test_every_complete_mnist_family_has_its_typed_value():
    table = _table()
    complete = {(s, c) for (s, c), row in table.iterrows() if row["missing_dp"] == 0}
    complete |= {(s, "NP") for (s, _), row in table.iterrows() if row["missing_nondp"] == 0}
    assert complete == set(claims._T3_MNIST), (sorted(complete), sorted(claims._T3_MNIST))
    assert set(claims._T3_NP_CLOSEST) == {s for s, f in claims._T3_MNIST if f == "NP"}


@pytest.mark.parametrize("cell", sorted(claims._T3_MNIST))
def test_typed_value_is_the_rendered_best_cell_and_its_file(cell, plan):
    sampling, family = cell
    digest, pct, batch, clip = claims._T3_MNIST[cell]
    if family == "NP":
        best = _best_np(sampling)
        assert (round(100 * float(best["best_accuracy"]), 2), int(best["batch_size"])) == (pct, batch)
        assert clip is None
    else:
        row = _table().loc[(sampling, family)]
        assert (float(row["best_epoch_pct"]), int(row["batch_size"]), float(row["clip_norm"])) == (pct, batch, clip)
    run = plan[f"mnist/{sampling}/{family}/b{batch}"]
    assert config_hash(run.config) == digest, f"{run.name}: _T3_MNIST names {digest}, the plan's cell is another run"
    record = json.loads((RESULTS / f"{digest}.json").read_text())
    assert record["run"] == run.name and round(100 * record["best_accuracy"], 2) == pct
    spec_key = f"table3.mnist.{sampling}.nondp" if family == "NP" else f"table3.mnist.{sampling}.{family}.dp"
    explanation = claims.TRAINING_CLAIMS[spec_key].explanation
    assert explanation is not None and explanation.expected == pct and digest in explanation.evidence


@pytest.mark.parametrize("name", ["bc_comparable_to_ic", "mc_below_ic_and_bc", "dp_close_to_nonprivate"])
def test_qualitative_explanations_quote_only_committed_pairs(name):
    """Every 'SS / SH' pair the MNIST qualitative explanations quote is a typed best cell (tested above) or the
    non-private |S_b| = 512 cells of the rendered figure; a moved number fails here."""
    known = {(claims._T3_MNIST[("SS", f)][1], claims._T3_MNIST[("SH", f)][1]) for f in ("IC", "BC", "MC", "NP")}
    known.add(tuple(round(100 * float(_np_at(s, 512)), 2) for s in ("SS", "SH")))
    explanation = claims.TRAINING_CLAIMS[f"table3.mnist.{name}"].explanation
    text = " ".join([explanation.evidence, explanation.closest, *explanation.readings])
    quoted = {(float(a), float(b)) for a, b in re.findall(r"(\d+\.\d\d) / (\d+\.\d\d) %", text)}
    assert quoted <= known, (quoted - known, known)
    if name != "bc_comparable_to_ic":
        assert quoted, "the explanation quotes the cells that decide it"


def _np_at(sampling: str, batch: int) -> float:
    cells = pd.read_csv(FIGURES / "fig1_best_accuracy_vs_batch.csv").set_index("run")
    return cells.loc[f"mnist/{sampling}/NP/b{batch}", "best_accuracy"]


@pytest.mark.parametrize("sampling", ["SS", "SH"])
def test_np_closest_reading_names_the_rendered_512_cell_and_its_file(sampling, plan):
    """The typed closest reading of a non-private baseline (``_T3_NP_CLOSEST``) is the |S_b| = 512 cell as rendered,
    with the plan's result file for it."""
    run = plan[f"mnist/{sampling}/NP/b512"]
    value = round(100 * float(_np_at(sampling, 512)), 2)
    assert claims._T3_NP_CLOSEST[sampling] == (
        f"|S_b| = 512 alone: {value:.2f} % (results/paper/003_table3/{config_hash(run.config)}.json)")
