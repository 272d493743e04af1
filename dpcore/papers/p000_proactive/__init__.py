"""Proactive DP (van Dijk et al., arXiv 2102.09030): σ(ε, δ) calculators, App. D.4 / E.1 searches, tables."""

from __future__ import annotations

from dpcore.papers import paper_attribute

#: this package's explorer: (topic of notebooks/explore/<topic>.ipynb, module); ("", "") for none
EXPLORER = ("calculators", "dpcore.papers.p000_proactive.explore")
__getattr__ = paper_attribute(__name__, EXPLORER)
