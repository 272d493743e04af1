"""Claim specifications of Lowy & Razaviyayn, "Private Federated Learning Without a Trusted Server" (ICLR 2023).

Three groups, one per kind of notebook:

* ``app_i1.*`` -- the MNIST silo sizes App. I.1 prints (recomputed by the partition code);
* ``calib.<setting>.<algorithm>.eps=<ε>`` -- "App. I's σ is (ε, 1/n²)-ISRL-DP", checked with the
  tight accountant (:func:`dpcore.papers.p001_isrl.accounting.audit_calibration`).  Where the
  calibration meets its ε the claim is a bool (True); where it does not, the claim is the ε
  itself with an erratum holding the tight replace-one ε we compute (our value, as a literal);
* ``fig3.*`` -- the numbers the rates table (Fig. 3, rebuilt in :mod:`dpcore.papers.p001_isrl.rates`) and the text
  around eqs. (4)-(11) imply: exponents of the privacy terms, the caption's C² exponent, "up to √κ", the inverted
  "gap" factor between eqs. (6) and (4) (an erratum), "privacy for free" and the tightness of the optimal rows;
* ``fig4.* / fig5.* / fig6.* / figs8-9.* / app_i2.* / app_i3.*`` -- statements about the training
  figures.  Numbers measured by training (ratios, gains, thresholds) are ``scale="full"``: at a
  reduced profile they are not-run with our value in the note.  Orderings a reduced run can test
  ("beats") are bool rows of their own, with the check in ``location``.
"""

from __future__ import annotations

from dpcore.claims import (
    ClaimSpec,
    Erratum,
    Finding,
    Inconclusive,
    Interval,
    NotebookClaims,
    NotReproduced,
    specs_by_key,
)
from dpcore.papers.p001_isrl.audit_claims import AUDIT_NOTEBOOKS, AUDIT_SPECS

__all__ = ["SPECS", "CLAIMS", "NOTEBOOKS", "TITLE", "ACCOUNTING_SPECS", "RATES_SPECS", "MNIST_SPECS", "INSURANCE_SPECS",
           "OBESITY_SPECS"]

TITLE = "Lowy & Razaviyayn, Private federated learning without a trusted server, ICLR 2023"

_P = "001"

# ------------------------------------------------------------------ App. I.1: silo sizes
_SIZES = (
    ClaimSpec(_P, "app_i1.n_train.fraction1_7", "App. I.1", "MNIST training examples per silo (1/7 of MNIST)", 1238,
              "printed", "App. I.1, 'we use only 1/7 of the MNIST samples (n = 1238 training examples per silo)'"),
    ClaimSpec(_P, "app_i1.n_train.full", "App. I.1", "MNIST training examples per silo (all of MNIST)", 8673,
              "printed", "App. I.1, 'There are n_i = n = 8673 training and 2168 test examples per silo'"),
    ClaimSpec(_P, "app_i1.n_test.full", "App. I.1", "MNIST test examples per silo (all of MNIST)", 2168, "printed",
              "App. I.1, 'There are n_i = n = 8673 training and 2168 test examples per silo'",
              explanation=Erratum(2169, "A silo draws 2 × 5421 = 10842 images (smallest digit count 5421 of the MNIST "
                                    "training split) and splits them 80/20 with scikit-learn's rule, leaving "
                                    "⌈0.2 · 10842⌉ = 2169 test images, as 10842 − 8673 = 2169 also says.",
                              summary="80/20 split of 2 × 5421 images leaves ⌈0.2 · 10842⌉ = 2169 test images")),
    ClaimSpec(_P, "app_i2.n_train.pooled", "App. I.2", "insurance training records N_0 (all silos)", 1070, "printed",
              "App. I.2, 'Hyperparameter tuning': 'F(w, X, Y) = ||Y − wX||²/2N_0 where N_0 ∈ {1070, 268} (1070 for "
              "train, 268 for test)'; ours: the 80/20 split of the 1,338 insurance records with scikit-learn's rule"),
    ClaimSpec(_P, "app_i2.n_test.pooled", "App. I.2", "insurance test records N_0 (all silos)", 268, "printed",
              "App. I.2, 'Hyperparameter tuning': 'N_0 ∈ {1070, 268} (1070 for train, 268 for test)'; ours: "
              "⌈0.2 · 1338⌉ of the pooled 80/20 split"),
)

# ------------------------------------------------------------------ App. I: the noise calibrations
_MB_LOC = ("App. I.1 'Choice of σ² and K': σ² = 8L² ln(1/δ) R/(n² ε²) 'provides ISRL-DP by Theorem 1 of (Abadi et "
           "al., 2016) if K = n√ε/(2√R)' (same σ in App. I.2, I.3); δ = 1/n²; checked with the tight PLD of one silo's "
           "R messages under the paper's replace-one ISRL-DP (Def. 2)")
_LOCAL_LOC = ("App. I.3 'For ISRL-DP Local SGD, one needs σ² = 8L² ln(1/δ) RK/(n² ε²)' (the baseline of Figs. 4-9); "
              "δ = 1/n²; checked with the tight PLD of the silo's R·K noisy single-record steps (replace-one, Def. 2)")

# the settings of the paper profile: name -> (n, R, K, MB-SGD ε, Local SGD ε)
_SETTINGS = {
    "mnist": ((0.75, 1.5, 3.0, 6.0, 12.0, 18.0), (0.5, 0.75, 1.5, 3.0)),
    "insurance-N10": ((0.125, 0.25, 0.5, 1.0, 2.0, 3.0), (0.5, 0.75, 1.5, 3.0)),
    "insurance-N5": ((0.125, 0.25, 0.5, 1.0, 2.0, 3.0), (0.5, 0.75, 1.5, 3.0)),
    "insurance-N3": ((0.125, 0.25, 0.5, 1.0, 2.0, 3.0), (0.5, 0.75, 1.5, 3.0)),
    "insurance-N15": ((0.125, 0.25, 0.5, 1.0, 2.0, 3.0), (0.5, 0.75, 1.5, 3.0)),
    "obesity": ((0.5, 1.0, 3.0, 6.0, 9.0), (0.5, 0.75, 1.5, 3.0)),
}
_SIZE_TEXT = {
    "mnist": "n = 1238, R = 35, K = 443",
    "insurance-N10": "n = 107, R = 35, K = 15",
    "insurance-N5": "n = 214, R = 35, K = 31",
    "insurance-N3": "n = 356, R = 35, K = 52",
    "insurance-N15": "n = 72, R = 35, K = 10",
    "obesity": "n = 213, R = 100, K = 31",
}
# (setting, algorithm, claimed ε) -> (tight replace-one ε, tight add/remove ε): ours, where App. I's σ misses its ε
_MISSES = {
    ("mnist", "mb-sgd", 12.0): (13.0334, 8.1325),
    ("mnist", "mb-sgd", 18.0): (23.670, 17.6927),
    ("mnist", "local-sgd", 1.5): (1.7869, 1.4619),
    ("mnist", "local-sgd", 3.0): (26.7314, 24.8168),
    ("insurance-N10", "local-sgd", 3.0): (4.7725, 4.1279),
    ("insurance-N5", "local-sgd", 3.0): (9.3597, 8.6297),
    ("insurance-N3", "local-sgd", 1.5): (1.6172, 1.2922),
    ("insurance-N3", "local-sgd", 3.0): (17.3668, 16.3366),
    ("insurance-N15", "local-sgd", 3.0): (3.5956, 2.8866),
    ("obesity", "mb-sgd", 9.0): (9.3885, 5.5704),
    ("obesity", "local-sgd", 3.0): (3.1419, 2.1737),
}


def _calibration(setting: str, algorithm: str, eps: float) -> ClaimSpec:
    name = {"mb-sgd": "ISRL-DP MB-SGD", "local-sgd": "ISRL-DP Local SGD"}[algorithm]
    key = f"calib.{setting}.{algorithm}.eps={eps:g}"
    artifact = f"App. I σ, {setting}"
    location = _MB_LOC if algorithm == "mb-sgd" else _LOCAL_LOC
    miss = _MISSES.get((setting, algorithm, eps))
    if miss is None:
        return ClaimSpec(_P, key, artifact, f"{name} noise is ({eps:g}, 1/n²)-ISRL-DP (tight replace-one ε ≤ {eps:g})",
                         True, "derived", location, note=_SIZE_TEXT[setting])
    tight, add_remove = miss
    why = ("replacing a record moves the minibatch mean by 2L/K, and Abadi et al.'s Theorem 1 (the cited "
           "justification) is an add/remove statement" if algorithm == "mb-sgd" else
           "the σ formula assumes App. I's large batch, but the baseline takes K single-record steps per round, so "
           "the noise is far too small beyond small ε (this favours the baseline in Figs. 4-9)")
    evidence = (f"The tight PLD of one silo ({_SIZE_TEXT[setting]}, δ = 1/n²) gives ε = {tight:g} under the paper's "
                f"replace-one ISRL-DP ({add_remove:g} under add/remove): {why}.")
    summary = ("App. I's σ meets Abadi et al.'s add/remove bound, not the paper's replace-one ISRL-DP (Def. 2)"
               if algorithm == "mb-sgd" else
               "σ assumes App. I's large batch; K single-record steps a round get far too little noise")
    return ClaimSpec(_P, key, artifact,
                     f"ε delivered by {name}'s App. I noise for the claimed ε = {eps:g} (tight, replace-one)", eps,
                     "derived", location, rtol=1e-3,
                     explanation=Erratum(tight, evidence, rtol=1e-3, summary=summary), note=_SIZE_TEXT[setting])


_CALIBRATION = tuple(
    _calibration(setting, algorithm, eps)
    for setting, (mb_eps, local_eps) in _SETTINGS.items()
    for algorithm, epsilons in (("mb-sgd", mb_eps), ("local-sgd", local_eps))
    for eps in epsilons
    if eps <= {"mnist": 18.0, "obesity": 9.0}.get(setting, 3.0)
)

# ------------------------------------------------------------------ Fig. 4 (MNIST, §6 and App. I.1)
_FIG4_TEXT = ("§6, on Fig. 4: 'ISRL-DP MB-SGD outperforms (non-private) Local SGD for ε ≥ 12 and outperforms "
              "ISRL-DP Local SGD'")


# Fig. 4 (M = 12): the paper-profile run (20 trials) per ε: Local − MB mean test error, paired over trials, ± its SE
_FIG4_M12_EVIDENCE = (
    "The paper-profile run (20 trials, figures/paper/001_isrl_dp/mnist_selected_runs.csv) has ISRL-DP MB-SGD below "
    "ISRL-DP Local SGD at ε = 0.75, 6, 12, 18 by 3 to 6 paired standard errors (Local − MB: +0.0112 ± 0.0036, "
    "+0.0021 ± 0.0010, +0.0036 ± 0.0006, +0.0045 ± 0.0007), but at ε = 1.5 and 3 the two curves are within trial "
    "noise: −0.0014 ± 0.0019 and +0.0005 ± 0.0013 (0.7 and 0.4 SE). 'Outperforms at every ε' is not resolved at 20 "
    "trials there; ours loses at ε = 1.5 by 0.14 pp, well inside its error bar.")


def _fig4(m: int) -> tuple[ClaimSpec, ...]:
    return (
        ClaimSpec(_P, f"fig4.M={m}.beats_nonprivate_local_from_eps", f"Fig. 4 (M = {m})",
                  "smallest tested ε from which ISRL-DP MB-SGD's mean test error stays ≤ non-private Local SGD's",
                  12.0, "printed", _FIG4_TEXT, scale="full"),
        ClaimSpec(_P, f"fig4.M={m}.mb_beats_isrl_local", f"Fig. 4 (M = {m})",
                  "ISRL-DP MB-SGD's mean test error is below ISRL-DP Local SGD's at every tested ε", True, "derived",
                  f"{_FIG4_TEXT}; check: mean over trials of the selected runs, at every tested ε", scale="full",
                  note="an ordering of two noisy curves whose noise σ ∝ 1/n: at a reduced silo size (quick: n = 208, "
                       "6x the paper's noise-to-signal) the two ISRL-DP curves lie within each other's error bars",
                  explanation=None if m != 12 else Inconclusive(
                      False, _FIG4_M12_EVIDENCE,
                      summary="within trial noise at ε = 1.5 and 3 (0.7 and 0.4 paired SE); clear at the other ε")),
    )


_FIG7_TEXT = ("App. I.1, on Fig. 7 (M = 18): 'The results are qualitatively similar to the results presented in the "
              "main body for MNIST with M=25,12', i.e. §6's Fig. 4 statement")


def _fig7(m: int = 18) -> tuple[ClaimSpec, ...]:
    """App. I.1's Fig. 7 (M = 18, N = 25, everything else as Fig. 4): 'qualitatively similar' to Fig. 4, so Fig. 4's
    two statements (§6) are derived for it; measured at the paper's scale as Fig. 4's are."""
    return (
        ClaimSpec(_P, f"fig7.M={m}.beats_nonprivate_local_from_eps", f"Fig. 7 (M = {m})",
                  "smallest tested ε from which ISRL-DP MB-SGD's mean test error stays ≤ non-private Local SGD's",
                  12.0, "derived", f"{_FIG7_TEXT}: {_FIG4_TEXT}", scale="full"),
        ClaimSpec(_P, f"fig7.M={m}.mb_beats_isrl_local", f"Fig. 7 (M = {m})",
                  "ISRL-DP MB-SGD's mean test error is below ISRL-DP Local SGD's at every tested ε", True, "derived",
                  f"{_FIG7_TEXT}: {_FIG4_TEXT}; check: mean over trials of the selected runs, at every tested ε",
                  scale="full"),
    )


_MNIST = (
    *_fig4(25),
    *_fig4(12),
    *_fig7(18),
    ClaimSpec(_P, "app_i1.upsilon2", "App. I.1", "maximum heterogeneity υ*² = (1/N) Σ ‖∇F̂_i(w*)‖² (p = 0)", 0.17,
              "printed", "App. I.1, 'The maximum υ*² is about 0.17 for this problem'", atol=0.01, scale="full",
              note="depends on the silos' size: measured on the paper's n = 1238 silos"),
)

# ------------------------------------------------------------------ Figs. 5, 8, 9 (insurance, §6 and App. I.2)
_FIG5_TEXT = ("§6, on Fig. 5: 'ISRL-DP MB-SGD outperforms ISRL-DP Local SGD, especially in the high privacy regime "
              "ε ≤ 2'")
_NAIVE_TEXT = "App. I.2, 'For ε ≈ 1, ISRL-DP MB-SGD tends to outperform the naiive predictor by 30−40%'"
_COST_TEXT = "App. I.2, 'the utility impact of ISRL-DP is relatively insignificant for this problem when ε ≈ 3'"


# (N, M) -> our 1 − relative RMSE of ISRL-DP MB-SGD at ε = 1, paper profile, where it misses the printed 30−40%
_NAIVE_GAINS = {(10, 5): 0.0781, (5, 2): 0.1682, (15, 5): 0.0229, (10, 2): -0.0398, (5, 5): 0.2608}
_NAIVE_EVIDENCE = (
    "The paper-profile run (20 trials, 10 stepsizes × 5 clip thresholds × 3 repetitions, R = 35, ε ∈ {0.125 … 3}) puts "
    "1 − relative RMSE at ε = 1 inside 30−40% only for N = M = 3 (0.340; n = 356 training records per silo). With "
    "more, smaller silos the per-silo noise σ ∝ √R/(nε) grows (n = 214 at N = 5, 107 at N = 10, 72 at N = 15) and the "
    "gain falls to 0.26 (N = M = 5), 0.17 (N = 5, M = 2), 0.08 (N = 10, M = 5), 0.02 (N = 15, M = 5) and −0.04 "
    "(N = 10, M = 2); non-private MB-SGD itself gains only ≈ 0.37 (relative RMSE 0.63). The printed range holds for "
    "N = M = 3 only (table figures/paper/001_isrl_dp/fig5_insurance.csv, fig8_insurance.csv, fig9_insurance.csv).")
_NAIVE_SUMMARY = "30−40% only at N = M = 3 (n = 356); smaller silos get more noise: gains −0.04…0.26"


# (N, M) -> our relative RMSE of ISRL-DP MB-SGD at ε = 3 minus non-private MB-SGD's, paper profile, where it is
# above the 0.05 read as "insignificant"
_COST_GAPS = {(5, 5): 0.0570, (5, 2): 0.0753, (10, 5): 0.0865, (15, 5): 0.1262, (10, 2): 0.1592}
_COST_EVIDENCE = (
    "The paper-profile run (20 trials, 10 stepsizes × 5 clip thresholds × 3 repetitions, R = 35) puts the cost of "
    "privacy at ε = 3 (mean relative RMSE of ISRL-DP MB-SGD minus non-private MB-SGD's) at 0.004 for N = M = 3 "
    "(n = 356 training records per silo) and above it wherever the silos are smaller: 0.057 (N = M = 5, n = 214), "
    "0.075 (N = 5, M = 2), 0.087 (N = 10, M = 5, n = 107), 0.126 (N = 15, M = 5, n = 72), 0.159 (N = 10, M = 2), "
    "against non-private MB-SGD's relative RMSE of about 0.63: the per-silo noise σ ∝ √R/(nε) grows as n shrinks, and "
    "fewer silos per round (M = 2) average less of it away. 'Insignificant at ε ≈ 3' holds for N = M = 3 only (tables "
    "figures/paper/001_isrl_dp/fig5_insurance.csv, fig8_insurance.csv, fig9_insurance.csv).")
_COST_SUMMARY = "insignificant only at N = M = 3 (n = 356); smaller silos, more noise: +0.06…0.16"


# The authors' insurance clipping (a named mode, dpcore.papers.p001_isrl.panels.insurance_batch_mean_mode)
_AUTHORS_CLIP = ("lowya/Private-Federated-Learning-Without-a-Trusted-Server@421aeb6, DP_FL_insurance_linreg_FINAL.py "
                 "lines 187-190 (ACnoisyMB_sgd: b = grad_eval(w, K, m); c = min(1, L/‖b‖); g += b·c + gauss_AC(...))")
_ORDER_EVIDENCE = (
    "Run as the paper describes (each record's gradient clipped, Abadi et al.), the paper profile (20 trials, 10 "
    "stepsizes × 5 clip thresholds × 3 repetitions) has ISRL-DP MB-SGD above ISRL-DP Local SGD at ε = 0.25, 0.5, 1, 2 "
    "(N = 10, M = 5) and at ε = 0.5, 2 (N = 5, M = 2), and below it in only 8% of the Figs. 8-9 (panel, ε). The "
    f"authors' script clips each silo's minibatch *mean* once ({_AUTHORS_CLIP}) with App. I's σ: one record then moves "
    "a message by 2L instead of 2L/K, K times less noise per unit of sensitivity than the claimed ε needs (the ε that "
    "ran is only bounded, by 7.9 … 25,000 over the panels: table insurance_authors_batch_mean). Under that mode (same "
    "silos, grid, σ and seeds) ISRL-DP MB-SGD is below Local SGD at every ε ≤ 2 in all six panels, 88% of the "
    "Figs. 8-9 (panel, ε), and Local SGD wins at ε = 3 for N = M = 3, as printed (rows *.authors_batch_mean.*).")
_ORDER_SUMMARY = "holds under the authors' batch-mean clipping (noise K× too small), not per-example clipping"
_MODE_NOTE = ("mode authors_batch_mean: ISRL-DP MB-SGD clips each silo's minibatch mean once, as the authors' script "
              "does; σ is App. I's, so the ε that ran is not the claimed ε (see table insurance_authors_batch_mean)")


def _mode_orderings(num_silos: int, m: int) -> tuple[ClaimSpec, ...]:
    tag, art = _panel_tag(num_silos, m), f"Fig. 5 (N = {num_silos}, M = {m}), mode authors_batch_mean"
    return (ClaimSpec(_P, f"fig5.{tag}.authors_batch_mean.mb_beats_local.eps_le_2", art,
                      "under the authors' batch-mean clipping: ISRL-DP MB-SGD's mean relative RMSE is below ISRL-DP "
                      "Local SGD's at every tested ε ≤ 2", True, "audit",
                      f"{_FIG5_TEXT}, read against {_AUTHORS_CLIP}; check: mean over trials of the selected runs at "
                      "each tested ε ≤ 2", note=_MODE_NOTE),)


def _panel_tag(num_silos: int, m: int) -> str:
    return f"N={num_silos}.M={m}"


def _insurance_panel(num_silos: int, m: int, figure: str) -> tuple[ClaimSpec, ...]:
    tag, art = _panel_tag(num_silos, m), f"{figure} (N = {num_silos}, M = {m})"
    specs = [
        ClaimSpec(_P, f"app_i2.{tag}.naive_gain.eps=1", art,
                  "1 − relative test RMSE of ISRL-DP MB-SGD at ε = 1 (gain over the naive predictor)",
                  Interval(0.3, 0.4), "printed", _NAIVE_TEXT + " (the printed range, compared as a range)",
                  scale="full", explanation=None if (num_silos, m) not in _NAIVE_GAINS else NotReproduced(
                      _NAIVE_GAINS[(num_silos, m)], _NAIVE_EVIDENCE, atol=0.03, summary=_NAIVE_SUMMARY)),
        ClaimSpec(_P, f"app_i2.{tag}.privacy_cost.eps=3", art,
                  "relative test RMSE of ISRL-DP MB-SGD at ε = 3 minus non-private MB-SGD's", 0.0, "derived",
                  _COST_TEXT + "; 'insignificant' read as at most 0.05 relative RMSE", atol=0.05, scale="full",
                  explanation=None if (num_silos, m) not in _COST_GAPS else NotReproduced(
                      _COST_GAPS[(num_silos, m)], _COST_EVIDENCE, atol=0.03, summary=_COST_SUMMARY)),
    ]
    if figure == "Fig. 5":
        specs += [
            ClaimSpec(_P, f"fig5.{tag}.mb_beats_local.eps_le_2", art,
                      "ISRL-DP MB-SGD's mean relative RMSE is below ISRL-DP Local SGD's at every tested ε ≤ 2", True,
                      "derived", _FIG5_TEXT + "; check: mean over trials of the selected runs at each tested ε ≤ 2",
                      explanation=NotReproduced(False, _ORDER_EVIDENCE, summary=_ORDER_SUMMARY)),
            *_mode_orderings(num_silos, m),
            ClaimSpec(_P, f"fig5.{tag}.ratio_to_local_sgd.eps_ge_2", art,
                      "mean relative RMSE of ISRL-DP MB-SGD over the tested ε ≥ 2 / non-private Local SGD's", 1.0,
                      "derived", "§6, on Fig. 5: 'For ε ≥ 2, ISRL-DP MB-SGD is in line with (non-private) Local SGD'"
                      "; 'in line' read as within 10%", rtol=0.1, scale="full"),
        ]
    return tuple(specs)


_INSURANCE = (
    *_insurance_panel(10, 5, "Fig. 5"),
    *_insurance_panel(5, 2, "Fig. 5"),
    *_insurance_panel(15, 5, "Fig. 8"),
    *_insurance_panel(10, 2, "Fig. 8"),
    *_insurance_panel(3, 3, "Fig. 9"),
    *_insurance_panel(5, 5, "Fig. 9"),
    ClaimSpec(_P, "app_i2.below_naive.most", "App. I.2",
              "ISRL-DP MB-SGD's relative RMSE is below 1 at most tested (panel, ε)", True, "derived",
              "App. I.2, 'the ISRL-DP FL algorithms still outperform this predictor for most values of ε (except for "
              "some experiments when ε ≈ 0)'; check: share of (panel, ε) with mean relative RMSE < 1 is > 1/2"),
    ClaimSpec(_P, "figs8_9.mb_beats_local.most", "Figs. 8-9",
              "ISRL-DP MB-SGD's mean relative RMSE is below ISRL-DP Local SGD's at most tested (panel, ε)", True,
              "derived", "App. I.2, 'ISRL-DP MB-SGD continues to outperform ISRL-DP Local SGD in most tested "
              "setups/privacy levels'; check: share of (panel, ε) of Figs. 8-9 where it does is > 1/2", scale="full",
              note="needs the Figs. 8-9 panels: a reduced run has only N = M = 3, the setting the paper names as "
                   "the exception at ε → 3", explanation=NotReproduced(False, _ORDER_EVIDENCE, summary=_ORDER_SUMMARY)),
    ClaimSpec(_P, "figs8_9.authors_batch_mean.mb_beats_local.most", "Figs. 8-9, mode authors_batch_mean",
              "under the authors' batch-mean clipping: ISRL-DP MB-SGD's mean relative RMSE is below ISRL-DP Local "
              "SGD's at most tested (panel, ε)", True, "audit",
              "App. I.2, 'ISRL-DP MB-SGD continues to outperform ISRL-DP Local SGD in most tested setups/privacy "
              f"levels', read against {_AUTHORS_CLIP}; check: share of (panel, ε) of Figs. 8-9 where it does is > 1/2",
              scale="full", note=_MODE_NOTE),
    ClaimSpec(_P, "fig9.N=3.M=3.authors_batch_mean.local_beats_mb.eps=3", "Fig. 9 (N = M = 3), mode authors_batch_mean",
              "under the authors' batch-mean clipping: ISRL-DP Local SGD's mean relative RMSE is below ISRL-DP "
              "MB-SGD's at ε = 3", True, "audit",
              "App. I.2, 'ISRL-DP Local SGD outperforms ISRL-DP MB-SGD as ε → 3 (e.g. Fig. 9, and N = M = 3)', read "
              f"against {_AUTHORS_CLIP}; check: means over trials at ε = 3", note=_MODE_NOTE),
    ClaimSpec(_P, "fig9.N=3.M=3.local_beats_mb.eps=3", "Fig. 9 (N = M = 3)",
              "ISRL-DP Local SGD's mean relative RMSE is below ISRL-DP MB-SGD's at ε = 3", True, "derived",
              "App. I.2, 'ISRL-DP Local SGD outperforms ISRL-DP MB-SGD as ε → 3 (e.g. Fig. 9, and N = M = 3)'; "
              "check: means over trials at ε = 3"),
)

# ------------------------------------------------------------------ Fig. 6 (obesity, §6 and App. I.3)
_FIG6_TEXT = ("§6, on Fig. 6: 'our algorithm significantly outperforms ISRL-DP Local SGD by 10−30% across all "
              "privacy levels'")
_SCRIPT_EVIDENCE = (
    "Run as the paper describes (each silo adds N(0, σ²) to its mean minibatch gradient), the paper profile (3 trials, "
    "M = 3 and 7, ε ∈ {0.5, 1, 3, 6, 9}) gives gains of −10% … +11%, not 10−30%; the authors' obesity script adds one "
    "Gaussian draw at the server instead (silo messages noiseless, not ISRL-DP, √M/K = 0.056 (M = 3) of the noise), "
    "and with that noise the same runs give +7% … +44% (table fig6_authors_script_noise)."
)
_SCRIPT_SUMMARY = "per-silo noise as printed gives −10…+11 %; the authors' script adds far less noise (+7…+44 %)"
# (M, ε) -> our gain at the paper profile (3 trials, R = 100, K = 31, per-silo noise), where it misses 10−30%
_FIG6_GAINS = {
    (3, 0.5): 0.0176, (3, 1.0): 0.0139, (3, 3.0): 0.0546, (3, 6.0): -0.0782, (3, 9.0): -0.0952,
    (7, 0.5): -0.0406, (7, 1.0): -0.0761, (7, 3.0): -0.0060, (7, 6.0): 0.0387,
}


def _fig6(m: int) -> tuple[ClaimSpec, ...]:
    art = f"Fig. 6 (M = {m})"
    gains = []
    for eps in (0.5, 1.0, 3.0, 6.0, 9.0):
        ours = _FIG6_GAINS.get((m, eps))
        gains.append(ClaimSpec(
            _P, f"fig6.M={m}.gain.eps={eps:g}", art,
            f"relative test-error reduction (Local − MB)/Local of ISRL-DP MB-SGD vs ISRL-DP Local SGD at ε = {eps:g}",
            Interval(0.1, 0.3), "printed", _FIG6_TEXT + " (the printed range, compared as a range)", scale="full",
            explanation=None if ours is None else NotReproduced(ours, _SCRIPT_EVIDENCE, atol=0.02,
                                                                summary=_SCRIPT_SUMMARY)))
    beats = ClaimSpec(_P, f"fig6.M={m}.mb_beats_local.all_eps", art,
                      "ISRL-DP MB-SGD's mean test error is below ISRL-DP Local SGD's at every tested ε", True,
                      "derived", _FIG6_TEXT + "; check: means over trials at every tested ε",
                      explanation=NotReproduced(False, _SCRIPT_EVIDENCE, summary=_SCRIPT_SUMMARY))
    return (*gains, beats)


_OBESITY = (
    ClaimSpec(_P, "app_i3.lipschitz", "App. I.3", "L = 2 max‖x‖ over the pre-processed training data", 20.0,
              "printed", "App. I.3, 'L = 2 max_{x∈X} ‖x‖ = 20 is an upper bound on the Lipschitz parameter ... "
              "estimated directly from the pre-processed training data' (an estimate: compared within 10%)",
              rtol=0.1, note="the noise is calibrated to the printed L = 20"),
    *_fig6(3),
    *_fig6(7),
)

# ------------------------------------------------------------------ Fig. 3 (the rates table, M = N, logs omitted)
_FIG3 = "Fig. 3 (rates)"
# (setting, bound) -> (equation, exponent of n, exponent of N) of the privacy term, read off the printed formula
_FIG3_EXPONENTS = {
    ("iid-convex", "isrl-upper"): ("eq. (4), Thm 2.1: (LD/√M)·√(d ln(1/δ0))/(ε0 n)", -1.0, -0.5),
    ("iid-strongly-convex", "isrl-upper"): ("eq. (5), Thm 2.1: (L²/(μM))·d ln(1/δ0)/(ε0² n²)", -2.0, -1.0),
    ("noniid-convex", "isrl-upper"): ("eq. (6), Thm 3.1: (β^{1/4} L D^{3/2} √(d ln(1/δ0))/(ε0 n √N))^{4/5}",
                                      -0.8, -0.4),
    ("noniid-strongly-convex", "isrl-upper"): ("eq. (7), Thm 3.1: √κ (L²/μ) d ln(1/δ0)/(ε0² n² N)", -2.0, -1.0),
    ("erm-convex", "isrl-upper"): ("eq. (8), Thm 4.1: LD √(d ln(1/δ0))/(ε0 n √M)", -1.0, -0.5),
    ("erm-strongly-convex", "isrl-upper"): ("eq. (9), Thm 4.1: (L²/μ) d ln(1/δ0)/(ε0² n² M)", -2.0, -1.0),
    ("iid-convex", "sdp-upper"): ("Thm 5.1: LD √(d ln(1/δ))/(ε n N)", -1.0, -1.0),
    ("iid-strongly-convex", "sdp-upper"): ("Thm 5.1: (L²/μ) d ln(1/δ)/(ε² n² N²)", -2.0, -2.0),
    ("noniid-convex", "sdp-upper"): ("eq. (10), Thm 5.2: (β^{1/4} L D^{3/2} √d ln(d/δ)/(ε n N))^{4/5}", -0.8, -0.8),
    ("noniid-strongly-convex", "sdp-upper"): ("eq. (11), Thm 5.2: √κ (L²/μ) d ln(1/δ)/(ε² n² N²)", -2.0, -2.0),
}
_GAP_EVIDENCE = (
    "The privacy terms give (6)/(4) = (βD/L)^{1/5} x^{-1/5} with x = √d/(ε0 n √N): eq. (6) is x^{4/5}, eq. (4) is "
    "x. In the non-trivial regime x < 1 the factor by which (6) exceeds (4) is (ε0 n √N/√d)^{1/5} ≥ 1; the printed "
    "(√d/(ε0 n √N))^{1/5} ≤ 1 is its reciprocal (it would make (6) beat the optimal (4)).")


def _fig3_exponents() -> tuple[ClaimSpec, ...]:
    specs = []
    for (setting, bound), (where, n_exp, silos_exp) in _FIG3_EXPONENTS.items():
        kind = "ISRL-DP" if bound == "isrl-upper" else "shuffle-DP"
        for variable, value in (("n", n_exp), ("N", silos_exp)):
            specs.append(ClaimSpec(
                _P, f"fig3.{setting}.{bound}.privacy_exponent.{variable}", _FIG3,
                f"exponent of {variable} in the privacy term of the {kind} upper bound, {setting} (M = N)", value,
                "derived", f"read off {where} as printed (M = N, logs omitted as in Fig. 3); ours: log-log slope of "
                "dpcore.papers.p001_isrl.rates", atol=1e-9))
    return tuple(specs)


_RATES = (
    *_fig3_exponents(),
    ClaimSpec(_P, "fig3.caption.c2_exponent", _FIG3,
              "exponent of ε0 in C² = R = n/K of Thm E.1's convex K (M = N, logs omitted)", 0.4, "printed",
              "Fig. 3 caption, 'C² := (ε0 n √N/√d)^{2/5}' (the non-i.i.d. lower-bound row uses C = √R, App. D.3.3)",
              atol=1e-9),
    ClaimSpec(_P, "fig3.noniid_vs_iid.sqrt_kappa", _FIG3,
              "exponent of κ (β varied, μ fixed) in the ratio of the privacy terms of eq. (7) and eq. (5)", 0.5,
              "printed", "§3 after Thm 3.1, 'the bound 7 nearly matches the optimal i.i.d. bound 5 up to the factor "
              "Õ(√κ)'", atol=1e-9),
    ClaimSpec(_P, "fig3.noniid_vs_iid.gap_exponent", _FIG3,
              "exponent a of x = √d/(ε0 n √N) in the factor (6)/(4) ∝ x^a by which eq. (6) exceeds eq. (4)", 0.2,
              "printed", "§3 after Thm 3.1, 'The gap between the bound 6 and the i.i.d. bound 4 is "
              "O((√d/ε0 n √N)^{1/5})'; ours: −(log-log slope in n of the ratio), x ∝ 1/n", atol=1e-9,
              explanation=Erratum(-0.2, _GAP_EVIDENCE, atol=1e-9,
                              summary="(6)/(4) = (ε0 n √N/√d)^{1/5}: the printed factor is its reciprocal")),
    ClaimSpec(_P, "fig3.iid_convex.privacy_for_free", _FIG3,
              "d at which the privacy term of eq. (4) equals its statistical term, divided by ε0² n", 1.0, "derived",
              "§1, 'the ISRL-DP rates nearly match the optimal non-private rates if d ≲ n ε0² (\"privacy for "
              "free\")'; the crossing d = ε0² n makes the constant 1", rtol=1e-6),
    *(ClaimSpec(_P, f"fig3.{setting}.upper_over_lower", _FIG3,
                f"privacy term of the ISRL-DP upper bound over the lower bound's, {setting}, at L = μD and "
                "x < 1 (Fig. 3: tight up to logs)", 1.0, "derived",
                f"Thm {thm} is optimal up to logs (footnote 8: up to a factor φ/L, and μD/L when strongly convex): "
                "the privacy terms of the upper and lower bounds of Fig. 3 coincide", rtol=1e-9)
      for setting, thm in (("iid-convex", "2.1/2.2"), ("iid-strongly-convex", "2.1/2.2"),
                           ("erm-convex", "4.1/F.3"), ("erm-strongly-convex", "4.1/F.3"))),
)

ACCOUNTING_SPECS: tuple[ClaimSpec, ...] = (*_SIZES, *_CALIBRATION, *_RATES)
RATES_SPECS: tuple[ClaimSpec, ...] = _RATES
MNIST_SPECS: tuple[ClaimSpec, ...] = _MNIST
INSURANCE_SPECS: tuple[ClaimSpec, ...] = _INSURANCE
OBESITY_SPECS: tuple[ClaimSpec, ...] = _OBESITY
SPECS: tuple[ClaimSpec, ...] = (*ACCOUNTING_SPECS, *MNIST_SPECS, *INSURANCE_SPECS, *OBESITY_SPECS, *AUDIT_SPECS)
CLAIMS = specs_by_key(SPECS)
NOTEBOOKS: tuple[NotebookClaims, ...] = (
    NotebookClaims.of("001_isrl_dp/privacy_accounting", "App. I silo sizes, noise calibrations, Fig. 3 rates",
                      ACCOUNTING_SPECS),
    NotebookClaims.of("001_isrl_dp/mnist_logistic", "Figs. 4, 7 (MNIST)", MNIST_SPECS),
    NotebookClaims.of("001_isrl_dp/insurance_linear", "Figs. 5, 8, 9 (insurance)", INSURANCE_SPECS),
    NotebookClaims.of("001_isrl_dp/obesity_softmax", "Fig. 6 (obesity)", OBESITY_SPECS),
    *AUDIT_NOTEBOOKS,
)


# ---------------------------------------------------------------------------------------------- findings (issue 41)
GPU_KEYS: tuple[str, ...] = ()

FINDINGS: tuple[Finding, ...] = (
    Finding("001", "rates", "reproduced", "Fig. 3's excess-risk rates follow from the paper's theorems as printed.",
            "Fig. 3's rates reproduced", False, ("fig3.erm-*", "fig3.iid-*", "fig3.noniid-*"),
            "dpcore.papers.p001_isrl.rates, notebook privacy_accounting"),
    Finding("001", "calib_add_remove", "erratum",
            "App. I's σ for MB-SGD meets Abadi et al.'s add/remove bound, not the paper's replace-one ISRL-DP "
            "(Def. 2): "
            "the printed ε = 12 is 13.03 and ε = 18 is 23.67 under a tight PLD accountant.",
            "App. I's MB-SGD noise is calibrated add/remove, not replace-one", True, ("calib.*.mb-sgd.*",),
            "dpcore.papers.p001_isrl.accounting (tight PLD), notebook privacy_accounting"),
    Finding("001", "calib_local_sgd", "erratum",
            "Local SGD's σ assumes App. I's large batch: K single-record steps per round get far too little noise "
            "(ε up to 26.7 for a printed ε = 3).", "Local SGD's noise is too small for its ε", True,
            ("calib.*.local-sgd.*",), "dpcore.papers.p001_isrl.accounting, notebook privacy_accounting"),
    Finding("001", "small_slips", "erratum",
            "Two small slips: App. I.1's test split is 2,169 images, not the printed count, and Fig. 3's non-i.i.d. "
            "to i.i.d. gap factor is printed as its reciprocal (exponent −1/5).", "two small slips (App. I.1, Fig. 3)",
            False, ("app_i1.n_test.full", "fig3.noniid_vs_iid.gap_exponent"), "notebook privacy_accounting"),
    Finding("001", "batch_mean_clipping", "not-reproduced",
            "'MB-SGD beats Local SGD' (Figs. 5, 8–9) holds only under the authors' batch-mean clipping, whose noise is "
            "K× too small for ISRL-DP; with per-example clipping at the printed ε it does not.",
            "'MB-SGD beats Local SGD' holds only with the authors' K× too small noise", True,
            ("fig5.N=10.M=5.mb_beats_local.eps_le_2", "fig5.N=5.M=2.mb_beats_local.eps_le_2",
             "figs8_9.mb_beats_local.most"),
            "figures/paper/001_isrl_dp/insurance_authors_batch_mean.csv (both readings), notebook insurance_linear",
            readings=(
                "per-example clipping as printed, ε = 0.125, 0.25, 0.5, 1, 2: MB-SGD − Local SGD relative RMSE "
                "−0.005, +0.017, +0.041, +0.034, +0.020 (N = 10, M = 5); below Local SGD at 8 % of Figs. 8–9's "
                "(panel, ε)",
                "mode authors_batch_mean (minibatch mean clipped once), ε that ran ≤ 15.4, 40.5, 119, 386, 1366: "
                "−0.046, −0.020, −0.057, −0.080, −0.012; below at every ε ≤ 2 in both Fig. 5 panels, 88 % of "
                "Figs. 8–9's",
            ),
            closest='mode authors_batch_mean, at an ε that ran of up to 1366 for a printed ε ≤ 2',
            untested="the authors' exact data splits per trial"),
    Finding("001", "insurance_gains", "not-reproduced",
            "App. I.2's 30–40 % gain over the naive predictor and 'insignificant' privacy cost are reached only at "
            "N = M = 3 (n = 356); the smaller silos of the other panels get more noise.",
            "App. I.2's gains hold only at N = M = 3", True, ("app_i2.*.naive_gain.*", "app_i2.*.privacy_cost.*"),
            "notebook insurance_linear at the paper profile (figures/paper/001_isrl_dp/)",
            readings=("per-example clipping at the paper's silo sizes, paper profile (figures/paper/001_isrl_dp/)",),
            closest='N = M = 3 (n = 356), which reaches 30–40 %',
            untested="the authors' exact data splits per trial"),
    Finding("001", "obesity_noise", "not-reproduced",
            "Fig. 6's 10–30 % gain is not reached with per-silo noise as printed (−10…+11 %); the authors' script adds "
            "one server-side draw (√M/K of the noise, not ISRL-DP) and gets +7…+44 %.",
            "Fig. 6's gain not reproduced with per-silo noise", True,
            ("fig6.M=3.*", "fig6.M=7.gain.eps=0.5", "fig6.M=7.gain.eps=1", "fig6.M=7.gain.eps=3",
             "fig6.M=7.gain.eps=6", "fig6.M=7.mb_beats_local.all_eps"),
            "table fig6_authors_script_noise, notebook obesity_softmax",
            readings=(
                'per-silo noise as printed (ISRL-DP): −10…+11 %',
                "the authors' script's one server-side draw (not ISRL-DP): +7…+44 % (table "
                'fig6_authors_script_noise)',
            ),
            closest="the authors' script's noise, which is not the printed mechanism",
            untested="the authors' exact preprocessing of the obesity data"),
    Finding("001", "batch_mean_mode_orderings", "audit",
            "Under the authors' batch-mean clipping (mode authors_batch_mean) the printed orderings hold: MB-SGD below "
            "Local SGD at every ε ≤ 2 in both Fig. 5 panels and at 88 % of Figs. 8–9's (panel, ε), Local SGD ahead "
            "at ε = 3 for N = M = 3, but at an ε that ran of up to 7.9–25,219 instead of 0.125–3.",
            "the printed orderings hold only under the authors' batch-mean clipping, at ε up to 25,219", True,
            ("fig5.*.authors_batch_mean.*", "figs8_9.authors_batch_mean.*", "fig9.*.authors_batch_mean.*"),
            "figures/paper/001_isrl_dp/insurance_authors_batch_mean.csv (epsilon_ran_upper), notebook "
            "insurance_linear"),
    Finding("001", "authors_batch_mean_audited", "audit",
            "Audited at toy scale (one silo's messages, GDP-style estimator, 95 %), the authors' batch-mean clipping "
            "has ε ≥ 12.47 where the paper claims 2; per-record clipping (Algorithm 2) at the same σ stays within it "
            "(ε ≥ 1.02).", "the authors' batch-mean clipping fails an audit at the claimed ε", True,
            ("audit.modes.*",), "figures/audit/authors_modes.csv (dpcore.papers.p001_isrl.audit_modes.mode_audits)"),
    Finding("001", "fig4_m12_noise", "inconclusive",
            "Fig. 4 (M = 12): MB-SGD below Local SGD at every ε is within trial noise at ε = 1.5 and 3 "
            "(0.7 and 0.4 paired standard errors); clear at the other ε.", "Fig. 4's M = 12 ordering inconclusive",
            False, ("fig4.M=12.mb_beats_isrl_local",), "notebook mnist_logistic at the paper profile"),
)
