"""Paper 000's non-convex MNIST claims read as evidence (issue 50): the committed runs of the experiment ``000_mnist``
as :class:`~dpcore.verdicts.Run` records for :meth:`dpcore.claims.ClaimsLog.decide`.

Every finished run of every reading of the step (:data:`~dpcore.papers.p000_proactive.nonconvex_report.READINGS`:
Algorithm 4 as printed, η̄·U, is the printed one; §2's η̄·U/s is another reading) is passed, at its Table 7 label ε
(the paper's own accounting; the ε that eq. (6) gives at the printed σ is an erratum of its own, not counted again),
with its final test accuracy (percent).  Runs at another ε are reported beside the verdict and never decide it.  The
full-scale evidence is ``results/paper/000_mnist/``: at the quick profile its runs are passed beside the reduced runs
of that profile, so both profiles give one verdict.  No value of ours lives in source.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import pandas as pd

from dpcore.verdicts import Control, Run, TrainedRule, control_from_records

__all__ = ["ACCOUNTING", "CONTROL_PIPELINE", "mnist_frames", "mnist_runs", "positive_control", "rule"]

ACCOUNTING = "Table 7's ε labels (σ from Theorem 3.1 / eq. (6) as the paper computes it, δ = 1/N)"
#: the text of the positive control's ``pipelines`` that vouches for 000's MNIST trainer (issue 51)
CONTROL_PIPELINE = "paper 000's MNIST runs"
_ACC_KEYS = ("eps0.15.accuracy_pct", "nonprivate.accuracy_pct", "s370_within_10pct")


def rule(epsilon: float) -> TrainedRule:
    """The rule of a non-convex MNIST claim at the printed ``epsilon`` (``inf``: non-private)."""
    return TrainedRule(epsilon=epsilon, accounting=ACCOUNTING, pipeline=CONTROL_PIPELINE)


def positive_control(records: Iterable[Mapping]) -> Control | None:
    """The positive control of 000's MNIST pipeline from the rows of issue 51's ``control_frame("paper")`` (the
    notebook passes them: a paper package imports no other); None when none of them vouches for this pipeline (the
    verdict then says so)."""
    return control_from_records(records, CONTROL_PIPELINE)


def mnist_frames(profile: str, *, results_root=None) -> list[tuple[pd.DataFrame, str, str]]:
    """``[(run frame of one reading, scale, reading)]`` of ``profile`` (``scale`` "reduced" at the quick profile) and,
    at the quick profile, of the committed full-scale runs (``results/paper/000_mnist/``)."""
    from dpcore.papers.p000_proactive import nonconvex_report as nr
    from dpcore.papers.p000_proactive import training as t0

    out = []
    profiles = [profile] if profile == "paper" else [profile, "paper"]
    for prof in profiles:
        scale = "reduced" if t0.SCALES[("mnist", prof)].reduced else "full"
        for mode in t0.SCALES[("mnist", prof)].step_scalings:
            frame = nr.run_frame("mnist", prof, step_scaling=mode, results_root=results_root)
            out.append((frame, scale, mode))
    return out


def _acc(row: Mapping) -> float:
    return 100 * float(row["final_accuracy"])


def mnist_runs(frames: Iterable[tuple[pd.DataFrame, str, str]], readings: Mapping[str, str]) -> dict[str, list[Run]]:
    """``{claim key: runs}`` of the MNIST accuracy claims: ε = 0.15's accuracy (every run with a Table 7 label, the
    others beside), the non-private accuracy, and "s = 370 within 10 points of non-private" (bool, margin: the
    difference minus 10 points) per reading.  ``readings``: step scaling -> its words; "sum" is the printed one."""
    out: dict[str, list[Run]] = {f"nonconvex.mnist.{k}": [] for k in _ACC_KEYS}
    for frame, scale, mode in frames:
        done = frame[frame["status"] == "done"]
        reading, printed = readings.get(mode, mode), mode == "sum"
        nonprivate = done[done["kind"] == "nonprivate"]
        for _, row in done.iterrows():
            src = f"results/{'paper' if scale == 'full' else 'quick'}/000_mnist/{row['hash']}.json"
            if math.isfinite(float(row["eps_label"])):
                out["nonconvex.mnist.eps0.15.accuracy_pct"].append(Run(
                    f"{row['run']} ({src})", reading, _acc(row), float(row["eps_label"]), printed,
                    f"s = {row['s']:g}, σ = {row['sigma']:g}", scale=scale, source=src))  # fmt: skip
            if row["kind"] == "nonprivate":
                out["nonconvex.mnist.nonprivate.accuracy_pct"].append(Run(
                    f"{row['run']} ({src})", reading, _acc(row), math.inf, printed, f"C = {row['clip_norm']:g}",
                    scale=scale, source=src))  # fmt: skip
        first = done[done["eps_label"].astype(float).round(2) == 0.15]
        if len(first) and len(nonprivate):
            a, b = first.iloc[0], nonprivate.iloc[0]
            margin = _acc(a) - (_acc(b) - 10.0)
            out["nonconvex.mnist.s370_within_10pct"].append(Run(
                f"{a['run']} vs {b['run']}: {_acc(a):.2f} vs {_acc(b):.2f} %", reading, bool(margin >= 0),
                float(a["eps_label"]), printed, f"s = {a['s']:g}", scale=scale, margin=margin,
                source=f"results/{'paper' if scale == 'full' else 'quick'}/000_mnist/"))  # fmt: skip
    return out


def utility_runs(frames: Iterable[tuple[pd.DataFrame, str, str]], sigma_cap: float, clip: float) -> list[Run]:
    """The utility graph's rule "w* + N(0, C²σ² I) keeps >= 90 % of w*'s accuracy for every σ <= ``sigma_cap``" as
    bool runs, one per utility frame (``(frame of utility_frame, scale, reading)``): margin = the smallest fraction
    minus 0.9, its standard error over the seeded draws."""
    runs = []
    for util, scale, reading in frames:
        u = util[(util["clip_norm"] == clip) & (util["sigma"] <= sigma_cap + 1e-9)] if len(util) else util
        if not len(u):
            continue
        worst = u.loc[u["fraction"].idxmin()]
        base = float(worst["base_accuracy"])
        draws = int(worst["draws"])
        se = float(worst["sd"]) / math.sqrt(draws) / base if draws > 1 and base > 0 else math.nan
        margin = float(worst["fraction"]) - 0.9
        runs.append(Run(f"{worst['run']}, σ = {worst['sigma']:g}: fraction {float(worst['fraction']):.3f}", reading,
                        bool(margin >= 0), math.inf, reading == "printed", f"C = {clip:g}", scale=scale,
                        margin=margin, se=se, trials=max(draws, 1)))  # fmt: skip
    return runs
