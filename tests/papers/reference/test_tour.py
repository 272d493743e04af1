"""The training-engine tour's helpers (dpcore.papers.reference.tour), without training."""

from __future__ import annotations

import math

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

from dpcore.accounting.gaussian import epsilon_from_mu  # noqa: E402
from dpcore.accounting.records import epsilon_for_record  # noqa: E402
from dpcore.accounting.shuffled import mixture_tradeoff  # noqa: E402
from dpcore.claims import compute_status  # noqa: E402
from dpcore.data import DataError  # noqa: E402
from dpcore.papers.reference import tour  # noqa: E402
from dpcore.papers.reference.claims import CLAIMS  # noqa: E402


def test_configs_share_sigma_and_clip():
    runs = tour.tour_configs(batch_size=64, epochs=2, lr=0.5, sigma=1.0, clip_norm=1.0, mixed_group=8, tau_ratio=0.15)
    assert list(runs) == [
        "non-private",
        "DP-SGD (IC, Poisson)",
        "003 IC",
        "003 MC (s=8)",
        "003 BC",
        "ModelMix (IC, Poisson)",
    ]
    private = [c for name, c in runs.items() if name != "non-private"]
    assert {c.noise_multiplier for c in private} == {1.0} and {c.clip_norm for c in private} == {1.0}
    assert {runs[k].noise_convention for k in ("003 IC", "003 MC (s=8)", "003 BC")} == {"replace_one"}


@pytest.mark.parametrize(("s", "m"), [(1, 64), (8, 8), (64, 1)])
def test_shuffled_epsilon_is_the_gaussian_tradeoff_for_every_clipping(s, m):
    """The explanation printed on the figure: 003's accountant gives G_{√E/σ} whatever s and m."""
    ours = tour.shuffled_epsilon(epochs=4, sigma=1.0, delta=1e-5)
    assert ours == pytest.approx(epsilon_from_mu(2.0, 1e-5)) and round(ours, 2) == 10.0
    accountant = mixture_tradeoff("shuffle", sigma=1.0, E=4, N=3000, s=s, m=m, g=1).epsilon(1e-5)
    assert accountant == pytest.approx(ours, rel=1e-6)
    assert tour.shuffled_mu(epochs=9, sigma=1.5) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="sigma"):
        tour.shuffled_mu(epochs=4, sigma=0.0)


def test_abadi_record_reproduces_the_reference_claim():
    record = tour.abadi_record()
    assert record["sample_rate"] == 0.01
    eps = epsilon_for_record(record, 1e-5, method="rdp-mironov")
    assert compute_status(CLAIMS["abadi2016.eps.via_record"], eps) == "reproduced"
    assert tour.refusal(record, 1e-5) is None


def test_refusal_reports_the_reason():
    record = tour.abadi_record().replace(clipping="mixed", group_size=8)
    reason = tour.refusal(record, 1e-5)
    assert reason is not None and "mixed" in reason


def test_accuracy_figure_explains_the_003_runs():
    history = pd.DataFrame(
        {
            "run": ["non-private", "non-private", "003 BC", "003 BC"],
            "epoch": [1.0, 2.0, 1.0, 2.0],
            "test_accuracy": [0.8, 0.9, 0.1, 0.11],
        }
    )
    summary = pd.DataFrame({"run": ["non-private", "003 BC"], "epsilon": [math.inf, 10.0]})
    fig = tour.accuracy_figure(
        history, summary, title="t", batch_size=64, mixed_group=8, epochs=4, sigma=1.0, delta=1e-5
    )
    ax, below = fig.axes
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["non-private  (ε = ∞)", "003 BC  (ε = 10.00)", "chance (10 classes)"]
    text = below.texts[0].get_text()
    assert "64×" in text and "μ = √E/σ = √4/1 = 2.00" in text and "ε = 10.00" in text


def test_mnist_subsets_are_seeded_and_sized():
    try:
        train, test, text = tour.mnist_subsets(50, 20, seed=1)
    except DataError as exc:  # no MNIST in the cache or the mirror, and no network
        pytest.skip(f"MNIST not available: {exc}")
    assert tuple(train[0].shape) == (50, 1, 28, 28) and tuple(test[0].shape) == (20, 1, 28, 28)
    assert "MNIST train" in text and "MNIST test" in text and "50 drawn" in text
    again = tour.mnist_subsets(50, 20, seed=1)[0]
    assert (again[1] == train[1]).all()
    with pytest.raises(ValueError, match="n_test"):
        tour.mnist_subsets(10, 20_000)
