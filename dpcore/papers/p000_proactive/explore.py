"""Paper 000's explorer (van Dijk et al., "Proactive DP", arXiv 2102.09030): σ, s and T for a target (ε, δ).

σ from eq. (6) / Theorem 3.1, σ = sqrt(2(ε + ln(1/δ))/ε) (``mode="theorem"``; ``"paper"`` is the rule Tables 3–8 used,
σ = sqrt(2 ln(1/δ)/ε)), then the App. D.4 calculator (:func:`dpcore.papers.p000_proactive.calculator.dp_calculator`):
γ, the round lower bound T_min = γθ²k²/ε (eq. (8)) and the largest sample size s_max = kN/T_min, with the asymptotic
pair (T_min_asym = θ²k²/(2ε)).  Closed forms: microseconds.  Shown by ``notebooks/explore/calculators.ipynb`` beside
paper 001's per-silo noise calculator (:mod:`dpcore.papers.p001_isrl.explore`); the widgets are the library's
(:mod:`dpcore.explore.widgets`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpcore.explore.static import Axis, StaticGrid
from dpcore.explore.widgets import Explorer, View, finish_axes
from dpcore.papers.p000_proactive import calculator as pdp
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["PROACTIVE_DEFAULTS", "proactive", "draw_proactive", "build_proactive", "static_series", "STATIC_GRIDS"]

#: Table 9's setting (N = 60,000 MNIST records, k = 5 epochs) at ε = 1, δ = 1/N.
PROACTIVE_DEFAULTS: dict[str, Any] = dict(epsilon=1.0, log10_delta=-4.778, N=60_000, k=5.0, theta=1.0, mode="theorem")


def proactive(*, epsilon: float, log10_delta: float, N: int, k: float, theta: float, mode: str) -> View:
    """σ for the target (ε, δ = 10^log10_delta) by eq. (6) (or the paper's Tables 3–8 rule), then the App. D.4
    calculator at that σ: ``sigma``, ``epsilon_check`` (ε of σ by eq. (6)), ``gamma``, ``T_min``, ``s_max``,
    ``T_min_asym``, ``s_max_asym``, and the curve T_min against ε (data) for the plot."""
    epsilon = pdp.check_epsilon("epsilon", epsilon)
    delta = check_open_unit("delta", 10.0 ** float(log10_delta))
    N = check_positive_int("N", N, maximum=10**9)
    k = check_positive("k", k)
    theta = pdp.check_theta(theta)
    mode = check_choice("mode", mode, pdp.MODES)
    sigma = pdp.sigma(epsilon, delta, mode=mode)
    result = pdp.dp_calculator(sigma, N, k, delta=delta, theta=theta, mode=mode)
    values = {
        "sigma": sigma, "epsilon_check": result.epsilon, "gamma": result.gamma, "T_min": result.T_min,
        "s_max": result.s_max, "T_min_asym": result.T_min_asym, "s_max_asym": result.s_max_asym,
    }  # fmt: skip
    labels = {
        "sigma": f"σ for (ε, δ) = ({epsilon:g}, {delta:.3g}) (eq. (6), mode {mode})",
        "epsilon_check": "ε of that σ by eq. (6) (App. D.4 step 1)",
        "gamma": "γ (smallest solution of γ ≥ F(γ), Thm 3.1)",
        "T_min": "T_min = γθ²k²/ε: fewest rounds (eq. (8))",
        "s_max": "s_max = kN/T_min: largest sample size per round",
        "T_min_asym": "T_min asymptotic = θ²k²/(2ε)",
        "s_max_asym": "s_max asymptotic",
    }
    notes = [
        "closed forms of the paper (App. D.4 calculator); mode 'paper' reproduces what Tables 3–8 printed",
        f"condition (7) (k large enough for δ): {'holds' if result.condition_7 else 'FAILS'}",
    ]
    if mode == "paper":
        notes.append("mode 'paper': σ without the +ε of eq. (6), γ = F(2): what the paper printed, not the theorem")
    curve = []
    for e in [epsilon * f for f in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)]:
        try:
            s = pdp.sigma(e, delta, mode=mode)
            curve.append((e, pdp.dp_calculator(s, N, k, delta=delta, theta=theta, mode=mode).T_min))
        except ValueError:  # outside the calculator's domain (e.g. σ² ≤ 2): no point drawn
            continue
    title = f"Proactive DP calculator: N={N}, k={k:g}, θ={theta:g}, δ={delta:.3g}"
    return View(values=values, labels=labels, notes=tuple(notes), data=curve, title=title)


def draw_proactive(view: View, fig: Figure) -> None:
    """T_min against the target ε (the chosen ε marked)."""
    ax = fig.add_subplot(1, 1, 1)
    if view.data:
        eps, t = zip(*view.data, strict=True)
        ax.plot(eps, t, marker="o", label="T_min (eq. (8))")
    ax.axhline(view.values["T_min"], color="0.5", ls=":", label=f"T_min at the target: {view.values['T_min']:.4g}")
    finish_axes(ax, view.title, "target ε", "fewest rounds T_min")


def build_proactive(**overrides: Any) -> Explorer:
    """The Proactive-DP calculator at :data:`PROACTIVE_DEFAULTS`."""
    import ipywidgets as w

    v = {**PROACTIVE_DEFAULTS, **overrides}
    style = {"description_width": "9em"}
    common = dict(continuous_update=False, style=style, layout=w.Layout(width="26em"))
    controls = {
        "epsilon": w.FloatLogSlider(value=v["epsilon"], base=10, min=-2, max=1.3, step=0.02, description="target ε",
                                    readout_format=".3g", **common),
        "log10_delta": w.FloatSlider(value=v["log10_delta"], min=-10, max=-2, step=0.001, description="log10 δ",
                                     readout_format=".3f", **common),
        "N": w.IntSlider(value=v["N"], min=1_000, max=1_000_000, step=1_000, description="data set size N", **common),
        "k": w.FloatSlider(value=v["k"], min=1, max=100, step=0.5, description="epochs k", **common),
        "theta": w.FloatSlider(value=v["theta"], min=1.0, max=5.0, step=0.1, description="θ = s_max/s̄", **common),
        "mode": w.ToggleButtons(options=list(pdp.MODES), value=v["mode"], description="mode", style=style),
    }  # fmt: skip
    return Explorer("Paper 000: Proactive-DP calculator (σ, s, T for a target (ε, δ))", controls, proactive,
                    draw_proactive)  # fmt: skip


def static_series(view: View) -> dict[str, tuple[list[float], list[float]]]:
    """The line of :func:`draw_proactive`, T_min against the target ε (the static site's plot,
    :mod:`dpcore.explore.static`)."""
    if not view.data:
        return {}
    eps, t_min = zip(*view.data, strict=True)
    return {"T_min (eq. (8))": (list(eps), list(t_min))}


#: The static site's grid (issue 54): target ε × epochs k × mode at Table 9's N = 60,000, δ, θ = 1 (56 points of
#: :func:`proactive`).
STATIC_GRIDS: tuple[StaticGrid, ...] = (
    StaticGrid(
        title="Paper 000: the Proactive-DP calculator (N = 60,000, θ = 1)",
        compute=proactive,
        axes=(
            Axis("epsilon", "target ε", (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0), default=3),
            Axis("k", "epochs k", (1.0, 5.0, 10.0, 50.0), default=1),
            Axis("mode", "mode", pdp.MODES, default=pdp.MODES.index(PROACTIVE_DEFAULTS["mode"])),
        ),
        fixed={k: PROACTIVE_DEFAULTS[k] for k in ("log10_delta", "N", "theta")},
        series=static_series,
        x_label="target ε",
        y_label="fewest rounds T_min",
    ),
)
