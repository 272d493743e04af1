"""Shared test setup: one torch thread, non-interactive matplotlib, hypothesis profile."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import torch  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

torch.set_num_threads(1)
settings.register_profile("dpcore", deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dpcore")
