"""ModelMix (Xiao, Wan, Devadas): Corollary 4.1 as printed and corrected, Fig. 3 settings, Example 3.1."""

from __future__ import annotations

from typing import Any

#: this package's explorer: (topic of notebooks/explore/<topic>.ipynb, module); ("", "") for none
EXPLORER = ("modelmix", "dpcore.papers.p002_modelmix.explore")


def __getattr__(name: str) -> Any:
    """``PAPER``: this package as a :class:`dpcore.claims.Paper`, built on first use from its ``claims.py``
    (:func:`dpcore.papers.build_paper`; lazily, so importing one module of the package does not import its claims)."""
    if name == "PAPER":
        from dpcore.papers import build_paper

        return build_paper(__name__, *EXPLORER)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
