"""What one run of an experiment is: a frozen, validated configuration and its stable hash.

A :class:`RunConfig` fully describes a training run of the generalised DP-SGD of van Dijk et al.
(paper 003, Algorithm 1 with eq. (22)): the data (set, split sizes, seed), the model, the sampler,
the clipping (s, m), σ, C, the batch size |S_b| = m·s, the epochs, the learning-rate rule, the seed,
the profile and the device.  Its :func:`config_hash` (first 16 hex digits of the SHA-256 of the
canonical JSON of every field that differs from its default) names the run's result file and checkpoint
folder, so a run is recomputed exactly when something that defines it changes, and adding a new field with
a default leaves the hashes of existing runs (and their committed results) valid.

>>> cfg = RunConfig(dataset="mnist", model="lenet5", sampling="shuffle", clipping="batch", batch_size=256,
...                 clip_norm=0.1, noise_multiplier=2.0, epochs=100, lr=0.025, profile="paper")
>>> len(config_hash(cfg)), config_hash(cfg) == config_hash(RunConfig.from_dict(cfg.to_dict()))
(16, True)
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields, replace
from typing import Any

from dpcore.models import MODELS
from dpcore.training.config import (
    AUTHORS_SAMPLINGS,
    CLIPPINGS,
    NOISE_CONVENTIONS,
    NOISE_PLACEMENTS,
    PARAMETER_CLIP_SCOPES,
    TrainConfig,
    noise_placement_name,
    stable_noise_placement,
)
from dpcore.training.modelmix import GAP_RULES, ModelMixConfig
from dpcore.training.persample import ENGINES
from dpcore.training.sampling import SAMPLINGS
from dpcore.validation import check_choice, check_nonnegative, check_positive, check_positive_int, check_range

__all__ = [
    "RunConfig", "config_hash", "canonical_json", "LR_RULES", "EVAL_SPLITS", "DEVICES", "PROFILES", "CLIENT_DATA",
    "STEP_SCALINGS", "PARAMETER_CLIP_SCOPES", "NOISE_PLACEMENTS",
]  # fmt: skip

#: ``"constant"``: η = lr; ``"decay_on_drop"``: paper 003 App. H, η ×= lr_decay after an epoch whose
#: accuracy on the evaluated split dropped; ``"decay_on_no_improvement"``: the paper-003 authors' code, η ×= lr_decay
#: after an epoch whose accuracy did not improve (ties decay), from the third epoch on
#: (:class:`~dpcore.training.schedules.DecayOnNoImprovement`, issue 21)
LR_RULES = ("constant", "decay_on_drop", "decay_on_no_improvement")
#: the split evaluated every epoch (and watched by ``decay_on_drop``)
EVAL_SPLITS = ("test", "validation")
DEVICES = ("auto", "cpu", "cuda")
PROFILES = ("quick", "paper")


def _frozen_kwargs(name: str, value: Any) -> tuple[tuple[str, Any], ...]:
    if isinstance(value, Mapping):
        items = value.items()
    else:
        try:
            items = [(k, v) for k, v in value]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a mapping of str to JSON scalars, got {value!r}") from exc
    out = []
    for k, v in items:
        if not isinstance(k, str):
            raise ValueError(f"{name} keys must be str, got {k!r}")
        if not isinstance(v, (str, int, float, bool)) or (isinstance(v, float) and not math.isfinite(v)):
            raise ValueError(f"{name}[{k!r}] must be a finite JSON scalar, got {v!r}")
        out.append((k, v))
    return tuple(sorted(out))


def _tau_phases(value: Any) -> tuple[tuple[float, float], ...]:
    """ModelMix τ phases ``((end fraction, τ/η), ...)`` as a tuple of float pairs (validated by ModelMixConfig)."""
    try:
        phases = tuple((float(end), float(rho)) for end, rho in value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"modelmix_tau must be a sequence of (end fraction, tau/eta) pairs, got {value!r}") from exc
    if phases:
        try:
            ModelMixConfig(tau_ratio=list(phases))
        except ValueError as exc:
            raise ValueError(f"modelmix_tau is invalid: {exc}") from exc
    return phases


@dataclass(frozen=True)
class RunConfig:
    """One run: data, model, Algorithm 1's sampler/clipping/noise, optimiser, seed, profile, device.

    * Data: ``dataset`` (a name of :mod:`dpcore.experiments.datasets`), ``train_size`` (``None``: the
      whole training split, else a seeded subset), ``validation_size`` (examples carved from the
      training set before training, never from the test set; 0 for none), ``test_size`` (``None``:
      the whole test split), ``eval_split`` (evaluated after every epoch), ``data_seed``.
    * Mechanism: ``sampling`` ("shuffle" = paper 003's SH, "fixed" = its SS, "poisson"), ``clipping``
      ("individual" s = 1, "batch" m = 1, "mixed" with ``group_size`` s, "none" non-private),
      ``batch_size`` ``|S_b|`` = m·s, ``clip_norm`` C (``None`` when non-private), ``noise_multiplier`` σ,
      ``noise_convention`` ("replace_one": N(0, (2Cσ)²) of Algorithm 1 line 22).
    * Optimisation: plain SGD with ``lr`` and ``lr_rule`` / ``lr_decay``, ``epochs``.
    * Execution: ``engine``, ``max_physical_batch`` (micro-batches; never changes the result beyond
      rounding), ``seed`` (model initialisation, batches and noise), ``profile``, ``device``.
    * Paper 002 (Xiao, Wan, Devadas, ModelMix; Algorithm 1, Algorithm 2, Appendix E): ``steps`` T (the run
      makes exactly T rounds, e.g. T Poisson draws at rate q = batch_size/N; ``epochs`` is then the number
      of evaluations, one every ⌈T/epochs⌉ rounds and at the end, and must be <= T), ``momentum`` of SGD
      (0: plain SGD), ``modelmix_tau`` the ModelMix phases ``((end fraction, τ/η), ...)`` (τ = ρ·η of the
      averaged update; ``()``: no ModelMix), ``modelmix_gap_rule`` ("exact" or "paper"), ``linf_p`` the
      ℓ∞ truncation p of Algorithm 2 (``None``: ℓ2 clipping only), ``train_eval_size`` (> 0: also log the
      loss and accuracy on that many training examples, a seeded random subset, at every evaluation).
    * Paper 002's named modes (issue 22, the authors' ScatterNet code): ``normalization`` ("groupnorm": the model's
      GroupNorm, no privacy cost; "private_bn": Tramèr-Boneh's private data normalisation of the training features,
      two Gaussian releases with noise multiplier ``bn_noise_multiplier``, composed with the training ε by
      :func:`dpcore.training.private_norm.composed_epsilon`), ``eval_previous`` (also evaluate ModelMix's previous
      iterate w_{k−1} at every evaluation: the authors' ``max(test_acc, test_acc2)``, an extra labelled metric).
    """

    dataset: str
    model: str
    sampling: str
    clipping: str
    batch_size: int
    epochs: int
    lr: float
    profile: str
    clip_norm: float | None = None
    noise_multiplier: float = 0.0
    group_size: int | None = None
    noise_convention: str = "replace_one"
    lr_rule: str = "constant"
    lr_decay: float = 1.0
    model_kwargs: tuple[tuple[str, Any], ...] = ()
    train_size: int | None = None
    validation_size: int = 0
    test_size: int | None = None
    eval_split: str = "test"
    data_seed: int = 0
    seed: int = 0
    engine: str = "auto"
    max_physical_batch: int | None = None
    device: str = "auto"
    # paper 000 (issue 13): n asynchronous clients (Algorithms 2-4), its step size η_i = lr/(1 + β t_i^p)
    # with t_i the gradient computations before round i, and evaluations per epoch (see _check_p000)
    clients: int = 1
    client_data: str = "replicate"
    delay_prob: float = 0.5
    lr_beta: float = 0.0
    lr_power: float = 1.0
    evals_per_epoch: int = 1
    # paper 000 (issue 21): how a client's step uses U = Σ clipped + noise: "sum" (η̄·U, the trainer's reading of
    # Algorithm 4) or "mean" (η̄·U/s_i: §2's "scaling the step size inversely with s_i"); see _check_p000
    step_scaling: str = "sum"
    # paper 003 (issue 21): the authors' practices as named modes; the defaults are Algorithm 1 as printed
    # (see dpcore.training.persample.PARAMETER_CLIP_SCOPES, dpcore.training.config.NOISE_PLACEMENTS, _check_p003)
    clip_scope: str = "global"
    noise_placement: str = "algorithm1"
    # paper 002 (issue 14): Xiao, Wan, Devadas (ModelMix), Algorithms 1-2 and Appendix E; the defaults
    # reproduce the runs above (no step count, plain SGD, no ModelMix, ℓ2 clipping, no training-loss log)
    steps: int | None = None
    momentum: float = 0.0
    modelmix_tau: tuple[tuple[float, float], ...] = ()
    modelmix_gap_rule: str = "exact"
    linf_p: int | None = None
    train_eval_size: int = 0
    # paper 002 (issue 22): the authors' ScatterNet settings as named modes; the defaults are the runs above
    # (GroupNorm on the features, no evaluation of ModelMix's previous iterate); see _check_paper002
    normalization: str = "groupnorm"
    bn_noise_multiplier: float = 0.0
    eval_previous: bool = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.dataset, str) or not self.dataset:
            raise ValueError(f"dataset must be a non-empty str, got {self.dataset!r}")
        check_choice("model", self.model, tuple(MODELS))
        check_choice("sampling", self.sampling, SAMPLINGS)
        check_choice("clipping", self.clipping, CLIPPINGS)
        check_choice("noise_convention", self.noise_convention, NOISE_CONVENTIONS)
        check_choice("lr_rule", self.lr_rule, LR_RULES)
        check_choice("eval_split", self.eval_split, EVAL_SPLITS)
        check_choice("engine", self.engine, ENGINES)
        check_choice("profile", self.profile, PROFILES)
        check_choice("device", self.device, DEVICES)
        set_(self, "batch_size", check_positive_int("batch_size", self.batch_size))
        set_(self, "epochs", check_positive_int("epochs", self.epochs))
        set_(self, "lr", check_positive("lr", self.lr))
        set_(self, "lr_decay", check_range("lr_decay", self.lr_decay, 0.0, 1.0))
        if self.lr_decay == 0.0:
            raise ValueError("lr_decay must be in (0, 1], got 0.0")
        if self.lr_rule == "constant" and self.lr_decay != 1.0:
            raise ValueError(f"lr_decay must be 1.0 with lr_rule='constant', got {self.lr_decay}")
        set_(self, "noise_multiplier", check_nonnegative("noise_multiplier", self.noise_multiplier))
        if self.clipping == "none":
            if self.clip_norm is not None:
                raise ValueError(
                    f"clip_norm must be None for a non-private run (clipping='none'), got {self.clip_norm}"
                )
            if self.noise_multiplier != 0.0:
                raise ValueError(f"noise_multiplier must be 0 for clipping='none', got {self.noise_multiplier}")
        else:
            if self.clip_norm is None:
                raise ValueError(f"clip_norm must be a number in (0, inf) for clipping={self.clipping!r}, got None")
            set_(self, "clip_norm", check_positive("clip_norm", self.clip_norm))
        if self.clipping == "mixed":
            if self.group_size is None:
                raise ValueError("group_size must be given (s, samples per clipped group) for clipping='mixed'")
            set_(self, "group_size", check_positive_int("group_size", self.group_size))
            if self.batch_size % self.group_size or self.batch_size == self.group_size:
                raise ValueError(
                    f"group_size must divide batch_size={self.batch_size} into m >= 2 groups, got {self.group_size}"
                )
        elif self.group_size is not None:
            raise ValueError(f"group_size must be None unless clipping='mixed', got {self.group_size}")
        set_(self, "model_kwargs", _frozen_kwargs("model_kwargs", self.model_kwargs))
        if self.train_size is not None:
            set_(self, "train_size", check_positive_int("train_size", self.train_size))
        set_(self, "validation_size", check_positive_int("validation_size", self.validation_size, minimum=0))
        if self.test_size is not None:
            set_(self, "test_size", check_positive_int("test_size", self.test_size))
        if self.eval_split == "validation" and self.validation_size == 0:
            raise ValueError("validation_size must be >= 1 when eval_split='validation'")
        if self.train_size is not None and self.validation_size >= self.train_size:
            raise ValueError(
                f"validation_size must be < train_size={self.train_size} (it is carved from it), "
                f"got {self.validation_size}"
            )
        if self.train_size is not None and self.batch_size > self.train_size - self.validation_size:
            raise ValueError(
                f"batch_size must be <= the {self.train_size - self.validation_size} training examples, "
                f"got {self.batch_size}"
            )
        for name in ("data_seed", "seed"):
            set_(self, name, check_positive_int(name, getattr(self, name), minimum=0))
        if self.max_physical_batch is not None:
            set_(self, "max_physical_batch", check_positive_int("max_physical_batch", self.max_physical_batch))
        _check_p000(self)
        _check_p003(self)
        self._check_paper002()

    def _check_paper002(self) -> None:
        """Validate the paper-002 fields (see the class docstring)."""
        set_ = object.__setattr__
        if self.steps is not None:
            set_(self, "steps", check_positive_int("steps", self.steps))
            if self.epochs > self.steps:
                raise ValueError(
                    f"epochs must be <= steps={self.steps} when steps is given (it is then the number of "
                    f"evaluations), got {self.epochs}"
                )
        set_(self, "momentum", check_range("momentum", self.momentum, 0.0, 1.0))
        if self.momentum == 1.0:
            raise ValueError("momentum must be in [0, 1), got 1.0")
        check_choice("modelmix_gap_rule", self.modelmix_gap_rule, GAP_RULES)
        phases = _tau_phases(self.modelmix_tau)
        set_(self, "modelmix_tau", phases)
        if not phases and self.modelmix_gap_rule != "exact":
            raise ValueError(f"modelmix_gap_rule must be 'exact' without modelmix_tau, got {self.modelmix_gap_rule!r}")
        if self.linf_p is not None:
            set_(self, "linf_p", check_positive_int("linf_p", self.linf_p))
            if not self.private:
                raise ValueError(f"linf_p needs a private run (clipping != 'none'), got linf_p={self.linf_p}")
        set_(self, "train_eval_size", check_positive_int("train_eval_size", self.train_eval_size, minimum=0))
        if self.train_size is not None and self.train_eval_size > self.train_size - self.validation_size:
            raise ValueError(
                f"train_eval_size must be <= the {self.train_size - self.validation_size} training examples, "
                f"got {self.train_eval_size}"
            )
        self._check_paper002_modes()

    def _check_paper002_modes(self) -> None:
        """Validate the issue-22 modes: ``normalization`` ("groupnorm"; "private_bn" = Tramèr-Boneh's private data
        normalisation, :mod:`dpcore.training.private_norm`, with σ = ``bn_noise_multiplier`` > 0, only for
        ``model="scatter_cnn"`` with ``model_kwargs`` norm="standardize", and the other way round) and
        ``eval_previous`` (a ModelMix run only)."""
        check_choice("normalization", self.normalization, NORMALIZATIONS)
        sigma_bn = check_nonnegative("bn_noise_multiplier", self.bn_noise_multiplier)
        object.__setattr__(self, "bn_noise_multiplier", sigma_bn)
        standardize = self.model in SCATTER_MODELS and dict(self.model_kwargs).get("norm") == "standardize"
        if self.normalization == "private_bn":
            if self.bn_noise_multiplier == 0.0:
                raise ValueError("bn_noise_multiplier must be in (0, inf) with normalization='private_bn', got 0.0")
            if not standardize:
                raise ValueError(f"normalization='private_bn' needs a model in {SCATTER_MODELS} with model_kwargs "
                                 "norm='standardize'")  # fmt: skip
        else:
            if self.bn_noise_multiplier != 0.0:
                raise ValueError(f"bn_noise_multiplier must be 0 unless normalization='private_bn', "
                                 f"got {self.bn_noise_multiplier}")  # fmt: skip
            if standardize:
                raise ValueError("model_kwargs norm='standardize' needs normalization='private_bn' (its statistics "
                                 "are released by that mechanism)")  # fmt: skip
        if not isinstance(self.eval_previous, bool):
            raise ValueError(f"eval_previous must be True or False, got {self.eval_previous!r}")
        if self.eval_previous and not self.modelmix_tau:
            raise ValueError("eval_previous=True needs a ModelMix run (modelmix_tau): only ModelMix keeps w_{k-1}")

    # ---- derived ------------------------------------------------------------------------
    @property
    def private(self) -> bool:
        return self.clipping != "none"

    @property
    def s(self) -> int:
        """Samples per clipped group (paper 003's s)."""
        if self.clipping == "individual":
            return 1
        if self.clipping == "mixed":
            assert self.group_size is not None
            return self.group_size
        return self.batch_size

    @property
    def m(self) -> int:
        """Clipped groups per round (paper 003's m)."""
        return self.batch_size // self.s

    @property
    def eval_every(self) -> int | None:
        """Rounds between evaluations when ``steps`` is given (``epochs`` evaluations), else ``None`` (every epoch)."""
        return None if self.steps is None else math.ceil(self.steps / self.epochs)

    def train_config(self) -> TrainConfig:
        """The :class:`~dpcore.training.TrainConfig` of this run (the trainer's view)."""
        if self.clients != 1 or self.evals_per_epoch != 1:
            raise ValueError(
                "the single-client trainer runs clients=1 with one evaluation per epoch; clients > 1 or "
                "evals_per_epoch > 1 need an experiment with the asynchronous trainer (dpcore.experiments.asynchronous)"
            )
        if self.lr_beta > 0:
            lr: Any = {"kind": "inverse_time", "lr0": self.lr, "beta": self.lr_beta, "power": self.lr_power}
        elif self.lr_rule == "constant":
            lr = self.lr
        else:
            metric = f"{self.eval_split}_accuracy"
            kind = "decay_on_metric_drop" if self.lr_rule == "decay_on_drop" else "decay_on_no_improvement"
            lr = {"kind": kind, "lr0": self.lr, "factor": self.lr_decay, "metric": metric}
        mix = None
        if self.modelmix_tau:
            mix = ModelMixConfig(tau_ratio=[tuple(p) for p in self.modelmix_tau], gap_rule=self.modelmix_gap_rule)
        return TrainConfig(
            sampling=self.sampling,
            batch_size=self.batch_size,
            epochs=None if self.steps is not None else self.epochs,
            steps=self.steps,
            eval_every=self.eval_every,
            clip_norm_type="l2" if self.linf_p is None else "l2_linf",
            linf_p=self.linf_p,
            modelmix=mix,
            optimizer_kwargs={"momentum": self.momentum} if self.momentum else {},
            clipping=self.clipping,
            clip_norm=1.0 if self.clip_norm is None else self.clip_norm,
            group_size=self.group_size,
            noise_multiplier=self.noise_multiplier,
            noise_convention=self.noise_convention,
            reduce="mean",
            lr=lr,
            optimizer="sgd",
            engine=self.engine,
            max_physical_batch=self.max_physical_batch,
            seed=self.seed,
            device=self.device,
            clip_scope=self.clip_scope,
            noise_placement=self.noise_placement,
        )

    # ---- (de)serialisation ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["model_kwargs"] = dict(self.model_kwargs)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"RunConfig has no field(s) {', '.join(unknown)}")
        return cls(**dict(data))

    def with_(self, **changes: Any) -> RunConfig:
        """A copy with ``changes`` applied (validated again)."""
        return replace(self, **changes)


#: paper 002 (issue 22): input normalisation of the ScatterNet CNN: its GroupNorm, or Tramèr-Boneh's private data
#: normalisation (noisy per-channel mean and variance, :mod:`dpcore.training.private_norm`)
NORMALIZATIONS = ("groupnorm", "private_bn")
#: the models on ScatterNet features that take released input statistics (``norm="standardize"``)
SCATTER_MODELS = ("scatter_cnn", "scatter_linear")

#: paper 000 (issue 13): how n clients get their data: "replicate" (each client holds the whole training set,
#: i.i.d. copies; the paper's N_c is the full set) or "split" (disjoint seeded shards of N/n examples)
CLIENT_DATA = ("replicate", "split")

#: paper 000 (issue 21): a client's step η̄·U ("sum") or η̄·U/s_i ("mean"; U/s_i is the sum over the expected
#: batch size s_i = q·N, as Opacus averages Poisson batches).  Post-processing of U: ε is the same.
STEP_SCALINGS = ("sum", "mean")


def _check_p000(cfg: RunConfig) -> None:
    """Validate the paper 000 fields of ``cfg`` (issue 13); the defaults are today's single-client run."""
    set_ = object.__setattr__
    set_(cfg, "clients", check_positive_int("clients", cfg.clients))
    check_choice("client_data", cfg.client_data, CLIENT_DATA)
    set_(cfg, "delay_prob", check_range("delay_prob", cfg.delay_prob, 0.0, 1.0))
    set_(cfg, "lr_beta", check_nonnegative("lr_beta", cfg.lr_beta))
    set_(cfg, "lr_power", check_range("lr_power", cfg.lr_power, 0.0, 1.0))
    set_(cfg, "evals_per_epoch", check_positive_int("evals_per_epoch", cfg.evals_per_epoch))
    check_choice("step_scaling", cfg.step_scaling, STEP_SCALINGS)
    if cfg.step_scaling != "sum" and cfg.clients == 1:
        raise ValueError(f"step_scaling={cfg.step_scaling!r} is for the asynchronous trainer (clients > 1); "
                         "the single-client trainer always averages (reduce='mean')")  # fmt: skip
    if cfg.lr_beta > 0 and cfg.lr_rule != "constant":
        raise ValueError(f"lr_beta > 0 (inverse-time step size) needs lr_rule='constant', got {cfg.lr_rule!r}")
    if cfg.client_data == "split" and cfg.train_size is not None and cfg.train_size - cfg.validation_size < cfg.clients:
        raise ValueError(f"client_data='split' needs at least clients={cfg.clients} training examples")


def _check_p003(cfg: RunConfig) -> None:
    """Validate the paper-003 modes of ``cfg`` (issue 21): ``clip_scope`` (whole vector or per parameter tensor,
    :data:`dpcore.training.persample.PARAMETER_CLIP_SCOPES`) and ``noise_placement`` (Algorithm 1 or another
    mechanism, :data:`dpcore.training.config.NOISE_PLACEMENTS`; a former spelling is read as its new name).  Which of
    the authors' code versions (commit, file, line) ran each mode is in
    :data:`dpcore.papers.p003_shuffling.training.MODES`; its run record reports the clip norm and σ of the mechanism
    that ran (C·√k for k tensors; σ/m, σ/(2|S_b|) for the placements that shrink the noise), so the accountants'
    ε is that of the noise that reached the clipped sum, never the nominal σ's."""
    check_choice("clip_scope", cfg.clip_scope, PARAMETER_CLIP_SCOPES)
    object.__setattr__(cfg, "noise_placement", noise_placement_name(cfg.noise_placement))  # a former spelling read
    check_choice("noise_placement", cfg.noise_placement, NOISE_PLACEMENTS)
    if cfg.clip_scope == "global" and cfg.noise_placement == "algorithm1":
        return
    mode = f"clip_scope={cfg.clip_scope!r}, noise_placement={cfg.noise_placement!r}"
    if not cfg.private:
        raise ValueError(f"{mode} are modes of a private run, got clipping='none'")
    if cfg.clients != 1 or cfg.modelmix_tau or cfg.linf_p is not None:
        raise ValueError(f"{mode} are modes of the single-client trainer without ModelMix or linf_p")
    if cfg.noise_placement == "algorithm1":
        return
    if cfg.sampling not in AUTHORS_SAMPLINGS:
        raise ValueError(f"noise_placement={cfg.noise_placement!r} needs sampling in {AUTHORS_SAMPLINGS}, "
                         f"got {cfg.sampling!r}")  # fmt: skip
    if cfg.noise_placement == "clipped_mean_noise_over_batch" and cfg.clipping != "batch":
        raise ValueError(f"noise_placement='clipped_mean_noise_over_batch' is for clipping='batch', "
                         f"got {cfg.clipping!r}")  # fmt: skip


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, ASCII, no NaN/inf: one text per value."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def config_hash(config: RunConfig) -> str:
    """First 16 hex digits of the SHA-256 of the canonical JSON of ``config``'s fields.

    Fields at their default value are left out (required fields are always in), so that a field added
    later with a default does not rename the results of runs that never set it.  The hash is that of the canonical
    form: a renamed value counts in its former spelling (``noise_placement``:
    :func:`dpcore.training.config.stable_noise_placement`), so that results written before the rename keep their
    file names.
    """
    if not isinstance(config, RunConfig):
        raise ValueError(f"config must be a RunConfig, got {type(config).__name__}")
    kept = {k: v for k, v in config.to_dict().items() if k not in _DEFAULTS or canonical_json(v) != _DEFAULTS[k]}
    if "noise_placement" in kept:
        kept["noise_placement"] = stable_noise_placement(kept["noise_placement"])
    return hashlib.sha256(canonical_json(kept).encode()).hexdigest()[:16]


#: canonical JSON of each defaulted field's default, in the form ``to_dict`` writes it
_DEFAULTS = {
    f.name: canonical_json(dict(f.default) if f.name == "model_kwargs" else f.default)
    for f in fields(RunConfig)
    if f.default is not MISSING
}
