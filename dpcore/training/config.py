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
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from dpcore.accounting.events import CLIPPINGS as PRIVATE_CLIPPINGS
from dpcore.training.modelmix import ModelMixConfig
from dpcore.training.persample import ENGINES
from dpcore.training.sampling import SAMPLINGS
from dpcore.validation import (
    check_choice,
    check_nonnegative,
    check_positive,
    check_positive_int,
)

__all__ = ["CLIPPINGS", "NOISE_CONVENTIONS", "REDUCTIONS", "CLIP_NORM_TYPES", "TrainConfig", "NOISE_FACTOR"]

CLIPPINGS = (*PRIVATE_CLIPPINGS, "none")  # "none": a non-private run
NOISE_CONVENTIONS = ("standard", "replace_one")
NOISE_FACTOR = {"standard": 1.0, "replace_one": 2.0}
REDUCTIONS = ("mean", "sum")
CLIP_NORM_TYPES = ("l2", "l2_linf")
OPTIMIZERS = ("sgd", "adam", "adamw")


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

    def __post_init__(self) -> None:
        check_choice("sampling", self.sampling, SAMPLINGS)
        check_choice("clipping", self.clipping, CLIPPINGS)
        check_choice("noise_convention", self.noise_convention, NOISE_CONVENTIONS)
        check_choice("reduce", self.reduce, REDUCTIONS)
        check_choice("clip_norm_type", self.clip_norm_type, CLIP_NORM_TYPES)
        check_choice("engine", self.engine, ENGINES)
        self.noise_multiplier = check_nonnegative("noise_multiplier", self.noise_multiplier)
        self.clip_norm = check_positive("clip_norm", self.clip_norm, allow_inf=True)
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
        if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        self.seed = int(self.seed)
        if not isinstance(self.secure_rng, bool):
            raise ValueError(f"secure_rng must be True or False, got {self.secure_rng!r}")
        if not isinstance(self.data, str):
            raise ValueError(f"data must be a string (the data's provenance), got {self.data!r}")

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
        """s: 1 (individual), the whole batch (batch), group_size (mixed)."""
        if self.clipping == "individual":
            return 1
        if self.clipping == "mixed":
            assert self.group_size is not None
            return self.group_size
        return max(batch_size, 1)

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
        return d
