"""Vectorised, deterministic simulator of asynchronous DP-SGD for (ridge) logistic regression.

It implements the same algorithm as :func:`dpcore.training.async_clients.run_async_clients` (van Dijk et al.,
"Proactive DP", Algorithms 2–4 with the experiments' permissible-delay predicate Υ(k, i) = [k ≥ i−1]), but in
numpy, for a linear model only, and batched over *configurations* (clipping constant C, noise multiplier σ,
step-size schedule η̄_i = η_0/(1 + β t_i^p), ridge λ) and *seeds*: one python loop over rounds drives every
(configuration, seed, client) row at once.  This is what makes the paper's full convex scale (5 clients,
K = 50,000 gradient computations each, s down to 1, i.e. 50,000 rounds) take seconds.

Per round i and client j (everything as in ``run_async_clients``):

* the broadcast v_i (the server model after every client's round i−1) reaches client j before its round i
  (delay 0) or one round late (delay 1, probability ``delay_prob``); the client replaces its local model ŵ by the
  newest broadcast it has received unless it already holds it (Algorithm 3);
* Poisson sampling with rate q = s/N (paper 000, footnote 14), drawn cheaply as a binomial count m ~ Bin(N, q)
  followed by a uniformly random m-subset (the same distribution as N independent coin flips);
* U = Σ_h [∇f(ŵ, ξ_h)]_C + N(0, C²σ² I) with f the logistic loss plus (λ/2)‖w̄‖² (w̄ = (w, b), eq. (9) of the
  paper; the whole per-example gradient is clipped);
* ŵ ← ŵ − η̄_i U and the server's v ← v − η̄_i U (the printed "+" of Algorithm 4 is a sign slip), with
  η̄_i = η_0/(1 + β t_i^p), t_i = t_0 + i·s the planned gradient computations before round i (Table 1, footnote ‡).

Randomness is drawn per (seed, client) stream, independently of the configurations in the batch, so the
configurations of one call share their batches, noise directions and delays (common random numbers) and a
configuration gives bit-identical results whether it runs alone or batched with others.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from dpcore.validation import check_nonnegative, check_positive, check_positive_int, check_range

__all__ = [
    "LogRegRun",
    "AsyncLogRegResult",
    "SimDraws",
    "poisson_subsets",
    "simulate_async_logreg",
    "classification_metrics",
    "logistic_predict",
]

_CHUNK = 1024  # rounds whose randomness is drawn at once; fixed so that results never depend on it
_SUB = 64  # at most this many rounds' padded batches are gathered at once (memory and speed only)
_PAD_BUDGET = 2_000_000  # ... and at most about this many floats


@dataclass(frozen=True)
class LogRegRun:
    """One configuration: clipping constant C, noise multiplier σ (0: no noise), η̄_i = lr0/(1 + β t^power),
    ridge λ on w̄ = (w, b)."""

    clip: float
    sigma: float
    lr0: float
    beta: float
    power: float = 1.0
    ridge: float = 0.0
    label: str = ""

    def __post_init__(self) -> None:
        check_positive("clip", self.clip, allow_inf=True)
        if math.isinf(self.clip) and self.sigma > 0:
            raise ValueError("sigma must be 0 when clip is inf (no clipping: no sensitivity bound for the noise)")
        check_nonnegative("sigma", self.sigma)
        check_positive("lr0", self.lr0)
        check_nonnegative("beta", self.beta)
        check_range("power", self.power, 0.0, 1.0)
        check_nonnegative("ridge", self.ridge)

    def lr(self, t: float) -> float:
        """η̄ at t planned gradient computations."""
        return self.lr0 / (1.0 + self.beta * t**self.power)


@dataclass
class AsyncLogRegResult:
    """Server models and evaluation history of every (configuration, seed)."""

    weights: np.ndarray  # (configs, seeds, d + 1): final server models, bias last
    samples: np.ndarray  # (n_eval,): planned gradient computations per client at each evaluation (t_0 included)
    metrics: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (configs, seeds, n_eval)
    rounds: int = 0
    sample_size: int = 0
    batch_sizes: np.ndarray | None = None  # (seeds, clients): realised mean Poisson batch size


@dataclass
class SimDraws:
    """Injected randomness (tests): per round i and row r = seed·n + client, the batch ``indices[i][r]``,
    standard-normal noise ``noise[i, r]`` (d + 1) and the broadcast delay ``delays[i, r]`` ∈ {0, 1} of v_i."""

    indices: list[list[np.ndarray]]
    noise: np.ndarray
    delays: np.ndarray


def poisson_subsets(rng: np.random.Generator, N: int, q: float, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """``rounds`` Poisson subsamples of {0, …, N−1} with rate q: (counts (rounds,), indices concatenated).

    Drawn as m_i ~ Binomial(N, q), then m_i distinct indices (with-replacement draws whose duplicates are redrawn
    until none is left; the procedure is symmetric in the N elements, so the subset is uniform given m_i).  The
    distribution is that of N independent Bernoulli(q) trials (Abadi et al. 2016; paper 000, footnote 14) at
    O(m_i) instead of O(N) cost per round.
    """
    N = check_positive_int("N", N)
    q = check_range("q", q, 0.0, 1.0)
    rounds = check_positive_int("rounds", rounds)
    counts = rng.binomial(N, q, size=rounds)
    total = int(counts.sum())
    idx = rng.integers(0, N, size=total)
    if q > 0.5:  # dense subsets: redrawing duplicates converges slowly; draw each subset directly
        starts = np.concatenate([[0], np.cumsum(counts)])
        for i in range(rounds):
            idx[starts[i] : starts[i + 1]] = rng.choice(N, size=int(counts[i]), replace=False)
        return counts, idx
    round_of = np.repeat(np.arange(rounds, dtype=np.int64), counts)
    while True:
        key = round_of * N + idx
        order = np.argsort(key, kind="stable")
        ks = key[order]
        dup = order[1:][ks[1:] == ks[:-1]]
        if dup.size == 0:
            return counts, idx
        idx[dup] = rng.integers(0, N, size=dup.size)


def logistic_predict(weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Logits x·w + b for every model: weights (G, d + 1), x (n, d) -> (n, G)."""
    return x @ weights[:, :-1].T + weights[:, -1]


def classification_metrics(
    x: np.ndarray, y: np.ndarray, *, prefix: str = "test", chunk: int = 32, loss: bool = False
) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    """An evaluator W (G, d + 1) -> {prefix_accuracy, prefix_balanced_accuracy[, prefix_loss]} (each (G,)).

    Balanced accuracy is the mean of the per-class recalls (true-positive and true-negative rates); the loss is
    the mean logistic loss.  ``chunk`` models are scored at a time to bound memory.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(f"x must be (n, d) and y (n,), got {x.shape} and {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("y must hold labels in {0, 1}")
    pos = y == 1
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("y must hold both classes for the balanced accuracy")
    chunk = check_positive_int("chunk", chunk)
    x_pos, x_neg = x[pos], x[~pos]

    def evaluate(weights: np.ndarray) -> dict[str, np.ndarray]:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim != 2 or weights.shape[1] != x.shape[1] + 1:
            raise ValueError(f"weights must be (G, {x.shape[1] + 1}), got {weights.shape}")
        acc, bal, losses = [], [], []
        for start in range(0, weights.shape[0], chunk):
            w = weights[start : start + chunk]
            z_pos, z_neg = logistic_predict(w, x_pos), logistic_predict(w, x_neg)
            tp, tn = (z_pos > 0).sum(0), (z_neg <= 0).sum(0)
            acc.append((tp + tn) / x.shape[0])
            bal.append(0.5 * (tp / n_pos + tn / n_neg))
            if loss:  # log(1 + exp(-z)) for y = 1, log(1 + exp(z)) for y = 0
                total = np.logaddexp(0.0, -z_pos).sum(0) + np.logaddexp(0.0, z_neg).sum(0)
                losses.append(total / x.shape[0])
        out = {f"{prefix}_accuracy": np.concatenate(acc), f"{prefix}_balanced_accuracy": np.concatenate(bal)}
        if loss:
            out[f"{prefix}_loss"] = np.concatenate(losses)
        return out

    return evaluate


def _row_rng(seed: int, client: int, stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), int(client), int(stream)]))


def _check_data(client_x: np.ndarray, client_y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(client_x, dtype=np.float64)
    y = np.asarray(client_y)
    if x.ndim != 3:
        raise ValueError(f"client_x must be (clients, N, d), got shape {x.shape}")
    if y.shape != x.shape[:2]:
        raise ValueError(f"client_y must be (clients, N) = {x.shape[:2]}, got {y.shape}")
    if x.shape[0] < 1 or x.shape[1] < 1 or x.shape[2] < 1:
        raise ValueError(f"client_x needs at least one client, example and feature, got shape {x.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("client_y must hold labels in {0, 1}")
    if not np.isfinite(x).all():
        raise ValueError("client_x must be finite")
    return x, y.astype(np.float64)


def simulate_async_logreg(
    client_x: np.ndarray,
    client_y: np.ndarray,
    runs: Sequence[LogRegRun],
    *,
    sample_size: int,
    K: int,
    seeds: Sequence[int] = (0,),
    delay_prob: float = 0.5,
    evaluate: Callable[[np.ndarray], dict[str, np.ndarray]] | None = None,
    n_eval: int = 50,
    init: np.ndarray | None = None,
    t0: float = 0.0,
    draws: SimDraws | None = None,
) -> AsyncLogRegResult:
    """Run every configuration in ``runs`` for every seed on the clients' data sets (see the module docstring).

    ``client_x`` (n, N, d) and ``client_y`` (n, N) in {0, 1} hold one equally large local data set per client;
    each client performs T = round(K/s) rounds of expected size s = ``sample_size`` (K planned gradient
    computations).  ``evaluate`` maps server models (G, d + 1) to metrics (G,) and is called about ``n_eval``
    times (always after the last round).  ``init`` (d + 1,) or (configs, seeds, d + 1) is the default model v_0
    (zeros if None) and ``t0`` the gradient computations already done (a continuation phase, App. E).
    ``draws`` replaces the random draws (tests).
    """
    x, y = _check_data(client_x, client_y)
    n_clients, N, d = x.shape
    runs = list(runs)
    if not runs or not all(isinstance(r, LogRegRun) for r in runs):
        raise ValueError("runs must be a non-empty sequence of LogRegRun")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    s = check_positive_int("sample_size", sample_size)
    if s > N:
        raise ValueError(f"sample_size must be <= N = {N} (the local data set size), got {s}")
    K = check_positive_int("K", K)
    if K < s:
        raise ValueError(f"K must be >= sample_size = {s}, got {K}")
    delay_prob = check_range("delay_prob", delay_prob, 0.0, 1.0)
    n_eval = check_positive_int("n_eval", n_eval)
    t0 = check_nonnegative("t0", t0)
    rounds = max(1, round(K / s))
    n_cfg, n_seed = len(runs), len(seeds)
    R = n_seed * n_clients  # rows: (seed, client)
    seed_of_row = np.repeat(np.arange(n_seed), n_clients)
    client_of_row = np.tile(np.arange(n_clients), n_seed)

    if init is None:
        server = np.zeros((n_cfg, n_seed, d + 1))
    else:
        init = np.asarray(init, dtype=np.float64)
        if init.shape == (d + 1,):
            server = np.broadcast_to(init, (n_cfg, n_seed, d + 1)).copy()
        elif init.shape == (n_cfg, n_seed, d + 1):
            server = init.copy()
        else:
            raise ValueError(f"init must be ({d + 1},) or ({n_cfg}, {n_seed}, {d + 1}), got {init.shape}")
        if not np.isfinite(server).all():
            raise ValueError("init must be finite")
    if draws is not None:
        if len(draws.indices) < rounds or draws.noise.shape[:2] != (rounds, R) or draws.delays.shape != (rounds, R):
            raise ValueError(f"draws must cover {rounds} rounds x {R} rows")

    clip = np.array([r.clip for r in runs])
    noise_std = np.array([0.0 if r.sigma == 0 else r.clip * r.sigma for r in runs])
    ridge = np.array([r.ridge for r in runs])
    v_cur = server  # v_i: server model at the start of round i
    v_prev = server.copy()  # v_{i−1}
    local = v_cur[:, seed_of_row].copy()  # (configs, R, d + 1)
    late_prev = np.zeros(R, dtype=bool)  # v_0 is never late
    every = max(1, rounds // n_eval)
    samples_log: list[float] = []
    metric_log: dict[str, list[np.ndarray]] = {}
    realised = np.zeros(R)
    q = s / N
    rngs = [[_row_rng(seeds[r // n_clients], r % n_clients, k) for k in range(3)] for r in range(R)]
    flat_x = x.reshape(n_clients * N, d)
    flat_y = y.reshape(n_clients * N)

    for c0 in range(0, rounds, _CHUNK):
        ch = min(_CHUNK, rounds - c0)
        # ---- randomness of rounds c0 .. c0+ch−1, per (seed, client) row ----------------------------------
        if draws is None:
            counts = np.empty((ch, R), dtype=np.int64)
            idx_rows, noise, delays = [], np.empty((ch, R, d + 1)), np.empty((ch, R), dtype=bool)
            for r in range(R):
                cnt, idx = poisson_subsets(rngs[r][0], N, q, ch)
                counts[:, r] = cnt
                idx_rows.append(idx)
                noise[:, r] = rngs[r][1].standard_normal((ch, d + 1))
                delays[:, r] = rngs[r][2].random(ch) < delay_prob
        else:
            counts = np.array([[len(draws.indices[c0 + i][r]) for r in range(R)] for i in range(ch)], dtype=np.int64)
            idx_rows = [
                np.concatenate([np.asarray(draws.indices[c0 + i][r], dtype=np.int64) for i in range(ch)])
                for r in range(R)
            ]
            noise = np.asarray(draws.noise[c0 : c0 + ch], dtype=np.float64)
            delays = np.asarray(draws.delays[c0 : c0 + ch]).astype(bool)
        if c0 == 0:
            delays[0] = False  # v_0 is the default model every client starts from (never late)
        realised += counts.sum(0)
        late_before = np.concatenate([late_prev[None], delays[:-1]])  # delay of v_{g−1}
        fresh, stale = ~delays, delays & late_before
        late_prev = delays[-1]
        starts = np.concatenate([np.zeros((1, R), dtype=np.int64), np.cumsum(counts, axis=0)])  # per row
        lrs = np.array([[run.lr(t0 + (c0 + i) * s) for run in runs] for i in range(ch)])  # (ch, configs)
        # padded per-round batches (rows x max count x (d + 1)), gathered a few rounds at a time to bound memory
        sub = int(max(1, min(_SUB, _PAD_BUDGET // (R * max(1, int(counts.max())) * (d + 1)))))
        for b0 in range(0, ch, sub):
            b1 = min(ch, b0 + sub)
            width = max(1, int(counts[b0:b1].max()))
            pad_idx = np.zeros((b1 - b0, R, width), dtype=np.int64)
            mask = np.arange(width)[None, None, :] < counts[b0:b1, :, None]
            for r in range(R):
                lo, hi = starts[b0, r], starts[b1, r]
                pad_idx[:, r][mask[:, r]] = idx_rows[r][lo:hi]
            if pad_idx.size and (pad_idx.min() < 0 or pad_idx.max() >= N):
                raise ValueError(f"batch indices must lie in [0, {N})")
            flat = client_of_row[None, :, None] * N + pad_idx
            px = np.concatenate([flat_x[flat], np.ones(flat.shape + (1,))], axis=-1)  # augmented (x, 1)
            py = flat_y[flat]
            pxx = np.einsum("brmd,brmd->brm", px, px)
            fmask = mask.astype(np.float64)
            for i in range(b0, b1):
                g = c0 + i
                # ---- Algorithm 3: newest broadcast that has reached each client -------------------------
                # at round g client j holds v_g (delay 0: always newer than what it has) or, if v_g is late,
                # v_{g−1}, which is new to it only if v_{g−1} was late as well
                if g > 0:
                    if fresh[i].any():
                        local = np.where(fresh[i][None, :, None], v_cur[:, seed_of_row], local)
                    if stale[i].any():
                        local = np.where(stale[i][None, :, None], v_prev[:, seed_of_row], local)
                # ---- Algorithm 4: clipped per-example gradients at the local model, summed, plus noise --------
                # per-example gradient (p − y)·x̃ + λ·w̃ with x̃ = (x, 1), w̃ = (w, b); its squared norm is
                # r²‖x̃‖² + 2λ r (x̃·w̃) + λ²‖w̃‖², so the gradients themselves are never materialised
                xb, k = px[i - b0], i - b0
                z = np.einsum("rmd,crd->crm", xb, local)
                resid = expit(z) - py[k]
                ww = np.einsum("crd,crd->cr", local, local)
                sq = (
                    resid * resid * pxx[k]
                    + (2.0 * ridge)[:, None, None] * resid * z
                    + (ridge**2)[:, None, None] * ww[..., None]
                )
                scale = fmask[k] / np.maximum(1.0, np.sqrt(sq) / clip[:, None, None])
                u = np.einsum("crm,rmd->crd", resid * scale, xb)
                u += (ridge[:, None] * scale.sum(-1))[..., None] * local
                u += noise_std[:, None, None] * noise[i][None]
                step = lrs[i][:, None, None] * u
                local -= step
                v_prev = v_cur
                v_cur = v_cur - step.reshape(n_cfg, n_seed, n_clients, d + 1).sum(2)
                if evaluate is not None and ((g + 1) % every == 0 or g + 1 == rounds):
                    met = evaluate(v_cur.reshape(n_cfg * n_seed, d + 1))
                    for key, val in met.items():
                        arr = np.asarray(val, dtype=np.float64).reshape(n_cfg, n_seed)
                        metric_log.setdefault(key, []).append(arr)
                    samples_log.append(t0 + (g + 1) * s)
        if not np.isfinite(v_cur).all():
            raise FloatingPointError(f"non-finite server model by round {c0 + ch}")
    metrics = {k: np.stack(v, axis=-1) for k, v in metric_log.items()}
    return AsyncLogRegResult(
        weights=v_cur,
        samples=np.asarray(samples_log),
        metrics=metrics,
        rounds=rounds,
        sample_size=s,
        batch_sizes=(realised / rounds).reshape(n_seed, n_clients),
    )
