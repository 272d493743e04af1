"""Auditing one ISRL-DP silo: every message it sends, against its per-silo ε.

Inter-silo record-level DP (Lowy & Razaviyayn, "Private Federated Learning Without a Trusted Server", ICLR 2023,
Def. 2) protects each record of a silo against the whole transcript of messages that silo sends, under replace-one
neighbours.  In Noisy ISRL-DP MB-SGD (Algorithm 2) silo i sends, every round, the mean of the clipped gradients of
K records drawn uniformly *with replacement* from its n records plus N(0, σ² I).

**Canary**: a record of the audited silo (silo 0) whose gradient is always clipped to −C·e in one coordinate
(squared loss, x = e, a label of 10⁶), every other record of every silo having x = 0 in that coordinate; its
replace-one neighbour has the opposite label (gradient +C·e).  The coordinate of silo 0's round-r message is then
(c_r/K)·(∓C) + N(0, σ²), c_r ~ Binomial(K, 1/n) the number of times the canary was drawn.

**Threat model**: the adversary sees every message silo 0 sends (the server, or anyone on the channel: ISRL-DP
trusts no one), replace-one neighbours.  Scores: ``"likelihood"``, Σ_r log of the ratio of the two binomial
Gaussian mixtures (the Neyman–Pearson statistic of the composition), and ``"sum"``, −Σ_r (message coordinate).

The runs are the federation's own *streams* (:class:`dpcore.federated.silos.SiloPool` runs S independent copies of
the protocol at once), driven by :func:`dpcore.federated.algorithms.mb_sgd` unchanged; the audit only taps the
messages silo 0 returns.  The claimed ε comes from the caller's ``accountant(record, delta)`` applied to the run
record :func:`~dpcore.federated.algorithms.mb_sgd` returns for silo 0 (the library's
:func:`~dpcore.accounting.records.epsilon_for_record` refuses sampling with replacement; paper 001's tight
with-replacement PLD accountant covers it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from scipy import stats
from scipy.special import logsumexp

from dpcore.accounting.run_record import RunRecord
from dpcore.audit.estimators import held_out_bound
from dpcore.audit.threat import AuditResult, ThreatModel
from dpcore.federated.algorithms import mb_sgd
from dpcore.federated.models import SquaredLoss
from dpcore.federated.silos import SILO_CLIP_TARGETS, SiloPool
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int

__all__ = ["SiloSetting", "SILO_SCORES", "silo_messages", "silo_noise_tap", "silo_scores", "audit_silo"]

SILO_SCORES = ("likelihood", "sum")
_LABEL = 1e6  # |label| of the canary: its gradient is clipped to norm C in every round


@dataclass(frozen=True)
class SiloSetting:
    """The audited federation: ``silos`` silos of ``records`` records each, all participating every round;
    K = ``batch_size`` draws with replacement per message, R = ``rounds``, message noise std σ = ``noise_std``,
    per-record clip norm C; ``clip_scope`` as :func:`dpcore.federated.algorithms.mb_sgd` (``"example"``, Algorithm 2;
    ``"batch_mean"``, the authors' insurance script: one clip of the minibatch mean)."""

    records: int
    batch_size: int
    rounds: int
    noise_std: float
    clip_norm: float = 1.0
    silos: int = 2
    clip_scope: str = "example"

    def __post_init__(self) -> None:
        check_positive_int("records", self.records, minimum=2)
        check_positive_int("batch_size", self.batch_size)
        check_positive_int("rounds", self.rounds)
        check_positive("noise_std", self.noise_std)
        check_positive("clip_norm", self.clip_norm)
        check_positive_int("silos", self.silos)
        check_choice("clip_scope", self.clip_scope, SILO_CLIP_TARGETS)
        if self.batch_size > self.records:
            raise ValueError(f"batch_size must be in [1, records={self.records}], got {self.batch_size}")


class _TappedPool(SiloPool):
    """A :class:`SiloPool` that also keeps coordinate 0 of every message silo 0 sends (the adversary's tap)."""

    __slots__ = ("taps", "noise_taps")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.taps: list[torch.Tensor] = []
        self.noise_taps: list[torch.Tensor] = []

    def mb_sgd_messages(self, models, *, trial_of_stream, participants, **kwargs):
        out = super().mb_sgd_messages(models, trial_of_stream=trial_of_stream, participants=participants, **kwargs)
        at = (participants == 0).to(torch.int64).argmax(dim=1)  # silo 0's slot in each stream's message list
        rows = torch.arange(out.shape[0])
        self.taps.append(out[rows, at, 0, 0, 0].clone())
        if out.shape[-1] > 2:  # the noise tap: a coordinate in which every gradient is 0
            self.noise_taps.append(out[rows, at, 0, 0, 2].clone())
        return out


def _pool(setting: SiloSetting, sign: float, seed: int, dims: int = 2) -> _TappedPool:
    n, d = setting.records, dims
    x = np.zeros((1, setting.silos, n, d))
    y = np.zeros((1, setting.silos, n))
    x[0, :, :, 1] = 1.0  # every record: gradient (w_1 − 0)·e_1, zero in the canary's coordinate 0
    x[0, 0, 0] = 0.0
    x[0, 0, 0, 0] = 1.0  # silo 0's record 0: the canary, x = e_0
    y[0, 0, 0] = sign * _LABEL
    return _TappedPool(x, y, np.full((1, setting.silos), n), SquaredLoss(), seed=seed, dtype=torch.float64)


def _run(setting: SiloSetting, runs: int, canary: bool, seed: int, dims: int) -> tuple[_TappedPool, RunRecord]:
    if not isinstance(setting, SiloSetting):
        raise ValueError("setting must be a SiloSetting")
    runs = check_positive_int("runs", runs)
    pool = _pool(setting, 1.0 if canary else -1.0, seed, dims)
    _, records = mb_sgd(
        pool,
        rounds=setting.rounds,
        silos_per_round=setting.silos,
        stepsize=[1.0],
        batch_size=setting.batch_size,
        trial_of_stream=[0] * runs,
        noise_std=setting.noise_std,
        clip=[setting.clip_norm],
        seed=seed,
        output="last",
        return_records=True,
        data="dpcore.audit ISRL-DP silo canary",
        clip_scope=setting.clip_scope,
    )
    return pool, records[(0, 0)]


def silo_messages(setting: SiloSetting, runs: int, *, canary: bool, seed: int = 0) -> tuple[np.ndarray, RunRecord]:
    """Coordinate 0 of silo 0's R messages in ``runs`` independent runs of :func:`mb_sgd` (shape (runs, R)), with
    the canary (``canary=True``: gradient −C·e_0) or its replace-one neighbour (+C·e_0); also silo 0's run record."""
    pool, record = _run(setting, runs, canary, seed, 2)
    return torch.stack(pool.taps, dim=1).numpy(), record


def silo_noise_tap(
    setting: SiloSetting, runs: int, *, canary: bool, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, RunRecord]:
    """As :func:`silo_messages`, in a federation with one more coordinate (2) in which every record's gradient is 0:
    returns (canary coordinate, that coordinate, record), both (runs, R).  The second is the silo's message noise
    alone, N(0, σ²) from the same noise draw of the same messages: it measures σ of the mechanism that ran."""
    pool, record = _run(setting, runs, canary, seed, 3)
    return torch.stack(pool.taps, dim=1).numpy(), torch.stack(pool.noise_taps, dim=1).numpy(), record


def silo_scores(messages: np.ndarray, setting: SiloSetting, score: str) -> np.ndarray:
    """One score per run (larger: more likely the canary's world); see the module docstring."""
    check_choice("score", score, SILO_SCORES)
    u = np.asarray(messages, dtype=float)
    if u.ndim != 2 or u.shape[0] == 0 or u.shape[1] != setting.rounds:
        raise ValueError(f"messages must be a non-empty (runs, {setting.rounds}) array, got shape {u.shape}")
    if score == "sum":
        return -u.sum(1)
    k = setting.batch_size
    counts = np.arange(k + 1)
    logw = stats.binom.logpmf(counts, k, 1.0 / setting.records)
    shift = counts * setting.clip_norm / k
    s2 = 2 * setting.noise_std**2
    log_in = logsumexp(logw - (u[..., None] + shift) ** 2 / s2, axis=-1)  # canary: mean −c·C/K
    log_out = logsumexp(logw - (u[..., None] - shift) ** 2 / s2, axis=-1)
    return (log_in - log_out).sum(1)


def audit_silo(
    setting: SiloSetting,
    runs: int,
    *,
    accountant: Callable[[RunRecord, float], float],
    delta: float,
    confidence: float = 0.95,
    seed: int = 0,
    mechanism: str = "ISRL-DP MB-SGD, one silo's messages",
    claim_label: str = "",
) -> AuditResult:
    """Many-runs audit of silo 0 with ``runs`` runs per world (half select the test, half bound ε), against
    ``accountant(record, delta)``: the per-silo ε of silo 0's run record."""
    if not isinstance(setting, SiloSetting):
        raise ValueError("setting must be a SiloSetting")
    if not callable(accountant):
        raise ValueError("accountant must be a callable (record, delta) -> epsilon")
    runs = check_positive_int("runs", runs, minimum=4)
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    m_in, record = silo_messages(setting, runs, canary=True, seed=seed)
    m_out, _ = silo_messages(setting, runs, canary=False, seed=seed + 1)
    score, bound, held_out = held_out_bound(
        lambda name: (silo_scores(m_in, setting, name), silo_scores(m_out, setting, name)),
        SILO_SCORES, delta=delta, confidence=confidence,
    )  # fmt: skip
    claimed = float(accountant(record, delta))
    if math.isnan(claimed) or claimed < 0:
        raise ValueError(f"accountant must return an epsilon >= 0, got {claimed}")
    threat = ThreatModel(
        iterates="all",
        neighbouring="replace-one",
        canary=f"record of silo 0 with gradient clipped to ∓{setting.clip_norm:g}·e in every round "
        f"(n = {setting.records}, K = {setting.batch_size} draws with replacement, {setting.silos} silos)",
        estimator="many-runs",
        confidence=confidence,
        runs=held_out,
    )
    return AuditResult(
        mechanism, threat, bound.epsilon, bound.point, claimed, delta, score, bound.threshold,
        claim="accountant", claim_label=claim_label,
    )  # fmt: skip
