"""Paper 003: the claim specifications, the numbers the notebook checks, the trade-off axioms and the figures.

The claim values come from ``dpcore.papers.p003_shuffling.results`` (what the notebook calls); the statuses
are computed against ``claims.py`` exactly as the notebook does, so an erratum whose expected value drifts,
or a reproduced row that stops matching, fails here.
"""

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

from dpcore.accounting import fdp
from dpcore.claims import compute_status
from dpcore.papers.p003_shuffling import figures as figs
from dpcore.papers.p003_shuffling import results as res
from dpcore.papers.p003_shuffling import tables as stab
from dpcore.papers.p003_shuffling.claims import FDP_CLAIMS as CLAIMS
from dpcore.papers.p003_shuffling.claims import FDP_SPECS as SPECS  # the fdp_tables notebook; Table 3: training_report

matplotlib.use("Agg")

ALPHA = res.log_alpha_grid(120)
EXPECTED = {  # status of every claim at the Appendix H settings
    "table1.row3.mu": "reproduced",
    "table1.row6.mu.g3": "reproduced",
    "table1.row4.contains": "reproduced",
    "table1.row5.contains": "reproduced",
    "table1.row6.contains": "reproduced",
    "table2.row3.contains": "reproduced",
    "table1.row2.lower_bound_holds": "erratum",
    "table1.row1.lower_bound_holds": "erratum",
    "lemmaE2.tail.below": "erratum",
    "lemmaE2.tail.above": "erratum",
    "appF3.q3": "erratum",
    "appF3.eps.g10": "erratum",
    "appG.h_below_one_over_sigma": "erratum",
    "appG.crossover": "erratum",
    "appG.sqrt_g_not_in_A0": "reproduced",
    "appD.factor": "erratum",
    "disclaimer.a1_weaker": "reproduced",
}


@pytest.fixture(scope="module")
def values():
    table3 = pd.concat([pd.DataFrame(stab.a0_a1_rows(sigma=2.0, E_values=[100], N=n, batches=res.BATCHES, pld=False))
                        for n in (res.N_MNIST, res.N_CIFAR)], ignore_index=True)
    out = {}
    out |= res.mu_claims()
    out |= res.containment_claims(res.containment_table(alpha=ALPHA))
    out |= res.hoeffding_claims(alpha=ALPHA)[0]
    out |= res.collision_claims(draws=2_000)[0]
    out |= res.disclaimer_claims(table3)
    out |= res.group_claims() | res.thinning_claims()
    return out


# --------------------------------------------------------------------------- claims
def test_specs_are_paper_003_and_cover_what_the_notebook_checks(values):
    assert {s.paper for s in SPECS} == {"003"}
    assert set(values) == set(CLAIMS) == set(EXPECTED)


def test_statuses(values):
    got = {key: compute_status(CLAIMS[key], value) for key, value in values.items()}
    assert got == EXPECTED


def test_errata_only_where_needed_and_printed_values_are_not_dpcore_numbers(values):
    for spec in SPECS:
        reproduced = compute_status(spec, values[spec.key]) == "reproduced"
        assert (spec.explanation is None) == reproduced, spec.key
    printed_numbers = {s.key: s.value for s in SPECS if s.source == "printed" and not isinstance(s.value, bool)}
    assert printed_numbers == {"appD.factor": 2.0}  # the only number the paper prints among these claims


def test_derived_values_follow_from_the_paper_formulas():
    assert CLAIMS["table1.row3.mu"].value == math.sqrt(100) / 2
    assert CLAIMS["table1.row6.mu.g3"].value == pytest.approx(math.sqrt(3 * 100) / 2, rel=1e-15)
    assert CLAIMS["lemmaE2.tail.below"].value == pytest.approx(math.exp(-100), rel=1e-15)
    assert CLAIMS["appF3.q3"].value == pytest.approx(math.comb(58, 3) / math.comb(60, 3), rel=1e-15)
    assert CLAIMS["appG.crossover"].value == pytest.approx((math.e + 0.1) * 60_000, rel=1e-15)


def test_a_wrong_value_is_differs_not_explained(values):
    assert compute_status(CLAIMS["appD.factor"], 1.6) == "differs"
    assert compute_status(CLAIMS["table1.row5.contains"], False) == "differs"
    assert compute_status(CLAIMS["appF3.eps.g10"], values["appF3.eps.g10"] * 1.01) == "differs"


# --------------------------------------------------------------------------- helpers
@pytest.mark.parametrize("mu", [0.0, 0.3, 1.0, 5.0, 12.0])
def test_gdp_equivalent_mu_inverts_gaussian(mu):
    assert res.gdp_equivalent_mu(fdp.Gaussian(mu), 1e-5) == pytest.approx(mu, abs=1e-9)


def test_gdp_equivalent_mu_rejects_bad_delta():
    with pytest.raises(ValueError, match="delta"):
        res.gdp_equivalent_mu(fdp.Gaussian(1.0), 0.0)


def test_tradeoff_axioms_accept_gaussians_and_catch_each_failure():
    assert all(res.tradeoff_axioms(fdp.Gaussian(1.5)).values())
    assert not res.tradeoff_axioms(lambda a: np.sqrt(1 - np.asarray(a)))["below_diagonal"]
    assert not res.tradeoff_axioms(lambda a: 0.5 * (1 - a) + 0.3 * np.sin(6 * a) ** 2 * (1 - a))["convex"]
    jump = res.tradeoff_axioms(lambda a: np.where(np.asarray(a) == 0, 1.0, 0.5 * (1 - np.asarray(a))))
    assert jump["convex"] and jump["nonincreasing"] and jump["below_diagonal"] and not jump["continuous"]
    with pytest.raises(ValueError, match="alpha"):
        res.tradeoff_axioms(fdp.Gaussian(1.0), np.array([0.5, 0.2, 0.1]))


@pytest.fixture(scope="module")
def panels():
    return res.row_panels(E=1, batch=256, pld_grid=1e-3)


def test_every_plotted_curve_is_a_tradeoff_function(panels):
    """The notebook's soundness assert: convex, continuous, non-increasing, 0 <= f(α) <= 1 − α."""
    table = res.axiom_table(panels)
    assert len(table) == sum(len(c) for c in panels.values())
    bad = table[~table[list(res.AXIOMS)].all(axis=1)]
    assert bad.empty, bad


def test_containment_claims_need_the_rows():
    with pytest.raises(ValueError, match="row 4"):
        res.containment_claims(pd.DataFrame({"table": [1], "row": [5], "lower_violations": [0],
                                             "upper_violations": [0]}))


# --------------------------------------------------------------------------- figures
def test_coincidence_text_names_hidden_curves():
    a = np.linspace(0, 1, 11)
    text = figs.coincidence_text(a, {"exact A_1": 1 - a**0.5, "table lower": 1 - a**0.5, "table upper": 1 - a})
    assert text == "exact A_1 = table lower\ntable upper = 1 − α"
    assert figs.coincidence_text(a, {"exact A_1": 1 - a**0.5, "table upper": 1 - a**2}) == ""


def test_tradeoff_panels_zoom_the_a0_rows(panels):
    fig, data = figs.tradeoff_panels(panels, res.PANEL_ALPHA, suptitle="t")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == len(panels)
    by_title = {ax.get_title(): ax for ax in axes}
    for table, row, _g in panels:
        ax = next(a for t, a in by_title.items() if t.startswith(f"Table {table} row {row} "))
        top = ax.get_ylim()[1]
        if (table, row) in figs.GAP_ROWS:
            assert "gap" in ax.get_title() and top < 0.1  # zoomed: the A_0 curves fill the panel
        else:
            assert top == 1.0
    assert "alpha" in data and data.shape[0] == res.PANEL_ALPHA.size
    matplotlib.pyplot.close(fig)


def test_tradeoff_panels_reject_unknown_curve_names():
    with pytest.raises(ValueError, match="curve names"):
        figs.tradeoff_panels({(1, 3, 1): {"mystery": fdp.Gaussian(1.0)}}, res.PANEL_ALPHA)


def test_report_figure_keeps_the_suptitle(tmp_path):
    """report.figure crops tightly; the figure title of the per-row panels must stay in the saved image."""
    from PIL import Image

    from dpcore import plots
    from dpcore.report import Report

    report = Report("003", "t", figures_dir=tmp_path)
    darkest = {}
    for title in ("", "Trade-off bounds"):
        fig, axes = plots.new_axes(1, 1, width=6.0, height=3.0)
        axes[0, 0].plot([0, 1], [1, 0])
        if title:
            fig.suptitle(title)
        png = np.asarray(Image.open(report.figure(fig, f"t{len(title)}")["png"]).convert("L"), dtype=float)
        top_middle = png[:20, int(0.4 * png.shape[1]): int(0.6 * png.shape[1])]
        darkest[title] = top_middle.min()
        matplotlib.pyplot.close(fig)
    assert darkest[""] > 150 and darkest["Trade-off bounds"] < 100  # the title's dark glyphs are at the top
