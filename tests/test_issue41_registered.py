"""Issue 41, 'printed results still unregistered': the computations behind the newly registered claims."""

from __future__ import annotations

import pandas as pd
import pytest

from dpcore.claims import compute_status
from dpcore.papers.p000_proactive import claims as c000
from dpcore.papers.p000_proactive import nonconvex_report as nr
from dpcore.papers.p001_isrl import audit
from dpcore.papers.p002_modelmix import section5
from dpcore.papers.p003_shuffling import claims as c003
from dpcore.papers.p003_shuffling import training_report as tr3
from dpcore.papers.p004_contraction import claims as c004
from dpcore.papers.p004_contraction import figures as F


def test_corollary2_noise_term_is_harmonic_sum():
    assert F.corollary2_noise_term(n=4, batch_size=1, strong_convexity=1.0, noise_variance=1.0) == pytest.approx(
        (1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    with pytest.raises(ValueError, match="batch_size"):
        F.corollary2_noise_term(n=10, batch_size=3, strong_convexity=1.0, noise_variance=1.0)


def test_corollary2_rate_holds_and_can_fail():
    table = F.corollary2_rate_table()
    assert F.corollary2_rate_holds(table)
    wrong = table.assign(ratio=table["ratio"] * table["n"] ** 0.5)  # a √n too slow bound breaks the band
    assert not F.corollary2_rate_holds(wrong)
    with pytest.raises(ValueError, match="table"):
        F.corollary2_rate_holds(pd.DataFrame())
    assert compute_status(c004.CLAIMS["cor2.rate_sqrt_n"], True) == "reproduced"


def test_corollary3_eq12_bounds_the_sum():
    frame = F.corollary3_eq12_bounds_sum([0.0, 1.0], F.Setting())
    assert frame["holds"].all()
    assert (frame["eq. (12)"] > frame["sum form"]).all()  # η_t = 1/(λt) decreases: (12) is strictly looser
    with pytest.raises(ValueError, match="m must divide"):
        F.corollary3_eq12_bounds_sum([0.0], F.Setting(), m=7)


def test_fig2cd_noise_gives_eight_and_modelmix_less():
    values = section5.fig2cd_claim_values()
    eps, _ = values["fig2cd.dpsgd_eps"]
    assert eps == pytest.approx(8.0, rel=1e-3)
    assert values["fig2cd.mm_better_eps"][0] is True
    assert section5.fig2cd_noise() == pytest.approx(1.726, abs=2e-3)
    with pytest.raises(ValueError, match="sample_rate"):
        section5.fig2cd_noise(sample_rate=1.5)


def test_fig1_caption_batch_sizes_and_erratum():
    assert tr3.fig1_caption_batch_sizes() == (64, 128, 256, 512, 1024)
    with pytest.raises(ValueError, match="group"):
        tr3.fig1_caption_batch_sizes(0)
    values = tr3.printed_pair_values({"table3.mnist.SH.nondp": (98.2, "")})
    assert values["fig1.caption.largest_batch"][0] == 1024
    assert compute_status(c003.CLAIMS["fig1.caption.largest_batch"], 1024) == "erratum"
    assert values["apph.nondp_matches_table3"][0] is True
    assert compute_status(c003.CLAIMS["apph.mnist.SH.nondp"], values["apph.mnist.SH.nondp"][0]) == "reproduced"
    with pytest.raises(ValueError, match="table3"):
        tr3.printed_pair_values({})


def test_pooled_insurance_split():
    assert audit.pooled_split_sizes(1338) == (1070, 268)
    assert audit.pooled_split_sizes(10) == (8, 2)
    with pytest.raises(ValueError, match="n_total"):
        audit.pooled_split_sizes(1)
    with pytest.raises(ValueError, match="test_fraction"):
        audit.pooled_split_sizes(100, test_fraction=1.0)


def test_two_gamma_is_an_erratum_at_the_fixed_point():
    spec = c000.CLAIMS["thm3.2.two_gamma"]
    assert compute_status(spec, 6.25049) == "erratum"
    assert compute_status(spec, 4.1) == "reproduced"


def test_cifar10_sec5_values():
    runs = pd.DataFrame({"run": ["eps/0.5", "eps/0.75", "eps/1", "eps/1.5", "eps/2", "eps/3"],
                         "status": ["done"] * 6, "final_accuracy": [0.66, 0.6, 0.61, 0.62, 0.6, 0.63]})
    need = lambda names: "missing runs: " + ", ".join(names)  # noqa: E731
    out = nr.cifar10_sec5_values(runs, 74.0, 60.0, need)
    assert out["nonconvex.cifar10.deduction_epoch7_pct"][0] == pytest.approx(14.0)
    assert out["nonconvex.cifar10.eps0.5_within_10pct"][0] is True
    assert out["nonconvex.cifar10.about60_eps0.5_3"][0] == pytest.approx(60.0)
    missing = nr.cifar10_sec5_values(runs.iloc[:0], None, None, need)
    assert all(v is None for v, _ in missing.values())
