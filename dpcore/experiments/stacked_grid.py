"""Run an experiment's ready runs within a time budget, several at once where they stack (issue 44).

Written for paper 003's Table 3 / Fig. 1 grid on MNIST (van Dijk et al., "Generalizing DP-SGD with shuffling and
batch clipping", Algorithm 1, App. H) on one GPU for a few minutes: a LeNet-5 step at small |S_b| is launch-bound, so
the ready runs of one batch size (C tuning runs and cells, IC and BC, SS and SH) are trained as one
:class:`~dpcore.training.stacked.StackedTrainer`; runs that do not stack (non-private, mixed clipping) are trained
alone with the public trainer.  Runs are taken in the issue's order (|S_b| ascending; IC and BC, then NP, then MC)
from the experiment's plan, replanned whenever a run finishes (a cell whose C tuning just finished becomes ready and
joins the running stack).  Each run is the runner's (:func:`~dpcore.experiments.runner.start_run` /
:func:`~dpcore.experiments.runner.finish_run`): resumed from its checkpoint, checkpointed after every epoch, its
result written in the runner's JSON format the moment it finishes.

What is already done is read from the committed results (``results/<profile>/<experiment>/``) and from ``--work``;
checkpoints to continue are copied in from ``--resume-from``.  Under ``--out`` (the device's ``$OUT``) go, at once,
``results/<hash>.json`` for every finished run, ``bundle.tar`` (every result and checkpoint of this session, laid
out as ``results/...`` and ``checkpoints/...``; rewritten after each finished run and at the end), ``plan.json`` and
the log.  ``--collect DIR`` puts a bundle (or loose result files) that came back into this checkout.  ``--dry-run``
plans the groups, times two rounds of each (after one warm-up round, writing nothing) and one evaluation, and prints
the estimated seconds against the budget.

    python -m dpcore.experiments.stacked_grid --out "$OUT" --budget-s 480          # benchmarks/gpu_003_grid.sh
    python -m dpcore.experiments.stacked_grid --dry-run --out build/stacked_grid_dry
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from dpcore.experiments.config import RunConfig, config_hash
from dpcore.experiments.registry import Experiment, PlannedRun, get
from dpcore.experiments.runner import RunSession, finish_run, select, start_run
from dpcore.experiments.store import Store, read_result_file
from dpcore.paths import build_dir, repo_root
from dpcore.training.stacked import STACK_CLIPPINGS, STACK_SAMPLINGS, StackedTrainer

__all__ = ["stackable", "priority", "plan_groups", "GridSession", "main"]

#: a file larger than this may not come back from the device's $OUT (16 MiB each)
BUNDLE_WARN_BYTES = 15 * 2**20
#: the family order of the issue: IC and BC first, then the non-private baselines, then mixed clipping
FAMILY_ORDER = {"individual": 0, "batch": 0, "none": 1, "mixed": 2}


def stackable(cfg: RunConfig) -> bool:
    """Whether :class:`~dpcore.training.stacked.StackedTrainer` trains ``cfg`` (its scope, read off the config)."""
    return (cfg.clipping in STACK_CLIPPINGS and cfg.sampling in STACK_SAMPLINGS and cfg.clients == 1
            and cfg.noise_placement == "algorithm1" and cfg.clip_scope == "global" and cfg.momentum == 0.0
            and not cfg.modelmix_tau and cfg.linf_p is None and cfg.lr_beta == 0.0
            and cfg.lr_rule in ("constant", "decay_on_drop") and cfg.normalization == "groupnorm")  # fmt: skip


def priority(run: PlannedRun) -> tuple:
    """Issue 44's order: |S_b| ascending; IC and BC, then NP, then MC; tuning runs before the cells they decide."""
    cfg = run.config
    return (cfg.batch_size, FAMILY_ORDER.get(cfg.clipping, 3), "/tune/" not in run.name, run.name)


def plan_groups(todo: Sequence[PlannedRun], max_stack: int) -> list[list[PlannedRun]]:
    """The ready runs in groups: stackable runs of one (model, batch size) together (at most ``max_stack``), every
    other run alone; groups in the order of their first run's :func:`priority`."""
    groups: dict[tuple, list[PlannedRun]] = {}
    for run in sorted(todo, key=priority):
        cfg = run.config
        if stackable(cfg):
            key: tuple = ("stack", cfg.model, cfg.model_kwargs, cfg.batch_size, cfg.device)
            n = 0
            while len(groups.get((*key, n), [])) >= max_stack:
                n += 1
            groups.setdefault((*key, n), []).append(run)
        else:
            groups[("alone", run.name)] = [run]
    return sorted(groups.values(), key=lambda g: priority(g[0]))


class GridSession:
    """One session over a grid: the plan, the stores, the export to ``out`` (see the module docstring)."""

    def __init__(self, experiment: Experiment, profile: str, *, only: Sequence[str] | None, exclude: Sequence[str],
                 out: Path, work: Path, log: Callable[[str], None]) -> None:  # fmt: skip
        self.experiment, self.profile, self.only, self.exclude = experiment, profile, only, tuple(exclude)
        self.out, self.log = out, log
        self.committed = Store.default(profile, experiment.name)
        self.store = Store.default(profile, experiment.name, results_root=work / "results",
                                   checkpoints_root=work / "checkpoints")  # fmt: skip
        self.failed: set[str] = set()
        self.touched: dict[str, RunConfig] = {}
        self.finished_here: list[str] = []

    def lookup(self, cfg: RunConfig) -> dict[str, Any] | None:
        return self.store.finished(cfg) or self.committed.finished(cfg)

    def todo(self) -> list[PlannedRun]:
        plan = select(self.experiment.runs(self.profile, self.lookup), self.only, dependencies=True)
        return [r for r in plan if r.ready and r.name not in self.failed and self.lookup(r.config) is None
                and not any(fnmatch.fnmatchcase(r.name, g) for g in self.exclude)]  # fmt: skip

    def resume_from(self, source: Path) -> int:
        """Copy checkpoints ``source/<hash>/state.pt`` of runs without one here; returns how many."""
        n = 0
        if not source.is_dir():
            return 0
        for state in sorted(source.glob("*/state.pt")):
            target = self.store.checkpoints_root / self.profile / self.experiment.name / state.parent.name / "state.pt"
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(state, target)
                n += 1
        return n

    def start(self, run: PlannedRun) -> RunSession:
        self.touched[run.name] = run.config
        return start_run(self.experiment, run, self.store, progress="log", stream=sys.stderr)

    def finish(self, session: RunSession, extras: dict[str, Any]) -> None:
        result = finish_run(self.experiment, session, self.store, extras)
        self.finished_here.append(session.planned.name)
        (self.out / "results").mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.store.result_path(session.planned.config), self.out / "results" / f"{result['hash']}.json")
        self.log(f"finished {session.planned.name} ({result['hash']}): best {result['best_accuracy']}, "
                 f"{result['wall_seconds']:.0f} s")  # fmt: skip
        self.export()

    def export(self) -> Path:
        """Rewrite ``out/bundle.tar``: every result and checkpoint of the runs this session touched."""
        path = self.out / "bundle.tar"
        tmp = path.with_suffix(".tmp")
        with tarfile.open(tmp, "w") as tar:
            for cfg in self.touched.values():
                for file, arc in ((self.store.result_path(cfg), f"results/{config_hash(cfg)}.json"),
                                  (self.store.checkpoint_path(cfg), f"checkpoints/{config_hash(cfg)}/state.pt")):
                    if file.exists():
                        tar.add(file, arcname=arc)
        os.replace(tmp, path)
        if path.stat().st_size > BUNDLE_WARN_BYTES:
            self.log(f"bundle.tar is {path.stat().st_size / 2**20:.1f} MiB: over the 16 MiB a file from $OUT may be")
        return path


def _eval_seconds(session: RunSession) -> float:
    tr = session.trainer
    if tr.eval_fn is None:
        return 0.0
    t = time.perf_counter()
    tr.model.eval()
    with torch.no_grad():
        tr.eval_fn(tr.model)
    tr.model.train()
    _sync(tr.device)
    return time.perf_counter() - t


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _rounds_left(session: RunSession) -> int:
    return session.trainer.total_steps - session.trainer.step_index


def _epochs_left(session: RunSession) -> int:
    cfg = session.planned.config
    return max(0, cfg.epochs - len(session.trainer.history))


def dry_run(grid: GridSession, groups: list[list[PlannedRun]], budget: float, args: argparse.Namespace) -> list[dict]:
    """Time two rounds of each group (after a warm-up round; nothing written) and estimate its seconds."""
    rows, total = [], 0.0
    for group in groups[: args.dry_groups]:
        sessions = [start_run(grid.experiment, r, grid.store, progress="none") for r in group]
        for s in sessions:
            s.trainer.on_step = None  # nothing is checkpointed by the timing rounds
        if len(sessions) > 1 or stackable(group[0].config):
            stack = StackedTrainer([s.trainer for s in sessions], max_stacked_samples=args.max_stacked_samples,
                                   prefetch=args.prefetch)  # fmt: skip
            step: Callable[[], None] = stack.step
        else:
            stack, step = None, sessions[0].trainer.step
        step()
        _sync(sessions[0].trainer.device)
        t = time.perf_counter()
        for _ in range(2):
            step()
        _sync(sessions[0].trainer.device)
        per_round = (time.perf_counter() - t) / 2
        if stack is not None:
            stack.close()
        evals = _eval_seconds(sessions[0]) * sum(_epochs_left(s) for s in sessions)
        seconds = per_round * max(_rounds_left(s) for s in sessions) + evals
        total += seconds
        rows.append({"runs": [r.name for r in group], "k": len(group), "batch_size": group[0].config.batch_size,
                     "stacked": stack is not None, "seconds_per_round": per_round,
                     "rounds_left": max(_rounds_left(s) for s in sessions), "eval_seconds": evals,
                     "estimated_seconds": seconds, "cumulative_seconds": total, "fits": total <= budget})  # fmt: skip
        grid.log(f"[dry-run] {len(group)} run(s) at |S_b|={group[0].config.batch_size} "
                 f"({'stacked' if stack else 'alone'}; first {group[0].name}): {per_round * 1e3:.1f} ms/round x "
                 f"{rows[-1]['rounds_left']} rounds + {evals:.0f} s eval = {seconds:.0f} s (cumulative {total:.0f} s, "
                 f"{'fits' if total <= budget else 'over'} the {budget:.0f} s budget)")  # fmt: skip
    return rows


def train(grid: GridSession, args: argparse.Namespace, deadline: float) -> None:
    """Train groups in priority order until ``deadline``; a stack takes in the newly ready runs of its batch size."""
    while time.monotonic() < deadline - args.margin_s:
        todo = grid.todo()
        if not todo:
            grid.log("nothing left to run")
            return
        group = plan_groups(todo, args.max_stack)[0]
        sessions = [grid.start(r) for r in group]
        grid.log(f"group: {len(group)} run(s) at |S_b|={group[0].config.batch_size}: "
                 f"{', '.join(r.name for r in group)}")  # fmt: skip
        if len(group) == 1 and not stackable(group[0].config):
            _train_alone(grid, sessions[0], deadline - args.margin_s)
        else:
            _train_stack(grid, sessions, args, deadline - args.margin_s)


def _train_alone(grid: GridSession, session: RunSession, until: float) -> None:
    tr = session.trainer
    try:
        while tr.step_index < tr.total_steps and time.monotonic() < until:
            tr.step()
    except FloatingPointError as exc:
        grid.failed.add(session.planned.name)
        grid.log(f"stopped {session.planned.name}: {exc}")
        return
    finally:
        session.bar.close()
    if tr.step_index >= tr.total_steps:
        grid.finish(session, {"stacked": {"k": 1}})
    else:
        grid.log(f"deadline: {session.planned.name} at round {tr.step_index}/{tr.total_steps} "
                 "(last epoch checkpointed)")  # fmt: skip


def _train_stack(grid: GridSession, sessions: list[RunSession], args: argparse.Namespace, until: float) -> None:
    batch = sessions[0].planned.config.batch_size
    live = list(sessions)
    peak = len(live)
    while live and time.monotonic() < until:
        stack = StackedTrainer([s.trainer for s in live], max_stacked_samples=args.max_stacked_samples,
                               prefetch=args.prefetch)  # fmt: skip
        try:
            while time.monotonic() < until and len(stack.active) == len(live):
                stack.step()
        finally:
            stack.close()
        for i, s in enumerate(list(live)):
            if i in stack.failed:
                grid.failed.add(s.planned.name)
                grid.log(f"stopped {s.planned.name}: {stack.failed[i]}")
            elif s.trainer.step_index >= s.trainer.total_steps:
                s.bar.close()
                grid.finish(s, {"stacked": {"k_at_most": peak, "batch_size": batch}})
            else:
                continue
            live.remove(s)
        if time.monotonic() >= until:
            break
        names = {s.planned.name for s in live}
        joining = [r for r in grid.todo() if stackable(r.config) and r.config.batch_size == batch
                   and r.name not in names][: max(0, args.max_stack - len(live))]  # fmt: skip
        for r in joining:
            live.append(grid.start(r))
            grid.log(f"joins the stack: {r.name}")
        peak = max(peak, len(live))
    for s in live:
        s.bar.close()
        grid.log(f"deadline: {s.planned.name} at round {s.trainer.step_index}/{s.trainer.total_steps} "
                 "(last epoch checkpointed)")  # fmt: skip


def collect(source: Path, profile: str, experiment: str) -> None:
    """Put what a device session brought back (``bundle.tar`` or ``results/*.json`` under ``source``) into this
    checkout: results into ``results/<profile>/<experiment>/`` (new ones only), checkpoints into
    ``build/checkpoints/<profile>/<experiment>/`` (where there is none or it is behind)."""
    results = repo_root() / "results" / profile / experiment
    ckpts = build_dir() / "checkpoints" / profile / experiment
    files: dict[str, bytes] = {}
    bundle = source / "bundle.tar"
    if bundle.exists():
        with tarfile.open(bundle) as tar:
            for member in tar.getmembers():
                handle = tar.extractfile(member) if member.isfile() else None
                if handle is not None and ".." not in Path(member.name).parts:
                    files[member.name] = handle.read()
    for path in sorted((source / "results").glob("*.json")):
        files.setdefault(f"results/{path.name}", path.read_bytes())
    for name, data in sorted(files.items()):
        if name.startswith("results/"):
            target = results / Path(name).name
            read_result_file_bytes(name, data)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                print(f"result {target}")
        elif name.startswith("checkpoints/"):
            target = ckpts / Path(*Path(name).parts[1:])
            new = torch.load(io.BytesIO(data), weights_only=True)
            old = torch.load(target, weights_only=True) if target.exists() else None
            if old is None or int(old["trainer"]["step"]) < int(new["trainer"]["step"]):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                print(f"checkpoint {target} (round {new['trainer']['step']})")


def read_result_file_bytes(name: str, data: bytes) -> dict[str, Any]:
    """A result's JSON from bytes (``ResultFileError`` naming ``name`` if it is not one)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(name).name
        path.write_bytes(data)
        return read_result_file(path)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dpcore.experiments.stacked_grid", description=__doc__.split("\n")[0])
    ap.add_argument("--experiment", default="003_table3")
    ap.add_argument("--profile", default="paper")
    ap.add_argument("--only", nargs="+", default=["mnist/*"], help="run-name globs (default: the MNIST grid)")
    ap.add_argument("--exclude", nargs="*", default=["*/mode/*"], help="run-name globs left out (default: the "
                    "issue-21 modes)")  # fmt: skip
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or build_dir() / "stacked_grid"))
    ap.add_argument("--work", type=Path, default=None, help="results and checkpoints of this session (default: "
                    "a temporary folder)")  # fmt: skip
    ap.add_argument("--resume-from", type=Path, default=None, help="checkpoint folder <hash>/state.pt to continue "
                    "(default: build/checkpoints/<profile>/<experiment>)")  # fmt: skip
    ap.add_argument("--budget-s", type=float, default=480.0)
    ap.add_argument("--margin-s", type=float, default=20.0, help="seconds kept for the last export")
    ap.add_argument("--max-stack", type=int, default=32)
    ap.add_argument("--max-stacked-samples", type=int, default=None, help="(runs x samples) of per-sample gradients "
                    "at once (default 16384 on CUDA, 2048 on the CPU)")  # fmt: skip
    ap.add_argument("--prefetch", type=int, default=None, help="rounds of SS indices drawn ahead in threads "
                    "(default 4 on CUDA, 0 on the CPU)")  # fmt: skip
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--dry-run", action="store_true", help="plan and time two rounds per group; train nothing")
    ap.add_argument("--dry-groups", type=int, default=3, help="groups timed by --dry-run")
    ap.add_argument("--collect", type=Path, default=None, help="bring a returned $OUT into this checkout and exit")
    args = ap.parse_args(argv)
    if args.collect is not None:
        collect(args.collect, args.profile, args.experiment)
        return 0
    cuda = torch.cuda.is_available()  # the runs' device is "auto": CUDA where there is one
    if args.max_stacked_samples is None:
        args.max_stacked_samples = 16384 if cuda else 2048
    if args.prefetch is None:
        args.prefetch = 4 if cuda else 0
    if args.threads:
        torch.set_num_threads(args.threads)
    t0 = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="stacked_grid_"))
    log_file = open(args.out / "log.txt", "a", encoding="utf-8")  # noqa: SIM115 - open for the whole session

    def log(message: str) -> None:
        line = f"[{time.monotonic() - t0:7.1f}s] {message}"
        print(line, file=sys.stderr, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    exp = get(args.experiment)
    grid = GridSession(exp, args.profile, only=args.only, exclude=args.exclude, out=args.out, work=work, log=log)
    source = args.resume_from or build_dir() / "checkpoints" / args.profile / exp.name
    log(f"device {'cuda' if cuda else 'cpu'}; work {work}; {grid.resume_from(source)} checkpoint(s) from {source}")
    todo = grid.todo()
    groups = plan_groups(todo, args.max_stack)
    plan = {"budget_s": args.budget_s, "ready_runs": len(todo),
            "groups": [{"k": len(g), "batch_size": g[0].config.batch_size, "stacked": len(g) > 1 or stackable(
                g[0].config), "runs": [r.name for r in g]} for g in groups]}  # fmt: skip
    log(f"{len(todo)} ready run(s) in {len(groups)} group(s)")
    if args.dry_run:
        plan["timed"] = dry_run(grid, groups, args.budget_s, args)
        (args.out / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
        log_file.close()
        return 0
    (args.out / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
    try:
        train(grid, args, t0 + args.budget_s)
    finally:
        grid.export()
        left = sorted((args.out / "results").glob("*.json")) if (args.out / "results").exists() else []
        if len(left) + 3 > 8:  # at most 8 files come back from $OUT: the bundle holds every result
            for path in left:
                path.unlink()
            log(f"{len(left)} results folded into bundle.tar only (at most 8 files come back)")
        log(f"done: {len(grid.finished_here)} run(s) finished: {', '.join(grid.finished_here) or 'none'}")
        log_file.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
