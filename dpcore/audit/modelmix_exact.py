"""The exact privacy of the ModelMix Dirac toy, and an audit whose score and bound fit the mechanism.

One ModelMix step (Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix", Algorithm 1; the
trainer's :func:`dpcore.training.modelmix.mix`) with a Dirac canary in coordinate j, in units of the summed gradient
(y = D·w, D the update's denominator, learning rate 1):

    y_{k+1} = V_k − (c·B_k + Z_k),   V_k ~ U[l_k, h_k],   Z_k ~ N(0, s²),   B_k ~ Bernoulli(q),

where [l_k, h_k] is the gap-enforced interval between the two last *released* iterates y_k, y_{k−1} (lines 6–8; its
length L_k = max(|y_k − y_{k−1}|, τD) ≥ τD), s = σC the Gaussian noise and c the clipped canary.  The mixing weight α
is not released, but the interval is: an adversary who sees every iterate knows L_k, and the residual
e_k = (l_k + h_k)/2 − y_{k+1} is exactly N(c·B_k, s²) ⊛ U[−L_k/2, L_k/2] -- Theorem 4.1's pair P0/P1 with width L_k
(the accountant, :mod:`dpcore.accounting.modelmix`, takes every width at its minimum u = τD/c).

Three things follow, each used by the privacy-audit notebook:

* :func:`exact_epsilon` -- the *exact* ε(δ) of T compositions of the Poisson-subsampled pair
  ((1 − q)P0 + qP1, P0) at a fixed width u, both directions of add/remove, by the privacy-loss distribution: the
  loss is monotone in the output (P0 is log-concave, so the shift family has a monotone likelihood ratio), so
  rounding each output bin's loss up (down) gives a pessimistic (optimistic) discrete PLD whose T-fold convolution
  brackets the true δ(ε) (Koskela, Jälkö, Honkela 2020; Meiser, Mohammadi 2018).  This is what the accountant's RDP
  bound (Theorem 4.1 + an RDP→(ε, δ) conversion) upper-bounds;
* :func:`toy_epsilon_mc` -- the ε of the toy *as run* (widths L_k ≥ τD drawn by the trajectory), by Monte Carlo of
  the exact trajectory likelihood ratio with a confidence interval: the ceiling of any audit of this toy;
* :func:`audit_modelmix` -- the audit: the exact log-likelihood-ratio score of the released trajectory
  (:func:`trajectory_llr`; threat model: white box, every iterate seen, τ, q, s, c and the gap rule known, α not
  seen), bounded (i) distribution-free by a held-out threshold and Clopper–Pearson (valid with no assumption) and
  (ii) by a family bound: a lower confidence bound θ_lb on θ = c/s from the residuals' moments (asymptotically
  normal; no Gaussian-shape assumption on a score) turned into ε by :func:`exact_epsilon` at θ_lb and width
  u = τD/c.  (ii) is valid at its confidence under the stated assumption that the implementation is this mechanism
  up to θ, and that δ(ε) does not decrease as widths shrink to τD (checked numerically by :func:`width_monotone`;
  the paper assumes it without proof, implementation note §10.7).  It must not be composed with the RDP accountant:
  an upper bound evaluated at θ_lb is not a lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import log_ndtr, ndtr

from dpcore.accounting.modelmix import log_mixture_density
from dpcore.accounting.records import epsilon_for_record
from dpcore.accounting.run_record import RunRecord
from dpcore.audit.dirac import DiracSetting, dirac_updates
from dpcore.audit.estimators import held_out_bound
from dpcore.audit.threat import AuditResult, ThreatModel
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int, check_rate

__all__ = [
    "ExactCurve",
    "exact_delta",
    "exact_epsilon",
    "width_monotone",
    "interval_residuals",
    "trajectory_llr",
    "simulate_toy",
    "ToyEpsilon",
    "toy_epsilon_mc",
    "ShiftBound",
    "residual_bound",
    "ModelMixAudit",
    "audit_ceiling",
    "ceiling_text",
    "audit_modelmix",
]

#: output grid: points per noise std, and the span in noise stds beyond the interval (mass outside < 1e-40)
_POINTS_PER_STD = 2000
_TAIL_STDS = 14.0


def _check_number(name: str, value: object, lo: float, hi: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= float(value) < hi:
        raise ValueError(f"{name} must be a number in [{lo:g}, {hi:g}), got {value!r}")
    return float(value)


def _cdf(x: np.ndarray, noise: float, width: float, shift: float) -> np.ndarray:
    """CDF of N(shift, noise²) ⊛ U[−width/2, width/2]: (noise/width)·[G(b) − G(a)], G(t) = tΦ(t) + φ(t)."""
    a, b = (x - shift - width / 2) / noise, (x - shift + width / 2) / noise

    def g(t: np.ndarray) -> np.ndarray:
        return t * ndtr(t) + np.exp(-0.5 * t * t) / math.sqrt(2 * math.pi)

    return np.clip(noise / width * (g(b) - g(a)), 0.0, 1.0)


@dataclass(frozen=True)
class _StepPLD:
    """Discrete privacy-loss distributions of one step, per direction: masses on the grid k·dl (pessimistic: losses
    rounded up, tail mass at +∞; optimistic: rounded down, tail dropped)."""

    dl: float
    offset: dict  # direction -> (pess offset, opt offset) in grid units
    masses: dict  # direction -> (pess masses, opt masses)
    inf_mass: dict  # direction -> pessimistic mass at +∞


def _step_pld(noise: float, width: float, rate: float, loss_grid: float) -> _StepPLD:
    z, u, q = noise, width, rate
    lo, hi = -u / 2 - _TAIL_STDS * z, u / 2 + 1.0 + _TAIL_STDS * z
    n = int(math.ceil((hi - lo) / z * _POINTS_PER_STD)) + 1
    edges = np.linspace(lo, hi, n)
    f0, f1 = _cdf(edges, z, u, 0.0), _cdf(edges, z, u, 1.0)
    m0, m1 = np.clip(np.diff(f0), 0, None), np.clip(np.diff(f1), 0, None)
    tail0, tail1 = 1.0 - m0.sum(), 1.0 - m1.sum()
    lp0 = log_mixture_density(edges, shift=0.0, noise=z, width=u)
    lp1 = log_mixture_density(edges, shift=1.0, noise=z, width=u)
    # add: loss log(M/P0) = log(1 − q + q·P1/P0), increasing in the output (monotone likelihood ratio)
    loss = np.logaddexp(math.log1p(-q), math.log(q) + lp1 - lp0) if q < 1 else lp1 - lp0
    l_lo, l_hi = loss[:-1], loss[1:]
    mix = (1 - q) * m0 + q * m1
    out: dict = {"offset": {}, "masses": {}, "inf_mass": {}}
    for direction, mass, up, down, tail in (
        ("add", mix, l_hi, l_lo, (1 - q) * tail0 + q * tail1),
        ("remove", m0, -l_lo, -l_hi, tail0),  # loss log(P0/M) = −loss, its bin maximum at the left edge
    ):
        pess = np.ceil(up / loss_grid).astype(np.int64)
        opt = np.floor(down / loss_grid).astype(np.int64)
        row_p, row_o = [], []
        for k, row in ((pess, row_p), (opt, row_o)):
            off = int(k.min())
            row.append((off, np.bincount(k - off, weights=mass)))
        out["offset"][direction] = (row_p[0][0], row_o[0][0])
        out["masses"][direction] = (row_p[0][1], row_o[0][1])
        out["inf_mass"][direction] = max(float(tail), 0.0)
    return _StepPLD(loss_grid, out["offset"], out["masses"], out["inf_mass"])


def _fft_power(p: np.ndarray, steps: int) -> np.ndarray:
    size = steps * (p.size - 1) + 1
    nfft = 1 << (size - 1).bit_length()
    out = np.fft.irfft(np.fft.rfft(p, nfft) ** steps, nfft)[:size]
    return np.clip(out, 0.0, None)


@dataclass(frozen=True)
class ExactCurve:
    """δ(ε) of T compositions, bracketed: ``delta_lower(ε) ≤ δ_true(ε) ≤ delta_upper(ε)`` (up to float rounding)."""

    noise: float
    width: float
    rate: float
    steps: int
    loss_grid: float
    _composed: dict  # direction -> ((offset, masses, inf) pessimistic, (offset, masses) optimistic)

    def _delta(self, epsilon: float, which: int) -> float:
        best = 0.0
        for (p_off, p_m, p_inf), (o_off, o_m) in self._composed.values():
            off, m = (p_off, p_m) if which == 0 else (o_off, o_m)
            losses = (off + np.arange(m.size)) * self.loss_grid
            keep = losses > epsilon
            d = float(np.sum(m[keep] * -np.expm1(epsilon - losses[keep])))
            best = max(best, d + (p_inf if which == 0 else 0.0))
        return min(best, 1.0)

    def delta_upper(self, epsilon: float) -> float:
        return self._delta(_check_number("epsilon", epsilon, 0.0), 0)

    def delta_lower(self, epsilon: float) -> float:
        return self._delta(_check_number("epsilon", epsilon, 0.0), 1)

    def epsilon(self, delta: float, *, bound: str = "upper") -> float:
        """Smallest ε (bisection to 1e-5) with δ_bound(ε) ≤ ``delta``: ``bound="upper"`` gives an ε ≥ the true
        ε(δ), ``"lower"`` one ≤ it."""
        delta = check_open_unit("delta", delta)
        check_choice("bound", bound, ("upper", "lower"))
        fn = self.delta_upper if bound == "upper" else self.delta_lower
        if fn(0.0) <= delta:
            return 0.0
        lo, hi = 0.0, 1.0
        while fn(hi) > delta:
            lo, hi = hi, 2 * hi
            if hi > 1e3:
                return math.inf
        while hi - lo > 1e-5:
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if fn(mid) > delta else (lo, mid)
        return hi


def _curve(noise: float, width: float, rate: float, steps: int, loss_grid: float) -> ExactCurve:
    noise = check_positive("noise", noise)
    if not noise <= 1e3:
        raise ValueError(f"noise must be in (0, 1000] (noise std over the canary's shift), got {noise!r}")
    width = _check_number("width", width, 0.0, 1e4)
    if width <= 0:
        raise ValueError(f"width must be in (0, 1e4) (the uniform envelope over the canary's shift), got {width!r}")
    rate = check_rate("rate", rate)
    steps = check_positive_int("steps", steps)
    if steps > 10_000:
        raise ValueError(f"steps must be in [1, 10000], got {steps}")
    loss_grid = _check_number("loss_grid", loss_grid, 1e-6, 0.1)
    if loss_grid <= 1e-6:
        raise ValueError(f"loss_grid must be in (1e-6, 0.1), got {loss_grid!r}")
    step = _step_pld(noise, width, rate, loss_grid)
    composed = {}
    for d in ("add", "remove"):
        (p_off, o_off), (p_m, o_m) = step.offset[d], step.masses[d]
        inf = 1.0 - (1.0 - step.inf_mass[d]) ** steps
        composed[d] = ((steps * p_off, _fft_power(p_m, steps), inf), (steps * o_off, _fft_power(o_m, steps)))
    return ExactCurve(noise, width, rate, steps, loss_grid, composed)


def exact_delta(epsilon: float, *, noise: float, width: float, rate: float, steps: int,
                loss_grid: float = 5e-4) -> tuple[float, float]:  # fmt: skip
    """(lower, upper) bracket of the exact δ(ε) of ``steps`` Poisson-subsampled ModelMix steps: output
    N(B, noise²) ⊛ U[−width/2, width/2] per step, B ~ Bernoulli(``rate``) (add/remove, larger direction), all in
    units of the canary's shift (noise = σ·C/c, width = τD/c: Theorem 4.1's z and u with shift 1)."""
    curve = _curve(noise, width, rate, steps, loss_grid)
    return curve.delta_lower(epsilon), curve.delta_upper(epsilon)


def exact_epsilon(delta: float, *, noise: float, width: float, rate: float, steps: int,
                  loss_grid: float = 5e-4) -> tuple[float, float]:  # fmt: skip
    """(lower, upper) bracket of the exact ε(δ) of the pair of :func:`exact_delta` (module docstring).  The
    bracket's width is at most about ``steps``·``loss_grid``.

    >>> lo, hi = exact_epsilon(1e-3, noise=2.0, width=1e-3, rate=1.0, steps=1)  # ≈ Gaussian: ε(G_{1/2}) ≈ 0.36
    >>> 0.0 < lo <= hi < lo + 0.01
    True
    """
    curve = _curve(noise, width, rate, steps, loss_grid)
    return curve.epsilon(delta, bound="lower"), curve.epsilon(delta, bound="upper")


def width_monotone(*, noise: float, widths: np.ndarray, rate: float, epsilons: np.ndarray,
                   loss_grid: float = 5e-4) -> bool:  # fmt: skip
    """True when the one-step δ_upper(ε) at each width is ≥ δ_lower(ε) at every larger width (for every ε of
    ``epsilons``): the numerical check that a wider envelope never leaks more (the paper's unproven assumption)."""
    w = np.sort(np.asarray(widths, dtype=float))
    e = np.asarray(epsilons, dtype=float)
    if w.ndim != 1 or w.size < 2 or not np.all(w > 0) or e.ndim != 1 or e.size < 1 or np.any(e < 0):
        raise ValueError("widths must hold at least two positive numbers and epsilons at least one ε >= 0")
    curves = [_curve(noise, float(x), rate, 1, loss_grid) for x in w]
    for i, c in enumerate(curves[:-1]):
        for nxt in curves[i + 1 :]:
            if any(nxt.delta_lower(float(x)) > c.delta_upper(float(x)) + 1e-12 for x in e):
                return False
    return True


# ----------------------------------------------------------------------------------------------
# The released trajectory: intervals, residuals, the exact likelihood ratio
# ----------------------------------------------------------------------------------------------
def _enforce(current: np.ndarray, previous: np.ndarray, tau: float, gap_rule: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`dpcore.training.modelmix.enforce_gap` in numpy (same sign(0) := +1 and rules)."""
    diff = current - previous
    sign = np.where(diff >= 0, 1.0, -1.0)
    small = np.abs(diff) < tau
    shift = (tau - np.abs(diff)) / 2 if gap_rule == "exact" else np.full_like(diff, tau / 2)
    shift = np.where(small, shift, 0.0)
    return current + sign * shift, previous - sign * shift


def interval_residuals(states: np.ndarray, *, tau: float, gap_rule: str = "exact") -> tuple[np.ndarray, np.ndarray]:
    """From released states y_0, …, y_T (rows: runs; units of the summed gradient, learning rate 1), the residuals
    e_k = mid_k − y_{k+1} and widths L_k of the gap-enforced intervals (both of shape (runs, T)); y_{−1} := y_0
    (the trainer's first "previous" state is the initial one).  ``tau`` is τ in the same units (τD)."""
    y = np.asarray(states, dtype=float)
    if y.ndim != 2 or y.shape[1] < 2 or not np.isfinite(y).all():
        raise ValueError(f"states must be a finite (runs, T + 1) array with T >= 1, got shape {y.shape}")
    tau = check_positive("tau", tau)
    check_choice("gap_rule", gap_rule, ("exact", "paper"))
    prev = np.concatenate([y[:, :1], y[:, :-2]], axis=1)
    a, b = _enforce(y[:, :-1], prev, tau, gap_rule)
    return (a + b) / 2 - y[:, 1:], np.abs(a - b)


def _step_llr(e: np.ndarray, widths: np.ndarray, *, canary: float, noise: float, rate: float) -> np.ndarray:
    """log((1 − q) + q·P1/P0) per step, P_b = N(b·c, s²) ⊛ U[−L/2, L/2] at the residual e."""
    a0, b0 = (e - widths / 2) / noise, (e + widths / 2) / noise
    a1, b1 = a0 - canary / noise, b0 - canary / noise

    def log_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        upper = a > 0
        hi = np.where(upper, log_ndtr(-a), log_ndtr(b))
        lo = np.where(upper, log_ndtr(-b), log_ndtr(a))
        return hi + np.log(-np.expm1(np.minimum(lo - hi, -1e-300)))

    lr = log_diff(a1, b1) - log_diff(a0, b0)
    return lr if rate == 1.0 else np.logaddexp(math.log1p(-rate), math.log(rate) + lr)


def trajectory_llr(states: np.ndarray, *, tau: float, canary: float, noise: float, rate: float,
                   gap_rule: str = "exact") -> np.ndarray:  # fmt: skip
    """The exact log-likelihood ratio log p_in(y_1..y_T | y_0) / p_out(·) of each released trajectory (rows of
    ``states``): the sum over steps of log((1 − q) + q·P1/P0)(e_k) with P_b = N(b·c, s²) ⊛ U[−L_k/2, L_k/2] (the
    intervals are functions of released states, so the per-step factors multiply exactly).  The Neyman–Pearson
    statistic of the toy under the white-box threat model of the module docstring."""
    canary, noise, rate = check_positive("canary", canary), check_positive("noise", noise), check_rate("rate", rate)
    e, widths = interval_residuals(states, tau=tau, gap_rule=gap_rule)
    return _step_llr(e, widths, canary=canary, noise=noise, rate=rate).sum(1)


def simulate_toy(runs: int, *, steps: int, tau: float, canary: float, noise: float, rate: float, present: bool,
                 rng: np.random.Generator, gap_rule: str = "exact") -> np.ndarray:  # fmt: skip
    """``runs`` released trajectories (runs, steps + 1) of the toy (module docstring), in numpy: the same law as
    the trainer's ModelMix Dirac runs (tested against them), fast enough for Monte Carlo."""
    runs, steps = check_positive_int("runs", runs), check_positive_int("steps", steps)
    tau, canary, noise = check_positive("tau", tau), check_positive("canary", canary), check_positive("noise", noise)
    rate = check_rate("rate", rate)
    check_choice("gap_rule", gap_rule, ("exact", "paper"))
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy Generator")
    y = np.zeros((runs, steps + 1))
    prev = y[:, 0].copy()
    for k in range(steps):
        a, b = _enforce(y[:, k], prev, tau, gap_rule)
        mixed = b + rng.random(runs) * (a - b)
        b_k = rng.random(runs) < rate if present else np.zeros(runs, dtype=bool)
        prev = y[:, k].copy()
        y[:, k + 1] = mixed - (canary * b_k + noise * rng.standard_normal(runs))
    return y


@dataclass(frozen=True)
class ToyEpsilon:
    """ε(δ) of the toy as run, by Monte Carlo of the exact trajectory likelihood ratio."""

    epsilon: float  # at the MC estimate of δ(ε)
    epsilon_lower: float  # at the upper confidence bound of δ(ε) (a lower bound on the true ε at ``confidence``)
    epsilon_upper: float  # at the lower confidence bound of δ(ε)
    samples: int
    confidence: float


def toy_epsilon_mc(delta: float, *, steps: int, tau: float, canary: float, noise: float, rate: float,
                   samples: int = 400_000, confidence: float = 0.95, seed: int = 0,
                   gap_rule: str = "exact") -> ToyEpsilon:  # fmt: skip
    """ε(δ) of the toy pair as run (widths drawn by the trajectory, ≥ ``tau``): δ_add(ε) = E_in[(1 − e^{ε−L})₊] and
    δ_remove(ε) = E_out[(1 − e^{ε+L})₊] over ``samples`` simulated trajectories per world (L the exact log-LR of
    :func:`trajectory_llr`), the larger one; the interval brackets δ by the normal interval of each mean
    (Bonferroni over the two directions), then ε by bisection on each."""
    delta, confidence = check_open_unit("delta", delta), check_open_unit("confidence", confidence)
    samples = check_positive_int("samples", samples, minimum=1000)
    rng = np.random.default_rng(seed)
    kw = dict(steps=steps, tau=tau, canary=canary, noise=noise, rate=rate, gap_rule=gap_rule)
    llr = {}
    for present in (True, False):
        y = simulate_toy(samples, present=present, rng=rng, **kw)
        llr[present] = trajectory_llr(y, tau=tau, canary=canary, noise=noise, rate=rate, gap_rule=gap_rule)
    z = stats.norm.ppf(1 - (1 - confidence) / 4)

    def delta_at(eps: float, side: int) -> float:
        out = 0.0
        for x in (-np.expm1(np.minimum(eps - llr[True], 0.0)), -np.expm1(np.minimum(eps + llr[False], 0.0))):
            m = float(x.mean()) + side * z * float(x.std(ddof=1)) / math.sqrt(x.size)
            out = max(out, m)
        return out

    def eps_at(side: int) -> float:
        if delta_at(0.0, side) <= delta:
            return 0.0
        lo, hi = 0.0, 1.0
        while delta_at(hi, side) > delta:
            lo, hi = hi, 2 * hi
            if hi > 1e3:
                return math.inf
        while hi - lo > 1e-4:
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if delta_at(mid, side) > delta else (lo, mid)
        return hi

    # the upper confidence bound of δ(ε) gives the larger ε
    return ToyEpsilon(eps_at(0), eps_at(-1), eps_at(1), samples, confidence)


# ----------------------------------------------------------------------------------------------
# c and s from the residuals; the audit
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ShiftBound:
    """Confidence bounds on the canary's shift c and the Gaussian noise std s from the interval residuals
    (:func:`residual_bound`): c ≥ ``shift_lower`` and s ≤ ``noise_upper`` hold together with probability
    ≥ ``confidence`` (asymptotically)."""

    shift: float  # ĉ
    shift_lower: float
    noise: float  # ŝ
    noise_upper: float
    confidence: float
    samples_in: int
    samples_out: int
    method: str

    @property
    def theta(self) -> float:
        return self.shift / self.noise

    @property
    def theta_lower(self) -> float:
        return self.shift_lower / self.noise_upper


def residual_bound(e_in: np.ndarray, w_in: np.ndarray, e_out: np.ndarray, w_out: np.ndarray, *, rate: float,
                   confidence: float = 0.95) -> ShiftBound:  # fmt: skip
    """c ≥ c_lb and s ≤ s_ub from residuals e (with widths L) of the two worlds: in the toy each
    e_k = c·B_k + Z_k + U_k, U_k ~ U[−L_k/2, L_k/2] given the released past, so ĉ = mean(e_in)/q and
    ŝ² = mean(e_out² − L²/12) are unbiased moment estimators whose terms are martingale differences given the past;
    each bound is a one-sided normal bound at level (1 − confidence)/2 (Bonferroni; asymptotic in the number of
    residuals, no Gaussian assumption on any score)."""
    arrs = []
    for name, v in (("e_in", e_in), ("w_in", w_in), ("e_out", e_out), ("w_out", w_out)):
        a = np.asarray(v, dtype=float).reshape(-1)
        if a.size < 100 or not np.isfinite(a).all():
            raise ValueError(f"{name} must hold at least 100 finite values, got {a.size}")
        arrs.append(a)
    e1, w1, e0, w0 = arrs
    if e1.size != w1.size or e0.size != w0.size:
        raise ValueError("each residual array must have as many values as its width array")
    if np.any(w1 < 0) or np.any(w0 < 0):
        raise ValueError("widths must be >= 0")
    rate = check_rate("rate", rate)
    confidence = check_open_unit("confidence", confidence)
    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    c_hat = float(e1.mean()) / rate
    c_lo = c_hat - z * float(e1.std(ddof=1)) / math.sqrt(e1.size) / rate
    terms = e0**2 - w0**2 / 12
    s2 = float(terms.mean())
    if s2 <= 0:
        raise ValueError("the residuals' variance does not exceed the envelope's: the Gaussian noise is not seen")
    s2_hi = s2 + z * float(terms.std(ddof=1)) / math.sqrt(e0.size)
    method = (f"moment bounds from {e1.size} + {e0.size} interval residuals: ĉ = mean_in(e)/q, "
              "ŝ² = mean_out(e² − L²/12), one-sided normal at (1 − conf.)/2 each (asymptotic)")  # fmt: skip
    return ShiftBound(c_hat, max(c_lo, 0.0), math.sqrt(s2), math.sqrt(s2_hi), confidence, e1.size, e0.size, method)


def _states(setting: DiracSetting, runs: int, *, canary: bool, seed: int) -> tuple[np.ndarray, RunRecord]:
    """Released states y_0..y_T (units of the summed gradient) of ``runs`` trainer runs: y_0 = 0 and
    y_{k+1} = y_k − U_k (U_k = D·(w_k − w_{k+1}) of :func:`dpcore.audit.dirac.dirac_updates`)."""
    u, record = dirac_updates(setting, runs, canary=canary, seed=seed)
    y = np.concatenate([np.zeros((u.shape[0], 1)), -np.cumsum(u, axis=1)], axis=1)
    return y, record


@dataclass(frozen=True)
class ModelMixAudit:
    """The two audit rows of :func:`audit_modelmix` and what bounds them."""

    threshold: AuditResult  # distribution-free: held-out threshold on the exact log-LR, Clopper–Pearson
    family: AuditResult  # exact toy curve at (c_lb, s_ub)
    shift: ShiftBound
    exact_width_tau: tuple[float, float]  # exact ε bracket of the accountant's model (width τD every step)
    toy: ToyEpsilon  # ε of the toy as run (the ceiling of any audit of it)


def audit_ceiling(toy: ToyEpsilon, claimed: float) -> tuple[float, float]:
    """The largest ratio (lower bound / ``claimed``) a valid audit of the toy can reach: its exact ε over the claim,
    at the Monte-Carlo estimate and at the MC's upper confidence bound (``toy.epsilon``, ``toy.epsilon_upper``)."""
    if not isinstance(toy, ToyEpsilon):
        raise ValueError(f"toy must be a ToyEpsilon, got {type(toy).__name__}")
    claimed = check_positive("claimed", claimed)
    return toy.epsilon / claimed, toy.epsilon_upper / claimed


def ceiling_text(toy: ToyEpsilon, claimed: float) -> str:
    """How every table quotes :func:`audit_ceiling`: 'no valid audit of this toy exceeds ratio 0.83 (MC estimate;
    0.84 at its upper confidence bound)'."""
    point, upper = audit_ceiling(toy, claimed)
    return (f"no valid audit of this toy exceeds ratio {point:.2f} (MC estimate; {upper:.2f} at its "
            f"{100 * toy.confidence:g} % upper bound)")  # fmt: skip


def audit_modelmix(
    setting: DiracSetting, runs: int, *, delta: float, confidence: float = 0.95, seed: int = 0,
    mc_samples: int = 400_000, mechanism: str = "ModelMix, released iterates",
) -> ModelMixAudit:  # fmt: skip
    """Audit of the ModelMix Dirac toy (``setting.modelmix_tau_ratio`` set) with ``runs`` trainer runs per world,
    under the white-box threat model of the module docstring (every iterate seen; τ, D, q, the gap rule known; α not
    seen).  Rows:

    * ``threshold`` -- score: the exact trajectory log-LR at the nominal (c, s) (:func:`trajectory_llr`); half the
      runs choose the threshold, half bound FPR/FNR by Clopper–Pearson (:func:`dpcore.audit.estimators.held_out_bound`):
      valid at ``confidence`` with no assumption;
    * ``family`` -- c ≥ c_lb, s ≤ s_ub at confidence 1 − 0.8·(1 − ``confidence``) (:func:`residual_bound`), then
      the toy's ε at (c_lb, s_ub) by :func:`toy_epsilon_mc`, taken at its lower Monte-Carlo bound at confidence
      1 − 0.2·(1 − ``confidence``): valid at ``confidence`` (asymptotically) *if* the implementation is the toy
      mechanism with unknown c and s and its ε does not decrease in c nor increase in s.

    Also the ceiling and the accountant's model: the toy's ε at the nominal (c, s) by Monte Carlo and the exact ε of
    width τD at every step (:func:`exact_epsilon`)."""
    if not isinstance(setting, DiracSetting) or setting.modelmix_tau_ratio is None:
        raise ValueError("setting must be a DiracSetting with modelmix_tau_ratio set (a ModelMix run)")
    delta, confidence = check_open_unit("delta", delta), check_open_unit("confidence", confidence)
    runs = check_positive_int("runs", runs, minimum=2 * setting.block)
    mc_samples = check_positive_int("mc_samples", mc_samples, minimum=1000)
    y_in, record = _states(setting, runs, canary=True, seed=seed)
    y_out, _ = _states(setting, runs, canary=False, seed=seed)
    if record.modelmix is None or record.modelmix.get("gap_rule") not in ("exact", "paper"):
        raise ValueError("the run record carries no ModelMix gap rule")
    gap_rule = record.modelmix["gap_rule"]
    denominator = round(setting.sample_rate * setting.block) if setting.reduce == "mean" else 1
    tau = setting.modelmix_tau_ratio * denominator  # τ = ρ·lr (lr = 1) in units of the summed gradient
    c, s, q, steps = min(setting.canary, setting.clip_norm), setting.noise_std, setting.sample_rate, setting.steps
    claimed = float(epsilon_for_record(record, delta))
    kw = dict(tau=tau, canary=c, noise=s, rate=q, gap_rule=gap_rule)
    s_in, s_out = trajectory_llr(y_in, **kw), trajectory_llr(y_out, **kw)
    _, bound, held = held_out_bound(lambda _name: (s_in, s_out), ["llr"], delta=delta, confidence=confidence)
    alpha = 1 - confidence
    e_in, w_in = interval_residuals(y_in, tau=tau, gap_rule=gap_rule)
    e_out, w_out = interval_residuals(y_out, tau=tau, gap_rule=gap_rule)
    shift = residual_bound(e_in, w_in, e_out, w_out, rate=q, confidence=1 - 0.8 * alpha)
    if shift.shift_lower <= 0:
        fam, fam_point = 0.0, 0.0
    else:
        fam_mc = toy_epsilon_mc(delta, steps=steps, tau=tau, canary=shift.shift_lower, noise=shift.noise_upper,
                                rate=q, samples=mc_samples, confidence=1 - 0.2 * alpha, seed=seed + 1,
                                gap_rule=gap_rule)  # fmt: skip
        point_mc = toy_epsilon_mc(delta, steps=steps, tau=tau, canary=shift.shift, noise=shift.noise, rate=q,
                                  samples=mc_samples, seed=seed + 2, gap_rule=gap_rule)  # fmt: skip
        fam, fam_point = fam_mc.epsilon_lower, point_mc.epsilon
    toy = toy_epsilon_mc(delta, steps=steps, samples=mc_samples, seed=seed + 3, **kw)
    exact = exact_epsilon(delta, noise=s / c, width=tau / c, rate=q, steps=steps)
    canary = f"gradient-space Dirac canary of norm {setting.canary:g} (C = {setting.clip_norm:g})"
    where = (f"exact ε of the toy as run {toy.epsilon:.3f} [{toy.epsilon_lower:.3f}, {toy.epsilon_upper:.3f}]"
             f" (MC, {toy.samples} trajectories per world), of the accountant's model (width τD = {tau:g} every "
             f"step) {exact[0]:.3f}–{exact[1]:.3f} (PLD bracket); accountant (RDP) {claimed:.3f}: the accountant is "
             f"loose by ×{claimed / toy.epsilon:.2f}, so {ceiling_text(toy, claimed)}")  # fmt: skip
    threat = ThreatModel("all", "add/remove", canary, "many-runs", confidence, held)
    threshold = AuditResult(
        f"{mechanism}, exact LR score, threshold", threat, bound.epsilon, bound.point, claimed, delta,
        "exact trajectory log-LR (white box: intervals from released states, α unseen)", bound.threshold,
        claim_label=f"distribution-free (held-out threshold, Clopper–Pearson; no assumption); {where}",
    )  # fmt: skip
    fam_threat = ThreatModel("all", "add/remove", canary, "many-runs-gdp", confidence, runs)
    family = AuditResult(
        f"{mechanism}, exact toy family", fam_threat, fam, fam_point, claimed, delta,
        "interval residuals (moments) -> exact toy ε", math.nan,
        claim_label=(f"family bound: c ≥ {shift.shift_lower:.4f} (ĉ = {shift.shift:.4f}), s ≤ {shift.noise_upper:.4f} "
                     f"(ŝ = {shift.noise:.4f}), θ_lb = {shift.theta_lower:.4f}; toy ε at (c_lb, s_ub) by MC, lower "
                     f"bound; assumes the toy mechanism with unknown (c, s) (asymptotic normal moments); {where}; "
                     f"this bound is {fam / toy.epsilon:.2f} of the toy's ε at {runs} runs per world (θ_lb/θ = "
                     f"{shift.theta_lower * s / c:.3f}: the statistical factor)"),
        parameter_lower=shift.theta_lower, parameter_point=shift.theta,
    )  # fmt: skip
    return ModelMixAudit(threshold, family, shift, exact, toy)
