"""Notebook runner behind ``make figures`` and ``make test``.

``python -m dpcore.runner --profile quick --nb '<glob>'`` executes every notebook
under ``notebooks/`` (or the subset whose key matches the glob) with papermill's
Python API, one after the other in this process, using the parameters of
``notebooks/profiles/<profile>.yaml`` (keyed by notebook path relative to
``notebooks/`` without ``.ipynb``).  Executed copies go to ``build/<profile>/``.
It prints one line per notebook and a summary, keeps going after a failure
(reporting the failing cell) and exits non-zero if any notebook failed.  At the
end it gathers every ``*.claims.csv`` into ``figures/claims.csv`` and writes
``figures/SCORECARD.md``.

``python -m dpcore.runner --prepare-nbval DIR`` writes quick-profile
parameterised (unexecuted) copies of every notebook under DIR for nbval.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import yaml

from dpcore import claims as claims_mod
from dpcore.paths import build_dir, figures_dir, notebooks_dir
from dpcore.report import PROFILES, atomic_path
from dpcore.validation import check_choice

__all__ = [
    "discover",
    "load_profile",
    "notebook_parameters",
    "run_notebooks",
    "write_claims_summary",
    "prepare_nbval",
    "main",
]

KERNEL = "python3"


@dataclass
class Result:
    key: str
    ok: bool
    seconds: float
    error: str = ""


def notebook_key(path: Path, root: Path | None = None) -> str:
    """``notebooks/00_accounting/x.ipynb`` -> ``00_accounting/x``."""
    root = root or notebooks_dir()
    return path.relative_to(root).with_suffix("").as_posix()


def discover(pattern: str = "*", root: Path | None = None) -> list[Path]:
    """Notebooks under ``root`` whose key (or file name) matches ``pattern``, sorted."""
    root = root or notebooks_dir()
    found = []
    for path in sorted(root.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        key = notebook_key(path, root)
        if fnmatch.fnmatch(key, pattern) or fnmatch.fnmatch(path.name, pattern) or fnmatch.fnmatch(key, f"*{pattern}*"):
            found.append(path)
    return found


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


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Send this process's (and the kernel's) OS-level stderr to ``path`` while executing,
    so the progress lines stay one per notebook; the log sits next to the executed copy."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "w") as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def run_notebooks(
    paths: list[Path],
    *,
    profile: str,
    out_figures: Path,
    out_build: Path,
    root: Path | None = None,
    stream: TextIO = sys.stdout,
) -> list[Result]:
    """Execute ``paths`` one after the other with papermill; never stops at a failure.

    ``root`` is the notebooks folder (keys and ``profiles/`` are relative to it).
    """
    import papermill

    os.environ.setdefault("MPLBACKEND", "Agg")
    table = load_profile(profile, root)
    results = []
    for path in paths:
        key = notebook_key(path, root)
        output = out_build / f"{key}.ipynb"
        output.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        try:
            with _stderr_to(output.with_suffix(".stderr.log")):
                papermill.execute_notebook(
                    str(path),
                    str(output),
                    parameters=notebook_parameters(key, profile, out_figures, table),
                    kernel_name=KERNEL,
                    cwd=str(path.parent),
                    progress_bar=False,
                )
            result = Result(key, True, time.perf_counter() - start)
        except Exception as exc:  # a failing notebook must not stop the others
            result = Result(key, False, time.perf_counter() - start, _describe_failure(exc))
        results.append(result)
        line = f"{'ok    ' if result.ok else 'FAILED'} {result.seconds:7.1f} s  {key}"
        if not result.ok:
            line += f"\n         -> {result.error} (executed copy: {output})"
        print(line, file=stream, flush=True)
    return results


def write_claims_summary(out_figures: Path) -> list[dict]:
    """Gather every notebook's claims into ``claims.csv`` and write ``SCORECARD.md``."""
    rows = claims_mod.collect(out_figures)
    claims_mod.write_claims_csv(rows, out_figures / "claims.csv")
    with atomic_path(out_figures / "SCORECARD.md") as tmp:
        tmp.write_text(claims_mod.scorecard_markdown(rows), encoding="utf-8")
    return rows


def prepare_nbval(out_dir: Path, profile: str = "quick", root: Path | None = None) -> list[Path]:
    """Write parameterised, unexecuted copies of every notebook for nbval (``out_dir`` is replaced)."""
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    table = load_profile(profile, root)
    shutil.rmtree(out_dir, ignore_errors=True)  # no stale copies of renamed or deleted notebooks
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpcore.runner", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default=os.environ.get("PROFILE", "quick"), choices=PROFILES)
    parser.add_argument("--nb", default="*", help="glob over notebook keys, e.g. '00_accounting/*'")
    parser.add_argument("--prepare-nbval", metavar="DIR", type=Path, help="write nbval copies and exit")
    args = parser.parse_args(argv)

    if args.prepare_nbval:
        written = prepare_nbval(args.prepare_nbval.resolve())
        print(f"prepared {len(written)} notebooks for nbval under {args.prepare_nbval}")
        return 0

    paths = discover(args.nb or "*")
    if not paths:
        print(f"no notebook matches {args.nb!r}", file=sys.stderr)
        return 2
    print(f"running {len(paths)} notebook(s), profile={args.profile}", flush=True)
    start = time.perf_counter()
    results = run_notebooks(
        paths, profile=args.profile, out_figures=figures_dir(), out_build=build_dir() / args.profile
    )
    rows = write_claims_summary(figures_dir())
    failed = [r for r in results if not r.ok]
    counts = {s: sum(r["status"] == s for r in rows) for s in claims_mod.STATUSES}
    print(
        f"summary: {len(results) - len(failed)} ok, {len(failed)} failed, "
        f"{time.perf_counter() - start:.1f} s; claims: "
        + ", ".join(f"{v} {k}" for k, v in counts.items())
        + " (figures/claims.csv, figures/SCORECARD.md)"
    )
    for r in failed:
        print(f"failed: {r.key}: {r.error}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
