"""Command line: ``python -m dpcore <command>`` (also installed as the ``dpcore`` console script).

Commands:

* ``epsilon``   -- ε of DP-SGD at a noise multiplier under every applicable accountant, each labelled
  rigorous (an upper bound on the true ε) or approximate (the GDP central limit theorem, which can be
  below the true ε).
* ``calibrate`` -- the smallest noise multiplier whose ε does not exceed a target (never overshoots).

Other commands register a subparser with :func:`register` (a name, a help line, a function that adds
the arguments, and a function that runs them and returns an exit code).

Example::

    python -m dpcore epsilon --noise-multiplier 1.1 --sample-rate 0.0043 --epochs 60 --delta 1e-5
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Command", "COMMANDS", "register", "build_parser", "main"]


@dataclass(frozen=True)
class Command:
    """One subcommand: ``add_arguments(parser)`` declares its options, ``run(args)`` returns the exit code."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: dict[str, Command] = {}


def register(command: Command) -> Command:
    """Add a subcommand (e.g. ``experiment`` or ``audit``) to the ``dpcore`` command line."""
    if command.name in COMMANDS:
        raise ValueError(f"command {command.name!r} is already registered")
    COMMANDS[command.name] = command
    return command


# --------------------------------------------------------------------------- shared options
def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sample-rate", type=float, required=True, help="probability q that a record joins a batch, in (0, 1]"
    )
    length = parser.add_mutually_exclusive_group(required=True)
    length.add_argument("--steps", type=int, help="number of noisy gradient steps T (an integer >= 1)")
    length.add_argument(
        "--epochs", type=float, help="number of epochs E; the steps are T = ceil(E / sample_rate)"
    )
    parser.add_argument("--delta", type=float, required=True, help="the δ of (ε, δ)-DP, in (0, 1)")
    parser.add_argument(
        "--sampling",
        choices=("poisson", "fixed"),
        default="poisson",
        help="how batches are drawn: 'poisson' (add/remove-one neighbours, default) or 'fixed' (fixed-size "
        "batches without replacement, replace-one neighbours; needs --dataset-size)",
    )
    parser.add_argument(
        "--dataset-size",
        type=int,
        default=None,
        help="number of records n (needed for --sampling fixed: the batch is sample_rate * n records)",
    )


def _steps(args: argparse.Namespace) -> int:
    from dpcore.accounting.dpsgd import resolve_steps

    return resolve_steps(args.sample_rate, args.steps, args.epochs)


def _methods(sampling: str) -> tuple[str, ...]:
    from dpcore.accounting.dpsgd import METHODS

    return METHODS if sampling == "poisson" else ("rdp", "rdp-mironov", "gdp")


def _describe(args: argparse.Namespace, steps: int) -> str:
    extra = f", n = {args.dataset_size}" if args.dataset_size is not None else ""
    return f"sampling = {args.sampling}, q = {args.sample_rate:g}, T = {steps}, δ = {args.delta:g}{extra}"


# --------------------------------------------------------------------------- epsilon
def _epsilon_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--noise-multiplier", type=float, required=True, help="σ: noise std over the clipping norm, > 0"
    )
    _add_run_options(parser)
    parser.add_argument(
        "--method",
        action="append",
        default=None,
        help="only this accountant (repeatable): pld, rdp, rdp-mironov or gdp; default: every applicable one",
    )


def _run_epsilon(args: argparse.Namespace) -> int:
    from dpcore.accounting.dpsgd import dpsgd_epsilon, method_label

    steps = _steps(args)
    methods = tuple(args.method) if args.method else _methods(args.sampling)
    print(f"DP-SGD, σ = {args.noise_multiplier:g}, {_describe(args, steps)}")
    for method in methods:
        eps = dpsgd_epsilon(
            args.noise_multiplier,
            sample_rate=args.sample_rate,
            steps=steps,
            delta=args.delta,
            method=method,
            sampling=args.sampling,
            dataset_size=args.dataset_size,
        )
        print(f"  {method:<12} ε = {eps:.6g}   ({method_label(method)})")
    return 0


# --------------------------------------------------------------------------- calibrate
def _calibrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--epsilon", type=float, required=True, help="target ε, > 0")
    _add_run_options(parser)
    parser.add_argument(
        "--method",
        default="pld",
        choices=("pld", "rdp", "rdp-mironov", "gdp"),
        help="accountant used for the calibration (default pld; gdp is approximate)",
    )
    parser.add_argument(
        "--rtol", type=float, default=1e-3, help="relative precision of σ (default 1e-3); σ is never too small"
    )


def _run_calibrate(args: argparse.Namespace) -> int:
    from dpcore.accounting.dpsgd import dpsgd_epsilon, dpsgd_noise_multiplier, method_label

    steps = _steps(args)
    common = dict(
        sample_rate=args.sample_rate,
        steps=steps,
        delta=args.delta,
        method=args.method,
        sampling=args.sampling,
        dataset_size=args.dataset_size,
    )
    sigma = dpsgd_noise_multiplier(args.epsilon, rtol=args.rtol, **common)
    eps = dpsgd_epsilon(sigma, **common)
    print(f"target ε = {args.epsilon:g}, {_describe(args, steps)}, method = {args.method}")
    print(f"  noise multiplier σ = {sigma:.6g}   (ε at σ = {eps:.6g}, {method_label(args.method)})")
    return 0


register(Command("epsilon", "ε of DP-SGD under every applicable accountant", _epsilon_arguments, _run_epsilon))
register(Command("calibrate", "smallest noise multiplier σ for a target ε", _calibrate_arguments, _run_calibrate))


# The experiment commands import torch: their options are parsed by dpcore.experiments.cli only when the
# subcommand runs, so ``dpcore epsilon`` stays fast.
def _experiment_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="run NAME [--profile quick|paper] [--only GLOB] [--dry-run] [--force] | list",
        help="see `dpcore experiment run --help`",
    )


def _run_experiment(args: argparse.Namespace) -> int:
    from dpcore.experiments import cli as experiments_cli

    return int(experiments_cli.main(args.rest))


register(
    Command(
        "experiment",
        "run or list training experiments (cached, resumable, --dry-run)",
        _experiment_arguments,
        _run_experiment,
    )
)


def _audit_arguments(parser: argparse.ArgumentParser) -> None:
    from dpcore.audit import cli as audit_cli

    audit_cli.add_arguments(parser)


def _run_audit(args: argparse.Namespace) -> int:
    from dpcore.audit import cli as audit_cli

    return int(audit_cli.run(args))


register(
    Command(
        "audit",
        "empirical ε lower bound of a DP-SGD configuration (Dirac canaries) next to the accountant's ε",
        _audit_arguments,
        _run_audit,
    )
)


# --------------------------------------------------------------------------- entry point
def build_parser() -> argparse.ArgumentParser:
    """The ``dpcore`` parser with one subparser per registered command."""
    parser = argparse.ArgumentParser(
        prog="dpcore",
        description="dpcore: differential-privacy accounting for DP-SGD. Every ε printed is labelled "
        "rigorous (an upper bound) or approximate.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS.values():
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(child)
        child.set_defaults(_run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; bad input exits with status 2 and a message naming the parameter."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for key in ("noise_multiplier", "sample_rate", "delta", "epsilon", "epochs", "rtol"):
        value = getattr(args, key, None)
        if value is not None and not math.isfinite(value):
            parser.error(f"--{key.replace('_', '-')} must be a finite number, got {value}")
    try:
        return int(args._run(args))
    except ValueError as exc:
        parser.error(str(exc))
    return 2  # pragma: no cover  (parser.error exits)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
