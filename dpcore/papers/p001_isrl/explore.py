"""Paper 001's explorer (Lowy & Razaviyayn, ICLR 2023): the per-silo Gaussian noise σ of ISRL-DP MB-SGD.

σ for (n, R, K, M, ε, δ) by App. I's calibration (experiments: σ² = 8L²R ln(1/δ)/(n²ε²)) and Theorem D.1's (theory,
advanced composition) (:func:`dpcore.papers.p001_isrl.accounting.noise_std`).  σ does not depend on K (averaging and
amplification cancel) nor on M (ISRL-DP protects each silo's records from everyone, the other silos included: no
amplification by silo sampling).  The tight per-silo ε of that σ (a PLD over R rounds,
:func:`~dpcore.papers.p001_isrl.accounting.mbsgd_epsilon`) takes seconds: it runs when asked.  Shown by
``notebooks/explore/calculators.ipynb`` beside paper 000's calculator (:mod:`dpcore.papers.p000_proactive.explore`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from dpcore.explore.static import Axis, StaticGrid
from dpcore.explore.widgets import Explorer, View, finish_axes, plain_log_axes
from dpcore.papers.p001_isrl import accounting as isrl
from dpcore.validation import check_open_unit, check_positive, check_positive_int

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "ISRL_DEFAULTS", "isrl_noise", "isrl_tight_epsilon", "draw_isrl", "build_isrl", "static_series", "STATIC_GRIDS",
]  # fmt: skip

#: App. I's MNIST setting: n = 1238 records per silo, R = 35 rounds, M = 25 silos per round, ε = 1.5, δ = 1/n².
ISRL_DEFAULTS: dict[str, Any] = dict(n=1238, rounds=35, batch_size=0, silos=25, epsilon=1.5, log10_delta=-6.185)


def _isrl_inputs(n: int, rounds: int, batch_size: int, silos: int, epsilon: float, log10_delta: float):
    n = check_positive_int("n", n, maximum=10**7)
    rounds = check_positive_int("rounds", rounds, maximum=isrl.MAX_ROUNDS)
    silos = check_positive_int("silos", silos, maximum=10**6)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_open_unit("delta", 10.0 ** float(log10_delta))
    batch_size = check_positive_int("batch_size", batch_size, minimum=0, maximum=n)
    k = batch_size or isrl.batch_size_experiments(n, rounds, epsilon)  # 0: App. I's rule
    return n, rounds, k, silos, epsilon, delta


def isrl_noise(*, n: int, rounds: int, batch_size: int, silos: int, epsilon: float, log10_delta: float) -> View:
    """Per-silo noise σ of ISRL-DP MB-SGD (L = 1): ``sigma[experiments]`` (App. I), ``sigma[theory]`` (Thm D.1),
    ``K`` (``batch_size``, or App. I's rule K = n·sqrt(ε/(4R)) when 0) and ``K_theory_min`` (Thm D.1's smallest K)."""
    n, rounds, k, silos, epsilon, delta = _isrl_inputs(n, rounds, batch_size, silos, epsilon, log10_delta)
    kw = dict(lipschitz=1.0, rounds=rounds, n=n, epsilon=epsilon, delta=delta, batch_size=k)
    values = {
        "sigma[experiments]": isrl.noise_std(formula="experiments", **kw),
        "sigma[theory]": isrl.noise_std(formula="theory", **kw),
        "K": float(k),
        "K_theory_min": float(isrl.batch_size_theory_min(n, rounds, epsilon, delta)),
    }
    labels = {
        "sigma[experiments]": "σ per silo, App. I (experiments, 'moments accountant')",
        "sigma[theory]": "σ per silo, Theorem D.1 (advanced composition)",
        "K": "K records per round" + (" (App. I's rule)" if not batch_size else ""),
        "K_theory_min": "Theorem D.1's smallest K",
    }
    notes = (
        f"L = 1 (gradients clipped to 1); ε = {epsilon:g}, δ = {delta:.3g}",
        f"M = {silos} silos per round changes nothing: ISRL-DP gets no amplification from silo sampling",
        "the tight per-silo ε of the App. I σ (PLD over R rounds) takes seconds: press the button",
    )
    curve = []
    for e in [epsilon * f for f in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)]:
        kw_e = {**kw, "epsilon": e}
        curve.append((e, isrl.noise_std(formula="experiments", **kw_e), isrl.noise_std(formula="theory", **kw_e)))
    title = f"ISRL-DP MB-SGD noise per silo: n={n}, R={rounds}, K={k}"
    return View(values=values, labels=labels, notes=notes, data=curve, title=title)


@functools.lru_cache(maxsize=64)
def _tight(sigma: float, k: int, n: int, rounds: int, delta: float) -> float:
    return float(isrl.mbsgd_epsilon(noise_std=sigma, lipschitz=1.0, batch_size=k, n=n, rounds=rounds, delta=delta))


def isrl_tight_epsilon(*, n: int, rounds: int, batch_size: int, silos: int, epsilon: float, log10_delta: float) -> View:
    """The tight replace-one ε of one silo's R messages with App. I's σ (``eps_tight``;
    :func:`~dpcore.papers.p001_isrl.accounting.mbsgd_epsilon`), against the target ε."""
    n, rounds, k, silos, epsilon, delta = _isrl_inputs(n, rounds, batch_size, silos, epsilon, log10_delta)
    sigma = isrl.noise_std(lipschitz=1.0, rounds=rounds, n=n, epsilon=epsilon, delta=delta, batch_size=k)
    value = _tight(sigma, k, n, rounds, delta)
    label = f"tight ε per silo (PLD, replace-one) of the App. I σ; target ε = {epsilon:g}"
    note = (
        "rigorous (pessimistic PLD); below the target: App. I's calibration is conservative"
        if value <= epsilon
        else "rigorous (pessimistic PLD); ABOVE the target: App. I's calibration does not deliver the target"
    )
    return View(values={"eps_tight": value}, labels={"eps_tight": label}, notes=(note,))


def draw_isrl(view: View, fig: Figure) -> None:
    """σ per silo against the target ε, both calibrations."""
    ax = fig.add_subplot(1, 1, 1)
    eps, exp_, theory = zip(*view.data, strict=True)
    ax.plot(eps, exp_, marker="o", label="App. I (experiments)")
    ax.plot(eps, theory, marker="s", ls="--", label="Theorem D.1 (theory)")
    plain_log_axes(ax, x=False)
    finish_axes(ax, view.title, "target ε per silo", "σ per silo")


def build_isrl(**overrides: Any) -> Explorer:
    """The ISRL-DP per-silo noise calculator at :data:`ISRL_DEFAULTS` (tight ε on demand)."""
    import ipywidgets as w

    v = {**ISRL_DEFAULTS, **overrides}
    common = dict(continuous_update=False, style={"description_width": "9em"}, layout=w.Layout(width="26em"))
    controls = {
        "n": w.IntSlider(value=v["n"], min=10, max=100_000, description="records per silo n", **common),
        "rounds": w.IntSlider(value=v["rounds"], min=1, max=1_000, description="rounds R", **common),
        "batch_size": w.IntSlider(value=v["batch_size"], min=0, max=5_000, description="K (0: App. I rule)",
                                  **common),
        "silos": w.IntSlider(value=v["silos"], min=1, max=1_000, description="silos per round M", **common),
        "epsilon": w.FloatLogSlider(value=v["epsilon"], base=10, min=-1, max=1.3, step=0.02, description="ε per silo",
                                    readout_format=".3g", **common),
        "log10_delta": w.FloatSlider(value=v["log10_delta"], min=-10, max=-2, step=0.001, description="log10 δ",
                                     readout_format=".3f", **common),
    }  # fmt: skip
    return Explorer("Paper 001: ISRL-DP noise per silo", controls, isrl_noise, draw_isrl,
                    on_demand=("tight ε of this σ (PLD)", isrl_tight_epsilon))  # fmt: skip


def static_series(view: View) -> dict[str, tuple[list[float], list[float]]]:
    """The lines of :func:`draw_isrl`, σ per silo against the target ε (the static site's plot,
    :mod:`dpcore.explore.static`)."""
    eps, experiments, theory = zip(*view.data, strict=True)
    return {"App. I (experiments)": (list(eps), list(experiments)), "Theorem D.1 (theory)": (list(eps), list(theory))}


#: The static site's grid (issue 54): ε per silo × rounds R × records per silo n, K by App. I's rule, M = 25, App. I's
#: δ (72 points of :func:`isrl_noise`).
STATIC_GRIDS: tuple[StaticGrid, ...] = (
    StaticGrid(
        title="Paper 001: ISRL-DP per-silo noise σ (K by App. I's rule, M = 25)",
        compute=isrl_noise,
        axes=(
            Axis("epsilon", "ε per silo", (0.25, 0.5, 1.0, 1.5, 3.0, 6.0), default=3),
            Axis("rounds", "rounds R", (10, 35, 100, 500), default=1),
            Axis("n", "records per silo n", (100, 1238, 10_000), default=1),
        ),
        fixed={k: ISRL_DEFAULTS[k] for k in ("batch_size", "silos", "log10_delta")},
        series=static_series,
        x_label="target ε per silo",
        y_label="σ per silo",
        log_y=True,
        dashed=("Theorem D.1 (theory)",),
    ),
)
