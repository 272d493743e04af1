"""dpcore: the reproducible, tested companion to five papers on DP-SGD and private FL."""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: The names a user of Opacus or dp_accounting looks for first, importable from ``dpcore`` itself; each is loaded
#: on first use (PEP 562), so ``import dpcore`` stays instant and loads no torch and no dp_accounting.
_LAZY: dict[str, str] = {
    "dpsgd_epsilon": "dpcore.accounting.dpsgd",
    "dpsgd_noise_multiplier": "dpcore.accounting.dpsgd",
    "epsilon_curve": "dpcore.accounting.dpsgd",
    "LabelledEpsilon": "dpcore.accounting.dpsgd",
    "epsilon_for_record": "dpcore.accounting.records",
    "noise_multiplier_for_record": "dpcore.accounting.records",
    "RunRecord": "dpcore.accounting.run_record",
}

__all__ = [
    "__version__",
    "LabelledEpsilon",
    "RunRecord",
    "dpsgd_epsilon",
    "dpsgd_noise_multiplier",
    "epsilon_curve",
    "epsilon_for_record",
    "noise_multiplier_for_record",
]

if TYPE_CHECKING:  # pragma: no cover
    from dpcore.accounting.dpsgd import LabelledEpsilon, dpsgd_epsilon, dpsgd_noise_multiplier, epsilon_curve
    from dpcore.accounting.records import epsilon_for_record, noise_multiplier_for_record
    from dpcore.accounting.run_record import RunRecord


def __getattr__(name: str) -> Any:
    """PEP 562: import the module that defines ``name`` on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
