"""Read an experiment's results back: one row per planned run, finished or not (for notebooks and figures).

Runs without a result file are listed with ``status`` "todo" (ready to run) or "waiting" (their
configuration depends on unfinished runs), so a figure can say what is missing instead of hiding it.

ε is re-evaluated on load: each accountant of the experiment is applied again to the run's stored
``RunRecord`` (the record holds everything an accountant needs), so a fix to an accountant reaches results
that were written before it; the value stored at training time stays beside it (``epsilon_<key>_stored``) and
``epsilon_<key>_changed`` says where the two differ.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from dpcore.experiments.config import config_hash
from dpcore.experiments.registry import Experiment, get
from dpcore.experiments.store import Store, decode_float

__all__ = ["results_frame", "history_frame"]

_CONFIG_COLUMNS = ("dataset", "sampling", "clipping", "group_size", "batch_size", "clip_norm", "noise_multiplier",
                   "epochs", "seed", "eval_split")  # fmt: skip


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def results_frame(
    experiment: str | Experiment,
    profile: str,
    *,
    results_root: str | Path | None = None,
    recompute_epsilon: bool = True,
) -> pd.DataFrame:
    """One row per planned run: name, hash, status, configuration columns, summary, ε (value and label).

    With ``recompute_epsilon`` (default) ``epsilon_<key>`` is the experiment's accountant ``key`` applied now to
    the stored record, ``epsilon_<key>_stored`` the value written at training time and ``epsilon_<key>_changed``
    whether they differ (relative 1e-9); with ``False`` the stored value is used as is.
    """
    if not isinstance(recompute_epsilon, bool):
        raise ValueError(f"recompute_epsilon must be a bool, got {recompute_epsilon!r}")
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
        for key, accountant in exp.accountants.items():
            eps = (result or {}).get("epsilon", {}).get(key, {})
            stored = decode_float(eps.get("value"))
            if result is not None and recompute_epsilon:
                if "record" not in result:
                    raise ValueError(f"result {row['hash']} of run {run.name!r} holds no RunRecord, so its ε cannot be "
                                     "re-evaluated; pass recompute_epsilon=False to use the stored value")  # fmt: skip
                now = accountant(result["record"], cfg).to_dict()
            else:
                now = eps
            row[f"epsilon_{key}"] = decode_float(now.get("value"))
            row[f"epsilon_{key}_label"] = now.get("label")
            row[f"epsilon_{key}_stored"] = stored
            row[f"epsilon_{key}_changed"] = result is not None and not _same(stored, row[f"epsilon_{key}"])
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
