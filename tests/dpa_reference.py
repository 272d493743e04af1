"""Independent reference values from Google's dp_accounting (the tests' golden source for RDP)."""

from __future__ import annotations

import dp_accounting
import numpy as np
from dp_accounting import rdp


def dpa_poisson_rdp(noise_multiplier: float, sample_rate: float, steps: int, orders) -> np.ndarray:
    """RDP of ``steps`` Poisson-subsampled Gaussian steps from dp_accounting's RdpAccountant."""
    gaussian = dp_accounting.GaussianDpEvent(noise_multiplier)
    step = gaussian if sample_rate == 1.0 else dp_accounting.PoissonSampledDpEvent(sample_rate, gaussian)
    accountant = rdp.RdpAccountant(orders=[float(a) for a in orders])
    accountant.compose(dp_accounting.SelfComposedDpEvent(step, steps))
    return np.asarray(accountant._rdp, dtype=float)
