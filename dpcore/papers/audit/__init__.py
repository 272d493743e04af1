"""The privacy-audit suite of ``notebooks/audit/privacy_audit.ipynb`` (paper-independent; claims under paper id
``"ref"``): :mod:`~dpcore.papers.audit.suite` runs the audits, :mod:`~dpcore.papers.audit.claims` states the
rows "lower bound ≤ ε" per mechanism and "flagged" per broken variant."""
