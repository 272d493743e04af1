"""dpcore.experiments: config hashing, atomic results, skipping, resuming, dry runs, CLI (tiny synthetic grid)."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import math

import numpy as np
import pytest
import torch

from dpcore.experiments import adapters, cli, datasets, registry
from dpcore.experiments.config import RunConfig, canonical_json, config_hash
from dpcore.experiments.dryrun import cost_key, dry_run, evaluations_per_epoch
from dpcore.experiments.registry import Epsilon, Experiment, PlannedRun
from dpcore.experiments.runner import run_experiment, select
from dpcore.experiments.store import Store, atomic_write_json, decode_float

torch.set_num_threads(1)

TINY = "tiny-test"


def _tiny_loader(split: str) -> tuple[np.ndarray, np.ndarray]:
    n = 120 if split == "train" else 40
    rng = np.random.default_rng(0 if split == "train" else 1)
    labels = rng.integers(0, 4, size=n)
    images = rng.integers(0, 60, size=(n, 8, 8)).astype(np.int64)
    images[np.arange(n), labels, :] += 150  # the label is the bright row: learnable
    return images.astype(np.uint8), labels.astype(np.int64)


def _missing_loader(split: str) -> tuple[np.ndarray, np.ndarray]:
    raise adapters.DatasetUnavailable(f"no files for {split}")


@pytest.fixture(autouse=True)
def _tiny_world():
    datasets.register_dataset(
        datasets.DatasetSpec(TINY, _tiny_loader, (("train", 120), ("test", 40)), (8, 8), 4, (0.3,), (0.3,)),
        replace=True,
    )
    datasets.register_dataset(
        datasets.DatasetSpec("tiny-missing", _missing_loader, (("train", 50), ("test", 20)), (8, 8), 4, (0.3,), (0.3,)),
        replace=True,
    )
    registry.register(TINY_EXPERIMENT, replace=True)
    registry.register(TUNED_EXPERIMENT, replace=True)
    yield
    registry.unregister(TINY_EXPERIMENT.name)
    registry.unregister(TUNED_EXPERIMENT.name)
    for name in (TINY, "tiny-missing"):
        datasets.DATASETS.pop(name)
    datasets.clear_cache()


def _cfg(**kw) -> RunConfig:
    base = dict(
        dataset=TINY, model="softmax", model_kwargs={"in_features": 64, "num_classes": 4}, sampling="shuffle",
        clipping="individual", batch_size=16, clip_norm=1.0, noise_multiplier=0.5, epochs=4, lr=0.5,
        lr_rule="decay_on_drop", lr_decay=0.9, profile="quick", test_size=32,
    )  # fmt: skip
    base.update(kw)
    return RunConfig(**base)


def _plan(profile, lookup):
    return [
        PlannedRun("ic", _cfg(profile=profile)),
        PlannedRun("bc", _cfg(profile=profile, sampling="fixed", clipping="batch", lr=2.0)),
        PlannedRun("mc", _cfg(profile=profile, clipping="mixed", group_size=4)),
        PlannedRun("np", _cfg(profile=profile, clipping="none", clip_norm=None, noise_multiplier=0.0)),
    ]


def _eps(record, config):
    return Epsilon(float(record["steps"]), 1e-5, "steps, for the test")


TINY_EXPERIMENT = Experiment("tiny", "tiny synthetic grid", _plan, {"paper": _eps})


def _tuned_plan(profile, lookup):
    tunes = {c: _cfg(profile=profile, clip_norm=c, validation_size=30, eval_split="validation", epochs=1)
             for c in (0.1, 1.0)}  # fmt: skip
    runs = [PlannedRun(f"tune/C{c:g}", cfg) for c, cfg in tunes.items()]
    results = {c: lookup(cfg) for c, cfg in tunes.items()}
    if any(r is None for r in results.values()):
        runs.append(PlannedRun("final", _cfg(profile=profile, clip_norm=0.1), ready=False, waits_for=("tune/*",)))
    else:
        best = max(results, key=lambda c: (results[c]["best_accuracy"], -c))
        runs.append(PlannedRun("final", _cfg(profile=profile, clip_norm=best)))
    return runs


TUNED_EXPERIMENT = Experiment("tiny-tuned", "tiny grid with a tuned C", _tuned_plan)


def _run(tmp_path, exp="tiny", **kw):
    kw.setdefault("progress", "none")
    return run_experiment(exp, "quick", results_root=tmp_path / "res", checkpoints_root=tmp_path / "ck", **kw)


# ---------------------------------------------------------------------------------- config
def test_config_hash_is_stable_and_canonical():
    cfg = _cfg()
    assert config_hash(cfg) == config_hash(RunConfig.from_dict(json.loads(canonical_json(cfg.to_dict()))))
    assert config_hash(_cfg(lr=1, clip_norm=2)) == config_hash(_cfg(lr=1.0, clip_norm=2.0))  # 1 and 1.0 are one value
    # a golden value: the hash must not change between processes, machines or Python versions
    assert config_hash(cfg) == GOLDEN_HASH


GOLDEN_HASH = "7fa21e9adacf623f"


def test_config_hash_leaves_out_fields_at_their_default():
    # a field added later with a default must not rename existing runs' results
    import hashlib

    cfg = _cfg()
    set_here = {"dataset", "model", "sampling", "clipping", "batch_size", "epochs", "lr", "profile", "clip_norm",
                "noise_multiplier", "lr_rule", "lr_decay", "model_kwargs", "test_size"}  # fmt: skip
    explicit = {k: v for k, v in cfg.to_dict().items() if k in set_here}
    assert config_hash(cfg) == hashlib.sha256(canonical_json(explicit).encode()).hexdigest()[:16]
    assert config_hash(cfg) != config_hash(_cfg(device="cpu"))

_CHANGES = {
    "dataset": "other", "model": "logistic", "sampling": "fixed", "clipping": "batch", "batch_size": 8, "epochs": 5,
    "lr": 0.25, "profile": "paper", "clip_norm": 2.0, "noise_multiplier": 1.0, "noise_convention": "standard",
    "lr_rule": "constant", "lr_decay": 0.5, "model_kwargs": {"in_features": 64, "num_classes": 5},
    "train_size": 100, "validation_size": 10, "test_size": 16, "eval_split": "validation", "data_seed": 1, "seed": 1,
    "engine": "vmap", "max_physical_batch": 8, "device": "cpu", "group_size": 4,
    # paper 000 (issue 13)
    "clients": 2, "client_data": "split", "delay_prob": 0.25, "lr_beta": 0.01, "lr_power": 0.5, "evals_per_epoch": 2,
    # paper 002 (issue 14)
    "steps": 10, "momentum": 0.9, "modelmix_tau": ((1.0, 0.1),), "modelmix_gap_rule": "paper", "linf_p": 4,
    "train_eval_size": 8,
    # paper 000 and 003 modes (issue 21)
    "step_scaling": "mean", "clip_scope": "per_tensor", "noise_placement": "clipped_mean_noise_over_m",
    # paper 002 modes (issue 22)
    "normalization": "private_bn", "bn_noise_multiplier": 2.0, "eval_previous": True,
}  # fmt: skip


_BASES = {"group_size": {"clipping": "mixed", "group_size": 8}, "eval_split": {"validation_size": 10},
          "lr_beta": {"lr_rule": "constant", "lr_decay": 1.0},
          "modelmix_gap_rule": {"modelmix_tau": ((1.0, 0.1),)}, "step_scaling": {"clients": 2},
          "eval_previous": {"modelmix_tau": ((1.0, 0.1),)},
          "normalization": {"model": "scatter_cnn", "model_kwargs": {"dataset": "fmnist"}},
          "bn_noise_multiplier": {"model": "scatter_cnn", "model_kwargs": {"dataset": "fmnist", "norm": "standardize"},
                                  "normalization": "private_bn", "bn_noise_multiplier": 1.0}}  # fmt: skip
_STANDARDIZED = {"model_kwargs": {"dataset": "fmnist", "norm": "standardize"}, "bn_noise_multiplier": 1.0}
_ALSO = {"lr_rule": {"lr_decay": 1.0}, "normalization": _STANDARDIZED}


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(RunConfig)])
def test_config_hash_is_sensitive_to_every_field(field):
    assert field in _CHANGES, f"add a changed value for the new field {field}"
    base = _BASES.get(field, {})
    changed = {**base, field: _CHANGES[field], **_ALSO.get(field, {})}
    assert config_hash(_cfg(**base)) != config_hash(_cfg(**changed))


@pytest.mark.parametrize(
    "field, value",
    [
        ("model", "nope"), ("sampling", "random"), ("clipping", "layer"), ("batch_size", 0), ("epochs", 2.5),
        ("lr", -1.0), ("lr_decay", 1.5), ("noise_multiplier", -0.1), ("clip_norm", 0.0), ("group_size", 3),
        ("validation_size", -1), ("eval_split", "train"), ("profile", "full"), ("device", "tpu"), ("seed", -1),
        ("model_kwargs", {"in_features": [1]}), ("max_physical_batch", 0), ("engine", "fast"),
    ],
)  # fmt: skip
def test_bad_configs_raise_value_error_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        _cfg(**{field: value})


def test_config_cross_field_checks():
    with pytest.raises(ValueError, match="clip_norm"):
        _cfg(clipping="none", noise_multiplier=0.0)  # a clip norm on a non-private run
    with pytest.raises(ValueError, match="noise_multiplier"):
        _cfg(clipping="none", clip_norm=None)
    with pytest.raises(ValueError, match="group_size"):
        _cfg(clipping="mixed")
    with pytest.raises(ValueError, match="group_size"):
        _cfg(clipping="mixed", group_size=16)  # m = 1 is batch clipping
    with pytest.raises(ValueError, match="validation_size"):
        _cfg(eval_split="validation")
    with pytest.raises(ValueError, match="lr_decay"):
        _cfg(lr_rule="constant")
    with pytest.raises(ValueError, match="batch_size"):
        _cfg(train_size=20, validation_size=10)
    with pytest.raises(ValueError, match="no field"):
        RunConfig.from_dict({**_cfg().to_dict(), "sigma": 2})
    mc = _cfg(clipping="mixed", group_size=4)
    assert (mc.s, mc.m) == (4, 4) and (_cfg().s, _cfg().m) == (1, 16)


# ---------------------------------------------------------------------------------- data
def test_validation_split_is_carved_from_training_data_and_cached():
    cfg = _cfg(validation_size=30, eval_split="validation", train_size=100)
    data = datasets.prepare(cfg)
    assert data.train[0].shape == (70, 1, 8, 8) and data.evaluation[0].shape == (30, 1, 8, 8)
    x, _ = _tiny_loader("train")
    full = datasets.prepare(_cfg(train_size=100))
    assert full.train[0].shape[0] == 100
    rows = {tuple(r) for r in full.train[0].flatten(1).tolist()}
    assert all(tuple(r) in rows for r in data.evaluation[0].flatten(1).tolist())  # validation ⊂ training pool
    assert not {tuple(r) for r in data.train[0].flatten(1).tolist()} & {
        tuple(r) for r in data.evaluation[0].flatten(1).tolist()
    }
    assert datasets.prepare(cfg) is data
    assert data.provenance["train"]["used"] == 70 and not data.synthetic


def test_missing_data_raises_unless_a_dry_run_allows_a_synthetic_stand_in():
    cfg = _cfg(dataset="tiny-missing", test_size=None)
    with pytest.raises(adapters.DatasetUnavailable, match="no files"):
        datasets.prepare(cfg)
    data = datasets.prepare(cfg, synthetic_ok=True)
    assert data.synthetic and "SYNTHETIC" in data.provenance["train"]["source"]
    assert data.train[0].shape == (50, 1, 8, 8)
    with pytest.raises(ValueError, match="dataset"):
        datasets.prepare(_cfg(dataset="nope"))


def test_adapters_accept_dict_and_dataclass_records():
    @dataclasses.dataclass(frozen=True)
    class RunRecord:
        steps: int
        batch_size: tuple[int, ...]
        engine: frozenset

    assert adapters.record_to_dict({"a": (1, 2), "b": np.float64(0.5)}) == {"a": [1, 2], "b": 0.5}
    assert adapters.record_to_dict(RunRecord(3, (4, 5), frozenset({"b", "a"}))) == {
        "steps": 3,
        "batch_size": [4, 5],
        "engine": ["a", "b"],
    }
    class WithToDict:
        def to_dict(self):
            return {"steps": 7, "sizes": (1, 2)}

    assert adapters.record_to_dict(WithToDict()) == {"steps": 7, "sizes": [1, 2]}
    with pytest.raises(ValueError, match="record"):
        adapters.record_to_dict([1, 2])
    with pytest.raises(ValueError, match="name"):
        adapters.load_dataset("imagenet", "train")
    with pytest.raises(ValueError, match="split"):
        adapters.load_dataset("mnist", "val")


# ---------------------------------------------------------------------------------- runner
def test_grid_runs_skips_finished_and_force_retrains(tmp_path):
    out = _run(tmp_path)
    assert [o.status for o in out] == ["trained"] * 4
    res = json.loads(out[0].path.read_text())
    assert res["run"] == "ic" and res["hash"] == out[0].hash and len(res["history"]) == 4
    steps = float(res["record"]["steps"])
    assert res["epsilon"]["paper"] == {"value": steps, "delta": 1e-5, "label": "steps, for the test"}
    assert res["best_accuracy"] >= res["history"][0]["accuracy"] and 0.0 <= res["final_accuracy"] <= 1.0
    assert res["record"]["sampling"] == "shuffle" and res["record"]["noise_convention"] == "replace_one"
    for key in ("wall_seconds", "device", "data", "dpcore_version", "git_commit", "final_parameters_sha256"):
        assert key in res
    assert res["cpu_capability"] == torch.backends.cpu.get_cpu_capability() and res["device_name"]
    mtimes = {o.name: o.path.stat().st_mtime_ns for o in out}
    again = _run(tmp_path)
    assert [o.status for o in again] == ["skipped"] * 4
    assert {o.name: o.path.stat().st_mtime_ns for o in again} == mtimes
    forced = _run(tmp_path, only="np", force=True)
    assert [(o.name, o.status) for o in forced] == [("np", "trained")]
    assert json.loads(forced[0].path.read_text())["final_parameters_sha256"] == json.loads(
        out[3].path.read_text()
    )["final_parameters_sha256"]  # retraining from scratch is deterministic


class Killed(Exception):
    pass


def _kill_after(epochs: int):
    def hook(name, epoch, entry):
        if epoch == epochs:
            raise Killed(name)

    return hook


@pytest.mark.parametrize("run", ["ic", "bc", "mc"])
def test_killed_run_resumes_with_bit_identical_parameters(tmp_path, run):
    whole = _run(tmp_path / "a", only=run)
    with pytest.raises(Killed):
        _run(tmp_path / "b", only=run, on_epoch=_kill_after(2))
    store = Store.default("quick", "tiny", results_root=tmp_path / "b" / "res", checkpoints_root=tmp_path / "b" / "ck")
    cfg = next(r.config for r in TINY_EXPERIMENT.runs("quick") if r.name == run)
    assert not store.result_path(cfg).exists(), "a result is written only when the run finished"
    assert store.checkpoint_path(cfg).exists()
    assert not list(store.checkpoint_path(cfg).parent.glob("*.tmp"))
    epochs_after_resume = []
    resumed = _run(tmp_path / "b", only=run, on_epoch=lambda name, epoch, entry: epochs_after_resume.append(epoch))
    assert epochs_after_resume == [3, 4], "the resumed session trains only the epochs left"
    a, b = (json.loads(o[0].path.read_text()) for o in (whole, resumed))
    assert (a["sessions"], b["sessions"]) == (1, 2)
    # each session names the code it ran and the step it started from
    assert [(c["session"], c["from_step"]) for c in a["code"]] == [(1, 0)]
    assert [c["session"] for c in b["code"]] == [1, 2] and b["code"][0]["from_step"] == 0
    assert 0 < b["code"][1]["from_step"] < b["record"]["steps"]
    assert all(c["git_commit"] == a["git_commit"] for c in a["code"] + b["code"])
    assert a["final_parameters_sha256"] == b["final_parameters_sha256"]
    assert a["history"] == b["history"] and a["record"]["steps"] == b["record"]["steps"]


def test_a_checkpoint_from_before_session_code_was_recorded_says_so(tmp_path):
    """A checkpoint without the "code" list (written by an older dpcore) resumes; the result says which sessions'
    commits are unknown instead of crediting them to the resuming session's commit."""
    with pytest.raises(Killed):
        _run(tmp_path, only="ic", on_epoch=_kill_after(2))
    store = Store.default("quick", "tiny", results_root=tmp_path / "res", checkpoints_root=tmp_path / "ck")
    cfg = next(r.config for r in TINY_EXPERIMENT.runs("quick") if r.name == "ic")
    state = torch.load(store.checkpoint_path(cfg), weights_only=True)
    del state["code"]
    torch.save(state, store.checkpoint_path(cfg))
    result = json.loads(_run(tmp_path, only="ic")[0].path.read_text())
    first, last = result["code"]
    assert first["sessions"] == "1-1" and first["git_commit"] is None and "not recorded" in first["note"]
    assert last["session"] == 2 and last["git_commit"] == result["git_commit"] and last["from_step"] > 0


def test_dependent_runs_wait_then_run(tmp_path):
    assert [r.name for r in select(TUNED_EXPERIMENT.runs("quick"), "final")] == ["final"]
    assert [r.name for r in select(TUNED_EXPERIMENT.runs("quick"), "final", dependencies=True)] == [
        "tune/C0.1", "tune/C1", "final"
    ]
    assert [r.status for r in dry_run("tiny-tuned", "quick", results_root=tmp_path / "res", stream=io.StringIO())] == [
        "todo", "todo", "waiting"
    ]
    out = _run(tmp_path, exp="tiny-tuned", only="final")  # runs the tuning it waits for first
    assert [(o.name, o.status) for o in out] == [("tune/C0.1", "trained"), ("tune/C1", "trained"), ("final", "trained")]
    final = json.loads(out[-1].path.read_text())
    tunes = [json.loads(o.path.read_text()) for o in out[:2]]
    best = max(tunes, key=lambda r: (r["best_accuracy"], -r["config"]["clip_norm"]))
    assert final["config"]["clip_norm"] == best["config"]["clip_norm"]
    assert all(t["eval_split"] == "validation" and t["record"]["dataset_size"] == 90 for t in tunes)


def test_atomic_json_keeps_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "r.json"
    atomic_write_json(path, {"a": 1})
    with pytest.raises(ValueError):
        atomic_write_json(path, {"a": math.nan})  # strict JSON refuses NaN before anything is replaced
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_nonfinite_numbers_are_written_as_strict_json(tmp_path):
    # a diverged run (NaN or infinite loss) must still get its result file
    store = Store.default("quick", "tiny", results_root=tmp_path)
    cfg = _cfg()
    result = {"format": 1, "hash": config_hash(cfg), "config": cfg.to_dict(), "run": "ic",
              "history": [{"loss": math.nan, "accuracy": 0.1}, {"loss": math.inf, "accuracy": 0.1}],
              "epsilon": {"paper": {"value": -math.inf}}}  # fmt: skip
    store.write(result)
    back = store.load(cfg)
    assert [h["loss"] for h in back["history"]] == [None, "inf"] and back["epsilon"]["paper"]["value"] == "-inf"
    assert math.isnan(decode_float(None)) and decode_float("inf") == math.inf and decode_float(0.5) == 0.5


def test_store_refuses_a_result_of_another_configuration(tmp_path):
    out = _run(tmp_path, only="ic")
    store = Store.default("quick", "tiny", results_root=tmp_path / "res")
    other = _cfg(seed=5)
    store.result_path(other).write_text(out[0].path.read_text())
    with pytest.raises(ValueError, match="not a format"):
        store.load(other)


def test_epoch_log_lines_when_not_a_terminal(tmp_path):
    stream = io.StringIO()
    _run(tmp_path, only="ic", progress="auto", stream=stream)
    lines = [ln for ln in stream.getvalue().splitlines() if "epoch" in ln]
    assert len(lines) == 4 and "ETA" in lines[0] and "acc" in lines[0] and "loss" in lines[0]


def test_progress_bar_when_asked(tmp_path):
    stream = io.StringIO()
    _run(tmp_path, only="np", progress="bar", stream=stream)
    text = stream.getvalue()
    assert "np:" in text and ("it/s" in text or "s/it" in text)
    with pytest.raises(ValueError, match="mode"):
        _run(tmp_path / "x", only="ic", progress="fancy")


# ---------------------------------------------------------------------------------- dry run and CLI
def test_dry_run_times_every_run_and_sums_the_estimate(tmp_path):
    _run(tmp_path, only="np")
    before = sorted(p for p in tmp_path.rglob("*"))
    stream = io.StringIO()
    rows = dry_run("tiny", "quick", results_root=tmp_path / "res", stream=stream)
    assert [r.name for r in rows] == ["ic", "bc", "mc", "np"]
    assert [r.status for r in rows] == ["todo", "todo", "todo", "done"]
    assert all(r.step_seconds > 0 and r.estimate_seconds > r.steps * r.step_seconds * 0.99 for r in rows)
    assert rows[0].steps == 4 * (120 // 16) and rows[1].steps == 4 * round(120 / 16)
    text = stream.getvalue()
    assert "total estimate" in text and "device cpu" in text
    assert sorted(p for p in tmp_path.rglob("*")) == before  # a dry run writes nothing


def test_dry_run_cost_key_separates_truncation_and_counts_every_evaluation():
    """ℓ∞ truncation materialises per-example gradients, so a truncated run never borrows an untruncated run's step
    time; ModelMix's previous iterate doubles an epoch's evaluations, and the logged training loss adds a fraction."""
    plain = _cfg(sampling="poisson", clipping="individual", noise_convention="standard")
    assert cost_key(plain) == cost_key(plain.with_(clip_norm=3.0, noise_multiplier=7.0, seed=4))
    assert cost_key(plain) != cost_key(plain.with_(linf_p=100))
    assert cost_key(plain.with_(linf_p=10)) == cost_key(plain.with_(linf_p=100))
    mixed = plain.with_(modelmix_tau=((1.0, 0.05),), eval_previous=True)
    assert cost_key(plain) != cost_key(mixed)
    assert evaluations_per_epoch(plain, 32) == 1
    assert evaluations_per_epoch(mixed, 32) == 2
    assert evaluations_per_epoch(mixed.with_(eval_previous=False), 32) == 1
    assert evaluations_per_epoch(plain.with_(train_eval_size=16), 32) == 1.5


def test_cli_parses_and_runs(tmp_path, capsys):
    assert cli.main(["list"]) == 0
    assert "tiny: tiny synthetic grid" in capsys.readouterr().out
    argv = ["run", "tiny", "--profile", "paper", "--only", "a*", "--only", "b", "--force"]
    args = cli.build_parser().parse_args(argv)
    assert (args.name, args.profile, args.only, args.force, args.dry_run) == ("tiny", "paper", ["a*", "b"], True, False)
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["run", "tiny", "--profile", "full"])
    common = ["--results", str(tmp_path / "res"), "--checkpoints", str(tmp_path / "ck"), "--progress", "none"]
    assert cli.main(["run", "tiny", "--dry-run", "--only", "ic", *common]) == 0
    assert "total estimate" in capsys.readouterr().out
    assert cli.main(["run", "tiny", "--only", "np", *common]) == 0
    assert "1 trained" in capsys.readouterr().out
    assert cli.main(["list", "--profile", "quick", "--results", str(tmp_path / "res")]) == 0
    assert "done    np" in capsys.readouterr().out
    assert cli.main(["run", "no-such-experiment", "--dry-run"]) == 2
    assert "error: name must be one of" in capsys.readouterr().err
    top = argparse.ArgumentParser(prog="dpcore")
    cli.add_subparser(top.add_subparsers(dest="area"))
    ns = top.parse_args(["experiment", "run", "tiny", "--dry-run", "--profile", "quick"])
    assert ns.func is cli.dispatch and ns.dry_run and ns.command == "run"
    own = argparse.ArgumentParser()
    cli.add_arguments(own)  # the form dpcore.cli's Command(name, help, add_arguments, run) takes
    assert own.parse_args(["list"]).func is cli.dispatch


def test_registry_rejects_bad_plans_and_unknown_names():
    with pytest.raises(ValueError, match="name"):
        registry.get("no-such-experiment")
    dup = Experiment("dup", "", lambda p, lookup: [PlannedRun("a", _cfg(profile=p)), PlannedRun("b", _cfg(profile=p))])
    with pytest.raises(ValueError, match="same configuration"):
        dup.runs("quick")
    wrong = Experiment("wrong", "", lambda p, lookup: [PlannedRun("a", _cfg(profile="paper"))])
    with pytest.raises(ValueError, match="profile"):
        wrong.runs("quick")
    with pytest.raises(ValueError, match="name"):
        Experiment("a/b", "", _plan)


def test_results_frames_list_finished_and_missing_runs(tmp_path):
    from dpcore.experiments import history_frame, results_frame

    _run(tmp_path, only="ic")
    frame = results_frame("tiny", "quick", results_root=tmp_path / "res")
    assert list(frame["run"]) == ["ic", "bc", "mc", "np"] and list(frame["status"]) == ["done", "todo", "todo", "todo"]
    assert frame.loc[0, "epsilon_paper"] == 4 * (120 // 16) and np.isnan(frame.loc[1, "epsilon_paper"])
    hist = history_frame("tiny", "quick", results_root=tmp_path / "res")
    assert list(hist["epoch"]) == [1, 2, 3, 4] and set(hist["run"]) == {"ic"}


def test_results_frame_re_evaluates_epsilon_from_the_stored_record(tmp_path):
    """An accountant fix reaches results written before it: ε is recomputed from the record, the stored value kept."""
    import json

    from dpcore.experiments import results_frame

    _run(tmp_path, only="ic")
    (path,) = (tmp_path / "res" / "quick" / "tiny").glob("*.json")
    result = json.loads(path.read_text())
    result["epsilon"]["paper"]["value"] = 1.5  # as if written by an older, wrong accountant
    path.write_text(json.dumps(result))
    frame = results_frame("tiny", "quick", results_root=tmp_path / "res")
    assert frame.loc[0, "epsilon_paper"] == 4 * (120 // 16)
    assert frame.loc[0, "epsilon_paper_stored"] == 1.5 and bool(frame.loc[0, "epsilon_paper_changed"])
    assert not frame.loc[1, "epsilon_paper_changed"]  # not run: nothing to compare
    stored = results_frame("tiny", "quick", results_root=tmp_path / "res", recompute_epsilon=False)
    assert stored.loc[0, "epsilon_paper"] == 1.5 and not bool(stored.loc[0, "epsilon_paper_changed"])
    with pytest.raises(ValueError, match="recompute_epsilon"):
        results_frame("tiny", "quick", results_root=tmp_path / "res", recompute_epsilon="yes")


def test_progress_with_several_evaluations_per_epoch_names_the_epoch_fraction():
    from dpcore.experiments.progress import Progress

    stream = io.StringIO()
    bar = Progress("run", total_steps=12, start_step=0, epochs=2, mode="log", stream=stream, evals_per_epoch=3)
    for i in range(1, 5):
        bar.step()
        bar.epoch(i, {"epoch": i / 3, "test_accuracy": 0.5, "test_loss": 1.0}, 1.0)
    last = stream.getvalue().splitlines()[-1]
    assert "epoch 1.33/2 (evaluation 4)" in last
    with pytest.raises(ValueError, match="evals_per_epoch"):
        Progress("run", 12, 0, 2, mode="log", stream=stream, evals_per_epoch=0)


def test_results_frame_refuses_to_recompute_without_a_record(tmp_path):
    import json

    from dpcore.experiments import results_frame

    _run(tmp_path, only="ic")
    (path,) = (tmp_path / "res" / "quick" / "tiny").glob("*.json")
    result = json.loads(path.read_text())
    del result["record"]
    path.write_text(json.dumps(result))
    with pytest.raises(ValueError, match="no RunRecord"):
        results_frame("tiny", "quick", results_root=tmp_path / "res")
    stored = results_frame("tiny", "quick", results_root=tmp_path / "res", recompute_epsilon=False)
    assert stored.loc[0, "status"] == "done"
