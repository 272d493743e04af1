"""The numbers behind the paper-004 notebook: Fig. 2, the contraction factor, the proof's typo, the
baselines on Fig. 2's parameters, the ρ / T / m sweeps, the exact 1-D instance and Corollaries 1 and 3.

Every function returns plain data (a :class:`pandas.DataFrame`, a bool or a string); the plots are
in :mod:`dpcore.papers.p004_contraction.plots`.  Paper: Asoodeh, Chen, Calmon, Özgür,
"Differentially Private Federated Learning: An Information-Theoretic Perspective", ISIT 2021.

>>> s = Setting()
>>> round(float(fig2_curves([1.0], (0.1,), s)["q=0.1"].iloc[0]), 7)  # Fig. 2 at ε = 1, q = 0.1
0.0020211
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize

from dpcore.papers.p004_contraction import baselines as B
from dpcore.papers.p004_contraction import contraction as C
from dpcore.validation import check_positive, check_positive_int

__all__ = [
    "Setting",
    "ordering_text",
    "fig2_curves",
    "delta_at",
    "fig2_delta_table",
    "fig2_epsilon_at_delta",
    "decreasing_in_q",
    "lemma1_matches_pld",
    "below_parallel_composition",
    "contraction_factor",
    "contraction_factor_table",
    "proof_typo_deltas",
    "ragged_batchings",
    "baseline_panels",
    "rdp_conversion_is_weaker",
    "poisson_cross_checks",
    "rounds_sweep",
    "radius_sweep",
    "batch_sweep",
    "radius_where_factor_is",
    "radius_where_theorem2_beats_pabi",
    "radius_crossovers",
    "instance_vs_bound",
    "instance_below_bound",
    "instance_below_valid_bounds",
    "corollary_table",
    "corollary1_contraction_args",
]


@dataclass(frozen=True)
class Setting:
    """Fig. 2's parameters (caption): η = 0.5, L = 1, ρ = 1, σ = 1.5, n = 100."""

    eta: float = 0.5
    lipschitz: float = 1.0
    radius: float = 1.0
    sigma: float = 1.5
    n: int = 100

    def __post_init__(self) -> None:
        for name in ("eta", "lipschitz", "radius", "sigma"):
            check_positive(name, getattr(self, name))
        check_positive_int("n", self.n)

    @property
    def kw(self) -> dict:
        """η, σ, L, ρ as keyword arguments of the :mod:`contraction` functions."""
        return {"eta": self.eta, "sigma": self.sigma, "lipschitz": self.lipschitz, "radius": self.radius}

    def batch(self, q: float) -> int:
        """m = qn users per round (rounded to an integer)."""
        if not (isinstance(q, int | float) and 0 < q <= 1):
            raise ValueError(f"q must be in (0, 1], got {q!r}")
        return max(1, int(round(q * self.n)))


def _qs(qs: Sequence[float]) -> list[float]:
    qs = [float(q) for q in qs]
    if not qs:
        raise ValueError("qs must be a non-empty sequence of sampling rates in (0, 1]")
    return qs


def ordering_text(values: dict[float, float]) -> str:
    """``{q: δ}`` → e.g. ``"q=0.3 < q=0.2 < q=0.1"`` (ascending δ)."""
    if not values:
        raise ValueError("values must be a non-empty mapping q -> delta")
    return " < ".join(f"q={q:g}" for q in sorted(values, key=lambda q: values[q]))


def fig2_curves(epsilons: Sequence[float], qs: Sequence[float], setting: Setting) -> pd.DataFrame:
    """Fig. 2: δ(ε) of Theorem 2 (closed form, real exponent n/m), one column ``q=…`` per rate."""
    eps = np.asarray(epsilons, dtype=float)
    frame = pd.DataFrame({"epsilon": eps})
    for q in _qs(qs):
        frame[f"q={q:g}"] = np.atleast_1d(
            C.last_iterate_delta(eps, n=setting.n, batch_size=setting.batch(q), **setting.kw)
        )
    return frame


def delta_at(epsilon: float, q: float, setting: Setting) -> float:
    """Theorem 2's δ at one ε for rate q (closed form, real exponent n/m)."""
    return float(C.last_iterate_delta(float(epsilon), n=setting.n, batch_size=setting.batch(q), **setting.kw))


def fig2_delta_table(qs: Sequence[float], setting: Setting) -> pd.DataFrame:
    """δ at ε ∈ {0, 0.25, 0.5, 1, 1.5, 2, 3} for each q (Theorem 2)."""
    return fig2_curves([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0], qs, setting)


def fig2_epsilon_at_delta(qs: Sequence[float], setting: Setting, deltas=(1e-2, 1e-3, 1e-4, 1e-5, 1e-6)) -> pd.DataFrame:
    """ε at fixed δ for each q: the smallest ε with Theorem 2's δ(ε) ≤ δ."""
    frame = pd.DataFrame({"delta": list(deltas)})
    for q in _qs(qs):
        m = setting.batch(q)
        frame[f"q={q:g}"] = [
            C.epsilon_for_delta(lambda e, m=m: C.last_iterate_delta(e, n=setting.n, batch_size=m, **setting.kw), d)
            for d in deltas
        ]
    return frame


def decreasing_in_q(curves: pd.DataFrame, qs: Sequence[float]) -> bool:
    """Whether δ strictly decreases with q at every ε of ``curves`` (Sec. III-B: "the more users are
    involved in each iteration, the higher the privacy guarantee is")."""
    qs = sorted(_qs(qs))
    return bool(all(np.all(curves[f"q={hi:g}"] < curves[f"q={lo:g}"]) for lo, hi in zip(qs, qs[1:], strict=False)))


def lemma1_matches_pld(
    epsilons=(0.5, 1.0, 2.0), *, batch_size: int = 10, sigma: float = 1.5, lipschitz: float = 1.0, rtol: float = 1e-6
) -> bool:
    """Lemma 1 against an independent accountant: θ_ε(2L/(√m σ)) equals the δ(ε) of one Gaussian
    mechanism (replace-one sensitivity 2L, noise σ√m) by dp_accounting's PLD accountant, within ``rtol``."""
    a = C.sensitivity_ratio(batch_size=batch_size, sigma=sigma, lipschitz=lipschitz)
    ours = np.array([C.theta(e, a) for e in epsilons])
    pld = np.array([B.gaussian_pld_delta(e, batch_size=batch_size, sigma=sigma, lipschitz=lipschitz) for e in epsilons])
    return bool(np.all(np.abs(ours - pld) <= rtol * np.abs(pld)))


def below_parallel_composition(curves: pd.DataFrame, qs: Sequence[float], setting: Setting) -> bool:
    """Whether Theorem 2's δ(ε) (columns ``q=…`` of :func:`fig2_curves`) is at most θ_ε(2L/(√m σ)) at every ε
    (the remark after (11): θ_ε(a) is a straightforward upper bound)."""
    eps = curves["epsilon"].to_numpy()
    checks = []
    for q in _qs(qs):
        a = C.sensitivity_ratio(batch_size=setting.batch(q), sigma=setting.sigma, lipschitz=setting.lipschitz)
        bound = np.atleast_1d(C.theta(eps, a))
        checks.append(np.all(curves[f"q={q:g}"].to_numpy() <= bound * (1 + 1e-12)))
    return bool(all(checks))


def contraction_factor(
    epsilon,
    *,
    n: int,
    batch_size: int,
    eta: float,
    sigma: float,
    lipschitz: float = 1.0,
    radius: float = 1.0,
    convex: bool = True,
):
    """F = δ_Thm2 / θ_ε(a) = q(1 − θ_ε(b)^T)/(1 − θ_ε(b)) ∈ (0, 1]: what hiding the intermediate iterates
    buys over releasing them all (θ_ε(a) is exact parallel composition, B1)."""
    log_delta = C.log_last_iterate_delta(
        epsilon, n=n, batch_size=batch_size, eta=eta, sigma=sigma, lipschitz=lipschitz, radius=radius, convex=convex
    )
    a = C.sensitivity_ratio(batch_size=batch_size, sigma=sigma, lipschitz=lipschitz)
    out = np.exp(np.asarray(log_delta) - np.asarray(C.log_theta(epsilon, a)))
    return float(out) if out.ndim == 0 else out


def contraction_factor_table(qs: Sequence[float], setting: Setting) -> pd.DataFrame:
    """Per q: a = 2L/(√m σ), b = 2ρ√m/(ησ), θ_0(b), 1 − θ_0(b) and F at ε = 0 and 1 (Theorem 2)."""
    rows = []
    for q in _qs(qs):
        m = setting.batch(q)
        b = C.contraction_ratio(
            batch_size=m, eta=setting.eta, sigma=setting.sigma, radius=setting.radius, lipschitz=setting.lipschitz
        )
        kw = dict(n=setting.n, batch_size=m, **setting.kw)
        rows.append(
            {
                "q": q,
                "m": m,
                "T = n/m": setting.n / m,
                "a": C.sensitivity_ratio(batch_size=m, sigma=setting.sigma, lipschitz=setting.lipschitz),
                "b": b,
                "theta_0(b)": C.theta(0.0, b),
                "1 - theta_0(b)": -math.expm1(C.log_theta(0.0, b)),
                "F at eps=0": contraction_factor(0.0, **kw),
                "F at eps=1": contraction_factor(1.0, **kw),
            }
        )
    return pd.DataFrame(rows)


def proof_typo_deltas(qs: Sequence[float], setting: Setting, epsilon: float = 0.0) -> dict[float, float]:
    """δ(ε) per q with the last display of the proof of Theorem 2 (Appendix) taken as printed:
    θ_ε(2L√m/σ) in place of the statement's θ_ε(2L/(√m σ))."""
    return {
        q: C.last_iterate_delta(epsilon, n=setting.n, batch_size=setting.batch(q), mode="proof-typo", **setting.kw)
        for q in _qs(qs)
    }


def ragged_batchings(setting: Setting, epsilons=(0.0, 1.0, 2.0), m: int = 30) -> pd.DataFrame:
    """q = 0.3 (n/m = 10/3 rounds): the closed form with the real exponent against integer batchings
    (sum form of Theorem 2 with weights m_t/n)."""
    eps = np.asarray(epsilons, dtype=float)
    n = setting.n
    rest = n % m
    full = [m] * (n // m)
    even = [n // len(full) + (1 if i < n % len(full) else 0) for i in range(len(full))]
    batchings = {
        f"closed form, exponent n/m = {n}/{m}": None,
        str(full + [rest]): full + [rest],
        str([rest] + full): [rest] + full,
        str(even): even,
    }
    kw = dict(etas=setting.eta, sigmas=setting.sigma, lipschitz=setting.lipschitz, radius=setting.radius)
    rows = {}
    for name, sizes in batchings.items():
        if sizes is None:
            rows[name] = C.last_iterate_delta(eps, n=n, batch_size=m, **setting.kw)
        else:
            rows[name] = C.last_iterate_delta_schedule(eps, batch_sizes=[s for s in sizes if s], **kw)
    return pd.DataFrame(rows, index=[f"delta({e:g})" for e in eps]).T


def baseline_panels(
    epsilons: Sequence[float], qs: Sequence[float], setting: Setting, *, grid: int = 2001
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(curves, table): δ(ε) of Theorem 2 (B0) and the baselines B1–B4 per q, with the exact 1-D
    instance where T = n/m is an integer (column ``exact 1-D instance``, NaN otherwise); and the
    baseline table (ε at δ = 1e-3, 1e-5 and δ at ε = 0.5, 1, 2) per q."""
    eps = np.asarray(epsilons, dtype=float)
    frames, tables = [], []
    for q in _qs(qs):
        m = setting.batch(q)
        curves = B.baseline_deltas(eps, n=setting.n, batch_size=m, **setting.kw)
        frame = pd.DataFrame({"q": q, "epsilon": eps, **curves})
        frame["exact 1-D instance"] = (
            C.exact_1d_delta(eps, n=setting.n, batch_size=m, grid=grid, **setting.kw) if setting.n % m == 0 else np.nan
        )
        frames.append(frame)
        rows = pd.DataFrame(B.baseline_table(n=setting.n, batch_size=m, **setting.kw))
        rows.insert(0, "q", q)
        tables.append(rows)
    return pd.concat(frames, ignore_index=True), pd.concat(tables, ignore_index=True)


def rdp_conversion_is_weaker(table: pd.DataFrame, delta: float = 1e-5) -> bool:
    """Footnote 1: ε at ``delta`` through RDP (B2) exceeds the direct (ε, δ) computation (B1) at every q."""
    column = f"eps@{delta:g}"
    b1 = table[table["method"] == "B1"].set_index("q")[column]
    b2 = table[table["method"] == "B2"].set_index("q")[column]
    if b1.empty or not b1.index.equals(b2.index):
        raise ValueError("table must hold B1 and B2 rows for the same q (see baseline_panels)")
    return bool(np.all(b2 > b1))


def poisson_cross_checks(qs: Sequence[float], setting: Setting, delta: float = 1e-5) -> pd.DataFrame:
    """ε at ``delta`` of the tight PLD version of B3b and of the without-replacement accountant B3c
    (dp_accounting), for the q with an integer T; neither bounds Algorithm 1 (orientation only)."""
    rows = []
    kw = dict(sigma=setting.sigma, lipschitz=setting.lipschitz)
    for q in _qs(qs):
        m = setting.batch(q)
        if setting.n % m:
            continue
        rows.append(
            {
                "q": q,
                "B3b tight PLD (Poisson, replace-one)": B.poisson_pld_epsilon(delta, n=setting.n, batch_size=m, **kw),
                "B3c WOR RDP (replace-one)": B.wor_rdp_epsilon(delta, n=setting.n, batch_size=m, **kw),
            }
        )
    return pd.DataFrame(rows)


def rounds_sweep(
    radii: Sequence[float],
    setting: Setting,
    *,
    max_log10_rounds: int = 6,
    m: int = 10,
    epsilon: float = 1.0,
    pabi_max_rounds: int = 10_000,
) -> pd.DataFrame:
    """δ(ε) against the number of rounds T (n = mT) for each radius ρ, with B1 and PABI (B4, up to
    ``pabi_max_rounds``; NaN beyond)."""
    check_positive_int("max_log10_rounds", max_log10_rounds)
    rounds = np.unique(np.round(np.logspace(0, max_log10_rounds, 4 * max_log10_rounds + 1)).astype(int))
    kw = dict(batch_size=m, eta=setting.eta, sigma=setting.sigma, lipschitz=setting.lipschitz)
    frame = pd.DataFrame({"rounds T": rounds})
    for radius in radii:
        frame[f"Theorem 2, rho={radius:g}"] = [
            C.last_iterate_delta(epsilon, n=m * int(t), radius=radius, **kw) for t in rounds
        ]
    frame["B1 parallel composition"] = B.parallel_delta(
        epsilon, batch_size=m, sigma=setting.sigma, lipschitz=setting.lipschitz
    )
    frame["B4 PABI"] = [
        B.pabi_delta(epsilon, n=m * int(t), batch_size=m, sigma=setting.sigma, lipschitz=setting.lipschitz)
        if t <= pabi_max_rounds
        else np.nan
        for t in rounds
    ]
    return frame


def radius_sweep(setting: Setting, *, m: int = 10, epsilon: float = 1.0, radii=None) -> pd.DataFrame:
    """δ(ε) against ρ at n, m fixed: Theorem 2 (convex diameter 2ρ and non-convex 2(ρ + ηL)), B1, PABI."""
    radii = np.geomspace(0.01, 10.0, 31) if radii is None else np.asarray(radii, dtype=float)
    kw = dict(n=setting.n, batch_size=m, eta=setting.eta, sigma=setting.sigma, lipschitz=setting.lipschitz)
    frame = pd.DataFrame({"rho": radii})
    frame["Theorem 2 (convex)"] = [C.last_iterate_delta(epsilon, radius=r, **kw) for r in radii]
    frame["Theorem 2 (non-convex diameter 2(rho + eta L))"] = [
        C.last_iterate_delta(epsilon, radius=r, convex=False, **kw) for r in radii
    ]
    frame["B1 parallel composition"] = B.parallel_delta(
        epsilon, batch_size=m, sigma=setting.sigma, lipschitz=setting.lipschitz
    )
    frame["B4 PABI"] = B.pabi_delta(
        epsilon, n=setting.n, batch_size=m, sigma=setting.sigma, lipschitz=setting.lipschitz
    )
    return frame


def batch_sweep(setting: Setting, *, sizes=(1, 2, 5, 10, 20, 25, 50, 100), epsilon: float = 1.0) -> pd.DataFrame:
    """δ(ε) of Theorem 2 against m at n fixed (not monotone: a shrinks but b grows)."""
    frame = pd.DataFrame({"m": list(sizes)})
    frame["T = n/m"] = setting.n / frame["m"]
    frame[f"delta({epsilon:g}), Theorem 2"] = [
        C.last_iterate_delta(epsilon, n=setting.n, batch_size=int(m), **setting.kw) for m in sizes
    ]
    return frame


def radius_where_factor_is(factor: float, setting: Setting, *, m: int = 10, epsilon: float = 1.0) -> float:
    """The radius ρ at which Theorem 2's contraction factor F (see :func:`contraction_factor`) equals
    ``factor``: below it, hiding the iterates beats releasing them all (B1) by more than 1 − factor."""
    if not 0 < factor < 1:
        raise ValueError(f"factor must be in (0, 1), got {factor!r}")
    kw = dict(n=setting.n, batch_size=m, eta=setting.eta, sigma=setting.sigma, lipschitz=setting.lipschitz)

    def f(log_rho: float) -> float:
        return math.log(contraction_factor(epsilon, radius=math.exp(log_rho), **kw)) - math.log(factor)

    return float(math.exp(optimize.brentq(f, math.log(1e-4), math.log(1e3), xtol=1e-10)))


def radius_where_theorem2_beats_pabi(setting: Setting, *, m: int = 10, epsilon: float = 1.0) -> float:
    """The radius ρ below which Theorem 2's δ(ε) is smaller than PABI's (B4, which does not depend on ρ)."""
    kw = dict(n=setting.n, batch_size=m, eta=setting.eta, sigma=setting.sigma, lipschitz=setting.lipschitz)
    pabi = B.pabi_delta(epsilon, n=setting.n, batch_size=m, sigma=setting.sigma, lipschitz=setting.lipschitz)

    def f(log_rho: float) -> float:
        return C.log_last_iterate_delta(epsilon, radius=math.exp(log_rho), **kw) - math.log(pabi)

    return float(math.exp(optimize.brentq(f, math.log(1e-4), math.log(1e3), xtol=1e-10)))


def radius_crossovers(setting: Setting, *, m: int = 10, epsilon: float = 1.0) -> dict[str, float]:
    """Where hiding the iterates starts to pay at n = ``setting.n``, batch m: the ρ below which Theorem 2 is
    under 0.99 × B1 (``"Thm 2 < 0.99 × B1"``) and the ρ below which it beats PABI (``"Thm 2 < PABI"``)."""
    return {
        "Thm 2 < 0.99 × B1": radius_where_factor_is(0.99, setting, m=m, epsilon=epsilon),
        "Thm 2 < PABI": radius_where_theorem2_beats_pabi(setting, m=m, epsilon=epsilon),
    }


def instance_vs_bound(
    epsilons: Sequence[float], radii: Sequence[float], setting: Setting, *, m: int = 10, grid: int = 2001
) -> pd.DataFrame:
    """The exact 1-D instance of Algorithm 1 (:func:`contraction.exact_1d_delta`) next to Theorem 2's
    bound, per radius ρ, at n = ``setting.n`` and batch size m."""
    eps = np.asarray(epsilons, dtype=float)
    frame = pd.DataFrame({"epsilon": eps})
    for radius in radii:
        kw = dict(
            n=setting.n, batch_size=m, eta=setting.eta, sigma=setting.sigma, lipschitz=setting.lipschitz, radius=radius
        )
        frame[f"exact instance, rho={radius:g}"] = C.exact_1d_delta(eps, grid=grid, **kw)
        frame[f"Theorem 2, rho={radius:g}"] = C.last_iterate_delta(eps, **kw)
    return frame


def instance_below_bound(frame: pd.DataFrame) -> bool:
    """Whether every exact-instance column of ``frame`` lies at or below its Theorem 2 column at every ε."""
    pairs = [(c, c.replace("exact instance", "Theorem 2")) for c in frame.columns if c.startswith("exact instance")]
    if not pairs:
        raise ValueError("frame has no 'exact instance, rho=…' columns (see instance_vs_bound)")
    return bool(all(np.all(frame[inst].to_numpy() <= frame[bound].to_numpy()) for inst, bound in pairs))


def instance_below_valid_bounds(curves: pd.DataFrame) -> bool:
    """Whether the exact 1-D instance of :func:`baseline_panels` lies at or below every bound that is valid
    for Algorithm 1 (B0, B1, B2, B4; the Poisson accountants B3a/B3b are not valid and are skipped)."""
    rows = curves[curves["exact 1-D instance"].notna()]
    if rows.empty:
        raise ValueError("curves has no exact-instance values (no q with an integer T = n/m)")
    inst = rows["exact 1-D instance"].to_numpy()
    valid = [key for key, (_, ok) in B.METHODS.items() if ok]
    return bool(all(np.all(inst <= rows[key].to_numpy()) for key in valid))


def corollary_table(
    epsilons: Sequence[float],
    setting: Setting,
    *,
    m: int = 10,
    strong_convexity: float = 0.05,
    cor1_radius: float = 0.05,
) -> pd.DataFrame:
    """Theorem 2 vs Corollary 3 (randomly stopped output; sum form and eq. (12)) at Fig. 2's parameters,
    and Corollary 1 (η_t = 1/(λt)) with b_j as printed, corrected, and the right-hand side of (11)."""
    eps = np.asarray(epsilons, dtype=float)
    n = setting.n
    rows = {
        "Theorem 2 (last iterate)": C.last_iterate_delta(eps, n=n, batch_size=m, **setting.kw),
        "Corollary 3, sum form": C.random_stop_delta(
            eps,
            batch_sizes=[m] * (n // m),
            etas=setting.eta,
            sigmas=setting.sigma,
            lipschitz=setting.lipschitz,
            radius=setting.radius,
        ),
        "Corollary 3, eq. (12)": C.corollary3_delta(
            eps,
            n=n,
            batch_size=m,
            eta_min=setting.eta,
            sigma_min=setting.sigma,
            lipschitz=setting.lipschitz,
            radius=setting.radius,
        ),
    }
    labels = {
        "corrected": "Corollary 1, b_j = 2 rho lambda j sqrt(m)/sigma (correct)",
        "printed": "Corollary 1, b_j as printed",
        "bound": "Corollary 1, right-hand side of (11)",
    }
    for mode, label in labels.items():
        rows[label] = C.corollary1_delta(
            eps,
            n=n,
            batch_size=m,
            strong_convexity=strong_convexity,
            sigma=setting.sigma,
            lipschitz=setting.lipschitz,
            radius=cor1_radius,
            mode=mode,
        )
    return pd.DataFrame(rows, index=[f"delta({e:g})" for e in eps]).T


def corollary1_contraction_args(
    *, round_index: int, batch_size: int, strong_convexity: float, sigma: float, radius: float
) -> tuple[float, float]:
    """(printed, correct) b_j of Corollary 1 (η_j = 1/(λj)): the printed 2ρ√(λmj)/σ of (11), and
    Theorem 2's b_j = 2ρ√m/(η_j σ) with η_j = 1/(λj), i.e. 2ρλj√m/σ."""
    j = check_positive_int("round_index", round_index)
    m = check_positive_int("batch_size", batch_size)
    lam = check_positive("strong_convexity", strong_convexity)
    sigma = check_positive("sigma", sigma)
    radius = check_positive("radius", radius)
    printed = 2 * radius * math.sqrt(lam * m * j) / sigma
    correct = C.contraction_ratio(batch_size=m, eta=1.0 / (lam * j), sigma=sigma, radius=radius)
    return printed, correct


def corollary2_noise_term(*, n: int, batch_size: int, strong_convexity: float, noise_variance: float) -> float:
    """The privacy term Σ_t η_t σ_t²/n of Corollary 2 in its batch-m form (Sec. IV-B, the display after "applying
    Corollary 2 yields"), with η_t = 1/(λt) and a constant σ_t² over the T = n/m rounds: σ² H_T/(λn), H_T the
    T-th harmonic number."""
    n = check_positive_int("n", n)
    m = check_positive_int("batch_size", batch_size)
    if n % m:
        raise ValueError(f"batch_size must divide n (T = n/m rounds), got n={n}, batch_size={m}")
    lam = check_positive("strong_convexity", strong_convexity)
    variance = check_positive("noise_variance", noise_variance)
    steps = n // m
    harmonic = float(np.sum(1.0 / np.arange(1, steps + 1)))
    return variance * harmonic / (lam * n)


def corollary2_rate_table(
    ns: Sequence[int] = (10**3, 10**4, 10**5, 10**6, 10**7),
    batch_sizes: Sequence[int] = (1, 10, 100),
    *,
    strong_convexity: float = 0.05,
) -> pd.DataFrame:
    """Corollary 2's bound (batch-m form) with the choice of Corollary 3's instance, σ_t² = √n and η_t = 1/(λt),
    against the rate Õ(1/√n ∨ m/n) the paper states after (12) (Sec. IV-B).

    The universal constant c and ((L + μB)² + G²) are set to 1 (the paper gives neither). Per (n, m): the
    optimisation term m log(n/m)/(λn), the privacy term (:func:`corollary2_noise_term`), their sum and ``ratio``
    = bound / (max(1/√n, m/n) · log(n/m)); the rate holds when the ratio stays within a constant band."""
    lam = check_positive("strong_convexity", strong_convexity)
    rows = []
    for n in ns:
        n = check_positive_int("ns", n)
        for m in batch_sizes:
            m = check_positive_int("batch_sizes", m)
            if n % m or n // m < 3:
                raise ValueError(f"each batch size must divide each n with T = n/m >= 3, got n={n}, m={m}")
            log_t = math.log(n // m)
            optimisation = m * log_t / (lam * n)
            privacy = corollary2_noise_term(n=n, batch_size=m, strong_convexity=lam, noise_variance=math.sqrt(n))
            rate = max(1 / math.sqrt(n), m / n)
            rows.append({"n": n, "m": m, "optimisation term": optimisation, "privacy term": privacy,
                         "bound": optimisation + privacy, "rate": rate,
                         "ratio": (optimisation + privacy) / (rate * log_t)})  # fmt: skip
    return pd.DataFrame(rows)


def corollary2_rate_holds(table: pd.DataFrame, *, spread: float = 4.0) -> bool:
    """Whether the ratio column of :func:`corollary2_rate_table` stays within a factor ``spread`` over its grid
    (bound = Θ(log(n/m) · max(1/√n, m/n)), i.e. the rate Õ(1/√n ∨ m/n) of Sec. IV-B)."""
    spread = check_positive("spread", spread)
    if "ratio" not in table or table.empty:
        raise ValueError("table must be a non-empty frame of corollary2_rate_table with a 'ratio' column")
    ratio = table["ratio"].to_numpy(dtype=float)
    return bool(np.all(np.isfinite(ratio)) and ratio.max() / ratio.min() <= spread)


def corollary3_eq12_bounds_sum(
    epsilons: Sequence[float], setting: Setting, *, m: int = 10, strong_convexity: float = 0.05
) -> pd.DataFrame:
    """Corollary 3 for the paper's instance (η_t = 1/(λt), σ_t² = √n, Sec. IV-B after (12)): the double sum of
    the statement (round by round) and the closed form (12) with η* = 1/(λT), σ* = n^{1/4}, per ε.  The paper
    says (12) "can also" be picked as δ, i.e. (12) ≥ the sum; ``holds`` says whether it is."""
    eps = np.asarray(epsilons, dtype=float)
    lam = check_positive("strong_convexity", strong_convexity)
    m = check_positive_int("m", m)
    n = setting.n
    if n % m:
        raise ValueError(f"m must divide the setting's n, got n={n}, m={m}")
    steps = n // m
    sigma = n**0.25
    common = dict(lipschitz=setting.lipschitz, radius=setting.radius)
    total = C.random_stop_delta(eps, batch_sizes=[m] * steps, etas=[1 / (lam * t) for t in range(1, steps + 1)],
                                sigmas=sigma, **common)  # fmt: skip
    closed = C.corollary3_delta(eps, n=n, batch_size=m, eta_min=1 / (lam * steps), sigma_min=sigma, **common)
    frame = pd.DataFrame({"epsilon": eps, "sum form": np.atleast_1d(total), "eq. (12)": np.atleast_1d(closed)})
    frame["holds"] = frame["eq. (12)"] >= frame["sum form"] * (1 - 1e-12)
    return frame
