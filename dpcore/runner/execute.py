"""Papermill execution of notebooks, ``jobs`` at a time (:func:`run_notebooks`): a progress line every
:data:`PROGRESS_EVERY` seconds, each kernel's stderr in its own log, the longest notebooks first, the kernels in
:data:`~dpcore.runner.environment.REPEATABLE_ENV`."""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from dpcore.paths import atomic_write_text, build_dir, notebooks_dir
from dpcore.report import OUTPUTS_LOG_VAR
from dpcore.runner.compare import NotebookOutcome, settle, snapshot
from dpcore.runner.discovery import load_profile, notebook_key, notebook_parameters
from dpcore.runner.environment import repeatable_env
from dpcore.validation import check_positive_int

__all__ = [
    "KERNEL",
    "ENGINE",
    "PROGRESS_EVERY",
    "Result",
    "run_notebooks",
    "durations_path",
    "recorded_durations",
    "record_durations",
]


KERNEL = "python3"
ENGINE = "dpcore-progress"
PROGRESS_EVERY = 10.0  # seconds between progress lines of a running notebook


@dataclass
class Result:
    key: str
    ok: bool
    seconds: float
    error: str = ""
    #: what its outputs showed against the files they replaced (:func:`dpcore.runner.compare.settle`); None: not
    #: compared (``compare=False``)
    outputs: NotebookOutcome | None = None


def _describe_failure(exc: BaseException) -> str:
    cell = getattr(exc, "cell_index", None)
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = getattr(exc, "evalue", str(exc))
    where = "setup"
    if cell is not None:
        source = (getattr(exc, "source", "") or "").strip().splitlines()
        where = f"cell {cell} (execution count {getattr(exc, 'exec_count', '?')}"
        where += f", starting {source[0][:60]!r})" if source else ")"
    first_line = str(evalue).strip().splitlines()[0] if str(evalue).strip() else ""
    return f"{where}: {ename}: {first_line}"


class _KernelStderr:
    """Point the OS-level stderr (fd 2) at ``path`` from just before a notebook's kernel starts until its first cell,
    so the kernel inherits the log as its stderr (C-level warnings stay out of the progress lines) and this process
    gets its own stderr back at once.  One kernel launches at a time (:data:`_LAUNCH`): several notebooks run in
    parallel, and each kernel must inherit its own log."""

    def __init__(self, path: Path, outputs_log: Path | None = None) -> None:
        self.path, self._saved = path, None
        self.outputs_log = outputs_log  # named to the kernel in $DPCORE_OUTPUTS_LOG (dpcore.report.log_written)
        self._saved_env: str | None = None

    def start(self) -> None:
        _LAUNCH.acquire()
        if self.outputs_log is not None:
            self._saved_env = os.environ.get(OUTPUTS_LOG_VAR)
            os.environ[OUTPUTS_LOG_VAR] = str(self.outputs_log)
        sys.stderr.flush()
        self._saved = os.dup(2)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 2)
        os.close(fd)

    def release(self) -> None:
        if self._saved is None:
            return
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._saved = None
        if self.outputs_log is not None:
            if self._saved_env is None:
                os.environ.pop(OUTPUTS_LOG_VAR, None)
            else:
                os.environ[OUTPUTS_LOG_VAR] = self._saved_env
        _LAUNCH.release()


_LAUNCH = threading.Lock()


# ---------------------------------------------------------------------------------------------
# live progress
# ---------------------------------------------------------------------------------------------
class _Progress:
    """Prints ``... <key>: cell i/n, t s`` every ``every`` seconds while a notebook runs."""

    def __init__(self, key: str, stream: TextIO, every: float, lock: threading.Lock | None = None) -> None:
        self.key, self.stream, self.every = key, stream, every
        self.lock = lock if lock is not None else threading.Lock()  # shared by parallel notebooks' lines
        self.cell, self.total = 0, 0
        self.start = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"progress {key}", daemon=True)

    def __enter__(self) -> _Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            elapsed = time.perf_counter() - self.start
            where = f"cell {self.cell}/{self.total}" if self.cell else "starting the kernel"
            with self.lock:
                print(f"  ... {self.key}: {where}, {elapsed:.0f} s", file=self.stream, flush=True)


#: the notebook each runner thread is executing: (its progress, its kernel's stderr), read by the papermill engine
_CURRENT = threading.local()


def _progress_engine() -> str:
    """Register (once) a papermill engine that reports the executing cell to :class:`_Progress`."""
    from papermill.engines import NBClientEngine, papermill_engines

    class ProgressEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):  # noqa: ANN001, ANN206
            cell_start = nb_man.cell_start
            progress, stderr = getattr(_CURRENT, "notebook", (None, None))  # this thread's notebook

            def tracked(cell, cell_index=None, **kw):  # noqa: ANN001, ANN202
                if stderr is not None:
                    stderr.release()  # the kernel runs: it has inherited its log
                if progress is not None:
                    progress.cell = (cell_index or 0) + 1
                    progress.total = len(nb_man.nb.cells)
                return cell_start(cell, cell_index, **kw)

            nb_man.cell_start = tracked
            return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    if ENGINE not in papermill_engines._engines:
        papermill_engines.register(ENGINE, ProgressEngine)
    return ENGINE


def _launch_order(paths: list[Path], root: Path | None, table: dict[str, dict], timings: dict[str, float]) -> list[int]:
    """Indices of ``paths`` longest first (so that parallel lanes end together): by the seconds each took last time
    (``timings``), else the notebooks that train (``train_missing`` in the profile) first; ties keep their order."""

    def expected(i: int) -> tuple[float, int]:
        key = notebook_key(paths[i], root)
        guess = timings.get(key, 1e6 if table.get(key, {}).get("train_missing") else 0.0)
        return (-float(guess), i)

    return sorted(range(len(paths)), key=expected)


def durations_path(root: Path | None = None) -> Path:
    """The committed durations, ``notebooks/durations.json`` (``{profile: {notebook key: seconds}}``): the launch order
    of a fresh clone, which has no ``build/<profile>/timings.json`` yet (:func:`recorded_durations`)."""
    return (root or notebooks_dir()) / "durations.json"


def recorded_durations(profile: str, root: Path | None = None, out_build: Path | None = None) -> dict[str, float]:
    """The last recorded seconds of each notebook of ``profile``: this machine's last run
    (``out_build/timings.json``, written by every run) over the committed ones (:func:`durations_path`)."""
    committed = _read_timings_of(durations_path(root), profile)
    local = _read_timings(out_build / "timings.json") if out_build is not None else {}
    return {**committed, **local}


def record_durations(profile: str, root: Path | None = None, out_build: Path | None = None) -> Path:
    """Write this machine's last seconds per notebook (``out_build/timings.json``) into the committed durations of
    ``profile`` (:func:`durations_path`, whole seconds): ``python -m dpcore.runner --record-durations`` after a full
    ``make figures``.  The other profiles' entries are kept."""
    path = durations_path(root)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    merged = {**_read_timings_of(path, profile), **_read_timings((out_build or build_dir() / profile) / "timings.json")}
    data[profile] = {k: round(v) for k, v in sorted(merged.items())}
    return atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _read_timings_of(path: Path, profile: str) -> dict[str, float]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    section = data.get(profile) if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return {}
    return {k: float(v) for k, v in section.items() if isinstance(k, str) and isinstance(v, int | float)}


def _read_timings(path: Path) -> dict[str, float]:
    """The seconds per notebook key of the last run (``{}`` when there is none or it is unreadable)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(k, str) and isinstance(v, int | float)}


_OUTPUT_WORDS = {"identical": "identical", "within": "within tolerance, kept as committed", "changed": "CHANGED"}


def _settle_unlogged(results: list[Result], before: dict[Path, bytes], out_figures: Path, profile: str) -> None:
    """Files under ``out_figures`` that changed during the run but that no Report logged (a notebook that wrote a file
    itself) are compared too, under the first notebook of their folder that ran; files of other folders, and the
    runner's own summaries at the top (written after this), are not this run's and are left alone."""
    logged = {f.path for r in results if r.outputs is not None for f in r.outputs.files}
    after = snapshot(out_figures, profile)
    loose = [p for p, data in after.items() if p not in logged and before.get(p) != data]
    root = Path(out_figures).resolve()
    for path in loose:
        parts = path.relative_to(root).parts if path.is_relative_to(root) else ()
        if len(parts) < 2:
            continue
        owner = next((r for r in results if r.key.split("/", 1)[0] == parts[0]), None)
        if owner is None or owner.outputs is None:
            continue
        owner.outputs.files += settle({owner.key: [path]}, before)[0].files


def run_notebooks(
    paths: list[Path],
    *,
    profile: str,
    out_figures: Path,
    out_build: Path,
    root: Path | None = None,
    stream: TextIO = sys.stdout,
    progress_every: float = PROGRESS_EVERY,
    jobs: int = 1,
    compare: bool = True,
) -> list[Result]:
    """Execute ``paths`` with papermill, ``jobs`` at a time (threads of this process, one kernel each); never stops at
    a failure.  Returns one :class:`Result` per path, in the order of ``paths``.

    ``root`` is the notebooks folder (keys and ``profiles/`` are relative to it).  Prints a line
    when each notebook starts and ends, and ``cell i/n, t s`` every ``progress_every`` seconds.
    The longest notebooks start first (the seconds of the last run, kept in ``out_build/timings.json``; on a fresh
    clone the committed ``notebooks/durations.json``; else the ones that train), so that parallel workers end
    together instead of one running the longest notebook alone at the end.  The kernels run in
    :data:`REPEATABLE_ENV` (one thread each, fixed seeds and dates), so a re-run of an unchanged
    notebook writes the same bytes whatever ``jobs`` is; each kernel's stderr goes to
    ``<executed copy>.stderr.log``.

    With ``compare`` (the default), every file a notebook wrote under ``out_figures`` is compared with the file that
    was there before the run (:mod:`dpcore.runner.compare`): identical, within the tolerance of its kind of value (the
    file that was there is put back: another CPU's last bits leave ``git status`` clean), or changed (written); the
    verdict is each :class:`Result`'s ``outputs`` and ends the notebook's ``ok`` line.
    """
    import papermill

    if not progress_every > 0:
        raise ValueError(f"progress_every must be > 0 seconds, got {progress_every!r}")
    jobs = check_positive_int("jobs", jobs)
    os.environ.setdefault("MPLBACKEND", "Agg")
    table = load_profile(profile, root)
    engine = _progress_engine()
    timings_path = out_build / "timings.json"
    expected = recorded_durations(profile, root, out_build)
    order = _launch_order(paths, root, table, expected)
    before = snapshot(out_figures, profile) if compare else {}
    results: list[Result | None] = [None] * len(paths)
    print_lock = threading.Lock()

    def say(line: str) -> None:
        with print_lock:
            print(line, file=stream, flush=True)

    def run_one(number: int, index: int) -> None:
        path = paths[index]
        key = notebook_key(path, root)
        output = out_build / f"{key}.ipynb"
        output.parent.mkdir(parents=True, exist_ok=True)
        last = f" (last {expected[key]:.0f} s)" if key in expected else ""
        say(f"start  [{number}/{len(paths)}] {key}{last}")
        start = time.perf_counter()
        outputs_log = output.with_suffix(".outputs.txt")  # the files its Reports write (dpcore.report.log_written)
        outputs_log.unlink(missing_ok=True)
        stderr = _KernelStderr(output.with_suffix(".stderr.log"), outputs_log if compare else None)
        try:
            with _Progress(key, stream, progress_every, print_lock) as progress:
                _CURRENT.notebook = (progress, stderr)
                stderr.start()
                try:
                    papermill.execute_notebook(
                        str(path),
                        str(output),
                        parameters=notebook_parameters(key, profile, out_figures, table),
                        kernel_name=KERNEL,
                        engine_name=engine,
                        cwd=str(path.parent),
                        progress_bar=False,
                    )
                finally:
                    stderr.release()  # also when the kernel never started
                    _CURRENT.notebook = (None, None)
            result = Result(key, True, time.perf_counter() - start)
        except Exception as exc:  # a failing notebook must not stop the others
            result = Result(key, False, time.perf_counter() - start, _describe_failure(exc))
        if compare:
            try:
                written = [Path(line) for line in outputs_log.read_text(encoding="utf-8").splitlines() if line]
            except OSError:  # it wrote nothing through a Report
                written = []
            result.outputs = settle({key: written}, before)[0]
        results[index] = result
        line = f"{'ok    ' if result.ok else 'FAILED'} {result.seconds:7.1f} s  {key}"
        if result.outputs is not None and result.outputs.files:
            line += f"  (outputs {_OUTPUT_WORDS[result.outputs.status]})"
        if not result.ok:
            line += f"\n         -> {result.error} (executed copy: {output})"
        say(line)

    with repeatable_env(), concurrent.futures.ThreadPoolExecutor(jobs, thread_name_prefix="notebook") as pool:
        for future in [pool.submit(run_one, n, i) for n, i in enumerate(order, start=1)]:
            future.result()  # run_one catches a notebook's failure; anything else is a runner bug
    done = [r for r in results if r is not None]
    if compare:
        _settle_unlogged(done, before, out_figures, profile)
    timings = {**_read_timings(timings_path), **{r.key: round(r.seconds, 1) for r in done}}
    out_build.mkdir(parents=True, exist_ok=True)
    atomic_write_text(timings_path, json.dumps(timings, indent=1, sort_keys=True) + "\n")
    return done
