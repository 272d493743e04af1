"""Experiment ``ref_controls``: the positive controls of issue 51 trained with our trainer and data loaders.

Every setting (and its source: repository, commit, path, lines) is in :data:`dpcore.papers.reference.controls.CONTROLS`;
this module turns each into :class:`~dpcore.experiments.config.RunConfig` s, one per seed, and registers the
experiment.  Run names: ``opacus_mnist/<nonprivate|eps6.86|eps2.91|eps1.16>/seed<k>`` (k = 0, 1, 2) and
``tb/<mnist|fmnist|cifar10>/<cnn|scatter_linear|scatter_cnn>/seed<k>`` (ScatterNet cells k = 0, 1, 2; CNNs k = 0).

* Private runs: Poisson sampling at q = B/N for T = E·⌊N/B⌋ rounds (``steps``; one evaluation of the test set per
  epoch, ``epochs`` = E), per-sample ℓ2 clipping to C, noise N(0, (σC)²) on the sum (``noise_convention="standard"``),
  the update averaged over q·N, SGD with the setting's momentum.  The non-private Opacus row shuffles (``"shuffle"``,
  250 batches of 240 per epoch).
* Tramèr-Boneh's BN cells: :func:`dpcore.papers.p002_modelmix.training.scatter_trainer` releases the features'
  per-channel statistics with σ_BN = 8 before the first step (the same code as paper 002's ablation), and the result
  carries the labelled readouts (final iterate, best epoch).
* ε of what ran (:data:`ACCOUNTANTS`): ``training`` -- the library's default accountant of the training record
  (PLD for Poisson); ``total`` -- the private normalisation composed in (RDP, :func:`dpcore.training.private_norm.
  composed_epsilon`; = ``training`` without a normalisation release); ``normalization`` -- the release alone;
  ``their_accountant`` -- Opacus 0.13's RDP (Mironov conversion) on Tramèr-Boneh's orders, the computation behind their
  ε = 3, applied to the record that ran (normalisation added), to check each setting's budget.

The quick profile (labelled reduced) trains two Opacus rows on 6,000 training and 1,000 test images for 2 epochs:
a pipeline check, not a control.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from dpcore.accounting.rdp import rdp_to_epsilon, subsampled_gaussian_rdp
from dpcore.accounting.records import choose_accountant, epsilon_for_record
from dpcore.experiments.config import RunConfig
from dpcore.experiments.registry import Epsilon, Experiment, PlannedRun, register
from dpcore.papers.p002_modelmix.training import scatter_trainer
from dpcore.papers.p002_modelmix.training import total_epsilon as _composed_total
from dpcore.papers.reference.controls import (
    CONTROLS,
    DELTA,
    EXPERIMENT,
    TB_BN_SIGMA,
    TB_ORDERS,
    Control,
    reduced,
    run_name,
)
from dpcore.training.private_norm import NormalizationRecord, normalization_epsilon, normalization_rdp

__all__ = ["EXPERIMENT", "ACCOUNTANTS", "QUICK", "plan_controls", "control_config", "reduced"]

#: the quick profile's reduced runs: controls, training / test subset, epochs
QUICK: dict[str, Any] = {"controls": ("opacus_mnist/nonprivate", "opacus_mnist/eps1.16"), "train_size": 6000,
                         "test_size": 1000, "epochs": 2}  # fmt: skip
#: examples per forward pass (never changes a result beyond rounding); the end-to-end CIFAR-10 CNN uses fewer
MICRO_BATCH = {"tb_cifar_cnn": 256}
DEFAULT_MICRO_BATCH = 512


def control_config(control: Control, seed: int, profile: str) -> RunConfig:
    """The :class:`RunConfig` of ``control`` at ``seed`` (paper profile: the published setting; quick: reduced)."""
    small = reduced(profile)
    train_size = QUICK["train_size"] if small else None
    epochs = QUICK["epochs"] if small else control.epochs
    steps = None
    if control.private:
        n = train_size or (50_000 if control.data == "cifar10" else 60_000)
        steps = epochs * (n // control.batch_size)
    bn = control.normalization == "private_bn"
    return RunConfig(
        dataset=control.dataset, model=control.model, model_kwargs=dict(control.model_kwargs),
        sampling="poisson" if control.private else "shuffle",
        clipping="individual" if control.private else "none", batch_size=control.batch_size,
        clip_norm=control.clip_norm, noise_multiplier=control.noise_multiplier, noise_convention="standard",
        epochs=epochs, steps=steps, lr=control.lr, momentum=control.momentum, normalization=control.normalization,
        bn_noise_multiplier=TB_BN_SIGMA if bn else 0.0, seed=seed, train_size=train_size,
        test_size=QUICK["test_size"] if small else None,
        max_physical_batch=MICRO_BATCH.get(control.model, DEFAULT_MICRO_BATCH), profile=profile,
    )  # fmt: skip


def plan_controls(profile: str, lookup: Callable[[RunConfig], Any]) -> list[PlannedRun]:
    """Every run of ``profile`` in :data:`CONTROLS` order (the lane's priority), seeds innermost."""
    small = reduced(profile)
    keys = QUICK["controls"] if small else tuple(CONTROLS)
    runs = []
    for key in keys:
        c = CONTROLS[key]
        for seed in c.seeds[:1] if small else c.seeds:
            label = "REDUCED (quick profile: 6,000 training images, 2 epochs), a pipeline check; " if small else ""
            note = (f"{label}positive control {c.claim_key}: published {c.published.value:g} % at eps "
                    f"{c.published.epsilon:g}; {c.published.citation}")  # fmt: skip
            runs.append(PlannedRun(run_name(c, seed), control_config(c, seed, profile), note=note))
    return runs


# ---------------------------------------------------------------------------------------------- accountants
def _no_noise(record: Mapping[str, Any], config: RunConfig) -> bool:
    return not config.private or float(record["noise_std"]) == 0.0


def training_epsilon(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε(δ = 1e-5) of the training alone: the library's default accountant of the record (PLD for Poisson)."""
    if _no_noise(record, config):
        return Epsilon(math.inf, DELTA, "no noise: eps = inf")
    choice = choose_accountant(record)
    eps = float(epsilon_for_record(record, DELTA))
    return Epsilon(eps, DELTA, f"training only: {choice.description} [{choice.method}]")


def total_epsilon(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε(δ = 1e-5) of everything released: the private normalisation composed with training by RDP (paper 002's
    :func:`~dpcore.papers.p002_modelmix.training.total_epsilon`); without a release, the training's ε."""
    if config.normalization != "private_bn":
        eps = training_epsilon(record, config)
        return Epsilon(eps.value, DELTA, f"no normalisation release: total = training; {eps.label}")
    return _composed_total(record, config)


def _norm_record(record: Mapping[str, Any], config: RunConfig) -> NormalizationRecord | None:
    if config.normalization != "private_bn":
        return None
    return NormalizationRecord.planned(config.bn_noise_multiplier, int(record["dataset_size"]))


def normalization_only(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε(δ = 1e-5) of the private normalisation alone (0 without one), RDP as the authors compute it."""
    norm = _norm_record(record, config)
    if norm is None:
        return Epsilon(0.0, DELTA, "no normalisation release")
    return Epsilon(normalization_epsilon(norm, DELTA), DELTA,
                   f"2 Gaussian releases, sigma = {config.bn_noise_multiplier:g}, RDP; {norm.caveat}")  # fmt: skip


def their_accountant(record: Mapping[str, Any], config: RunConfig) -> Epsilon:
    """ε(δ = 1e-5) as Tramèr & Boneh compute it (ftramer/Handcrafted-DP@6568e8f dp_utils.py L8-30, cnns.py L107-113):
    Poisson-subsampled Gaussian RDP at q = B/N times the steps, plus the normalisation's RDP, on their orders, with
    Opacus 0.13's conversion ε = min_α RDP(α) − log δ/(α − 1) (Mironov 2017, Prop. 3)."""
    if _no_noise(record, config):
        return Epsilon(math.inf, DELTA, "no noise: eps = inf")
    q = float(record["sample_rate"]) if record.get("sample_rate") else config.batch_size / int(record["dataset_size"])
    rdp = subsampled_gaussian_rdp(TB_ORDERS, noise_multiplier=float(record["noise_multiplier"]), sample_rate=q)
    rdp = rdp * int(record["steps"])
    norm = _norm_record(record, config)
    if norm is not None:
        rdp = rdp + normalization_rdp(norm, TB_ORDERS)
    value = rdp_to_epsilon(TB_ORDERS, rdp, DELTA, conversion="mironov")
    what = " + normalisation" if norm is not None else ""
    return Epsilon(float(value), DELTA, f"Tramer-Boneh / Opacus 0.13: RDP (training{what}) on their orders, Mironov "
                                        "conversion")  # fmt: skip


ACCOUNTANTS = {
    "training": training_epsilon,
    "total": total_epsilon,
    "normalization": normalization_only,
    "their_accountant": their_accountant,
}

register(Experiment(
    name=EXPERIMENT, plan=plan_controls, accountants=ACCOUNTANTS, trainer=scatter_trainer,
    description="issue 51 positive controls: Opacus's MNIST example (4 rows x 3 seeds) and Tramer-Boneh 2021's nine "
                "cells at eps = 3, our trainer and data loaders",
))  # fmt: skip
