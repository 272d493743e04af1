"""What an audit assumed and what it found: every result carries its threat model."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from dpcore.validation import check_choice, check_open_unit, check_positive_int

__all__ = ["ITERATES", "NEIGHBOURS", "ESTIMATORS", "CLAIMS", "ThreatModel", "AuditResult"]

#: which iterates the adversary sees: every update (white box, all iterates) or only the final model
ITERATES = ("all", "last")
NEIGHBOURS = ("add/remove", "replace-one")
#: "-gdp" / "-fdp": the parametric estimators of :mod:`dpcore.audit.tight` (valid under a stated Gaussian or
#: trade-off-family assumption); the others are distribution-free
ESTIMATORS = ("many-runs", "one-run", "many-runs-gdp", "one-run-fdp")
#: what the claimed ε is: a proven upper bound for the mechanism ("accountant") or a number that is not proven for
#: it ("heuristic", e.g. a shuffled run accounted as if Poisson-subsampled): exceeding a heuristic is a finding
#: about the heuristic, not an implementation bug
CLAIMS = ("accountant", "heuristic")


@dataclass(frozen=True)
class ThreatModel:
    """The adversary of an audit: what it observes, which neighbours it separates, how ε is estimated."""

    iterates: str  # "all" or "last"
    neighbouring: str  # "add/remove" or "replace-one"
    canary: str  # e.g. "gradient-space Dirac canary of norm C in one coordinate; other gradients 0 there"
    estimator: str  # "many-runs" or "one-run"
    confidence: float
    runs: int  # runs per world (many-runs: with / without the canary each) or canaries (one-run)
    #: the adversary also knows which rounds hold the canary (the batches), as the adversary A_1 of van Dijk et al.,
    #: "Generalizing DP-SGD with Shuffling and Batch Clipping", Def. 5.2 / App. G; False: the standard adversary
    knows_batches: bool = False

    def __post_init__(self) -> None:
        check_choice("iterates", self.iterates, ITERATES)
        check_choice("neighbouring", self.neighbouring, NEIGHBOURS)
        check_choice("estimator", self.estimator, ESTIMATORS)
        check_open_unit("confidence", self.confidence)
        check_positive_int("runs", self.runs)
        if not isinstance(self.canary, str) or not self.canary:
            raise ValueError("canary must be a non-empty description")
        if not isinstance(self.knows_batches, bool):
            raise ValueError(f"knows_batches must be True or False, got {self.knows_batches!r}")

    def describe(self) -> str:
        batches = ", batches known to the adversary (A_1)" if self.knows_batches else ""
        return (
            f"{self.estimator}, {self.iterates} iterates observed{batches}, {self.neighbouring} neighbours, "
            f"{self.canary}, {self.runs} runs, confidence {self.confidence:g}"
        )


@dataclass(frozen=True)
class AuditResult:
    """An empirical ε lower bound next to the ε the accountant claims for the same mechanism.

    ``flagged`` is True when the lower bound exceeds the claimed ε: the implementation leaks more than it claims
    (with probability ≥ ``threat.confidence`` this is not a statistical accident).  With ``claim="heuristic"`` the
    claimed ε is not a proven bound for the mechanism, and a flag refutes the heuristic, not the code.
    """

    mechanism: str
    threat: ThreatModel
    epsilon_lower: float  # valid at threat.confidence
    epsilon_point: float  # the same test at the empirical rates (an estimate, no confidence)
    epsilon_claimed: float  # the accountant's ε for the configuration
    delta: float
    score: str
    threshold: float
    claim: str = "accountant"  # CLAIMS: what epsilon_claimed is (a proven bound, or a labelled heuristic)
    claim_label: str = ""  # how epsilon_claimed was computed
    #: a family bound's parameter (μ per step, θ): its lower confidence bound and point estimate, from which
    #: epsilon_lower / epsilon_point follow (NaN for distribution-free bounds; not part of :meth:`as_row`)
    parameter_lower: float = math.nan
    parameter_point: float = math.nan

    def __post_init__(self) -> None:
        check_choice("claim", self.claim, CLAIMS)

    @property
    def flagged(self) -> bool:
        return self.epsilon_lower > self.epsilon_claimed

    @property
    def ratio(self) -> float:
        """Tightness: lower bound / claimed ε (≤ 1 for a correct mechanism, at the confidence level)."""
        return self.epsilon_lower / self.epsilon_claimed if self.epsilon_claimed > 0 else float("inf")

    def as_row(self) -> dict:
        """A flat dict for a table."""
        row = {"mechanism": self.mechanism, **{f"threat_{k}": v for k, v in asdict(self.threat).items()}}
        row.update(
            epsilon_lower=self.epsilon_lower,
            epsilon_point=self.epsilon_point,
            epsilon_claimed=self.epsilon_claimed,
            ratio=self.ratio,
            flagged=self.flagged,
            delta=self.delta,
            score=self.score,
            threshold=self.threshold,
            claim=self.claim,
            claim_label=self.claim_label,
        )
        return row
