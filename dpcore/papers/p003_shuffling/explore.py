"""Explorer 3 (paper 003, van Dijk et al., "Generalizing DP-SGD with shuffling and batch clipping"): f-DP trade-off
curves and ε under the adversaries A_1 and A_0 for shuffling vs subsampling, batch vs individual clipping, group
size g and epochs E.

* A_1 (the paper's adversary, who sees which rounds touch the differentiating samples): the exact trade-off of
  Def. 5.2, the Gaussian mixture Σ_c q_E(c) G_{c/σ} (:func:`dpcore.papers.p003_shuffling.bounds.mixture_tradeoff`).
  Individual clipping: subsets of size s = 1, m = |S_b| per round; batch clipping: s = |S_b|, m = 1.
* A_0 (the standard adversary; App. G, subsampling only): the CLT of Dong, Roth, Su (Cor. 5.4),
  G_μ with μ = sqrt(E·|S_b|/N)·h(σ) (:func:`~dpcore.papers.p003_shuffling.bounds.a0_tradeoff`, ``"clt-fixed"``),
  APPROXIMATE (asymptotic), with the group transform G_{gμ} for g > 1 (:func:`dpcore.accounting.fdp.group_gaussian`).
  With shuffling this is the value of a *subsampled* run at the same |S_b|, not the shuffled run's ε (no
  standard-adversary accountant for shuffling exists); the read-out labels it so.
* Shuffling, g = 1: the shuffled run's three numbers (:func:`dpcore.accounting.shuffle_lower.shuffled_epsilons`):
  Poisson accounting at q = 1/b (often reported, NOT valid for shuffling), the lower bound for shuffling of Chua et
  al. 2024 under the replace-one pair Algorithm 1 realises and under Chua et al.'s pair, and the rigorous A_1 upper
  bound G_{√E/σ}.  The lower bound is computed on a coarser grid than the library default (losses rounded down:
  still a lower bound, a little looser).

Noise N(0, (2Cσ)²) per round, N = 60,000 (MNIST), as in the paper's App. H.  Exact A_1 mixtures with shuffling and
individual clipping are computable for g ≤ 2 only (the widget says so); everything else takes milliseconds to a
few tenths of a second (cached per input).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcore.accounting import fdp
from dpcore.accounting import shuffle_lower as sl
from dpcore.accounting.shuffled import rounds_per_epoch
from dpcore.explore.static import Axis, StaticGrid
from dpcore.explore.widgets import Explorer, View, finish_axes
from dpcore.papers.p003_shuffling import bounds as sh
from dpcore.validation import check_choice, check_open_unit, check_positive_int, check_range

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "DEFAULTS", "N", "ALPHA", "CLIPPINGS", "SAMPLINGS", "mechanism", "compute", "draw", "build", "static_series",
    "STATIC_GRIDS",
]  # fmt: skip

DEFAULTS: dict[str, Any] = dict(sampling="shuffle", clipping="batch", g=1, E=10, sigma=2.0, batch=256, delta=1e-5)
N = 60_000  # MNIST, App. H
SAMPLINGS = ("shuffle", "fixed")  # the paper's shuffling and subsampling
CLIPPINGS = ("individual", "batch")
ALPHA = np.concatenate([[0.0], np.geomspace(1e-6, 1.0, 200)])  # type I errors at which the curves are drawn


def mechanism(clipping: str, batch: int) -> tuple[int, int]:
    """(s, m) of Algorithm 1 for a batch of |S_b| = ``batch`` samples: individual clipping s = 1, m = |S_b|;
    batch clipping s = |S_b|, m = 1 (paper 003, §3; as :func:`dpcore.papers.p003_shuffling.tables.row_mechanism`)."""
    check_choice("clipping", clipping, CLIPPINGS)
    batch = check_positive_int("batch", batch, maximum=N)
    return (1, batch) if clipping == "individual" else (batch, 1)


@functools.lru_cache(maxsize=128)
def _a1(sampling: str, clipping: str, g: int, E: int, sigma: float, batch: int):
    s, m = mechanism(clipping, batch)
    if sampling == "shuffle" and m > 1 and g > 2:
        return None  # not computable exactly (tables.exact_mixture returns None there too)
    return sh.mixture_tradeoff(sampling, sigma=sigma, E=E, N=N, s=s, m=m, g=g)


LOWER_GRID, LOWER_SLICES = 2e-3, 2000  # coarser than the library default: ~0.3 s instead of ~2.5 s, still a bound


@functools.lru_cache(maxsize=128)
def _shuffled_three(E: int, sigma: float, batch: int, delta: float) -> sl.ShuffledEpsilons:
    return sl.shuffled_epsilons(sigma, rounds_per_epoch=rounds_per_epoch(N, batch), epochs=E, delta=delta,
                                grid=LOWER_GRID, slices=LOWER_SLICES)  # fmt: skip


def compute(*, sampling: str, clipping: str, g: int, E: int, sigma: float, batch: int, delta: float) -> View:
    """ε(δ) under A_1 (exact mixture, ``eps[A1]``; nan where not computable) and A_0 (CLT, approximate, with
    group transform, ``eps[A0]``; with shuffling, the value of subsampling at the same |S_b|), the A_0 μ
    (``mu[A0]``), and both trade-off curves at :data:`ALPHA`.  Shuffling with g = 1 adds the shuffled run's three
    numbers: ``eps[poisson]`` (Poisson accounting, not valid for shuffling), ``eps[lower:replace-one]`` and
    ``eps[lower:chua]`` (lower bounds for shuffling, Chua et al. 2024) and ``eps[upper]`` (A_1, rigorous)."""
    sampling = check_choice("sampling", sampling, SAMPLINGS)
    clipping = check_choice("clipping", clipping, CLIPPINGS)
    g = check_positive_int("g", g, maximum=100)
    E = check_positive_int("E", E, maximum=1_000)
    sigma = check_range("sigma", sigma, *sh.SIGMA_RANGE)
    batch = check_positive_int("batch", batch, maximum=N)
    delta = check_open_unit("delta", delta)
    a1 = _a1(sampling, clipping, g, E, sigma, batch)
    mu0 = fdp.group_gaussian(sh.a0_tradeoff(sigma=sigma, N=N, batch=batch, E=E, method="clt-fixed").mu, g)
    a0 = fdp.Gaussian(mu0)
    values = {
        "eps[A1]": math.nan if a1 is None else float(a1.epsilon(delta)),
        "eps[A0]": float(a0.epsilon(delta)),
        "mu[A0]": float(mu0),
    }
    names = {"shuffle": "shuffling", "fixed": "subsampling"}
    labels = {
        "eps[A1]": f"ε at δ={delta:g}, A_1 exact mixture (Def. 5.2; {names[sampling]}, {clipping} clipping; rigorous)",
        "eps[A0]": f"ε at δ={delta:g}, A_0 CLT (subsampling, App. G; approximate)",
        "mu[A0]": "μ of A_0's G_μ (group g·μ)",
    }
    notes = [
        f"N = {N}, noise N(0, (2Cσ)²) per round, g differentiating samples",
        "A_0 is the standard adversary's subsampled analysis (CLT, asymptotic): approximate",
    ]
    if sampling == "shuffle":
        labels["eps[A0]"] = (f"ε at δ={delta:g}, A_0 CLT of SUBSAMPLING at the same |S_b| (App. G; approximate): "
                             "NOT this shuffled run's ε")  # fmt: skip
        notes.append("no standard-adversary accountant exists for shuffling: A_0 above is a subsampled run's value")
        if g == 1:
            three = _shuffled_three(E, sigma, batch, delta)
            pair_of = {sl.PAIR_NAMES[sl.REPLACE_ONE_PAIR]: "replace-one", sl.PAIR_NAMES[sl.CHUA_PAIR]: "chua"}
            values["eps[poisson]"] = three.poisson
            labels["eps[poisson]"] = (f"ε at δ={delta:g}, Poisson accounting at q = 1/b = 1/{three.rounds_per_epoch} "
                                      "(often reported; NOT valid for shuffling)")  # fmt: skip
            for name, value in three.lower.items():
                values[f"eps[lower:{pair_of[name]}]"] = value
                labels[f"eps[lower:{pair_of[name]}]"] = f"ε at δ={delta:g}, LOWER bound for shuffling, {name}"
            values["eps[upper]"] = three.upper
            labels["eps[upper]"] = f"ε at δ={delta:g}, A_1 G_{{√E/σ}} (Lemma F.2): rigorous UPPER bound"
            notes.append("shuffled run: the true ε lies between the lower bound (Chua et al. 2024) and the A_1 upper "
                         "bound; the Poisson number is not a bound")  # fmt: skip
        else:
            notes.append("the shuffled lower bound (Chua et al. 2024) is computed for g = 1 only")
    a0_name = "A_0 CLT of subsampling (approximate; not this shuffled run)" if sampling == "shuffle" else (
        "A_0 CLT (approximate)")  # fmt: skip
    curves = {a0_name: np.asarray(a0(ALPHA), dtype=float)}
    if a1 is None:
        notes.append("exact A_1 for shuffling with individual clipping needs g ≤ 2: not shown")
    else:
        curves["A_1 exact"] = np.asarray(a1(ALPHA), dtype=float)
    curves["no privacy"] = np.zeros_like(ALPHA)
    title = f"{names[sampling]}, {clipping} clipping, g={g}, E={E}, σ={sigma:g}, |S_b|={batch}"
    return View(values=values, labels=labels, notes=tuple(notes), data=curves, title=title)


def draw(view: View, fig: Figure) -> None:
    """Trade-off curves β(α) (left) and ε(δ) for a few δ is the read-out; the perfect-privacy line 1 − α dotted."""
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(ALPHA, 1 - ALPHA, ls=":", color="0.5", label="perfect privacy 1 − α")
    for name, beta in view.data.items():
        if name != "no privacy":
            ax.plot(ALPHA, beta, ls="--" if "approximate" in name else "-", label=name)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    finish_axes(ax, view.title, "type I error α", "type II error β = f(α)")


def build(**overrides: Any) -> Explorer:
    """The paper-003 explorer at :data:`DEFAULTS` (``overrides`` change a default)."""
    import ipywidgets as w

    v = {**DEFAULTS, **overrides}
    style = {"description_width": "9em"}
    common = dict(continuous_update=False, style=style, layout=w.Layout(width="26em"))
    controls = {
        "sampling": w.ToggleButtons(options=[("shuffling", "shuffle"), ("subsampling", "fixed")],
                                    value=v["sampling"], description="sampling", style=style),
        "clipping": w.ToggleButtons(options=list(CLIPPINGS), value=v["clipping"], description="clipping",
                                    style=style),
        "g": w.IntSlider(value=v["g"], min=1, max=20, description="group size g", **common),
        "E": w.IntSlider(value=v["E"], min=1, max=200, description="epochs E", **common),
        "sigma": w.FloatSlider(value=v["sigma"], min=0.5, max=8.0, step=0.1, description="noise σ", **common),
        "batch": w.SelectionSlider(options=[16, 32, 64, 128, 256, 512, 1024], value=v["batch"],
                                   description="batch |S_b|", **common),
        "delta": w.FloatLogSlider(value=v["delta"], base=10, min=-9, max=-2, step=0.5, description="δ",
                                  readout_format=".0e", **common),
    }  # fmt: skip
    return Explorer("Paper 003: shuffling vs subsampling, batch vs individual clipping", controls, compute, draw)


#: every 4th type I error of :data:`ALPHA` and the last (α = 1): the static site's curves (51 exact points of each)
STATIC_ALPHA = np.unique(np.r_[np.arange(0, len(ALPHA), 4), len(ALPHA) - 1])


def static_series(view: View) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The lines of :func:`draw` at the type I errors :data:`STATIC_ALPHA` (the static site's plot,
    :mod:`dpcore.explore.static`)."""
    alpha = ALPHA[STATIC_ALPHA]
    out = {"perfect privacy 1 − α": (alpha, 1 - alpha)}
    out.update(
        {name: (alpha, np.asarray(beta)[STATIC_ALPHA]) for name, beta in view.data.items() if name != "no privacy"}
    )
    return out


#: The static site's grid (issue 54): sampling × clipping × σ × epochs E at g = 1, |S_b| = 256, δ = 1e-5 (120 points
#: of :func:`compute`).
STATIC_GRIDS: tuple[StaticGrid, ...] = (
    StaticGrid(
        title="Shuffling vs subsampling, batch vs individual clipping: trade-off curves and ε (g = 1, |S_b| = 256)",
        compute=compute,
        axes=(
            Axis("sampling", "sampling", SAMPLINGS, default=0),
            Axis("clipping", "clipping", CLIPPINGS, default=1),
            Axis("sigma", "noise σ", (1.0, 1.5, 2.0, 3.0, 4.0, 6.0), default=2),
            Axis("E", "epochs E", (1, 5, 10, 20, 50), default=2),
        ),
        fixed={k: DEFAULTS[k] for k in ("g", "batch", "delta")},
        series=static_series,
        x_label="type I error α",
        y_label="type II error β = f(α)",
        dashed=(
            "perfect privacy 1 − α",
            "A_0 CLT of subsampling (approximate; not this shuffled run)",
            "A_0 CLT (approximate)",
        ),
    ),
)
