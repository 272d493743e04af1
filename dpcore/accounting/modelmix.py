"""The ModelMix mechanism's Rényi-DP: the subsampled Gaussian ⊛ uniform mixing of DP-SGD with ModelMix
(Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix", Theorem 4.1 and Appendix C).

One ModelMix step releases the Poisson-subsampled sum of clipped gradients perturbed by Gaussian
noise *and* by the per-coordinate uniform "trajectory envelope" noise of the mixing (Appendix C,
eq. (36)).  In units of the ℓ2 clipping bound c (the *sensitivity units* used throughout):

    P0 = N(0, z²) ⊛ U[−u/2, u/2],      P1 = N(s, z²) ⊛ U[−u/2, u/2],

with z the noise multiplier (σ_sum / c), u the envelope width and s the per-coordinate shift of the
differing record's gradient (s = 1 for plain ModelMix: the one-hot worst case of Theorem 4.1; s = 1/√p
on p coordinates with the ℓ2 + ℓ∞ clipping of Algorithm 2: the p-sparse worst case of Corollary 4.1).

**Units (the critical rule).**  Algorithm 1 is written with a *summed* gradient, so
the uniform half-width τ/(2η) is in units of that sum.  The experiments use the *averaged* update
w ← mix − η_avg (Σ CP + Δ)/B and quote τ as a multiple of η_avg ("τ = 0.15η").  With τ = ρ·η_avg and
η_sum = η_avg / B the width in sensitivity units is u = ρ·B/c (:func:`envelope_width`).  This
reading reproduces every Fig. 3 number and the authors' CIFAR-10 ε = 8.000; the literal reading
u = ρ/c gives essentially no amplification.

**Per-step RDP.**  Theorem 4.1 and the *corrected* Corollary 4.1 (the printed one lacks the factor T
and has 1 − α in the denominator; see :mod:`dpcore.papers.p002_modelmix.corollary41`):

    RDP(α) = D_α((1−q)P0 + qP1 ‖ P0)
           = log Σ_{k=0}^{α} C(α,k)(1−q)^{α−k} q^k M_k^p / (α − 1)       (integer α, any p)
           = log E_{P0}[((1−q) + q·P1/P0)^α] / (α − 1)                      (any real α > 1, p = 1)

with M_k = E_{P0}[(P1/P0)^k].  The densities have the closed form
[Φ((o − a + u/2)/z) − Φ((o − a − u/2)/z)]/u; all integrals are Riemann sums on one uniform grid,
in log space, vectorised over the orders.  T steps compose to T·RDP(α); (ε, δ) follows with
:func:`dpcore.accounting.rdp.rdp_to_epsilon` ("mironov" = the paper's Theorem 2.2 and the
authors' accountant; "balle" = the improved conversion).

ModelMix is post-processing of the noisy-gradient releases, so the plain sampled-Gaussian RDP bounds
it too; ``bound="min"`` (default) takes the smaller of the two at every order before composing,
``bound="modelmix"`` is the paper's Theorem 4.1 alone (what Fig. 3 plots).  The plain bound is
:func:`dpcore.accounting.rdp.subsampled_gaussian_rdp` (closed form at integer α, numerical integral at
fractional α, which stays accurate where dp_accounting's series stops converging, e.g. α = 1.25 at
z = 0.367).

**Orders.**  Default: TF-Privacy's orders ≤ 64 for p = 1 (fractional; :data:`DEFAULT_ORDERS`) and the
integers 2..64 for p > 1 (:data:`INTEGER_ORDERS`), the grids that reproduce the paper.  Very small ε
(large noise) may need larger orders: pass ``orders=TF_PRIVACY_ORDERS`` (up to 512; slower).

>>> authors = ModelMixSetting(n=50_000, batch_size=1500, noise_multiplier=0.335, clip=20, tau=0.15, linf_blocks=100)
>>> round(epsilon(authors, steps=3400, delta=1e-5, conversion="mironov"), 3)  # authors' CIFAR-10 setting
8.0
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, log_ndtr, logsumexp

from dpcore.accounting.calibrate import check_rtol, smallest_sigma
from dpcore.accounting.gaussian import as_real_array
from dpcore.accounting.rdp import mixture_log_moments, rdp_to_epsilon, subsampled_gaussian_rdp
from dpcore.validation import (
    check_choice,
    check_finite,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_rate,
)

__all__ = [
    "TF_PRIVACY_ORDERS",
    "DEFAULT_ORDERS",
    "INTEGER_ORDERS",
    "BOUNDS",
    "ModelMixSetting",
    "envelope_width",
    "log_mixture_density",
    "log_moments",
    "step_rdp",
    "default_orders",
    "rdp",
    "epsilon",
    "epsilon_curve",
    "regular_dpsgd_rdp",
    "regular_dpsgd_epsilon",
    "schedule_rdp",
    "schedule_epsilon",
    "noise_multiplier_for_epsilon",
]

#: TF-Privacy's default orders (``compute_dp_sgd_privacy``): the grid the paper's numbers come from.
TF_PRIVACY_ORDERS: tuple[float, ...] = (
    (1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5)
    + tuple(float(a) for a in range(5, 64))
    + (128.0, 256.0, 512.0)
)
#: Orders used by default when p = 1: TF-Privacy's list up to 64 (the grid the paper's numbers use).
DEFAULT_ORDERS: tuple[float, ...] = tuple(a for a in TF_PRIVACY_ORDERS if a <= 64)
#: Orders used by default when p > 1: the integers 2..64 of Corollary 4.1.
INTEGER_ORDERS: tuple[float, ...] = tuple(float(a) for a in range(2, 65))
BOUNDS = ("min", "modelmix")
CONVERSIONS = ("balle", "mironov")
FORMS = ("average", "sum")

_POINTS_PER_SCALE = 20  # grid points per noise standard deviation (Riemann sums of smooth integrands: ~1e-10)
_TAIL = 20.0  # grid margin in noise standard deviations beyond the mass of every integrand
_MAX_POINTS = 150_000  # beyond this one call takes > 10 s: refused as out of range
_TINY_WIDTH = 1e-6  # widths below this fraction of the noise are treated as zero (pure Gaussian)
MAX_NOISE_RATIO = 1e100  # largest noise / shift the quadrature handles (the RDP is 0 to float precision beyond)
MAX_LINF_BLOCKS = 10**6  # largest p: p·log M_k multiplies the quadrature's round-off by p


# ----------------------------------------------------------------------------------------------
# Units
# ----------------------------------------------------------------------------------------------
def envelope_width(tau: float, *, clip: float, batch_size: float | None = None, form: str = "average") -> float:
    """Width u of the uniform envelope noise in sensitivity units (multiples of ``clip``).

    ``form="average"`` (the experiments' and the authors' convention): ``tau`` is τ/η for the
    *averaged* update with expected batch size B, so u = τ/η · B / c.
    ``form="sum"`` (Algorithm 1 literally): ``tau`` is τ/η for the *summed* gradient, u = τ/η / c.
    The two agree when η_sum = η_avg / B.

    >>> envelope_width(0.15, clip=20, batch_size=1000)
    7.5
    """
    tau = check_nonnegative("tau", tau)
    clip = check_positive("clip", clip)
    check_choice("form", form, FORMS)
    if form == "sum":
        width = tau / clip
    elif batch_size is None:
        raise ValueError("batch_size must be given (a positive number) when form='average'")
    else:
        width = tau * check_positive("batch_size", batch_size) / clip
    if not math.isfinite(width):
        raise ValueError(
            f"the envelope width tau·batch_size/clip overflows: tau={tau}, batch_size={batch_size}, clip={clip}"
        )
    return width


# ----------------------------------------------------------------------------------------------
# Densities and moments (sensitivity units, shift s)
# ----------------------------------------------------------------------------------------------
def _log_cdf_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(Φ(b) − Φ(a)) for b > a, stable in both tails (upper tails when a > 0)."""
    upper = a > 0
    hi = np.where(upper, log_ndtr(-a), log_ndtr(b))
    lo = np.where(upper, log_ndtr(-b), log_ndtr(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(hi == -np.inf, -np.inf, hi + np.log(-np.expm1(lo - hi)))


def log_mixture_density(o: np.ndarray | float, *, shift: float, noise: float, width: float) -> np.ndarray:
    """log density of N(shift, noise²) ⊛ U[−width/2, width/2] at ``o`` (Theorem 4.1's P0 / P1).

    Closed form [Φ((o − shift + width/2)/noise) − Φ((o − shift − width/2)/noise)] / width; the
    Gaussian log density when ``width`` is (numerically) zero.
    """
    noise = check_positive("noise", noise)
    width = check_nonnegative("width", width)
    x = as_real_array("o", o) - check_finite("shift", shift)
    if width <= _TINY_WIDTH * noise:
        return -0.5 * (x / noise) ** 2 - math.log(noise) - 0.5 * math.log(2 * math.pi)
    # noise so small that (x ± width/2)/noise overflows: ±inf gives the uniform density's limit (log 1/width
    # inside, −inf outside), which is the right answer there
    with np.errstate(over="ignore"):
        a, b = (x - width / 2) / noise, (x + width / 2) / noise
    return _log_cdf_diff(a, b) - math.log(width)


class GridTooLargeError(ValueError):
    """The quadrature of :func:`log_moments` would need more than ``_MAX_POINTS`` points: the noise is too small
    for the envelope width and the largest order (a ``ValueError``; :func:`noise_multiplier_for_epsilon` turns it
    into a message about the target it was calibrating for)."""


def _grid(noise: float, width: float, shift: float, max_order: float) -> tuple[np.ndarray, np.ndarray]:
    """Log quadrature weights of P0 and the log likelihood ratio log(P1/P0) on a uniform grid.

    Everything is rescaled to shift 1 (noise/shift, width/shift).  The grid covers
    [−u/2 − 20z − 2, u/2 + max_order + 20z + 2]: the integrand P0·(P1/P0)^k has its mass near
    o ≈ u/2 + k (Gaussian tail of width z), so the right end grows with the largest order.
    """
    z, u = noise / shift, width / shift
    if not z <= MAX_NOISE_RATIO:
        raise ValueError(
            f"noise_multiplier (noise/shift = {z:g}) must be at most {MAX_NOISE_RATIO:g}: beyond it the RDP is 0 "
            "to float precision and the quadrature grid overflows"
        )
    lo = -u / 2 - _TAIL * z - 2.0
    hi = u / 2 + max_order + _TAIL * z + 2.0
    span = ((u + max_order + 4.0) / z + 2 * _TAIL) * _POINTS_PER_SCALE  # (hi − lo) in grid steps, no overflow
    if not span < _MAX_POINTS:
        raise GridTooLargeError(
            f"noise_multiplier={noise:g} is too small for orders up to {max_order:g} at width {width:g} "
            f"(the grid would need {span:.3g} points, at most {_MAX_POINTS}): use a larger noise_multiplier "
            "(noise/shift), a smaller envelope width (tau, clip, batch_size) or fewer orders"
        )
    points = int(math.ceil(span)) + 1
    o = np.linspace(lo, hi, max(points, 2001))
    lp0 = log_mixture_density(o, shift=0.0, noise=z, width=u)
    lp1 = log_mixture_density(o, shift=1.0, noise=z, width=u)
    lw = lp0 - logsumexp(lp0)  # normalised Riemann weights of P0
    return lw, lp1 - lp0


def log_moments(ks: Sequence[int] | np.ndarray, *, noise: float, width: float, shift: float = 1.0) -> np.ndarray:
    """log M_k = log E_{P0}[(P1/P0)^k] for each k (the A_k of eq. (38) for one coordinate).

    ``noise``, ``width`` and ``shift`` in the same units.  For width 0 this is (k² − k) s²/(2z²).
    """
    noise = check_positive("noise", noise)
    width = check_nonnegative("width", width)
    shift = check_positive("shift", shift)
    if ks is None or isinstance(ks, (str, bytes)):
        raise ValueError(f"ks must be a non-empty 1-D sequence of non-negative numbers, got {ks!r}")
    k = as_real_array("ks", ks, low=0.0)
    if k.ndim != 1:
        raise ValueError(f"ks must be a non-empty 1-D sequence of non-negative numbers, got {ks!r}")
    lw, lr = _grid(noise, width, shift, float(k.max()))
    log_m = logsumexp(lw[None, :] + k[:, None] * lr[None, :], axis=1)
    # Jensen (E[P1/P0] = 1): log M_k >= 0 for k >= 1 and <= 0 for k <= 1; the other sign is quadrature round-off
    return np.where(k >= 1, np.maximum(log_m, 0.0), np.minimum(log_m, 0.0))


def _check_orders(orders: Sequence[float] | np.ndarray, *, integer: bool) -> np.ndarray:
    if orders is None or isinstance(orders, (str, bytes)):
        raise ValueError(f"orders must be a non-empty 1-D sequence of finite numbers > 1, got {orders!r}")
    a = as_real_array("orders", orders, low=1.0)
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 1):
        raise ValueError(f"orders must be a non-empty 1-D sequence of finite numbers > 1, got {orders!r}")
    if integer and np.any(a != np.round(a)):
        raise ValueError("orders must be integers when linf_blocks > 1 (Corollary 4.1 is a binomial expansion)")
    return a


def _binomial_rdp(a: np.ndarray, q: float, log_m: np.ndarray) -> np.ndarray:
    """log Σ_k C(α,k)(1−q)^{α−k} q^k M_k / (α − 1) for integer orders α, M_k = exp(log_m[k]).

    Written as log(1 + Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k (M_k − 1)) (M_0 = M_1 = 1 for a likelihood ratio, and
    M_k ≥ 1 for k ≥ 2 by Jensen: a negative M_k − 1 is quadrature round-off, set to 0), so the result is
    never negative and keeps its relative accuracy when tiny.
    """
    out = np.empty_like(a)
    log_1mq = math.log1p(-q) if q < 1 else -math.inf
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # log(M_k − 1), without overflow
        log_excess = np.where(
            log_m > 30.0, log_m + np.log1p(-np.exp(-log_m)), np.log(np.maximum(np.expm1(np.minimum(log_m, 30.0)), 0.0))
        )
    for i, alpha in enumerate(a.astype(int)):
        k = np.arange(2, alpha + 1)
        with np.errstate(invalid="ignore"):
            terms = gammaln(alpha + 1) - gammaln(k + 1) - gammaln(alpha - k + 1) + k * math.log(q) + log_excess[k]
            terms = terms + np.where(k < alpha, (alpha - k) * log_1mq, 0.0)
        out[i] = np.logaddexp(0.0, logsumexp(terms)) / (alpha - 1)
    return out


def step_rdp(
    orders: Sequence[float] | np.ndarray,
    *,
    sample_rate: float,
    noise_multiplier: float,
    width: float,
    linf_blocks: int = 1,
    direction: str = "forward",
) -> np.ndarray:
    """RDP of one ModelMix step at each order (Theorem 4.1; corrected Corollary 4.1 for p > 1).

    Sensitivity units: ``noise_multiplier`` z = σ_sum/c, ``width`` u = envelope width / c
    (:func:`envelope_width`).  ``linf_blocks`` p: the ℓ∞ bound c/√p of Algorithm 2; the worst case
    is p coordinates shifted by 1/√p, i.e. one coordinate with (z√p, u√p, shift 1) raised to the
    power p.  p = 1 accepts real orders (direct integration); p > 1 integer orders only.

    ``direction="forward"`` is the paper's D_α((1−q)P0 + qP1 ‖ P0).  Appendix C drops the other
    direction D_α(P0 ‖ (1−q)P0 + qP1) by citing Mironov et al. 2019, Thm 5, which is proven for
    Gaussians only; ``direction="reverse"`` (p = 1) computes it so that the claim can be checked.
    """
    q = check_rate("sample_rate", sample_rate)
    z = check_positive("noise_multiplier", noise_multiplier)
    u = check_nonnegative("width", width)
    p = check_positive_int("linf_blocks", linf_blocks, maximum=MAX_LINF_BLOCKS)
    check_choice("direction", direction, ("forward", "reverse"))
    a = _check_orders(orders, integer=p > 1)
    scale = math.sqrt(p)
    if direction == "reverse" and p > 1:
        raise ValueError("direction='reverse' is only available for linf_blocks=1")
    if p == 1:
        lw, lr = _grid(z, u, 1.0, float(a.max()))
        if direction == "forward":
            return mixture_log_moments(lw, lr, q, a) / (a - 1)
        log_mix = np.logaddexp(math.log1p(-q), math.log(q) + lr) if q < 1 else lr
        return np.maximum(logsumexp(lw[None, :] + (1 - a)[:, None] * log_mix[None, :], axis=1), 0.0) / (a - 1)
    if not math.isfinite(z * scale) or not math.isfinite(u * scale):
        raise ValueError(f"noise_multiplier·√linf_blocks and width·√linf_blocks must be finite; got noise_multiplier "
                         f"= {z}, width = {u}, linf_blocks = {p}")  # fmt: skip
    log_m = log_moments(np.arange(int(a.max()) + 1), noise=z * scale, width=u * scale)
    return _binomial_rdp(a, q, p * log_m)


def _gaussian_rdp(a: np.ndarray, q: float, z: float) -> np.ndarray:
    """The plain Poisson-subsampled Gaussian RDP (the τ → 0 limit; :mod:`dpcore.accounting.rdp`)."""
    return subsampled_gaussian_rdp(a, sample_rate=q, noise_multiplier=z)


# ----------------------------------------------------------------------------------------------
# Public accountant (paper units: n, expected batch size, τ as a multiple of η)
# ----------------------------------------------------------------------------------------------
def default_orders(linf_blocks: int | None = None) -> np.ndarray:
    """:data:`DEFAULT_ORDERS` for p = 1 (fractional), :data:`INTEGER_ORDERS` for p > 1."""
    p = 1 if linf_blocks is None else check_positive_int("linf_blocks", linf_blocks)
    return np.asarray(DEFAULT_ORDERS if p == 1 else INTEGER_ORDERS, dtype=float)


@dataclass(frozen=True)
class ModelMixSetting:
    """One DP-SGD + ModelMix setting in the paper's units, validated at construction (``ValueError`` naming the field).

    ``n`` examples, expected batch ``batch_size`` (Poisson, q = batch_size/n), ``noise_multiplier`` z = σ/c of the
    summed gradient, ℓ2 clip bound ``clip`` c, ``tau`` = τ/η of the averaged update (``tau=0.15`` means τ = 0.15η)
    and ``linf_blocks`` p of Algorithm 2 (``None``: ℓ2 clipping only, stored as 1).  The accountant's functions
    pass this one value along (:func:`per_step_rdp`, :func:`rdp`, :func:`epsilon_curve`, :func:`schedule_rdp`);
    :meth:`replace` gives a validated copy with some fields changed (a τ phase, a calibrated z).

    >>> ModelMixSetting(n=50_000, batch_size=1000, noise_multiplier=1.0, clip=20, tau=0.15).sample_rate
    0.02
    """

    n: int
    batch_size: float
    noise_multiplier: float
    clip: float = 1.0
    tau: float = 0.0
    linf_blocks: int | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        n = check_positive_int("n", self.n)
        batch_size = check_positive("batch_size", self.batch_size)
        if batch_size > n:
            raise ValueError(f"batch_size must be in (0, n={n}], got {batch_size}")
        set_(self, "n", n)
        set_(self, "batch_size", batch_size)
        set_(self, "noise_multiplier", check_positive("noise_multiplier", self.noise_multiplier))
        set_(self, "clip", check_positive("clip", self.clip))
        set_(self, "tau", check_nonnegative("tau", self.tau))
        linf = self.linf_blocks
        p = 1 if linf is None else check_positive_int("linf_blocks", linf, maximum=MAX_LINF_BLOCKS)
        set_(self, "linf_blocks", p)
        if batch_size / n == 0.0:
            raise ValueError(f"batch_size/n underflows to 0: batch_size={batch_size}, n={n}")

    @property
    def sample_rate(self) -> float:
        """q = batch_size / n (Poisson sampling)."""
        return self.batch_size / self.n

    def width(self, form: str = "average") -> float:
        """The envelope width u in sensitivity units (:func:`envelope_width` of this τ, c and batch size)."""
        return envelope_width(self.tau, clip=self.clip, batch_size=self.batch_size, form=form)

    def replace(self, **changes: float | int | None) -> ModelMixSetting:
        """A copy with ``changes`` applied, validated again."""
        return dataclasses.replace(self, **changes)


def _check_setting(setting: object) -> ModelMixSetting:
    """``setting`` itself: every public function takes the run as one :class:`ModelMixSetting` (``ValueError``
    naming ``setting`` otherwise; its fields were validated when it was made)."""
    if not isinstance(setting, ModelMixSetting):
        raise ValueError(
            f"setting must be a ModelMixSetting(n=..., batch_size=..., noise_multiplier=..., clip=..., tau=..., "
            f"linf_blocks=...), got {type(setting).__name__}"
        )
    return setting


def per_step_rdp(
    setting: ModelMixSetting,
    orders: Sequence[float] | None = None,
    *,
    bound: str = "min",
    form: str = "average",
) -> tuple[np.ndarray, np.ndarray]:
    """(orders, RDP of one step) of ``setting``: Theorem 4.1 / corrected Corollary 4.1, and with ``bound="min"``
    the plain sampled-Gaussian bound at each order too (ModelMix is post-processing)."""
    setting = _check_setting(setting)
    check_choice("bound", bound, BOUNDS)
    p = setting.linf_blocks
    a = default_orders(p) if orders is None else _check_orders(orders, integer=p > 1)
    q, z = setting.sample_rate, setting.noise_multiplier
    values = step_rdp(a, sample_rate=q, noise_multiplier=z, width=setting.width(form), linf_blocks=p)
    if bound == "min":
        values = np.minimum(values, _gaussian_rdp(a, q, z))
    return a, values


def rdp(
    setting: ModelMixSetting,
    *,
    steps: int,
    orders: Sequence[float] | None = None,
    bound: str = "min",
    form: str = "average",
) -> tuple[np.ndarray, np.ndarray]:
    """(orders, RDP) of ``steps`` ModelMix steps (Theorem 4.1 / corrected Corollary 4.1, composed).

    The run is a :class:`ModelMixSetting` ``setting`` (the only form): ``batch_size`` is the expected
    batch (q = batch_size/n, Poisson sampling); ``noise_multiplier`` z = σ/c of the summed gradient; ``tau`` = τ/η
    for the averaged update (``tau=0.15`` means τ = 0.15η); ``linf_blocks`` = p of Algorithm 2 (None: ℓ2 clipping
    only).  ``bound="min"`` also applies the plain sampled-Gaussian bound at each order (ModelMix is
    post-processing).  ``form="sum"`` reads ``tau`` as τ/η of Algorithm 1's summed-gradient update (u = τ/η / c):
    the literal reading, which gives almost no amplification at the paper's settings.
    """
    setting = _check_setting(setting)
    steps = check_positive_int("steps", steps)
    a, values = per_step_rdp(setting, orders, bound=bound, form=form)
    return a, steps * values


def epsilon(
    setting: ModelMixSetting,
    *,
    steps: int,
    delta: float,
    conversion: str = "balle",
    orders: Sequence[float] | None = None,
    bound: str = "min",
    form: str = "average",
) -> float:
    """ε of DP-SGD with ModelMix at δ (see :func:`rdp` for the parameters).

    ``conversion="mironov"`` is the paper's Theorem 2.2 (and the authors' accountant);
    ``"balle"`` is the tighter conversion of Balle et al. 2020.
    """
    curve = epsilon_curve([steps], setting, delta=delta, conversion=conversion, orders=orders, bound=bound, form=form)
    return float(curve[0])


def epsilon_curve(
    steps: Sequence[int],
    setting: ModelMixSetting,
    *,
    delta: float,
    conversion: str = "balle",
    orders: Sequence[float] | None = None,
    bound: str = "min",
    form: str = "average",
) -> np.ndarray:
    """ε after each entry of ``steps`` (one per-step RDP table reused; Fig. 3's curves); 0 steps give ε = 0."""
    delta = check_open_unit("delta", delta)
    check_choice("conversion", conversion, CONVERSIONS)
    if isinstance(steps, (str, bytes)) or not isinstance(steps, (Sequence, np.ndarray)):
        raise ValueError(f"steps must be a sequence of integers >= 0 (use epsilon() for one value), got {steps!r}")
    steps = [check_positive_int("steps", s, minimum=0) for s in steps]
    if not steps:
        raise ValueError("steps must be a non-empty sequence of integers >= 0")
    setting = _check_setting(setting)
    a, values = per_step_rdp(setting, orders, bound=bound, form=form)
    return np.array([rdp_to_epsilon(a, s * values, delta, conversion=conversion) if s else 0.0 for s in steps])


def regular_dpsgd_rdp(
    *, n: int, batch_size: float, steps: int, noise_multiplier: float, orders: Sequence[float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(orders, RDP) of regular DP-SGD (no mixing) with the same noise, in ModelMix's paper units (n, expected batch
    size) and on its order grid (:data:`DEFAULT_ORDERS`): the paper's baseline, :mod:`dpcore.accounting.rdp`
    composed.  Not :func:`dpcore.accounting.dpsgd.dpsgd_epsilon` (sample rate, several accountants)."""
    run = ModelMixSetting(n=n, batch_size=batch_size, noise_multiplier=noise_multiplier)  # its checks of n, b, z
    n, batch_size = run.n, run.batch_size
    steps = check_positive_int("steps", steps)
    a = np.asarray(DEFAULT_ORDERS, dtype=float) if orders is None else _check_orders(orders, integer=False)
    return a, steps * _gaussian_rdp(a, batch_size / n, noise_multiplier)


def regular_dpsgd_epsilon(
    *,
    n: int,
    batch_size: float,
    steps: int,
    noise_multiplier: float,
    delta: float,
    conversion: str = "balle",
    orders: Sequence[float] | None = None,
) -> float:
    """ε of regular DP-SGD (no mixing) with the same noise: the paper's baseline (sampled Gaussian RDP on ModelMix's
    order grid, ``conversion`` as in :func:`epsilon`); see :func:`regular_dpsgd_rdp`."""
    delta = check_open_unit("delta", delta)
    check_choice("conversion", conversion, CONVERSIONS)
    a, values = regular_dpsgd_rdp(n=n, batch_size=batch_size, steps=steps, noise_multiplier=noise_multiplier,
                                  orders=orders)  # fmt: skip
    return rdp_to_epsilon(a, values, delta, conversion=conversion)


def schedule_rdp(
    phases: Sequence[tuple[int, float]],
    setting: ModelMixSetting,
    *,
    orders: Sequence[float] | None = None,
    bound: str = "min",
) -> tuple[np.ndarray, np.ndarray]:
    """(orders, RDP) of a τ schedule: ``phases`` = [(steps, tau), ...] summed order by order
    (RDP composes additively, Mironov 2017, Prop. 1; e.g. the paper's Table I: 0.05η then 0.025η).

    The run is ``setting`` (a :class:`ModelMixSetting`; its ``tau`` replaced by each phase's)."""
    phases = _check_phases(phases)
    setting = _check_setting(setting)
    total = None
    a = None
    for steps, tau in phases:
        a, values = rdp(setting.replace(tau=tau), steps=steps, orders=orders, bound=bound)
        total = values if total is None else total + values
    return a, total


def _check_phases(phases: object) -> list[tuple[int, float]]:
    """``phases`` as a non-empty list of (steps >= 1, tau >= 0) pairs; ``ValueError`` naming ``phases``."""
    bad = f"phases must be a non-empty sequence of (steps, tau) pairs (steps an integer >= 1, tau >= 0), got {phases!r}"
    if isinstance(phases, (str, bytes)) or not isinstance(phases, (Sequence, np.ndarray)) or len(phases) == 0:
        raise ValueError(bad)
    out = []
    for i, phase in enumerate(phases):
        if isinstance(phase, (str, bytes)) or not isinstance(phase, (Sequence, np.ndarray)) or len(phase) != 2:
            raise ValueError(f"phases[{i}] must be a (steps, tau) pair, got {phase!r}")
        out.append(
            (check_positive_int(f"phases[{i}] steps", phase[0]), check_nonnegative(f"phases[{i}] tau", phase[1]))
        )
    return out


def schedule_epsilon(
    phases: Sequence[tuple[int, float]],
    setting: ModelMixSetting,
    *,
    delta: float,
    conversion: str = "balle",
    orders: Sequence[float] | None = None,
    bound: str = "min",
) -> float:
    """ε of a τ schedule (see :func:`schedule_rdp`)."""
    delta = check_open_unit("delta", delta)
    check_choice("conversion", conversion, CONVERSIONS)
    a, values = schedule_rdp(phases, setting, orders=orders, bound=bound)
    return rdp_to_epsilon(a, values, delta, conversion=conversion)


def _orders_text(orders: object) -> str:
    """``orders`` in a few words for an error message (never raises: the orders may be the invalid input)."""
    if orders is None:
        return "the default orders"
    try:
        values = np.asarray(orders, dtype=float).ravel()
    except (TypeError, ValueError):
        return f"orders={orders!r}"
    return f"{values.size} orders up to {values.max():g}" if values.size else "no orders"


#: The noise multipliers :func:`noise_multiplier_for_epsilon` searches.
_Z_RANGE = (0.02, 1e4)


def noise_multiplier_for_epsilon(
    target_epsilon: float,
    *,
    n: int,
    batch_size: float,
    steps: int,
    delta: float,
    clip: float = 1.0,
    tau: float = 0.0,
    linf_blocks: int | None = None,
    conversion: str = "balle",
    orders: Sequence[float] | None = None,
    bound: str = "min",
    method: str = "modelmix",
    phases: Sequence[tuple[int, float]] | None = None,
    rtol: float = 1e-5,
) -> float:
    """Smallest noise multiplier z (to ``rtol`` relative) whose ε does not exceed ``target_epsilon``.

    The one calibrator (:func:`dpcore.accounting.calibrate.smallest_sigma`): the returned z never overshoots
    (ε(z) ≤ target), z in [0.02, 1e4] (``ValueError`` outside).

    ``method="modelmix"``: :func:`epsilon` (or :func:`schedule_epsilon` when a τ schedule ``phases``
    is given; ``steps`` and ``tau`` are then ignored); ``method="dpsgd"``: :func:`regular_dpsgd_epsilon`
    (``clip``, ``tau``, ``linf_blocks``, ``bound`` and ``phases`` ignored).
    """
    target = check_positive("target_epsilon", target_epsilon)
    check_choice("method", method, ("modelmix", "dpsgd"))
    rtol = check_rtol(rtol)
    delta = check_open_unit("delta", delta)
    if phases is not None and method == "modelmix":
        phases = _check_phases(phases)
    else:
        check_positive_int("steps", steps)

    # the setting at the smallest z searched: every field validated once, z replaced by each trial value
    setting = ModelMixSetting(n=n, batch_size=batch_size, noise_multiplier=_Z_RANGE[0], clip=clip, tau=tau,
                              linf_blocks=linf_blocks)  # fmt: skip

    evaluated: dict[float, float] = {}  # z -> ε, every noise multiplier the accountant could evaluate
    unevaluable: list[float] = []  # z where its quadrature grid would be too large (too little noise)

    def eps(z: float) -> float:
        try:
            evaluated[z] = value = _eps(z)
        except GridTooLargeError:
            unevaluable.append(z)
            raise
        return value

    def _eps(z: float) -> float:
        if method == "dpsgd":
            return regular_dpsgd_epsilon(n=n, batch_size=batch_size, steps=steps, noise_multiplier=z, delta=delta,
                                         conversion=conversion, orders=orders)  # fmt: skip
        if phases is not None:
            return schedule_epsilon(phases, setting.replace(noise_multiplier=z), delta=delta, conversion=conversion,
                                    orders=orders, bound=bound)  # fmt: skip
        return epsilon(setting.replace(noise_multiplier=z), steps=steps, delta=delta, conversion=conversion,
                       orders=orders, bound=bound)  # fmt: skip

    try:
        floor = eps(_Z_RANGE[0])
    except ValueError:  # the quadrature cannot evaluate the smallest z here (a wide envelope): no floor to report
        floor = math.inf
    if floor <= target:  # no z in the accountant's range is needed: say so, rather than blame a z never passed
        raise ValueError(
            f"target_epsilon={target:g} cannot be calibrated: it is above ε = {floor:.6g}, the privacy cost of the "
            f"smallest noise multiplier this accountant evaluates (z = {_Z_RANGE[0]:g}; its range is "
            f"[{_Z_RANGE[0]:g}, {_Z_RANGE[1]:g}]), so every z in the range meets it; give a target_epsilon "
            f"below {floor:.6g}"
        )
    order_text = _orders_text(orders)
    where = (f"calibrating at n={n}, batch_size={batch_size}, steps={steps}, delta={delta}, clip={clip}, tau={tau}, "
             f"linf_blocks={linf_blocks}, conversion={conversion!r}, orders: {order_text}, bound={bound!r}, "
             f"method={method!r}, phases={phases!r}")  # fmt: skip
    try:
        return smallest_sigma(eps, target, rtol=rtol, start=1.0, sigma_min=_Z_RANGE[0], sigma_max=_Z_RANGE[1],
                              below_min="raise")  # fmt: skip
    except GridTooLargeError as exc:  # the search went below the noise this setting's quadrature can evaluate
        if not evaluated:
            raise ValueError(f"target_epsilon={target:g} cannot be calibrated: {exc} ({where})") from exc
        z_ok, z_bad = min(evaluated), max(unevaluable)
        e_ok = evaluated[z_ok]
        raise ValueError(
            f"target_epsilon={target:g} cannot be calibrated for this setting: ε = {e_ok:.6g} at z = {z_ok:g}, the "
            f"smallest noise multiplier ModelMix's accountant evaluated here, already "
            f"{'meets' if e_ok <= target else 'misses'} it, and at z = {z_bad:g} its quadrature would need too large "
            f"a grid (too little noise for the envelope of tau={tau}, clip={clip}, batch_size={batch_size} and "
            f"{order_text}), so the smallest z that meets the target cannot be found.  Give a target_epsilon below "
            f"{e_ok:.6g}, or a smaller envelope (tau, clip, batch_size) or fewer orders ({where})"
        ) from exc
    except ValueError as exc:  # add the setting: which input made the target unreachable
        top = evaluated.get(_Z_RANGE[1])
        hint = "" if top is None or top <= target else (
            f"; ε = {top:.6g} at the largest noise multiplier searched (z = {_Z_RANGE[1]:g}): give a target_epsilon "
            f"of at least {top:.6g}, or fewer steps, a smaller batch_size or a larger delta"
        )  # fmt: skip
        raise ValueError(f"{exc}{hint} ({where})") from exc
