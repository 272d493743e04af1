"""The privacy-audit suite of ``notebooks/audit/privacy_audit.ipynb`` (paper-independent; claims under paper id
``"ref"``): :mod:`~dpcore.papers.audit.suite` runs the audits, :mod:`~dpcore.papers.audit.claims` states the
rows "lower bound ≤ ε" per mechanism and "flagged" per broken variant."""

from __future__ import annotations

from dpcore.papers import paper_attribute

#: this package's explorer: (topic of notebooks/explore/<topic>.ipynb, module); ("", "") for none
EXPLORER = ("", "")
__getattr__ = paper_attribute(__name__, EXPLORER)
