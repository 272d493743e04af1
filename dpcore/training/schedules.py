"""Learning-rate schedules of the three papers, with state for checkpoints.

A schedule answers ``lr(step, samples)`` -- ``samples`` is the number of *planned* gradient
computations before this round, t_i = Σ_{j<i} s_j (public: planned, not the random Poisson sizes) --
and may react to the metrics logged at the end of each epoch (``on_epoch_end``).

* :class:`ConstantLR`.
* :class:`InverseTimeDecay` -- paper 000, Table 1/2 and footnote ‡: η̄_i = η_0 / (1 + β t_i^p) with
  t_i the cumulative number of gradient computations before round i, p = 1 (strongly convex) or
  p = 1/2 (plain convex and non-convex).
* :class:`DecayOnMetricDrop` -- paper 003, App. H: "for each new epoch, the step size is decreased by a
  factor γ = 0.9 if there is a decrease in testing accuracy between the last two consecutive epochs".
* :class:`DecayOnNoImprovement` -- the paper-003 authors' code: η ×= γ whenever the test accuracy did *not
  improve* (a tie decays too), from the third epoch on (issue 21).
* :class:`MultiStepLR` -- piecewise-constant decay at given steps (the ModelMix authors' schedule).

>>> s = InverseTimeDecay(0.1, 0.01, power=0.5)
>>> round(s.lr(step=3, samples=400.0), 6)
0.083333
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from dpcore.validation import check_nonnegative, check_positive, check_range

__all__ = [
    "LRSchedule", "ConstantLR", "InverseTimeDecay", "DecayOnMetricDrop", "DecayOnNoImprovement", "MultiStepLR",
    "schedule_from_dict",
]  # fmt: skip


class LRSchedule(Protocol):
    def lr(self, step: int, samples: float) -> float: ...

    def on_epoch_end(self, epoch: int, metrics: dict[str, float]) -> None: ...

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...

    def describe(self) -> dict: ...


class _Stateless:
    """Default hooks of a schedule that neither reacts to metrics nor keeps state."""

    def on_epoch_end(self, epoch: int, metrics: dict[str, float]) -> None:
        return None

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        return None


class ConstantLR(_Stateless):
    """η_i = η."""

    def __init__(self, lr: float) -> None:
        self.base = check_positive("lr", lr)

    def lr(self, step: int, samples: float) -> float:
        return self.base

    def describe(self) -> dict:
        return {"kind": "constant", "lr": self.base}


class InverseTimeDecay(_Stateless):
    """η̄_i = η_0 / (1 + β t^p), t = gradient computations before round i (paper 000, footnote ‡).

    ``unit="steps"`` uses the round index instead of t.
    """

    def __init__(self, lr0: float, beta: float, *, power: float = 1.0, unit: str = "samples") -> None:
        self.lr0 = check_positive("lr0", lr0)
        self.beta = check_nonnegative("beta", beta)
        self.power = check_range("power", power, 0.0, 1.0)
        if unit not in ("samples", "steps"):
            raise ValueError(f"unit must be one of 'samples', 'steps'; got {unit!r}")
        self.unit = unit

    def lr(self, step: int, samples: float) -> float:
        t = samples if self.unit == "samples" else float(step)
        return self.lr0 / (1.0 + self.beta * t**self.power)

    def describe(self) -> dict:
        return {"kind": "inverse_time", "lr0": self.lr0, "beta": self.beta, "power": self.power, "unit": self.unit}


class DecayOnMetricDrop:
    """Paper 003's rule: at each new epoch multiply η by ``factor`` if ``metric`` dropped since the last epoch.

    The metric is whatever the trainer's evaluation logs (paper 003 uses test accuracy; a
    validation metric avoids selecting on the test set).
    """

    def __init__(self, lr0: float, *, factor: float = 0.9, metric: str = "test_accuracy") -> None:
        self.lr0 = check_positive("lr0", lr0)
        self.factor = check_range("factor", factor, 0.0, 1.0)
        self.metric = metric
        self.current = self.lr0
        self.last: float | None = None

    def lr(self, step: int, samples: float) -> float:
        return self.current

    def on_epoch_end(self, epoch: int, metrics: dict[str, float]) -> None:
        if self.metric not in metrics:
            raise ValueError(
                f"DecayOnMetricDrop needs metric {self.metric!r} from the evaluation; got {sorted(metrics)}"
            )
        value = float(metrics[self.metric])
        if self.last is not None and value < self.last:
            self.current *= self.factor
        self.last = value

    def state_dict(self) -> dict:
        return {"current": self.current, "last": math.nan if self.last is None else self.last}

    def load_state_dict(self, state: dict) -> None:
        self.current = float(state["current"])
        last = float(state["last"])
        self.last = None if math.isnan(last) else last

    def describe(self) -> dict:
        return {"kind": "decay_on_metric_drop", "lr0": self.lr0, "factor": self.factor, "metric": self.metric}


class DecayOnNoImprovement(DecayOnMetricDrop):
    """The paper-003 authors' rule: η ×= ``factor`` after an evaluation whose ``metric`` is <= the previous one.

    Repository MisaNguyen/DPSGD, PyTorchProjectFramework/main.py at commits
    8186d9f9667be0cc73937a6b82ac458754e72206 and 93f6075e507afadb350eded668b364efeb29b07d, lines 290-298::

        Update learning rate if test_accuracy does not increase
        if (epoch > 2):
            if(test_accuracy[-1] <= test_accuracy[-2]):
                args.lr = args.lr * args.gamma

    with ``gamma`` 0.9 in their settings (e.g. settings_clipping_exp_cifar10_dpsgd_shuffling_IC.json at 8186d9f).
    Two differences from :class:`DecayOnMetricDrop` (paper 003 App. H, "a decrease in testing accuracy"): a tie
    decays too, and the first comparison is at the ``first_check``-th evaluation (1-based; 3 for ``epoch > 2``).
    """

    def __init__(self, lr0: float, *, factor: float = 0.9, metric: str = "test_accuracy", first_check: int = 3) -> None:
        super().__init__(lr0, factor=factor, metric=metric)
        if isinstance(first_check, bool) or not isinstance(first_check, int) or first_check < 2:
            raise ValueError(f"first_check must be an integer >= 2 (1-based evaluation), got {first_check!r}")
        self.first_check = first_check
        self.seen = 0

    def on_epoch_end(self, epoch: int, metrics: dict[str, float]) -> None:
        if self.metric not in metrics:
            raise ValueError(
                f"DecayOnNoImprovement needs metric {self.metric!r} from the evaluation; got {sorted(metrics)}"
            )
        value = float(metrics[self.metric])
        self.seen += 1
        if self.last is not None and self.seen >= self.first_check and value <= self.last:
            self.current *= self.factor
        self.last = value

    def state_dict(self) -> dict:
        return {**super().state_dict(), "seen": self.seen}

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        self.seen = int(state["seen"])

    def describe(self) -> dict:
        return {"kind": "decay_on_no_improvement", "lr0": self.lr0, "factor": self.factor, "metric": self.metric,
                "first_check": self.first_check}  # fmt: skip


class MultiStepLR(_Stateless):
    """η = lr0 · γ^(number of milestones ≤ step)."""

    def __init__(self, lr0: float, milestones: Sequence[int], gamma: float = 0.1) -> None:
        self.lr0 = check_positive("lr0", lr0)
        self.milestones = sorted(int(m) for m in milestones)
        self.gamma = check_positive("gamma", gamma)

    def lr(self, step: int, samples: float) -> float:
        return self.lr0 * self.gamma ** sum(step >= m for m in self.milestones)

    def describe(self) -> dict:
        return {"kind": "multistep", "lr0": self.lr0, "milestones": self.milestones, "gamma": self.gamma}


def schedule_from_dict(spec: float | dict | LRSchedule) -> LRSchedule:
    """A schedule from a number (constant), a ``describe()``-style dict, or a schedule object."""
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return ConstantLR(float(spec))
    if isinstance(spec, dict):
        kind = spec.get("kind")
        args = {k: v for k, v in spec.items() if k != "kind"}
        if kind == "constant":
            return ConstantLR(**args)
        if kind == "inverse_time":
            return InverseTimeDecay(**args)
        if kind == "decay_on_metric_drop":
            return DecayOnMetricDrop(**args)
        if kind == "decay_on_no_improvement":
            return DecayOnNoImprovement(**args)
        if kind == "multistep":
            return MultiStepLR(**args)
        raise ValueError(f"unknown schedule kind {kind!r}")
    if hasattr(spec, "lr") and hasattr(spec, "describe"):
        return spec
    raise ValueError(f"lr must be a number, a schedule dict or a schedule object, got {spec!r}")
