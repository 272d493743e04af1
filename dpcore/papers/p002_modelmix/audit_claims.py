"""Audit claims of paper 002 (issue 42): the authors' configuration is not DP at the Table I column's ε.

Each row is an ``audit`` row (our check of the authors' code, counted apart from the paper's numbers, under
the ``audit`` finding ``authors_configuration_audited``).
Our value is a bool computed by :func:`dpcore.papers.p002_modelmix.audit_modes.mode_audits`
(toy ModelMix run and the authors' private normalisation, σ = 8, median thresholds; the GDP audit of the released
channel mean, :func:`dpcore.audit.normalization.audit_normalization_gdp`, 95 %, δ = 1e-5).  At the column ε = 0.2:
"the audit's lower bound exceeds the column ε" (the normalisation alone leaks more than the column); at ε = 1.0
(reference): "the lower bound stays at or below the column ε".  Checked by the privacy-audit notebook
(``audit/privacy_audit``).
"""

from __future__ import annotations

from dpcore.claims import ClaimSpec, NotebookClaims, specs_by_key

__all__ = ["AUDIT_SPECS", "AUDIT_CLAIMS", "AUDIT_NOTEBOOKS", "COLUMN_KEYS", "MODE_KEY", "REFERENCE_KEY"]

_HOW = (
    "dpcore.audit.normalization.audit_normalization_gdp: dpcore.training.private_norm.private_channel_statistics "
    "(sigma = 8, the authors' median thresholds) on a toy with a feature-space Dirac canary (add/remove), the released "
    "channel mean (carried by the model) only, non-central t bound on mu, eps(G_mu_lb) at delta = 1e-5; claim = the "
    "Table I column eps (training calibrated to it, ModelMix toy through the Trainer); check: "
)
MODE_KEY = "audit.modes.authors_configuration.eps0.2.lower_bound_exceeds_claim"
REFERENCE_KEY = "audit.modes.authors_configuration.eps1.lower_bound_within_claim"

AUDIT_SPECS: tuple[ClaimSpec, ...] = (
    ClaimSpec("002", MODE_KEY, "privacy audit (authors' modes)",
              "the authors' configuration (private normalisation sigma = 8 + ModelMix at the column's eps) is not "
              "(0.2, 1e-5)-DP: audited eps lower bound > the Table I column eps 0.2", True, "audit",
              _HOW + "lower bound > 0.2"),
    ClaimSpec("002", REFERENCE_KEY, "privacy audit (authors' modes)",
              "the authors' configuration at the column eps = 1.0: audited eps lower bound <= 1.0", True, "audit",
              _HOW + "lower bound <= 1.0"),
)  # fmt: skip
AUDIT_CLAIMS = specs_by_key(AUDIT_SPECS)
#: column ε of mode_audits -> claim key and whether the check is "exceeds" (True) or "within" (False)
COLUMN_KEYS = {0.2: (MODE_KEY, True), 1.0: (REFERENCE_KEY, False)}
AUDIT_NOTEBOOKS: tuple[NotebookClaims, ...] = (
    NotebookClaims.of("audit/privacy_audit", "privacy audit: authors' modes (002)", AUDIT_SPECS),
)
