"""Paper 004's notebook functions (dpcore.papers.p004_contraction.figures / plots) and its claim specifications."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from dpcore.claims import compute_status  # noqa: E402
from dpcore.papers.p004_contraction import figures as F  # noqa: E402
from dpcore.papers.p004_contraction import plots as P  # noqa: E402
from dpcore.papers.p004_contraction.claims import CLAIMS, SPECS  # noqa: E402

S = F.Setting()
QS = (0.1, 0.2, 0.3)
EPS = np.linspace(0.0, 3.0, 31)


@pytest.fixture(scope="module")
def panels():
    return F.baseline_panels(np.linspace(0.0, 3.0, 13), QS, S, grid=501)


def test_setting_validates_and_batches():
    assert S.kw == {"eta": 0.5, "sigma": 1.5, "lipschitz": 1.0, "radius": 1.0}
    assert [S.batch(q) for q in QS] == [10, 20, 30]
    with pytest.raises(ValueError, match="sigma"):
        F.Setting(sigma=0.0)
    with pytest.raises(ValueError, match="q must be"):
        S.batch(1.5)


def test_fig2_values_ordering_and_parallel_bound():
    curves = F.fig2_curves(EPS, QS, S)
    assert list(curves.columns) == ["epsilon", "q=0.1", "q=0.2", "q=0.3"]
    assert [F.delta_at(1.0, q, S) for q in QS] == pytest.approx([2.0211e-3, 5.0375e-5, 1.7561e-6], rel=1e-4)
    assert F.decreasing_in_q(curves, QS)
    assert F.below_parallel_composition(curves, QS, S)
    swapped = curves.rename(columns={"q=0.1": "q=0.3", "q=0.3": "q=0.1"})
    assert not F.decreasing_in_q(swapped, QS)
    raised = curves.assign(**{"q=0.2": curves["q=0.2"] * 1.01})
    assert not F.below_parallel_composition(raised, QS, S)


def test_epsilon_at_delta_table():
    table = F.fig2_epsilon_at_delta(QS, S, deltas=(1e-3, 1e-5))
    assert table["q=0.1"].tolist() == pytest.approx([1.1029, 1.6485], abs=1e-4)
    assert table["q=0.3"].tolist() == pytest.approx([0.5736, 0.8997], abs=1e-4)


def test_contraction_factor_is_one_at_fig2_and_small_for_small_rho():
    table = F.contraction_factor_table(QS, S)
    assert table["F at eps=0"].iloc[0] == pytest.approx(0.99988829, abs=1e-8)
    assert table[["F at eps=0", "F at eps=1"]].to_numpy().min() > 0.9998
    assert np.all(table[["F at eps=0", "F at eps=1"]].to_numpy() <= 1.0 + 1e-12)
    small = F.contraction_factor(1.0, n=100, batch_size=10, eta=0.5, sigma=1.5, radius=0.1)
    assert 0.1 < small < 0.2  # ρ = 0.1: δ(1) = 2.187e-4 against θ_1(a) = 2.0215e-3, F ≈ 0.108
    with pytest.raises(ValueError, match="factor"):
        F.radius_where_factor_is(1.2, S)


def test_proof_typo_reverses_the_ordering():
    typo = F.proof_typo_deltas(QS, S)
    assert [typo[q] for q in QS] == pytest.approx([0.965, 0.997, 0.9997], abs=1e-3)
    assert F.ordering_text(typo) == "q=0.1 < q=0.2 < q=0.3"
    assert F.ordering_text({q: F.delta_at(0.0, q, S) for q in QS}) == "q=0.3 < q=0.2 < q=0.1"
    with pytest.raises(ValueError):
        F.ordering_text({})


def test_ragged_batchings_for_q03():
    table = F.ragged_batchings(S)
    assert table.loc["[30, 30, 30, 10]", "delta(1)"] == pytest.approx(2.0373e-4, rel=1e-4)
    assert table.loc["[34, 33, 33]", "delta(1)"] == pytest.approx(6.0080e-7, rel=1e-4)
    assert table.loc["[10, 30, 30, 30]", "delta(1)"] == pytest.approx(
        table.loc["[30, 30, 30, 10]", "delta(1)"], rel=1e-4
    )


def test_baselines_instance_and_footnote1(panels):
    curves, table = panels
    assert F.instance_below_valid_bounds(curves)
    assert F.rdp_conversion_is_weaker(table)
    assert curves.loc[curves["q"] == 0.3, "exact 1-D instance"].isna().all()  # T = 10/3: no instance
    broken = curves.copy()
    broken["exact 1-D instance"] = broken["exact 1-D instance"] + 1.0
    assert not F.instance_below_valid_bounds(broken)
    flipped = table.copy()
    flipped.loc[flipped["method"] == "B2", "eps@1e-05"] = 0.0
    assert not F.rdp_conversion_is_weaker(flipped)
    with pytest.raises(ValueError, match="B1 and B2"):
        F.rdp_conversion_is_weaker(table[table["method"] != "B1"])


def test_instance_below_bound_and_its_failure():
    frame = F.instance_vs_bound(np.linspace(0.0, 1.0, 6), (1.0, 0.1), S, grid=501)
    assert F.instance_below_bound(frame)
    assert frame["exact instance, rho=1"].iloc[0] < frame["Theorem 2, rho=1"].iloc[0] / 2
    bad = frame.assign(**{"exact instance, rho=0.1": frame["Theorem 2, rho=0.1"] * 1.5 + 1e-9})
    assert not F.instance_below_bound(bad)
    with pytest.raises(ValueError, match="exact instance"):
        F.instance_below_bound(frame[["epsilon"]])


def test_sweeps_and_crossovers():
    rounds = F.rounds_sweep((1.0, 0.1), S, max_log10_rounds=3)
    assert rounds["rounds T"].iloc[0] == 1 and rounds["rounds T"].iloc[-1] == 1000
    small = rounds["Theorem 2, rho=0.1"].to_numpy()
    assert small[-1] * 1000 == pytest.approx(2.1870e-3, rel=1e-3)  # clean 1/T decay at ρ = 0.1
    assert rounds["Theorem 2, rho=1"].iloc[-1] == pytest.approx(1.9810e-3, rel=1e-3)
    radii = F.radius_sweep(S)
    assert np.all(np.diff(radii["Theorem 2 (convex)"]) >= -1e-15)  # δ grows with ρ
    marks = F.radius_crossovers(S)
    assert marks["Thm 2 < 0.99 × B1"] == pytest.approx(0.759, abs=0.01)
    assert marks["Thm 2 < PABI"] == pytest.approx(0.299, abs=0.01)
    sweep = F.batch_sweep(S, sizes=(1, 10, 100))
    assert sweep["delta(1), Theorem 2"].tolist() == pytest.approx([8.8195e-3, 2.0211e-3, 9.0269e-16], rel=1e-3)


def test_corollaries():
    table = F.corollary_table([0.0, 1.0], S)
    assert np.allclose(table.loc["Corollary 3, sum form"], table.loc["Corollary 3, eq. (12)"], rtol=1e-9)
    assert table.loc["Corollary 3, sum form", "delta(1)"] == pytest.approx(1.112e-3, rel=1e-3)
    printed, correct = F.corollary1_contraction_args(
        round_index=3, batch_size=10, strong_convexity=0.05, sigma=1.5, radius=0.05
    )
    assert printed == pytest.approx(2 * 0.05 * math.sqrt(0.05 * 10 * 3) / 1.5)
    assert correct == pytest.approx(2 * 0.05 * 0.05 * 3 * math.sqrt(10) / 1.5)
    with pytest.raises(ValueError, match="round_index"):
        F.corollary1_contraction_args(round_index=0, batch_size=10, strong_convexity=0.05, sigma=1.5, radius=0.05)


def test_lemma1_against_pld():
    assert F.lemma1_matches_pld()
    assert not F.lemma1_matches_pld(rtol=0.0, epsilons=(2.0,))  # the PLD grid is not bit-exact


def test_poisson_cross_checks_skip_ragged_rates():
    table = F.poisson_cross_checks(QS, S)
    assert table["q"].tolist() == [0.1, 0.2]
    assert table["B3b tight PLD (Poisson, replace-one)"].iloc[0] == pytest.approx(0.4683, abs=2e-3)


def test_claims_are_what_the_functions_give():
    """Every spec against our value: no row may come out 'differs'; the errata are needed (not reproduced)."""
    curves = F.fig2_curves(EPS, QS, S)
    ours = {
        "lemma1.gaussian_hockey_stick": F.lemma1_matches_pld(),
        "fig2.decreasing_in_q": F.decreasing_in_q(curves, QS),
        "thm2.below_parallel_composition": F.below_parallel_composition(curves, QS, S),
        **{f"fig2.delta_eps1.q{q:g}": F.delta_at(1.0, q, S) for q in QS},
        "thm2.proof_last_display.ordering": F.ordering_text(F.proof_typo_deltas(QS, S)),
        "cor1.b_j.j3": F.corollary1_contraction_args(
            round_index=3, batch_size=10, strong_convexity=0.05, sigma=1.5, radius=0.05
        )[1],
    }
    for key, value in ours.items():
        expected = "erratum" if CLAIMS[key].explanation is not None else "reproduced"  # typos: no training
        assert compute_status(CLAIMS[key], value) == expected, key
    assert {s.key for s in SPECS if s.explanation is not None} == {"thm2.proof_last_display.ordering", "cor1.b_j.j3"}
    assert compute_status(CLAIMS["fig2.delta_eps1.q0.1"], 2.1e-3) == "differs"
    assert compute_status(CLAIMS["thm2.proof_last_display.ordering"], "q=0.2 < q=0.1 < q=0.3") == "differs"
    assert {s.paper for s in SPECS} == {"004"}
    assert {s.source for s in SPECS} <= {"printed", "derived", "consistency"}  # the paper prints no numbers
    assert {s.key for s in SPECS if s.source == "consistency"} == {f"fig2.delta_eps1.q{q:g}" for q in QS}
    assert all(not isinstance(s.value, float) for s in SPECS if s.source == "printed")


def test_plots_draw(panels):
    curves, _ = panels
    fig = P.fig2(F.fig2_curves(EPS, QS, S), "Fig. 2")
    assert len(fig.axes[0].lines) == 3
    fig = P.baselines_figure(curves, QS, 100)
    assert len(fig.axes) == 3 and len(fig.legends) == 1
    assert "relative gap" in fig.axes[0].get_title()
    rounds = F.rounds_sweep((1.0,), S, max_log10_rounds=2)
    fig = P.sweeps_figure(rounds, F.radius_sweep(S, radii=[0.1, 1.0]), 1.0, m=10, n=100, marks={"x": 0.5})
    assert len(fig.axes) == 2 and len(fig.axes[1].texts) == 2
    fig = P.instance_figure(F.instance_vs_bound([0.0, 0.5], (1.0,), S, grid=101), "t")
    assert len(fig.axes[0].lines) == 2
    with pytest.raises(ValueError):
        P.fig2(pd.DataFrame({"epsilon": [0.0]}), "t")
    with pytest.raises(ValueError, match="no rows"):
        P.baselines_figure(curves, (0.5,), 100)
