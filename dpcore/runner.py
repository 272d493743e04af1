"""Notebook runner behind ``make figures`` and ``make test``.

``python -m dpcore.runner --profile quick --nb '<key or glob>'`` executes every notebook under
``notebooks/`` whose key (path relative to ``notebooks/`` without ``.ipynb``, e.g.
``00_accounting/dpsgd_accountants``) equals the argument or matches it as a glob
(``'00_accounting/*'``; ``--nb`` may be repeated).  An empty pattern, or one that matches no
notebook, is an error.  Notebooks run with papermill's Python API in this process, ``--jobs N`` at
once (``make figures``: one per core; each kernel on one thread, so N parallel notebooks do not
compete for threads; the longest start first), using the parameters of
``notebooks/profiles/<profile>.yaml``; executed copies go to ``build/<profile>/``.  A line is
printed when a notebook starts and when it ends, and every 10 s while it runs (``cell i/n, t s``).
It keeps going after a failure (reporting the failing cell).

Each profile has its own output folder, so profiles never overwrite each other: ``figures/``
for ``quick`` (committed) and ``figures/paper/`` for ``paper``.  At the end the runner gathers
the notebooks' ``*.claims.csv`` into ``<folder>/claims.csv`` and ``<folder>/SCORECARD.md``,
and writes ``<folder>/ERRATA.md`` from the claim specifications (:func:`dpcore.papers.all_specs`)
and the claims of each profile (its own first; a run never rewrites another profile's files).
It always prints a summary line, and exits non-zero when a notebook failed, when a claim is
``differs``, or when the claims are inconsistent (a status outside the vocabulary, a status that
does not follow from the specification, an unknown or duplicate key, a row of another profile),
or incomplete: every notebook reports every claim it owns (:func:`dpcore.papers.notebook_claims`)
at every profile, ``not-run`` with the reason where it does not compute it.

Explorer notebooks (``notebooks/explore/``, keys ``explore/<topic>``: :data:`EXPLORER_FOLDER`, :func:`is_explorer`)
are a category of their own: interactive views (``dpcore.explore``, served by ``make explore``) that check no paper
claim and write no file.  The runner executes them like every notebook (headless, they render their default state
as a static figure), the coverage check expects no claims from them and reports any they write.

``python -m dpcore.runner --prepare-nbval DIR`` writes quick-profile parameterised copies of
every notebook under ``DIR`` for nbval; their claims go to ``DIR/figures``.

``python -m dpcore.runner --check-claims DIR`` (the last step of ``make test``) checks the
claims that a fresh quick run wrote under ``DIR`` and the committed ``figures/claims.csv``:
neither may have a ``differs`` row or an inconsistent row, each must hold every claim of every
notebook, and the fresh values may not drift from the committed ones beyond each claim's tolerance.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import fnmatch
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import yaml

from dpcore import claims as claims_mod
from dpcore.claims import ClaimSpec, NotebookClaims, parse_value, values_match
from dpcore.paths import PROFILES, atomic_write_text, build_dir, figures_dir, notebooks_dir, profile_figures_dir
from dpcore.validation import check_choice, check_positive_int

__all__ = [
    "EXPLORER_FOLDER",
    "is_explorer",
    "ClaimsProblem",
    "discover",
    "load_profile",
    "notebook_parameters",
    "run_notebooks",
    "claim_problems",
    "coverage_problems",
    "gather_by_notebook",
    "drift_problems",
    "check_claims",
    "write_claims_summary",
    "errata_markdown",
    "write_errata",
    "prepare_nbval",
    "main",
    "numpy_avx512_targets",
]

KERNEL = "python3"
ENGINE = "dpcore-progress"
PROGRESS_EVERY = 10.0  # seconds between progress lines of a running notebook


def numpy_avx512_targets() -> str:
    """The AVX-512 targets among numpy's runtime-dispatched SIMD code paths (``numpy.show_config``'s "SIMD
    Extensions", found and not found on this machine), space-separated as ``NPY_DISABLE_CPU_FEATURES`` reads them;
    "" where numpy dispatches to none (older x86 builds, other architectures)."""
    import numpy as np

    simd = np.show_config(mode="dicts").get("SIMD Extensions", {})
    targets = [*simd.get("found", []), *simd.get("not found", [])]
    return " ".join(t for t in targets if t == "X86_V4" or t.startswith("AVX512"))


#: environment of the notebooks' kernels (issue 25, repeatable outputs): one BLAS/OpenMP thread, so float
#: reductions do not depend on the machine's core count; deterministic cuBLAS; a fixed hash seed; no
#: date in matplotlib's files; DPCORE_REPEATABLE=1 makes dpcore.report.Report put torch on one thread
#: with deterministic algorithms (dpcore.report.repeatable_torch).  CPU code paths no wider than AVX2: torch's
#: own vectorised kernels (``ATEN_CPU_CAPABILITY``), oneDNN's convolutions (``ONEDNN_MAX_CPU_ISA``) and numpy's
#: dispatched loops (``NPY_DISABLE_CPU_FEATURES``, the AVX-512 targets of :func:`numpy_avx512_targets`).  On a
#: machine with AVX-512 each otherwise takes code paths whose last bits differ: measured on an AVX-512 AMD EPYC of
#: this machine class, 003's batch-clipping runs and every 002 quick run (torch, oneDNN: either pin alone was not
#: enough) and the PLD accountants' ε from the 7th significant digit on (numpy) differed from the committed files;
#: with the pins every file came out byte-identical.  A machine without AVX2 keeps its best paths (upper limits).
REPEATABLE_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
    "SOURCE_DATE_EPOCH": "0",
    "MPLBACKEND": "Agg",
    "DPCORE_REPEATABLE": "1",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}
_NUMPY_AVX512 = numpy_avx512_targets()
if _NUMPY_AVX512:  # nothing to disable where numpy dispatches to no AVX-512 target
    REPEATABLE_ENV["NPY_DISABLE_CPU_FEATURES"] = _NUMPY_AVX512
_GLOB_CHARS = set("*?[")
#: the folder of the explorer notebooks under notebooks/: they report no claims (see the module docstring)
EXPLORER_FOLDER = "explore"


def is_explorer(key: str) -> bool:
    """Whether the notebook ``key`` (e.g. ``explore/dpsgd``) is an explorer: no claims, no files."""
    return key.split("/", 1)[0] == EXPLORER_FOLDER


@dataclass
class Result:
    key: str
    ok: bool
    seconds: float
    error: str = ""


class ClaimsProblem(ValueError):
    """The claims of a run are inconsistent or fail (``differs``); ``problems`` lists each one."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def notebook_key(path: Path, root: Path | None = None) -> str:
    """``notebooks/00_accounting/x.ipynb`` -> ``00_accounting/x``."""
    root = root or notebooks_dir()
    return path.relative_to(root).with_suffix("").as_posix()


def _all_notebooks(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts]


def discover(pattern: str | Sequence[str] = "*", root: Path | None = None) -> list[Path]:
    """Notebooks under ``root`` whose key equals ``pattern`` or matches it as a glob, sorted.

    ``pattern`` may be a list of patterns (their union).  Raises ``ValueError`` for an empty
    pattern and for a pattern that matches no notebook (a bare name such as
    ``dpsgd_accountants`` is not a key: the message suggests the matching keys).
    """
    root = root or notebooks_dir()
    patterns = [pattern] if isinstance(pattern, str) else list(pattern)
    if not patterns:
        raise ValueError("pattern must name at least one notebook key or glob")
    paths = _all_notebooks(root)
    keys = {notebook_key(p, root): p for p in paths}
    chosen: set[str] = set()
    for pat in patterns:
        if not isinstance(pat, str) or not pat.strip():
            raise ValueError(f"pattern must be a non-empty notebook key or glob, got {pat!r}")
        if _GLOB_CHARS & set(pat):
            matched = {k for k in keys if fnmatch.fnmatchcase(k, pat)}
        else:
            matched = {pat} if pat in keys else set()
        if not matched:
            hint = sorted(k for k in keys if k.rsplit("/", 1)[-1] == pat or pat in k)
            raise ValueError(
                f"pattern {pat!r} matches no notebook key under {root}"
                + (f"; did you mean {', '.join(hint)}?" if hint else f"; keys look like {next(iter(keys), '?')!r}")
            )
        chosen |= matched
    return [keys[k] for k in sorted(chosen)]


def load_profile(profile: str, root: Path | None = None) -> dict[str, dict]:
    """The ``{notebook key: parameters}`` mapping of one profile YAML."""
    check_choice("profile", profile, PROFILES)
    path = (root or notebooks_dir()) / "profiles" / f"{profile}.yaml"
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict) or not all(isinstance(v, dict | type(None)) for v in data.values()):
        raise ValueError(f"{path}: expected a mapping of notebook key -> parameter mapping")
    return {k: dict(v or {}) for k, v in data.items()}


def notebook_parameters(key: str, profile: str, out_figures: Path, table: dict[str, dict]) -> dict:
    """Parameters injected into one notebook: its profile entry plus profile and figures_dir."""
    return {**table.get(key, {}), "profile": profile, "figures_dir": str(out_figures)}


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

    def __init__(self, path: Path) -> None:
        self.path, self._saved = path, None

    def start(self) -> None:
        _LAUNCH.acquire()
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
        _LAUNCH.release()


_LAUNCH = threading.Lock()


@contextlib.contextmanager
def _repeatable_env() -> Iterator[None]:
    """Set :data:`REPEATABLE_ENV` while notebooks execute (their kernels inherit it); restore afterwards."""
    saved = {name: os.environ.get(name) for name in REPEATABLE_ENV}
    os.environ.update(REPEATABLE_ENV)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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


def _read_timings(path: Path) -> dict[str, float]:
    """The seconds per notebook key of the last run (``{}`` when there is none or it is unreadable)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(k, str) and isinstance(v, int | float)}


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
) -> list[Result]:
    """Execute ``paths`` with papermill, ``jobs`` at a time (threads of this process, one kernel each); never stops at
    a failure.  Returns one :class:`Result` per path, in the order of ``paths``.

    ``root`` is the notebooks folder (keys and ``profiles/`` are relative to it).  Prints a line
    when each notebook starts and ends, and ``cell i/n, t s`` every ``progress_every`` seconds.
    With ``jobs > 1`` the longest notebooks start first (the seconds of the last run, kept in
    ``out_build/timings.json``; on a first run the ones that train).  The kernels run in
    :data:`REPEATABLE_ENV` (one thread each, fixed seeds and dates), so a re-run of an unchanged
    notebook writes the same bytes whatever ``jobs`` is; each kernel's stderr goes to
    ``<executed copy>.stderr.log``.
    """
    import papermill

    if not progress_every > 0:
        raise ValueError(f"progress_every must be > 0 seconds, got {progress_every!r}")
    jobs = check_positive_int("jobs", jobs)
    os.environ.setdefault("MPLBACKEND", "Agg")
    table = load_profile(profile, root)
    engine = _progress_engine()
    timings_path = out_build / "timings.json"
    order = _launch_order(paths, root, table, _read_timings(timings_path))
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
        say(f"start  [{number}/{len(paths)}] {key}")
        start = time.perf_counter()
        stderr = _KernelStderr(output.with_suffix(".stderr.log"))
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
        results[index] = result
        line = f"{'ok    ' if result.ok else 'FAILED'} {result.seconds:7.1f} s  {key}"
        if not result.ok:
            line += f"\n         -> {result.error} (executed copy: {output})"
        say(line)

    with _repeatable_env(), concurrent.futures.ThreadPoolExecutor(jobs, thread_name_prefix="notebook") as pool:
        for future in [pool.submit(run_one, n, i) for n, i in enumerate(order, start=1)]:
            future.result()  # run_one catches a notebook's failure; anything else is a runner bug
    done = [r for r in results if r is not None]
    timings = {**_read_timings(timings_path), **{r.key: round(r.seconds, 1) for r in done}}
    out_build.mkdir(parents=True, exist_ok=True)
    atomic_write_text(timings_path, json.dumps(timings, indent=1, sort_keys=True) + "\n")
    return done


# ---------------------------------------------------------------------------------------------
# claims: consistency, drift, summary files
# ---------------------------------------------------------------------------------------------
def _row_id(row: dict) -> str:
    return f"{row.get('paper', '?')}/{row.get('key', '?')}"


def _row_tolerance(spec: ClaimSpec, status: str) -> tuple[float, float]:
    why = spec.explanation
    if status in claims_mod.EXPLAINED and why is not None and why.status == status:
        return why.rtol, why.atol
    return spec.rtol, spec.atol


def claim_problems(
    rows: Iterable[dict], specs: Iterable[ClaimSpec] | None, *, profile: str, allow_differs: bool = False
) -> list[str]:
    """Everything wrong with a set of claim rows, one message each (empty: all fine).

    Checks each row's status is in :data:`~dpcore.claims.STATUSES` and not ``differs`` (unless
    ``allow_differs``), its profile is ``profile``, its ``(paper, key)`` occurs once, and, when
    ``specs`` is given, that the key is specified and the row's paper value and status follow from
    the specification (a stale row after an edited spec, or a hand-typed status, is caught).
    """
    table = None if specs is None else {(s.paper, s.key): s for s in specs}
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for row in rows:
        ident = (row.get("paper", ""), row.get("key", ""))
        name = _row_id(row)
        status = row.get("status", "")
        if ident in seen:
            problems.append(f"{name}: checked twice")
        seen.add(ident)
        if status not in claims_mod.STATUSES:
            problems.append(f"{name}: status {status!r} is not one of {claims_mod.STATUSES}")
            continue
        if row.get("profile") != profile:
            problems.append(f"{name}: profile {row.get('profile')!r} in the {profile!r} claims")
        if status == "differs" and not allow_differs:
            problems.append(
                f"{name}: differs (paper {row.get('paper_value')}, ours {row.get('our_value')}, {row.get('tolerance')})"
            )
        if table is None:
            continue
        spec = table.get(ident)
        if spec is None:
            problems.append(f"{name}: no such claim in dpcore.papers.*.claims")
            continue
        if row.get("paper_value") != claims_mod.format_value(spec.value):
            problems.append(f"{name}: paper value {row.get('paper_value')} but the spec says {spec.value!r}")
        ours = parse_value(row.get("our_value", ""), like=spec.value)
        expected = claims_mod.compute_status(spec, ours)
        if status != expected:
            problems.append(f"{name}: status {status}, but ours = {row.get('our_value')} gives {expected} by the spec")
    return problems


def drift_problems(fresh: Iterable[dict], committed: Iterable[dict], specs: Iterable[ClaimSpec]) -> list[str]:
    """Rows of a fresh run that differ from the committed ones beyond the claim's tolerance.

    A claim in one set and not the other, a changed status, or an our-value further from the
    committed one than the tolerance of the claim (the explanation's for an explained status) is
    drift; values that are text or bool must be equal.
    """
    table = {(s.paper, s.key): s for s in specs}
    new = {(r["paper"], r["key"]): r for r in fresh}
    old = {(r["paper"], r["key"]): r for r in committed}
    problems = [f"{p}/{k}: in the fresh run but not in the committed claims" for p, k in sorted(set(new) - set(old))]
    problems += [f"{p}/{k}: in the committed claims but not in the fresh run" for p, k in sorted(set(old) - set(new))]
    for ident in sorted(set(new) & set(old)):
        a, b = old[ident], new[ident]
        name = _row_id(a)
        if a["status"] != b["status"]:
            problems.append(f"{name}: status {a['status']} committed, {b['status']} now")
            continue
        spec = table.get(ident)
        if spec is None:
            problems.append(f"{name}: no such claim in dpcore.papers.*.claims")
            continue
        ours_old = parse_value(a["our_value"], like=spec.value)
        ours_new = parse_value(b["our_value"], like=spec.value)
        if ours_old is None and ours_new is None:
            continue
        rtol, atol = _row_tolerance(spec, a["status"])
        if ours_old is None or ours_new is None or not values_match(ours_old, ours_new, rtol=rtol, atol=atol):
            problems.append(
                f"{name}: ours {a['our_value']} committed, {b['our_value']} now (tolerance {a['tolerance']})"
            )
    return problems


def _gather(out_figures: Path, profile: str) -> list[dict]:
    """The per-notebook claims of ``profile`` under ``out_figures`` (other profiles' folders skipped)."""
    others = [profile_figures_dir(p, out_figures) for p in PROFILES if p != profile and p != "quick"]
    return claims_mod.collect(out_figures, exclude=others)


def gather_by_notebook(out_figures: Path, profile: str) -> dict[str, list[dict]]:
    """``{notebook key: its claim rows}`` from the ``<folder>/<notebook>.claims.csv`` files of ``profile``
    under ``out_figures`` (a report's folder and name are the notebook's key, e.g. ``001_isrl_dp/mnist_logistic``)."""
    others = [profile_figures_dir(p, out_figures).resolve() for p in PROFILES if p != profile and p != "quick"]
    found: dict[str, list[dict]] = {}
    for path in sorted(Path(out_figures).rglob("*.claims.csv")):
        if any(path.resolve().is_relative_to(o) for o in others):
            continue
        key = path.relative_to(out_figures).as_posix()[: -len(".claims.csv")]
        found[key] = claims_mod.read_claims_csv(path)
    return found


def coverage_problems(
    by_notebook: dict[str, list[dict]], notebooks: Iterable[NotebookClaims], *, ran: Iterable[str] = ()
) -> list[str]:
    """Claims that a notebook owns but did not report, or reports without owning them.

    ``by_notebook`` maps a notebook key to the rows of its claims CSV (:func:`gather_by_notebook`);
    every notebook's rows must be exactly the claims it owns (``notebooks``: which notebook checks
    what).  A notebook in ``ran`` (it ran without failing) that owns claims must have written them.
    """
    owned: dict[str, set[tuple[str, str]]] = {}
    for nb in notebooks:
        owned.setdefault(nb.notebook, set()).update((nb.paper, k) for k in nb.keys)
    problems: list[str] = []
    for notebook, rows in sorted(by_notebook.items()):
        have = {(r.get("paper", ""), r.get("key", "")) for r in rows}
        mine = owned.get(notebook, set())
        missing = sorted(f"{p}/{k}" for p, k in mine - have)
        extra = sorted(f"{p}/{k}" for p, k in have - mine)
        if missing:
            problems.append(
                f"{notebook}: {len(missing)} of its claims not reported (not-run needs a row with the reason): "
                + ", ".join(missing[:6])
                + (" ..." if len(missing) > 6 else "")
            )
        if is_explorer(notebook) and rows:
            problems.append(f"{notebook}: an explorer notebook reports claims ({len(rows)}): explorers check none")
        elif extra:
            problems.append(f"{notebook}: reports claims another notebook (or none) owns: " + ", ".join(extra[:6]))
    for notebook in sorted(set(ran)):
        if owned.get(notebook) and notebook not in by_notebook:
            problems.append(f"{notebook}: ran but wrote no claims ({len(owned[notebook])} owned)")
    return problems


def write_claims_summary(
    out_figures: Path,
    profile: str = "quick",
    *,
    specs: Iterable[ClaimSpec] = (),
    notebooks: Iterable[NotebookClaims] = (),
    titles: dict[str, str] | None = None,
) -> list[dict]:
    """Gather every notebook's claims under ``out_figures`` into ``claims.csv`` and ``SCORECARD.md``
    (the scorecard uses the ``specs``, the ``notebooks`` and the papers' ``titles`` when given).

    Raises ``ValueError`` (before writing anything) for a status outside the vocabulary.
    """
    rows = _gather(out_figures, profile)
    card = claims_mod.scorecard_markdown(rows, profile=profile, specs=specs, notebooks=notebooks, titles=titles,
                                         findings=_findings(), gpu_keys=_gpu_keys())  # fmt: skip
    claims_mod.write_claims_csv(rows, out_figures / "claims.csv")
    atomic_write_text(out_figures / "SCORECARD.md", card)
    return rows


def _read_optional(path: Path) -> dict[tuple[str, str], dict]:
    if not path.exists():
        return {}
    return {(r["paper"], r["key"]): r for r in claims_mod.read_claims_csv(path)}


def _md(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def errata_markdown(
    specs: Iterable[ClaimSpec],
    results: dict[str, dict[tuple[str, str], dict]],
    findings: Iterable[claims_mod.Finding] = (),
) -> str:
    """``ERRATA.md``: per paper, per finding (kind, whether it changes a conclusion, the evidence), its rows with
    the printed value, the value the explanation expects, and ours per profile (``results`` maps a profile to
    its claims.csv rows; ours is the first profile's value, else another's, named).  Explained rows no finding
    covers are listed last under their paper.  Every line stays under 300 characters (the full evidence of each
    row is in ``dpcore/papers/*/claims.py`` and its note in ``claims.csv``)."""
    for profile in results:
        check_choice("profile", profile, PROFILES)
    specs = [s for s in specs if s.explanation is not None]
    findings = list(findings)
    order = {p: i for i, p in enumerate(claims_mod.PAPERS)}
    kinds = {k: sum(s.explanation.status == k for s in specs) for k in claims_mod.EXPLAINED}  # type: ignore[union-attr]
    lines = [
        "# Findings: where the papers and dpcore differ, by root cause",
        "",
        "Generated by `make figures` from the findings and claim specifications of `dpcore/papers/*/claims.py` "
        "and the `claims.csv` of each profile.",
        "*erratum*: the paper is wrong by its own formulas or settings (a computation anyone reruns); "
        "*not reproduced*: our runs do not reach the printed value at the printed ε (the paper may be right); "
        "*inconclusive*: the data cannot decide.",
        "",
        f"{len(specs)} explained claims: " + ", ".join(f"{n} {k.replace('-', ' ')}" for k, n in kinds.items()) + ".",
    ]
    head, rule = "| key | printed | expected | ours |", "|---|---|---|---|"
    first = next(iter(results), "")

    def row_line(spec: ClaimSpec) -> str:
        why = spec.explanation
        assert why is not None  # filtered above
        ours = "not run"
        for profile, rows in results.items():  # this file's profile first, then the others that ran it
            row = rows.get((spec.paper, spec.key))
            if row and row["our_value"] != "":
                shown = claims_mod._short_value(row["our_value"])
                ours = shown if profile == first else f"{shown} ({profile})"
                break
        cells = [spec.key, claims_mod._short_value(spec.value), claims_mod._short_value(why.expected), ours]
        return "| " + " | ".join(_md(c) for c in cells) + " |"

    for paper in sorted({s.paper for s in specs}, key=lambda p: order.get(p, 99)):
        mine = [s for s in specs if s.paper == paper]
        lines += ["", f"## Paper {paper}"]
        covered: set[str] = set()
        for f in (f for f in findings if f.paper == paper and f.kind in claims_mod.EXPLAINED):
            rows_of = [s for s in mine if f.covers(s.key) and s.explanation.status == f.kind]  # type: ignore[union-attr]
            if not rows_of:
                continue
            covered.update(s.key for s in rows_of)
            weight = "changes a conclusion" if f.conclusion else "cosmetic"
            lines += ["", f"### {f.kind.replace('-', ' ')}: {f.short}", "", f.text, "",
                      f"{weight}; {len(rows_of)} rows; evidence: {f.evidence}", "", head, rule]  # fmt: skip
            lines += [row_line(s) for s in rows_of]
        rest = [s for s in mine if s.key not in covered]
        if rest:
            lines += ["", "### explained rows under no finding", "", head, rule, *(row_line(s) for s in rest)]
    return "\n".join(lines) + "\n"


def write_errata(specs: Iterable[ClaimSpec], root: Path, profile: str = "quick") -> Path:
    """Write ``ERRATA.md`` of ``profile`` into its figures folder under ``root`` (``root/ERRATA.md`` for quick,
    ``root/paper/ERRATA.md`` for paper): our values of ``profile`` first, then those of the other profiles'
    ``claims.csv`` that exist.  Another profile's ``ERRATA.md`` is never rewritten."""
    check_choice("profile", profile, PROFILES)
    order = [profile, *(p for p in PROFILES if p != profile)]
    results = {p: _read_optional(profile_figures_dir(p, root) / "claims.csv") for p in order}
    results = {p: rows for p, rows in results.items() if rows or p == profile}
    text = errata_markdown(specs, results, _findings())
    return atomic_write_text(profile_figures_dir(profile, root) / "ERRATA.md", text)


def check_claims(
    fresh_dir: Path,
    committed_csv: Path,
    specs: Iterable[ClaimSpec],
    *,
    notebooks: Iterable[NotebookClaims] | None = None,
    stream: TextIO = sys.stdout,
) -> int:
    """The drift check of ``make test``: 0 when the fresh quick claims under ``fresh_dir`` and the
    committed ``committed_csv`` are consistent, have no ``differs`` row, and agree within tolerance,
    and (given ``notebooks``) every notebook, all of which ran, reported exactly the claims it owns."""
    specs = list(specs)
    problems: list[str] = []
    try:
        fresh = _gather(fresh_dir, "quick")
        if notebooks is not None:
            notebooks = list(notebooks)
            every = [nb.notebook for nb in notebooks]
            problems += coverage_problems(gather_by_notebook(fresh_dir, "quick"), notebooks, ran=every)
    except ValueError as exc:  # a per-notebook CSV with other columns: reported, exit 1
        problems.append(str(exc))
        fresh = []
    if not fresh:
        problems.append(f"no *.claims.csv under {fresh_dir}: did the quick notebooks run?")
    committed: list[dict] = []
    if not committed_csv.exists():
        problems.append(f"{committed_csv} does not exist: run `make figures`")
    else:
        try:
            committed = claims_mod.read_claims_csv(committed_csv)
        except ValueError as exc:  # old columns: reported, exit 1
            problems.append(f"{exc}: run `make figures`")
    problems += [f"fresh run: {p}" for p in claim_problems(fresh, specs, profile="quick")]
    problems += [f"committed {committed_csv.name}: {p}" for p in claim_problems(committed, specs, profile="quick")]
    problems += [f"drift: {p}" for p in drift_problems(fresh, committed, specs)]
    problems += [f"findings: {p}" for p in claims_mod.finding_problems(_findings(), specs, fresh)]
    if notebooks is not None:
        problems += claims_mod.explanation_problems(specs, notebooks)
    for problem in problems:
        print(f"claims: {problem}", file=stream)
    counts = {s: sum(r["status"] == s for r in fresh) for s in claims_mod.STATUSES}
    verdict = "FAILED" if problems else "ok"
    print(
        f"check-claims {verdict}: {len(fresh)} fresh claims ("
        + ", ".join(f"{v} {k}" for k, v in counts.items())
        + f") vs {len(committed)} committed in {committed_csv}; {len(problems)} problem(s)",
        file=stream,
        flush=True,
    )
    return 1 if problems else 0


def prepare_nbval(out_dir: Path, profile: str = "quick", root: Path | None = None) -> list[Path]:
    """Write parameterised, unexecuted copies of every notebook for nbval (``out_dir`` is replaced).

    The copies write their figures and claims under ``out_dir/figures`` (checked by
    ``--check-claims``), never into the committed ``figures/``.
    """
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    table = load_profile(profile, root)
    shutil.rmtree(out_dir, ignore_errors=True)  # no stale copies (or claims) of renamed or deleted notebooks
    written = []
    for path in discover("*", root):
        key = notebook_key(path, root)
        nb = load_notebook_node(str(path))  # also normalises cell metadata (tags) as papermill expects
        nb = parameterize_notebook(nb, notebook_parameters(key, profile, out_dir / "figures", table))
        target = out_dir / f"{key}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append(target)
    return written


def _specs() -> list[ClaimSpec]:
    from dpcore.papers import all_specs

    return list(all_specs())


def _notebooks() -> list[NotebookClaims]:
    from dpcore.papers import notebook_claims

    return list(notebook_claims())


def _findings() -> list[claims_mod.Finding]:
    from dpcore.papers import findings

    return list(findings())


def _gpu_keys() -> dict[str, tuple[str, ...]]:
    from dpcore.papers import gpu_keys

    return gpu_keys()


def _titles() -> dict[str, str]:
    from dpcore.papers import titles

    return titles()


def _run(args: argparse.Namespace, stream: TextIO) -> int:
    try:
        paths = discover(args.nb)
    except ValueError as exc:
        print(f"error: {exc}", file=stream)
        return 2
    out_figures = profile_figures_dir(args.profile)
    print(
        f"running {len(paths)} notebook(s), profile={args.profile}, figures -> {out_figures}", file=stream, flush=True
    )
    start = time.perf_counter()
    problems: list[str] = []
    try:
        results = run_notebooks(
            paths,
            profile=args.profile,
            out_figures=out_figures,
            out_build=build_dir() / args.profile,
            stream=stream,
            jobs=args.jobs,
        )
    except Exception as exc:  # e.g. a broken profile YAML: reported below with exit 1, summary still printed
        problems.append(f"the notebooks could not be run: {type(exc).__name__}: {exc}")
        results = []
    failed = [r for r in results if not r.ok]
    rows: list[dict] = []
    specs: list[ClaimSpec] | None = None
    notebooks: list[NotebookClaims] | None = None
    # every step reports its failure in the summary (exit 1) instead of a traceback
    try:
        specs, notebooks, titles = _specs(), _notebooks(), _titles()
    except Exception as exc:  # reported below with exit 1: the summary line must always print
        problems.append(f"the claim specifications do not load: {type(exc).__name__}: {exc}")
        titles = {}
    try:
        rows = _gather(out_figures, args.profile)
        problems += claim_problems(rows, specs, profile=args.profile)
        if specs is not None and notebooks is not None:
            problems += claims_mod.finding_problems(_findings(), specs, rows)
            problems += claims_mod.explanation_problems(specs, notebooks)
        if notebooks is not None:
            ran = [r.key for r in results if r.ok]
            problems += coverage_problems(gather_by_notebook(out_figures, args.profile), notebooks, ran=ran)
        write_claims_summary(out_figures, args.profile, specs=specs or (), notebooks=notebooks or (), titles=titles)
        if specs is not None:
            write_errata(specs, figures_dir(), args.profile)
    except Exception as exc:  # reported below with exit 1: the summary line must always print
        problems.append(f"{type(exc).__name__}: {exc}")
    counts = {s: sum(r.get("status") == s for r in rows) for s in claims_mod.STATUSES}
    rel = os.path.relpath(out_figures, figures_dir().parent)
    print(
        f"summary: {len(results) - len(failed)} ok, {len(failed)} failed, "
        f"{time.perf_counter() - start:.1f} s; claims: "
        + ", ".join(f"{v} {k}" for k, v in counts.items())
        + f"; {len(problems)} problem(s) ({rel}/claims.csv, {rel}/SCORECARD.md, {rel}/ERRATA.md)",
        file=stream,
        flush=True,
    )
    for r in failed:
        print(f"failed: {r.key}: {r.error}", file=stream)
    for problem in problems:
        print(f"claims: {problem}", file=stream)
    return 1 if failed or problems else 0


def _positive_int(text: str) -> int:
    """argparse type of ``--jobs``: :func:`~dpcore.validation.check_positive_int` of the parsed text."""
    try:
        return check_positive_int("--jobs", int(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None, *, stream: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpcore.runner", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default=os.environ.get("PROFILE", "quick"), choices=PROFILES)
    parser.add_argument(
        "--nb",
        action="append",
        default=None,
        help="notebook key (e.g. '00_accounting/dpsgd_accountants') or glob over keys ('00_accounting/*'); repeatable",
    )
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=os.environ.get("JOBS", "1"),  # argparse converts a str default with type
        help="notebooks run at once, one kernel (one thread) each (default: $JOBS or 1)",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--prepare-nbval", metavar="DIR", type=Path, help="write nbval copies and exit")
    group.add_argument(
        "--check-claims",
        metavar="DIR",
        type=Path,
        help="check the claims a fresh quick run wrote under DIR against the committed figures/claims.csv",
    )
    group.add_argument("--errata", action="store_true", help="only (re)write the profile's ERRATA.md")
    parser.add_argument(
        "--committed", type=Path, default=None, help="committed claims.csv for --check-claims (default figures/)"
    )
    args = parser.parse_args(argv)
    args.nb = args.nb if args.nb is not None else ["*"]

    if args.prepare_nbval:
        written = prepare_nbval(args.prepare_nbval.resolve())
        print(f"prepared {len(written)} notebooks for nbval under {args.prepare_nbval}", file=stream)
        return 0
    if args.check_claims:
        committed = args.committed or figures_dir() / "claims.csv"
        try:
            specs = _specs()
            notebooks = _notebooks()
        except (ValueError, ImportError) as exc:
            print(f"check-claims FAILED: the claim specifications do not load: {exc}", file=stream)
            return 1
        return check_claims(args.check_claims, committed, specs, notebooks=notebooks, stream=stream)
    if args.errata:
        print(f"wrote {write_errata(_specs(), figures_dir(), args.profile)}", file=stream)
        return 0
    return _run(args, stream)


if __name__ == "__main__":
    raise SystemExit(main())
