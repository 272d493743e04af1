"""``python -m dpcore audit``: audit a DP-SGD configuration with Dirac canaries and print the lower bound next to
the accountant's ε (see :mod:`dpcore.audit.dirac`).

Example::

    python -m dpcore audit --noise-multiplier 2 --sample-rate 0.5 --steps 8 --runs 10000 --delta 1e-3

With ``--shuffled batch`` (or ``mixed``) it audits paper 003's batch (mixed) clipping under shuffling instead
(:mod:`dpcore.audit.shuffled`): the adversary A_1 and the standard adversary against the A_1 ε, and the standard
adversary against the Poisson heuristic (labelled; a heuristic, not a bound)::

    python -m dpcore audit --shuffled batch --noise-multiplier 1 --batch-size 4 --rounds-per-epoch 2 --epochs 2 \
        --runs 300 --delta 1e-3
"""

from __future__ import annotations

import argparse
from contextlib import nullcontext

from dpcore.audit.broken import BROKEN, broken
from dpcore.audit.dirac import DiracSetting, audit_dirac, audit_one_run
from dpcore.audit.shuffled import ShuffleSetting, audit_shuffled
from dpcore.audit.threat import ITERATES

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dpcore audit``."""
    parser.add_argument("--noise-multiplier", type=float, required=True, help="σ, > 0")
    parser.add_argument("--sample-rate", type=float, default=None, help="Poisson rate q in (0, 1] (Dirac audit)")
    parser.add_argument("--steps", type=int, default=None, help="rounds T, >= 1 (Dirac audit)")
    parser.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    parser.add_argument("--clip-norm", type=float, default=1.0, help="C (default 1)")
    parser.add_argument("--canary-norm", type=float, default=None, help="gradient norm of the canary (default C)")
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help="runs per world (Dirac: a multiple of --block, default 10000; --shuffled: default 300)",
    )
    parser.add_argument("--block", type=int, default=1000, help="runs per trainer call (default 1000; q·block whole)")
    parser.add_argument("--iterates", choices=ITERATES, default="all", help="what the adversary sees (default all)")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    parser.add_argument(
        "--one-run",
        type=int,
        default=None,
        metavar="GUESSES",
        help="one-run audit instead (Steinke et al. 2023): --block canaries, GUESSES guesses",
    )
    parser.add_argument("--broken", choices=BROKEN, default=None, help="audit a deliberately broken variant")
    parser.add_argument("--seed", type=int, default=0, help="seed of the audit runs")
    shuffled = parser.add_argument_group("paper 003 under shuffling (--shuffled)")
    shuffled.add_argument(
        "--shuffled",
        choices=("batch", "mixed"),
        default=None,
        help="audit batch or mixed clipping under shuffling (van Dijk et al.), replace-one, every update observed",
    )
    shuffled.add_argument("--batch-size", type=int, default=4, help="|S_b| (default 4)")
    shuffled.add_argument("--rounds-per-epoch", type=int, default=2, help="b = N/|S_b| (default 2)")
    shuffled.add_argument("--epochs", type=int, default=2, help="E (default 2)")
    shuffled.add_argument("--group-size", type=int, default=None, help="s, mixed clipping only (m = |S_b|/s >= 2)")


def _print(result, broken_name: str | None) -> None:
    print(f"{result.mechanism}{' [BROKEN: ' + broken_name + ']' if broken_name else ''}")
    print(f"  threat model: {result.threat.describe()}")
    print(f"  ε lower bound  = {result.epsilon_lower:.4g}   (score {result.score}, at δ = {result.delta:g})")
    if result.claim == "heuristic":
        print(f"  heuristic ε    = {result.epsilon_claimed:.4g}   ({result.claim_label})")
        print(f"  ratio          = {result.ratio:.3f}")
        print("  heuristic exceeded (not a bound: the code is not at fault)" if result.flagged else "  not exceeded")
        return
    print(f"  accountant ε   = {result.epsilon_claimed:.4g}   (rigorous upper bound for the recorded run)")
    print(f"  ratio          = {result.ratio:.3f}")
    print("  FLAGGED: the implementation leaks more than the accountant claims" if result.flagged else "  ok")


def _shuffled(args: argparse.Namespace) -> list:
    if args.one_run is not None or args.iterates != "all":
        raise ValueError("--shuffled audits every update observed with many runs: drop --one-run / --iterates")
    setting = ShuffleSetting(
        args.shuffled, args.batch_size, args.rounds_per_epoch, args.epochs, args.noise_multiplier, args.clip_norm,
        group_size=args.group_size,
    )  # fmt: skip
    runs = 300 if args.runs is None else args.runs
    results = audit_shuffled(setting, runs, delta=args.delta, confidence=args.confidence, seed=args.seed)
    return list(results.values())


def run(args: argparse.Namespace) -> int:
    """Run the audit and print one line per quantity; exit code 1 when a lower bound exceeds the accountant's ε
    (a heuristic ε exceeded is reported, not an error)."""
    with broken(args.broken) if args.broken else nullcontext():
        if args.shuffled is not None:
            results = _shuffled(args)
        else:
            if args.sample_rate is None or args.steps is None:
                raise ValueError("--sample-rate and --steps are required for the Dirac DP-SGD audit (or --shuffled)")
            setting = DiracSetting(
                args.noise_multiplier, args.sample_rate, args.steps, args.clip_norm, args.canary_norm, block=args.block
            )
            common = dict(delta=args.delta, confidence=args.confidence, seed=args.seed)
            if args.one_run is not None:
                results = [audit_one_run(setting, guesses=args.one_run, **common)]
            else:
                runs = 10_000 if args.runs is None else args.runs
                results = [audit_dirac(setting, runs, iterates=args.iterates, **common)]
    for result in results:
        _print(result, args.broken)
    return 1 if any(r.flagged and r.claim == "accountant" for r in results) else 0
