"""The privacy-audit suite of ``notebooks/audit/privacy_audit.ipynb`` (paper-independent; claims under paper id
``"ref"``): :mod:`~dpcore.papers.audit.suite` runs the audits, :mod:`~dpcore.papers.audit.claims` states the
rows "lower bound ≤ ε" per mechanism and "flagged" per broken variant."""

from __future__ import annotations

from typing import Any

#: this package's explorer: (topic of notebooks/explore/<topic>.ipynb, module); ("", "") for none
EXPLORER = ("", "")


def __getattr__(name: str) -> Any:
    """``PAPER``: this package as a :class:`dpcore.claims.Paper`, built on first use from its ``claims.py``
    (:func:`dpcore.papers.build_paper`; lazily, so importing one module of the package does not import its claims)."""
    if name == "PAPER":
        from dpcore.papers import build_paper

        return build_paper(__name__, *EXPLORER)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
