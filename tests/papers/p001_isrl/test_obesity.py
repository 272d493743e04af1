"""Fig. 6 of Lowy & Razaviyayn (ICLR 2023): the zero-model level, the noise-dominated ε, the pinned errata."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dpcore.federated import datasets as fd  # noqa: E402
from dpcore.papers.p001_isrl import analysis, figures, panels  # noqa: E402
from dpcore.papers.p001_isrl import experiments as fe  # noqa: E402


def _result(mb, local, epsilons=(0.5, 3.0, 9.0), m=3) -> fe.PanelResult:
    rows = []
    for label, values in (("Noisy MB SGD", mb), ("Noisy Local SGD", local)):
        rows += [dict(curve=label, epsilon=e, mean=v, halfwidth=0.01) for e, v in zip(epsilons, values, strict=True)]
    rows += [dict(curve="MB SGD", epsilon=math.inf, mean=0.5, halfwidth=0.0),
             dict(curve="Local SGD", epsilon=math.inf, mean=0.45, halfwidth=0.0)]
    panel = fe.Panel(silos_per_round=m, rounds=5, epsilons=tuple(epsilons), mb_stepsizes=(0.1,),
                     local_stepsizes=(0.1,), lipschitz=1.0)
    return fe.PanelResult(panel, pd.DataFrame(), pd.DataFrame(rows), {}, np.full((1, 3), 7))


def test_zero_model_error_is_one_minus_the_share_of_class_zero():
    from dpcore import data

    federation = fd.obesity_by_class(data.load_obesity(), trials=2, seed=0)
    ours = analysis.zero_model_error(federation)
    shares = []
    for t in range(federation.num_trials):
        _, y = federation.test(t)
        shares.append(np.mean(np.asarray(y) == 0))
    assert ours == pytest.approx(1 - np.mean(shares), abs=1e-12)
    assert 0.8 < ours < 0.95  # seven classes: about 6/7


def test_noise_dominated_flags_a_curve_at_the_zero_level():
    r = _result([0.84, 0.70, 0.60], [0.86, 0.80, 0.55])
    assert analysis.noise_dominated(r, 0.88) == [0.5]
    assert analysis.noise_dominated(r, 0.88, margin=0.3) == [0.5, 3.0, 9.0]  # MB's 0.60 is 0.28 away
    assert analysis.noise_dominated(r, 0.88, margin=0.2) == [0.5, 3.0]
    assert analysis.noise_dominated(_result([0.84, 0.5, 0.4], [0.78, 0.6, 0.5]), 0.88) == [0.5]  # MB alone
    assert analysis.noise_dominated(_result([0.6, 0.5, 0.4], [0.7, 0.6, 0.5]), 0.88) == []
    with pytest.raises(ValueError, match="zero_error"):
        analysis.noise_dominated(r, -1.0)
    with pytest.raises(ValueError, match="margin"):
        analysis.noise_dominated(r, 0.88, margin=0.0)


def test_obesity_claim_notes_name_the_noise_dominated_cell():
    r = _result([0.84, 0.70, 0.60], [0.86, 0.80, 0.55])
    authors = pd.DataFrame({"M": 3, "epsilon": [0.5, 3.0, 9.0], "gain_vs_isrl_local_sgd": [0.2, 0.25, 0.1]})
    claims = analysis.obesity_claims({3: r}, authors, 0.88)
    assert "noise-dominated" in claims["fig6.M=3.gain.eps=0.5"][1]
    assert claims["fig6.M=3.gain.eps=3"][1] == ""
    assert "at ε = 0.5" in claims["fig6.M=3.mb_beats_local.all_eps"][1]
    assert "noise-dominated" not in analysis.obesity_claims({3: r}, authors)["fig6.M=3.gain.eps=0.5"][1]


def test_both_algorithms_get_the_same_obesity_grid():
    mb, local = panels.obesity_grids(8)
    assert mb == local and min(mb) == pytest.approx(math.exp(-12)) and max(mb) == pytest.approx(math.exp(-1))
    panel = panels.obesity_panel(3, rounds=100, epsilons=[0.5], grid_points=8, reps=1, lipschitz=20.0)
    assert panel.mb_stepsizes == panel.local_stepsizes


def test_panels_figure_draws_the_reference_line():
    r = _result([0.84, 0.70, 0.60], [0.86, 0.80, 0.55])
    fig = figures.panels_figure({"a": r}, ylabel="error", suptitle="t", reference=(0.88, "zero model"))
    lines = [line for line in fig.axes[0].get_lines() if line.get_label() == "zero model"]
    assert len(lines) == 1 and np.allclose(lines[0].get_ydata(), 0.88)
    with pytest.raises(ValueError, match="reference"):
        figures.panels_figure({"a": r}, ylabel="error", suptitle="t", reference=(math.nan, "x"))
