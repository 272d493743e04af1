"""Audit claims of paper 001 (issue 42): the authors' batch-mean clipping is not ISRL-DP at the ε the paper claims.

Each row is an ``audit`` row (our check of the authors' code, counted apart from the paper's numbers, under
the ``audit`` finding ``authors_batch_mean_audited``).
Our value is a bool computed by :func:`dpcore.papers.p001_isrl.audit_modes.mode_audits`
(toy silo n = 16, R = 4, App. I's K and σ at ε = 2, δ = 1/n²; the GDP-style silo audit
:func:`dpcore.audit.silo_gdp.audit_silo_gdp`, 95 %).  The authors' mode: "the audit's lower bound exceeds the
claimed ε"; the reference (Algorithm 2, per-record clipping at the same σ): "the lower bound stays at or below the
claimed ε".  Checked by the privacy-audit notebook (``audit/privacy_audit``).
"""

from __future__ import annotations

from dpcore.claims import ClaimSpec, NotebookClaims, specs_by_key

__all__ = ["AUDIT_SPECS", "AUDIT_CLAIMS", "AUDIT_NOTEBOOKS", "MODE_KEY", "REFERENCE_KEY"]

_HOW = (
    "dpcore.audit.silo_gdp.audit_silo_gdp through dpcore.federated.algorithms.mb_sgd (clip_scope of the mode), "
    "every message of silo 0, replace-one canary (gradient ∓C·e_0), unit shift bounded from the sign-corrected taps "
    "with the noise std measured in a zero-gradient coordinate of the same messages (known inclusion rate, "
    "delta-method, 95 %), exact ε of the canary's R-fold pair; claim = App. I's ε = 2 at δ = 1/n² (toy n = 16, R = 4, "
    "K and σ of dpcore.papers.p001_isrl.accounting); check: "
)
MODE_KEY = "audit.modes.authors_batch_mean.lower_bound_exceeds_claim"
REFERENCE_KEY = "audit.modes.algorithm2_per_record.lower_bound_within_claim"

AUDIT_SPECS: tuple[ClaimSpec, ...] = (
    ClaimSpec("001", MODE_KEY, "privacy audit (authors' modes)",
              "the authors' batch-mean clipping (insurance script, App. I's σ) is not (ε_claimed, 1/n²)-ISRL-DP: "
              "audited ε lower bound > claimed ε", True, "audit", _HOW + "lower bound > claim"),
    ClaimSpec("001", REFERENCE_KEY, "privacy audit (authors' modes)",
              "Algorithm 2 (per-record clipping) at the same σ: audited ε lower bound ≤ claimed ε", True, "audit",
              _HOW + "lower bound ≤ claim"),
)  # fmt: skip
AUDIT_CLAIMS = specs_by_key(AUDIT_SPECS)
AUDIT_NOTEBOOKS: tuple[NotebookClaims, ...] = (
    NotebookClaims.of("audit/privacy_audit", "privacy audit: authors' modes (001)", AUDIT_SPECS),
)
