"""The one noise calibrator (dpcore.accounting.calibrate.smallest_sigma): never overshoots, is tight to rtol,
brackets in both directions, and refuses what it cannot answer naming the parameter.

(Its extreme tolerances and far-away brackets are timed in ``tests/accounting/test_extremes.py``.)"""

from __future__ import annotations

import math

import pytest

from dpcore.accounting import calibrate


def _inverse(s: float) -> float:
    return 1.0 / s


@pytest.mark.parametrize("target", [1e-3, 0.5, 1.0, 7.0])
@pytest.mark.parametrize("start", [1e-2, 1.0, 1e3])
def test_never_overshoots_and_is_tight_from_any_start(target, start):
    sigma = calibrate.smallest_sigma(_inverse, target, rtol=1e-6, start=start)
    assert _inverse(sigma) <= target
    assert sigma <= (1 / target) * (1 + 2e-6)


def test_a_step_function_returns_the_feasible_end_of_the_bracket():
    sigma = calibrate.smallest_sigma(lambda s: 2.0 if s < 3.0 else 1.0, 1.5, rtol=1e-4)
    assert 3.0 <= sigma <= 3.0 * (1 + 1e-4)


def test_a_target_met_below_sigma_min_returns_it_or_is_refused():
    assert calibrate.smallest_sigma(_inverse, 1e9) == calibrate.SIGMA_MIN
    with pytest.raises(ValueError, match="sigma_min"):
        calibrate.smallest_sigma(_inverse, 1e9, below_min="raise")


def test_an_unreachable_target_is_refused_naming_sigma_max():
    with pytest.raises(ValueError, match="target.*sigma_max"):
        calibrate.smallest_sigma(_inverse, 1e-9)


@pytest.mark.parametrize("value", [math.nan, -1.0, "x"])
def test_a_broken_accountant_is_never_read_as_feasible(value):
    with pytest.raises(ValueError, match="accountant returned"):
        calibrate.smallest_sigma(lambda s: value, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(eps=3), "eps"),
        (dict(target=0.0), "target"),
        (dict(target=math.inf), "target"),
        (dict(rtol=1.5), "rtol"),
        (dict(start=-1.0), "start"),
        (dict(factor=1.0), "factor"),
        (dict(sigma_min=2.0, sigma_max=1.0), "sigma_min"),
        (dict(below_min="never"), "below_min"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"eps": _inverse, "target": 0.5, **kwargs}
    with pytest.raises(ValueError, match=name):
        calibrate.smallest_sigma(args.pop("eps"), args.pop("target"), **args)


def test_check_rtol_range():
    assert calibrate.check_rtol(1e-3) == 1e-3
    assert calibrate.check_rtol(calibrate.MIN_RTOL) == calibrate.MIN_RTOL
    for bad in (calibrate.MIN_RTOL / 2, 1.0, math.nan):
        with pytest.raises(ValueError, match="rtol"):
            calibrate.check_rtol(bad)
