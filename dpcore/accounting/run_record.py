"""What a training run did: a typed, frozen, validated :class:`RunRecord`.

The trainer (:mod:`dpcore.training`) and the federated algorithms return one; the accountants of
:mod:`dpcore.accounting.records` turn it into ε.  Every field is checked when the record is built
(types and ranges; a bool is not an int, a string is not a number), and so is the consistency between
fields: a batch-size schedule has one entry per planned step and no entry larger than the data set,
ModelMix phases cover every planned step, the clipping and sampling are known words
(:mod:`dpcore.accounting.events`), and the noise std is κ·C·σ of its convention.  A record that fails
any check raises ``ValueError`` naming the field; nothing is capped or guessed.

A record reads like the dict it replaces (``record["steps"]``, ``record.get("modelmix")``,
``dict(record)``) and :meth:`RunRecord.to_dict` gives a JSON-able copy.

>>> rec = RunRecord(private=True, sampling="poisson", dataset_size=60000, batch_size=600, steps=10000,
...                 clipping="individual", clip_norm=1.0, noise_multiplier=4.0, noise_std=4.0)
>>> rec["sample_rate"]
0.01
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from dpcore.accounting.events import CLIPPINGS, NOISE_CONVENTIONS, NOISE_FACTOR, RECORD_SAMPLINGS, sample_rate_of
from dpcore.validation import check_bool, check_choice, check_nonnegative, check_positive, check_positive_int

__all__ = ["RunRecord", "NOISE_CONVENTIONS", "NOISE_FACTOR", "CLIP_NORM_TYPES", "REDUCTIONS", "RECORD_VERSION"]

RECORD_VERSION = 2
CLIP_NORM_TYPES = ("l2", "l2_linf")
REDUCTIONS = ("mean", "sum")
_NONE_CLIPPING = "none"


# --------------------------------------------------------------------------- strict field checks
def _int(name: str, value: Any, *, minimum: int = 0) -> int:
    return check_positive_int(name, value, minimum=minimum)


def _float(name: str, value: Any, *, strict: bool = False, allow_inf: bool = False) -> float:
    """A number >= 0 (> 0 with ``strict``; ∞ only with ``allow_inf``): :mod:`dpcore.validation`'s checks."""
    return check_positive(name, value, allow_inf=allow_inf) if strict else check_nonnegative(name, value)


_bool = check_bool
_choice = check_choice


def _optional_str(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, got {value!r}")
    return value


def _mapping(name: str, value: Any) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping or None, got {value!r}")
    return copy.deepcopy(dict(value))


@dataclass(frozen=True)
class RunRecord:
    """Everything an accountant needs about one private (or non-private) run, plus how it was executed.

    Accounting fields: ``private``, ``sampling`` (``"poisson"``, ``"shuffle"``, ``"fixed"``; ``"replacement"``
    for draws with replacement, which no accountant here covers), ``dataset_size`` n,
    ``batch_size`` (an int, or a schedule: one int in [1, n] per planned step), ``steps`` (steps done),
    ``planned_steps`` (≥ steps; default ``steps``), ``clipping`` (``"individual"``, ``"batch"``, ``"mixed"``;
    ``"none"`` only for a non-private run), ``group_size`` (s of mixed clipping), ``clip_norm`` C,
    ``clip_norm_type`` / ``linf_p`` (ModelMix's ℓ2 + ℓ∞), ``noise_multiplier`` σ, ``noise_convention``
    (κ = 1 ``"standard"``, κ = 2 ``"replace_one"``), ``noise_std`` = κ·C·σ, ``modelmix`` (phases
    ``[{"steps": k, "tau_ratio": ρ}, ...]`` summing to ``planned_steps``).  ``data`` is free text about
    the data's provenance.  The remaining fields describe execution (optimizer, schedule, engine, …).
    """

    private: bool
    sampling: str
    dataset_size: int
    batch_size: int | tuple[int, ...]
    steps: int
    clipping: str
    clip_norm: float
    noise_multiplier: float
    noise_std: float
    noise_convention: str = "standard"
    planned_steps: int | None = None
    sample_rate: float | None = None
    epochs: float | None = None
    group_size: int | None = None
    groups_per_round: float | None = None
    clip_norm_type: str = "l2"
    linf_p: int | None = None
    reduce: str = "mean"
    modelmix: dict | None = None
    optimizer: dict | None = None
    lr_schedule: dict | None = None
    async_: dict | None = None
    engine: tuple[str, ...] = ()
    max_physical_batch: int | None = None
    seed: int | None = None
    secure_rng: bool = False
    device: str | None = None
    dtype: str | None = None
    data: str = ""
    record_version: int = RECORD_VERSION
    _extra: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ validation
    def __post_init__(self) -> None:
        s = object.__setattr__
        private = _bool("private", self.private)
        sampling = _choice("sampling", self.sampling, RECORD_SAMPLINGS)
        n = _int("dataset_size", self.dataset_size, minimum=1)
        steps = _int("steps", self.steps)
        planned = steps if self.planned_steps is None else _int("planned_steps", self.planned_steps)
        if planned < steps:
            raise ValueError(f"planned_steps must be >= steps = {steps}, got {planned}")
        s(self, "planned_steps", planned)
        s(self, "batch_size", self._check_batch(self.batch_size, n, planned))
        constant = isinstance(self.batch_size, int)
        rate = self.batch_size / n if constant else None
        if self.sample_rate is not None:
            given = _float("sample_rate", self.sample_rate, strict=True)
            if rate is None:
                raise ValueError(f"sample_rate={given} disagrees with a batch_size schedule (no one b/n)")
            sample_rate_of(self.batch_size, n, given)  # q = b/n: events.py's one check
        s(self, "sample_rate", rate)
        if self.epochs is not None:
            s(self, "epochs", _float("epochs", self.epochs))
        clipping = _choice("clipping", self.clipping, (*CLIPPINGS, _NONE_CLIPPING))
        if private and clipping == _NONE_CLIPPING:
            raise ValueError("a private run needs clipping in " + ", ".join(map(repr, CLIPPINGS)) + "; got 'none'")
        if not private and clipping != _NONE_CLIPPING:
            raise ValueError(f"a non-private run has clipping='none', got clipping={clipping!r}")
        if self.group_size is not None:
            s(self, "group_size", _int("group_size", self.group_size, minimum=1))
        if clipping == "mixed":
            if self.group_size is None:
                raise ValueError("clipping='mixed' needs group_size (records per clipped group)")
            smallest = self.batch_size if constant else min(self.batch_size)
            if self.group_size > smallest:
                raise ValueError(f"group_size must be <= the batch size ({smallest}), got {self.group_size}")
        elif clipping == "individual" and self.group_size not in (None, 1):
            raise ValueError(f"group_size must be 1 (or None) for individual clipping, got {self.group_size}")
        if self.groups_per_round is not None:
            s(self, "groups_per_round", _float("groups_per_round", self.groups_per_round))
        clip = _float("clip_norm", self.clip_norm, strict=True, allow_inf=True)
        _choice("clip_norm_type", self.clip_norm_type, CLIP_NORM_TYPES)
        if self.clip_norm_type == "l2_linf":
            if self.linf_p is None:
                raise ValueError("clip_norm_type='l2_linf' needs linf_p (ModelMix Algorithm 2's p)")
            s(self, "linf_p", _int("linf_p", self.linf_p, minimum=1))
        elif self.linf_p is not None:
            raise ValueError(f"linf_p is only for clip_norm_type='l2_linf', got linf_p={self.linf_p!r}")
        sigma = _float("noise_multiplier", self.noise_multiplier)
        convention = _choice("noise_convention", self.noise_convention, NOISE_CONVENTIONS)
        std = _float("noise_std", self.noise_std)
        if private and sigma > 0 and math.isinf(clip):
            raise ValueError("a private run with noise_multiplier > 0 needs a finite clip_norm (unbounded sensitivity)")
        if private:
            expected = 0.0 if sigma == 0 else NOISE_FACTOR[convention] * clip * sigma
            if not math.isclose(std, expected, rel_tol=1e-9, abs_tol=1e-300):
                raise ValueError(
                    f"noise_std must be κ·clip_norm·noise_multiplier = {expected:g} for noise_convention="
                    f"{convention!r}, got {std:g}"
                )
        _choice("reduce", self.reduce, REDUCTIONS)
        s(self, "modelmix", self._check_modelmix(self.modelmix, planned))
        s(self, "optimizer", _mapping("optimizer", self.optimizer))
        s(self, "lr_schedule", _mapping("lr_schedule", self.lr_schedule))
        s(self, "async_", _mapping("async", self.async_))
        engine = self.engine
        if (
            isinstance(engine, str)
            or not isinstance(engine, (list, tuple))
            or not all(isinstance(e, str) for e in engine)
        ):
            raise ValueError(f"engine must be a sequence of strings, got {engine!r}")
        s(self, "engine", tuple(engine))
        if self.max_physical_batch is not None:
            s(self, "max_physical_batch", _int("max_physical_batch", self.max_physical_batch, minimum=1))
        secure = _bool("secure_rng", self.secure_rng)
        if self.seed is not None:
            if secure:
                raise ValueError("a record of a secure_rng run must not carry a seed")
            s(self, "seed", _int("seed", self.seed, minimum=0))  # numpy SeedSequence (the batch plans) refuses < 0
        _optional_str("device", self.device)
        _optional_str("dtype", self.dtype)
        if not isinstance(self.data, str):
            raise ValueError(f"data must be a string, got {self.data!r}")
        _int("record_version", self.record_version, minimum=1)
        if sampling == "shuffle" and not constant:
            raise ValueError("sampling='shuffle' takes a constant batch_size (one permutation cut into equal batches)")

    @staticmethod
    def _check_batch(value: Any, n: int, planned: int) -> int | tuple[int, ...]:
        if isinstance(value, (list, tuple)):
            if len(value) != planned:
                raise ValueError(
                    f"a batch_size schedule needs one entry per planned step ({planned}), got {len(value)} entries"
                )
            out = tuple(_int(f"batch_size[{i}]", b, minimum=1) for i, b in enumerate(value))
            too_big = [i for i, b in enumerate(out) if b > n]
            if too_big:
                i = too_big[0]
                raise ValueError(f"batch_size[{i}] = {out[i]} is larger than dataset_size = {n}")
            return out
        b = _int("batch_size", value, minimum=1)
        sample_rate_of(b, n)  # b in [1, n]: events' one rule
        return b

    @staticmethod
    def _check_modelmix(value: Any, planned: int) -> dict | None:
        if value is None:
            return None
        if not isinstance(value, Mapping) or "phases" not in value:
            raise ValueError(f"modelmix must be None or a mapping with 'phases', got {value!r}")
        phases = value["phases"]
        if not isinstance(phases, (list, tuple)) or not phases:
            raise ValueError("modelmix['phases'] must be a non-empty list of {'steps': k, 'tau_ratio': ρ}")
        clean = []
        for i, p in enumerate(phases):
            if not isinstance(p, Mapping) or set(p) != {"steps", "tau_ratio"}:
                raise ValueError(f"modelmix phase {i} must be {{'steps': k, 'tau_ratio': ρ}}, got {p!r}")
            clean.append(
                {
                    "steps": _int(f"modelmix phase {i} steps", p["steps"], minimum=1),
                    "tau_ratio": _float(f"modelmix phase {i} tau_ratio", p["tau_ratio"]),
                }
            )
        covered = sum(p["steps"] for p in clean)
        if covered != planned:
            raise ValueError(f"modelmix phases must cover every planned step ({planned}), they cover {covered}")
        out = copy.deepcopy(dict(value))
        out["phases"] = clean
        return out

    # ------------------------------------------------------------------ construction from a dict
    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> RunRecord:
        """Validate a dict (e.g. a record read back from JSON) into a :class:`RunRecord`; unknown keys refused."""
        if isinstance(record, RunRecord):
            return record
        if not isinstance(record, Mapping):
            raise ValueError(f"record must be a RunRecord or a mapping, got {type(record).__name__}")
        names = {f.name for f in fields(cls) if f.name != "_extra"}
        kwargs: dict[str, Any] = {}
        unknown = []
        for key, value in record.items():
            name = "async_" if key == "async" else key
            if key == "async_" or name not in names:
                unknown.append(key)
            else:
                kwargs[name] = value
        if unknown:
            raise ValueError(f"record has unknown fields: {', '.join(map(str, sorted(unknown, key=str)))}")
        try:
            return cls(**kwargs)
        except TypeError as exc:  # a missing required field
            raise ValueError(f"record is incomplete: {exc}") from exc

    def replace(self, **changes: Any) -> RunRecord:
        """A validated copy with some fields changed."""
        d = self.to_dict()
        d.update(changes)
        return RunRecord.from_dict(d)

    # ------------------------------------------------------------------ dict-like reading
    def to_dict(self) -> dict[str, Any]:
        """A JSON-able copy (``batch_size`` schedules as lists, ``async_`` under the key ``"async"``)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "_extra":
                continue
            value = copy.deepcopy(getattr(self, f.name))
            if isinstance(value, tuple):
                value = list(value)
            out["async" if f.name == "async_" else f.name] = value
        return out

    def keys(self) -> list[str]:
        return list(self.to_dict())

    def __getitem__(self, key: str) -> Any:
        name = "async_" if key == "async" else key
        if name == "_extra" or name not in {f.name for f in fields(self)}:
            raise KeyError(key)
        value = getattr(self, name)
        if isinstance(value, tuple):
            return list(value)  # as in to_dict(): the JSON form
        return copy.deepcopy(value) if isinstance(value, dict) else value

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def to_event(self) -> Any:
        """The dp_accounting ``DpEvent`` of what ran, to compose with the rest of a dp_accounting pipeline.

        Poisson sampling (add/remove-one): ``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` per step
        (``GaussianDpEvent(z)`` where q = 1), self-composed over each run of equal batch sizes; fixed-size batches
        (replace-one): ``SampledWithoutReplacementDpEvent(n, b, GaussianDpEvent(z))``.  z is the Gaussian's
        multiplier against one step's sensitivity (noise_std / (Δ·C), Δ of ``events.step_sensitivity``).  No steps:
        ``NoOpDpEvent``; a non-private run: ``NonPrivateDpEvent``.  Shuffling, draws with replacement and ModelMix
        have no dp_accounting event (``ValueError``).  ``epsilon_for_record`` accepts these events back.
        """
        import dp_accounting as dpa

        from dpcore.accounting.events import step_sensitivity

        if not self.private or self.noise_std == 0:
            return dpa.NonPrivateDpEvent()
        if self.steps == 0:
            return dpa.NoOpDpEvent()
        if self.sampling not in ("poisson", "fixed") or self.modelmix is not None:
            what = "ModelMix" if self.modelmix is not None else f"sampling={self.sampling!r}"
            raise ValueError(f"a record with {what} has no dp_accounting event; use epsilon_for_record")
        z = self.noise_std / (step_sensitivity(self.sampling, self.clipping) * self.clip_norm)
        parts = []
        for b, count in self.batch_runs():
            gauss = dpa.GaussianDpEvent(z)
            if self.sampling == "fixed":
                step = dpa.SampledWithoutReplacementDpEvent(self.dataset_size, b, gauss)
            else:
                step = gauss if b == self.dataset_size else dpa.PoissonSampledDpEvent(b / self.dataset_size, gauss)
            parts.append(dpa.SelfComposedDpEvent(step, count))
        return parts[0] if len(parts) == 1 else dpa.ComposedDpEvent(parts)

    def batch_runs(self) -> list[tuple[int, int]]:
        """The steps done as runs of equal batch size, [(b, count), ...]: one run for a constant batch, whatever the
        step count (:attr:`schedule` spells every step out)."""
        if isinstance(self.batch_size, int):
            return [(self.batch_size, self.steps)] if self.steps else []
        return _runs(self.schedule)

    @property
    def schedule(self) -> tuple[int, ...]:
        """The batch size of each step done (a constant batch repeated ``steps`` times)."""
        if isinstance(self.batch_size, int):
            return (self.batch_size,) * self.steps
        return self.batch_size[: self.steps]


def _runs(values: tuple[int, ...]) -> list[tuple[int, int]]:
    """Run-length encoding [(value, count), ...] of a batch-size schedule."""
    out: list[list[int]] = []
    for v in values:
        if out and out[-1][0] == v:
            out[-1][1] += 1
        else:
            out.append([v, 1])
    return [(v, c) for v, c in out]
