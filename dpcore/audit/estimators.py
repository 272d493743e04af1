"""Statistically valid lower bounds on ε from a membership test's success (privacy auditing).

Two estimators, each with a stated confidence:

* **Many runs** (Jagielski, Ullman, Oprea 2020, §3 and Algorithm 2; Nasr et al. 2021, §4; Nasr et al. 2023,
  "Tight Auditing of Differentially Private Machine Learning", §3): train many times with and without a
  canary, score each run, and test "canary in" by ``score > t``.  An (ε, δ)-DP mechanism forces every test to
  satisfy FPR + e^ε·FNR ≥ 1 − δ and FNR + e^ε·FPR ≥ 1 − δ (Kairouz, Oh, Viswanath 2015, Thm 2.1), so with
  one-sided Clopper–Pearson upper bounds FPR⁺, FNR⁺ (each at level α/2, both holding with probability ≥ 1 − α)

      ε ≥ max( log((1 − δ − FNR⁺)/FPR⁺), log((1 − δ − FPR⁺)/FNR⁺) ).

  The threshold (and the score) is chosen on a separate *selection* half of the runs, and the bound is
  computed on the other half, so picking the best threshold does not void the confidence level.
* **One run** (Steinke, Nasr, Jagielski 2023, "Privacy Auditing with One (1) Training Run", Thm 5.2 with the
  p-value of its Algorithm 2): m canaries, each included independently with probability ½; the auditor guesses
  r of them and gets v right.  Under (ε, δ)-DP,
  P[V ≥ v] ≤ P[Bin(r, p) ≥ v] + 2mδ · max_{i=1..v} P[v − i ≤ Bin(r, p) < v] / i with p = e^ε/(1 + e^ε),
  and the lower bound at confidence 1 − β is the largest ε whose p-value is still < β.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dpcore.validation import check_choice, check_open_unit, check_positive_int

__all__ = [
    "clopper_pearson",
    "ThresholdBound",
    "epsilon_from_rates",
    "threshold_epsilon",
    "select_threshold",
    "held_out_bound",
    "one_run_p_value",
    "one_run_epsilon",
]


def clopper_pearson(successes: int, trials: int, alpha: float, *, side: str = "two-sided") -> tuple[float, float]:
    """Clopper–Pearson (exact binomial) interval for a success probability from ``successes`` of ``trials``.

    ``side="two-sided"``: the central interval at confidence 1 − α (α/2 in each tail); ``"upper"`` / ``"lower"``:
    a one-sided bound at confidence 1 − α, the other end being 1 / 0 (Clopper & Pearson 1934).

    >>> lo, hi = clopper_pearson(0, 100, 0.05, side="upper"); round(hi, 4)
    0.0295
    """
    trials = check_positive_int("trials", trials)
    successes = check_positive_int("successes", successes, minimum=0)
    if successes > trials:
        raise ValueError(f"successes must be in [0, trials={trials}], got {successes}")
    alpha = check_open_unit("alpha", alpha)
    side = check_choice("side", side, ("two-sided", "upper", "lower"))
    tail = alpha / 2 if side == "two-sided" else alpha
    lo = 0.0 if successes == 0 else float(stats.beta.ppf(tail, successes, trials - successes + 1))
    hi = 1.0 if successes == trials else float(stats.beta.ppf(1 - tail, successes + 1, trials - successes))
    if side == "upper":
        lo = 0.0
    elif side == "lower":
        hi = 1.0
    return lo, hi


def epsilon_from_rates(fpr: float, fnr: float, delta: float) -> float:
    """The ε that a test with false-positive rate ``fpr`` and false-negative rate ``fnr`` certifies at δ:
    max(log((1 − δ − fnr)/fpr), log((1 − δ − fpr)/fnr), 0) (Kairouz, Oh, Viswanath 2015, Thm 2.1;
    Jagielski et al. 2020, Thm 1).  A zero rate with a positive numerator gives ∞.
    """
    for name, v in (("fpr", fpr), ("fnr", fnr)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            raise ValueError(f"{name} must be a number in [0, 1], got {v!r}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}")
    best = 0.0
    for num, den in ((1.0 - delta - fnr, fpr), (1.0 - delta - fpr, fnr)):
        if num <= 0:
            continue
        best = max(best, math.inf if den == 0 else math.log(num / den))
    return best


@dataclass(frozen=True)
class ThresholdBound:
    """The ε lower bound of one threshold test on held-out runs, with its counts and rate bounds."""

    epsilon: float  # lower bound at the stated confidence
    point: float  # the same formula at the empirical rates (no confidence: an estimate, not a bound)
    threshold: float
    false_positives: int
    false_negatives: int
    runs_in: int
    runs_out: int
    fpr_upper: float
    fnr_upper: float
    confidence: float
    delta: float


def _scores(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence of scores")
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    return arr


def threshold_epsilon(
    scores_in: Sequence[float] | np.ndarray,
    scores_out: Sequence[float] | np.ndarray,
    threshold: float,
    *,
    delta: float,
    confidence: float = 0.95,
) -> ThresholdBound:
    """ε lower bound of the test "canary in iff score > ``threshold``" (module docstring; Jagielski et al. 2020).

    ``scores_in``: scores of runs with the canary; ``scores_out``: without.  FPR⁺ and FNR⁺ are one-sided
    Clopper–Pearson bounds at level (1 − confidence)/2 each, so the bound holds with probability ≥ ``confidence``
    *provided the threshold was fixed independently of these scores* (see :func:`select_threshold`).
    """
    s_in, s_out = _scores("scores_in", scores_in), _scores("scores_out", scores_out)
    confidence = check_open_unit("confidence", confidence)
    delta = check_open_unit("delta", delta)
    t = float(threshold)
    if math.isnan(t):
        raise ValueError("threshold must not be NaN")
    fp = int((s_out > t).sum())
    fn = int((s_in <= t).sum())
    alpha = (1.0 - confidence) / 2
    fpr_hi = clopper_pearson(fp, s_out.size, alpha, side="upper")[1]
    fnr_hi = clopper_pearson(fn, s_in.size, alpha, side="upper")[1]
    return ThresholdBound(
        epsilon=epsilon_from_rates(fpr_hi, fnr_hi, delta),
        point=epsilon_from_rates(fp / s_out.size, fn / s_in.size, delta),
        threshold=t,
        false_positives=fp,
        false_negatives=fn,
        runs_in=s_in.size,
        runs_out=s_out.size,
        fpr_upper=fpr_hi,
        fnr_upper=fnr_hi,
        confidence=confidence,
        delta=delta,
    )


def select_threshold(
    scores_in: Sequence[float] | np.ndarray,
    scores_out: Sequence[float] | np.ndarray,
    *,
    delta: float,
    confidence: float = 0.95,
    candidates: int = 400,
) -> ThresholdBound:
    """The threshold whose :func:`threshold_epsilon` is largest on these (selection) scores.

    Candidates are midpoints between ``candidates`` quantiles of all scores (and the extremes).  The returned
    bound is optimistic for these scores (the threshold was fitted to them): evaluate the threshold on fresh
    runs with :func:`threshold_epsilon` to get a valid lower bound.
    """
    s_in, s_out = _scores("scores_in", scores_in), _scores("scores_out", scores_out)
    candidates = check_positive_int("candidates", candidates, minimum=2)
    pooled = np.concatenate([s_in, s_out])
    qs = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, candidates)))
    grid = np.unique(np.concatenate([(qs[1:] + qs[:-1]) / 2, [pooled.min() - 1.0, pooled.max()]]))
    sorted_in, sorted_out = np.sort(s_in), np.sort(s_out)
    fn = np.searchsorted(sorted_in, grid, side="right")  # in-scores <= t
    fp = s_out.size - np.searchsorted(sorted_out, grid, side="right")  # out-scores > t
    alpha = (1.0 - confidence) / 2
    fpr_hi = np.where(fp == s_out.size, 1.0, stats.beta.ppf(1 - alpha, fp + 1, s_out.size - fp))
    fnr_hi = np.where(fn == s_in.size, 1.0, stats.beta.ppf(1 - alpha, fn + 1, s_in.size - fn))
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.clip(1 - delta - fnr_hi, 0, None) / fpr_hi)
        b = np.log(np.clip(1 - delta - fpr_hi, 0, None) / fnr_hi)
    eps = np.nan_to_num(np.maximum(a, b), nan=0.0, neginf=0.0)
    best = int(np.argmax(eps))
    return threshold_epsilon(s_in, s_out, float(grid[best]), delta=delta, confidence=confidence)


def held_out_bound(
    scorer: Callable[[str], tuple[np.ndarray, np.ndarray]],
    scores: Iterable[str],
    *,
    delta: float,
    confidence: float = 0.95,
) -> tuple[str, ThresholdBound, int]:
    """Many-runs lower bound with the score and threshold chosen on held-out runs (Jagielski et al. 2020).

    ``scorer(name)`` gives the (in, out) scores of every run under the score ``name``; the first half of the
    runs of each world picks the score and threshold with :func:`select_threshold`, the second half gives the
    bound with :func:`threshold_epsilon`, so the confidence holds.  Returns (score, bound, held-out runs per world).
    """
    best = None
    for name in scores:
        s_in, s_out = scorer(name)
        half = min(s_in.size, s_out.size) // 2
        sel = select_threshold(s_in[:half], s_out[:half], delta=delta, confidence=confidence)
        if best is None or sel.epsilon > best[1].epsilon:
            best = (name, sel, s_in[half:], s_out[half:])
    if best is None:
        raise ValueError("scores must name at least one score")
    name, sel, e_in, e_out = best
    return name, threshold_epsilon(e_in, e_out, sel.threshold, delta=delta, confidence=confidence), int(e_in.size)


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """P-value of ≥ ``v`` correct guesses out of ``r`` (of ``m`` canaries) if the mechanism were (ε, δ)-DP.

    Steinke, Nasr, Jagielski 2023, Thm 5.2 (pure DP: Thm 3.1): with p = e^ε/(1 + e^ε),
    P[V ≥ v] ≤ P[Bin(r, p) ≥ v] + 2mδ · max_{1≤i≤v} P[v − i ≤ Bin(r, p) < v]/i (capped at 1).
    """
    m = check_positive_int("m", m)
    r = check_positive_int("r", r, minimum=0)
    v = check_positive_int("v", v, minimum=0)
    if not v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 <= epsilon < math.inf:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta <= 1:
        raise ValueError(f"delta must be a number in [0, 1], got {delta!r}")
    p = 1.0 / (1.0 + math.exp(-epsilon))
    tail = float(stats.binom.sf(v - 1, r, p))  # P[Bin(r, p) >= v]
    if v == 0 or delta == 0:
        return min(1.0, tail)
    below = stats.binom.pmf(np.arange(v - 1, -1, -1), r, p)  # P[Bin = v-1], P[Bin = v-2], ..., P[Bin = 0]
    ratio = float(np.max(np.cumsum(below) / np.arange(1, v + 1)))
    return min(1.0, tail + 2 * m * delta * ratio)


def one_run_epsilon(m: int, r: int, v: int, *, delta: float, confidence: float = 0.95, tol: float = 1e-4) -> float:
    """Largest ε (to ``tol``) rejected at level β = 1 − ``confidence`` by :func:`one_run_p_value`: a lower bound on
    the mechanism's ε at δ, valid with probability ≥ ``confidence`` (Steinke, Nasr, Jagielski 2023, Thm 5.2).
    Returns 0 when even ε = 0 cannot be rejected."""
    confidence = check_open_unit("confidence", confidence)
    beta = 1.0 - confidence
    if one_run_p_value(m, r, v, 0.0, delta) >= beta:
        return 0.0
    lo, hi = 0.0, 1.0
    while one_run_p_value(m, r, v, hi, delta) < beta:
        lo, hi = hi, 2 * hi
        if hi > 1e3:
            return math.inf
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if one_run_p_value(m, r, v, mid, delta) < beta:
            lo = mid
        else:
            hi = mid
    return lo
