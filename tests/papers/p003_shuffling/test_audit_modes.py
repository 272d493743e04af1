"""Paper 003's authors' modes audited with the mechanism that ran (issue 42): every (clip scope, noise placement) of
training.MODES that changes the mechanism has a row, per-tensor clipping runs on a two-tensor toy, and the record's
ε covers the clip norm C·√2 that per-tensor clipping allows."""

from __future__ import annotations

import pytest

from dpcore.papers.p003_shuffling.audit_modes import AUDITED_MODES, TOY, mode_audits
from dpcore.papers.p003_shuffling.training import MODES


def test_every_mechanism_changing_mode_is_audited_and_the_step_size_modes_are_not():
    pairs = {(m.family, m.clip_scope, m.noise_placement) for m in MODES}
    audited = {(f, c, p) for _, f, c, p in AUDITED_MODES}
    assert audited == (pairs - {("IC", "global", "algorithm1"), ("BC", "global", "algorithm1")}) | {
        ("BC", "global", "algorithm1")  # the reference
    }
    assert ("IC", "per_tensor", "algorithm1") in audited and ("BC", "per_tensor", "algorithm1") in audited
    assert not any(name == "lr_authors" for name, *_ in AUDITED_MODES)
    assert TOY["tensors"] >= 2


def test_mode_rows_account_the_mechanism_that_ran():
    df = mode_audits(runs=40, delta=1e-5, seed=2).set_index("mode")
    assert len(df) == len(AUDITED_MODES) and df.index.is_unique
    ref = df.loc["BC/algorithm1"]
    assert ref.accounted == pytest.approx(ref.claimed)
    for mode in ("IC/per_tensor", "BC/per_tensor"):  # clip norm C·√2: σ/√2 accounted, above the paper's claim
        assert df.loc[mode, "clip_scope"] == "per_tensor" and df.loc[mode, "accounted"] > 1.3 * ref.claimed
    assert (df.accounted[df.noise_placement != "algorithm1"] > 5 * ref.claimed).all()
    assert df.loc["IC/authors_93f6075", "exceeds_claim"]


def test_mode_audits_refuses_bad_runs():
    with pytest.raises(ValueError, match="runs"):
        mode_audits(runs=2, delta=1e-5)
