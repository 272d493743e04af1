"""Claim specifications of paper 002: Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix".

Every number the notebook ``notebooks/002_modelmix/modelmix_accountant.ipynb`` compares, with where the
paper prints it (or how it follows from the paper), the tolerance and, where the paper's number cannot be
obtained as printed, an :class:`~dpcore.claims.Erratum` with the value we get instead.  The paper's text
has no page numbers in the version we use, so locations name the section and the sentence.

Tolerances of Fig. 3 (§4.3 prints the end values of panels (a)–(c) to one decimal):

* p = 25 and p = 100 (integer orders, corrected Corollary 4.1): ``atol=0.15``.  The printed values are
  rounded to 0.1 (±0.05), and the paper does not say on which order grid regular DP-SGD's noise was
  calibrated to ε = 200: TF-Privacy's grid (ours) gives z = 0.36694, Opacus's z = 0.36328, which moves
  these values by up to 0.23 (e.g. (a) p = 100: 15.35 -> 15.57).  0.15 admits rounding plus small
  numerical differences (the authors' MATLAB Riemann sum) but not the other calibration.
* plain ModelMix (p = 1, fractional orders): ``rtol=0.03``.  The authors' fractional order grid is not
  stated either; ours (TF-Privacy's, ≤ 64) gives 58.09 / 40.57 / 31.80 against the printed
  57.2 / 40.4 / 31.7 (+1.6 %, +0.4 %, +0.3 %), Opacus's grid with its own calibration 57.18 / 41.63 /
  31.79; the two standard grids differ from each other by up to 2.6 %.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpcore.claims import Claim, ClaimSpec, Erratum, Finding, NotebookClaims, specs_by_key
from dpcore.papers.p002_modelmix.audit_claims import AUDIT_NOTEBOOKS, AUDIT_SPECS
from dpcore.verdicts import TrainedRule

__all__ = ["SPECS", "CLAIMS", "NOTEBOOKS", "TITLE", "check_all"]

TITLE = "Xiao, Wan, Devadas, Differentially private deep learning with ModelMix"

_FIG3_LOC = "§4.3, paragraph on Fig. 3 (a-c) (q = 0.02, T = 5000, regular DP-SGD at eps = 200)"
_FIG3_NOTE = "z calibrated so that regular DP-SGD has eps = 200 (TF-Privacy orders, Mironov); u = (tau/eta)*B/c"
_P_TOL = "abs 0.15: printed to 0.1; calibrating z on Opacus's order grid instead moves the value by up to 0.23"
_P1_TOL = "rel 3 %: the authors' fractional order grid is not stated (TF-Privacy's and Opacus's differ by 2.6 %)"


def _fig3(panel: str, tau: str, curve: str, short: str, value: float) -> ClaimSpec:
    quantity = f"eps at T = 5000, {curve}, q = 0.02, tau = {tau}eta"
    if short == "modelmix":
        return ClaimSpec("002", f"fig3{panel}.eps.{short}", f"Fig. 3({panel})", quantity, value, "printed",
                         f"{_FIG3_LOC}: the printed triple for ({panel})", rtol=0.03,
                         note=f"{_FIG3_NOTE}; {_P1_TOL}")  # fmt: skip
    return ClaimSpec("002", f"fig3{panel}.eps.{short}", f"Fig. 3({panel})", quantity, value, "printed",
                     f"{_FIG3_LOC}: the printed triple for ({panel})", atol=0.15,
                     note=f"{_FIG3_NOTE}; corrected Corollary 4.1, integer orders 2..64; {_P_TOL}")  # fmt: skip


def _cor41(p: int, printed: float, expected: float, corrected: str) -> ClaimSpec:
    """The printed formula of Corollary 4.1 at the Fig. 3(c) setting: an erratum (expected = what it gives)."""
    evidence = (
        f"The formula of Corollary 4.1 (§4.2) as printed gives eps = {expected:.1f} here, not {printed}: it has no "
        "factor T and divides by (1 - alpha), so it is negative and meaningless.  The corrected form "
        "min_alpha [T*log(sum ...) + log(1/delta)]/(alpha - 1) (Theorem 4.1, Appendix C) gives "
        f"{corrected}, which reproduces {printed} (row fig3c.eps.p{p})."
    )
    return ClaimSpec("002", f"cor41.as_printed.fig3c.p{p}", "Corollary 4.1",
                     f"eps from the printed formula of Corollary 4.1 at the Fig. 3(c) setting, p = {p}", printed,
                     "printed", f"formula: Corollary 4.1, §4.2; value: §4.3, Fig. 3(c) p = {p}", atol=0.15,
                     explanation=Erratum(expected, evidence, rtol=1e-3))  # fmt: skip


SPECS: tuple[ClaimSpec, ...] = (
    # ---- Fig. 1 and Example 3.1 simulated (toys.py, notebook modelmix_toys; issue 14, i14-extras) ------------
    ClaimSpec("002", "fig1.mixed_in_envelope", "Fig. 1", "every mixed state lies in its step's envelope box", True,
              "derived", "Fig. 1 caption: 'The dashed lines represent the mixing ... The green area represents the "
              "approximated trajectory envelope'; Algorithm 1 line 10, eq. (9); check: on the drawn trajectory each "
              "mixed point lies in the box spanned coordinate-wise by the two states it mixes"),  # fmt: skip
    ClaimSpec("002", "fig1.gap_at_least_tau", "Fig. 1", "the mixed states differ by >= tau in every coordinate",
              True, "derived", "Algorithm 1, lines 6-8; Appendix A: 'ensures the per coordinate distance between "
              "w_k and w_{k-1} is at least tau_{k+1}'; check: every step of the drawn trajectory, after lines 6-8"),
    ClaimSpec("002", "fig1.step_from_mixed", "Fig. 1", "each gradient step starts at the mixed state", True,
              "derived", "Fig. 1 caption: 'the arrows represent gradient descent'; Algorithm 1 line 10, eq. (9); "
              "check: w_k = mixed_k - eta*(G_{k-1} + Delta_k) at every drawn step (gradient at the unmixed w_{k-1})"),
    ClaimSpec("002", "fig1.mixing_mean_midpoint", "Fig. 1", "in expectation the mixed state is the midpoint", True,
              "derived", "§3.2, before eq. (10): 'the mixed state in expectation is the average of the last two "
              "iterations' states (w_{k-1}+w_{k-2})/2'; check: Monte-Carlo mean of 20,000 mixes of the last drawn "
              "pair within 4 standard errors of the midpoint, per coordinate"),  # fmt: skip
    ClaimSpec("002", "ex3.1.sim.sampled_grad_std", "Example 3.1", "std of sampled per-sample gradients", 49.7,
              "printed", "§3.3, Example 3.1: 'the standard deviation of the per-sample stochastic gradient, where we "
              "randomly sample x' ... is 49.7 for any w'", atol=0.5,
              note="200,000 sampled gradients at each of w = 20 and w = 0, pooled; exact value 49.67"),  # fmt: skip
    ClaimSpec("002", "ex3.1.sim.sampled_clipped_grad.w20", "Example 3.1", "mean sampled clipped gradient, w=20, c=1",
              0.33333333333333331, "printed", "§3.3, Example 3.1: 'At w=20, the expectation of the clipped stochastic "
              "gradient is 1/3 rather than 0'", atol=0.01,
              note="mean of 200,000 sampled clipped gradients (standard error 0.002)"),  # fmt: skip
    ClaimSpec("002", "ex3.1.sim.sampled_clipped_grad.w0", "Example 3.1", "mean sampled clipped gradient, w=0, c=1",
              0.33333333333333331, "printed", "§3.3, Example 3.1: 'say w=0 and grad F(0) = -20, the expectation of "
              "the clipped stochastic gradient is still 1/3'", atol=0.01,
              note="mean of 200,000 sampled clipped gradients (standard error 0.002)"),  # fmt: skip
    ClaimSpec("002", "ex3.1.sim.limit.c1", "Example 3.1", "where expected clipped descent stops, c = 1", -10.0,
              "derived", "§3.3, before Example 3.1: 'even without any noise perturbation, clipped SGD could fail "
              "when c is much smaller than the magnitude of sampling noise'; derived: with c = 1 the expected "
              "clipped gradient vanishes at the median -10, not at w* = 20; check: 2000 steps of eta = 0.5 from "
              "w0 in {-50, 0, 20, 60, 150}, median end point", atol=1e-6),  # fmt: skip
    ClaimSpec("002", "ex3.1.sim.limit.c100", "Example 3.1", "where expected clipped descent stops, c = 100", 20.0,
              "derived", "§3.3 after Example 3.1, observation 1: 'we need the clipping threshold c to be "
              "sufficiently larger than the sampling noise'; derived: c = 100 > 70 = max_i |20 - x_i| clips nothing "
              "near w*, so descent reaches w* = 20; check: as for c = 1", atol=1e-6),  # fmt: skip
    ClaimSpec("002", "ex3.1.sim.c1.wrong_from_every_start", "Example 3.1", "c = 1 ends at -10 from every start", True,
              "derived", "§3.3 after Example 3.1: 'clipped SGD could fail to converge regardless of the magnitude of "
              "the full-batch gradient'; check: from w0 = -50, 0, 20 (the optimum itself, F' = 0), 60 and 150 descent "
              "with c = 1 ends within 1e-6 of -10"),  # fmt: skip
    ClaimSpec("002", "ex3.1.sim.smallest_unbiased_clip", "Example 3.1", "smallest c whose clipped descent reaches w*",
              70.0, "derived", "§3.3 after Example 3.1, observation 1: 'the clipping threshold c to be sufficiently "
              "larger than the sampling noise' (std 49.7 here); derived: the limit equals w* = 20 iff "
              "c >= max_i |20 - x_i| = 70; check: bisection on c of where descent stops", atol=1e-6),  # fmt: skip
    # ---- Fig. 3 (a)-(c): the end values printed in §4.3 -------------------------------------------------
    _fig3("a", "0.075", "ModelMix", "modelmix", 57.2),
    _fig3("a", "0.075", "ModelMix p=25", "p25", 17.9),
    _fig3("a", "0.075", "ModelMix p=100", "p100", 15.3),
    _fig3("b", "0.15", "ModelMix", "modelmix", 40.4),
    _fig3("b", "0.15", "ModelMix p=25", "p25", 9.0),
    _fig3("b", "0.15", "ModelMix p=100", "p100", 7.9),
    _fig3("c", "0.3", "ModelMix", "modelmix", 31.7),
    _fig3("c", "0.3", "ModelMix p=25", "p25", 5.4),
    _fig3("c", "0.3", "ModelMix p=100", "p100", 4.8),
    ClaimSpec("002", "fig3.regular_eps.q0.02", "Fig. 3(a-c)", "regular DP-SGD eps at T = 5000 (calibrated noise)",
              200.0, "consistency", "§4.3: 'the budget eps=200 for regular DP-SGD' in all subfigures; a calibration "
              "target (our z is calibrated to it), so the row checks the calibration, it reproduces nothing",
              atol=0.05, note="checks that the calibrated z meets the target from below (z to 1e-5 relative)"),
    ClaimSpec("002", "fig3.regular_eps.q0.04", "Fig. 3(d-f)", "regular DP-SGD eps at T = 5000 (calibrated noise)",
              200.0, "consistency", "§4.3: 'the budget eps=200 for regular DP-SGD' in all subfigures; a calibration "
              "target (our z is calibrated to it), so the row checks the calibration, it reproduces nothing",
              atol=0.05, note="checks that the calibrated z meets the target from below (z to 1e-5 relative)"),
    # ---- Fig. 3: the text's qualitative statements (§4.3) --------------------------------------------------
    ClaimSpec("002", "fig3.ordering", "Fig. 3", "regular DP-SGD > ModelMix > p=25 > p=100 everywhere", True,
              "derived", "§4.3: 'With ModelMix, especially with further help of Algorithm 2 ..., we achieve orders "
              "of magnitude improvement'; check: the four curves are strictly ordered at every plotted step of "
              "all six panels (a)-(f)"),  # fmt: skip
    ClaimSpec("002", "fig3.tau.decreasing", "Fig. 3", "eps falls as the mixing threshold tau grows", True,
              "derived", "§4.3: 'given larger ... mixing threshold tau, ModelMix can produce stronger privacy "
              "amplification'; check: eps at T = 5000 strictly decreases over tau/eta in [0.02, 1] (geometric "
              "sweep) for ModelMix, p=25 and p=100 at q = 0.02"),  # fmt: skip
    ClaimSpec("002", "fig3.rate.modelmix", "Fig. 3", "plain ModelMix amplifies like 1/sqrt(tau)", True, "derived",
              "§4.3: 'The amplification factor of ModelMix ... is O~(1/sqrt(tau))'; check: the least-squares slope "
              "of log eps against log tau over tau/eta = 0.075, 0.15, 0.3 (q = 0.02) is nearer -1/2 than -1",
              note="the O~ hides log factors: the check classifies the rate, it does not pin the slope"),
    ClaimSpec("002", "fig3.rate.p100", "Fig. 3", "with large p the amplification is empirically 1/tau", True,
              "derived", "§4.3: 'For large enough p, such combined amplification is empirically O(1/tau)'; check: "
              "the slope of log eps against log tau over tau/eta = 0.075, 0.15, 0.3 with p = 100 is nearer -1 "
              "than -1/2"),  # fmt: skip
    ClaimSpec("002", "fig3.p.saturates", "Fig. 3", "the l_inf amplification saturates as p grows", True, "derived",
              "§4.3: 'the additional amplification from the l_inf norm truncation will reach some limit as p "
              "increases'; check: for p = 1, 4, 16, ..., 1024 the drop of log eps per step of the grid is positive "
              "and strictly shrinking, at tau/eta = 0.075, 0.15 and 0.3 (q = 0.02, integer orders)"),
    # ---- Table II: the authors' accountant for the CIFAR-10 ResNet-20 run ---------------------------------
    ClaimSpec("002", "table2.cifar10.eps8.authors_setting", "Table II (authors' script)",
              "ModelMix eps of the CIFAR-10 ResNet-20 run at the authors' script settings (T = 3400, z = 0.335), not "
              "the paper's T = 3500 (which gives 8.12)",
              8.0, "printed", "Table II, CIFAR10, column eps=8 (DP-SGD+MM 70.4 %); abstract '(eps=8, delta=1e-5)'",
              atol=5e-4,
              note="reproduces the authors' accountant script, not the paper's setting: the paper prints no noise; "
              "the authors' public script (GitHub junwan0224/ModelMix, ModelMixPrivacyAccount.m) has B = 1500, "
              "z = 0.335, 3400 iterations, tau = 0.15eta, p = 100, c = 20, integer alpha <= 19; Appendix E's "
              "T = 3500 gives 8.12"),
    # ---- Corollary 4.1 as printed ----------------------------------------------------------------------------
    _cor41(25, 5.4, -231.38, "5.45"),
    _cor41(100, 4.8, -225.04, "4.83"),
    # ---- §5.3 private transfer learning -------------------------------------------------------------------
    ClaimSpec("002", "sec5.3.transfer_eps.T1500", "§5.3", "ModelMix eps of the SimCLR transfer run, T = 1500",
              0.64, "printed", "§1.1, §5.3 and Appendix E: '(eps=0.64, delta=1e-5)'", atol=0.005,
              explanation=Erratum(0.579, "Appendix E: 0.85x the noise of Tramer-Boneh (z0 = 2.792 for eps = 2 at "
                              "T = 2700, q = 1024/50000) with tau = 0.0075eta/0.005eta/0.0025eta for thirds of 'total "
                              "1500 iterations', c = 0.1, gives 0.579; the T = 2700 reading gives 0.763 (next row): "
                              "neither is 0.64", atol=5e-4)),  # fmt: skip
    ClaimSpec("002", "sec5.3.transfer_eps.T2700", "§5.3", "ModelMix eps of the SimCLR transfer run, T = 2700",
              0.64, "printed", "§1.1, §5.3 and Appendix E: '(eps=0.64, delta=1e-5)'", atol=0.005,
              explanation=Erratum(0.763, "the same schedule over Tramer-Boneh's 2700 iterations (Appendix E) gives "
                              "0.763, the 1500 of Appendix E 0.579: neither is 0.64", atol=5e-4)),  # fmt: skip
    # ---- Fig. 2(c, d): the noise of the private panels (§3.2) ------------------------------------------------
    ClaimSpec("002", "fig2cd.dpsgd_eps", "Fig. 2(c, d)", "eps of regular DP-SGD with Fig. 2(c, d)'s noise "
              "(delta = 1e-5)", 8.0, "consistency", "§3.2 on Fig. 2(c, d): 'We clip the per-sample gradient norm "
              "down to 8 and add the same amount of Gaussian noise ... This ensures an (eps=8, delta=1e-5) guarantee "
              "for regular DP-SGD' (q = 0.05, 2,000 iterations as in (a, b); z is not printed): the noise exists and "
              "the sampled Gaussian RDP accountant (Mironov) gives 8 at it", rtol=1e-3),
    ClaimSpec("002", "fig2cd.mm_better_eps", "Fig. 2(c, d)", "ModelMix with the same noise has a smaller eps than "
              "regular DP-SGD", True, "printed", "§3.2 on Fig. 2(c, d): 'As shown later in Theorem 4.2, ModelMix can "
              "achieve a much better DP guarantee under the same setup'; check: Corollary 4.1 (corrected) at the "
              "same z, tau = 0.05eta, c = 8, p = 100 (§5.2), q = 0.05, T = 2000, n = 50,000 gives eps < 8"),
    # ---- Example 3.1 (§3.3) -----------------------------------------------------------------------------------
    ClaimSpec("002", "ex3.1.grad_std", "Example 3.1", "per-sample gradient std", 49.7, "printed",
              "§3.3, Example 3.1: 'is 49.7 for any w'", atol=0.05, note="population std sqrt((40^2+30^2+70^2)/3)"),
    ClaimSpec("002", "ex3.1.clipped_grad.w20", "Example 3.1", "expected clipped gradient at w = 20, c = 1",
              0.33333333333333331, "printed", "§3.3, Example 3.1: 'At w=20, the expectation of the clipped "
              "stochastic gradient is 1/3'", atol=1e-9),  # fmt: skip
    ClaimSpec("002", "ex3.1.clipped_grad.w0", "Example 3.1", "expected clipped gradient at w = 0, c = 1",
              0.33333333333333331, "printed", "§3.3, Example 3.1: 'w=0 ..., the expectation of the clipped "
              "stochastic gradient is still 1/3'", atol=1e-9),  # fmt: skip
    ClaimSpec("002", "ex3.1.true_grad.w0", "Example 3.1", "true gradient F'(0)", -20.0, "printed",
              "§3.3, Example 3.1: 'w=0 and grad F(0) = -20'", atol=1e-9),
    ClaimSpec("002", "ex3.1.opposite_direction.w0", "Example 3.1", "clipped gradient points against the true one",
              True, "derived", "§3.3, Example 3.1: 'But now it is in the opposite direction of the true "
              "gradient'; check: the expected clipped gradient and F'(0) have opposite signs"),  # fmt: skip
)

CLAIMS = specs_by_key(SPECS)


def check_all(report: Any, values: Mapping[str, Any], *, note: str = "") -> list[Claim]:
    """``report.check(CLAIMS[key], value, note=note)`` for every ``key -> value`` (a :class:`dpcore.report.Report`
    or anything with its ``check``); an unknown key raises ``ValueError`` naming it."""
    unknown = sorted(set(values) - set(CLAIMS))
    if unknown:
        raise ValueError(f"values has keys without a claim specification in paper 002: {unknown}")
    return [report.check(CLAIMS[key], value, note=note) for key, value in values.items()]

# ================================================================================================================
# Training: Tables I-III and Fig. 2 (issue 14, branch i14-train), rendered by notebooks/002_modelmix/training.ipynb
# from the experiments of dpcore.papers.p002_modelmix.training.  Every accuracy is a median over seeds of the
# final-iterate test accuracy at the paper's scale (scale="full": not-run at the quick profile's reduced scale,
# whose value goes into the note).
# ================================================================================================================
#: Table I as printed (percent), columns eps = 0.2, 0.4, 0.6, 0.8, 1.0, inf; (data set, method) -> row
TABLE1_PRINTED: dict[tuple[str, str], tuple[float, ...]] = {
    ("cifar10", "dpsgd"): (32.8, 45.9, 56.1, 61.2, 64.1, 74.6),
    ("cifar10", "mm"): (58.5, 63.3, 65.0, 66.9, 68.3, 74.6),
    ("fmnist", "dpsgd"): (53.4, 74.0, 81.5, 84.5, 85.6, 91.2),
    ("fmnist", "mm"): (83.9, 85.7, 86.1, 87.9, 88.8, 91.2),
}
TABLE1_EPSILONS: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8, 1.0, float("inf"))
#: Table II as printed (percent); columns per data set in TABLE2_EPSILONS
TABLE2_PRINTED: dict[tuple[str, str], tuple[float, ...]] = {
    ("cifar10", "dpsgd"): (47.3, 51.1, 53.2, 54.7, 56.1, 90.7),
    ("cifar10", "mm"): (59.8, 64.6, 67.5, 69.3, 70.4, 90.7),
    ("svhn", "dpsgd"): (41.2, 67.5, 78.4, 81.9, 84.9, 92.3),
    ("svhn", "mm"): (78.2, 86.3, 87.8, 89.0, 90.1, 92.3),
}
TABLE2_EPSILONS: dict[str, tuple[float, ...]] = {
    "cifar10": (4.0, 5.0, 6.0, 7.0, 8.0, float("inf")),
    "svhn": (2.0, 4.0, 5.0, 6.0, 8.0, float("inf")),
}
#: Table III as printed (eps needed for an accuracy); accuracies (percent) per data set in TABLE3_ACCURACIES
TABLE3_PRINTED: dict[tuple[str, str], tuple[float, ...]] = {
    ("cifar10", "dpsgd"): (95.8, 108.3, 118.2, 140.6, 182.9),
    ("cifar10", "mm"): (4.7, 5.3, 6.3, 7.5, 9.2),
    ("svhn", "dpsgd"): (93.6, 101.3, 112.4, 128.9, 144.5),
    ("svhn", "mm"): (5.1, 5.6, 6.0, 6.8, 8.0),
}
TABLE3_ACCURACIES: dict[str, tuple[float, ...]] = {
    "cifar10": (64.0, 66.0, 68.0, 70.0, 72.0),
    "svhn": (88.0, 88.5, 89.0, 89.5, 90.1),
}
#: accuracy tolerance (percentage points): our setup differs from the paper's in stated ways (GroupNorm instead
#: of private data normalisation for Table I, the GEP ResNet-20, CIFAR-10 from the JPEG q75 mirror when the
#: publisher's pickles are absent, the accountant's conversion) and the seed spread of a 5-seed median is ~1 pp
ACCURACY_ATOL = 3.0
#: Table III tolerance (relative): ε read off an interpolated accuracy curve moves ~10 % per percentage point
EPSILON_RTOL = 0.25
_NAME = {"cifar10": "CIFAR-10", "fmnist": "FMNIST", "svhn": "SVHN"}
_ROW = {"dpsgd": ("[19]", "Regular DP-SGD"), "mm": ("DP-SGD+MM", "DP-SGD+MM")}
_T1 = ("Tramer-Boneh CNN on ScatterNet features (GroupNorm 27), q = 8192/N; [19]: c = 0.1, eta = 4; MM: c = 1, "
       "eta = 0.4, tau = 0.05eta then 0.025eta, p = 1; T = 700 (FMNIST 800), momentum 0.9, delta = 1e-5; sigma "
       "calibrated per eps by the method's own accountant; ours: median final-iterate test accuracy of 5 seeds")
_T2 = ("ResNet-20 (GroupNorm 4, GEP variant), c = 20; regular eta = 0.1 (l2 only); MM eta = 0.15, tau = 0.15eta, "
       "p = 100; q = 1500/50000 (SVHN 1830/73257), T = 3500 (SVHN 4000), momentum 0.9, delta = 1e-5; ours: median "
       "final-iterate test accuracy of 5 seeds")
_T3 = ("eps at which the median-accuracy-vs-eps curve of the Table II runs plus a sigma sweep (running maximum, "
       "linear interpolation in eps) reaches the accuracy; NaN (not-run) when no trained eps reaches it")


#: why Table I's FMNIST block is not run: CPU time (the data are in the offline mirror since issue 51)
_FMNIST_NEEDS = ("not run: CPU time not yet spent (60 runs, about 62 one-thread CPU-hours: "
                 "results/dry_run/002_table1.fmnist.paper.cpu.txt; a GPU job, benchmarks/gpu_51_controls.sh)")


def _eps_key(eps: float) -> str:
    return "eps_inf" if eps == float("inf") else f"eps{eps:g}"


def _training_specs() -> tuple[ClaimSpec, ...]:
    specs = []
    for (data, method), row in TABLE1_PRINTED.items():
        for eps, value in zip(TABLE1_EPSILONS, row, strict=True):
            col = "inf" if eps == float("inf") else f"{eps:g}"
            specs.append(ClaimSpec(
                "002", f"table1.{data}.{method}.{_eps_key(eps)}", "Table I",
                f"{_NAME[data]} test accuracy (%), {_ROW[method][0]}, eps = {col}", value, "printed",
                f"Table I, {_NAME[data]} block, row '{_ROW[method][0]}', column eps={col}", atol=ACCURACY_ATOL,
                scale="full", note=f"{_FMNIST_NEEDS}; {_T1}" if data == "fmnist" else _T1,
                rule=_table1_rule(data, eps),
            ))  # fmt: skip
    for (data, method), row in TABLE2_PRINTED.items():
        for eps, value in zip(TABLE2_EPSILONS[data], row, strict=True):
            col = "inf" if eps == float("inf") else f"{eps:g}"
            specs.append(ClaimSpec(
                "002", f"table2.{data}.{method}.{_eps_key(eps)}", "Table II",
                f"{_NAME[data]} test accuracy (%), {_ROW[method][1]}, eps = {col}", value, "printed",
                f"Table II, {_NAME[data]} block, row '{_ROW[method][1]}', column eps={col}", atol=ACCURACY_ATOL,
                scale="full", note=_T2,
            ))  # fmt: skip
    for (data, method), row in TABLE3_PRINTED.items():
        for acc, value in zip(TABLE3_ACCURACIES[data], row, strict=True):
            specs.append(ClaimSpec(
                "002", f"table3.{data}.{method}.acc{acc:g}", "Table III",
                f"{_NAME[data]} eps needed for {acc:g} % test accuracy, {_ROW[method][1]}", value, "printed",
                f"Table III, {_NAME[data]} block, row '{_ROW[method][1]}', column {acc:g}", rtol=EPSILON_RTOL,
                scale="full", note=_T3,
            ))  # fmt: skip
    specs += [
        ClaimSpec("002", "table1.mm_more_accurate", "Table I", "ModelMix more accurate than [19] at equal eps", True,
                  "derived", "Table I: the MM row is above the [19] row in every finite-eps column of both data sets "
                  "(§5.1: 'significant improvement ... especially for small eps'); check: median MM accuracy > median "
                  "[19] accuracy in every finite-eps column trained", scale="full"),
        ClaimSpec("002", "table2.mm_more_accurate", "Table II", "ModelMix more accurate than regular DP-SGD at equal "
                  "eps", True, "derived", "Table II: the MM row is above the regular row in every finite-eps column "
                  "of both data sets; check: median MM accuracy > median regular accuracy in every finite-eps column "
                  "trained", scale="full"),
        ClaimSpec("002", "fig2.tau0.05_costs_little", "Fig. 2(a, b)", "ModelMix at tau = 0.05eta costs almost "
                  "nothing non-privately", True, "derived", "§3.2 on Fig. 2(a, b): 'tau = 0.05eta ... almost no "
                  "additional utility loss'; check: final test accuracy of SGD+MM (tau = 0.05eta) >= SGD's - 1 "
                  "percentage point on every data set trained", scale="full"),
        ClaimSpec("002", "fig2.larger_tau_hurts_late", "Fig. 2(a, b)", "a larger tau hurts late in training", True,
                  "derived", "§3.2 on Fig. 2(a, b): setups 'perform similarly in the initial stage (the first 400 "
                  "iterations)' while larger tau 'suffer heavier losses' later; check: the final training loss at "
                  "tau = 0.1eta exceeds that at tau = 0.05eta on every data set trained", scale="full"),
        ClaimSpec("002", "fig2.mm_beats_dpsgd_same_noise", "Fig. 2(c, d)", "with the same noise, ModelMix at eta = 0.2 "
                  "beats regular DP-SGD at eta = 0.1 and 0.2", True, "derived", "§3.2 on Fig. 2(c, d): the larger "
                  "step 'worsens' regular DP-SGD and ModelMix 'slightly out-performs regular DP-SGD'; check: final "
                  "test accuracy MM(eta 0.2) >= max(regular eta 0.1, regular eta 0.2) on every data set trained",
                  scale="full"),
    ]  # fmt: skip
    return tuple(specs) + _budget_specs() + _section5_specs()


# ---- issue 22: Table I's column ε against the authors' private data normalisation ---------------------------------
#: the authors' Table I code (training.EVIDENCE holds each line cited here, with its quote; tests check it)
_HD_MAIN = "junwan0224/ModelMix@02ecc83, Handcrafted-DP-main/"
_MM_CODE = _HD_MAIN + "cnns_mix.py"
#: (method, column ε) -> ε of a Table I run composed with the authors' normalisation (RDP, Balle et al., δ = 1e-5),
#: computed by ``ablation_report.normalization_budget_frame`` from the committed seed-0 runs
_BUDGET_TOTAL = {("dpsgd", 0.2): 0.7388896, ("dpsgd", 1.0): 1.3300822, ("mm", 0.2): 0.7308852, ("mm", 1.0): 1.2223098}


# ---- issue 50: Table I's cells decided by the verdict rules from the committed runs (evidence.py) ------------------
#: the pipeline whose positive control (issue 51) vouches for Table I's CIFAR-10 block
CONTROL_PIPELINE = "paper 002's Table I CIFAR-10 block"
_MIRROR = "CIFAR-10 from the JPEG q75 mirror where the publisher's files are absent"


def _table1_rule(data: str, eps: float) -> TrainedRule:
    """How a Table I cell is decided: at the column's ε of the training under the paper's own accounting (ModelMix's
    for ModelMix; the normalisation's extra ε is the table1_normalisation erratum, not counted again)."""
    return TrainedRule(epsilon=eps, accounting="the paper's accountant of the training (RDP; ModelMix's for MM), "
                       "δ = 1e-5", pipeline=CONTROL_PIPELINE if data == "cifar10" else "paper 002's Table I FMNIST "
                       "block", stand_in=_MIRROR if data == "cifar10" else "")  # fmt: skip


def _budget_specs() -> tuple[ClaimSpec, ...]:
    """Table I's ε read as the budget of everything the authors' pipeline releases (issue 22): an erratum per
    cell whose value is the composition of our committed run with the authors' normalisation."""
    specs = []
    for (method, eps), total in _BUDGET_TOTAL.items():
        specs.append(ClaimSpec(
            "002", f"table1.cifar10.{method}.eps{eps:g}.total_with_normalization", "Table I",
            f"eps (delta = 1e-5) of everything a Table I run releases, CIFAR-10, {_ROW[method][0]}, column eps = "
            f"{eps:g}, with the authors' private data normalisation", eps, "derived",
            f"Table I, CIFAR-10 block, column header eps={eps:g}, read as the whole budget; the authors' code "
            f"normalises the ScatterNet features privately by default ({_MM_CODE} L199 input_norm default 'BN', "
            "L201 bn_noise_multiplier default 8) and §5.1 prices that release at eps = 0.695. Check: our committed "
            "Table I run (seed 0) composed with that normalisation by RDP", rtol=0.01, scale="full",
            explanation=Erratum(total, (
                f"The normalisation alone costs 0.695 (§5.1; ours 0.6948, sec5.1.normalization_eps), more than the "
                f"eps = 0.2 column, so Table I's eps can only be the training's: composed with the training of our "
                f"committed run at the column's eps it is {total:.4g}. The authors' own script prints both, "
                f"'eps = (with normalisation) (sgd only: eps = ...)' ({_MM_CODE} L153-155); the "
                "eps = 0.2 column can only be the second."), rtol=1e-4,
                by="dpcore.papers.p002_modelmix.ablation_report:normalization_budget_frame",
                summary="the column is the training's eps alone; the authors' normalisation adds to it"),
        ))  # fmt: skip
    return tuple(specs)


# ---- §5.1-5.3 and the abstract: the printed numbers that are not table cells (issue 22) -------------------------
_SIMCLR = ("not-run: needs the penultimate-layer SimCLRv2 features (pretrained on unlabeled ImageNet) of CIFAR-10 "
           "and the linear DP-SGD(+MM) runs of Appendix E; the SimCLR weights cannot be downloaded offline")
_GEP = ("not-run: needs GEP's public data (2,000 ImageNet images) and its anchor-subspace pipeline (Yu et al. 2021, "
        "BackPACK); ImageNet is not available offline, and the paper gives no tau/T/sigma for GEP+MM")
_TB_EPS3 = ("a result of [19] (Tramer & Boneh, eps = 3) the paper quotes from an earlier version of [19]; decided by "
            "issue 51's positive control of that cell: [19]'s own setting run with our trainer and loaders "
            "(ref_controls tb/<data>/scatter_cnn, final iterate; the control decides itself)")
#: how a quoted [19] cell is decided: at [19]'s ε = 3 under our accounting of what ran (issue 51's control runs)
_TB_RULE = TrainedRule(epsilon=3.0, accounting="ours on what ran (PLD of the training; the private normalisation "
                       "composed in by RDP)", pipeline="[19]'s own setting (issue 51's control, ref.control.tb.*)")


def _section5_specs() -> tuple[ClaimSpec, ...]:
    """§5.1-5.3 and abstract numbers (reported by the training notebook through ``training_report``)."""

    def acc(key: str, value: float, location: str, quantity: str, note: str,
            rule: TrainedRule | None = None) -> ClaimSpec:  # fmt: skip
        return ClaimSpec("002", key, location.split(":")[0], quantity, value, "printed", location,
                         atol=ACCURACY_ATOL, scale="full", note=note,
                         rule=rule)  # fmt: skip

    return (
        ClaimSpec("002", "sec5.1.normalization_eps", "§5.1", "eps of the private data normalisation of Table I's "
                  "ScatterNet features", 0.695, "printed", "§5.1: 'With the same setup, we spend eps=0.695 budget to "
                  "privately estimate the statistics of datasets to apply ScatterNet'", atol=5e-4,
                  note="two Gaussian releases (per-channel mean and second moment, each example's vectors clipped to "
                  "the median norm) with noise multiplier 8, the authors' bn_noise_multiplier (junwan0224/ModelMix "
                  "Handcrafted-DP-main/cnns_mix.py L201; dp_utils.py L98 'rdp = 2*get_renyi_divergence(...)'); RDP "
                  "on Opacus's orders, Balle et al. conversion (their get_privacy_spent), delta = 1e-5; exact (GDP) "
                  "0.634; dpcore.training.private_norm"),
        acc("sec5.1.tb.cifar10.acc_eps3", 66.9, "§5.1: '[19] successfully trained a five-layer CNN with ScatterNet, "
            "which achieves 66.9% and 87.2% accuracy on CIFAR10 and FMNIST' (eps=3, delta=1e-5)",
            "CIFAR-10 test accuracy (%) of [19]'s ScatterNet CNN at eps = 3", _TB_EPS3, _TB_RULE),
        acc("sec5.1.tb.fmnist.acc_eps3", 87.2, "§5.1: '[19] ... achieves 66.9% and 87.2% accuracy on CIFAR10 and "
            "FMNIST' (eps=3, delta=1e-5)", "FMNIST test accuracy (%) of [19]'s ScatterNet CNN at eps = 3", _TB_EPS3,
            _TB_RULE),
        ClaimSpec("002", "sec5.2.eps_ratio", "§5.2", "eps of regular DP-SGD / eps of ModelMix at equal accuracy "
                  "(ResNet-20)", 20.0, "printed", "§5.2: 'In general, ModelMix roughly brings 20x improvement on "
                  "eps to produce usable security parameters'", rtol=0.25, scale="full",
                  note="'roughly': the printed Table III ratios are 18.1-20.4; ours: the median over Table III's "
                  "accuracies (both data sets) of eps(regular)/eps(MM) on our Table III reading, where both are "
                  "reached"),
        ClaimSpec("002", "abstract.cifar10.dpsgd.eps_for_70.4", "Abstract", "eps regular DP-SGD needs for 70.4 % "
                  "CIFAR-10 test accuracy (ResNet-20)", 145.8, "printed", "Abstract and §1.1: 'compared to the same "
                  "performance but with (eps=145.8, delta=1e-5) using regular DP-SGD'", rtol=EPSILON_RTOL,
                  scale="full", note="a same-accuracy budget (70.4 % = ModelMix at eps = 8, Table II), read off our "
                  "regular DP-SGD accuracy-vs-eps curve as Table III; Table III itself prints 140.6 at 70 % and "
                  "182.9 at 72 %"),
        acc("sec5.3.transfer.tb.acc_eps2", 92.7, "§5.3: 'With a privacy budget (eps=2, delta=1e-5), one can achieve "
            "92.7% on CIFAR10 [19]'", "CIFAR-10 accuracy (%) of [19]'s linear model on SimCLR features, eps = 2",
            _SIMCLR),
        acc("sec5.3.transfer.mm.acc_eps0.64", 92.7, "§5.3: 'we can apply ModelMix to improve this DP guarantee to "
            "(eps=0.64, delta=1e-5) with the same performance'; §1.1", "CIFAR-10 accuracy (%) of the SimCLR-feature "
            "linear model with ModelMix, eps = 0.64", _SIMCLR),
        acc("sec5.3.transfer.mm.acc_eps2", 93.6, "§5.3: 'if we assume the same privacy budget (eps=2, delta=1e-5) as "
            "[19], we can instead achieve 93.6%'", "CIFAR-10 accuracy (%) of the SimCLR-feature linear model with "
            "ModelMix, eps = 2", _SIMCLR),
        acc("sec5.3.transfer.nonprivate_acc", 94.3, "§5.3: 'close to the non-private optimal performance 94.3%'",
            "CIFAR-10 accuracy (%) of the SimCLR-feature linear model, non-private", _SIMCLR),
        acc("sec5.3.gep.acc_eps8", 73.2, "§5.3: 'we reproduce their experiments to privately train Resnet20 on "
            "CIFAR10, which achieves 73.2% accuracy with an (eps=8, delta=1e-5) budget'", "CIFAR-10 accuracy (%) of "
            "GEP (ResNet-20, 2,000 ImageNet public images), eps = 8", _GEP),
        acc("sec5.3.gep.acc_eps111.2", 79.1, "§5.3: 'and 79.1% with (eps=111.2, delta=1e-5)'; abstract",
            "CIFAR-10 accuracy (%) of GEP without ModelMix, eps = 111.2", _GEP),
        acc("sec5.3.gep_mm.acc_eps2.9", 74.2, "§5.3: 'with a budget (eps=2.9, delta=1e-5) and (eps=6.1, "
            "delta=1e-5), we achieve accuracy of 74.2% and 79.1%'", "CIFAR-10 accuracy (%) of GEP + ModelMix, "
            "eps = 2.9", _GEP),
        acc("sec5.3.gep_mm.acc_eps6.1", 79.1, "§5.3: '(eps=6.1, delta=1e-5), we achieve accuracy of ... 79.1%'; "
            "abstract: 'improve the accuracy to 79.1% with (eps=6.1, delta=1e-5)'", "CIFAR-10 accuracy (%) of GEP + "
            "ModelMix, eps = 6.1", _GEP),
        acc("sec5.3.gep.nonprivate_acc", 82.3, "§5.3: 'close to the non-private optimal performance 82.3% of [32]'",
            "CIFAR-10 accuracy (%) of GEP's ResNet-20, non-private", _GEP),
    )  # fmt: skip


#: keys of :func:`_section5_specs` (``training_report.section5_claim_values`` gives their values)
SECTION5_KEYS: tuple[str, ...] = tuple(s.key for s in _section5_specs())
TRAINING_SPECS: tuple[ClaimSpec, ...] = _training_specs()
TRAINING_CLAIMS = specs_by_key(TRAINING_SPECS)
_TOYS = tuple(s for s in SPECS if s.key.startswith(("fig1.", "ex3.1.sim.")))
_ACCOUNTANT = tuple(s for s in SPECS if s not in _TOYS)
SPECS = SPECS + TRAINING_SPECS + AUDIT_SPECS
CLAIMS = specs_by_key(SPECS)
NOTEBOOKS: tuple[NotebookClaims, ...] = (
    NotebookClaims.of("002_modelmix/modelmix_accountant", "accountant, Fig. 3, Cor. 4.1, §5.3, Example 3.1",
                      _ACCOUNTANT),
    NotebookClaims.of("002_modelmix/modelmix_toys", "Fig. 1 and Example 3.1 simulated", _TOYS),
    NotebookClaims.of("002_modelmix/training", "training: Tables I-III, Fig. 2", TRAINING_SPECS),
    *AUDIT_NOTEBOOKS,
)


# ---------------------------------------------------------------------------------------------- findings (issue 41)
#: Tables II–III and Fig. 2 train ResNet-20 / ScatterNet CNNs over σ sweeps: GPU grids
GPU_KEYS: tuple[str, ...] = ("table2.*", "table3.*", "fig2.*")

FINDINGS: tuple[Finding, ...] = (
    Finding("002", "accountant", "reproduced",
            "ModelMix's accountant (corrected Corollary 4.1) reproduces Fig. 3's ε over τ, p and rates and the "
            "authors' ε = 8.000.", "the accountant holds", False, ("fig3a.*", "fig3b.*", "fig3c.*", "fig3.*"),
            "dpcore.accounting.modelmix, notebook modelmix_accountant"),
    Finding("002", "cor41_as_printed", "erratum",
            "Corollary 4.1 as printed has no factor T and divides by (1 − α): it gives ε = −231 for Fig. 3(c).",
            "Corollary 4.1 as printed is wrong (ε = −231)", False, ("cor41.as_printed.*",),
            "dpcore.papers.p002_modelmix.corollary41, notebook modelmix_accountant"),
    Finding("002", "table1_normalisation", "erratum",
            "Table I's ε columns leave out the authors' private data normalisation (ε = 0.695 alone, §5.1): composed "
            "with it, the ε = 0.2 and ε = 1 columns spend 0.73–1.33.",
            "Table I's ε leaves out the normalisation's privacy cost", True,
            ("table1.cifar10.*.total_with_normalization",),
            "ablation_report.normalization_budget_frame (RDP composition of the committed runs)"),
    Finding("002", "table1_private", "trained",
            "Table I's private CIFAR-10 cells against the stated setting (5 seeds), the same with §5.1's private "
            "normalisation, and the authors' readout and whole configuration (other readings), each at the column's "
            "training ε; the closest reading, seeds and control decide each row (note).",
            "Table I's private cells by the rules", True, ("table1.cifar10.*.eps0.?", "table1.cifar10.*.eps1"),
            "results/paper/002_table1/ and 002_ablation/ read by dpcore.papers.p002_modelmix.evidence",
            readings=("the stated setting (GroupNorm, p = 1, T = 700), final iterate, 5 seeds",
                      "with §5.1's private normalisation (as printed: the paper spends ε = 0.695 on it)",
                      "the authors' readout, truncation, steps and whole configuration (not as printed)"),
            untested="CIFAR-10's original files (the offline mirror holds a JPEG re-encoding)"),
    Finding("002", "table1_nonprivate", "trained",
            "Table I's non-private 74.6 % (both rows) against each row's setting without noise (5 seeds) and the "
            "authors' non-private configuration (another reading): decided by the rules (note).",
            "Table I's non-private column by the rules", False, ("table1.cifar10.*.eps_inf",),
            "results/paper/002_table1/ (eps_inf) and 002_ablation/ (nonprivate/authors)",
            readings=("each row's setting without noise, 5 seeds", "the authors' non-private configuration"),
            untested="CIFAR-10's original files (the offline mirror holds a JPEG re-encoding)"),
    Finding("002", "sec53_transfer", "erratum",
            "§5.3's transfer ε = 0.64 matches neither length of Appendix E's schedule (0.579 over 1,500 iterations, "
            "0.763 over 2,700).", "§5.3's transfer ε matches neither schedule", False, ("sec5.3.transfer_eps.*",),
            "dpcore.papers.p002_modelmix.section5, notebook modelmix_accountant"),
    Finding("002", "authors_configuration_audited", "audit",
            "Audited at toy scale from the released channel mean alone (a GDP-style estimate), the authors' "
            "configuration's private normalisation alone estimates ε above the ε = 0.2 column; at the ε = 1 column "
            "the estimate stays within (values: figures/audit/authors_modes.csv).",
            "the authors' configuration fails an audit at ε = 0.2 (an estimate)", True,
            ("audit.modes.*",),
            "figures/audit/authors_modes.csv (dpcore.papers.p002_modelmix.audit_modes.mode_audits)"),
    Finding("002", "tables23_not_run", "not-run",
            "Tables II–III and Fig. 2 (ResNet-20 and ScatterNet σ sweeps on CIFAR-10 and SVHN) are not run: they need "
            "a GPU (dry run: 82.3 + 1.1 GPU-hours on one H100; about 9,800 + 320 CPU-hours on this 2-core machine), "
            "and SVHN is download-only.", "Tables II–III not run (GPU, 83 GPU-hours, SVHN)", False,
            ("table2.*", "table3.*", "fig2.*"),
            "results/dry_run/002_table2.paper.h100.txt, results/dry_run/002_fig2.paper.h100.txt (and .paper.cpu.txt): "
            "python -m dpcore.experiments run <name> --profile paper --dry-run"),
    Finding("002", "table1_fmnist_data", "not-run",
            "Table I's FMNIST block is not run: the data are in the offline mirror (issue 51), but its 60 runs "
            "(2 methods x 6 columns x 5 seeds, T = 800 at batch 8192) are a GPU job (dry run: about 62 one-thread "
            "CPU-hours on this machine); benchmarks/gpu_51_controls.sh runs it.",
            "Table I's FMNIST block not run (CPU time: a GPU job)",
            False, ("table1.fmnist.*",),
            "results/dry_run/002_table1.fmnist.paper.cpu.txt: python -m dpcore.experiments run 002_table1 "
            "--profile paper --only 'fmnist/*' --dry-run; the table1.fmnist.* rows' notes"),
)
