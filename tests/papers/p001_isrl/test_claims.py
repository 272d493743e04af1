"""Paper 001 (Lowy & Razaviyayn, ICLR 2023): claim specifications, the audit of App. I's settings, the functions
that turn panel results into claim values, and the figures (legends off the data, coinciding lines visible)."""

from __future__ import annotations

import math
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from dpcore.claims import ClaimsLog, Erratum, compute_status, unchecked  # noqa: E402
from dpcore.federated import datasets as fd  # noqa: E402
from dpcore.papers.p001_isrl import analysis, audit, coverage, figures, panels  # noqa: E402
from dpcore.papers.p001_isrl import experiments as fe  # noqa: E402
from dpcore.papers.p001_isrl.claims import CLAIMS, SPECS  # noqa: E402

torch.set_num_threads(1)

# digit counts of the MNIST training split (LeCun & Cortes); the smallest is 5421 (digit 5)
MNIST_TRAIN_COUNTS = (5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949)


def _mnist_like_labels(counts=MNIST_TRAIN_COUNTS) -> np.ndarray:
    labels = np.concatenate([np.full(c, d) for d, c in enumerate(counts)])
    return np.random.default_rng(0).permutation(labels)


# ----------------------------------------------------------------------------------- specs


def test_specs_are_paper_001_with_unique_keys():
    assert all(s.paper == "001" for s in SPECS)
    assert len(CLAIMS) == len(SPECS)


def test_calibration_specs_are_bool_where_the_noise_holds_and_carry_an_erratum_where_not():
    calib = [s for s in SPECS if s.key.startswith("calib.")]
    assert len(calib) == 59  # 6 settings × their MB-SGD and Local SGD ε of the paper profile
    for spec in calib:
        if isinstance(spec.value, bool):
            assert spec.value is True and spec.explanation is None
        else:
            assert spec.explanation is not None and spec.explanation.expected > spec.value  # the noise is too small
            assert isinstance(spec.explanation, Erratum)  # a tight accountant of the paper's own σ shows it


def test_training_magnitudes_are_full_scale_and_orderings_are_bool_rows():
    for spec in SPECS:
        if spec.key.startswith(("fig4.", "fig5.", "fig6.", "app_i2.")) and not isinstance(spec.value, bool):
            if spec.key in ("app_i2.n_train.pooled", "app_i2.n_test.pooled"):  # a split count: no training
                assert spec.scale == "any", spec.key
                continue
            assert spec.scale == "full", spec.key


def test_known_errata_are_pinned():
    """The calibration errata hold the tight accountant's ε (a deterministic computation, rerun by the notebook)."""
    assert CLAIMS["calib.mnist.mb-sgd.eps=12"].explanation.expected == pytest.approx(13.03, abs=0.01)
    assert CLAIMS["calib.mnist.mb-sgd.eps=18"].explanation.expected == pytest.approx(23.67, abs=0.01)
    assert CLAIMS["calib.mnist.local-sgd.eps=3"].explanation.expected == pytest.approx(26.73, abs=0.01)


def test_test_split_text_versus_code_is_a_note_not_an_erratum():
    """Issue 50: App. I.1's 2,168 against the split's 2,169 is text versus code; the paper's own numbers agree with
    each other, so the row carries a note (within one image), never an erratum."""
    spec = CLAIMS["app_i1.n_test.full"]
    assert spec.explanation is None and "not an erratum" in spec.note
    assert compute_status(spec, 2169) == "reproduced" and compute_status(spec, 2171) == "differs"


def test_trained_claims_carry_a_rule_and_no_value_of_ours():
    """Issue 50: every trained claim of Figs. 4-9 is decided by the verdict rules from the runs: a rule, no typed
    NotReproduced / Inconclusive, no expected value; only deterministic computations are errata."""
    figures = ("fig4.", "fig5.", "fig6.", "fig7.", "fig9.", "figs8_9.", "app_i2.")
    trained = [s for s in SPECS if s.key.startswith(figures) and s.source != "audit"
               and not s.key.startswith("app_i2.n_")]  # fmt: skip
    assert len(trained) == 37  # Figs. 4, 7 (6), 5, 8, 9 and App. I.2 (19), Fig. 6 (12)
    assert all(s.rule is not None and s.explanation is None for s in trained), [s.key for s in trained if not s.rule]
    kinds = {k: type(s.explanation) for k, s in CLAIMS.items() if s.explanation is not None}
    assert set(kinds.values()) == {Erratum}
    assert set(kinds) == {*(s.key for s in SPECS if s.key.startswith("calib.") and s.explanation is not None),
                          "fig3.noniid_vs_iid.gap_exponent"}  # fmt: skip
    assert all(s.rule.pipeline and s.rule.accounting for s in trained)


def test_findings_count_their_scope_and_follow_the_conclusion_rule():
    """Issue 50: the calibration findings count their scope ("3 of 35 calibrations") from the registered specs, and
    "changes a conclusion" follows dpcore.verdicts.changes_conclusion of their weight; audit estimates say so."""
    from dpcore.papers.p001_isrl.claims import FINDINGS
    from dpcore.verdicts import changes_conclusion

    found = {f.key: f for f in FINDINGS}
    mb = [s for s in SPECS if s.key.startswith("calib.") and ".mb-sgd." in s.key]
    missed = [s for s in mb if s.explanation is not None]
    assert f"{len(missed)} of {len(mb)} calibrations" in found["calib_add_remove"].text
    for f in FINDINGS:
        if f.weight is not None:
            assert f.conclusion == changes_conclusion(f.weight), f.key
        if f.kind == "audit":
            assert f.confidence is None and f.weight_words == "an estimate (no confidence bound)"
            assert not f.changes_a_conclusion
        if f.kind == "trained":  # the sentence quotes the paper, never a measured value (those are in the rows)
            assert not re.search(r"\d\.\d{2,}|[−+]\d", f.text), f.key


# ----------------------------------------------------------------------------------- silo sizes and audit


def test_mnist_silo_sizes_reproduce_app_i1_from_the_labels():
    labels = _mnist_like_labels()
    assert audit.mnist_silo_sizes(labels, fraction=1 / 7) == (1238, 310)
    assert audit.mnist_silo_sizes(labels, fraction=1.0) == (8673, 2169)  # the paper prints 2168


def test_mnist_silo_sizes_equal_the_partition_with_real_features():
    counts = (40, 35, 50, 30, 33, 41, 39, 36, 45, 38)
    labels = _mnist_like_labels(counts)
    images = np.random.default_rng(1).integers(0, 255, size=(labels.size, 4, 4), dtype=np.uint8)
    trials = fd.mnist_odd_even(images, labels, trials=1, fraction=0.5, dim=3)
    assert audit.mnist_silo_sizes(labels, fraction=0.5) == (int(trials.sizes[0, 0]), int(trials.test_sizes[0]) // 25)
    with pytest.raises(ValueError, match="labels"):
        audit.mnist_silo_sizes(np.array([]), fraction=0.5)


def test_insurance_and_obesity_sizes_come_from_the_partition():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(18, 64, 100), "sex": rng.choice(["f", "m"], 100),
                          "bmi": rng.normal(30, 5, 100), "children": rng.integers(0, 4, 100),
                          "smoker": rng.choice(["no", "yes"], 100), "region": rng.choice(["a", "b"], 100),
                          "charges": rng.gamma(2.0, 5000.0, 100)})
    # ⌈100/3⌉ = 34 per silo, 80/20: 34 − ⌈6.8⌉ = 27 training records
    assert audit.insurance_train_size(frame, 3) == 27


def test_setting_validates_and_derives_k_and_delta():
    s = audit.Setting("mnist", 1238, 35, 18.0, (0.75, 12.0))
    assert s.batch_size == 443 and s.delta == pytest.approx(1 / 1238**2)
    with pytest.raises(ValueError, match="epsilons"):
        audit.Setting("mnist", 1238, 35, 18.0, (20.0,))
    with pytest.raises(ValueError, match="n"):
        audit.Setting("mnist", 0, 35, 18.0, (1.0,))


def test_audit_of_obesity_at_eps_9_matches_the_erratum_and_eps_05_holds():
    setting = audit.Setting("obesity", 213, 100, 9.0, (0.5, 9.0))
    audits = audit.audit_settings([setting], [])
    assert [audit.calibration_key(a) for a in audits] == ["calib.obesity.mb-sgd.eps=0.5", "calib.obesity.mb-sgd.eps=9"]
    statuses = []
    for a in audits:
        spec = CLAIMS[audit.calibration_key(a)]
        statuses.append(compute_status(spec, audit.calibration_value(spec, a)))
    assert statuses == ["reproduced", "erratum"]
    frame = audit.audit_frame(audits)
    assert list(frame["holds"]) == [True, False]
    with pytest.raises(ValueError, match="spec"):
        audit.calibration_value(CLAIMS["calib.mnist.mb-sgd.eps=12"], audits[0])


def test_noise_ratio_table_is_about_25_in_std():
    table = audit.noise_ratio_table([audit.Setting("mnist", 1238, 35, 18.0, (12.0,))])
    assert 20 < table["std_ratio"].iloc[0] < 30


def test_one_pass_calibration_is_conservative_and_shuffle_table_is_finite():
    table = audit.one_pass_table([0.5, 1.0, 3.0, 9.0], [10, 30], n=213)
    assert (table["exact_epsilon"] <= table["epsilon"]).all()
    shuffle = audit.shuffle_table([0.1], [10_000])
    assert np.isfinite(shuffle["round_epsilon"]).all()


# ----------------------------------------------------------------------------------- claim values from panels


def _result(mb, local, mb_np, local_np, epsilons=(0.5, 1.0, 3.0), m=3) -> fe.PanelResult:
    rows = []
    for label, values in (("Noisy MB SGD", mb), ("Noisy Local SGD", local)):
        rows += [dict(curve=label, epsilon=e, mean=v, halfwidth=0.01) for e, v in zip(epsilons, values, strict=True)]
    rows += [dict(curve="MB SGD", epsilon=math.inf, mean=mb_np, halfwidth=0.0),
             dict(curve="Local SGD", epsilon=math.inf, mean=local_np, halfwidth=0.0)]
    panel = fe.Panel(silos_per_round=m, rounds=5, epsilons=tuple(epsilons), mb_stepsizes=(0.1,),
                     local_stepsizes=(0.1,), lipschitz=1.0)
    return fe.PanelResult(panel, pd.DataFrame(), pd.DataFrame(rows), {}, np.full((1, 3), 7))


def test_orderings_and_thresholds():
    r = _result([0.9, 0.6, 0.45], [1.0, 0.7, 0.4], 0.4, 0.5)
    assert analysis.beats_nonprivate_local_from(r) == 3.0  # 0.6 > 0.5 at ε = 1, 0.45 ≤ 0.5 from ε = 3
    assert analysis.mb_beats_local_everywhere(r, max_epsilon=2.0)
    assert not analysis.mb_beats_local_everywhere(r)
    assert analysis.local_beats_mb(r, 3.0) is True
    assert analysis.local_beats_mb(r, 2.0) is None
    never = _result([0.9, 0.8, 0.7], [1.0, 0.9, 0.8], 0.4, 0.5)
    assert analysis.beats_nonprivate_local_from(never) == math.inf
    with pytest.raises(ValueError, match="max_epsilon"):
        analysis.mb_beats_local_everywhere(r, max_epsilon=0.1)


def test_magnitudes():
    r = _result([0.9, 0.6, 0.45], [1.0, 0.7, 0.4], 0.4, 0.5)
    assert analysis.naive_gain(r, 1.0) == pytest.approx(0.4)
    assert math.isnan(analysis.naive_gain(r, 2.0))
    assert analysis.privacy_cost(r, 3.0) == pytest.approx(0.05)
    assert analysis.ratio_to_nonprivate_local(r, min_epsilon=1.0) == pytest.approx((0.6 + 0.45) / 2 / 0.5)
    assert analysis.share_below_naive([r, _result([1.2, 1.1, 0.9], [1, 1, 1], 0.4, 0.5)]) == pytest.approx(4 / 6)
    assert analysis.share_mb_beats_local([r]) == pytest.approx(2 / 3)
    assert analysis.gains_note(r).startswith("ε=0.5: +10.0%")


def test_claim_dictionaries_use_existing_keys():
    good = _result([0.9, 0.6, 0.45], [1.0, 0.7, 0.4], 0.4, 0.5, epsilons=(0.125, 1.0, 3.0))
    insurance = analysis.insurance_claims({(10, 5): good, (3, 3): good}, [[10, 5]])
    assert set(insurance) <= set(CLAIMS)
    assert insurance["fig5.N=10.M=5.mb_beats_local.eps_le_2"][0] is True
    assert insurance["fig9.N=3.M=3.local_beats_mb.eps=3"][0] is True
    assert insurance["figs8_9.mb_beats_local.most"][0] is True
    mode = analysis.insurance_mode_claims({(10, 5): good, (3, 3): good}, [[10, 5]], "authors_batch_mean",
                                          epsilon_note="ε that ran ≤ 9")
    assert set(mode) == {"fig5.N=10.M=5.authors_batch_mean.mb_beats_local.eps_le_2",
                         "fig9.N=3.M=3.authors_batch_mean.local_beats_mb.eps=3",
                         "figs8_9.authors_batch_mean.mb_beats_local.most"} and set(mode) <= set(CLAIMS)
    assert all(note.endswith("ε that ran ≤ 9") for _, note in mode.values())
    with pytest.raises(ValueError, match="mode"):
        analysis.insurance_mode_claims({(10, 5): good}, [[10, 5]], "Authors batch")
    mnist = analysis.mnist_claims({12: _result([0.3, 0.125, 0.12], [0.3, 0.25, 0.2], 0.12, 0.13,
                                               epsilons=(1.5, 12.0, 18.0), m=12)}, [12])
    assert set(mnist) <= set(CLAIMS) and mnist["fig4.M=12.beats_nonprivate_local_from_eps"][0] == 12.0
    # App. I.1's Fig. 7 (M = 18): Fig. 4's two statements, keyed by its own figure (issue 41)
    fig7 = _result([0.3, 0.2, 0.19], [0.35, 0.25, 0.2], 0.13, 0.21, epsilons=(1.5, 12.0, 18.0), m=18)
    both = analysis.mnist_claims({12: fig7, 18: fig7}, [12], [18])
    assert {k for k in both if k.startswith("fig7.")} == {"fig7.M=18.beats_nonprivate_local_from_eps",
                                                         "fig7.M=18.mb_beats_isrl_local"} and set(both) <= set(CLAIMS)
    assert both["fig7.M=18.beats_nonprivate_local_from_eps"][0] == 12.0 and both["fig7.M=18.mb_beats_isrl_local"][0]
    assert CLAIMS["fig7.M=18.beats_nonprivate_local_from_eps"].scale == "full"
    with pytest.raises(ValueError, match="fig7_silos_per_round"):
        analysis.mnist_claims({12: fig7}, [12], [18])
    obesity_result = _result([0.8, 0.7, 0.6], [0.78, 0.72, 0.62], 0.5, 0.45, epsilons=(0.5, 3.0, 9.0))
    authors = pd.DataFrame({"M": 3, "epsilon": [0.5, 3.0, 9.0], "gain_vs_isrl_local_sgd": [0.2, 0.25, 0.1]})
    obesity = analysis.obesity_claims({3: obesity_result}, authors)
    assert set(obesity) <= set(CLAIMS)
    assert obesity["fig6.M=3.mb_beats_local.all_eps"][0] is False
    assert "authors' script noise: +20.0%" in obesity["fig6.M=3.mb_beats_local.all_eps"][1]


# ----------------------------------------------------------------------------------- panels and figures


def test_panel_grids_follow_app_i():
    mnist = panels.mnist_panel(12, rounds=35, epsilons=[1.5], grid_points=3, reps=1, lipschitz=2.0)
    assert mnist.mb_stepsizes[-1] == pytest.approx(12.0) and mnist.local_stepsizes[-1] == pytest.approx(math.exp(-1))
    mb, local = panels.obesity_grids(8)
    assert mb == local and len(mb) == 8 + 4 and mb[0] == pytest.approx(math.exp(-12))  # same tuning for both
    assert mb[4] == pytest.approx(math.exp(-7)) and mb[-1] == pytest.approx(math.exp(-1))
    assert panels.obesity_panel(3, rounds=100, epsilons=[0.5], grid_points=8, reps=1, lipschitz=20.0).output == "last"
    with pytest.raises(ValueError, match="silos_per_round"):
        panels.insurance_panel(0, rounds=35, epsilons=[1.0], grid_points=4, reps=1, clips=[100.0])


def test_panels_figure_keeps_equal_non_private_lines_distinct_and_the_legend_off_the_axes():
    r = _result([0.9, 0.6, 0.45], [1.0, 0.7, 0.4], 0.5, 0.5)  # MB SGD and Local SGD at the same level
    fig = figures.panels_figure({"a": r}, ylabel="error", suptitle="t")
    ax = fig.axes[0]
    assert ax.get_legend() is None and len(fig.legends) == 1
    lines = {line.get_label(): line for line in ax.get_lines()}
    mb, local = lines["MB SGD after 5 rounds"], lines["Local SGD after 5 rounds"]
    assert mb.get_linestyle() != local.get_linestyle() and mb.get_marker() != local.get_marker()
    assert [t.get_text() for t in fig.legends[0].get_texts()][:2] == ["Noisy MB SGD after 5 rounds",
                                                                      "Noisy Local SGD after 5 rounds"]
    plt.close(fig)


def test_accelerated_and_audit_figures_put_the_legend_below():
    curve = pd.DataFrame({"epsilon": [0.5, 3.0], "mean": [0.8, 0.7], "halfwidth": [0.01, 0.02]})
    fig = figures.accelerated_figure({True: curve, False: curve.iloc[:1]}, _result([0.9, 0.6, 0.45], [1, 0.7, 0.4],
                                                                                  0.4, 0.5), ylabel="e", title="t")
    assert fig.axes[0].get_legend() is None and len(fig.legends) == 1
    plt.close(fig)
    table = audit.audit_frame(audit.audit_settings([audit.Setting("obesity", 213, 100, 9.0, (0.5,))], [0.5]))
    fig = figures.audit_figure(table)
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1
    plt.close(fig)
    with pytest.raises(ValueError, match="results"):
        figures.panels_figure({}, ylabel="e", suptitle="t")


# ----------------------------------------------------------------------------------- every claim at every profile


def _quick(notebook: str) -> dict:
    import yaml

    from dpcore.paths import notebooks_dir

    return yaml.safe_load((notebooks_dir() / "profiles" / "quick.yaml").read_text())[f"001_isrl_dp/{notebook}"]


def test_notebooks_own_every_claim_once():
    from dpcore.papers.p001_isrl.claims import NOTEBOOKS

    keys = [k for nb in NOTEBOOKS for k in nb.keys]
    # Fig. 3: 28, mode: 4, App. I.2's N_0: 2, audited modes (issue 42): 2, Fig. 7 (M = 18, issue 41): 2
    assert sorted(keys) == sorted(CLAIMS) and len(keys) == len(set(keys)) == 99 + 28 + 4 + 2 + 2 + 2
    assert {nb.notebook for nb in NOTEBOOKS} == {f"001_isrl_dp/{n}" for n in
                                                 ("privacy_accounting", "mnist_logistic", "insurance_linear",
                                                  "obesity_softmax")} | {"audit/privacy_audit"}  # fmt: skip


def test_quick_profile_audits_every_calibration_of_the_paper():
    """Accounting is not training: the quick profile's parameters audit every (setting, algorithm, ε) claim."""
    p = _quick("privacy_accounting")
    assert not p.get("reduced", False)
    names = [("mnist", 18.0, p["mnist_epsilons"]), ("obesity", 9.0, p["obesity_epsilons"])]
    names += [(f"insurance-N{n}", 3.0, p["insurance_epsilons"]) for n in p["insurance_silos"]]
    audited = {f"calib.{name}.mb-sgd.eps={e:g}" for name, _, eps in names for e in eps}
    audited |= {f"calib.{name}.local-sgd.eps={e:g}" for name, top, _ in names for e in p["local_sgd_epsilons"]
                if e <= top}  # fmt: skip
    assert audited == {k for k in CLAIMS if k.startswith("calib.")}


def test_reasons_name_the_panel_or_epsilon_a_profile_leaves_out():
    assert coverage.not_run_reason("fig4.M=25.mb_beats_isrl_local", silos_per_round=[12]) == (
        "panel M = 25 not in this profile (M ∈ 12)"
    )
    assert coverage.not_run_reason("app_i2.N=15.M=5.naive_gain.eps=1", panels=[(10, 5), (3, 3)], epsilons=[1.0]) == (
        "panel N = 15, M = 5 not in this profile ((N, M) ∈ (10, 5), (3, 3))"
    )
    assert coverage.not_run_reason("fig9.N=3.M=3.local_beats_mb.eps=3", panels=[(3, 3)], epsilons=[1.0]) == (
        "ε = 3 not in this profile's grid (ε ∈ 1)"
    )
    assert coverage.not_run_reason("fig5.N=10.M=5.ratio_to_local_sgd.eps_ge_2", panels=[(10, 5)], epsilons=[1]) == (
        "needs a tested ε ≥ 2 (ε ∈ 1)"
    )
    assert coverage.not_run_reason("figs8_9.mb_beats_local.most") == "needs the Figs. 8-9 panels, none in this profile"
    assert coverage.not_run_reason("app_i1.upsilon2") == "not computed at this profile"
    settings = [audit.Setting("mnist", 1238, 35, 18.0, (0.75, 12.0))]
    assert coverage.calibration_reason("calib.mnist.mb-sgd.eps=6", settings, [0.75]) == (
        "ε = 6 not in this profile's grid (ε ∈ 0.75, 12)"
    )
    assert coverage.calibration_reason("calib.mnist.local-sgd.eps=3", settings, [0.75, 3.0]) == (
        "not computed at this profile"  # audited: it would have a value
    )
    assert coverage.calibration_reason("calib.obesity.mb-sgd.eps=9", settings, []).startswith(
        "setting obesity not audited"
    )
    for bad, match in ((dict(key=""), "key"), (dict(key="k", panels=[(1, 2, 3)]), "panels"),
                       (dict(key="k", epsilons=["a"]), "epsilons"), (dict(key="k", settings=[1]), "settings")):
        with pytest.raises(ValueError, match=match):
            coverage.not_run_reason(**bad)
    with pytest.raises(ValueError, match="calibration claim key"):
        coverage.calibration_reason("fig4.M=25.x", settings, [])


def _complete(log, specs, reason):
    for spec in unchecked(log, specs):
        log.check(spec, None, note=reason(spec.key))
    return {c.key: c for c in log.claims}


def _selected(panel: dict, mb: dict, local: dict, np_mb: float, np_local: float, trials: int, noise: float = 0.0,
              seed: int = 0) -> pd.DataFrame:
    """A synthetic selected-runs frame of one panel (``panel``: its columns, e.g. {"M": 12}): per trial and ε the
    test metric of each curve, ``noise`` a per-trial offset shared by the two private curves (paired) plus a small
    independent part."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(trials):
        shared = noise * rng.standard_normal()
        for curve, alg, values in (("Noisy MB SGD", "mb-sgd", mb), ("Noisy Local SGD", "local-sgd", local)):
            for eps, v in values.items():
                rows.append(dict(curve=curve, algorithm=alg, trial=t, epsilon=eps,
                                 test_metric=v + shared + 0.1 * noise * rng.standard_normal(), **panel))
        rows.append(dict(curve="MB SGD", algorithm="mb-sgd", trial=t, epsilon=math.inf, test_metric=np_mb, **panel))
        rows.append(dict(curve="Local SGD", algorithm="local-sgd", trial=t, epsilon=math.inf, test_metric=np_local,
                         **panel))
    return pd.DataFrame(rows)


def test_quick_notebooks_decide_every_trained_claim_from_the_committed_full_scale_runs():
    """Issue 50 (one verdict per claim): at the quick profile the notebooks pass the paper profile's committed runs
    beside their reduced ones; the full-scale runs decide, so a reduced run that 'reproduces' an ordering the full
    scale does not reach never shows as reproduced."""
    from dpcore.papers.p001_isrl import evidence

    eps = {0.125: 0.0, 1.0: 0.0, 2.0: 0.0, 3.0: 0.0}
    # reduced (3 trials): MB-SGD below Local SGD at every ε ≤ 2; full scale (20 trials): clearly above at ε = 1
    reduced = _selected({"N": 10, "M": 5}, {e: 0.8 for e in eps}, {e: 0.9 for e in eps}, 0.6, 0.62, 3, noise=0.05)
    full = _selected({"N": 10, "M": 5}, {e: (0.95 if e == 1.0 else 0.8) for e in eps}, {e: 0.9 for e in eps}, 0.6,
                     0.62, 20, noise=0.05, seed=1)  # fmt: skip
    key = "fig5.N=10.M=5.mb_beats_local.eps_le_2"
    only_reduced = evidence.insurance_runs([(reduced, "reduced", "quick")])
    both = evidence.insurance_runs([(reduced, "reduced", "quick"), (full, "full", "paper")])
    paper = evidence.insurance_runs([(full, "full", "paper")])
    log = ClaimsLog()
    assert log.decide(CLAIMS[key], only_reduced[key], profile="quick").status == "reproduced"  # no full run yet
    quick = log.decide(CLAIMS[key], both[key], profile="quick")
    at_paper = log.decide(CLAIMS[key], paper[key], profile="paper")
    assert quick.status == at_paper.status == "inconclusive" and quick.our_value is False  # no positive control
    assert "weakest ε 1" in quick.note and "no positive control" in quick.note
    from dpcore.verdicts import Control, decide

    control = Control("ref.x", True, "holds")
    assert decide(True, both[key], CLAIMS[key].rule, control=control).status == "not-reproduced"
    # a full-scale magnitude with reduced runs only is not run (its reduced value in the note)
    gain = "app_i2.N=10.M=5.naive_gain.eps=1"
    row = log.decide(CLAIMS[gain], only_reduced[gain], profile="quick")
    assert row.status == "not-run" and "reduced runs only" in row.note


def test_paired_standard_error_decides_an_ordering_within_trial_noise():
    """Fig. 4's 'below at every ε' with one ε inside its paired standard error is inconclusive even with a holding
    control; a paired shift shared by both curves does not widen the error."""
    from dpcore.papers.p001_isrl import evidence
    from dpcore.verdicts import Control, decide

    a = pd.Series([0.30, 0.20, 0.25, 0.35], index=[0, 1, 2, 3])
    mean, se, n = evidence.paired_cell(a + 0.01, a)
    assert (mean, se, n) == (pytest.approx(0.01), pytest.approx(0.0), 4)
    eps = (0.75, 1.5, 18.0)
    close = _selected({"M": 12}, {0.75: 0.20, 1.5: 0.1802, 18.0: 0.12}, {0.75: 0.21, 1.5: 0.1800, 18.0: 0.13}, 0.11,
                      0.14, 20, noise=0.02)  # fmt: skip
    runs = evidence.mnist_runs([(close, "full", "paper")])
    key = "fig4.M=12.mb_beats_isrl_local"
    v = decide(True, runs[key], CLAIMS[key].rule, control=Control("ref.x", True, "holds"))
    assert v.status == "inconclusive" and "seed spreads" in v.note and v.closest.trials == 20
    far = _selected({"M": 12}, {e: 0.25 for e in eps}, {e: 0.20 for e in eps}, 0.11, 0.14, 20, noise=0.02)
    v = decide(True, evidence.mnist_runs([(far, "full", "paper")])[key], CLAIMS[key].rule,
               control=Control("ref.x", True, "holds"))  # fmt: skip
    assert v.status == "not-reproduced"
    clear = _selected({"M": 12}, {e: 0.20 for e in eps}, {e: 0.25 for e in eps}, 0.11, 0.14, 20, noise=0.02)
    out = evidence.mnist_runs([(clear, "full", "paper")])
    assert ClaimsLog().decide(CLAIMS[key], out[key], profile="paper").status == "reproduced"
    assert ClaimsLog().decide(CLAIMS["fig4.M=12.beats_nonprivate_local_from_eps"],
                              out["fig4.M=12.beats_nonprivate_local_from_eps"], profile="paper").status != "reproduced"


def test_obesity_gain_standard_error_and_printed_range():
    """Fig. 6's gain (Local − MB)/Local of the means, its standard error from the paired differences; the printed
    10−30 % is its midpoint ± half its width, so a gain inside the range reproduces it."""
    from dpcore.papers.p001_isrl import evidence

    frame = _selected({"M": 7}, {9.0: 0.40, 3.0: 0.55}, {9.0: 0.50, 3.0: 0.50}, 0.3, 0.3, 3, noise=0.01)
    runs = evidence.obesity_runs([(frame, "full", "paper")])
    run = runs["fig6.M=7.gain.eps=9"][0]
    assert run.value == pytest.approx(0.2, abs=0.02) and run.trials == 3 and math.isfinite(run.se)
    log = ClaimsLog()
    assert log.decide(CLAIMS["fig6.M=7.gain.eps=9"], runs["fig6.M=7.gain.eps=9"], profile="paper").status == (
        "reproduced")  # fmt: skip
    assert log.decide(CLAIMS["fig6.M=7.gain.eps=3"], runs["fig6.M=7.gain.eps=3"], profile="paper").status == (
        "inconclusive")  # fmt: skip
    assert log.decide(CLAIMS["fig6.M=7.mb_beats_local.all_eps"], runs["fig6.M=7.mb_beats_local.all_eps"],
                      profile="paper").our_value is False  # fmt: skip


def test_printed_ranges_are_midpoints_with_half_width_tolerances():
    naive = CLAIMS["app_i2.N=10.M=5.naive_gain.eps=1"]
    assert (naive.value, naive.atol) == (0.35, 0.05) and "0.30−0.40" in naive.location
    gain = CLAIMS["fig6.M=7.gain.eps=9"]
    assert (gain.value, gain.atol) == (0.2, 0.1) and "0.1−0.3" in gain.location
