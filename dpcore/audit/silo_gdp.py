"""A parametric (GDP-style) audit of one ISRL-DP silo, for either clip scope of MB-SGD.

The silo of :mod:`dpcore.audit.federated` sends, in round r, coordinate 0 of its message
U_r = ∓h(c_r) + σ·Z_r (−: the canary, +: its replace-one neighbour), c_r ~ Binomial(K, 1/n) the number of times
the canary record is drawn and

* ``clip_scope="example"`` (Lowy & Razaviyayn, ICLR 2023, Algorithm 2): h(c) = c·C/K, each drawn copy clipped;
* ``clip_scope="batch_mean"`` (the authors' insurance script, lowya/Private-Federated-Learning-Without-a-Trusted-
  Server@421aeb6, ``DP_FL_insurance_linreg_FINAL.py`` l. 187-190): h(c) = C·1[c ≥ 1], the minibatch mean is
  dominated by the canary's unbounded gradient and clipped once.

Coordinate 0 of the messages does not depend on the model (every other record has x_0 = 0), so the R taps of one
run are i.i.d. and the adversary who reads them faces the R-fold composition of one pair of Gaussian mixtures:
P = Σ_c b_c N(+h(c)/σ, 1) against its reflection (``"example"``: the pair of
:func:`dpcore.accounting.replacement.with_replacement_pld`; ``"batch_mean"``: (1 − p)N(0, 1) + p N(±C/σ, 1),
p = 1 − (1 − 1/n)^K).  Both pairs have one unknown, the unit shift a = h₁/σ (h₁ = C/K resp. C), which the audit
bounds the way Nasr et al. 2023 ("Tight Auditing of Differentially Private Machine Learning", USENIX Security,
§5) bound the μ of DP-SGD's Dirac canary: E[∓U_r] = a·σ·r̄ with the known rate r̄ = E[h(c)]/h₁ (K/n resp. p),
and σ is measured in a coordinate of the *same messages* where every gradient is 0
(:func:`dpcore.audit.federated.silo_noise_tap`), so that :func:`dpcore.audit.gdp.gaussian_shift` (known inclusion
rate, delta-method normal bound, asymptotic) gives a_lb at the confidence.  ε_lb is the exact ε of the R-fold
composed pair at a_lb (PLD, :mod:`dpcore.accounting.replacement`), a lower bound on the silo's ε since the pair is
one pair of neighbours and the taps are a post-processing of the transcript.

*Assumptions*: the message noise is Gaussian with the same σ in every coordinate (it is: :class:`SiloPool` draws
one N(0, σ² I)), the canary is drawn as the sampler says (with replacement, rate 1/n per draw), and the normal
limit of the mean estimator (thousands of taps).  ``epsilon_claimed`` is the record's accountant (what
:func:`dpcore.accounting.records.epsilon_for_record` gives for the record of the mechanism that ran: the tight
with-replacement PLD for per-example clipping, the no-amplification GDP upper bound for the batch mean).
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.replacement import mixture_pld, with_replacement_epsilon
from dpcore.audit.federated import SiloSetting, silo_noise_tap
from dpcore.audit.gdp import gaussian_shift
from dpcore.audit.threat import AuditResult, ThreatModel
from dpcore.validation import check_nonnegative, check_open_unit, check_positive_int

__all__ = ["inclusion_rate", "pair_epsilon", "audit_silo_gdp"]


def _setting(setting: SiloSetting) -> SiloSetting:
    if not isinstance(setting, SiloSetting):
        raise ValueError(f"setting must be a SiloSetting, got {type(setting).__name__}")
    return setting


def inclusion_rate(setting: SiloSetting) -> float:
    """r̄ = E[h(c)]/h₁ of the module docstring: K/n (``"example"``) or 1 − (1 − 1/n)^K (``"batch_mean"``).

    >>> inclusion_rate(SiloSetting(records=4, batch_size=2, rounds=1, noise_std=1.0, clip_scope="batch_mean"))
    0.4375
    """
    s = _setting(setting)
    if s.clip_scope == "example":
        return s.batch_size / s.records
    return 1.0 - (1.0 - 1.0 / s.records) ** s.batch_size


def pair_epsilon(setting: SiloSetting, unit_shift: float, delta: float) -> float:
    """ε(δ) of the R-fold composition of the canary's pair (module docstring) at unit shift a = ``unit_shift``
    (in noise standard deviations; 0 gives 0).  ``"example"``: the tight with-replacement PLD at noise_std C/(K·a)
    (:func:`dpcore.accounting.replacement.with_replacement_epsilon`, replace-one); ``"batch_mean"``: the PLD of
    (1 − p)N(0, 1) + pN(a, 1) against its reflection (:func:`~dpcore.accounting.replacement.mixture_pld`)."""
    s = _setting(setting)
    a = check_nonnegative("unit_shift", unit_shift)
    delta = check_open_unit("delta", delta)
    if a == 0:
        return 0.0
    if s.clip_scope == "example":
        return float(
            with_replacement_epsilon(
                noise_std=s.clip_norm / (s.batch_size * a),
                lipschitz=s.clip_norm,
                batch_size=s.batch_size,
                n=s.records,
                rounds=s.rounds,
                delta=delta,
            )
        )
    p = inclusion_rate(s)
    w = np.array([1.0 - p, p])
    single = mixture_pld(np.array([0.0, a]), w, np.array([0.0, -a]), w, symmetric=True)
    composed = single.self_compose(s.rounds) if s.rounds > 1 else single
    return float(composed.get_epsilon_for_delta(delta))


def audit_silo_gdp(
    setting: SiloSetting,
    runs: int,
    *,
    delta: float,
    confidence: float = 0.95,
    seed: int = 0,
    mechanism: str | None = None,
) -> AuditResult:
    """The parametric audit of the module docstring with ``runs`` runs of :func:`dpcore.federated.algorithms.mb_sgd`
    per world (the canary and its replace-one neighbour; every tap of both worlds is used, sign-corrected)."""
    s = _setting(setting)
    runs = check_positive_int("runs", runs, minimum=2)
    delta = check_open_unit("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    u_in, z_in, record = silo_noise_tap(s, runs, canary=True, seed=seed)
    u_out, z_out, _ = silo_noise_tap(s, runs, canary=False, seed=seed + 1)
    obs = np.concatenate([-u_in.reshape(-1), u_out.reshape(-1)])  # each: h(c)·(+1) + σZ
    noise = np.concatenate([z_in.reshape(-1), z_out.reshape(-1)])
    rate = inclusion_rate(s)
    shift = gaussian_shift(obs, noise, confidence=confidence, rate=rate)
    lower = pair_epsilon(s, shift.mu_lower, delta)
    point = pair_epsilon(s, max(shift.mu, 0.0), delta)
    threat = ThreatModel(
        iterates="all",
        neighbouring="replace-one",
        canary=f"record of silo 0 with gradient clipped to ∓{s.clip_norm:g}·e (n = {s.records}, K = {s.batch_size} "
        f"draws with replacement, clip scope {s.clip_scope})",
        estimator="many-runs-gdp",
        confidence=confidence,
        runs=runs,
    )
    name = mechanism or f"ISRL-DP MB-SGD, one silo's messages, clip scope {s.clip_scope}, GDP estimator"
    return AuditResult(
        name, threat, lower, point, float(epsilon_for_record(record, delta)), delta, "gaussian-shift per round",
        math.nan, claim_label=f"unit shift a_lb = {shift.mu_lower:.4f} (â = {shift.mu:.4f}, rate {rate:.4g}; "
        f"{shift.method}); exact ε of the canary's composed pair at a_lb; accountant: the record's",
    )  # fmt: skip
