"""Paper 002, issue 22: Table I's budget with the authors' normalisation and the "where the gap goes" reading."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from dpcore.claims import compute_status
from dpcore.papers.p002_modelmix import ablation_report as ar
from dpcore.papers.p002_modelmix import training as t2
from dpcore.papers.p002_modelmix.claims import _BUDGET_TOTAL, TRAINING_CLAIMS


def _ablation(done: dict[tuple[str, float, str], tuple[float, float, float, float]]) -> pd.DataFrame:
    rows = []
    for method in ("dpsgd", "mm"):
        for eps in (0.2, 1.0):
            for factor in t2.ABLATION_FACTORS:
                final, authors, e_train, e_total = done.get((method, eps, factor), (math.nan,) * 4)
                rows.append(
                    {
                        "run": f"cifar10/{method}/eps{eps:g}/{factor}/seed0",
                        "method": method,
                        "target_eps": eps,
                        "factor": factor,
                        "status": "done" if (method, eps, factor) in done else "todo",
                        "final_pct": final,
                        "authors_pct": authors,
                        "epsilon_training": e_train,
                        "epsilon_total": e_total,
                    }
                )
    return pd.DataFrame(rows)


def _table1() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "key": "cifar10",
                "method": m,
                "target_eps": e,
                "median_pct": 10.0 + e,
                "seeds_done": 5,
                "seeds_planned": 5,
                "epsilon": e,
            }
            for m in ("dpsgd", "mm")
            for e in (0.2, 1.0)
        ]
    )


def test_gap_frame_takes_each_reading_from_its_run_and_readout():
    abl = _ablation(
        {
            ("mm", 0.2, "norm"): (40.0, 41.0, 0.2, 0.73),
            ("mm", 0.2, "metric"): (30.0, 35.0, 0.2, 0.2),
            ("mm", 0.2, "all"): (50.0, 52.0, 0.2, 0.73),
        }
    )
    frame = ar.gap_frame(abl, _table1())
    assert len(frame) == len(ar.GAP_READINGS) * 4
    cell = frame[(frame["method"] == "mm") & (frame["target_eps"] == 0.2)].set_index("reading")
    assert cell.loc["table1", "ours_pct"] == pytest.approx(10.2)
    assert cell.loc["metric", "ours_pct"] == 35.0  # the authors' readout of the metric run
    assert cell.loc["norm", "ours_pct"] == 40.0 and cell.loc["norm", "epsilon_total"] == 0.73
    assert cell.loc["all", "ours_pct"] == 50.0 and cell.loc["all_authors", "ours_pct"] == 52.0
    assert cell.loc["trunc", "status"] == "not run" and math.isnan(cell.loc["trunc", "ours_pct"])
    assert set(cell["printed_pct"]) == {58.5}
    # a different cell: nothing of mm 0.2 leaks into it
    other = frame[(frame["method"] == "dpsgd") & (frame["target_eps"] == 0.2)].set_index("reading")
    assert (other.drop(index="table1")["status"] == "not run").all()
    assert ar._eps_text(cell.loc["norm"]) == "ε 0.2 (total 0.73)" and ar._eps_text(cell.loc["metric"]) == "ε 0.2"


def test_gap_frame_refuses_frames_of_another_kind():
    with pytest.raises(ValueError, match="ablation"):
        ar.gap_frame(pd.DataFrame({"run": []}), _table1())
    with pytest.raises(ValueError, match="table1"):
        ar.gap_frame(_ablation({}), pd.DataFrame({"key": []}))
    with pytest.raises(ValueError, match="budget"):
        ar.budget_claim_values(pd.DataFrame({"method": ["mm"]}))
    with pytest.raises(ValueError, match="profile"):
        ar.normalization_budget_frame("full")


def test_gap_notes_append_the_readings_to_the_covered_cells_only():
    gap = ar.gap_frame(_ablation({("mm", 0.2, "norm"): (37.5, 42.25, 0.2, 0.73)}), _table1())
    ours = {"table1.cifar10.mm.eps0.2": (32.44, "median of 5 seeds"), "table1.cifar10.mm.eps0.6": (61.0, "m"),
            "table1.cifar10.dpsgd.eps1": (46.15, "d")}  # fmt: skip
    out = ar.gap_notes(gap, ours)
    value, note = out["table1.cifar10.mm.eps0.2"]
    assert value == 32.44 and note.startswith("median of 5 seeds; ablation (002_ablation")
    assert "norm 37.50 % (ε 0.2 (total 0.73))" in note
    assert "not run yet: metric, trunc, steps, all, all_authors" in note
    assert out["table1.cifar10.mm.eps0.6"] == ours["table1.cifar10.mm.eps0.6"]  # no ablation at ε = 0.6
    assert "not run yet: metric, norm" in out["table1.cifar10.dpsgd.eps1"][1]
    assert set(out) == set(ours)
    with pytest.raises(ValueError, match="gap"):
        ar.gap_notes(pd.DataFrame({"reading": []}), ours)
    with pytest.raises(ValueError, match="claim_values"):
        ar.gap_notes(gap, [("k", (1, "n"))])


def test_gap_figure_draws_every_cell_and_says_what_is_missing():
    fig, frame = ar.gap_figure(_ablation({("dpsgd", 1.0, "all"): (55.0, 57.0, 1.0, 1.3)}), _table1(), title="t")
    try:
        label = fig.axes[0].get_xlabel()
        assert "19 of the 20 ablation runs drawn have no result yet" in " ".join(label.split())
        assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == list(dict.fromkeys(frame["cell"]))
    finally:
        plt.close(fig)


def test_budget_claims_are_the_committed_runs_composed_with_the_authors_normalisation():
    """The pinned erratum values (claims._BUDGET_TOTAL) are what the committed paper-profile Table I runs give."""
    budget = ar.normalization_budget_frame("paper")
    values = ar.budget_claim_values(budget)
    assert set(values) == {f"table1.cifar10.{m}.eps{e:g}.total_with_normalization" for m, e in _BUDGET_TOTAL}
    for (method, eps), total in _BUDGET_TOTAL.items():
        key = f"table1.cifar10.{method}.eps{eps:g}.total_with_normalization"
        value, note = values[key]
        assert value == pytest.approx(total, rel=1e-6), key
        assert compute_status(TRAINING_CLAIMS[key], value) == "erratum"
        # an erratum on a training notebook's claim names the computation that proves it (issue 41)
        assert (
            TRAINING_CLAIMS[key].explanation.by
            == "dpcore.papers.p002_modelmix.ablation_report:normalization_budget_frame"
        )
        assert "0.6948" in note and value > eps + 0.2  # composition is sub-additive, but the release adds
    row = budget[(budget["method"] == "dpsgd") & (budget["target_eps"] == 0.2)].iloc[0]
    assert row["epsilon_reported"] == pytest.approx(0.2, rel=1e-3)
    assert row["epsilon_normalization"] == pytest.approx(0.6948, abs=1e-4)


def test_budget_frame_without_results_has_empty_rows(tmp_path):
    budget = ar.normalization_budget_frame("quick", results_root=tmp_path)
    assert len(budget) == 4 and (budget["run"] == "").all() and budget["epsilon_total"].isna().all()
    assert all(v is None for v, _ in ar.budget_claim_values(budget).values())


def test_table1_cells_are_decided_by_the_rules_from_the_committed_runs():
    """Issue 50: a Table I cell carries no value of ours; its verdict is computed from 002_table1 / 002_ablation by
    dpcore.verdicts: the stated setting and §5.1's private normalisation are the readings as printed, the authors'
    readout and configuration are other readings (never reproduce), every run at the column's training ε."""
    from dpcore.papers.p002_modelmix import evidence as ev
    from dpcore.verdicts import decide

    for key, spec in TRAINING_CLAIMS.items():
        if key.startswith("table1.") and not key.endswith("_normalization") and key.count(".") == 3:
            assert spec.rule is not None and spec.explanation is None, key
    frame = pd.DataFrame([
        {"run": "002_table1/cifar10/mm/eps0.2/seed0", "hash": "h0", "data": "cifar10", "method": "mm", "column": 0.2,
         "reading": ev.READINGS["table1"][0], "printed": True, "seed": 0, "value": 30.0, "epsilon": 0.2,
         "scale": "full"},
        {"run": "002_ablation/cifar10/mm/eps0.2/all/seed0", "hash": "h1", "data": "cifar10", "method": "mm",
         "column": 0.2, "reading": ev.READINGS["all"][0], "printed": False, "seed": 0, "value": 58.0,
         "epsilon": 0.2, "scale": "full"},
    ])  # fmt: skip
    runs = ev.evidence([frame])["table1.cifar10.mm.eps0.2"]
    spec = TRAINING_CLAIMS["table1.cifar10.mm.eps0.2"]
    verdict = decide(spec.value, runs, spec.rule, atol=spec.atol)
    assert verdict.status == "inconclusive" and "not the algorithm as printed" in verdict.note  # the authors' reading
    assert "stand-in data" in verdict.note  # the JPEG mirror is in the verdict line


def test_a_run_with_the_private_normalisation_shows_all_it_released_on_the_row():
    """The paper's own accounting decides (the normalisation's cost is the table1_normalisation erratum), and the row
    says what the run released in all."""
    from dpcore.papers.p002_modelmix import evidence as ev

    assert ev._released({"epsilon_total": 1.2223, "epsilon_paper": 1.0}) == 1.2223
    assert math.isnan(ev._released({"epsilon_total": 1.0, "epsilon_paper": 1.0}))  # GroupNorm: nothing added
    assert math.isnan(ev._released({"epsilon_paper": 0.4}))  # 002_table1 accounts no total
    run = {"run": "002_ablation/cifar10/mm/eps1/norm/seed0", "hash": "h", "data": "cifar10", "method": "mm",
           "column": 1.0, "reading": ev.READINGS["norm"][0], "printed": True, "seed": 0, "value": 66.0,
           "epsilon": 1.0, "released": 1.2223, "scale": "full"}  # fmt: skip
    (got,) = ev.evidence([pd.DataFrame([run])])["table1.cifar10.mm.eps1"]
    assert got.epsilon == 1.0 and "all releases ε 1.22" in got.setting


def test_authors_reading_frame_prices_the_authors_configuration_with_its_normalisation():
    """Issue 41: Table I's figure shows, beside each CIFAR-10 cell, the authors' whole configuration and its total ε."""
    from dpcore.papers.p002_modelmix import training_report as tr

    ablation = _ablation({("mm", 0.2, "all"): (39.41, 46.51, 0.2, 0.7313),
                          ("dpsgd", 1.0, "norm"): (55.3, 58.0, 1.0, 1.33)})
    ablation = pd.concat([ablation, pd.DataFrame([{
        "run": "cifar10/nonprivate/eps_inf/authors/seed0", "method": "nonprivate", "target_eps": math.inf,
        "factor": "authors", "status": "done", "final_pct": 74.14, "authors_pct": 74.5, "epsilon_training": math.inf,
        "epsilon_total": math.inf}])], ignore_index=True)  # fmt: skip
    frame = ar.authors_reading_frame(ablation)
    assert set(zip(frame["method"], frame["eps"], strict=True)) == {
        (m, e) for m in ("dpsgd", "mm") for e in (0.2, 1.0, math.inf)}  # "norm" alone is not the whole configuration
    mm = frame[(frame["method"] == "mm") & (frame["eps"] == 0.2)].iloc[0]
    assert mm["status"] == "done" and mm["epsilon_total"] == 0.7313 and mm["authors_pct"] == 46.51
    assert frame[(frame["method"] == "dpsgd") & (frame["eps"] == 1.0)]["status"].item() == "not run"
    assert set(frame.loc[frame["eps"] == math.inf, "final_pct"]) == {74.14}  # the non-private run, for both methods
    comparison = pd.DataFrame([{"key": "cifar10", "method": "mm", "eps": 0.2, "printed_pct": 58.5, "ours_pct": 32.4,
                                "min_pct": 31.2, "max_pct": 34.9, "seeds_done": 5, "seeds_planned": 5,
                                "epsilon_reported": 0.2, "z": 40.73}])  # fmt: skip
    fig = tr.table_figure(comparison, "table1", authors=frame)
    texts = [c.get_text().get_text() for c in fig.axes[0].tables[0].get_celld().values()]
    assert "39.4 / 46.5" in texts and "0.2 + norm. = 0.731" in texts and "its eps: training + norm. = total" in texts
    plt.close(fig)
    with pytest.raises(ValueError, match="ablation"):
        ar.authors_reading_frame(pd.DataFrame({"method": []}))
    with pytest.raises(ValueError, match="authors"):
        tr.table_figure(comparison, "table1", authors=pd.DataFrame({"method": []}))
