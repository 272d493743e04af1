"""Paper 003's authors' code paths, audited at toy scale with the mechanism that ran (issue 42).

Each mode of :data:`dpcore.papers.p003_shuffling.training.MODES` that changes the mechanism -- its clip scope and
noise placement, read from the modes, not hard-coded -- is run through :class:`dpcore.training.Trainer` with
shuffling, replace-one noise and a gradient-space Dirac canary (:func:`dpcore.audit.tight.audit_shuffled_gdp`,
adversary A_1, GDP estimator), beside Algorithm 1 with batch clipping (the reference).  The toy has two parameter
tensors with the canary in both (:class:`dpcore.audit.shuffled.ShuffleSetting` ``tensors=2``), so that per-tensor
clipping (the authors' ``per_tensor`` scope: each tensor clipped to C, the vector bounded by C·√2 only) differs from
the paper's global [x]_C.  Each row holds the paper's claim for that run (ε(G_{√E/σ}) at the nominal σ:
:func:`claimed_toy_epsilon`, the formula of :func:`~dpcore.papers.p003_shuffling.training.claimed_epsilon`), the
accountant's ε of the mechanism that ran (the record's clip norm C·√k and effective σ) and the audit's lower bound.
Where the placement divides the noise by m (93f6075, 8186d9f) or by |S_b| (HEAD's batch clipping), or where
per-tensor clipping lets the canary move the release by C·√k, the lower bound exceeds the claim: an empirical
demonstration that the code path is not DP at the claimed ε.

The modes named ``lr_authors`` are not audited: they change only the step-size rule (decay when the *test* accuracy
did not increase), with Algorithm 1's clipping and noise.  The step size rescales the released U/m -- a
post-processing of the privatised sum that the adversary here (who reads U off the iterates) undoes -- so their
mechanism is the reference row's.
"""

from __future__ import annotations

import math
import time

import pandas as pd

from dpcore.accounting.gaussian import epsilon_from_mu
from dpcore.audit.shuffled import ShuffleSetting
from dpcore.audit.tight import audit_shuffled_gdp
from dpcore.papers.p003_shuffling.training import MODES
from dpcore.validation import check_open_unit, check_positive, check_positive_int

__all__ = ["AUTHORS_PLACEMENTS", "AUDITED_MODES", "TOY", "claimed_toy_epsilon", "mode_audits"]

#: the authors' noise placements, with the clipping family their mode applies to (IC -> individual, BC -> batch)
AUTHORS_PLACEMENTS: dict[str, str] = {
    m.noise_placement: ("individual" if m.family == "IC" else "batch")
    for m in MODES
    if m.noise_placement != "algorithm1"
}
#: (mode name, family, clip scope, noise placement) of every audited row: Algorithm 1 with batch clipping (the
#: reference), then each mode of ``MODES`` whose mechanism differs from Algorithm 1's (not the step-size-only modes)
AUDITED_MODES: tuple[tuple[str, str, str, str], ...] = (("algorithm1", "BC", "global", "algorithm1"),) + tuple(
    (m.name, m.family, m.clip_scope, m.noise_placement)
    for m in MODES
    if (m.clip_scope, m.noise_placement) != ("global", "algorithm1")
)
#: the toy: |S_b| = 4, b = 2 rounds per epoch (N = 8), E = 2, the paper's σ = 2, two parameter tensors
TOY = dict(batch_size=4, rounds_per_epoch=2, epochs=2, noise_multiplier=2.0, tensors=2)


def claimed_toy_epsilon(epochs: int, sigma: float, delta: float) -> float:
    """The paper's A_1 claim for a shuffled run at the nominal σ: ε(G_{√E/σ}) at δ (Thm F.1, g = 1)."""
    epochs = check_positive_int("epochs", epochs)
    sigma = check_positive("sigma", sigma)
    delta = check_open_unit("delta", delta)
    return float(epsilon_from_mu(math.sqrt(epochs) / sigma, delta))


def mode_audits(*, runs: int, delta: float, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """One row per :data:`AUDITED_MODES` entry: ``mode`` (``<family>/<mode name>``, e.g. ``IC/authors_93f6075``; the
    reference ``BC/algorithm1``), ``family``, ``clip_scope``, ``noise_placement``,
    ``claimed`` (the paper's ε), ``accounted`` (the record's ε), ``audited_lower`` (GDP lower bound),
    ``exceeds_claim``, ``within_accountant`` and ``cpu_s`` (CPU seconds of the row)."""
    runs = check_positive_int("runs", runs, minimum=4)
    rows = []
    for i, (mode, family, scope, placement) in enumerate(AUDITED_MODES):
        start = time.process_time()
        clipping = "individual" if family == "IC" else "batch"
        setting = ShuffleSetting(clipping, noise_placement=placement, clip_scope=scope, **TOY)
        res = audit_shuffled_gdp(setting, runs, delta=delta, confidence=confidence, seed=seed + 100 * i)
        claimed = claimed_toy_epsilon(TOY["epochs"], TOY["noise_multiplier"], delta)
        rows.append({
            "mode": f"{family}/{mode}", "family": family, "clip_scope": scope, "noise_placement": placement,
            "clipping": clipping, "runs_per_world": runs, "delta": delta, "claimed": claimed,
            "accounted": res.epsilon_claimed,
            "audited_lower": res.epsilon_lower, "audited_point": res.epsilon_point,
            "exceeds_claim": bool(res.epsilon_lower > claimed),
            "within_accountant": bool(res.epsilon_lower <= res.epsilon_claimed),
            "cpu_s": time.process_time() - start, "note": res.claim_label,
        })  # fmt: skip
    return pd.DataFrame(rows)
