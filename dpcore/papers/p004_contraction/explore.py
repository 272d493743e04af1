"""Explorer 4 (paper 004, Asoodeh et al., "DP federated learning: an information-theoretic perspective", ISIT 2021):
last-iterate δ(ε) against the rounds T and the projection radius ρ, next to the composition baselines.

Theorem 2 (:func:`dpcore.papers.p004_contraction.contraction.last_iterate_delta`, closed form with constant η and
σ): releasing only the last iterate, each later round contracts the E_ε divergence by θ_ε(b), b = 2ρ√m/(ησ)
(Lemma 2, Theorem 1).  Baselines (:func:`dpcore.papers.p004_contraction.baselines.baseline_deltas`): B1 parallel
composition (every iterate released, disjoint batches), B2 Gaussian RDP, B3a/B3b Poisson-subsampled RDP (add/remove,
replace-one), B4 privacy amplification by iteration (PABI).  n = m·T users, one pass.  Closed forms: milliseconds.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcore.explore.static import Axis, StaticGrid
from dpcore.explore.widgets import Explorer, View, finish_axes, plain_log_axes
from dpcore.papers.p004_contraction import baselines as B
from dpcore.papers.p004_contraction import contraction as C
from dpcore.validation import check_nonnegative, check_positive, check_positive_int

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "DEFAULTS", "BASELINE_LABELS", "PABI_MAX_USERS", "PABI_POINTS", "compute", "draw", "build", "static_series",
    "STATIC_GRIDS",
]  # fmt: skip

#: Fig. 2's caption (η = 0.5, L = 1, ρ = 1, σ = 1.5) with m = 10 users per round.
DEFAULTS: dict[str, Any] = dict(epsilon=1.0, rounds=100, radius=1.0, sigma=1.5, batch_size=10, eta=0.5)
BASELINE_LABELS = {
    "B0": "Theorem 2, last iterate (contraction)",
    "B1": "B1 parallel composition (all iterates)",
    "B2": "B2 Gaussian RDP",
    "B3a": "B3a Poisson RDP, add/remove",
    "B3b": "B3b Poisson RDP, replace-one",
    "B4": "B4 PABI",
}
PABI_MAX_USERS = 5_000  # PABI costs O(n) (0.4 s at n = 10,000): computed up to n = m·T = this only, cached
PABI_POINTS = 8  # PABI's curve: this many rounds of the grid
MAX_ROUNDS = B.MAX_ROUNDS


@functools.lru_cache(maxsize=512)
def _pabi(epsilon: float, rounds: int, m: int, sigma: float) -> float:
    """B4 (PABI) at n = m·T, or nan beyond :data:`PABI_MAX_USERS` users (its cost grows linearly with n)."""
    if m * rounds > PABI_MAX_USERS:
        return math.nan
    return float(np.atleast_1d(B.pabi_delta(epsilon, n=m * rounds, batch_size=m, sigma=sigma))[0])


@functools.lru_cache(maxsize=64)
def _poisson_rdp(n: int, relation: str, m: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """B3's RDP curve (:func:`~dpcore.papers.p004_contraction.baselines.poisson_rdp`), which does not depend on ε:
    cached, so that moving ε does not recompute it (about 0.25 s each)."""
    return B.poisson_rdp(n=n, relation=relation, batch_size=m, sigma=sigma)


def compute(*, epsilon: float, rounds: int, radius: float, sigma: float, batch_size: int, eta: float) -> View:
    """δ at ``epsilon`` after ``rounds`` rounds of m = ``batch_size`` users (n = mT) for Theorem 2 and every baseline
    (``delta[B0]`` … ``delta[B4]``), the contraction coefficient θ_ε(b) of one hidden round (``theta_b``), and the
    curves of Theorem 2, B1 and B4 against T (1 … ``rounds``)."""
    epsilon = check_nonnegative("epsilon", epsilon)
    rounds = check_positive_int("rounds", rounds, maximum=MAX_ROUNDS)
    radius = check_positive("radius", radius)
    sigma = check_positive("sigma", sigma)
    m = check_positive_int("batch_size", batch_size, maximum=10_000)
    eta = check_positive("eta", eta)
    kw = dict(batch_size=m, eta=eta, sigma=sigma, radius=radius)
    n = m * rounds
    values = {  # as baselines.baseline_deltas, PABI only up to PABI_MAX_USERS users
        "delta[B0]": float(C.last_iterate_delta(epsilon, n=n, **kw)),
        "delta[B1]": float(B.parallel_delta(epsilon, batch_size=m, sigma=sigma)),
        "delta[B2]": float(B.gaussian_rdp_delta(epsilon, batch_size=m, sigma=sigma)),
    }
    for key, relation in (("B3a", "add_remove"), ("B3b", "replace_one")):
        orders, rdp = _poisson_rdp(n, relation, m, sigma)
        values[f"delta[{key}]"] = float(np.atleast_1d(B.rdp_to_delta(orders, rdp, epsilon))[0])
    values["delta[B4]"] = _pabi(epsilon, rounds, m, sigma)
    labels = {f"delta[{k}]": f"δ at T = {rounds}: {v}" for k, v in BASELINE_LABELS.items()}
    b = C.contraction_ratio(batch_size=m, eta=eta, sigma=sigma, radius=radius)
    values["theta_b"] = float(C.theta(epsilon, b))
    labels["theta_b"] = "θ_ε(b): contraction per hidden round (Lemma 2)"
    grid = np.unique(np.round(np.geomspace(1, rounds, min(rounds, 40))).astype(int))
    pabi_grid = np.unique(np.round(np.geomspace(1, max(1, min(rounds, PABI_MAX_USERS // m)), PABI_POINTS)).astype(int))
    curves = {
        "T": grid,
        BASELINE_LABELS["B0"] + f", ρ={radius:g}": np.array(
            [C.last_iterate_delta(epsilon, n=m * int(t), **kw) for t in grid]
        ),
        BASELINE_LABELS["B1"]: np.full(grid.shape, values["delta[B1]"]),
        BASELINE_LABELS["B4"]: (pabi_grid, np.array([_pabi(epsilon, int(t), m, sigma) for t in pabi_grid])),
    }
    notes = (
        "all closed forms, exact (no approximation); Theorem 2 needs a convex smooth loss with η ≤ 2/β",
        f"n = m·T users, one pass; L = 1; PABI (cost grows with T) computed at {PABI_POINTS} points up to "
        f"n = m·T = {PABI_MAX_USERS} only: nan beyond",
    )
    title = f"last iterate vs composition: ε={epsilon:g}, σ={sigma:g}, m={m}, η={eta:g}, ρ={radius:g}"
    return View(values=values, labels=labels, notes=notes, data=curves, title=title)


def draw(view: View, fig: Figure) -> None:
    """δ against rounds T (log-log)."""
    ax = fig.add_subplot(1, 1, 1)
    grid = view.data["T"]
    for name, delta in view.data.items():
        if name == "T":
            continue
        x, y = delta if isinstance(delta, tuple) else (grid, delta)
        ax.plot(x, np.maximum(y, 1e-300), label=name, marker="." if len(x) < 15 else None)
    plain_log_axes(ax, x=True)
    finish_axes(ax, view.title, "rounds T", "δ(ε)")


def build(**overrides: Any) -> Explorer:
    """The contraction explorer at :data:`DEFAULTS` (``overrides`` change a default)."""
    import ipywidgets as w

    v = {**DEFAULTS, **overrides}
    common = dict(continuous_update=False, style={"description_width": "9em"}, layout=w.Layout(width="26em"))
    controls = {
        "epsilon": w.FloatSlider(value=v["epsilon"], min=0.0, max=5.0, step=0.05, description="ε", **common),
        "rounds": w.IntSlider(value=v["rounds"], min=1, max=10_000, description="rounds T", **common),
        "radius": w.FloatLogSlider(value=v["radius"], base=10, min=-2, max=1, step=0.05, description="radius ρ",
                                   readout_format=".3g", **common),
        "sigma": w.FloatLogSlider(value=v["sigma"], base=10, min=-0.5, max=1, step=0.02, description="noise σ",
                                  readout_format=".3g", **common),
        "batch_size": w.IntSlider(value=v["batch_size"], min=1, max=100, description="users per round m",
                                  **common),
        "eta": w.FloatLogSlider(value=v["eta"], base=10, min=-2, max=0.5, step=0.05, description="step η",
                                readout_format=".3g", **common),
    }  # fmt: skip
    return Explorer("Paper 004: last-iterate privacy by contraction", controls, compute, draw)


def static_series(view: View) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The lines of :func:`draw` (the static site's plot, :mod:`dpcore.explore.static`)."""
    grid = view.data["T"]
    return {name: (d if isinstance(d, tuple) else (grid, d)) for name, d in view.data.items() if name != "T"}


#: The static site's grid (issue 54): ε × σ × users per round m at T = 100, ρ = 1, η = 0.5 (60 points of
#: :func:`compute`).
STATIC_GRIDS: tuple[StaticGrid, ...] = (
    StaticGrid(
        title="Last iterate vs composition: δ(ε) against rounds (T = 100, ρ = 1, η = 0.5)",
        compute=compute,
        axes=(
            Axis("epsilon", "ε", (0.25, 0.5, 1.0, 2.0, 4.0), default=2),
            Axis("sigma", "noise σ", (0.5, 1.0, 1.5, 3.0), default=2),
            Axis("batch_size", "users per round m", (1, 10, 100), default=1),
        ),
        fixed={k: DEFAULTS[k] for k in ("rounds", "radius", "eta")},
        series=static_series,
        x_label="rounds T",
        y_label="δ(ε)",
        log_x=True,
        log_y=True,
    ),
)
