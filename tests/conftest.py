"""Shared test setup: one torch thread, the runner's kernel environment, hypothesis profile.

The environment of :data:`dpcore.runner.REPEATABLE_ENV` (one OpenMP/BLAS thread, DPCORE_REPEATABLE, fixed hash
seed and dates, Agg) is set for the whole session: nbval's notebook kernels inherit it and so run as ``make figures``
runs them.  Without it each kernel took both cores' worth of torch threads beside the other xdist worker, and the
training notebooks ran 3-6x slower (002 training 579 s, 000 non-convex 473 s in CI).
"""

import os
import sys

import pytest
from threadpoolctl import threadpool_limits

from dpcore.runner import REPEATABLE_ENV

os.environ.update(REPEATABLE_ENV)
# numpy may already be imported (by a plugin) with a BLAS pool sized to the machine: its threads spin under a loaded
# CI machine and multiplied the CPU time of the accountants' time-limited tests 3-20x (each xdist worker loads this
# file too)
threadpool_limits(1)

import torch  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

torch.set_num_threads(1)
settings.register_profile("dpcore", deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dpcore")


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every pyplot figure a test leaves open (the figure-drawing functions return their figures; a test that
    only inspects one kept it alive, and matplotlib warned after 20)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
