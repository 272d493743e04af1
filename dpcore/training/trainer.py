"""The DP training loop: one trainer for Algorithm 1 of paper 003 (and so DP-SGD, ModelMix, Proactive DP).

Per round k (see :mod:`dpcore.training.config` for the update rule):

1. the round's indices from the :class:`~dpcore.training.sampling.BatchPlan` (Poisson, shuffling or
   fixed-size sampling; constant or scheduled sizes);
2. U = Σ_h [a_h]_C + N(0, (κCσ)² I) from :func:`~dpcore.training.persample.clipped_group_sum`
   and a noise generator seeded by (seed, k) on the model's device;
3. optionally ModelMix (paper 002, Algorithm 1): mix the last two iterates with τ_k = ρ_k η_k;
4. the optimiser step with gradient U/D at the schedule's learning rate η_k.

Everything random is seeded per round, so a run is deterministic on the CPU and a run resumed from a
checkpoint finishes with exactly the parameters of an uninterrupted run.  Checkpoints are plain
dicts of tensors and numbers written atomically and loaded with ``torch.load(weights_only=True)``.
The same code runs on CUDA when it is available (``device="auto"``).

Every run returns a :class:`~dpcore.accounting.run_record.RunRecord` (sampling, clipping, σ, C, batch
sizes, steps, epochs, dataset size, noise convention, …) from which
:func:`dpcore.accounting.records.epsilon_for_record` picks the matching accountant.

What nothing accounts for is refused: a private run's model may not mix samples (BatchNorm in training
mode, any module with running statistics updated from the private batch; use GroupNorm), a model needs
trainable parameters, and a non-finite loss or update stops the run with :class:`NonFiniteError` naming
the step (such a run has no record).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from dpcore.accounting.events import epochs_to_steps, groups_per_round
from dpcore.accounting.run_record import RunRecord
from dpcore.paths import atomic_path
from dpcore.training.config import TrainConfig, stable_noise_placement
from dpcore.training.integrity import (
    as_tensor,
    check_labels,
    check_state,
    check_training_data,
    data_fingerprint,
    field_defaults,
    model_fingerprint,
    read_checkpoint,
    resume_from,
)
from dpcore.training.modelmix import mix
from dpcore.training.persample import GroupClipResult, LossFn, clipped_group_sum
from dpcore.training.sampling import BatchPlan, make_generator, seeded_default_rng
from dpcore.training.schedules import LRSchedule, schedule_from_dict

__all__ = [
    "LOSSES",
    "make_loss",
    "resolve_device",
    "Privatizer",
    "Trainer",
    "TrainResult",
    "train",
    "make_classification_eval",
    "build_record",
    "check_model",
    "NonFiniteError",
    "CHECKPOINT_FORMAT",
]

CHECKPOINT_FORMAT = 1


def _ce(out: Tensor, y: Tensor) -> Tensor:
    return nn.functional.cross_entropy(out, y, reduction="none")


def _bce(out: Tensor, y: Tensor) -> Tensor:
    return nn.functional.binary_cross_entropy_with_logits(out.reshape(y.shape), y.to(out.dtype), reduction="none")


def _mse(out: Tensor, y: Tensor) -> Tensor:
    return 0.5 * (out.reshape(y.shape) - y.to(out.dtype)).pow(2)


#: per-sample losses by name: softmax regression / CNNs, logistic regression (labels in {0, 1}), linear regression
LOSSES: dict[str, LossFn] = {"cross_entropy": _ce, "bce": _bce, "mse": _mse}


def make_loss(loss: str | LossFn) -> LossFn:
    """A per-sample loss ``(output, target) -> (n,)`` from a name in :data:`LOSSES` or a callable."""
    if callable(loss):
        return loss
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(map(repr, LOSSES))} or a callable; got {loss!r}")
    return LOSSES[loss]


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"``: CUDA when available, else the CPU."""
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def _make_optimizer(config: TrainConfig, params: list[nn.Parameter], lr: float) -> torch.optim.Optimizer:
    kwargs = dict(config.optimizer_kwargs)
    if callable(config.optimizer):
        return config.optimizer(params, **kwargs)
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[config.optimizer]
    return cls(params, lr=lr, **kwargs)


class NonFiniteError(FloatingPointError):
    """A step produced a non-finite update or parameter; the run is stopped and has no record."""


_RUNNING_STATS = ("running_mean", "running_var", "num_batches_tracked")


def check_model(model: nn.Module, *, private: bool) -> None:
    """Refuse what the privacy analysis does not cover (``ValueError`` naming the module).

    DP-SGD's per-example sensitivity assumes each example's gradient depends on that example only.
    Batch normalisation in training mode mixes the examples of a batch, and a layer with running
    statistics releases a function of the private batch through its buffers: both are refused for private
    runs (Opacus's ModuleValidator does the same); GroupNorm/LayerNorm are per-example.  A model without
    trainable parameters is refused for every run.
    """
    if not isinstance(model, nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError("model has no trainable parameters (every parameter has requires_grad=False)")
    if not private:
        return
    for name, module in model.named_modules():
        label = name or type(model).__name__
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            raise ValueError(
                f"module {label!r} ({type(module).__name__}) mixes the examples of a batch and keeps running "
                "statistics of private data; a private run cannot account for it: use nn.GroupNorm instead"
            )
        stats = [b for b, _ in module.named_buffers(recurse=False) if b in _RUNNING_STATS]
        if stats or getattr(module, "track_running_stats", False):
            raise ValueError(
                f"module {label!r} ({type(module).__name__}) keeps running statistics "
                f"({', '.join(stats) or 'tracked'}) updated from private data; a private run cannot account for "
                "them: use nn.GroupNorm or disable them"
            )


def _secure_seed() -> int:
    """A 63-bit seed from the operating system's CSPRNG."""
    return int.from_bytes(os.urandom(8), "little") >> 1


class Privatizer:
    """The private part of a round: (x, y) ↦ U/D (a list of tensors shaped like the trainable parameters)."""

    def __init__(self, model: nn.Module, loss_fn: LossFn, config: TrainConfig, device: torch.device) -> None:
        self.model = model
        self.loss_fn = loss_fn
        self.config = config
        self.device = device
        self.params = [p for p in model.parameters() if p.requires_grad]
        self._numel = sum(p.numel() for p in self.params)
        self.engine_used: set[str] = set()
        self.clipped = torch.zeros((), dtype=torch.float64)
        self.groups = 0

    def denominator(self, planned_size: int) -> float:
        """D: expected number of groups for ``reduce="mean"``, 1 for ``"sum"`` and for the authors' noise
        placements, which do not divide the clipped statistic (:data:`dpcore.training.config.NOISE_PLACEMENTS`)."""
        c = self.config
        if c.reduce == "sum" or c.noise_placement != "algorithm1":
            return 1.0
        if c.clipping == "none":
            return float(planned_size)
        return float(groups_per_round(c.clipping, planned_size, c.group_size))  # events.py's group-count rule

    def noise(self, step: int) -> list[Tensor]:
        """N(0, (κCσ)² I) of round ``step``, from a generator seeded by (seed, step) on the device, or with
        ``secure_rng`` by a fresh seed from ``os.urandom`` at every step (not reproducible, not recorded)."""
        std = self.config.noise_std
        if self.config.secure_rng:
            gen = torch.Generator(device=self.device)
            gen.manual_seed(_secure_seed())
        else:
            gen = make_generator(self.config.seed, "noise", step, device=self.device)
        flat = torch.randn(self._numel, generator=gen, device=self.device, dtype=self.params[0].dtype).mul_(std)
        return [t.view_as(p) for t, p in zip(flat.split([p.numel() for p in self.params]), self.params, strict=True)]

    def clipped_sum(self, x: Tensor, y: Tensor) -> GroupClipResult:
        """U = Σ_h [a_h]_C of the batch (x, y) by the configured engine (:func:`clipped_group_sum`; paper 003,
        Algorithm 1 line 21); :mod:`dpcore.training.stacked` supplies it for several runs computed at once."""
        c = self.config
        return clipped_group_sum(
            self.model,
            self.loss_fn,
            x,
            y,
            group_size=c.clip_group_size(x.shape[0]),
            clip_norm=c.clip_norm,
            linf_p=c.linf_p,
            engine=c.engine,
            max_physical_batch=c.max_physical_batch,
            clip_scope=c.clip_scope,
        )

    def gradient(self, x: Tensor, y: Tensor, step: int, planned_size: int) -> list[Tensor]:
        c = self.config
        denom = self.denominator(planned_size)
        if not c.private:
            total = None
            chunk = c.max_physical_batch or max(x.shape[0], 1)
            for start in range(0, x.shape[0], chunk):
                loss = self.loss_fn(self.model(x[start : start + chunk]), y[start : start + chunk]).sum() / denom
                gs = torch.autograd.grad(loss, self.params, allow_unused=True)
                gs = [torch.zeros_like(p) if g is None else g for g, p in zip(gs, self.params, strict=True)]
                total = gs if total is None else [a + b for a, b in zip(total, gs, strict=True)]
            self.engine_used.add("nonprivate")
            return total if total is not None else [torch.zeros_like(p) for p in self.params]
        result = self.clipped_sum(x, y)
        self.engine_used.add(result.engine)
        if not math.isinf(c.clip_norm) and result.n_groups:
            self.clipped = self.clipped.to(result.norms.device) + (result.norms > c.clip_norm).sum()
        self.groups += result.n_groups
        u = list(result.clipped_sum)
        if c.noise_multiplier > 0:
            noise = self.noise(step)
            if c.noise_placement != "algorithm1":  # the authors' placements rescale it (TrainConfig.round_noise_std)
                torch._foreach_mul_(noise, c.round_noise_std(planned_size) / c.noise_std)
            torch._foreach_add_(u, noise)
        if denom != 1.0:
            torch._foreach_div_(u, denom)
        return u


@dataclass
class TrainResult:
    """What :func:`train` returns: the trained model, its per-evaluation history and the run record."""

    model: nn.Module
    history: list[dict[str, float]]
    record: RunRecord


def make_classification_eval(
    x: Tensor, y: Tensor, *, prefix: str = "test", batch: int = 2048, loss: str | LossFn = "cross_entropy"
) -> Callable[[nn.Module], dict[str, float]]:
    """An ``eval_fn`` returning ``{prefix_accuracy, prefix_loss}`` on (x, y) (argmax, or logit > 0 for one output).

    x and y may be numpy arrays; labels are checked against the loss (and, for cross-entropy, the model's number of
    outputs) as the training labels are (:func:`dpcore.training.integrity.check_labels`).
    """
    loss_fn = make_loss(loss)
    x, y = as_tensor("x", x), as_tensor("y", y)
    if x.dim() == 0 or y.dim() == 0 or x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError(f"x and y must have the same non-zero number of rows, got {tuple(x.shape)}, {tuple(y.shape)}")

    def evaluate(model: nn.Module) -> dict[str, float]:
        device = next(model.parameters()).device
        correct, total_loss = 0.0, 0.0
        for start in range(0, x.shape[0], batch):
            xb = x[start : start + batch].to(device)
            out = model(xb)
            yb = check_labels("y", y[start : start + batch].to(device), loss, out)
            total_loss += float(loss_fn(out, yb).sum())
            pred = out.argmax(1) if out.dim() > 1 and out.shape[1] > 1 else (out.reshape(-1) > 0).to(yb.dtype)
            correct += float((pred == yb).sum())
        return {f"{prefix}_accuracy": correct / x.shape[0], f"{prefix}_loss": total_loss / x.shape[0]}

    return evaluate


def build_record(
    config: TrainConfig,
    plan: BatchPlan,
    *,
    steps: int,
    samples: float,
    total_steps: int,
    optimizer: torch.optim.Optimizer | None,
    schedule: LRSchedule,
    engines: set[str],
    device: torch.device,
    dtype: torch.dtype | None,
    async_info: dict | None = None,
    tensors: int | None = None,
) -> RunRecord:
    """The run record: every quantity an accountant needs, plus how the run was executed.

    Clipping, clip norm, σ and noise std are those of the mechanism that ran
    (:meth:`~dpcore.training.config.TrainConfig.accounted`; ``tensors``, the number of trainable parameter
    tensors, is needed for per-tensor clipping), so that ε follows the noise that reached the clipped sum.
    """
    c = config
    sizes = c.batch_size if isinstance(c.batch_size, int) else list(c.batch_size)
    constant = isinstance(sizes, int)
    mean_size = sizes if constant else (sum(sizes[:steps]) / steps if steps else sizes[0])
    mech = c.accounted(sizes if constant else max(1, round(mean_size)), tensors=tensors)
    groups = None if mech.clipping == "none" else groups_per_round(mech.clipping, mean_size, mech.group_size)
    opt: dict[str, Any] = {"name": c.as_dict()["optimizer"]}
    if optimizer is not None:
        opt.update({k: v for k, v in optimizer.defaults.items() if isinstance(v, (int, float, bool, str))})
    return RunRecord(
        private=c.private,
        sampling=c.sampling,
        dataset_size=plan.dataset_size,
        batch_size=sizes if constant else tuple(sizes),
        steps=steps,
        planned_steps=total_steps,
        epochs=samples / plan.dataset_size,
        clipping=mech.clipping,
        group_size=1 if mech.clipping == "individual" else mech.group_size,
        groups_per_round=groups,
        clip_norm=mech.clip_norm,
        clip_norm_type=c.clip_norm_type,
        linf_p=c.linf_p,
        noise_multiplier=mech.noise_multiplier,
        noise_convention=c.noise_convention,
        noise_std=mech.noise_std,
        reduce=c.reduce,
        optimizer=opt,
        lr_schedule=schedule.describe(),
        modelmix=None if c.modelmix is None else c.modelmix.describe(total_steps),
        async_=async_info,
        engine=tuple(sorted(engines)),
        max_physical_batch=c.max_physical_batch,
        seed=None if c.secure_rng else c.seed,
        secure_rng=c.secure_rng,
        device=str(device),
        dtype=None if dtype is None else str(dtype),
        data=c.data,
    )


def _atomic_save(obj: Any, path: Path) -> None:
    with atomic_path(path) as tmp:  # dpcore.paths' one atomic write: temporary file beside ``path``, then rename
        torch.save(obj, tmp)


class Trainer:
    """Step-level control of one run; :func:`train` is the one-call wrapper.

    ``data`` is ``(X, y)`` (moved to the device once).  ``eval_fn(model) -> dict`` is called at the
    end of every epoch (or every ``config.eval_every`` rounds) and at the end.  ``checkpoint``: a path
    written every ``checkpoint_every`` rounds (default: each evaluation); with ``resume=True`` an
    existing checkpoint there is loaded first.  ``on_step(trainer)`` is called after every round.
    """

    def __init__(
        self,
        model: nn.Module,
        data: tuple[Tensor, Tensor],
        config: TrainConfig,
        *,
        loss: str | LossFn = "cross_entropy",
        eval_fn: Callable[[nn.Module], dict[str, float]] | None = None,
        checkpoint: str | os.PathLike | None = None,
        checkpoint_every: int | None = None,
        resume: bool = False,
        on_step: Callable[[Trainer], None] | None = None,
    ) -> None:
        if not isinstance(config, TrainConfig):
            raise ValueError("config must be a TrainConfig")
        check_model(model, private=config.private)
        self.loss_fn = make_loss(loss)
        self.config = config
        self.device = resolve_device(config.device)
        self.model = model.to(self.device)
        x, y = check_training_data(self.model, data, loss, name="data", device=self.device)  # labels, numpy
        self.model.train()
        self.x, self.y = x.to(self.device), y.to(self.device)
        self.eval_fn = eval_fn
        self.on_step = on_step
        self.plan = BatchPlan(config.sampling, x.shape[0], config.batch_size, seed=config.seed)
        if config.clipping == "mixed" and config.sampling != "poisson":
            sizes = [config.batch_size] if isinstance(config.batch_size, int) else list(config.batch_size)
            assert config.group_size is not None
            if any(s % config.group_size for s in sizes):
                raise ValueError(
                    f"mixed clipping with {config.sampling!r} sampling needs batch sizes that are multiples of "
                    f"group_size={config.group_size}"
                )
        if self.plan.scheduled:
            self.total_steps = len(self.plan.batch_sizes)  # type: ignore[arg-type]
        elif config.steps is not None:
            self.total_steps = config.steps
        else:
            assert config.epochs is not None
            self.total_steps = epochs_to_steps(config.epochs, self.plan.steps_per_epoch())
        self.schedule: LRSchedule = schedule_from_dict(config.lr)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = _make_optimizer(config, self.params, self.schedule.lr(0, 0.0))
        self.privatizer = Privatizer(self.model, self.loss_fn, config, self.device)
        self.step_index = 0
        self.samples = 0.0
        self.failed_at: int | None = None
        self.history: list[dict[str, float]] = []
        self.previous: list[Tensor] | None = (
            [p.detach().clone() for p in self.params] if config.modelmix is not None else None
        )
        self.checkpoint = Path(checkpoint) if checkpoint is not None else None
        self.checkpoint_every = checkpoint_every
        self._data_fingerprint: str | None = None  # computed on the first checkpoint (see fingerprints())
        if resume and self.checkpoint is not None and self.checkpoint.exists():
            self.load_checkpoint(self.checkpoint)

    # ---- one round ------------------------------------------------------------------------
    def step(self) -> None:
        """Run round ``self.step_index``."""
        if self.failed_at is not None:
            raise NonFiniteError(f"the run stopped at step {self.failed_at} with a non-finite update")
        if self.step_index >= self.total_steps:
            raise ValueError(f"the run is complete ({self.total_steps} rounds)")
        k = self.step_index
        cfg = self.config
        planned = self.plan.size(k)
        idx = self.plan.indices(k).to(self.device)
        lr = self.schedule.lr(k, self.samples)
        with seeded_default_rng(cfg.seed, "model", k, device=self.device):  # dropout etc.: per-round seed
            grads = self.privatizer.gradient(self.x[idx], self.y[idx], k, planned)
        if cfg.modelmix is not None:
            assert self.previous is not None
            rho = cfg.modelmix.ratio(k, self.total_steps)
            gen = make_generator(cfg.seed, "modelmix", k, device=self.device)
            with torch.no_grad():
                for i, p in enumerate(self.params):
                    current = p.detach().clone()
                    p.copy_(mix(current, self.previous[i], rho * lr, cfg.modelmix.gap_rule, gen))
                    self.previous[i] = current
        if not all(bool(torch.isfinite(g).all()) for g in grads):
            self.failed_at = k
            raise NonFiniteError(f"step {k}: the loss or the noisy update is not finite (NaN/inf); run stopped")
        for p, g in zip(self.params, grads, strict=True):
            p.grad = g.to(p.dtype)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        if not all(bool(torch.isfinite(p).all()) for p in self.params):
            self.failed_at = k
            raise NonFiniteError(f"step {k}: the parameters became non-finite after the update; run stopped")
        self.step_index += 1
        self.samples += planned
        if self._evaluate_now():
            self.evaluate()
            if self.checkpoint is not None and self.checkpoint_every is None:
                self.save_checkpoint(self.checkpoint)
        if self.checkpoint is not None and self.checkpoint_every and self.step_index % self.checkpoint_every == 0:
            self.save_checkpoint(self.checkpoint)
        if self.on_step is not None:
            self.on_step(self)

    def _evaluate_now(self) -> bool:
        k = self.step_index
        if k == self.total_steps:
            return True
        if self.config.eval_every is not None:
            return k % self.config.eval_every == 0
        return self.plan.epoch_of(k) != self.plan.epoch_of(k - 1)

    def evaluate(self) -> dict[str, float]:
        """Log (and return) the evaluation at the current round; feeds epoch-driven schedules."""
        entry: dict[str, float] = {
            "step": float(self.step_index),
            "epoch": self.samples / self.plan.dataset_size,
            "lr": float(self.schedule.lr(max(self.step_index - 1, 0), self.samples)),
        }
        if self.privatizer.groups:
            entry["clipped_fraction"] = float(self.privatizer.clipped) / self.privatizer.groups
        if self.eval_fn is not None:
            self.model.eval()
            with torch.no_grad():
                metrics = {k: float(v) for k, v in self.eval_fn(self.model).items()}
            self.model.train()
            entry.update(metrics)
            self.schedule.on_epoch_end(len(self.history), metrics)
        self.history.append(entry)
        return entry

    def run(self, until: int | None = None) -> TrainResult:
        """Run rounds until ``until`` (default: the end) and return the result so far."""
        stop = self.total_steps if until is None else min(until, self.total_steps)
        while self.step_index < stop:
            self.step()
        return TrainResult(self.model, list(self.history), self.record())

    # ---- record ---------------------------------------------------------------------------
    def record(self) -> RunRecord:
        """The :class:`RunRecord` that :mod:`dpcore.accounting.records` accounts for (refused after a
        non-finite step: such a run is never recorded as finished)."""
        if self.failed_at is not None:
            raise NonFiniteError(f"the run stopped at step {self.failed_at} with a non-finite update: no record")
        return build_record(
            self.config,
            self.plan,
            steps=self.step_index,
            samples=self.samples,
            total_steps=self.total_steps,
            optimizer=self.optimizer,
            schedule=self.schedule,
            engines=self.privatizer.engine_used,
            device=self.device,
            dtype=self.params[0].dtype if self.params else None,
            tensors=len(self.params),
        )

    # ---- checkpoints ----------------------------------------------------------------------
    def _fingerprint(self) -> str:
        d = self.config.as_dict()
        d.pop("device", None)
        if "noise_placement" in d:  # the spelling checkpoints were written with (issue 43 renamed the placements)
            d["noise_placement"] = stable_noise_placement(d["noise_placement"])
        return json.dumps(d, sort_keys=True, default=str)

    def fingerprints(self) -> dict[str, str]:
        """What a checkpoint of this run must continue: its training data and its model's structure (SHA-256, see
        :mod:`dpcore.training.integrity`; the data's is computed once, on first use)."""
        if self._data_fingerprint is None:
            self._data_fingerprint = data_fingerprint([(self.x, self.y)])
        return {"data": self._data_fingerprint, "model": model_fingerprint(self.model)}

    def state_dict(self) -> dict[str, Any]:
        return {
            "format": CHECKPOINT_FORMAT,
            "fingerprint": self._fingerprint(),
            **{f"{kind}_fingerprint": value for kind, value in self.fingerprints().items()},
            "step": self.step_index,
            "samples": self.samples,
            "model": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
            "schedule": self.schedule.state_dict(),
            "history": [dict(h) for h in self.history],
            "previous": None if self.previous is None else [t.detach().cpu() for t in self.previous],
            "clipped": self.privatizer.clipped.detach().cpu().clone(),
            "groups": self.privatizer.groups,
            "engine_used": sorted(self.privatizer.engine_used),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the run saved by :meth:`state_dict`; a state of another configuration, other training data or
        another model is refused (:class:`~dpcore.training.integrity.CheckpointError`), one without data and model
        fingerprints (written before they were recorded) is accepted with a warning."""
        check_state(state, fmt=CHECKPOINT_FORMAT, keys=_STATE_KEYS, fingerprint=self._fingerprint(),
                    defaults=field_defaults(TrainConfig), fingerprints=self.fingerprints())  # fmt: skip
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.schedule.load_state_dict(state["schedule"])
        self.step_index = int(state["step"])
        self.samples = float(state["samples"])
        self.history = [dict(h) for h in state["history"]]
        if state["previous"] is not None:
            self.previous = [t.to(self.device) for t in state["previous"]]
        self.privatizer.clipped = state["clipped"].clone()
        self.privatizer.groups = int(state["groups"])
        self.privatizer.engine_used = set(state["engine_used"])

    def save_checkpoint(self, path: str | os.PathLike) -> Path:
        """Write the full run state atomically."""
        path = Path(path)
        _atomic_save(self.state_dict(), path)
        return path

    def load_checkpoint(self, path: str | os.PathLike) -> None:
        """Load a checkpoint written by :meth:`save_checkpoint` (``weights_only=True``); an unreadable file or one of
        another run is a :class:`~dpcore.training.integrity.CheckpointError` naming ``path``."""
        remedy = f"delete {path} to train from scratch"
        resume_from(self, read_checkpoint(path, remedy=remedy), path, remedy)


#: entries every checkpoint of :class:`Trainer` holds (the data and model fingerprints are checked when present)
_STATE_KEYS = ("fingerprint", "step", "samples", "model", "optimizer", "schedule", "history", "previous", "clipped",
               "groups", "engine_used")  # fmt: skip


def train(
    model: nn.Module,
    data: tuple[Tensor, Tensor],
    config: TrainConfig,
    **kwargs: Any,
) -> TrainResult:
    """Train ``model`` on ``data`` with ``config``; keyword arguments as for :class:`Trainer`."""
    return Trainer(model, data, config, **kwargs).run()
