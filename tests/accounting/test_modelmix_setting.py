"""ModelMix's one setting value (issue 43): validated at construction, naming the field, and the same numbers as
the one form the accountant's functions take (issue 52: no loose keywords)."""

from __future__ import annotations

import pytest

from dpcore.accounting import modelmix as mm
from dpcore.accounting.modelmix import ModelMixSetting

FIELDS = dict(n=50_000, batch_size=1500, noise_multiplier=0.335, clip=20.0, tau=0.15, linf_blocks=100)


@pytest.mark.parametrize(
    ("field", "bad"),
    [("n", 0), ("n", 1.5), ("batch_size", 0.0), ("batch_size", 60_000), ("noise_multiplier", -1.0),
     ("noise_multiplier", float("nan")), ("clip", 0.0), ("tau", -0.1), ("linf_blocks", 0),
     ("linf_blocks", mm.MAX_LINF_BLOCKS + 1)],
)  # fmt: skip
def test_a_bad_field_is_refused_at_construction_naming_it(field, bad):
    with pytest.raises(ValueError, match=field):
        ModelMixSetting(**{**FIELDS, field: bad})


def test_the_setting_is_frozen_normalised_and_replace_validates_again():
    s = ModelMixSetting(n=1000, batch_size=10, noise_multiplier=1.0)
    assert (s.clip, s.tau, s.linf_blocks, s.sample_rate) == (1.0, 0.0, 1, 0.01)
    with pytest.raises(AttributeError):
        s.tau = 0.5  # type: ignore[misc]
    assert s.replace(tau=0.5).tau == 0.5
    with pytest.raises(ValueError, match="tau"):
        s.replace(tau=-1.0)


def test_the_functions_take_the_setting_only():
    """Issue 52: one form -- every public function takes a ModelMixSetting; the six loose keywords are gone."""
    s = ModelMixSetting(**FIELDS)
    kw = dict(steps=3400, delta=1e-5, conversion="mironov")
    assert round(mm.epsilon(s, **kw), 3) == 8.0  # the authors' CIFAR-10 setting (module docstring)
    phases = [(1700, 0.15), (1700, 0.15)]
    assert mm.schedule_epsilon(phases, s, delta=1e-5) == pytest.approx(mm.epsilon(s, steps=3400, delta=1e-5), rel=1e-12)
    for call in (
        lambda: mm.epsilon(s, steps=10, delta=1e-5, tau=0.1),
        lambda: mm.epsilon(steps=10, delta=1e-5, **FIELDS),
        lambda: mm.schedule_epsilon(phases, delta=1e-5, n=1000, batch_size=10, noise_multiplier=1.0),
    ):
        with pytest.raises(TypeError):
            call()
    for bad in ({"n": 1000}, None, FIELDS):
        with pytest.raises(ValueError, match="setting must be a ModelMixSetting"):
            mm.epsilon(bad, steps=10, delta=1e-5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="setting"):
        mm.per_step_rdp({"n": 1000})  # type: ignore[arg-type]
