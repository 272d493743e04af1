"""Paper 003's committed runs as evidence for its trained claims (issue 50): results -> :class:`~dpcore.verdicts.Run`.

:func:`run_frame` reads every finished run of experiment ``003_table3`` (tuning runs left out) with the reading it
is (:func:`reading_of`: Algorithm 1 as printed, the authors' code under a named mode, an ablation), its setting,
best-epoch test accuracy in percent (Table 3's unit), ε(δ = 1e-5) under the paper's adversary A_1 of the noise that
ran and of the printed noise σ = 2 at the same setting (:func:`training.claimed_epsilon`: the printed level).
:func:`evidence` turns the frames of the paper profile (full scale) and, at a reduced profile, its own runs into the
:class:`~dpcore.verdicts.Run` records each trained claim of ``claims.py`` is decided from
(:meth:`dpcore.claims.ClaimsLog.decide`).  Nothing here is typed from a result: it is all read from ``results/``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from dpcore.verdicts import Control, Run, control_from_records

__all__ = ["MARGIN_PP", "RUN_COLUMNS", "evidence", "positive_control", "reading_of", "run_frame"]

#: the qualitative claims' margin in percentage points (claims.py states it in each check)
MARGIN_PP = 1.0
RUN_COLUMNS = ("run", "hash", "dataset", "sampling", "family", "batch_size", "clip_norm", "seed", "reading", "printed",
               "setting", "value", "epsilon", "epsilon_printed", "scale")  # fmt: skip
#: the pipeline of paper 003's MNIST grid in issue 51's control_frame (its ``pipelines`` text)
CONTROL_PIPELINE = "paper 003's MNIST grid"
_AS_PRINTED = "Algorithm 1 as printed"


def reading_of(name: str) -> tuple[str, bool]:
    """(reading, whether it is the algorithm as printed) of a run name of ``003_table3``:
    ``<data>/<SS|SH>/<family>/b<|S_b|>`` (a Table 3 cell, C tuned), ``.../full/C<c>`` and ``.../closest/seed<k>``
    (issue 51's full-length runs) and ``.../mode/largeC`` (C = 20 from the authors' large-C set, Algorithm 1's noise)
    are Algorithm 1 as printed; ``.../mode/lr_authors`` is the authors' learning-rate rule, ``.../mode/<other>`` the
    authors' code under that mode, ``.../ablation/<what>`` a labelled ablation: none of them as printed."""
    parts = name.split("/")
    if len(parts) < 4:
        raise ValueError(f"name must be <data>/<sampling>/<family>/b<size>[/...], got {name!r}")
    rest = parts[4:]
    if not rest or rest[0].startswith("seed") or rest[0] in ("full", "closest"):
        return _AS_PRINTED, True
    if rest[0] == "mode" and len(rest) > 1:
        if rest[1] == "largeC":
            return _AS_PRINTED, True
        if rest[1] == "lr_authors":
            return "the authors' learning-rate rule (mode lr_authors)", False
        return f"the authors' code (mode {rest[1]})", False
    if rest[0] == "ablation" and len(rest) > 1:
        return f"ablation {rest[1]} (not as printed)", False
    raise ValueError(f"unknown run kind in {name!r}")


def run_frame(profile: str, *, results_root: Any = None, recompute_epsilon: bool = True) -> pd.DataFrame:
    """One row per finished run of ``003_table3`` at ``profile`` (tuning runs left out): :data:`RUN_COLUMNS`.

    ``value``: best-epoch test accuracy in percent; ``epsilon``: A_1 ε(1e-5) of the noise that ran
    (:func:`training.paper_epsilon`); ``epsilon_printed``: the same at the printed σ (:func:`training.claimed_epsilon`;
    ∞ for a non-private run); ``scale``: ``reduced`` at a reduced profile, else ``full``.  With ``recompute_epsilon``
    False the ε stored at training time is used for both (result files without a record, e.g. in tests)."""
    from dpcore.experiments.config import config_hash
    from dpcore.experiments.registry import get
    from dpcore.experiments.store import Store, decode_float
    from dpcore.papers.p003_shuffling import training as t3

    exp = get(t3.EXPERIMENT)
    store = Store.default(profile, t3.EXPERIMENT, results_root=results_root)
    scale = "reduced" if t3.SETTINGS[profile].reduced else "full"
    rows, seen = [], set()
    for run in exp.runs(profile, store.load):
        if "/tune/" in run.name or not run.ready:
            continue
        result = store.load(run.config)
        if result is None:
            continue
        digest = config_hash(run.config)
        if digest in seen:  # the same configuration planned under two names: one run
            continue
        seen.add(digest)
        cfg = run.config
        if recompute_epsilon:
            record = result["record"]
            eps = float(t3.paper_epsilon(record, cfg).value) if cfg.private else math.inf
            eps_printed = float(t3.claimed_epsilon(record, cfg).value) if cfg.private else math.inf
        else:
            eps = eps_printed = decode_float(result.get("epsilon", {}).get("paper", {}).get("value"))
        parts = run.name.split("/")
        reading, printed = reading_of(run.name)
        if parts[2] == "NP" and printed:
            reading = "mini-batch SGD without DP, as printed"
        clip = float(cfg.clip_norm) if cfg.private else math.nan
        batch = int(parts[3][1:])
        rows.append({
            "run": run.name, "hash": digest, "dataset": parts[0], "sampling": parts[1], "family": parts[2],
            "batch_size": batch, "clip_norm": clip, "seed": int(cfg.seed), "reading": reading, "printed": printed,
            "setting": f"|S_b| = {batch}" + (f", C = {clip:g}" if cfg.private else ""),
            "value": round(100.0 * float(result["best_accuracy"]), 2),  # Table 3's unit (a test set resolves 0.01)
            "epsilon": eps, "epsilon_printed": eps_printed,
            "scale": scale,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


def _runs(frame: pd.DataFrame) -> list[Run]:
    return [Run(r["run"], r["reading"], float(r["value"]), float(r["epsilon"]), bool(r["printed"]), r["setting"],
                int(r["seed"]), r["scale"], f"results/<profile>/003_table3/{r['hash']}.json",
                epsilon_printed=float(r["epsilon_printed"])) for _, r in frame.iterrows()]  # fmt: skip


def _direction(name: str, holds: bool, margin: float, eps: float, eps_printed: float, scale: str,
               setting: str, reading: str = _AS_PRINTED, printed: bool = True) -> Run:  # fmt: skip
    return Run(name, reading, bool(holds), eps, printed, setting, 0, scale, margin=abs(margin),
               epsilon_printed=eps_printed)  # fmt: skip


def _best(frame: pd.DataFrame) -> pd.Series | None:
    """The best run (highest value) of ``frame`` among the algorithm as printed at the printed level."""
    sel = frame[frame["printed"] & (frame["epsilon"] <= frame["epsilon_printed"] * (1 + 1e-3))]
    return None if sel.empty else sel.loc[sel["value"].idxmax()]


def evidence(frames: Iterable[pd.DataFrame]) -> dict[str, list[Run]]:
    """``{claim key: runs}`` for paper 003's rule-decided training claims, from :func:`run_frame` of each profile
    whose runs count (the paper profile's full-scale runs always; a reduced profile's own runs beside them).

    * ``table3.<data>.<s>.<f>.dp``: every run of that data set, sampling and family (all readings, every ε: the rule
      sets the runs at another privacy level beside); ``table3.<data>.<s>.nondp`` and ``apph.mnist.SH.nondp``: the
      non-private runs of the sampling (any |S_b|: the paper names none).
    * ``fig1.mnist.<s>.b<|S_b|>.bc_comparable_to_ic``: per Table 3 cell pair at that |S_b| (Algorithm 1 as printed),
      whether BC >= IC − :data:`MARGIN_PP`, its margin the distance from that boundary;
      ``fig1.mnist.<s>.smallest_batch.bc_comparable_to_ic`` the same at the smallest |S_b| of each scale's grid.
    * ``table3.<data>.{bc_comparable_to_ic, mc_below_ic_and_bc, dp_close_to_nonprivate}``: over both sampling
      columns, each family's best run (the maximum over the committed runs of the algorithm as printed at the
      printed level), per scale: holds in both columns, margin the smaller one.
    """
    frame = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else (
        pd.DataFrame(columns=list(RUN_COLUMNS)))  # fmt: skip
    out: dict[str, list[Run]] = {}
    for (dataset, sampling, family), group in frame.groupby(["dataset", "sampling", "family"], sort=False):
        key = f"table3.{dataset}.{sampling}.{family}.dp" if family != "NP" else f"table3.{dataset}.{sampling}.nondp"
        out.setdefault(key, []).extend(_runs(group))
    if "table3.mnist.SH.nondp" in out:
        out["apph.mnist.SH.nondp"] = list(out["table3.mnist.SH.nondp"])
    cells = frame[frame["run"].str.count("/") == 3]  # the Table 3 cells themselves (Fig. 1's curves)
    for (dataset, sampling, scale), group in cells.groupby(["dataset", "sampling", "scale"], sort=False):
        if dataset != "mnist":
            continue
        sizes = sorted(set(group["batch_size"]))
        for batch in sizes:
            ic = group[(group["family"] == "IC") & (group["batch_size"] == batch)]
            bc = group[(group["family"] == "BC") & (group["batch_size"] == batch)]
            if ic.empty or bc.empty:
                continue
            i, b = ic.iloc[0], bc.iloc[0]
            margin = b["value"] - (i["value"] - MARGIN_PP)
            run = _direction(f"{b['run']} vs {i['run']}", margin >= 0, margin, max(i["epsilon"], b["epsilon"]),
                             max(i["epsilon_printed"], b["epsilon_printed"]), scale,
                             f"{sampling}, |S_b| = {batch}: BC {b['value']:.2f} % (C = {b['clip_norm']:g}) vs IC "
                             f"{i['value']:.2f} % (C = {i['clip_norm']:g})")  # fmt: skip
            out.setdefault(f"fig1.{dataset}.{sampling}.b{batch}.bc_comparable_to_ic", []).append(run)
            if batch == sizes[0]:
                out.setdefault(f"fig1.{dataset}.{sampling}.smallest_batch.bc_comparable_to_ic", []).append(run)
    for (dataset, scale), group in frame.groupby(["dataset", "scale"], sort=False):
        best: dict[tuple[str, str], pd.Series | None] = {}
        for sampling in ("SS", "SH"):
            for family in ("IC", "BC", "MC", "NP"):
                sel = group[(group["sampling"] == sampling) & (group["family"] == family)]
                best[(sampling, family)] = _best(sel) if len(sel) else None
        checks = {
            "bc_comparable_to_ic": (("IC", "BC"), lambda v: v["BC"] - (v["IC"] - MARGIN_PP)),
            "mc_below_ic_and_bc": (("IC", "BC", "MC"), lambda v: min(v["IC"], v["BC"]) - v["MC"]),
            "dp_close_to_nonprivate": (("IC", "BC", "NP"), lambda v: max(v["IC"], v["BC"]) - (v["NP"] - MARGIN_PP)),
        }
        for name, (families, margin_of) in checks.items():
            margins, said, eps, eps_p = [], [], 0.0, 0.0
            for sampling in ("SS", "SH"):
                rows = {f: best[(sampling, f)] for f in families}
                if any(r is None for r in rows.values()):
                    break
                values = {f: float(r["value"]) for f, r in rows.items()}  # type: ignore[index]
                margins.append(margin_of(values))
                said.append(f"{sampling}: " + ", ".join(f"{f} {v:.2f} % ({rows[f]['setting']})"
                                                         for f, v in values.items()))  # fmt: skip
                private = [r for f, r in rows.items() if f != "NP"]
                eps = max(eps, *(float(r["epsilon"]) for r in private))  # type: ignore[index]
                eps_p = max(eps_p, *(float(r["epsilon_printed"]) for r in private))  # type: ignore[index]
            else:
                holds = all(m > 0 if name == "mc_below_ic_and_bc" else m >= 0 for m in margins)
                tight = min(margins, key=abs) if holds else min((m for m in margins if not (
                    m > 0 if name == "mc_below_ic_and_bc" else m >= 0)), key=abs)  # fmt: skip
                run = _direction(f"best runs of {dataset} SS and SH ({scale})", holds, tight, eps, eps_p, scale,
                                 "; ".join(said), reading=f"{_AS_PRINTED}, best run per family")  # fmt: skip
                out.setdefault(f"table3.{dataset}.{name}", []).append(run)
    return out


def positive_control(records: Iterable[Mapping]) -> Control | None:
    """The positive control of paper 003's MNIST pipeline from the rows of issue 51's ``control_frame("paper")``
    (``dpcore.papers.reference.controls``; the notebook passes them: a paper package imports no other); None when its
    runs are not there yet (the verdict then says no control is committed)."""
    return control_from_records(records, CONTROL_PIPELINE)
