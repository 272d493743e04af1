"""The silo side of ISRL-DP federated learning (Lowy & Razaviyayn, ICLR 2023, Def. 2, Alg. 1-2, App. I).

A :class:`SiloPool` holds the records of N silos -- for T independent copies of the
federation at once (the trials of an experiment) -- and is the only object that ever
touches them.  Its public surface is metadata (numbers of silos, trials, records,
the dimension) and three ``*_messages`` methods that return what the participating
silos *send*: noised minibatch gradients (Algorithm 2), noised local models (ISRL-DP
Local SGD, App. I) or noised one-pass gradients (Algorithm 1).  The noise is drawn
inside the silo from the silo's own generator; clean gradients never leave a method.

Batching.  A call advances S independent *streams* (each stream is one run of the
protocol on trial ``trial_of_stream[s]``) times C *configurations* (stepsize, noise
level, clip threshold: a tuning grid × ε values).  Configurations of one stream share
its random draws -- silo participation, minibatch indices and the standard-normal
noise directions (common random numbers; each run is still exactly distributed as the
algorithm prescribes).  Different streams are independent.

Shapes: models W are [S, C, k, d] (k outputs); ``participants`` [S, M] silo indices;
``noise_std`` [T, C, N] (σ of silo i under configuration c in trial t); ``batch_size``
[T, N]; ``clip`` [C] (per-example gradient clipping, ``inf`` for none; MB-SGD's ``clip_scope="batch_mean"``
clips the minibatch mean instead, the authors' insurance script).
"""

from __future__ import annotations

import numpy as np
import torch

from dpcore.federated.models import GLMLoss
from dpcore.validation import check_choice

__all__ = ["SiloPool", "SILO_CLIP_TARGETS", "LOCAL_BLOCK", "LOCAL_GROUP"]

#: what MB-SGD's message clips: each record's gradient (Algorithm 2 with Abadi et al.'s clipping, the paper's
#: description) or the minibatch mean gradient once (lowya/Private-Federated-Learning-Without-a-Trusted-Server
#: @421aeb6, DP_FL_insurance_linreg_FINAL.py lines 187-190, ``ACnoisyMB_sgd``)
SILO_CLIP_TARGETS = ("example", "batch_mean")

#: Local SGD steps taken per block (one matrix product for the block's logits, one for its update of w)
LOCAL_BLOCK = 16
#: Local SGD runs the silos in groups of about this many model entries (4 bytes each: about 1 MB)
LOCAL_GROUP = 250_000


def _as_tensor(value, dtype: torch.dtype) -> torch.Tensor:
    return torch.as_tensor(np.asarray(value), dtype=dtype)


class SiloPool:
    """N silos × T trials of private records, answering only with noised messages.

    Parameters
    ----------
    features : array of shape [T, N, n_max, d]
        records of silo i in trial t (rows ≥ sizes[t, i] are padding)
    labels : array of shape [T, N, n_max]
    sizes : int array of shape [T, N]
        n_i (public: it sets δ_i = 1/n_i²)
    loss : :class:`~dpcore.federated.models.GLMLoss`
    seed : int
        seeds the silos' own generators (minibatches and noise)
    """

    __slots__ = ("_x", "_y", "_xnorm", "_sizes", "_loss", "_sample_gen", "_noise_gen", "dtype")

    def __init__(self, features, labels, sizes, loss: GLMLoss, *, seed: int = 0, dtype=torch.float32) -> None:
        x = _as_tensor(features, dtype)
        if x.ndim != 4:
            raise ValueError(f"features must have shape [trials, silos, records, dim], got {tuple(x.shape)}")
        y = torch.as_tensor(np.asarray(labels))
        y = y.long() if loss.name == "softmax" else y.to(dtype)
        if tuple(y.shape) != tuple(x.shape[:3]):
            raise ValueError(f"labels must have shape {tuple(x.shape[:3])}, got {tuple(y.shape)}")
        n = torch.as_tensor(np.asarray(sizes), dtype=torch.long)
        if tuple(n.shape) != tuple(x.shape[:2]) or bool((n < 1).any()) or bool((n > x.shape[2]).any()):
            raise ValueError(f"sizes must be integers in [1, {x.shape[2]}] of shape {tuple(x.shape[:2])}")
        self.dtype = dtype
        self._x = x.contiguous()
        self._y = y.contiguous()
        self._xnorm = x.norm(dim=-1)
        self._sizes = n
        self._loss = loss
        self._sample_gen = torch.Generator().manual_seed(int(seed))
        self._noise_gen = torch.Generator().manual_seed(int(seed) + 0x5EED)

    # ------------------------------------------------------------------ public metadata
    @property
    def num_trials(self) -> int:
        return int(self._x.shape[0])

    @property
    def num_silos(self) -> int:
        return int(self._x.shape[1])

    @property
    def dim(self) -> int:
        return int(self._x.shape[3])

    @property
    def num_outputs(self) -> int:
        return int(self._loss.num_outputs)

    @property
    def sizes(self) -> np.ndarray:
        """n_i per trial and silo, [T, N] (public metadata, as δ_i = 1/n_i² in the paper)."""
        return self._sizes.numpy().copy()

    def reset_randomness(self, seed: int) -> None:
        """Re-seed the silos' generators (a simulation control: same seed, same minibatches and noise)."""
        self._sample_gen.manual_seed(int(seed))
        self._noise_gen.manual_seed(int(seed) + 0x5EED)

    # ------------------------------------------------------------------ helpers
    def _select(self, trial_of_stream: torch.Tensor, participants: torch.Tensor):
        t = trial_of_stream[:, None].expand_as(participants)
        return t, participants

    def _noise(self, shape: tuple[int, ...], needed: bool) -> torch.Tensor | None:
        if not needed:
            return None
        return torch.randn(shape, generator=self._noise_gen, dtype=self.dtype)

    def _clip_scale(self, xnorm: torch.Tensor, psi: torch.Tensor, clip: torch.Tensor | None) -> torch.Tensor | None:
        """min(1, clip / ‖ψ x‖) per example and configuration (``None`` when nothing is clipped)."""
        if clip is None:
            return None
        norm = psi.norm(dim=-1) * xnorm.unsqueeze(-1)
        return torch.clamp(clip / torch.clamp(norm, min=1e-30), max=1.0)

    def _weighted_gradients(
        self,
        models: torch.Tensor,
        x: torch.Tensor,
        y: torch.Tensor,
        xnorm: torch.Tensor,
        weights: torch.Tensor,
        clip: torch.Tensor | None,
    ) -> torch.Tensor:
        """Σ_j weights[s, m, j] clip(∇f(W[s, c], x_j)) over records x [S, M, n, d] (labels y, norms xnorm [S, M, n]):
        [S, M, C, k, d].  Two matrix products: the logits X Wᵀ and the weighted sum Ψᵀ X."""
        s, c, k, d = models.shape
        m, n = x.shape[1], x.shape[2]
        z = torch.matmul(x, models.reshape(s, 1, c * k, d).transpose(-1, -2)).view(s, m, n, c, k)
        psi = self._loss.psi(z, y.unsqueeze(-1))
        coef = weights[..., None, None] * psi
        scale = self._clip_scale(xnorm, psi, clip)
        if scale is not None:
            coef = coef * scale.unsqueeze(-1)
        return torch.matmul(coef.view(s, m, n, c * k).transpose(-1, -2), x).view(s, m, c, k, d)

    def _minibatch_gradients(
        self,
        models: torch.Tensor,
        trial_of_stream: torch.Tensor,
        participants: torch.Tensor,
        weights: torch.Tensor,
        clip: torch.Tensor | None,
    ) -> torch.Tensor:
        """Σ_j weights[s, m, j] ∇f(W[s, c], x_j) over the records of silo participants[s, m]: [S, M, C, k, d]."""
        t, p = self._select(trial_of_stream, participants)
        return self._weighted_gradients(models, self._x[t, p], self._y[t, p], self._xnorm[t, p], weights, clip)

    def _rows(self, trial_of_stream: torch.Tensor, participants: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        """Flat row numbers of records ``index`` [S, M, ...] of silo participants[s, m] in trial_of_stream[s]."""
        t, p = self._select(trial_of_stream, participants)
        base = (t * self.num_silos + p) * self._x.shape[2]  # row of record 0 of silo p in trial t
        return base.view(*base.shape, *([1] * (index.ndim - 2))) + index

    # ------------------------------------------------------------------ messages
    def mb_sgd_messages(
        self,
        models: torch.Tensor,
        *,
        trial_of_stream: torch.Tensor,
        participants: torch.Tensor,
        batch_size: torch.Tensor,
        noise_std: torch.Tensor,
        clip: torch.Tensor | None = None,
        clip_scope: str = "example",
    ) -> torch.Tensor:
        """What each participating silo sends in a round of Noisy ISRL-DP MB-SGD (Algorithm 2).

        Silo i draws K_i of its records uniformly *with replacement* and sends
        (1/K_i) Σ_j clip(∇f(w, x_j)) + u_i, u_i ~ N(0, σ_i² I).  Returns [S, M, C, k, d].
        ``clip_scope="batch_mean"`` sends clip((1/K_i) Σ_j ∇f(w, x_j)) + u_i instead (the whole [k, d] mean
        scaled to norm ≤ clip): one record can then move the message by 2·clip, not 2·clip/K_i.
        """
        scope = check_choice("clip_scope", clip_scope, SILO_CLIP_TARGETS)
        t, p = self._select(trial_of_stream, participants)
        n_sel = self._sizes[t, p]  # [S, M]
        k_sel = batch_size[t, p]  # [S, M]
        s, m = participants.shape
        n_max, k_max = self._x.shape[2], int(k_sel.max())
        u = torch.rand((s, m, k_max), generator=self._sample_gen, dtype=torch.float64)
        idx = torch.clamp((u * n_sel[..., None]).long(), max=n_max - 1)
        take = (torch.arange(k_max)[None, None, :] < k_sel[..., None]).to(self.dtype)
        weights = take / k_sel[..., None].to(self.dtype)
        # the K_i drawn records themselves (a record drawn twice counts twice), not all n_i records weighted by
        # their counts: K_i/n_i of the work (K = 443 of n = 1238 for MNIST)
        rows = self._rows(trial_of_stream, participants, idx)
        d = self._x.shape[3]
        x = self._x.view(-1, d)[rows]
        each = clip if scope == "example" else None
        grads = self._weighted_gradients(models, x, self._y.view(-1)[rows], self._xnorm.view(-1)[rows], weights, each)
        if scope == "batch_mean" and clip is not None:
            norm = grads.flatten(3).norm(dim=-1)  # [S, M, C]
            grads = grads * torch.clamp(clip / torch.clamp(norm, min=1e-30), max=1.0)[..., None, None]
        sigma = noise_std[t, :, p]  # [S, M, C]
        noise = self._noise((s, m, 1, models.shape[2], models.shape[3]), bool((sigma > 0).any()))
        if noise is not None:
            grads = grads + sigma[..., None, None] * noise
        return grads

    def one_pass_messages(
        self,
        models: torch.Tensor,
        *,
        trial_of_stream: torch.Tensor,
        participants: torch.Tensor,
        batch_size: torch.Tensor,
        noise_std: torch.Tensor,
        usage: torch.Tensor,
        ranks: torch.Tensor,
        clip: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Messages of One-Pass Accelerated Noisy MB-SGD (Algorithm 1): disjoint batches *without* replacement.

        ``ranks`` [S, N, n_max] is a random order of each silo's records (drawn by
        :meth:`one_pass_orders`), ``usage`` [S, N] how many batches silo i has used, so
        silo i's b-th batch is the records of rank in [bK_i, (b+1)K_i).
        """
        t, p = self._select(trial_of_stream, participants)
        k_sel = batch_size[t, p]
        s, m = participants.shape
        r_sel = ranks[torch.arange(s)[:, None], p]  # [S, M, n_max]
        b_sel = usage[torch.arange(s)[:, None], p]
        lo = (b_sel * k_sel)[..., None]
        inside = (r_sel >= lo) & (r_sel < lo + k_sel[..., None])
        weights = inside.to(self.dtype) / k_sel[..., None].to(self.dtype)
        grads = self._minibatch_gradients(models, trial_of_stream, participants, weights, clip)
        sigma = noise_std[t, :, p]
        noise = self._noise((s, m, 1, models.shape[2], models.shape[3]), bool((sigma > 0).any()))
        if noise is not None:
            grads = grads + sigma[..., None, None] * noise
        return grads

    def one_pass_orders(self, trial_of_stream: torch.Tensor) -> torch.Tensor:
        """A uniformly random order of every silo's records per stream: ranks [S, N, n_max] (padding last)."""
        t = trial_of_stream
        n_max = self._x.shape[2]
        keys = torch.rand((t.shape[0], self.num_silos, n_max), generator=self._sample_gen, dtype=torch.float64)
        padding = torch.arange(n_max)[None, None, :] >= self._sizes[t][..., None]
        keys = keys + padding.to(keys.dtype) * 2.0
        return keys.argsort(dim=-1).argsort(dim=-1)

    def local_sgd_messages(
        self,
        models: torch.Tensor,
        *,
        trial_of_stream: torch.Tensor,
        participants: torch.Tensor,
        local_steps: torch.Tensor,
        stepsize: torch.Tensor,
        noise_std: torch.Tensor,
        clip: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Local models sent in a round of (ISRL-DP) Local SGD (App. I).

        Silo i starts from w, takes K_i steps w ← w − η (clip(∇f(w, x_t)) + u_t) with
        x_t uniform over its records and u_t ~ N(0, σ_i² I), and sends its last iterate.
        Returns [S, M, C, k, d].

        The records and noise of a step do not depend on w, so a block of :data:`LOCAL_BLOCK` steps
        draws them first (in the order the steps use them).  The noise's coefficient −η_c σ_c (while
        j < K_i) is a configuration part times a step part, so the noise enters through its running
        sum P_j = Σ_{i<j} u_i: w_j = w + Σ_{i<j} a_i x_iᵀ − η σ P_j.  Per block, one matrix product
        gives the logits x_j·w of its steps, each step corrects its logits by the block's earlier
        steps (+ Σ_{i<j} a_i (x_i·x_j)), and one product adds the block's a_i x_iᵀ to w.  The same
        arithmetic as step by step, in matrix products; the silos are processed in groups of about
        :data:`LOCAL_GROUP` model entries so that a group's models stay in the processor's cache.
        """
        t, p = self._select(trial_of_stream, participants)
        k_sel = local_steps[t, p]
        s, c, k, d = models.shape
        m = participants.shape[1]
        b, ck, steps = s * m, c * k, int(k_sel.max())
        w = models.unsqueeze(1).expand(s, m, c, k, d).contiguous().view(b, ck, d)
        sigma = noise_std[t, :, p].reshape(b, c)
        noisy = bool((sigma > 0).any())
        step = -stepsize.to(self.dtype).view(1, c)
        # silo (s, m) takes its j-th step while j < K_i: 1.0 or 0.0 per silo and step
        active = (torch.arange(steps)[None, :] < k_sel.reshape(b, 1)).to(self.dtype)  # [S·M, K]
        gains = step.view(1, c, 1, 1) * active.view(b, 1, 1, steps)  # −η_c, or 0 once done: [S·M, C, 1, K]
        noise_gain = (step * sigma).view(b, 1, c, 1)  # −η_c σ_c
        running = torch.zeros((b, 1, k, d), dtype=self.dtype)  # P_j at the block's start
        group = max(1, LOCAL_GROUP // (ck * d))
        for start in range(0, steps, LOCAL_BLOCK):
            block = slice(start, min(steps, start + LOCAL_BLOCK))
            q = block.stop - start
            x, labels, norms = self._local_records(trial_of_stream, participants, q)  # [S·M, q, d], [S·M, q]
            logits = torch.zeros((b, q, ck), dtype=self.dtype)
            if noisy:
                noise = torch.stack([self._noise((b, k, d), True) for _ in range(q)], dim=1)  # [S·M, q, k, d]
                sums = torch.cat([running, noise * active[:, block, None, None]], dim=1).cumsum_(dim=1)
                seen = torch.matmul(sums[:, :-1], x[..., None])[..., 0]  # P_j x_j: [S·M, q, k]
                logits += (noise_gain * seen[:, :, None, :]).view(b, q, ck)
                running = sums[:, -1:]
            for rows in (slice(r, min(b, r + group)) for r in range(0, b, group)):
                ws, xs = w[rows], x[rows]
                logits[rows] += torch.bmm(xs, ws.transpose(1, 2))  # x_j·w for the block's steps
                coefs = self._local_block(xs, logits[rows], labels[rows], norms[rows], gains[rows, ..., block], clip)
                ws.baddbmm_(coefs.transpose(1, 2), xs)
        if noisy:
            w.view(b, c, k, d).add_(noise_gain.view(b, c, 1, 1) * running.view(b, 1, k, d))
        return w.view(s, m, c, k, d)

    def _local_records(
        self, trial_of_stream: torch.Tensor, participants: torch.Tensor, steps: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The record of each of ``steps`` local steps, drawn uniformly from the silo's n_i records (one draw
        [S, M] per step, as the steps use them): features [S·M, steps, d], labels and norms [S·M, steps]."""
        t, p = self._select(trial_of_stream, participants)
        n_sel = self._sizes[t, p]
        n_max, d = self._x.shape[2], self._x.shape[3]
        s, m = participants.shape
        draws = [torch.rand((s, m), generator=self._sample_gen, dtype=torch.float64) for _ in range(steps)]
        index = torch.clamp((torch.stack(draws, dim=2) * n_sel[..., None]).long(), max=n_max - 1)
        rows = self._rows(trial_of_stream, participants, index).view(s * m, steps)
        return self._x.view(-1, d)[rows], self._y.view(-1)[rows], self._xnorm.view(-1)[rows]

    def _local_block(
        self,
        x: torch.Tensor,
        logits: torch.Tensor,
        labels: torch.Tensor,
        norms: torch.Tensor,
        gains: torch.Tensor,
        clip: torch.Tensor | None,
    ) -> torch.Tensor:
        """The gradient coefficients a_j = −η_c clip(ψ(x_j·w_j)) [B, q, C·k] of a block of q sequential steps of
        B silos.

        ``logits`` [B, q, C·k] holds x_j·w at the block's start (plus the noise's part) and is corrected in
        place by each step for the later ones; ``labels`` and ``norms`` are [B, q]; ``gains`` [B, C, 1, q] is
        −η_c while the silo steps.
        """
        b, q, ck = logits.shape
        c = gains.shape[1]
        k = ck // c
        gram = torch.bmm(x, x.transpose(1, 2)).triu_(1)  # x_i·x_j for i < j (0 for i ≥ j): [B, q(i), q(j)]
        coefs = torch.empty((b, q, ck), dtype=self.dtype)
        # one view per step, made at once (indexing a tensor once per step costs more than the step's arithmetic)
        z_of, coef_of = logits.view(b, q, c, k).unbind(1), coefs.view(b, q, c, k).unbind(1)
        coef_row, gram_of = coefs.unsqueeze(2).unbind(1), gram.unsqueeze(-1).unbind(1)
        label_of, norm_of, gain_of = labels[..., None].unbind(1), norms.unbind(1), gains.unbind(-1)
        for j in range(q):
            psi = self._loss.psi(z_of[j], label_of[j])  # [B, C, k]
            coef = torch.mul(psi, gain_of[j], out=coef_of[j])
            scale = self._clip_scale(norm_of[j], psi, clip)
            if scale is not None:
                coef.mul_(scale[..., None])
            logits.addcmul_(gram_of[j], coef_row[j])  # the later steps see this one: + a_j (x_j·x_i)
        return coefs
