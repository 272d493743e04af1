"""The audit notebook's package: claims specs and the figure (the audits themselves: test_audit_dirac.py)."""

import matplotlib
import pandas as pd
import pytest

from dpcore.audit import BROKEN
from dpcore.papers import all_specs
from dpcore.papers.audit.claims import BROKEN_KEYS, CLAIMS, CORRECT_KEYS
from dpcore.papers.audit.suite import run_suite, suite_figure

matplotlib.use("Agg")


def test_claims_cover_every_row_and_are_derived_true():
    assert set(BROKEN_KEYS) == set(BROKEN)
    assert set(CLAIMS) == set(CORRECT_KEYS.values()) | set(BROKEN_KEYS.values())
    assert all(s.paper == "ref" and s.source == "derived" and s.value is True for s in CLAIMS.values())
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
        ]
    )  # fmt: skip
    fig = suite_figure(table, title="t")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("FLAGGED" in t for t in texts) and any(t == "1.40" for t in texts)
    with pytest.raises(ValueError, match="table"):
        suite_figure(table.iloc[0:0])
    with pytest.raises(ValueError, match="runs"):
        run_suite(runs=10, broken_runs=2000, one_run_canaries=100, one_run_guesses=10, delta=1e-3, delta_small=1e-5)
