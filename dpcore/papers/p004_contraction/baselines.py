"""Composition baselines for paper 004's Algorithm 1, on the same parameters and (where valid)
the same replace-one neighbouring relation (baselines B1–B4; the paper compares Theorem 2 with
none, so these are built here: Sec. I and footnote 1 name PABI [16] and the RDP route [18] as related work).

Throughout a = 2L/(√m σ) (replace-one sensitivity of the averaged update over its noise std) and
z = σ√m/L (noise std of the gradient *sum* over the per-record bound), so a = 2/z; T = n/m.

* B1 :func:`parallel_delta` -- release every iterate; batches are disjoint, so parallel composition
  leaves one Gaussian mechanism: δ = θ_ε(a) exactly (Lemma 1).  Valid for Algorithm 1.
* B2 :func:`gaussian_rdp_delta` -- B1 through RDP (α a²/2) and an RDP→DP conversion: looser,
  the point of the paper's footnote 1.  Valid.
* B3a :func:`poisson_rdp_delta` with ``relation="add_remove"`` -- the standard DP-SGD accountant
  (Poisson rate q, T = 1/q steps, Mironov–Talwar–Zhang RDP).  *Not* valid for a one-pass shuffled
  partition, nor for replace-one: shown dashed, for orientation only.
* B3b the same with ``relation="replace_one"`` -- numerical RDP of the pair
  qN(−1, z²) + (1−q)N(0, z²) vs qN(1, z²) + (1−q)N(0, z²); :func:`poisson_pld_epsilon` is its
  tight PLD version (dp_accounting).  Not valid for Algorithm 1 either (Poisson ≠ one pass).
* B3c :func:`wor_rdp_epsilon` -- fixed-size batches without replacement, i.i.d. across steps
  (Wang–Balle–Kasiviswanathan, dp_accounting).  Not valid (records may repeat).
* B4 :func:`pabi_delta` -- privacy amplification by iteration (Feldman et al. 2018), last iterate:
  a record with k remaining noisy steps has RDP α a²/(2k); δ = (1/T) Σ_{k=1}^{T} δ_k(ε) over the
  secret position (T = ⌊n/m⌋).  Valid under the same convexity/smoothness conditions; does not depend on ρ.

>>> float(f"{parallel_delta(1.0, batch_size=10, sigma=1.5):.4e}")
0.0020215
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import dp_accounting
import numpy as np
from dp_accounting import pld, rdp
from scipy.special import logsumexp

from dpcore.accounting.calibrate import SIGMA_MAX, SIGMA_MIN
from dpcore.accounting.rdp import rdp_to_epsilon, subsampled_gaussian_rdp
from dpcore.papers.p004_contraction.contraction import sensitivity_ratio, theta
from dpcore.validation import (
    check_choice,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_real_array,
)

__all__ = [
    "BASELINE_ORDERS",
    "RELATIONS",
    "rdp_to_delta",
    "parallel_delta",
    "gaussian_rdp_delta",
    "replace_one_poisson_rdp",
    "poisson_rdp",
    "poisson_rdp_delta",
    "poisson_rdp_epsilon",
    "poisson_pld_epsilon",
    "gaussian_pld_delta",
    "wor_rdp_epsilon",
    "pabi_delta",
    "METHODS",
    "baseline_deltas",
    "baseline_table",
]

#: RDP orders of the baselines: {1.05, …, 1.95} ∪ {2, …, 64} ∪ {80, 96, 112, 128, 160, 192, 224, 256}.
BASELINE_ORDERS: tuple[float, ...] = (
    tuple(round(1 + 0.05 * i, 2) for i in range(1, 20))
    + tuple(float(a) for a in range(2, 65))
    + (80.0, 96.0, 112.0, 128.0, 160.0, 192.0, 224.0, 256.0)
)
RELATIONS = ("add_remove", "replace_one")
CONVERSIONS = ("balle", "mironov")
#: Range of the noise multiplier z = σ√m/L the RDP baselines accept (the library accountants' range) and the
#: smallest z of the dp_accounting PLD baselines (their cost grows like 1/z²: z = 2 takes about a second).
Z_RANGE = (SIGMA_MIN, SIGMA_MAX)
Z_MIN_PLD = 2.0
#: Most rounds T = n/m of the composition baselines (PABI sums T conversions; the PLD composes T times).
MAX_ROUNDS = 10**5
MAX_PLD_ROUNDS = 10**4
MAX_ORDER = 1e4


def _eps(epsilon) -> np.ndarray:
    return check_real_array("epsilon", epsilon, low=0.0)


def _orders(orders, name: str = "orders") -> np.ndarray:
    return check_real_array(name, orders, low=1.0, low_open=True, high=MAX_ORDER, ndim=1)


def _out(x: np.ndarray):
    return float(x) if np.ndim(x) == 0 else x


def _z(batch_size: float, sigma: float, lipschitz: float, low: float = Z_RANGE[0]) -> float:
    """z = σ√m/L, refused outside [``low``, the top of :data:`Z_RANGE`] naming the three parameters."""
    m = check_positive("batch_size", batch_size)
    sigma = check_positive("sigma", sigma)
    lipschitz = check_positive("lipschitz", lipschitz)
    with np.errstate(over="ignore"):
        z = float(np.float64(sigma) * math.sqrt(m) / np.float64(lipschitz))
    if not low <= z <= Z_RANGE[1]:
        raise ValueError(f"the noise multiplier z = sigma·sqrt(batch_size)/lipschitz must be in [{low:g}, "
                         f"{Z_RANGE[1]:g}] here, got z = {z:g} (sigma={sigma:g}, batch_size={m:g}, "
                         f"lipschitz={lipschitz:g})")  # fmt: skip
    return z


def _rounds(n: int, batch_size: int, limit: int | None = None) -> tuple[int, int]:
    n = check_positive_int("n", n)
    m = check_positive_int("batch_size", batch_size)
    if m > n:
        raise ValueError(f"batch_size must be in [1, n={n}], got {m}")
    if limit is not None and n // m > limit:
        raise ValueError(f"n must be at most {limit}·batch_size here (T = n/m <= {limit} rounds), got n={n}, "
                         f"batch_size={m}")  # fmt: skip
    return n, m


def rdp_to_delta(orders: Sequence[float], rdp_values: Sequence[float], epsilon, *, conversion: str = "balle"):
    """δ(ε) from an RDP curve, the dual of :func:`dpcore.accounting.rdp.rdp_to_epsilon`.

    ``"balle"`` (Balle et al. 2020 / Canonne–Kamath–Steinke, what dp_accounting uses without its KL
    shortcut): δ = min_α exp((α−1)(RDP(α) − ε + log(1 − 1/α)) − log α);
    ``"mironov"``: δ = min_α exp((α−1)(RDP(α) − ε)).  Capped at 1.  Vectorised over ε.
    """
    check_choice("conversion", conversion, CONVERSIONS)
    a = check_real_array("orders", orders, low=1.0, low_open=True, allow_inf=False, ndim=1)
    r = check_real_array("rdp_values", rdp_values, low=0.0, allow_inf=True, ndim=1)
    if a.shape != r.shape:
        raise ValueError(f"orders and rdp_values must have the same length, got {a.size} and {r.size}")
    e = _eps(epsilon)
    with np.errstate(over="ignore", invalid="ignore"):
        x = (a - 1)[None, :] * (r[None, :] - e.reshape(-1, 1))
        if conversion == "balle":
            x = x + (a - 1) * np.log1p(-1 / a) - np.log(a)
        log_delta = np.nanmin(np.where(np.isnan(x), np.inf, x), axis=1)
    return _out(np.exp(np.minimum(log_delta, 0.0)).reshape(e.shape))


def parallel_delta(epsilon, *, batch_size: float, sigma: float, lipschitz: float = 1.0):
    """B1: every iterate released, disjoint batches → one Gaussian mechanism, δ = θ_ε(a)."""
    return theta(_eps(epsilon), sensitivity_ratio(batch_size=batch_size, sigma=sigma, lipschitz=lipschitz))


def gaussian_rdp_delta(
    epsilon,
    *,
    batch_size: float,
    sigma: float,
    lipschitz: float = 1.0,
    orders: Sequence[float] = BASELINE_ORDERS,
    conversion: str = "balle",
):
    """B2: B1 through RDP (α a²/2) and an RDP→DP conversion (footnote 1: looser than θ_ε(a))."""
    e = _eps(epsilon)
    a = sensitivity_ratio(batch_size=batch_size, sigma=sigma, lipschitz=lipschitz)
    orders = _orders(orders)
    with np.errstate(over="ignore"):
        return rdp_to_delta(orders, orders * a * a / 2, e, conversion=conversion)


def replace_one_poisson_rdp(orders: Sequence[float], *, sample_rate: float, noise_multiplier: float) -> np.ndarray:
    """RDP of one Poisson-subsampled Gaussian step under replace-one (sensitivity 1 per record):
    D_α(qN(−1, z²) + (1−q)N(0, z²) ‖ qN(1, z²) + (1−q)N(0, z²)) by a Riemann sum (the pair is
    symmetric, so one direction suffices).  Grid: spacing z/100 on ±[(2α_max + 1) + 40z], at most
    200,001 points, so z must be at least (2α_max + 1)/4960 (spacing ≤ z/20) and at most 1e6."""
    q = check_positive("sample_rate", sample_rate)
    if q > 1:
        raise ValueError(f"sample_rate must be in (0, 1], got {q}")
    z = check_positive("noise_multiplier", noise_multiplier)
    a = _orders(orders)
    z_min = (2 * a.max() + 1) / 4960
    if not z_min <= z <= Z_RANGE[1]:
        raise ValueError(f"noise_multiplier must be in [(2·max(orders) + 1)/4960 = {z_min:.4g}, {Z_RANGE[1]:g}] "
                         f"for the integration grid, got {z:g}")  # fmt: skip
    half = 2 * a.max() + 1 + 40 * z
    points = min(200_001, int(2 * half / (z / 100)) + 1)
    x = np.linspace(-half, half, points)
    dx = x[1] - x[0]

    def log_normal(mean: float) -> np.ndarray:
        return -0.5 * ((x - mean) / z) ** 2 - math.log(z) - 0.5 * math.log(2 * math.pi)

    base = math.log1p(-q) + log_normal(0.0) if q < 1 else np.full_like(x, -np.inf)
    lf_p = np.logaddexp(math.log(q) + log_normal(-1.0), base)
    lf_q = np.logaddexp(math.log(q) + log_normal(1.0), base)
    values = logsumexp(a[:, None] * lf_p[None, :] + (1 - a)[:, None] * lf_q[None, :], axis=1) + math.log(dx)
    return np.maximum(values, 0.0) / (a - 1)


def poisson_rdp(
    *,
    n: int,
    batch_size: int,
    sigma: float,
    lipschitz: float = 1.0,
    relation: str = "add_remove",
    orders: Sequence[float] = BASELINE_ORDERS,
) -> tuple[np.ndarray, np.ndarray]:
    """(orders, RDP) of B3a/B3b: T = n/m (real) Poisson-subsampled Gaussian steps, rate q = m/n,
    noise multiplier z = σ√m/L.  ``add_remove`` uses integer orders only (the note's table);
    ``replace_one`` the numerical pair of :func:`replace_one_poisson_rdp`.  RDP is non-negative: the
    round-off of a per-step value near 0 (q tiny) is clipped at 0."""
    n, m = _rounds(n, batch_size)
    check_choice("relation", relation, RELATIONS)
    z = _z(m, sigma, lipschitz)
    q = m / n
    a = _orders(orders)
    if relation == "add_remove":
        a = a[a == np.round(a)]
        if a.size == 0:
            raise ValueError("orders must contain integers for relation='add_remove'")
        per_step = subsampled_gaussian_rdp(a, sample_rate=q, noise_multiplier=z)
    else:
        per_step = replace_one_poisson_rdp(a, sample_rate=q, noise_multiplier=z)
    return a, np.maximum(per_step, 0.0) * (n / m)


def poisson_rdp_delta(
    epsilon,
    *,
    n: int,
    batch_size: int,
    sigma: float,
    lipschitz: float = 1.0,
    relation: str = "add_remove",
    orders: Sequence[float] = BASELINE_ORDERS,
    conversion: str = "balle",
):
    """δ(ε) of B3a/B3b (see :func:`poisson_rdp`).  Not a valid bound for Algorithm 1."""
    _eps(epsilon)
    a, values = poisson_rdp(
        n=n, batch_size=batch_size, sigma=sigma, lipschitz=lipschitz, relation=relation, orders=orders
    )
    return rdp_to_delta(a, values, epsilon, conversion=conversion)


def poisson_rdp_epsilon(
    delta: float,
    *,
    n: int,
    batch_size: int,
    sigma: float,
    lipschitz: float = 1.0,
    relation: str = "add_remove",
    orders: Sequence[float] = BASELINE_ORDERS,
    conversion: str = "balle",
) -> float:
    """ε at ``delta`` of B3a/B3b (see :func:`poisson_rdp`)."""
    a, values = poisson_rdp(
        n=n, batch_size=batch_size, sigma=sigma, lipschitz=lipschitz, relation=relation, orders=orders
    )
    return rdp_to_epsilon(a, values, delta, conversion=conversion)


def poisson_pld_epsilon(
    delta: float, *, n: int, batch_size: int, sigma: float, lipschitz: float = 1.0, relation: str = "replace_one"
) -> float:
    """ε at ``delta`` of T = n/m Poisson-subsampled Gaussian steps by dp_accounting's PLD accountant
    (the tight version of B3a/B3b; T must be an integer, at most :data:`MAX_PLD_ROUNDS`, and z = σ√m/L at
    least :data:`Z_MIN_PLD`).  ∞ when ``delta`` is below the mass the pessimistic PLD puts at infinite loss
    (dp_accounting's truncation): no finite ε is certified there."""
    n, m = _rounds(n, batch_size, MAX_PLD_ROUNDS)
    check_choice("relation", relation, RELATIONS)
    delta = check_open_unit("delta", delta)
    if n % m:
        raise ValueError(f"batch_size must divide n for the PLD accountant, got n={n}, batch_size={m}")
    neighbours = (
        dp_accounting.NeighboringRelation.REPLACE_ONE
        if relation == "replace_one"
        else dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    accountant = pld.PLDAccountant(neighboring_relation=neighbours, value_discretization_interval=1e-4)
    z = _z(m, sigma, lipschitz, Z_MIN_PLD)
    event = dp_accounting.PoissonSampledDpEvent(m / n, dp_accounting.GaussianDpEvent(z))
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, n // m))
    return float(accountant.get_epsilon(delta))


def gaussian_pld_delta(epsilon: float, *, batch_size: float, sigma: float, lipschitz: float = 1.0) -> float:
    """δ(ε) of one Gaussian mechanism with replace-one sensitivity 2L and noise σ√m (the exact
    B1) by dp_accounting's PLD accountant: an independent check of Lemma 1's θ_ε(a) (z = σ√m/L at least
    :data:`Z_MIN_PLD`; capped at 1, which the discretisation can exceed by round-off)."""
    eps = float(check_real_array("epsilon", epsilon, low=0.0, ndim=0))
    z = _z(batch_size, sigma, lipschitz, Z_MIN_PLD)
    accountant = pld.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-4
    )
    accountant.compose(dp_accounting.GaussianDpEvent(z))
    return min(1.0, float(accountant.get_delta(eps)))


def wor_rdp_epsilon(
    delta: float,
    *,
    n: int,
    batch_size: int,
    sigma: float,
    lipschitz: float = 1.0,
    orders: Sequence[float] = tuple(float(a) for a in range(2, 65)),
) -> float:
    """B3c: ε at ``delta`` of T = n/m steps of fixed-size sampling without replacement, i.i.d.
    across steps, replace-one (Wang–Balle–Kasiviswanathan 2019, dp_accounting); the noise
    multiplier is taken relative to the full replace-one sensitivity 2L, i.e. z/2 (T at most
    :data:`MAX_ROUNDS`; ``orders`` integers in [2, 256], the range of dp_accounting's bound)."""
    n, m = _rounds(n, batch_size, MAX_ROUNDS)
    delta = check_open_unit("delta", delta)
    a = check_real_array("orders", orders, low=2.0, high=256.0, ndim=1)
    if np.any(a != np.round(a)):
        raise ValueError(f"orders must be integers in [2, 256], got {orders!r}")
    if n % m:
        raise ValueError(f"batch_size must divide n, got n={n}, batch_size={m}")
    z = _z(m, sigma, lipschitz, 2 * Z_RANGE[0])
    accountant = rdp.RdpAccountant(
        orders=[float(x) for x in a], neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    event = dp_accounting.SampledWithoutReplacementDpEvent(n, m, dp_accounting.GaussianDpEvent(z / 2))
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, n // m))
    return float(accountant.get_epsilon(delta))


def pabi_delta(
    epsilon,
    *,
    n: int,
    batch_size: int,
    sigma: float,
    lipschitz: float = 1.0,
    orders: Sequence[float] = BASELINE_ORDERS,
    conversion: str = "balle",
):
    """B4: privacy amplification by iteration for the last iterate, averaged over the secret position.

    A record with k = T − t + 1 remaining noisy contractive steps has RDP α a²/(2k) (Feldman et al.
    2018, Thm 22 with equal noise); each k is converted separately and
    δ = (1/T) Σ_{k=1}^{T} δ_k(ε) over T = ⌊n/m⌋ full rounds with a uniform secret position (convexity,
    as in the paper's (15)); this is q Σ_k δ_k when m divides n, and the note's T = 3 at n = 100, m = 30
    (T at most :data:`MAX_ROUNDS`)."""
    e = _eps(epsilon)
    n, m = _rounds(n, batch_size, MAX_ROUNDS)
    a = sensitivity_ratio(batch_size=m, sigma=sigma, lipschitz=lipschitz)
    orders = _orders(orders)
    check_choice("conversion", conversion, CONVERSIONS)
    rounds = n // m
    total = np.zeros(e.shape)
    with np.errstate(over="ignore"):
        for k in range(1, rounds + 1):
            total = total + np.asarray(rdp_to_delta(orders, orders * a * a / (2 * k), e, conversion=conversion))
    return _out(np.minimum(1.0, total / rounds))


#: Labels of the methods compared in :func:`baseline_deltas` / :func:`baseline_table`; ``valid`` says
#: whether the bound applies to Algorithm 1 (one pass over a secret partition, replace-one).
METHODS: dict[str, tuple[str, bool]] = {
    "B0": ("Theorem 2: contraction, last iterate", True),
    "B1": ("release all iterates: parallel composition (exact)", True),
    "B2": ("B1 through RDP -> DP", True),
    "B3a": ("Poisson RDP x T, add/remove (standard DP-SGD)", False),
    "B3b": ("Poisson RDP x T, replace-one", False),
    "B4": ("PABI, last iterate", True),
}


def baseline_deltas(
    epsilon,
    *,
    n: int,
    batch_size: int,
    eta: float,
    sigma: float,
    lipschitz: float = 1.0,
    radius: float = 1.0,
) -> dict[str, np.ndarray]:
    """δ(ε) of Theorem 2 (B0) and of every baseline B1–B4 on the same parameters, keyed as :data:`METHODS`."""
    from dpcore.papers.p004_contraction.contraction import last_iterate_delta

    e = np.atleast_1d(_eps(epsilon))
    _rounds(n, batch_size, MAX_ROUNDS)
    kw = dict(batch_size=batch_size, sigma=sigma, lipschitz=lipschitz)
    out = {
        "B0": last_iterate_delta(e, n=n, eta=eta, radius=radius, **kw),
        "B1": parallel_delta(e, **kw),
        "B2": gaussian_rdp_delta(e, **kw),
    }
    for key, relation in (("B3a", "add_remove"), ("B3b", "replace_one")):
        orders, values = poisson_rdp(n=n, relation=relation, **kw)
        out[key] = rdp_to_delta(orders, values, e)
    out["B4"] = pabi_delta(e, n=n, **kw)
    return {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in out.items()}


def baseline_table(
    *,
    n: int,
    batch_size: int,
    eta: float,
    sigma: float,
    lipschitz: float = 1.0,
    radius: float = 1.0,
    deltas: Sequence[float] = (1e-3, 1e-5),
    epsilons: Sequence[float] = (0.5, 1.0, 2.0),
) -> list[dict]:
    """One row per method: ε at each δ (brentq on log δ(ε)) and δ at each ε."""
    from dpcore.papers.p004_contraction.contraction import epsilon_for_delta, last_iterate_delta

    _rounds(n, batch_size, MAX_ROUNDS)
    deltas = check_real_array("deltas", deltas, low=0.0, high=1.0, low_open=True, high_open=True, ndim=1).tolist()
    epsilons = check_real_array("epsilons", epsilons, low=0.0, ndim=1).tolist()
    kw = dict(batch_size=batch_size, sigma=sigma, lipschitz=lipschitz)
    rdps = {key: poisson_rdp(n=n, relation=rel, **kw) for key, rel in (("B3a", "add_remove"), ("B3b", "replace_one"))}
    functions = {
        "B0": lambda e: last_iterate_delta(e, n=n, eta=eta, radius=radius, **kw),
        "B1": lambda e: parallel_delta(e, **kw),
        "B2": lambda e: gaussian_rdp_delta(e, **kw),
        "B3a": lambda e: rdp_to_delta(*rdps["B3a"], e),
        "B3b": lambda e: rdp_to_delta(*rdps["B3b"], e),
        "B4": lambda e: pabi_delta(e, n=n, **kw),
    }
    rows = []
    for key, fn in functions.items():
        label, valid = METHODS[key]
        row = {"method": key, "description": label, "valid for Algorithm 1": valid}
        for d in deltas:
            row[f"eps@{d:g}"] = epsilon_for_delta(fn, d)
        values = np.atleast_1d(fn(np.asarray(epsilons, dtype=float)))
        for e, v in zip(epsilons, values, strict=True):
            row[f"delta({e:g})"] = float(v)
        rows.append(row)
    return rows
