"""The training-engine tour (``notebooks/training/engine_tour.ipynb``): reduced MNIST, the runs it compares,
what each run's ε means, and its accuracy figure.

The tour trains LeNet-5 with one :class:`dpcore.training.TrainConfig` per row: non-private, DP-SGD
(Abadi et al., CCS 2016, Algorithm 1: Poisson sampling, individual clipping), the generalised DP-SGD of
van Dijk et al. (paper 003, Algorithm 1 with individual / mixed / batch clipping on shuffled batches)
and ModelMix (paper 002, Algorithm 1).  Its accuracies are reduced-scale training results, compared with
no published number; its one claim (Abadi et al.'s ε = 1.26 recomputed from a run record) is in
:mod:`dpcore.papers.reference.claims`.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from torch import Tensor

from dpcore.accounting.gaussian import epsilon_from_mu
from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.run_record import RunRecord
from dpcore.data import load_mnist, provenance
from dpcore.plots import series_style, use_style
from dpcore.training import ModelMixConfig, TrainConfig
from dpcore.training.experiments import MNIST_MEAN, MNIST_STD, image_tensors
from dpcore.validation import check_open_unit, check_positive, check_positive_int

__all__ = [
    "CHANCE",
    "mnist_subsets",
    "tour_configs",
    "shuffled_mu",
    "shuffled_epsilon",
    "refusal",
    "abadi_record",
    "accuracy_figure",
]

CHANCE = 0.1  # accuracy of guessing one of the 10 MNIST classes


def mnist_subsets(
    n_train: int, n_test: int, *, seed: int = 0
) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor], str]:
    """Seeded random subsets of the MNIST training split (``n_train`` images) and of the test split (``n_test``
    held-out images), normalised by the public constants; and the provenance text for the figure footer."""
    n_train = check_positive_int("n_train", n_train)
    n_test = check_positive_int("n_test", n_test)
    rng = np.random.default_rng(seed)
    out = []
    for split, size in (("train", n_train), ("test", n_test)):
        images, labels = load_mnist(split)
        if size > len(labels):
            raise ValueError(f"n_{split} must be at most {len(labels)}, got {size}")
        idx = np.sort(rng.choice(len(labels), size=size, replace=False))
        out.append(image_tensors(images[idx], labels[idx], mean=MNIST_MEAN, std=MNIST_STD))
    text = f"{provenance('mnist', 'train')}: {n_train:,} drawn; {provenance('mnist', 'test')}: {n_test:,} held out"
    return out[0], out[1], text


def tour_configs(
    *,
    batch_size: int,
    epochs: int,
    lr: float,
    sigma: float,
    clip_norm: float,
    mixed_group: int,
    tau_ratio: float,
    seed: int = 0,
    device: str = "auto",
) -> dict[str, TrainConfig]:
    """The six runs of the tour, all with the same σ, C, batch size, learning rate and epochs."""
    common = dict(batch_size=batch_size, epochs=epochs, lr=lr, seed=seed, device=device)
    dp = dict(clip_norm=clip_norm, noise_multiplier=sigma)
    paper003 = dict(sampling="shuffle", noise_convention="replace_one", **dp)
    return {
        "non-private": TrainConfig(sampling="shuffle", clipping="none", noise_multiplier=0.0, **common),
        "DP-SGD (IC, Poisson)": TrainConfig(sampling="poisson", clipping="individual", **dp, **common),
        "003 IC": TrainConfig(clipping="individual", **paper003, **common),
        f"003 MC (s={mixed_group})": TrainConfig(clipping="mixed", group_size=mixed_group, **paper003, **common),
        "003 BC": TrainConfig(clipping="batch", **paper003, **common),
        "ModelMix (IC, Poisson)": TrainConfig(
            sampling="poisson", clipping="individual", modelmix=ModelMixConfig(tau_ratio=tau_ratio), **dp, **common
        ),
    }


def shuffled_mu(*, epochs: int, sigma: float) -> float:
    """μ = √E/σ of the Gaussian trade-off G_μ that paper 003's Thm F.1 (g = 1, adversary A_1) gives a shuffled
    run of E epochs: the same for every batch size and clipping mode."""
    return math.sqrt(check_positive_int("epochs", epochs)) / check_positive("sigma", sigma)


def shuffled_epsilon(*, epochs: int, sigma: float, delta: float) -> float:
    """ε at ``delta`` of G_μ with μ = √E/σ (see :func:`shuffled_mu`)."""
    return epsilon_from_mu(shuffled_mu(epochs=epochs, sigma=sigma), check_open_unit("delta", delta))


def refusal(record: RunRecord, delta: float) -> str | None:
    """Why :func:`epsilon_for_record` refuses ``record`` (its message), or ``None`` when it gives an ε."""
    try:
        epsilon_for_record(record, delta)
    except ValueError as exc:
        return str(exc)
    return None


def abadi_record() -> RunRecord:
    """The run of Abadi et al. (CCS 2016, §3.1) as a record: N = 60,000, lot 600 (q = 0.01), σ = 4, T = 10,000."""
    return RunRecord(
        private=True,
        sampling="poisson",
        dataset_size=60_000,
        batch_size=600,
        steps=10_000,
        clipping="individual",
        clip_norm=1.0,
        noise_multiplier=4.0,
        noise_std=4.0,
    )


def accuracy_figure(
    history: pd.DataFrame,
    summary: pd.DataFrame,
    *,
    title: str,
    batch_size: int,
    mixed_group: int,
    epochs: int,
    sigma: float,
    delta: float,
) -> Figure:
    """Held-out accuracy per epoch for every run (ε in the legend), the chance level, and a box under the plot
    that says why the 003 BC/MC runs sit near chance and why every 003 run has the same ε."""
    use_style()
    fig, (ax, below) = plt.subplots(2, 1, figsize=(11.0, 5.9), height_ratios=(3.2, 0.72), layout="constrained")
    eps = summary.set_index("run")["epsilon"]
    runs = list(dict.fromkeys(history["run"]))
    for i, name in enumerate(runs):
        frame = history[history["run"] == name]
        value = float(eps[name])
        label = f"{name}  (ε = ∞)" if not math.isfinite(value) else f"{name}  (ε = {value:.2f})"
        ax.plot(frame["epoch"], frame["test_accuracy"], label=label, **series_style(i, n=len(runs)))
    ax.axhline(CHANCE, color="0.4", ls=":", lw=1.2, label="chance (10 classes)", zorder=1)
    ticks = sorted({int(round(e)) for e in history["epoch"]})
    ax.set(xlabel="epoch", ylabel="held-out accuracy", ylim=(0, 1), title=title, xticks=ticks)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False, fontsize=8)
    mu = shuffled_mu(epochs=epochs, sigma=sigma)
    eps003 = shuffled_epsilon(epochs=epochs, sigma=sigma, delta=delta)
    text = (
        "Why 003 BC / MC sit near chance: at equal σ, Algorithm 1 of paper 003 divides the noisy sum by the number "
        "m of clipped groups,\nso the update carries noise 2Cσ/m against a signal of at most C: BC (m = 1) sees "
        f"|S_b| = {batch_size}× and MC (m = {batch_size // mixed_group}) {mixed_group}× more relative noise than IC.\n"
        "Why every 003 run has the same ε: its accountant (paper 003, Thm F.1, g = 1, adversary A_1) gives G_μ with "
        f"μ = √E/σ = √{epochs}/{sigma:g} = {mu:.2f},\nwhatever the batch size or clipping; μ = {mu:.2f} is "
        f"ε = {eps003:.2f} at δ = {delta:g}."
    )
    below.set_axis_off()
    below.text(
        0.0,
        1.0,
        text,
        transform=below.transAxes,
        ha="left",
        va="top",
        fontsize=8,
        color="0.15",
        linespacing=1.5,
        bbox={"boxstyle": "round", "facecolor": "0.97", "edgecolor": "0.75"},
    )
    return fig
