"""Paper 000, "Proactive DP" (van Dijk, N. V. Nguyen, T. N. Nguyen, L. M. Nguyen, P. H. Nguyen, arXiv 2102.09030).

Closed-form privacy of DP-SGD with noise N(0, C²σ²I) on a sum of s_i clipped gradients, Poisson sampling
at rate s_i/N, K = Σ s_i gradient computations, k = K/N epochs, T rounds, θ = s_max/s̄:

* eq. (6) / Theorem 3.1:  σ = sqrt(2(ε + ln(1/δ))/ε)  ⇔  ε = 2 ln(1/δ)/(σ² − 2)  (needs σ² > 2);
* γ is the *smallest* solution of γ ≥ F(γ), with ᾱ = ε/(γk) (Thm 3.1) or εN/(γK) (Thm B.4),
  F(γ) = 2/(1 − ᾱ) + 16ᾱ/(1 − ᾱ)·(σ/(1 − √ᾱ)² + e³/(σ(σ(1 − ᾱ) − 2e√ᾱ)))·e^{3/σ²};
* condition (7): (2/e)²k² ≥ 1/2 + ln(1/δ), and the round lower bound (8): T ≥ γθ²k²/ε;
* Theorem B.4 conditions (32)–(35), with h(x) = (sqrt(1 + (e/x)²) − e/x)² (eq. (54)) and
  g(x) = min{1/(ex), h(x)};
* the App. D.4 calculator (σ → ε → γ → T_min, s_max = kN/T_min, T_min_asym = θ²k²/(2ε)).

Two modes reproduce what the paper printed next to the exact mathematics (Tables 3–11, App. D.4 and E.1):

* ``mode="theorem"``: eq. (6) and γ the fixed point (brentq on γ − F(γ));
* ``mode="paper"``: Tables 3–8 use σ = sqrt(2 ln(1/δ)/ε) (the "+ε" of eq. (6) dropped) and the calculators
  apply a single update γ = F(2) (their one-sided stopping rule fires at once).  The D.4 calculator
  (Tables 9–11) takes ε from eq. (6) in both modes, as App. D.4 step 1 prescribes.

``formula="corrected"`` replaces (1 − √ᾱ)² by 1 − ᾱ − 2√ᾱ in F (the algebra slip in (39), App. B.3).

The E.1 calculator and the App. E schedule are in :mod:`dpcore.papers.p000_proactive.e1`; the general engine
of Lemma B.3 / Theorem B.2 in :mod:`dpcore.papers.p000_proactive.moments`.

>>> round(sigma(0.5, 1e-4), 4), round(epsilon(19.29962, 1e-4), 6)
(6.2323, 0.049722)
>>> eps = epsilon(19.29962, 1e-4)
>>> round(gamma(19.29962, eps, 5), 5), round(gamma(19.29962, eps, 5, mode="paper"), 5)
(3.12524, 3.81495)
>>> max_sample_size(10_000, 5, sigma=19.29962, delta=1e-4, mode="paper")
26
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import optimize

from dpcore.accounting import fdp
from dpcore.accounting.calibrate import SIGMA_MAX, SIGMA_MIN
from dpcore.accounting.rdp import rdp_to_epsilon, subsampled_gaussian_rdp
from dpcore.validation import (
    check_choice,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_range,
    check_rate,
    check_real_array,
)

__all__ = [
    "MODES",
    "GAMMA_FORMULAS",
    "CalculatorResult",
    "sigma",
    "epsilon",
    "h_bound",
    "g_bound",
    "alpha_max",
    "gamma_rhs",
    "gamma_rhs_alpha",
    "gamma",
    "gamma_asymptotic",
    "min_rounds",
    "asymptotic_min_rounds",
    "condition_7",
    "min_epochs",
    "theorem_3_1",
    "theorem_b4",
    "dp_calculator",
    "max_sample_size",
    "gdp_epsilon",
    "rdp_epsilon",
    "poisson_gaussian_rdp",
    "honest_row",
]

MODES = ("theorem", "paper")
GAMMA_FORMULAS = ("paper", "corrected")
E = math.e
#: Domains of the inputs (outside them a ValueError names the parameter and its range): σ as the library's
#: accountants (:mod:`dpcore.accounting.calibrate`), ε, epochs k = K/N, θ = s_max/s̄, data set size N, counts
#: of gradients K and of rounds T, and ᾱ (the domain of F is below 1).
SIGMA_RANGE = (SIGMA_MIN, SIGMA_MAX)
EPSILON_RANGE = (1e-10, 1e6)
EPOCHS_MAX = 1e9
THETA_MAX = 1e6
N_MAX = 2**53
COUNT_MAX = 1e18


def _log_inv(delta: float) -> float:
    return -math.log(check_open_unit("delta", delta))


def check_sigma(name: str, value: float) -> float:
    """A noise multiplier in :data:`SIGMA_RANGE`."""
    return check_range(name, check_positive(name, value), *SIGMA_RANGE)


def check_epsilon(name: str, value: float) -> float:
    """An ε in :data:`EPSILON_RANGE`."""
    return check_range(name, check_positive(name, value), *EPSILON_RANGE)


def check_epochs(name: str, value: float) -> float:
    """Epochs k = K/N in [1/:data:`EPOCHS_MAX`, :data:`EPOCHS_MAX`]."""
    return check_range(name, check_positive(name, value), 1 / EPOCHS_MAX, EPOCHS_MAX)


def check_theta(value: float) -> float:
    """θ = s_max/s̄ in [1, :data:`THETA_MAX`]."""
    return check_range("theta", value, 1.0, THETA_MAX)


def check_size(name: str, value: int) -> int:
    """A data set size in [1, :data:`N_MAX`]."""
    return check_positive_int(name, value, maximum=N_MAX)


def check_count(name: str, value: float) -> float:
    """A count (gradients K, rounds T, a sample size; possibly an average, so a real number) in
    [1, :data:`COUNT_MAX`]."""
    return check_range(name, value, 1.0, COUNT_MAX)


# --------------------------------------------------------------------------- σ ↔ ε
def sigma(epsilon: float, delta: float, *, mode: str = "theorem") -> float:
    """Noise multiplier for (ε, δ): eq. (6) σ = sqrt(2(ε + ln(1/δ))/ε) (``"theorem"``), or the rule the paper's
    Tables 3–8 actually used, σ = sqrt(2 ln(1/δ)/ε) (``"paper"``).

    >>> round(sigma(0.5, 1e-5), 4)
    6.9319
    """
    epsilon = check_epsilon("epsilon", epsilon)
    L = _log_inv(delta)
    check_choice("mode", mode, MODES)
    return math.sqrt(2 * (epsilon + L) / epsilon) if mode == "theorem" else math.sqrt(2 * L / epsilon)


def epsilon(sigma: float, delta: float, *, mode: str = "theorem") -> float:
    """ε from σ: the inverse of eq. (6), 2 ln(1/δ)/(σ² − 2) (App. D.4 step 1; needs σ² > 2), or 2 ln(1/δ)/σ²
    in ``mode="paper"`` (Tables 3–5).

    >>> round(epsilon(12.10881, 1 / 60000), 6), round(epsilon(12.10881, 1.667e-5, mode="paper"), 5)
    (0.152148, 0.15007)
    """
    sigma = check_sigma("sigma", sigma)
    L = _log_inv(delta)
    check_choice("mode", mode, MODES)
    if mode == "paper":
        return 2 * L / sigma**2
    if sigma**2 <= 2:
        raise ValueError(f"sigma must satisfy sigma**2 > 2 for eq. (6) (sigma > {math.sqrt(2):.6f}), got {sigma}")
    return 2 * L / (sigma**2 - 2)


_sigma_fn = sigma
_epsilon_fn = epsilon


# --------------------------------------------------------------------------- h, g, F, γ
def h_bound(x: float) -> float:
    """h(x) = (sqrt(1 + (e/x)²) − e/x)², eq. (54): the largest ᾱ with x(1 − ᾱ) ≥ 2e√ᾱ.

    >>> round(h_bound(6), 4), round(h_bound(10), 4)
    (0.4158, 0.5844)
    """
    x = check_positive("x", x)
    r = E / x  # ∞ for a subnormal x: h = 0
    return 1.0 / (math.hypot(1.0, r) + r) ** 2  # = (sqrt(1 + r²) − r)², without cancellation or overflow


def g_bound(x: float) -> float:
    """g(x) = min{1/(ex), h(x)} of Theorem B.4 (condition (32) uses g(σ_eq6(ε, δ)))."""
    x = check_positive("x", x)
    return min(1 / (E * x), h_bound(x))


def alpha_max(sigma: float, *, formula: str = "paper") -> float:
    """Upper end of the domain of F in ᾱ: h(σ) (paper), and also 3 − 2√2 for the corrected denominator."""
    check_choice("formula", formula, GAMMA_FORMULAS)
    hb = h_bound(check_sigma("sigma", sigma))
    return hb if formula == "paper" else min(hb, 3 - 2 * math.sqrt(2))


def gamma_rhs_alpha(alpha_bar: float, sigma: float, *, formula: str = "paper") -> float:
    """F as a function of ᾱ: 2/(1−ᾱ) + 16ᾱ/(1−ᾱ)·(σ/D + e³/(σ(σ(1−ᾱ) − 2e√ᾱ)))·e^{3/σ²}.

    D = (1 − √ᾱ)² as printed (``formula="paper"``) or 1 − ᾱ − 2√ᾱ (``"corrected"``, the algebra slip in (39), App. B.3).
    Returns ``inf`` outside the domain (ᾱ ≥ :func:`alpha_max`, ᾱ ≤ 1e300), where the bound of Lemma B.3 does not apply.
    """
    sigma = check_sigma("sigma", sigma)
    check_choice("formula", formula, GAMMA_FORMULAS)
    a = check_range("alpha_bar", alpha_bar, 0.0, 1e300)
    if a >= alpha_max(sigma, formula=formula):
        return math.inf
    ra = math.sqrt(a)
    d1 = (1 - ra) ** 2 if formula == "paper" else 1 - a - 2 * ra
    d2 = sigma * (1 - a) - 2 * E * ra
    if d1 <= 0 or d2 <= 0:  # pragma: no cover - excluded by alpha_max up to rounding
        return math.inf
    return 2 / (1 - a) + 16 * a / (1 - a) * (sigma / d1 + E**3 / (sigma * d2)) * math.exp(3 / sigma**2)


def gamma_rhs(gamma: float, sigma: float, epsilon: float, k: float, *, formula: str = "paper") -> float:
    """F(γ; σ, ε, k) with ᾱ = ε/(γk): the right-hand side of the γ inequality of Theorem 3.1 (``inf`` outside
    the domain of F, see :func:`gamma_rhs_alpha`)."""
    gamma = check_range("gamma", check_positive("gamma", gamma), 0.0, 1e300)
    alpha_bar = check_epsilon("epsilon", epsilon) / (gamma * check_epochs("k", k))
    return gamma_rhs_alpha(min(alpha_bar, 1e300), sigma, formula=formula)


def _eq6_epsilon(name: str, sigma: float, delta: float) -> float:
    """:func:`epsilon` (eq. (6)) for a σ given as parameter ``name``, refused (naming it) where so much noise gives an
    ε below :data:`EPSILON_RANGE`, which the theorems' γ and T_min then could not take."""
    eps = epsilon(sigma, delta)
    if eps < EPSILON_RANGE[0]:
        raise ValueError(f"{name}={sigma} gives epsilon = {eps:.3g} below {EPSILON_RANGE[0]:g} at delta={delta:g}: "
                         f"{name} must be smaller")  # fmt: skip
    return eps


def gamma(sigma: float, epsilon: float, k: float, *, mode: str = "theorem", formula: str = "paper") -> float:
    """γ of Theorem 3.1 / B.4 (with k = K/N).

    ``"theorem"``: the smallest solution of γ ≥ F(γ).  F decreases in γ, so the solutions form [γ*, ∞) and γ*
    is the unique root of γ − F(γ) (brentq; the lower bracket keeps ᾱ = ε/(γk) inside the domain).
    ``"paper"``: the single update F(2) the D.4/E.1 calculators effectively apply (App. D.4 and E.1,
    step 5: their stopping rule fires after one update).
    """
    sigma = check_sigma("sigma", sigma)
    epsilon = check_epsilon("epsilon", epsilon)
    k = check_epochs("k", k)
    check_choice("mode", mode, MODES)
    check_choice("formula", formula, GAMMA_FORMULAS)
    if mode == "paper":
        value = gamma_rhs(2.0, sigma, epsilon, k, formula=formula)
        if not math.isfinite(value):
            raise ValueError(
                f"F(2) is undefined: alpha_bar = epsilon/(2k) = {epsilon / (2 * k):.4g} exceeds the domain bound "
                f"{alpha_max(sigma, formula=formula):.4g} (lower sigma or raise k)"
            )
        return value
    lo = max(2.0, epsilon / (k * alpha_max(sigma, formula=formula))) * (1 + 1e-9)

    def diff(g: float) -> float:
        return g - gamma_rhs(g, sigma, epsilon, k, formula=formula)

    hi = 2 * lo
    while diff(hi) < 0:
        hi *= 2
        if hi > 1e300:  # pragma: no cover - F(γ) → 2 as γ → ∞
            raise ValueError(f"no γ below 1e300 solves γ >= F(γ) at sigma={sigma}, epsilon={epsilon}, k={k}")
    lo_eval = lo * (1 + 1e-12)
    if diff(lo_eval) >= 0:  # pragma: no cover - F is huge near the domain edge
        return lo_eval
    return float(optimize.brentq(diff, lo_eval, hi, xtol=1e-14, rtol=1e-15))


def gamma_asymptotic(sigma: float, alpha_bar: float) -> float:
    """App. B.3 expansion γ ≈ 2 + (2 + 16(σ + e³/σ²)e^{3/σ²})ᾱ (valid for small ᾱ only; σ ≥ 0.1, ᾱ in [0, 1])."""
    sigma = check_range("sigma", check_sigma("sigma", sigma), 0.1, SIGMA_RANGE[1])  # e^{3/σ²} overflows below
    alpha_bar = check_range("alpha_bar", alpha_bar, 0.0, 1.0)
    return 2 + (2 + 16 * (sigma + E**3 / sigma**2) * math.exp(3 / sigma**2)) * alpha_bar


# --------------------------------------------------------------------------- rounds and conditions
def min_rounds(
    sigma: float, epsilon: float, k: float, *, theta: float = 1.0, mode: str = "theorem", formula: str = "paper"
) -> float:
    """Lower bound (8) on the number of rounds: T ≥ γθ²k²/ε (γ from :func:`gamma`)."""
    theta = check_theta(theta)
    g = gamma(sigma, epsilon, k, mode=mode, formula=formula)
    return g * theta**2 * k**2 / epsilon


def asymptotic_min_rounds(epsilon: float, k: float, *, theta: float = 1.0) -> float:
    """T_min_asym = θ²k²/(2ε): how far (8) may be lowered by App. C.2's asymptotic tightness argument."""
    return check_theta(theta) ** 2 * check_epochs("k", k) ** 2 / (2 * check_epsilon("epsilon", epsilon))


def condition_7(k: float, delta: float) -> bool:
    """Condition (7) of Theorem 3.1: (2/e)²k² ≥ 1/2 + ln(1/δ)."""
    return (2 / E) ** 2 * check_epochs("k", k) ** 2 >= 0.5 + _log_inv(delta)


def min_epochs(delta: float) -> float:
    """Smallest k allowed by (7): k = (e/2)·sqrt(1/2 + ln(1/δ))."""
    return E / 2 * math.sqrt(0.5 + _log_inv(delta))


def theorem_3_1(
    epsilon: float,
    delta: float,
    N: int,
    k: float,
    T: float,
    *,
    theta: float = 1.0,
    noise: float | None = None,
    formula: str = "paper",
) -> dict:
    """Every hypothesis of Theorem 3.1 for (ε, δ) at data set size N, k epochs and T rounds.

    Returns the conditions (booleans) and ``"holds"``; ``noise`` (the σ used) must be at least eq. (6)'s σ.
    γ is the theorem's smallest solution (with eq. (6)'s σ, or ``noise`` when given).
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    N = check_size("N", N)
    k = check_epochs("k", k)
    T = check_count("T", T)
    theta = check_theta(theta)
    s6 = sigma(epsilon, delta)
    if not SIGMA_RANGE[0] <= s6 <= SIGMA_RANGE[1]:
        raise ValueError(f"epsilon={epsilon} and delta={delta} give eq. (6)'s sigma = {s6:.4g} outside {SIGMA_RANGE}")
    s_used = s6 if noise is None else check_sigma("noise", noise)
    g = gamma(s_used, epsilon, k, formula=formula)
    out = {
        "epsilon<0.5": epsilon < 0.5,
        "delta<=1/N": delta <= 1 / N,
        "N>=10000": N >= 10_000,
        "theta<=6.85": theta <= 6.85,
        "sigma>=eq6": s_used >= s6 * (1 - 1e-12),
        "condition_7": condition_7(k, delta),
        "condition_8": T >= g * theta**2 * k**2 / epsilon * (1 - 1e-12),
        "gamma": g,
    }
    out["holds"] = all(v for key, v in out.items() if key != "gamma")
    return out


def theorem_b4(
    noise: float,
    epsilon: float,
    delta: float,
    N: int,
    K: float,
    s_bar: float,
    *,
    theta: float = 1.0,
    gamma_value: float | None = None,
    formula: str = "paper",
) -> dict:
    """Conditions (32)–(35) of Theorem B.4 for noise multiplier ``noise`` and (ε, δ).

    (32) s̄ ≤ g(σ_eq6(ε, δ))·N/θ;  (33) ε ≤ γ h(σ) K/N;  (34) ε ≥ γθ²(K/N)(s̄/N);  (35) σ ≥ σ_eq6(ε, δ).
    γ is the smallest solution with ᾱ = εN/(γK) (``gamma_value`` overrides it).
    """
    noise = check_sigma("noise", noise)
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    N = check_size("N", N)
    K = check_count("K", K)
    s_bar = check_count("s_bar", s_bar)
    theta = check_theta(theta)
    k = check_epochs("K/N", K / N)
    g = gamma(noise, epsilon, k, formula=formula) if gamma_value is None else check_count("gamma_value", gamma_value)
    s6 = sigma(epsilon, delta)
    tol = 1 + 1e-12
    out = {
        "32": s_bar <= g_bound(s6) * N / theta * tol,
        "33": epsilon <= g * h_bound(noise) * K / N * tol,
        "34": epsilon * tol >= g * theta**2 * (K / N) * (s_bar / N),
        "35": noise * tol >= s6,
        "gamma": g,
    }
    out["holds"] = all(out[c] for c in ("32", "33", "34", "35"))
    return out


# --------------------------------------------------------------------------- App. D.4 calculator
@dataclass(frozen=True)
class CalculatorResult:
    """Output of the App. D.4 DP calculator: (ε, δ, σ, γ, θ, k, N) and both (s, T) pairs."""

    epsilon: float
    delta: float
    sigma: float
    gamma: float
    theta: float
    k: float
    N: int
    T_min: float
    s_max: float
    T_min_asym: float
    s_max_asym: float
    condition_7: bool
    mode: str

    @property
    def s_max_int(self) -> int:
        """⌊s_max⌋, what the paper prints."""
        return math.floor(self.s_max + 1e-9)

    @property
    def s_max_asym_int(self) -> int:
        return math.floor(self.s_max_asym + 1e-9)

    def as_dict(self) -> dict:
        return {**asdict(self), "s_max_int": self.s_max_int, "s_max_asym_int": self.s_max_asym_int}


def dp_calculator(
    sigma: float,
    N: int,
    k: float,
    *,
    delta: float | None = None,
    theta: float = 1.0,
    mode: str = "theorem",
    formula: str = "paper",
) -> CalculatorResult:
    """The App. D.4 DP calculator (Tables 9–11): σ, N, k (and θ) → ε, γ, T_min, s_max, T_min_asym, s_max_asym.

    Step 1 δ = 1/N (unless given) and ε = 2 ln(1/δ)/(σ² − 2) (eq. (6), in both modes); steps 2–4 γ by
    :func:`gamma` (``mode="paper"``: F(2)); step 5 T_min = γθ²k²/ε and T_min_asym = θ²k²/(2ε);
    step 6 s = kN/T.  Condition (7) is reported, not enforced.
    """
    sig = check_sigma("sigma", sigma)
    N = check_size("N", N)
    k = check_epochs("k", k)
    theta = check_theta(theta)
    check_choice("mode", mode, MODES)
    delta = 1.0 / N if delta is None else check_open_unit("delta", delta)
    if delta >= 1:
        raise ValueError(f"delta = 1/N must be below 1: N must be at least 2, got N={N}")
    eps = _eq6_epsilon("sigma", sig, delta)
    g = gamma(sig, eps, k, mode=mode, formula=formula)
    t_min = g * theta**2 * k**2 / eps
    t_asym = asymptotic_min_rounds(eps, k, theta=theta)
    return CalculatorResult(
        eps,
        delta,
        sig,
        g,
        float(theta),
        float(k),
        N,
        t_min,
        k * N / t_min,
        t_asym,
        k * N / t_asym,
        condition_7(k, delta),
        mode,
    )


def max_sample_size(
    N: int,
    k: float,
    epsilon: float | None = None,
    delta: float | None = None,
    *,
    sigma: float | None = None,
    theta: float = 1.0,
    mode: str = "theorem",
    formula: str = "paper",
) -> int:
    """Largest constant sample size s (i.e. the fewest rounds T = kN/s) allowed for N, k epochs, ε, δ.

    App. D.4: ⌊kN/T_min⌋ with T_min = γθ²k²/ε (Theorem 3.1's (8) met with equality).  Give ε or σ (or
    both); the missing one follows from the mode's σ–ε rule (``"theorem"``: eq. (6); ``"paper"``: the Tables 3–8
    rule), except that σ alone gives ε by eq. (6), as App. D.4 step 1 does.  δ defaults to 1/N.
    The App. E.1 search (Theorem B.4; ε is the target) is :func:`dpcore.papers.p000_proactive.e1.max_sample_size_e1`.
    """
    N = check_size("N", N)
    k = check_epochs("k", k)
    check_choice("mode", mode, MODES)
    delta = 1.0 / N if delta is None else check_open_unit("delta", delta)
    if delta >= 1:
        raise ValueError(f"delta = 1/N must be below 1: N must be at least 2, got N={N}")
    if epsilon is None and sigma is None:
        raise ValueError("give epsilon or sigma")
    if epsilon is None:
        epsilon = _epsilon_fn(sigma, delta)
    eps = check_epsilon("epsilon", epsilon)
    sig = _sigma_fn(eps, delta, mode=mode) if sigma is None else check_sigma("sigma", sigma)
    if not SIGMA_RANGE[0] <= sig <= SIGMA_RANGE[1]:
        raise ValueError(f"epsilon={eps} and delta={delta} give sigma = {sig:.4g} outside {SIGMA_RANGE}")
    t_min = min_rounds(sig, eps, k, theta=theta, mode=mode, formula=formula)
    return math.floor(k * N / t_min + 1e-9)


# ------------------------------------------------------------------------- numeric accountants (Tables 9–11, App. D.4)
def gdp_epsilon(noise: float, N: int, k: float, s: float, delta: float, *, sampling: str = "fixed") -> float:
    """ε of the GDP CLT for k epochs at batch s (T = kN/s, possibly non-integer): the paper's "f-DP accountant"
    of Tables 9–11 (TF Privacy's ``compute_mu_uniform`` + ``eps_from_mu``; asymptotic, can under-report).  ∞ where
    the CLT's μ overflows (small noise): no finite ε."""
    noise = check_sigma("noise", noise)
    N = check_size("N", N)
    s = check_count("s", s)
    if s > N:
        raise ValueError(f"s must be <= N, got s={s}, N={N}")
    delta = check_open_unit("delta", delta)
    mu = fdp.clt_mu(noise, s / N, check_epochs("k", k) * N / s, sampling)
    return fdp.mu_to_epsilon(mu, delta)


def poisson_gaussian_rdp(q: float, noise: float, orders: np.ndarray) -> np.ndarray:
    """RDP of one Poisson-subsampled Gaussian step at each order α > 1 (Mironov, Talwar, Zhang 2019, §3.3),
    exact at integer and fractional orders (:func:`dpcore.accounting.rdp.subsampled_gaussian_rdp`)."""
    q = check_rate("q", q)
    noise = check_sigma("noise", noise)
    orders = check_real_array("orders", orders, low=1.0, low_open=True, ndim=1)
    return subsampled_gaussian_rdp(orders, sample_rate=q, noise_multiplier=noise)


def rdp_epsilon(noise: float, N: int, k: float, s: float, delta: float) -> float:
    """RDP upper bound for T = ⌈kN/s⌉ Poisson-subsampled Gaussian rounds (integer orders 2..512, conversion of
    Balle et al. 2020): a rigorous cross-check of the CLT numbers of Tables 9–11 (App. D.4)."""
    noise = check_sigma("noise", noise)
    N = check_size("N", N)
    s = check_count("s", s)
    if s > N:
        raise ValueError(f"s must be <= N, got s={s}, N={N}")
    delta = check_open_unit("delta", delta)
    steps = math.ceil(check_epochs("k", k) * N / s - 1e-9)
    orders = np.arange(2, 513)
    return rdp_to_epsilon(orders, steps * poisson_gaussian_rdp(s / N, noise, orders), delta, conversion="balle")


def honest_row(noise: float, s: float, N: int, K: float, delta: float, *, formula: str = "paper") -> dict:
    """The "honest" guarantee of an experimental (σ, s) row of Tables 6–8.

    ε by eq. (6); γ* (theorem); s_max* = kN/T_min(γ*); whether Theorem 3.1 applies (s ≤ s_max*, ε < 0.5, …);
    whether Theorem B.4's (32)–(35) hold at s̄ = s; the GDP-CLT (uniform) ε and the RDP upper bound.
    """
    noise = check_sigma("noise", noise)
    if noise**2 <= 2:
        raise ValueError(f"noise must satisfy noise**2 > 2 for eq. (6) (noise > {math.sqrt(2):.6f}), got {noise}")
    N = check_size("N", N)
    K = check_count("K", K)
    s = check_count("s", s)
    if s > N or s > K:
        raise ValueError(f"s must be <= N and <= K, got s={s}, N={N}, K={K}")
    k = check_epochs("K/N", K / N)
    eps6 = _eq6_epsilon("noise", noise, delta)
    g = gamma(noise, eps6, k, formula=formula)
    s_max = k * N / (g * k**2 / eps6)
    t31 = theorem_3_1(eps6, delta, N, k, K / s, noise=noise, formula=formula)
    b4 = theorem_b4(noise, eps6, delta, N, K, s, gamma_value=g, formula=formula)
    return {
        "sigma": noise,
        "s": s,
        "epsilon_eq6": eps6,
        "gamma_star": g,
        "s_max_star": s_max,
        "theorem_3_1": t31["holds"],
        "theorem_b4": b4["holds"],
        "epsilon_gdp_uniform": gdp_epsilon(noise, N, k, s, delta),
        "epsilon_rdp": rdp_epsilon(noise, N, k, s, delta),
    }
