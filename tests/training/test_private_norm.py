"""Private data normalisation (Tramèr & Boneh 2021; ModelMix §5.1): the sensitivity of its releases, their noise
scale, its ε alone and composed with training, against dp_accounting (an independent implementation) and the exact
Gaussian (GDP) formula; the frozen standardisation layer of the ScatterNet CNN."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
import torch
from dp_accounting import pld as dpa_pld
from dp_accounting import rdp as dpa_rdp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from dpcore.accounting.rdp import RDP_ORDERS, rdp_to_epsilon
from dpcore.accounting.records import epsilon_for_record
from dpcore.models import FrozenStandardize, ScatterCNN, count_parameters
from dpcore.training import private_norm as pn
from dpcore.training.modelmix import ModelMixConfig

DELTA = 1e-5


def _released_sums(features: torch.Tensor, clip: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The two sums the mechanism perturbs (clip both moment vectors to ``clip``), without noise."""
    m, s = pn.channel_moments(features)
    return pn.clip_rows(m, clip).sum(0), pn.clip_rows(s, clip).sum(0)


# ---------------------------------------------------------------------------------------------- sensitivity
@settings(max_examples=30, deadline=2000)
@given(
    n=st.integers(1, 12), k=st.integers(1, 6), scale=st.floats(0.01, 100.0), clip=st.floats(0.01, 10.0),
    seed=st.integers(0, 2**31 - 1),
)  # fmt: skip
def test_add_remove_one_example_moves_each_sum_by_at_most_the_clip(n, k, scale, clip, seed):
    rng = np.random.default_rng(seed)
    data = torch.from_numpy(rng.normal(scale=scale, size=(n + 1, k, 3, 3)))
    d, neighbour = data[:n], data  # D' = D plus one example
    for a, b in zip(_released_sums(d, clip), _released_sums(neighbour, clip), strict=True):
        assert float((a - b).norm()) <= clip * (1 + 1e-9)


def test_the_sensitivity_bound_is_attained():
    d = torch.rand(20, 4, 2, 2)
    outlier = torch.full((1, 4, 2, 2), 1e3)  # its moment vectors have norms far above the clip
    for a, b in zip(_released_sums(d, 0.5), _released_sums(torch.cat([d, outlier]), 0.5), strict=True):
        assert float((a - b).norm()) == pytest.approx(0.5, rel=1e-12)


def test_clip_rows_bounds_norms_and_keeps_small_rows():
    rows = torch.tensor([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]], dtype=torch.float64)
    out = pn.clip_rows(rows, 1.0)
    torch.testing.assert_close(out, torch.tensor([[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]], dtype=torch.float64))
    assert torch.equal(pn.clip_rows(rows, 0.0), torch.zeros_like(rows))
    with pytest.raises(ValueError, match="clip"):
        pn.clip_rows(rows, -1.0)


def test_channel_moments_are_spatial_means_of_x_and_x_squared():
    x = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(2, 3, 2, 2)
    m, s = pn.channel_moments(x)
    torch.testing.assert_close(m, x.double().flatten(2).mean(-1))
    torch.testing.assert_close(s, x.double().flatten(2).square().mean(-1))
    with pytest.raises(ValueError, match="features"):
        pn.channel_moments(torch.zeros(5))
    with pytest.raises(ValueError, match="finite"):
        pn.channel_moments(torch.tensor([[[math.inf]]]))


def test_channel_moments_are_reused_for_the_same_unmodified_tensor_only(monkeypatch):
    calls = []
    inner = pn._channel_moments
    monkeypatch.setattr(pn, "_channel_moments", lambda f: calls.append(1) or inner(f))
    x = torch.rand(6, 3, 2, 2, generator=torch.Generator().manual_seed(0))
    m1, s1 = pn.channel_moments(x)
    m1.zero_()  # a caller changing its copy never changes a later answer
    m2, s2 = pn.channel_moments(x)
    assert len(calls) == 1 and torch.equal(m2, x.double().flatten(2).mean(-1)) and torch.equal(s1, s2)
    x.mul_(2.0)  # modified in place: computed again, with the new values
    m3, _ = pn.channel_moments(x)
    assert len(calls) == 2 and torch.equal(m3, x.double().flatten(2).mean(-1))
    pn.channel_moments(x.clone())  # an equal but different tensor: computed again
    assert len(calls) == 3


# ---------------------------------------------------------------------------------------------- noise scale
def test_noise_has_std_sigma_times_clip_on_the_sum():
    n, k, sigma, c_m, c_s = 50, 400, 3.0, 0.7, 1.3
    feats = torch.rand(n, k, 1, 1, generator=torch.Generator().manual_seed(0))
    m, s = pn.channel_moments(feats)
    exact_m, exact_s = pn.clip_rows(m, c_m).sum(0) / n, pn.clip_rows(s, c_s).sum(0) / n
    z_m, z_s = [], []
    for seed in range(25):
        out = pn.private_channel_statistics(feats, noise_multiplier=sigma, clip_mean=c_m, clip_second=c_s,
                                            generator=torch.Generator().manual_seed(seed))  # fmt: skip
        z_m.append((out.mean.double() - exact_m) * n / (sigma * c_m))
        z_s.append((out.second_moment.double() - exact_s) * n / (sigma * c_s))
        torch.testing.assert_close(out.var, (out.second_moment - out.mean.square()).clamp_min(0.0))
    for z in (torch.cat(z_m), torch.cat(z_s)):  # 10,000 draws each: N(0, 1)
        assert abs(float(z.mean())) < 0.05 and float(z.std()) == pytest.approx(1.0, abs=0.04)
    again = pn.private_channel_statistics(feats, noise_multiplier=sigma, clip_mean=c_m, clip_second=c_s,
                                          generator=torch.Generator().manual_seed(0))  # fmt: skip
    first = pn.private_channel_statistics(feats, noise_multiplier=sigma, clip_mean=c_m, clip_second=c_s,
                                          generator=torch.Generator().manual_seed(0))  # fmt: skip
    assert torch.equal(again.mean, first.mean) and torch.equal(again.var, first.var)


def test_record_describes_the_releases_and_the_median_rule_is_flagged():
    feats = torch.rand(40, 3, 2, 2, generator=torch.Generator().manual_seed(1))
    out = pn.private_channel_statistics(feats, noise_multiplier=8.0, generator=torch.Generator().manual_seed(0))
    rec = out.record
    c_m, c_s = pn.median_thresholds(feats)
    assert [(r.name, r.dimension, r.divisor) for r in rec.releases] == [("mean", 3, 40), ("second_moment", 3, 40)]
    assert [r.clip for r in rec.releases] == [c_m, c_s]
    assert [r.noise_std for r in rec.releases] == pytest.approx([8 * c_m, 8 * c_s])
    assert rec.threshold_rule == "median" and not rec.thresholds_private and "not accounted" in rec.caveat
    assert (out.var >= 0).all() and out.mean.dtype == torch.float32
    back = pn.NormalizationRecord.from_dict(rec.to_dict())
    assert back == rec
    assert pn.NormalizationRecord.planned(8.0, 40).accounting_view() == rec.accounting_view()
    given_rule = pn.private_channel_statistics(feats, noise_multiplier=8.0, clip_mean=1.0, clip_second=1.0).record
    assert given_rule.thresholds_private and given_rule.caveat == ""
    with pytest.raises(ValueError, match="unknown fields"):
        pn.NormalizationRecord.from_dict({**rec.to_dict(), "epsilon": 1.0})
    with pytest.raises(ValueError, match="noise_std"):
        pn.GaussianRelease("mean", 3, 1.0, 8.0, 7.0, 40)
    with pytest.raises(ValueError, match="thresholds_private"):
        pn.NormalizationRecord(rec.releases, 40, "median", True)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(noise_multiplier=0.0), "noise_multiplier"),
        (dict(noise_multiplier=1.0, clip_mean=1.0), "clip_mean"),
        (dict(noise_multiplier=1.0, clip_mean=-1.0, clip_second=1.0), "clip_mean"),
        (dict(noise_multiplier=1.0, generator="seed"), "generator"),
    ],
)
def test_mechanism_inputs_are_validated(kwargs, name):
    with pytest.raises(ValueError, match=name):
        pn.private_channel_statistics(torch.rand(5, 2, 2, 2), **kwargs)


def test_object_releases_once():
    obj = pn.PrivateNormalization(8.0)
    with pytest.raises(ValueError, match="fit"):
        obj.record  # noqa: B018
    obj.fit(torch.rand(30, 2, 2, 2))
    assert obj.epsilon(DELTA) == pytest.approx(0.6948, abs=1e-4)
    with pytest.raises(ValueError, match="already"):
        obj.fit(torch.rand(30, 2, 2, 2))


# ---------------------------------------------------------------------------------------------- ε
def _gaussian_epsilon(mu: float, delta: float) -> float:
    """ε of μ-GDP at δ from Dong, Roth, Su 2022, Cor. 2.13 (scipy, independent of dpcore)."""
    return brentq(lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta, 0.0, 50.0)


def test_normalization_epsilon_is_the_papers_0695_and_matches_dp_accounting():
    rec = pn.NormalizationRecord.planned(8.0, 50_000)
    ours = pn.normalization_epsilon(rec, DELTA)
    assert ours == pytest.approx(0.695, abs=5e-4)  # ModelMix §5.1: "we spend eps=0.695"
    acc = dpa_rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(dp_accounting.GaussianDpEvent(8.0), 2)
    assert ours == pytest.approx(acc.get_epsilon(DELTA), rel=1e-9)
    exact = pn.normalization_epsilon(rec, DELTA, method="gdp")
    assert exact == pytest.approx(_gaussian_epsilon(math.sqrt(2) / 8.0, DELTA), rel=1e-6)
    pld = dpa_pld.PLDAccountant()
    pld.compose(dp_accounting.GaussianDpEvent(8.0), 2)
    assert exact == pytest.approx(pld.get_epsilon(DELTA), abs=2e-3)
    assert exact < ours  # RDP is an upper bound


def _dpsgd_record(steps: int = 700, z: float = 16.5) -> dict:
    return {"private": True, "sampling": "poisson", "clipping": "individual", "clip_norm": 0.1,
            "noise_multiplier": z, "noise_convention": "standard", "noise_std": z * 0.1, "dataset_size": 50_000,
            "batch_size": 8192, "steps": steps, "planned_steps": steps}  # fmt: skip


def test_composition_with_dpsgd_equals_dp_accountings_rdp_of_the_three_releases():
    rec = _dpsgd_record()
    out = pn.composed_epsilon(rec, pn.NormalizationRecord.planned(8.0, 50_000), DELTA)
    acc = dpa_rdp.RdpAccountant(orders=list(pn.COMPOSITION_ORDERS))
    step = dp_accounting.PoissonSampledDpEvent(8192 / 50_000, dp_accounting.GaussianDpEvent(16.5))
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(8.0), dp_accounting.GaussianDpEvent(8.0),
                                               dp_accounting.SelfComposedDpEvent(step, 700)]))  # fmt: skip
    assert out.total == pytest.approx(acc.get_epsilon(DELTA), rel=1e-6)
    assert out.training < out.total and out.normalization < out.total
    assert out.total <= out.training + out.normalization + 1e-12  # never worse than adding the two ε
    assert "median" in out.description and "Gaussian normalisation releases" in out.description


def test_composition_with_modelmix_adds_the_gaussian_rdp_to_its_accountant():
    rec = {**_dpsgd_record(steps=600, z=2.0), "clip_norm": 1.0, "noise_std": 2.0, "clip_norm_type": "l2_linf",
           "linf_p": 100, "modelmix": ModelMixConfig(tau_ratio=[(0.5, 0.05), (1.0, 0.025)]).describe(600)}  # fmt: skip
    planned = pn.NormalizationRecord.planned(8.0, 50_000)
    out = pn.composed_epsilon(rec, planned, DELTA)
    assert out.training == pytest.approx(epsilon_for_record(rec, DELTA), rel=1e-9)  # the run's own accountant
    assert out.training < out.total
    orders = np.arange(2.0, 65.0)  # ModelMix's integer orders for p > 1
    assert pn.normalization_rdp(planned, orders) == pytest.approx(orders / 64.0)  # 2 · α/(2σ²), σ = 8
    negligible = pn.composed_epsilon(rec, pn.NormalizationRecord.planned(1e6, 50_000), DELTA)
    assert negligible.total == pytest.approx(out.training, rel=1e-6)
    assert rdp_to_epsilon(orders, orders / 64.0, DELTA) == pytest.approx(out.normalization, rel=1e-9)


def test_composition_refuses_what_it_does_not_cover():
    planned = pn.NormalizationRecord.planned(8.0, 50_000)
    shuffled = {**_dpsgd_record(), "sampling": "shuffle", "noise_convention": "replace_one", "noise_std": 3.3}
    with pytest.raises(ValueError, match="add/remove"):
        pn.composed_epsilon(shuffled, planned, DELTA)
    with pytest.raises(ValueError, match="same data set"):
        pn.composed_epsilon(_dpsgd_record(), pn.NormalizationRecord.planned(8.0, 60_000), DELTA)
    nonprivate = {**_dpsgd_record(z=0.0), "noise_std": 0.0}
    assert math.isinf(pn.composed_epsilon(nonprivate, planned, DELTA).total)
    with pytest.raises(ValueError, match="delta"):
        pn.composed_epsilon(_dpsgd_record(), planned, 0.0)


# ---------------------------------------------------------------------------------------------- the model
def test_frozen_standardize_follows_tramer_boneh_and_refuses_to_run_unset():
    layer = FrozenStandardize(3)
    x = torch.randn(4, 3, 2, 2)
    with pytest.raises(ValueError, match="set_statistics"):
        layer(x)
    mean, var = torch.tensor([0.5, -1.0, 2.0]), torch.tensor([4.0, 0.0, 0.25])
    layer.set_statistics(mean, var)
    out = layer(x)
    torch.testing.assert_close(out[:, 0], (x[:, 0] - 0.5) / math.sqrt(4.0 + 1e-5))
    assert torch.equal(out[:, 1], torch.zeros_like(out[:, 1]))  # zero variance: channel ignored
    with pytest.raises(ValueError, match="var"):
        layer.set_statistics(mean, -var - 1)
    with pytest.raises(ValueError, match="mean"):
        layer.set_statistics(torch.zeros(2), var)


def test_scatter_cnn_norm_option_keeps_the_parameters():
    gn, bn = ScatterCNN("fmnist"), ScatterCNN("fmnist", norm="standardize")
    assert count_parameters(gn) == count_parameters(bn) == 33_066
    with pytest.raises(ValueError, match="standardize"):
        gn.set_input_statistics(torch.zeros(81), torch.ones(81))
    bn.set_input_statistics(torch.zeros(81), torch.ones(81))
    assert bn(torch.randn(2, 81, 7, 7)).shape == (2, 10)
    with pytest.raises(ValueError, match="norm"):
        ScatterCNN("fmnist", norm="batchnorm")
