"""Audit claims of paper 003 (issue 42): the authors' code paths are not DP at the ε the paper claims.

Each row is an ``audit`` row (our check of the authors' code, counted apart from the paper's numbers, under
the ``audit`` finding ``authors_modes_audited``).
Our value is the bool "the GDP audit's 95 % lower bound on ε (adversary A_1, toy scale
|S_b| = 4, b = 2, E = 2, σ = 2, δ = 1e-5; :func:`dpcore.papers.p003_shuffling.audit_modes.mode_audits`) exceeds the
ε the paper claims for the run (ε(G_{√E/σ}) at the nominal σ)"; the claim holds when that is True.  The reference
row (Algorithm 1) states the opposite: its lower bound stays at or below the claim.  Checked by the privacy-audit
notebook (``audit/privacy_audit``) once wired (see :data:`NOTEBOOKS`).
"""

from __future__ import annotations

from dpcore.claims import ClaimSpec, NotebookClaims, specs_by_key
from dpcore.papers.p003_shuffling.audit_modes import AUTHORS_PLACEMENTS
from dpcore.papers.p003_shuffling.training import MODES

__all__ = ["AUDIT_SPECS", "AUDIT_CLAIMS", "AUDIT_NOTEBOOKS", "MODE_KEYS", "REFERENCE_KEY"]

_HOW = (
    "dpcore.audit.tight.audit_shuffled_gdp through dpcore.training.Trainer with the placement's noise "
    "(dpcore.training.config.NOISE_PLACEMENTS), replace-one Dirac canary, adversary A_1 (knows the canary's rounds: "
    "score exactly N(±E·C, E·s²)), GDP estimator (non-central t, 95 %); claim = ε(G_sqrt(E)/σ) at the nominal σ = 2 "
    "(paper 003 Thm F.1, as dpcore.papers.p003_shuffling.training.claimed_epsilon); check: lower bound > claim"
)
#: the authors' code version (the mode's name in training.MODES) of each audited noise placement: the claim keys and
#: texts name the code version, so they stay those of the claims recorded before issue 43 named placements by mechanism
_CODE_VERSION = {m.noise_placement: m.name for m in MODES if m.noise_placement in AUTHORS_PLACEMENTS}
#: noise placement -> claim key (one per authors' placement, read from training.MODES)
MODE_KEYS = {p: f"audit.modes.{_CODE_VERSION[p]}.lower_bound_exceeds_claim" for p in AUTHORS_PLACEMENTS}
REFERENCE_KEY = "audit.modes.algorithm1.lower_bound_within_claim"

AUDIT_SPECS: tuple[ClaimSpec, ...] = tuple(
    ClaimSpec(
        "003",
        key,
        "privacy audit (authors' modes)",
        f"the authors' {_CODE_VERSION[p]} code path (noise placement {p}) is not (claimed ε, 1e-5)-DP: audited ε "
        "lower bound > claimed ε",
        True,
        "audit",
        _HOW,
    )  # fmt: skip
    for p, key in MODE_KEYS.items()
) + (
    ClaimSpec(
        "003",
        REFERENCE_KEY,
        "privacy audit (authors' modes)",
        "Algorithm 1 (batch clipping, shuffled): audited ε lower bound ≤ claimed ε",
        True,
        "audit",
        _HOW.replace("lower bound > claim", "lower bound ≤ claim"),
    ),  # fmt: skip
)
AUDIT_CLAIMS = specs_by_key(AUDIT_SPECS)
AUDIT_NOTEBOOKS: tuple[NotebookClaims, ...] = (
    NotebookClaims.of("audit/privacy_audit", "privacy audit: authors' modes", AUDIT_SPECS),
)
