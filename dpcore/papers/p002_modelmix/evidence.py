"""Paper 002's committed Table I runs as evidence for its trained claims (issue 50): results -> Run records.

Two experiments hold Table I's evidence: ``002_table1`` (the paper's stated setting: GroupNorm, p = 1, T = 700,
final iterate; 5 seeds per cell) and ``002_ablation`` (one factor of the authors' configuration at a time, seed 0).
Which reading is "the algorithm as printed" follows from the paper's text (issue 50): §5.1 spends ε = 0.695 on a
private normalisation of the features, so the reading that normalises that way (``norm``) is printed as well as the
stated setting; the authors' readout (``metric``: the best test accuracy over epochs), their truncation and steps
(``trunc``, ``steps``) and their whole configuration (``all``) are other readings, and so is the authors' non-private
configuration.  Every run is decided at its training ε (the paper's own accounting: ModelMix's for ModelMix): the
normalisation's extra ε is already the ``table1_normalisation`` erratum and is not counted again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from dpcore.verdicts import Control, Run, control_from_records

__all__ = ["CONTROL_PIPELINE", "READINGS", "evidence", "positive_control", "run_frame"]

#: the pipeline whose positive control (issue 51) vouches for Table I's CIFAR-10 block
CONTROL_PIPELINE = "paper 002's Table I CIFAR-10 block"
#: ablation reading -> (words, as printed?, the accuracy it reads: final iterate or the authors' best-epoch readout)
READINGS: dict[str, tuple[str, bool, str]] = {
    "table1": ("the stated setting (GroupNorm, p = 1, T = 700), final iterate", True, "final_accuracy"),
    "norm": ("the stated setting with §5.1's private normalisation, final iterate", True, "final_accuracy"),
    "metric": ("the authors' readout (best test accuracy over epochs)", False, "best_accuracy"),
    "trunc": ("the authors' truncation (p = 100)", False, "final_accuracy"),
    "steps": ("the authors' steps per epoch (T)", False, "final_accuracy"),
    "all": ("the authors' whole configuration, their readout", False, "best_accuracy"),
    "authors": ("the authors' non-private configuration (cnns.py defaults), their readout", False, "best_accuracy"),
}


def run_frame(profile: str, *, results_root: Any = None) -> pd.DataFrame:
    """One row per finished run of ``002_table1`` and ``002_ablation`` at ``profile``: run, experiment, data, method,
    column ε (``column``), reading, seed, value (percent), ε of the training under the paper's accounting, ε of all
    it released where a private normalisation adds to it (``released``, NaN otherwise), scale."""
    from dpcore.experiments.results import results_frame
    from dpcore.papers.p002_modelmix import training as t2  # noqa: F401  (registers the experiments)

    rows = []
    scale = "reduced" if t2.TABLE1[profile].reduced else "full"
    for experiment in ("002_table1", "002_ablation"):
        try:
            frame = results_frame(experiment, profile, results_root=results_root, recompute_epsilon=False)
        except (KeyError, ValueError):
            continue
        for _, r in frame[frame["status"] == "done"].iterrows():
            parts = r["run"].split("/")
            reading = "table1" if experiment == "002_table1" else parts[3]
            words, printed, column = READINGS[reading]
            eps_text = parts[2]
            rows.append({"run": f"{experiment}/{r['run']}", "hash": r["hash"], "data": parts[0], "method": parts[1],
                         "column": math.inf if eps_text == "eps_inf" else float(eps_text[3:]), "reading": words,
                         "printed": printed, "seed": int(r["seed"]), "value": round(100 * float(r[column]), 2),
                         "epsilon": float(r["epsilon_paper"]), "released": _released(r),
                         "scale": scale})  # fmt: skip
    return pd.DataFrame(rows, columns=["run", "hash", "data", "method", "column", "reading", "printed", "seed",
                                       "value", "epsilon", "released", "scale"])  # fmt: skip


def _released(row: Mapping[str, Any]) -> float:
    """ε of everything the run released where a private normalisation adds to the training's (``002_ablation``'s
    ``total`` accountant), NaN where nothing does: shown on the row, it never moves the run off its column (the
    normalisation's cost is the ``table1_normalisation`` erratum)."""
    total, training = row.get("epsilon_total"), float(row["epsilon_paper"])
    if total is None or not math.isfinite(float(total)) or float(total) <= training * (1 + 1e-6):
        return math.nan
    return float(total)


def evidence(frames: Iterable[pd.DataFrame]) -> dict[str, list[Run]]:
    """``{claim key: runs}`` for Table I's cells ``table1.<data>.<method>.eps<ε>``: the runs of that data set and
    column; a private cell's runs are its method's, the non-private cell (both rows print one number) takes its
    row's runs without noise and the authors' non-private configuration."""
    frames = [f for f in frames if len(f)]
    out: dict[str, list[Run]] = {}
    if not frames:
        return out
    frame = pd.concat(frames, ignore_index=True)
    for _, r in frame.iterrows():
        source = f"results/<profile>/{r['run'].split('/')[0]}/{r['hash']}.json"
        released = float(r.get("released", math.nan))
        setting = "" if math.isnan(released) else f"all releases ε {released:.3g} (erratum table1_normalisation)"
        run = Run(r["run"], r["reading"], float(r["value"]), float(r["epsilon"]), bool(r["printed"]), setting,
                  int(r["seed"]), r["scale"], source)  # fmt: skip
        col = "eps_inf" if math.isinf(r["column"]) else f"eps{r['column']:g}"
        methods = ("dpsgd", "mm") if r["method"] == "nonprivate" else (r["method"],)
        for method in methods:
            out.setdefault(f"table1.{r['data']}.{method}.{col}", []).append(run)
    return out


def positive_control(records: Iterable[Mapping]) -> Control | None:
    """The positive control of Table I's CIFAR-10 pipeline from the rows of issue 51's ``control_frame("paper")``
    (the notebook passes them); None when its runs are not there yet."""
    return control_from_records(records, CONTROL_PIPELINE)
