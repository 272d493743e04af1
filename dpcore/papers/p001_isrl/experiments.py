"""The experimental protocol of Lowy & Razaviyayn (ICLR 2023), App. I: sweeps, tuning, error bars.

For every trial (a fresh draw/split of the data), algorithm and ε, a grid of constant
stepsizes (× clip thresholds for the insurance data) is run ``reps`` times; the grid
point with the smallest training loss averaged over the repetitions is selected and its
test metric, averaged over the same repetitions, is the trial's result.  Curves are
the mean over trials with "90% error bars": the authors' scripts draw a symmetric bar
of half-width (95th − 5th percentile)/2 around the mean (error rates capped to [0, 1]).

:func:`run_sweep` executes one algorithm on all trials × repetitions × ε × grid in a few
batched calls (trials × repetitions are independent streams; ε and the grid are
configurations sharing a stream's random draws: one matrix product serves them all).
The noise of each silo follows the paper's calibrations (:mod:`dpcore.papers.p001_isrl.accounting`)
with δ_i = 1/n_i², L the clip threshold (insurance) or the Lipschitz bound 2·max‖x‖ (MNIST,
obesity), and K_i = int(max(1, n_i·sqrt(ε_max/(4R)))) unless given.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from dpcore.federated import algorithms
from dpcore.federated.datasets import FederatedTrials
from dpcore.federated.models import make_loss
from dpcore.federated.silos import SILO_CLIP_TARGETS, SiloPool
from dpcore.papers.p001_isrl import accounting as isrl
from dpcore.validation import check_choice, check_positive, check_positive_int

__all__ = [
    "ALGORITHMS",
    "Sweep",
    "SweepResult",
    "run_sweep",
    "evaluate",
    "select",
    "summarize",
    "log_grid",
    "LABELS",
    "Panel",
    "PanelResult",
    "run_panel",
    "threshold_epsilon",
    "relative_gain",
    "best_of",
]

ALGORITHMS = ("mb-sgd", "local-sgd", "accelerated")
LABELS = {
    ("mb-sgd", True): "Noisy MB SGD",
    ("local-sgd", True): "Noisy Local SGD",
    ("mb-sgd", False): "MB SGD",
    ("local-sgd", False): "Local SGD",
    ("accelerated", True): "Noisy Accelerated MB SGD (Alg. 1)",
    ("accelerated", False): "Accelerated MB SGD",
}


def log_grid(low_exponent: float, high_exponent: float, points: int, *, scale: float = 1.0) -> list[float]:
    """``points`` stepsizes evenly spaced in the exponent between e^low and e^high, times ``scale``.

    The paper's "10 evenly spaced points between e^−6 and 1" are log-spaced in the
    authors' code.  ``scale`` converts a grid stated for summed silo messages (the
    authors' MNIST and insurance scripts) to our averaged messages (scale = M).
    """
    points = check_positive_int("points", points)
    scale = check_positive("scale", scale)
    return [float(scale * math.exp(e)) for e in np.linspace(low_exponent, high_exponent, points)]


@dataclass(frozen=True)
class Sweep:
    """One algorithm's tuning sweep (App. I).  ``epsilons`` may contain ``math.inf`` (non-private).

    ``noise_scale`` multiplies every silo's calibrated σ (1 = the paper's calibration); it exists
    to emulate scripts that added less noise than the paper describes.
    ``clip_scope`` (MB-SGD only): ``"example"`` (the paper) or ``"batch_mean"`` (the authors' insurance script
    clips each silo's minibatch mean once; the σ formula is unchanged, so the ε that ran is larger: see
    :func:`dpcore.papers.p001_isrl.accounting.batch_mean_epsilon_upper`).
    """

    algorithm: str
    epsilons: tuple[float, ...]
    stepsizes: tuple[float, ...]
    rounds: int
    silos_per_round: int
    reps: int = 3
    clips: tuple[float, ...] | None = None
    lipschitz: float | None = None
    batch_size: int | None = None
    batch_epsilon: float | None = None
    noise: str = "experiments"
    output: str = "window"
    window: int = 8
    noise_scale: float = 1.0
    clip_scope: str = "example"

    def __post_init__(self) -> None:
        check_choice("algorithm", self.algorithm, ALGORITHMS)
        check_choice("clip_scope", self.clip_scope, SILO_CLIP_TARGETS)
        if self.clip_scope != "example" and self.algorithm != "mb-sgd":
            raise ValueError(f"clip_scope={self.clip_scope!r} is an MB-SGD mode; {self.algorithm} clips per example")
        check_positive("noise_scale", self.noise_scale)
        check_choice("noise", self.noise, isrl.FORMULAS)
        if not self.epsilons or any(not (e > 0) for e in self.epsilons):
            raise ValueError(f"epsilons must be a non-empty list of numbers in (0, inf], got {self.epsilons}")
        if not self.stepsizes or any(not (0 < s < math.inf) for s in self.stepsizes):
            raise ValueError(f"stepsizes must be a non-empty list of numbers in (0, inf), got {self.stepsizes}")
        check_positive_int("rounds", self.rounds)
        check_positive_int("silos_per_round", self.silos_per_round)
        check_positive_int("reps", self.reps)
        if self.clips is None and self.lipschitz is None:
            raise ValueError("lipschitz must be given when clips is None (it calibrates the noise)")
        if self.clips is not None and any(not (c > 0) for c in self.clips):
            raise ValueError(f"clips must be numbers in (0, inf], got {self.clips}")

    @property
    def grid(self) -> pd.DataFrame:
        """The tuning grid: one row per (clip, stepsize)."""
        clips = self.clips if self.clips is not None else (math.inf,)
        rows = list(itertools.product(clips, self.stepsizes))
        return pd.DataFrame(rows, columns=["clip", "stepsize"])

    def batch_sizes(self, sizes: np.ndarray) -> np.ndarray:
        """K per trial and silo: the given ``batch_size``, else App. I's rule at ε_max (capped at n_i)."""
        if self.batch_size is not None:
            return np.full(sizes.shape, check_positive_int("batch_size", self.batch_size), dtype=np.int64)
        finite = [e for e in self.epsilons if math.isfinite(e)]
        eps_max = self.batch_epsilon or (max(finite) if finite else None)
        if eps_max is None:
            raise ValueError("batch_size or batch_epsilon must be given for a non-private sweep")
        rule = np.vectorize(lambda n: isrl.batch_size_experiments(int(n), self.rounds, eps_max))
        return rule(sizes).astype(np.int64)


@dataclass
class SweepResult:
    """Raw results: ``train_loss`` and ``test_metric`` of shape [trials, reps, ε, grid]."""

    sweep: Sweep
    train_loss: np.ndarray
    test_metric: np.ndarray
    batch_sizes: np.ndarray
    seconds: float
    info: dict = field(default_factory=dict)

    def frame(self) -> pd.DataFrame:
        """Long table of every run."""
        grid = self.sweep.grid
        t, r, e, g = self.train_loss.shape
        idx = np.stack(np.meshgrid(np.arange(t), np.arange(r), np.arange(e), np.arange(g), indexing="ij"), -1)
        idx = idx.reshape(-1, 4)
        return pd.DataFrame(
            {
                "algorithm": self.sweep.algorithm,
                "trial": idx[:, 0],
                "rep": idx[:, 1],
                "epsilon": np.asarray(self.sweep.epsilons, dtype=float)[idx[:, 2]],
                "clip": grid["clip"].to_numpy()[idx[:, 3]],
                "stepsize": grid["stepsize"].to_numpy()[idx[:, 3]],
                "train_loss": self.train_loss.reshape(-1),
                "test_metric": self.test_metric.reshape(-1),
            }
        )


def _silo_noise(sweep: Sweep, n: int, k: int, epsilon: float, lipschitz: float) -> float:
    """σ of one silo (n records, batch or local steps K) at (ε, L) by the paper's calibration of the algorithm."""
    kw = dict(lipschitz=lipschitz, epsilon=epsilon, delta=1.0 / n**2)
    if sweep.algorithm == "mb-sgd":
        return isrl.noise_std(rounds=sweep.rounds, n=n, batch_size=k, formula=sweep.noise, **kw)
    if sweep.algorithm == "local-sgd":
        return isrl.local_sgd_noise_std(rounds=sweep.rounds, n=n, batch_size=k, **kw)
    return isrl.one_pass_noise_std(batch_size=k, **kw)


def _noise_table(sweep: Sweep, trials: FederatedTrials, batch: np.ndarray) -> np.ndarray:
    """σ [T, C, N] for configurations C = ε × grid (clip-major, then stepsize); σ depends on (ε, clip) and the
    silo, not on the stepsize, so it is computed once per (ε, clip, n_i, K_i)."""
    grid = sweep.grid
    t_count, n_silos = trials.sizes.shape
    table = np.zeros((t_count, len(sweep.epsilons) * len(grid), n_silos))
    cache: dict[tuple[float, float, int, int], float] = {}
    for c, (eps, clip) in enumerate(itertools.product(sweep.epsilons, grid["clip"])):
        lip = clip if sweep.clips is not None else sweep.lipschitz
        if math.isinf(eps):
            continue
        if math.isinf(lip):  # no clipping and no Lipschitz bound: no finite calibration exists
            table[:, c, :] = math.inf
            continue
        for t in range(t_count):
            for i in range(n_silos):
                key = (eps, lip, int(trials.sizes[t, i]), int(batch[t, i]))
                if key not in cache:
                    cache[key] = _silo_noise(sweep, key[2], key[3], eps, lip)
                table[t, c, i] = cache[key]
    return table * sweep.noise_scale


def evaluate(
    trials: FederatedTrials, models: torch.Tensor, trial_of_stream: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Training loss (pooled over silos) and test metric of output models [S, C, k, d]: two [S, C] arrays.

    This is the experimenter's evaluation, outside the protocol (the paper did not make
    it private either, App. I "Limitations").  Non-finite losses become ``inf``.
    """
    loss = make_loss(trials.loss, trials.num_outputs)
    s, c, k, d = models.shape
    train = np.full((s, c), np.inf)
    test = np.full((s, c), np.nan)
    w64 = models.to(torch.float64)
    for t in np.unique(trial_of_stream):
        rows = np.flatnonzero(trial_of_stream == t)
        w = w64[rows].reshape(len(rows) * c * k, d)
        x, y = trials.pooled_train(int(t))
        z = (torch.as_tensor(x) @ w.T).view(-1, len(rows), c, k)
        yt = torch.as_tensor(y)[:, None, None]
        f = loss.loss(z, yt).mean(dim=0).numpy()
        xte, yte = trials.test(int(t))
        zte = (torch.as_tensor(xte) @ w.T).view(-1, len(rows), c, k)
        if trials.metric == "error":
            m = loss.mistakes(zte, torch.as_tensor(yte)[:, None, None]).mean(dim=0).numpy()
        else:
            resid = ((zte[..., 0] - torch.as_tensor(yte)[:, None, None]) ** 2).sum(dim=0).numpy()
            naive = float(((yte - y.mean()) ** 2).sum())
            m = np.sqrt(resid / naive)
        ok = np.isfinite(f)
        train[rows] = np.where(ok, f, np.inf)
        test[rows] = np.where(ok & np.isfinite(m), m, np.nan)
    return train, test


def run_sweep(
    trials: FederatedTrials,
    sweep: Sweep,
    *,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    max_elements: float = 6e6,
) -> SweepResult:
    """Run ``sweep`` on every trial × repetition, batched; see the module docstring.

    Trials are processed in chunks of about ``max_elements`` entries (repetitions × M ×
    configurations × k × d per trial for Local SGD, × n_max instead of d for the others); chunk c
    uses seed ``seed + 7919·c`` (results are reproducible for a given ``seed`` and ``max_elements``).
    """
    start = time.perf_counter()
    batch = sweep.batch_sizes(trials.sizes)
    sigma = _noise_table(sweep, trials, batch)
    grid = sweep.grid
    configs = len(sweep.epsilons) * len(grid)
    stepsize = np.tile(grid["stepsize"].to_numpy(float), len(sweep.epsilons))
    clip = None if sweep.clips is None else np.tile(grid["clip"].to_numpy(float), len(sweep.epsilons))
    loss = make_loss(trials.loss, trials.num_outputs)
    pool = SiloPool(trials.train_x, trials.train_y, trials.sizes, loss, seed=seed, dtype=dtype)
    k_out = trials.num_outputs
    m = sweep.silos_per_round
    if sweep.algorithm == "local-sgd":
        per_trial = sweep.reps * m * configs * k_out * trials.dim
    else:
        per_trial = sweep.reps * m * trials.train_x.shape[2] * configs * k_out
    chunk = max(1, int(max_elements // max(per_trial, 1)))
    t_count = trials.num_trials
    train = np.empty((t_count, sweep.reps, configs))
    test = np.empty((t_count, sweep.reps, configs))
    for ci, first in enumerate(range(0, t_count, chunk)):
        ts = np.arange(first, min(t_count, first + chunk))
        streams = np.repeat(ts, sweep.reps)
        common = dict(
            silos_per_round=m, stepsize=stepsize, trial_of_stream=streams, noise_std=sigma, clip=clip,
            seed=seed + 7919 * ci,
        )
        if sweep.algorithm == "mb-sgd":
            w = algorithms.mb_sgd(
                pool, rounds=sweep.rounds, batch_size=batch, output=sweep.output, window=sweep.window,
                clip_scope=sweep.clip_scope, **common,
            )
        elif sweep.algorithm == "local-sgd":
            w = algorithms.local_sgd(
                pool, rounds=sweep.rounds, local_steps=batch, output=sweep.output, window=sweep.window, **common
            )
        else:
            w = algorithms.accelerated_mb_sgd(pool, batch_size=batch, rounds=None, **common)
        f, g = evaluate(trials, w, streams)
        train[ts] = f.reshape(len(ts), sweep.reps, configs)
        test[ts] = g.reshape(len(ts), sweep.reps, configs)
    shape = (t_count, sweep.reps, len(sweep.epsilons), len(grid))
    return SweepResult(sweep, train.reshape(shape), test.reshape(shape), batch, time.perf_counter() - start)


def select(result: SweepResult) -> pd.DataFrame:
    """Per trial and ε: the grid point with the smallest mean (over reps) training loss, and its mean test metric."""
    mean_train = result.train_loss.mean(axis=1)  # [T, E, G] (inf if any repetition diverged)
    mean_test = result.test_metric.mean(axis=1)
    grid = result.sweep.grid
    rows = []
    for t in range(mean_train.shape[0]):
        for e, eps in enumerate(result.sweep.epsilons):
            losses = mean_train[t, e]
            if not np.isfinite(losses).any():
                rows.append(dict(trial=t, epsilon=eps, clip=np.nan, stepsize=np.nan, train_loss=np.inf,
                                 test_metric=np.nan, at_grid_edge=True))
                continue
            g = int(np.argmin(losses))
            rows.append(
                dict(
                    trial=t, epsilon=float(eps), clip=float(grid["clip"][g]), stepsize=float(grid["stepsize"][g]),
                    train_loss=float(losses[g]), test_metric=float(mean_test[t, e, g]),
                    at_grid_edge=bool(grid["stepsize"][g] in (min(grid["stepsize"]), max(grid["stepsize"]))),
                )
            )
    frame = pd.DataFrame(rows)
    frame.insert(0, "algorithm", result.sweep.algorithm)
    return frame


def summarize(selected: pd.DataFrame, *, cap: tuple[float, float] | None = None) -> pd.DataFrame:
    """Mean over trials per ε with the authors' "90% error bar": half-width (p95 − p5)/2.

    ``cap`` clips the percentiles (the MNIST script caps error rates to [0, 1]).
    """
    rows = []
    for (alg, eps), group in selected.groupby(["algorithm", "epsilon"], sort=True):
        values = group["test_metric"].to_numpy(float)
        values = values[np.isfinite(values)]
        if values.size == 0:
            rows.append(dict(algorithm=alg, epsilon=eps, mean=np.nan, p5=np.nan, p95=np.nan, halfwidth=np.nan,
                             trials=0))
            continue
        p5, p95 = np.percentile(values, [5, 95])
        if cap is not None:
            p5, p95 = float(np.clip(p5, *cap)), float(np.clip(p95, *cap))
        rows.append(dict(algorithm=alg, epsilon=float(eps), mean=float(values.mean()), p5=float(p5),
                         p95=float(p95), halfwidth=float((p95 - p5) / 2), trials=int(values.size)))
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- one figure panel


@dataclass(frozen=True)
class Panel:
    """One panel of Figs. 4-9: ISRL-DP MB-SGD and Local SGD against ε, and their non-private versions."""

    silos_per_round: int
    rounds: int
    epsilons: tuple[float, ...]
    mb_stepsizes: tuple[float, ...]
    local_stepsizes: tuple[float, ...]
    reps: int = 3
    clips: tuple[float, ...] | None = None
    lipschitz: float | None = None
    batch_epsilon: float | None = None
    output: str = "window"
    window: int = 8

    def sweep(self, algorithm: str, private: bool) -> Sweep:
        return Sweep(
            algorithm,
            tuple(self.epsilons) if private else (math.inf,),
            tuple(self.mb_stepsizes if algorithm == "mb-sgd" else self.local_stepsizes),
            self.rounds,
            self.silos_per_round,
            reps=self.reps,
            clips=self.clips,
            lipschitz=self.lipschitz,
            batch_epsilon=self.batch_epsilon or max(self.epsilons),
            output=self.output,
            window=self.window,
        )


@dataclass
class PanelResult:
    """Selected runs (one row per trial, ε and curve), the curves, timings and the batch sizes used."""

    panel: Panel
    selected: pd.DataFrame
    curves: pd.DataFrame
    seconds: dict
    batch_sizes: np.ndarray
    upsilon2: float = float("nan")

    def private(self, label: str) -> pd.DataFrame:
        return self.curves[self.curves["curve"] == label].reset_index(drop=True)

    def nonprivate(self, label: str) -> float:
        return float(self.curves[self.curves["curve"] == label]["mean"].iloc[0])

    def mean_at(self, label: str, epsilon: float) -> float:
        frame = self.private(label)
        return float(frame.loc[np.isclose(frame["epsilon"], epsilon), "mean"].iloc[0])


def run_panel(trials: FederatedTrials, panel: Panel, *, seed: int = 0, cap: tuple[float, float] | None = None,
              max_elements: float = 6e6) -> PanelResult:
    """Run the four curves of one panel with the App. I protocol (see :func:`run_sweep`)."""
    selected, curves, seconds, batch = [], [], {}, None
    for k, (algorithm, private) in enumerate(
        [("mb-sgd", True), ("local-sgd", True), ("mb-sgd", False), ("local-sgd", False)]
    ):
        label = LABELS[(algorithm, private)]
        result = run_sweep(trials, panel.sweep(algorithm, private), seed=seed + 100_003 * k, max_elements=max_elements)
        chosen = select(result)
        chosen.insert(0, "curve", label)
        summary = summarize(chosen, cap=cap)
        summary.insert(0, "curve", label)
        selected.append(chosen)
        curves.append(summary)
        seconds[label] = result.seconds
        batch = result.batch_sizes
    return PanelResult(panel, pd.concat(selected, ignore_index=True), pd.concat(curves, ignore_index=True), seconds,
                       batch)


def threshold_epsilon(result: PanelResult, label: str, reference: float) -> float | None:
    """Smallest tested ε from which ``label``'s mean stays at or below ``reference`` (None if never).

    Used for "ISRL-DP MB-SGD outperforms (non-private) Local SGD for ε ≥ 12" (Fig. 4).
    """
    frame = result.private(label).sort_values("epsilon")
    below = (frame["mean"] <= reference).to_numpy()
    for i in range(len(below)):
        if below[i:].all():
            return float(frame["epsilon"].iloc[i])
    return None


def relative_gain(result: PanelResult, better: str = "Noisy MB SGD", worse: str = "Noisy Local SGD") -> pd.DataFrame:
    """Per ε: (worse − better)/worse, the relative reduction of the test metric (e.g. "10–30%", Fig. 6)."""
    a, b = result.private(better), result.private(worse)
    gain = (b["mean"].to_numpy() - a["mean"].to_numpy()) / b["mean"].to_numpy()
    return pd.DataFrame({"epsilon": a["epsilon"], better: a["mean"], worse: b["mean"], "relative_gain": gain})


def best_of(selections: list[pd.DataFrame], *, key: str = "train_loss") -> pd.DataFrame:
    """Per (trial, ε), the row with the smallest ``key`` among several :func:`select` tables.

    Used to tune an extra hyperparameter swept in separate runs (e.g. the batch size K of
    the one-pass Algorithm 1, whose number of rounds ⌊n/K⌋ depends on it).
    """
    frame = pd.concat(selections, ignore_index=True)
    finite = frame[np.isfinite(frame[key])]
    best = finite.loc[finite.groupby(["trial", "epsilon"])[key].idxmin()]
    missing = frame.drop_duplicates(["trial", "epsilon"]).merge(best[["trial", "epsilon"]], how="left", indicator=True)
    missing = missing[missing["_merge"] == "left_only"].drop(columns="_merge")
    return pd.concat([best, missing], ignore_index=True).sort_values(["epsilon", "trial"]).reset_index(drop=True)
