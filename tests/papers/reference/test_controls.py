"""Issue 51's positive controls: the plan of ``ref_controls`` and :func:`control_frame` on synthetic results."""

from __future__ import annotations

import math

import pytest
import torch

from dpcore.experiments.registry import get
from dpcore.models import build_model, count_parameters
from dpcore.papers.reference.controls import CONTROL_COLUMNS, CONTROLS, control_frame, summarize
from dpcore.papers.reference.training import ACCOUNTANTS, plan_controls


def test_plan_names_and_settings() -> None:
    runs = get("ref_controls").runs("paper")
    names = [r.name for r in runs]
    assert names[:3] == [
        "opacus_mnist/nonprivate/seed0",
        "opacus_mnist/nonprivate/seed1",
        "opacus_mnist/nonprivate/seed2",
    ]
    assert len([n for n in names if n.startswith("opacus_mnist/")]) == 12
    assert {n.rsplit("/", 1)[0] for n in names if n.startswith("tb/")} == {
        f"tb/{d}/{m}" for d in ("mnist", "fmnist", "cifar10") for m in ("cnn", "scatter_linear", "scatter_cnn")
    }
    by = {r.name: r.config for r in runs}
    c = by["tb/cifar10/scatter_cnn/seed0"]  # README L87: batch 8192, lr 4, sigma 5.67, BN sigma 8; 60 epochs x 6
    assert (c.batch_size, c.lr, c.noise_multiplier, c.clip_norm, c.momentum) == (8192, 4.0, 5.67, 0.1, 0.9)
    assert (c.sampling, c.steps, c.epochs, c.normalization, c.bn_noise_multiplier) == (
        "poisson",
        360,
        60,
        "private_bn",
        8.0,
    )
    o = by["opacus_mnist/eps2.91/seed1"]  # mnist_README L54: -n 60 --lr=.15 --sigma=1.1 -c=1.0 -b=240
    assert (o.batch_size, o.lr, o.noise_multiplier, o.clip_norm, o.momentum, o.steps) == (
        240,
        0.15,
        1.1,
        1.0,
        0.0,
        15000,
    )
    assert by["opacus_mnist/nonprivate/seed0"].clipping == "none"
    quick = plan_controls("quick", lambda cfg: None)
    assert len(quick) == 2 and all(r.config.train_size == 6000 and "REDUCED" in r.note for r in quick)


@pytest.mark.parametrize("key", ["tb/cifar10/scatter_cnn", "tb/fmnist/scatter_linear", "tb/mnist/scatter_cnn",
                                 "tb/mnist/cnn", "opacus_mnist/eps1.16"])  # fmt: skip
def test_their_accountant_puts_each_setting_at_its_budget(key: str) -> None:
    """The epochs of each setting: their RDP accounting of what the plan runs gives the published ε (to 0.03)."""
    run = next(r for r in get("ref_controls").runs("paper") if r.name.startswith(key + "/"))
    cfg = run.config
    n = 50_000 if "cifar10" in cfg.dataset else 60_000
    record = {"noise_std": cfg.noise_multiplier * cfg.clip_norm, "noise_multiplier": cfg.noise_multiplier,
              "sample_rate": cfg.batch_size / n, "steps": cfg.steps, "dataset_size": n}  # fmt: skip
    eps = ACCOUNTANTS["their_accountant"](record, cfg).value
    assert eps == pytest.approx(CONTROLS[key].published.epsilon, abs=0.03)


def test_models_shapes() -> None:
    assert count_parameters(build_model("sample_convnet")) == 26010
    assert build_model("scatter_linear", dataset="mnist")(torch.zeros(2, 81, 7, 7)).shape == (2, 10)
    assert build_model("tb_cifar_cnn")(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


def _result(final: float, best: float, eps: float) -> dict:
    value = {"value": eps, "delta": 1e-5, "label": "x"}
    return {
        "readouts": {"final": final, "best": best},
        "wall_seconds": 10.0,
        "epsilon": {"training": value, "total": value, "normalization": {"value": 0.0}, "their_accountant": value},
    }


def test_control_frame_on_synthetic_results() -> None:
    results = {
        "opacus_mnist/eps1.16/seed0": _result(0.94, 0.95, 1.1),
        "opacus_mnist/eps1.16/seed1": _result(0.96, 0.96, 1.2),
        "tb/cifar10/scatter_cnn/seed0": _result(0.65, 0.67, 3.0),
    }
    frame = control_frame("paper", results=results)
    assert tuple(frame.columns) == CONTROL_COLUMNS and len(frame) == len(CONTROLS)
    row = frame.set_index("key").loc["opacus_mnist/eps1.16"]
    assert row["seeds_done"] == 2 and row["seeds_planned"] == 3 and row["final_pct"] == [94.0, 96.0]
    assert row["mean_final_pct"] == pytest.approx(95.0) and row["std_final_pct"] == pytest.approx(1.0)
    assert row["epsilon_training"] == pytest.approx(1.15) and row["published_pct"] == 94.63
    tb = frame.set_index("key").loc["tb/cifar10/scatter_cnn"]
    assert tb["claim_key"] == "ref.control.tb.cifar10.scatter_cnn"
    assert tb["also_quoted"] == ("sec5.1.tb.cifar10.acc_eps3",)
    assert tb["mean_best_pct"] == pytest.approx(67.0) and tb["std_final_pct"] == 0.0 and tb["their_epsilon"] == 3.0
    empty = frame.set_index("key").loc["tb/mnist/cnn"]
    assert empty["seeds_done"] == 0 and math.isnan(empty["mean_final_pct"])
    assert control_frame("quick", results={})["reduced"].all()


def test_summarize() -> None:
    assert all(math.isnan(v) for v in summarize([]))
    assert summarize([1.0]) == (1.0, 0.0)


def test_every_quoted_cell_is_a_trained_claim_of_the_quoting_paper_decided_by_a_rule():
    from dpcore.papers.p002_modelmix.claims import TRAINING_CLAIMS

    quoted = [key for c in CONTROLS.values() for key in c.also_quoted]
    assert sorted(quoted) == ["sec5.1.tb.cifar10.acc_eps3", "sec5.1.tb.fmnist.acc_eps3"]
    for key in quoted:
        spec = TRAINING_CLAIMS[key]
        assert spec.rule is not None and spec.rule.epsilon == 3.0 and spec.scale == "full"


def test_the_control_table_sets_ours_beside_the_published_value_and_refuses_another_frame():
    from dpcore.papers.reference.controls import control_table

    frame = control_frame("paper", results={})
    table = control_table(frame)
    assert len(table) == len(CONTROLS) and table.columns[0] == "control"
    assert {"published %", "ours % (mean, final)", "their ε", "our ε (all releases)"} <= set(table.columns)
    assert table["published %"].tolist() == [c.published.value for c in CONTROLS.values()]
    with pytest.raises(ValueError, match="control_frame"):
        control_table(frame.drop(columns=["epsilon_total"]))
