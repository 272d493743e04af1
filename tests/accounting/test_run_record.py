"""dpcore.accounting.run_record.RunRecord: what a run did, frozen, validated field by field and across fields,
JSON round trip.  (Records from real runs and their ε: ``tests/accounting/test_records.py``.)"""

from __future__ import annotations

import dataclasses
import json

import pytest

from dpcore.accounting.run_record import RECORD_VERSION, RunRecord

BASE = dict(private=True, sampling="poisson", dataset_size=60_000, batch_size=600, steps=10_000,
            clipping="individual", clip_norm=1.0, noise_multiplier=4.0, noise_std=4.0)  # fmt: skip


def test_derived_fields_and_dict_access():
    rec = RunRecord(**BASE)
    assert rec["sample_rate"] == pytest.approx(0.01)
    assert rec["planned_steps"] == 10_000 and rec["record_version"] == RECORD_VERSION
    assert rec.get("modelmix") is None and rec.get("nonexistent", 7) == 7
    assert "steps" in rec and "nonexistent" not in rec
    assert dict(rec)["batch_size"] == 600


def test_json_round_trip_gives_the_same_record():
    rec = RunRecord(**BASE)
    back = RunRecord.from_dict(json.loads(json.dumps(rec.to_dict())))
    assert back == rec


def test_frozen_and_replace_validates():
    rec = RunRecord(**BASE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.steps = 3  # type: ignore[misc]
    assert rec.replace(steps=5)["steps"] == 5 and rec["steps"] == 10_000
    with pytest.raises(ValueError, match="steps"):
        rec.replace(steps=-5)


@pytest.mark.parametrize(
    ("changes", "name"),
    [
        (dict(steps=-1), "steps"),
        (dict(sampling="bogus"), "sampling"),
        (dict(batch_size=True), "batch_size"),  # a bool is not an int
        (dict(batch_size=70_000), "batch_size"),  # larger than the data set
        (dict(clip_norm="1"), "clip_norm"),  # a string is not a number
        (dict(noise_std=3.0), "noise_std"),  # not κ·C·σ of its convention
    ],
)
def test_a_bad_field_is_refused_naming_it(changes, name):
    with pytest.raises(ValueError, match=name):
        RunRecord(**{**BASE, **changes})
