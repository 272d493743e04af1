"""Repeatable outputs (issue 25): re-running an unchanged notebook writes byte-identical files.

Two real notebooks (an accounting one and paper 002's toy examples, at smaller sizes than the quick
profile's) run twice through the runner's Python API into temporary folders; every PNG, PDF, CSV and
claims file of the second run must equal the first, byte for byte.  A third, tiny notebook records the
environment its kernel got from the runner (one thread, ``DPCORE_REPEATABLE=1``, CPU kernels no wider than AVX2).
"""

import io
import os
import shutil

import nbformat
import pytest
import yaml

from dpcore import runner
from dpcore.paths import notebooks_dir

#: notebook key -> parameters (the quick profile's, made smaller: the test runs each twice)
NOTEBOOKS = {
    "00_accounting/dpsgd_accountants": {"max_epochs": 6, "n_points": 3},
    "002_modelmix/modelmix_toys": {"draws": 20000},
}
ENV_PROBE = """
import os, pathlib
out = pathlib.Path(figures_dir) / "zz"
out.mkdir(parents=True, exist_ok=True)
names = ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "DPCORE_REPEATABLE", "SOURCE_DATE_EPOCH", "PYTHONHASHSEED",
         "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "NPY_DISABLE_CPU_FEATURES"]
(out / "env.txt").write_text("\\n".join(f"{n}={os.environ.get(n)}" for n in names) + "\\n")
import numpy, torch
simd = numpy.show_config(mode="dicts")["SIMD Extensions"]
(out / "cpu.txt").write_text(torch.backends.cpu.get_cpu_capability() + "\\n" + " ".join(simd["found"]))
"""


def _probe_notebook(path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell('profile = "quick"\nfigures_dir = None')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(ENV_PROBE)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("notebooks")
    for key in NOTEBOOKS:
        target = root / f"{key}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(notebooks_dir() / f"{key}.ipynb", target)
    _probe_notebook(root / "zz" / "env.ipynb")
    (root / "profiles").mkdir()
    (root / "profiles" / "quick.yaml").write_text(yaml.safe_dump(NOTEBOOKS))
    outputs = []
    for run in ("a", "b"):
        out = tmp_path_factory.mktemp(run)
        stream = io.StringIO()
        results = runner.run_notebooks(
            runner.discover("*", root),
            profile="quick",
            out_figures=out / "figures",
            out_build=out / "build",
            root=root,
            stream=stream,
        )
        assert all(r.ok for r in results), stream.getvalue()
        outputs.append(out / "figures")
    return outputs


def _files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.mark.slow
def test_two_notebooks_run_twice_write_identical_bytes(two_runs):
    first, second = two_runs
    names = _files(first)
    assert names == _files(second)
    assert {"png", "pdf", "csv"} <= {n.rsplit(".", 1)[-1] for n in names} and len(names) >= 10, names
    differ = [n for n in names if (first / n).read_bytes() != (second / n).read_bytes()]
    assert differ == [], f"files that differ between two runs: {differ}"


@pytest.mark.slow
def test_the_kernels_run_on_one_thread_with_the_repeatable_flag(two_runs):
    seen = dict(line.split("=", 1) for line in (two_runs[0] / "zz" / "env.txt").read_text().splitlines())
    assert seen == {name: runner.REPEATABLE_ENV.get(name, "None") for name in seen} and seen["OMP_NUM_THREADS"] == "1"
    assert seen["ATEN_CPU_CAPABILITY"] == "avx2" and seen["ONEDNN_MAX_CPU_ISA"] == "AVX2"


@pytest.mark.slow
def test_the_kernels_torch_runs_no_wider_than_avx2(two_runs):
    """The committed quick figures come from AVX2 code paths; an AVX-512 machine's drift in the last bits: torch's
    kernels and numpy's dispatched loops in the kernel stop at AVX2."""
    torch_capability, numpy_found = (two_runs[0] / "zz" / "cpu.txt").read_text().split("\n")
    assert "AVX512" not in torch_capability.upper(), torch_capability
    assert not [t for t in numpy_found.split() if t == "X86_V4" or t.startswith("AVX512")], numpy_found


def test_numpy_avx512_targets_name_only_dispatch_targets():
    import numpy as np

    simd = np.show_config(mode="dicts")["SIMD Extensions"]
    targets = runner.numpy_avx512_targets().split()
    # numpy omits "not found" when every dispatch target is found (an interactive shell here; under `make test`,
    # NPY_DISABLE_CPU_FEATURES moves the AVX-512 targets there)
    assert set(targets) <= {*simd.get("found", []), *simd.get("not found", [])}
    assert all(t == "X86_V4" or t.startswith("AVX512") for t in targets)


def test_repeatable_env_is_set_while_notebooks_run_and_restored(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    monkeypatch.delenv("DPCORE_REPEATABLE", raising=False)
    with runner._repeatable_env():
        assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["DPCORE_REPEATABLE"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "8" and "DPCORE_REPEATABLE" not in os.environ
