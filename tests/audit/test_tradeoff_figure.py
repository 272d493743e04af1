"""dpcore.papers.audit.tight_suite.dpsgd_tradeoff / tradeoff_figure: the all-iterates audit's empirical trade-off
curve lies within its bands of the accountant's curve (DP-SGD is correct), and a curve from a leakier mechanism is
flagged against it."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.audit.gdp import empirical_tradeoff, tradeoff_violation
from dpcore.papers.audit import tight_suite as ts


@pytest.fixture(scope="module")
def audit():
    return ts.dpsgd_tradeoff(runs=1000, points=60)


def test_dpsgd_curve_is_consistent_with_the_accountant(audit):
    assert not audit.violated
    c = audit.curve
    # the accountant's f at the empirical FPR lies within the FNR band nearly everywhere (tight audit, tight accountant)
    f = audit.accountant(c.fpr)
    assert np.mean((f >= c.fnr_lower - 1e-9) & (f <= c.fnr_upper + 1e-9)) > 0.9
    table = audit.table()
    assert list(table.columns[:3]) == ["threshold", "fpr", "fnr"] and len(table) == c.fpr.size


def test_a_leakier_mechanism_is_flagged_against_the_accountant(audit):
    rng = np.random.default_rng(0)
    leaky = empirical_tradeoff(rng.normal(3.0, 1.0, 2000), rng.normal(0.0, 1.0, 2000), points=60)  # μ = 3 ≫ the run's
    assert tradeoff_violation(leaky, audit.accountant)


def test_figure_and_refusals(audit):
    fig = ts.tradeoff_figure(audit, title="t")
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="audit"):
        ts.tradeoff_figure(audit.curve)
    with pytest.raises(ValueError, match="runs"):
        ts.dpsgd_tradeoff(runs=10)
    with pytest.raises(ValueError, match="epsilon_grid"):
        ts.dpsgd_tradeoff(runs=1000, epsilon_grid=np.array([1.0]))


def test_tight_suite_reports_the_median_seed_with_its_spread_and_what_holds_it_back():
    """run_tight_suite: the row is the median seed's audit (one draw), the spread and the share of seeds meeting the
    goal beside it, and a note with the statistical factor; the block is the benchmark's (TIGHT_BLOCK); an even number
    of seeds (no single median draw) and an unknown job are refused."""
    df = ts.run_tight_suite(runs=500, one_run_canaries=1000, one_run_guesses=100, delta=1e-3, delta_small=1e-5,
                            seeds=(0, 1, 2), jobs=("gdp_all", "gdp_last"))  # fmt: skip
    per_seed = ts.tight_seed_rows(runs=500, one_run_canaries=1000, one_run_guesses=100, delta=1e-3,
                                  delta_small=1e-5, seed=int(df.seed[0]), jobs=("gdp_all",))  # fmt: skip
    assert list(df.label) == ["gdp_all", "gdp_last"] and (df.seeds == 3).all()
    row = df.iloc[0]
    assert row.ratio == pytest.approx(per_seed[0]["ratio"])  # the median seed's own draw
    assert row.ratio_min <= row.ratio <= row.ratio_max and 0 <= row.share_goal_met <= 1
    assert "μ_lb/μ̂" in row.note and f"seed {int(row.seed)} is the median of 3 seeds" in row.note
    assert "ceiling of any last-iterate audit" in df.note[1] and 0.95 < df.ceiling[1] < 1.0
    assert ts.tight_settings()[0].block == ts.TIGHT_BLOCK
    mixed = ts.tight_settings(500)[1]
    assert mixed.modelmix_tau_ratio * mixed.sample_rate * mixed.block == pytest.approx(ts.MODELMIX_TAU_D)
    with pytest.raises(ValueError, match="seeds"):
        ts.run_tight_suite(runs=500, one_run_canaries=1000, one_run_guesses=100, delta=1e-3, delta_small=1e-5,
                           seeds=(0, 1), jobs=("gdp_all",))  # fmt: skip
    with pytest.raises(ValueError, match="jobs"):
        ts.tight_seed_rows(runs=500, one_run_canaries=1000, one_run_guesses=100, delta=1e-3, delta_small=1e-5,
                           jobs=("gdp_first",))  # fmt: skip
