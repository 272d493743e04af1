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

Noise: σ means noise std σ·C on the sum of per-example gradients clipped to C (the DP-SGD convention of Abadi et
al. 2016, Opacus and TF Privacy), for every sampling.  The neighbouring relation of the sampling is applied
inside (:func:`dpcore.accounting.events.effective_noise_multiplier`) and stated in the result's label.  A paper
that writes its noise as N(0, (2Cσ)²) (van Dijk et al., "Generalizing DP-SGD with Shuffling and Batch
Clipping") says so with ``noise_convention="replace_one"``; it never follows from ``sampling``.

Sampling (:mod:`dpcore.accounting.events`): ``"poisson"`` (add/remove-one neighbours, sensitivity C; every
method) or ``"fixed"`` (fixed-size batches without replacement, replace-one neighbours, sensitivity 2C, so the
Gaussian's multiplier is σ/2 for standard noise; ``"rdp"``/``"rdp-mironov"`` through Wang, Balle,
Kasiviswanathan 2019, Thm 9, which needs ``dataset_size``, and the approximate ``"gdp"`` through Dong, Roth,
Su 2022, Cor. 5.4).  ``"shuffle"`` is refused: none of these methods accounts for shuffled disjoint batches
(:mod:`dpcore.accounting.shuffled` analyses them under a stronger adversary).

Every ε is returned as a :class:`LabelledEpsilon`: a float that carries ``rigorous`` and a description.

>>> round(dpsgd_epsilon(4.0, sample_rate=0.01, steps=10000, delta=1e-5, method="rdp-mironov"), 3)  # Abadi 2016
1.259
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence

from dpcore.accounting import pld as pld_accountant
from dpcore.accounting.calibrate import MIN_RTOL, SIGMA_MAX, SIGMA_MIN, check_rtol
from dpcore.accounting.events import (
    ADJACENCY,
    NOISE_CONVENTIONS,
    NOISE_FACTOR,
    SAMPLINGS,
    SENSITIVITY,
    check_sampling,
    sizes_for_rates,
    steps_for_epochs,
)
from dpcore.accounting.rdp import RDP_ORDERS
from dpcore.accounting.records import epsilon_for_record, noise_multiplier_for_record
from dpcore.accounting.registry import (
    APPROXIMATE,
    METHODS,
    RIGOROUS,
    LabelledEpsilon,
    _labelled,  # noqa: F401  (pickles of LabelledEpsilon written before it moved to the registry)
    describe_run,
    methods_for,
)
from dpcore.accounting.run_record import RunRecord
from dpcore.validation import check_choice, check_open_unit, check_positive, check_positive_int, check_rate

__all__ = [
    "METHODS",
    "RIGOROUS",
    "APPROXIMATE",
    "SAMPLINGS",
    "NOISE_CONVENTIONS",
    "RDP_ORDERS",
    "PLD_GRID",
    "NOISE_MULTIPLIER_RANGE",
    "MIN_RTOL",
    "LabelledEpsilon",
    "resolve_steps",
    "default_method",
    "method_label",
    "describe",
    "dpsgd_epsilon",
    "dpsgd_noise_multiplier",
    "epsilon_curve",
    "dpsgd_record",
    "check_noise_multiplier",
]

PLD_GRID = pld_accountant.GRID  # the PLD discretisation interval (dpcore.accounting.pld)
#: The noise multipliers the accountants are evaluated on (the calibrator's bracket, calibrate.SIGMA_MIN/MAX).
NOISE_MULTIPLIER_RANGE = (SIGMA_MIN, SIGMA_MAX)
#: The methods of each sampling: the registry's accountant of a constant-batch run with individual clipping (the
#: subsampling accountants; shuffled runs go through ``epsilon_for_record``, A_1).
_SUPPORTED = {"poisson": methods_for("poisson"), "fixed": methods_for("fixed"), "shuffle": ()}
_METHOD_TEXT = {
    "pld": "privacy-loss distribution (pessimistic discretisation, Doroshenko et al. 2022)",
    "rdp": "RDP with the conversion of Balle et al. 2020, Thm 21",
    "rdp-mironov": "RDP with the conversion of Mironov 2017, Prop. 3",
    "gdp": "APPROXIMATE: GDP central limit theorem (may be below the true ε at finite T)",
}
_SAMPLING_TEXT = {
    "poisson": "Poisson subsampling (Abadi et al. 2016)",
    "fixed": "fixed-size batches without replacement (Wang, Balle, Kasiviswanathan 2019, Thm 9)",
}


def method_label(method: str) -> str:
    """``"rigorous"`` or ``"approximate"`` for a method of :data:`METHODS`."""
    check_choice("method", method, METHODS)
    return "approximate" if method in APPROXIMATE else "rigorous"


def describe(method: str, sampling: str = "poisson", noise_convention: str = "standard") -> str:
    """The label of a :func:`dpsgd_epsilon` result: method, sampling, neighbouring relation and how σ enters.

    >>> describe("rdp", "fixed")  # doctest: +NORMALIZE_WHITESPACE
    'RDP with the conversion of Balle et al. 2020, Thm 21; fixed-size batches without replacement (Wang, Balle,
    Kasiviswanathan 2019, Thm 9), replace-one neighbours: noise std σ·C against sensitivity 2C, so the Gaussian
    has multiplier σ/2'
    """
    _check_sampling(method, sampling)
    check_choice("noise_convention", noise_convention, NOISE_CONVENTIONS)
    kappa, sens = NOISE_FACTOR[noise_convention], SENSITIVITY[sampling]
    std = "σ·C" if kappa == 1 else f"{kappa:g}σ·C (noise_convention={noise_convention!r})"
    ratio = kappa / sens
    mult = "σ" if ratio == 1 else (f"σ/{1 / ratio:g}" if ratio < 1 else f"{ratio:g}σ")
    return (
        f"{_METHOD_TEXT[method]}; {_SAMPLING_TEXT[sampling]}, {ADJACENCY[sampling]} neighbours: noise std {std} "
        f"against sensitivity {'C' if sens == 1 else f'{sens:g}C'}, so the Gaussian has multiplier {mult}"
    )


def resolve_steps(
    sample_rate: float,
    steps: int | None,
    epochs: float | None,
    *,
    sampling: str = "poisson",
    dataset_size: int | None = None,
) -> int:
    """The number of steps: ``steps`` itself, or ``epochs`` converted exactly as the trainer does
    (:func:`dpcore.accounting.events.steps_for_epochs`: max(1, round(E · round(n/b))), 0 for E = 0).

    Exactly one of the two must be given; steps = 0 is allowed (ε = 0).  With ``dataset_size`` and a whole
    batch ``sample_rate · dataset_size`` the sizes are used, otherwise n/b = 1/q.
    """
    q = check_rate("sample_rate", sample_rate)
    n = _check_dataset_size(dataset_size)
    if (steps is None) == (epochs is None):
        raise ValueError("give exactly one of steps (an integer >= 0) and epochs (a number >= 0)")
    if steps is not None:
        return check_positive_int("steps", steps, minimum=0)
    sizes: dict[str, int] = {}
    if n is not None:
        if math.isclose(round(q * n), q * n, rel_tol=1e-9) and round(q * n) >= 1:
            sizes = {"dataset_size": n, "batch_size": round(q * n)}
    sample = None if sizes else q
    return steps_for_epochs(epochs, sampling=sampling, sample_rate=sample, **sizes)  # type: ignore[arg-type]


def _check_dataset_size(dataset_size: int | None) -> int | None:
    return None if dataset_size is None else check_positive_int("dataset_size", dataset_size)


def default_method(sampling: str) -> str:
    """The tightest rigorous method that accounts for ``sampling``: PLD for Poisson, RDP for fixed-size batches
    (Wang, Balle, Kasiviswanathan 2019, Thm 9; dp_accounting's PLD has no fixed-size event).  Shuffling has
    none here (``ValueError``: use :mod:`dpcore.accounting.shuffled` or ``epsilon_for_record``)."""
    check_sampling(sampling)
    for method in RIGOROUS:  # ordered tightest first
        if method in _SUPPORTED[sampling]:
            return method
    raise ValueError(
        f"sampling={sampling!r} has no subsampling accountant here; use dpcore.accounting.shuffled (or "
        "epsilon_for_record) for shuffled batches"
    )


def _method_for(method: str | None, sampling: str) -> tuple[str, str]:
    """(method, what the label says about the choice): ``None`` picks :func:`default_method`."""
    if method is None:
        chosen = default_method(sampling)
        return chosen, f"default for sampling={sampling!r}: {chosen}, the tightest rigorous method that supports it; "
    _check_sampling(method, sampling)
    return method, ""


def _check_sampling(method: str, sampling: str) -> None:
    check_choice("method", method, METHODS)
    check_sampling(sampling)
    if method not in _SUPPORTED[sampling]:
        if sampling == "shuffle":
            raise ValueError(
                f"sampling='shuffle' cannot be accounted for by method={method!r}: it analyses subsampling only; "
                "use dpcore.accounting.shuffled (or epsilon_for_record) for shuffled batches"
            )
        raise ValueError(
            f"sampling={sampling!r} is supported by method in {_SUPPORTED[sampling]}, not method={method!r}"
        )


def check_noise_multiplier(noise_multiplier: float) -> float:
    """σ as a float in :data:`NOISE_MULTIPLIER_RANGE` (the range the accountants are evaluated on)."""
    sigma = check_positive("noise_multiplier", noise_multiplier)
    low, high = NOISE_MULTIPLIER_RANGE
    if not low <= sigma <= high:
        raise ValueError(
            f"noise_multiplier must be in [{low:g}, {high:g}] (the range the accountants are evaluated on), "
            f"got {sigma:g}"
        )
    return sigma


def _fixed_sizes(sample_rate: float, dataset_size: int | None) -> tuple[int, int]:
    if dataset_size is None:
        raise ValueError("sampling='fixed' needs dataset_size (the batch is sample_rate·dataset_size records)")
    n = check_positive_int("dataset_size", dataset_size)
    b = round(sample_rate * n)
    if b < 1 or not math.isclose(b, sample_rate * n, rel_tol=1e-9, abs_tol=1e-9):
        raise ValueError(f"sample_rate·dataset_size must be a whole batch size, got {sample_rate}·{n}")
    return n, b


def dpsgd_record(
    noise_multiplier: float,
    *,
    sample_rate: float,
    steps: int,
    sampling: str = "poisson",
    dataset_size: int | None = None,
    noise_convention: str = "standard",
) -> RunRecord:
    """The :class:`RunRecord` of ``steps`` DP-SGD steps given by their rate, as :func:`dpsgd_epsilon` accounts them:
    clip norm 1, noise std κσ, individual clipping.  ``sampling="fixed"`` or ``"shuffle"`` with ``dataset_size`` n
    needs q·n whole; Poisson takes n and b with b/n == q exactly (:func:`~dpcore.accounting.events.sizes_for_rates`).
    ``epsilon_for_record(dpsgd_record(σ, …), δ, method=m)`` is ``dpsgd_epsilon(σ, …, delta=δ, method=m)``."""
    sigma = check_noise_multiplier(noise_multiplier)
    q = check_rate("sample_rate", sample_rate)
    steps = check_positive_int("steps", steps, minimum=0)
    check_choice("sampling", sampling, SAMPLINGS)
    check_choice("noise_convention", noise_convention, NOISE_CONVENTIONS)
    return _record(sigma, q, steps, sampling, _check_dataset_size(dataset_size), noise_convention)


def _record(sigma: float, q: float, steps: int, sampling: str, dataset_size: int | None, convention: str) -> RunRecord:
    """:func:`dpsgd_record` on checked inputs (the entry points check them once)."""
    if sampling in ("fixed", "shuffle") and (dataset_size is not None or sampling == "shuffle"):
        n, b = _fixed_sizes(q, dataset_size)
    else:  # Poisson, or the fixed-size CLT (which reads q only)
        n, (b,) = sizes_for_rates([q], dataset_size)
    return RunRecord(private=True, sampling=sampling, dataset_size=n, batch_size=b, steps=steps,
                     clipping="individual", clip_norm=1.0, noise_multiplier=sigma, noise_convention=convention,
                     noise_std=NOISE_FACTOR[convention] * sigma)  # fmt: skip


def dpsgd_epsilon(
    noise_multiplier: float,
    *,
    sample_rate: float,
    steps: int | None = None,
    epochs: float | None = None,
    delta: float,
    method: str | None = None,
    sampling: str = "poisson",
    dataset_size: int | None = None,
    noise_convention: str = "standard",
) -> LabelledEpsilon:
    """ε at ``delta`` of DP-SGD steps with noise std σ·C (σ = ``noise_multiplier``) and sampling rate q.

    Give ``steps`` or ``epochs`` (converted as the trainer does: :func:`resolve_steps`).  ``sampling="fixed"``
    accounts fixed-size batches of q·n records (``dataset_size`` n) under replace-one neighbours: the Gaussian's
    multiplier is σ/2 against the sensitivity 2C.  ``noise_convention="replace_one"`` says the noise std is
    2σC instead (van Dijk et al.'s N(0, (2Cσ)²)).  See the module docstring for the methods.  Returns a
    :class:`LabelledEpsilon`; ``method=None`` (the default) runs :func:`default_method` of the sampling (PLD for
    Poisson, RDP for fixed-size batches) and the description says so.  Raises ``ValueError`` for bad input (σ outside
    :data:`NOISE_MULTIPLIER_RANGE` included) and for a sampling the method cannot account for.
    """
    sigma = check_noise_multiplier(noise_multiplier)
    q = check_rate("sample_rate", sample_rate)
    delta = check_open_unit("delta", delta)
    method, chosen = _method_for(method, sampling)
    check_choice("noise_convention", noise_convention, NOISE_CONVENTIONS)
    dataset_size = _check_dataset_size(dataset_size)
    steps = resolve_steps(q, steps, epochs, sampling=sampling, dataset_size=dataset_size)
    if sampling == "fixed" and method != "gdp":
        _fixed_sizes(q, dataset_size)  # RDP of sampling without replacement reads n and b
    record = _record(sigma, q, steps, sampling, dataset_size, noise_convention)
    try:
        value = epsilon_for_record(record, delta, method=method)  # the one door: the registry's accountant
    except ValueError as exc:
        if epochs is None or "steps" not in str(exc):
            raise
        raise ValueError(
            f"epochs={epochs!r} is T = {steps} steps, outside the {method} accountant's range: {exc}"
        ) from exc
    return LabelledEpsilon(
        float(value),
        rigorous=value.rigorous,
        method=method,
        description=chosen + describe(method, sampling, noise_convention) + "; " + describe_run(record),
    )


def dpsgd_noise_multiplier(
    target_epsilon: float,
    *,
    sample_rate: float,
    steps: int | None = None,
    epochs: float | None = None,
    delta: float,
    method: str | None = None,
    sampling: str = "poisson",
    dataset_size: int | None = None,
    noise_convention: str = "standard",
    rtol: float = 1e-3,
) -> float:
    """Smallest σ (to ``rtol`` relative, in [:data:`MIN_RTOL`, 1) = [1e-12, 1)) with ε <= ``target_epsilon``.

    σ in the caller's ``noise_convention`` (noise std σ·C by default; 2σC for ``"replace_one"``), for
    ``sampling`` as in :func:`dpsgd_epsilon` (``method=None``: :func:`default_method`).  Give ``steps`` or
    ``epochs`` (converted as the trainer does).
    One calibrator (:func:`dpcore.accounting.calibrate.smallest_sigma`) keeps the returned σ feasible:
    ``dpsgd_epsilon(σ, …) <= target_epsilon`` always (calibration never overshoots).
    """
    target = check_positive("target_epsilon", target_epsilon)
    q = check_rate("sample_rate", sample_rate)
    delta = check_open_unit("delta", delta)
    rtol = check_rtol(rtol)
    method, _ = _method_for(method, sampling)
    check_choice("noise_convention", noise_convention, NOISE_CONVENTIONS)
    dataset_size = _check_dataset_size(dataset_size)
    steps = resolve_steps(q, steps, epochs, sampling=sampling, dataset_size=dataset_size)
    check_positive_int("steps", steps)
    if sampling == "fixed" and method != "gdp":
        _fixed_sizes(q, dataset_size)  # RDP of sampling without replacement reads n and b
    record = _record(1.0, q, steps, sampling, dataset_size, noise_convention)
    try:
        return noise_multiplier_for_record(record, target, delta, method=method, rtol=rtol)
    except ValueError as exc:  # say which run could not be calibrated
        raise ValueError(
            f"{exc} (at sample_rate={q:g}, steps={steps}, delta={delta:g}, method={method!r}, "
            f"sampling={sampling!r}, dataset_size={dataset_size}, noise_convention={noise_convention!r})"
        ) from exc


def _step_list(steps: Sequence[int]) -> list[int]:
    bad = f"steps must be a non-empty sequence of positive integers, got {steps!r}"
    if isinstance(steps, (str, bytes, numbers.Number)) or not isinstance(steps, Iterable):
        raise ValueError(bad)
    out = [check_positive_int("steps", s) for s in steps]
    if not out:
        raise ValueError(bad)
    return out


def _variant_list(variants: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    bad = f"variants must be a non-empty sequence of (method, sampling) pairs, got {variants!r}"
    if isinstance(variants, (str, bytes)) or not isinstance(variants, Iterable):
        raise ValueError(bad)
    out = [tuple(v) if isinstance(v, (tuple, list)) else v for v in variants]
    if not out or not all(isinstance(v, tuple) and len(v) == 2 for v in out):
        raise ValueError(bad)
    for method, sampling in out:
        _check_sampling(method, sampling)
    return out  # type: ignore[return-value]


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
    noise_convention: str = "standard",
) -> dict[str, list[float]]:
    """ε after each entry of ``steps`` (a non-empty sequence of positive integers) for every (method, sampling)
    in ``variants``, σ as in :func:`dpsgd_epsilon` (noise std σ·C unless ``noise_convention`` says otherwise).

    Returns ``{"steps": [...], "<method>/<sampling>": [...], ...}``, ready for a DataFrame; the key of an
    approximate method ends in ``" (approximate)"`` (e.g. ``"gdp/poisson (approximate)"``).
    """
    steps = _step_list(steps)
    variants = _variant_list(variants)
    dataset_size = _check_dataset_size(dataset_size)
    out: dict[str, list[float]] = {"steps": list(steps)}
    common = dict(sample_rate=sample_rate, delta=delta, dataset_size=dataset_size, noise_convention=noise_convention)
    for method, sampling in variants:
        label = f"{method}/{sampling}" + (" (approximate)" if method in APPROXIMATE else "")
        run = dict(method=method, sampling=sampling, **common)
        out[label] = [dpsgd_epsilon(noise_multiplier, steps=t, **run) for t in steps]
    return out
