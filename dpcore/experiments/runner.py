"""Run an experiment's grid: skip finished runs, resume interrupted ones, write one JSON result per run.

:func:`run_one` trains one :class:`~dpcore.experiments.registry.PlannedRun` with the trainer of
:mod:`dpcore.training` (Algorithm 1 of paper 003), writing a checkpoint after every epoch; a run that
finds a checkpoint continues from it and ends with bit-identical parameters on the CPU (every random
draw of the trainer is seeded per round).  The result -- per-epoch accuracy and loss on the evaluated
split, the run record, ε under the experiment's accountants, wall time, device, data provenance,
dpcore version and git commit -- is written atomically once the run finished.

:func:`run_experiment` repeats: plan, pick the first ready run without a result, run it; so runs whose
configuration depends on earlier results (a C tuned on a validation split) become ready on the way.  A result
file that cannot be read (truncated, empty) is an unfinished run: the runner says so and trains it again.  A
checkpoint is resumed only if it is readable and continues this run: same configuration, same training data and
same model (:mod:`dpcore.training.integrity`); otherwise a ``CheckpointError`` names the file and how to start
over (delete its folder, or ``--force``).  ``--only`` globs that match no run are refused.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import math
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import torch

import dpcore
from dpcore.experiments.adapters import record_to_dict
from dpcore.experiments.config import RunConfig, config_hash
from dpcore.experiments.datasets import prepare
from dpcore.experiments.progress import Progress
from dpcore.experiments.registry import Experiment, PlannedRun, get
from dpcore.experiments.store import RESULT_FORMAT, Store, atomic_torch_save
from dpcore.models import build_model
from dpcore.paths import repo_root
from dpcore.training.integrity import CheckpointError, read_checkpoint, resume_from
from dpcore.training.sampling import derive_seed
from dpcore.training.trainer import Trainer, make_classification_eval
from dpcore.validation import check_positive_int

__all__ = [
    "CHECKPOINT_FORMAT",
    "EpochHook",
    "Outcome",
    "run_one",
    "RunSession",
    "start_run",
    "finish_run",
    "run_experiment",
    "select",
    "parameters_digest",
    "software",
    "device_name",
    "train_eval_indices",
    "default_trainer",
]

CHECKPOINT_FORMAT = 1
#: ``hook(run_name, epoch_index, history_entry)`` after every epoch, once its checkpoint is on disk
EpochHook = Callable[[str, int, dict], None]


@dataclass(frozen=True)
class Outcome:
    """What happened to one run: ``"trained"``, ``"skipped"`` (had a result) or ``"waiting"`` (not ready)."""

    name: str
    hash: str
    status: str
    path: Path | None = None


def parameters_digest(model: torch.nn.Module) -> str:
    """SHA-256 of the model's state (names, dtypes, shapes, bytes): equal digests = bit-identical parameters."""
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        t = t.detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _git() -> dict[str, Any]:
    """The checkout's commit and whether tracked files differ from it.

    A copy of the tree without ``.git`` (a rented GPU machine) names its commit in ``DPCORE_GIT_COMMIT``
    (40 hex digits); ``git_dirty`` is then ``None`` (unknown) and ``git_source`` says where the commit came from.
    """
    env = os.environ.get("DPCORE_GIT_COMMIT", "").strip()
    if env:
        if len(env) != 40 or any(c not in "0123456789abcdef" for c in env.lower()):
            raise ValueError(f"DPCORE_GIT_COMMIT must be a 40-hex-digit commit, got {env!r}")
        return {"git_commit": env.lower(), "git_dirty": None, "git_source": "DPCORE_GIT_COMMIT"}
    root = repo_root()

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"git_commit": commit, "git_dirty": None if status is None else bool(status)}


def device_name(device: torch.device | str) -> str:
    """The accelerator's name for a CUDA device (e.g. "NVIDIA H100 80GB HBM3"), else the machine's processor: the
    ``model name`` of ``/proc/cpuinfo`` where there is one (e.g. "AMD EPYC"), else what :mod:`platform` says."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name") and ":" in line and line.split(":", 1)[1].strip():
                    return line.split(":", 1)[1].strip()
    except OSError:  # no /proc (macOS, Windows): platform's name below
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def software() -> dict[str, Any]:
    """dpcore version, git commit (and whether tracked files were modified), torch and Python versions."""
    return {
        "dpcore_version": dpcore.__version__,
        **_git(),
        "torch": torch.__version__,
        "python": platform.python_version(),
    }


def _history_rows(history: list[dict[str, float]], split: str) -> list[dict[str, Any]]:
    rows = []
    for i, h in enumerate(history, start=1):
        rows.append(
            {
                "epoch": i,
                "epochs_done": h["epoch"],
                "step": int(h["step"]),
                "lr": h["lr"],
                "accuracy": h.get(f"{split}_accuracy"),
                "loss": h.get(f"{split}_loss"),
                "clipped_fraction": h.get("clipped_fraction"),
            }
        )
        if "train_loss" in h:  # RunConfig.train_eval_size > 0 (paper 002's Fig. 2 logs the training loss)
            rows[-1].update({"train_accuracy": h.get("train_accuracy"), "train_loss": h["train_loss"]})
    return rows


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    accs = [r["accuracy"] for r in rows]
    if not accs or any(a is None or not math.isfinite(a) for a in accs):
        return {"best_accuracy": None, "best_epoch": None, "final_accuracy": None, "final_loss": None}
    best = max(range(len(accs)), key=lambda i: (accs[i], -i))  # first epoch reaching the maximum
    return {
        "best_accuracy": accs[best],
        "best_epoch": rows[best]["epoch"],
        "final_accuracy": accs[-1],
        "final_loss": rows[-1]["loss"],
    }


def _both(first: Callable[[Any], dict], second: Callable[[Any], dict], model: Any) -> dict:
    return {**first(model), **second(model)}


def train_eval_indices(n_train: int, size: int, data_seed: int) -> torch.Tensor:
    """The ``size`` training examples whose loss and accuracy are logged (``RunConfig.train_eval_size``): a
    uniformly random subset of the ``n_train`` training examples, seeded by ``data_seed`` alone (the same examples
    for every seed and method of an experiment), sorted.

    Not the first ``size`` examples: the training pool keeps the order of the data file, and a file stored class
    by class (the CIFAR-10 mirror: 5,000 airplanes first) would make that a one-class subset, on which a model
    that predicts a single class scores a low "training loss".
    """
    n_train = check_positive_int("n_train", n_train)
    size = check_positive_int("size", size)
    if size > n_train:
        raise ValueError(f"size must be <= n_train={n_train}, got {size}")
    gen = torch.Generator().manual_seed(derive_seed(data_seed, "train-eval"))
    return torch.randperm(n_train, generator=gen)[:size].sort().values


def default_trainer(cfg: RunConfig, data: Any) -> Trainer:
    """The single-client :class:`~dpcore.training.Trainer` of ``cfg`` on ``data`` (a ``PreparedData``), evaluating
    the run's split after every epoch (and ``train_eval_size`` random training examples, :func:`train_eval_indices`,
    when asked): what an :class:`Experiment` without its own ``trainer`` trains with."""
    model = build_model(cfg.model, seed=cfg.seed, **dict(cfg.model_kwargs))
    eval_fn = make_classification_eval(*data.evaluation, prefix=cfg.eval_split)
    if cfg.train_eval_size:
        idx = train_eval_indices(data.train[0].shape[0], cfg.train_eval_size, cfg.data_seed)
        train_fn = make_classification_eval(data.train[0][idx], data.train[1][idx], prefix="train")
        eval_fn = functools.partial(_both, eval_fn, train_fn)
    return Trainer(model, data.train, cfg.train_config(), eval_fn=eval_fn)


#: what a checkpoint written before each session's code was recorded says of its sessions
_UNRECORDED = "not recorded: the checkpoint was written before dpcore recorded each session's commit"


def session_code(session: int, from_step: int) -> dict[str, Any]:
    """The code one training session of a run ran: its number, the step it started from, dpcore's version and the
    git commit (:func:`software`); a result lists one per session, since a run resumed after an update of the
    code was trained by more than one version."""
    sw = software()
    return {"session": session, "from_step": from_step, "dpcore_version": sw["dpcore_version"],
            "git_commit": sw.get("git_commit"), "git_dirty": sw.get("git_dirty")}  # fmt: skip


def _resume(trainer: Any, ckpt: Path, digest: str) -> tuple[float, int, list[dict[str, Any]]]:
    """Load the run's checkpoint into ``trainer``: (seconds trained before, sessions so far + 1, the code of the
    sessions so far).

    An unreadable file, a checkpoint of another run, or one whose trainer state is of other data or another model
    (:meth:`dpcore.training.Trainer.load_state_dict`) is a :class:`~dpcore.training.integrity.CheckpointError`
    naming the file and how to start over.
    """
    remedy = f"delete {ckpt.parent} (or run with --force) to train this run from scratch"
    state = read_checkpoint(ckpt, remedy=remedy)
    if state.get("format") != CHECKPOINT_FORMAT or state.get("hash") != digest:
        raise CheckpointError(f"{ckpt} is not a format-{CHECKPOINT_FORMAT} checkpoint of run {digest}; {remedy}")
    shapes = (("trainer", dict), ("elapsed", (int, float)), ("sessions", int))
    if not all(isinstance(state.get(key), kind) for key, kind in shapes):
        raise CheckpointError(f"{ckpt} lacks the trainer state, elapsed time or session count; {remedy}")
    resume_from(trainer, state["trainer"], ckpt, remedy)
    code = state.get("code")
    if not isinstance(code, list):  # an older checkpoint: its sessions' code is unknown, and said so
        code = [{"sessions": f"1-{state['sessions']}", "git_commit": None, "note": _UNRECORDED}]
    return float(state["elapsed"]), int(state["sessions"]) + 1, code


@dataclass
class RunSession:
    """One training session of a planned run, between :func:`start_run` and :func:`finish_run`: its trainer (with
    the checkpoint-per-epoch hook installed as ``trainer.on_step``), resumed from its checkpoint when there is one."""

    planned: PlannedRun
    digest: str
    data: Any
    trainer: Any
    bar: Progress
    elapsed_before: float
    sessions: int
    code: list[dict[str, Any]]
    start: float


def start_run(
    experiment: Experiment,
    planned: PlannedRun,
    store: Store,
    *,
    force: bool = False,
    on_epoch: EpochHook | None = None,
    progress: str = "auto",
    stream: IO[str] | None = None,
) -> RunSession:
    """Prepare ``planned``'s data and trainer, resume it from its checkpoint (unless ``force``) and install the hook
    that checkpoints it after every epoch; :func:`run_one` then runs it, :mod:`dpcore.training.stacked` may run several
    sessions' trainers at once (paper 003's grid, issue 44)."""
    if not planned.ready:
        raise ValueError(f"run {planned.name!r} is not ready: it waits for {', '.join(planned.waits_for)}")
    cfg: RunConfig = planned.config
    digest = config_hash(cfg)
    ckpt = store.checkpoint_path(cfg)
    if force and ckpt.parent.exists():
        shutil.rmtree(ckpt.parent)
    data = prepare(cfg)
    trainer = (experiment.trainer or default_trainer)(cfg, data)
    elapsed_before, sessions, code = 0.0, 1, []
    if ckpt.exists():
        elapsed_before, sessions, code = _resume(trainer, ckpt, digest)
    code = [*code, session_code(sessions, trainer.step_index)]
    bar = Progress(
        planned.name, trainer.total_steps, trainer.step_index, cfg.epochs, mode=progress, stream=stream,
        metric=cfg.eval_split, evals_per_epoch=cfg.evals_per_epoch,
    )  # fmt: skip
    session = RunSession(planned, digest, data, trainer, bar, elapsed_before, sessions, code, time.perf_counter())
    seen = len(trainer.history)

    def after_step(tr: Any) -> None:
        nonlocal seen
        bar.step()
        if len(tr.history) == seen:
            return
        seen = len(tr.history)
        elapsed = elapsed_before + time.perf_counter() - session.start
        state = {"format": CHECKPOINT_FORMAT, "hash": digest, "trainer": tr.state_dict(), "elapsed": elapsed,
                 "sessions": sessions, "code": code}  # fmt: skip
        atomic_torch_save(ckpt, state)
        bar.epoch(seen, tr.history[-1], elapsed)
        if on_epoch is not None:
            on_epoch(planned.name, seen, dict(tr.history[-1]))

    trainer.on_step = after_step
    return session


def finish_run(experiment: Experiment, session: RunSession, store: Store,
               extras: Mapping[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Write the result of a session whose trainer has run to the end (``extras`` are added to it) and return it."""
    planned, trainer, cfg = session.planned, session.trainer, session.planned.config
    wall = session.elapsed_before + time.perf_counter() - session.start
    record = record_to_dict(trainer.record())
    rows = _history_rows(trainer.history, cfg.eval_split)
    epsilons = {key: acc(record, cfg).to_dict() for key, acc in experiment.accountants.items()}
    result = {
        "format": RESULT_FORMAT,
        "experiment": experiment.name,
        "run": planned.name,
        "hash": session.digest,
        "config": cfg.to_dict(),
        "note": planned.note,
        "eval_split": cfg.eval_split,
        "history": rows,
        **_summary(rows),
        "record": record,
        **(trainer.result_extras() if hasattr(trainer, "result_extras") else {}),  # e.g. per-client records
        "epsilon": epsilons,
        "final_parameters_sha256": parameters_digest(trainer.model),
        "wall_seconds": wall,
        "sessions": session.sessions,
        "code": session.code,  # the commit of each session (the top-level git_commit is the last one's)
        "device": str(trainer.device),
        "device_name": device_name(trainer.device),
        "torch_threads": torch.get_num_threads(),
        # the CPU kernels torch dispatched to (AVX2, AVX512, ...): CPU results repeat bit for bit only at equal
        # capability (dpcore.runner.REPEATABLE_ENV pins the notebooks' kernels to AVX2)
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "data": session.data.provenance,
        **software(),
        **dict(extras or {}),
        "finished_utc": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    store.write(result)
    return result


def run_one(
    experiment: Experiment,
    planned: PlannedRun,
    store: Store,
    *,
    force: bool = False,
    on_epoch: EpochHook | None = None,
    progress: str = "auto",
    stream: IO[str] | None = None,
) -> dict[str, Any]:
    """Train ``planned`` (resuming from its checkpoint unless ``force``) and write its result."""
    session = start_run(experiment, planned, store, force=force, on_epoch=on_epoch, progress=progress, stream=stream)
    try:
        session.trainer.run()
    finally:
        session.bar.close()
    return finish_run(experiment, session, store)


def select(
    plan: Sequence[PlannedRun], only: Sequence[str] | str | None, *, dependencies: bool = False
) -> list[PlannedRun]:
    """Runs whose name matches any of the shell globs ``only`` (all runs if ``None``), in plan order.

    ``dependencies=True`` adds the runs that selected runs wait for (their ``waits_for`` names or globs),
    transitively, so that ``--only <cell>`` also runs the tuning the cell needs.  A glob that matches no run
    (a typo would otherwise select nothing and "succeed") is a ``ValueError`` naming it.
    """
    if only is None:
        return list(plan)
    globs = [only] if isinstance(only, str) else list(only)
    if not globs or not all(isinstance(g, str) and g.strip() for g in globs):
        raise ValueError(f"only must be None or non-empty run-name globs, got {only!r}")
    names = [r.name for r in plan]
    for g in globs:
        if not any(fnmatch.fnmatchcase(n, g) for n in names):
            near = [n for n in names if g.strip("*?[]") and g.strip("*?[]") in n][:5]
            hint = f"; did you mean {', '.join(near)}?" if near else f"; run names look like {', '.join(names[:3])}"
            raise ValueError(f"only: {g!r} matches no run of the plan ({len(names)} runs){hint}")
    chosen = {r.name for r in plan if any(fnmatch.fnmatchcase(r.name, g) for g in globs)}
    while dependencies:
        wanted = {g for r in plan if r.name in chosen for g in r.waits_for}
        more = {r.name for r in plan if any(fnmatch.fnmatchcase(r.name, g) for g in wanted)} - chosen
        if not more:
            break
        chosen |= more
    return [r for r in plan if r.name in chosen]


def run_experiment(
    experiment: str | Experiment,
    profile: str,
    *,
    only: Sequence[str] | str | None = None,
    force: bool = False,
    results_root: str | Path | None = None,
    checkpoints_root: str | Path | None = None,
    on_epoch: EpochHook | None = None,
    progress: str = "auto",
    stream: IO[str] | None = None,
) -> list[Outcome]:
    """Run every (selected) run of ``experiment`` at ``profile`` that has no result; see the module docstring.

    ``force=True`` retrains each selected run once (from scratch) even if it has a result.  The runs a
    selected run waits for (e.g. its C tuning) are selected too.
    Returns one :class:`Outcome` per selected run.
    """
    exp = get(experiment) if isinstance(experiment, str) else experiment
    store = Store.default(profile, exp.name, results_root=results_root, checkpoints_root=checkpoints_root)
    out = stream if stream is not None else sys.stderr
    trained: dict[str, Outcome] = {}
    selected: set[str] = set()
    said: set[str] = set()

    def report(message: str) -> None:  # once per message: the plan is looked at again after every run
        if message not in said:
            said.add(message)
            print(f"[{exp.name}/{profile}] {message}", file=out, flush=True)

    def finished(config: RunConfig) -> dict[str, Any] | None:  # an unreadable result file is an unfinished run
        return store.finished(config, report)

    while True:
        full = exp.runs(profile, finished)
        plan = select(full, only, dependencies=True)
        selected |= {r.name for r in plan}
        todo = [
            r for r in plan
            if r.ready and config_hash(r.config) not in trained and (force or finished(r.config) is None)
        ]  # fmt: skip
        if not todo:
            break
        run = todo[0]
        digest = config_hash(run.config)
        print(f"[{exp.name}/{profile}] {run.name} ({digest})", file=out, flush=True)
        run_one(exp, run, store, force=force, on_epoch=on_epoch, progress=progress, stream=stream)
        trained[digest] = Outcome(run.name, digest, "trained", store.result_path(run.config))
    outcomes = []
    for r in (r for r in full if r.name in selected):
        digest = config_hash(r.config)
        if digest in trained:
            outcomes.append(trained[digest])
        elif not r.ready:
            outcomes.append(Outcome(r.name, digest, "waiting"))
        else:
            outcomes.append(Outcome(r.name, digest, "skipped", store.result_path(r.config)))
    return outcomes
