"""Tight audits of DP-SGD with Dirac canaries: the GDP (Gaussian-shift) many-runs audit and the family one-run audit.

:mod:`dpcore.audit.dirac` bounds ε distribution-free, by thresholding a score and bounding two error rates with
Clopper–Pearson: valid whatever the mechanism, but ε at small δ is set by rare events that a few thousand runs
cannot count.  Here the white-box observations are used under the assumption that they are what DP-SGD's noise
makes them (Nasr et al. 2023, "Tight Auditing of Differentially Private Machine Learning", §4–5):

* **all iterates** -- every observed step update of the canary's coordinate is c_eff·B + N(0, s²), B ~ Bernoulli(q)
  the canary's Poisson inclusion.  :func:`dpcore.audit.gdp.gaussian_shift` bounds μ = c_eff/s from all T·runs
  steps of each world (rate q), and the run record's own accountant, evaluated at the noise multiplier that μ
  implies (σ' = c/(μ·C)), turns μ_lb into ε_lb (:func:`record_family`: the accountant's trade-off family);
* **last iterate** -- only Σ_k U_k is seen.  μ is bounded the same way from the sums, and ε is that of the *release
  of the sum*, c·Binomial(T, q) + N(0, T s²) against N(0, T s²) (:func:`sum_release_epsilon`, exact by quadrature):
  a last-iterate audit can never exceed this ceiling, however many runs;
* **ModelMix** -- the mixed states' differences carry the mixing noise too; the Gaussian-shift estimate (shift over
  the total noise std) is composed by the record's (amplified) ModelMix accountant at σ'.  This treats the mixing
  noise as part of a Gaussian, which the mechanism is not, and composes with an RDP *upper* bound: an estimate
  under that stated assumption, not a valid lower bound, so :func:`audit_dirac_gdp` refuses a ModelMix setting;
  the audit table's ModelMix rows use :func:`dpcore.audit.modelmix_exact.audit_modelmix` (exact likelihood ratio,
  exact toy curve);
* **one run** (:func:`audit_one_run_family`) -- the guesses of :func:`dpcore.audit.dirac.audit_one_run` tested with
  the accountant's family by Mahloujifar et al.'s recursive bound (:mod:`dpcore.audit.fdp_one_run`,
  ``method="recursive"``), beside Steinke et al.'s (ε, δ) bound.

Every bound here is valid at its confidence *under its stated assumption*; the distribution-free bounds of
:mod:`dpcore.audit.dirac` need none and stay beside them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import stats

from dpcore.accounting.calibrate import epsilon_at_delta
from dpcore.accounting.events import NOISE_FACTOR
from dpcore.accounting.pld import pld_delta
from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.run_record import RunRecord
from dpcore.audit.dirac import DiracSetting, dirac_updates, one_run_guesses
from dpcore.audit.estimators import one_run_epsilon
from dpcore.audit.fdp_one_run import FamilyOneRunBound, one_run_family_bound
from dpcore.audit.gdp import GaussianShift, gaussian_shift, gdp_epsilon
from dpcore.audit.shuffled import ShuffleSetting, shuffled_scores, shuffled_updates
from dpcore.audit.threat import ITERATES, AuditResult, ThreatModel
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int, check_rate

__all__ = [
    "record_family",
    "sum_release_delta",
    "sum_release_epsilon",
    "last_iterate_shift",
    "audit_dirac_gdp",
    "one_run_bounds",
    "audit_one_run_family",
    "audit_shuffled_gdp",
]


def record_family(record: RunRecord, canary: float) -> Callable[[float, float], float]:
    """``compose(mu, delta)``: ε of the run ``record`` describes, with its noise multiplier replaced by the σ' at
    which a canary of (clipped) norm ``canary`` has per-step μ = canary/(κ·C·σ') -- the accountant's own trade-off
    family, indexed by μ (:func:`dpcore.accounting.records.epsilon_for_record`)."""
    if not isinstance(record, RunRecord):
        raise ValueError(f"record must be a RunRecord, got {type(record).__name__}")
    canary = check_positive("canary", canary)
    kappa = NOISE_FACTOR[record.noise_convention]

    def compose(mu: float, delta: float) -> float:
        sigma = canary / (mu * kappa * record.clip_norm)
        changed = record.replace(noise_multiplier=sigma, noise_std=kappa * record.clip_norm * sigma)
        return float(epsilon_for_record(changed, delta))

    return compose


#: Binomial mass of the canary's inclusion count left out of the quadrature (charged to δ: the ceiling stays above).
_SUM_TAIL = 1e-15
#: Rows of the inclusion count evaluated at once: the memory of :func:`_sum_pair` is ``_SUM_BLOCK`` × ``points``
#: floats (2.6 MB), whatever T (it was (T+1) × 40,001: 5.2 GB at T = 3,000).
_SUM_BLOCK = 8
#: Largest T :func:`sum_release_delta` accepts: the counts it sums grow like √T (~1.2e5 at T = 1e9, a minute).
SUM_RELEASE_MAX_STEPS = 10**9


def _sum_pair(mu: float, rate: float, steps: int, points: int = 40_001) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(p, q, dx, left out): the densities of Σ_k U_k with and without the canary on a grid of ``points``, and the
    binomial mass of the inclusion counts left out (at most ``_SUM_TAIL``).  Only the counts k where Binomial(T, q)
    has mass are summed, ``_SUM_BLOCK`` at a time: memory ``_SUM_BLOCK`` × points, time ~√T × points."""
    lo = int(stats.binom.ppf(0.5 * _SUM_TAIL, steps, rate))
    hi = int(stats.binom.isf(0.5 * _SUM_TAIL, steps, rate)) + 1
    lo, hi = max(0, lo), min(steps, hi)
    sd = math.sqrt(steps)
    x = np.linspace(-10 * sd, steps * mu + 10 * sd, points)
    p = np.zeros(points)
    kept = 0.0
    for start in range(lo, hi + 1, _SUM_BLOCK):
        k = np.arange(start, min(start + _SUM_BLOCK, hi + 1))
        w = stats.binom.pmf(k, steps, rate)
        kept += float(w.sum())
        p += w @ stats.norm.pdf(x[None, :], loc=(k * mu)[:, None], scale=sd)
    q = stats.norm.pdf(x, scale=sd)
    return p, q, float(x[1] - x[0]), max(0.0, 1.0 - kept)


def _check_sum_release(mu: float, rate: float, steps: int) -> tuple[float, float, int]:
    mu = check_positive("mu", mu)
    rate = check_rate("rate", rate)
    steps = check_positive_int("steps", steps)
    if steps > SUM_RELEASE_MAX_STEPS:
        raise ValueError(
            f"steps must be an integer in [1, {SUM_RELEASE_MAX_STEPS:.0e}] for the sum release, got {steps}"
        )
    return mu, rate, steps


def _sum_delta(pair: tuple[np.ndarray, np.ndarray, float, float], epsilon: float) -> float:
    p, q, dx, left_out = pair
    e = math.exp(epsilon)
    return float(max(np.clip(p - e * q, 0, None).sum(), np.clip(q - e * p, 0, None).sum()) * dx) + left_out


def sum_release_delta(mu: float, rate: float, steps: int, epsilon: float) -> float:
    """δ(ε) of releasing Σ_k U_k, U_k = μ·B_k + N(0, 1), B_k ~ Bernoulli(``rate``), against Σ_k N(0, 1): the larger
    hockey-stick divergence of the two directions, by quadrature on a fine grid (the last iterate of the Dirac toy).
    ``steps`` in [1, :data:`SUM_RELEASE_MAX_STEPS`]; memory does not grow with it."""
    mu, rate, steps = _check_sum_release(mu, rate, steps)
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 <= epsilon < math.inf:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    return _sum_delta(_sum_pair(mu, rate, steps), epsilon)


def sum_release_epsilon(mu: float, rate: float, steps: int, delta: float) -> float:
    """The smallest ε with :func:`sum_release_delta` ≤ ``delta`` (bisection to 1e-4, on one quadrature)."""
    mu, rate, steps = _check_sum_release(mu, rate, steps)
    delta = check_open_unit("delta", delta)
    pair = _sum_pair(mu, rate, steps)
    return epsilon_at_delta(lambda e: _sum_delta(pair, e), delta, tol=1e-4)


def last_iterate_shift(
    sums_in: np.ndarray, sums_out: np.ndarray, *, steps: int, rate: float, confidence: float = 0.95
) -> GaussianShift:
    """The per-step μ = c/s bound of the last-iterate audit from the final models' sums: Σ_k U_k is
    c·Binomial(T, q) + N(0, T s²) with the canary and N(0, T s²) without, so (x̄_in − x̄_out)/(q·s_out) estimates
    √T·c/s (:func:`dpcore.audit.gdp.gaussian_shift` with the known rate q; its Welch variance is the in-sample's
    own, which carries the binomial spread), divided here by √T.  Valid at ``confidence`` asymptotically."""
    steps = check_positive_int("steps", steps)
    rate = check_rate("rate", rate)
    sums = gaussian_shift(sums_in, sums_out, confidence=confidence, rate=rate)
    root = math.sqrt(steps)
    return GaussianShift(
        sums.mu / root, sums.mu_lower / root, sums.confidence, sums.samples_in, sums.samples_out, rate, sums.method,
        sums.variance_ratio, sums.variance_p_value,
    )  # fmt: skip


def audit_dirac_gdp(
    setting: DiracSetting,
    runs: int,
    *,
    delta: float,
    confidence: float = 0.95,
    iterates: str = "all",
    seed: int = 0,
    mechanism: str = "DP-SGD (Poisson, individual clipping), GDP estimator",
    claimed_epsilon: float | None = None,
) -> AuditResult:
    """Many-runs GDP audit of ``setting`` with ``runs`` trainer runs per world, all of them used (the statistic is
    fixed in advance: no selection half).  See the module docstring for what is estimated and composed."""
    if not isinstance(setting, DiracSetting):
        raise ValueError("setting must be a DiracSetting")
    if setting.modelmix_tau_ratio is not None:
        raise ValueError(
            "setting.modelmix_tau_ratio must be None: for ModelMix the Gaussian-shift estimate composed by the "
            "ModelMix accountant (an upper bound) is not a valid lower bound; use "
            "dpcore.audit.modelmix_exact.audit_modelmix"
        )
    check_choice("iterates", iterates, ITERATES)
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    runs = check_positive_int("runs", runs, minimum=setting.block)
    u_in, record = dirac_updates(setting, runs, canary=True, seed=seed)
    u_out, _ = dirac_updates(setting, runs, canary=False, seed=seed)
    q, steps = setting.sample_rate, setting.steps
    c = min(setting.canary, setting.clip_norm)
    claimed = epsilon_for_record(record, delta) if claimed_epsilon is None else float(claimed_epsilon)
    if iterates == "all":
        shift = gaussian_shift(u_in.reshape(-1), u_out.reshape(-1), confidence=confidence, rate=q)
        compose = record_family(record, c)
        what = (
            f"per-step update N(c·B, s²), B ~ Bernoulli({q:g}) (Gaussian noise, Dirac canary); μ = c/s composed by "
            f"the record's accountant at σ' = c/(μC)"
        )
        score = "gaussian-shift per step"
    else:
        shift = last_iterate_shift(u_in.sum(1), u_out.sum(1), steps=steps, rate=q, confidence=confidence)

        def compose(mu: float, d: float) -> float:
            return sum_release_epsilon(mu, q, steps, d)

        what = f"final model = c·Binomial({steps}, {q:g}) + N(0, T s²) (the sum's exact release ε)"
        score = "gaussian-shift of the sum"
    bound = gdp_epsilon(shift, delta, compose=compose, assumption=what)
    threat = ThreatModel(
        iterates=iterates,
        neighbouring="add/remove",
        canary=f"gradient-space Dirac canary of norm {setting.canary:g} (C = {setting.clip_norm:g})",
        estimator="many-runs-gdp",
        confidence=confidence,
        runs=runs,
    )
    return AuditResult(
        mechanism, threat, bound.epsilon, bound.point, claimed, delta, score, math.nan,
        claim_label=f"GDP estimator (μ_lb = {shift.mu_lower:.4f}, μ̂ = {shift.mu:.4f}; {shift.method}); {what}",
        parameter_lower=shift.mu_lower, parameter_point=shift.mu,
    )  # fmt: skip


def one_run_bounds(
    setting: DiracSetting, record: RunRecord, *, guesses: int, correct: int, delta: float, confidence: float = 0.95
) -> tuple[FamilyOneRunBound, float]:
    """The two bounds of :func:`audit_one_run_family` from a count: ``correct`` right guesses of ``guesses`` with
    m = ``setting.block`` canaries in a run that ``record`` describes -- the family bound (Mahloujifar et al.'s
    recursion with the subsampled-Gaussian family of the record's accountant, θ = per-step μ) and Steinke et al.'s
    (ε, δ) bound."""
    if not isinstance(setting, DiracSetting):
        raise ValueError("setting must be a DiracSetting")
    if not isinstance(record, RunRecord):
        raise ValueError(f"record must be a RunRecord, got {type(record).__name__}")
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    m, q, steps = setting.block, setting.sample_rate, setting.steps
    c = min(setting.canary, setting.clip_norm)
    compose = record_family(record, c)

    def delta_of(theta: float, eps: float) -> float:
        return pld_delta(c / (theta * setting.clip_norm), sample_rate=q, steps=steps, epsilon=eps)

    fam = one_run_family_bound(m, guesses, correct, delta_of=delta_of, epsilon_of=compose, delta=delta,
                               confidence=confidence, theta_max=5.0, tol=2e-3, method="recursive")  # fmt: skip
    return fam, float(one_run_epsilon(m, guesses, correct, delta=delta, confidence=confidence))


def audit_one_run_family(
    setting: DiracSetting,
    *,
    guesses: int,
    delta: float,
    confidence: float = 0.95,
    seed: int = 0,
    mechanism: str = "DP-SGD (Poisson, individual clipping), one run, f-DP family",
) -> tuple[AuditResult, AuditResult]:
    """The one-run game of :func:`dpcore.audit.dirac.audit_one_run` (same canaries, run and guesses), bounded twice:
    Steinke et al.'s (ε, δ) bound and the family bound of :func:`dpcore.audit.fdp_one_run.one_run_family_bound`
    (Mahloujifar et al.'s recursion, ``method="recursive"``, fixed in advance) with the family {subsampled Gaussian
    at σ' = 1/θ, rate q, T steps} (θ = per-step μ).  Returns (family, (ε, δ))."""
    if not isinstance(setting, DiracSetting):
        raise ValueError("setting must be a DiracSetting")
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    m, correct, record = one_run_guesses(setting, guesses=guesses, seed=seed)
    claimed = float(epsilon_for_record(record, delta))
    c = min(setting.canary, setting.clip_norm)
    fam, plain = one_run_bounds(setting, record, guesses=guesses, correct=correct, delta=delta,
                                confidence=confidence)  # fmt: skip
    canary = (
        f"{m} gradient-space Dirac canaries of norm {setting.canary:g}, each in w.p. 1/2; "
        f"{correct}/{guesses} guesses right"
    )
    theta = max(fam.theta_lower, 1e-12)
    rows = (
        (
            "one-run-fdp",
            fam.epsilon,
            mechanism,
            f"family bound, Mahloujifar et al. 2024 recursion: θ_lb = {fam.theta_lower:.4f} (σ' = {c / theta:.3f})",
        ),
        ("one-run", plain, mechanism.replace(", f-DP family", ""), "Steinke, Nasr, Jagielski 2023 Thm 5.2, one (ε, δ)"),
    )
    out = [
        AuditResult(
            name,
            ThreatModel("all", "add/remove", canary, est, confidence, 1),
            float(eps),
            math.nan,
            claimed,
            delta,
            "likelihood",
            math.nan,
            claim_label=label,
            parameter_lower=fam.theta_lower if est == "one-run-fdp" else math.nan,
        )  # fmt: skip
        for est, eps, name, label in rows
    ]
    return out[0], out[1]


def audit_shuffled_gdp(
    setting: ShuffleSetting,
    runs: int,
    *,
    delta: float,
    confidence: float = 0.95,
    seed: int = 0,
    mechanism: str | None = None,
) -> AuditResult:
    """GDP audit of a shuffled run (paper 003's Algorithm 1 or one of its authors' noise placements) by the adversary
    A_1, who knows the canary's round in each epoch (:mod:`dpcore.audit.shuffled`, score ``"known"``): that score is
    Σ_e U_{k_e} = ±E·C_eff + N(0, E·s²) exactly (Gaussian noise, replace-one Dirac canary; C_eff = C, or C·√k for
    per-tensor clipping of k tensors, :attr:`ShuffleSetting.clipped_shift`), so the trade-off between
    the worlds is G_μ and :func:`dpcore.audit.gdp.gaussian_shift` (rate 1, exact non-central t) bounds μ; ε = ε(G_μ_lb).
    ``epsilon_claimed`` is the accountant's ε of the run record (the mechanism that ran: the record carries the
    effective σ of the placement)."""
    if not isinstance(setting, ShuffleSetting):
        raise ValueError("setting must be a ShuffleSetting")
    runs = check_positive_int("runs", runs, minimum=4)
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    u_in, m_in, record = shuffled_updates(setting, runs, canary=True, seed=seed)
    u_out, m_out, _ = shuffled_updates(setting, runs, canary=False, seed=seed)
    s_in = shuffled_scores(u_in, m_in, setting, "known")
    s_out = shuffled_scores(u_out, m_out, setting, "known")
    bound = gdp_epsilon(gaussian_shift(s_in, s_out, confidence=confidence), delta,
                        assumption="A_1's score Σ_e U_(k_e) is N(±E·C, E·s²): the trade-off is G_μ")  # fmt: skip
    threat = ThreatModel(
        iterates="all",
        neighbouring="replace-one",
        canary=f"gradient-space Dirac canary of norm {setting.canary:g} vs its negation (C = {setting.clip_norm:g})",
        estimator="many-runs-gdp",
        confidence=confidence,
        runs=runs,
        knows_batches=True,
    )
    scope = "" if setting.clip_scope == "global" else f", {setting.clip_scope} clipping of {setting.tensors} tensors"
    name = mechanism or (
        f"{setting.clipping} clipping shuffled (|S_b|={setting.batch_size}, b={setting.rounds_per_epoch}, "
        f"E={setting.epochs}), noise placement {setting.noise_placement}{scope}"
    )
    return AuditResult(
        name, threat, bound.epsilon, bound.point, float(epsilon_for_record(record, delta)), delta, "known", math.nan,
        claim_label=f"GDP estimator (μ_lb = {bound.shift.mu_lower:.4f}, μ̂ = {bound.shift.mu:.4f}); accountant: "
        f"record σ = {record.noise_multiplier:g}",
        parameter_lower=bound.shift.mu_lower, parameter_point=bound.shift.mu,
    )  # fmt: skip
