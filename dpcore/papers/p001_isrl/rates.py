"""Fig. 3 of Lowy & Razaviyayn, "Private Federated Learning Without a Trusted Server" (ICLR 2023): the rates table.

Fig. 3 is an image (absent from the text extraction) summarising the excess-risk bounds with
M = N silos per round and logarithms omitted.  Each row is rebuilt here from the theorem that
states it, as a function of the problem constants (:class:`Problem`) returning its terms:

* i.i.d. SCO (Thm 2.1 = eqs. (4)-(5); lower bounds Thm 2.2; shuffle DP Thm 5.1),
* non-i.i.d. smooth SCO (Thm 3.1 = eqs. (6)-(7); lower bounds Thm 2.2 with C = √R, marked *;
  shuffle DP Thm 5.2 = eqs. (10)-(11)),
* federated ERM (Thm 4.1 = eqs. (8)-(9); lower bounds Thm F.3).

Every rate is a sum of a *statistical* (non-private) term and a *privacy* term (the lower
bounds' privacy term is LD·min{1, ·}).  :func:`fig3_table` prints the table,
:func:`exponent` measures the log-log slope of a term in one constant (the numbers the paper's
formulas imply: e.g. the privacy term of eq. (4) ∝ n^−1), :func:`ratio_exponent` the slope of a
ratio of two privacy terms (the "gap" statements after Thm 3.1).

>>> p = Problem(n=1000, num_silos=10, dim=10, epsilon=1.0)
>>> round(exponent("iid-convex", "isrl-upper", "n", p), 6)
-1.0
>>> round(exponent("noniid-convex", "isrl-upper", "n", p), 6)
-0.8
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import pandas as pd

from dpcore.validation import check_choice, check_positive

__all__ = [
    "Problem",
    "SETTINGS",
    "BOUNDS",
    "VARIABLES",
    "TERMS",
    "ROWS",
    "rate_terms",
    "rate",
    "exponent",
    "ratio_exponent",
    "one_pass_rounds",
    "privacy_for_free_dimension",
    "fig3_table",
    "claim_values",
    "REFERENCE_PROBLEM",
]

SETTINGS = ("iid-convex", "iid-strongly-convex", "noniid-convex", "noniid-strongly-convex", "erm-convex",
            "erm-strongly-convex")
BOUNDS = ("isrl-upper", "isrl-lower", "sdp-upper")
VARIABLES = ("lipschitz", "diameter", "n", "num_silos", "dim", "epsilon", "mu", "beta", "phi")
TERMS = ("statistical", "privacy")


@dataclass(frozen=True)
class Problem:
    """The constants of a rate (Fig. 3 fixes M = N and omits logarithms).

    ``lipschitz`` L, ``diameter`` D, ``n`` records per silo, ``num_silos`` N (= M), ``dim`` d,
    ``epsilon`` ε0 (ISRL-DP) or ε (shuffle DP), strong convexity ``mu`` μ, smoothness ``beta`` β
    (κ = β/μ) and within-silo gradient deviation ``phi`` φ (Assumption 1.3).  All must be > 0.
    """

    n: float
    num_silos: float
    dim: float
    epsilon: float
    lipschitz: float = 1.0
    diameter: float = 1.0
    mu: float = 1.0
    beta: float = 1.0
    phi: float = 1.0

    def __post_init__(self) -> None:
        for name in VARIABLES:
            check_positive(name, getattr(self, name))


def _iid_convex(p: Problem, bound: str) -> tuple[float, float]:
    ld, n, nn, d, e = p.lipschitz * p.diameter, p.n, p.num_silos, p.dim, p.epsilon
    if bound == "isrl-upper":  # eq. (4), Thm 2.1/D.2, M = N
        return ld / math.sqrt(n * nn), ld * math.sqrt(d) / (e * n * math.sqrt(nn))
    if bound == "isrl-lower":  # Thm 2.2/D.3, C = 1
        return p.phi * p.diameter / math.sqrt(nn * n), ld * min(1.0, math.sqrt(d) / (e * n * math.sqrt(nn)))
    return ld / math.sqrt(n * nn), ld * math.sqrt(d) / (e * n * nn)  # Thm 5.1/G.1


def _iid_strongly_convex(p: Problem, bound: str) -> tuple[float, float]:
    l2mu, n, nn, d, e = p.lipschitz**2 / p.mu, p.n, p.num_silos, p.dim, p.epsilon
    if bound == "isrl-upper":  # eq. (5)
        return l2mu / (n * nn), l2mu * d / (e**2 * n**2 * nn)
    if bound == "isrl-lower":  # Thm 2.2, strongly convex, C = 1
        return p.phi**2 / (p.mu * n * nn), p.lipschitz * p.diameter * min(1.0, d / (e**2 * n**2 * nn))
    return l2mu / (n * nn), l2mu * d / (e**2 * n**2 * nn**2)  # Thm 5.1, strongly convex


def _c_squared(p: Problem) -> float:
    """C² := (ε0 n √N/√d)^{2/5} (Fig. 3 caption; C = √R with R = n/K of Thm E.1)."""
    return (p.epsilon * p.n * math.sqrt(p.num_silos) / math.sqrt(p.dim)) ** 0.4


def _noniid_convex(p: Problem, bound: str) -> tuple[float, float]:
    stat = p.phi * p.diameter / math.sqrt(p.num_silos * p.n)
    scale = p.beta**0.25 * p.lipschitz * p.diameter**1.5 * math.sqrt(p.dim) / (p.epsilon * p.n)
    if bound == "isrl-upper":  # eq. (6), Thm 3.1
        return stat, (scale / math.sqrt(p.num_silos)) ** 0.8
    if bound == "isrl-lower":  # Thm 2.2 with C = √R (the * of Fig. 3)
        x = math.sqrt(p.dim) / (p.epsilon * p.n * math.sqrt(p.num_silos) * _c_squared(p))
        return stat, p.lipschitz * p.diameter * min(1.0, x)
    return stat, (scale / p.num_silos) ** 0.8  # eq. (10), Thm 5.2 (ln(d/δ) omitted)


def _noniid_strongly_convex(p: Problem, bound: str) -> tuple[float, float]:
    stat = p.phi**2 / (p.mu * p.n * p.num_silos)
    root_kappa, l2mu = math.sqrt(p.beta / p.mu), p.lipschitz**2 / p.mu
    if bound == "isrl-upper":  # eq. (7)
        return stat, root_kappa * l2mu * p.dim / (p.epsilon**2 * p.n**2 * p.num_silos)
    if bound == "isrl-lower":  # Thm 2.2 with C = √R: C⁴ = (C²)²
        x = p.dim / (p.epsilon**2 * p.n**2 * p.num_silos * _c_squared(p) ** 2)
        return stat, p.lipschitz * p.diameter * min(1.0, x)
    return stat, root_kappa * l2mu * p.dim / (p.epsilon**2 * p.n**2 * p.num_silos**2)  # eq. (11)


def _erm_convex(p: Problem, bound: str) -> tuple[float, float]:
    ld, x = p.lipschitz * p.diameter, math.sqrt(p.dim) / (p.epsilon * p.n * math.sqrt(p.num_silos))
    if bound == "isrl-upper":  # eq. (8), Thm 4.1/F.2
        return 0.0, ld * x
    if bound == "isrl-lower":  # Thm F.3
        return 0.0, ld * min(1.0, x)
    raise ValueError("bound 'sdp-upper' has no federated ERM row in Fig. 3 (—)")


def _erm_strongly_convex(p: Problem, bound: str) -> tuple[float, float]:
    x = p.dim / (p.epsilon**2 * p.n**2 * p.num_silos)
    if bound == "isrl-upper":  # eq. (9)
        return 0.0, p.lipschitz**2 / p.mu * x
    if bound == "isrl-lower":  # Thm F.3, strongly convex
        return 0.0, p.lipschitz * p.diameter * min(1.0, x)
    raise ValueError("bound 'sdp-upper' has no federated ERM row in Fig. 3 (—)")


_RATES: dict[str, Callable[[Problem, str], tuple[float, float]]] = {
    "iid-convex": _iid_convex,
    "iid-strongly-convex": _iid_strongly_convex,
    "noniid-convex": _noniid_convex,
    "noniid-strongly-convex": _noniid_strongly_convex,
    "erm-convex": _erm_convex,
    "erm-strongly-convex": _erm_strongly_convex,
}

# setting -> (row label, {bound: (formula as printed / reconstructed, where it is stated)})
ROWS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "iid-convex": ("i.i.d. SCO, convex", {
        "isrl-upper": ("LD/√(nN) + LD√d/(ε0 n √N)", "eq. (4), Thm 2.1"),
        "isrl-lower": ("φD/√(Nn) + LD min{1, √d/(ε0 n √N)}", "Thm 2.2"),
        "sdp-upper": ("LD/√(nN) + LD√d/(ε n N)", "Thm 5.1"),
    }),
    "iid-strongly-convex": ("i.i.d. SCO, strongly convex", {
        "isrl-upper": ("(L²/μ)(1/(nN) + d/(ε0² n² N))", "eq. (5), Thm 2.1"),
        "isrl-lower": ("φ²/(μnN) + LD min{1, d/(ε0² n² N)}", "Thm 2.2"),
        "sdp-upper": ("(L²/μ)(1/(nN) + d/(ε² n² N²))", "Thm 5.1"),
    }),
    "noniid-convex": ("non-i.i.d. SCO, smooth convex", {
        "isrl-upper": ("φD/√(Nn) + (β^{1/4} L D^{3/2} √d/(ε0 n √N))^{4/5}", "eq. (6), Thm 3.1"),
        "isrl-lower": ("φD/√(Nn) + LD min{1, √d/(ε0 n √N C²)}*", "Thm 2.2 with C = √R"),
        "sdp-upper": ("φD/√(Nn) + (β^{1/4} L D^{3/2} √d/(ε n N))^{4/5}", "eq. (10), Thm 5.2"),
    }),
    "noniid-strongly-convex": ("non-i.i.d. SCO, smooth strongly convex", {
        "isrl-upper": ("φ²/(μnN) + √κ (L²/μ) d/(ε0² n² N)", "eq. (7), Thm 3.1"),
        "isrl-lower": ("φ²/(μnN) + LD min{1, d/(ε0² n² N C⁴)}*", "Thm 2.2 with C = √R"),
        "sdp-upper": ("φ²/(μnN) + √κ (L²/μ) d/(ε² n² N²)", "eq. (11), Thm 5.2"),
    }),
    "erm-convex": ("federated ERM, convex", {
        "isrl-upper": ("LD √d/(ε0 n √N)", "eq. (8), Thm 4.1"),
        "isrl-lower": ("LD min{1, √d/(ε0 n √N)}", "Thm F.3"),
        "sdp-upper": ("—", "not stated"),
    }),
    "erm-strongly-convex": ("federated ERM, strongly convex", {
        "isrl-upper": ("(L²/μ) d/(ε0² n² N)", "eq. (9), Thm 4.1"),
        "isrl-lower": ("LD min{1, d/(ε0² n² N)}", "Thm F.3"),
        "sdp-upper": ("—", "not stated"),
    }),
}


def _problem(problem: Problem) -> Problem:
    if not isinstance(problem, Problem):
        raise ValueError(f"problem must be a rates.Problem, got {type(problem).__name__}")
    return problem


def rate_terms(setting: str, bound: str, problem: Problem) -> dict[str, float]:
    """``{"statistical": ..., "privacy": ...}`` of one entry of Fig. 3 (Lowy & Razaviyayn, ICLR 2023).

    ``setting`` one of :data:`SETTINGS`, ``bound`` one of :data:`BOUNDS` (ISRL-DP upper, ISRL-DP lower,
    shuffle-DP upper); M = N and logarithms omitted, as in Fig. 3.  The federated ERM rows have no
    shuffle-DP entry (ValueError).
    """
    check_choice("setting", setting, SETTINGS)
    check_choice("bound", bound, BOUNDS)
    stat, priv = _RATES[setting](_problem(problem), bound)
    return {"statistical": stat, "privacy": priv}


def rate(setting: str, bound: str, problem: Problem) -> float:
    """The bound of Fig. 3 (sum of its terms, :func:`rate_terms`) for ``problem``."""
    return float(sum(rate_terms(setting, bound, problem).values()))


def _scaled(problem: Problem, variable: str, factor: float) -> Problem:
    check_choice("variable", variable, VARIABLES)
    return replace(problem, **{variable: getattr(problem, variable) * factor})


def exponent(setting: str, bound: str, variable: str, problem: Problem, *, term: str = "privacy",
             factor: float = 2.0) -> float:
    """Log-log slope d ln(term)/d ln(variable) of one Fig. 3 entry at ``problem`` (a finite difference over
    ``variable`` × ``factor``, factor > 0 and ≠ 1).  For a power law it is the exponent the formula implies,
    e.g. −1 in n for the privacy term of eq. (4), −4/5 for eq. (6)."""
    check_choice("term", term, TERMS)
    factor = check_positive("factor", factor)
    if factor == 1.0:
        raise ValueError("factor must be a positive number other than 1")
    low = rate_terms(setting, bound, problem)[term]
    high = rate_terms(setting, bound, _scaled(problem, variable, factor))[term]
    if not (low > 0 and high > 0):
        raise ValueError(f"term {term!r} of {setting}/{bound} is 0 at this problem: no exponent")
    return math.log(high / low) / math.log(factor)


def ratio_exponent(first: tuple[str, str], second: tuple[str, str], variable: str, problem: Problem, *,
                   factor: float = 2.0) -> float:
    """Log-log slope in ``variable`` of privacy term of ``first`` / privacy term of ``second`` ((setting, bound)
    pairs).  §3 after Thm 3.1: the gap between eq. (6) and eq. (4), and eq. (7) vs eq. (5) "up to √κ"."""
    return (exponent(*first, variable, problem, factor=factor)
            - exponent(*second, variable, problem, factor=factor))


def one_pass_rounds(problem: Problem) -> float:
    """R = n/K of One-Pass Accelerated MB-SGD with Thm E.1's convex K = (L/(βD))^{2/5} n^{3/5} d^{1/5}/(ε0^{2/5}
    M^{1/5}) (M = N, ln(1/δ0) omitted): the C² = R of Fig. 3's caption."""
    p = _problem(problem)
    k = ((p.lipschitz / (p.beta * p.diameter)) ** 0.4 * p.n**0.6 * p.dim**0.2
         / (p.epsilon**0.4 * p.num_silos**0.2))
    return p.n / k


def privacy_for_free_dimension(setting: str, problem: Problem) -> float:
    """The d at which the ISRL-DP upper bound's privacy term equals its statistical term (bisection in ln d).

    §1: the ISRL-DP rates "nearly match the optimal non-private rates if d ≲ nε0²" ("privacy for free"); for
    eqs. (4) and (5) the crossing is d = ε0² n.  Only the i.i.d. settings have both terms in the same constants.
    """
    check_choice("setting", setting, ("iid-convex", "iid-strongly-convex"))
    p = _problem(problem)

    def excess(log_d: float) -> float:
        terms = rate_terms(setting, "isrl-upper", replace(p, dim=math.exp(log_d)))
        return math.log(terms["privacy"]) - math.log(terms["statistical"])

    low, high = -60.0, 60.0
    if not excess(low) < 0 < excess(high):
        raise ValueError("no crossing of the two terms for d in [e^-60, e^60] at this problem")
    for _ in range(200):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if excess(mid) < 0 else (low, mid)
    return math.exp(0.5 * (low + high))


def fig3_table() -> pd.DataFrame:
    """Fig. 3 as a table: one row per setting, the ISRL-DP upper and lower bounds and the shuffle-DP upper bound
    (M = N, logs omitted, C² := (ε0 n √N/√d)^{2/5}; * Thm 2.2 applies to the non-i.i.d. algorithm only if
    ε0 = O(1/n) or N = O(1)), each with the theorem that states it."""
    rows = []
    for setting, (label, entries) in ROWS.items():
        row = {"setting": label, "key": setting}
        for bound in BOUNDS:
            formula, where = entries[bound]
            row[bound] = formula
            row[f"{bound} (source)"] = where
        rows.append(row)
    return pd.DataFrame(rows)


REFERENCE_PROBLEM = Problem(n=10_000, num_silos=25, dim=50, epsilon=1.0)
"""Where :func:`claim_values` measures slopes: a power-law regime with x = √d/(ε0 n √N) < 1 (every min{1, ·} of the
lower bounds at its second argument)."""

_EXPONENT_ROWS = (("iid-convex", "isrl-upper"), ("iid-strongly-convex", "isrl-upper"), ("noniid-convex", "isrl-upper"),
                  ("noniid-strongly-convex", "isrl-upper"), ("erm-convex", "isrl-upper"),
                  ("erm-strongly-convex", "isrl-upper"), ("iid-convex", "sdp-upper"),
                  ("iid-strongly-convex", "sdp-upper"), ("noniid-convex", "sdp-upper"),
                  ("noniid-strongly-convex", "sdp-upper"))


def claim_values(problem: Problem = REFERENCE_PROBLEM) -> dict[str, tuple[float, str]]:
    """``{claim key: (our value, note)}`` for the ``fig3.*`` claims of :mod:`dpcore.papers.p001_isrl.claims`,
    measured on the rate functions of this module at ``problem`` (which must have x = √d/(ε0 n √N) < 1)."""
    p = _problem(problem)
    if not math.sqrt(p.dim) / (p.epsilon * p.n * math.sqrt(p.num_silos)) < 1:
        raise ValueError("problem must have √d/(ε0 n √N) < 1 (the non-trivial regime of Fig. 3)")
    where = f"at n = {p.n:g}, N = {p.num_silos:g}, d = {p.dim:g}, ε0 = {p.epsilon:g}"
    values: dict[str, tuple[float, str]] = {}
    for setting, bound in _EXPONENT_ROWS:
        for variable, name in (("n", "n"), ("num_silos", "N")):
            key = f"fig3.{setting}.{bound}.privacy_exponent.{name}"
            values[key] = (exponent(setting, bound, variable, p), where)
    doubled = replace(p, epsilon=2 * p.epsilon)
    values["fig3.caption.c2_exponent"] = (math.log(one_pass_rounds(doubled) / one_pass_rounds(p)) / math.log(2.0),
                                          f"slope of n/K in ε0, {where}")
    values["fig3.noniid_vs_iid.sqrt_kappa"] = (
        ratio_exponent(("noniid-strongly-convex", "isrl-upper"), ("iid-strongly-convex", "isrl-upper"), "beta", p),
        where)
    values["fig3.noniid_vs_iid.gap_exponent"] = (
        -ratio_exponent(("noniid-convex", "isrl-upper"), ("iid-convex", "isrl-upper"), "n", p),
        f"(6)/(4) grows as n^{{1/5}} ∝ x^(−1/5), {where}")
    crossing = privacy_for_free_dimension("iid-convex", p)
    values["fig3.iid_convex.privacy_for_free"] = (crossing / (p.epsilon**2 * p.n),
                                                  f"crossing d = {crossing:.6g}, {where}")
    tight = replace(p, lipschitz=p.mu * p.diameter)
    for setting in ("iid-convex", "iid-strongly-convex", "erm-convex", "erm-strongly-convex"):
        upper = rate_terms(setting, "isrl-upper", tight)["privacy"]
        lower = rate_terms(setting, "isrl-lower", tight)["privacy"]
        values[f"fig3.{setting}.upper_over_lower"] = (upper / lower, where + ", L = μD")
    return values
