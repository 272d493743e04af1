"""Auditing batch and mixed clipping under shuffling (paper 003) with a gradient-space Dirac canary.

Mechanism (van Dijk, P. H. Nguyen, T. N. Nguyen, L. M. Nguyen, "Generalizing DP-SGD with Shuffling and Batch
Clipping", Algorithm 1 with eq. (22)): one random permutation per epoch cut into b = N/|S_b| batches; a batch of
|S_b| = m·s examples is split into m groups of s, each group's mean gradient is clipped to C, the m clipped vectors
are summed, N(0, (2Cσ)² I) is added (replace-one neighbours, sensitivity 2C) and the sum is divided by m.  Batch
clipping (BC) is m = 1, mixed clipping (MC) 1 < m < |S_b|.

**Canary** (the gradient-space Dirac canary of Nasr et al. 2023, "Tight Auditing of Differentially Private Machine
Learning", §4, adapted to group clipping): one example whose gradient is G·e in one coordinate, G = ``canary_scale``·
|S_b|·C (so its group's mean gradient is at least C and is clipped to exactly C whichever group it lands in), every
other gradient 0; its replace-one neighbour has gradient −G·e.  The round holding the canary then releases
U = ±C + N(0, (2Cσ)²), every other round N(0, (2Cσ)²).

**Threat models** (every update observed, replace-one neighbours):

* the paper's adversary A_1 (Def. 5.2, App. G) also knows the permutation, hence the round of each epoch that holds
  the canary.  Score ``"known"``: Σ_e U_{k_e} over those E rounds.  The mechanism is then exactly G_{√E/σ} (Thm F.1,
  Lemma F.2) and this score is its Neyman–Pearson statistic, so this audit can come close to the A_1 ε;
* the standard adversary A_0 sees the updates but not the permutation.  Score ``"likelihood"``:
  Σ_e [log Σ_{k∈e} exp(C·U_k/s²) − log Σ_{k∈e} exp(−C·U_k/s²)] with s = 2Cσ (the likelihood ratio of one epoch,
  the canary's round uniform in it), or ``"sum"``: Σ_k U_k (the final model, last iterate only).

**Claimed ε** (both at the audit's δ):

* the A_1 ε of the trainer's run record (:func:`dpcore.accounting.records.epsilon_for_record`, G_{√E/σ}): a proven
  upper bound for both adversaries, since A_1 knows more than A_0;
* the paper gives no A_0 analysis for shuffling.  The common practice -- accounting a shuffled run as if it were
  Poisson-subsampled at q = |S_b|/N with the same σ and T (PLD) -- is reported as a *heuristic* (``claim="heuristic"``):
  Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang 2024 ("How Private are DP-SGD Implementations?", ICML) show
  that shuffling can be less private than that number, so an A_0 lower bound above it would refute the heuristic,
  not the code.

Every run is one :class:`dpcore.training.Trainer` run (a linear model with per-example loss w·x, the trainer's
shuffling :class:`~dpcore.training.BatchPlan`, :func:`~dpcore.training.clipped_group_sum`, its noise and an SGD step
with learning rate 1, so U_k = m·(w_k − w_{k+1})).  Runs are not vectorised as in :mod:`dpcore.audit.dirac`: batch
clipping clips the sum of every example of a group together, so two runs sharing one model would be clipped together.

**Clip scope** (paper 003's authors' per-tensor clipping, issue 21;
:data:`~dpcore.training.config.PARAMETER_CLIP_SCOPES`): the toy has k = ``tensors`` parameter tensors of one
coordinate each (k one-input ``nn.Linear`` layers on k input columns), and the canary's gradient is ±G in every one
of them.  U_k is the update projected on the canary's unit direction (1, …, 1)/√k, so its noise is still N(0, s²)
and the canary's round moves it by ±C with global clipping (the k-vector clipped to C as one) and by ±C·√k with
``clip_scope="per_tensor"`` (each tensor clipped to C on its own): the Neyman–Pearson statistic of the whole
release, which the record's accountant (clip norm C·√k, :meth:`dpcore.training.config.TrainConfig.accounted`) must
cover.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.special import logsumexp
from torch import Tensor, nn

from dpcore.accounting.dpsgd import dpsgd_epsilon
from dpcore.accounting.records import choose_accountant, epsilon_for_record
from dpcore.accounting.run_record import RunRecord
from dpcore.audit.estimators import held_out_bound
from dpcore.audit.threat import AuditResult, ThreatModel
from dpcore.training.config import NOISE_PLACEMENTS, PARAMETER_CLIP_SCOPES, TrainConfig
from dpcore.training.sampling import derive_seed
from dpcore.training.trainer import Trainer
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int

__all__ = [
    "ShuffleSetting",
    "SHUFFLE_SCORES",
    "shuffled_updates",
    "shuffled_scores",
    "heuristic_epsilon",
    "audit_shuffled",
]

SHUFFLE_SCORES = ("known", "likelihood", "sum")
#: the scores each adversary can compute: A_1 knows the canary's rounds, A_0 does not
_SCORES_FOR = {True: SHUFFLE_SCORES, False: ("likelihood", "sum")}


def _linear_loss(out: Tensor, y: Tensor) -> Tensor:
    """Per-example loss w·x: its gradient with respect to w is the example x itself."""
    return out.reshape(-1)


@dataclass(frozen=True)
class ShuffleSetting:
    """One shuffled BC or MC configuration: ``|S_b|`` = ``batch_size``, b = ``rounds_per_epoch`` batches per epoch
    (N = b·``|S_b|``), E = ``epochs``, σ, C, and for mixed clipping the group size s (m = ``|S_b|``/s groups)."""

    clipping: str
    batch_size: int
    rounds_per_epoch: int
    epochs: int
    noise_multiplier: float
    clip_norm: float = 1.0
    group_size: int | None = None
    canary_scale: float = 2.0  # the canary's gradient norm in units of |S_b|·C
    #: where the noise enters (:data:`dpcore.training.config.NOISE_PLACEMENTS`; paper 003's authors' code paths)
    noise_placement: str = "algorithm1"
    #: how a group vector is clipped (:data:`dpcore.training.config.PARAMETER_CLIP_SCOPES`; the authors' per-tensor)
    clip_scope: str = "global"
    #: the toy's number k of parameter tensors (one coordinate each; the canary is in all of them)
    tensors: int = 1

    def __post_init__(self) -> None:
        check_choice("clipping", self.clipping, ("individual", "batch", "mixed"))
        check_choice("noise_placement", self.noise_placement, NOISE_PLACEMENTS)
        check_choice("clip_scope", self.clip_scope, PARAMETER_CLIP_SCOPES)
        check_positive_int("tensors", self.tensors)
        if self.clip_scope == "per_tensor" and self.tensors < 2:
            raise ValueError(
                f"tensors must be >= 2 for clip_scope='per_tensor' (with one tensor it is global clipping), "
                f"got {self.tensors}"
            )
        check_positive_int("batch_size", self.batch_size)
        check_positive_int("rounds_per_epoch", self.rounds_per_epoch)
        check_positive_int("epochs", self.epochs)
        check_positive("noise_multiplier", self.noise_multiplier)
        check_positive("clip_norm", self.clip_norm)
        check_positive("canary_scale", self.canary_scale)
        if self.clipping == "mixed":
            s = check_positive_int("group_size", self.group_size) if self.group_size is not None else None
            if s is None or s >= self.batch_size or self.batch_size % s:
                raise ValueError(
                    f"mixed clipping needs group_size dividing batch_size={self.batch_size} and smaller than it "
                    f"(m >= 2 groups), got {self.group_size!r}"
                )
        elif self.group_size is not None:
            raise ValueError("group_size is only for clipping='mixed' (batch and individual clipping fix the groups)")

    @property
    def dataset_size(self) -> int:
        return self.batch_size * self.rounds_per_epoch

    @property
    def steps(self) -> int:
        return self.rounds_per_epoch * self.epochs

    @property
    def canary(self) -> float:
        return self.canary_scale * self.batch_size * self.clip_norm

    @property
    def noise_std(self) -> float:
        """2Cσ: Algorithm 1's replace-one noise."""
        return 2.0 * self.clip_norm * self.noise_multiplier

    @property
    def clipped_shift(self) -> float:
        """The canary's clipped contribution along its unit direction: C (global clip scope), C·√k (per tensor)."""
        return self.clip_norm * (math.sqrt(self.tensors) if self.clip_scope == "per_tensor" else 1.0)

    def config(self, seed: int) -> TrainConfig:
        """The trainer configuration of one run (shuffling, replace-one noise 2Cσ, U divided by m, SGD with lr 1)."""
        return TrainConfig(
            sampling="shuffle",
            batch_size=self.batch_size,
            epochs=self.epochs,
            clipping=self.clipping,
            group_size=self.group_size,
            clip_norm=self.clip_norm,
            noise_multiplier=self.noise_multiplier,
            noise_convention="replace_one",
            noise_placement=self.noise_placement,
            clip_scope=self.clip_scope,
            reduce="mean",
            lr=1.0,
            optimizer="sgd",
            seed=seed,
            device="cpu",
            data="dpcore.audit shuffled Dirac canary",
        )


class _Toy(nn.Module):
    """k one-coordinate parameter tensors (k one-input linear layers, one per input column): output Σ_j w_j·x_j."""

    def __init__(self, tensors: int) -> None:
        super().__init__()
        self.parts = nn.ModuleList(nn.Linear(1, 1, bias=False, dtype=torch.float64) for _ in range(tensors))
        for part in self.parts:
            nn.init.zeros_(part.weight)

    def forward(self, x: Tensor) -> Tensor:
        return sum(part(x[:, j : j + 1]) for j, part in enumerate(self.parts))


def _train_one(setting: ShuffleSetting, sign: float, seed: int) -> tuple[np.ndarray, np.ndarray, RunRecord]:
    """One trainer run with the canary (gradient sign·G in every tensor) at index 0 and N − 1 zero-gradient examples.

    Returns U_k of every round (projected on the canary's unit direction), the mask of the rounds whose batch holds
    index 0, and the run record."""
    n, k = setting.dataset_size, setting.tensors
    x = torch.zeros(n, k, dtype=torch.float64)
    x[0, :] = sign * setting.canary
    model = _Toy(k) if k > 1 else nn.Linear(1, 1, bias=False, dtype=torch.float64)
    if k == 1:
        nn.init.zeros_(model.weight)
    iterates = [0.0]

    def observe(t: Trainer) -> None:
        iterates.append(float(sum(p.detach().reshape(-1)[0] for p in t.params)) / math.sqrt(k))

    trainer = Trainer(
        model, (x, torch.zeros(n, dtype=torch.float64)), setting.config(seed), loss=_linear_loss, on_step=observe
    )
    record = trainer.run().record
    w = np.asarray(iterates)
    updates = (w[:-1] - w[1:]) * trainer.privatizer.denominator(setting.batch_size)
    mask = np.array([bool((trainer.plan.indices(k) == 0).any()) for k in range(setting.steps)])
    return updates, mask, record


def shuffled_updates(
    setting: ShuffleSetting, runs: int, *, canary: bool, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, RunRecord]:
    """U_k of ``runs`` independent trainer runs (shape (runs, T)) with the canary (``canary=True``, gradient +G) or its
    replace-one neighbour (gradient −G), the (runs, T) mask of the rounds holding it, and the last run's record."""
    if not isinstance(setting, ShuffleSetting):
        raise ValueError("setting must be a ShuffleSetting")
    runs = check_positive_int("runs", runs)
    sign = 1.0 if canary else -1.0
    out = [_train_one(setting, sign, derive_seed(seed, "shuffled", int(canary), r)) for r in range(runs)]
    return np.stack([u for u, _, _ in out]), np.stack([m for _, m, _ in out]), out[-1][2]


def shuffled_scores(updates: np.ndarray, mask: np.ndarray, setting: ShuffleSetting, score: str) -> np.ndarray:
    """One score per run (see the module docstring): ``"known"`` needs the canary's rounds (``mask``, A_1)."""
    check_choice("score", score, SHUFFLE_SCORES)
    u = np.asarray(updates, dtype=float)
    if u.ndim != 2 or u.shape != (u.shape[0], setting.steps) or u.shape[0] == 0:
        raise ValueError(f"updates must be a non-empty (runs, {setting.steps}) array, got shape {u.shape}")
    if score == "sum":
        return u.sum(1)
    if score == "known":
        m = np.asarray(mask, dtype=bool)
        if m.shape != u.shape:
            raise ValueError(f"mask must have the shape of updates {u.shape}, got {m.shape}")
        return (u * m).sum(1)
    a = setting.clipped_shift / setting.noise_std**2
    e = u.reshape(u.shape[0], setting.epochs, setting.rounds_per_epoch)
    return (logsumexp(a * e, axis=2) - logsumexp(-a * e, axis=2)).sum(1)


def heuristic_epsilon(setting: ShuffleSetting, delta: float) -> float:
    """The shuffled run accounted as if Poisson-subsampled at q = |S_b|/N with the same σ and T (PLD): a common
    practice, NOT a bound for shuffling (Chua et al. 2024, ICML)."""
    return dpsgd_epsilon(
        setting.noise_multiplier, sample_rate=1.0 / setting.rounds_per_epoch, steps=setting.steps, delta=delta
    )


def audit_shuffled(
    setting: ShuffleSetting,
    runs: int,
    *,
    delta: float,
    confidence: float = 0.95,
    seed: int = 0,
    mechanism: str | None = None,
) -> dict[str, AuditResult]:
    """Many-runs audits of ``setting`` from ``runs`` trainer runs per world (half select the score and threshold,
    half give the bound), all with every update observed:

    * ``"A_1"``: the adversary knows the batches, against the A_1 ε of the record (proven);
    * ``"A_0"``: the standard adversary, against the same A_1 ε (proven for A_0 too);
    * ``"A_0_heuristic"``: the standard adversary against :func:`heuristic_epsilon` (``claim="heuristic"``).
    """
    if not isinstance(setting, ShuffleSetting):
        raise ValueError("setting must be a ShuffleSetting")
    runs = check_positive_int("runs", runs, minimum=4)
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    name = (
        mechanism
        or ("BC" if setting.clipping == "batch" else f"MC (s={setting.group_size})")
        + f" shuffled (|S_b|={setting.batch_size}, b={setting.rounds_per_epoch}, E={setting.epochs})"
    )
    u_in, m_in, record = shuffled_updates(setting, runs, canary=True, seed=seed)
    u_out, m_out, _ = shuffled_updates(setting, runs, canary=False, seed=seed)
    a1 = epsilon_for_record(record, delta)
    a1_label = choose_accountant(record).description
    heur = heuristic_epsilon(setting, delta)
    heur_label = (
        f"HEURISTIC (not a bound for shuffling): Poisson-subsampled Gaussian PLD at q = 1/{setting.rounds_per_epoch}, "
        f"σ = {setting.noise_multiplier:g}, T = {setting.steps}"
    )
    results: dict[str, AuditResult] = {}
    for knows in (True, False):
        score, bound, held_out = held_out_bound(
            lambda name: (shuffled_scores(u_in, m_in, setting, name), shuffled_scores(u_out, m_out, setting, name)),
            _SCORES_FOR[knows], delta=delta, confidence=confidence,
        )  # fmt: skip
        threat = ThreatModel(
            iterates="all",
            neighbouring="replace-one",
            canary=f"gradient-space Dirac canary of norm {setting.canary:g} vs its negation "
            f"(C = {setting.clip_norm:g})",
            estimator="many-runs",
            confidence=confidence,
            runs=held_out,
            knows_batches=knows,
        )
        adversary = "A_1 (batches known)" if knows else "A_0 (batches hidden)"
        claims = [("accountant", a1, a1_label, "A_1" if knows else "A_0")]
        if not knows:
            claims.append(("heuristic", heur, heur_label, "A_0_heuristic"))
        for kind, eps, label, key in claims:
            versus = " vs HEURISTIC ε" if kind == "heuristic" else ""
            results[key] = AuditResult(
                f"{name}, {adversary}{versus}", threat, bound.epsilon, bound.point, float(eps), delta, score,
                bound.threshold, claim=kind, claim_label=label,
            )  # fmt: skip
    return results
