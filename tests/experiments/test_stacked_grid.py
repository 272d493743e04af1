"""The grid planner of dpcore.experiments.stacked_grid (issue 44): which runs of paper 003's grid stack, and in
which order the device session takes them (|S_b| ascending; IC and BC, then NP, then MC; tuning first).  No GPU,
no training."""

from __future__ import annotations

from dpcore.experiments.config import RunConfig
from dpcore.experiments.registry import PlannedRun
from dpcore.experiments.stacked_grid import plan_groups, priority, stackable


def _run(name: str, clipping: str, batch: int, **kw) -> PlannedRun:
    private = clipping != "none"
    cfg = RunConfig(dataset="mnist", model="lenet5", sampling=kw.pop("sampling", "fixed"), clipping=clipping,
                    batch_size=batch, epochs=kw.pop("epochs", 100), lr=0.025, profile="paper",
                    clip_norm=1.0 if private else None, noise_multiplier=2.0 if private else 0.0,
                    group_size=64 if clipping == "mixed" else None, lr_rule="decay_on_drop", lr_decay=0.9, **kw)
    return PlannedRun(name, cfg)


def test_stackable_is_the_stacked_trainers_scope():
    assert stackable(_run("a", "individual", 64).config)
    assert stackable(_run("b", "batch", 64, sampling="shuffle").config)
    assert not stackable(_run("c", "none", 64).config)
    assert not stackable(_run("d", "mixed", 128).config)
    assert not stackable(_run("e", "individual", 64, sampling="poisson").config)
    assert not stackable(_run("f", "batch", 64, noise_placement="clipped_mean_noise_over_batch").config)


def test_groups_follow_the_issue_order_and_split_at_max_stack():
    runs = [_run("mnist/SS/IC/b128", "individual", 128), _run("mnist/SS/NP/b64", "none", 64),
            _run("mnist/SS/BC/b64", "batch", 64), _run("mnist/SS/IC/b64/tune/C1", "individual", 64, epochs=5),
            _run("mnist/SH/IC/b64", "individual", 64, sampling="shuffle"), _run("mnist/SS/MC/b128", "mixed", 128)]
    groups = plan_groups(runs, max_stack=2)
    names = [[r.name for r in g] for g in groups]
    assert names == [["mnist/SS/IC/b64/tune/C1", "mnist/SH/IC/b64"], ["mnist/SS/BC/b64"], ["mnist/SS/NP/b64"],
                     ["mnist/SS/IC/b128"], ["mnist/SS/MC/b128"]]
    assert priority(runs[3]) < priority(runs[2]) < priority(runs[1]) < priority(runs[0])
