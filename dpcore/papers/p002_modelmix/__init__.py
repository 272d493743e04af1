"""ModelMix (Xiao, Wan, Devadas): Corollary 4.1 as printed and corrected, Fig. 3 settings, Example 3.1."""

from __future__ import annotations

from dpcore.papers import paper_attribute

#: this package's explorer: (topic of notebooks/explore/<topic>.ipynb, module); ("", "") for none
EXPLORER = ("modelmix", "dpcore.papers.p002_modelmix.explore")
__getattr__ = paper_attribute(__name__, EXPLORER)
