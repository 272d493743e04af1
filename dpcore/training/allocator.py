"""Keep freed memory in the process on Linux/glibc, so large per-step temporaries are not page-faulted anew.

PyTorch's CPU allocator returns large blocks to the operating system (glibc serves them with ``mmap``),
so every training step touches fresh pages; for per-sample gradients (large, short-lived tensors)
the page faults cost as much as the arithmetic.  :func:`tune_cpu_allocator` raises glibc's
``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD`` (``mallopt``) so freed blocks are reused -- the same
effect as the jemalloc/tcmalloc advice of PyTorch's CPU performance guide.  It is process-wide and
opt-in (the benchmark applies it to every mode it compares, non-private included).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

__all__ = ["tune_cpu_allocator"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def tune_cpu_allocator(mmap_threshold: int = 1 << 30, trim_threshold: int = (1 << 31) - 1) -> bool:
    """Apply the glibc settings; returns False (doing nothing) where glibc's ``mallopt`` is unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold)) == 1
    return mallopt(_M_TRIM_THRESHOLD, int(trim_threshold)) == 1 and ok
