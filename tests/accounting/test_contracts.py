"""Contracts every accountant inherits, and fuzzing of run records.

Contracts (parametrised over the accountants): no steps ⇒ ε = 0; unsupported settings ⇒ a clear
``ValueError``; ε non-increasing in σ and non-decreasing in steps and sampling rate; calibration never
overshoots; NaN or ∞ in any numeric input ⇒ ``ValueError``.

Fuzzing (hypothesis): every invalid :class:`RunRecord` raises ``ValueError``; every valid one gives a finite
ε at least the rigorous reference computed independently (dp_accounting; the closed form G_{√E/σ} for
shuffling).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import dp_accounting
import pytest
from dp_accounting import pld, rdp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.accounting import modelmix
from dpcore.accounting.calibrate import smallest_sigma
from dpcore.accounting.dpsgd import dpsgd_epsilon, dpsgd_noise_multiplier
from dpcore.accounting.gaussian import epsilon_from_mu
from dpcore.accounting.rdp import RDP_ORDERS
from dpcore.accounting.records import epsilon_for_record

DELTA = 1e-5
N = 1000


@dataclass(frozen=True)
class Accountant:
    """ε(σ, q, steps, δ) of one accountant; ``calibrate`` is its own σ-for-ε function when it has one."""

    name: str
    eps: Callable[[float, float, int, float], float]
    calibrate: Callable[[float, float, int, float], float] | None = None


def _dpsgd(method: str, sampling: str = "poisson") -> Accountant:
    extra = {"dataset_size": N} if sampling == "fixed" else {}

    def eps(s, q, t, d):
        return dpsgd_epsilon(s, sample_rate=q, steps=t, delta=d, method=method, sampling=sampling, **extra)

    def cal(target, q, t, d):
        return dpsgd_noise_multiplier(
            target, sample_rate=q, steps=t, delta=d, method=method, sampling=sampling, **extra
        )

    return Accountant(f"dpsgd-{method}-{sampling}", eps, cal)


def _record(sampling: str, clipping: str = "individual", method: str | None = None) -> Accountant:
    convention = "standard" if sampling == "poisson" else "replace_one"
    kappa = 1.0 if convention == "standard" else 2.0

    def eps(s, q, t, d):
        batch = max(1, round(q * N)) if math.isfinite(q) else q * N  # the record refuses a non-integer
        rec = dict(private=True, sampling=sampling, clipping=clipping, clip_norm=1.0, noise_multiplier=s,
                   noise_convention=convention, noise_std=kappa * s, dataset_size=N, batch_size=batch, steps=t,
                   group_size=batch if clipping == "batch" else 1)  # fmt: skip
        return epsilon_for_record(rec, d, method=method)

    return Accountant(f"record-{sampling}-{clipping}-{method}", eps)


def _modelmix() -> Accountant:
    kw = dict(n=N, clip=1.0, tau=0.1)

    def eps(s, q, t, d):
        return modelmix.epsilon(modelmix.ModelMixSetting(batch_size=q * N, noise_multiplier=s, **kw), steps=t, delta=d)

    def cal(target, q, t, d):
        return modelmix.noise_multiplier_for_epsilon(target, batch_size=q * N, steps=t, delta=d, **kw)

    return Accountant("modelmix", eps, cal)


ACCOUNTANTS = [
    _dpsgd("pld"),
    _dpsgd("rdp"),
    _dpsgd("rdp-mironov"),
    _dpsgd("gdp"),
    _dpsgd("rdp", "fixed"),
    _dpsgd("gdp", "fixed"),
    _record("poisson"),  # PLD (the default): slow, so only here
    _record("poisson", "batch", method="rdp"),
    _record("fixed"),
    _record("fixed", method="gdp"),
    _record("shuffle"),
    _modelmix(),
]
IDS = [a.name for a in ACCOUNTANTS]


@pytest.mark.parametrize("acc", ACCOUNTANTS, ids=IDS)
def test_no_steps_is_zero(acc):
    assert acc.eps(1.0, 0.02, 0, DELTA) == 0.0


@pytest.mark.parametrize("acc", ACCOUNTANTS, ids=IDS)
def test_monotone_in_sigma_steps_and_rate(acc):
    by_sigma = [acc.eps(s, 0.02, 50, DELTA) for s in (0.8, 1.2, 2.0)]
    assert all(math.isfinite(e) and e > 0 for e in by_sigma)
    assert by_sigma[0] >= by_sigma[1] >= by_sigma[2]
    by_steps = [acc.eps(1.2, 0.02, t, DELTA) for t in (10, 50, 150)]
    assert by_steps[0] <= by_steps[1] <= by_steps[2]
    by_rate = [acc.eps(1.2, q, 50, DELTA) for q in (0.01, 0.02, 0.05)]
    assert by_rate[0] <= by_rate[1] * (1 + 1e-9) and by_rate[1] <= by_rate[2] * (1 + 1e-9)


@pytest.mark.parametrize("acc", ACCOUNTANTS, ids=IDS)
@pytest.mark.parametrize(
    "bad", [dict(s=math.nan), dict(s=math.inf), dict(q=math.nan), dict(q=math.inf), dict(d=math.nan), dict(d=math.inf)]
)
def test_nan_or_inf_inputs_are_refused(acc, bad):
    args = dict(s=1.0, q=0.02, t=20, d=DELTA) | bad
    with pytest.raises(ValueError):
        acc.eps(args["s"], args["q"], args["t"], args["d"])


@pytest.mark.parametrize("acc", ACCOUNTANTS, ids=IDS)
@pytest.mark.parametrize("steps", [math.inf, math.nan, 2.5, -1])
def test_bad_steps_are_refused(acc, steps):
    with pytest.raises(ValueError):
        acc.eps(1.0, 0.02, steps, DELTA)


@pytest.mark.parametrize("acc", ACCOUNTANTS, ids=IDS)
@pytest.mark.parametrize("target", [1.0])
def test_calibration_never_overshoots(acc, target):
    q, t = 0.02, 50
    if acc.calibrate is not None:
        sigma = acc.calibrate(target, q, t, DELTA)
    else:  # the one calibrator behind every σ-for-ε function
        sigma = smallest_sigma(lambda s: acc.eps(s, q, t, DELTA), target, rtol=1e-3)
    assert acc.eps(sigma, q, t, DELTA) <= target
    assert acc.eps(sigma * 0.99, q, t, DELTA) > target  # and it is within 1 %


def test_unsupported_settings_are_refused():
    with pytest.raises(ValueError, match="shuffle"):
        dpsgd_epsilon(1.0, sample_rate=0.01, steps=10, delta=DELTA, sampling="shuffle")
    with pytest.raises(ValueError, match="fixed"):
        dpsgd_epsilon(1.0, sample_rate=0.01, steps=10, delta=DELTA, method="pld", sampling="fixed")
    rec = dict(private=True, sampling="poisson", clipping="mixed", group_size=5, clip_norm=1.0, noise_multiplier=1.0,
               noise_std=1.0, dataset_size=N, batch_size=10, steps=10)  # fmt: skip
    with pytest.raises(ValueError, match="mixed clipping"):
        epsilon_for_record(rec, DELTA)
    shuffle = dict(rec, sampling="shuffle", clipping="individual", group_size=1)
    with pytest.raises(ValueError, match="method"):
        epsilon_for_record(shuffle, DELTA, method="pld")
    with pytest.raises(ValueError, match="ModelMix"):
        epsilon_for_record(dict(shuffle, modelmix={"phases": [{"steps": 10, "tau_ratio": 0.1}]}), DELTA)


# --------------------------------------------------------------------------- fuzzing RunRecord
def _reference(rec: dict) -> float:
    """An independent rigorous ε of the run (dp_accounting, or G_{√E/σ} for shuffling)."""
    n, b, t = rec["dataset_size"], rec["batch_size"], rec["steps"]
    if rec["sampling"] == "poisson":
        sens = 1.0 if rec["clipping"] == "individual" else 2.0
        sigma = rec["noise_std"] / (sens * rec["clip_norm"])
        g = dp_accounting.GaussianDpEvent(sigma)
        step = g if b == n else dp_accounting.PoissonSampledDpEvent(b / n, g)
        acc = pld.PLDAccountant(value_discretization_interval=1e-4)
        acc.compose(dp_accounting.SelfComposedDpEvent(step, t))
        return float(acc.get_epsilon(DELTA))
    sigma = rec["noise_std"] / (2 * rec["clip_norm"])
    if rec["sampling"] == "fixed":
        acc = rdp.RdpAccountant(
            orders=list(RDP_ORDERS), neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
        )
        g = dp_accounting.GaussianDpEvent(sigma)
        acc.compose(g if b == n else dp_accounting.SampledWithoutReplacementDpEvent(n, b, g), t)
        return float(acc.get_epsilon(DELTA))
    epochs = math.ceil(t / (n // b))
    return epsilon_from_mu(math.sqrt(epochs) / sigma, DELTA)


@st.composite
def valid_records(draw):
    n = draw(st.integers(20, 2000))
    sampling = draw(st.sampled_from(["poisson", "fixed", "shuffle"]))
    clipping = draw(st.sampled_from(["individual", "batch"]))
    b = draw(st.integers(1, max(1, n // 4)))
    convention = draw(st.sampled_from(["standard", "replace_one"]))
    sigma = draw(st.floats(0.7, 5.0))
    clip = draw(st.floats(0.1, 10.0))
    steps = draw(st.integers(1, 60))
    kappa = 1.0 if convention == "standard" else 2.0
    return dict(private=True, sampling=sampling, clipping=clipping, clip_norm=clip, noise_multiplier=sigma,
                noise_convention=convention, noise_std=kappa * clip * sigma, dataset_size=n, batch_size=b,
                steps=steps, group_size=b if clipping == "batch" else 1)  # fmt: skip


@settings(max_examples=25, deadline=None)
@given(valid_records())
def test_fuzz_valid_records_give_finite_epsilon_at_least_the_reference(rec):
    eps = epsilon_for_record(rec, DELTA)
    assert math.isfinite(eps) and eps >= 0
    assert eps >= _reference(rec) * (1 - 1e-6) - 1e-9


_BAD_VALUES = {
    "private": ["True", 1, None, 0.0],
    "sampling": ["uniform", None, 1, "Poisson"],
    "clipping": ["bogus", None, 0, "none"],
    "clip_norm": [-1.0, 0.0, math.nan, "1", True],
    "noise_multiplier": [-1.0, math.nan, math.inf, "1", None],
    "noise_std": [-1.0, math.nan, math.inf, "1", 1e9],
    "noise_convention": ["half", None],
    "dataset_size": [0, -3, 10.0, True, "100", None],
    "batch_size": [0, -1, 10**9, True, 2.5, "10", [], None],
    "steps": [-1, 2.5, math.inf, "100", True, None],
    "group_size": [0, -2, 2.5, "1"],
    "modelmix": [{"phases": []}, {"phases": [{"steps": 1, "tau_ratio": 0.1}]}, "yes", {"tau": 0.1}],
    "data": [None, 3],
}


@settings(max_examples=60, deadline=None)
@given(valid_records(), st.sampled_from(sorted(_BAD_VALUES)), st.data())
def test_fuzz_invalid_records_raise_value_error(rec, field, data):
    bad = data.draw(st.sampled_from(_BAD_VALUES[field]))
    if field == "group_size" and rec["clipping"] == "batch":
        rec["clipping"] = "individual"
    rec = dict(rec, **{field: bad})
    with pytest.raises(ValueError):
        epsilon_for_record(rec, DELTA)
