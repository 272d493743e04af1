"""What one DP training run is: sampling × clipping × noise × optimiser (× ModelMix).

The generalised round of paper 003 (Algorithm 1 with eq. (22)) covers all three papers:

    U = Σ_{h=1}^{m} [a_h]_C  +  N(0, (κ C σ)² I),      w ← A(w, U / D)

* a_h is the mean gradient of group h of s samples; s = 1 "individual" (DP-SGD, papers 000 and 002),
  one group of the whole batch "batch", groups of s "mixed" (paper 003); "none" is non-private
  training (no clipping, σ = 0).
* κ is the **noise convention**: ``"standard"`` κ = 1, noise N(0, (Cσ)²) as in DP-SGD with Poisson
  sampling and add/remove neighbours (Abadi et al. 2016; papers 000 and 002);  ``"replace_one"``
  κ = 2, noise N(0, (2Cσ)²) as in paper 003's Algorithm 1 line 22 (replace-one neighbours,
  sensitivity 2C).
* D is the **reduction**: ``"mean"`` divides by the expected number of groups per round (m for
  shuffling / fixed-size sampling -- Algorithm 1 line 23 of paper 003 -- and q·N/s for Poisson, as
  Opacus does); ``"sum"`` does not divide (paper 000, where the step size absorbs the batch size).
* A is any ``torch.optim`` optimiser fed U/D as the gradient (a post-processing of the private U).

Two named modes reproduce practices of the paper-003 authors' public code (issue 21); the defaults are the
algorithm as printed, and every other value changes what the run record reports, so that the accountant's ε is
that of the mechanism that ran (:meth:`TrainConfig.accounted`):

* ``clip_scope``: ``"global"`` clips each group vector a_h as one vector (the paper's [x]_C); ``"per_tensor"``
  clips each parameter tensor of a_h separately to C (:data:`PARAMETER_CLIP_SCOPES`, defined in
  :mod:`dpcore.training.persample`).
* ``noise_placement``: where the noise enters and what is divided by m (:data:`NOISE_PLACEMENTS`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from dpcore.accounting.events import CLIPPINGS as PRIVATE_CLIPPINGS
from dpcore.accounting.events import NOISE_CONVENTIONS, NOISE_FACTOR, clipped_group_size, groups_per_round
from dpcore.training.modelmix import ModelMixConfig
from dpcore.training.persample import ENGINES, PARAMETER_CLIP_SCOPES
from dpcore.training.sampling import SAMPLINGS
from dpcore.validation import (
    check_choice,
    check_nonnegative,
    check_positive,
    check_positive_int,
)

__all__ = [
    "CLIPPINGS", "NOISE_CONVENTIONS", "REDUCTIONS", "CLIP_NORM_TYPES", "TrainConfig", "NOISE_FACTOR",
    "PARAMETER_CLIP_SCOPES",
    "NOISE_PLACEMENTS", "FORMER_NOISE_PLACEMENTS", "noise_placement_name", "stable_noise_placement",
    "AUTHORS_SAMPLINGS", "AccountedNoise",
]  # fmt: skip

CLIPPINGS = (*PRIVATE_CLIPPINGS, "none")  # "none": a non-private run
REDUCTIONS = ("mean", "sum")
CLIP_NORM_TYPES = ("l2", "l2_linf")
OPTIMIZERS = ("sgd", "adam", "adamw")


#: Where the Gaussian noise enters one round and what is divided by m (issue 21), each value named by the mechanism
#: it runs (issue 43): what is clipped, where the noise enters, what the noise is divided by.  U = Σ_h [a_h]_C is
#: the clipped sum of the m groups, ā the mean gradient of the whole batch, κ the noise convention's factor (2 for
#: replace-one), |S_b| the batch size:
#:
#: * ``"algorithm1"`` -- (U + N(0, (κCσ)²))/m: paper 003 Algorithm 1 lines 21-24.
#: * ``"clipped_mean_noise_over_m"`` -- [ā]_C + N(0, (κCσ/m)²): the groups' gradients summed unclipped and averaged,
#:   the batch mean clipped once, the noise divided by m.  Whatever m is, this is batch clipping of the batch mean
#:   with m times less noise: for individual clipping (m = |S_b|) the noise multiplier that ran is σ/|S_b|.
#: * ``"clipped_sum_noise_over_m"`` -- U + N(0, (κCσ/m)²): each group clipped and summed, the sum not divided by m,
#:   the noise divided by m.  Relative to the clipped sum the noise is m times smaller than Algorithm 1's: noise
#:   multiplier σ/m.
#: * ``"clipped_mean_noise_over_batch"`` -- [ā]_C + N(0, (Cσ/|S_b|)²), batch clipping only: the batch mean clipped
#:   once, noise of std Cσ (no κ) divided by |S_b|.  Against replace-one sensitivity 2C that is the noise
#:   multiplier σ/(2|S_b|).
#:
#: Which of the paper-003 authors' code versions ran each (repository, commit, file, line) is in
#: :data:`dpcore.papers.p003_shuffling.training.MODES`; the names before issue 43 are :data:`FORMER_NOISE_PLACEMENTS`.
NOISE_PLACEMENTS = ("algorithm1", "clipped_mean_noise_over_m", "clipped_sum_noise_over_m",
                    "clipped_mean_noise_over_batch")  # fmt: skip
#: The spellings of :data:`NOISE_PLACEMENTS` before issue 43 (named by a commit of the authors' repository) -> the
#: mechanism's name.  A configuration read with a former spelling gets the new one (:func:`noise_placement_name`);
#: configuration hashes and checkpoint fingerprints are computed on the former spelling
#: (:func:`stable_noise_placement`), so that results and checkpoints written before the rename keep their names.
FORMER_NOISE_PLACEMENTS: dict[str, str] = {
    "authors_8186d9f": "clipped_mean_noise_over_m",
    "authors_93f6075": "clipped_sum_noise_over_m",
    "bc_divided_by_batch": "clipped_mean_noise_over_batch",
}
_STABLE_SPELLING = {new: old for old, new in FORMER_NOISE_PLACEMENTS.items()}


def noise_placement_name(value: object) -> object:
    """The current name of the noise placement ``value``: a former spelling (:data:`FORMER_NOISE_PLACEMENTS`) mapped
    to its mechanism's name, anything else unchanged (validated where it is used)."""
    return FORMER_NOISE_PLACEMENTS.get(value, value) if isinstance(value, str) else value


def stable_noise_placement(value: str) -> str:
    """The spelling of the noise placement ``value`` that hashes and fingerprints use: the former spelling of a renamed
    placement (:data:`FORMER_NOISE_PLACEMENTS`), else ``value`` (``"algorithm1"`` is unchanged)."""
    return _STABLE_SPELLING.get(value, value)
#: the samplers of the authors' runs (fixed-size subsampling and shuffling; a constant |S_b|)
AUTHORS_SAMPLINGS = ("shuffle", "fixed")


#: The device types a run may ask for ("auto": CUDA when available, else the CPU).
DEVICE_TYPES = ("cpu", "cuda", "mps")


def _check_device(device: object) -> None:
    """``device`` is "auto", or a torch device string / object of a type in :data:`DEVICE_TYPES` ("cuda:1")."""
    import torch

    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise ValueError(f"device must be 'auto' or a device of type {', '.join(DEVICE_TYPES)}; got {device!r}")
    if device == "auto":
        return
    try:
        kind = torch.device(device).type
    except (RuntimeError, ValueError) as exc:
        raise ValueError(f"device must be 'auto' or one of {', '.join(DEVICE_TYPES)} (e.g. 'cuda:0'); got "
                         f"{device!r}") from exc  # fmt: skip
    if kind not in DEVICE_TYPES:
        raise ValueError(f"device must be 'auto' or one of {', '.join(DEVICE_TYPES)} (e.g. 'cuda:0'); got {device!r}")


def _check_lr(lr: object) -> None:
    """``lr``: a finite step size > 0, a schedule dict (checked by building it) or a schedule object."""
    from dpcore.training.schedules import schedule_from_dict

    if isinstance(lr, bool):
        raise ValueError(f"lr must be a number in (0, inf), a schedule dict or a schedule object; got {lr!r}")
    if isinstance(lr, numbers.Real):
        check_positive("lr", lr)
        return
    if isinstance(lr, dict):
        try:
            schedule_from_dict(lr)
        except TypeError as exc:  # unknown or missing keys of the schedule's constructor
            raise ValueError(f"lr: the schedule dict {lr!r} is not valid: {exc}") from exc
        return
    if not callable(getattr(lr, "lr", None)):
        raise ValueError(f"lr must be a number in (0, inf), a schedule dict or a schedule object; got {lr!r}")

@dataclass(frozen=True)
class AccountedNoise:
    """The mechanism a round really runs, in the run record's terms (see :meth:`TrainConfig.accounted`).

    ``clipping`` / ``group_size``: the clipping whose sum the noise is added to; ``clip_norm``: the bound on the
    norm of one clipped group vector (C, or C·√k for per-tensor clipping of k tensors); ``noise_std``: the
    per-coordinate noise std relative to that clipped sum; ``noise_multiplier`` = noise_std / (κ·clip_norm), the
    σ an accountant must use.
    """

    clipping: str
    group_size: int | None
    clip_norm: float
    noise_multiplier: float
    noise_std: float


@dataclass
class TrainConfig:
    """All settings of one run (see the module docstring for the update rule).

    Exactly one of ``epochs`` and ``steps`` is given unless ``batch_size`` is a schedule (then the
    schedule's length is the number of rounds).  ``lr`` is a number, a schedule dict (see
    :func:`dpcore.training.schedules.schedule_from_dict`) or a schedule object.  ``optimizer`` is
    "sgd", "adam", "adamw" or a callable ``params -> torch.optim.Optimizer`` (given ``lr`` is then
    set by the schedule each round).  ``secure_rng=True`` draws the Gaussian noise from generators seeded
    by the operating system's CSPRNG (``os.urandom``) at every step, as Opacus's secure mode does, and keeps
    the seed out of the run record.  ``data`` is free text naming the data the run used (its provenance),
    copied into the record.
    """

    sampling: str = "poisson"
    batch_size: int | Sequence[int] = 256
    epochs: float | None = None
    steps: int | None = None
    clipping: str = "individual"
    clip_norm: float = 1.0
    group_size: int | None = None
    clip_norm_type: str = "l2"
    linf_p: int | None = None
    noise_multiplier: float = 1.0
    noise_convention: str = "standard"
    reduce: str = "mean"
    lr: Any = 0.1
    optimizer: str | Callable = "sgd"
    optimizer_kwargs: dict = field(default_factory=dict)
    modelmix: ModelMixConfig | None = None
    engine: str = "auto"
    max_physical_batch: int | None = None
    seed: int = 0
    device: str = "auto"
    eval_every: int | None = None
    secure_rng: bool = False
    data: str = ""
    clip_scope: str = "global"
    noise_placement: str = "algorithm1"

    def __post_init__(self) -> None:
        check_choice("sampling", self.sampling, SAMPLINGS)
        check_choice("clipping", self.clipping, CLIPPINGS)
        check_choice("noise_convention", self.noise_convention, NOISE_CONVENTIONS)
        check_choice("reduce", self.reduce, REDUCTIONS)
        check_choice("clip_norm_type", self.clip_norm_type, CLIP_NORM_TYPES)
        check_choice("engine", self.engine, ENGINES)
        self.noise_multiplier = check_nonnegative("noise_multiplier", self.noise_multiplier)
        self.clip_norm = check_positive("clip_norm", self.clip_norm, allow_inf=True)
        _check_device(self.device)
        _check_lr(self.lr)
        if self.clipping == "none":
            if self.noise_multiplier != 0:
                raise ValueError("clipping='none' (non-private) needs noise_multiplier=0")
        if self.noise_multiplier > 0 and math.isinf(self.clip_norm):
            raise ValueError("noise_multiplier > 0 needs a finite clip_norm (noise std is κ·C·σ)")
        if self.clipping == "mixed":
            if self.group_size is None:
                raise ValueError("clipping='mixed' needs group_size (s, samples per clipped group)")
            self.group_size = check_positive_int("group_size", self.group_size)
        elif self.group_size is not None and not (self.clipping == "individual" and self.group_size == 1):
            raise ValueError(f"group_size is only for clipping='mixed' (got clipping={self.clipping!r})")
        if self.clip_norm_type == "l2_linf":
            if self.linf_p is None:
                raise ValueError("clip_norm_type='l2_linf' needs linf_p (ModelMix Algorithm 2's p)")
            self.linf_p = check_positive_int("linf_p", self.linf_p)
            if math.isinf(self.clip_norm):
                raise ValueError("clip_norm_type='l2_linf' needs a finite clip_norm")
        elif self.linf_p is not None:
            raise ValueError("linf_p is only for clip_norm_type='l2_linf'")
        scheduled = not isinstance(self.batch_size, int)
        if scheduled:
            if self.epochs is not None or self.steps is not None:
                raise ValueError("with a batch-size schedule the number of rounds is its length; omit epochs/steps")
        elif (self.epochs is None) == (self.steps is None):
            raise ValueError("give exactly one of epochs and steps")
        if self.epochs is not None:
            self.epochs = check_positive("epochs", self.epochs)
        if self.steps is not None:
            self.steps = check_positive_int("steps", self.steps)
        if self.max_physical_batch is not None:
            self.max_physical_batch = check_positive_int("max_physical_batch", self.max_physical_batch)
        if self.eval_every is not None:
            self.eval_every = check_positive_int("eval_every", self.eval_every)
        if isinstance(self.optimizer, str):
            check_choice("optimizer", self.optimizer, OPTIMIZERS)
        if self.modelmix is not None and not isinstance(self.modelmix, ModelMixConfig):
            raise ValueError("modelmix must be a ModelMixConfig or None")
        if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0 (numpy's SeedSequence seeds batches), got {self.seed!r}")
        self.seed = int(self.seed)
        if not isinstance(self.secure_rng, bool):
            raise ValueError(f"secure_rng must be True or False, got {self.secure_rng!r}")
        if not isinstance(self.data, str):
            raise ValueError(f"data must be a string (the data's provenance), got {self.data!r}")
        self._check_authors_modes()

    def _check_authors_modes(self) -> None:
        """Validate ``clip_scope`` and ``noise_placement`` (:data:`PARAMETER_CLIP_SCOPES`, :data:`NOISE_PLACEMENTS`)."""
        check_choice("clip_scope", self.clip_scope, PARAMETER_CLIP_SCOPES)
        self.noise_placement = noise_placement_name(self.noise_placement)
        check_choice("noise_placement", self.noise_placement, NOISE_PLACEMENTS)
        if self.clip_scope == "global" and self.noise_placement == "algorithm1":
            return
        if not self.private:
            raise ValueError(
                f"clip_scope / noise_placement are modes of a private run, got clip_scope={self.clip_scope!r}, "
                f"noise_placement={self.noise_placement!r} with clipping='none'"
            )
        if self.clip_scope == "per_tensor" and self.clip_norm_type != "l2":
            raise ValueError("clip_scope='per_tensor' needs clip_norm_type='l2' (no l∞ truncation)")
        if math.isinf(self.clip_norm):
            raise ValueError("clip_scope / noise_placement modes need a finite clip_norm")
        if self.noise_placement == "algorithm1":
            return
        if self.sampling not in AUTHORS_SAMPLINGS or not isinstance(self.batch_size, int):
            raise ValueError(
                f"noise_placement={self.noise_placement!r} reproduces runs with a constant batch and sampling in "
                f"{AUTHORS_SAMPLINGS}, got sampling={self.sampling!r}, batch_size={self.batch_size!r}"
            )
        if self.reduce != "mean" or self.modelmix is not None:
            raise ValueError(f"noise_placement={self.noise_placement!r} needs reduce='mean' and no ModelMix")
        if self.noise_placement == "clipped_mean_noise_over_batch" and self.clipping != "batch":
            raise ValueError(f"noise_placement='clipped_mean_noise_over_batch' is for clipping='batch', "
                             f"got {self.clipping!r}")  # fmt: skip
        if self.clipping == "mixed" and self.batch_size % (self.group_size or 1):
            raise ValueError(f"noise_placement={self.noise_placement!r} needs batch_size divisible by group_size")

    @property
    def private(self) -> bool:
        return self.clipping != "none"

    @property
    def noise_factor(self) -> float:
        """κ: 1 for the standard convention, 2 for replace-one (paper 003)."""
        return NOISE_FACTOR[self.noise_convention]

    @property
    def noise_std(self) -> float:
        """Per-coordinate standard deviation κ·C·σ of the noise added to U (0 when σ = 0)."""
        return 0.0 if self.noise_multiplier == 0 else self.noise_factor * self.clip_norm * self.noise_multiplier

    def effective_group_size(self, batch_size: int) -> int:
        """s: 1 (individual), the whole batch (batch), group_size (mixed): :func:`events.clipped_group_size`."""
        return clipped_group_size(self.clipping, max(batch_size, 1), self.group_size)

    @property
    def clips_batch_mean(self) -> bool:
        """Whether a round clips the mean gradient of the whole batch once, whatever ``clipping`` says (the
        placements ``"clipped_mean_noise_over_m"`` and ``"clipped_mean_noise_over_batch"``; see
        :data:`NOISE_PLACEMENTS`)."""
        return self.noise_placement in ("clipped_mean_noise_over_m", "clipped_mean_noise_over_batch")

    def clip_group_size(self, batch_size: int) -> int:
        """The group size the clipping runs on: :meth:`effective_group_size`, or the whole batch when the round
        clips the batch mean (:attr:`clips_batch_mean`)."""
        return max(batch_size, 1) if self.clips_batch_mean else self.effective_group_size(batch_size)

    def groups(self, batch_size: int) -> float:
        """m: the number of clipped groups of ``clipping`` in a batch of ``batch_size`` (1 for batch clipping):
        :func:`dpcore.accounting.events.groups_per_round`, the one group-count rule."""
        if self.clipping == "none" or batch_size <= 0:
            return 1.0 if self.clipping != "individual" else float(batch_size)
        return float(groups_per_round(self.clipping, batch_size, self.group_size))

    def round_noise_std(self, batch_size: int) -> float:
        """Per-coordinate std of the noise added to the clipped statistic of a round of ``batch_size`` (before the
        division by D): κCσ for ``"algorithm1"``, κCσ/m for the two ``*_noise_over_m`` placements,
        Cσ/``|S_b|`` for ``"clipped_mean_noise_over_batch"`` (:data:`NOISE_PLACEMENTS`)."""
        std = self.noise_std
        if self.noise_placement in ("clipped_mean_noise_over_m", "clipped_sum_noise_over_m"):
            return std / self.groups(batch_size)
        if self.noise_placement == "clipped_mean_noise_over_batch":
            return 0.0 if std == 0 else self.clip_norm * self.noise_multiplier / batch_size
        return std

    def accounted(self, batch_size: int, *, tensors: int | None = None) -> AccountedNoise:
        """The mechanism a round of ``batch_size`` really runs, as the run record must report it.

        ε must be that of the noise that reached the clipped sum (issue 21).  With k = ``tensors`` parameter
        tensors, per-tensor clipping bounds a group vector by C·√k (the clip norm reported), and the noise std is
        :meth:`round_noise_std` relative to the clipped statistic (the batch mean for the placements that clip
        it, reported as batch clipping).  The record's σ is then noise_std / (κ·clip norm): e.g. σ/m for
        ``"clipped_sum_noise_over_m"``, σ/√k for per-tensor clipping.  The defaults report C, σ and κCσ unchanged.
        """
        if self.clip_scope == "per_tensor":
            if tensors is None:
                raise ValueError("tensors (the number of parameter tensors) must be given for clip_scope='per_tensor'")
            k = check_positive_int("tensors", tensors)
        else:
            k = 1
        if self.clip_scope == "global" and self.noise_placement == "algorithm1":
            return AccountedNoise(self.clipping, self.group_size, self.clip_norm, self.noise_multiplier, self.noise_std)
        clip = self.clip_norm * math.sqrt(k)
        std = self.round_noise_std(batch_size)
        clipping, group = ("batch", None) if self.clips_batch_mean else (self.clipping, self.group_size)
        return AccountedNoise(clipping, group, clip, std / (self.noise_factor * clip), std)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["optimizer"] = (
            self.optimizer
            if isinstance(self.optimizer, str)
            else getattr(self.optimizer, "__name__", type(self.optimizer).__name__)
        )
        d["lr"] = self.lr if isinstance(self.lr, (int, float, dict)) else self.lr.describe()
        d["modelmix"] = (
            None
            if self.modelmix is None
            else {"tau_ratio": self.modelmix.tau_ratio, "gap_rule": self.modelmix.gap_rule}
        )
        d["batch_size"] = self.batch_size if isinstance(self.batch_size, int) else list(self.batch_size)
        for name, default in _LATER_DEFAULTS.items():  # added later: left out at their default, so that the
            if d[name] == default:  # checkpoint fingerprints of runs written before them stay valid
                del d[name]
        return d


#: fields added after checkpoints were first written, with their defaults (:meth:`TrainConfig.as_dict` drops them)
_LATER_DEFAULTS = {"clip_scope": "global", "noise_placement": "algorithm1"}
