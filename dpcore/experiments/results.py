"""Read an experiment's results back: one row per planned run, finished or not (for notebooks and figures).

Runs without a result file are listed with ``status`` "todo" (ready to run) or "waiting" (their
configuration depends on unfinished runs), so a figure can say what is missing instead of hiding it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpcore.experiments.config import config_hash
from dpcore.experiments.registry import Experiment, get
from dpcore.experiments.store import Store, decode_float

__all__ = ["results_frame", "history_frame"]

_CONFIG_COLUMNS = ("dataset", "sampling", "clipping", "group_size", "batch_size", "clip_norm", "noise_multiplier",
                   "epochs", "seed", "eval_split")  # fmt: skip


def results_frame(
    experiment: str | Experiment, profile: str, *, results_root: str | Path | None = None
) -> pd.DataFrame:
    """One row per planned run: name, hash, status, configuration columns, summary, ε (value and label)."""
    exp = get(experiment) if isinstance(experiment, str) else experiment
    store = Store.default(profile, exp.name, results_root=results_root)
    rows = []
    for run in exp.runs(profile, store.load):
        cfg = run.config
        result = store.load(cfg) if run.ready else None
        row = {"run": run.name, "hash": config_hash(cfg), "note": run.note}
        row["status"] = "done" if result is not None else ("todo" if run.ready else "waiting")
        row.update({k: getattr(cfg, k) for k in _CONFIG_COLUMNS})
        row.update({k: (result or {}).get(k) for k in ("best_accuracy", "best_epoch", "final_accuracy", "final_loss",
                                                         "wall_seconds", "device")})  # fmt: skip
        for key in exp.accountants:
            eps = (result or {}).get("epsilon", {}).get(key, {})
            row[f"epsilon_{key}"] = decode_float(eps.get("value"))
            row[f"epsilon_{key}_label"] = eps.get("label")
        rows.append(row)
    return pd.DataFrame(rows)


def history_frame(
    experiment: str | Experiment, profile: str, *, results_root: str | Path | None = None
) -> pd.DataFrame:
    """One row per (finished run, epoch): run, epoch, lr, accuracy, loss on the evaluated split."""
    exp = get(experiment) if isinstance(experiment, str) else experiment
    store = Store.default(profile, exp.name, results_root=results_root)
    rows = []
    for run in exp.runs(profile, store.load):
        result = store.load(run.config) if run.ready else None
        if result is None:
            continue
        for h in result["history"]:
            rows.append({"run": run.name, "epoch": h["epoch"], "lr": h["lr"], "accuracy": decode_float(h["accuracy"]),
                         "loss": decode_float(h["loss"])})  # fmt: skip
    return pd.DataFrame(rows, columns=["run", "epoch", "lr", "accuracy", "loss"])
