"""Shuffling and batch clipping (van Dijk et al.): Tables 1-2 bounds, errata, comparison tables."""

from __future__ import annotations

from dpcore.papers import paper_attribute

#: this package's explorer: (topic of notebooks/explore/<topic>.ipynb, module); ("", "") for none
EXPLORER = ("shuffling", "dpcore.papers.p003_shuffling.explore")
__getattr__ = paper_attribute(__name__, EXPLORER)
