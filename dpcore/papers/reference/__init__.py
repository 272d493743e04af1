"""Legacy published DP-SGD ε values (Abadi et al. 2016, TF Privacy, Opacus, jax_privacy) and their settings."""

from __future__ import annotations

from dpcore.papers import paper_attribute

#: this package's explorer: (topic of notebooks/explore/<topic>.ipynb, module); ("", "") for none
EXPLORER = ("", "")
__getattr__ = paper_attribute(__name__, EXPLORER)
