"""Reference claims (paper id "ref") and the reference notebook's functions (dpcore.papers.reference)."""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

from dpcore.accounting.dpsgd import dpsgd_epsilon  # noqa: E402
from dpcore.claims import compute_status  # noqa: E402
from dpcore.papers.reference import curves  # noqa: E402
from dpcore.papers.reference.claims import CLAIMS, SPECS  # noqa: E402
from dpcore.papers.reference.legacy import LEGACY_SETTINGS  # noqa: E402


def test_specs_are_references_without_errata():
    assert {s.paper for s in SPECS} == {"ref"} and {s.source for s in SPECS} == {"reference"}
    assert all(s.explanation is None for s in SPECS)
    assert {s.key for s in LEGACY_SETTINGS} <= set(CLAIMS)


@pytest.mark.parametrize("setting", LEGACY_SETTINGS, ids=lambda s: s.key)
def test_legacy_settings_match_their_claims(setting):
    spec = CLAIMS[setting.key]
    assert spec.value == setting.published
    ours = dpsgd_epsilon(
        setting.noise_multiplier,
        sample_rate=setting.sample_rate,
        steps=setting.steps,
        delta=setting.delta,
        method="rdp-mironov",
    )
    assert compute_status(spec, ours) == "reproduced"
    assert compute_status(spec, ours + 0.02) == "differs"  # the tolerance is half a printed digit


def test_epsilon_vs_epochs_and_ratio():
    frame = curves.epsilon_vs_epochs(1.1, dataset_size=60_000, batch_size=256, delta=1e-5, max_epochs=3, n_points=2)
    assert frame["epochs"].tolist() == [1, 3] and frame["steps"].tolist() == [234, 702]  # the trainer's E·round(N/B)
    assert (frame["pld/poisson"] < frame["rdp/poisson"]).all()
    assert (frame["rdp/poisson"] < frame["rdp-mironov/poisson"]).all()
    ratio = curves.relative_to(frame)
    assert ratio["pld/poisson"].tolist() == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError, match="column"):
        curves.relative_to(frame, "nope")
    with pytest.raises(ValueError, match="batch_size"):
        curves.epsilon_vs_epochs(1.1, dataset_size=100, batch_size=256, delta=1e-5, max_epochs=3, n_points=2)
    fig = curves.accountants_figure(frame, title="t", delta=1e-5)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 5


def test_legacy_figure_labels():
    rows = pd.DataFrame(
        {"source": [s.source for s in LEGACY_SETTINGS[:2]], "published": [1.26, 2.92], "rdp_mironov": [1.2586, 2.9223]}
    )
    fig = curves.legacy_figure(rows, ["reproduced", "reproduced"])
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels[0].startswith("Abadi 2016\nq=0.01") and "(reproduced)" in labels[1]
