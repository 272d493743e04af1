"""Training experiments: named grids of runs, cached JSON results, resumable checkpoints, dry runs.

>>> from dpcore.experiments import run_experiment, dry_run          # doctest: +SKIP
>>> dry_run("003_table3", "paper")                                   # doctest: +SKIP
>>> run_experiment("003_table3", "quick", only="mnist/*")            # doctest: +SKIP

Modules: :mod:`~dpcore.experiments.config` (a run: ``RunConfig`` and its hash),
:mod:`~dpcore.experiments.registry` (experiments registered by the paper packages),
:mod:`~dpcore.experiments.datasets`, :mod:`~dpcore.experiments.store`, :mod:`~dpcore.experiments.runner`,
:mod:`~dpcore.experiments.dryrun`, :mod:`~dpcore.experiments.results`,
:mod:`~dpcore.experiments.cli`, :mod:`~dpcore.experiments.asynchronous` (paper 000's n asynchronous clients as an
experiment's trainer), and :mod:`~dpcore.experiments.adapters`
(the one place that meets the data loaders and the run record).
"""

from dpcore.experiments.config import RunConfig, config_hash
from dpcore.experiments.dryrun import DryRunRow, dry_run
from dpcore.experiments.registry import Epsilon, Experiment, PlannedRun, discover, get, names, register
from dpcore.experiments.results import history_frame, results_frame
from dpcore.experiments.runner import Outcome, run_experiment, run_one
from dpcore.experiments.store import Store

__all__ = [
    "DryRunRow",
    "Epsilon",
    "Experiment",
    "Outcome",
    "PlannedRun",
    "RunConfig",
    "Store",
    "config_hash",
    "discover",
    "dry_run",
    "get",
    "history_frame",
    "names",
    "register",
    "results_frame",
    "run_experiment",
    "run_one",
]
