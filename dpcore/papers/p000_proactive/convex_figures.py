"""Paper 000 (van Dijk et al., "Proactive DP"): figures of the convex experiments (Figs 1, 2, 4, 5, 7, 8, 11, 12)
and the flow chart of the proactive framework (Fig. 15), drawn from the frames of
:mod:`~dpcore.papers.p000_proactive.convex`.  Every figure names its stand-in data set in its title.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpcore.plots import new_axes, series_style

__all__ = [
    "METRICS",
    "utility_panel",
    "history_panel",
    "utility_figure",
    "sweep_figure",
    "epsilon_figure",
    "overview_figure",
    "flow_chart_figure",
    "loop_figure",
]

#: metric column -> axis label
METRICS = {"accuracy": "test accuracy", "balanced_accuracy": "balanced test accuracy"}
_FRACTION = {"accuracy": "fraction", "balanced_accuracy": "balanced_fraction"}
_K_LABEL = "gradient computations per client"


def _check(name: str, frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    frame = pd.DataFrame(frame)
    if frame.empty:
        raise ValueError(f"{name} must be a non-empty table")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks columns {missing}")
    return frame


def utility_panel(ax, curves: pd.DataFrame, objective: str, metric: str = "accuracy", *, legend: bool = True) -> None:
    """Accuracy fraction test-acc(w* + N(0, C²σ² I))/test-acc(w*) against σ, one curve per C, ± 1 sd band."""
    col = _FRACTION[metric]
    curves = _check("curves", curves, ("objective", "C", "sigma", col, f"{col}_sd"))
    grp = curves[curves.objective == objective]
    for i, (clip, g) in enumerate(grp.groupby("C")):
        st = series_style(i, markers=False)
        ax.plot(g.sigma, g[col], color=st["color"], ls=st["linestyle"], lw=1.6, label=f"C = {clip:g}")
        ax.fill_between(g.sigma, g[col] - g[f"{col}_sd"], g[col] + g[f"{col}_sd"], color=st["color"], alpha=0.12)
    ax.axhline(0.9, color="0.3", ls=":", lw=1.0, label="10 % drop")
    ax.set(xlabel="σ", ylabel=f"{METRICS[metric]} fraction", title=f"{objective}: utility graph")
    if legend:
        ax.legend(fontsize=7, ncol=2)


def history_panel(
    ax,
    history: pd.DataFrame,
    objective: str,
    key: str,
    metric: str = "accuracy",
    labels: dict | None = None,
    *,
    legend: bool = True,
) -> None:
    """``metric`` against gradient computations, one curve per value of ``key`` (mean over seeds, min–max band)."""
    history = _check("history", history, ("objective", key, "seed", "samples", metric))
    grp = history[history.objective == objective]
    for i, (value, g) in enumerate(grp.groupby(key, sort=True)):
        agg = g.groupby("samples")[metric].agg(["mean", "min", "max"]).reset_index()
        st = series_style(i, markers=False)
        label = (labels or {}).get(value, f"{key} = {value}")
        ax.plot(agg.samples, agg["mean"], color=st["color"], ls=st["linestyle"], lw=1.5, label=label)
        ax.fill_between(agg.samples, agg["min"], agg["max"], color=st["color"], alpha=0.12)
    ax.set(xlabel=_K_LABEL, ylabel=METRICS[metric])
    if legend:
        ax.legend(fontsize=7)


def utility_figure(curves: pd.DataFrame, *, title: str) -> Figure:
    """Figs 4/5: utility graphs, strongly (left) and plain convex (right); accuracy (top) and balanced accuracy."""
    objectives = list(dict.fromkeys(curves.objective))
    fig, axes = new_axes(len(objectives), 2, width=5.2 * len(objectives), height=7.6)
    for j, obj in enumerate(objectives):
        for i, metric in enumerate(METRICS):
            utility_panel(axes[i, j], curves, obj, metric, legend=i == 0 and j == 0)
    fig.suptitle(title, fontsize=10)
    return fig


def sweep_figure(history: pd.DataFrame, key: str, *, title: str, labels: dict | None = None) -> Figure:
    """Figs 7/8 (key ``s``): a curve per value of ``key``; rows objectives, columns accuracy / balanced accuracy."""
    objectives = list(dict.fromkeys(history.objective))
    fig, axes = new_axes(2, len(objectives), width=11.0, height=3.6 * len(objectives))
    for i, obj in enumerate(objectives):
        for j, metric in enumerate(METRICS):
            history_panel(axes[i, j], history, obj, key, metric, labels, legend=i == 0 and j == 0)
            axes[i, j].set_title(f"{obj}: {METRICS[metric]}", fontsize=9)
    fig.suptitle(title, fontsize=10)
    return fig


def _epsilon_labels(history: pd.DataFrame) -> dict:
    labels = {}
    for (mode, eps), g in history.groupby(["mode", "epsilon_label"]):
        if np.isinf(eps):
            labels[mode] = mode
        else:
            labels[f"ε = {eps:g}"] = f"ε = {eps:g} (σ = {g.sigma.iloc[0]:.3f}, s = {int(g.s.iloc[0])})"
    return labels


def _with_curve(history: pd.DataFrame, mode: str) -> pd.DataFrame:
    part = history[(history["mode"] == mode) | history["mode"].str.startswith("non-private")].copy()
    part["curve"] = np.where(np.isinf(part.epsilon_label), part["mode"],
                             [f"ε = {e:g}" for e in part.epsilon_label])  # fmt: skip
    return part


_MODE_LEGENDS = ("outside lower left", "outside lower right")  # one legend per mode, under its columns


def epsilon_figure(history: pd.DataFrame, *, title: str, modes=("paper", "theorem")) -> Figure:
    """Figs 11/12: a curve per Table 6 row and the non-private runs; rows objectives, columns (mode × metric).
    Each mode's legend sits below the panels (under its columns when there are two modes), off the data."""
    objectives = list(dict.fromkeys(history.objective))
    fig, axes = new_axes(2 * len(modes), len(objectives), width=5.0 * len(modes) * 2, height=3.9 * len(objectives))
    for m, mode in enumerate(modes):
        part = _with_curve(history, mode)
        labels = {k: v for k, v in _epsilon_labels(history[history["mode"] == mode]).items()}
        labels.update({v: v for v in part["mode"].unique() if v.startswith("non-private")})
        what = "Table 6 as printed" if mode == "paper" else "theorem-faithful (eq. (6), γ*)"
        for i, obj in enumerate(objectives):
            for j, metric in enumerate(METRICS):
                ax = axes[i, 2 * m + j]
                history_panel(ax, part, obj, "curve", metric, labels, legend=False)
                ax.set_title(f"{obj}: {what}", fontsize=8)
        handles, names = axes[0, 2 * m].get_legend_handles_labels()
        loc = _MODE_LEGENDS[m] if len(modes) <= len(_MODE_LEGENDS) else "outside lower center"
        fig.legend(handles, names, loc=loc, ncols=2, fontsize=7, title=what, title_fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    return fig


def overview_figure(
    curves: pd.DataFrame, s_history: pd.DataFrame, eps_history: pd.DataFrame, objective: str, *, title: str
) -> Figure:
    """Figs 1/2: (a) utility graph, (b) different s, (c) different ε (Table 6 as printed + non-private);
    accuracy on top, balanced accuracy below."""
    fig, axes = new_axes(3, 2, width=15.0, height=7.8)
    part = _with_curve(eps_history, "paper")
    labels = _epsilon_labels(eps_history[eps_history["mode"] == "paper"])
    labels.update({v: v for v in part["mode"].unique() if v.startswith("non-private")})
    for i, metric in enumerate(METRICS):
        utility_panel(axes[i, 0], curves, objective, metric, legend=i == 0)
        axes[i, 0].set_title(f"(a) utility graph: {METRICS[metric]}", fontsize=9)
        history_panel(axes[i, 1], s_history, objective, "s", metric, legend=i == 0)
        axes[i, 1].set_title(f"(b) different s (ε = 0.04945, σ = 19.29962): {METRICS[metric]}", fontsize=9)
        history_panel(axes[i, 2], part, objective, "curve", metric, labels, legend=i == 0)
        axes[i, 2].set_title(f"(c) different ε (Table 6): {METRICS[metric]}", fontsize=9)
    fig.suptitle(title, fontsize=10)
    return fig


# --------------------------------------------------------------------------- Fig. 15
_BOXES = (
    ("utility", 0.15, 0.80, "Utility Graph\nnon-private clipped SGD → w*;\nacc(w* + N(0, C²σ²I)) / acc(w*)\n"
                            "→ pairs (C_i, R_i), K"),
    ("calculator", 0.50, 0.80, "DP Calculator (App. E.1)\nlargest σ ∈ R_i; ε by eq. (6) ≤ ε_target?\n"
                               "max s (Thm B.4), T = K/s"),
    ("dpsgd", 0.85, 0.80, "FLwithDP\nasynchronous DP-SGD, T rounds\n(Algorithms 2–4)"),
    ("check", 0.85, 0.38, "accuracy of the last global\nmodel on the client's test set\n≥ acc_target ?"),
    ("stop", 0.85, 0.06, "stop participating"),
    ("lower", 0.50, 0.38, "lower σ (may raise C), continue:\nearlier rounds re-counted at the new σ;\n"
                          "K = ΣK_j, θ = max s_j / s̄"),
    ("abort", 0.15, 0.38, "ε > ε_target or no admissible s:\nabort (footnote 8)"),
)  # fmt: skip
_ARROWS = (
    ("utility", "calculator", "(C_i, R_i), K", 0.0),
    ("calculator", "dpsgd", "σ, s, T", 0.0),
    ("dpsgd", "check", "final global model", 0.0),
    ("check", "stop", "yes", 0.0),
    ("check", "lower", "no", 0.0),
    ("lower", "calculator", "σ_{j+1} < σ_j, K_{j+1}", 0.0),
    ("calculator", "abort", "", 0.0),
)


def flow_chart_figure(numbers: dict[str, str] | None = None, *, title: str) -> Figure:
    """Fig. 15: the flow chart of the proactive (asynchronous) DP-SGD framework (App. E), drawn with matplotlib.
    ``numbers`` (box key -> text) adds the values of one real run as a last line of the boxes."""
    fig, axes = new_axes(1, 1, width=12.0, height=6.4)
    ax = axes[0, 0]
    ax.set_axis_off()
    ax.set(xlim=(0, 1), ylim=(-0.05, 1.0))
    boxes, centre = {}, {}
    for key, x, y, text in _BOXES:
        colour = {"stop": "#d5f5e3", "abort": "#fadbd8", "lower": "#fdebd0"}.get(key, "#d6eaf8")
        if numbers and key in numbers:
            text += "\n" + numbers[key]
        boxes[key] = ax.text(x, y, text, ha="center", va="center", fontsize=8.5, zorder=3,
                             bbox={"boxstyle": "round,pad=0.6", "fc": colour, "ec": "0.3"})  # fmt: skip
        centre[key] = (x, y)
    for a, b, label, rad in _ARROWS:
        ax.annotate(
            "", xy=(0.5, 0.5), xycoords=boxes[b], xytext=(0.5, 0.5), textcoords=boxes[a], zorder=4,
            arrowprops={"arrowstyle": "-|>", "color": "0.25", "lw": 1.3, "shrinkA": 3, "shrinkB": 3,
                        "patchA": boxes[a].get_bbox_patch(), "patchB": boxes[b].get_bbox_patch(),
                        "connectionstyle": f"arc3,rad={rad}"},
        )  # fmt: skip
        if label:
            (x0, y0), (x1, y1) = centre[a], centre[b]
            ax.text((x0 + x1) / 2 + (0.012 if x0 == x1 else 0), (y0 + y1) / 2 + (0.03 if y0 == y1 else 0), label,
                    fontsize=8, color="0.15", ha="left" if x0 == x1 else "center")  # fmt: skip
    ax.set_title(title, fontsize=10)
    return fig


def loop_figure(loop: pd.DataFrame, *, title: str) -> Figure:
    """App. E run once: per phase the σ, s, ε of the calculator and the accuracy reached against the target."""
    loop = _check("loop", loop, ("phase", "status"))
    fig, axes = new_axes(2, 1, width=11.0, height=3.8)
    ran = loop.dropna(subset=["accuracy"]) if "accuracy" in loop else loop.iloc[0:0]
    ax = axes[0, 0]
    if not ran.empty:
        metric = ran["metric"].iloc[0]
        ax.bar(ran.phase - 0.2, ran.accuracy, width=0.4, label="test accuracy")
        ax.bar(ran.phase + 0.2, ran.balanced_accuracy, width=0.4, label="balanced test accuracy")
        ax.axhline(ran.target.iloc[0], color="0.2", ls="--", lw=1.0, label=f"target ({METRICS[metric]})")
        ax.set_xticks(ran.phase)
    ax.set(xlabel="phase j", ylabel="accuracy after the phase", ylim=(0, 1), title="accuracy check per phase")
    ax.legend(fontsize=7, loc="lower right")
    ax = axes[0, 1]
    ax.set_axis_off()
    lines = []
    for _, r in loop.iterrows():
        if pd.notna(r.get("s", np.nan)):
            lines.append(f"phase {int(r.phase)}: C = {r.C:g}, σ = {r.sigma:.3f}, s = {int(r.s)}, T = {int(r.rounds)}")
            lines.append(f"  ε = {r.epsilon:.4f} (target {r.epsilon_target:g}), γ = {r.gamma:.3f}, θ = {r.theta:.3f}")
            lines.append(f"  K so far = {int(r.K_total):,}; {METRICS[r.metric]} {r[r.metric]:.4f}")
        lines.append(f"  → {r.status}")
    ax.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", fontsize=7.5, family="monospace")
    fig.suptitle(title, fontsize=10)
    return fig
