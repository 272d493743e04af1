"""The audit notebook's package: claims specs and the figure (the audits themselves: tests/audit/test_dirac.py)."""

import matplotlib
import pandas as pd
import pytest

from dpcore.audit import BROKEN
from dpcore.papers import all_specs
from dpcore.papers.audit.claims import BROKEN_KEYS, CLAIMS, CORRECT_KEYS, REFERENCE_KEYS
from dpcore.papers.audit.suite import (
    SHUFFLE_SETTINGS,
    run_shuffled_suite,
    run_silo_audit,
    run_suite,
    shuffle_label,
    suite_figure,
)

matplotlib.use("Agg")


def test_claims_cover_every_row_and_are_derived_true():
    assert set(BROKEN_KEYS) == set(BROKEN)
    assert set(CLAIMS) == set(CORRECT_KEYS.values()) | set(BROKEN_KEYS.values()) | set(REFERENCE_KEYS.values())
    derived = [s for k, s in CLAIMS.items() if k not in REFERENCE_KEYS.values()]
    assert all(s.paper == "ref" and s.source == "derived" and s.value is True for s in derived)
    reference = CLAIMS[REFERENCE_KEYS["all"]]
    assert reference.source == "reference" and reference.value == 1.0 and "2101.04535" in reference.location
    assert {"bc_sh_a1", "bc_sh_a0", "mc_sh_a1", "mc_sh_a0", "isrl_silo"} <= set(CORRECT_KEYS)
    keys = {(s.paper, s.key) for s in all_specs()}
    assert {("ref", k) for k in CLAIMS} <= keys  # discovered, and unique among all packages


def test_suite_figure_and_validation():
    table = pd.DataFrame(
        [
            dict(label="all", kind="correct", mechanism="DP-SGD", delta=1e-3, threat_estimator="many-runs",
                 epsilon_lower=1.4, epsilon_point=2.0, epsilon_claimed=2.4, flagged=False),
            dict(label="noise-seed-reused", kind="broken", mechanism="BROKEN", delta=1e-3,
                 threat_estimator="many-runs", epsilon_lower=7.2, epsilon_point=float("inf"), epsilon_claimed=2.4,
                 flagged=True),
            dict(label="bc_sh_a0_heuristic", kind="heuristic", mechanism="BC", delta=1e-3,
                 threat_estimator="many-runs", epsilon_lower=1.1, epsilon_point=2.3, epsilon_claimed=4.5,
                 flagged=False),
        ]
    )  # fmt: skip
    fig = suite_figure(table, title="t")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("FLAGGED" in t for t in texts) and any(t == "1.40" for t in texts)
    with pytest.raises(ValueError, match="table"):
        suite_figure(table.iloc[0:0])
    with pytest.raises(ValueError, match="runs"):
        run_suite(runs=10, broken_runs=2000, one_run_canaries=100, one_run_guesses=10, delta=1e-3, delta_small=1e-5)
    with pytest.raises(ValueError, match="runs"):
        run_shuffled_suite(runs=2, delta=1e-3)
    with pytest.raises(ValueError, match="accountant"):
        run_silo_audit(runs=100, accountant=None, delta=1e-3)


def test_shuffled_settings_are_batch_and_mixed_clipping():
    assert SHUFFLE_SETTINGS["bc_sh"].clipping == "batch" and SHUFFLE_SETTINGS["mc_sh"].clipping == "mixed"
    assert SHUFFLE_SETTINGS["mc_sh"].batch_size // SHUFFLE_SETTINGS["mc_sh"].group_size >= 2
    for prefix in SHUFFLE_SETTINGS:  # every proven comparison has its claim row; the heuristic has none
        assert {shuffle_label(prefix, "A_1"), shuffle_label(prefix, "A_0")} <= set(CORRECT_KEYS)
        assert shuffle_label(prefix, "A_0_heuristic") == f"{prefix}_a0_heuristic" not in CORRECT_KEYS
