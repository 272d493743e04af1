"""Paper 002, issue 22: where Table I's gap goes, and what Table I's ε leaves out.

Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix", Table I (§5.1, CIFAR-10, the
Tramèr-Boneh ScatterNet CNN).  Two readings of committed results, nothing trains here:

* :func:`normalization_budget_frame` -- the ε a Table I run spends once the authors' private data normalisation
  (Tramèr and Boneh's two Gaussian releases with ``bn_noise_multiplier`` = 8, which §5.1 prices at ε = 0.695) is
  composed with its training (RDP, :func:`dpcore.training.private_norm.composed_epsilon`).  The paper's column
  ε can only be the training's: at ε = 0.2 the normalisation alone costs more than the column.
* :func:`gap_frame` / :func:`gap_figure` -- per (method, ε) of the ``002_ablation`` experiment
  (:func:`training.plan_ablation`): the printed cell, our Table I median, then one factor at a time toward the
  authors' code (reporting metric, private normalisation, p = 100, T) and all of them, each bar with the ε of
  what ran (training alone, and the total with the normalisation where one was released).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from dpcore.experiments.store import Store
from dpcore.papers.p002_modelmix.claims import TABLE1_EPSILONS, TABLE1_PRINTED
from dpcore.papers.p002_modelmix.training import AUTHORS_BN_NOISE, DELTA, paper_epsilon
from dpcore.plots import new_axes
from dpcore.training.private_norm import NormalizationRecord, composed_epsilon
from dpcore.validation import check_choice

__all__ = [
    "BUDGET_EPSILONS",
    "GAP_EPSILONS",
    "GAP_READINGS",
    "normalization_budget_frame",
    "budget_claim_values",
    "gap_frame",
    "gap_figure",
    "gap_notes",
    "authors_reading_frame",
]

#: Table I columns whose ε budget is checked against the authors' normalisation (the ablation's two ε)
BUDGET_EPSILONS = (0.2, 1.0)
GAP_EPSILONS = (0.2, 1.0)
_METHOD = {"dpsgd": "[19]", "mm": "DP-SGD + MM"}
#: the bars of the gap figure after the printed one: (reading key, label, ablation factor or None, readout)
GAP_READINGS: dict[str, tuple[str, str | None, str]] = {
    "table1": ("ours: Table I setting (GroupNorm, final iterate, median of the seeds)", None, "final"),
    "metric": ("+ authors' readout (best max(current, previous), early stop)", "metric", "authors"),
    "norm": ("+ private normalisation (final)", "norm", "final"),
    "trunc": ("+ l_inf truncation p = 100 (final)", "trunc", "final"),
    "steps": ("+ T of the code (final)", "steps", "final"),
    "all": ("authors' configuration (final)", "all", "final"),
    "all_authors": ("authors' configuration, authors' readout", "all", "authors"),
}


def _check_profile(profile: str) -> str:
    return check_choice("profile", profile, ("quick", "paper"))


def normalization_budget_frame(profile: str, *, results_root: Any = None) -> pd.DataFrame:
    """Per Table I CIFAR-10 cell with ε in :data:`BUDGET_EPSILONS` and a finished run (the first seed that has one):
    the ε of its training under its own accountant, evaluated now on the stored record ("epsilon_reported", the
    column's ε: :func:`training.paper_epsilon`), and under one RDP composition (Balle et al. conversion,
    δ = 1e-5) the training alone, the authors' normalisation alone
    (two releases, σ = :data:`training.AUTHORS_BN_NOISE`, on the run's n) and both ("epsilon_total").

    Rows without a finished run have NaN values and ``run`` = "".  ModelMix's training RDP is its own accountant's
    (:mod:`dpcore.accounting.modelmix`)."""
    from dpcore.experiments.registry import get

    profile = _check_profile(profile)
    store = Store.default(profile, "002_table1", results_root=results_root)
    plan = get("002_table1").runs(profile, store.load)
    rows = []
    for method in ("dpsgd", "mm"):
        for eps in BUDGET_EPSILONS:
            row: dict[str, Any] = {"method": method, "target_eps": eps, "run": "", "epsilon_reported": math.nan,
                                   "epsilon_training_rdp": math.nan, "epsilon_normalization": math.nan,
                                   "epsilon_total": math.nan, "description": ""}  # fmt: skip
            prefix = f"cifar10/{method}/eps{eps:g}/seed"
            for planned in plan:
                result = store.load(planned.config) if planned.name.startswith(prefix) else None
                if result is None:
                    continue
                record = result["record"]
                norm = NormalizationRecord.planned(AUTHORS_BN_NOISE, int(record["dataset_size"]))
                composed = composed_epsilon(record, norm, DELTA)
                row.update({"run": planned.name, "epsilon_reported": paper_epsilon(record, planned.config).value,
                            "epsilon_training_rdp": composed.training, "epsilon_normalization": composed.normalization,
                            "epsilon_total": composed.total, "description": composed.description})  # fmt: skip
                break
            rows.append(row)
    return pd.DataFrame(rows)


def budget_claim_values(budget: pd.DataFrame) -> dict[str, tuple[float | None, str]]:
    """Claim values ``table1.cifar10.<method>.eps<ε>.total_with_normalization`` (None where no run finished)."""
    need = {"method", "target_eps", "run", "epsilon_reported", "epsilon_training_rdp", "epsilon_normalization",
            "epsilon_total"}  # fmt: skip
    if not isinstance(budget, pd.DataFrame) or not need <= set(budget.columns):
        raise ValueError(f"budget must be a frame from normalization_budget_frame with columns {sorted(need)}")
    out: dict[str, tuple[float | None, str]] = {}
    for _, r in budget.iterrows():
        key = f"table1.cifar10.{r['method']}.eps{r['target_eps']:g}.total_with_normalization"
        if not r["run"]:
            out[key] = (None, "no Table I run of this cell has a result")
            continue
        note = (f"run {r['run']}: training eps {r['epsilon_reported']:.4g} (its own accountant; "
                f"{r['epsilon_training_rdp']:.4g} under the RDP composition) + the authors' normalisation "
                f"{r['epsilon_normalization']:.4g} (2 releases, sigma = {AUTHORS_BN_NOISE:g}) = "
                f"{r['epsilon_total']:.4g} (RDP, Balle et al. conversion, delta = {DELTA:g}); data-dependent median "
                "thresholds not accounted, as in Tramer-Boneh's code")
        out[key] = (float(r["epsilon_total"]), note)
    return out


def authors_reading_frame(ablation: pd.DataFrame) -> pd.DataFrame:
    """Per Table I CIFAR-10 (method, ε) the ablation run of the authors' whole configuration (factor "all"; at
    ε = ∞ the non-private run "authors", shown for both methods): its final-iterate and authors'-readout accuracy
    (%), the ε of its training (its own accountant) and the total once the private normalisation it releases is
    counted (paper 002, Table I and §5.1; issue 41: the reading that comes closest is priced with its
    normalisation).  ``status`` is "done" or "not run"; a (method, ε) without a planned run has no row.
    ``ablation`` is :func:`training.ablation_frame`'s frame."""
    need = {"method", "target_eps", "factor", "status", "final_pct", "authors_pct", "epsilon_training",
            "epsilon_total"}  # fmt: skip
    if not isinstance(ablation, pd.DataFrame) or not need <= set(ablation.columns):
        raise ValueError(f"ablation must be a frame from training.ablation_frame with columns {sorted(need)}")
    rows = []
    for method in ("dpsgd", "mm"):
        for eps in TABLE1_EPSILONS:
            if math.isinf(eps):
                hit = ablation[(ablation["method"] == "nonprivate") & ablation["target_eps"].map(math.isinf)]
            else:
                hit = ablation[(ablation["method"] == method) & (ablation["target_eps"] == eps)
                               & (ablation["factor"] == "all")]  # fmt: skip
            if hit.empty:
                continue
            h = hit.iloc[0]
            done = h["status"] == "done"
            rows.append({"method": method, "eps": float(eps), "status": "done" if done else "not run",
                         **{c: float(h[c]) if done else math.nan
                            for c in ("final_pct", "authors_pct", "epsilon_training", "epsilon_total")}})  # fmt: skip
    return pd.DataFrame(rows, columns=["method", "eps", "status", "final_pct", "authors_pct", "epsilon_training",
                                       "epsilon_total"])  # fmt: skip


# ---------------------------------------------------------------------------------------------- where the gap goes
def _readout(row: Mapping[str, Any], readout: str) -> float:
    return float(row["final_pct"] if readout == "final" else row["authors_pct"])


def gap_frame(ablation: pd.DataFrame, table1: pd.DataFrame) -> pd.DataFrame:
    """One row per (reading of :data:`GAP_READINGS`, method, ε of :data:`GAP_EPSILONS`): the printed Table I
    accuracy, ours (%) under the reading, the ε of the training that ran (its own accountant), the total with the
    normalisation (equal to it without one), the run and its status ("done", "not run").

    ``ablation`` is :func:`training.ablation_frame`'s frame, ``table1`` :func:`training.median_frame`'s (the
    "table1" reading: the median final-iterate accuracy over the seeds at our Table I setting)."""
    need_a = {"run", "method", "target_eps", "factor", "status", "final_pct", "authors_pct", "epsilon_training",
              "epsilon_total"}  # fmt: skip
    need_t = {"key", "method", "target_eps", "median_pct", "seeds_done", "seeds_planned", "epsilon"}
    if not isinstance(ablation, pd.DataFrame) or not need_a <= set(ablation.columns):
        raise ValueError(f"ablation must be a frame from training.ablation_frame with columns {sorted(need_a)}")
    if not isinstance(table1, pd.DataFrame) or not need_t <= set(table1.columns):
        raise ValueError(f"table1 must be a frame from training.median_frame with columns {sorted(need_t)}")
    rows = []
    for reading, (label, factor, readout) in GAP_READINGS.items():
        for method in ("dpsgd", "mm"):
            for eps in GAP_EPSILONS:
                printed = TABLE1_PRINTED[("cifar10", method)][TABLE1_EPSILONS.index(eps)]
                row: dict[str, Any] = {"reading": reading, "label": label, "method": method, "target_eps": eps,
                                       "cell": f"{_METHOD[method]}, ε = {eps:g}", "printed_pct": printed,
                                       "ours_pct": math.nan, "epsilon_training": math.nan,
                                       "epsilon_total": math.nan, "run": "", "status": "not run"}  # fmt: skip
                if factor is None:
                    hit = table1[(table1["key"] == "cifar10") & (table1["method"] == method)
                                 & (table1["target_eps"] == eps)]  # fmt: skip
                    if len(hit) and int(hit.iloc[0]["seeds_done"]) > 0:
                        h = hit.iloc[0]
                        row.update({"ours_pct": float(h["median_pct"]), "epsilon_training": float(h["epsilon"]),
                                    "epsilon_total": float(h["epsilon"]), "status": "done",
                                    "run": f"002_table1 cifar10/{method}/eps{eps:g} ({int(h['seeds_done'])} of "
                                           f"{int(h['seeds_planned'])} seeds)"})  # fmt: skip
                else:
                    hit = ablation[(ablation["method"] == method) & (ablation["target_eps"] == eps)
                                   & (ablation["factor"] == factor)]  # fmt: skip
                    if len(hit):
                        h = hit.iloc[0]
                        row["run"] = f"002_ablation {h['run']}"
                        if h["status"] == "done":
                            row.update({"ours_pct": _readout(h, readout), "status": "done",
                                        "epsilon_training": float(h["epsilon_training"]),
                                        "epsilon_total": float(h["epsilon_total"])})  # fmt: skip
                rows.append(row)
    return pd.DataFrame(rows)


def gap_notes(gap: pd.DataFrame, claim_values: Mapping[str, tuple[Any, str]]) -> dict[str, tuple[Any, str]]:
    """``claim_values`` (claim key -> (value, note), as the training report computes them) with the ablation
    readings of :func:`gap_frame` appended to the note of each Table I cell it covers (CIFAR-10, ε of
    :data:`GAP_EPSILONS`): "ablation (002_ablation, seed 0, full scale): <reading> <accuracy> % (ε ...)" per
    finished run, and the readings not run yet by name.  Values are unchanged: a reading is evidence beside the
    cell, never the cell's value."""
    need = {"reading", "method", "target_eps", "ours_pct", "status", "epsilon_training", "epsilon_total"}
    if not isinstance(gap, pd.DataFrame) or not need <= set(gap.columns):
        raise ValueError(f"gap must be a frame from gap_frame with columns {sorted(need)}")
    if not isinstance(claim_values, Mapping):
        raise ValueError("claim_values must be a mapping of claim key -> (value, note)")
    out = dict(claim_values)
    for (method, eps), cell in gap[gap["reading"] != "table1"].groupby(["method", "target_eps"], sort=False):
        key = f"table1.cifar10.{method}.eps{eps:g}"
        if key not in out:
            continue
        done = cell[cell["status"] == "done"]
        parts = [f"{r['reading']} {r['ours_pct']:.2f} % ({_eps_text(r)})" for _, r in done.iterrows()]
        missing = [str(r) for r in cell.loc[cell["status"] != "done", "reading"]]
        if missing:
            parts.append("not run yet: " + ", ".join(missing))
        value, note = out[key]
        out[key] = (value, f"{note}; ablation (002_ablation, seed 0, full scale, readings of the gap figure): "
                           + "; ".join(parts))  # fmt: skip
    return out


def _eps_text(row: Mapping[str, Any]) -> str:
    if row["status"] != "done":
        return ""
    text = f"ε {row['epsilon_training']:.3g}"
    if not math.isclose(float(row["epsilon_total"]), float(row["epsilon_training"]), rel_tol=1e-6):
        text += f" (total {row['epsilon_total']:.3g})"
    return text


def gap_figure(ablation: pd.DataFrame, table1: pd.DataFrame, *, title: str = "") -> tuple[Figure, pd.DataFrame]:
    """Issue 22's "where the gap goes" for Table I (CIFAR-10): per (method, ε) the printed accuracy, ours at our
    Table I setting, then each factor toward the authors' code alone and all together (:data:`GAP_READINGS`), each
    bar with the training ε of what ran and, with a private normalisation, the total ε.  Readings without a
    result are empty slots labelled "not run"; the x label lists the ablation runs still missing.  Returns the
    figure and :func:`gap_frame`."""
    from dpcore.plots_why import bar_inputs, why_differs_bars

    frame = gap_frame(ablation, table1)
    cells, printed, ours, eps_text, missing = bar_inputs(frame, list(GAP_READINGS), value="ours_pct",
                                                         eps_text=_eps_text)  # fmt: skip
    fig, axes = new_axes(1, 1, width=12.0, height=5.4)
    ax = axes[0, 0]
    why_differs_bars(ax, cells, printed, [v[0] for v in GAP_READINGS.values()], ours, eps_text,
                     ylabel="CIFAR-10 test accuracy (%)", missing_text=missing)  # fmt: skip
    ax.set_ylim(0, 150)  # room above the bars for the rotated labels, and above them for the legend
    ax.set_yticks(range(0, 101, 20))
    todo = {r for r in frame.loc[(frame["status"] != "done") & (frame["reading"] != "table1"), "run"]}
    planned = {r for r in frame.loc[frame["reading"] != "table1", "run"]}
    xlabel = (
        "Table I, CIFAR-10, Tramer-Boneh ScatterNet CNN; ablation runs (002_ablation): one seed (seed 0), "
        "full scale, committed; ours at the Table I setting: median of its seeds"
    )
    if todo:
        xlabel += f'; {len(todo)} of the {len(planned)} ablation runs drawn have no result yet ("not run")'
    ax.set_xlabel(textwrap.fill(xlabel, 150), fontsize=8)
    if title:
        ax.set_title(title)
    return fig, frame
