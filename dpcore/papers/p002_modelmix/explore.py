"""Explorer 2 (paper 002, Xiao, Wan, Devadas, "Differentially private deep learning with ModelMix"): ε of regular
DP-SGD against DP-SGD + ModelMix as the envelope width τ, Algorithm 2's ℓ∞ parameter p, the noise σ, the sampling
rate q and the iterations T move.

The curves are :func:`dpcore.papers.p002_modelmix.fig3.amplification_curves`: Fig. 3's accounting (§4.3: n = 50K,
clipping c = 20, δ = 1e-5, Mironov's conversion, Theorem 4.1 / Corollary 4.1 alone), regular DP-SGD on TF Privacy's
orders, ModelMix through the Gaussian ⊛ uniform mixing accountant (:mod:`dpcore.accounting.modelmix`).  All three
are rigorous RDP upper bounds at the paper's assumptions (about 0.3 s per change; cached per input).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from dpcore.accounting import modelmix as mm
from dpcore.explore.static import Axis, StaticGrid
from dpcore.explore.widgets import Explorer, View, finish_axes, plain_log_axes
from dpcore.papers.p002_modelmix.fig3 import FIG3, accountant_range, amplification_curves
from dpcore.validation import check_positive, check_positive_int, check_range, check_rate

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["DEFAULTS", "CURVE_POINTS", "TAU_RANGE", "compute", "draw", "build", "static_series", "STATIC_GRIDS"]

#: Panel (c) of Fig. 3 (q = 0.02, τ = 0.3η) with σ rounded from its calibration (ε = 200 at T for regular DP-SGD).
DEFAULTS: dict[str, Any] = dict(tau=0.3, p=25, sigma=0.5, q=0.02, steps=5000)
CURVE_POINTS = 12
TAU_RANGE = (0.01, 2.0)  # τ/η accepted (Fig. 3 uses 0.075-0.3)


@functools.lru_cache(maxsize=128)
def _curves(tau: float, p: int, sigma: float, q: float, steps: int) -> dict:
    grid = sorted({max(1, round(steps * k / CURVE_POINTS)) for k in range(1, CURVE_POINTS + 1)})
    with accountant_range(tau=tau, sigma=sigma, q=q):
        return amplification_curves(
            grid, n=FIG3["n"], batch_size=q * FIG3["n"], noise_multiplier=sigma, clip=FIG3["clip"], tau=tau,
            delta=FIG3["delta"], linf_blocks=(None, p),
        )  # fmt: skip


def compute(*, tau: float, p: int, sigma: float, q: float, steps: int) -> View:
    """ε at T of regular DP-SGD (``eps[regular]``), ModelMix (``eps[modelmix]``, Theorem 4.1) and ModelMix with
    Algorithm 2's ℓ∞ parameter p (``eps[modelmix_p]``, Corollary 4.1 as corrected), plus the curves against T,
    in Fig. 3's setting (:data:`dpcore.papers.p002_modelmix.fig3.FIG3`)."""
    tau = check_range("tau", tau, *TAU_RANGE)
    p = check_positive_int("p", p, maximum=mm.MAX_LINF_BLOCKS)
    sigma = check_positive("sigma", sigma)
    q = check_rate("q", q)
    steps = check_positive_int("steps", steps, maximum=100_000)
    curves = _curves(tau, p, sigma, q, steps)
    values = {
        "eps[regular]": float(curves["regular DP-SGD"][-1]),
        "eps[modelmix]": float(curves["ModelMix"][-1]),
        "eps[modelmix_p]": float(curves[f"ModelMix p={p}"][-1]),
    }
    values["amplification"] = values["eps[regular]"] / values["eps[modelmix]"] if values["eps[modelmix]"] else 0.0
    labels = {
        "eps[regular]": f"ε at T = {steps}, regular DP-SGD (rigorous, RDP)",
        "eps[modelmix]": "ε at T, DP-SGD + ModelMix (Thm 4.1, rigorous)",
        "eps[modelmix_p]": f"ε at T, ModelMix with ℓ∞ p = {p} (Cor. 4.1 corrected, rigorous)",
        "amplification": "ε regular / ε ModelMix",
    }
    notes = (
        f"Fig. 3's setting: n = {FIG3['n']}, c = {FIG3['clip']:g}, δ = {FIG3['delta']:g}, Mironov conversion",
        "τ is the mixing envelope width in units of the step η",
    )
    title = f"ModelMix vs DP-SGD: τ={tau:g}η, p={p}, σ={sigma:g}, q={q:g}"
    return View(values=values, labels=labels, notes=notes, data=curves, title=title)


def draw(view: View, fig: Figure) -> None:
    """ε against iterations, one line per accountant curve."""
    ax = fig.add_subplot(1, 1, 1)
    steps = view.data["steps"]
    for name, eps in view.data.items():
        if name != "steps":
            ax.plot(steps, eps, label=name, ls="--" if name.startswith("regular") else "-")
    plain_log_axes(ax, x=False)
    finish_axes(ax, view.title, "iterations T", "ε")


def build(**overrides: Any) -> Explorer:
    """The ModelMix explorer at :data:`DEFAULTS` (``overrides`` change a default)."""
    import ipywidgets as w

    v = {**DEFAULTS, **overrides}
    common = dict(continuous_update=False, style={"description_width": "9em"}, layout=w.Layout(width="26em"))
    controls = {
        "tau": w.FloatLogSlider(value=v["tau"], base=10, min=-2, max=0.3, step=0.05, description="τ/η",
                                readout_format=".3g", **common),
        "p": w.SelectionSlider(options=[1, 4, 16, 25, 64, 100, 256, 1024], value=v["p"], description="ℓ∞ p",
                               **common),
        "sigma": w.FloatLogSlider(value=v["sigma"], base=10, min=-0.7, max=0.7, step=0.02, description="noise σ",
                                  readout_format=".3g", **common),
        "q": w.FloatLogSlider(value=v["q"], base=10, min=-3, max=-1, step=0.1, description="sampling rate q",
                              readout_format=".3g", **common),
        "steps": w.IntSlider(value=v["steps"], min=100, max=20_000, step=100, description="iterations T", **common),
    }  # fmt: skip
    return Explorer("Paper 002: ModelMix amplification", controls, compute, draw)


def static_series(view: View) -> dict[str, tuple[list[int], list[float]]]:
    """The lines of :func:`draw` (the static site's plot, :mod:`dpcore.explore.static`)."""
    steps = view.data["steps"]
    return {name: (steps, eps) for name, eps in view.data.items() if name != "steps"}


#: The static site's grid (issue 54): τ/η × σ × q at p = 25, T = 5,000 (Fig. 3's setting; 100 points of
#: :func:`compute`).
STATIC_GRIDS: tuple[StaticGrid, ...] = (
    StaticGrid(
        title="ModelMix vs DP-SGD: ε against iterations (Fig. 3's setting, p = 25, T = 5,000)",
        compute=compute,
        axes=(
            Axis("tau", "τ/η", (0.075, 0.15, 0.3, 0.6, 1.2), default=2),
            Axis("sigma", "noise σ", (0.4, 0.5, 0.7, 1.0, 1.5), default=1),
            Axis("q", "sampling rate q", (0.005, 0.01, 0.02, 0.05), default=2),
        ),
        fixed={k: DEFAULTS[k] for k in ("p", "steps")},
        series=static_series,
        x_label="iterations T",
        y_label="ε",
        log_y=True,
        dashed=("regular DP-SGD",),
    ),
)
