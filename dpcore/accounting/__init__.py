"""Privacy accounting: paper-independent, one implementation per primitive.

* :mod:`~dpcore.accounting.events`    -- the vocabulary of what a run did (sampling, clipping).
* :mod:`~dpcore.accounting.gaussian`  -- the Gaussian mechanism: δ(ε) in log space, ε(δ), trade-off curve.
* :mod:`~dpcore.accounting.rdp`       -- subsampled-Gaussian RDP (Poisson; fixed-size without replacement),
  any order > 1, and RDP → (ε, δ).
* :mod:`~dpcore.accounting.fdp`       -- trade-off curves, GDP/CLT μ (approximate), conversions.
* :mod:`~dpcore.accounting.calibrate` -- the one calibrator behind every "σ for a target ε".
* :mod:`~dpcore.accounting.dpsgd`     -- :func:`dpsgd_epsilon` and :func:`dpsgd_noise_multiplier`.
* :mod:`~dpcore.accounting.run_record` -- :class:`RunRecord`: what a run did, typed, frozen, validated.
* :mod:`~dpcore.accounting.records`   -- run records → ε with the matching accountant.
* mechanism accountants the trainer's records need: :mod:`~dpcore.accounting.modelmix` (Gaussian ⊛ uniform
  mixing), :mod:`~dpcore.accounting.shuffled` and :mod:`~dpcore.accounting.mixture` (shuffled / subsampled
  batch clipping under the labelled adversary A_1).
"""

from dpcore.accounting.dpsgd import METHODS, SAMPLINGS, dpsgd_epsilon, dpsgd_noise_multiplier
from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.run_record import RunRecord

__all__ = ["METHODS", "SAMPLINGS", "RunRecord", "dpsgd_epsilon", "dpsgd_noise_multiplier", "epsilon_for_record"]
