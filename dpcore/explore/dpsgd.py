"""Explorer 1: ε of DP-SGD against steps, every accountant side by side, and the inverse (σ for a target ε).

DP-SGD (Abadi et al., CCS 2016, Algorithm 1) is the subsampled Gaussian mechanism composed over T steps; the
accountants are those of :mod:`dpcore.accounting.dpsgd`: PLD (Doroshenko et al. 2022; Poisson only), RDP with the
conversion of Balle et al. 2020 (Thm 21), RDP with Mironov 2017 (Prop. 3) -- all rigorous upper bounds -- and the
GDP central limit theorem (Bu, Dong, Long, Su 2020, Thm 5; Dong, Roth, Su 2022, Cor. 5.4), which is APPROXIMATE.
Sampling: Poisson (add/remove neighbours) or fixed-size batches without replacement (replace-one neighbours;
Wang, Balle, Kasiviswanathan 2019, Thm 9).

Every value is the registry's (:func:`~dpcore.accounting.records.epsilon_for_record` of the run's record at each
step count, :func:`epsilons`), with the methods, their order and labels the registry gives for the sampling
(:func:`~dpcore.accounting.registry.methods_for`); nothing here picks an accountant by name.  Speed: RDP and the GDP CLT
compose additively (:data:`~dpcore.accounting.registry.ADDITIVE`), and the registry caches the one-step RDP per (σ, q,
n, sampling), so their curves of :data:`CURVE_POINTS` points cost one one-step computation.  The PLD is drawn at
:data:`PLD_POINTS` points: its one-step PLD is cached in :mod:`dpcore.accounting.pld` and composed at each step count
(about 0.05 s a point).  The headline accountant (:data:`HEADLINE`: the registry's default for the sampling, PLD under
Poisson sampling, RDP under fixed-size batches, where PLD does not apply) is what the inverse uses by default.
The inverse (:func:`inverse`) runs the library's calibrator
(:func:`~dpcore.accounting.dpsgd.dpsgd_noise_multiplier`, tolerance :data:`INVERSE_RTOL`) with the method chosen,
cached per input; it takes 0.5-10 s, so it runs when its button is pressed, not on every change.  Epochs are typed
(1 to :data:`MAX_EPOCHS`): a value out of range is refused with a message naming ``epochs``, never clamped.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcore.accounting import dpsgd as acc
from dpcore.accounting.events import steps_for_epochs
from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.registry import ADDITIVE, methods_for
from dpcore.explore.static import Axis, StaticGrid
from dpcore.explore.widgets import Explorer, View, finish_axes
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int, check_range

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "DEFAULTS", "CURVE_POINTS", "PLD_POINTS", "INVERSE_RTOL", "INVERSE_METHODS", "HEADLINE", "MAX_EPOCHS",
    "headline_method", "compute", "inverse", "epsilons", "draw", "build", "static_series", "STATIC_GRIDS",
]  # fmt: skip

DEFAULTS: dict[str, Any] = dict(
    sigma=1.1, batch_size=256, dataset_size=60_000, delta=1e-5, epochs=60, sampling="poisson",
    target_epsilon=2.0, inverse_method="headline",
)  # fmt: skip
CURVE_POINTS = 16  # steps at which the additive methods (RDP, GDP: registry.ADDITIVE) are drawn
PLD_POINTS = 6  # steps at which PLD is drawn (one cached one-step PLD, composed at each: about 0.05-0.1 s a point)
#: The explorer's samplings: those with a DP-SGD subsampling accountant (shuffling has the A_1 analysis instead).
_SAMPLINGS = ("poisson", "fixed")
INVERSE_RTOL = 1e-2  # relative tolerance of the σ calibration shown on the widget
#: The accountant of the headline ε (the read-out's first line) and of the inverse's default, per sampling: the
#: registry's tightest rigorous method for it (:func:`~dpcore.accounting.dpsgd.default_method`).
HEADLINE: dict[str, str] = {s: acc.default_method(s) for s in _SAMPLINGS}
#: "headline": the headline's accountant (:data:`HEADLINE`); or one of the library's methods.
INVERSE_METHODS = ("headline", *acc.METHODS)
MAX_EPOCHS = 10_000


def headline_method(sampling: str) -> str:
    """The accountant of the headline ε under ``sampling``: the tightest rigorous one that supports it."""
    return HEADLINE[check_choice("sampling", sampling, tuple(HEADLINE))]


@functools.lru_cache(maxsize=256)
def epsilons(sigma: float, *, n: int, b: int, sampling: str, delta: float, method: str, steps: tuple[int, ...]):
    """ε of ``method`` after each entry of ``steps`` (a tuple) for the DP-SGD run of σ, n, b and ``sampling``:
    :func:`~dpcore.accounting.records.epsilon_for_record` of the run's record at each step count, the registry's
    accountant (its one-step RDP and one-step PLD cached there, so a curve costs about one point).  Cached."""
    records = (acc.dpsgd_record(sigma, sample_rate=b / n, steps=t, sampling=sampling, dataset_size=n) for t in steps)
    return [float(epsilon_for_record(record, delta, method=method)) for record in records]


@functools.lru_cache(maxsize=256)
def _inverse(target: float, q: float, steps: int, delta: float, method: str, sampling: str, n: int) -> float:
    return float(
        acc.dpsgd_noise_multiplier(
            target, sample_rate=q, steps=steps, delta=delta, method=method, sampling=sampling, dataset_size=n,
            rtol=INVERSE_RTOL,
        )
    )  # fmt: skip


def _inputs(sigma: float, batch_size: int, dataset_size: int, delta: float, epochs: int, sampling: str):
    sigma = check_range("sigma", sigma, *acc.NOISE_MULTIPLIER_RANGE)
    n = check_positive_int("dataset_size", dataset_size)
    b = check_positive_int("batch_size", batch_size, maximum=n)
    delta = check_open_unit("delta", delta)
    epochs = check_positive_int("epochs", epochs, maximum=MAX_EPOCHS)
    check_choice("sampling", sampling, _SAMPLINGS)
    return sigma, n, b, delta, steps_for_epochs(epochs, sampling=sampling, dataset_size=n, batch_size=b)


def compute(
    *,
    sigma: float,
    batch_size: int,
    dataset_size: int,
    delta: float,
    epochs: int,
    sampling: str,
    target_epsilon: float = DEFAULTS["target_epsilon"],
    inverse_method: str = DEFAULTS["inverse_method"],
) -> View:
    """ε after T steps (and along the way) under every accountant the sampling supports, the headline
    (:func:`headline_method`) first.

    T = max(1, round(epochs · round(n/b))), the trainer's count (:func:`~dpcore.accounting.events.steps_for_epochs`).
    Values: ``eps[<method>]`` at T (``gdp`` approximate), ``steps`` (T) and ``sample_rate`` (q = b/n).
    ``target_epsilon`` and ``inverse_method`` are the inverse's (:func:`inverse`), accepted and ignored here.
    """
    sigma, n, b, delta, steps_total = _inputs(sigma, batch_size, dataset_size, delta, epochs, sampling)
    q = b / n
    grid = sorted({max(1, int(round(x))) for x in np.linspace(steps_total / CURVE_POINTS, steps_total, CURVE_POINTS)})
    sparse = sorted({max(1, int(round(steps_total * k / PLD_POINTS))) for k in range(1, PLD_POINTS + 1)})
    curves: dict[str, tuple[list[int], list[float]]] = {}
    for method in methods_for(sampling):  # the registry's methods of the sampling, its default first
        pts = grid if method in ADDITIVE else sparse  # a PLD composes a distribution per point: fewer points
        curves[method] = (pts, epsilons(sigma, n=n, b=b, sampling=sampling, delta=delta, method=method,
                                        steps=tuple(pts)))  # fmt: skip
    values: dict[str, float] = {"steps": float(steps_total), "sample_rate": q}
    labels = {"steps": "steps T = epochs·round(n/b), as the trainer counts", "sample_rate": "sampling rate q = b/n"}
    headline = headline_method(sampling)
    for method, (_, eps) in curves.items():
        values[f"eps[{method}]"] = eps[-1]
        labels[f"eps[{method}]"] = f"ε at T, {method} ({acc.method_label(method)})" + (
            " — headline" if method == headline else ""
        )
    notes = [
        "rigorous: PLD, RDP (Balle et al. 2020 conversion), RDP (Mironov 2017); approximate: GDP CLT "
        "(may be below the true ε at finite T)",
    ]
    if sampling == "poisson":
        notes.append(f"PLD drawn at {PLD_POINTS} step counts (its markers), each the library's PLD ε at that count")
    else:
        notes.append("fixed-size batches: PLD not available; RDP by Wang et al. 2019, Thm 9 (first change of σ, q or "
                     "n takes about 0.7 s, then cached)")  # fmt: skip
    title = f"DP-SGD, σ={sigma:g}, q={b}/{n}, δ={delta:g}, {sampling} sampling"
    return View(values=values, labels=labels, notes=tuple(notes), data=curves, title=title)


def inverse(
    *,
    sigma: float,
    batch_size: int,
    dataset_size: int,
    delta: float,
    epochs: int,
    sampling: str,
    target_epsilon: float,
    inverse_method: str,
) -> View:
    """σ for which ``inverse_method`` gives ε ≤ ``target_epsilon`` after T steps
    (:func:`~dpcore.accounting.dpsgd.dpsgd_noise_multiplier`, relative tolerance :data:`INVERSE_RTOL`).

    ``inverse_method="headline"`` (the default) is the headline ε's accountant (:func:`headline_method`: PLD under
    Poisson sampling, RDP under fixed-size batches).  Value ``sigma_for_target`` (``nan`` where the method cannot
    account for the sampling: PLD with fixed-size batches).  ``sigma`` is validated and otherwise unused.  Seconds
    for fixed-size RDP: run on demand.
    """
    _, n, b, delta, steps_total = _inputs(sigma, batch_size, dataset_size, delta, epochs, sampling)
    target = check_positive("target_epsilon", target_epsilon)
    method = check_choice("inverse_method", inverse_method, INVERSE_METHODS)
    if method == "headline":
        method = headline_method(sampling)
    label = f"σ for ε = {target:g} after T = {steps_total} steps ({method}, {acc.method_label(method)})"
    if method not in methods_for(sampling):
        note = f"{method} cannot account for {sampling} sampling"
        return View(values={"sigma_for_target": math.nan}, labels={"sigma_for_target": label}, notes=(note,))
    value = _inverse(target, b / n, steps_total, delta, method, sampling, n)
    note = f"calibrated by dpsgd_noise_multiplier to a relative tolerance of {INVERSE_RTOL:g}"
    return View(values={"sigma_for_target": value}, labels={"sigma_for_target": label}, notes=(note,))


def draw(view: View, fig: Figure) -> None:
    """ε against steps, one line per accountant (approximate ones dashed; PLD's fewer points marked)."""
    ax = fig.add_subplot(1, 1, 1)
    for method, (steps, eps) in view.data.items():
        style = dict(ls="--") if method in acc.APPROXIMATE else {}
        marker = dict(marker="o", ms=3) if method not in ADDITIVE else {}
        ax.plot(steps, eps, label=f"{method} ({acc.method_label(method)})", **marker, **style)
    finish_axes(ax, view.title, "steps T", "ε")


def _inverse_option(method: str) -> str:
    if method != "headline":
        return method
    return f"headline's ({HEADLINE['poisson'].upper()}; {HEADLINE['fixed'].upper()} if fixed)"  # the registry's


def build(**overrides: Any) -> Explorer:
    """The DP-SGD explorer with the controls at :data:`DEFAULTS` (``overrides`` change a default)."""
    import ipywidgets as w

    v = {**DEFAULTS, **overrides}
    style = {"description_width": "10em"}
    layout = w.Layout(width="26em")
    common = dict(continuous_update=False, style=style, layout=layout)
    controls = {
        "sigma": w.FloatLogSlider(value=v["sigma"], base=10, min=-0.5, max=1.3, step=0.01,
                                  description="noise σ", readout_format=".3g", **common),
        "batch_size": w.IntSlider(value=v["batch_size"], min=16, max=4096, step=16, description="batch size b",
                                  **common),
        "dataset_size": w.IntSlider(value=v["dataset_size"], min=1_000, max=200_000, step=1_000,
                                    description="dataset size n", **common),
        "delta": w.FloatLogSlider(value=v["delta"], base=10, min=-9, max=-2, step=0.5, description="δ",
                                  readout_format=".0e", **common),
        # typed, not a slider: a slider clamps a typed 5,000 to its maximum without a word; out-of-range values are
        # refused by compute with a message naming epochs
        "epochs": w.IntText(value=v["epochs"], description=f"epochs (1–{MAX_EPOCHS:,})", style=style,
                            layout=layout, continuous_update=False),
        "sampling": w.ToggleButtons(options=list(_SAMPLINGS), value=v["sampling"], description="sampling",
                                    style=style),
        "target_epsilon": w.FloatSlider(value=v["target_epsilon"], min=0.1, max=20.0, step=0.1,
                                        description="target ε (inverse)", **common),
        "inverse_method": w.Dropdown(options=[(_inverse_option(m), m) for m in INVERSE_METHODS],
                                     value=v["inverse_method"], description="inverse by", style=style),
    }  # fmt: skip
    return Explorer(
        "DP-SGD: ε against steps under every accountant",
        controls,
        compute,
        draw,
        intro="Rigorous accountants are solid lines, the approximate GDP CLT is dashed. The headline ε is PLD's "
        "(RDP's with fixed-size batches); the inverse uses the same accountant unless you pick another.",
        on_demand=("σ for the target ε", inverse),
    )


def static_series(view: View) -> dict[str, tuple[list[int], list[float]]]:
    """The lines of :func:`draw`, by the legend's names (the static site's plot, :mod:`dpcore.explore.static`)."""
    return {f"{method} ({acc.method_label(method)})": curve for method, curve in view.data.items()}


#: The static site's grid (issue 54): σ × batch size × epochs under Poisson sampling, n = 60,000, δ = 1e-5; 150
#: points of :func:`compute`, the same numbers as the live explorer's at those settings.
STATIC_GRIDS: tuple[StaticGrid, ...] = (
    StaticGrid(
        title="DP-SGD: ε against steps, every accountant (Poisson sampling, n = 60,000, δ = 1e-5)",
        compute=compute,
        axes=(
            Axis("sigma", "noise σ", (0.7, 0.9, 1.1, 1.5, 2.0, 3.0), default=2),
            Axis("batch_size", "batch size b", (64, 128, 256, 512, 1024), default=2),
            Axis("epochs", "epochs", (1, 10, 30, 60, 100), default=3),
        ),
        fixed={k: DEFAULTS[k] for k in ("dataset_size", "delta", "sampling", "target_epsilon", "inverse_method")},
        series=static_series,
        x_label="steps T",
        y_label="ε",
        dashed=tuple(f"{m} ({acc.method_label(m)})" for m in acc.APPROXIMATE),
    ),
)
