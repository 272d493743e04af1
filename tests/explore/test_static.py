"""dpcore.explore.static: the explorers' grids for the site without a kernel (issue 54) hold the numbers of the
explorers' own ``compute`` and of the library functions behind them, in the order the page's script reads them."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import math

import pytest

from dpcore.accounting import dpsgd_epsilon
from dpcore.explore import TOPICS, dpsgd
from dpcore.explore.static import MAX_POINTS, Axis, StaticGrid, grid_data, number, point_index


def _all_grids() -> list[tuple[str, StaticGrid]]:
    out = []
    for topic, modules in TOPICS.items():
        for name in modules:
            out += [(f"{topic}:{i}", g) for i, g in enumerate(importlib.import_module(name).STATIC_GRIDS)]
    return out


def _value(v: float | str) -> float:
    return float(v)  # "nan" / "inf" / "-inf" parse too


def test_every_explorer_has_a_bounded_grid_over_its_own_controls():
    grids = _all_grids()
    assert {name.split(":")[0] for name, _ in grids} == set(TOPICS)
    for name, grid in grids:
        params = set(inspect.signature(grid.compute).parameters)
        required = {p for p, v in inspect.signature(grid.compute).parameters.items() if v.default is inspect._empty}
        moving = {a.name for a in grid.axes}
        assert moving <= params and set(grid.fixed) <= params, name
        assert required <= moving | set(grid.fixed), f"{name}: compute needs {required - moving - set(grid.fixed)}"
        assert 1 < grid.size <= MAX_POINTS, name


@pytest.mark.parametrize("name", [n for n, _ in _all_grids()])
def test_the_default_point_is_the_explorers_own_view(name):
    """The grid's first view (its axes at their defaults) is ``compute`` at those values, number for number."""
    grid = dict(_all_grids())[name]
    at = {a.name: a.values[a.default] for a in grid.axes}
    single = dataclasses.replace(grid, axes=tuple(Axis(a.name, a.label, (a.values[a.default],)) for a in grid.axes))
    point = grid_data(single)["points"][0]
    view = grid.compute(**grid.fixed, **at)
    assert set(point["values"]) == set(view.values)
    for key, value in view.values.items():
        assert _value(point["values"][key]) == pytest.approx(float(value), rel=1e-6, nan_ok=True), key
    assert set(point["series"]) == set(grid.series(view))


def test_dpsgd_grid_points_are_the_librarys_epsilons():
    """A small σ × b × epochs grid: the order is row-major (last axis fastest), and each point's ε at T is
    ``dpsgd_epsilon`` of the library at the trainer's step count, for PLD and RDP."""
    base = dpsgd.STATIC_GRIDS[0]
    grid = dataclasses.replace(
        base,
        axes=(Axis("sigma", "σ", (1.1, 2.0)), Axis("batch_size", "b", (256,)), Axis("epochs", "epochs", (1, 5))),
    )
    data = grid_data(grid)
    assert len(data["points"]) == 4 and data["axes"][0]["values"] == [1.1, 2.0]
    n, delta = base.fixed["dataset_size"], base.fixed["delta"]
    for sigma in (1.1, 2.0):
        for epochs in (1, 5):
            point = data["points"][point_index(grid, sigma=sigma, batch_size=256, epochs=epochs)]
            steps = int(point["values"]["steps"])
            assert steps == epochs * round(n / 256)
            for method in ("pld", "rdp"):
                library = dpsgd_epsilon(sigma, sample_rate=256 / n, steps=steps, delta=delta, method=method)
                assert point["values"][f"eps[{method}]"] == pytest.approx(float(library), rel=1e-6), (sigma, epochs)
            pld_x, pld_y = point["series"]["pld (" + dpsgd.acc.method_label("pld") + ")"]
            assert data["xs"][pld_x][-1] == steps and pld_y[-1] == pytest.approx(point["values"]["eps[pld]"], rel=1e-4)


def test_paper_explorer_grid_points_are_the_paper_functions_values():
    """One point off the defaults of the ModelMix, shuffling and contraction grids against the paper functions."""
    from dpcore.papers.p002_modelmix import explore as mm
    from dpcore.papers.p002_modelmix.fig3 import FIG3, accountant_range, amplification_curves
    from dpcore.papers.p003_shuffling import bounds as sh
    from dpcore.papers.p003_shuffling import explore as shx
    from dpcore.papers.p004_contraction import explore as co
    from dpcore.papers.p004_contraction.baselines import baseline_deltas

    def one(grid: StaticGrid, **at):
        single = dataclasses.replace(grid, axes=tuple(Axis(a.name, a.label, (at[a.name],)) for a in grid.axes))
        return grid_data(single)["points"][0]["values"]

    g = mm.STATIC_GRIDS[0]
    values = one(g, tau=0.6, sigma=1.0, q=0.01)
    steps = g.fixed["steps"]
    with accountant_range(tau=0.6, sigma=1.0, q=0.01):
        kw = dict(n=FIG3["n"], batch_size=0.01 * FIG3["n"], noise_multiplier=1.0, clip=FIG3["clip"], tau=0.6)
        curves = amplification_curves([steps], delta=FIG3["delta"], linf_blocks=(None, 25), **kw)
    assert values["eps[regular]"] == pytest.approx(float(curves["regular DP-SGD"][-1]), rel=1e-6)
    assert values["eps[modelmix]"] == pytest.approx(float(curves["ModelMix"][-1]), rel=1e-6)

    g = shx.STATIC_GRIDS[0]
    values = one(g, sampling="fixed", clipping="individual", sigma=3.0, E=20)
    a1 = sh.mixture_tradeoff("fixed", sigma=3.0, E=20, N=shx.N, s=1, m=g.fixed["batch"], g=1)
    assert values["eps[A1]"] == pytest.approx(float(a1.epsilon(g.fixed["delta"])), rel=1e-6)

    g = co.STATIC_GRIDS[0]
    values = one(g, epsilon=2.0, sigma=1.0, batch_size=10)
    d = g.fixed
    library = baseline_deltas(2.0, n=10 * d["rounds"], batch_size=10, eta=d["eta"], sigma=1.0, radius=d["radius"])
    for key in ("B0", "B1", "B2", "B3a", "B3b"):
        assert values[f"delta[{key}]"] == pytest.approx(float(library[key][0]), rel=1e-6), key


def test_grid_data_is_plain_json_and_refusals_are_kept():
    def compute(*, x: float, y: str) -> object:
        from dpcore.explore.widgets import View

        if x < 0:
            raise ValueError("x must be >= 0")
        return View(values={"v": x, "inf": math.inf}, labels={"v": f"v ({y})"}, data={"line": ([0, 1], [x, math.nan])})

    grid = StaticGrid("t", compute, (Axis("x", "x", (-1.0, 2.0), 1), Axis("y", "y", ("a", "b"))), {},
                      lambda view: view.data, "x", "y")  # fmt: skip
    data = grid_data(grid)
    json.dumps(data, allow_nan=False)  # no NaN or Infinity literal
    assert data["points"][0] == {"error": "x must be >= 0"} and data["points"][1] == {"error": "x must be >= 0"}
    p = data["points"][point_index(grid, x=2.0, y="b")]
    assert p["values"] == {"v": 2.0, "inf": "inf"} and data["strings"][p["labels"]["v"]] == "v (b)"
    assert data["xs"][p["series"]["line"][0]] == [0.0, 1.0] and p["series"]["line"][1] == [2.0, "nan"]
    assert number(1 / 3) == 0.3333333 and number(-math.inf) == "-inf"
    assert number(64) == 64 and isinstance(number(64), int) and isinstance(number(64.0), float)


def test_grids_are_validated():
    ok = dict(compute=dpsgd.compute, fixed={}, series=dpsgd.static_series, x_label="x", y_label="y")
    with pytest.raises(ValueError, match="values"):
        Axis("a", "a", ())
    with pytest.raises(ValueError, match="default"):
        Axis("a", "a", (1, 2), default=2)
    with pytest.raises(ValueError, match="axes"):
        StaticGrid("t", axes=(Axis("a", "a", (1,)), Axis("a", "a", (2,))), **ok)
    with pytest.raises(ValueError, match="fixed"):
        StaticGrid("t", axes=(Axis("a", "a", (1,)),), **{**ok, "fixed": {"a": 1}})
    with pytest.raises(ValueError, match="at most"):
        StaticGrid("t", axes=(Axis("a", "a", tuple(range(30))), Axis("b", "b", tuple(range(30)))), **ok)
    grid = StaticGrid("t", axes=(Axis("a", "a", (1, 2)),), **ok)
    with pytest.raises(ValueError, match="a must be one of"):
        point_index(grid, a=3)
    with pytest.raises(ValueError, match="axis 'a'"):
        point_index(grid)
