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
It keeps going after a failure (reporting the failing cell).  Before anything runs, every key of a notebook's
profile entry must be a parameter of the notebook (:func:`~dpcore.runner.discovery.profile_problems`: a misspelt
key stops the run, exit 2, naming the key, the notebook and its parameters).  The notebooks start longest first by
their last recorded seconds (``build/<profile>/timings.json``, on a fresh clone ``notebooks/durations.json``;
``--record-durations`` copies the first into the second).

Every file a notebook writes is compared with the file it replaces (:mod:`dpcore.runner.compare`): identical,
within the tolerance of its kind of value (the committed bytes are put back, so another CPU's rounding leaves
``git status`` clean), or changed (written, and listed under ``OUTPUTS CHANGED`` after the summary line).

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

The package, one module per concern (each name below is importable from ``dpcore.runner``):

* :mod:`~dpcore.runner.environment`: the kernels' environment (:data:`REPEATABLE_ENV`);
* :mod:`~dpcore.runner.discovery`: notebook keys, globs, profiles, explorers;
* :mod:`~dpcore.runner.execute`: papermill execution with progress lines (:func:`run_notebooks`);
* :mod:`~dpcore.runner.checks`: claims consistency, coverage, drift, the summary files, ``--check-claims``;
* :mod:`~dpcore.runner.errata`: ``ERRATA.md``;
* :mod:`~dpcore.runner.nbval`: ``--prepare-nbval``;
* :mod:`~dpcore.runner.sources`: the claim specifications, notebooks, findings and titles of :mod:`dpcore.papers`;
* this module: the command line (:func:`main`).  It stays here, not in a ``cli`` module, because it calls the
  loaders ``_specs``, ``_notebooks`` and ``_titles`` by their names in this module, which tests replace.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from dpcore import claims as claims_mod
from dpcore.claims import ClaimSpec, NotebookClaims
from dpcore.paths import PROFILES, atomic_write_text, build_dir, figures_dir, profile_figures_dir
from dpcore.runner.checks import (
    ClaimsProblem,
    check_claims,
    claim_problems,
    committed_summaries,
    coverage_problems,
    drift_problems,
    gather,
    gather_by_notebook,
    write_claims_summary,
)
from dpcore.runner.compare import outcome_lines
from dpcore.runner.discovery import (
    EXPLORER_FOLDER,
    declared_parameters,
    discover,
    is_explorer,
    load_profile,
    notebook_key,  # noqa: F401  (tests/test_notebooks_static.py)
    notebook_parameters,
    profile_problems,
)
from dpcore.runner.environment import (
    REPEATABLE_ENV,  # noqa: F401  (tests/conftest.py, tests/runner/test_repeatable.py)
    numpy_avx512_targets,
)
from dpcore.runner.environment import repeatable_env as _repeatable_env  # noqa: F401  (tests/runner/test_repeatable.py)
from dpcore.runner.errata import ROWS_SHOWN, errata_markdown, write_errata
from dpcore.runner.execute import (
    ENGINE,  # noqa: F401
    KERNEL,  # noqa: F401  (docs/build_site.py)
    PROGRESS_EVERY,  # noqa: F401
    Result,  # noqa: F401
    _launch_order,  # noqa: F401  (tests/runner/test_runner.py)
    _read_timings,  # noqa: F401  (tests/runner/test_runner.py)
    record_durations,
    run_notebooks,
)
from dpcore.runner.nbval import prepare_nbval
from dpcore.runner.sources import findings as _findings
from dpcore.runner.sources import notebooks as _notebooks
from dpcore.runner.sources import specs as _specs
from dpcore.runner.sources import titles as _titles
from dpcore.validation import check_positive_int

# Every name dpcore/runner.py (one module before the split) defined and others use stays importable from here:
# __all__ below is that module's; KERNEL, REPEATABLE_ENV, notebook_key and the private names marked F401 are
# imported by tests, docs/build_site.py and dpcore.restatus.


__all__ = [
    "EXPLORER_FOLDER",
    "is_explorer",
    "ClaimsProblem",
    "discover",
    "load_profile",
    "notebook_parameters",
    "declared_parameters",
    "profile_problems",
    "run_notebooks",
    "claim_problems",
    "coverage_problems",
    "gather_by_notebook",
    "drift_problems",
    "check_claims",
    "write_claims_summary",
    "committed_summaries",
    "ROWS_SHOWN",
    "errata_markdown",
    "write_errata",
    "prepare_nbval",
    "main",
    "numpy_avx512_targets",
]


def _run(args: argparse.Namespace, stream: TextIO) -> int:
    try:
        paths = discover(args.nb)
    except ValueError as exc:
        print(f"error: {exc}", file=stream)
        return 2
    out_figures = profile_figures_dir(args.profile)
    try:  # checked at the door: a misspelt key would be dropped by papermill and the notebook run with its default
        bad_keys = profile_problems(paths, args.profile)
    except (ValueError, OSError) as exc:  # an unreadable profile or notebook: the same exit, before anything runs
        bad_keys = [str(exc)]
    if bad_keys:
        for problem in bad_keys:
            print(f"error: {problem}", file=stream)
        print(f"nothing ran: {len(bad_keys)} profile key(s) are not parameters of their notebook", file=stream)
        return 2
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
        rows = gather(out_figures, args.profile)
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
    try:  # the one count (dpcore.verdicts.count_by_status), as SCORECARD / ERRATA / README count
        counted = claims_mod.count_phrase(claims_mod._counts(rows)) or "none"
    except ValueError as exc:
        counted = f"not counted ({exc})"
    rel = os.path.relpath(out_figures, figures_dir().parent)
    print(
        f"summary: {len(results) - len(failed)} ok, {len(failed)} failed, "
        f"{time.perf_counter() - start:.1f} s; claims: "
        + counted
        + f"; {len(problems)} problem(s) ({rel}/claims.csv, {rel}/SCORECARD.md, {rel}/ERRATA.md)",
        file=stream,
        flush=True,
    )
    compared = [r.outputs for r in results if r.outputs is not None and r.outputs.files]
    if compared:  # what this run's outputs showed against the files they replaced (dpcore.runner.compare)
        for line in outcome_lines(compared, out_figures):
            print(line, file=stream)
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
    group.add_argument("--errata", action="store_true",
                       help="only (re)write the profile's SCORECARD.md and ERRATA.md from its committed claims.csv "
                            "(after editing findings or specifications)")  # fmt: skip
    parser.add_argument(
        "--committed", type=Path, default=None, help="committed claims.csv for --check-claims (default figures/)"
    )
    group.add_argument("--record-durations", action="store_true",
                       help="write this machine's last seconds per notebook (build/<profile>/timings.json) into "
                            "notebooks/durations.json, the longest-first order of a fresh clone")  # fmt: skip
    args = parser.parse_args(argv)
    args.nb = args.nb if args.nb is not None else ["*"]

    if args.prepare_nbval:
        try:
            written = prepare_nbval(args.prepare_nbval.resolve())
        except ValueError as exc:  # a profile key that is not a parameter of its notebook
            print(f"error: {exc}", file=stream)
            return 2
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
    if args.record_durations:
        print(f"wrote {record_durations(args.profile)}", file=stream)
        return 0
    if args.errata:
        folder = profile_figures_dir(args.profile, figures_dir())
        for name, text in committed_summaries(figures_dir(), args.profile).items():
            print(f"wrote {atomic_write_text(folder / name, text)}", file=stream)
        return 0
    return _run(args, stream)
