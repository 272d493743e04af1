"""Gradient-space (Dirac) canary audit of DP-SGD, run through the trainer's own code.

The strongest adversary of Nasr et al. 2023 ("Tight Auditing of Differentially Private Machine Learning",
USENIX Security, §4 "Dirac canary", white-box threat model with every intermediate update observed) inserts
a *gradient* canary: an example whose gradient is g_c = c·e_j (norm c in one coordinate j) while every other
gradient is 0 in coordinate j.  DP-SGD must hide whether the canary was in the data set (add/remove
neighbours): the observed update's coordinate j is  B_k·[g_c]_C + N(0, (κCσ)²)  in round k, where
B_k ~ Bernoulli(q) is the Poisson inclusion of the canary.

**Every run goes through** :class:`dpcore.training.Trainer` (its Poisson :class:`~dpcore.training.BatchPlan`,
:func:`~dpcore.training.clipped_group_sum` with per-example clipping, the noise of
:meth:`dpcore.training.Privatizer.noise` and the SGD step).  Many runs are vectorised without changing the
mechanism: a linear model ``nn.Linear(R, 1)`` with the per-example loss w·x has per-example gradient x, and
the data set of run r's canary is x_r = c·e_r, so coordinate r of the model is run r.  Per-example clipping
acts on each x_r alone, the noise is independent per coordinate and the Poisson sampler includes each x_r
independently with probability q, so the R coordinates are R independent DP-SGD runs with a Dirac canary.
The "without canary" world uses the same trainer on data whose gradients are all 0.  With learning rate 1
and plain SGD the round-k update is exactly −U_k, so the adversary reads U_k off consecutive iterates.

Scores (all of them functions of what the threat model lets the adversary see):

* ``"sum"``        Σ_k U_k[j]: the final model's coordinate (last iterate only: ``iterates="last"``);
* ``"likelihood"`` Σ_k log(1 − q + q·exp((2cU_k − c²)/(2s²))): the Neyman–Pearson statistic of the
  Poisson-subsampled Gaussian with the *claimed* noise s = κCσ;
* ``"spread"``     max_k U_k − min_k U_k: exactly 0 without the canary when the noise repeats (a broken RNG).

The score and the threshold are chosen on half of the runs and the bound is computed on the other half
(:mod:`dpcore.audit.estimators`), so the confidence level holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.run_record import RunRecord
from dpcore.audit.estimators import held_out_bound, one_run_epsilon
from dpcore.audit.threat import ITERATES, AuditResult, ThreatModel
from dpcore.training.config import TrainConfig
from dpcore.training.modelmix import ModelMixConfig
from dpcore.training.sampling import derive_seed
from dpcore.training.trainer import Trainer
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int, check_rate

__all__ = [
    "DiracSetting", "SCORES", "dirac_updates", "dirac_scores", "audit_dirac", "one_run_guesses", "audit_one_run",
]

SCORES = ("sum", "likelihood", "spread")
_SCORES_FOR = {"all": SCORES, "last": ("sum",)}


def _linear_loss(out: Tensor, y: Tensor) -> Tensor:
    """Per-example loss w·x: its gradient with respect to w is the example x itself."""
    return out.reshape(-1)


@dataclass(frozen=True)
class DiracSetting:
    """One DP-SGD configuration to audit: Poisson rate q, T rounds, noise multiplier σ, clip norm C and the
    canary's gradient norm c (default C: the largest gradient that clipping leaves untouched)."""

    noise_multiplier: float
    sample_rate: float
    steps: int
    clip_norm: float = 1.0
    canary_norm: float | None = None
    block: int = 1000  # runs per trainer call (one model coordinate per run)
    reduce: str = "sum"
    modelmix_tau_ratio: float | None = None  # ModelMix (Xiao, Wan, Devadas, Algorithm 1) with τ_k = ρ·η_k

    def __post_init__(self) -> None:
        check_choice("reduce", self.reduce, ("sum", "mean"))
        if self.modelmix_tau_ratio is not None:
            check_positive("modelmix_tau_ratio", self.modelmix_tau_ratio)
        check_positive("noise_multiplier", self.noise_multiplier)
        check_rate("sample_rate", self.sample_rate)
        check_positive_int("steps", self.steps)
        check_positive("clip_norm", self.clip_norm)
        if self.canary_norm is not None:
            check_positive("canary_norm", self.canary_norm)
        check_positive_int("block", self.block)
        batch = self.sample_rate * self.block
        if abs(batch - round(batch)) > 1e-9 or round(batch) < 1:
            raise ValueError(f"sample_rate·block must be a whole batch size >= 1, got {self.sample_rate}·{self.block}")

    @property
    def canary(self) -> float:
        return self.clip_norm if self.canary_norm is None else self.canary_norm

    @property
    def noise_std(self) -> float:
        return self.noise_multiplier * self.clip_norm

    def config(self, seed: int) -> TrainConfig:
        """The trainer configuration of one block of runs (Poisson, per-example clipping, U not divided)."""
        return TrainConfig(
            sampling="poisson",
            batch_size=round(self.sample_rate * self.block),
            steps=self.steps,
            clipping="individual",
            clip_norm=self.clip_norm,
            noise_multiplier=self.noise_multiplier,
            reduce=self.reduce,
            lr=1.0,
            modelmix=None if self.modelmix_tau_ratio is None else ModelMixConfig(self.modelmix_tau_ratio),
            optimizer="sgd",
            seed=seed,
            device="cpu",
            data="dpcore.audit Dirac canaries",
        )


def _train_block(setting: DiracSetting, present: Tensor, seed: int) -> tuple[np.ndarray, RunRecord]:
    """Train one block: coordinate r holds canary r when ``present[r]`` (else an example with gradient 0)."""
    n = setting.block
    x = torch.diag(present.to(torch.float64) * setting.canary)
    model = nn.Linear(n, 1, bias=False, dtype=torch.float64)
    nn.init.zeros_(model.weight)
    iterates = [model.weight.detach().reshape(-1).clone()]

    def observe(t: Trainer) -> None:
        iterates.append(t.params[0].detach().reshape(-1).clone())

    trainer = Trainer(
        model, (x, torch.zeros(n, dtype=torch.float64)), setting.config(seed), loss=_linear_loss, on_step=observe
    )
    result = trainer.run()
    w = torch.stack(iterates)  # (T + 1, n)
    # U_k = D·(w_k − w_{k+1}) (lr = 1, plain SGD; D = 1 for reduce="sum"); with ModelMix the observed iterates
    # are mixed states and the difference also carries the mixing noise
    scale = trainer.privatizer.denominator(round(setting.sample_rate * n))
    return ((w[:-1] - w[1:]) * scale).T.numpy(), result.record


def dirac_updates(setting: DiracSetting, runs: int, *, canary: bool, seed: int = 0) -> tuple[np.ndarray, RunRecord]:
    """U_k[j] of ``runs`` independent DP-SGD runs (shape (runs, steps)) with or without the Dirac canary, each
    run trained by :class:`dpcore.training.Trainer`; also the run record of the last block (every block has
    the same configuration, so the same record up to its seed)."""
    if not isinstance(setting, DiracSetting):
        raise ValueError("setting must be a DiracSetting")
    runs = check_positive_int("runs", runs)
    if runs % setting.block:
        raise ValueError(f"runs must be a multiple of setting.block={setting.block}, got {runs}")
    present = torch.full((setting.block,), bool(canary))
    blocks = [
        _train_block(setting, present, derive_seed(seed, "dirac", int(canary), b)) for b in range(runs // setting.block)
    ]
    return np.concatenate([u for u, _ in blocks]), blocks[-1][1]


def dirac_scores(updates: np.ndarray, setting: DiracSetting, score: str) -> np.ndarray:
    """One score per run from its observed updates (rows: runs, columns: rounds); see the module docstring."""
    check_choice("score", score, SCORES)
    u = np.asarray(updates, dtype=float)
    if u.ndim != 2 or u.shape[0] == 0:
        raise ValueError(f"updates must be a non-empty (runs, steps) array, got shape {u.shape}")
    if score == "sum":
        return u.sum(1)
    if score == "spread":
        return u.max(1) - u.min(1)
    c = min(setting.canary, setting.clip_norm)
    s2 = setting.noise_std**2
    q = setting.sample_rate
    log_in = (2 * c * u - c * c) / (2 * s2)
    if q == 1.0:
        return log_in.sum(1)
    return np.logaddexp(math.log1p(-q), math.log(q) + log_in).sum(1)


def audit_dirac(
    setting: DiracSetting,
    runs: int,
    *,
    delta: float,
    confidence: float = 0.95,
    iterates: str = "all",
    seed: int = 0,
    mechanism: str = "DP-SGD (Poisson, individual clipping)",
    claimed_epsilon: float | None = None,
) -> AuditResult:
    """Many-runs audit of ``setting`` with ``runs`` runs per world (half select the test, half bound ε).

    ``claimed_epsilon`` defaults to the accountant's ε of the trainer's run record
    (:func:`dpcore.accounting.records.epsilon_for_record`, PLD for Poisson sampling).
    """
    check_choice("iterates", iterates, ITERATES)
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    runs = check_positive_int("runs", runs, minimum=2 * setting.block)
    u_in, record = dirac_updates(setting, runs, canary=True, seed=seed)
    u_out, _ = dirac_updates(setting, runs, canary=False, seed=seed)
    score, bound, held_out = held_out_bound(
        lambda name: (dirac_scores(u_in, setting, name), dirac_scores(u_out, setting, name)),
        _SCORES_FOR[iterates], delta=delta, confidence=confidence,
    )  # fmt: skip
    claimed = epsilon_for_record(record, delta) if claimed_epsilon is None else float(claimed_epsilon)
    threat = ThreatModel(
        iterates=iterates,
        neighbouring="add/remove",
        canary=f"gradient-space Dirac canary of norm {setting.canary:g} (C = {setting.clip_norm:g})",
        estimator="many-runs",
        confidence=confidence,
        runs=held_out,
    )
    return AuditResult(mechanism, threat, bound.epsilon, bound.point, claimed, delta, score, bound.threshold)


def one_run_guesses(setting: DiracSetting, *, guesses: int, seed: int = 0) -> tuple[int, int, RunRecord]:
    """The one-run game of :func:`audit_one_run`: ONE trainer run of ``setting.block`` = m Dirac canaries, each in
    independently with probability ½; the ``guesses``/2 highest likelihood scores are guessed "in", the ``guesses``/2
    lowest "out".  Returns (m, number of right guesses, the run record)."""
    if not isinstance(setting, DiracSetting):
        raise ValueError("setting must be a DiracSetting")
    m = setting.block
    guesses = check_positive_int("guesses", guesses, minimum=2)
    if guesses > m or guesses % 2:
        raise ValueError(f"guesses must be an even number in [2, m={m}], got {guesses}")
    gen = torch.Generator().manual_seed(derive_seed(seed, "one-run", "membership"))
    present = torch.rand(m, generator=gen) < 0.5
    updates, record = _train_block(setting, present, derive_seed(seed, "one-run", "train"))
    scores = dirac_scores(updates, setting, "likelihood")
    order = np.argsort(scores, kind="stable")
    k = guesses // 2
    truth = present.numpy()
    correct = int(truth[order[-k:]].sum() + (~truth[order[:k]]).sum())
    return m, correct, record


def audit_one_run(
    setting: DiracSetting,
    *,
    guesses: int,
    delta: float,
    confidence: float = 0.95,
    seed: int = 0,
    mechanism: str = "DP-SGD (Poisson, individual clipping), one run",
) -> AuditResult:
    """One-run audit (Steinke, Nasr, Jagielski 2023, §5 and Thm 5.2): ONE training run of ``setting.block``
    Dirac canaries, each included independently with probability ½ (coordinate r holds canary r or an example
    with gradient 0); the adversary sees every update, scores each canary by the likelihood score and guesses
    "in" for the ``guesses``/2 highest and "out" for the ``guesses``/2 lowest scores (abstaining on the rest).
    The number of correct guesses gives the lower bound of :func:`dpcore.audit.estimators.one_run_epsilon`."""
    if not isinstance(setting, DiracSetting):
        raise ValueError("setting must be a DiracSetting")
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    m, correct, record = one_run_guesses(setting, guesses=guesses, seed=seed)
    bound = one_run_epsilon(m, guesses, correct, delta=delta, confidence=confidence)
    threat = ThreatModel(
        iterates="all",
        neighbouring="add/remove",
        canary=f"{m} gradient-space Dirac canaries of norm {setting.canary:g}, each in w.p. 1/2; "
        f"{correct}/{guesses} guesses right",
        estimator="one-run",
        confidence=confidence,
        runs=1,
    )
    return AuditResult(
        mechanism, threat, bound, math.nan, epsilon_for_record(record, delta), delta, "likelihood", math.nan
    )
