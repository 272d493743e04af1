"""Paper 000's non-convex figures (3, 6, 9, 10, 13, 14) rendered from the results of ``000_mnist`` / ``000_cifar10``.

van Dijk, N. V. Nguyen, T. N. Nguyen, L. M. Nguyen, P. H. Nguyen, "Proactive DP", Sec. 4 and App. D.2–D.3: test
accuracy of the asynchronous DP-SGD against the number of gradient computations per client, for the sample sizes
of Tables 4/5 (Figs 3b, 9, 10) and the privacy budgets of Tables 7/8 plus non-private (Figs 3c, 13, 14), and the
utility graphs (Figs 3a, 6).  Everything here reads the result files (:mod:`dpcore.experiments.store`); nothing
trains.  A run without a result is listed as missing on its figure and makes its claims ``not-run``.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dpcore.experiments.config import STEP_SCALINGS, config_hash
from dpcore.experiments.registry import get
from dpcore.experiments.store import Store, decode_float
from dpcore.papers.p000_proactive import tables
from dpcore.papers.p000_proactive import training as t0
from dpcore.plots import log_scale_if_wide, new_axes, not_run, series_style

__all__ = [
    "NAMES",
    "reduced_note",
    "run_frame",
    "history_frame",
    "utility_frame",
    "missing_runs",
    "s_sweep_figure",
    "eps_sweep_figure",
    "utility_figure",
    "fig03",
    "claim_values",
    "WHY_QUANTITIES",
    "READINGS",
    "mode_frame",
    "why_differs_figure",
]

NAMES = {"mnist": "MNIST", "cifar10": "CIFAR-10"}
_EPS_KEYS = ("paper", "theorem", "standard", "standard_all_clients")


def _check_dataset(dataset: str) -> str:
    if dataset not in t0.EXPERIMENTS:
        raise ValueError(f"dataset must be one of {', '.join(map(repr, t0.EXPERIMENTS))}; got {dataset!r}")
    return dataset


def reduced_note(profile: str) -> str:
    """How the profile shrinks the paper's runs (figure footers): per data set its sizes, n, k and the s rule."""
    parts = []
    for dataset in t0.EXPERIMENTS:
        sc = t0._scale(dataset, profile)
        train = "all" if sc.train_size is None else str(sc.train_size)
        test = "all" if sc.test_size is None else str(sc.test_size)
        s_rule = f"s = {sc.fixed_s} fixed" if sc.fixed_s is not None else "s × N/N_paper"
        parts.append(f"{NAMES[dataset]} {train} train / {test} test, n = {sc.clients}, k = {sc.epochs}, {s_rule}")
    return "; ".join(parts)


def _kind(name: str) -> str:
    return name.split("/", 1)[0]


def _check_step_scaling(step_scaling: str) -> str:
    if step_scaling not in STEP_SCALINGS:
        raise ValueError(f"step_scaling must be one of {STEP_SCALINGS}, got {step_scaling!r}")
    return step_scaling


def _mode_runs(exp: Any, profile: str, store: Store, step_scaling: str) -> list[tuple[Any, str]]:
    """(planned run, its name without the mode prefix) of the runs under ``step_scaling``."""
    prefix = "" if _check_step_scaling(step_scaling) == "sum" else f"{step_scaling}/"
    return [(run, run.name[len(prefix):]) for run in exp.runs(profile, store.load)
            if run.config.step_scaling == step_scaling]  # fmt: skip


def run_frame(
    dataset: str, profile: str, *, results_root: str | Path | None = None, step_scaling: str = "sum"
) -> pd.DataFrame:
    """One row per planned run under ``step_scaling`` (issue 21; "sum" is the default reading): name, kind (s / eps /
    nonprivate), status, s (paper's and run's), σ, C, the Table 7/8 label, final and best accuracy, wall seconds,
    and ε under each accountant (value and label).  ``base`` is the name without the mode prefix."""
    exp = get(t0.EXPERIMENTS[_check_dataset(dataset)])
    store = Store.default(profile, exp.name, results_root=results_root)
    sc = t0._scale(dataset, profile)
    eps_of = {t0.eps_run_name(dataset, e): e for e in sc.eps_labels}
    rows = []
    for run, base in _mode_runs(exp, profile, store, step_scaling):
        cfg = run.config
        res = store.load(cfg)
        row: dict[str, Any] = {
            "run": run.name, "base": base, "step_scaling": step_scaling, "kind": _kind(base),
            "status": "done" if res is not None else "todo",
            "hash": config_hash(cfg), "s": cfg.batch_size, "sigma": cfg.noise_multiplier, "clip_norm": cfg.clip_norm,
            "eps_label": eps_of.get(base, math.nan), "N": sc.N, "clients": cfg.clients, "note": run.note,
        }  # fmt: skip
        row["s_paper"] = int(base.split("/")[1]) if row["kind"] == "s" else math.nan
        for key in ("final_accuracy", "best_accuracy", "wall_seconds"):
            row[key] = decode_float((res or {}).get(key))
        for key in _EPS_KEYS:
            eps = (res or {}).get("epsilon", {}).get(key, {})
            row[f"epsilon_{key}"] = decode_float(eps.get("value"))
            row[f"epsilon_{key}_label"] = eps.get("label")
        rows.append(row)
    return pd.DataFrame(rows)


def history_frame(
    dataset: str, profile: str, *, results_root: str | Path | None = None, step_scaling: str = "sum"
) -> pd.DataFrame:
    """One row per (finished run under ``step_scaling``, evaluation): run, epochs done, gradient computations per
    client, accuracy, loss."""
    exp = get(t0.EXPERIMENTS[_check_dataset(dataset)])
    store = Store.default(profile, exp.name, results_root=results_root)
    n = t0._scale(dataset, profile).N
    rows = []
    for run, _ in _mode_runs(exp, profile, store, step_scaling):
        res = store.load(run.config)
        for h in (res or {}).get("history", []):
            rows.append({"run": run.name, "epochs_done": float(h["epochs_done"]),
                         "gradients": float(h["epochs_done"]) * n, "accuracy": decode_float(h["accuracy"]),
                         "loss": decode_float(h["loss"])})  # fmt: skip
    return pd.DataFrame(rows, columns=["run", "epochs_done", "gradients", "accuracy", "loss"])


def utility_frame(
    dataset: str,
    profile: str,
    *,
    results_root: str | Path | None = None,
    step_scaling: str = "sum",
    reading: str = "printed",
) -> pd.DataFrame:
    """The utility graph of every finished noiseless run under ``step_scaling``: C, σ, mean and sd over draws of the
    test accuracy of w* + N(0, (f·Cσ)² I), w*'s accuracy and the accuracy fraction (mean / w*'s).  ``reading`` picks
    f: "printed" (f = 1, App. D.2) or one of :func:`~dpcore.papers.p000_proactive.training.last_round_factors`'
    last-round scales ("last_round_sum", "last_round_mean"; empty for results written before issue 21)."""
    if reading not in ("printed", "last_round_sum", "last_round_mean"):
        raise ValueError(f"reading must be 'printed', 'last_round_sum' or 'last_round_mean', got {reading!r}")
    exp = get(t0.EXPERIMENTS[_check_dataset(dataset)])
    store = Store.default(profile, exp.name, results_root=results_root)
    rows = []
    for run, _ in _mode_runs(exp, profile, store, step_scaling):
        res = store.load(run.config)
        util = (res or {}).get("utility")
        if not util:
            continue
        if reading == "printed":
            curve, factor = util["accuracy"], 1.0
        elif reading in util.get("readings", {}):
            curve, factor = util["readings"][reading]["accuracy"], float(util["readings"][reading]["factor"])
        else:
            continue
        base = float(util["base_accuracy"])
        for sigma, accs in zip(util["sigmas"], curve, strict=True):
            a = np.asarray(accs, dtype=float)
            rows.append({"run": run.name, "reading": reading, "factor": factor,
                         "clip_norm": float(util["clip_norm"]), "sigma": float(sigma),
                         "mean": float(a.mean()), "sd": float(a.std(ddof=1)) if a.size > 1 else 0.0,
                         "draws": int(a.size), "base_accuracy": base,
                         "fraction": float(a.mean()) / base if base > 0 else math.nan})  # fmt: skip
    return pd.DataFrame(rows, columns=["run", "reading", "factor", "clip_norm", "sigma", "mean", "sd", "draws",
                                       "base_accuracy", "fraction"])  # fmt: skip


def missing_runs(runs: pd.DataFrame) -> list[str]:
    """Names of planned runs without a result."""
    if not isinstance(runs, pd.DataFrame) or not {"run", "status"} <= set(runs.columns):
        raise ValueError("runs must be run_frame(...)")
    return sorted(runs.loc[runs["status"] != "done", "run"])


def _eps_text(row: Mapping[str, Any]) -> str:
    def f(v: float) -> str:
        return "n/a" if math.isnan(v) else ("∞" if math.isinf(v) else f"{v:.3g}")

    return (f"ε paper {f(row['epsilon_paper'])}, thm {f(row['epsilon_theorem'])}, "
            f"PLD {f(row['epsilon_standard'])}")  # fmt: skip


def _missing_text(ax: Axes, names: list[str]) -> None:
    if names:
        ax.text(0.01, 0.01, "missing: " + ", ".join(names), transform=ax.transAxes, fontsize=7, color="firebrick",
                va="bottom", wrap=True)  # fmt: skip


def _curves(ax: Axes, runs: pd.DataFrame, history: pd.DataFrame, labels: dict[str, str], metric: str) -> pd.DataFrame:
    plotted = []
    for k, (name, label) in enumerate(labels.items()):
        h = history[history["run"] == name].sort_values("gradients")
        if h.empty:
            continue
        y = 100 * h["accuracy"] if metric == "accuracy" else h["loss"]
        ax.plot(h["gradients"], y, label=label, **series_style(k, n=max(len(labels), 2)))
        plotted.append(h.assign(curve=label))
    _missing_text(ax, [n for n in labels if n in set(runs.loc[runs["status"] != "done", "run"])])
    ax.set_xlabel("gradient computations per client")
    ax.set_ylabel("test accuracy (%)" if metric == "accuracy" else "test loss")
    if plotted:
        ax.legend(fontsize=6.5, loc="best", framealpha=0.85)
    return pd.concat(plotted, ignore_index=True) if plotted else pd.DataFrame()


def _s_labels(runs: pd.DataFrame) -> dict[str, str]:
    sel = runs[runs["kind"] == "s"].sort_values("s_paper")
    return {r["run"]: f"s = {r['s']} (paper {int(r['s_paper'])}), σ = {r['sigma']:g}; {_eps_text(r)}"
            for _, r in sel.iterrows()}  # fmt: skip


def _eps_labels(runs: pd.DataFrame) -> dict[str, str]:
    sel = runs[runs["eps_label"].notna()].sort_values("eps_label")
    out = {r["run"]: f"Table ε = {r['eps_label']:g}: σ = {r['sigma']:g}, s = {r['s']}; {_eps_text(r)}"
           for _, r in sel.iterrows()}  # fmt: skip
    base = runs[(runs["kind"] == "nonprivate") & (runs["clip_norm"] == t0.CLIP)]
    for _, r in base.iterrows():
        out[r["run"]] = f"non-private (C = {r['clip_norm']:g}, σ = 0), s = {r['s']}"
    return out


#: issue 25's floor for a reduced non-private MNIST run (percent); other data sets have none here
NONPRIVATE_FLOOR_PCT = {"mnist": 90.0}


def _floor_note(ax: Axes, dataset: str, runs: pd.DataFrame, history: pd.DataFrame, has_full: bool,
                where: str = "in the right panel") -> None:  # fmt: skip
    """On a reduced run's accuracy panel: the non-private final accuracy against the data set's floor (MNIST) and
    why it is missed, or (no floor) that it stays near chance at this budget; ``where`` the committed full-scale
    runs are drawn."""
    base = runs[(runs["kind"] == "nonprivate") & (runs["clip_norm"] == t0.CLIP) & (runs["status"] == "done")]
    if base.empty:
        return
    r = base.iloc[0]
    acc = 100 * float(r["final_accuracy"])
    grads = history.loc[history["run"] == r["run"], "gradients"].max()
    budget = f"{grads:,.0f} gradient computations per client"
    floor = NONPRIVATE_FLOOR_PCT.get(dataset)
    if floor is not None and acc < floor:
        note = (f"non-private {acc:.1f} % < the {floor:g} % floor: {budget} are too few for the paper's η̄ and C = "
                f"{r['clip_norm']:g} (quick budget)")  # fmt: skip
    elif floor is None and acc < 20.0:
        note = f"non-private {acc:.1f} %: near chance after {budget} (quick budget), a pipeline check only"
    else:
        return
    tail = f"; the committed full-scale runs are {where}" if has_full else "; no full-scale run is committed"
    ax.set_xlabel(ax.get_xlabel() + "\n" + textwrap.fill(note + tail, 75), fontsize=7)


def _sweep_figure(dataset: str, labels: dict[str, str], heading: str, runs: pd.DataFrame, history: pd.DataFrame,
                  title: str, committed: tuple[pd.DataFrame, pd.DataFrame] | None,
                  full_labels: Callable[[pd.DataFrame], dict[str, str]]) -> tuple[Figure, pd.DataFrame]:  # fmt: skip
    panels = 2 if committed is None else 3
    fig, axes = new_axes(panels, 1, width=6.0 * panels, height=4.6)
    data = _curves(axes[0, 0], runs, history, labels, "accuracy")
    _curves(axes[0, 1], runs, history, labels, "loss")
    log_scale_if_wide(axes[0, 1])  # a diverging run would flatten the others on a linear axis
    axes[0, 0].set_title(heading)
    axes[0, 1].set_title("test loss")
    if committed is not None:
        full_runs, full_history = committed
        full = _curves(axes[0, 2], full_runs, full_history, full_labels(full_runs), "accuracy")
        axes[0, 2].set_title("full scale, committed (results/paper/): test accuracy")
        if full.empty:
            not_run(axes[0, 2], "no committed full-scale result")
        else:
            data = pd.concat([data.assign(scale="reduced"), full.assign(scale="full, committed")], ignore_index=True)
        _floor_note(axes[0, 0], dataset, runs, history, has_full=not full.empty)
    if title:
        fig.suptitle(title)
    return fig, data


def _committed(committed: tuple[pd.DataFrame, pd.DataFrame] | None) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    if committed is None:
        return None
    if (not isinstance(committed, tuple) or len(committed) != 2
            or not all(isinstance(f, pd.DataFrame) for f in committed)):  # fmt: skip
        raise ValueError("committed must be (run_frame(dataset, 'paper'), history_frame(dataset, 'paper')) or None")
    return committed


def s_sweep_figure(
    dataset: str, runs: pd.DataFrame, history: pd.DataFrame, *, title: str = "",
    committed: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> tuple[Figure, pd.DataFrame]:  # fmt: skip
    """Figs 9 / 10 (and 3b): test accuracy and loss against gradient computations, one curve per s (Table 4/5).

    ``committed`` (a reduced profile): the paper profile's (run_frame, history_frame), drawn in a third panel
    "full scale, committed" (issue 25); the reduced accuracy panel then says when the non-private run misses
    the 90 % floor."""
    heading = f"{NAMES[dataset]}: different constant sample sizes s"
    return _sweep_figure(dataset, _s_labels(runs), heading, runs, history, title, _committed(committed), _s_labels)


def eps_sweep_figure(
    dataset: str, runs: pd.DataFrame, history: pd.DataFrame, *, title: str = "",
    committed: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> tuple[Figure, pd.DataFrame]:  # fmt: skip
    """Figs 13 / 14 (and 3c): test accuracy against gradient computations for the Table 7/8 rows and non-private
    (``committed``: as :func:`s_sweep_figure`)."""
    heading = f"{NAMES[dataset]}: privacy budgets of Table {'7' if dataset == 'mnist' else '8'} and non-DP"
    return _sweep_figure(dataset, _eps_labels(runs), heading, runs, history, title, _committed(committed), _eps_labels)


def _utility_axes(ax: Axes, dataset: str, util: pd.DataFrame, runs: pd.DataFrame,
                  committed: pd.DataFrame | None = None) -> None:  # fmt: skip
    for k, (clip, g) in enumerate(util.groupby("clip_norm")):
        g = g.sort_values("sigma")
        ax.errorbar(g["sigma"], g["fraction"], yerr=g["sd"] / g["base_accuracy"], capsize=2,
                    label=f"C = {clip:g} (w* {100 * g['base_accuracy'].iloc[0]:.1f} %, {int(g['draws'].max())} draws)",
                    **series_style(k, n=5))  # fmt: skip
    if committed is not None and len(committed):
        for k, (clip, g) in enumerate(committed.groupby("clip_norm")):
            g = g.sort_values("sigma")
            ax.plot(g["sigma"], g["fraction"], linestyle=":", marker="o", markerfacecolor="none",
                    color=series_style(k, n=5)["color"],
                    label=f"C = {clip:g}: full scale, committed (w* {100 * g['base_accuracy'].iloc[0]:.1f} %)")
    ax.axhline(0.9, color="0.4", linestyle=":", linewidth=1)
    printed = 12.0 if dataset == "mnist" else 6.572
    ax.axvline(printed, color="0.4", linestyle="--", linewidth=1, label=f"paper's σ ≤ {printed:g} (≤ 10 % drop)")
    _missing_text(ax, [n for n in missing_runs(runs) if n.startswith("nonprivate/")])
    ax.set(xlabel="σ (noise N(0, C²σ² I) added to w*)", ylabel="accuracy fraction acc(w*+n)/acc(w*)",
           title=f"{NAMES[dataset]}: utility graph")  # fmt: skip
    ax.legend(fontsize=6.5, loc="best")


def utility_figure(panels: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]], *, title: str = "",
                   committed: Mapping[str, pd.DataFrame] | None = None) -> Figure:  # fmt: skip
    """Fig. 6: one utility graph per data set (``{dataset: (utility_frame, run_frame)}``), curves per C, ± sd.

    ``committed`` (a reduced profile): ``{dataset: utility_frame(dataset, "paper")}``, drawn dotted with hollow
    markers and labelled "full scale, committed" (issue 25)."""
    if not panels:
        raise ValueError("panels must name at least one data set")
    if committed is not None and (not isinstance(committed, Mapping)
                                  or not all(isinstance(f, pd.DataFrame) for f in committed.values())):
        raise ValueError("committed must map data sets to utility_frame(dataset, 'paper') frames, or be None")
    fig, axes = new_axes(len(panels), 1, width=6.0 * len(panels), height=4.4)
    for ax, (dataset, (util, runs)) in zip(axes[0], panels.items(), strict=True):
        _utility_axes(ax, _check_dataset(dataset), util, runs, None if committed is None else committed.get(dataset))
    if title:
        fig.suptitle(title)
    return fig


def _fig03_row(axes: Any, runs: pd.DataFrame, history: pd.DataFrame, util: pd.DataFrame, scale: str) -> pd.DataFrame:
    """One row of Fig. 3's three panels; ``scale`` ("" or e.g. "full scale, committed") prefixes the titles.
    Returns the plotted curves of panels (b) and (c)."""
    _utility_axes(axes[0], "mnist", util, runs)
    curves = [_curves(axes[1], runs, history, _s_labels(runs), "accuracy").assign(panel="b"),
              _curves(axes[2], runs, history, _eps_labels(runs), "accuracy").assign(panel="c")]
    prefix = f"{scale}: " if scale else ""
    for ax, heading in zip(axes, ("(a) utility graph", "(b) different s (Table 4)",
                                  "(c) different ε (Table 7) and non-DP"), strict=True):  # fmt: skip
        ax.set_title(prefix + heading)
    return pd.concat(curves, ignore_index=True)


def fig03(runs: pd.DataFrame, history: pd.DataFrame, util: pd.DataFrame, *, title: str = "",
          committed: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame] | None = None) -> Figure:  # fmt: skip
    """Fig. 3 (paper 000, MNIST, non-convex): (a) utility graph, (b) different s, (c) different ε and non-private.

    ``committed`` (a reduced profile, issue 41): the paper profile's ``(run_frame, history_frame, utility_frame)``
    of MNIST, drawn as a second row titled "full scale, committed (results/paper/)" beneath the first, titled
    "reduced check"; panel (c) of the reduced row then says when its non-private run misses the 90 % floor."""
    if committed is not None and (not isinstance(committed, tuple) or len(committed) != 3
                                  or not all(isinstance(f, pd.DataFrame) for f in committed)):  # fmt: skip
        raise ValueError("committed must be (run_frame('mnist', 'paper'), history_frame('mnist', 'paper'), "
                         "utility_frame('mnist', 'paper')) or None")
    rows = 1 if committed is None else 2
    fig, axes = new_axes(3, rows, width=16.0, height=4.8 * rows)
    _fig03_row(axes[0], runs, history, util, "" if committed is None else "reduced check")
    if committed is not None:
        full_runs, full_history, full_util = committed
        full = _fig03_row(axes[1], full_runs, full_history, full_util, "full scale, committed (results/paper/)")
        if full.empty:
            for ax in axes[1, 1:]:
                not_run(ax, "no committed full-scale result")
        _floor_note(axes[0, 2], "mnist", runs, history, has_full=not full.empty, where="in the lower row")
    if title:
        fig.suptitle(title)
    return fig


# --------------------------------------------------------------------------- why ours differs (issue 21)
#: the MNIST quantities of the "why ours differs" figure: (label, base run name, claim key of the printed value)
WHY_QUANTITIES: tuple[tuple[str, str, str | None], ...] = (
    ("ε = 0.15 (Table 7 row 1, s = 370)", "s/370", "nonconvex.mnist.eps0.15.accuracy_pct"),
    ("ε = 2 (Table 7)", "eps/2", None),
    ("non-private (C = 0.025)", "nonprivate/C0.025", "nonconvex.mnist.nonprivate.accuracy_pct"),
)
#: the readings of paper 000's step (RunConfig.step_scaling) and how the figures name them
READINGS = {"sum": "η̄·U (Algorithm 4 as printed)", "mean": "η̄·U/s (§2: step ∝ 1/s; step_scaling=mean)"}


def mode_frame(frames: Mapping[str, pd.DataFrame], printed: Mapping[str, float]) -> pd.DataFrame:
    """One row per (quantity of :data:`WHY_QUANTITIES`, reading): printed value, our final accuracy (%, NaN when the
    run has no result), the run, and its ε (paper mode, PLD per client).  ``frames``: ``{step_scaling: run_frame}``;
    ``printed``: ``{claim key: printed value}``."""
    if not frames or any(k not in STEP_SCALINGS for k in frames):
        raise ValueError(f"frames must map step scalings ({STEP_SCALINGS}) to run frames, got {sorted(frames)}")
    rows = []
    for label, base, key in WHY_QUANTITIES:
        for mode, runs in frames.items():
            hit = runs[runs["base"] == base]
            done = hit[hit["status"] == "done"]
            row = {"quantity": label, "reading": mode, "run": hit["run"].iloc[0] if len(hit) else None,
                   "printed": float(printed[key]) if key is not None else math.nan,
                   "ours": 100 * float(done["final_accuracy"].iloc[0]) if len(done) else math.nan,
                   "epsilon_paper": float(done["epsilon_paper"].iloc[0]) if len(done) else math.nan,
                   "epsilon_standard": float(done["epsilon_standard"].iloc[0]) if len(done) else math.nan}  # fmt: skip
            rows.append(row)
    return pd.DataFrame(rows)


def why_differs_figure(modes: pd.DataFrame, utilities: Mapping[str, pd.DataFrame], *, title: str = "") -> Figure:
    """Why ours differs (MNIST): (a) printed vs ours under each reading of the step, ε per bar; (b) the utility graph
    at C = 0.025 under the printed perturbation N(0, C²σ² I) and the noise the last round really adds
    (``utilities``: ``{reading: utility_frame}``)."""
    from dpcore.plots_why import why_differs_bars

    fig, axes = new_axes(2, 1, width=14.0, height=5.0)
    quantities = list(dict.fromkeys(modes["quantity"]))
    readings = list(dict.fromkeys(modes["reading"]))
    ours = [[float(modes[(modes["quantity"] == q) & (modes["reading"] == r)]["ours"].iloc[0]) for q in quantities]
            for r in readings]  # fmt: skip

    def eps(r: str, q: str) -> str:
        row = modes[(modes["quantity"] == q) & (modes["reading"] == r)].iloc[0]
        if math.isinf(row["epsilon_standard"]):
            return "ε = ∞"
        return f"ε {row['epsilon_paper']:.3g} (PLD {row['epsilon_standard']:.2g})"

    printed = [float(modes[modes["quantity"] == q]["printed"].iloc[0]) for q in quantities]
    why_differs_bars(axes[0, 0], quantities, printed, [READINGS[r] for r in readings], ours,
                     [[eps(r, q) for q in quantities] for r in readings], ylabel="final test accuracy (%)")  # fmt: skip
    axes[0, 0].set_title("(a) printed vs ours, per reading of the step (ε: paper mode, PLD per client)", fontsize=9)
    ax = axes[0, 1]
    for k, (reading, util) in enumerate(utilities.items()):
        u = util[util["clip_norm"] == t0.CLIP].sort_values("sigma") if len(util) else util
        if u.empty:
            ax.plot([], [], label=f"{reading}: not run", **series_style(k, n=max(len(utilities), 2)))
            continue
        f = float(u["factor"].iloc[0])
        style = series_style(k, n=max(len(utilities), 2))
        ax.errorbar(u["sigma"], u["fraction"], yerr=u["sd"] / u["base_accuracy"], capsize=2,
                    label=f"{reading}: w* + N(0, ({f:.3g}·Cσ)² I)", **style)  # fmt: skip
    ax.axhline(0.9, color="0.4", linestyle=":", linewidth=1)
    ax.axvline(12.0, color="0.4", linestyle="--", linewidth=1)
    ax.set(xlabel="σ", ylabel="accuracy fraction acc(w*+n)/acc(w*)",
           title="(b) utility graph, C = 0.025: printed reading vs the last round's noise")  # fmt: skip
    ax.legend(fontsize=6.5, loc="lower left")
    if title:
        fig.suptitle(title)
    return fig


# --------------------------------------------------------------------------- claims
def _final(runs: pd.DataFrame, name: str) -> float | None:
    hit = runs[(runs["run"] == name) & (runs["status"] == "done")]
    return None if hit.empty else 100 * float(hit["final_accuracy"].iloc[0])


def claim_values(dataset: str, runs: pd.DataFrame, util: pd.DataFrame) -> dict[str, tuple[Any, str]]:
    """``{claim key: (our value or None, note)}`` for the non-convex claims of ``dataset`` (percent for accuracies).

    Accuracies are the final evaluation's (the paper's curves end there).  ``None`` where a run it needs is
    missing (the note says which).
    """
    _check_dataset(dataset)
    out: dict[str, tuple[Any, str]] = {}
    base = f"nonconvex.{dataset}"
    np_name = f"nonprivate/C{t0.CLIP:g}"
    nonprivate = _final(runs, np_name)
    sweep = runs[runs["kind"] == "s"].sort_values("s_paper")
    done = sweep[sweep["status"] == "done"]
    lost = sorted(set(sweep["run"]) - set(done["run"]))
    accs = {int(r["s_paper"]): 100 * float(r["final_accuracy"]) for _, r in done.iterrows()}
    acc_text = ", ".join(f"s_paper {s}: {a:.2f}" for s, a in accs.items())

    def need(names: list[str]) -> str:
        return f"missing runs: {', '.join(names)}" if names else ""

    if len(accs) >= 2 and not lost:
        lo, hi = min(accs), max(accs)
        out[f"{base}.larger_s_better"] = (accs[hi] > accs[lo], f"final accuracy (%) {acc_text}")
    else:
        out[f"{base}.larger_s_better"] = (None, need(lost) or "fewer than two s values in this profile")
    eps_rows = runs[runs["eps_label"].notna()].sort_values("eps_label")
    eps_lost = sorted(eps_rows.loc[eps_rows["status"] != "done", "run"])
    if len(eps_rows) >= 2 and not eps_lost:
        lo, hi = eps_rows.iloc[0], eps_rows.iloc[-1]
        a_lo, a_hi = 100 * float(lo["final_accuracy"]), 100 * float(hi["final_accuracy"])
        out[f"{base}.larger_eps_better"] = (a_hi > a_lo, f"final accuracy (%) at ε {lo['eps_label']:g}: {a_lo:.2f}, "
                                                          f"at ε {hi['eps_label']:g}: {a_hi:.2f}")  # fmt: skip
    else:
        out[f"{base}.larger_eps_better"] = (None, need(eps_lost) or "fewer than two ε values in this profile")
    out[f"{base}.nonprivate.accuracy_pct"] = (nonprivate, need([] if nonprivate is not None else [np_name]))
    u = util[util["clip_norm"] == t0.CLIP] if len(util) else util
    sigma_cap = 12.0 if dataset == "mnist" else 6.572
    if len(u):
        worst = u[u["sigma"] <= sigma_cap + 1e-9]["fraction"].min()
        note = f"smallest accuracy fraction for σ ≤ {sigma_cap:g}: {worst:.3f}"
        out[f"{base}.utility.drop_le_10pct"] = (bool(worst >= 0.9), note)
    else:
        out[f"{base}.utility.drop_le_10pct"] = (None, need([np_name]))
    if dataset == "mnist":
        first = _final(runs, t0.eps_run_name("mnist", 0.15007))
        out[f"{base}.eps0.15.accuracy_pct"] = (first, "" if first is not None else need(["s/370"]))
        if 10 in accs and not lost:
            others = [a for s, a in accs.items() if s != 10]
            out[f"{base}.s10_worst"] = (accs[10] < min(others), f"final accuracy (%) {acc_text}")
        else:
            out[f"{base}.s10_worst"] = (None, need(lost) or "s = 10 is not in this profile's sweep")
        within = None if first is None or nonprivate is None else bool(first >= nonprivate - 10.0)
        out[f"{base}.s370_within_10pct"] = (within, "" if within is not None else need([np_name, "s/370"]))
    else:
        eps2 = _final(runs, t0.eps_run_name("cifar10", 2.0))
        out[f"{base}.eps2.accuracy_pct"] = (eps2, "" if eps2 is not None else need(["eps/2"]))
        big = [accs.get(s) for s in (300, 500, 689)]
        small = [accs.get(s) for s in (10, 25, 50)]
        full = all(a is not None for a in big + small) and not lost
        note = f"final accuracy (%) {acc_text}" if full else (need(lost) or "not all of them in this profile's sweep")
        out[f"{base}.s300_689_best"] = ((max(big) >= max(accs.values())) if full else None, note)  # type: ignore[type-var]
        out[f"{base}.s50_worse"] = ((max(small) < min(big)) if full else None, note)  # type: ignore[type-var]
        out.update(cifar10_sec5_values(runs, nonprivate, eps2, need))
    modes = set(runs["step_scaling"]) if "step_scaling" in runs.columns else {"sum"}
    tag = "; ".join(f"reading: {READINGS[m]}" for m in sorted(modes))
    return {key: (value, f"{note}; {tag}" if note else tag) for key, (value, note) in out.items()}


def cifar10_sec5_values(runs: pd.DataFrame, nonprivate: float | None, eps2: float | None,
                        need: Callable[[list[str]], str]) -> dict[str, tuple[Any, str]]:  # fmt: skip
    """Paper 000's CIFAR-10 statements of Sec. 5 / App. D.3.2 (Fig. 14) from the final accuracies (percent):
    the "14.14 %" deduction (non-private minus ε = 2), "ε ≈ 0.5 loses < 10 %" (ε = 0.5 within 10 points of the
    non-private run) and "≈ 60 % for ε ∈ [0.5, 3]" (the smallest final accuracy over Table 8's rows with ε in
    [0.5, 3]).  ``nonprivate`` / ``eps2`` are those runs' final accuracies or ``None``; a value whose runs are
    missing is ``None`` with ``need(missing run names)`` as its note."""
    if not callable(need):
        raise ValueError(f"need must be callable, got {need!r}")
    base = "nonconvex.cifar10"
    out: dict[str, tuple[Any, str]] = {}
    np_name = f"nonprivate/C{t0.CLIP:g}"
    if nonprivate is None or eps2 is None:
        lost = [n for n, v in ((np_name, nonprivate), ("eps/2", eps2)) if v is None]
        out[f"{base}.deduction_epoch7_pct"] = (None, need(lost))
    else:
        out[f"{base}.deduction_epoch7_pct"] = (nonprivate - eps2, f"non-private {nonprivate:.2f}, ε = 2 {eps2:.2f}")
    half = _final(runs, t0.eps_run_name("cifar10", 0.5))
    if half is None or nonprivate is None:
        lost = [n for n, v in ((np_name, nonprivate), (t0.eps_run_name("cifar10", 0.5), half)) if v is None]
        out[f"{base}.eps0.5_within_10pct"] = (None, need(lost))
    else:
        out[f"{base}.eps0.5_within_10pct"] = (bool(half >= nonprivate - 10.0),
                                              f"ε = 0.5 {half:.2f}, non-private {nonprivate:.2f}")  # fmt: skip
    labels = [e for e, _, _ in tables.TABLES_6_8["Table 8"][1] if 0.5 <= e <= 3.0]
    finals = {e: _final(runs, t0.eps_run_name("cifar10", e)) for e in labels}
    lost = [t0.eps_run_name("cifar10", e) for e, v in finals.items() if v is None]
    if lost:
        out[f"{base}.about60_eps0.5_3"] = (None, need(lost))
    else:
        text = ", ".join(f"ε {e:g}: {v:.2f}" for e, v in finals.items())
        out[f"{base}.about60_eps0.5_3"] = (min(finals.values()), f"final accuracy (%) {text}")  # type: ignore[type-var]
    return out


#: a comparison of runs is undecidable when every run it compares ends below this multiple of chance (10 classes)
CHANCE_FLOOR = 2.0
_CHANCE = 10.0  # percent: MNIST and CIFAR-10 have 10 balanced classes


def undecided(dataset: str, runs: pd.DataFrame) -> dict[str, str]:
    """``{claim key: reason}`` for the orderings of :func:`claim_values` the runs cannot decide (issue 41): both
    values a comparison turns on end below :data:`CHANCE_FLOOR` × chance (20 %), so which one is "better" is noise.

    ``larger_s_better`` turns on the largest and the smallest s of the sweep, ``s10_worst`` on s = 10 and the
    lowest of the others, ``larger_eps_better`` on the largest and the smallest ε.  A key is absent when a run it
    needs is missing (the claim is then not run) or when one of its two values is above the floor.
    """
    _check_dataset(dataset)
    floor = CHANCE_FLOOR * _CHANCE
    base = f"nonconvex.{dataset}"
    out: dict[str, str] = {}

    def finals(rows: pd.DataFrame, by: str) -> dict[float, float] | None:
        done = rows[rows["status"] == "done"]
        if done.empty or len(done) < len(rows):
            return None
        return {float(r[by]): 100 * float(r["final_accuracy"]) for _, r in done.iterrows()}

    def verdict(a: tuple[str, float], b: tuple[str, float]) -> str:
        if max(a[1], b[1]) >= floor:
            return ""
        return (f"the two runs it compares end below {floor:g} % ({CHANCE_FLOOR:g}x chance): {a[0]} {a[1]:.2f} %, "
                f"{b[0]} {b[1]:.2f} %")  # fmt: skip

    s_acc = finals(runs[runs["kind"] == "s"], "s_paper")
    if s_acc and len(s_acc) >= 2:
        lo, hi = min(s_acc), max(s_acc)
        reason = verdict((f"s = {hi:g}", s_acc[hi]), (f"s = {lo:g}", s_acc[lo]))
        if reason:
            out[f"{base}.larger_s_better"] = reason
        if dataset == "mnist" and 10.0 in s_acc:
            other = min((s for s in s_acc if s != 10.0), key=lambda s: s_acc[s])
            reason = verdict(("s = 10", s_acc[10.0]), (f"s = {other:g}", s_acc[other]))
            if reason:
                out[f"{base}.s10_worst"] = reason
    e_acc = finals(runs[runs["eps_label"].notna()], "eps_label")
    if e_acc and len(e_acc) >= 2:
        lo, hi = min(e_acc), max(e_acc)
        reason = verdict((f"ε = {hi:g}", e_acc[hi]), (f"ε = {lo:g}", e_acc[lo]))
        if reason:
            out[f"{base}.larger_eps_better"] = reason
    return out


def paper_s_values(dataset: str) -> tuple[int, ...]:
    """The s values of Table 4 / 5 (for notes)."""
    return tables.TABLE_3_5["Table 4" if _check_dataset(dataset) == "mnist" else "Table 5"][4]
