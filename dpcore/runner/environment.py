"""The environment of the notebooks' kernels (issue 25, repeatable outputs): :data:`REPEATABLE_ENV`, which
:func:`repeatable_env` sets while :func:`dpcore.runner.run_notebooks` executes them (their kernels inherit it)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

__all__ = ["REPEATABLE_ENV", "numpy_avx512_targets", "repeatable_env"]


def numpy_avx512_targets() -> str:
    """The AVX-512 targets among numpy's runtime-dispatched SIMD code paths (``numpy.show_config``'s "SIMD
    Extensions", found and not found on this machine), space-separated as ``NPY_DISABLE_CPU_FEATURES`` reads them;
    "" where numpy dispatches to none (older x86 builds, other architectures)."""
    import numpy as np

    simd = np.show_config(mode="dicts").get("SIMD Extensions", {})
    targets = [*simd.get("found", []), *simd.get("not found", [])]
    return " ".join(t for t in targets if t == "X86_V4" or t.startswith("AVX512"))


#: environment of the notebooks' kernels (issue 25, repeatable outputs): one BLAS/OpenMP thread, so float
#: reductions do not depend on the machine's core count; deterministic cuBLAS; a fixed hash seed; no
#: date in matplotlib's files; DPCORE_REPEATABLE=1 makes dpcore.report.Report put torch on one thread
#: with deterministic algorithms (dpcore.report.repeatable_torch).  CPU code paths no wider than AVX2: torch's
#: own vectorised kernels (``ATEN_CPU_CAPABILITY``), oneDNN's convolutions (``ONEDNN_MAX_CPU_ISA``) and numpy's
#: dispatched loops (``NPY_DISABLE_CPU_FEATURES``, the AVX-512 targets of :func:`numpy_avx512_targets`).  On a
#: machine with AVX-512 each otherwise takes code paths whose last bits differ: measured on an AVX-512 AMD EPYC of
#: this machine class, 003's batch-clipping runs and every 002 quick run (torch, oneDNN: either pin alone was not
#: enough) and the PLD accountants' ε from the 7th significant digit on (numpy) differed from the committed files;
#: with the pins every file came out byte-identical.  A machine without AVX2 keeps its best paths (upper limits).
REPEATABLE_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
    "SOURCE_DATE_EPOCH": "0",
    "MPLBACKEND": "Agg",
    "DPCORE_REPEATABLE": "1",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}
_NUMPY_AVX512 = numpy_avx512_targets()
if _NUMPY_AVX512:  # nothing to disable where numpy dispatches to no AVX-512 target
    REPEATABLE_ENV["NPY_DISABLE_CPU_FEATURES"] = _NUMPY_AVX512


@contextlib.contextmanager
def repeatable_env() -> Iterator[None]:
    """Set :data:`REPEATABLE_ENV` while notebooks execute (their kernels inherit it); restore afterwards."""
    saved = {name: os.environ.get(name) for name in REPEATABLE_ENV}
    os.environ.update(REPEATABLE_ENV)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
