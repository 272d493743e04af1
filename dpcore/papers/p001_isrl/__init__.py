"""ISRL-DP (Lowy & Razaviyayn, ICLR 2023): noise calibrations, tight per-silo ε, the App. I experiment protocol."""

from __future__ import annotations

from dpcore.papers import paper_attribute

#: this package's explorer: (topic of notebooks/explore/<topic>.ipynb, module); ("", "") for none
EXPLORER = ("calculators", "dpcore.papers.p001_isrl.explore")
__getattr__ = paper_attribute(__name__, EXPLORER)
