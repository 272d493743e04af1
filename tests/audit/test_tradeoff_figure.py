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
