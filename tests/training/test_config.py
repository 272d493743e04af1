"""dpcore.training.config: TrainConfig refuses a bad device or step size at construction, naming the field."""

import math

import pytest

from dpcore.training import TrainConfig

BASE = dict(sampling="poisson", batch_size=10, steps=5, clipping="individual", clip_norm=1.0, noise_multiplier=1.0)


@pytest.mark.parametrize(
    "changes,name",
    [
        ({"device": "tpu"}, "device"),
        ({"device": 3}, "device"),
        ({"device": "cuda:x"}, "device"),
        ({"lr": -1}, "lr"),
        ({"lr": 0}, "lr"),
        ({"lr": math.nan}, "lr"),
        ({"lr": True}, "lr"),
        ({"lr": "0.1"}, "lr"),
        ({"lr": {"kind": "constant", "rate": 0.1}}, "lr"),
    ],
)
def test_bad_fields_are_refused_at_construction(changes, name):
    with pytest.raises(ValueError, match=name):
        TrainConfig(**{**BASE, **changes})


@pytest.mark.parametrize("device", ["auto", "cpu", "cuda", "cuda:1", "mps"])
def test_known_devices_are_accepted_without_being_present(device):
    assert TrainConfig(**BASE, device=device).device == device


def test_schedules_are_accepted():
    TrainConfig(**BASE, lr={"kind": "inverse_time", "lr0": 0.1, "beta": 0.01, "power": 0.5})
    TrainConfig(**BASE, lr=0.5)
