"""Paper 003, Table 3 and Figure 1 (App. H) as an experiment grid of :mod:`dpcore.experiments`.

van Dijk, P. H. Nguyen, T. N. Nguyen, L. M. Nguyen, "Generalizing DP-SGD with Shuffling and Batch
Clipping", App. H: LeNet-5 on MNIST (the full 60,000 training images) and the Table 4 CNN (plus the
final Linear(128, 10) the table omits) on CIFAR-10; σ = 2; Algorithm 1's replace-one noise
N(0, (2Cσ)² I) added to Σ_h [a_h]_C and divided by m (eq. (22)); plain SGD with initial step 0.025,
multiplied by 0.9 after an epoch whose test accuracy dropped; E = 100 epochs;
|S_b| = m·s ∈ {64, 128, 256, 512, 1024}; subsampling (SS: a fixed-size uniform subset per round) and
shuffling (SH: a permutation per epoch cut into blocks, the remainder dropped) × individual (IC, s = 1),
batch (BC, m = 1) and mixed clipping (MC, s = 64, m ∈ {2, 4, 8, 16}); non-private mini-batch SGD with
the same sampling (NP).

Choices the paper leaves open, stated:

* |S_b| = 1024, not the printed "1028" (Fig. 1 caption): MC with s = 64, m = 16 is 1024 and 1028 is not
  a multiple of 64;
* C is "fine-tuned for each separate setting" with no values given: here each (data set, sampling,
  clipping, |S_b|) cell tunes C over :data:`C_GRID` on a validation split of 5,000 examples carved
  from the training set (seeded; never the test set), training on the rest for 5 epochs (a twentieth
  of E, so that the six tuning runs of a cell cost about 0.3 of the cell itself: the full-scale MNIST
  runs had to fit on one CPU) with the same learning-rate rule watching the validation accuracy; the C with
  the best validation accuracy (any epoch; ties to the smaller C) is then trained on the full training
  set with the test accuracy driving the step-size rule, as App. H describes; where that C sits at an end
  of the grid the grid is continued (:func:`tuning_grid`, :data:`C_EXTEND_UP` / :data:`C_EXTEND_DOWN`, issue
  44) until the optimum is interior;
* one seed per cell (the paper reports no seeds or repeats).

The quick profile (labelled "reduced") keeps the paper's model, σ, step-size rule and samplers on real
MNIST, with |S_b| = 64 only, 3 epochs on a seeded 16,000-image training subset, a 2,000-image test subset
and a fixed C = 1 (no tuning): its 6 runs (SS/SH × IC/BC/NP) train in about a minute and a half on one CPU
thread; the non-private runs pass 90 %, IC learns and batch clipping as printed does not (erratum A10).  MC
(m ≥ 2 groups of 64) and CIFAR-10 (its CNN stays near chance within CPU minutes) are left out of it.

Run names: ``<dataset>/<SS|SH>/<IC|BC|MC|NP>/b<|S_b|>`` for the Table 3 / Fig. 1 runs and
``.../tune/C<value>`` for the tuning runs.  Every result carries ε at δ = 1e-5 under the paper's
adversary A_1 (Def. 5.2, exact) and under the standard adversary A_0 (labelled; the paper analyses A_0
for subsampling only, so shuffled runs report it as not analysed).

Paper profile only, the authors' practices as named modes (issue 21; :data:`MODES`, each with its source in the
authors' public repository): MNIST at |S_b| = 1024, SS and SH, runs ``mnist/<SS|SH>/<IC|BC>/b1024/mode/<mode>``
(tuning ``.../mode/<mode>/tune/C<value>`` over :data:`MODE_C_GRID` on the validation split, as above), and IC
under Algorithm 1 with the C grid extended by the authors' ``large_C`` set (:data:`LARGE_C`,
``.../mode/largeC``).  They leave the Table 3 cells (names, configurations, hashes) unchanged; :func:`cell_frame`
leaves them out and :func:`mode_frame` reports them, each with the ε of the mechanism that ran (the records
carry the effective clip norm and σ, see :meth:`dpcore.training.TrainConfig.accounted`) beside the paper's claim
(A_1 at the nominal σ = 2, :func:`claimed_epsilon`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dpcore.experiments.adapters import standard_epsilon
from dpcore.experiments.config import RunConfig
from dpcore.experiments.registry import Epsilon, Experiment, PlannedRun, register
from dpcore.experiments.results import results_frame

__all__ = [
    "SIGMA",
    "LR0",
    "LR_DECAY",
    "EPOCHS",
    "BATCH_SIZES",
    "MC_GROUP",
    "C_GRID",
    "C_EXTEND_UP",
    "C_EXTEND_DOWN",
    "tuning_grid",
    "DELTA",
    "SAMPLINGS",
    "FAMILIES",
    "MODELS",
    "GridSettings",
    "SETTINGS",
    "cells",
    "plan_table3",
    "paper_epsilon",
    "a0_epsilon",
    "cell_frame",
    "table3_frame",
    "LARGE_C",
    "MODE_C_GRID",
    "MODE_BATCH",
    "Mode",
    "MODES",
    "plan_modes",
    "claimed_epsilon",
    "mode_frame",
    "CLOSEST_C",
    "CLOSEST_SEEDS",
    "closest_clip",
    "plan_closest",
]

SIGMA = 2.0
LR0 = 0.025
LR_DECAY = 0.9
EPOCHS = 100
#: |S_b| of Fig. 1; the caption prints 1028 for the largest, we use 1024 (see the module docstring)
BATCH_SIZES = (64, 128, 256, 512, 1024)
MC_GROUP = 64
#: the clip norms tried per cell (the paper gives none; wide because IC clips per-sample gradients and
#: BC the batch-mean gradient, whose norms differ by orders of magnitude)
C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
#: issue 44: where a cell's best C sits at an end of the grid, the grid is continued one value at a time in this
#: order until the optimum is interior (or the continuation is used up, said in the run's note).  Upwards 10 and
#: 20 are the values the authors' large_C set shares (at |S_b| = 1024 IC's optimum over C_GRID + large_C was 20),
#: so a continuation reuses those committed tuning runs (same configuration, same hash).
C_EXTEND_UP = (10.0, 20.0, 50.0, 100.0, 200.0)
C_EXTEND_DOWN = (0.003, 0.001)
DELTA = 1e-5
#: paper's label -> sampler of :mod:`dpcore.training.sampling`
SAMPLINGS = {"SS": "fixed", "SH": "shuffle"}
#: paper's label -> clipping of :mod:`dpcore.training.config`
FAMILIES = {"IC": "individual", "BC": "batch", "MC": "mixed", "NP": "none"}
#: data set -> (model name in dpcore.models, model keyword arguments)
MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "mnist": ("lenet5", {"variant": "classic"}),
    "cifar10": ("cnn003", {"in_channels": 3, "num_classes": 10}),
}
EXPERIMENT = "003_table3"
#: the authors' ``large_C`` grid: repository MisaNguyen/DPSGD, commit 8186d9f9667be0cc73937a6b82ac458754e72206,
#: PyTorchProjectFramework/settings_clipping_exp_cifar10_dpsgd_large_C_shuffling_IC.json (and ..._subsampling_IC),
#: "max_grad_norm" 6.0, 7.0, 8.0, 9.0, 10.0 and 20.0 at σ = 2 for each |S_b| of 64 ... 1024 (their main grid,
#: settings_clipping_exp_cifar10_dpsgd_shuffling_IC.json at the same commit: 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2)
LARGE_C = (6.0, 7.0, 8.0, 9.0, 10.0, 20.0)
#: the C tried for each tuned mode: :data:`C_GRID` plus the ends of the authors' large set (the modes move the
#: optimum: m times less noise favours a larger C, an m times larger step a smaller one)
MODE_C_GRID = (*C_GRID, 10.0, 20.0)
MODE_DATASET = "mnist"
MODE_BATCH = 1024
#: the authors' learning-rate rule (ties decay, from the third epoch; dpcore.training.schedules.DecayOnNoImprovement)
AUTHORS_LR_RULE = "decay_on_no_improvement"


@dataclass(frozen=True)
class GridSettings:
    """One profile of the grid (the paper profile is App. H; the quick one is a labelled reduction).

    A ``c_grid`` of one value means no tuning: every private cell uses that C.
    """

    datasets: tuple[str, ...]
    batch_sizes: tuple[int, ...]
    epochs: Mapping[str, int]
    tune_epochs: int
    c_grid: tuple[float, ...]
    train_size: Mapping[str, int | None]
    validation_size: Mapping[str, int]
    test_size: Mapping[str, int | None]
    seeds: tuple[int, ...] = (0,)
    max_physical_batch: int | None = 512
    reduced: bool = False


SETTINGS: dict[str, GridSettings] = {
    "paper": GridSettings(
        datasets=("mnist", "cifar10"),
        batch_sizes=BATCH_SIZES,
        epochs={"mnist": EPOCHS, "cifar10": EPOCHS},
        tune_epochs=5,
        c_grid=C_GRID,
        train_size={"mnist": None, "cifar10": None},
        validation_size={"mnist": 5000, "cifar10": 5000},
        test_size={"mnist": None, "cifar10": None},
    ),
    # Quick (issue 25): MNIST only, at the smallest scale where the non-private runs pass 90 % and the effect the
    # full-scale runs show is visible (IC learns, BC as printed does not: erratum A10): 16,000 images, 3 epochs,
    # |S_b| = 64 (750 steps at the paper's eta).  MC needs m >= 2 groups of 64 and CIFAR-10's CNN stays at chance
    # at any CPU-minutes budget: neither is in this grid (their cells read "not in this profile's grid").
    "quick": GridSettings(
        datasets=("mnist",),
        batch_sizes=(64,),
        epochs={"mnist": 3},
        tune_epochs=1,
        c_grid=(1.0,),
        train_size={"mnist": 16000},
        validation_size={"mnist": 0},
        test_size={"mnist": 2000},
        reduced=True,
    ),
}


def cells(settings: GridSettings) -> list[tuple[str, str, str, int]]:
    """(data set, sampling label, family label, |S_b|) of every Table 3 / Fig. 1 cell (MC needs m ≥ 2)."""
    out = []
    for dataset in settings.datasets:
        for sampling in SAMPLINGS:
            for family in FAMILIES:
                for batch in settings.batch_sizes:
                    if family == "MC" and (batch % MC_GROUP or batch // MC_GROUP < 2):
                        continue
                    out.append((dataset, sampling, family, batch))
    return out


def _config(settings: GridSettings, profile: str, dataset: str, sampling: str, family: str, batch: int,
            *, clip: float | None, tune: bool, seed: int) -> RunConfig:  # fmt: skip
    model, kwargs = MODELS[dataset]
    private = family != "NP"
    return RunConfig(
        dataset=dataset,
        model=model,
        model_kwargs=kwargs,
        sampling=SAMPLINGS[sampling],
        clipping=FAMILIES[family],
        group_size=MC_GROUP if family == "MC" else None,
        batch_size=batch,
        clip_norm=clip if private else None,
        noise_multiplier=SIGMA if private else 0.0,
        noise_convention="replace_one",
        epochs=settings.tune_epochs if tune else settings.epochs[dataset],
        lr=LR0,
        lr_rule="decay_on_drop",
        lr_decay=LR_DECAY,
        train_size=settings.train_size[dataset],
        validation_size=settings.validation_size[dataset] if tune else 0,
        test_size=settings.test_size[dataset],
        eval_split="validation" if tune else "test",
        seed=seed,
        max_physical_batch=settings.max_physical_batch,
        profile=profile,
    )


def _best_c(results: list[tuple[float, Mapping[str, Any]]]) -> float:
    """The C whose tuning run reached the highest validation accuracy (ties: the smaller C)."""
    return min(results, key=lambda cr: (-float(cr[1]["best_accuracy"]), cr[0]))[0]


def tuning_grid(base: tuple[float, ...], result: Callable[[float], Mapping[str, Any] | None]
                ) -> tuple[tuple[float, ...], str]:  # fmt: skip
    """The C values a cell tunes over (issue 44): ``base``, continued by :data:`C_EXTEND_UP` /
    :data:`C_EXTEND_DOWN` one value at a time while the best finished value (:func:`_best_c`) sits at the
    grid's top / bottom.  Returns the grid (ascending) and ``""`` when the optimum is interior or some run is
    still missing, else ``"top"`` / ``"bottom"``: the continuation is used up with the optimum still at that end.

    ``result(c)`` is the finished tuning run at ``c`` or None.  The grid only grows once every value in it has a
    result, so a plan never asks for a continuation before the runs that motivate it have finished.
    """
    if not base or any(c <= 0 for c in base):
        raise ValueError(f"base must be a non-empty tuple of positive C values, got {base!r}")
    grid = sorted(base)
    up = [c for c in C_EXTEND_UP if c > grid[-1]]
    down = [c for c in C_EXTEND_DOWN if c < grid[0]]
    while True:
        done = [(c, result(c)) for c in grid]
        if any(res is None for _, res in done):
            return tuple(grid), ""
        best = _best_c(done)  # type: ignore[arg-type]
        if len(grid) > 1 and best == grid[-1]:
            if not up:
                return tuple(grid), "top"
            grid.append(up.pop(0))
        elif len(grid) > 1 and best == grid[0]:
            if not down:
                return tuple(grid), "bottom"
            grid.insert(0, down.pop(0))
        else:
            return tuple(grid), ""


def plan_table3(profile: str, lookup: Callable[[RunConfig], Mapping[str, Any] | None]) -> list[PlannedRun]:
    """Every run of the Table 3 / Fig. 1 grid at ``profile`` (tuning runs first, then the cells)."""
    if profile not in SETTINGS:
        raise ValueError(f"profile must be one of {', '.join(map(repr, SETTINGS))}; got {profile!r}")
    st = SETTINGS[profile]
    return _plan_cells(st, profile, cells(st), lookup) + plan_modes(profile, lookup) + plan_closest(profile, lookup)


def _plan_cells(st: GridSettings, profile: str, cells_: list[tuple[str, str, str, int]],
                lookup: Callable[[RunConfig], Mapping[str, Any] | None]) -> list[PlannedRun]:  # fmt: skip
    """The tuning runs and the final runs of ``cells_`` (see :func:`plan_table3`)."""
    label = " (reduced: quick profile)" if st.reduced else ""
    runs: list[PlannedRun] = []
    for dataset, sampling, family, batch in cells_:
        base = f"{dataset}/{sampling}/{family}/b{batch}"
        clip: float | None = None
        ready, waits, note = True, (), f"Table 3 / Fig. 1 cell{label}"
        if family != "NP" and len(st.c_grid) == 1:
            clip = st.c_grid[0]
            note += f"; C = {clip:g} fixed (no tuning)"
        elif family != "NP":

            def tune_cfg(c: float, _cell: tuple = (dataset, sampling, family, batch)) -> RunConfig:
                return _config(st, profile, *_cell, clip=c, tune=True, seed=st.seeds[0])

            grid, edge = tuning_grid(st.c_grid, lambda c: lookup(tune_cfg(c)))
            tuned = []
            for c in grid:
                name = f"{base}/tune/C{c:g}"
                runs.append(PlannedRun(name, tune_cfg(c), note=f"C tuning on a validation split{label}"))
                tuned.append((c, name, lookup(tune_cfg(c))))
            missing = tuple(name for _, name, res in tuned if res is None)
            if missing:
                clip, ready, waits = st.c_grid[0], False, missing
                note += "; C pending tuning (placeholder)"
            else:
                clip = _best_c([(c, res) for c, _, res in tuned])  # type: ignore[misc]
                note += f"; C = {clip:g} chosen on the validation split over {len(grid)} values"
                if edge:
                    note += f" (at the {edge} end of the grid: its continuation is used up)"
        for seed in st.seeds:
            name = base if len(st.seeds) == 1 else f"{base}/seed{seed}"
            cfg = _config(st, profile, dataset, sampling, family, batch, clip=clip, tune=False, seed=seed)
            runs.append(PlannedRun(name, cfg, ready=ready, waits_for=waits, note=note))
    return runs


@dataclass(frozen=True)
class Mode:
    """One of the authors' practices as a named run mode (issue 21): its name (the authors' code version, a path in
    the grid), the family it applies to (IC or BC), the clip scope, noise placement (the mechanism, by what it
    clips, where the noise enters and what divides it) and learning-rate rule it sets, whether C is tuned for it
    (else the Table 3 cell's C is reused), and what it reproduces (``source``: repository MisaNguyen/DPSGD, commit,
    file, line)."""

    name: str
    family: str
    clip_scope: str
    noise_placement: str
    lr_rule: str
    tuned: bool
    source: str


#: The modes, in the order that changes one thing at a time from Algorithm 1 (the Table 3 cell): the authors'
#: learning-rate rule, then their per-tensor clipping, then their noise placements (with per-tensor clipping, as
#: their code ran).  For BC (m = 1) the two ``*_noise_over_m`` placements equal Algorithm 1, so BC gets the HEAD
#: file's placement instead.  A mode's *name* is the authors' code version it reproduces (the run names and claim
#: keys of the grid); its ``noise_placement`` is the mechanism (:data:`dpcore.training.config.NOISE_PLACEMENTS`).
#:
#: Provenance (repository MisaNguyen/DPSGD, PyTorchProjectFramework/; line numbers of that commit's file;
#: ``Normal(0, s)`` there is torch.distributions.Normal with standard deviation s):
#:
#: * ``algorithm1``: also the authors' code at a3b48f6ff9a96bfb8aa995480d2e368ac9cbc29c, CIFAR10_train.py line 471
#:   ``param.grad = (param.grad + noise).div(len(micro_train_loader))``.
#: * ``authors_8186d9f`` -> ``clipped_mean_noise_over_m``: commit 8186d9f9667be0cc73937a6b82ac458754e72206 ("MNIST
#:   training"; main.py line 126 ``args.dataset_name = "MNIST"``), CIFAR10_train.py: the micro-batch gradients are
#:   summed unclipped (lines 424-427; the per-micro-batch clip at 406-422 is commented out), averaged (line 436
#:   ``net1[1].grad = net2[1].sum_grad.div(len(micro_train_loader)) # Averaging the gradients``), clipped once
#:   (line 460), and the noise ``Normal(0, 2 * args.noise_multiplier * args.max_grad_norm)`` (lines 464-465) is
#:   divided by m (line 472 ``param.grad = param.grad + noise.div(len(micro_train_loader))``).
#: * ``authors_93f6075`` -> ``clipped_sum_noise_over_m``: commit 93f6075e507afadb350eded668b364efeb29b07d ("Switch
#:   to Marten Algo"), CIFAR10_train.py: each micro-batch gradient clipped (line 422), summed (lines 424-427), not
#:   averaged (line 435 ``net1[1].grad = net2[1].sum_grad``), noise divided by m (line 472).
#: * ``bc_divided_by_batch`` -> ``clipped_mean_noise_over_batch``: commit cb9d35549259207723063405f898d8bc507b61a0
#:   (HEAD), train_model_BC_FGC.py ``generate_private_grad``: the batch-mean gradient (lines 24-27) clipped as one
#:   vector (lines 37-44), ``std = sigma*const_C`` (line 48), ``param.grad = (grad*batch_size + noise)/batch_size``
#:   (line 56).
MODES = (
    Mode("lr_authors", "IC", "global", "algorithm1", AUTHORS_LR_RULE, False,
         "the authors' step-size rule only (main.py lines 293-295 at 8186d9f: decay when the test accuracy did "
         "not increase, from epoch 3); C of the Table 3 cell"),
    Mode("per_tensor", "IC", "per_tensor", "algorithm1", AUTHORS_LR_RULE, True,
         "a3b48f6 (MNIST): (Σ_h [a_h]_C + N(0, (2Cσ)²))/m, each parameter tensor clipped to C"),
    Mode("authors_8186d9f", "IC", "per_tensor", "clipped_mean_noise_over_m", AUTHORS_LR_RULE, True,
         "8186d9f / f1fa40f / a9b66bf (MNIST), CIFAR10_train.py lines 436, 460, 472: the batch-mean gradient "
         "clipped per tensor, noise N(0, (2Cσ)²)/m"),
    Mode("authors_93f6075", "IC", "per_tensor", "clipped_sum_noise_over_m", AUTHORS_LR_RULE, True,
         "93f6075 (CIFAR-10 there), CIFAR10_train.py lines 422, 435, 472: Σ_h [a_h]_C per tensor + N(0, (2Cσ)²)/m, "
         "the sum not divided by m"),
    Mode("lr_authors", "BC", "global", "algorithm1", AUTHORS_LR_RULE, False,
         "the authors' step-size rule only; C of the Table 3 cell as tuned over C_GRID (before issue 44's "
         "continuation)"),
    Mode("per_tensor", "BC", "per_tensor", "algorithm1", AUTHORS_LR_RULE, True,
         "per-tensor clipping of the batch-mean gradient, Algorithm 1's noise N(0, (2Cσ)²)"),
    Mode("bc_divided_by_batch", "BC", "global", "clipped_mean_noise_over_batch", AUTHORS_LR_RULE, True,
         "cb9d355 (HEAD) train_model_BC_FGC.py lines 24-56: [ā]_C + N(0, (Cσ)²)/|S_b|"),
)  # fmt: skip


def _mode_config(base: RunConfig, mode: Mode) -> RunConfig:
    return base.with_(clip_scope=mode.clip_scope, noise_placement=mode.noise_placement, lr_rule=mode.lr_rule)


def _tuned(st: GridSettings, profile: str, sampling: str, family: str, grid: tuple[float, ...], prefix: str,
           lookup: Callable[[RunConfig], Mapping[str, Any] | None], mode: Mode | None,
           runs: list[PlannedRun] | None) -> tuple[list[tuple[float, Mapping[str, Any]]], tuple[str, ...]]:  # fmt: skip
    """Tuning runs of one (mode) cell at :data:`MODE_BATCH`: appended to ``runs`` (when given) under ``prefix``;
    returns the finished (C, result) pairs and the names of the unfinished ones."""
    done, missing = [], []
    for c in grid:
        cfg = _config(st, profile, MODE_DATASET, sampling, family, MODE_BATCH, clip=c, tune=True, seed=st.seeds[0])
        cfg = cfg if mode is None else _mode_config(cfg, mode)
        name = f"{prefix}/tune/C{c:g}"
        if runs is not None:
            runs.append(PlannedRun(name, cfg, note="C tuning on a validation split (issue 21 mode)"))
        res = lookup(cfg)
        if res is None:
            missing.append(name)
        else:
            done.append((c, res))
    return done, tuple(missing)


def plan_modes(profile: str, lookup: Callable[[RunConfig], Mapping[str, Any] | None]) -> list[PlannedRun]:
    """The issue-21 runs of the paper profile (none in other profiles): :data:`MODES` and the large-C IC cell."""
    if profile != "paper":
        return []
    st = SETTINGS[profile]
    runs: list[PlannedRun] = []
    for sampling in SAMPLINGS:
        cell = f"{MODE_DATASET}/{sampling}/IC/b{MODE_BATCH}"
        extra = tuple(c for c in LARGE_C if c not in st.c_grid)
        tuning: list[PlannedRun] = []
        large, waits = _tuned(st, profile, sampling, "IC", extra, f"{cell}/mode/largeC", lookup, None, tuning)
        base, base_waits = _tuned(st, profile, sampling, "IC", st.c_grid, cell, lookup, None, None)
        # the values the Table 3 cell's continued grid (issue 44) already tunes are planned there, once
        cell_grid, _ = tuning_grid(st.c_grid, lambda c, s=sampling: lookup(
            _config(st, profile, MODE_DATASET, s, "IC", MODE_BATCH, clip=c, tune=True, seed=st.seeds[0])))
        runs += [r for r in tuning if r.config.clip_norm not in cell_grid]
        if waits or base_waits:
            placeholder = _config(st, profile, MODE_DATASET, sampling, "IC", MODE_BATCH, clip=extra[0], tune=False,
                                  seed=st.seeds[0])  # fmt: skip
            note = "IC, Algorithm 1, C tuned over C_GRID + the authors' large_C (pending)"
            runs.append(PlannedRun(f"{cell}/mode/largeC", placeholder, ready=False, waits_for=waits + base_waits,
                                   note=note))  # fmt: skip
        else:
            clip = _best_c(large + base)
            cell_runs = [r for r in runs_table3_cell(profile, sampling, lookup) if r.ready]
            same = bool(cell_runs) and cell_runs[0].config.clip_norm == clip  # the continued cell ran this C
            if clip in extra and not same:  # otherwise the optimum is the Table 3 cell itself: nothing new to run
                cfg = _config(st, profile, MODE_DATASET, sampling, "IC", MODE_BATCH, clip=clip, tune=False,
                              seed=st.seeds[0])  # fmt: skip
                runs.append(PlannedRun(f"{cell}/mode/largeC", cfg,
                                       note=f"IC, Algorithm 1, C = {clip:g} chosen over C_GRID + large_C"))  # fmt: skip
        for mode in MODES:
            cell = f"{MODE_DATASET}/{sampling}/{mode.family}/b{MODE_BATCH}"
            prefix = f"{cell}/mode/{mode.name}"
            if mode.tuned:
                results, waits = _tuned(st, profile, sampling, mode.family, MODE_C_GRID, prefix, lookup, mode, runs)
            else:  # the Table 3 cell's C
                results, waits = _tuned(st, profile, sampling, mode.family, st.c_grid, cell, lookup, None, None)
            clip = MODE_C_GRID[0] if waits else _best_c(results)
            cfg = _config(st, profile, MODE_DATASET, sampling, mode.family, MODE_BATCH, clip=clip, tune=False,
                          seed=st.seeds[0])  # fmt: skip
            chosen = "; C pending tuning" if waits else f"; C = {clip:g}"
            note = f"issue 21 mode {mode.name!r}: {mode.source}{chosen}"
            runs.append(PlannedRun(prefix, _mode_config(cfg, mode), ready=not waits, waits_for=waits, note=note))
    return runs


#: issue 51 §3: Algorithm 1 as printed (IC, σ = 2, η = 0.025, momentum 0) at |S_b| = :data:`MODE_BATCH`, trained at full
#: length for each of these C (C = 20 is the committed ``mode/largeC`` run, the best full-length reading so far), then
#: :data:`CLOSEST_SEEDS` more seeds at the best of them.  The C is chosen on the *test* accuracy of full-length runs:
#: this is the closest reading (a maximum over runs, as the verdict rules compute it), not a tuned cell.
CLOSEST_C = (5.0, 10.0, 20.0)
CLOSEST_SEEDS = (1, 2)
#: the C of :data:`CLOSEST_C` that the ``mode/largeC`` run already trains at full length (seed 0)
CLOSEST_TRAINED = 20.0
#: a labelled ablation outside the algorithm as printed: SGD momentum 0.9 (what protocol choices alone can move)
ABLATION_MOMENTUM = 0.9


def _closest_base(st: GridSettings, profile: str, sampling: str, clip: float, seed: int = 0) -> RunConfig:
    return _config(st, profile, MODE_DATASET, sampling, "IC", MODE_BATCH, clip=clip, tune=False, seed=seed)


def closest_clip(profile: str, sampling: str, lookup: Callable[[RunConfig], Mapping[str, Any] | None]
                 ) -> tuple[float, tuple[float, ...]]:  # fmt: skip
    """The C of :data:`CLOSEST_C` whose full-length run (seed 0) reached the best test accuracy among the finished
    ones (ties: the smaller C), and the values of :data:`CLOSEST_C` still without a result."""
    st = SETTINGS[profile]
    done, missing = [], []
    for c in CLOSEST_C:
        res = lookup(_closest_base(st, profile, sampling, c))
        (missing.append(c) if res is None else done.append((c, res)))
    if not done:
        return CLOSEST_C[-1], tuple(missing)
    return _best_c(done), tuple(missing)


def plan_closest(profile: str, lookup: Callable[[RunConfig], Mapping[str, Any] | None]) -> list[PlannedRun]:
    """Issue 51 §3 runs (paper profile only): ``mnist/<SS|SH>/IC/b1024/full/C<c>`` for the C of :data:`CLOSEST_C`
    not planned elsewhere (same configuration, same result file), ``.../closest/seed<k>`` at the best finished C
    (:func:`closest_clip`), and ``mnist/SS/IC/b1024/ablation/momentum0.9`` (labelled: not the algorithm as
    printed)."""
    if profile != "paper":
        return []
    st = SETTINGS[profile]
    runs: list[PlannedRun] = []
    for sampling in SAMPLINGS:
        cell = f"{MODE_DATASET}/{sampling}/IC/b{MODE_BATCH}"
        for c in CLOSEST_C:
            if c == CLOSEST_TRAINED:  # the committed mode/largeC run is this configuration (same result file)
                continue
            runs.append(PlannedRun(f"{cell}/full/C{c:g}", _closest_base(st, profile, sampling, c),
                                   note=f"issue 51: Algorithm 1 as printed at full length, C = {c:g}"))  # fmt: skip
        clip, missing = closest_clip(profile, sampling, lookup)
        pending = f" ({len(missing)} of the C runs still missing)" if missing else ""
        for seed in CLOSEST_SEEDS:
            runs.append(PlannedRun(
                f"{cell}/closest/seed{seed}", _closest_base(st, profile, sampling, clip, seed),
                note=f"issue 51: seed {seed} of the closest reading of Algorithm 1 as printed, C = {clip:g}, the best "
                     f"full-length C so far{pending}"))  # fmt: skip
    cfg = _closest_base(st, profile, "SS", 20.0).with_(momentum=ABLATION_MOMENTUM)
    runs.append(PlannedRun(f"{MODE_DATASET}/SS/IC/b{MODE_BATCH}/ablation/momentum0.9", cfg,
                           note="issue 51 ablation, NOT the algorithm as printed: SGD momentum 0.9, C = 20"))
    return runs


def runs_table3_cell(profile: str, sampling: str, lookup: Callable[[RunConfig], Mapping[str, Any] | None]
                     ) -> list[PlannedRun]:  # fmt: skip
    """The IC cell at :data:`MODE_BATCH` of ``sampling`` as :func:`plan_table3` plans it (one run per seed)."""
    name = f"{MODE_DATASET}/{sampling}/IC/b{MODE_BATCH}"
    st = SETTINGS[profile]
    runs = []
    for cell in cells(st):
        if cell == (MODE_DATASET, sampling, "IC", MODE_BATCH):
            runs = [r for r in _plan_cells(st, profile, [cell], lookup) if r.name.split("/tune/")[0] == name
                    and "/tune/" not in r.name]  # fmt: skip
    return runs


def _epochs_started(record: Mapping[str, Any]) -> int:
    """Permutations (epochs) of which at least one round ran: each can put the differing example in a round.

    Counted from the rounds, ⌈T / ⌊N/|S_b|⌋⌉, not from T·|S_b|/N: shuffling drops the remainder of every
    permutation, so T·|S_b|/N undercounts the epochs (99 instead of 100 for MNIST at |S_b| = 1024) and would
    understate ε.
    """
    per_epoch = int(record["dataset_size"]) // int(record["batch_size"])
    if per_epoch < 1:
        raise ValueError(f"batch_size must be <= dataset_size, got {record['batch_size']} > {record['dataset_size']}")
    return max(1, math.ceil(int(record["steps"]) / per_epoch))


def paper_epsilon(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε(δ = 1e-5) under the paper's adversary A_1, exact (Def. 5.2 / Lemma B.5, g = 1).

    SH: each epoch's differing example is in exactly one round, G_{√E/σ} (Thm F.1, Lemma F.2);
    SS: c² ~ Binomial(T, |S_b|/N) over the T rounds the run made (App. E.2; the exact mixture, not the
    Lemma E.2 bounds, whose Hoeffding step is flawed).  σ = noise_std / (2·clip_norm) of the record: the σ of the
    mechanism that ran (for the issue-21 modes smaller than the nominal σ = 2, see :func:`claimed_epsilon`).
    """
    if not config.private:
        return Epsilon(math.inf, DELTA, "non-private run: ε = ∞")
    if config.noise_convention != "replace_one":
        raise ValueError("paper 003's accounting assumes noise_convention='replace_one' (noise 2Cσ)")
    return _a1_epsilon(record, config, float(record["noise_std"]) / (2.0 * float(record["clip_norm"])), "A_1")


def claimed_epsilon(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """The paper's claim for a run: A_1 as :func:`paper_epsilon` but at the nominal σ of the configuration (2),
    whatever noise really reached the clipped sum.  For the issue-21 modes that shrink the noise or clip per
    tensor this is *not* the ε of the run (labelled so); for Algorithm 1 it equals :func:`paper_epsilon`."""
    if not config.private:
        return Epsilon(math.inf, DELTA, "non-private run: ε = ∞")
    return _a1_epsilon(record, config, config.noise_multiplier, "paper's claim (nominal sigma, not the mechanism run)")


def _a1_epsilon(record: Mapping[str, Any], config: RunConfig, sigma: float, what: str) -> Epsilon:
    from dpcore.accounting.mixture import GaussianMixture

    if config.sampling == "shuffle":
        epochs = _epochs_started(record)
        mix = GaussianMixture.point_mass(epochs, sigma)
        label = f"{what} (paper 003 Thm F.1): G_(sqrt(E)/sigma), E = {epochs}, sigma = {sigma:g}"
    elif config.sampling == "fixed":
        steps, rate = int(record["steps"]), float(record["batch_size"]) / float(record["dataset_size"])
        mix = GaussianMixture.binomial(steps, rate, sigma)
        label = (
            f"{what} (paper 003 Def. 5.2, exact): c^2 ~ Binomial(T = {steps}, |S_b|/N = {rate:.4g}), sigma = {sigma:g}"
        )
    else:
        raise ValueError(f"paper 003 accounts shuffling and fixed-size subsampling, not {config.sampling!r}")
    return Epsilon(float(mix.epsilon(DELTA)), DELTA, label)


def a0_epsilon(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε(δ = 1e-5) under the standard adversary A_0 (the paper's App. G / Table 2), labelled.

    SS: the library's accountant for fixed-size batches (GDP CLT of uniform subsampling, replace-one;
    asymptotic).  SH: not analysed (the paper gives no A_0 result for shuffling; A_0 is weaker than A_1,
    so the A_1 value bounds it).
    """
    if not config.private:
        return Epsilon(math.inf, DELTA, "non-private run: ε = ∞")
    if config.sampling == "shuffle":
        return Epsilon(math.nan, DELTA, "A_0: not analysed for shuffling (the paper's A_1 value is an upper bound)")
    value, how = standard_epsilon(record, DELTA)
    return Epsilon(value, DELTA, f"A_0: {how}")


def cell_frame(profile: str, *, results_root: Any = None, recompute_epsilon: bool = True) -> pd.DataFrame:
    """One row per Table 3 / Fig. 1 cell (tuning runs left out): the run's status, summary and both ε
    (re-evaluated from each run's record unless ``recompute_epsilon`` is False; see ``results_frame``).

    Columns add the paper's labels ``sampling_label`` (SS/SH) and ``family`` (IC/BC/MC/NP).
    """
    frame = results_frame(EXPERIMENT, profile, results_root=results_root, recompute_epsilon=recompute_epsilon)
    frame = frame[~frame["run"].str.contains("/(?:tune|mode|full|closest|ablation)/")].copy()
    frame["sampling_label"] = frame["run"].str.split("/").str[1]
    frame["family"] = frame["run"].str.split("/").str[2]
    return frame.reset_index(drop=True)


MODE_COLUMNS = ("run", "status", "sampling_label", "family", "mode", "clip_scope", "noise_placement", "lr_rule",
                "clip_norm", "best_accuracy", "final_accuracy", "sigma_effective", "epsilon_paper", "epsilon_standard",
                "epsilon_claimed")  # fmt: skip


def mode_frame(profile: str, *, results_root: Any = None) -> pd.DataFrame:
    """The issue-21 runs beside their Algorithm-1 cells (MNIST, |S_b| = 1024), one row each (tuning left out).

    ``mode`` is the mode's name ("algorithm1" for the Table 3 cell); ``epsilon_paper`` / ``epsilon_standard`` are
    A_1 / A_0 of the mechanism that ran (its record's σ, ``sigma_effective`` = noise_std / (2·clip norm)),
    ``epsilon_claimed`` the paper's claim at the nominal σ (:func:`claimed_epsilon`).  Rows without a result have
    NaN results and ε.
    """
    from dpcore.experiments.registry import get
    from dpcore.experiments.store import Store

    frame = results_frame(EXPERIMENT, profile, results_root=results_root)
    store = Store.default(profile, EXPERIMENT, results_root=results_root)
    plan = {r.name: r for r in get(EXPERIMENT).runs(profile, store.load)}
    cells_ = [f"{MODE_DATASET}/{s}/{f}/b{MODE_BATCH}" for s in SAMPLINGS for f in ("IC", "BC")]
    keep = frame["run"].isin(cells_) | (frame["run"].str.contains("/mode/") & ~frame["run"].str.contains("/tune/"))
    rows = []
    for _, row in frame[keep].iterrows():
        run = plan[row["run"]]
        cfg = run.config
        result = store.load(cfg) if run.ready else None
        parts = row["run"].split("/")
        out = {k: row[k] for k in MODE_COLUMNS if k in row.index}
        mode = parts[5] if len(parts) > 5 else "algorithm1"
        out.update({"sampling_label": parts[1], "family": parts[2], "mode": mode, "clip_scope": cfg.clip_scope,
                    "noise_placement": cfg.noise_placement, "lr_rule": cfg.lr_rule, "sigma_effective": math.nan,
                    "epsilon_claimed": math.nan})  # fmt: skip
        if result is not None:
            record = result["record"]
            out["sigma_effective"] = float(record["noise_std"]) / (2.0 * float(record["clip_norm"]))
            out["epsilon_claimed"] = claimed_epsilon(record, cfg).value
        rows.append(out)
    return pd.DataFrame(rows, columns=list(MODE_COLUMNS))


def table3_frame(cells_: pd.DataFrame) -> pd.DataFrame:
    """Table 3 from :func:`cell_frame`: per (data set, SS/SH, IC/BC/MC) the |S_b| with the best test accuracy.

    As in the paper ("the best results among the different setups of Figure 1") the cell is selected on
    the test accuracy of its best epoch; the final-epoch accuracy of that cell is reported beside it, and
    the non-private baseline is the best NP cell of the same sampling.  ``missing`` counts the cells of
    the family without a result (a family with none has NaN accuracies).
    """
    rows = []
    for (dataset, sampling), group in cells_.groupby(["dataset", "sampling_label"], sort=False):
        np_done = group[(group["family"] == "NP") & (group["status"] == "done")]
        np_best = np_done["best_accuracy"].max() if len(np_done) else float("nan")
        for family in ("IC", "BC", "MC"):
            fam = group[group["family"] == family]
            done = fam[fam["status"] == "done"]
            row = {"dataset": dataset, "sampling": sampling, "clipping": family, "missing": int(len(fam) - len(done)),
                   "nonprivate_best_accuracy": np_best}  # fmt: skip
            if len(done):
                best = done.loc[done["best_accuracy"].idxmax()]
                row.update({k: best[k] for k in ("batch_size", "clip_norm", "best_accuracy", "best_epoch",
                                                 "final_accuracy", "epsilon_paper", "epsilon_standard")})  # fmt: skip
            rows.append(row)
    return pd.DataFrame(rows)


TABLE3_EXPERIMENT = register(
    Experiment(
        name=EXPERIMENT,
        description="paper 003 Table 3 / Fig. 1 (App. H): LeNet-5 MNIST and CNN CIFAR-10, SS/SH x IC/BC/MC/NP, sigma=2",
        plan=plan_table3,
        accountants={"paper": paper_epsilon, "standard": a0_epsilon},
    )
)
