"""Files and state are trusted only once verified (issue 26, part 5): the decoded-array cache, checkpoints (other
data, other model, truncated, empty, foreign files), result files, the manifest path, ``--only`` and training data."""

from __future__ import annotations

import bz2
import hashlib
import io
import json
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from dpcore import data
from dpcore.data import arrays_cache
from dpcore.experiments import cli, datasets, registry
from dpcore.experiments.config import RunConfig
from dpcore.experiments.registry import Epsilon, Experiment, PlannedRun
from dpcore.experiments.runner import run_experiment
from dpcore.experiments.store import ResultFileError, Store
from dpcore.training import TrainConfig, Trainer, make_classification_eval, run_async_clients, train
from dpcore.training.integrity import CheckpointError, CheckpointWarning, data_fingerprint

torch.set_num_threads(1)


# ---------------------------------------------------------------------------------------- decoded-array cache
def _libsvm_world(tmp_path, rows=40):
    """A fake mirror with an ijcnn1-like LIBSVM set of ``rows`` rows, and its manifest."""
    rng = np.random.default_rng(0)
    lines = [f"{'+1' if i % 3 else '-1'} 1:{rng.uniform():.4f} 2:{rng.uniform():.4f} 4:{i}" for i in range(rows)]
    text = ("\n".join(lines) + "\n").encode()
    (tmp_path / "mirror" / "libsvm").mkdir(parents=True)
    (tmp_path / "mirror" / "libsvm" / "t.bz2").write_bytes(bz2.compress(text))
    entry = {"urls": [], "mirror": "libsvm/t.bz2", "sha256": hashlib.sha256(text).hexdigest(), "digest_of": "content"}
    manifest = {"datasets": {"ijcnn1": {"title": "LIBSVM ijcnn1", "svmlight": {"n_features": 4, "zero_based": False},
                                        "splits": {"train": {"rows": rows, "files": ["libsvm/t.bz2"]}},
                                        "files": {"libsvm/t.bz2": entry}}}}  # fmt: skip
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return dict(root=tmp_path / "cache", mirror=tmp_path / "mirror", manifest=tmp_path / "manifest.json")


def _load(kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x, y = data.load_libsvm("ijcnn1", "train", kw["root"], mirror=kw["mirror"], manifest=kw["manifest"])
    return x, y, [w for w in caught if issubclass(w.category, arrays_cache.CacheWarning)]


def _cache_files(kw):
    entry = data.find_entry("ijcnn1", "libsvm/t.bz2", kw["manifest"])
    return (arrays_cache.cache_path(entry, "train", "x", kw["root"]), arrays_cache.cache_path(entry, "train", "y",
            kw["root"]), arrays_cache.sidecar_path(entry, "train", kw["root"]))  # fmt: skip


def test_a_corrupted_cached_array_is_noticed_rebuilt_and_reported(tmp_path):
    kw = _libsvm_world(tmp_path)
    x0, y0, said = _load(kw)
    assert not said and y0.dtype == np.int64 and set(y0.tolist()) == {0, 1}
    x_path, y_path, side = _cache_files(kw)
    assert side.is_file() and x_path.is_file()
    # flip label bytes (labels become huge, as in the probe) and negate feature rows; same size, same dtype
    y_bad = np.load(y_path)
    y_bad.view(np.uint8)[7::8][:10] ^= 0x7F
    np.save(y_path, y_bad)
    x_bad = np.load(x_path)
    x_bad[:10] *= -1
    np.save(x_path, x_bad)
    x1, y1, said = _load(kw)
    assert len(said) == 1
    message = str(said[0].message)
    assert str(x_path) in message or str(y_path) in message, message  # names the file
    assert "decoding it again from the verified source libsvm/t.bz2" in message
    assert np.array_equal(x1, x0) and np.array_equal(y1, y0)  # rebuilt, not the corrupted arrays
    assert np.array_equal(np.load(y_path), y0) and np.array_equal(np.load(x_path), x0)  # and rewritten
    x2, y2, said = _load(kw)
    assert not said and np.array_equal(y2, y0)  # the rewritten cache verifies


def test_a_cache_without_its_digest_record_or_of_another_source_is_rebuilt(tmp_path):
    kw = _libsvm_world(tmp_path)
    x0, y0, _ = _load(kw)
    x_path, y_path, side = _cache_files(kw)
    side.unlink()  # a cache written before caches were verified
    np.save(y_path, np.full_like(y0, 7))
    _, y1, said = _load(kw)
    assert len(said) == 1 and "no digest record" in str(said[0].message) and str(side) in str(said[0].message)
    assert np.array_equal(y1, y0)
    record = json.loads(side.read_text())
    record["source"]["digest"] = "0" * 64
    side.write_text(json.dumps(record))
    _, y2, said = _load(kw)
    assert len(said) == 1 and "not from" in str(said[0].message) and np.array_equal(y2, y0)


def test_a_truncated_cached_array_is_rebuilt(tmp_path):
    kw = _libsvm_world(tmp_path)
    x0, _, _ = _load(kw)
    x_path, _, _ = _cache_files(kw)
    x_path.write_bytes(x_path.read_bytes()[:-13])
    x1, _, said = _load(kw)
    assert len(said) == 1 and str(x_path) in str(said[0].message) and np.array_equal(x1, x0)


def test_a_manifest_path_that_is_a_directory_is_refused_naming_it(tmp_path):
    with pytest.raises(data.ManifestError, match=rf"{tmp_path}.*is a directory.*DPCORE_MANIFEST"):
        data.load_manifest(tmp_path)
    bad = tmp_path / "m.json"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(data.ManifestError, match="m.json"):
        data.load_manifest(bad)


# ---------------------------------------------------------------------------------------- training data
def _blobs(n=48, d=5, k=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, k, (n,), generator=g)
    return torch.randn(k, d, generator=g)[y] * 2 + torch.randn(n, d, generator=g), y


def _cfg(**kw):
    base = dict(sampling="shuffle", batch_size=8, epochs=2, clip_norm=1.0, noise_multiplier=1.0, lr=0.1, seed=3,
                device="cpu")  # fmt: skip
    return TrainConfig(**(base | kw))


def _model(seed=0, d=5, k=3):
    torch.manual_seed(seed)
    return nn.Linear(d, k)


def test_labels_outside_the_classes_are_refused_naming_the_argument():
    x, y = _blobs()
    ignored = y.clone()
    ignored[:4] = -100  # cross-entropy's ignore index: would be skipped by the loss yet counted by ε
    with pytest.raises(ValueError, match=r"data\[1\] \(y\) must hold class labels in \[0, 3\).*4 labels.*-100"):
        Trainer(_model(), (x, ignored), _cfg())
    with pytest.raises(ValueError, match=r"data\[1\] \(y\).*\[0, 3\).*e\.g\. \[3\]"):
        Trainer(_model(), (x, y + (y == 2).long()), _cfg())
    with pytest.raises(ValueError, match=r"data\[1\] \(y\) must hold integer class labels"):
        Trainer(_model(), (x, y.float()), _cfg())
    with pytest.raises(ValueError, match=r"data\[1\] \(y\) must hold targets in \[0, 1\]"):
        Trainer(nn.Linear(5, 1), (x, (y > 0).float() * 2 - 1), _cfg(), loss="bce")  # ±1 labels
    with pytest.raises(ValueError, match=r"data must be \(X, y\) with the same non-zero number of rows"):
        Trainer(_model(), (x, y[:-1]), _cfg())
    with pytest.raises(ValueError, match=r"data\[0\] \(X\) must be a torch.Tensor or a numpy array"):
        Trainer(_model(), (x.tolist(), y), _cfg())
    with pytest.raises(ValueError, match=r"cannot take data\[0\] \(X\)"):
        Trainer(_model(d=7), (x, y), _cfg())
    with pytest.raises(ValueError, match=r"client_data\[1\]\[1\] \(y\).*\[0, 3\)"):
        run_async_clients(_model(), [(x, y), (x, y + 3)], _cfg(epochs=None, steps=2, reduce="sum"))


def test_non_finite_features_or_labels_are_refused_before_the_first_step_naming_the_tensor_and_row():
    """Issue 54: a NaN in one row trained silently (the row was never sampled) and a NaN everywhere stopped at step 0
    with an error that did not name the data; now both are refused at construction, naming the tensor and row."""
    x, y = _blobs()
    one = x.clone()
    one[17, 2] = float("nan")
    with pytest.raises(ValueError, match=r"data\[0\] \(X\) must be finite: row 17 holds NaN \(1 of 48 rows"):
        Trainer(_model(), (one, y), _cfg())
    every = torch.full_like(x, float("nan"))
    every[0] = 1.0
    with pytest.raises(ValueError, match=r"data\[0\] \(X\) must be finite: row 1 holds NaN \(47 of 48 rows"):
        train(_model(), (every, y), _cfg())
    mixed = x.numpy().copy()
    mixed[30, 0], mixed[30, 1] = np.inf, -np.inf
    with pytest.raises(ValueError, match=r"row 30 holds \+inf and -inf"):
        Trainer(_model(), (mixed, y.numpy()), _cfg())
    targets = (y > 0).float()
    targets[5] = float("nan")
    for loss in ("bce", "mse", torch.nn.functional.binary_cross_entropy_with_logits):
        with pytest.raises(ValueError, match=r"data\[1\] \(y\) must be finite: row 5 holds NaN"):
            Trainer(nn.Linear(5, 1), (x, targets[:, None]), _cfg(), loss=loss)
    with pytest.raises(ValueError, match=r"client_data\[1\]\[0\] \(X\) must be finite: row 17"):
        run_async_clients(_model(), [(x, y), (one, y)], _cfg(epochs=None, steps=2, reduce="sum"))
    image = torch.zeros(4, 1, 3, 3)
    image[2, 0, 1, 1] = float("nan")  # rows of any shape: the first index is the row
    from dpcore.training.integrity import check_finite_rows

    with pytest.raises(ValueError, match=r"images must be finite: row 2 holds NaN \(1 of 4"):
        check_finite_rows("images", image)
    assert check_finite_rows("labels", torch.arange(3)) is not None


def test_int32_labels_and_numpy_data_are_converted_and_train_as_int64_tensors():
    x, y = _blobs()
    reference = train(_model(), (x, y), _cfg()).model.weight.detach()
    for pair in ((x, y.int()), (x.numpy(), y.numpy()), (x.numpy(), y.numpy().astype(np.int32))):
        got = train(_model(), pair, _cfg()).model.weight.detach()
        assert torch.equal(got, reference)
    evaluate = make_classification_eval(x.numpy(), y.numpy().astype(np.uint8))
    with torch.no_grad():
        assert 0.0 <= evaluate(_model())["test_accuracy"] <= 1.0
        with pytest.raises(ValueError, match=r"y must hold class labels in \[0, 3\)"):
            make_classification_eval(x, y - 100)(_model())


# ---------------------------------------------------------------------------------------- checkpoints (Trainer)
def _checkpointed(tmp_path, pair, model_seed=0, **kw):
    ckpt = tmp_path / "run.pt"
    Trainer(_model(model_seed), pair, _cfg(), checkpoint=ckpt).run(until=6)
    return ckpt


def test_a_checkpoint_of_a_run_on_other_data_is_refused_naming_it(tmp_path):
    x, y = _blobs()
    ckpt = _checkpointed(tmp_path, (x, y))
    other = x.clone()
    other[5] = -other[5]  # one example differs: same shapes, same configuration
    with pytest.raises(CheckpointError, match=rf"{ckpt}.*other training data"):
        Trainer(_model(), (other, y), _cfg(), checkpoint=ckpt, resume=True)
    relabelled = y.clone()
    relabelled[0] = (relabelled[0] + 1) % 3
    with pytest.raises(CheckpointError, match="other training data"):
        Trainer(_model(), (x, relabelled), _cfg(), checkpoint=ckpt, resume=True)
    with pytest.raises(CheckpointError, match=rf"{ckpt}.*of another model"):
        Trainer(nn.Sequential(nn.Linear(5, 3)), (x, y), _cfg(), checkpoint=ckpt, resume=True)
    resumed = Trainer(_model(9), (x, y), _cfg(), checkpoint=ckpt, resume=True)  # same data: resumes
    assert resumed.step_index == 6
    assert data_fingerprint([(x, y)]) != data_fingerprint([(other, y)])


def test_a_checkpoint_without_fingerprints_resumes_with_a_warning(tmp_path):
    x, y = _blobs()
    ckpt = _checkpointed(tmp_path, (x, y))
    state = torch.load(ckpt, weights_only=True)
    del state["data_fingerprint"], state["model_fingerprint"]  # as written before fingerprints existed
    torch.save(state, ckpt)
    with pytest.warns(CheckpointWarning, match=rf"{ckpt}.*no data or model fingerprint"):
        resumed = Trainer(_model(), (x, y), _cfg(), checkpoint=ckpt, resume=True)
    assert resumed.step_index == 6


def test_a_configuration_field_added_after_the_checkpoint_counts_only_at_its_default(tmp_path):
    x, y = _blobs()
    ckpt = _checkpointed(tmp_path, (x, y))
    state = torch.load(ckpt, weights_only=True)
    fields = json.loads(state["fingerprint"])
    assert fields["secure_rng"] is False and fields["seed"] == 3  # the default, and a value set by _cfg (default 0)
    del fields["secure_rng"]  # as if the field had been added to TrainConfig after the checkpoint was written
    state["fingerprint"] = json.dumps(fields, sort_keys=True)
    torch.save(state, ckpt)
    assert Trainer(_model(), (x, y), _cfg(), checkpoint=ckpt, resume=True).step_index == 6
    del fields["seed"]  # the run sets it away from its default: not the same configuration
    state["fingerprint"] = json.dumps(fields, sort_keys=True)
    torch.save(state, ckpt)
    with pytest.raises(CheckpointError, match="different configuration"):
        Trainer(_model(), (x, y), _cfg(), checkpoint=ckpt, resume=True)


@pytest.mark.parametrize("kind", ["empty", "truncated", "foreign pickle", "a tensor", "not a state"])
def test_unreadable_or_foreign_checkpoints_are_refused_naming_the_file(tmp_path, kind):
    x, y = _blobs()
    ckpt = _checkpointed(tmp_path, (x, y))
    good = ckpt.read_bytes()
    if kind == "empty":
        ckpt.write_bytes(b"")
    elif kind == "truncated":
        ckpt.write_bytes(good[: len(good) // 2])
    elif kind == "foreign pickle":
        import pickle

        ckpt.write_bytes(pickle.dumps({"a": object()}, protocol=2))
    elif kind == "a tensor":
        torch.save(torch.ones(3), ckpt)
    else:
        torch.save({"format": 1, "step": 3}, ckpt)
    with pytest.raises(CheckpointError, match=rf"{ckpt}.*delete"):
        Trainer(_model(), (x, y), _cfg(), checkpoint=ckpt, resume=True)


# ---------------------------------------------------------------------------------------- the experiment runner
SEEDED = {"offset": 0}


def _loader(split: str) -> tuple[np.ndarray, np.ndarray]:
    n = 48 if split == "train" else 16
    rng = np.random.default_rng(SEEDED["offset"] + (0 if split == "train" else 1))
    labels = rng.integers(0, 3, size=n)
    images = rng.integers(0, 60, size=(n, 6, 6)).astype(np.int64)
    images[np.arange(n), labels, :] += 150
    return images.astype(np.uint8), labels.astype(np.int64)


def _run_cfg(profile):
    return RunConfig(dataset="integrity-tiny", model="softmax", model_kwargs={"in_features": 36, "num_classes": 3},
                     sampling="shuffle", clipping="individual", batch_size=8, clip_norm=1.0, noise_multiplier=0.5,
                     epochs=3, lr=0.5, lr_rule="constant", lr_decay=1.0, profile=profile)  # fmt: skip


def _eps(record, config):
    return Epsilon(float(record["steps"]), 1e-5, "steps, for the test")


EXPERIMENT = Experiment("integrity-tiny", "one tiny run", lambda p, lookup: [PlannedRun("only", _run_cfg(p))],
                        {"paper": _eps})  # fmt: skip


@pytest.fixture(autouse=True)
def _tiny_world():
    SEEDED["offset"] = 0
    datasets.register_dataset(
        datasets.DatasetSpec("integrity-tiny", _loader, (("train", 48), ("test", 16)), (6, 6), 3, (0.3,), (0.3,)),
        replace=True,
    )
    registry.register(EXPERIMENT, replace=True)
    yield
    registry.unregister(EXPERIMENT.name)
    datasets.DATASETS.pop("integrity-tiny")
    datasets.clear_cache()


class Killed(Exception):
    pass


def _kill(name, epoch, entry):
    if epoch == 1:
        raise Killed(name)


def _run(tmp_path, **kw):
    return run_experiment("integrity-tiny", "quick", results_root=tmp_path / "res", checkpoints_root=tmp_path / "ck",
                          progress="none", **kw)  # fmt: skip


def _store(tmp_path):
    return Store.default("quick", "integrity-tiny", results_root=tmp_path / "res", checkpoints_root=tmp_path / "ck")


def test_the_runner_refuses_to_resume_a_run_on_other_data(tmp_path):
    with pytest.raises(Killed):
        _run(tmp_path, on_epoch=_kill)
    ckpt = _store(tmp_path).checkpoint_path(_run_cfg("quick"))
    assert ckpt.is_file()
    SEEDED["offset"] = 10  # same configuration, other data (e.g. another copy of the data set)
    datasets.clear_cache()
    with pytest.raises(CheckpointError, match=rf"{ckpt}.*other training data.*--force"):
        _run(tmp_path)
    SEEDED["offset"] = 0
    datasets.clear_cache()
    (out,) = _run(tmp_path)  # its own data: resumes
    assert out.status == "trained" and json.loads(out.path.read_text())["sessions"] == 2


@pytest.mark.parametrize("kind", ["empty", "truncated", "foreign"])
def test_the_runner_refuses_an_unreadable_checkpoint_naming_it(tmp_path, kind):
    with pytest.raises(Killed):
        _run(tmp_path, on_epoch=_kill)
    ckpt = _store(tmp_path).checkpoint_path(_run_cfg("quick"))
    good = ckpt.read_bytes()
    ckpt.write_bytes({"empty": b"", "truncated": good[:-100], "foreign": b'{"json": 1}'}[kind])
    with pytest.raises(CheckpointError, match=rf"{ckpt} is not a readable checkpoint"):
        _run(tmp_path)
    assert cli.main(["run", "integrity-tiny", "--results", str(tmp_path / "res"), "--checkpoints",
                     str(tmp_path / "ck"), "--progress", "none"]) == 2  # fmt: skip


def test_a_truncated_result_is_refused_by_readers_and_retrained_by_the_runner(tmp_path):
    (out,) = _run(tmp_path)
    good = json.loads(out.path.read_text())
    out.path.write_text(out.path.read_text()[:200])  # a write cut short (e.g. copied from a full disk)
    with pytest.raises(ResultFileError, match=rf"{out.path}.*not valid JSON.*delete it"):
        _store(tmp_path).load(_run_cfg("quick"))
    from dpcore.experiments import results_frame

    with pytest.raises(ResultFileError, match=str(out.path)):
        results_frame("integrity-tiny", "quick", results_root=tmp_path / "res")
    stream = io.StringIO()
    (again,) = _run(tmp_path, stream=stream)
    assert again.status == "trained", "a truncated result is an unfinished run, not a finished one"
    assert f"result file {out.path} is not valid JSON" in stream.getvalue() and "trained again" in stream.getvalue()
    redone = json.loads(again.path.read_text())
    assert redone["final_parameters_sha256"] == good["final_parameters_sha256"]
    out.path.write_text("")
    with pytest.raises(ResultFileError, match="is empty"):
        _store(tmp_path).load(_run_cfg("quick"))


def test_only_that_matches_no_run_is_an_error(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"only: 'onyl' matches no run"):
        _run(tmp_path, only="onyl")
    common = ["--results", str(tmp_path / "res"), "--checkpoints", str(tmp_path / "ck"), "--progress", "none"]
    assert cli.main(["run", "integrity-tiny", "--only", "nothing*", *common]) == 2
    assert "matches no run" in capsys.readouterr().err
    assert cli.main(["run", "integrity-tiny", "--only", "only", "--only", "typo", *common]) == 2
    assert not (tmp_path / "res").exists()  # refused before anything ran
    assert cli.main(["run", "integrity-tiny", "--only", "on*", *common]) == 0


def test_cached_features_are_verified_and_a_tampered_file_is_recomputed(tmp_path, monkeypatch):
    """Issue 26 §5 for the ScatterNet feature cache: a digest record is written with the features and checked on
    load; a changed file is noticed, reported (CacheWarning) and recomputed from the images."""
    monkeypatch.setenv("DPCORE_DATA", str(tmp_path))
    calls = []

    def double(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return 2 * x

    monkeypatch.setitem(datasets.FEATURES, "double", (double, lambda shape: shape))
    spec = datasets.DatasetSpec("toy", lambda split: None, (("train", 4), ("test", 4)), (2, 2), 2, (0.0,), (1.0,),
                                features="double")  # fmt: skip
    images = np.arange(16, dtype=np.uint8).reshape(4, 2, 2)
    first, note = datasets._tensor(images, spec, synthetic_ok=False)
    assert "computed" in note and len(calls) == 1
    again, note = datasets._tensor(images, spec, synthetic_ok=False)
    assert "verified" in note and len(calls) == 1 and torch.equal(first, again)
    path = datasets.feature_cache_path("double", images)
    torch.save(torch.full_like(first, 7.0), path)  # same shape, other values: only the digest can tell
    with pytest.warns(arrays_cache.CacheWarning, match="does not match"):
        rebuilt, note = datasets._tensor(images, spec, synthetic_ok=False)
    assert len(calls) == 2 and torch.equal(rebuilt, first) and "rejected" in note
    assert "verified" in datasets._tensor(images, spec, synthetic_ok=False)[1]


def test_a_large_tensor_found_finite_is_not_scanned_again_until_written_in_place(monkeypatch):
    """A grid hands one cached data set to every trainer: it is scanned once; an in-place write (to it or through a
    view) or a new tensor at the same address is scanned again, so a NaN written since is still named."""
    from dpcore.training import integrity

    scans = []
    real_isfinite = torch.isfinite
    monkeypatch.setattr(integrity.torch, "isfinite", lambda t: scans.append(t.numel()) or real_isfinite(t))
    x = torch.zeros(1 << 11, 1 << 10)  # 2M values: above the cache's threshold
    integrity.check_finite_rows("X", x)
    first = len(scans)
    integrity.check_finite_rows("X", x)
    integrity.check_finite_rows("X", x[: 1 << 10])  # a large view of a base found finite
    assert len(scans) == first
    x[3:5].fill_(float("nan"))  # written in place through a view: the shared version counter moves
    with pytest.raises(ValueError, match=r"X must be finite: row 3 holds NaN \(2 of"):
        integrity.check_finite_rows("X", x)
    with pytest.raises(ValueError, match="row 3 holds NaN"):
        integrity.check_finite_rows("X", x[: 1 << 10])
    del x
    y = torch.full((1 << 11, 1 << 10), float("inf"))  # may reuse the freed id: the weak reference tells them apart
    with pytest.raises(ValueError, match=r"row 0 holds \+inf"):
        integrity.check_finite_rows("Y", y)
