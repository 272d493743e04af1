"""Explorer 3 (paper 003, van Dijk et al., "Generalizing DP-SGD with shuffling and batch clipping"): f-DP trade-off
curves and ε under the adversaries A_1 and A_0 for shuffling vs subsampling, batch vs individual clipping, group
size g and epochs E.

* A_1 (the paper's adversary, who sees which rounds touch the differentiating samples): the exact trade-off of
  Def. 5.2, the Gaussian mixture Σ_c q_E(c) G_{c/σ} (:func:`dpcore.papers.p003_shuffling.bounds.mixture_tradeoff`).
  Individual clipping: subsets of size s = 1, m = |S_b| per round; batch clipping: s = |S_b|, m = 1.
* A_0 (the standard adversary; App. G, subsampling only): the CLT of Dong, Roth, Su (Cor. 5.4),
  G_μ with μ = sqrt(E·|S_b|/N)·h(σ) (:func:`~dpcore.papers.p003_shuffling.bounds.a0_tradeoff`, ``"clt-fixed"``),
  APPROXIMATE (asymptotic), with the group transform G_{gμ} for g > 1 (:func:`dpcore.accounting.fdp.group_gaussian`).

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
from dpcore.explore.widgets import Explorer, View, finish_axes
from dpcore.papers.p003_shuffling import bounds as sh
from dpcore.validation import check_choice, check_open_unit, check_positive_int, check_range

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["DEFAULTS", "N", "ALPHA", "CLIPPINGS", "SAMPLINGS", "mechanism", "compute", "draw", "build"]

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


def compute(*, sampling: str, clipping: str, g: int, E: int, sigma: float, batch: int, delta: float) -> View:
    """ε(δ) under A_1 (exact mixture, ``eps[A1]``; nan where not computable) and A_0 (CLT, approximate, with
    group transform, ``eps[A0]``), the A_0 μ (``mu[A0]``), and both trade-off curves at :data:`ALPHA`."""
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
    curves = {"A_0 CLT (approximate)": np.asarray(a0(ALPHA), dtype=float)}
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
