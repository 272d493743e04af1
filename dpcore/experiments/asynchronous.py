"""The asynchronous trainer of an experiment run: paper 000's n clients (Algorithms 2–4) on the runner.

van Dijk, N. V. Nguyen, T. N. Nguyen, L. M. Nguyen, P. H. Nguyen, "Proactive DP", Sec. 2.2 and App. A: each of
n clients runs DP-SGD on its local data set -- Poisson sampling with expected size s, per-example clipping to C,
noise N(0, C²σ² I) added to the *sum* of the clipped gradients (no averaging: the step size absorbs s), step
η̄_i = η_0/(1 + β t_i^p) with t_i = Σ_{j<i} s_j (Table 1, footnote ‡) -- and the server adds every update on
arrival, with at most one round of asynchrony (Υ(k, i) = [k ≥ i − 1]); simulated deterministically by
:class:`dpcore.training.async_clients.AsyncTrainer`.

:func:`async_trainer` maps a :class:`~dpcore.experiments.config.RunConfig` to that trainer; an
:class:`~dpcore.experiments.registry.Experiment` passes it as its ``trainer``.  The configuration's fields:

* ``clients`` n, ``client_data`` ("replicate": every client holds the whole training set -- the paper's
  N_c is the full set; "split": disjoint seeded shards of N/n), ``delay_prob`` (P(a broadcast arrives one
  round late));
* ``batch_size`` s, ``epochs`` k: T = round(kN/s) rounds, so K = T·s ≈ kN gradient computations per client
  (:func:`dpcore.accounting.events.steps_for_sample_count`);
* ``lr`` η_0, ``lr_beta`` β, ``lr_power`` p; ``evals_per_epoch``: the server's model is evaluated every
  round(N/(s·evals_per_epoch)) rounds and after the last;
* ``step_scaling``: "sum" (η̄ times U = Σ clipped + noise, the default) or "mean" (η̄·U/s: §2 of the paper,
  "we discount averaging the sum represented by U by scaling the step size inversely with s_i"); the
  mechanism, hence ε, is the same (post-processing of U);
* a "non-private" run of the paper (no noise) is ``clipping="individual"`` with σ = 0 (clipped, noiseless)
  or ``clipping="none"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from dpcore.accounting.events import steps_for_sample_count
from dpcore.experiments.config import RunConfig
from dpcore.experiments.datasets import PreparedData
from dpcore.models import build_model
from dpcore.training.async_clients import AsyncTrainer
from dpcore.training.config import TrainConfig
from dpcore.training.sampling import derive_seed
from dpcore.training.trainer import make_classification_eval

__all__ = ["async_train_config", "client_shards", "async_trainer", "RunnerAsyncTrainer", "FinalExtras"]

#: (config, data, trained model) -> JSON-able fields for the run's result (computed once, after the last round)
FinalExtras = Callable[[RunConfig, PreparedData, nn.Module], dict[str, Any]]


class RunnerAsyncTrainer(AsyncTrainer):
    """:class:`AsyncTrainer` plus what the experiment runner writes beside the usual result: every client's run
    record (``records``) and the fields of an optional ``final_extras(config, data, model)``."""

    def __init__(self, *args: Any, run_config: RunConfig, data: PreparedData,
                 final_extras: FinalExtras | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.run_config, self.prepared, self.final_extras = run_config, data, final_extras

    def result_extras(self) -> dict[str, Any]:
        from dpcore.experiments.adapters import record_to_dict

        out: dict[str, Any] = {"records": [record_to_dict(r) for r in self.records()]}
        if self.final_extras is not None:
            self._load(self.server)
            self.model.eval()
            with torch.no_grad():
                out.update(self.final_extras(self.run_config, self.prepared, self.model))
            self.model.train()
        return out


def async_train_config(cfg: RunConfig, n_local: int) -> TrainConfig:
    """Each client's local DP-SGD (paper 000, Algorithm 4) for ``cfg`` on ``n_local`` examples."""
    if not isinstance(cfg, RunConfig):
        raise ValueError(f"cfg must be a RunConfig, got {type(cfg).__name__}")
    if cfg.lr_rule != "constant":
        raise ValueError(f"the asynchronous trainer takes lr_rule='constant' (with lr_beta), got {cfg.lr_rule!r}")
    if cfg.clipping not in ("individual", "none"):
        raise ValueError(f"paper 000's clients clip per example: clipping must be 'individual' or 'none', "
                         f"got {cfg.clipping!r}")  # fmt: skip
    if cfg.batch_size > n_local:
        raise ValueError(f"batch_size must be <= the {n_local} examples of a client, got {cfg.batch_size}")
    lr = {"kind": "inverse_time", "lr0": cfg.lr, "beta": cfg.lr_beta, "power": cfg.lr_power}
    return TrainConfig(
        sampling=cfg.sampling,
        batch_size=cfg.batch_size,
        steps=steps_for_sample_count(cfg.epochs, n_local, cfg.batch_size),
        clipping=cfg.clipping,
        clip_norm=1.0 if cfg.clip_norm is None else cfg.clip_norm,
        noise_multiplier=cfg.noise_multiplier,
        noise_convention=cfg.noise_convention,
        reduce="sum" if cfg.step_scaling == "sum" else "mean",
        lr=lr if cfg.lr_beta > 0 else cfg.lr,
        optimizer="sgd",
        engine=cfg.engine,
        max_physical_batch=cfg.max_physical_batch,
        seed=cfg.seed,
        device=cfg.device,
    )


def client_shards(cfg: RunConfig, x: torch.Tensor, y: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The n clients' data: the same (x, y) for every client ("replicate") or disjoint shards of a permutation
    seeded by ``data_seed`` ("split"; sizes differ by at most one)."""
    if cfg.client_data == "replicate":
        return [(x, y)] * cfg.clients
    if x.shape[0] < cfg.clients:
        raise ValueError(f"client_data='split' needs at least {cfg.clients} examples, got {x.shape[0]}")
    gen = torch.Generator().manual_seed(derive_seed(cfg.data_seed, "client-split"))
    perm = torch.randperm(x.shape[0], generator=gen)
    return [(x[idx], y[idx]) for idx in perm.tensor_split(cfg.clients)]


def async_trainer(cfg: RunConfig, data: PreparedData, *, final_extras: FinalExtras | None = None) -> RunnerAsyncTrainer:
    """The :class:`AsyncTrainer` of ``cfg`` on ``data``: model v_0 seeded by ``cfg.seed``, the evaluated split
    (``final_extras``: see :class:`RunnerAsyncTrainer`)."""
    if final_extras is not None and not callable(final_extras):
        raise ValueError("final_extras must be None or callable (config, data, model) -> dict")
    clients = client_shards(cfg, *data.train)
    n_local = min(x.shape[0] for x, _ in clients)
    tc = async_train_config(cfg, n_local)
    model = build_model(cfg.model, seed=cfg.seed, **dict(cfg.model_kwargs))
    eval_fn = make_classification_eval(*data.evaluation, prefix=cfg.eval_split)
    every = max(1, round(n_local / (cfg.batch_size * cfg.evals_per_epoch)))
    return RunnerAsyncTrainer(model, clients, tc, delay_prob=cfg.delay_prob, eval_fn=eval_fn, eval_every=every,
                              run_config=cfg, data=data, final_extras=final_extras)  # fmt: skip
