"""ε of DP-SGD against training length under every accountant of :mod:`dpcore.accounting.dpsgd`, and the
figures of the reference notebook (``notebooks/00_accounting/dpsgd_accountants.ipynb``).

The Poisson-subsampled Gaussian mechanism of DP-SGD (Abadi et al., CCS 2016, Algorithm 1) accounted by
RDP with Mironov's conversion (Mironov, CSF 2017, Prop. 3), RDP with the improved conversion (Balle et
al., AISTATS 2020, Thm 21), PLD (dp_accounting), and the GDP central limit theorem (Bu, Dong, Long, Su,
HDSR 2020) with Poisson and fixed-size subsampling.

>>> frame = epsilon_vs_epochs(1.1, dataset_size=60_000, batch_size=256, delta=1e-5, max_epochs=2, n_points=2)
>>> frame["epochs"].tolist(), frame["steps"].tolist()
([1, 2], [234, 468])
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpcore.accounting.dpsgd import epsilon_curve
from dpcore.accounting.events import epochs_to_steps, steps_per_epoch
from dpcore.plots import epsilon_curves, new_axes, printed_vs_ours
from dpcore.validation import check_open_unit, check_positive, check_positive_int

__all__ = ["REFERENCE_COLUMN", "epsilon_vs_epochs", "relative_to", "accountants_figure", "legacy_figure"]

#: the tight accountant the others are compared with
REFERENCE_COLUMN = "pld/poisson"


def epsilon_vs_epochs(
    noise_multiplier: float, *, dataset_size: int, batch_size: int, delta: float, max_epochs: int, n_points: int
) -> pd.DataFrame:
    """ε at ``delta`` after 1 … ``max_epochs`` epochs (``n_points`` values, one step per batch, q = B/N), one
    column per accountant ``<method>/<sampling>``; the steps are the trainer's, E·round(N/B)
    (:func:`dpcore.accounting.events.epochs_to_steps`)."""
    check_positive("noise_multiplier", noise_multiplier)
    n = check_positive_int("dataset_size", dataset_size)
    b = check_positive_int("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must be at most dataset_size={n}, got {b}")
    check_open_unit("delta", delta)
    epochs = np.unique(
        np.linspace(1, check_positive_int("max_epochs", max_epochs), check_positive_int("n_points", n_points))
        .round()
        .astype(int)
    )
    per_epoch = steps_per_epoch("poisson", n, b)  # the trainer's T: E·round(N/B) (events.epochs_to_steps)
    steps = [epochs_to_steps(int(e), per_epoch) for e in epochs]
    frame = pd.DataFrame(epsilon_curve(noise_multiplier, sample_rate=b / n, steps=steps, delta=delta))
    frame.insert(0, "epochs", epochs)
    return frame


def relative_to(frame: pd.DataFrame, column: str = REFERENCE_COLUMN) -> pd.DataFrame:
    """Every accountant column of :func:`epsilon_vs_epochs` divided by ``column`` (ε / ε_PLD)."""
    if column not in frame:
        raise ValueError(f"column must be one of the accountant columns, got {column!r}")
    methods = [c for c in frame.columns if "/" in c]
    return frame[["epochs"]].join(frame[methods].div(frame[column], axis=0))


def accountants_figure(frame: pd.DataFrame, *, title: str, delta: float) -> Figure:
    """Left: ε against epochs per accountant; right: the same relative to the tight PLD accountant."""
    fig, axes = new_axes(2, width=11.0, height=4.2)
    methods = [c for c in frame.columns if "/" in c]
    epsilon_curves(
        frame["epochs"],
        {c: frame[c] for c in methods},
        xlabel="epochs",
        ylabel=f"ε at δ = {delta:g}",
        title=title,
        ax=axes[0, 0],
    )
    ratio = relative_to(frame)
    epsilon_curves(
        ratio["epochs"],
        {c: ratio[c] for c in methods},
        xlabel="epochs",
        ylabel="ε / ε_PLD",
        title="relative to the tight PLD accountant",
        reference=1.0,
        legend="none",
        ax=axes[0, 1],
    )
    return fig


def legacy_figure(rows: pd.DataFrame, statuses: list[str]) -> Figure:
    """Published ε next to ours (RDP, Mironov conversion: what every legacy number used), one group per setting."""
    fig, axes = new_axes(width=11.0, height=4.6)
    labels = [
        s.split(" (")[0].replace(" et al. 2016 §3.1", " 2016").replace(" MNIST README", "")
        + "\n"
        + s.split(" (")[1].rstrip(")")
        for s in rows["source"]
    ]
    printed_vs_ours(
        labels,
        rows["published"],
        rows["rdp_mironov"],
        statuses=statuses,
        fmt="{:.2f}",
        ylabel="ε at δ = 1e-5",
        title="Published DP-SGD ε vs dpcore (RDP, Mironov conversion)",
        ax=axes[0, 0],
    )
    axes[0, 0].tick_params(axis="x", labelsize=7)
    return fig
