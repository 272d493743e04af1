"""Command line of the experiment runner.

``python -m dpcore.experiments run <name> --profile quick|paper [--only GLOB]... [--dry-run] [--force]
[--backend local|ray [--address ADDR] [--workers N]]``
and ``python -m dpcore.experiments list``; :func:`add_subparser` mounts the same commands as
``python -m dpcore experiment ...`` on the package's main parser.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import torch

from dpcore.experiments.adapters import DatasetUnavailable
from dpcore.experiments.config import PROFILES
from dpcore.experiments.dryrun import dry_run
from dpcore.experiments.progress import PROGRESS_MODES
from dpcore.experiments.ray_backend import MissingExtra, RayStartError
from dpcore.experiments.registry import get, names
from dpcore.experiments.runner import run_experiment
from dpcore.experiments.store import Store

__all__ = ["main", "add_subparser", "add_arguments", "build_parser", "dispatch", "HELP"]

BACKENDS = ("local", "ray")
HELP = "run or list training experiments (cached, resumable, --dry-run)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the ``run`` and ``list`` subcommands on ``parser``; the namespace's ``func`` is :func:`dispatch`.

    For ``dpcore.cli``: ``register(Command("experiment", HELP, add_arguments, dispatch))``.
    """
    sub = parser.add_subparsers(dest="command", required=True, metavar="{run,list}")
    run = sub.add_parser("run", help="run (or --dry-run) an experiment's grid")
    run.add_argument("name", help="experiment name, e.g. 003_table3 (see `list`)")
    run.add_argument("--profile", choices=PROFILES, default="quick")
    run.add_argument("--only", action="append", metavar="GLOB", help="only runs whose name matches (repeatable)")
    run.add_argument("--dry-run", action="store_true", help="2 rounds per run: step times and wall-time estimates")
    run.add_argument("--force", action="store_true", help="retrain runs that already have a result")
    run.add_argument("--progress", choices=PROGRESS_MODES, default="auto")
    run.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    run.add_argument("--results", default=None, help="results root (default: results/ of the checkout)")
    run.add_argument("--checkpoints", default=None, help="checkpoints root (default: build/checkpoints/)")
    run.add_argument("--no-synthetic", action="store_true", help="dry run: fail when data files are missing")
    run.add_argument("--backend", choices=BACKENDS, default="local",
                     help="local: one run after the other in this process; ray: one Ray task per run (extra 'scale')")
    run.add_argument("--address", default=None,
                     help="ray: join this cluster ('auto', 'ray://host:10001'); default: start a local instance")
    run.add_argument("--workers", type=int, default=2, help="ray: CPU cores of the local instance (default 2)")
    lst = sub.add_parser("list", help="list experiments (with --profile: their runs and status)")
    lst.add_argument("--profile", choices=PROFILES, default=None)
    lst.add_argument("--results", default=None)
    parser.set_defaults(func=dispatch)


def build_parser(prog: str = "python -m dpcore.experiments") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Cached, resumable training experiments.")
    add_arguments(parser)
    return parser


def add_subparser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``experiment {run,list}`` to the main parser's ``subparsers``; the parsed namespace's
    ``func(args) -> int`` runs it."""
    parser = subparsers.add_parser("experiment", help=HELP)
    add_arguments(parser)
    return parser


def _list(args: argparse.Namespace) -> int:
    for name in names():
        exp = get(name)
        print(f"{name}: {exp.description}")
        if args.profile is None:
            continue
        store = Store.default(args.profile, name, results_root=args.results)
        notes: list[str] = []

        def finished(config, store=store, notes=notes):  # an unreadable result: a run to train again, with a note
            return store.finished(config, notes.append)

        for run in exp.runs(args.profile, finished):
            if not run.ready:
                status = "waiting"
            elif finished(run.config) is not None:
                status = "done"
            else:
                status = "broken" if store.result_path(run.config).exists() else "todo"
            print(f"  {status:<7} {run.name}")
        for message in dict.fromkeys(notes):
            print(f"  note: {message}")
    return 0


def dispatch(args: argparse.Namespace) -> int:
    """Execute a parsed ``run`` or ``list`` command; returns the exit status (2 for a refused input, 1 when a run
    failed or a local Ray instance did not start)."""
    try:
        return _dispatch(args)
    except (ValueError, DatasetUnavailable, MissingExtra) as exc:  # bad inputs, missing data or extra
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RayStartError as exc:  # named failure, no fallback to the local backend
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "list":
        return _list(args)
    if args.threads is not None:
        if args.threads < 1:
            raise ValueError(f"threads must be >= 1, got {args.threads}")
        torch.set_num_threads(args.threads)
    common = dict(only=args.only, results_root=args.results, checkpoints_root=args.checkpoints)
    if args.backend != "ray" and args.address is not None:
        raise ValueError("--address needs --backend ray")
    if args.dry_run:
        if args.backend != "local":
            raise ValueError("--dry-run measures step times on this machine: use it with --backend local")
        dry_run(args.name, args.profile, synthetic_ok=not args.no_synthetic, **common)
        return 0
    if args.backend == "ray":
        from dpcore.experiments.ray_backend import run_experiment_ray

        outcomes = run_experiment_ray(
            args.name, args.profile, force=args.force, address=args.address, num_cpus=args.workers,
            threads=args.threads if args.threads is not None else 1, **common,
        )  # fmt: skip
    else:
        outcomes = run_experiment(args.name, args.profile, force=args.force, progress=args.progress, **common)
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    print(f"{args.name} ({args.profile}): " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return 1 if counts.get("failed") else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    return args.func(args)
