"""Input checks shared by every public function.

Each helper raises :class:`ValueError` whose message names the parameter and
the allowed range, e.g. ``"delta must be in (0, 1), got 1.5"``.  A number is a real
number that is not a bool (``True`` is not 1, ``"1.5"`` is not 1.5, ``1+0j`` is not 1);
numpy scalars are numbers.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "check_finite",
    "check_positive",
    "check_nonnegative",
    "check_open_unit",
    "check_rate",
    "check_positive_int",
    "check_choice",
    "check_range",
    "check_bool",
    "check_callable",
    "check_sequence",
    "check_real_array",
    "check_result",
]


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_finite(name: str, value: Any) -> float:
    """Return ``value`` as a float; raise if it is not a finite real number."""
    if not _is_real(value):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:  # an integer beyond the float range
        raise ValueError(f"{name} must be a finite real number, got an integer of {value.bit_length()} bits") from None
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be a finite real number, got {value}")
    return value


def check_positive(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """``value`` in (0, inf) (or (0, inf] with ``allow_inf``)."""
    if allow_inf and _is_real(value) and value == math.inf:
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


def check_positive_int(name: str, value: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` an integer >= ``minimum`` (floats such as 3.0 are refused), and <= ``maximum`` when given
    (a bound on the cost of what the integer counts)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be an integer {allowed}, got {value}")
    return value


def check_choice(name: str, value: Any, choices: tuple[str, ...] | list[str]) -> str:
    """``value`` one of ``choices`` (a bool is not the integer choice 1)."""
    try:
        ok = value in choices and not (_is_bool(value) and not any(_is_bool(c) for c in choices))
    except (TypeError, ValueError):  # e.g. an array compared with strings
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def check_bool(name: str, value: Any) -> bool:
    """``value`` a bool (``True``/``False`` or a numpy bool; 1 and "yes" are refused)."""
    if not _is_bool(value):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_callable(name: str, value: Any) -> Callable:
    """``value`` callable."""
    if not callable(value):
        raise ValueError(f"{name} must be callable, got {value!r}")
    return value


def check_sequence(name: str, value: Any, *, min_len: int = 1) -> list:
    """``value`` a sequence (list, tuple, range or 1-D array; not a string or a scalar) of at least ``min_len``
    items, returned as a list."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = list(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, range)):
        raise ValueError(f"{name} must be a sequence of at least {min_len} item(s), got {value!r}")
    if len(value) < min_len:
        raise ValueError(f"{name} must hold at least {min_len} item(s), got {len(value)}")
    return list(value)


def check_real_array(
    name: str,
    value: Any,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
    ndim: int | None = None,
    min_size: int = 1,
) -> np.ndarray:
    """``value`` (a number or an array-like of numbers) as a float array with every entry in the interval
    from ``low`` to ``high`` (closed unless ``low_open``/``high_open``); NaN, bools, strings, complex numbers and
    None are refused, and so are ±inf unless ``allow_inf``."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # ragged nesting
        arr = np.asarray(None)
    ok = arr.dtype.kind in "iuf" or (arr.dtype.kind == "O" and arr.size > 0 and all(map(_is_real, arr.ravel())))
    if ok:
        try:
            arr = arr.astype(float)
        except OverflowError:  # an integer beyond the float range
            ok = False
    if ok:
        ok = not np.any(np.isnan(arr)) and (allow_inf or bool(np.all(np.isfinite(arr))))
    left, right = "(" if low_open else "[", ")" if high_open else "]"
    interval = f"{left}{low:g}, {high:g}{right}"
    if not ok:
        raise ValueError(f"{name} must be {'a number' if ndim == 0 else 'real numbers'} in {interval}, got {value!r}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array of numbers in {interval}, got shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must hold at least {min_size} number(s), got {arr.size}")
    below = arr <= low if low_open else arr < low
    above = arr >= high if high_open else arr > high
    if np.any(below | above):
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return arr


def check_result(what: str, value: Any, *, allow_inf: bool = True, cause: str = "") -> float:
    """Guard on an output: ``value`` must be a non-negative number (∞ allowed unless ``allow_inf=False``).
    A NaN or a negative ε never leaves a public function: ``ValueError`` naming ``what`` and ``cause`` (the
    inputs that are out of the computation's range)."""
    v = float(value)
    if math.isnan(v) or v < 0 or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{what} = {v} is not a valid value: {cause or 'the inputs are out of range'}")
    return v
