"""Command line: ``python -m dpcore <command>`` (also installed as the ``dpcore`` console script).

Commands:

* ``epsilon``   -- ε of DP-SGD at a noise multiplier under every applicable accountant, each labelled
  rigorous (an upper bound on the true ε) or approximate (the GDP central limit theorem, which can be
  below the true ε).  Printed values are rounded UP (:func:`format_up`): a printed bound is never below the
  computed one.
* ``calibrate`` -- the smallest noise multiplier whose ε does not exceed a target (never overshoots; the
  printed σ is rounded up and the ε shown is the ε at the printed σ).

The run: ``--sample-rate q`` or ``--batch-size b --dataset-size n`` (q = b/n, shown); ``--steps`` or
``--epochs`` (converted exactly as the trainer does, :func:`dpcore.accounting.events.steps_for_epochs`);
``--sampling poisson|fixed|shuffle``.  σ means noise std σ·C for every sampling (``--noise-convention
replace_one`` for a paper's N(0, (2Cσ)²)); the neighbouring relation of the sampling is applied inside and
printed.  ``--sampling shuffle`` is accounted by van Dijk et al.'s A_1 analysis, and a printed line says so.

Other commands register a subparser with :func:`register` (a name, a help line, a function that adds
the arguments, and a function that runs them and returns an exit code).  Only the options of the command
being run are declared (and heavy modules are imported only when a command runs), so ``--help`` is fast.

Example::

    python -m dpcore epsilon --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 --epochs 60 --delta 1e-5
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dpcore.accounting import events
from dpcore.accounting.registry import methods_for

__all__ = ["Command", "COMMANDS", "register", "build_parser", "format_up", "main"]


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


# --------------------------------------------------------------------------- printing
def format_up(value: float, digits: int = 6) -> str:
    """``value`` written with ``digits`` significant digits, rounded UP (toward +∞), so that a printed bound is
    never below the computed one (3.576111 → ``"3.57612"``, where rounding to nearest gives 3.57611).

    >>> format_up(3.576111), format_up(2.0), format_up(1.2345e-7, 3), format_up(float("inf"))
    ('3.57612', '2', '1.24e-7', 'inf')
    """
    from decimal import ROUND_CEILING, Decimal

    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    exact = Decimal(value)  # the binary value, digit for digit
    step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    return f"{exact.quantize(step, rounding=ROUND_CEILING).normalize():g}"


# --------------------------------------------------------------------------- shared options
# The vocabulary (samplings, methods per sampling, noise conventions, the epochs → steps rule in words) is read from
# dpcore.accounting.events and the registry: both are light (no NumPy/SciPy accountant, no dp_accounting, no torch),
# so ``--help`` stays fast without a copy of their strings here.

_METHODS_BY_SAMPLING = {sampling: methods_for(sampling) for sampling in events.SAMPLINGS}
_ALL_METHODS = tuple(dict.fromkeys(m for methods in _METHODS_BY_SAMPLING.values() for m in methods))
#: the flag of each parameter a library error may name
_FLAGS = {
    "noise_multiplier": "--noise-multiplier",
    "target_epsilon": "--epsilon",
    "sample_rate": "--sample-rate",
    "batch_size": "--batch-size",
    "dataset_size": "--dataset-size",
    "steps": "--steps",
    "epochs": "--epochs",
    "delta": "--delta",
    "rtol": "--rtol",
    "method": "--method",
    "sampling": "--sampling",
    "noise_convention": "--noise-convention",
}


def _epochs_help() -> str:
    """The --epochs help, composed from events' rule in words (one phrase per distinct rounds-per-epoch rule)."""
    by_rule: dict[str, list[str]] = {}
    for sampling, rule in events.ROUNDS_PER_EPOCH_RULE.items():
        by_rule.setdefault(rule, []).append(sampling)
    per_epoch = "; ".join(f"{rule} for {' and '.join(names)}" for rule, names in by_rule.items())
    return (
        f"number of epochs E, converted to steps exactly as the trainer does (dpcore.accounting.events."
        f"steps_for_epochs): T = {events.EPOCHS_TO_STEPS_RULE}, with rounds per epoch = {per_epoch}; "
        f"{events.ROUNDS_PER_EPOCH_FROM_RATE_RULE} when only --sample-rate is given"
    )


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sample-rate",
        type=float,
        default=None,
        help="probability q that a record joins a batch, in (0, 1]; or give --batch-size and --dataset-size",
    )
    parser.add_argument(
        "--batch-size", type=int, default=None, help="batch size b (with --dataset-size: q = b / n is derived)"
    )
    parser.add_argument(
        "--dataset-size",
        type=int,
        default=None,
        help="number of records n (with --batch-size; needed for --sampling fixed and shuffle)",
    )
    length = parser.add_mutually_exclusive_group(required=True)
    length.add_argument("--steps", type=int, help="number of noisy gradient steps T (an integer >= 1)")
    length.add_argument("--epochs", type=float, help=_epochs_help())
    parser.add_argument("--delta", type=float, required=True, help="the δ of (ε, δ)-DP, in (0, 1)")
    parser.add_argument(
        "--sampling",
        choices=tuple(_METHODS_BY_SAMPLING),
        default="poisson",
        help="how batches are drawn: 'poisson' (add/remove-one neighbours, default), 'fixed' (fixed-size "
        "batches without replacement, replace-one neighbours) or 'shuffle' (disjoint batches of a permutation "
        "per epoch: accounted by van Dijk et al.'s A_1 analysis); fixed and shuffle need the dataset size",
    )
    parser.add_argument(
        "--noise-convention",
        choices=events.NOISE_CONVENTIONS,
        default="standard",
        help="what σ means: 'standard' (default) noise std σ·C as in DP-SGD, Opacus and TF Privacy, for every "
        "sampling; 'replace_one' noise std 2σ·C (a paper's N(0, (2Cσ)²), e.g. van Dijk et al.)",
    )


def _check_finite(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    for key in ("noise_multiplier", "sample_rate", "delta", "epsilon", "epochs", "rtol"):
        value = getattr(args, key, None)
        if value is not None and not math.isfinite(value):
            parser.error(f"argument --{key.replace('_', '-')}: must be a finite number, got {value}")


def _resolve_rate(args: argparse.Namespace) -> None:
    """Fill ``args.sample_rate`` from --batch-size / --dataset-size (and check they agree with it)."""
    for key in ("dataset_size", "batch_size"):
        if getattr(args, key) is not None and getattr(args, key) < 1:
            raise ValueError(f"{key} must be an integer >= 1, got {getattr(args, key)}")
    if args.sampling != "poisson" and args.dataset_size is None:
        raise ValueError(f"dataset_size is needed for --sampling {args.sampling} (give --dataset-size)")
    if args.batch_size is None:
        if args.sample_rate is None:
            raise ValueError("sample_rate is missing: give --sample-rate, or --batch-size with --dataset-size")
        if args.dataset_size is not None and args.sampling != "poisson":
            product = args.sample_rate * args.dataset_size
            if product >= 1 and math.isclose(product, round(product), rel_tol=1e-9):
                args.batch_size = round(product)
        return
    if args.dataset_size is None:
        raise ValueError("dataset_size is needed with --batch-size (q = b / n)")
    args.sample_rate = events.sample_rate_of(args.batch_size, args.dataset_size, args.sample_rate)


def _steps(args: argparse.Namespace) -> int:
    if args.steps is not None:
        if args.steps < 1:
            raise ValueError(f"steps must be an integer >= 1, got {args.steps}")
        return int(args.steps)
    sizes = {"dataset_size": args.dataset_size, "batch_size": args.batch_size} if args.batch_size else {}
    rate = None if sizes else args.sample_rate
    return events.steps_for_epochs(args.epochs, sampling=args.sampling, sample_rate=rate, **sizes)


def _methods(args: argparse.Namespace) -> tuple[str, ...]:
    allowed = _METHODS_BY_SAMPLING[args.sampling]
    chosen = tuple(args.method) if args.method else allowed
    for method in chosen:
        if method not in allowed:
            raise ValueError(f"method {method!r} does not account for sampling={args.sampling!r}; use one of {allowed}")
    return chosen


def _describe(args: argparse.Namespace, steps: int) -> str:
    if args.batch_size is not None and args.dataset_size is not None:
        rate = f"q = {args.batch_size}/{args.dataset_size} = {args.sample_rate:.6g}"
    else:
        rate = f"q = {args.sample_rate:g}" + (f", n = {args.dataset_size}" if args.dataset_size else "")
    length = f"T = {steps}" + (f" ({args.epochs:g} epochs, counted as the trainer does)" if args.epochs else "")
    return f"sampling = {args.sampling}, {rate}, {length}, δ = {args.delta:g}"


def _noise_text(args: argparse.Namespace) -> str:
    return "noise std σ·C" if args.noise_convention == "standard" else "noise std 2σ·C (noise_convention replace_one)"


def _record(args: argparse.Namespace, sigma: float, steps: int):  # noqa: ANN202  (a RunRecord)
    """The run record of the command line's run at noise multiplier ``sigma``: what the registry accounts."""
    from dpcore.accounting.dpsgd import dpsgd_record

    if args.sampling == "shuffle" and args.batch_size is None:
        raise ValueError("batch_size is needed for --sampling shuffle (give --batch-size, or a whole q·n)")
    return dpsgd_record(sigma, sample_rate=args.sample_rate, steps=steps,
                        sampling=args.sampling, dataset_size=args.dataset_size,
                        noise_convention=args.noise_convention)  # fmt: skip


def _epsilon(args: argparse.Namespace, sigma: float, steps: int, method: str) -> float:
    """ε by the registry's accountant (:func:`dpcore.accounting.records.epsilon_for_record`), the one door."""
    from dpcore.accounting.records import epsilon_for_record

    try:
        return epsilon_for_record(_record(args, sigma, steps), args.delta, method=method)
    except ValueError as exc:  # a step count out of an accountant's range: say which --epochs made it
        if args.epochs is None or "steps" not in str(exc):
            raise
        raise ValueError(
            f"epochs={args.epochs:g} is T = {steps} steps, beyond the {method} accountant's range: {exc}"
        ) from exc


def _label(eps: float) -> str:
    label = getattr(eps, "label", "rigorous")
    return f"{label}, against A_1" if getattr(eps, "method", "") == "a1" else label


def _notes(args: argparse.Namespace) -> list[str]:
    if args.sampling == "shuffle":
        from dpcore.accounting.records import SHUFFLE_NOTE

        return [f"note: {SHUFFLE_NOTE}"]
    if args.sampling == "fixed":
        from dpcore.accounting.dpsgd import default_method, describe

        # the sampling's part of the description (after the method's): neighbours and how σ enters
        return ["note: " + describe(default_method("fixed"), "fixed", args.noise_convention).split("; ", 1)[1]]
    return []


# --------------------------------------------------------------------------- epsilon
def _epsilon_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--noise-multiplier",
        type=float,
        required=True,
        help="σ: noise std σ·C on the sum of gradients clipped to C (see --noise-convention), > 0",
    )
    _add_run_options(parser)
    parser.add_argument(
        "--method",
        action="append",
        default=None,
        choices=_ALL_METHODS,
        help="only this accountant (repeatable): "
        + "; ".join(f"{', '.join(m)} for {s}" for s, m in _METHODS_BY_SAMPLING.items())
        + "; default: every applicable one (gdp is approximate)",
    )


def _run_epsilon(args: argparse.Namespace) -> int:
    _resolve_rate(args)
    steps = _steps(args)
    methods = _methods(args)
    values = [(method, _epsilon(args, args.noise_multiplier, steps, method)) for method in methods]
    print(f"DP-SGD, σ = {args.noise_multiplier:g} ({_noise_text(args)}), {_describe(args, steps)}")
    for line in _notes(args):
        print(line)
    for method, eps in values:
        print(f"  {method:<12} ε = {format_up(eps)}   ({_label(eps)})")
    return 0


# --------------------------------------------------------------------------- calibrate
def _calibrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--epsilon", type=float, required=True, help="target ε, > 0")
    _add_run_options(parser)
    parser.add_argument(
        "--method",
        default=None,
        choices=_ALL_METHODS,
        help="accountant used for the calibration (default: "
        + ", ".join(f"{m[0]} for {s}" for s, m in _METHODS_BY_SAMPLING.items())
        + "; gdp is approximate)",
    )
    parser.add_argument(
        "--rtol",
        type=float,
        default=1e-3,
        help="relative precision of σ, in [1e-12, 1) (default 1e-3); σ is never too small",
    )


def _calibrated_sigma(args: argparse.Namespace, steps: int, method: str) -> float:
    """σ by the registry (:func:`dpcore.accounting.records.noise_multiplier_for_record`), the one door."""
    from dpcore.accounting.records import noise_multiplier_for_record

    return noise_multiplier_for_record(_record(args, 1.0, steps), args.epsilon, args.delta, method=method,
                                       rtol=args.rtol)  # fmt: skip


def _run_calibrate(args: argparse.Namespace) -> int:
    if args.epsilon <= 0:
        raise ValueError(f"target_epsilon must be in (0, inf), got {args.epsilon:g}")
    _resolve_rate(args)
    steps = _steps(args)
    method = args.method or _METHODS_BY_SAMPLING[args.sampling][0]
    _methods(argparse.Namespace(sampling=args.sampling, method=[method]))
    sigma = _calibrated_sigma(args, steps, method)
    shown = format_up(sigma)  # rounded up: more noise than calibrated, so ε at the printed σ stays <= the target
    eps = _epsilon(args, float(shown), steps, method)
    print(f"target ε = {args.epsilon:g}, {_describe(args, steps)}, method = {method}")
    for line in _notes(args):
        print(line)
    print(f"  noise multiplier σ = {shown} ({_noise_text(args)})   (ε at σ = {format_up(eps)}, {_label(eps)})")
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
def build_parser(command: str | None = None, *, full: bool = True) -> argparse.ArgumentParser:
    """The ``dpcore`` parser with one subparser per registered command.

    ``full`` declares every command's options; otherwise only those of ``command`` (the one being run) are
    declared and the others keep their help line, so ``dpcore --help`` and ``dpcore epsilon --help`` never
    import what another command needs (torch for ``audit``).
    """
    parser = argparse.ArgumentParser(
        prog="dpcore",
        description="dpcore: differential-privacy accounting for DP-SGD. Every ε printed is labelled "
        "rigorous (an upper bound, printed rounded up) or approximate.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, spec in COMMANDS.items():
        child = sub.add_parser(name, help=spec.help, description=spec.help)
        if full or name == command:
            spec.add_arguments(child)
        child.set_defaults(_run=spec.run)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is one), if any."""
    return next((word for word in argv if word in COMMANDS), None)


def _flag_error(parser: argparse.ArgumentParser, exc: ValueError) -> None:
    """``parser.error`` with the message of ``exc``, naming the command-line flag of the parameter it names."""
    message = str(exc)
    named = [(m.start(), flag) for key, flag in _FLAGS.items() if (m := re.search(rf"\b{key}\b", message))]
    if named:
        message = f"argument {min(named)[1]}: {message}"
    parser.error(message)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; bad input exits with status 2 and a message naming the flag."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv), full=False)
    args = parser.parse_args(argv)
    _check_finite(parser, args)
    try:
        return int(args._run(args))
    except ValueError as exc:
        _flag_error(parser, exc)
    return 2  # pragma: no cover  (parser.error exits)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
