"""Import kymatio 0.3.0 (the reference ScatterNet of Tramèr & Boneh 2021, used by paper 002's Table I) with SciPy 1.17.

``import kymatio.torch`` fails with SciPy ≥ 1.17: ``kymatio/scattering3d/filter_bank.py`` runs
``from scipy.special import sph_harm``, and SciPy 1.17 removed ``sph_harm`` (deprecated since 1.15) in favour
of ``sph_harm_y``.  The 3-D harmonic scattering is imported whenever the package is, so even the 2-D
transform cannot be used.  :func:`import_kymatio_torch` first tries the plain import; only when it fails with
that message does it define ``scipy.special.sph_harm`` through :func:`sph_harm` (the old argument order
on top of ``sph_harm_y``) and import again.  The shim is applied to the running process only.

kymatio is an optional test/benchmark dependency (extra ``kymatio``); dpcore's own
:class:`dpcore.models.Scattering2D` is what the library uses.
"""

from __future__ import annotations

import sys
from types import ModuleType

import numpy as np
import scipy.special

__all__ = ["import_kymatio_torch", "sph_harm"]

_MESSAGE = "cannot import name 'sph_harm'"


def sph_harm(m, n, theta, phi):
    """SciPy < 1.17's ``sph_harm(m, n, theta, phi)``: Y_n^m at azimuth ``theta`` and polar angle ``phi``.

    Same values as ``scipy.special.sph_harm_y(n, m, phi, theta)`` (SciPy 1.15 swapped both argument pairs).
    """
    m, n = np.asarray(m), np.asarray(n)
    if np.any(n < 0) or np.any(np.abs(m) > n):
        raise ValueError(f"sph_harm needs degree n >= 0 and order |m| <= n, got m={m.tolist()}, n={n.tolist()}")
    return scipy.special.sph_harm_y(n, m, phi, theta)


def import_kymatio_torch() -> ModuleType:
    """Return ``kymatio.torch``, defining the removed ``scipy.special.sph_harm`` first when (and only when) needed.

    Raises ``ImportError`` unchanged when kymatio is not installed or fails for another reason.
    """
    try:
        import kymatio.torch
    except ImportError as exc:
        if _MESSAGE not in str(exc):
            raise
        for name in [m for m in sys.modules if m == "kymatio" or m.startswith("kymatio.")]:
            del sys.modules[name]
        scipy.special.sph_harm = sph_harm
        import kymatio.torch
    return kymatio.torch
