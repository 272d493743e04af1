"""Issue 52: one door into accounting.

Every DP-SGD ε goes through the registry (``epsilon_for_record``): ``dpsgd_epsilon``, its calibration and the
command line return exactly the registry's value for the same record; ``"pld"`` is one implementation
(:mod:`dpcore.accounting.pld`, schedules included); a record gives its dp_accounting event and the registry takes
it back; the package imports without torch, dp_accounting or the numerics; the returned ε says what it was computed
for (T, q, σ, the neighbouring relation).
"""

from __future__ import annotations

import argparse
import inspect
import os
import subprocess
import sys
from pathlib import Path

import dp_accounting
import pytest
from dp_accounting import pld as dpa_pld

import dpcore
from dpcore import cli
from dpcore.accounting import pld, records, registry
from dpcore.accounting.dpsgd import dpsgd_epsilon, dpsgd_noise_multiplier, dpsgd_record
from dpcore.accounting.records import epsilon_for_record, noise_multiplier_for_record
from dpcore.accounting.run_record import RunRecord

ROOT = Path(__file__).resolve().parents[2]
N = 60_000
GRID = [
    (sigma, q, steps, sampling, method)
    for sigma in (0.8, 1.1, 4.0)
    for q, steps in ((256 / N, 700), (0.01, 150))
    for sampling, methods in (
        ("poisson", ("pld", "rdp", "rdp-mironov", "gdp")),
        ("fixed", ("rdp", "rdp-mironov", "gdp")),
    )
    for method in methods
]


def _cli_args(sigma: float, q: float, steps: int, sampling: str) -> argparse.Namespace:
    return argparse.Namespace(noise_multiplier=sigma, sample_rate=q, batch_size=None, dataset_size=N, steps=steps,
                              epochs=None, delta=1e-5, sampling=sampling, noise_convention="standard",
                              method=None)  # fmt: skip


@pytest.mark.parametrize("sigma,q,steps,sampling,method", GRID)
def test_dpsgd_epsilon_and_the_cli_are_the_registrys_value(sigma, q, steps, sampling, method):
    record = dpsgd_record(sigma, sample_rate=q, steps=steps, sampling=sampling, dataset_size=N)
    door = epsilon_for_record(record, 1e-5, method=method)
    ours = dpsgd_epsilon(
        sigma, sample_rate=q, steps=steps, delta=1e-5, method=method, sampling=sampling, dataset_size=N
    )
    args = _cli_args(sigma, q, steps, sampling)
    cli._resolve_rate(args)
    printed = cli._epsilon(args, sigma, steps, method)
    assert float(ours) == float(door) == float(printed)
    assert ours.rigorous == door.rigorous == (method != "gdp")
    for text in (f"T = {steps} steps", f"q = {q:.6g}", f"σ = {sigma:g}", "neighbours"):
        assert text in ours.description and text in door.description, (text, ours.description)


@pytest.mark.parametrize("method", ["pld", "rdp"])
def test_calibration_goes_through_the_registry(method):
    record = dpsgd_record(1.0, sample_rate=256 / N, steps=700)
    sigma = dpsgd_noise_multiplier(2.0, sample_rate=256 / N, steps=700, delta=1e-5, method=method)
    assert sigma == noise_multiplier_for_record(record, 2.0, 1e-5, method=method)
    at = record.replace(noise_multiplier=sigma, noise_std=sigma)
    assert epsilon_for_record(at, 1e-5, method=method) <= 2.0
    below = record.replace(noise_multiplier=sigma * (1 - 2e-3), noise_std=sigma * (1 - 2e-3))
    assert epsilon_for_record(below, 1e-5, method=method) > 2.0


def test_pld_is_one_implementation_schedules_included():
    """The registry's Poisson accountant runs dpcore.accounting.pld for constant batches and schedules (no
    dp_accounting inside); a schedule agrees with dp_accounting's pessimistic PLD and is never below it."""
    src = inspect.getsource(registry)
    assert "PLDAccountant" not in src and "import dp_accounting" not in src
    sigma, runs = 1.1, ((256, 300), (512, 200), (128, 100))
    schedule = tuple(b for b, c in runs for _ in range(c))
    rec = RunRecord(private=True, sampling="poisson", dataset_size=N, batch_size=schedule, steps=len(schedule),
                    clipping="individual", clip_norm=1.0, noise_multiplier=sigma, noise_std=sigma)  # fmt: skip
    ours = epsilon_for_record(rec, 1e-5, method="pld")
    assert float(ours) == pld.pld_epsilon_runs(sigma, runs=[(b / N, c) for b, c in runs], delta=1e-5)
    acc = dpa_pld.PLDAccountant()
    acc.compose(rec.to_event())
    reference = acc.get_epsilon(1e-5)
    assert reference * (1 - 1e-9) <= ours <= reference * (1 + 1e-4)
    # one run is pld_epsilon itself, exactly
    assert pld.pld_epsilon_runs(sigma, runs=[(0.01, 200)], delta=1e-5) == pld.pld_epsilon(
        sigma, sample_rate=0.01, steps=200, delta=1e-5
    )


def test_a_record_gives_its_event_and_the_registry_takes_it_back():
    poisson = dpsgd_record(1.1, sample_rate=256 / N, steps=500)
    fixed = dpsgd_record(1.1, sample_rate=0.01, steps=100, sampling="fixed", dataset_size=N)
    for rec, method in ((poisson, "pld"), (poisson, "rdp"), (fixed, "rdp")):
        event = rec.to_event()
        assert isinstance(event, dp_accounting.DpEvent)
        assert epsilon_for_record(event, 1e-5, method=method) == epsilon_for_record(rec, 1e-5, method=method)
    by_hand = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(4.0)), 10_000
    )
    assert round(epsilon_for_record(by_hand, 1e-5, method="rdp-mironov"), 3) == 1.259  # Abadi et al. 2016
    assert epsilon_for_record(dp_accounting.NonPrivateDpEvent(), 1e-5) == float("inf")
    with pytest.raises(ValueError, match="event must be"):
        epsilon_for_record(dp_accounting.LaplaceDpEvent(1.0), 1e-5)
    shuffled = RunRecord(private=True, sampling="shuffle", dataset_size=100, batch_size=10, steps=10,
                         clipping="individual", clip_norm=1.0, noise_multiplier=1.0, noise_std=1.0)  # fmt: skip
    with pytest.raises(ValueError, match="no dp_accounting event"):
        shuffled.to_event()


def test_public_names_are_importable_from_dpcore():
    from dpcore import RunRecord as R
    from dpcore import dpsgd_epsilon as e
    from dpcore import epsilon_for_record as f

    assert (e, f, R) == (dpsgd_epsilon, records.epsilon_for_record, RunRecord)
    assert set(dpcore.__all__) <= set(dir(dpcore))
    with pytest.raises(AttributeError):
        dpcore.no_such_name  # noqa: B018


def test_import_loads_no_torch_no_dp_accounting_no_numerics():
    code = (
        "import sys, dpcore, dpcore.accounting\n"
        "print(sorted(m for m in ('torch', 'dp_accounting', 'scipy', 'numpy') if m in sys.modules))\n"
        "from dpcore import dpsgd_epsilon\n"
        "print(sorted(m for m in ('torch', 'dp_accounting') if m in sys.modules))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert out.stdout.split() == ["[]", "[]"]


def test_no_module_outside_accounting_picks_an_accountant_by_name():
    """Accountants are chosen by the registry: nothing outside dpcore/accounting/ names a registry entry or walks
    the registry itself (the papers' independent dp_accounting checks are references, not accountants)."""
    offenders = []
    for path in (ROOT / "dpcore").rglob("*.py"):
        if path.relative_to(ROOT / "dpcore").parts[0] == "accounting":
            continue
        text = path.read_text(encoding="utf-8")
        if "accountant_named(" in text or "REGISTRY" in text and "dpcore.accounting" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
