"""dpcore.accounting.records: each run record gets the matching accountant, or a refusal."""

import math

import pytest
import torch
from torch import nn

from dpcore.accounting import fdp
from dpcore.accounting import gaussian as gdp
from dpcore.accounting.dpsgd import dpsgd_epsilon
from dpcore.accounting.records import SHUFFLE_NOTE, choose_accountant, epsilon_for_record
from dpcore.training import ModelMixConfig, TrainConfig, train


def _record(**kw):
    rec = {
        "private": True,
        "sampling": "poisson",
        "clipping": "individual",
        "clip_norm": 1.0,
        "noise_multiplier": 1.1,
        "noise_convention": "standard",
        "noise_std": 1.1,
        "dataset_size": 60000,
        "batch_size": 256,
        "steps": 2000,
        "group_size": 1,
        "modelmix": None,
        "linf_p": None,
        "clip_norm_type": "l2",
    }
    rec.update(kw)
    return rec


def test_poisson_individual_standard_is_dpsgd():
    rec = _record()
    assert choose_accountant(rec).name == "dpsgd"
    eps = epsilon_for_record(rec, 1e-5)
    assert eps == pytest.approx(dpsgd_epsilon(1.1, sample_rate=256 / 60000, steps=2000, delta=1e-5))
    # Abadi et al. 2016 reference value through a record (σ = 4, q = 0.01, T = 10^4)
    abadi = _record(noise_multiplier=4.0, noise_std=4.0, batch_size=600, steps=10000)
    assert epsilon_for_record(abadi, 1e-5, method="rdp-mironov") == pytest.approx(1.259, abs=5e-4)


def test_noise_convention_and_clipping_set_the_effective_multiplier():
    # paper 003's 2Cσ noise with Poisson individual clipping: sensitivity C, so σ_eff = 2σ
    rep = _record(noise_convention="replace_one", noise_std=2.2)
    assert choose_accountant(rep).noise_multiplier == pytest.approx(2.2)
    # batch clipping under add/remove: the clipped batch mean moves by up to 2C
    bc = _record(clipping="batch", group_size=256, noise_std=2.2, noise_convention="replace_one")
    choice = choose_accountant(bc)
    assert (choice.sensitivity, choice.noise_multiplier) == (2.0, pytest.approx(1.1))
    assert epsilon_for_record(bc, 1e-5) == pytest.approx(epsilon_for_record(_record(), 1e-5))
    assert epsilon_for_record(_record(clipping="batch"), 1e-5) > epsilon_for_record(_record(), 1e-5)


def test_refusals():
    with pytest.raises(ValueError, match="mixed clipping"):
        epsilon_for_record(_record(clipping="mixed", group_size=16), 1e-5)
    with pytest.raises(ValueError, match="incomplete"):
        epsilon_for_record({"sampling": "poisson"}, 1e-5)
    with pytest.raises(ValueError, match="method"):
        epsilon_for_record(_record(sampling="fixed"), 1e-5, method="pld")
    with pytest.raises(ValueError, match="planned step"):
        epsilon_for_record(_record(sampling="fixed", batch_size=[10, 20]), 1e-5)
    with pytest.raises(ValueError, match="Poisson"):
        epsilon_for_record(_record(sampling="fixed", modelmix={"phases": [{"steps": 2000, "tau_ratio": 0.1}]}), 1e-5)
    with pytest.raises(ValueError, match="delta"):
        epsilon_for_record(_record(), 1.5)


def test_nonprivate_is_infinite():
    none = epsilon_for_record(_record(private=False, clipping="none", noise_std=0.0), 1e-5)
    assert none == math.inf and none.rigorous and "non-private" in none.description
    assert epsilon_for_record(_record(noise_std=0.0, noise_multiplier=0.0), 1e-5) == math.inf


def test_fixed_size_is_rigorous_wor_rdp_with_replace_one_sensitivity():
    rec = _record(sampling="fixed", noise_convention="replace_one", noise_std=2.2)
    choice = choose_accountant(rec)
    assert choice.adjacency == "replace-one" and choice.noise_multiplier == pytest.approx(1.1)
    assert choice.name == "fixed-wor" and choice.rigorous
    # dp_accounting's SampledWithoutReplacementDpEvent under REPLACE_ONE, RDP at the same orders
    import dp_accounting
    from dp_accounting import rdp

    from dpcore.accounting.rdp import RDP_ORDERS

    acc = rdp.RdpAccountant(orders=list(RDP_ORDERS), neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.SampledWithoutReplacementDpEvent(60000, 256, dp_accounting.GaussianDpEvent(1.1)), 2000)
    rigorous = epsilon_for_record(rec, 1e-5)
    assert rigorous == pytest.approx(acc.get_epsilon(1e-5), rel=1e-6)
    # the CLT (approximate, only by name) is far below it here: 1.041 against 1.799
    mu = fdp.clt_mu(1.1, 256 / 60000, 2000, "fixed")
    approx = epsilon_for_record(rec, 1e-5, method="gdp")
    assert approx == pytest.approx(gdp.epsilon_from_mu(mu, 1e-5))
    assert not choose_accountant(rec, method="gdp").rigorous and approx < rigorous
    # the label travels with the value
    assert approx.label == "approximate" and not approx.rigorous and approx.description.startswith("APPROXIMATE")
    assert rigorous.label == "rigorous" and rigorous.method == "rdp" and "replace-one" in rigorous.description


def test_standard_noise_with_fixed_batches_is_halved_against_replace_one():
    # noise std σ·C (the DP-SGD convention) with fixed-size batches: multiplier σ/2 against the sensitivity 2C,
    # the same ε as paper 003's convention at σ/2
    standard = _record(sampling="fixed", noise_multiplier=2.2, noise_std=2.2)
    paper = _record(sampling="fixed", noise_convention="replace_one", noise_multiplier=1.1, noise_std=2.2)
    assert choose_accountant(standard).noise_multiplier == pytest.approx(1.1)
    assert epsilon_for_record(standard, 1e-5) == pytest.approx(epsilon_for_record(paper, 1e-5), rel=1e-12)
    assert epsilon_for_record(standard, 1e-5) == pytest.approx(
        dpsgd_epsilon(2.2, sample_rate=256 / 60000, steps=2000, delta=1e-5, method="rdp", sampling="fixed",
                      dataset_size=60000), rel=1e-12)  # fmt: skip


def test_shuffling_uses_paper_003_a1_when_available():
    pytest.importorskip("dpcore.accounting.shuffled")
    # σ = 2, E = 100 epochs, paper 003's convention: G_{sqrt(E)/σ} = G_5, ε ≈ 33.104 at δ = 1e-5 (paper 003 Thm F.1)
    rec = _record(sampling="shuffle", noise_multiplier=2.0, noise_convention="replace_one", noise_std=4.0,
                  batch_size=600, steps=100 * 100)  # fmt: skip
    eps = epsilon_for_record(rec, 1e-5)
    assert eps == pytest.approx(gdp.epsilon_from_mu(5.0, 1e-5), rel=1e-9)
    assert eps == pytest.approx(33.104, abs=5e-3)
    # the result says on the spot that the A_1 analysis, not a subsampling accountant, produced it
    assert eps.description.startswith(SHUFFLE_NOTE) and "A_1" in eps.description and eps.method == "a1"
    # a started epoch counts in full
    partial = dict(rec, steps=100 * 99 + 1)
    assert epsilon_for_record(partial, 1e-5) == pytest.approx(eps, rel=1e-12)


def test_scheduled_batch_sizes_compose_round_by_round():
    n = 10000
    constant = _record(dataset_size=n, batch_size=100, steps=300)
    schedule = dict(constant, batch_size=[100] * 300)
    assert choose_accountant(schedule).name == "dpsgd-schedule"
    for method in ("pld", "rdp", "gdp"):
        assert epsilon_for_record(schedule, 1e-5, method=method) == pytest.approx(
            epsilon_for_record(constant, 1e-5, method=method), rel=1e-6
        )
    growing = dict(constant, batch_size=[100] * 150 + [200] * 150)
    assert epsilon_for_record(growing, 1e-5) > epsilon_for_record(constant, 1e-5)


def test_modelmix_dispatch():
    mm_module = pytest.importorskip("dpcore.accounting.modelmix")
    mm = {"phases": [{"steps": 500, "tau_ratio": 0.15}]}
    rec = _record(dataset_size=50000, batch_size=1500, steps=500, noise_multiplier=0.6, noise_std=0.6 * 20,
                  clip_norm=20.0, modelmix=mm)  # fmt: skip
    assert choose_accountant(rec).name == "modelmix"
    amplified = epsilon_for_record(rec, 1e-5)
    setting = mm_module.ModelMixSetting(n=50000, batch_size=1500.0, noise_multiplier=0.6, clip=20.0, tau=0.15)
    expected = mm_module.epsilon(setting, steps=500, delta=1e-5)
    assert amplified == pytest.approx(expected)
    plain = epsilon_for_record(rec, 1e-5, modelmix="plain")
    assert plain == pytest.approx(dpsgd_epsilon(0.6, sample_rate=1500 / 50000, steps=500, delta=1e-5))
    assert amplified <= epsilon_for_record(rec, 1e-5, modelmix="plain", method="rdp") * (1 + 1e-9)


def test_records_from_real_runs():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(200, 4, generator=g), torch.randint(0, 2, (200,), generator=g)
    torch.manual_seed(0)
    res = train(nn.Linear(4, 2), (x, y), TrainConfig(sampling="poisson", batch_size=20, epochs=2, clip_norm=1.0,
                noise_multiplier=1.5, lr=0.1, device="cpu"))  # fmt: skip
    assert epsilon_for_record(res.record, 1e-5) == pytest.approx(
        dpsgd_epsilon(1.5, sample_rate=0.1, steps=20, delta=1e-5)
    )
    torch.manual_seed(0)
    res = train(nn.Linear(4, 2), (x, y), TrainConfig(sampling="poisson", batch_size=20, steps=6, clip_norm=1.0,
                noise_multiplier=1.5, lr=0.1, modelmix=ModelMixConfig(0.1), device="cpu"))  # fmt: skip
    assert res.record["modelmix"]["phases"] == [{"steps": 6, "tau_ratio": 0.1}]
    pytest.importorskip("dpcore.accounting.modelmix")
    # ModelMix is post-processing: its accountant never exceeds the plain (RDP) bound
    assert epsilon_for_record(res.record, 1e-5) <= dpsgd_epsilon(
        1.5, sample_rate=0.1, steps=6, delta=1e-5, method="rdp"
    ) * (1 + 1e-9)
