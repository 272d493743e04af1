"""Paper 003 Table 3 / Fig. 1 figures with the verdict of each cell (issue 41): read off the claim rows, never typed;
the authors'-mode rows with the ε of the noise that ran beside the paper's."""

from __future__ import annotations

import math

import matplotlib
import pandas as pd
import pytest

from dpcore.claims import ClaimsLog, verdicts
from dpcore.papers.p003_shuffling import training_report as tr
from dpcore.papers.p003_shuffling.claims import TRAINING_CLAIMS, table3_key
from dpcore.plots import VERDICT_MARKS

matplotlib.use("Agg")

BATCHES = (64, 128, 256, 512, 1024)


def _cells(batches=BATCHES, done=lambda family, batch: True, dataset="mnist") -> pd.DataFrame:
    """Synthetic :func:`training.cell_frame` rows: IC / BC / NP cells of SS and SH at ``batches``."""
    rows = []
    for sampling in ("SS", "SH"):
        for family, acc in (("IC", 0.95), ("BC", 0.80), ("NP", 0.98)):
            for batch in batches:
                ok = done(family, batch)
                rows.append({"run": f"{dataset}/{sampling}/{family}/b{batch}", "status": "done" if ok else "waiting",
                             "dataset": dataset, "sampling_label": sampling, "family": family, "batch_size": batch,
                             "clip_norm": 1.0 if family != "NP" else math.nan,
                             "best_accuracy": acc if ok else math.nan, "final_accuracy": acc if ok else math.nan,
                             "epsilon_paper": 35.0 if family != "NP" else math.inf,
                             "epsilon_standard": 7.0 if family != "NP" else math.inf})  # fmt: skip
    return pd.DataFrame(rows)


def _why() -> pd.DataFrame:
    """A :func:`why_differs_frame`-shaped frame: Algorithm 1, one done authors' mode, one planned, one n/a."""
    base = {"printed_pct": 98.41, "best_pct": math.nan, "final_pct": math.nan, "clip_norm": math.nan,
            "sigma_effective": math.nan, "epsilon_A1": math.nan, "epsilon_claimed": math.nan, "run": ""}  # fmt: skip
    return pd.DataFrame([
        {**base, "reading": "algorithm1", "cell": "SS IC", "status": "done", "best_pct": 95.9, "final_pct": 95.8,
         "clip_norm": 50.0, "sigma_effective": 2.0, "epsilon_A1": 35.16, "epsilon_claimed": 35.16},
        {**base, "reading": "authors_93f6075", "cell": "SS IC", "status": "done", "best_pct": 98.83, "final_pct": 98.8,
         "clip_norm": 0.1, "sigma_effective": 6.2e-4, "epsilon_A1": 1.91e8, "epsilon_claimed": 35.16},
        {**base, "reading": "authors_93f6075", "cell": "SH IC", "status": "not run"},
        {**base, "reading": "largeC", "cell": "SS IC", "status": "done", "best_pct": 96.9, "final_pct": 96.9,
         "clip_norm": 20.0, "sigma_effective": 2.0, "epsilon_A1": 35.16, "epsilon_claimed": 35.16},
        {**base, "reading": "bc_divided_by_batch", "cell": "SS IC", "status": "n/a"},
    ])  # fmt: skip


def test_fig1_verdict_keys_follow_the_grid_for_any_subset_of_batch_sizes():
    full = tr.fig1_verdict_keys(_cells(), "mnist", "SS")
    assert full == {64: "fig1.mnist.SS.smallest_batch.bc_comparable_to_ic",
                    **{b: f"fig1.mnist.SS.b{b}.bc_comparable_to_ic" for b in (128, 256, 512, 1024)}}
    assert all(key in TRAINING_CLAIMS for key in full.values())
    subset = tr.fig1_verdict_keys(_cells(batches=(256, 1024)), "mnist", "SH")  # 256 is this grid's smallest
    assert subset == {256: "fig1.mnist.SH.smallest_batch.bc_comparable_to_ic",
                      1024: "fig1.mnist.SH.b1024.bc_comparable_to_ic"}
    assert tr.fig1_verdict_keys(_cells(batches=(64,)), "cifar10", "SS") == {}  # no CIFAR-10 cells
    with pytest.raises(ValueError, match="cells"):
        tr.fig1_verdict_keys(pd.DataFrame(), "mnist", "SS")


def test_table3_verdicts_come_from_the_claim_rows_and_missing_rows_are_not_run():
    comparison = tr.table3_comparison(pd.DataFrame(columns=["dataset", "sampling", "clipping"]), _cells())
    log = ClaimsLog()
    key = table3_key("mnist", "SS", "IC")
    log.check(TRAINING_CLAIMS[key], 98.4, profile="paper")  # within its tolerance of 98.41
    log.check(TRAINING_CLAIMS[table3_key("mnist", "SS", None)], None, profile="paper")
    marks = tr.table3_verdicts(comparison, verdicts(log.claims))
    row = comparison.index[(comparison["dataset"] == "mnist") & (comparison["sampling"] == "SS")
                           & (comparison["clipping"] == "IC")][0]  # fmt: skip
    assert marks[row] == ("reproduced", "not run")
    assert all(m == ("not run", "not run") for i, m in enumerate(marks) if comparison.loc[i, "sampling"] == "SH")
    with pytest.raises(ValueError, match="verdicts"):
        tr.table3_verdicts(comparison, [("a", "b")])
    with pytest.raises(ValueError, match="comparison"):
        tr.table3_verdicts(pd.DataFrame(), {})


def test_authors_mode_rows_carry_the_epsilon_that_ran_and_the_deciding_claim():
    key = "table3.mnist.SS.b1024.ic_authors_93f6075_reaches_printed"
    rows = tr.authors_mode_rows(_why(), {key: "reproduced"})
    assert list(rows["reading"]) == ["authors_93f6075", "authors_93f6075", "largeC"]  # no Algorithm 1, no n/a
    first = rows.iloc[0]
    assert first["claim"] == key and first["verdict"] == "reproduced"
    assert first["epsilon_A1"] == 1.91e8 and first["epsilon_claimed"] == 35.16
    assert rows.iloc[1]["verdict"] == "not run"  # its claim has no row
    assert rows.iloc[2]["claim"] == "" and rows.iloc[2]["verdict"] == ""  # evidence only, no claim covers it
    with pytest.raises(ValueError, match="why"):
        tr.authors_mode_rows(pd.DataFrame({"reading": []}), {})
    with pytest.raises(ValueError, match="verdicts"):
        tr.authors_mode_rows(_why(), None)


def test_table3_figure_marks_each_row_and_lists_the_authors_rows_with_both_epsilons():
    cells = _cells()
    comparison = tr.table3_comparison(pd.DataFrame(columns=["dataset", "sampling", "clipping"]), cells)
    v = {table3_key("mnist", "SS", "IC"): "not reproduced"}
    key = "table3.mnist.SS.b1024.ic_authors_93f6075_reaches_printed"
    fig = tr.table3_figure(comparison, verdicts=v, authors=tr.authors_mode_rows(_why(), {key: "reproduced"}))
    texts = [t.get_text() for ax in fig.axes for tab in ax.tables for t in (c.get_text() for c in
                                                                            tab.get_celld().values())]  # fmt: skip
    assert "✗ not reproduced; – not run" in texts and "– not run; – not run" in texts
    assert "1.91e+08" in texts and "35.2" in texts and "✓ reproduced" in texts and "— (no claim)" in texts
    tab = fig.axes[-1].tables[0]
    colours = {tuple(round(x, 3) for x in c.get_facecolor()[:3]) for c in tab.get_celld().values()}
    green = tuple(round(x, 3) for x in matplotlib.colors.to_rgb(VERDICT_MARKS["reproduced"][1]))
    assert green in colours
    plain = tr.table3_figure(comparison)  # without verdicts: no verdict column, no authors' table
    assert len(plain.axes) == 2 and not any("verdict" in c.get_text().get_text() for ax in plain.axes
                                            for c in ax.tables[0].get_celld().values())  # fmt: skip
    with pytest.raises(ValueError, match="authors"):
        tr.table3_figure(comparison, authors=[1])


def test_fig1_best_vs_batch_marks_every_batch_size_and_missing_cells_are_not_run():
    cells = _cells(done=lambda family, batch: not (family == "BC" and batch == 256))
    v = {"fig1.mnist.SS.smallest_batch.bc_comparable_to_ic": "not reproduced",
         "fig1.mnist.SS.b1024.bc_comparable_to_ic": "reproduced"}
    fig, _ = tr.fig1_best_vs_batch(cells, verdicts=v)
    marks = [t.get_text() for t in fig.axes[0].texts if t.get_text()[:1] in {m for m, _, _ in VERDICT_MARKS.values()}]
    assert sorted(marks) == sorted(["✗ SS", "✓ SS", *["– SS"] * 3, *["– SH"] * 5])  # 2 samplings x 5 |S_b|
    assert "marks:" in fig.axes[0].get_xlabel()
    fig, _ = tr.fig1_best_vs_batch(cells)  # no verdicts: no marks
    assert not [t for t in fig.axes[0].texts if t.get_text().startswith(("✓", "✗", "–"))]
    with pytest.raises(ValueError, match="verdicts"):
        tr.fig1_best_vs_batch(cells, verdicts=["x"])
