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
from dpcore.accounting.events import NOISE_CONVENTIONS, NOISE_FACTOR, clipped_group_size
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
    "NOISE_PLACEMENTS", "AUTHORS_SAMPLINGS", "AccountedNoise",
]  # fmt: skip

CLIPPINGS = (*PRIVATE_CLIPPINGS, "none")  # "none": a non-private run
REDUCTIONS = ("mean", "sum")
CLIP_NORM_TYPES = ("l2", "l2_linf")
OPTIMIZERS = ("sgd", "adam", "adamw")


#: Where the Gaussian noise enters one round and what is divided by m (issue 21).  U = Σ_h [a_h]_C is the clipped
#: sum of the m groups, ā the mean gradient of the whole batch, κ the noise convention's factor (2 for
#: replace-one), |S_b| the batch size.  Evidence (repository MisaNguyen/DPSGD; line numbers of that commit's file;
#: ``Normal(0, s)`` there is torch.distributions.Normal with standard deviation s):
#:
#: * ``"algorithm1"`` -- (U + N(0, (κCσ)²))/m, paper 003 Algorithm 1 lines 21-24; also the authors' code at
#:   a3b48f6ff9a96bfb8aa995480d2e368ac9cbc29c, CIFAR10_train.py line 471
#:   ``param.grad = (param.grad + noise).div(len(micro_train_loader))``.
#: * ``"authors_8186d9f"`` -- [ā]_C + N(0, (κCσ/m)²): commit 8186d9f9667be0cc73937a6b82ac458754e72206 ("MNIST
#:   training"; main.py line 126 ``args.dataset_name = "MNIST"``), CIFAR10_train.py: the micro-batch gradients
#:   are summed unclipped (lines 424-427; the per-micro-batch clip at 406-422 is commented out), averaged
#:   (line 436 ``net1[1].grad = net2[1].sum_grad.div(len(micro_train_loader)) # Averaging the gradients``),
#:   clipped once (line 460), and the noise ``Normal(0, 2 * args.noise_multiplier * args.max_grad_norm)``
#:   (lines 464-465) is divided by m (line 472 ``param.grad = param.grad + noise.div(len(micro_train_loader))``).
#:   Whatever m is, this is batch clipping of the batch mean with m times less noise: for "IC" (m = |S_b|) the
#:   noise multiplier of the mechanism that ran is σ/|S_b|.
#: * ``"authors_93f6075"`` -- U + N(0, (κCσ/m)²): commit 93f6075e507afadb350eded668b364efeb29b07d ("Switch to
#:   Marten Algo"), CIFAR10_train.py: each micro-batch gradient clipped (line 422), summed (lines 424-427), not
#:   averaged (line 435 ``net1[1].grad = net2[1].sum_grad``), noise divided by m (line 472).  Relative to the
#:   clipped sum the noise is m times smaller than Algorithm 1's: noise multiplier σ/m.
#: * ``"bc_divided_by_batch"`` -- [ā]_C + N(0, (Cσ/|S_b|)²), batch clipping only: commit
#:   cb9d35549259207723063405f898d8bc507b61a0 (HEAD), train_model_BC_FGC.py ``generate_private_grad``: the
#:   batch-mean gradient (lines 24-27) clipped as one vector (lines 37-44), ``std = sigma*const_C`` (line 48),
#:   ``param.grad = (grad*batch_size + noise)/batch_size`` (line 56).  Against replace-one sensitivity 2C that is
#:   the noise multiplier σ/(2|S_b|).
NOISE_PLACEMENTS = ("algorithm1", "authors_8186d9f", "authors_93f6075", "bc_divided_by_batch")
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
        if self.noise_placement == "bc_divided_by_batch" and self.clipping != "batch":
            raise ValueError(f"noise_placement='bc_divided_by_batch' is for clipping='batch', got {self.clipping!r}")
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
        placements ``"authors_8186d9f"`` and ``"bc_divided_by_batch"``; see :data:`NOISE_PLACEMENTS`)."""
        return self.noise_placement in ("authors_8186d9f", "bc_divided_by_batch")

    def clip_group_size(self, batch_size: int) -> int:
        """The group size the clipping runs on: :meth:`effective_group_size`, or the whole batch when the round
        clips the batch mean (:attr:`clips_batch_mean`)."""
        return max(batch_size, 1) if self.clips_batch_mean else self.effective_group_size(batch_size)

    def groups(self, batch_size: int) -> float:
        """m: the number of clipped groups of ``clipping`` in a batch of ``batch_size`` (1 for batch clipping)."""
        if self.clipping == "individual":
            return float(batch_size)
        if self.clipping == "mixed":
            assert self.group_size is not None
            return batch_size / self.group_size
        return 1.0

    def round_noise_std(self, batch_size: int) -> float:
        """Per-coordinate std of the noise added to the clipped statistic of a round of ``batch_size`` (before the
        division by D): κCσ for ``"algorithm1"``, κCσ/m for the authors' 8186d9f and 93f6075 placements,
        Cσ/``|S_b|`` for ``"bc_divided_by_batch"`` (:data:`NOISE_PLACEMENTS`)."""
        std = self.noise_std
        if self.noise_placement in ("authors_8186d9f", "authors_93f6075"):
            return std / self.groups(batch_size)
        if self.noise_placement == "bc_divided_by_batch":
            return 0.0 if std == 0 else self.clip_norm * self.noise_multiplier / batch_size
        return std

    def accounted(self, batch_size: int, *, tensors: int | None = None) -> AccountedNoise:
        """The mechanism a round of ``batch_size`` really runs, as the run record must report it.

        ε must be that of the noise that reached the clipped sum (issue 21).  With k = ``tensors`` parameter
        tensors, per-tensor clipping bounds a group vector by C·√k (the clip norm reported), and the noise std is
        :meth:`round_noise_std` relative to the clipped statistic (the batch mean for the placements that clip
        it, reported as batch clipping).  The record's σ is then noise_std / (κ·clip norm): e.g. σ/m for
        ``"authors_93f6075"``, σ/√k for per-tensor clipping.  The defaults report C, σ and κCσ unchanged.
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
