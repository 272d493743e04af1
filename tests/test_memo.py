"""The disk memo of slow deterministic functions (:mod:`dpcore.memo`) and paper 002's memoised calibration."""

from __future__ import annotations

import json
import math

import pytest

from dpcore.memo import DiskMemo, memo_enabled, source_stamp


def _memo(tmp_path, source_text="x = 1\n"):
    src = tmp_path / "src.py"
    src.write_text(source_text)
    return DiskMemo("t", [src], folder=tmp_path / "cache"), src


def test_values_come_back_bit_for_bit_and_are_computed_once_across_instances(tmp_path):
    memo, src = _memo(tmp_path)
    calls = []

    def f(x: float, *, k: tuple = ()) -> float:
        calls.append(x)
        return math.pi * x / 3.0 + len(k)

    first = memo(f)
    values = [first(x, k=(1, 2.5)) for x in (0.1, 1e-300, 7.0)]
    assert len(calls) == 3
    # a second process is a fresh DiskMemo over the same file
    again = DiskMemo("t", [src], folder=tmp_path / "cache")(f)
    assert [again(x, k=(1, 2.5)) for x in (0.1, 1e-300, 7.0)] == values
    assert len(calls) == 3
    assert again(0.1, k=(1,)) != values[0] and len(calls) == 4  # another keyword value is another key


def test_a_changed_source_is_a_new_stamp_and_a_new_file(tmp_path):
    memo, src = _memo(tmp_path)
    stamp = source_stamp([src])
    old = memo.path
    src.write_text("x = 2\n")
    assert source_stamp([src]) != stamp
    fresh = DiskMemo("t", [src], folder=tmp_path / "cache")
    assert fresh.path != old
    calls = []
    memo(lambda x: calls.append(x) or 1.0)(1)
    fresh(lambda x: calls.append(x) or 1.0)(1)
    assert len(calls) == 2


def test_memo_off_computes_every_time(tmp_path, monkeypatch):
    memo, _ = _memo(tmp_path)
    monkeypatch.setenv("DPCORE_MEMO", "off")
    assert not memo_enabled()
    calls = []
    g = memo(lambda x: calls.append(x) or 2.0)
    g(1), g(1)
    assert len(calls) == 2 and not (tmp_path / "cache").exists()


def test_bad_input_is_refused_with_the_parameter_named_and_odd_arguments_are_not_stored(tmp_path):
    memo, src = _memo(tmp_path)
    with pytest.raises(ValueError, match="name"):
        DiskMemo("a/b", [src])
    with pytest.raises(ValueError, match="paths"):
        source_stamp([tmp_path / "missing.py"])
    with pytest.raises(ValueError, match="paths"):
        source_stamp([])
    calls = []
    f = memo(lambda x: calls.append(x) or 1.0)
    f(object()), f(math.nan), f(math.nan), f((1, math.inf))  # not plain: computed every time, never stored
    assert len(calls) == 4 and not memo.path.exists()
    with pytest.raises(ValueError, match="only finite floats"):
        memo(lambda x: math.inf)(1)
    with pytest.raises(ValueError, match="only finite floats"):
        memo(lambda x: 1)(1)


def test_a_corrupt_file_is_an_error_naming_it(tmp_path):
    memo, _ = _memo(tmp_path)
    memo.path.parent.mkdir(parents=True)
    memo.path.write_text("{not json")
    with pytest.raises(ValueError, match="delete it"):
        memo(lambda x: 1.0)(1)
    memo.path.write_text(json.dumps({"k": "text"}))
    with pytest.raises(ValueError, match="not a memo file"):
        DiskMemo("t", memo.sources, folder=memo.folder)(lambda x: 1.0)(1)


def test_p002_calibration_memoised_equals_computed(monkeypatch):
    """Paper 002's calibration through the memo (stored, then read back) is the computed value, bit for bit."""
    from dpcore.papers.p002_modelmix import training as t2

    inner = t2.calibrate.__wrapped__  # below lru_cache: the memoised function
    args = dict(n=1000, batch_size=100, steps=20, clip=1.0)
    stored = [inner(2.0, **args), inner(2.0, **args, tau=((0.5, 0.05), (1.0, 0.025)))]
    monkeypatch.setenv("DPCORE_MEMO", "off")
    computed = [inner(2.0, **args), inner(2.0, **args, tau=((0.5, 0.05), (1.0, 0.025)))]
    assert stored == computed
