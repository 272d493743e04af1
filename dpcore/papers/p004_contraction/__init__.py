"""Contraction accounting (Asoodeh, Chen, Calmon, Özgür, ISIT 2021): θ_ε, Theorem 2, baselines."""

from __future__ import annotations

from dpcore.papers import paper_attribute

#: this package's explorer: (topic of notebooks/explore/<topic>.ipynb, module); ("", "") for none
EXPLORER = ("contraction", "dpcore.papers.p004_contraction.explore")
__getattr__ = paper_attribute(__name__, EXPLORER)
