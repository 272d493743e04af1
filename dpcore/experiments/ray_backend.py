"""Run an experiment's grid on Ray: each unfinished run is one Ray task (optional extra ``scale``).

:func:`run_experiment_ray` does what :func:`dpcore.experiments.runner.run_experiment` does -- plan,
skip runs that have a result, train the others with :func:`~dpcore.experiments.runner.run_one`, which
writes the run's result file -- but submits every ready run at once as a Ray task (one GPU per task
when the cluster has GPUs, one CPU core otherwise) and re-plans whenever a task finishes, so runs
that wait for earlier results (a clip norm tuned on a validation split) are submitted once they are
ready.  A failed task is reported with its configuration; the other tasks go on.  One line per
finished run gives its wall time and an estimate of the time the grid still needs.

The tasks write to the driver's results and checkpoints folders, so on a cluster of several machines
those must be a shared file system (or give ``results_root`` on one).  Without ``address`` a local
Ray instance with ``num_cpus`` cores is started (and stopped at the end); with one, the driver joins
that cluster (``"auto"``: the cluster of ``ray start`` on this machine).  ``ray`` is imported inside
the functions, so the local backend needs nothing beyond dpcore's dependencies.

Starting a local instance (:func:`start_local_ray`, also used by :func:`dpcore.federated.flower_loopback.simulate`):
no dashboard, and a stated start timeout (``DPCORE_RAY_START_TIMEOUT``, default 300 s).  Ray 2.55 gives
its node a fixed 30 s to come up (``ray/_private/node.py``) and its raylet about 15 s to see the port
files of its Python agents (dashboard and runtime-env agents), which an overloaded machine exceeds while
those agents import (``RAY_raylet_start_wait_time_s`` does not change either).  Each attempt that fails
is reported (with Ray's and the raylet's message), its processes are ended, and a new one starts while
the timeout allows.
When none succeeds :class:`RayStartError` names what failed and where Ray's logs are: nothing falls back
to the local backend.  A local instance opts into the accelerator rule Ray 2.55 announces for its next
versions (``RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=0``, unless the environment sets it): a task that asks
for no GPU keeps the process's ``CUDA_VISIBLE_DEVICES`` instead of having it emptied.  dpcore's tasks
do not depend on either rule (a grid task asks for one GPU whenever the cluster has GPUs; Flower's
clients compute on the CPU), and Ray's FutureWarning about the change goes away.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from dpcore.experiments import datasets
from dpcore.experiments.config import canonical_json, config_hash
from dpcore.experiments.registry import Experiment, PlannedRun, get
from dpcore.experiments.runner import Outcome, run_one, select
from dpcore.experiments.store import Store
from dpcore.validation import check_positive_int

__all__ = [
    "MissingExtra", "RayStartError", "START_TIMEOUT_S", "require", "start_local_ray", "run_experiment_ray",
    "format_seconds",
]  # fmt: skip

#: Default limit (seconds) on starting a local Ray instance, all attempts together (``DPCORE_RAY_START_TIMEOUT``).
START_TIMEOUT_S = 300.0
_RAY_NODE_LIMIT_S = 30.0  # Ray 2.55's own fixed wait for its node (ray/_private/node.py): one attempt's length
#: Ray's switch for its future accelerator rule (ray/_private/accelerators/accelerator.py); see the module docstring.
ACCEL_OVERRIDE_VAR = "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO"


class MissingExtra(ImportError):
    """An optional dependency (the ``scale`` extra: ray, flwr) is not installed."""


class RayStartError(RuntimeError):
    """A local Ray instance did not start within the start timeout (the message names Ray's error and logs)."""


def require(module: str) -> Any:
    """Import ``module`` of the ``scale`` extra, or raise :class:`MissingExtra` saying how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(
            f"{module} is not installed; it comes with dpcore's optional extra: pip install -e '.[scale]' "
            f"(pinned in constraints.txt): {exc}"
        ) from exc


def _start_timeout(timeout_s: float | None) -> float:
    if timeout_s is None:
        raw = os.environ.get("DPCORE_RAY_START_TIMEOUT", "")
        try:
            timeout_s = float(raw) if raw else START_TIMEOUT_S
        except ValueError:
            raise ValueError(f"DPCORE_RAY_START_TIMEOUT must be a number of seconds, got {raw!r}") from None
    if not _RAY_NODE_LIMIT_S <= timeout_s < math.inf:
        raise ValueError(f"timeout_s must be in [{_RAY_NODE_LIMIT_S:.0f}, inf) seconds (one start), got {timeout_s}")
    return float(timeout_s)


def _raylet_failure(logs: Path) -> str:
    """The raylet's own fatal message in ``logs/raylet.out`` (e.g. which agent's port file it timed out on), or ""."""
    try:
        lines = (logs / "raylet.out").read_text(errors="replace").splitlines()
    except OSError:
        return ""
    for line in lines:
        if "Timed out waiting for file" in line or "Check failed" in line:
            return line.split("Check failed:", 1)[-1].strip()[:400]
    return ""


def _end_new_children(before: set[int]) -> None:
    """End the processes this process started since ``before`` (a failed ``ray.init``'s GCS, raylet, agents)."""
    import psutil

    me = psutil.Process()
    new = [p for p in me.children(recursive=True) if p.pid not in before]
    for proc in new:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            continue
    _, alive = psutil.wait_procs(new, timeout=10)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(alive, timeout=10)


def start_local_ray(
    num_cpus: int,
    *,
    num_gpus: int | None = None,
    temp_dir: str | Path | None = None,
    timeout_s: float | None = None,
    runtime_env: dict | None = None,
    stream: IO[str] | None = None,
) -> float:
    """Start a local Ray instance in this process (no dashboard); returns the seconds it took.

    ``temp_dir``: Ray's session folder (default: ``RAY_TMPDIR`` or Ray's own default).  ``timeout_s``
    (default ``DPCORE_RAY_START_TIMEOUT`` or :data:`START_TIMEOUT_S`): all attempts together; every failed
    attempt is printed on ``stream`` (default stderr) with Ray's message.  Raises :class:`RayStartError`
    (Ray's last error, the attempts, the logs folder) when the instance does not start in time, and
    ``ValueError`` when Ray is already initialised in this process.
    """
    num_cpus = check_positive_int("num_cpus", num_cpus)
    timeout = _start_timeout(timeout_s)
    ray = require("ray")
    import psutil  # a dependency of ray (vendored) and of ipykernel
    if ray.is_initialized():
        raise ValueError("Ray is already initialised in this process: shut it down first (ray.shutdown())")
    out = stream if stream is not None else sys.stderr
    os.environ.setdefault(ACCEL_OVERRIDE_VAR, "0")  # inherited by the node this process starts
    kwargs: dict[str, Any] = {"num_cpus": num_cpus, "include_dashboard": False, "log_to_driver": False}
    if num_gpus is not None:
        kwargs["num_gpus"] = int(num_gpus)
    folder = temp_dir if temp_dir is not None else os.environ.get("RAY_TMPDIR")
    if folder is not None:
        kwargs["_temp_dir"] = str(Path(folder).resolve())
    if runtime_env is not None:
        kwargs["runtime_env"] = runtime_env
    logs = Path(kwargs.get("_temp_dir", "/tmp/ray")) / "session_latest" / "logs"
    start = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        began = time.monotonic()
        try:
            ray.init(**kwargs)
            return time.monotonic() - start
        except (ValueError, TypeError):
            raise
        except Exception as exc:  # Ray raises a bare Exception when its node misses its 30 s start limit
            took = time.monotonic() - began
            if ray.is_initialized():
                ray.shutdown()
            _end_new_children(before)
            elapsed = time.monotonic() - start
            raylet = _raylet_failure(logs)
            cause = f"{type(exc).__name__}: {exc}" + (f" The raylet: {raylet}" if raylet else "")
            if elapsed + _RAY_NODE_LIMIT_S + 5 > timeout:
                raise RayStartError(
                    f"a local Ray instance ({num_cpus} CPUs) did not start: {attempt} attempt(s) in {elapsed:.0f} s "
                    f"(start timeout {timeout:.0f} s, DPCORE_RAY_START_TIMEOUT). Ray's last error: {cause} "
                    f"Ray's logs: {logs} (raylet.out, dashboard_agent.log, gcs_server.out). Ray 2.55 gives its "
                    "node 30 s and the raylet about 15 s to see its agents start, which an overloaded machine "
                    "exceeds: retry when the load is lower, or start Ray once with `ray start --head` and join "
                    "it (--address auto)."
                ) from exc
            print(
                f"[ray] local start attempt {attempt} failed after {took:.0f} s ({cause}); its processes ended, "
                f"trying again ({elapsed:.0f} of {timeout:.0f} s used; logs: {logs})",
                file=out, flush=True,
            )  # fmt: skip


def format_seconds(seconds: float) -> str:
    """``12.3s``, ``4m05s`` or ``2h07m``."""
    if not math.isfinite(seconds):
        return "?"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes = int(round(seconds)) // 60
    if minutes < 60:
        return f"{minutes}m{int(round(seconds)) % 60:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def _train_task(
    experiment: Experiment,
    planned: PlannedRun,
    store: Store,
    force: bool,
    spec: datasets.DatasetSpec | None,
    threads: int | None,
) -> dict[str, Any]:
    """Body of one Ray task: train ``planned`` with the local runner (same code, same result file)."""
    import torch

    if threads is not None:
        torch.set_num_threads(threads)
    name = planned.config.dataset
    if spec is not None and name not in datasets.DATASETS:  # a data set registered by the driver only
        datasets.register_dataset(spec)
    result = run_one(experiment, planned, store, force=force, progress="none")
    return {"wall_seconds": float(result["wall_seconds"]), "device": result["device"]}


def _by_value(experiment: Experiment, cloudpickle: Any) -> None:
    """Ship functions defined outside dpcore (a script's or a test's experiment) by value to the workers."""
    functions: list[Callable] = [experiment.plan, *experiment.accountants.values()]
    functions += [spec.loader for spec in datasets.DATASETS.values()]
    for fn in functions:
        module = sys.modules.get(getattr(fn, "__module__", "") or "")
        if module is not None and not module.__name__.startswith("dpcore") and module.__name__ != "__main__":
            cloudpickle.register_pickle_by_value(module)


def run_experiment_ray(
    experiment: str | Experiment,
    profile: str,
    *,
    only: Sequence[str] | str | None = None,
    force: bool = False,
    results_root: str | Path | None = None,
    checkpoints_root: str | Path | None = None,
    address: str | None = None,
    num_cpus: int = 2,
    threads: int | None = 1,
    stream: IO[str] | None = None,
) -> list[Outcome]:
    """Run every (selected) unfinished run of ``experiment`` at ``profile`` as Ray tasks; see the module docstring.

    ``num_cpus``: cores of the local Ray instance (ignored with ``address`` or when Ray is already
    initialised in this process), started by :func:`start_local_ray` (which raises :class:`RayStartError`
    when it cannot start).  ``threads``: torch threads inside each CPU task (``None``: torch's
    default).  Returns one :class:`~dpcore.experiments.runner.Outcome` per selected run, with status
    ``"trained"``, ``"skipped"``, ``"waiting"`` (its dependencies did not finish) or ``"failed"``.
    """
    num_cpus = check_positive_int("num_cpus", num_cpus)
    if threads is not None:
        threads = check_positive_int("threads", threads)
    if address is not None and (not isinstance(address, str) or not address):
        raise ValueError(f"address must be a non-empty str such as 'auto' or 'ray://host:10001', got {address!r}")
    ray = require("ray")
    exp = get(experiment) if isinstance(experiment, str) else experiment
    store = Store.default(profile, exp.name, results_root=results_root, checkpoints_root=checkpoints_root)
    store = Store(profile, exp.name, store.results_root.resolve(), store.checkpoints_root.resolve())
    out = stream if stream is not None else sys.stderr
    started_here = not ray.is_initialized()
    if started_here:
        if address is None:
            seconds = start_local_ray(num_cpus, stream=out)
            print(f"[ray] local instance ({num_cpus} CPUs) started in {format_seconds(seconds)}", file=out, flush=True)
        else:
            ray.init(address=address, log_to_driver=False)
    try:
        _by_value(exp, ray.cloudpickle)
        return _schedule(ray, exp, profile, store, only=only, force=force, threads=threads, out=out)
    finally:
        if started_here:
            ray.shutdown()


def _schedule(
    ray: Any, exp: Experiment, profile: str, store: Store, *, only, force: bool, threads: int | None, out: IO[str]
) -> list[Outcome]:
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    slots = max(1, gpus if gpus > 0 else int(resources.get("CPU", 1)))
    options = {"num_gpus": 1} if gpus > 0 else {"num_cpus": 1}
    task = ray.remote(max_retries=0, **options)(_train_task)
    tag = f"[{exp.name}/{profile} ray]"
    in_flight: dict[Any, PlannedRun] = {}
    done: dict[str, Outcome] = {}  # config hash -> trained or failed
    walls: list[float] = []
    selected: set[str] = set()
    while True:
        full = exp.runs(profile, store.load)
        plan = select(full, only, dependencies=True)
        selected |= {r.name for r in plan}
        busy = {config_hash(r.config) for r in in_flight.values()}
        for run in plan:
            digest = config_hash(run.config)
            if not run.ready or digest in done or digest in busy:
                continue
            note = lambda m: print(f"{tag} {m}", file=out, flush=True)  # noqa: E731
            if not force and store.finished(run.config, report=note) is not None:
                continue
            print(f"{tag} submit {run.name} ({digest})", file=out, flush=True)
            ref = task.remote(exp, run, store, force, datasets.DATASETS.get(run.config.dataset), threads)
            in_flight[ref] = run
            busy.add(digest)
        if not in_flight:
            break
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        ref = ready[0]
        run = in_flight.pop(ref)
        digest = config_hash(run.config)
        try:
            info = ray.get(ref)
        except ray.exceptions.RayError as exc:
            done[digest] = Outcome(run.name, digest, "failed")
            print(
                f"{tag} FAILED {run.name} ({digest}): {exc}\n  config: {canonical_json(run.config.to_dict())}",
                file=out, flush=True,
            )  # fmt: skip
            continue
        walls.append(info["wall_seconds"])
        done[digest] = Outcome(run.name, digest, "trained", store.result_path(run.config))
        remaining = _remaining(exp, profile, store, only, done, force)  # in-flight runs included
        estimate = sum(walls) / len(walls) * math.ceil(remaining / slots)
        finished = sum(o.status == "trained" for o in done.values())
        print(
            f"{tag} done {run.name} ({digest}) in {format_seconds(info['wall_seconds'])} on {info['device']}; "
            f"{finished} trained, {remaining} to go, about {format_seconds(estimate)} left",
            file=out, flush=True,
        )  # fmt: skip
    return _outcomes(exp, profile, store, selected, done)


def _remaining(exp: Experiment, profile: str, store: Store, only, done: dict[str, Outcome], force: bool) -> int:
    """Selected runs neither finished nor failed in this session nor with a result (in flight and waiting included)."""
    plan = select(exp.runs(profile, store.load), only, dependencies=True)
    count = 0
    for r in plan:
        digest = config_hash(r.config)
        if digest in done or (r.ready and not force and store.finished(r.config) is not None):
            continue
        count += 1
    return count


def _outcomes(exp: Experiment, profile: str, store: Store, selected: set[str], done: dict[str, Outcome]) -> list:
    outcomes = []
    for r in exp.runs(profile, store.load):
        if r.name not in selected:
            continue
        digest = config_hash(r.config)
        if digest in done:
            outcomes.append(done[digest])
        elif not r.ready:
            outcomes.append(Outcome(r.name, digest, "waiting"))
        else:
            outcomes.append(Outcome(r.name, digest, "skipped", store.result_path(r.config)))
    return outcomes
