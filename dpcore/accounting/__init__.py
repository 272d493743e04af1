"""Privacy accounting: standard DP-SGD accountants and one module per paper.

Public entry points of the foundation (keep these names):
:func:`dpsgd_epsilon` and :func:`dpsgd_noise_multiplier`.
"""

from dpcore.accounting.dpsgd import METHODS, SAMPLINGS, dpsgd_epsilon, dpsgd_noise_multiplier

__all__ = ["METHODS", "SAMPLINGS", "dpsgd_epsilon", "dpsgd_noise_multiplier"]
