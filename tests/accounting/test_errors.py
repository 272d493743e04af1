"""Errors a person can act on (issue 43): each a ValueError naming the parameter.

How fast each refusal comes (the goal: within a second) is measured in ``benchmarks/latency.py``, not asserted here:
a test must not depend on how busy the machine is (issue 54).  The module's timeout is a hang guard only."""

import numpy as np
import pytest

from dpcore.accounting import dpsgd, modelmix, rdp
from dpcore.accounting.mixture import GaussianMixture

pytestmark = pytest.mark.timeout(120)  # a hang guard: each refusal takes well under a second (benchmarks/latency.py)


def _fast(fn, match):
    with pytest.raises(ValueError, match=match) as info:
        fn()
    return str(info.value)


@pytest.mark.parametrize("orders", [[1e12], [2.0, rdp.MAX_ORDER + 1]])
def test_orders_beyond_the_supported_range_are_refused(orders):
    msg = _fast(lambda: rdp.subsampled_gaussian_rdp(orders, noise_multiplier=1.0, sample_rate=0.01), "orders")
    assert f"{rdp.MAX_ORDER:g}" in msg
    assert rdp.subsampled_gaussian_rdp([rdp.MAX_ORDER], noise_multiplier=1.0, sample_rate=0.01)[0] > 0


@pytest.mark.parametrize("sigma", [None, "abc", 1 + 2j, [], np.array([1.0, 2.0]), 0.0, -1.0, np.nan])
def test_binomial_mixture_validates_sigma(sigma):
    _fast(lambda: GaussianMixture.binomial(10, 0.1, sigma), "sigma")


def test_an_unreachable_modelmix_target_says_which_and_why():
    msg = _fast(
        lambda: modelmix.noise_multiplier_for_epsilon(1e308, n=50_000, batch_size=1000, steps=100, delta=1e-5),
        "target_epsilon",
    )
    assert "1e+308" in msg and "smallest noise multiplier" in msg and "noise_multiplier=0.02" not in msg


def test_a_modelmix_target_below_the_evaluable_noise_names_the_target_not_a_trial_value():
    """τ = 1: the quadrature cannot evaluate z = 0.03125 here; the message blamed that z, never passed."""
    run = dict(n=50_000, batch_size=256, steps=1000, delta=1e-5, tau=1.0)
    msg = _fast(lambda: modelmix.noise_multiplier_for_epsilon(1e308, **run), r"^target_epsilon=1e\+308 cannot be")
    assert not msg.startswith("noise_multiplier") and "Give a target_epsilon below" in msg
    assert "smaller envelope (tau, clip, batch_size) or fewer orders" in msg
    floor = float(msg.split("ε = ")[1].split()[0])  # ε at the smallest evaluable z: a target below it calibrates
    sigma = modelmix.noise_multiplier_for_epsilon(floor * 0.9, rtol=1e-2, **run)
    setting = modelmix.ModelMixSetting(n=50_000, batch_size=256, noise_multiplier=sigma, clip=1.0, tau=1.0)
    assert modelmix.epsilon(setting, steps=1000, delta=1e-5) <= floor * 0.9


@pytest.mark.parametrize("tau", [0.0, 1.0])
def test_a_modelmix_target_below_the_accountants_floor_says_what_to_change(tau):
    run = dict(n=50_000, batch_size=256, steps=1000, delta=1e-5, tau=tau)
    msg = _fast(lambda: modelmix.noise_multiplier_for_epsilon(1e-300, **run), "target_epsilon")
    assert "1e-300" in msg and "give a target_epsilon of at least" in msg and "fewer steps" in msg
    assert "orders: the default orders" in msg and ", orders, " not in msg  # the orders said, not just named


def test_fixed_sampling_with_the_default_method_picks_the_tightest_rigorous_one():
    eps = dpsgd.dpsgd_epsilon(1.0, sample_rate=0.01, steps=100, delta=1e-5, sampling="fixed", dataset_size=1000)
    explicit = dpsgd.dpsgd_epsilon(1.0, sample_rate=0.01, steps=100, delta=1e-5, sampling="fixed",
                                   dataset_size=1000, method="rdp")  # fmt: skip
    assert eps == explicit and eps.method == "rdp" and eps.rigorous
    assert "default for sampling='fixed': rdp" in eps.description
    assert dpsgd.default_method("poisson") == "pld" and dpsgd.default_method("fixed") == "rdp"
    sigma = dpsgd.dpsgd_noise_multiplier(2.0, sample_rate=0.01, steps=100, delta=1e-5, sampling="fixed",
                                         dataset_size=1000, rtol=1e-2)  # fmt: skip
    assert dpsgd.dpsgd_epsilon(sigma, sample_rate=0.01, steps=100, delta=1e-5, sampling="fixed",
                               dataset_size=1000) <= 2.0  # fmt: skip
    with pytest.raises(ValueError, match="shuffle"):
        dpsgd.default_method("shuffle")
