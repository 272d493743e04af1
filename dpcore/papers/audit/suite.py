"""The audits of the privacy-audit notebook: DP-SGD with every update observed, with the last iterate only, in
one run, ModelMix with only its mixed states observed (against its amplified ε), and the broken variants,
each against the accountant's ε of the same configuration (:func:`run_suite`); batch and mixed clipping under
shuffling (van Dijk et al., "Generalizing DP-SGD with Shuffling and Batch Clipping") against the A_1 ε and a
labelled Poisson heuristic (:func:`run_shuffled_suite`); one ISRL-DP silo's messages (Lowy & Razaviyayn, ICLR 2023)
against its per-silo ε (:func:`run_silo_audit`).

Every audit uses gradient-space Dirac canaries (Nasr et al. 2023, "Tight Auditing of Differentially Private Machine
Learning", §4), run through :class:`dpcore.training.Trainer` or :func:`dpcore.federated.algorithms.mb_sgd`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpcore.accounting.run_record import RunRecord
from dpcore.accounting.shuffle_lower import DIRAC_PAIR, REPLACE_ONE_PAIR, shuffle_lower_epsilon
from dpcore.audit import BROKEN, DiracSetting, audit_dirac, audit_one_run, broken
from dpcore.audit.federated import SiloSetting, audit_silo
from dpcore.audit.shuffled import ShuffleSetting, audit_shuffled
from dpcore.plots import new_axes, series_style
from dpcore.validation import check_open_unit, check_positive_int

__all__ = [
    "SETTING",
    "SHUFFLE_SETTINGS",
    "SILO_SETTING",
    "run_suite",
    "run_shuffled_suite",
    "shuffled_lower_bounds",
    "shuffle_label",
    "run_silo_audit",
    "suite_figure",
]

#: σ = 2, Poisson rate q = 1/2, T = 8 rounds, C = 1: ε ≈ 2.37 at δ = 1e-3 and ≈ 4.4 at δ = 1e-5 (PLD)
SETTING = dict(noise_multiplier=2.0, sample_rate=0.5, steps=8, clip_norm=1.0)
#: ModelMix's τ_k = ρ·η_k with the averaged update (reduce="mean"): u = ρ·q·n/C = 5 in the accountant's units
MODELMIX_TAU_RATIO = 0.01
#: the canary of the clipping-disabled variant has gradient norm 10 C
BROKEN_CANARY_NORM = 10.0
#: paper 003's BC and MC (s = 2, m = 2) under shuffling: |S_b| = 4, b = 2 batches per epoch (N = 8), E = 2, σ = 1
#: (smaller than the paper's σ = 2, so that a few hundred runs have power): A_1 ε = ε(G_{√2}) ≈ 4.85 at δ = 1e-3,
#: the Poisson heuristic (q = 1/2, T = 4) ≈ 4.48
SHUFFLE_SETTINGS = {
    "bc_sh": ShuffleSetting("batch", batch_size=4, rounds_per_epoch=2, epochs=2, noise_multiplier=1.0),
    "mc_sh": ShuffleSetting("mixed", batch_size=4, rounds_per_epoch=2, epochs=2, noise_multiplier=1.0, group_size=2),
}
#: paper 001's ISRL-DP MB-SGD: 2 silos of n = 4 records, K = 2 draws with replacement, R = 8 rounds, σ = 1, C = 1
#: (per-silo ε ≈ 4.71 at δ = 1e-3 with paper 001's with-replacement PLD accountant)
SILO_SETTING = SiloSetting(records=4, batch_size=2, rounds=8, noise_std=1.0, clip_norm=1.0, silos=2)


def run_suite(
    *,
    runs: int,
    broken_runs: int,
    one_run_canaries: int,
    one_run_guesses: int,
    delta: float,
    delta_small: float,
    confidence: float = 0.95,
    block: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per audit (:meth:`dpcore.audit.AuditResult.as_row` plus ``label``, the row's name in
    :mod:`dpcore.papers.audit.claims`, and ``kind``: ``correct`` or ``broken``).

    ``runs`` / ``broken_runs``: runs per world (half select the test, half give the bound); ``delta`` the δ of
    the many-runs audits and ``delta_small`` the δ of one more all-iterates audit and of the one-run audit (whose
    δ term 2mδ of Steinke et al.'s Thm 5.2 grows with the number m of canaries: δ = 1e-3 with m = 10,000 would
    certify nothing).  The one-run audit guesses ``one_run_guesses`` canaries (half "in", half "out").
    """
    runs = check_positive_int("runs", runs, minimum=2 * block)
    broken_runs = check_positive_int("broken_runs", broken_runs, minimum=2 * block)
    one_run_canaries = check_positive_int("one_run_canaries", one_run_canaries, minimum=2)
    delta, delta_small = check_open_unit("delta", delta), check_open_unit("delta_small", delta_small)
    setting = DiracSetting(**SETTING, block=block)
    common = dict(confidence=confidence, seed=seed)
    results = [
        ("all", audit_dirac(setting, runs, delta=delta, mechanism="DP-SGD, all iterates", **common)),
        ("all_small_delta", audit_dirac(setting, runs, delta=delta_small, mechanism="DP-SGD, all iterates", **common)),
        (
            "last",
            audit_dirac(setting, runs, delta=delta, iterates="last", mechanism="DP-SGD, last iterate", **common),
        ),
        (
            "one_run",
            audit_one_run(
                DiracSetting(**SETTING, block=one_run_canaries),
                guesses=one_run_guesses,
                delta=delta_small,
                mechanism="DP-SGD, one run",
                **common,
            ),
        ),
    ]
    mixed = DiracSetting(**SETTING, block=block, reduce="mean", modelmix_tau_ratio=MODELMIX_TAU_RATIO)
    results.append(("modelmix", audit_dirac(mixed, runs, delta=delta, mechanism="ModelMix, mixed states", **common)))
    for name in BROKEN:
        canary = BROKEN_CANARY_NORM if name == "clipping-disabled" else None
        with broken(name):
            result = audit_dirac(
                DiracSetting(**SETTING, canary_norm=canary, block=block),
                broken_runs,
                delta=delta,
                mechanism=f"BROKEN: {name}",
                **common,
            )
        results.append((name, result))
    rows = [{"label": label, "kind": "broken" if label in BROKEN else "correct", **r.as_row()} for label, r in results]
    return pd.DataFrame(rows)


def shuffle_label(prefix: str, key: str) -> str:
    """The table label of an :func:`dpcore.audit.audit_shuffled` result: ``("bc_sh", "A_0_heuristic")`` ->
    ``"bc_sh_a0_heuristic"`` (the labels of :data:`dpcore.papers.audit.claims.CORRECT_KEYS`)."""
    return f"{prefix}_{key.lower().replace('a_', 'a', 1)}"


def shuffled_lower_bounds(setting: ShuffleSetting, delta: float) -> dict[str, float]:
    """The lower bounds for shuffling under the standard adversary (Chua et al. 2024;
    :func:`dpcore.accounting.shuffle_lower.shuffle_lower_epsilon`) of a shuffled audit setting at ``delta``, σ per
    unit sensitivity 2C (Algorithm 1's replace-one noise 2Cσ): ``shuffled_lower`` under the replace-one pair
    (:data:`~dpcore.accounting.shuffle_lower.REPLACE_ONE_PAIR`, realisable by Algorithm 1: the mechanism's true A_0 ε
    is at least this) and ``shuffled_lower_canary`` under the Dirac pair the audit's canary realises
    (:data:`~dpcore.accounting.shuffle_lower.DIRAC_PAIR`: the true ε of the audited pair is at least this)."""
    if not isinstance(setting, ShuffleSetting):
        raise ValueError(f"setting must be a ShuffleSetting, got {type(setting).__name__}")
    delta = check_open_unit("delta", delta)
    kw = dict(rounds_per_epoch=setting.rounds_per_epoch, epochs=setting.epochs, delta=delta)
    return {
        "shuffled_lower": float(shuffle_lower_epsilon(setting.noise_multiplier, pair=REPLACE_ONE_PAIR, **kw)),
        "shuffled_lower_canary": float(shuffle_lower_epsilon(setting.noise_multiplier, pair=DIRAC_PAIR, **kw)),
    }


def run_shuffled_suite(*, runs: int, delta: float, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """BC and MC under shuffling (:data:`SHUFFLE_SETTINGS`), ``runs`` trainer runs per world each: rows
    ``<bc_sh|mc_sh>_a1`` (adversary A_1 vs the A_1 ε), ``_a0`` (standard adversary vs the A_1 ε), both ``kind``
    ``correct``, and ``_a0_heuristic`` (standard adversary vs the Poisson heuristic, ``kind`` ``heuristic``).

    The standard adversary's rows (``_a0``, ``_a0_heuristic``) also carry the lower bounds for shuffling of
    :func:`shuffled_lower_bounds` (columns ``shuffled_lower``, ``shuffled_lower_canary``), so that each reads: audit
    bound (``epsilon_lower``) / lower bound for shuffling / A_1 upper bound (the ``_a0`` row's ``epsilon_claimed``);
    the A_1 rows leave them empty (A_1's ε is G_{√E/σ} exactly)."""
    runs = check_positive_int("runs", runs, minimum=4)
    delta = check_open_unit("delta", delta)
    rows = []
    for i, (prefix, setting) in enumerate(SHUFFLE_SETTINGS.items()):
        results = audit_shuffled(setting, runs, delta=delta, confidence=confidence, seed=seed + 1000 * (i + 1))
        lower = shuffled_lower_bounds(setting, delta)
        for key, result in results.items():
            label = shuffle_label(prefix, key)
            extra = lower if not result.threat.knows_batches else dict.fromkeys(lower, np.nan)
            rows.append({"label": label, "kind": result.claim.replace("accountant", "correct"), **result.as_row(),
                         **extra})  # fmt: skip
    return pd.DataFrame(rows)


def run_silo_audit(
    *,
    runs: int,
    accountant: Callable[[RunRecord, float], float],
    delta: float,
    confidence: float = 0.95,
    seed: int = 0,
    claim_label: str = "",
) -> pd.DataFrame:
    """One row (label ``isrl_silo``): silo 0's messages in :data:`SILO_SETTING` against ``accountant(record, δ)``,
    the per-silo ε of its run record (paper 001's with-replacement accountant, passed in by the notebook: a paper
    package never imports another)."""
    result = audit_silo(
        SILO_SETTING, runs, accountant=accountant, delta=delta, confidence=confidence, seed=seed,
        claim_label=claim_label,
    )  # fmt: skip
    return pd.DataFrame([{"label": "isrl_silo", "kind": "correct", **result.as_row()}])


def suite_figure(table: pd.DataFrame, *, title: str = "") -> Figure:
    """Horizontal bars: the lower bound (at its confidence) per audit, the point estimate and the claimed ε."""
    if table.empty:
        raise ValueError("table must have at least one audit row")
    fig, axes = new_axes(1, width=7.5, height=0.55 * len(table) + 1.6)
    ax = axes[0, 0]
    labels = [
        f"{m}\nδ={d:g}, {t}" for m, d, t in zip(table.mechanism, table.delta, table.threat_estimator, strict=True)
    ]
    pos = np.arange(len(table))[::-1]
    colour_of = {"correct": 0, "heuristic": 1, "broken": 3}
    colours = [series_style(colour_of[k], n=4, markers=False)["color"] for k in table.kind]
    lower = np.minimum(table.epsilon_lower.to_numpy(float), 12.0)
    ax.barh(pos, lower, height=0.5, color=colours, alpha=0.8, label="lower bound (95 % conf.)")
    ax.scatter(table.epsilon_claimed, pos, marker="|", s=400, color="black", zorder=3,
               label="claimed ε (accountant; heuristic rows: Poisson heuristic)")  # fmt: skip
    point = table.epsilon_point.to_numpy(float)
    ok = np.isfinite(point)
    ax.scatter(np.minimum(point[ok], 12.0), pos[ok], marker="o", s=18, color="0.3", zorder=3, label="point estimate")
    right = np.nanmax(np.vstack([lower, np.where(np.isfinite(point), np.minimum(point, 12.0), 0.0),
                                 table.epsilon_claimed.to_numpy(float)]), axis=0)  # fmt: skip
    for p, lb, x, flag in zip(pos, lower, right, table.flagged, strict=True):
        ax.annotate(f"{lb:.2f}" + ("  FLAGGED" if flag else ""), (x, p), xytext=(6, -3), textcoords="offset points",
                    fontsize=7, color="firebrick" if flag else "black")  # fmt: skip
    ax.set_ylim(-0.6, len(table) + 0.9)  # room above the first row for the legend
    ax.set_yticks(pos, labels, fontsize=7)
    ax.set(xlabel="ε", title=title, xlim=(0, 13.5))
    ax.legend(loc="upper right", fontsize=7)
    return fig
