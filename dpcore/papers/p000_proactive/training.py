"""Paper 000's non-convex experiments (Figs 3, 6, 9, 10, 13, 14) as experiment grids of :mod:`dpcore.experiments`.

van Dijk, N. V. Nguyen, T. N. Nguyen, L. M. Nguyen, P. H. Nguyen, "Proactive DP: A Multiple Target Optimization
Framework for DP-SGD", Sec. 4 and App. D: n = 5 asynchronous clients plus a server (Algorithms 2–4, at most one
round of asynchrony, Υ(k, i) = [k ≥ i − 1]), each running DP-SGD with Poisson sampling of expected size s,
per-example clipping C = 0.025, noise N(0, C²σ² I) on the sum of the clipped gradients, step size
η̄_i = 0.1/(1 + 0.01·√t_i) with t_i the gradient computations before round i (Table 1, footnote ‡), δ = 1/N.

* ``000_mnist``: LeNet-5 (ReLU, max pooling), N_c = 60,000, K = 360,000 (k = 6); the s sweep of Table 4
  (σ = 12.10881, s ∈ {10, …, 370}; Figs 3b, 9), the ε sweep of Table 7 (Figs 3c, 13) and the utility graph
  (Figs 3a, 6-MNIST).
* ``000_cifar10``: the 32×32 AlexNet (23.27 M parameters), N_c = 50,000, K = 350,000 (k = 7); Table 5's s sweep
  (σ = 6.572; Fig. 10), Table 8's ε sweep (Fig. 14) and the utility graph (Fig. 6-CIFAR).  Per-example gradients
  of its 4096×4096 layer are 67 MB each: the trainer's layer engine takes their norms only (ghost norms) and
  ``max_physical_batch`` = 64 bounds the micro-batch.

Choices the paper leaves open, stated:

* clients' data (N_c is the whole training set): ``client_data="replicate"`` -- every client holds the whole
  training set (i.i.d. copies), each with its own seeded sampler and noise.  The paper's ε is per client; an
  example is in all n clients' data sets, so its guarantee over the whole system composes over n clients
  (the ``standard_all_clients`` accountant says how much);
* the non-private baseline ("non-DP") and the utility graph's w*: the same asynchronous SGD with clipping C and
  no noise (σ = 0), s = the largest of Table 4 / 5; the utility graph adds N(0, C²σ² I) to w* for each σ of
  :data:`UTILITY_SIGMAS` (several seeded draws) and reports test accuracy relative to w*'s, one curve per C of
  the profile's clip grid (each C its own noiseless run);
* asynchrony: a broadcast reaches a client one round late with probability 1/2 (seeded), the paper's threads
  are not reproducible;
* 1 seed per curve (the paper reports none); evaluation of the server's model ``evals_per_epoch`` times per epoch.

The quick profile is REDUCED (labelled on every figure): real MNIST / CIFAR-10 subsets, n = 2 clients, fewer
epochs, sample sizes scaled by N_quick/N so that the sampling rate q = s/N and σ are the paper's, and only a few
of the s and ε values.  Its accuracies are not comparable with the paper's: every printed number is a
``scale="full"`` claim (``not-run`` at quick).

Every result carries ε at δ = 1/N under paper 000's App. E.1 calculator applied to the run's (σ, s, N, K):
``paper`` (the Tables 3–8 rule σ = sqrt(2 ln(1/δ)/ε) and one γ update) and ``theorem`` (eq. (6), γ solved,
Theorem B.4's conditions checked), the library's PLD accountant of Poisson-subsampled Gaussian rounds
(``standard``, per client) and the same over all n clients' rounds (``standard_all_clients``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from dpcore.accounting.events import steps_for_sample_count
from dpcore.experiments.adapters import standard_epsilon
from dpcore.experiments.asynchronous import async_trainer
from dpcore.experiments.config import STEP_SCALINGS, RunConfig
from dpcore.experiments.datasets import PreparedData
from dpcore.experiments.registry import Epsilon, Experiment, PlannedRun, register
from dpcore.papers.p000_proactive import calculator as pr
from dpcore.papers.p000_proactive import tables
from dpcore.papers.p000_proactive.e1 import e1_evaluate
from dpcore.training.sampling import make_generator
from dpcore.training.trainer import make_classification_eval

__all__ = [
    "CLIP",
    "ETA0",
    "BETA",
    "POWER",
    "N_CLIENTS",
    "DELAY_PROB",
    "UTILITY_SIGMAS",
    "Scale",
    "SCALES",
    "EXPERIMENTS",
    "scaled_s",
    "s_run_name",
    "eps_run_name",
    "mode_run_name",
    "plan",
    "utility_graph",
    "last_round_factors",
    "paper_epsilon",
    "theorem_epsilon",
    "standard_per_client",
    "standard_all_clients",
]

CLIP = 0.025
ETA0 = 0.1
BETA = 0.01
POWER = 0.5
N_CLIENTS = 5
DELAY_PROB = 0.5
#: σ of the utility graphs (the paper's figures go to σ = 20 for MNIST and 10 for CIFAR-10)
UTILITY_SIGMAS = {"mnist": tuple(float(v) for v in range(0, 21, 2)), "cifar10": tuple(float(v) for v in range(11))}
EXPERIMENTS = {"mnist": "000_mnist", "cifar10": "000_cifar10"}
_SETTING = {"mnist": "MNIST", "cifar10": "CIFAR-10"}
_SWEEP_TABLE = {"mnist": "Table 4", "cifar10": "Table 5"}
_EPS_TABLE = {"mnist": "Table 7", "cifar10": "Table 8"}
_MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "mnist": ("lenet5", {"variant": "relu"}),
    "cifar10": ("alexnet_cifar", {}),
}


@dataclass(frozen=True)
class Scale:
    """One profile of one data set: which of the paper's runs, at which size (paper: the paper's; quick: reduced).

    ``s_sweep``: the paper's s values run at the sweep's σ (Table 4/5); ``eps_labels``: the Table 7/8 rows run;
    ``clips``: C of the noiseless runs (utility graph; the first is the paper's C and the non-private baseline).
    Sample sizes are the paper's times ``train_size / N`` (``None``: the whole training set, s unchanged), or
    ``fixed_s`` for every run (a smoke scale whose sampling rate is not the paper's).
    """

    dataset: str
    train_size: int | None
    test_size: int | None
    clients: int
    epochs: int
    s_sweep: tuple[int, ...]
    eps_labels: tuple[float, ...]
    clips: tuple[float, ...]
    utility_draws: int
    evals_per_epoch: int
    max_physical_batch: int | None
    reduced: bool
    fixed_s: int | None = None
    utility_sigmas: tuple[float, ...] | None = None  # None: UTILITY_SIGMAS[dataset]
    #: step scalings run (issue 21): "sum" (η̄·U, the default reading) first; each other mode repeats the s sweep,
    #: the ε sweep and the non-private run at the paper's C under run names prefixed "<mode>/"
    step_scalings: tuple[str, ...] = ("sum",)

    @property
    def sigmas(self) -> tuple[float, ...]:
        return UTILITY_SIGMAS[self.dataset] if self.utility_sigmas is None else self.utility_sigmas

    @property
    def N_paper(self) -> int:
        return tables.SETTINGS[_SETTING[self.dataset]].N

    @property
    def N(self) -> int:
        return self.N_paper if self.train_size is None else self.train_size


SCALES: dict[tuple[str, str], Scale] = {
    ("mnist", "paper"): Scale("mnist", None, None, N_CLIENTS, 6, (10, 25, 50, 100, 200, 300, 370),
                              (0.15007, 0.2, 0.25, 0.5, 0.75, 1.0, 2.0), (0.025, 0.05, 0.075, 0.1, 0.2), 20, 5, 512,
                              False, step_scalings=("sum", "mean")),
    ("cifar10", "paper"): Scale("cifar10", None, None, N_CLIENTS, 7, (10, 25, 50, 100, 300, 500, 689),
                                (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0), (0.025, 0.05, 0.075, 0.1, 0.2), 20, 5, 64,
                                False),
    ("mnist", "quick"): Scale("mnist", 3000, 1000, 2, 1, (100, 370), (0.15007, 0.5, 2.0), (0.025,), 3, 4, 512, True),
    ("cifar10", "quick"): Scale("cifar10", 256, 200, 2, 1, (689,), (), (0.025,), 1, 1, 64, True, fixed_s=64,
                                utility_sigmas=(0.0, 2.0, 4.0, 6.0, 8.0, 10.0)),
}  # fmt: skip


def _scale(dataset: str, profile: str) -> Scale:
    if (dataset, profile) not in SCALES:
        raise ValueError(f"(dataset, profile) must be one of {sorted(SCALES)}; got {(dataset, profile)!r}")
    return SCALES[(dataset, profile)]


def scaled_s(scale: Scale, s_paper: int) -> int:
    """The run's sample size: the paper's s times N/N_paper (≥ 1), so that q = s/N is the paper's (or ``fixed_s``)."""
    if not isinstance(scale, Scale):
        raise ValueError(f"scale must be a Scale, got {type(scale).__name__}")
    if not isinstance(s_paper, int) or s_paper < 1:
        raise ValueError(f"s_paper must be a positive int, got {s_paper!r}")
    if scale.fixed_s is not None:
        return scale.fixed_s
    return max(1, round(s_paper * scale.N / scale.N_paper))


def _sweep_sigma(dataset: str) -> float:
    return tables.TABLE_3_5[_SWEEP_TABLE[dataset]][2]


def _eps_rows(dataset: str) -> dict[float, tuple[float, int]]:
    return {eps: (sigma, s) for eps, sigma, s in tables.TABLES_6_8[_EPS_TABLE[dataset]][1]}


def s_run_name(s_paper: int) -> str:
    """Run name of the s sweep at the paper's s (Table 4/5)."""
    return f"s/{s_paper}"


def eps_run_name(dataset: str, label: float) -> str:
    """Run name of the Table 7/8 row ``label``: the s-sweep run when (σ, s) is the same (MNIST 0.15007 = s/370)."""
    sigma, s = _eps_rows(dataset)[label]
    if sigma == _sweep_sigma(dataset):
        return s_run_name(s)
    return f"eps/{label:g}"


def mode_run_name(step_scaling: str, name: str) -> str:
    """Run name of ``name`` under ``step_scaling``: unchanged for "sum" (the default reading), "<mode>/name" else."""
    if step_scaling not in STEP_SCALINGS:
        raise ValueError(f"step_scaling must be one of {STEP_SCALINGS}, got {step_scaling!r}")
    return name if step_scaling == "sum" else f"{step_scaling}/{name}"


def _config(sc: Scale, profile: str, *, s: int, sigma: float, clip: float, step_scaling: str = "sum") -> RunConfig:
    model, kwargs = _MODELS[sc.dataset]
    return RunConfig(
        dataset=sc.dataset, model=model, model_kwargs=kwargs, sampling="poisson", clipping="individual",
        batch_size=scaled_s(sc, s), clip_norm=clip, noise_multiplier=sigma, noise_convention="standard",
        epochs=sc.epochs, lr=ETA0, train_size=sc.train_size, test_size=sc.test_size, seed=0,
        max_physical_batch=sc.max_physical_batch, profile=profile, clients=sc.clients, client_data="replicate",
        delay_prob=DELAY_PROB, lr_beta=BETA, lr_power=POWER, evals_per_epoch=sc.evals_per_epoch,
        step_scaling=step_scaling,
    )  # fmt: skip


def plan(dataset: str, profile: str) -> list[PlannedRun]:
    """The runs of ``dataset`` at ``profile``: s sweep, ε sweep (rows equal to an s-sweep run are not repeated),
    noiseless runs per C (non-private baseline and utility graph); then, for each further step scaling of the
    scale (issue 21), the s sweep, the ε sweep and the non-private run at the paper's C under "<mode>/" names."""
    sc = _scale(dataset, profile)
    label = "; REDUCED (quick profile)" if sc.reduced else ""
    sweep_sigma = _sweep_sigma(dataset)
    rows = _eps_rows(dataset)
    s_np = max(tables.TABLE_3_5[_SWEEP_TABLE[dataset]][4])
    runs: list[PlannedRun] = []
    for mode in sc.step_scalings:
        tag = "" if mode == "sum" else f"; step_scaling={mode} (η̄·U/s_i, §2's reading)"
        mode_runs = []
        for s in sc.s_sweep:
            note = (f"{_SWEEP_TABLE[dataset]} s sweep: paper s = {s}, run s = {scaled_s(sc, s)}, "
                    f"σ = {sweep_sigma:g}{tag}{label}")  # fmt: skip
            cfg = _config(sc, profile, s=s, sigma=sweep_sigma, clip=CLIP, step_scaling=mode)
            mode_runs.append(PlannedRun(mode_run_name(mode, s_run_name(s)), cfg, note=note))
        names = {r.name for r in mode_runs}
        for eps in sc.eps_labels:
            sigma, s = rows[eps]
            name = mode_run_name(mode, eps_run_name(dataset, eps))
            if name in names:
                continue
            note = (f"{_EPS_TABLE[dataset]} row ε = {eps:g}: σ = {sigma:g}, paper s = {s}, "
                    f"run s = {scaled_s(sc, s)}{tag}{label}")  # fmt: skip
            cfg = _config(sc, profile, s=s, sigma=sigma, clip=CLIP, step_scaling=mode)
            mode_runs.append(PlannedRun(name, cfg, note=note))
        for clip in sc.clips if mode == "sum" else sc.clips[:1]:
            note = (f"noiseless (σ = 0) clipped SGD, C = {clip:g}, paper s = {s_np}: non-private baseline / "
                    f"utility w*{tag}{label}")  # fmt: skip
            cfg = _config(sc, profile, s=s_np, sigma=0.0, clip=clip, step_scaling=mode)
            mode_runs.append(PlannedRun(mode_run_name(mode, f"nonprivate/C{clip:g}"), cfg, note=note))
        runs.extend(mode_runs)
    return runs


def last_round_factors(cfg: RunConfig, n_local: int) -> dict[str, float]:
    """Scale of the Gaussian noise that the last server round adds to the final model, relative to N(0, C²σ² I)
    (issue 21: the perturbation that actually reaches the last iterate, beside the utility graph's printed reading).

    The last round i = T of each of the n clients adds η̄_T times its noise N(0, C²σ² I) (Algorithm 4, ``sum``) or
    η̄_T/s times it (``mean``: §2's step size scaled inversely with s); the n clients' noises are independent, so
    together they add N(0, (f·Cσ)² I) with f = η̄_T·√n (sum) or η̄_T·√n/s (mean), η̄_T = η_0/(1 + β t_T^p) and
    t_T = (T − 1)·s (Table 1, footnote ‡), T = round(kN/s) (:func:`~dpcore.accounting.events.steps_for_sample_count`).
    ``printed`` is the paper's own reading f = 1 (App. D.2: w* + N(0, C²σ² I)).
    """
    if not isinstance(cfg, RunConfig):
        raise ValueError(f"cfg must be a RunConfig, got {type(cfg).__name__}")
    n_local = int(n_local)
    if n_local < cfg.batch_size:
        raise ValueError(f"n_local must be >= batch_size={cfg.batch_size}, got {n_local}")
    steps = steps_for_sample_count(cfg.epochs, n_local, cfg.batch_size)
    eta_last = cfg.lr / (1.0 + cfg.lr_beta * ((steps - 1) * cfg.batch_size) ** cfg.lr_power)
    root_n = math.sqrt(cfg.clients)
    return {"printed": 1.0, "last_round_sum": eta_last * root_n, "last_round_mean": eta_last * root_n / cfg.batch_size}


def utility_graph(cfg: RunConfig, data: PreparedData, model: torch.nn.Module) -> dict[str, Any]:
    """Paper 000's utility graph (Sec. 3.3, App. D.2) of a noiseless run: test accuracy of w* + N(0, (f·Cσ)² I) for
    each σ of the profile's grid (:data:`UTILITY_SIGMAS`), several seeded draws each, beside w*'s own accuracy
    (empty for a noisy run).  ``accuracy`` is the paper's reading f = 1; ``readings`` adds, labelled, the scales f
    of :func:`last_round_factors` (the noise the last round really adds under each step scaling), drawn with the
    same seeds."""
    if cfg.noise_multiplier != 0 or cfg.clip_norm is None:
        return {}
    sc = _scale(cfg.dataset, cfg.profile)
    evaluate = make_classification_eval(*data.evaluation, prefix="test")
    params = [p for p in model.parameters() if p.requires_grad]
    w_star = [p.detach().clone() for p in params]
    base = evaluate(model)["test_accuracy"]
    factors = last_round_factors(cfg, int(data.train[0].shape[0]))

    def curve(factor: float) -> list[list[float]]:
        accuracy = []
        for i, sigma in enumerate(sc.sigmas):
            row = []
            for d in range(sc.utility_draws if sigma > 0 else 1):
                gen = make_generator(cfg.seed, "utility", i, d, device=params[0].device)
                with torch.no_grad():
                    for p, w in zip(params, w_star, strict=True):
                        noise = torch.randn(p.shape, generator=gen, device=p.device, dtype=p.dtype)
                        p.copy_(w + factor * cfg.clip_norm * sigma * noise)
                row.append(evaluate(model)["test_accuracy"])
            accuracy.append(row)
        return accuracy

    accuracy = curve(1.0)
    readings = {name: {"factor": f, "accuracy": curve(f)} for name, f in factors.items() if name != "printed"}
    with torch.no_grad():
        for p, w in zip(params, w_star, strict=True):
            p.copy_(w)
    return {"utility": {"clip_norm": cfg.clip_norm, "sigmas": list(sc.sigmas),
                        "base_accuracy": base, "accuracy": accuracy, "readings": readings}}  # fmt: skip


# --------------------------------------------------------------------------- accountants
def _run_numbers(record: Mapping[str, Any]) -> tuple[float, int, int, float, float]:
    """(σ, s, N, K, δ = 1/N) of a client's run record (σ = noise std / C, K = T·s planned)."""
    clip = float(record["clip_norm"])
    sigma = float(record["noise_std"]) / clip if record.get("noise_std") else 0.0
    s = int(record["batch_size"])
    N = int(record["dataset_size"])
    return sigma, s, N, float(record["steps"]) * s, 1.0 / N


def _e1_epsilon(record: Mapping[str, Any], mode: str) -> Epsilon:
    sigma, s, N, K, delta = _run_numbers(record)
    if sigma == 0:
        return Epsilon(math.inf, delta, "no noise: ε = ∞")
    if sigma**2 <= 2 and mode == "theorem":
        return Epsilon(math.nan, delta, f"σ = {sigma:g}: eq. (6) needs σ² > 2")
    where = f"paper 000 at (σ = {sigma:.6g}, s = {s}, N = {N}, K = {K:.0f}, δ = 1/N)"
    if mode == "paper":
        r = e1_evaluate(s, N, K, delta=delta, mode="paper")  # the ε Tables 6–8 give s (j = 0, one γ update)
        eps_sigma = pr.epsilon(sigma, delta, mode="paper")  # the ε Tables 3–5 give σ: 2 ln(1/δ)/σ²
        value = max(eps_sigma, r.epsilon)
        label = (f"{where}, paper mode: max(2 ln(1/δ)/σ² = {eps_sigma:.5g} (Tables 3–5), E.1 one-step ε of s = "
                 f"{r.epsilon:.5g} (Tables 6–8))")  # fmt: skip
    else:
        r = e1_evaluate(s, N, K, delta=delta, sigma_j=sigma, mode="theorem")  # (34), (35) with γ solved
        value = r.epsilon
        label = f"{where}, theorem mode: Thm B.4 with eq. (6) and γ the smallest solution"
    conds = ", ".join(f"({k}) {'ok' if v else 'FAILS'}" for k, v in r.conditions.items())
    label += f"; γ = {r.gamma:.4g}; {conds}"
    if not r.admissible:
        return Epsilon(math.nan, delta, label + ": no guarantee")
    return Epsilon(value, delta, label)


def paper_epsilon(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε per client at δ = 1/N as the paper's tables compute it: the larger of 2 ln(1/δ)/σ² (Tables 3–5) and the
    App. E.1 one-step ε of the run's s (Tables 6–8); NaN when (32)/(33) fail."""
    return _e1_epsilon(record, "paper")


def theorem_epsilon(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε per client at δ = 1/N by Theorem B.4 exactly: the smallest ε with σ ≥ eq. (6)'s σ and (34) for γ the smallest
    solution (App. E.1 with σ_j = σ); NaN when (32)/(33) fail."""
    return _e1_epsilon(record, "theorem")


def standard_per_client(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε per client at δ = 1/N by the library's accountant (PLD of T Poisson-subsampled Gaussian rounds)."""
    delta = 1.0 / int(record["dataset_size"])
    value, how = standard_epsilon(record, delta)
    return Epsilon(value, delta, f"per client: {how}")


def standard_all_clients(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε at δ = 1/N of one example over all n clients' rounds when every client holds it (replicated data):
    the composition of n·T rounds; per client otherwise."""
    n = int((record.get("async") or {}).get("n_clients", 1))
    if config.client_data != "replicate" or n == 1:
        return standard_per_client(record, config)
    delta = 1.0 / int(record["dataset_size"])
    planned = int(record.get("planned_steps") or record["steps"])
    steps = {"steps": int(record["steps"]) * n, "planned_steps": planned * n}
    value, how = standard_epsilon({**record, **steps}, delta)
    return Epsilon(value, delta, f"all {n} clients (replicated data: n·T = {int(record['steps']) * n} rounds): {how}")


ACCOUNTANTS: dict[str, Callable[[Mapping[str, Any], RunConfig], Epsilon]] = {
    "paper": paper_epsilon,
    "theorem": theorem_epsilon,
    "standard": standard_per_client,
    "standard_all_clients": standard_all_clients,
}

_trainer = functools.partial(async_trainer, final_extras=utility_graph)

_DESCRIPTIONS = {
    "mnist": "paper 000 Figs 3, 6, 9, 13: LeNet-5 MNIST, 5 async clients, C=0.025, K=360,000 (Tables 4, 7)",
    "cifar10": "paper 000 Figs 6, 10, 14: AlexNet CIFAR-10, 5 async clients, C=0.025, K=350,000 (Tables 5, 8)",
}


def _experiment(dataset: str) -> Experiment:
    """The registered experiment of ``dataset``: its plan (:func:`plan`), the four accountants, the async trainer."""
    return register(
        Experiment(
            name=EXPERIMENTS[dataset],
            description=_DESCRIPTIONS[dataset],
            plan=lambda profile, lookup: plan(dataset, profile),
            accountants=ACCOUNTANTS,
            trainer=_trainer,
        )
    )


MNIST_EXPERIMENT, CIFAR10_EXPERIMENT = (_experiment(dataset) for dataset in EXPERIMENTS)
