"""dpcore: the reproducible, tested companion to five papers on DP-SGD and private FL."""

from typing import Any

__version__ = "0.1.0"

#: The names a user of Opacus or dp_accounting looks for first, importable from ``dpcore`` itself: each is
#: :mod:`dpcore.accounting`'s (itself lazy, PEP 562), loaded on first use, so ``import dpcore`` stays instant and
#: loads no torch and no dp_accounting.
_ACCOUNTING = "LabelledEpsilon RunRecord dpsgd_epsilon dpsgd_noise_multiplier epsilon_curve epsilon_for_record"
__all__ = ["__version__", *_ACCOUNTING.split(), "noise_multiplier_for_record"]


def __getattr__(name: str) -> Any:
    """PEP 562: the public accounting names, from :mod:`dpcore.accounting` on first use."""
    if name == "__version__" or name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from dpcore import accounting

    return getattr(accounting, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
