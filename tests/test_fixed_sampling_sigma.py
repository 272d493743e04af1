"""Fixed-size batches: σ means noise std σ·C, as everywhere in DP-SGD (issue 26 §1).

The reference is dp_accounting's RDP accountant with ``SampledWithoutReplacementDpEvent`` (replace-one
neighbours) around a Gaussian at z = σ/2: noise std σ·C against the replace-one sensitivity 2C.  Before the fix
the library read σ as the noise relative to 2C, i.e. z = σ, and reported ε 2–7× too small with the label
"rigorous" (the probe values below).
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import rdp

from dpcore.accounting import events, run_record
from dpcore.accounting.dpsgd import dpsgd_epsilon, dpsgd_noise_multiplier
from dpcore.accounting.events import effective_noise_multiplier
from dpcore.accounting.rdp import RDP_ORDERS, rdp_curve
from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.run_record import NOISE_FACTOR, RunRecord
from dpcore.cli import main
from dpcore.training import config


def _reference(n: int, b: int, z: float, steps: int) -> rdp.RdpAccountant:
    """dp_accounting: T fixed-size (without replacement) steps of a Gaussian with multiplier z, replace-one."""
    gaussian = dp_accounting.GaussianDpEvent(z)
    event = gaussian if b == n else dp_accounting.SampledWithoutReplacementDpEvent(n, b, gaussian)
    accountant = rdp.RdpAccountant(
        orders=list(RDP_ORDERS), neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
    return accountant


def reference_epsilon(n: int, b: int, sigma: float, steps: int, delta: float) -> float:
    """ε of DP-SGD with noise std σ·C and fixed-size batches: the Gaussian at z = σ/2 (sensitivity 2C)."""
    return float(_reference(n, b, sigma / 2, steps).get_epsilon(delta))


# (n, b, σ, T, δ, the old (wrong) value where the probe gave one)
GRID = [
    (60_000, 256, 1.0, 2_000, 1e-5, 2.01),  # probe: ours 2.01, dp_accounting 14.10
    (60_000, 600, 4.0, 10_000, 1e-5, 2.22),  # probe: ours 2.22, dp_accounting 5.14
    (1_000, 10, 0.8, 300, 1e-6, None),
    (50_000, 512, 1.5, 1_000, 1e-5, None),
    (500, 500, 3.0, 40, 1e-5, None),  # full batch: no subsampling, the Gaussian at σ/2 under replace-one
]


@pytest.mark.parametrize("n,b,sigma,steps,delta,old", GRID)
def test_dpsgd_epsilon_matches_dp_accounting_without_replacement(n, b, sigma, steps, delta, old):
    ours = dpsgd_epsilon(sigma, sample_rate=b / n, steps=steps, delta=delta, method="rdp", sampling="fixed",
                         dataset_size=n)  # fmt: skip
    expected = reference_epsilon(n, b, sigma, steps, delta)
    assert ours == pytest.approx(expected, rel=1e-9) and ours.rigorous
    if old is not None:
        assert ours > 2 * old  # the value the probe reported is far below the truth


def test_probe_values():
    assert reference_epsilon(60_000, 256, 1.0, 2_000, 1e-5) == pytest.approx(14.0984, abs=1e-3)
    assert reference_epsilon(60_000, 600, 4.0, 10_000, 1e-5) == pytest.approx(5.1368, abs=1e-3)
    # the σ the old calibration returned for ε = 2 at n = 60,000, b = 256, T = 2,000
    assert reference_epsilon(60_000, 256, 1.007, 2_000, 1e-5) == pytest.approx(13.89, abs=0.01)


def test_mironov_conversion_of_the_same_curve():
    n, b, sigma, steps, delta = 1_000, 10, 0.8, 300, 1e-6
    ours = dpsgd_epsilon(sigma, sample_rate=b / n, steps=steps, delta=delta, method="rdp-mironov",
                         sampling="fixed", dataset_size=n)  # fmt: skip
    curve = np.asarray(_reference(n, b, sigma / 2, steps)._rdp, dtype=float)
    orders = np.asarray(RDP_ORDERS)
    assert ours == pytest.approx(float(np.min(curve + math.log(1 / delta) / (orders - 1))), rel=1e-9)


def test_replace_one_convention_is_the_papers_noise():
    # noise_convention="replace_one": noise std 2σC, so the Gaussian's multiplier is σ itself
    n, b, sigma, steps = 1_000, 10, 0.8, 300
    ours = dpsgd_epsilon(sigma, sample_rate=b / n, steps=steps, delta=1e-6, method="rdp", sampling="fixed",
                         dataset_size=n, noise_convention="replace_one")  # fmt: skip
    assert ours == pytest.approx(float(_reference(n, b, sigma, steps).get_epsilon(1e-6)), rel=1e-9)
    assert "replace_one" in ours.description


def test_rdp_curve_fixed_uses_the_same_sigma():
    one = rdp_curve(1.2, steps=7, sampling="fixed", dataset_size=1_000, batch_size=20, orders=[2.0, 5.0, 12.0])
    acc = rdp.RdpAccountant(orders=[2.0, 5.0, 12.0], neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.SampledWithoutReplacementDpEvent(1_000, 20, dp_accounting.GaussianDpEvent(0.6)), 7)
    assert one == pytest.approx(np.asarray(acc._rdp), rel=1e-12)


def test_effective_multiplier():
    assert effective_noise_multiplier(2.0, "poisson") == 2.0
    assert effective_noise_multiplier(2.0, "fixed") == 1.0
    assert effective_noise_multiplier(2.0, "shuffle") == 1.0
    assert effective_noise_multiplier(2.0, "fixed", "replace_one") == 2.0
    assert effective_noise_multiplier(2.0, "poisson", "replace_one") == 4.0
    # one vocabulary: the record's and the trainer's conventions are the events module's
    assert (
        events.NOISE_FACTOR == run_record.NOISE_FACTOR == config.NOISE_FACTOR == {"standard": 1.0, "replace_one": 2.0}
    )
    assert events.NOISE_CONVENTIONS == run_record.NOISE_CONVENTIONS == config.NOISE_CONVENTIONS
    with pytest.raises(ValueError, match="noise_convention"):
        effective_noise_multiplier(2.0, "fixed", "paper")


def test_calibration_is_feasible_and_tight_against_dp_accounting():
    # probe: ε = 2 at n = 60,000, b = 256, T = 2,000 gave σ = 1.007, whose true ε is 13.9
    # (each evaluation of the without-replacement RDP takes about a second: a coarse rtol keeps this test short)
    n, b, steps, delta, rtol = 60_000, 256, 2_000, 1e-5, 5e-2
    sigma = dpsgd_noise_multiplier(2.0, sample_rate=b / n, steps=steps, delta=delta, method="rdp", sampling="fixed",
                                   dataset_size=n, rtol=rtol)  # fmt: skip
    assert reference_epsilon(n, b, sigma, steps, delta) <= 2.0
    assert reference_epsilon(n, b, sigma * (1 - 2 * rtol), steps, delta) > 2.0


@pytest.mark.parametrize("convention", ["standard", "replace_one"])
@pytest.mark.parametrize("method", ["rdp", "gdp"])
def test_function_and_record_agree(convention, method):
    n, b, sigma, steps, clip = 1_000, 20, 1.3, 150, 3.0
    record = RunRecord(private=True, sampling="fixed", dataset_size=n, batch_size=b, steps=steps,
                       clipping="individual", clip_norm=clip, noise_multiplier=sigma, noise_convention=convention,
                       noise_std=NOISE_FACTOR[convention] * clip * sigma)  # fmt: skip
    from_record = epsilon_for_record(record, 1e-5, method=method)
    direct = dpsgd_epsilon(sigma, sample_rate=b / n, steps=steps, delta=1e-5, method=method, sampling="fixed",
                           dataset_size=n, noise_convention=convention)  # fmt: skip
    assert from_record == pytest.approx(direct, rel=1e-12)
    assert from_record.rigorous == direct.rigorous == (method != "gdp")


def _cli_value(out: str, key: str) -> float:
    return float(out.split(key)[1].split()[0])


@pytest.mark.parametrize("n,b,sigma,steps,delta", [(60_000, 256, 1.0, 2_000, 1e-5), (1_000, 10, 0.8, 300, 1e-6)])
def test_cli_epsilon_matches_dp_accounting(n, b, sigma, steps, delta, capsys):
    argv = ["epsilon", "--noise-multiplier", str(sigma), "--batch-size", str(b), "--dataset-size", str(n),
            "--steps", str(steps), "--delta", str(delta), "--sampling", "fixed", "--method", "rdp"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    printed, expected = _cli_value(out, "ε ="), reference_epsilon(n, b, sigma, steps, delta)
    assert expected <= printed <= expected * (1 + 1e-5)  # rounded up, at 6 significant digits
    assert "replace-one" in out and "σ/2" in out


def test_cli_calibrate_matches_dp_accounting(capsys):
    n, b, steps, delta = 60_000, 256, 2_000, 1e-5
    argv = ["calibrate", "--epsilon", "2", "--batch-size", str(b), "--dataset-size", str(n), "--steps", str(steps),
            "--delta", str(delta), "--sampling", "fixed", "--rtol", "0.1"]  # fmt: skip
    assert main(argv) == 0
    sigma = _cli_value(capsys.readouterr().out, "σ =")
    assert reference_epsilon(n, b, sigma, steps, delta) <= 2.0
    assert sigma > 1.9  # was 1.00684
