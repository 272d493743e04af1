"""Flower's two runtimes on one machine: a SuperLink (and SuperNodes) as processes on 127.0.0.1, and ``flwr run``.

:class:`LocalFederation` starts ``flower-superlink`` (``--simulation`` for the simulation runtime) and, for the
deployment runtime, one ``flower-supernode`` per silo with ``--node-config "partition-id=<i> num-partitions=<N>"``,
each on a free port of 127.0.0.1 (``--insecure``: loopback only), each in its own session with its own Flower home
(``FLWR_HOME``) under a work folder; :meth:`LocalFederation.run` runs an app project with ``flwr run <app>
<connection> --stream`` (a SuperLink connection written to the work folder's Flower configuration) under a time
limit and reads the :class:`~dpcore.federated.flower.FederatedResult` its ServerApp wrote.  Every process started
here, and every process those start (SuperExec, ServerApp, ClientApp, Ray's workers), carries the environment
variable :data:`TAG_VAR` with the federation's tag: :meth:`LocalFederation.stop` ends them all (SIGTERM, then
SIGKILL after ``stop_timeout_s``) and :meth:`LocalFederation.processes` lists any still alive (Linux ``/proc``).
Runtime dependency installation (``uv sync``) is off and Flower's update check and telemetry are disabled: nothing
is downloaded.

:func:`simulate` and :func:`deploy` run paper 001's insurance app project (:data:`APP_DIR`) with a run config on a
fresh federation and stop it.  The same processes across machines: the README's "ISRL-DP silos on Flower".
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from dpcore.federated.flower import FederatedResult, FederationError, read_result
from dpcore.paths import repo_root
from dpcore.validation import check_positive_int

__all__ = ["APP_DIR", "CONNECTION", "TAG_VAR", "LocalFederation", "free_port", "simulate", "deploy"]

#: Paper 001's insurance silos as a Flower app project (what ``flwr run`` bundles).
APP_DIR = repo_root() / "flower" / "isrl-insurance"
#: The name of the SuperLink connection in the work folder's Flower configuration.
CONNECTION = "dpcore-loopback"
#: The environment variable that tags every process of one :class:`LocalFederation`.
TAG_VAR = "DPCORE_FLOWER_FEDERATION"
_ROLE_VAR = "DPCORE_FLOWER_ROLE"
# what flower-supernode logs once the SuperLink has registered and activated it (Flower 1.42)
_NODE_ID_LINE = "SuperNode ID: "
# no update check, no telemetry (nothing leaves the machine); SuperExec looks for new tasks every 0.2 s (default 1 s)
_FLOWER_ENV = {
    "FLWR_DISABLE_UPDATE_CHECK": "1", "FLWR_TELEMETRY_ENABLED": "0", "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": "0.2",
    "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO": "0",
}  # fmt: skip


def free_port() -> int:
    """A TCP port of 127.0.0.1 that is free now (the OS's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _executable(name: str) -> str:
    """Flower's console script ``name`` next to this Python (the virtual environment's), else on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} not found: install flwr (pip install -e '.[scale]')")
    return found


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise ValueError(f"run config values must be bool, int, float or str, got {value!r}")


def _tagged(tag: str, role: str | None = None) -> list[int]:
    """Live (not zombie) processes whose environment carries ``tag`` (and ``role``); [] where /proc is absent."""
    want = f"{TAG_VAR}={tag}".encode()
    role_b = f"{_ROLE_VAR}={role}".encode() if role is not None else None
    out = []
    proc = Path("/proc")
    if not proc.is_dir():
        return out
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):  # gone, or not ours to read
            continue
        if want in env and state != "Z" and (role_b is None or role_b in env):
            out.append(int(entry.name))
    return sorted(out)


def _signal(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


class LocalFederation:
    """A SuperLink and SuperNodes as separate processes on 127.0.0.1, started and stopped by this object.

    ``workdir``: the work folder (Flower homes, logs, results); ``simulation``: start the SuperLink with
    ``--simulation`` (the simulation runtime: ``flwr run`` then simulates the nodes on Ray) -- else the deployment
    runtime, whose nodes are the SuperNodes of :meth:`add_supernode`.  ``ray_address``: a running Ray instance for
    the simulation to join (``RAY_ADDRESS``; else Flower starts one, with Ray's fixed 30 s node start limit and no
    retry).  ``start_timeout_s``: limit on the SuperLink answering its health check.  Use as a context manager
    (``with LocalFederation(...) as fed:``): the exit stops every process of the federation, whatever happened.
    """

    def __init__(
        self, workdir: str | Path, *, simulation: bool = False, ray_address: str | None = None,
        start_timeout_s: float = 120.0, stop_timeout_s: float = 15.0, env: Mapping[str, str] | None = None,
    ) -> None:  # fmt: skip
        if not start_timeout_s > 0 or not stop_timeout_s > 0:
            raise ValueError(f"start_timeout_s and stop_timeout_s must be > 0, got {start_timeout_s}, {stop_timeout_s}")
        self.workdir = Path(workdir).resolve()
        self.simulation = bool(simulation)
        self.start_timeout_s = float(start_timeout_s)
        self.stop_timeout_s = float(stop_timeout_s)
        self.tag = uuid.uuid4().hex
        self.home = self.workdir / "flwr-home"
        self.logs = self.workdir / "logs"
        self.port: int | None = None
        self.supernodes: list[dict[str, Any]] = []
        self._procs: list[tuple[str, subprocess.Popen, IO[bytes]]] = []
        self._runs = 0
        self._ray_tmp: str | None = None
        self._env = dict(env or {})
        if ray_address is not None:  # flwr-simulation's ray.init() joins this Ray instance instead of starting one
            self._env["RAY_ADDRESS"] = str(ray_address)

    # ------------------------------------------------------------------ processes
    def _environment(self, role: str, home: Path) -> dict[str, str]:
        path = os.pathsep.join(filter(None, [str(repo_root()), os.environ.get("PYTHONPATH")]))
        bins = os.pathsep.join(
            [str(Path(_executable("flwr")).parent), os.environ.get("PATH", "")]
        )  # Flower's own spawns
        env = {**os.environ, **_FLOWER_ENV, "FLWR_HOME": str(home), "PYTHONPATH": path, "PATH": bins, TAG_VAR: self.tag,
               _ROLE_VAR: role}  # fmt: skip
        env.setdefault("OMP_NUM_THREADS", "1")
        if self._ray_tmp is not None:
            env["RAY_TMPDIR"] = self._ray_tmp
        env.update(self._env)
        return env

    def _spawn(self, role: str, args: list[str], home: Path) -> subprocess.Popen:
        home.mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(parents=True, exist_ok=True)
        log = open(self.logs / f"{role}.log", "ab")  # noqa: SIM115 (closed in stop)
        proc = subprocess.Popen(args, env=self._environment(role, home), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, cwd=self.workdir)  # fmt: skip
        self._procs.append((role, proc, log))
        return proc

    def log_tail(self, role: str, chars: int = 3000) -> str:
        """The last ``chars`` characters of ``role``'s log (``superlink``, ``supernode-<i>``, ``flwr-run-<n>``)."""
        path = self.logs / f"{role}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as res:
                return 200 <= res.status < 300
        except (urllib.error.URLError, OSError):
            return False

    def start(self) -> LocalFederation:
        """Start the SuperLink on a free port and wait (``start_timeout_s``) for its health check; retried on a new
        port when it exits (the port taken meanwhile).  Raises :class:`FederationError` with its log otherwise."""
        if self.port is not None:
            raise FederationError("this federation is already started")
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.simulation and "RAY_ADDRESS" not in self._env:  # Ray's sockets need a short path
            self._ray_tmp = tempfile.mkdtemp(prefix="dpfl-ray-")
        deadline = time.monotonic() + self.start_timeout_s
        for _attempt in range(3):
            self.port = free_port()
            args = [_executable("flower-superlink"), "--insecure", "--host", "127.0.0.1", "--port", str(self.port),
                    "--disable-runtime-dependency-installation"]  # fmt: skip
            args += ["--simulation"] if self.simulation else []
            proc = self._spawn("superlink", args, self.home)
            while time.monotonic() < deadline and proc.poll() is None and not self._healthy():
                time.sleep(0.25)
            if self._healthy():
                self._write_connection()
                return self
            if proc.poll() is None:  # alive but not healthy in time
                break
        self.stop()
        raise FederationError(f"the SuperLink did not start within {self.start_timeout_s:g} s (port {self.port}); "
                              f"its log: {self.log_tail('superlink')}")  # fmt: skip

    def _write_connection(self) -> None:
        (self.home / "config.toml").write_text(
            f'[superlink]\ndefault = "{CONNECTION}"\n\n[superlink.{CONNECTION}]\n'
            f'address = "127.0.0.1:{self.port}"\ninsecure = true\n'
        )

    @property
    def address(self) -> str:
        """The SuperLink's address (Fleet, Control and Runtime APIs share it in Flower 1.42)."""
        if self.port is None:
            raise FederationError("the federation is not started")
        return f"127.0.0.1:{self.port}"

    def add_supernode(self, node_config: Mapping[str, Any], *, superlink: str | None = None) -> int:
        """Start a SuperNode with ``node_config`` (e.g. ``{"partition-id": 0, "num-partitions": 3}``) connecting to
        this SuperLink (or to ``superlink``, host:port); its index for :meth:`kill_supernode`."""
        if self.simulation:
            raise FederationError("a simulation federation has no SuperNodes (flwr run simulates them)")
        index = len(self.supernodes)
        config = " ".join(f"{k}={_toml_value(v)}" for k, v in node_config.items())
        args = [_executable("flower-supernode"), "--insecure", "--superlink", superlink or self.address,
                "--host", "127.0.0.1", "--port", str(free_port()), "--node-config", config]  # fmt: skip
        proc = self._spawn(f"supernode-{index}", args, self.workdir / f"supernode-{index}")
        self.supernodes.append({"node_config": dict(node_config), "process": proc})
        return index

    def wait_for_supernodes(self, indices: Iterable[int] | None = None, *, timeout_s: float = 300.0) -> None:
        """Wait until SuperNodes ``indices`` (default: all added) are connected: each has logged the node id the
        SuperLink gave it when it registered and activated it (``SuperNode ID: <id>``), polled every 0.2 s.
        Raises :class:`FederationError` with the SuperNode's log when one exited or ``timeout_s`` ran out."""
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        waiting = set(range(len(self.supernodes)) if indices is None else indices)
        if not waiting <= set(range(len(self.supernodes))):
            raise ValueError(f"indices must be SuperNodes of this federation (0..{len(self.supernodes) - 1}), "
                             f"got {sorted(waiting)}")  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while waiting:
            for i in sorted(waiting):
                if _NODE_ID_LINE in self.log_tail(f"supernode-{i}", chars=1 << 20):
                    waiting.discard(i)
                elif self.supernodes[i]["process"].poll() is not None or time.monotonic() > deadline:
                    raise FederationError(f"SuperNode {i} did not connect within {timeout_s:g} s (or exited); its "
                                          f"log: {self.log_tail(f'supernode-{i}')}")  # fmt: skip
            if waiting:
                time.sleep(0.2)

    def kill_supernode(self, index: int) -> list[int]:
        """SIGKILL SuperNode ``index`` and every process it started (its machine gone); returns their pids."""
        pids = _tagged(self.tag, f"supernode-{index}")
        proc = self.supernodes[index]["process"]
        _signal(pids, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        return pids

    def processes(self) -> list[int]:
        """The pids of this federation's processes still alive (on Linux; elsewhere only the ones started here)."""
        tagged = _tagged(self.tag)
        own = [p.pid for _r, p, _l in self._procs if p.poll() is None]
        return sorted(set(tagged) | set(own))

    def stop(self) -> None:
        """End every process of the federation: SIGTERM to each session started here and to every tagged process,
        SIGKILL to whatever is left after ``stop_timeout_s``; reap and close the logs."""
        for _role, proc, _log in self._procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
        _signal(_tagged(self.tag), signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout_s
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.2)
        for _role, proc, _log in self._procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        _signal(_tagged(self.tag), signal.SIGKILL)
        for _role, proc, log in self._procs:
            try:
                proc.wait(timeout=30)
            finally:
                log.close()
        deadline = time.monotonic() + 10
        while _tagged(self.tag) and time.monotonic() < deadline:  # SIGKILLed grandchildren: init reaps them
            time.sleep(0.2)
        if self._ray_tmp is not None:
            shutil.rmtree(self._ray_tmp, ignore_errors=True)

    def __enter__(self) -> LocalFederation:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ runs
    def run(
        self, run_config: Mapping[str, Any], *, app: str | Path = APP_DIR, timeout_s: float = 600.0,
        federation_config: Mapping[str, Any] | None = None,
    ) -> FederatedResult:  # fmt: skip
        """``flwr run <app> <connection> --stream`` with ``run_config`` overriding the app's config (``out-dir`` is set
        here); returns the result the ServerApp wrote.  ``federation_config``: the simulation's
        ``--federation-config`` (e.g. ``{"num-supernodes": 3}``).  Raises :class:`FederationError` with the run's
        error, or with the logs when ``flwr run`` did not end within ``timeout_s`` seconds (it is then killed)."""
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self._runs += 1
        role = f"flwr-run-{self._runs}"
        out_dir = self.workdir / f"run-{self._runs}"
        out_dir.mkdir(parents=True, exist_ok=True)
        overrides = out_dir / "run-config.toml"
        config = {**run_config, "out-dir": str(out_dir)}
        overrides.write_text("".join(f"{k} = {_toml_value(v)}\n" for k, v in config.items()))
        args = [
            _executable("flwr"),
            "run",
            str(Path(app).resolve()),
            CONNECTION,
            "--stream",
            "--run-config",
            str(overrides),
        ]
        if federation_config:
            args += ["--federation-config", " ".join(f"{k}={_toml_value(v)}" for k, v in federation_config.items())]
        proc = self._spawn(role, args, self.home)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
            raise FederationError(
                f"flwr run did not end within {timeout_s:g} s; its output: {self.log_tail(role)} "
                f"The SuperLink's log: {self.log_tail('superlink')}"
            ) from None
        try:
            return read_result(out_dir)
        except FederationError as err:
            if "wrote no result" not in str(err):
                raise
            raise FederationError(f"{err}; flwr run exited with {proc.returncode}: {self.log_tail(role)} "
                                  f"The SuperLink's log: {self.log_tail('superlink')}") from None  # fmt: skip


def _insurance_config(num_silos: int, run_config: Mapping[str, Any]) -> dict[str, Any]:
    return {"num-silos": check_positive_int("num_silos", num_silos), **run_config}


def simulate(
    run_config: Mapping[str, Any], *, num_silos: int, workdir: str | Path, app: str | Path = APP_DIR,
    num_cpus: int = 2, timeout_s: float = 600.0, ray_start_timeout_s: float | None = None,
) -> FederatedResult:  # fmt: skip
    """The app under Flower's simulation runtime: a SuperLink ``--simulation`` on 127.0.0.1 and ``flwr run`` with
    ``num-supernodes = num_silos``, one CPU per simulated node at a time.

    The simulation joins a local Ray instance with ``num_cpus`` cores started here by
    :func:`dpcore.experiments.ray_backend.start_local_ray` (retried within ``ray_start_timeout_s``; it raises
    ``RayStartError`` naming the failure) and stopped at the end -- or the one already running in this process.
    """
    from dpcore.experiments.ray_backend import require, start_local_ray

    num_cpus = check_positive_int("num_cpus", num_cpus)
    config = _insurance_config(num_silos, run_config)
    ray = require("ray")
    started = not ray.is_initialized()
    ray_tmp = tempfile.mkdtemp(prefix="dpfl-ray-") if started else None  # Ray's sockets need a short path
    try:
        if started:
            path = os.pathsep.join(filter(None, [str(repo_root()), *sys.path, os.environ.get("PYTHONPATH")]))
            start_local_ray(num_cpus, temp_dir=ray_tmp, timeout_s=ray_start_timeout_s,
                            runtime_env={"env_vars": {"PYTHONPATH": path}})  # fmt: skip
        address = ray.get_runtime_context().gcs_address
        with LocalFederation(workdir, simulation=True, ray_address=address) as fed:
            nodes = {"num-supernodes": num_silos, "client-resources-num-cpus": 1}
            return fed.run(config, app=app, timeout_s=timeout_s, federation_config=nodes)
    finally:
        if started and ray.is_initialized():
            ray.shutdown()
        if ray_tmp is not None:
            shutil.rmtree(ray_tmp, ignore_errors=True)


def deploy(
    run_config: Mapping[str, Any], *, num_silos: int, workdir: str | Path, app: str | Path = APP_DIR,
    timeout_s: float = 600.0,
) -> FederatedResult:  # fmt: skip
    """The app under Flower's deployment runtime: a SuperLink and ``num_silos`` SuperNodes (``partition-id`` 0..N-1)
    as separate processes on 127.0.0.1, and ``flwr run``; everything is stopped at the end."""
    config = _insurance_config(num_silos, run_config)
    with LocalFederation(workdir) as fed:
        for i in range(num_silos):
            fed.add_supernode({"partition-id": i, "num-partitions": num_silos})
        return fed.run(config, app=app, timeout_s=timeout_s)
