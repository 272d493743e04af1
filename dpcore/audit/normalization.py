"""Auditing a private data normalisation: the released channel mean against its ε.

Tramèr & Boneh 2021 (ICLR, §3, App. B) and the ModelMix authors' code release, before training, the noisy
per-channel mean (Σ_i clip_{C_m}(m_i) + N(0, (σC_m)² I))/n of the features (and a second moment), and set it into the
model (:func:`dpcore.training.private_norm.private_channel_statistics`, the authors' median thresholds).  The
released mean is part of the trained model, so anyone holding the model sees it.

**Canary** (add/remove): a feature-space Dirac record whose channel-0 moment is far above the threshold while every
other record has channel 0 identically 0.  In the toy every other record has the *same* moments, so the authors'
median thresholds are the same with and without the canary (n of the n + 1 norms are equal) and the noise scale
does not depend on the canary: coordinate 0 of n·mean is C_m + σC_m·Z with the canary and σC_m·Z without, exactly
the Gaussian mechanism with μ = 1/σ (Dong, Roth, Su 2022, Thm 2.7).  (A canary that moves the median leaks through
the threshold as well; this audit does not use that, so it stays a lower bound.)

**Estimator**: :func:`dpcore.audit.gdp.gaussian_shift` with rate 1, the exact non-central t bound on μ under the
equal-variance Gaussian model, which holds here by construction (Nasr et al. 2023, "Tight Auditing of
Differentially Private Machine Learning", §5); ε_lb = ε(G_{μ_lb}) at δ (Dong, Roth, Su 2022, Cor. 2.13).  Only the
mean is used: the model carries the variance max(second − mean², 0), clamped, hence not a Gaussian release, so the
second moment's leakage (the same μ again, √2/σ in all) is not credited.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from dpcore.audit.gdp import gaussian_shift, gdp_epsilon
from dpcore.audit.threat import AuditResult, ThreatModel
from dpcore.training.private_norm import private_channel_statistics
from dpcore.validation import check_open_unit, check_positive, check_positive_int

__all__ = ["toy_features", "released_means", "audit_normalization_gdp"]

_CANARY = 1e3  # the canary's channel-0 value: its moment is clipped to the (median) threshold


def toy_features(records: int, *, canary: bool, channels: int = 3, side: int = 2) -> torch.Tensor:
    """``records`` identical records (channel 0 zero, the others 1) of shape (channels, side, side), and with
    ``canary`` one more record whose channel 0 is large and the others 0 (module docstring)."""
    records = check_positive_int("records", records, minimum=2)
    channels = check_positive_int("channels", channels, minimum=2)
    side = check_positive_int("side", side)
    x = torch.ones(records + int(bool(canary)), channels, side, side, dtype=torch.float64)
    x[:, 0] = 0.0
    if canary:
        x[-1] = 0.0
        x[-1, 0] = _CANARY
    return x


def released_means(runs: int, *, records: int, noise_multiplier: float, canary: bool, seed: int = 0) -> np.ndarray:
    """Coordinate 0 of divisor·mean (the noisy clipped sum) of ``runs`` independent releases of
    :func:`~dpcore.training.private_norm.private_channel_statistics` (median thresholds) on :func:`toy_features`."""
    runs = check_positive_int("runs", runs)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    x = toy_features(records, canary=canary)
    gen = torch.Generator().manual_seed(int(seed) * 2 + int(bool(canary)))
    out = np.empty(runs)
    for i in range(runs):
        stats = private_channel_statistics(x, noise_multiplier=sigma, generator=gen)
        out[i] = float(stats.mean[0]) * stats.record.releases[0].divisor
    return out


def audit_normalization_gdp(
    runs: int,
    *,
    records: int,
    noise_multiplier: float,
    delta: float,
    claimed_epsilon: float,
    confidence: float = 0.95,
    seed: int = 0,
    mechanism: str = "private data normalisation (median thresholds), released mean",
    claim_label: str = "",
) -> AuditResult:
    """The GDP audit of the module docstring with ``runs`` releases per world, against ``claimed_epsilon`` (what
    the caller's accountant says for the whole pipeline the release belongs to)."""
    runs = check_positive_int("runs", runs, minimum=2)
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    claimed = check_positive("claimed_epsilon", claimed_epsilon, allow_inf=True)
    s_in = released_means(runs, records=records, noise_multiplier=noise_multiplier, canary=True, seed=seed)
    s_out = released_means(runs, records=records, noise_multiplier=noise_multiplier, canary=False, seed=seed)
    shift = gaussian_shift(s_in, s_out, confidence=confidence)
    bound = gdp_epsilon(shift, delta, assumption="n·mean[0] is N(C_m, (σC_m)²) vs N(0, (σC_m)²): G_μ, μ = 1/σ")
    threat = ThreatModel(
        iterates="last",
        neighbouring="add/remove",
        canary=f"feature-space Dirac record (channel 0), {records} identical other records",
        estimator="many-runs-gdp",
        confidence=confidence,
        runs=runs,
    )
    return AuditResult(
        mechanism, threat, bound.epsilon, bound.point, float(claimed), delta, "released mean", math.nan,
        claim_label=claim_label or f"GDP estimator (μ_lb = {shift.mu_lower:.4f}, μ̂ = {shift.mu:.4f}, true 1/σ = "
        f"{1 / noise_multiplier:.4f}; {shift.method}; F-test p = {shift.variance_p_value:.3g})",
    )  # fmt: skip
