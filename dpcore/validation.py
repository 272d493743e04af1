"""Input checks shared by every public function.

Each helper raises :class:`ValueError` whose message names the parameter and
the allowed range, e.g. ``"delta must be in (0, 1), got 1.5"``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = [
    "check_finite",
    "check_positive",
    "check_nonnegative",
    "check_open_unit",
    "check_rate",
    "check_positive_int",
    "check_choice",
    "check_range",
]


def check_finite(name: str, value: Any) -> float:
    """Return ``value`` as a float; raise if it is not a finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be a finite real number, got {value}")
    return value


def check_positive(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """``value`` in (0, inf) (or (0, inf] with ``allow_inf``)."""
    if allow_inf and isinstance(value, numbers.Real) and value == math.inf:
        return math.inf
    value = check_finite(name, value)
    if value <= 0:
        upper = "inf]" if allow_inf else "inf)"
        raise ValueError(f"{name} must be in (0, {upper}, got {value}")
    return value


def check_nonnegative(name: str, value: Any) -> float:
    """``value`` in [0, inf)."""
    value = check_finite(name, value)
    if value < 0:
        raise ValueError(f"{name} must be in [0, inf), got {value}")
    return value


def check_open_unit(name: str, value: Any) -> float:
    """``value`` in the open interval (0, 1), as needed for a δ."""
    value = check_finite(name, value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value


def check_rate(name: str, value: Any) -> float:
    """``value`` in (0, 1], as needed for a sampling rate."""
    value = check_finite(name, value)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value}")
    return value


def check_range(name: str, value: Any, low: float, high: float) -> float:
    """``value`` in the closed interval [low, high]."""
    value = check_finite(name, value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}")
    return value


def check_positive_int(name: str, value: Any, *, minimum: int = 1) -> int:
    """``value`` an integer >= ``minimum`` (floats such as 3.0 are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return value


def check_choice(name: str, value: Any, choices: tuple[str, ...] | list[str]) -> str:
    """``value`` one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value
