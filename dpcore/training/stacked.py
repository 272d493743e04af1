"""Many small runs at once: k independent runs of one grid trained as one stacked model (issue 44).

Paper 003 (van Dijk et al., "Generalizing DP-SGD with shuffling and batch clipping", Algorithm 1, App. H) tunes C
per cell and trains LeNet-5 on MNIST at small batches, where one step is a few tiny kernels: on a GPU one run
uses a sliver of the device.  :class:`StackedTrainer` drives k public :class:`~dpcore.training.Trainer` objects
(one per run, each with its own model, data, :class:`~dpcore.training.sampling.BatchPlan`, learning-rate rule,
evaluation, checkpoint hook and record) and replaces only the inner computation of Algorithm 1, line 21, the
clipped sum U_j = Σ_h [a_h]_{C_j} of every run j, by one batched computation over the runs: the k parameter sets
are stacked (``torch.func.stack_module_state`` layout) and the per-sample (or per-batch) gradients of all runs
come from ``torch.func.vmap`` over the runs of ``grad`` of ``functional_call``.

What stays each run's own, by construction (the public code path runs it):

* the round's indices (its plan, seeded by its seed; fixed-size subsampling "SS" or shuffling "SH");
* the clip norm C_j and the clipping map [a]_C = a / max{1, ‖a‖/C} (:func:`~dpcore.training.persample.clip_factors`);
* the noise N(0, (κC_jσ)² I) of line 22, drawn by the run's :meth:`~dpcore.training.trainer.Privatizer.noise`
  from the generator seeded by (seed_j, "noise", step), and the division by m of line 23;
* the SGD step, the step-size rule (paper 003 App. H's decay on a drop of the evaluated accuracy), evaluation,
  checkpoints (the trainer's ``on_step`` hook) and the run record, hence ε.

What differs from a run trained alone is floating-point rounding only: the batched kernels sum in another order
than the single-run engines (the per-layer engine's ghost norms for individual clipping), so per-sample norms and
clip factors agree to about 1e-6 relative, not bit for bit, and parameters drift apart at that scale (the tests
check noise and batches bit for bit, clip decisions exactly, factors and parameters to a tolerance).  The record's
``engine`` says ``"stacked"``.

Scope (anything else is refused with a ``ValueError`` naming the parameter): private runs with individual or batch
clipping, a constant batch size equal across the stack, fixed-size subsampling or shuffling, Algorithm 1's noise
placement and global clip scope, ℓ2 clipping, plain SGD without momentum, a constant or decay-on-drop step size,
no ModelMix, no secure RNG, ``reduce="mean"``, one device, and one model structure without buffers.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor
from torch.func import functional_call, grad, vmap

from dpcore.training.integrity import model_fingerprint
from dpcore.training.persample import GroupClipResult
from dpcore.training.sampling import BatchPlan
from dpcore.training.trainer import NonFiniteError, Privatizer, Trainer

__all__ = ["STACKED_ENGINE", "STACK_CLIPPINGS", "STACK_SAMPLINGS", "RunBatch", "check_stackable", "StackedTrainer",
           "stacked_clipped_sums"]  # fmt: skip

#: the engine name the run records of stacked runs carry
STACKED_ENGINE = "stacked"
#: clippings a stack trains (paper 003's IC and BC; mixed clipping runs one backward per group, not stacked)
STACK_CLIPPINGS = ("individual", "batch")
#: paper 003's samplers: SS (a fixed-size uniform subset per round) and SH (a permutation per epoch)
STACK_SAMPLINGS = ("fixed", "shuffle")
#: step-size rules of a stack: constant, or paper 003 App. H's decay on a drop of the evaluated accuracy
STACK_LR_KINDS = ("constant", "decay_on_metric_drop")
#: default bound on (runs × samples) whose per-sample gradients are materialised at once
DEFAULT_MAX_STACKED_SAMPLES = 2048


def _lr_kind(lr: Any) -> str:
    if isinstance(lr, (int, float)) and not isinstance(lr, bool):
        return "constant"
    if isinstance(lr, dict):
        return str(lr.get("kind"))
    return str(lr.describe().get("kind")) if hasattr(lr, "describe") else type(lr).__name__


def check_stackable(trainers: Sequence[Trainer]) -> None:
    """Refuse (``ValueError`` naming the parameter) what a stack does not train bit-for-bit as a single run would.

    See the module docstring for the scope: paper 003's Table 3 grid (Algorithm 1 with individual or batch clipping,
    SS or SH, plain SGD with a constant or decay-on-drop step size).
    """
    if isinstance(trainers, Trainer) or not isinstance(trainers, Sequence) or not trainers:
        raise ValueError(f"trainers must be a non-empty sequence of Trainer, got {trainers!r}")
    if not all(isinstance(t, Trainer) for t in trainers):
        raise ValueError("trainers must all be dpcore.training.Trainer instances")
    if len({id(t) for t in trainers}) != len(trainers):
        raise ValueError("trainers must be distinct (a run appears twice in the stack)")
    first = trainers[0]
    structure = model_fingerprint(first.model)
    for i, tr in enumerate(trainers):
        c = tr.config
        where = f"trainers[{i}]"
        if c.clipping not in STACK_CLIPPINGS:
            raise ValueError(f"{where}: clipping must be one of {STACK_CLIPPINGS} in a stack, got {c.clipping!r}")
        if c.sampling not in STACK_SAMPLINGS:
            raise ValueError(f"{where}: sampling must be one of {STACK_SAMPLINGS} in a stack, got {c.sampling!r}")
        if not isinstance(c.batch_size, int):
            raise ValueError(f"{where}: batch_size must be a constant int in a stack, got a schedule")
        if c.batch_size != first.config.batch_size:
            raise ValueError(f"{where}: batch_size must be equal across the stack, got {c.batch_size} and "
                             f"{first.config.batch_size}")  # fmt: skip
        if c.noise_placement != "algorithm1" or c.clip_scope != "global":
            raise ValueError(f"{where}: noise_placement must be 'algorithm1' and clip_scope 'global' in a stack, got "
                             f"{c.noise_placement!r}, {c.clip_scope!r}")  # fmt: skip
        if c.clip_norm_type != "l2" or c.linf_p is not None:
            raise ValueError(f"{where}: clip_norm_type must be 'l2' (no linf_p) in a stack, got {c.clip_norm_type!r}")
        if not math.isfinite(c.clip_norm):
            raise ValueError(f"{where}: clip_norm must be finite in a stack, got {c.clip_norm}")
        if c.modelmix is not None:
            raise ValueError(f"{where}: modelmix must be None in a stack")
        if c.optimizer != "sgd" or c.optimizer_kwargs:
            raise ValueError(f"{where}: optimizer must be plain 'sgd' (no optimizer_kwargs) in a stack, got "
                             f"{c.optimizer!r} {dict(c.optimizer_kwargs)}")  # fmt: skip
        if _lr_kind(c.lr) not in STACK_LR_KINDS:
            raise ValueError(f"{where}: lr must be a number or one of {STACK_LR_KINDS} in a stack, got {c.lr!r}")
        if c.secure_rng:
            raise ValueError(f"{where}: secure_rng must be False in a stack")
        if c.reduce != "mean":
            raise ValueError(f"{where}: reduce must be 'mean' in a stack, got {c.reduce!r}")
        if tr.device != first.device:
            raise ValueError(f"{where}: device must be equal across the stack, got {tr.device} and {first.device}")
        if any(True for _ in tr.model.buffers()) or not all(p.requires_grad for p in tr.model.parameters()):
            raise ValueError(f"{where}: model must have no buffers and only trainable parameters in a stack")
        if model_fingerprint(tr.model) != structure:
            raise ValueError(f"{where}: model must have the structure of trainers[0]'s model in a stack")


@dataclass
class RunBatch:
    """One run's share of a stacked round: its batch and clip norm."""

    x: Tensor
    y: Tensor
    clip_norm: float
    individual: bool


def stacked_clipped_sums(
    template: torch.nn.Module,
    loss_fn: Any,
    params: dict[str, Tensor],
    batches: list[RunBatch],
    *,
    max_stacked_samples: int = DEFAULT_MAX_STACKED_SAMPLES,
) -> list[GroupClipResult]:
    """U_j = Σ_h [a_h]_{C_j} of every run j of a stack (paper 003, Algorithm 1 line 21), computed at once.

    ``params`` maps each parameter name of ``template`` to the runs' values stacked on a leading axis of k.
    A stack of batch-clipped runs takes one ``vmap`` over the runs of ``grad`` of the batch-mean loss; a stack with
    an individually clipped run materialises per-sample gradients (``vmap`` over the runs of ``vmap`` over the
    samples of ``grad``), ``max_stacked_samples // k`` samples per run at a time, and a batch-clipped run in it
    averages its per-sample gradients before its one clip.  Returns one
    :class:`~dpcore.training.persample.GroupClipResult` per run (norms before clipping; ``engine="stacked"``).
    """
    names = list(params)
    k = len(batches)
    n = batches[0].x.shape[0]
    dev = batches[0].x.device
    xs = torch.stack([b.x for b in batches])
    ys = torch.stack([b.y for b in batches])
    clip = torch.tensor([b.clip_norm for b in batches], device=dev, dtype=params[names[0]].dtype)
    individual = torch.tensor([b.individual for b in batches], device=dev)

    def batch_loss(prm: dict[str, Tensor], x: Tensor, y: Tensor) -> Tensor:
        return loss_fn(functional_call(template, prm, (x,)), y).sum() / n

    sums: dict[str, Tensor] = {name: torch.zeros_like(p) for name, p in params.items()}
    if not bool(individual.any()):  # batch clipping only: no per-sample gradients
        chunk = max(1, max_stacked_samples // k)
        for lo in range(0, n, chunk):
            g = vmap(grad(batch_loss))(params, xs[:, lo : lo + chunk], ys[:, lo : lo + chunk])
            for name in names:
                sums[name] += g[name]
        sample_norms = None
    else:

        def sample_loss(prm: dict[str, Tensor], x: Tensor, y: Tensor) -> Tensor:
            return loss_fn(functional_call(template, prm, (x.unsqueeze(0),)), y.unsqueeze(0)).mean()

        per_sample = vmap(vmap(grad(sample_loss), in_dims=(None, 0, 0)), in_dims=(0, 0, 0))
        chunk = max(1, max_stacked_samples // k)
        norms_list = []
        for lo in range(0, n, chunk):
            g = per_sample(params, xs[:, lo : lo + chunk], ys[:, lo : lo + chunk])
            b = g[names[0]].shape[1]
            sq = torch.zeros(k, b, dtype=clip.dtype, device=dev)
            for name in names:
                sq += torch.linalg.vector_norm(g[name].reshape(k, b, -1), dim=2).pow(2)
            norms = sq.sqrt()
            norms_list.append(norms)
            # individual: the clip factors of the samples; batch: 1/n (the batch mean, clipped below)
            w = torch.where(individual[:, None], _factors(norms, clip), torch.full_like(norms, 1.0 / n))
            for name in names:
                sums[name] += torch.einsum("kb,kb...->k...", w, g[name])
        sample_norms = torch.cat(norms_list, dim=1)
    # batch-clipped runs: one clip of the batch-mean gradient
    total_sq = torch.zeros(k, dtype=clip.dtype, device=dev)
    for name in names:
        total_sq += torch.linalg.vector_norm(sums[name].reshape(k, -1), dim=1).pow(2)
    batch_norms = total_sq.sqrt()
    scale = torch.where(individual, torch.ones_like(batch_norms), _factors(batch_norms, clip))
    out = []
    for j in range(k):
        if batches[j].individual:
            assert sample_norms is not None
            u = [sums[name][j] for name in names]
            out.append(GroupClipResult(u, sample_norms[j].detach(), n, STACKED_ENGINE))
        else:
            u = [sums[name][j] * scale[j] for name in names]
            out.append(GroupClipResult(u, batch_norms[j].reshape(1).detach(), 1, STACKED_ENGINE))
    return out


def _factors(norms: Tensor, clip: Tensor) -> Tensor:
    """1 / max{1, ‖a‖/C_j} with the runs' C_j on the leading axis (:func:`~dpcore.training.persample.clip_factors`)."""
    c = clip.reshape((-1,) + (1,) * (norms.dim() - 1))
    return torch.clamp(norms / c, min=1.0).reciprocal()


class _StackedPrivatizer(Privatizer):
    """The run's :class:`~dpcore.training.trainer.Privatizer` with its clipped sum supplied by the stack: noise,
    counters and the division by m stay the public code's."""

    pending: GroupClipResult | None = None

    def clipped_sum(self, x: Tensor, y: Tensor) -> GroupClipResult:
        result, self.pending = self.pending, None
        if result is None:
            raise RuntimeError("a stacked run's round was started outside StackedTrainer.step")
        if result.n_groups not in (1, x.shape[0]):
            raise RuntimeError("the stacked clipped sum does not belong to this round's batch")
        return result


@dataclass
class _PrefetchPlan(BatchPlan):
    """A :class:`~dpcore.training.sampling.BatchPlan` whose fixed-size subsampling draws each round's indices once
    (the stack and the run's ``Trainer.step`` both ask) and, with ``depth`` > 0, the next rounds' in background
    threads: a fresh permutation of N every round takes milliseconds on the CPU; the draws are those of
    :meth:`BatchPlan.indices` (same seed, same round), only earlier."""

    depth: int = 0
    _pool: ThreadPoolExecutor | None = field(default=None, init=False, repr=False)
    _ahead: dict[int, Future | Tensor] = field(default_factory=dict, init=False, repr=False)

    def indices(self, step: int) -> Tensor:
        if self.sampling != "fixed":
            return super().indices(step)
        for s in [s for s in self._ahead if s < step]:
            del self._ahead[s]
        if self.depth > 0:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=min(self.depth, max(1, (os.cpu_count() or 2) // 2)))
            for s in range(step, step + self.depth + 1):
                if s not in self._ahead:
                    self._ahead[s] = self._pool.submit(BatchPlan.indices, self, s)
        got = self._ahead.get(step)
        if got is None:  # the stack and then the run's Trainer.step ask for the same round: drawn once
            got = self._ahead[step] = super().indices(step)
        return got.result() if isinstance(got, Future) else got

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        self._ahead.clear()


class StackedTrainer:
    """k :class:`~dpcore.training.Trainer` runs of one grid trained at once (see the module docstring).

    Each round every unfinished run j draws its indices from its own plan, the stack computes all U_j in one batched
    pass (:func:`stacked_clipped_sums`), and each run's public ``Trainer.step`` finishes the round (its noise, step
    size, SGD step, evaluation, checkpoint hook).  Runs may be at different rounds (resumed from different
    checkpoints) or have different lengths: a finished run leaves the stack.  A run whose update turns non-finite is
    stopped (:class:`~dpcore.training.NonFiniteError`, kept in :attr:`failed`) and the others go on.

    ``prefetch``: rounds of fixed-size subsampling indices computed ahead in threads (0: none).
    """

    def __init__(self, trainers: Sequence[Trainer], *, max_stacked_samples: int = DEFAULT_MAX_STACKED_SAMPLES,
                 prefetch: int = 0) -> None:  # fmt: skip
        check_stackable(trainers)
        if isinstance(max_stacked_samples, bool) or not isinstance(max_stacked_samples, int) or max_stacked_samples < 1:
            raise ValueError(f"max_stacked_samples must be a positive int, got {max_stacked_samples!r}")
        if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 0:
            raise ValueError(f"prefetch must be an int >= 0, got {prefetch!r}")
        self.trainers = list(trainers)
        self.max_stacked_samples = max_stacked_samples
        self.template = self.trainers[0].model
        self.names = [name for name, _ in self.template.named_parameters()]
        self.failed: dict[int, NonFiniteError] = {}
        for tr in self.trainers:
            old = tr.privatizer
            new = _StackedPrivatizer(tr.model, tr.loss_fn, tr.config, tr.device)
            new.clipped, new.groups, new.engine_used = old.clipped, old.groups, set(old.engine_used)
            tr.privatizer = new
            p = tr.plan
            tr.plan = _PrefetchPlan(p.sampling, p.dataset_size, p.batch_sizes, seed=p.seed, depth=prefetch)

    @property
    def active(self) -> list[int]:
        """Indices of the runs still training."""
        return [i for i, tr in enumerate(self.trainers) if i not in self.failed and tr.step_index < tr.total_steps]

    def step(self) -> None:
        """One round of every active run."""
        active = self.active
        if not active:
            raise ValueError("every run of the stack is complete or stopped")
        batches, stacked = [], {name: [] for name in self.names}
        for i in active:
            tr = self.trainers[i]
            idx = tr.plan.indices(tr.step_index).to(tr.device)
            batches.append(RunBatch(tr.x[idx], tr.y[idx], tr.config.clip_norm, tr.config.clipping == "individual"))
            for name, p in tr.model.named_parameters():
                stacked[name].append(p.detach())
        params = {name: torch.stack(v) for name, v in stacked.items()}
        loss_fn = self.trainers[active[0]].loss_fn
        results = stacked_clipped_sums(self.template, loss_fn, params, batches,
                                       max_stacked_samples=self.max_stacked_samples)  # fmt: skip
        for i, res in zip(active, results, strict=True):
            tr = self.trainers[i]
            assert isinstance(tr.privatizer, _StackedPrivatizer)
            tr.privatizer.pending = res
            try:
                tr.step()
            except NonFiniteError as exc:
                self.failed[i] = exc

    def run(self, until_seconds: float | None = None) -> list[int]:
        """Train every run to its end (or until ``until_seconds`` of ``time.monotonic()``, checked between rounds);
        returns the indices of the runs that finished."""
        import time

        try:
            while self.active and (until_seconds is None or time.monotonic() < until_seconds):
                self.step()
        finally:
            self.close()
        return [i for i, tr in enumerate(self.trainers) if i not in self.failed and tr.step_index >= tr.total_steps]

    def close(self) -> None:
        """Stop the index prefetch threads."""
        for tr in self.trainers:
            if isinstance(tr.plan, _PrefetchPlan):
                tr.plan.close()
