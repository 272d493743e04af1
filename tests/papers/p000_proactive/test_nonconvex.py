"""Paper 000's asynchronous DP-SGD on the experiment runner: the trainer hook, resume, dry runs, accountants, inputs."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
import torch

from dpcore.experiments import datasets, registry
from dpcore.experiments.asynchronous import async_train_config, async_trainer, client_shards
from dpcore.experiments.config import RunConfig, config_hash
from dpcore.experiments.dryrun import dry_run
from dpcore.experiments.registry import Experiment, PlannedRun
from dpcore.experiments.runner import run_experiment
from dpcore.papers.p000_proactive import nonconvex_report as nr
from dpcore.papers.p000_proactive import training as t0
from dpcore.papers.p000_proactive.claims import CONVEX_CLAIMS, NONCONVEX_CLAIMS, TABLE_CLAIMS

torch.set_num_threads(1)

TINY = "tiny-async"


def _loader(split: str) -> tuple[np.ndarray, np.ndarray]:
    n = 96 if split == "train" else 32
    rng = np.random.default_rng(0 if split == "train" else 1)
    labels = rng.integers(0, 4, size=n)
    images = rng.integers(0, 60, size=(n, 8, 8)).astype(np.int64)
    images[np.arange(n), labels, :] += 150
    return images.astype(np.uint8), labels.astype(np.int64)


def _cfg(**kw) -> RunConfig:
    base = dict(
        dataset=TINY, model="softmax", model_kwargs={"in_features": 64, "num_classes": 4}, sampling="poisson",
        clipping="individual", batch_size=12, clip_norm=0.5, noise_multiplier=1.0, noise_convention="standard",
        epochs=2, lr=0.1, profile="quick", clients=3, delay_prob=0.5, lr_beta=0.01, lr_power=0.5, evals_per_epoch=2,
    )  # fmt: skip
    base.update(kw)
    return RunConfig(**base)


def _utility(cfg, data, model):
    return {"extra_norm": float(sum(p.detach().norm() for p in model.parameters()))}


def _plan(profile, lookup):
    return [PlannedRun("dp", _cfg(profile=profile)), PlannedRun("np", _cfg(profile=profile, noise_multiplier=0.0))]


def _eps(record, config):
    return registry.Epsilon(float(record["steps"]), 1e-5, "rounds, for the test")


def _factory(cfg, data):
    return async_trainer(cfg, data, final_extras=_utility)


ASYNC_EXPERIMENT = Experiment("tiny-async", "tiny async grid", _plan, {"paper": _eps}, trainer=_factory)


@pytest.fixture(autouse=True)
def _tiny_world():
    datasets.register_dataset(
        datasets.DatasetSpec(TINY, _loader, (("train", 96), ("test", 32)), (8, 8), 4, (0.3,), (0.3,)), replace=True
    )
    registry.register(ASYNC_EXPERIMENT, replace=True)
    yield
    registry.unregister(ASYNC_EXPERIMENT.name)
    datasets.DATASETS.pop(TINY)
    datasets.clear_cache()


def _run(root, **kw):
    return run_experiment("tiny-async", "quick", results_root=root / "res", checkpoints_root=root / "ck",
                          progress="none", **kw)  # fmt: skip


def _results(root) -> dict[str, dict]:
    return {json.loads(p.read_text())["run"]: json.loads(p.read_text()) for p in (root / "res").rglob("*.json")}


# ---------------------------------------------------------------------------------- the hook
def test_new_fields_at_their_default_keep_hashes_and_the_single_client_trainer():
    plain = RunConfig(dataset=TINY, model="softmax", sampling="shuffle", clipping="individual", batch_size=16,
                      clip_norm=1.0, epochs=1, lr=0.5, profile="quick")  # fmt: skip
    same = plain.with_(clients=1, client_data="replicate", delay_prob=0.5, lr_beta=0.0, lr_power=1.0, evals_per_epoch=1)
    assert config_hash(plain) == config_hash(same)
    assert config_hash(plain.with_(clients=2)) != config_hash(plain)
    assert plain.train_config().lr == 0.5  # the Trainer path is unchanged
    assert plain.with_(lr_beta=0.01, lr_power=0.5).train_config().lr["kind"] == "inverse_time"
    assert Experiment("x", "", _plan).trainer is None
    assert registry.get("003_table3").trainer is None  # paper 003 still trains with the single-client Trainer


def test_async_run_writes_history_records_epsilon_and_extras(tmp_path):
    outcomes = _run(tmp_path)
    assert [o.status for o in outcomes] == ["trained", "trained"]
    res = _results(tmp_path)
    dp = res["dp"]
    # T = round(k N / s) = 16 rounds, evaluated every round(N / (s * 2)) = 4 rounds
    assert [h["step"] for h in dp["history"]] == [4, 8, 12, 16]
    assert all(0 <= h["accuracy"] <= 1 and math.isfinite(h["loss"]) for h in dp["history"])
    assert len(dp["records"]) == 3 and [r["async"]["client"] for r in dp["records"]] == [0, 1, 2]
    assert dp["record"]["reduce"] == "sum" and dp["record"]["sampling"] == "poisson"
    assert dp["epsilon"]["paper"]["value"] == 16.0
    assert dp["extra_norm"] > 0
    assert res["np"]["final_parameters_sha256"] != dp["final_parameters_sha256"]
    assert [o.status for o in _run(tmp_path)] == ["skipped", "skipped"]


def test_an_interrupted_async_run_resumes_to_the_uninterrupted_result(tmp_path):
    _run(tmp_path / "a", only="dp")

    class Stop(Exception):
        pass

    def stop_after_two(name, index, entry):
        if index == 2:
            raise Stop

    with pytest.raises(Stop):
        _run(tmp_path / "b", only="dp", on_epoch=stop_after_two)
    assert not list((tmp_path / "b" / "res").rglob("*.json"))
    _run(tmp_path / "b", only="dp")
    a, b = _results(tmp_path / "a")["dp"], _results(tmp_path / "b")["dp"]
    assert b["sessions"] == 2 and a["sessions"] == 1
    assert a["final_parameters_sha256"] == b["final_parameters_sha256"]
    assert a["history"] == b["history"] and a["records"] == b["records"]


def test_split_clients_get_disjoint_shards():
    x, y = torch.arange(10.0).view(10, 1), torch.arange(10)
    shards = client_shards(_cfg(client_data="split", clients=3), x, y)
    assert sorted(torch.cat([s[1] for s in shards]).tolist()) == list(range(10))
    assert [len(s[1]) for s in shards] == [4, 3, 3]
    replicated = client_shards(_cfg(), x, y)
    assert len(replicated) == 3 and all(s[0] is x and s[1] is y for s in replicated)


# ---------------------------------------------------------------------------------- dry runs
@pytest.mark.slow
@pytest.mark.parametrize(
    ("dataset", "only"), [("mnist", ["s/10", "eps/2", "nonprivate/C0.025"]), ("cifar10", ["s/689"])]
)
def test_paper_profile_dry_run_extrapolates_async_rounds(dataset, only, tmp_path):
    stream = io.StringIO()
    # one timed round, a small evaluation probe: the test checks the plan and the extrapolation, not the estimate
    rows = dry_run(t0.EXPERIMENTS[dataset], "paper", only=only, results_root=tmp_path / "r",
                   checkpoints_root=tmp_path / "c", stream=stream, steps=1, probe_batch=16, eval_probe=16)  # fmt: skip
    assert [r.name for r in rows] == only
    assert all(r.extrapolated and r.step_seconds > 0 and r.estimate_seconds > 0 for r in rows)
    if dataset == "mnist":
        assert [r.steps for r in rows] == [36_000, 167, 973]  # T = round(6 · 60000 / s)
    else:
        assert rows[0].steps == 508  # round(7 · 50000 / 689)
    assert "EXTRAPOLATED" in stream.getvalue()


def test_plans_follow_tables_4_5_7_8():
    paper = {r.name: r.config for r in registry.get("000_mnist").runs("paper")}
    assert [n for n in paper if n.startswith("s/")] == [f"s/{s}" for s in (10, 25, 50, 100, 200, 300, 370)]
    assert "eps/0.15007" not in paper  # Table 7 row 1 is Table 4's s = 370 run
    assert paper["eps/2"].batch_size == 2159 and paper["eps/2"].noise_multiplier == 3.31648
    assert all(c.clients == 5 and c.clip_norm in (0.025, 0.05, 0.075, 0.1, 0.2) for c in paper.values())
    assert paper["s/370"].epochs == 6 and paper["s/370"].train_size is None and paper["s/370"].lr_beta == 0.01
    cifar = {r.name: r.config for r in registry.get("000_cifar10").runs("paper")}
    assert cifar["eps/0.5"].batch_size == 689 and cifar["s/689"].noise_multiplier == 6.572
    assert cifar["s/689"].max_physical_batch == 64 and cifar["s/689"].model == "alexnet_cifar"
    quick = {r.name: r.config for r in registry.get("000_mnist").runs("quick")}
    assert quick["s/370"].batch_size == 18 and quick["s/370"].profile == "quick"  # 370 · 3000/60000


# ---------------------------------------------------------------------------------- accountants
def test_paper_and_theorem_epsilon_of_table7_row1():
    record = {"clip_norm": 0.025, "noise_std": 0.025 * 12.10881, "batch_size": 370, "dataset_size": 60000,
              "steps": 973}  # fmt: skip
    cfg = registry.get("000_mnist").runs("paper")[6].config
    paper = t0.paper_epsilon(record, cfg)
    theorem = t0.theorem_epsilon(record, cfg)
    assert paper.value == pytest.approx(0.15007, abs=1e-5) and paper.delta == 1 / 60000
    assert theorem.value == pytest.approx(0.152148, abs=1e-5)  # eq. (6)
    assert "FAILS" not in paper.label and "FAILS" not in theorem.label
    none = t0.paper_epsilon({**record, "noise_std": 0.0}, cfg)
    assert math.isinf(none.value)


def test_claims_are_separate_from_the_tables_notebook():
    assert not set(NONCONVEX_CLAIMS) & (set(TABLE_CLAIMS) | set(CONVEX_CLAIMS))
    assert all(c.scale == "full" for c in NONCONVEX_CLAIMS.values())


# ---------------------------------------------------------------------------------- inputs
@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"clients": 0}, "clients"),
        ({"client_data": "copy"}, "client_data"),
        ({"delay_prob": 1.5}, "delay_prob"),
        ({"lr_beta": -0.1}, "lr_beta"),
        ({"lr_power": 2.0}, "lr_power"),
        ({"evals_per_epoch": 0}, "evals_per_epoch"),
        ({"lr_rule": "decay_on_drop", "lr_decay": 0.9}, "lr_beta"),
        ({"step_scaling": "avg"}, "step_scaling"),
        ({"step_scaling": "mean", "clients": 1}, "step_scaling"),
    ],
)
def test_bad_fields_raise(change, match):
    with pytest.raises(ValueError, match=match):
        _cfg(**change)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="clients=1"):
        _cfg().train_config()
    with pytest.raises(ValueError, match="clipping"):
        async_train_config(_cfg(clipping="batch"), 96)
    with pytest.raises(ValueError, match="batch_size"):
        async_train_config(_cfg(), 5)
    with pytest.raises(ValueError, match="trainer"):
        Experiment("x", "", _plan, trainer=3)
    with pytest.raises(ValueError, match="s_paper"):
        t0.scaled_s(t0.SCALES[("mnist", "paper")], 0)
    with pytest.raises(ValueError, match="dataset"):
        nr.run_frame("svhn", "quick")
    with pytest.raises(ValueError, match="runs"):
        nr.missing_runs("not a frame")


# ---------------------------------------------------------------------------------- step_scaling (issue 21)
def test_step_scaling_mean_is_the_sum_version_with_lr_over_s_and_keeps_hashes_and_epsilon():
    """§2 of paper 000: "scaling the step size inversely with s_i": η̄·U/s equals the "sum" run at lr η̄/s."""
    mean_cfg = _cfg(step_scaling="mean", batch_size=12, lr=0.3)
    sum_cfg = _cfg(batch_size=12, lr=0.3 / 12)
    data = datasets.prepare(mean_cfg)
    assert config_hash(_cfg()) == config_hash(_cfg(step_scaling="sum"))  # the default keeps old run names
    assert async_train_config(mean_cfg, 96).reduce == "mean" and async_train_config(sum_cfg, 96).reduce == "sum"
    a, b = async_trainer(mean_cfg, data), async_trainer(sum_cfg, data)
    a.run(), b.run()
    for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-7)
    ra, rb = a.records()[0], b.records()[0]
    assert ra["noise_std"] == rb["noise_std"] and ra["steps"] == rb["steps"]  # same mechanism, same ε
    assert t0.standard_per_client(ra, mean_cfg).value == t0.standard_per_client(rb, sum_cfg).value


def test_paper_plan_repeats_the_sweeps_under_step_scaling_mean():
    runs = {r.name: r for r in t0.plan("mnist", "paper")}
    assert runs["mean/s/370"].config.step_scaling == "mean" and runs["s/370"].config.step_scaling == "sum"
    assert config_hash(runs["mean/s/370"].config) != config_hash(runs["s/370"].config)
    assert {f"mean/s/{s}" for s in (10, 25, 50, 100, 200, 300, 370)} <= set(runs)
    assert {f"mean/eps/{e:g}" for e in (0.2, 0.25, 0.5, 0.75, 1.0, 2.0)} <= set(runs)
    assert "mean/nonprivate/C0.025" in runs and "mean/nonprivate/C0.05" not in runs
    assert "step_scaling=mean" in runs["mean/s/370"].note
    with pytest.raises(ValueError, match="step_scaling"):
        t0.mode_run_name("avg", "s/370")


def test_why_ours_differs_frame_and_figure_show_not_run_readings():
    import pandas as pd

    def frame(mode, done):
        rows = []
        for _, base, _ in nr.WHY_QUANTITIES:
            name = base if mode == "sum" else f"{mode}/{base}"
            rows.append({"run": name, "base": base, "status": "done" if done else "todo", "final_accuracy": 0.5,
                         "epsilon_paper": 0.15, "epsilon_standard": 0.04})  # fmt: skip
        return pd.DataFrame(rows)

    printed = {k: c.value for k, c in NONCONVEX_CLAIMS.items()}
    modes = nr.mode_frame({"sum": frame("sum", True), "mean": frame("mean", False)}, printed)
    assert len(modes) == 2 * len(nr.WHY_QUANTITIES)
    assert modes[modes["reading"] == "sum"]["ours"].tolist() == [50.0] * 3
    assert modes[modes["reading"] == "mean"]["ours"].isna().all()
    assert modes.iloc[0]["printed"] == 93.0 and math.isnan(modes.iloc[2]["printed"])  # ε = 2: nothing printed
    fig = nr.why_differs_figure(modes, {"printed": pd.DataFrame(columns=["clip_norm"])})
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "not run" in texts and any("PLD 0.04" in t for t in texts)
    with pytest.raises(ValueError, match="step scalings"):
        nr.mode_frame({"avg": frame("sum", True)}, printed)


def _sweep_frames(scale, np_acc):
    """(run_frame, history_frame)-shaped frames: the Table 7 row ε = 2 and the non-private run at C = 0.025."""
    import pandas as pd

    runs = pd.DataFrame([
        {"run": "eps/2", "kind": "eps", "status": "done", "s": 108, "sigma": 3.3, "clip_norm": t0.CLIP,
         "eps_label": 2.0, "final_accuracy": 0.35, "epsilon_paper": 1.46, "epsilon_theorem": 1.78,
         "epsilon_standard": 0.14, "s_paper": math.nan},
        {"run": "nonprivate/C0.025", "kind": "nonprivate", "status": "done", "s": 18, "sigma": 0.0,
         "clip_norm": t0.CLIP, "eps_label": math.nan, "final_accuracy": np_acc, "epsilon_paper": math.inf,
         "epsilon_theorem": math.inf, "epsilon_standard": math.inf, "s_paper": math.nan},
    ])  # fmt: skip
    history = pd.DataFrame(
        [
            {"run": r, "epochs_done": e, "gradients": e * scale, "accuracy": a, "loss": 1.0}
            for r, a in (("eps/2", 0.35), ("nonprivate/C0.025", np_acc))
            for e in (0.5, 1.0)
        ]
    )
    return runs, history


def test_reduced_sweep_figures_draw_the_committed_full_scale_runs_and_say_why_a_floor_is_missed():
    import pandas as pd

    quick, full = _sweep_frames(3000, 0.553), _sweep_frames(360000, 0.97)
    fig, data = nr.eps_sweep_figure("mnist", *quick, committed=full)
    assert len(fig.axes) == 3 and fig.axes[2].get_title().startswith("full scale, committed")
    assert set(data["scale"]) == {"reduced", "full, committed"} and data["gradients"].max() == 360000
    assert "non-private 55.3 % < the 90 % floor: 3,000 gradient computations" in fig.axes[0].get_xlabel()
    fig, _ = nr.eps_sweep_figure("mnist", *_sweep_frames(3000, 0.95), committed=full)  # floor reached: no note
    assert "floor" not in fig.axes[0].get_xlabel()
    empty = (full[0].assign(status="todo"), full[1].iloc[0:0])
    fig, _ = nr.s_sweep_figure("mnist", *quick, committed=empty)
    assert "not run: no committed full-scale result" in [t.get_text() for t in fig.axes[2].texts]
    assert len(nr.eps_sweep_figure("mnist", *quick)[0].axes) == 2  # the paper profile: no third panel
    with pytest.raises(ValueError, match="committed"):
        nr.eps_sweep_figure("mnist", *quick, committed=(pd.DataFrame(),))


def test_reduced_utility_figure_draws_the_committed_full_scale_curves():
    import pandas as pd

    def util(base):
        return pd.DataFrame([{"clip_norm": 0.025, "sigma": s, "fraction": 1.0 - s / 100, "sd": 0.01,
                              "base_accuracy": base, "draws": 3} for s in (0.0, 6.0, 12.0)])  # fmt: skip

    runs = pd.DataFrame(columns=["run", "status"])
    fig = nr.utility_figure({"mnist": (util(0.55), runs)}, committed={"mnist": util(0.97)})
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "C = 0.025: full scale, committed (w* 97.0 %)" in labels and any("w* 55.0 %" in x for x in labels)
    plain = nr.utility_figure({"mnist": (util(0.55), runs)})
    assert not any("committed" in x for x in plain.axes[0].get_legend_handles_labels()[1])
    with pytest.raises(ValueError, match="committed"):
        nr.utility_figure({"mnist": (util(0.55), runs)}, committed={"mnist": "x"})


def test_floor_note_is_mnist_only_and_cifar10_at_chance_says_pipeline_check():
    quick, full = _sweep_frames(256, 0.065), _sweep_frames(350000, 0.5)
    fig, _ = nr.s_sweep_figure("cifar10", *quick, committed=full)
    label = fig.axes[0].get_xlabel()
    assert "floor" not in label and "non-private 6.5 %: near chance after 256 gradient computations" in label
    fig, _ = nr.s_sweep_figure("cifar10", *quick, committed=(full[0].assign(status="todo"), full[1].iloc[0:0]))
    assert "no full-scale run is committed" in fig.axes[0].get_xlabel().replace("\n", " ")
    fig, _ = nr.s_sweep_figure("cifar10", *_sweep_frames(256, 0.45), committed=full)
    assert "\n" not in fig.axes[0].get_xlabel()  # no floor for CIFAR-10 and not at chance: no note


def test_undecided_names_the_orderings_whose_runs_end_near_chance():
    """Issue 41: an ordering whose two compared runs both end below twice chance (20 %) is inconclusive (the reason
    names both runs); one run above the floor, a missing run or CIFAR-10's lack of an s = 10 claim decides it."""
    import pandas as pd

    def runs(s_final: dict, eps_final: dict, status: str = "done") -> pd.DataFrame:
        rows = [{"run": f"s/{s:g}", "kind": "s", "s_paper": s, "eps_label": math.nan, "status": status,
                 "final_accuracy": a} for s, a in s_final.items()]  # fmt: skip
        rows += [{"run": f"eps/{e:g}", "kind": "eps", "s_paper": math.nan, "eps_label": e, "status": "done",
                  "final_accuracy": a} for e, a in eps_final.items()]  # fmt: skip
        return pd.DataFrame(rows)

    chance = runs({10.0: 0.11, 50.0: 0.095, 200.0: 0.12}, {0.15: 0.74, 3.0: 0.9})
    out = nr.undecided("mnist", chance)
    assert set(out) == {"nonconvex.mnist.larger_s_better", "nonconvex.mnist.s10_worst"}
    assert out["nonconvex.mnist.larger_s_better"] == (
        "the two runs it compares end below 20 % (2x chance): s = 200 12.00 %, s = 10 11.00 %"
    )
    assert "s = 10 11.00 %, s = 50 9.50 %" in out["nonconvex.mnist.s10_worst"]
    assert set(nr.undecided("cifar10", chance)) == {"nonconvex.cifar10.larger_s_better"}  # no s = 10 claim there
    above = runs({10.0: 0.11, 50.0: 0.095, 200.0: 0.35}, {0.15: 0.12, 3.0: 0.19})  # s = 200 decides the first
    assert set(nr.undecided("mnist", above)) == {"nonconvex.mnist.s10_worst", "nonconvex.mnist.larger_eps_better"}
    assert nr.undecided("mnist", runs({10.0: 0.11, 50.0: 0.095}, {}, status="running")) == {}  # not run
    assert nr.undecided("mnist", runs({10.0: 0.5, 50.0: 0.6}, {0.15: 0.5, 3.0: 0.9})) == {}
    with pytest.raises(ValueError, match="dataset"):
        nr.undecided("svhn", chance)


def test_reduced_fig03_draws_the_committed_full_scale_runs_in_a_second_row():
    """Issue 41: the quick Fig. 3 (paper 000) shows the committed full-scale panels beneath the reduced check."""
    import pandas as pd

    def util(base):
        return pd.DataFrame([{"clip_norm": t0.CLIP, "sigma": s, "fraction": 1.0 - s / 100, "sd": 0.01,
                              "base_accuracy": base, "draws": 3} for s in (0.0, 6.0, 12.0)])  # fmt: skip

    quick, full = _sweep_frames(3000, 0.553), _sweep_frames(360000, 0.97)
    fig = nr.fig03(*quick, util(0.55), committed=(*full, util(0.97)))
    titles = [ax.get_title() for ax in fig.axes]
    assert len(fig.axes) == 6 and titles[0].startswith("reduced check: (a)")
    assert all(t.startswith("full scale, committed (results/paper/)") for t in titles[3:])
    assert "the committed full-scale runs are in the lower row" in fig.axes[2].get_xlabel().replace("\n", " ")
    assert max(line.get_xdata().max() for line in fig.axes[5].get_lines()) == 360000
    empty = (full[0].assign(status="todo"), full[1].iloc[0:0], util(0.97))
    fig = nr.fig03(*quick, util(0.55), committed=empty)
    assert "not run: no committed full-scale result" in [t.get_text() for t in fig.axes[5].texts]
    assert "no full-scale run is committed" in fig.axes[2].get_xlabel().replace("\n", " ")
    plain = nr.fig03(*quick, util(0.55))  # the paper profile: one row, no "reduced check" prefix
    assert len(plain.axes) == 3 and plain.axes[0].get_title() == "(a) utility graph"
    with pytest.raises(ValueError, match="committed"):
        nr.fig03(*quick, util(0.55), committed=full)
