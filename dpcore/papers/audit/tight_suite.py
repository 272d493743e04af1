"""The tight audits of issue 42 at the privacy-audit notebook's DP-SGD setting (suite.SETTING):
the GDP estimator with every update / the last iterate observed, ModelMix's released states audited with the
exact trajectory likelihood ratio and the exact toy curve (:mod:`dpcore.audit.modelmix_exact`: a family row
``gdp_modelmix`` and a distribution-free row ``modelmix_lr``), and the one-run game bounded
under the accountant's trade-off family beside Steinke et al.'s (ε, δ) bound (:mod:`dpcore.audit.tight`).  Each row
carries the goal of the issue (ratio lower bound / accountant ε) and whether it is met.  One rule for the notebook and
``benchmarks/audit_tightness.py``: the same settings and trainer block (:func:`tight_settings`, :data:`TIGHT_BLOCK`)
and the same per-seed audits (:func:`tight_seed_rows`); the notebook's row is the median of :data:`TIGHT_SEEDS`,
with its spread and what holds it back (:func:`run_tight_suite`).  Also the empirical trade-off
curve of the all-iterates audit (FPR/FNR of the likelihood-ratio score with simultaneous DKW bands,
:func:`dpcore.audit.gdp.empirical_tradeoff`) against the accountant's f-DP curve (:func:`dpsgd_tradeoff`,
:func:`tradeoff_figure`; Nasr et al. 2023, §5, Fig. 2 draws the same comparison).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpcore.accounting.fdp import tradeoff_from_delta_curve
from dpcore.accounting.pld import pld_delta
from dpcore.audit import DiracSetting
from dpcore.audit.dirac import dirac_scores, dirac_updates
from dpcore.audit.gdp import EmpiricalTradeoff, empirical_tradeoff, tradeoff_violation
from dpcore.audit.modelmix_exact import audit_ceiling, audit_modelmix
from dpcore.audit.threat import AuditResult
from dpcore.audit.tight import audit_dirac_gdp, audit_one_run_family, sum_release_epsilon
from dpcore.papers.audit.suite import MODELMIX_TAU_RATIO, SETTING
from dpcore.plots import new_axes, series_style
from dpcore.validation import check_choice, check_open_unit, check_positive_int

__all__ = [
    "GOALS", "JOBS", "TIGHT_BLOCK", "TIGHT_SEEDS", "MODELMIX_TAU_D", "tight_settings", "tight_seed_rows",
    "run_tight_suite", "TradeoffAudit", "dpsgd_tradeoff", "tradeoff_figure",
]  # fmt: skip

#: issue 42's goals: ratio of the audit's lower bound to the accountant's ε
GOALS = {"gdp_all": 0.90, "gdp_last": 0.80, "gdp_modelmix": 0.80, "modelmix_lr": 0.80, "one_run_fdp": 0.60,
         "one_run": 0.60}
#: runs per trainer call of every many-runs tight audit -- the notebook's table and ``benchmarks/audit_tightness.py``
#: alike, so that a seed draws the same runs in both (250 divides every runs-per-world of the benchmark, 500 to 4,000,
#: and leaves two blocks to the threshold estimators' selection half at 500)
TIGHT_BLOCK = 250
#: the seeds of every tight row: the table reports the median seed (an odd count: the median is one draw)
TIGHT_SEEDS = tuple(range(11))
#: ModelMix's τ·D (ρ·q·block in units of the summed gradient) of the suite's toy, 5 (:data:`MODELMIX_TAU_RATIO` at
#: run_suite's block 1000): held fixed at any block, so that every block runs the same mechanism
MODELMIX_TAU_D = MODELMIX_TAU_RATIO * SETTING["sample_rate"] * 1000
#: the true per-step μ = c/(σC) of the Dirac canary at :data:`SETTING` (c = C): every family bound's target
_TRUE_MU = 1.0 / SETTING["noise_multiplier"]

#: the tight audits, in the table's order (:func:`tight_seed_rows`)
JOBS = ("gdp_all", "gdp_last", "gdp_modelmix", "one_run_fdp")
#: the labels of a job's rows, in order (jobs with one row: its own label)
_SECOND = {"one_run_fdp": ("one_run_fdp", "one_run"), "gdp_modelmix": ("gdp_modelmix", "modelmix_lr")}


def tight_settings(block: int = TIGHT_BLOCK) -> tuple[DiracSetting, DiracSetting]:
    """(DP-SGD, ModelMix) Dirac settings of the tight audits at :data:`SETTING` with ``block`` runs per trainer call;
    the ModelMix one keeps τ·D = :data:`MODELMIX_TAU_D` (ρ = τD/(q·block), averaged update)."""
    block = check_positive_int("block", block)
    rho = MODELMIX_TAU_D / (SETTING["sample_rate"] * block)
    return (DiracSetting(**SETTING, block=block),
            DiracSetting(**SETTING, block=block, reduce="mean", modelmix_tau_ratio=rho))  # fmt: skip


_Job = Callable[[], list[tuple[AuditResult, tuple[float, float]]]]


def _jobs(runs: int, one_run_canaries: int, one_run_guesses: int, delta: float, delta_small: float,
          confidence: float, seed: int, block: int) -> dict[str, _Job]:  # fmt: skip
    """label -> job returning [(row, (ceiling, its upper bound))]: the largest ratio a valid audit of that row's
    mechanism and threat can reach -- 1 where the accountant is exact; the sum's release ε for the last iterate; the
    toy's exact ε for ModelMix (:func:`dpcore.audit.modelmix_exact.audit_ceiling`: MC estimate, upper bound)."""
    plain, mixed = tight_settings(block)
    q, steps = SETTING["sample_rate"], SETTING["steps"]

    def last() -> list[tuple[AuditResult, tuple[float, float]]]:
        r = audit_dirac_gdp(plain, runs, delta=delta, confidence=confidence, seed=seed, iterates="last",
                            mechanism="DP-SGD, last iterate, GDP estimator")  # fmt: skip
        ceiling = sum_release_epsilon(_TRUE_MU, q, steps, delta) / r.epsilon_claimed
        return [(r, (ceiling, ceiling))]

    def modelmix() -> list[tuple[AuditResult, tuple[float, float]]]:
        a = audit_modelmix(mixed, runs, delta=delta, confidence=confidence, seed=seed,
                           mechanism="ModelMix, released iterates")  # fmt: skip
        ceiling = audit_ceiling(a.toy, a.family.epsilon_claimed)
        return [(a.family, ceiling), (a.threshold, ceiling)]

    return {
        "gdp_all": lambda: [(audit_dirac_gdp(plain, runs, delta=delta, confidence=confidence, seed=seed,
                                             mechanism="DP-SGD, all iterates, GDP estimator"), (1.0, 1.0))],
        "gdp_last": last,
        "gdp_modelmix": modelmix,
        "one_run_fdp": lambda: [(r, (1.0, 1.0)) for r in audit_one_run_family(
            DiracSetting(**SETTING, block=one_run_canaries), guesses=one_run_guesses, delta=delta_small,
            confidence=confidence, seed=seed, mechanism="DP-SGD, one run, f-DP family")],
    }  # fmt: skip


def tight_seed_rows(
    *, runs: int, one_run_canaries: int, one_run_guesses: int, delta: float, delta_small: float,
    confidence: float = 0.95, seed: int = 0, block: int = TIGHT_BLOCK,
    jobs: tuple[str, ...] = JOBS,
) -> list[dict]:  # fmt: skip
    """One row per tight audit of ``jobs`` (``gdp_all``, ``gdp_last``, ``gdp_modelmix`` -> also ``modelmix_lr``,
    ``one_run_fdp`` -> also ``one_run``) at one ``seed``: :meth:`AuditResult.as_row` plus ``label``, ``seed``,
    ``runs_per_world``, ``goal``, ``goal_met``, ``cpu_s`` (CPU seconds of the audit; the two rows of one job share
    it), ``point_ratio`` (ε at the point estimate / accountant), ``parameter_lower`` / ``parameter_point`` (μ or θ of
    a family bound), ``parameter_true`` (the canary's true per-step μ = c/(σC)) and ``ceiling`` / ``ceiling_upper``
    (the largest ratio a valid audit of the row's mechanism and threat can reach, and its upper bound)."""
    if any(job.startswith("gdp_") for job in jobs):
        runs = check_positive_int("runs", runs, minimum=2 * block)
    delta, delta_small = check_open_unit("delta", delta), check_open_unit("delta_small", delta_small)
    confidence = check_open_unit("confidence", confidence)
    table = _jobs(runs, one_run_canaries, one_run_guesses, delta, delta_small, confidence, seed, block)
    for job in jobs:
        check_choice("jobs", job, tuple(table))
    rows = []
    for label in (j for j in table if j in jobs):
        start = time.process_time()
        results = table[label]()
        cpu = time.process_time() - start
        for (r, (ceiling, ceiling_upper)), name in zip(results, _SECOND.get(label, (label,)), strict=True):
            family = not math.isnan(r.parameter_lower)
            rows.append({"label": name, **r.as_row(), "goal": GOALS[name], "goal_met": bool(r.ratio >= GOALS[name]),
                         "seed": seed, "runs_per_world": 1 if name.startswith("one_run") else runs,
                         "point_ratio": r.epsilon_point / r.epsilon_claimed, "parameter_lower": r.parameter_lower,
                         "parameter_point": r.parameter_point, "parameter_true": _TRUE_MU if family else math.nan,
                         "ceiling": ceiling, "ceiling_upper": ceiling_upper, "cpu_s": cpu})  # fmt: skip
    return rows


def _held_back(label: str, rows: pd.DataFrame, goal: float) -> str:
    """What limits a row, with numbers (medians over the seeds)."""
    med = rows.median(numeric_only=True)
    stat = med.parameter_lower / med.parameter_point if med.parameter_point > 0 else math.nan
    if label in ("gdp_all", "gdp_last"):
        text = (f"point estimate's ratio ε(μ̂)/ε = {med.point_ratio:.3f}; μ_lb/μ̂ = {stat:.3f} (the 95 % lower "
                f"confidence bound from {int(med.runs_per_world)} runs per world: the statistical factor)")  # fmt: skip
        if label == "gdp_last":
            text += (f"; ceiling of any last-iterate audit (exact ε of releasing the sum at the true μ) "
                     f"{med.ceiling:.3f}")
        return text
    if label == "gdp_modelmix":
        return (f"the RDP accountant's looseness: no valid audit of this toy exceeds ratio {med.ceiling:.2f} (MC "
                f"estimate; {med.ceiling_upper:.2f} at its 95 % upper bound); then statistics: θ_lb/θ̂ = {stat:.3f}, "
                f"point estimate's ratio {med.point_ratio:.3f}")
    if label == "modelmix_lr":
        return (f"distribution-free: half the runs choose the threshold and Clopper–Pearson must count false "
                f"positives at δ; point estimate's ratio {med.point_ratio:.3f}; ceiling {med.ceiling:.2f}")
    if label == "one_run_fdp":
        return (f"θ_lb/θ = {med.parameter_lower / med.parameter_true:.3f} (θ = c/(σC) = {med.parameter_true:g}): one "
                "run gives one count of right guesses, and the recursion's bound at that count is all the statistics "
                "there is (the number of guesses swept in benchmarks/audit_tightness.md)")
    return "Steinke et al.'s (ε, δ) bound: one (ε, δ) pair tested, δ's term 2mδ grows with the m canaries"


def run_tight_suite(
    *, runs: int, one_run_canaries: int, one_run_guesses: int, delta: float, delta_small: float,
    confidence: float = 0.95, block: int = TIGHT_BLOCK, seeds: tuple[int, ...] = TIGHT_SEEDS,
    jobs: tuple[str, ...] = JOBS,
) -> pd.DataFrame:  # fmt: skip
    """One row per tight audit of ``jobs`` (``label`` in :data:`GOALS`): the audit at the *median seed* of ``seeds``
    (an odd number of seeds: that row is one draw, its ratio the median), with ``seeds`` (how many), ``ratio_min`` /
    ``ratio_max`` over them, ``share_goal_met`` (the share of seeds at or above the goal), ``goal_met`` (the median
    meets the goal), ``cpu_s`` (median CPU seconds of one audit, both worlds) and ``note``: what holds the row back,
    with numbers (:func:`tight_seed_rows` gives the per-seed rows; ``benchmarks/audit_tightness.py`` the same audits
    at other runs per world)."""
    if not isinstance(seeds, tuple) or not seeds or len(seeds) % 2 == 0:
        raise ValueError(f"seeds must be a non-empty tuple of an odd number of seeds, got {seeds!r}")
    kw = dict(runs=runs, one_run_canaries=one_run_canaries, one_run_guesses=one_run_guesses, delta=delta,
              delta_small=delta_small, confidence=confidence, block=block, jobs=jobs)  # fmt: skip
    per_seed = pd.DataFrame([row for seed in seeds for row in tight_seed_rows(seed=seed, **kw)])
    out = []
    for label in dict.fromkeys(per_seed.label):
        rows = per_seed[per_seed.label == label]
        median = rows.sort_values(["ratio", "seed"]).iloc[len(rows) // 2]
        goal = GOALS[label]
        met = bool(median.ratio >= goal)
        share = float((rows.ratio >= goal).mean())
        spread = (f"seed {int(median.seed)} is the median of {len(rows)} seeds ({min(seeds)}–{max(seeds)}): ratio "
                  f"{median.ratio:.3f} [{rows.ratio.min():.3f}, {rows.ratio.max():.3f}], ≥ {goal:.2f} in "
                  f"{int(round(share * len(rows)))}/{len(rows)} seeds")  # fmt: skip
        held = _held_back(label, rows, goal)
        note = f"{'met' if met else 'not met'}: {spread}; {'limits' if met else 'held back by'}: {held}"
        out.append({**median.drop(["cpu_s"]).to_dict(), "seeds": len(rows), "ratio_min": rows.ratio.min(),
                    "ratio_max": rows.ratio.max(), "share_goal_met": share, "goal_met": met, "note": note,
                    "cpu_s": float(rows.cpu_s.median())})  # fmt: skip
    return pd.DataFrame(out)


@dataclass(frozen=True)
class TradeoffAudit:
    """The empirical trade-off curve of one audit beside the accountant's f-DP curve ``accountant`` (α -> β)."""

    curve: EmpiricalTradeoff
    accountant: Callable[[np.ndarray], np.ndarray]
    runs: int
    score: str
    violated: bool  # the bands exclude the accountant's curve somewhere (an f-DP violation at the confidence)

    def table(self) -> pd.DataFrame:
        """One row per threshold: FPR, FNR, their bands, and the accountant's f at the FPR."""
        c = self.curve
        return pd.DataFrame({"threshold": c.thresholds, "fpr": c.fpr, "fnr": c.fnr, "fpr_lower": c.fpr_lower,
                             "fpr_upper": c.fpr_upper, "fnr_lower": c.fnr_lower, "fnr_upper": c.fnr_upper,
                             "accountant_f_at_fpr": self.accountant(c.fpr)})  # fmt: skip


def dpsgd_tradeoff(
    *, runs: int, confidence: float = 0.95, points: int = 200, block: int = TIGHT_BLOCK, seed: int = 0,
    epsilon_grid: np.ndarray | None = None,
) -> TradeoffAudit:  # fmt: skip
    """The DP-SGD all-iterates audit at :data:`suite.SETTING` as a trade-off curve: ``runs`` trainer runs per world,
    each scored by the likelihood ratio of its T updates (:func:`dpcore.audit.dirac.dirac_scores`, ``"likelihood"``:
    the Neyman–Pearson test of the Dirac canary's Poisson-subsampled Gaussian steps), FPR/FNR over ``points``
    thresholds with DKW bands (:func:`dpcore.audit.gdp.empirical_tradeoff`), against the accountant's curve
    sup_ε f_{ε, δ(ε)} of the PLD δ(ε) (Dong, Roth, Su 2022, Prop. 2.5; :func:`dpcore.accounting.pld.pld_delta`)."""
    runs = check_positive_int("runs", runs, minimum=block)
    confidence = check_open_unit("confidence", confidence)
    eps = np.linspace(0.0, 12.0, 241) if epsilon_grid is None else np.asarray(epsilon_grid, dtype=float)
    if eps.ndim != 1 or eps.size < 2 or not np.all(np.isfinite(eps)) or eps.min() < 0:
        raise ValueError("epsilon_grid must be a 1-D array of at least two finite ε >= 0")
    setting = tight_settings(block)[0]
    u_in, _ = dirac_updates(setting, runs, canary=True, seed=seed)
    u_out, _ = dirac_updates(setting, runs, canary=False, seed=seed)
    curve = empirical_tradeoff(dirac_scores(u_in, setting, "likelihood"), dirac_scores(u_out, setting, "likelihood"),
                               confidence=confidence, points=points)  # fmt: skip
    deltas = np.array([pld_delta(SETTING["noise_multiplier"], sample_rate=SETTING["sample_rate"],
                                 steps=SETTING["steps"], epsilon=float(e)) for e in eps])  # fmt: skip
    f = tradeoff_from_delta_curve(eps, np.clip(deltas, 0.0, 1.0))
    return TradeoffAudit(curve, f, runs, "likelihood ratio of the T updates", tradeoff_violation(curve, f))


def tradeoff_figure(audit: TradeoffAudit, *, title: str = "") -> Figure:
    """Two panels, linear and log-FPR (the small-α tail, where ε at small δ is decided): the empirical (FPR, FNR)
    curve, its simultaneous band (between the (lower, lower) and (upper, upper) corners), the accountant's f-DP curve
    and the no-privacy line 1 − α."""
    if not isinstance(audit, TradeoffAudit):
        raise ValueError(f"audit must be a TradeoffAudit, got {type(audit).__name__}")
    c = audit.curve
    fig, axes = new_axes(2, width=9.0, height=4.0)
    alpha = np.concatenate([[0.0], np.geomspace(1e-5, 1.0, 400)])
    for ax, log in zip(axes[0], (False, True), strict=True):
        emp, acc = series_style(0, n=2, markers=False), series_style(1, n=2, markers=False)
        ax.plot(alpha, 1 - alpha, ls=":", color="0.5", label="no privacy 1 − α")
        ax.plot(alpha, audit.accountant(alpha), color=acc["color"], lw=2.0, label="accountant's f-DP curve (PLD)")
        ax.fill(np.concatenate([c.fpr_lower, c.fpr_upper[::-1]]), np.concatenate([c.fnr_lower, c.fnr_upper[::-1]]),
                color=emp["color"], alpha=0.2, lw=0, label=f"{c.confidence:.0%} simultaneous band (DKW)")  # fmt: skip
        ax.plot(c.fpr, c.fnr, color=emp["color"], lw=1.4, label=f"empirical, {audit.runs} runs per world")
        if log:
            ax.set(xscale="log", xlim=(1e-4, 1), ylim=(0, 1))
        else:
            ax.set(xlim=(0, 1), ylim=(0, 1))
        ax.set(xlabel="FPR (type I error α)", ylabel="FNR (type II error β)",
               title=("log FPR axis" if log else "linear axes"))  # fmt: skip
    axes[0, 0].legend(loc="upper right", fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig
