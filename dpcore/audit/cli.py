"""``python -m dpcore audit``: audit a DP-SGD configuration with Dirac canaries and print the lower bound next to
the accountant's ε (see :mod:`dpcore.audit.dirac`).

Example::

    python -m dpcore audit --noise-multiplier 2 --sample-rate 0.5 --steps 8 --runs 10000 --delta 1e-3
"""

from __future__ import annotations

import argparse
from contextlib import nullcontext

from dpcore.audit.broken import BROKEN, broken
from dpcore.audit.dirac import DiracSetting, audit_dirac, audit_one_run
from dpcore.audit.threat import ITERATES

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dpcore audit``."""
    parser.add_argument("--noise-multiplier", type=float, required=True, help="σ, > 0")
    parser.add_argument("--sample-rate", type=float, required=True, help="Poisson rate q in (0, 1]")
    parser.add_argument("--steps", type=int, required=True, help="rounds T, >= 1")
    parser.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    parser.add_argument("--clip-norm", type=float, default=1.0, help="C (default 1)")
    parser.add_argument("--canary-norm", type=float, default=None, help="gradient norm of the canary (default C)")
    parser.add_argument(
        "--runs", type=int, default=10_000, help="runs per world, a multiple of --block (default 10000)"
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


def run(args: argparse.Namespace) -> int:
    """Run the audit and print one line per quantity; exit code 1 when the lower bound exceeds the claimed ε."""
    setting = DiracSetting(
        args.noise_multiplier, args.sample_rate, args.steps, args.clip_norm, args.canary_norm, block=args.block
    )
    common = dict(delta=args.delta, confidence=args.confidence, seed=args.seed)
    with broken(args.broken) if args.broken else nullcontext():
        if args.one_run is not None:
            result = audit_one_run(setting, guesses=args.one_run, **common)
        else:
            result = audit_dirac(setting, args.runs, iterates=args.iterates, **common)
    print(f"{result.mechanism}{' [BROKEN: ' + args.broken + ']' if args.broken else ''}")
    print(f"  threat model: {result.threat.describe()}")
    print(f"  ε lower bound  = {result.epsilon_lower:.4g}   (score {result.score}, at δ = {result.delta:g})")
    print(f"  accountant ε   = {result.epsilon_claimed:.4g}   (rigorous upper bound for the recorded run)")
    print(f"  ratio          = {result.ratio:.3f}")
    print("  FLAGGED: the implementation leaks more than the accountant claims" if result.flagged else "  ok")
    return 1 if result.flagged else 0
