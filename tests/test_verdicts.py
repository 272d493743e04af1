"""The verdict rules of :mod:`dpcore.verdicts` (issue 50) on small synthetic result sets."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.verdicts import (
    ALL_STATUSES,
    Control,
    Run,
    TrainedRule,
    Verdict,
    Weight,
    audit_changes_conclusion,
    audit_status,
    changes_conclusion,
    clopper_pearson,
    clopper_pearson_epsilon,
    control_from_records,
    count_by_status,
    count_phrase,
    decide,
    merge_profiles,
    scope_phrase,
)

RULE = TrainedRule(epsilon=35.0, accounting="A_1 (Def. 5.2)", pipeline="mnist-lenet5")
OK = Control("ref.controls.mnist", True, "97.0 vs 97 published")


def run(value, *, seed=0, reading="as printed", printed=True, eps=35.0, setting="C = 1", scale="full", name=None):
    return Run(name or f"{reading}/{setting}/s{seed}", reading, value, eps, printed, setting, seed, scale)


def seeds(values, **kw):
    return [run(v, seed=i, **kw) for i, v in enumerate(values)]


def test_reproduced_names_the_matching_run():
    v = decide(98.4, [run(96.0, setting="|S_b| = 64"), run(98.3, setting="|S_b| = 512")], RULE, atol=0.5)
    assert v.status == "reproduced" and v.value == 98.3 and "|S_b| = 512" in v.note


def test_a_reading_other_than_the_printed_one_never_reproduces():
    v = decide(98.4, [run(98.4, printed=False, reading="ablation momentum")], RULE, atol=0.5, control=OK)
    assert v.status == "inconclusive" and "not the algorithm as printed" in v.note


def test_another_privacy_level_is_beside_never_decides():
    v = decide(
        98.4, [*seeds([90.0, 90.1, 90.2]), run(98.4, eps=1e8, reading="authors' code")], RULE, atol=0.5, control=OK
    )
    assert v.status == "not-reproduced" and v.value == pytest.approx(90.2) and "beside" in v.note
    only = decide(98.4, [run(98.4, eps=1e8)], RULE, atol=0.5, control=OK)
    assert only.status == "not-run" and "beside" in only.note


def test_closest_is_the_maximum_over_committed_runs():
    runs = [run(96.45, setting="b512"), *seeds([96.9, 96.8, 96.85], setting="b1024 C20"), run(95.9, setting="b1024")]
    v = decide(98.41, runs, RULE, atol=0.5, control=OK)
    assert v.closest is not None and v.closest.value == 96.9 and v.status == "not-reproduced"


def test_small_gap_needs_three_seeds():
    one = decide(98.41, [run(96.9)], RULE, atol=0.5, control=OK)
    assert one.status == "inconclusive" and any("seeds" in f for f in one.failed)
    big = decide(98.41, [run(87.0)], RULE, atol=0.5, control=OK)  # an 11-point gap needs no seeds
    assert big.status == "not-reproduced"


def test_gap_within_twice_the_seed_spread_is_inconclusive():
    v = decide(98.0, seeds([97.0, 95.0, 93.0, 97.2]), RULE, atol=0.5, control=OK)
    assert v.status == "inconclusive" and any("spread" in f for f in v.failed)


def test_positive_control_is_required():
    runs = seeds([90.0, 90.1, 90.2])
    assert decide(98.0, runs, RULE, atol=0.5).status == "inconclusive"
    failed = decide(98.0, runs, RULE, atol=0.5, control=Control("ref.x", False))
    assert failed.status == "inconclusive" and "does not hold" in failed.note
    assert decide(98.0, runs, RULE, atol=0.5, control=OK).status == "not-reproduced"


def test_full_scale_evidence_decides_over_reduced_runs():
    runs = [run(98.0, scale="reduced"), *seeds([90.0, 90.1, 90.2])]
    assert decide(98.0, runs, RULE, atol=0.5, control=OK).status == "not-reproduced"
    reduced = decide(98.0, [run(98.0, scale="reduced")], RULE, atol=0.5, control=OK)
    assert reduced.status == "not-run" and "reduced runs only" in reduced.note
    anyscale = decide(98.0, [run(98.0, scale="reduced")], RULE, atol=0.5, full_scale=False)
    assert anyscale.status == "reproduced"


def test_stand_in_data_is_in_the_verdict_line():
    rule = TrainedRule(epsilon=1.0, accounting="RDP", stand_in="ijcnn1 for an unnamed LIBSVM set")
    assert "ijcnn1" in decide(0.9, [run(0.9, eps=1.0)], rule, atol=0.01).note
    assert "ijcnn1" in decide(0.9, [run(0.5, eps=1.0)], rule, atol=0.01).note


def test_direction_claims_use_the_margin():
    flat = [Run(f"r{i}", "as printed", False, 35.0, True, "b64", i, margin=10.0 + i) for i in range(1)]
    assert decide(True, flat, RULE, control=OK).status == "not-reproduced"
    assert decide(True, [Run("r", "as printed", True, 35.0, True, margin=0.2)], RULE).status == "reproduced"
    near = [Run("r", "as printed", False, 35.0, True, margin=0.3)]
    assert decide(True, near, RULE, control=OK).status == "inconclusive"


def test_no_runs_is_not_run():
    assert decide(98.0, [], RULE).status == "not-run"


finite = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(finite, st.booleans(), st.sampled_from([1.0, 35.0, 1e8]), st.integers(0, 3)), max_size=8),
    finite,
    st.floats(min_value=0.0, max_value=3.0),
    st.booleans(),
)
def test_rules_hold_on_any_result_set(items, printed, atol, control):
    runs = [run(v, printed=p, eps=e, seed=s, setting=f"s{i % 2}", name=f"r{i}") for i, (v, p, e, s) in enumerate(items)]
    v = decide(printed, runs, RULE, atol=atol, control=OK if control else None)
    assert isinstance(v, Verdict) and v.status in ("reproduced", "not-reproduced", "inconclusive", "not-run")
    level = [r for r in runs if r.epsilon <= 35.0 * 1.001]
    if not level:
        assert v.status == "not-run"
    if v.status == "reproduced":  # a printed-algorithm run at the printed level within tolerance
        assert v.closest.printed and v.closest in level and abs(v.closest.value - printed) <= atol
    if v.status == "not-reproduced":  # every run at the level misses, and the control holds
        assert control and all(abs(r.value - printed) > atol for r in level)
    if any(r.printed and abs(r.value - printed) <= atol for r in level):
        assert v.status == "reproduced"
    # a run at another privacy level never changes the verdict
    extra = run(printed, eps=1e9, name="far")
    assert decide(printed, [*runs, extra], RULE, atol=atol, control=OK if control else None).status == v.status


def test_merge_profiles_one_verdict_per_claim():
    paper = Verdict("not-reproduced", 96.9, "paper")
    quick = Verdict("reproduced", 98.0, "quick")
    merged = merge_profiles({"quick": quick, "paper": paper})
    assert merged["quick"].status == merged["paper"].status == "not-reproduced"
    undecided = {"quick": quick, "paper": Verdict("not-run", None, "")}
    assert merge_profiles(undecided)["quick"].status == "reproduced"


def test_audit_statuses_are_their_own_words():
    assert audit_status("audit.modes.x.lower_bound_exceeds_claim", True) == "fails-audit"
    assert audit_status("audit.modes.x.lower_bound_within_claim", True) == "passes-audit"
    assert audit_status("table3.mnist.SS.b1024.ic_authors_93f6075_reaches_printed", True) == "authors-code"
    assert audit_status("audit.modes.x.lower_bound_exceeds_claim", False) == "differs"
    assert "reproduced" not in {audit_status(k, True) for k in ("a.lower_bound_exceeds_claim", "b")}


def test_clopper_pearson():
    low, high = clopper_pearson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.3085, abs=1e-4)
    low, high = clopper_pearson(5, 10, 0.95)
    assert low == pytest.approx(0.1871, abs=1e-4) and high == pytest.approx(0.8129, abs=1e-4)
    # a perfect attack on 1000 + 1000 trials bounds ε below by about log(1/0.0037)
    eps = clopper_pearson_epsilon(0, 1000, 0, 1000)
    assert 5.0 < eps < math.log(1000)
    assert clopper_pearson_epsilon(500, 1000, 500, 1000) == 0.0
    with pytest.raises(ValueError, match="trials"):
        clopper_pearson(1, 0)


def test_an_estimate_never_changes_a_conclusion():
    assert not audit_changes_conclusion(None, True)
    assert audit_changes_conclusion(0.95, True) and not audit_changes_conclusion(0.95, False)


def test_changes_conclusion_rule():
    assert not changes_conclusion(Weight(34.72, 35.02))  # 0.9 %: cosmetic (003's Hoeffding step)
    assert changes_conclusion(Weight(170.4, 180.0, rel=0.05))
    assert changes_conclusion(Weight(0.9, 1.1, compared_with=1.0))  # crosses the comparison
    assert not changes_conclusion(Weight(0.9, 0.95, compared_with=1.0))
    assert changes_conclusion(Weight(2.0, 1.0))


def test_scope_phrase():
    assert scope_phrase(3, 35, "calibrations") == "3 of 35 calibrations"
    with pytest.raises(ValueError):
        scope_phrase(4, 3, "x")


def test_count_by_status_is_one_count():
    rows = [
        {"status": "reproduced", "source": "printed"},
        {"status": "reproduced", "source": "consistency"},
        {"status": "fails-audit", "source": "audit"},
        {"status": "not-run", "source": "consistency"},
        {"status": "not-reproduced", "source": "printed"},
    ]
    c = count_by_status(rows)
    assert set(ALL_STATUSES) <= set(c) and c["reproduced"] == 1 and c["fails-audit"] == 1
    assert c["consistency"] == 1 and c["consistency-ok"] == 1 and c["not-run"] == 1
    text = count_phrase(c)
    assert "1 of 3 reproduced" in text and "claim fails the audit" in text
    with pytest.raises(ValueError, match="status"):
        count_by_status([{"status": "bogus"}])


def test_control_from_records():
    base = {
        "pipelines": "the trainer behind paper 003's MNIST grid",
        "seeds_done": 3,
        "reduced": False,
        "published_pct": 97.09,
        "published_spread_pct": 0.17,
        "mean_final_pct": 96.8,
        "std_final_pct": 0.1,
        "epsilon_training": 6.8,
        "their_epsilon": 6.86,
        "key": "opacus_mnist/eps6.86",
        "claim_key": "ref.c",
    }
    assert control_from_records([base], "paper 003's MNIST").holds
    assert control_from_records([{**base, "mean_final_pct": 90.0}], "paper 003's MNIST").holds is False
    assert control_from_records([{**base, "epsilon_training": 8.0}], "paper 003's MNIST").holds is False
    assert control_from_records([{**base, "seeds_done": 0}], "paper 003's MNIST") is None
    assert control_from_records([base], "paper 002") is None
    nonprivate = {**base, "their_epsilon": float("inf"), "epsilon_training": float("inf")}
    assert control_from_records([nonprivate], "paper 003's MNIST").holds is False
    said = control_from_records([nonprivate, {**base, "mean_final_pct": 90.0}], "paper 003's MNIST").what
    assert "vouches for no private result" in said and "does not hold" in said  # each row says why it does not count


def test_committed_profiles_never_contradict_each_other():
    """Issue 50: one verdict per claim -- no key is reproduced at one profile and not reproduced at the other, and a
    rule-decided claim that the paper profile's full-scale runs decide has the same status at the quick profile."""
    from pathlib import Path

    from dpcore.claims import read_claims_csv
    from dpcore.papers import all_specs

    root = Path(__file__).resolve().parents[1] / "figures"
    quick = {(r["paper"], r["key"]): r for r in read_claims_csv(root / "claims.csv")}
    paper = {(r["paper"], r["key"]): r for r in read_claims_csv(root / "paper" / "claims.csv")}
    ruled = {(s.paper, s.key) for s in all_specs() if s.rule is not None}
    clash = [
        k
        for k in set(quick) & set(paper)
        if {quick[k]["status"], paper[k]["status"]} == {"reproduced", "not-reproduced"}
    ]
    assert not clash, f"reproduced at one profile, not reproduced at the other: {sorted(clash)}"
    differ = [
        k
        for k in ruled & set(quick) & set(paper)
        if paper[k]["status"] != "not-run" and quick[k]["status"] != paper[k]["status"]
    ]
    assert not differ, f"rule-decided at the paper profile, another status at the quick profile: {sorted(differ)}"
