"""Run records of the federated algorithms: one :class:`~dpcore.accounting.run_record.RunRecord` per silo.

Inter-silo record-level DP protects each silo's records against everything that silo sends, so every
silo's transcript is one run (Lowy & Razaviyayn, ICLR 2023, Def. 2: replace-one neighbours).  Each record
counts every round (a silo that sits a round out sends nothing, so this is an upper bound) and takes the
silo's smallest data set size over the trials it describes (fewer records, larger ε).  In the record's
units the noise is on the *sum* of the clipped per-record terms (standard convention, κ = 1), so a message
"mean of K clipped gradients + N(0, σ²)" has noise std K·σ on the sum:

* MB-SGD (Algorithm 2): K draws *with* replacement per round → ``sampling="replacement"`` (recorded, but no
  library accountant covers it: :func:`~dpcore.accounting.records.epsilon_for_record` refuses it);
* MB-SGD clipping the minibatch *mean* once (``"mb_sgd_batch_mean"``, the authors' insurance script): the same
  draws, ``clipping="batch"``, and the noise is on the one clipped mean (norm ≤ C), so σ/C is the multiplier;
* Local SGD (App. I): K single-record steps per round, each a uniform draw → ``sampling="fixed"``, batch 1,
  R·K steps, noise σ per step (releasing only the last local iterate is post-processing);
* One-pass accelerated MB-SGD (Algorithm 1): disjoint batches of one random order → ``sampling="shuffle"``,
  one epoch.

The per-record bound C is the clip norm when the silos clip, else the loss's Lipschitz constant
``lipschitz`` (which must then be given: without either nothing bounds the sensitivity).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from dpcore.accounting.run_record import RunRecord
from dpcore.federated.silos import SiloPool
from dpcore.validation import check_choice, check_positive

__all__ = ["KINDS", "silo_records"]

KINDS = ("mb_sgd", "mb_sgd_batch_mean", "local_sgd", "one_pass")
_SAMPLING = {"mb_sgd": "replacement", "mb_sgd_batch_mean": "replacement", "local_sgd": "fixed", "one_pass": "shuffle"}


def silo_records(
    pool: SiloPool,
    *,
    kind: str,
    rounds: int,
    per_silo: torch.Tensor,
    noise_std: torch.Tensor,
    clip: torch.Tensor | None,
    lipschitz: float | None,
    trials: list[int],
    data: str = "",
) -> dict[tuple[int, int], RunRecord]:
    """``{(configuration, silo): RunRecord}`` for one federated run (see the module docstring).

    ``per_silo`` [T, N]: batch size K_i (MB-SGD, one pass) or local steps (Local SGD); ``noise_std`` [T, C, N];
    ``clip`` [C] or None; ``trials``: the trials the run used.
    """
    check_choice("kind", kind, KINDS)
    configs = noise_std.shape[1]
    if clip is None:
        if lipschitz is None:
            raise ValueError("run records need clip (the silos clip) or lipschitz (the loss's Lipschitz bound)")
        bounds = [check_positive("lipschitz", lipschitz)] * configs
    else:
        bounds = [float(c) for c in clip.reshape(-1)]
        if lipschitz is not None:
            lip = check_positive("lipschitz", lipschitz)
            bounds = [min(c, lip) for c in bounds]
    if any(math.isinf(b) for b in bounds):
        raise ValueError("a configuration without clipping needs lipschitz to bound the sensitivity")
    sizes = pool.sizes[trials]  # [t, N]
    k_all = per_silo.numpy()[trials]
    sigma_all = noise_std.numpy()[trials]  # [t, C, N]
    out: dict[tuple[int, int], RunRecord] = {}
    for c in range(configs):
        bound = bounds[c]
        for i in range(pool.num_silos):
            n = int(sizes[:, i].min())
            k = int(k_all[:, i].max())
            sigma = float(sigma_all[:, c, i].min())
            if kind == "local_sgd":
                batch, steps, z = 1, rounds * k, sigma / bound
            elif kind == "mb_sgd_batch_mean":
                batch, steps, z = k, rounds, sigma / bound
            else:
                batch, steps, z = k, rounds, k * sigma / bound
            if not np.isfinite(z):
                raise ValueError(f"noise_std must be finite for a run record, got {sigma} (configuration {c})")
            out[(c, i)] = RunRecord(
                private=True,
                sampling=_SAMPLING[kind],
                dataset_size=n,
                batch_size=batch,
                steps=steps,
                clipping="batch" if kind == "mb_sgd_batch_mean" else "individual",
                clip_norm=bound,
                noise_multiplier=z,
                noise_std=z * bound,
                noise_convention="standard",
                reduce="mean",
                data=data,
            )
    return out
