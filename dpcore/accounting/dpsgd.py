"""Standard DP-SGD accounting: the subsampled Gaussian mechanism, composed over the steps.

One step of DP-SGD with sampling rate q and noise multiplier σ (noise std σ·C on a sum of per-example
gradients clipped to norm C) is the subsampled Gaussian mechanism of Abadi et al. (CCS 2016); T steps are
its T-fold composition.  Methods (:data:`METHODS`; :data:`RIGOROUS` are upper bounds, :data:`APPROXIMATE`
are not):

* ``"pld"``         -- privacy-loss distributions (Koskela et al. 2020; Doroshenko et al. 2022), computed by
                       :mod:`dpcore.accounting.pld` (pessimistic connect-the-dots discretisation 1e-4, checked
                       against dp_accounting's ``PLDAccountant``): tight up to the grid, never below it.
* ``"rdp"``         -- Rényi DP (Mironov 2017; Mironov, Talwar, Zhang 2019) with the conversion of
                       Balle et al. 2020, Thm 21.
* ``"rdp-mironov"`` -- the same RDP curve with Mironov 2017, Prop. 3: ε = min_α RDP(α) + log(1/δ)/(α − 1).
                       Every legacy published number (Abadi's moments accountant, TF Privacy, Opacus < 1.0)
                       uses it.
* ``"gdp"``         -- APPROXIMATE: the Gaussian-DP central limit theorem (Bu, Dong, Long, Su 2020, Thm 5;
                       Dong, Roth, Su 2022, Cor. 5.4); asymptotic, can under-estimate ε at finite T.

Sampling (:mod:`dpcore.accounting.events`): ``"poisson"`` (add/remove-one; every method) or ``"fixed"``
(fixed-size batches without replacement, replace-one neighbours; ``"rdp"``/``"rdp-mironov"`` through
Wang, Balle, Kasiviswanathan 2019, which needs ``dataset_size``, and the approximate ``"gdp"``).
``"shuffle"`` is refused: none of these methods accounts for shuffled disjoint batches
(:mod:`dpcore.accounting.shuffled` analyses them under a stronger adversary).

>>> round(dpsgd_epsilon(4.0, sample_rate=0.01, steps=10000, delta=1e-5, method="rdp-mironov"), 3)  # Abadi 2016
1.259
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dpcore.accounting import fdp, gaussian
from dpcore.accounting import pld as pld_accountant
from dpcore.accounting.calibrate import smallest_sigma
from dpcore.accounting.events import SAMPLINGS, check_sampling
from dpcore.accounting.rdp import RDP_ORDERS, rdp_curve, rdp_to_epsilon
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int, check_rate

__all__ = [
    "METHODS",
    "RIGOROUS",
    "APPROXIMATE",
    "SAMPLINGS",
    "RDP_ORDERS",
    "PLD_GRID",
    "resolve_steps",
    "method_label",
    "dpsgd_epsilon",
    "dpsgd_noise_multiplier",
    "epsilon_curve",
]

METHODS = ("pld", "rdp", "rdp-mironov", "gdp")
RIGOROUS = ("pld", "rdp", "rdp-mironov")
APPROXIMATE = ("gdp",)
PLD_GRID = pld_accountant.GRID  # the PLD discretisation interval (dpcore.accounting.pld)
_SUPPORTED = {"poisson": METHODS, "fixed": ("rdp", "rdp-mironov", "gdp"), "shuffle": ()}


def method_label(method: str) -> str:
    """``"rigorous"`` or ``"approximate"`` for a method of :data:`METHODS`."""
    check_choice("method", method, METHODS)
    return "approximate" if method in APPROXIMATE else "rigorous"


def resolve_steps(sample_rate: float, steps: int | None, epochs: float | None) -> int:
    """The number of steps: ``steps`` itself, or ⌈epochs / sample_rate⌉ when ``epochs`` is given.

    Exactly one of the two must be given; steps = 0 is allowed (ε = 0).
    """
    q = check_rate("sample_rate", sample_rate)
    if (steps is None) == (epochs is None):
        raise ValueError("give exactly one of steps (an integer >= 0) and epochs (a number >= 0)")
    if steps is not None:
        return check_positive_int("steps", steps, minimum=0)
    e = epochs
    if isinstance(e, bool) or not isinstance(e, (int, float)) or not math.isfinite(e) or e < 0:
        raise ValueError(f"epochs must be a finite number in [0, inf), got {epochs!r}")
    return math.ceil(e / q - 1e-9)


def _check_sampling(method: str, sampling: str) -> None:
    check_choice("method", method, METHODS)
    check_sampling(sampling)
    if method not in _SUPPORTED[sampling]:
        if sampling == "shuffle":
            raise ValueError(
                f"sampling='shuffle' cannot be accounted for by method={method!r}: it analyses subsampling only; "
                "use dpcore.accounting.shuffled for shuffled batches"
            )
        raise ValueError(
            f"sampling={sampling!r} is supported by method in {_SUPPORTED[sampling]}, not method={method!r}"
        )


def _pld_epsilon(sigma: float, q: float, steps: int, delta: float) -> float:
    return pld_accountant.pld_epsilon(sigma, sample_rate=q, steps=steps, delta=delta)


def _fixed_sizes(sample_rate: float, dataset_size: int | None) -> tuple[int, int]:
    if dataset_size is None:
        raise ValueError("sampling='fixed' needs dataset_size (the batch is sample_rate·dataset_size records)")
    n = check_positive_int("dataset_size", dataset_size)
    b = round(sample_rate * n)
    if b < 1 or not math.isclose(b, sample_rate * n, rel_tol=1e-9, abs_tol=1e-9):
        raise ValueError(f"sample_rate·dataset_size must be a whole batch size, got {sample_rate}·{n}")
    return n, b


def dpsgd_epsilon(
    noise_multiplier: float,
    *,
    sample_rate: float,
    steps: int | None = None,
    epochs: float | None = None,
    delta: float,
    method: str = "pld",
    sampling: str = "poisson",
    dataset_size: int | None = None,
) -> float:
    """ε at ``delta`` of DP-SGD steps at noise multiplier σ and sampling rate q.

    Give ``steps`` or ``epochs`` (then steps = ⌈epochs / sample_rate⌉).  See the module docstring for the
    methods and samplings; ``sampling="fixed"`` with an RDP method needs ``dataset_size``.  Raises
    ``ValueError`` for bad input and for a sampling the method cannot account for.
    """
    sigma = check_positive("noise_multiplier", noise_multiplier)
    q = check_rate("sample_rate", sample_rate)
    steps = resolve_steps(q, steps, epochs)
    delta = check_open_unit("delta", delta)
    _check_sampling(method, sampling)
    if steps == 0:
        return 0.0
    if method == "gdp":
        return gaussian.epsilon_from_mu(fdp.clt_mu(sigma, q, steps, sampling), delta)
    if method == "pld":
        return _pld_epsilon(sigma, q, steps, delta)
    conversion = "mironov" if method == "rdp-mironov" else "balle"
    if sampling == "fixed":
        n, b = _fixed_sizes(q, dataset_size)
        curve = rdp_curve(sigma, steps=steps, sampling="fixed", dataset_size=n, batch_size=b)
    else:
        curve = rdp_curve(sigma, sample_rate=q, steps=steps)
    return rdp_to_epsilon(RDP_ORDERS, curve, delta, conversion=conversion)


def dpsgd_noise_multiplier(
    target_epsilon: float,
    *,
    sample_rate: float,
    steps: int | None = None,
    epochs: float | None = None,
    delta: float,
    method: str = "pld",
    sampling: str = "poisson",
    dataset_size: int | None = None,
    rtol: float = 1e-3,
) -> float:
    """Smallest σ (to ``rtol`` relative) whose ε does not exceed ``target_epsilon``.

    Give ``steps`` or ``epochs`` (steps = ⌈epochs / sample_rate⌉).  One calibrator
    (:func:`dpcore.accounting.calibrate.smallest_sigma`) keeps the returned σ feasible:
    ``dpsgd_epsilon(σ, …) <= target_epsilon`` always (calibration never overshoots).
    """
    target = check_positive("target_epsilon", target_epsilon)
    q = check_rate("sample_rate", sample_rate)
    steps = resolve_steps(q, steps, epochs)
    check_positive_int("steps", steps)
    delta = check_open_unit("delta", delta)
    rtol = check_positive("rtol", rtol)
    _check_sampling(method, sampling)

    def eps(sigma: float) -> float:
        return dpsgd_epsilon(
            sigma, sample_rate=q, steps=steps, delta=delta, method=method, sampling=sampling, dataset_size=dataset_size
        )

    if method == "pld" and rtol >= pld_accountant.CALIBRATION_RTOL:
        # coarse-to-fine PLD calibration (the same calibrator, run on two nested grids)
        return pld_accountant.pld_noise_multiplier(target, sample_rate=q, steps=steps, delta=delta)
    return smallest_sigma(eps, target, rtol=rtol)


def epsilon_curve(
    noise_multiplier: float,
    *,
    sample_rate: float,
    steps: Sequence[int],
    delta: float,
    variants: Sequence[tuple[str, str]] = (
        ("rdp-mironov", "poisson"),
        ("rdp", "poisson"),
        ("pld", "poisson"),
        ("gdp", "poisson"),
        ("gdp", "fixed"),
    ),
    dataset_size: int | None = None,
) -> dict[str, list[float]]:
    """ε after each entry of ``steps`` for every (method, sampling) in ``variants``.

    Returns ``{"steps": [...], "<method>/<sampling>": [...], ...}``, ready for a DataFrame; the key of an
    approximate method ends in ``" (approximate)"`` (e.g. ``"gdp/poisson (approximate)"``).
    """
    steps = [check_positive_int("steps", s) for s in steps]
    if not steps:
        raise ValueError("steps must be a non-empty sequence of positive integers")
    out: dict[str, list[float]] = {"steps": list(steps)}
    for method, sampling in variants:
        label = f"{method}/{sampling}" + (" (approximate)" if method in APPROXIMATE else "")
        out[label] = [
            dpsgd_epsilon(
                noise_multiplier,
                sample_rate=sample_rate,
                steps=s,
                delta=delta,
                method=method,
                sampling=sampling,
                dataset_size=dataset_size,
            )
            for s in steps
        ]
    return out
