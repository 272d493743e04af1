"""Named experiments: grids of runs registered by the paper packages, found without importing them by name.

An :class:`Experiment` is a name, a ``plan(profile, lookup)`` function that lists the runs of a profile
(:class:`PlannedRun`: a name and a :class:`~dpcore.experiments.config.RunConfig`), and the accountants
its results report.  ``lookup(config)`` returns the finished result of a configuration (or ``None``),
so a plan may depend on earlier runs (e.g. a clip norm C chosen on a validation split); such a run is
listed with ``ready=False`` and a placeholder configuration until the runs it waits for are finished.

Paper packages register their experiments when their ``training`` module is imported;
:func:`discover` imports every ``dpcore.papers.<package>.training`` module it finds (pkgutil), so the
library never names a paper package.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpcore.experiments.config import PROFILES, RunConfig

__all__ = [
    "Epsilon",
    "Accountant",
    "TrainerFactory",
    "PlannedRun",
    "Experiment",
    "register",
    "unregister",
    "get",
    "names",
    "discover",
    "PAPERS_PACKAGE",
]

PAPERS_PACKAGE = "dpcore.papers"


@dataclass(frozen=True)
class Epsilon:
    """ε of a run at ``delta`` under one accounting, with a label saying which (NaN: not analysed)."""

    value: float
    delta: float
    label: str

    def to_dict(self) -> dict[str, Any]:
        v = self.value
        value = None if math.isnan(v) else ("inf" if math.isinf(v) else v)
        return {"value": value, "delta": self.delta, "label": self.label}


#: (record as a dict, the run's config) -> Epsilon
Accountant = Callable[[Mapping[str, Any], RunConfig], Epsilon]
#: (run config, prepared data) -> a trainer with the interface of :class:`dpcore.training.Trainer` that the runner
#: and the dry run use (``model``, ``device``, ``total_steps``, ``step_index``, ``history``, ``on_step``, ``step()``,
#: ``run()``, ``record()``, ``state_dict()``, ``load_state_dict()``) and optionally ``result_extras()`` (a dict of
#: JSON-able fields added to the run's result, e.g. one run record per client).  ``None`` in an
#: :class:`Experiment`: the single-client Trainer.
TrainerFactory = Callable[[RunConfig, Any], Any]
Lookup = Callable[[RunConfig], "Mapping[str, Any] | None"]


@dataclass(frozen=True)
class PlannedRun:
    """One run of a plan; ``ready=False``: its configuration waits for the runs named in ``waits_for``."""

    name: str
    config: RunConfig
    ready: bool = True
    waits_for: tuple[str, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty str, got {self.name!r}")
        if not isinstance(self.config, RunConfig):
            raise ValueError(f"config must be a RunConfig, got {type(self.config).__name__}")


@dataclass(frozen=True)
class Experiment:
    """A named grid: ``plan(profile, lookup) -> [PlannedRun]`` and ``accountants`` {"paper", "standard"}.

    ``trainer`` (optional) builds the trainer of a run from its configuration and data (see
    :data:`TrainerFactory`); the default trains with :class:`dpcore.training.Trainer` (one client).
    """

    name: str
    description: str
    plan: Callable[[str, Lookup], Sequence[PlannedRun]]
    accountants: Mapping[str, Accountant] = field(default_factory=dict)
    profiles: tuple[str, ...] = PROFILES
    trainer: TrainerFactory | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or "/" in self.name:
            raise ValueError(f"name must be a non-empty str without '/', got {self.name!r}")
        if not callable(self.plan):
            raise ValueError("plan must be callable (profile, lookup) -> [PlannedRun]")
        for key, fn in self.accountants.items():
            if not callable(fn):
                raise ValueError(f"accountants[{key!r}] must be callable (record, config) -> Epsilon")
        if self.trainer is not None and not callable(self.trainer):
            raise ValueError("trainer must be None or callable (config, data) -> trainer")
        for p in self.profiles:
            if p not in PROFILES:
                raise ValueError(f"profiles must be drawn from {PROFILES}, got {p!r}")

    def runs(self, profile: str, lookup: Lookup | None = None) -> list[PlannedRun]:
        """The validated plan of ``profile``: unique run names and configurations of that profile."""
        if profile not in self.profiles:
            raise ValueError(f"profile must be one of {', '.join(map(repr, self.profiles))}; got {profile!r}")
        plan = list(self.plan(profile, lookup or (lambda config: None)))
        seen: set[str] = set()
        hashes: dict[RunConfig, str] = {}
        for run in plan:
            if not isinstance(run, PlannedRun):
                raise ValueError(f"plan of {self.name!r} must return PlannedRun items, got {type(run).__name__}")
            if run.name in seen:
                raise ValueError(f"plan of {self.name!r} lists run {run.name!r} twice")
            seen.add(run.name)
            if run.config.profile != profile:
                raise ValueError(f"run {run.name!r} has profile {run.config.profile!r}, expected {profile!r}")
            if run.ready and run.config in hashes:
                raise ValueError(f"runs {hashes[run.config]!r} and {run.name!r} have the same configuration")
            if run.ready:
                hashes[run.config] = run.name
        return plan


_REGISTRY: dict[str, Experiment] = {}


def register(experiment: Experiment, *, replace: bool = False) -> Experiment:
    """Add ``experiment`` under its name (``replace`` to overwrite; re-importing a module re-registers)."""
    if not isinstance(experiment, Experiment):
        raise ValueError(f"experiment must be an Experiment, got {type(experiment).__name__}")
    old = _REGISTRY.get(experiment.name)
    if old is not None and not replace and old.plan.__module__ != experiment.plan.__module__:
        raise ValueError(f"an experiment named {experiment.name!r} is already registered by {old.plan.__module__}")
    _REGISTRY[experiment.name] = experiment
    return experiment


def unregister(name: str) -> None:
    """Remove an experiment (tests)."""
    if name not in _REGISTRY:
        raise ValueError(f"name {name!r} is not a registered experiment")
    del _REGISTRY[name]


def discover() -> list[str]:
    """Import every ``dpcore.papers.<package>.training`` module; return the module names imported."""
    try:
        papers = importlib.import_module(PAPERS_PACKAGE)
    except ModuleNotFoundError as exc:
        if exc.name == PAPERS_PACKAGE:
            return []
        raise
    found = []
    for info in sorted(pkgutil.iter_modules(papers.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = f"{PAPERS_PACKAGE}.{info.name}.training"
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)
            found.append(module)
    return found


def names() -> list[str]:
    """Names of all experiments (after :func:`discover`), sorted."""
    discover()
    return sorted(_REGISTRY)


def get(name: str) -> Experiment:
    """The experiment called ``name`` (after :func:`discover`)."""
    if name not in _REGISTRY:
        discover()
    if name not in _REGISTRY:
        known = ", ".join(map(repr, sorted(_REGISTRY))) or "(none registered)"
        raise ValueError(f"name must be one of {known}; got {name!r}")
    return _REGISTRY[name]
