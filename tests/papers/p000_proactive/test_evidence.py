"""Paper 000's non-convex MNIST claims decided by the verdict rules (issue 50) on small synthetic run frames: the
printed reading decides, another ε is beside, full-scale runs decide at both profiles, the positive control gates a
"not reproduced", and the utility graph's rule uses the draws' standard error."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dpcore.claims import ClaimsLog
from dpcore.papers.p000_proactive import evidence as ev
from dpcore.papers.p000_proactive.claims import CLAIMS, FINDINGS
from dpcore.verdicts import Control, decide

READINGS = {"sum": "η̄·U (as printed)", "mean": "η̄·U/s"}


def _frame(s370: float, nonprivate: float, eps2: float = 50.0) -> pd.DataFrame:
    """One reading's runs: s = 370 at Table 7's ε = 0.15, a run at ε = 2, the non-private run (final accuracy)."""
    rows = [
        dict(run="s/370", kind="s", status="done", eps_label=0.15007, final_accuracy=s370 / 100, s=370, sigma=12.1,
             clip_norm=0.025, hash="a" * 16),
        dict(run="eps/2", kind="eps", status="done", eps_label=2.0, final_accuracy=eps2 / 100, s=1000, sigma=3.0,
             clip_norm=0.025, hash="b" * 16),
        dict(run="nonprivate/C0.025", kind="nonprivate", status="done", eps_label=math.nan,
             final_accuracy=nonprivate / 100, s=370, sigma=0.0, clip_norm=0.025, hash="c" * 16),
    ]  # fmt: skip
    return pd.DataFrame(rows)


HOLDS = Control("ref.control.opacus.mnist.eps1.16", True, "holds")


def test_the_printed_reading_at_the_printed_epsilon_decides():
    runs = ev.mnist_runs([(_frame(74.0, 97.0, eps2=93.5), "full", "sum"), (_frame(21.0, 20.5), "full", "mean")],
                         READINGS)  # fmt: skip
    key = "nonconvex.mnist.eps0.15.accuracy_pct"
    spec = CLAIMS[key]
    v = decide(spec.value, runs[key], spec.rule, atol=spec.atol, control=HOLDS, full_scale=True)
    assert v.status == "not-reproduced" and v.value == pytest.approx(74.0)  # 93.5 at ε = 2 is beside, never decides
    assert "beside" in v.note and "η̄·U (as printed)" in v.note
    assert decide(spec.value, runs[key], spec.rule, atol=spec.atol).status == "inconclusive"  # no control committed
    within = "nonconvex.mnist.s370_within_10pct"
    row = ClaimsLog().decide(CLAIMS[within], runs[within], control=HOLDS, profile="paper")
    assert row.status == "inconclusive" and "not the algorithm as printed" in row.note  # only η̄·U/s stays within 10
    printed_only = ev.mnist_runs([(_frame(74.0, 97.0), "full", "sum")], READINGS)[within]
    assert ClaimsLog().decide(CLAIMS[within], printed_only, control=HOLDS, profile="paper").status == "not-reproduced"
    np_key = "nonconvex.mnist.nonprivate.accuracy_pct"
    assert ClaimsLog().decide(CLAIMS[np_key], runs[np_key], profile="paper").status == "reproduced"
    # only another reading (not the algorithm as printed) reaching 93 % is no reproduction
    other = ev.mnist_runs([(_frame(74.0, 97.0), "full", "sum"), (_frame(93.0, 97.0), "full", "mean")], READINGS)
    assert decide(spec.value, other[key], spec.rule, atol=spec.atol, control=HOLDS).status == "inconclusive"


def test_full_scale_runs_decide_at_the_quick_profile():
    """One verdict per claim: a reduced run that lands on 93 % never decides once full-scale runs are committed."""
    key = "nonconvex.mnist.eps0.15.accuracy_pct"
    reduced = ev.mnist_runs([(_frame(93.0, 97.0), "reduced", "sum")], READINGS)
    both = ev.mnist_runs([(_frame(93.0, 97.0), "reduced", "sum"), (_frame(74.0, 97.0), "full", "sum")], READINGS)
    assert ClaimsLog().decide(CLAIMS[key], reduced[key], profile="quick").status == "not-run"  # a full-scale claim
    quick = ClaimsLog().decide(CLAIMS[key], both[key], control=HOLDS, profile="quick")
    paper = ClaimsLog().decide(CLAIMS[key], ev.mnist_runs([(_frame(74.0, 97.0), "full", "sum")], READINGS)[key],
                               control=HOLDS, profile="paper")  # fmt: skip
    assert quick.status == paper.status == "not-reproduced" and quick.our_value == paper.our_value


def test_utility_rule_uses_the_draws_standard_error():
    def util(fraction: float, sd: float) -> pd.DataFrame:
        return pd.DataFrame([dict(run="nonprivate/C0.025", clip_norm=0.025, sigma=s, mean=fraction * 0.97, sd=sd,
                                  draws=20, base_accuracy=0.97, fraction=fraction if s == 12.0 else 0.99)
                             for s in (2.0, 12.0, 16.0)])  # fmt: skip

    spec = CLAIMS["nonconvex.mnist.utility.drop_le_10pct"]
    far = ev.utility_runs([(util(0.1, 0.01), "full", "printed")], sigma_cap=12.0, clip=0.025)
    assert far[0].value is False and far[0].trials == 20
    assert decide(True, far, spec.rule, control=HOLDS).status == "not-reproduced"
    near = ev.utility_runs([(util(0.899, 0.05), "full", "printed")], sigma_cap=12.0, clip=0.025)
    v = decide(True, near, spec.rule, control=HOLDS)
    assert v.status == "inconclusive" and "seed spreads" in v.note
    assert decide(True, ev.utility_runs([(util(0.95, 0.01), "full", "printed")], sigma_cap=12.0, clip=0.025),
                  spec.rule).status == "reproduced"  # fmt: skip


def test_no_value_of_ours_in_the_specs_or_the_trained_findings():
    import re

    for key in ("nonconvex.mnist.eps0.15.accuracy_pct", "nonconvex.mnist.s370_within_10pct",
                "nonconvex.mnist.utility.drop_le_10pct", "nonconvex.mnist.nonprivate.accuracy_pct"):  # fmt: skip
        assert CLAIMS[key].rule is not None and CLAIMS[key].explanation is None, key
    for f in FINDINGS:
        if f.kind == "trained":
            text = (f.text + f.evidence + " ".join(f.readings)).replace("ε = 0.15", "").replace("C = 0.025", "")
            assert not re.search(r"\d\.\d{2}|\b[0-9a-f]{16}\b", text), f.key
    standin = next(f for f in FINDINGS if f.key == "convex_standin")
    assert "stand-in" in standin.short and "ijcnn1" in standin.short


def test_erratum_findings_follow_the_conclusion_rule():
    """Issue 50: "changes a conclusion" of each erratum finding is dpcore.verdicts.changes_conclusion of its weight
    (the largest relative move among its rows' deterministic corrections); an undecided finding changes none."""
    from dpcore.verdicts import changes_conclusion

    for f in FINDINGS:
        if f.kind == "erratum":
            assert f.weight is not None and f.conclusion == changes_conclusion(f.weight), f.key
        if f.kind in ("inconclusive", "trained", "not-run"):
            assert not f.conclusion, f.key
    slips = next(f for f in FINDINGS if f.key == "appendix_slips")
    assert (slips.weight.printed, slips.weight_words) == (6.85, "cosmetic")  # 6.85 -> 6.796: under a 10 % move
