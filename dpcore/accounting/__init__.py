"""Privacy accounting: paper-independent, one implementation per primitive.

* :mod:`~dpcore.accounting.events`    -- the vocabulary of what a run did (sampling, clipping).
* :mod:`~dpcore.accounting.gaussian`  -- the Gaussian mechanism: δ(ε) in log space, ε(δ), trade-off curve.
* :mod:`~dpcore.accounting.rdp`       -- subsampled-Gaussian RDP (Poisson; fixed-size without replacement),
  any order > 1, and RDP → (ε, δ).
* :mod:`~dpcore.accounting.fdp`       -- trade-off curves, GDP/CLT μ (approximate), conversions.
* :mod:`~dpcore.accounting.calibrate` -- the one calibrator behind every "σ for a target ε".
* :mod:`~dpcore.accounting.dpsgd`     -- :func:`dpsgd_epsilon` and :func:`dpsgd_noise_multiplier`.
* :mod:`~dpcore.accounting.run_record` -- :class:`RunRecord`: what a run did, typed, frozen, validated.
* :mod:`~dpcore.accounting.records`   -- run records → ε with the matching accountant.
* mechanism accountants the trainer's records need: :mod:`~dpcore.accounting.modelmix` (Gaussian ⊛ uniform
  mixing), :mod:`~dpcore.accounting.shuffled` and :mod:`~dpcore.accounting.mixture` (shuffled / subsampled
  batch clipping under the labelled adversary A_1).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> the submodule that defines it.  Nothing is imported until a name is used (PEP 562), so
#: ``import dpcore.accounting`` loads no NumPy/SciPy accountant, no torch and no dp_accounting.
_LAZY: dict[str, str] = {
    "METHODS": "dpsgd",
    "SAMPLINGS": "dpsgd",
    "LabelledEpsilon": "dpsgd",
    "dpsgd_epsilon": "dpsgd",
    "dpsgd_noise_multiplier": "dpsgd",
    "epsilon_curve": "dpsgd",
    "epsilon_for_record": "records",
    "noise_multiplier_for_record": "records",
    "choose_accountant": "records",
    "RunRecord": "run_record",
    "REGISTRY": "registry",
}

#: The submodules, imported on first attribute access too (as ``import dpcore.accounting`` used to import them).
_SUBMODULES = frozenset(
    "calibrate dpsgd events fdp gaussian mixture modelmix pld rdp records registry replacement run_record "
    "shuffle_lower shuffled".split()
)

__all__ = [
    "METHODS",
    "REGISTRY",
    "SAMPLINGS",
    "LabelledEpsilon",
    "RunRecord",
    "choose_accountant",
    "dpsgd_epsilon",
    "dpsgd_noise_multiplier",
    "epsilon_curve",
    "epsilon_for_record",
    "noise_multiplier_for_record",
]

if TYPE_CHECKING:  # pragma: no cover
    from dpcore.accounting.dpsgd import (
        METHODS,
        SAMPLINGS,
        LabelledEpsilon,
        dpsgd_epsilon,
        dpsgd_noise_multiplier,
        epsilon_curve,
    )
    from dpcore.accounting.records import choose_accountant, epsilon_for_record, noise_multiplier_for_record
    from dpcore.accounting.registry import REGISTRY
    from dpcore.accounting.run_record import RunRecord


def __getattr__(name: str) -> Any:
    """PEP 562: import the submodule that defines ``name`` on first use."""
    module = _LAZY.get(name)
    if module is None:
        if name in _SUBMODULES:  # ``dpcore.accounting.registry`` after a bare ``import dpcore.accounting``
            return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
