"""Paper 000's orderings over runs at chance are inconclusive, decided from the runs (issue 41)."""

from __future__ import annotations

import pandas as pd
import pytest

from dpcore.claims import ClaimsLog
from dpcore.papers.p000_proactive import nonconvex_report as nr
from dpcore.papers.p000_proactive.claims import NONCONVEX_CLAIMS


def _sweep(accs: dict[int, float]) -> pd.DataFrame:
    return pd.DataFrame({"kind": "s", "s_paper": list(accs), "status": "done", "final_accuracy": list(accs.values()),
                         "eps_label": None})  # fmt: skip


def test_two_runs_at_chance_leave_the_ordering_undecided_and_a_learning_run_decides_it():
    out = nr.undecided("mnist", _sweep({10: 0.0897, 50: 0.0941, 370: 0.7428}))
    assert set(out) == {"nonconvex.mnist.s10_worst"} and "below 20 %" in out["nonconvex.mnist.s10_worst"]
    assert nr.undecided("mnist", _sweep({10: 0.09, 50: 0.35, 370: 0.74})) == {}
    both = nr.undecided("mnist", _sweep({10: 0.09, 370: 0.12}))
    assert set(both) == {"nonconvex.mnist.s10_worst", "nonconvex.mnist.larger_s_better"}


def test_a_missing_run_decides_nothing_and_the_status_is_inconclusive():
    runs = _sweep({10: 0.09, 50: 0.1})
    runs.loc[1, "status"] = "running"
    assert nr.undecided("mnist", runs) == {}
    spec = NONCONVEX_CLAIMS["nonconvex.mnist.s10_worst"]
    row = ClaimsLog().check(spec, True, profile="paper", inconclusive="both at chance")
    assert row.status == "inconclusive" and row.note.startswith("inconclusive: both at chance")
    with pytest.raises(ValueError, match="dataset"):
        nr.undecided("svhn", runs)
