"""Import torchvision on a CPU-only torch build.

The registry's torchvision 0.28.0 wheel is a CUDA build; with the CPU build of
torch 2.13.0 its import fails with ``RuntimeError: operator torchvision::nms does
not exist`` because the compiled ops are missing and ``torchvision/_meta_registrations``
registers fake kernels for them.  Defining the two op *schemas* first (no kernels)
is enough for everything dpcore uses (datasets, transforms, models).  The
workaround is applied only when the plain import fails with that message.
"""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ["import_torchvision", "MISSING_OPS"]

MISSING_OPS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}
_LIBRARY = None  # keep the fragment alive for the life of the process


def _define_missing_schemas() -> None:
    global _LIBRARY
    import torch

    if _LIBRARY is None:
        _LIBRARY = torch.library.Library("torchvision", "FRAGMENT")
        for schema in MISSING_OPS.values():
            _LIBRARY.define(schema)


def import_torchvision() -> ModuleType:
    """Return the ``torchvision`` module, applying the CPU workaround if needed."""
    try:
        import torchvision
    except RuntimeError as exc:
        if "torchvision::nms does not exist" not in str(exc):
            raise
        for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[name]
        _define_missing_schemas()
        import torchvision
    return torchvision
