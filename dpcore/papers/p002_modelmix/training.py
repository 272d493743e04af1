"""Paper 002's training experiments (Tables I-III, Fig. 2) as experiment grids of :mod:`dpcore.experiments`.

Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix", §5 and Appendix E.  DP-SGD with
Poisson sampling at rate q for T iterations, per-sample ℓ2 clipping to c (Algorithm 2's ℓ∞ truncation p
where stated), Gaussian noise N(0, (z·c)²) on the sum, the averaged update w ← w − η(Σ CP + Δ)/(qN), and
ModelMix (Algorithm 1) with τ = ρ·η of that averaged update (gap pushed to exactly τ, the authors' rule).

* ``002_table1`` -- Table I: the Tramèr-Boneh CNN on ScatterNet features (J = 2, L = 8; CIFAR-10 243×8×8,
  Fashion-MNIST 81×7×7), normalised by GroupNorm(27 groups, no affine parameters) on the features -- not
  Tramèr-Boneh's private data normalisation, which would cost privacy budget (0.695 of ε in the paper,
  more than the ε = 0.2 column).  Baseline ([19]): q = 8192/N, c = 0.1, η = 4, T = 700 (FMNIST 800).
  ModelMix: c = 1, η = 0.4, τ = 0.05η for the first half of the iterations and 0.025η after, **p = 1**
  (ℓ2 clipping only: the paper does not state p for Table I and the note's recommendation is p = 1).
  ε ∈ {0.2, 0.4, 0.6, 0.8, 1.0} and ∞ (each method's settings without noise), δ = 1e-5, 5 seeds (median).
* ``002_table2`` -- Table II: ResNet-20 with GroupNorm(4, no affine) and option-A shortcuts
  (:class:`dpcore.models.ResNet20`, the GEP variant; ReLU stem, not the authors' tanh stem); c = 20;
  regular DP-SGD η = 0.1 with ℓ2 clipping only (the note's default: truncation cannot improve the plain
  accounting); ModelMix η = 0.15, τ = 0.15η, p = 100; CIFAR-10 q = 1500/50000, T = 3500,
  ε ∈ {4, 5, 6, 7, 8}; SVHN q = 1830/73257, T = 4000, ε ∈ {2, 4, 5, 6, 8} (paper profile only); ∞.
  Table III (ε needed for an accuracy) reads the same grid plus a σ sweep (extra ε targets per method,
  one seed): per method the median accuracy of each ε, made non-decreasing in ε (running maximum), then
  the smallest ε at which the linear interpolation in ε reaches the accuracy (:func:`epsilon_for_accuracy`;
  the printed Tables II and III agree with each other under that interpolation to about 0.1 in ε).
* ``002_fig2`` -- Fig. 2: ResNet-20, q = 0.05, T = 2000, evaluated every 100 iterations (test accuracy and
  the training loss on 2,000 random training examples); (a, b) non-private SGD (η = 0.1: the paper gives none)
  without and with ModelMix at τ = 0.1η and 0.05η; (c, d) c = 8 and the noise z that makes regular
  DP-SGD (ε = 8, δ = 1e-5) after 2000 iterations (PLD): regular η = 0.1 and 0.2, ModelMix η = 0.2 with
  τ = 0.05η (p = 1), all with that same z.  CIFAR-10 (a, c); SVHN (b, d) in the paper profile only.

Everything uses SGD with momentum 0.9 (Tramèr and Boneh's code and the authors' code; the paper states
none: momentum is post-processing, so the accounting is unchanged), no weight decay, no learning-rate
schedule and no data augmentation (the authors' ResNet code flips and crops; the paper states none), and
reports the final iterate's test accuracy (Algorithm 1 outputs w_T; the authors' code reports the best test
accuracy over epochs, a selection on the test set).  CIFAR-10 is the publisher's copy when present, else
the JPEG q75 mirror (:func:`dpcore.data.provenance` names it in every result).

σ is calibrated per ε with each method's own accountant (:func:`calibrate`): regular DP-SGD with the
library's Poisson PLD accountant, ModelMix with :mod:`dpcore.accounting.modelmix` (Theorem 4.1 /
corrected Corollary 4.1, min with the plain bound, Balle et al. conversion) -- exactly the accountant
:func:`paper_epsilon` later applies to the run's record (:func:`dpcore.accounting.records.epsilon_for_record`).

The quick profile (labelled "reduced") is CIFAR-10 only, on seeded subsets (ScatterNet features of 1,000
training and 500 test images; 1,000 / 200 images for ResNet-20) at the paper's q, c, η and τ with far fewer
iterations and one seed, ε ∈ {0.2, 1.0, ∞} (Table I) and {8, ∞} (Table II): its numbers test the pipeline
and the direction of the comparison, not the printed accuracies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import pandas as pd

from dpcore.accounting import modelmix as mm
from dpcore.accounting.dpsgd import dpsgd_noise_multiplier
from dpcore.accounting.records import choose_accountant, epsilon_for_record
from dpcore.experiments.config import RunConfig
from dpcore.experiments.datasets import DATASETS
from dpcore.experiments.registry import Epsilon, Experiment, PlannedRun, register
from dpcore.experiments.results import results_frame
from dpcore.experiments.store import Store, decode_float
from dpcore.training.modelmix import ModelMixConfig
from dpcore.validation import check_choice, check_positive, check_positive_int

__all__ = [
    "DELTA",
    "MOMENTUM",
    "Method",
    "METHODS",
    "Grid",
    "TABLE1",
    "TABLE2",
    "FIG2",
    "FIG2_CURVES",
    "calibrate",
    "paper_epsilon",
    "plain_epsilon",
    "plan_table1",
    "plan_table2",
    "plan_fig2",
    "run_frame",
    "median_frame",
    "curves_frame",
    "epsilon_for_accuracy",
]

DELTA = 1e-5
MOMENTUM = 0.9
EXPERIMENTS = ("002_table1", "002_table2", "002_fig2")


@dataclass(frozen=True)
class Method:
    """One row of a table: clip norm c, step size η, ModelMix τ phases ((end fraction, τ/η), ...), ℓ∞ p."""

    label: str
    clip: float
    lr: float
    tau: tuple[tuple[float, float], ...] = ()
    linf_p: int | None = None

    @property
    def modelmix(self) -> bool:
        return bool(self.tau)


#: (table, method key) -> Method; Appendix E and §5.2
METHODS: dict[tuple[str, str], Method] = {
    ("table1", "dpsgd"): Method("[19] (Tramer-Boneh)", 0.1, 4.0),
    ("table1", "mm"): Method("DP-SGD + MM", 1.0, 0.4, ((0.5, 0.05), (1.0, 0.025))),
    ("table2", "dpsgd"): Method("Regular DP-SGD", 20.0, 0.1),
    ("table2", "mm"): Method("DP-SGD + MM", 20.0, 0.15, ((1.0, 0.15),), 100),
}


@dataclass(frozen=True)
class Grid:
    """One profile of a table: per data set (our data set name, model kwargs, expected batch, T, ε columns),
    subsets, evaluations, seeds, extra ε of the Table III σ sweep (one seed), reduced or not."""

    datasets: Mapping[str, tuple[str, dict[str, Any], int, int, tuple[float, ...]]]
    train_size: int | None
    test_size: int | None
    evaluations: int
    seeds: tuple[int, ...]
    sweep: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    max_physical_batch: int | None = 512
    reduced: bool = False


def _q_batch(q_num: int, q_den: int, n: int) -> int:
    """The expected batch q·n of the run's own n for the paper's q = q_num/q_den (at least 2)."""
    return max(2, round(q_num * n / q_den))


TABLE1: dict[str, Grid] = {
    "paper": Grid(
        datasets={
            "cifar10": ("cifar10_scatter", {"dataset": "cifar10"}, 8192, 700, (0.2, 0.4, 0.6, 0.8, 1.0, math.inf)),
            "fmnist": ("fmnist_scatter", {"dataset": "fmnist"}, 8192, 800, (0.2, 0.4, 0.6, 0.8, 1.0, math.inf)),
        },
        train_size=None, test_size=None, evaluations=7, seeds=(0, 1, 2, 3, 4),
    ),
    "quick": Grid(
        datasets={"cifar10": ("cifar10_scatter", {"dataset": "cifar10"}, _q_batch(8192, 50_000, 1000), 16,
                              (0.2, 1.0, math.inf))},
        train_size=1000, test_size=500, evaluations=3, seeds=(0,), reduced=True,
    ),
}  # fmt: skip
TABLE2: dict[str, Grid] = {
    "paper": Grid(
        datasets={
            "cifar10": ("cifar10", {}, 1500, 3500, (4.0, 5.0, 6.0, 7.0, 8.0, math.inf)),
            "svhn": ("svhn", {}, 1830, 4000, (2.0, 4.0, 5.0, 6.0, 8.0, math.inf)),
        },
        train_size=None, test_size=None, evaluations=7, seeds=(0, 1, 2, 3, 4),
        sweep={"dpsgd": (32.0, 64.0, 128.0, 256.0), "mm": (3.0, 10.0, 12.0)},
    ),
    "quick": Grid(
        datasets={"cifar10": ("cifar10", {}, _q_batch(1500, 50_000, 1000), 12, (8.0, math.inf))},
        train_size=1000, test_size=200, evaluations=2, seeds=(0,), reduced=True,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Fig2Grid:
    """Fig. 2 of one profile: per data set (our name, expected batch, T), subsets, evaluations, training-loss
    examples."""

    datasets: Mapping[str, tuple[str, int, int]]
    train_size: int | None
    test_size: int | None
    evaluations: int
    train_eval_size: int
    reduced: bool = False


FIG2: dict[str, Fig2Grid] = {
    "paper": Fig2Grid({"cifar10": ("cifar10", 2500, 2000), "svhn": ("svhn", 3663, 2000)}, None, None, 20, 2000),
    "quick": Fig2Grid({"cifar10": ("cifar10", 50, 12)}, 1000, 200, 3, 100, reduced=True),
}
FIG2_CLIP = 8.0
FIG2_EPSILON = 8.0
FIG2_NONPRIVATE_LR = 0.1
#: curve key -> (private, η, τ/η or None); panels (a, b) non-private, (c, d) private with one noise
FIG2_CURVES: dict[str, tuple[bool, float, float | None]] = {
    "sgd": (False, FIG2_NONPRIVATE_LR, None),
    "sgd_mm_tau0.1": (False, FIG2_NONPRIVATE_LR, 0.1),
    "sgd_mm_tau0.05": (False, FIG2_NONPRIVATE_LR, 0.05),
    "dpsgd_lr0.1": (True, 0.1, None),
    "dpsgd_lr0.2": (True, 0.2, None),
    "dpsgd_mm_lr0.2_tau0.05": (True, 0.2, 0.05),
}


# ---------------------------------------------------------------------------------------------- accounting
def _phases(tau: tuple[tuple[float, float], ...], steps: int) -> tuple[tuple[int, float], ...]:
    """(steps, τ/η) per phase exactly as the trainer applies them (ModelMixConfig.describe)."""
    described = ModelMixConfig(tau_ratio=[tuple(p) for p in tau]).describe(steps)["phases"]
    return tuple((int(p["steps"]), float(p["tau_ratio"])) for p in described)


@lru_cache(maxsize=512)
def calibrate(target_epsilon: float, *, n: int, batch_size: int, steps: int, clip: float,
              tau: tuple[tuple[float, float], ...] = (), linf_p: int | None = None) -> float:  # fmt: skip
    """The smallest noise multiplier z whose ε(δ = 1e-5) under the method's own accountant is <= the target.

    Regular DP-SGD (``tau`` empty): the Poisson-subsampled Gaussian, PLD (the library's default for a Poisson
    record).  ModelMix: :func:`dpcore.accounting.modelmix.noise_multiplier_for_epsilon` with the τ phases the
    trainer applies, ℓ∞ p, ``bound="min"`` and the Balle et al. conversion on the default orders, which is what
    :func:`dpcore.accounting.records.epsilon_for_record` computes for the finished run.
    """
    target = check_positive("target_epsilon", target_epsilon)
    n, steps = check_positive_int("n", n), check_positive_int("steps", steps)
    batch_size = check_positive_int("batch_size", batch_size)
    if not tau:
        return float(dpsgd_noise_multiplier(target, sample_rate=batch_size / n, steps=steps, delta=DELTA))
    return float(mm.noise_multiplier_for_epsilon(
        target, n=n, batch_size=float(batch_size), steps=steps, delta=DELTA, clip=clip, linf_blocks=linf_p,
        phases=list(_phases(tau, steps)), conversion="balle", bound="min",
    ))  # fmt: skip


def paper_epsilon(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε(δ = 1e-5) of a run under its method's own accountant (ModelMix's for ModelMix runs, PLD otherwise)."""
    if not config.private or float(record["noise_std"]) == 0.0:
        return Epsilon(math.inf, DELTA, "no noise: eps = inf")
    choice = choose_accountant(record)
    return Epsilon(float(epsilon_for_record(record, DELTA)), DELTA, f"{choice.description} [{choice.method}]")


def plain_epsilon(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε(δ = 1e-5) of plain DP-SGD at the run's noise (PLD): for a ModelMix run the bound without the
    envelope's amplification (mixing is post-processing of the noisy releases)."""
    if not config.private or float(record["noise_std"]) == 0.0:
        return Epsilon(math.inf, DELTA, "no noise: eps = inf")
    choice = choose_accountant(record, modelmix="plain")
    return Epsilon(float(epsilon_for_record(record, DELTA, modelmix="plain")), DELTA, choice.description)


ACCOUNTANTS = {"paper": paper_epsilon, "plain": plain_epsilon}


# ---------------------------------------------------------------------------------------------- plans
def _n_train(dataset: str, train_size: int | None) -> int:
    return DATASETS[dataset].size("train") if train_size is None else train_size


def _eps_name(eps: float) -> str:
    return "eps_inf" if math.isinf(eps) else f"eps{eps:g}"


def _table_runs(table: str, grid: Grid, profile: str, model: str) -> list[PlannedRun]:
    label = " (reduced: quick profile)" if grid.reduced else ""
    runs = []
    for key, (dataset, kwargs, batch, steps, columns) in grid.datasets.items():
        n = _n_train(dataset, grid.train_size)
        for method in ("dpsgd", "mm"):
            m = METHODS[(table, method)]
            sweep = tuple(e for e in grid.sweep.get(method, ()) if e not in columns)
            for eps in columns + sweep:
                z = 0.0 if math.isinf(eps) else calibrate(eps, n=n, batch_size=batch, steps=steps, clip=m.clip,
                                                          tau=m.tau, linf_p=m.linf_p)  # fmt: skip
                seeds = grid.seeds if eps in columns else grid.seeds[:1]
                for seed in seeds:
                    cfg = RunConfig(
                        dataset=dataset, model=model, model_kwargs=kwargs, sampling="poisson", clipping="individual",
                        batch_size=batch, clip_norm=m.clip, noise_multiplier=z, noise_convention="standard",
                        epochs=grid.evaluations, steps=steps, lr=m.lr, momentum=MOMENTUM, modelmix_tau=m.tau,
                        linf_p=m.linf_p, train_size=grid.train_size, test_size=grid.test_size, seed=seed,
                        max_physical_batch=grid.max_physical_batch, profile=profile,
                    )  # fmt: skip
                    what = "Table III sigma sweep" if eps not in columns else f"Table {table[-1]} cell"
                    note = f"{what}{label}: {m.label}, target eps {eps:g}, z = {z:.6g}"
                    runs.append(PlannedRun(f"{key}/{method}/{_eps_name(eps)}/seed{seed}", cfg, note=note))
    return runs


def _check_profile(profile: str, grids: Mapping[str, Any]) -> Any:
    check_choice("profile", profile, tuple(grids))
    return grids[profile]


def plan_table1(profile: str, lookup: Callable[[RunConfig], Any]) -> list[PlannedRun]:
    """Every run of Table I at ``profile`` (see the module docstring)."""
    return _table_runs("table1", _check_profile(profile, TABLE1), profile, "scatter_cnn")


def plan_table2(profile: str, lookup: Callable[[RunConfig], Any]) -> list[PlannedRun]:
    """Every run of Tables II and III at ``profile`` (Table II cells, then Table III's σ sweep)."""
    return _table_runs("table2", _check_profile(profile, TABLE2), profile, "resnet20")


def plan_fig2(profile: str, lookup: Callable[[RunConfig], Any]) -> list[PlannedRun]:
    """The six curves of Fig. 2 per data set at ``profile``."""
    grid: Fig2Grid = _check_profile(profile, FIG2)
    label = " (reduced: quick profile)" if grid.reduced else ""
    runs = []
    for key, (dataset, batch, steps) in grid.datasets.items():
        n = _n_train(dataset, grid.train_size)
        z = calibrate(FIG2_EPSILON, n=n, batch_size=batch, steps=steps, clip=FIG2_CLIP)
        for curve, (private, lr, rho) in FIG2_CURVES.items():
            cfg = RunConfig(
                dataset=dataset, model="resnet20", sampling="poisson", clipping="individual" if private else "none",
                batch_size=batch, clip_norm=FIG2_CLIP if private else None, noise_multiplier=z if private else 0.0,
                noise_convention="standard", epochs=grid.evaluations, steps=steps, lr=lr, momentum=MOMENTUM,
                modelmix_tau=() if rho is None else ((1.0, rho),), train_size=grid.train_size,
                test_size=grid.test_size, train_eval_size=grid.train_eval_size, max_physical_batch=512,
                profile=profile,
            )  # fmt: skip
            panel = "(c, d) same noise as regular DP-SGD at eps = 8" if private else "(a, b) non-private"
            note = f"Fig. 2 {panel}{label}: lr {lr:g}, tau {'-' if rho is None else f'{rho:g}eta'}"
            if private:
                note += f", c = {FIG2_CLIP:g}, z = {z:.6g}"
            runs.append(PlannedRun(f"{key}/{curve}", cfg, note=note))
    return runs


# ---------------------------------------------------------------------------------------------- results
def run_frame(experiment: str, profile: str, *, results_root: Any = None) -> pd.DataFrame:
    """One row per planned run with its parts (data set key, method, ε target, seed / curve) and results."""
    check_choice("experiment", experiment, EXPERIMENTS)
    frame = results_frame(experiment, profile, results_root=results_root)
    parts = frame["run"].str.split("/")
    frame["key"] = parts.str[0]
    if experiment == "002_fig2":
        frame["curve"] = parts.str[1]
    else:
        frame["method"] = parts.str[1]
        frame["target_eps"] = [math.inf if p == "eps_inf" else float(p[3:]) for p in parts.str[2]]
        frame["seed_no"] = [int(p[4:]) for p in parts.str[3]]
        frame["sweep"] = frame["note"].str.startswith("Table III sigma sweep")
    return frame


def median_frame(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (data set key, method, ε target): the median final-iterate test accuracy (percent) over the finished
    seeds, their number, the planned number, the median ε reported by the run's accountant, and z."""
    rows = []
    for (key, method, eps), group in runs.groupby(["key", "method", "target_eps"], sort=False):
        done = group[group["status"] == "done"]
        acc = done["final_accuracy"].astype(float)
        rows.append({
            "key": key, "method": method, "target_eps": eps, "seeds_done": len(done), "seeds_planned": len(group),
            "sweep": bool(group["sweep"].iloc[0]),
            "median_pct": 100 * float(acc.median()) if len(done) else math.nan,
            "min_pct": 100 * float(acc.min()) if len(done) else math.nan,
            "max_pct": 100 * float(acc.max()) if len(done) else math.nan,
            "epsilon": float(done["epsilon_paper"].astype(float).median()) if len(done) else math.nan,
            "noise_multiplier": float(group["noise_multiplier"].iloc[0]),
        })  # fmt: skip
    return pd.DataFrame(rows)


def curves_frame(profile: str, *, results_root: Any = None) -> pd.DataFrame:
    """Fig. 2's logged curves: one row per (finished run, evaluation) with the iteration, test accuracy and
    loss, and the training loss/accuracy on ``train_eval_size`` random training examples
    (:func:`dpcore.experiments.runner.train_eval_indices`)."""
    from dpcore.experiments.registry import get

    exp = get("002_fig2")
    store = Store.default(profile, exp.name, results_root=results_root)
    rows = []
    for run in exp.runs(profile, store.load):
        result = store.load(run.config)
        if result is None:
            continue
        key, curve = run.name.split("/")
        for h in result["history"]:
            rows.append({"run": run.name, "key": key, "curve": curve, "step": int(h["step"]),
                         "test_accuracy": decode_float(h["accuracy"]), "test_loss": decode_float(h["loss"]),
                         "train_loss": decode_float(h.get("train_loss")),
                         "train_accuracy": decode_float(h.get("train_accuracy"))})  # fmt: skip
    return pd.DataFrame(rows, columns=["run", "key", "curve", "step", "test_accuracy", "test_loss", "train_loss",
                                       "train_accuracy"])  # fmt: skip


def epsilon_for_accuracy(points: Sequence[tuple[float, float]], accuracy: float) -> float:
    """Table III's reading: the smallest ε at which the accuracy-vs-ε curve reaches ``accuracy``.

    ``points`` are (ε, accuracy) pairs of one method (finite ε, e.g. the medians over seeds).  The curve is
    made non-decreasing in ε (running maximum: a larger budget can always reuse a smaller one's noise) and
    interpolated linearly between points; NaN when the accuracy is not reached within the largest ε trained.
    """
    pts = sorted((float(e), float(a)) for e, a in points if math.isfinite(float(e)) and not math.isnan(float(a)))
    mono, best = [], -math.inf
    for eps, acc in pts:
        best = max(best, acc)
        mono.append((eps, best))
    for i, (eps, acc) in enumerate(mono):
        if acc >= accuracy:
            if i == 0:
                return eps  # reached at the smallest ε trained: an upper bound
            e0, a0 = mono[i - 1]  # a0 < accuracy <= acc
            return e0 + (accuracy - a0) * (eps - e0) / (acc - a0)
    return math.nan


for _name, _plan, _what in (
    ("002_table1", plan_table1, "paper 002 Table I: Tramer-Boneh CNN on ScatterNet features, DP-SGD vs ModelMix"),
    ("002_table2", plan_table2, "paper 002 Tables II/III: ResNet-20 (GroupNorm), DP-SGD vs ModelMix, sigma sweep"),
    ("002_fig2", plan_fig2, "paper 002 Fig. 2: ResNet-20, q = 0.05, T = 2000, same noise, with/without ModelMix"),
):
    register(Experiment(name=_name, description=_what, plan=_plan, accountants=ACCOUNTANTS))
