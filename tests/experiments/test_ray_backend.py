"""dpcore.experiments.ray_backend: a tiny grid as Ray tasks gives the local backend's results; failures are isolated.

The scheduling logic is also tested against an in-process stand-in for ``ray`` (no extra needed); the tests
marked by the ``ray_instance`` fixture start a real local Ray instance (extra ``scale``)."""

from __future__ import annotations

import io
import json
import os
import warnings

import numpy as np
import pytest
import torch

from dpcore.experiments import adapters, cli, datasets, ray_backend, registry
from dpcore.experiments.config import RunConfig
from dpcore.experiments.ray_backend import RayStartError, format_seconds, run_experiment_ray, start_local_ray
from dpcore.experiments.registry import Epsilon, Experiment, PlannedRun
from dpcore.experiments.runner import run_experiment
from dpcore.paths import build_dir

torch.set_num_threads(1)

DATA = "tiny-ray"


def _loader(split: str) -> tuple[np.ndarray, np.ndarray]:
    n = 96 if split == "train" else 32
    rng = np.random.default_rng(3 if split == "train" else 4)
    labels = rng.integers(0, 4, size=n)
    images = rng.integers(0, 60, size=(n, 8, 8)).astype(np.int64)
    images[np.arange(n), labels, :] += 150
    return images.astype(np.uint8), labels.astype(np.int64)


def _broken_loader(split: str) -> tuple[np.ndarray, np.ndarray]:
    raise adapters.DatasetUnavailable(f"no files for {split} (on purpose)")


def _cfg(**kw) -> RunConfig:
    base = dict(
        dataset=DATA, model="softmax", model_kwargs={"in_features": 64, "num_classes": 4}, sampling="shuffle",
        clipping="individual", batch_size=16, clip_norm=1.0, noise_multiplier=0.5, epochs=2, lr=0.5,
        lr_rule="constant", profile="quick", test_size=32,
    )  # fmt: skip
    base.update(kw)
    return RunConfig(**base)


def _plan(profile, lookup):
    return [
        PlannedRun("a", _cfg(profile=profile)),
        PlannedRun("b", _cfg(profile=profile, sampling="poisson", clipping="batch", lr=1.0, seed=1)),
        PlannedRun("c", _cfg(profile=profile, noise_multiplier=1.0, seed=2)),
    ]


def _broken_plan(profile, lookup):
    return [*_plan(profile, lookup)[:2], PlannedRun("broken", _cfg(profile=profile, dataset="tiny-ray-broken"))]


def _eps(record, config):
    return Epsilon(float(record["steps"]), 1e-5, "steps, for the test")


GRID = Experiment("tiny-ray", "tiny grid for the Ray backend", _plan, {"paper": _eps})
BROKEN = Experiment("tiny-ray-broken", "a grid with one run that fails", _broken_plan)


@pytest.fixture(scope="module")
def ray_instance():
    """One local Ray instance (2 CPUs) for the module; its temp files under build/ (RAY_TMPDIR)."""
    ray = pytest.importorskip("ray")
    tmp = build_dir() / "ray"
    tmp.mkdir(parents=True, exist_ok=True)
    old = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = str(tmp)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seconds = ray_backend.start_local_ray(2, temp_dir=tmp)  # retries within DPCORE_RAY_START_TIMEOUT, then raises
    print(f"\nlocal Ray instance started in {seconds:.1f}s")
    yield caught
    ray.shutdown()
    if old is None:
        os.environ.pop("RAY_TMPDIR", None)
    else:
        os.environ["RAY_TMPDIR"] = old


@pytest.fixture(autouse=True)
def _registered():
    for name, loader in ((DATA, _loader), ("tiny-ray-broken", _broken_loader)):
        spec = datasets.DatasetSpec(name, loader, (("train", 96), ("test", 32)), (8, 8), 4, (0.3,), (0.3,))
        datasets.register_dataset(spec, replace=True)
    registry.register(GRID, replace=True)
    registry.register(BROKEN, replace=True)
    yield
    registry.unregister(GRID.name)
    registry.unregister(BROKEN.name)
    for name in (DATA, "tiny-ray-broken"):
        datasets.DATASETS.pop(name)
    datasets.clear_cache()


_VOLATILE = {"wall_seconds", "finished_utc", "torch_threads"}


def _results(root, name):
    files = sorted((root / "quick" / name).glob("*.json"))
    return {f.name: {k: v for k, v in json.loads(f.read_text()).items() if k not in _VOLATILE} for f in files}


def test_ray_grid_equals_local_grid_and_skips_finished_runs(tmp_path, ray_instance):
    local = run_experiment("tiny-ray", "quick", results_root=tmp_path / "local", checkpoints_root=tmp_path / "ck1",
                           progress="none")  # fmt: skip
    out = io.StringIO()
    outcomes = run_experiment_ray("tiny-ray", "quick", results_root=tmp_path / "ray", checkpoints_root=tmp_path / "ck2",
                                  stream=out)  # fmt: skip
    assert [o.status for o in outcomes] == ["trained"] * 3 == [o.status for o in local]
    a, b = _results(tmp_path / "local", "tiny-ray"), _results(tmp_path / "ray", "tiny-ray")
    assert len(a) == 3 and a == b  # same files, same parameters (sha256), histories, records, ε
    lines = [ln for ln in out.getvalue().splitlines() if " done " in ln]
    assert len(lines) == 3 and all(" left" in ln and " to go" in ln for ln in lines), out.getvalue()
    assert "0 to go" in lines[-1]
    # a second call finds every result and submits nothing
    out = io.StringIO()
    again = run_experiment_ray("tiny-ray", "quick", results_root=tmp_path / "ray", checkpoints_root=tmp_path / "ck2",
                               stream=out)  # fmt: skip
    assert [o.status for o in again] == ["skipped"] * 3 and "submit" not in out.getvalue()


def test_a_local_start_opts_into_rays_accelerator_rule_without_its_future_warning(ray_instance):
    assert os.environ[ray_backend.ACCEL_OVERRIDE_VAR] == "0"
    assert not [w for w in ray_instance if ray_backend.ACCEL_OVERRIDE_VAR in str(w.message)]


def test_a_failed_task_is_reported_with_its_configuration_and_the_others_finish(tmp_path, ray_instance, capsys):
    code = cli.main(["run", "tiny-ray-broken", "--profile", "quick", "--backend", "ray",
                     "--results", str(tmp_path / "res"), "--checkpoints", str(tmp_path / "ck")])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1
    assert "FAILED broken" in captured.err and '"dataset":"tiny-ray-broken"' in captured.err.replace(" ", "")
    assert "2 trained" in captured.out and "1 failed" in captured.out
    assert len(list((tmp_path / "res" / "quick" / "tiny-ray-broken").glob("*.json"))) == 2


def test_cli_refuses_address_without_ray_backend(capsys):
    assert cli.main(["run", "tiny-ray", "--address", "auto"]) == 2
    assert "--address needs --backend ray" in capsys.readouterr().err


@pytest.mark.parametrize("value, text", [(5.0, "5.0s"), (125, "2m05s"), (7620, "2h07m"), (float("inf"), "?")])
def test_format_seconds(value, text):
    assert format_seconds(value) == text


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="num_cpus"):
        run_experiment_ray("tiny-ray", "quick", num_cpus=0)
    with pytest.raises(ValueError, match="address"):
        run_experiment_ray("tiny-ray", "quick", address="")


# ------------------------------------------------------------------ the scheduler, with an in-process stand-in for ray
class _FakeRayError(Exception):
    pass


class _Ref:
    def __init__(self, fn, args):
        try:
            self.value, self.error = fn(*args), None
        except Exception as exc:  # what a Ray worker does: keep the task's exception for ray.get
            self.value, self.error = None, exc


class _FakeRay:
    """Runs each task at submission, in this process; ``wait`` returns the oldest reference."""

    exceptions = type("exceptions", (), {"RayError": _FakeRayError})

    def __init__(self, resources):
        self.resources, self.started, self.init_kwargs, self.options = resources, False, None, None
        self.by_value: list[str] = []
        self.cloudpickle = type("cp", (), {"register_pickle_by_value": lambda _, m: self.by_value.append(m.__name__)})()

    def is_initialized(self):
        return self.started

    def init(self, **kwargs):
        self.started, self.init_kwargs = True, kwargs

    def shutdown(self):
        self.started = False

    def cluster_resources(self):
        return dict(self.resources)

    def remote(self, **options):
        self.options = options
        task = type("task", (), {"remote": staticmethod(lambda *args: _Ref(fn, args))})
        fn = None

        def wrap(f):
            nonlocal fn
            fn = f
            return task

        return wrap

    def wait(self, refs, num_returns=1):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        if ref.error is not None:
            raise _FakeRayError(f"task failed: {ref.error!r}") from ref.error
        return ref.value


@pytest.mark.parametrize("resources, options", [({"CPU": 2.0}, {"num_cpus": 1}), ({"CPU": 8.0, "GPU": 2.0},
                                                                                  {"num_gpus": 1})])  # fmt: skip
def test_scheduler_with_a_stand_in_ray(tmp_path, monkeypatch, resources, options):
    fake = _FakeRay(resources)
    monkeypatch.setattr(ray_backend, "require", lambda name: fake)
    run_experiment("tiny-ray-broken", "quick", only=["a", "b"], results_root=tmp_path / "local",
                   checkpoints_root=tmp_path / "ck1", progress="none")  # fmt: skip
    out = io.StringIO()
    outcomes = run_experiment_ray("tiny-ray-broken", "quick", results_root=tmp_path / "ray",
                                  checkpoints_root=tmp_path / "ck2", stream=out)  # fmt: skip
    assert fake.init_kwargs["num_cpus"] == 2 and not fake.started  # a local instance, stopped at the end
    assert fake.options == {"max_retries": 0, **options}
    assert __name__ in fake.by_value  # this module's plan and loaders travel by value
    assert {o.name: o.status for o in outcomes} == {"a": "trained", "b": "trained", "broken": "failed"}
    text = out.getvalue()
    assert "FAILED broken" in text and "tiny-ray-broken" in text.split("FAILED broken", 1)[1]
    done = [ln for ln in text.splitlines() if " done " in ln]
    assert len(done) == 2 and all(" to go, about " in ln for ln in done)
    assert _results(tmp_path / "local", "tiny-ray-broken") == _results(tmp_path / "ray", "tiny-ray-broken")
    # joining a cluster: no local instance is started with our core count
    fake2 = _FakeRay(resources)
    monkeypatch.setattr(ray_backend, "require", lambda name: fake2)
    again = run_experiment_ray("tiny-ray-broken", "quick", results_root=tmp_path / "ray",
                               checkpoints_root=tmp_path / "ck2", address="auto", stream=io.StringIO())  # fmt: skip
    assert fake2.init_kwargs == {"address": "auto", "log_to_driver": False}
    assert {o.name: o.status for o in again} == {"a": "skipped", "b": "skipped", "broken": "failed"}


# ---------------------------------------- starting a local instance: retried, then a named error
class _SlowStartRay(_FakeRay):
    """``init`` fails like Ray 2.55 when its node misses the 30 s start limit, ``failures`` times."""

    def __init__(self, failures):
        super().__init__({"CPU": 2.0})
        self.failures, self.calls = failures, 0

    def init(self, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise Exception("The current node timed out during startup. (stand-in)")  # what Ray raises
        super().init(**kwargs)


def test_local_start_is_retried_and_reported(tmp_path, monkeypatch):
    fake = _SlowStartRay(failures=1)
    monkeypatch.setattr(ray_backend, "require", lambda name: fake)
    out = io.StringIO()
    start_local_ray(2, temp_dir=tmp_path, timeout_s=120, stream=out)
    assert fake.calls == 2 and fake.started
    assert fake.init_kwargs["include_dashboard"] is False and fake.init_kwargs["_temp_dir"] == str(tmp_path)
    assert "attempt 1 failed" in out.getvalue() and "timed out during startup" in out.getvalue()
    with pytest.raises(ValueError, match="already initialised"):
        start_local_ray(2, stream=out)


def test_a_local_start_that_keeps_failing_raises_a_named_error_and_trains_nothing(tmp_path, monkeypatch, capsys):
    fake = _SlowStartRay(failures=10**6)
    monkeypatch.setattr(ray_backend, "require", lambda name: fake)
    logs = tmp_path / "session_latest" / "logs"
    logs.mkdir(parents=True)
    (logs / "raylet.out").write_text("[...] (raylet) node_manager.cc:3374: bug? Check failed: x Timed out waiting for "
                                     "file /s/dashboard_agent_listen_port_ab\n")  # fmt: skip
    cause = r"did not start: 1 attempt.*timed out during startup.*The raylet: x Timed out waiting for file /s/dash"
    with pytest.raises(RayStartError, match=cause + r"board_agent_listen_port_ab.*logs"):
        start_local_ray(2, temp_dir=tmp_path, timeout_s=30, stream=io.StringIO())
    monkeypatch.setenv("DPCORE_RAY_START_TIMEOUT", "30")
    code = cli.main(["run", "tiny-ray", "--profile", "quick", "--backend", "ray", "--results", str(tmp_path / "res"),
                     "--checkpoints", str(tmp_path / "ck")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "error: a local Ray instance (2 CPUs) did not start" in err
    assert not (tmp_path / "res").exists()  # no fallback to the local backend
    monkeypatch.setenv("DPCORE_RAY_START_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="DPCORE_RAY_START_TIMEOUT"):
        start_local_ray(2)
    with pytest.raises(ValueError, match="timeout_s"):
        start_local_ray(2, timeout_s=5)
