"""Dry run: every run of a profile for 2 rounds at its exact configuration, and what the profile would cost.

For each planned run the dry run builds the full model, the data pipeline (the real data; cached across
the grid) and the trainer with the run's configuration (calibrated σ, the real batch size, its
micro-batching), so a typo or a shape error fails here and not hours into a rented GPU.  Runs that
differ only in what cannot change the cost of a round (C, σ > 0, seed, data subset, epochs) share one
timing: the first of them runs ``steps`` rounds and the time of the last one is the step time.  The
evaluation of one epoch is timed on up to 1,000 examples and scaled to the evaluated split.

A run whose (expected) batch exceeds the probe batch (``probe_batch``, default :data:`PROBE_BATCH` examples;
whole groups for mixed clipping) is timed at that batch and its step time scaled linearly to its batch (marked
``~``; per-example gradients cost about linearly in the batch on a CPU, so on a GPU the scaled time is an upper
bound): paper 002's Table I draws 8,192 examples per round.

Estimate of a run = rounds × step time + epochs × evaluations per epoch × evaluation time (data loading excluded:
it is shared); an epoch's evaluations count ModelMix's previous iterate and the logged training loss
(:func:`evaluations_per_epoch`).

A trainer with a ``time_client_round(examples)`` probe (the asynchronous clients of paper 000, whose rounds
run n clients on batches of up to thousands of examples) is not stepped: one client's round is timed on
:data:`PROBE_EXAMPLES` // 2 and :data:`PROBE_EXAMPLES` examples, and a round of the run is n × (a + b·s) from
that line (said in the output), so a paper-scale grid is covered in seconds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import torch

from dpcore.experiments.config import RunConfig, config_hash
from dpcore.experiments.datasets import prepare
from dpcore.experiments.progress import format_seconds
from dpcore.experiments.registry import Experiment, get
from dpcore.experiments.runner import default_trainer, select
from dpcore.experiments.store import Store
from dpcore.training.trainer import make_classification_eval, resolve_device
from dpcore.validation import check_positive_int

__all__ = ["DryRunRow", "dry_run", "cost_key", "evaluations_per_epoch", "format_dry_run"]

EVAL_PROBE = 1000
PROBE_EXAMPLES = 32
#: the largest batch a dry run times as is; larger ones are timed at this size and scaled linearly
PROBE_BATCH = 1024


@dataclass(frozen=True)
class DryRunRow:
    """One run's estimate: rounds, measured step time (s), evaluation time per epoch (s), total (s)."""

    name: str
    hash: str
    status: str  # "done", "todo", "waiting" (configuration depends on unfinished runs)
    steps: int
    step_seconds: float
    eval_seconds: float
    estimate_seconds: float
    measured: bool  # False: the step time is shared with an earlier run of the same cost key
    device: str
    synthetic_data: bool
    extrapolated: bool = False  # True: step time from a linear fit of probes (see the module docstring)
    scaled_from: int | None = None  # the batch actually timed when the step time was scaled to the run's batch


def cost_key(config: RunConfig) -> tuple:
    """What the time of one round depends on (model, data shape, clipping and its scope, batch, micro-batching,
    device; the noise placement only through whether there is noise; the ℓ∞ truncation only through whether there
    is one -- it materialises every per-example gradient, about 3x the cost of ℓ2 clipping on paper 002's ScatterNet
    CNN; ModelMix's projection only through whether it runs)."""
    return (
        config.model, config.model_kwargs, config.dataset, config.clipping, config.batch_size, config.group_size,
        config.engine, config.max_physical_batch, config.device, config.noise_multiplier > 0, config.clients,
        config.clip_scope, config.linf_p is not None, bool(config.modelmix_tau),
    )  # fmt: skip


def evaluations_per_epoch(config: RunConfig, eval_examples: int) -> float:
    """Evaluations of ``eval_examples`` examples that one epoch of ``config`` costs: ``evals_per_epoch`` passes over
    the evaluated split, twice with ModelMix's previous iterate (``eval_previous``), plus the ``train_eval_size``
    training examples whose loss is logged (as a fraction of a pass)."""
    passes = config.evals_per_epoch * (2 if config.eval_previous and config.modelmix_tau else 1)
    return passes + config.evals_per_epoch * config.train_eval_size / max(eval_examples, 1)


def _time_steps(trainer: Any, steps: int) -> float:
    last = 0.0
    for _ in range(min(steps, trainer.total_steps)):
        if trainer.device.type == "cuda":
            torch.cuda.synchronize(trainer.device)
        t0 = time.perf_counter()
        trainer.step()
        if trainer.device.type == "cuda":
            torch.cuda.synchronize(trainer.device)
        last = time.perf_counter() - t0
    return last


def _probe_line(trainer: Any) -> tuple[float, float]:
    """(a, b): one client's round on n examples takes a + b·n seconds (two probes after a warm-up)."""
    half = PROBE_EXAMPLES // 2
    trainer.time_client_round(half)
    t1, t2 = trainer.time_client_round(half), trainer.time_client_round(PROBE_EXAMPLES)
    b = max(t2 - t1, 0.0) / (PROBE_EXAMPLES - half)
    return max(t1 - b * half, 0.0), b


def _time_eval(model: torch.nn.Module, data: tuple[torch.Tensor, torch.Tensor], split: str, examples: int) -> float:
    n = data[0].shape[0]
    probe = min(n, examples)
    fn = make_classification_eval(data[0][:probe], data[1][:probe], prefix=split)
    model.eval()
    with torch.no_grad():
        t0 = time.perf_counter()
        fn(model)
        seconds = time.perf_counter() - t0
    model.train()
    return seconds * n / probe


def dry_run(
    experiment: str | Experiment,
    profile: str,
    *,
    only: Sequence[str] | str | None = None,
    steps: int = 2,
    synthetic_ok: bool = True,
    results_root: str | Path | None = None,
    checkpoints_root: str | Path | None = None,
    stream: IO[str] | None = None,
    probe_batch: int = PROBE_BATCH,
    eval_probe: int = EVAL_PROBE,
) -> list[DryRunRow]:
    """Dry-run the (selected) runs of ``experiment`` at ``profile``; print and return one row per run.

    ``synthetic_ok``: a data set whose files are missing is replaced by random images of its exact
    shape and size (the output says so); ``False`` raises instead.  ``probe_batch``: runs with a larger batch
    are timed at this batch and scaled linearly (default :data:`PROBE_BATCH`; a smaller one checks the plan in
    less time, with a rougher estimate).  ``eval_probe``: the evaluation is timed on this many examples and scaled
    linearly to the evaluation split (default :data:`EVAL_PROBE`).
    """
    steps = check_positive_int("steps", steps)
    probe_batch = check_positive_int("probe_batch", probe_batch)
    eval_probe = check_positive_int("eval_probe", eval_probe)
    exp = get(experiment) if isinstance(experiment, str) else experiment
    store = Store.default(profile, exp.name, results_root=results_root, checkpoints_root=checkpoints_root)
    plan = select(exp.runs(profile, store.load), only)
    timings: dict[tuple, Any] = {}  # step seconds, or the probe line (a, b)
    scaled: dict[tuple, int | None] = {}
    eval_timings: dict[tuple, float] = {}
    rows = []
    for run in plan:
        cfg = run.config
        data = prepare(cfg, synthetic_ok=synthetic_ok)
        trainer = (exp.trainer or default_trainer)(cfg, data)
        probe = hasattr(trainer, "time_client_round")
        key = cost_key(cfg)
        timed = probe_batch
        if cfg.clipping == "mixed" and cfg.group_size:  # whole groups, at least two, in the probe as well
            timed = cfg.group_size * max(2, -(-probe_batch // cfg.group_size))
        big = not probe and cfg.batch_size > timed
        if probe:  # a fitted line: independent of the batch size
            key = ("probe", *key[:4], *key[5:])
        elif big:  # timed at probe_batch: shared by every batch above it on inputs of the same shape
            key = ("scaled", *key[:2], tuple(data.train[0].shape[1:]), *key[3:4], *key[5:])
        measured = key not in timings
        if measured and probe:
            timings[key], scaled[key] = _probe_line(trainer), None
        elif measured and big:
            small = (exp.trainer or default_trainer)(cfg.with_(batch_size=timed), data)
            timings[key], scaled[key] = _time_steps(small, steps), timed
        elif measured:
            timings[key], scaled[key] = _time_steps(trainer, steps), None
        if probe:
            step_seconds = cfg.clients * (timings[key][0] + timings[key][1] * cfg.batch_size)
        elif big:
            step_seconds = timings[key] * cfg.batch_size / scaled[key]
        else:
            step_seconds = timings[key]
        ekey = (cfg.model, cfg.model_kwargs, cfg.dataset, data.evaluation[0].shape[0], cfg.device)
        if ekey not in eval_timings:
            eval_timings[ekey] = _time_eval(trainer.model, data.evaluation, cfg.eval_split, eval_probe)
        status = "waiting" if not run.ready else ("done" if store.result_path(cfg).exists() else "todo")
        evals = evaluations_per_epoch(cfg, data.evaluation[0].shape[0])
        estimate = trainer.total_steps * step_seconds + cfg.epochs * evals * eval_timings[ekey]
        rows.append(
            DryRunRow(
                run.name, config_hash(cfg), status, trainer.total_steps, step_seconds, eval_timings[ekey], estimate,
                measured, str(resolve_device(cfg.device)), data.synthetic, probe, scaled[key] if big else None,
            )  # fmt: skip
        )
    print(format_dry_run(exp.name, profile, rows), file=stream if stream is not None else sys.stdout, flush=True)
    return rows


def format_dry_run(name: str, profile: str, rows: Sequence[DryRunRow]) -> str:
    """The dry run's table: one line per run, then totals (all runs, and runs without a result)."""
    devices = sorted({r.device for r in rows}) or [str(resolve_device("auto"))]
    lines = [
        f"dry run of {name!r}, profile {profile!r}: {len(rows)} run(s), estimated for device {', '.join(devices)} "
        f"with {torch.get_num_threads()} torch thread(s)",
        f"{'run':<44} {'hash':<16} {'status':<7} {'rounds':>8} {'step ms':>9} {'eval s':>7} {'estimate':>9}",
    ]
    for r in rows:
        mark = ("" if r.measured else " =") + (" ~" if r.scaled_from else "")
        lines.append(
            f"{r.name:<44} {r.hash:<16} {r.status:<7} {r.steps:>8} {1e3 * r.step_seconds:>9.1f} {r.eval_seconds:>7.2f} "
            f"{format_seconds(r.estimate_seconds):>9}{mark}"
        )
    total = sum(r.estimate_seconds for r in rows)
    left = sum(r.estimate_seconds for r in rows if r.status != "done")
    lines.append(f"total estimate: {format_seconds(total)} ({total / 3600:.2f} h); without finished runs: "
                 f"{format_seconds(left)} ({left / 3600:.2f} h)")  # fmt: skip
    lines.append("'=' : step time shared with an earlier run of the same model, clipping (and truncation), batch and "
                 "micro-batching")
    if any(r.extrapolated for r in rows):
        lines.append(f"asynchronous runs: a round (n clients) is EXTRAPOLATED from timing one client's round on "
                     f"{PROBE_EXAMPLES // 2} and {PROBE_EXAMPLES} examples (linear in the batch size)")  # fmt: skip
    probes = sorted({r.scaled_from for r in rows if r.scaled_from})
    if probes:
        lines.append(f"'~' : timed at a batch of {', '.join(map(str, probes))} and scaled linearly to the run's batch")
    if any(r.synthetic_data for r in rows):
        lines.append("NOTE: some data files are missing; those runs were timed on SYNTHETIC data of the same shape")
    return "\n".join(lines)
