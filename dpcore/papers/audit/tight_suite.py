"""The tight audits of issue 42 at the privacy-audit notebook's DP-SGD setting (suite.SETTING):
the GDP estimator with every update / the last iterate observed, ModelMix's released states audited with the
exact trajectory likelihood ratio and the exact toy curve (:mod:`dpcore.audit.modelmix_exact`: a family row
``gdp_modelmix`` and a distribution-free row ``modelmix_lr``), and the one-run game bounded
under the accountant's trade-off family beside Steinke et al.'s (ε, δ) bound (:mod:`dpcore.audit.tight`).  Each row
carries the goal of the issue (ratio lower bound / accountant ε) and whether it is met.  Also the empirical trade-off
curve of the all-iterates audit (FPR/FNR of the likelihood-ratio score with simultaneous DKW bands,
:func:`dpcore.audit.gdp.empirical_tradeoff`) against the accountant's f-DP curve (:func:`dpsgd_tradeoff`,
:func:`tradeoff_figure`; Nasr et al. 2023, §5, Fig. 2 draws the same comparison).
"""

from __future__ import annotations

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
from dpcore.audit.modelmix_exact import ModelMixAudit, audit_modelmix
from dpcore.audit.threat import AuditResult
from dpcore.audit.tight import audit_dirac_gdp, audit_one_run_family
from dpcore.papers.audit.suite import MODELMIX_TAU_RATIO, SETTING
from dpcore.plots import new_axes, series_style
from dpcore.validation import check_open_unit, check_positive_int

__all__ = ["GOALS", "run_tight_suite", "TradeoffAudit", "dpsgd_tradeoff", "tradeoff_figure"]

#: issue 42's goals: ratio of the audit's lower bound to the accountant's ε
GOALS = {"gdp_all": 0.90, "gdp_last": 0.80, "gdp_modelmix": 0.80, "modelmix_lr": 0.80, "one_run_fdp": 0.60,
         "one_run": 0.60}


#: the labels of a job's rows, in order (jobs with one row: its own label)
_SECOND = {"one_run_fdp": ("one_run_fdp", "one_run"), "gdp_modelmix": ("gdp_modelmix", "modelmix_lr")}


def _modelmix_rows(audit: ModelMixAudit) -> tuple[AuditResult, AuditResult]:
    """(family row, distribution-free row) of :func:`dpcore.audit.modelmix_exact.audit_modelmix`."""
    return audit.family, audit.threshold


def run_tight_suite(
    *, runs: int, one_run_canaries: int, one_run_guesses: int, delta: float, delta_small: float,
    confidence: float = 0.95, block: int = 1000, seed: int = 0,
) -> pd.DataFrame:  # fmt: skip
    """One row per tight audit (``label`` in :data:`GOALS`), with ``goal``, ``goal_met`` and ``cpu_s``."""
    runs = check_positive_int("runs", runs, minimum=block)
    delta, delta_small = check_open_unit("delta", delta), check_open_unit("delta_small", delta_small)
    plain = DiracSetting(**SETTING, block=block)
    mixed = DiracSetting(**SETTING, block=block, reduce="mean", modelmix_tau_ratio=MODELMIX_TAU_RATIO)
    jobs = {
        "gdp_all": lambda: [audit_dirac_gdp(plain, runs, delta=delta, confidence=confidence, seed=seed,
                                            mechanism="DP-SGD, all iterates, GDP estimator")],
        "gdp_last": lambda: [audit_dirac_gdp(plain, runs, delta=delta, confidence=confidence, seed=seed,
                                             iterates="last", mechanism="DP-SGD, last iterate, GDP estimator")],
        "gdp_modelmix": lambda: list(_modelmix_rows(audit_modelmix(
            mixed, runs, delta=delta, confidence=confidence, seed=seed, mechanism="ModelMix, released iterates"))),
        "one_run_fdp": lambda: list(audit_one_run_family(
            DiracSetting(**SETTING, block=one_run_canaries), guesses=one_run_guesses, delta=delta_small,
            confidence=confidence, seed=seed, mechanism="DP-SGD, one run, f-DP family")),
    }  # fmt: skip
    rows = []
    for label, job in jobs.items():
        start = time.process_time()
        results = job()
        cpu = time.process_time() - start
        for r, name in zip(results, _SECOND.get(label, (label,)), strict=False):
            rows.append({"label": name, **r.as_row(), "goal": GOALS[name], "goal_met": bool(r.ratio >= GOALS[name]),
                         "cpu_s": cpu})  # fmt: skip
    return pd.DataFrame(rows)


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
    *, runs: int, confidence: float = 0.95, points: int = 200, block: int = 1000, seed: int = 0,
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
    setting = DiracSetting(**SETTING, block=block)
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
