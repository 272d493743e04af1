"""Accountants as objects: each says which run records it ``supports``, what it computes (``describe``) and the
ε of a supported record (``epsilon``); :data:`REGISTRY` lists them in order of tightness and
:func:`dpcore.accounting.records.choose_accountant` takes the first that supports a record.

This is the ``supports(event)`` idea of Google's dp_accounting, over the library's own functions.  Sensitivities,
group sizes and noise factors are read from :mod:`dpcore.accounting.events` only; the effective noise multiplier
of a record is noise_std / (:func:`~dpcore.accounting.events.step_sensitivity` · C) (:func:`noise_multiplier`).

===================  ===========================================  ==============================================
accountant           supports                                      computes (default method first)
===================  ===========================================  ==============================================
``modelmix``         Poisson records with ModelMix phases          Xiao, Wan, Devadas, Thm 4.1 / corrected
                     (``modelmix="amplified"``)                    Cor. 4.1 (RDP)
``dpsgd``            Poisson, individual or batch clipping,        Poisson-subsampled Gaussian: PLD, RDP, GDP CLT
                     constant batch size                           (Abadi et al. 2016)
``dpsgd-schedule``   the same with a batch-size schedule           runs of equal rate composed
``fixed-wor``        fixed-size batches without replacement        RDP (Wang, Balle, Kasiviswanathan 2019, Thm 9)
``fixed-wor-sched…`` the same with a batch-size schedule           under replace-one
``with-replacement`` draws with replacement, individual clipping   tight PLD (:mod:`~dpcore.accounting.replacement`)
``with-replacement-  draws with replacement, the batch mean        μ-GDP of a 2C-sensitive Gaussian per round, no
batch-mean``         clipped once                                  amplification (Dong, Roth, Su 2022, Cor. 3.3)
``shuffling-A1``     shuffling                                     A_1 trade-off (van Dijk et al., Thm F.1)
===================  ===========================================  ==============================================

A record no entry supports is refused by the caller; an entry that supports a record but not its parameters
(ModelMix with batch clipping, say) raises a ``ValueError`` that says what to do instead.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any, Protocol, runtime_checkable

from dpcore.accounting import events
from dpcore.accounting.run_record import RunRecord
from dpcore.validation import check_bool

# The numerics (NumPy/SciPy accountants) are imported inside the methods that use them: importing the registry
# (the CLI's vocabulary, ``import dpcore.accounting``) loads none of them, and no dp_accounting.

__all__ = [
    "METHODS",
    "RIGOROUS",
    "APPROXIMATE",
    "ADDITIVE",
    "methods_for",
    "describe_run",
    "LabelledEpsilon",
    "Accountant",
    "REGISTRY",
    "ACCOUNTANT_NAMES",
    "ALL_METHODS",
    "MODELMIX_MODES",
    "SHUFFLE_NOTE",
    "noise_multiplier",
    "accountant_named",
]

MODELMIX_MODES = ("amplified", "plain")
#: The DP-SGD methods (:func:`dpcore.accounting.dpsgd.dpsgd_epsilon`): RIGOROUS are upper bounds, APPROXIMATE not.
METHODS = ("pld", "rdp", "rdp-mironov", "gdp")
RIGOROUS = ("pld", "rdp", "rdp-mironov")
APPROXIMATE = ("gdp",)
#: The methods whose composition over T steps of one rate is a sum (RDP at each order, μ² of the GDP CLT): ε at many
#: step counts costs one one-step computation (:func:`_step_rdp`).  PLD composes by convolution, a distribution per
#: step count (an explorer draws it at fewer points).
ADDITIVE = ("rdp", "rdp-mironov", "gdp")
#: Every method an accountant here can run: the DP-SGD methods, the A_1 trade-off, and the exact GDP composition.
ALL_METHODS = (*METHODS, "a1", "gdp-exact")
#: How a shuffled run's ε is obtained, said wherever that ε is shown (the result's description, the CLI).
SHUFFLE_NOTE = (
    "sampling='shuffle' is accounted by van Dijk et al.'s A_1 analysis, not by a subsampling accountant "
    "(usually far above the Poisson ε of the same σ, q and steps)"
)
_MAX_FRACTIONAL_RUNS = 8
_MAX_PLD_RUNS = 16  # PLD composes one distribution per distinct rate (~0.5 s each)
_INTEGER_ORDERS = tuple(float(a) for a in range(2, 257))


class LabelledEpsilon(float):
    """An ε that carries how it was obtained: a float (arithmetic, comparison, formatting and JSON see the plain
    value) with ``rigorous`` (True: an upper bound on the true ε; False: approximate), ``method`` and a
    ``description`` (accountant, neighbouring relation, noise convention).  ``label`` is ``"rigorous"`` or
    ``"approximate"``.  Arithmetic returns a plain float: the label describes this value only."""

    __slots__ = ("rigorous", "method", "description")

    def __new__(cls, value: float, *, rigorous: bool, method: str, description: str) -> LabelledEpsilon:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value) or value < 0:
            raise ValueError(f"value must be an ε in [0, inf], got {value!r}")
        rigorous = check_bool("rigorous", rigorous)
        for name, text in (("method", method), ("description", description)):
            if not isinstance(text, str):
                raise ValueError(f"{name} must be a string, got {text!r}")
        self = super().__new__(cls, float(value))
        object.__setattr__(self, "rigorous", rigorous)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "description", description)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"LabelledEpsilon is immutable (tried to set {name!r})")

    def __reduce__(self) -> tuple:
        return (_labelled, (float(self), self.rigorous, self.method, self.description))

    @property
    def label(self) -> str:
        """``"rigorous"`` or ``"approximate"``."""
        return "rigorous" if self.rigorous else "approximate"


def _labelled(value: float, rigorous: bool, method: str, description: str) -> LabelledEpsilon:
    return LabelledEpsilon(value, rigorous=rigorous, method=method, description=description)


def noise_multiplier(rec: RunRecord) -> float:
    """σ_eff = noise_std / (Δ · C), Δ = :func:`~dpcore.accounting.events.step_sensitivity` (in multiples of C)."""
    return rec.noise_std / (events.step_sensitivity(rec.sampling, rec.clipping) * rec.clip_norm)


@runtime_checkable
class Accountant(Protocol):
    """What :func:`~dpcore.accounting.records.choose_accountant` needs of an accountant."""

    name: str
    adjacency: str  # "add/remove" or "replace-one"
    methods: tuple[str, ...]  # the first is the default

    def supports(self, record: RunRecord, *, modelmix: str = "amplified") -> bool: ...

    def describe(self, record: RunRecord, method: str) -> str: ...

    def epsilon(self, record: RunRecord, delta: float, method: str) -> float: ...


class _Base:
    """Shared parts: the default method, ``check`` (refuse a supported record's out-of-domain parameters)."""

    name = ""
    adjacency = "replace-one"
    methods: tuple[str, ...] = ()

    def check(self, record: RunRecord) -> None:
        """``ValueError`` when a supported record is outside this accountant's domain (default: nothing)."""

    def default_method(self, record: RunRecord) -> str:
        return self.methods[0]

    def rigorous(self, method: str) -> bool:
        return method not in APPROXIMATE


def _conversion(method: str) -> str:
    return "mironov" if method == "rdp-mironov" else "balle"


@functools.lru_cache(maxsize=64)
def _step_rdp(sigma: float, sampling: str, size: float | tuple[int, int], integer: bool) -> tuple[Any, Any]:
    """(orders, RDP of one step at them), read-only and cached: the Poisson-subsampled Gaussian at rate ``size``
    (Mironov, Talwar, Zhang 2019), or fixed-size batches ``size`` = (n, b) without replacement under replace-one
    (Wang, Balle, Kasiviswanathan 2019, Thm 9; σ is the multiplier against 2C, the library's
    ``noise_convention="replace_one"``).  ``integer``: the integer orders 2..256 (closed form) instead of
    ``RDP_ORDERS``.  T steps of one size have T times it (RDP composes additively), so ε at many step counts costs
    one computation."""
    import numpy as np

    from dpcore.accounting.rdp import RDP_ORDERS, subsampled_gaussian_rdp

    a = np.asarray(_INTEGER_ORDERS if integer else RDP_ORDERS, dtype=float)
    if sampling == "fixed":
        n, b = size  # type: ignore[misc]
        rdp = subsampled_gaussian_rdp(a, noise_multiplier=sigma, sampling="fixed", dataset_size=n, batch_size=b,
                                      noise_convention="replace_one")  # fmt: skip
    else:
        rdp = subsampled_gaussian_rdp(a, sample_rate=size, noise_multiplier=sigma)
    rdp = np.array(rdp, dtype=float)
    a.setflags(write=False)
    rdp.setflags(write=False)
    return a, rdp


# --------------------------------------------------------------------------- ModelMix
class ModelMixAccountant(_Base):
    """ModelMix (Xiao, Wan, Devadas): Gaussian ⊛ uniform mixing of Poisson DP-SGD (:mod:`.modelmix`)."""

    name = "modelmix"
    adjacency = "add/remove"
    methods = ("rdp", "rdp-mironov")

    def supports(self, record: RunRecord, *, modelmix: str = "amplified") -> bool:
        return record.modelmix is not None and modelmix == "amplified"

    def check(self, record: RunRecord) -> None:
        if record.sampling != "poisson":
            raise ValueError(
                f"the ModelMix accountant assumes Poisson sampling, not {record.sampling!r}; use modelmix='plain'"
            )
        events.step_sensitivity(record.sampling, record.clipping)  # Poisson + mixed clipping: refused
        if record.clipping != "individual" or not isinstance(record.batch_size, int):
            raise ValueError(
                "the ModelMix accountant covers Poisson sampling with individual clipping and a "
                "constant batch size only; use modelmix='plain'"
            )

    def describe(self, record: RunRecord, method: str) -> str:
        return (
            "ModelMix RDP accountant (Xiao, Wan, Devadas, Thm 4.1 / corrected Cor. 4.1, min with the plain "
            "subsampled Gaussian)"
        )

    def epsilon(self, record: RunRecord, delta: float, method: str) -> float:
        from dpcore.accounting import modelmix

        linf = record.linf_p if record.clip_norm_type == "l2_linf" else None
        kept, done = [], 0
        for phase in record.modelmix["phases"]:  # a partial run accounts only the steps done
            take = min(phase["steps"], record.steps - done)
            if take > 0:
                kept.append((take, phase["tau_ratio"]))
            done += take
        setting = modelmix.ModelMixSetting(n=record.dataset_size, batch_size=float(record.batch_size),
                                           noise_multiplier=noise_multiplier(record), clip=record.clip_norm,
                                           linf_blocks=linf)  # fmt: skip
        if len(kept) == 1:
            return float(modelmix.epsilon(setting.replace(tau=kept[0][1]), steps=kept[0][0], delta=delta,
                                          conversion=_conversion(method)))  # fmt: skip
        return float(modelmix.schedule_epsilon(kept, setting, delta=delta, conversion=_conversion(method)))


# --------------------------------------------------------------------------- Poisson
class PoissonAccountant(_Base):
    """The Poisson-subsampled Gaussian (Abadi et al. 2016): PLD, RDP or the GDP CLT; schedules composed by runs."""

    adjacency = "add/remove"
    methods = METHODS

    def __init__(self, *, scheduled: bool) -> None:
        self.scheduled = scheduled
        self.name = "dpsgd-schedule" if scheduled else "dpsgd"

    def supports(self, record: RunRecord, *, modelmix: str = "amplified") -> bool:
        return record.sampling == "poisson" and (not isinstance(record.batch_size, int)) == self.scheduled

    def check(self, record: RunRecord) -> None:
        events.step_sensitivity(record.sampling, record.clipping)  # mixed clipping: refused

    def default_method(self, record: RunRecord) -> str:
        if self.scheduled and len(record.batch_runs()) > _MAX_PLD_RUNS:
            return "rdp"  # the rigorous default that stays fast for many distinct batch sizes
        return self.methods[0]

    def describe(self, record: RunRecord, method: str) -> str:
        batch = events.step_sensitivity("poisson", record.clipping) == 2
        what = "batch clipping: the clipped batch mean moves by ≤ 2C" if batch else "individual clipping"
        return (
            ("APPROXIMATE (GDP central limit theorem): " if method in APPROXIMATE else "")
            + f"Poisson-subsampled Gaussian (Abadi et al. 2016), {what}"
            + ("; post-processing bound for ModelMix" if record.modelmix is not None else "")
        )

    def epsilon(self, record: RunRecord, delta: float, method: str) -> float:
        sigma, n = noise_multiplier(record), record.dataset_size
        runs = [(b / n, c) for b, c in record.batch_runs()]
        if method == "gdp":
            from dpcore.accounting import fdp, gaussian

            mu = math.sqrt(sum(fdp.clt_mu(sigma, q, c, "poisson") ** 2 for q, c in runs))
            return gaussian.epsilon_from_mu(mu, delta)
        if method == "pld":
            if len(runs) > _MAX_PLD_RUNS:
                raise ValueError(
                    f"a schedule with {len(runs)} distinct batch sizes is out of the PLD accountant's range "
                    f"(at most {_MAX_PLD_RUNS}, about 0.5 s each); use method='rdp'"
                )
            from dpcore.accounting import pld

            return pld.pld_epsilon_runs(sigma, runs=runs, delta=delta)
        import numpy as np

        from dpcore.accounting.rdp import rdp_to_epsilon

        # many distinct rates: exact integer orders only (closed form, fast); fractional orders need a quadrature each
        integer = len(runs) > _MAX_FRACTIONAL_RUNS
        a, _ = _step_rdp(sigma, "poisson", runs[0][0], integer)
        total = sum(c * _step_rdp(sigma, "poisson", q, integer)[1] for q, c in runs)
        # RDP is >= 0; the log-sum of the closed form can round to about -1e-26 at tiny q (clear it, nothing larger)
        total = np.where((total < 0) & (total > -1e-12), 0.0, total)
        return rdp_to_epsilon(a, total, delta, conversion=_conversion(method))

    def calibrate(self, record: RunRecord, target: float, delta: float, method: str, rtol: float) -> float | None:
        """The PLD's own coarse-to-fine calibration (:func:`~dpcore.accounting.pld.pld_noise_multiplier`) for a
        constant batch at ``rtol`` >= its 1e-3; ``None`` (the generic calibrator) otherwise.  σ in the record's
        convention: the Gaussian's multiplier z = κσ/Δ gives σ = z·Δ/κ."""
        from dpcore.accounting import pld

        if method != "pld" or self.scheduled or rtol < pld.CALIBRATION_RTOL:
            return None
        z = pld.pld_noise_multiplier(target, sample_rate=record.sample_rate, steps=record.steps, delta=delta)
        kappa = events.NOISE_FACTOR[record.noise_convention]
        return z * events.step_sensitivity(record.sampling, record.clipping) / kappa


# --------------------------------------------------------------------------- fixed-size without replacement
class FixedAccountant(_Base):
    """Fixed-size batches without replacement under replace-one: RDP (Wang, Balle, Kasiviswanathan 2019, Thm 9),
    or the approximate CLT (Dong, Roth, Su 2022, Cor. 5.4) by name."""

    def __init__(self, *, scheduled: bool) -> None:
        self.scheduled = scheduled
        self.name = "fixed-wor-schedule" if scheduled else "fixed-wor"
        self.methods = ("rdp", "rdp-mironov") if scheduled else ("rdp", "rdp-mironov", "gdp")

    def supports(self, record: RunRecord, *, modelmix: str = "amplified") -> bool:
        return record.sampling == "fixed" and (not isinstance(record.batch_size, int)) == self.scheduled

    def describe(self, record: RunRecord, method: str) -> str:
        if method in APPROXIMATE:
            return "APPROXIMATE: GDP central limit theorem for uniform subsampling (Dong, Roth, Su 2022, Cor. 5.4)"
        return (
            "fixed-size sampling without replacement, RDP of the subsampled Gaussian (Wang, Balle, "
            "Kasiviswanathan 2019, Thm 9) under replace-one"
        )

    def epsilon(self, record: RunRecord, delta: float, method: str) -> float:
        sigma, n = noise_multiplier(record), record.dataset_size
        runs = record.batch_runs()
        if method == "gdp":
            from dpcore.accounting import fdp, gaussian

            mu = math.sqrt(sum(fdp.clt_mu(sigma, b / n, c, "fixed") ** 2 for b, c in runs))
            return gaussian.epsilon_from_mu(mu, delta)
        from dpcore.accounting.rdp import rdp_to_epsilon

        a, _ = _step_rdp(sigma, "fixed", (n, runs[0][0]), False)
        total = sum(c * _step_rdp(sigma, "fixed", (n, b), False)[1] for b, c in runs)
        return rdp_to_epsilon(a, total, delta, conversion=_conversion(method))


# --------------------------------------------------------------------------- with replacement
class WithReplacementAccountant(_Base):
    """Draws with replacement, individual clipping: the tight PLD of :mod:`~dpcore.accounting.replacement`
    (Lowy & Razaviyayn 2023, Algorithm 2's silo messages; replace-one)."""

    name = "with-replacement"
    methods = ("pld",)

    def supports(self, record: RunRecord, *, modelmix: str = "amplified") -> bool:
        # a constant batch only: the silo PLD is of K draws per round (a schedule is declined, and refused by name)
        return (
            record.sampling == "replacement" and record.clipping == "individual" and isinstance(record.batch_size, int)
        )

    def describe(self, record: RunRecord, method: str) -> str:
        return "with-replacement PLD, replace-one (dpcore.accounting.replacement; Lowy & Razaviyayn 2023, Alg. 2)"

    def epsilon(self, record: RunRecord, delta: float, method: str) -> float:
        from dpcore.accounting import replacement

        k = int(record.batch_size)  # the noise of the record is on the sum: K·σ for the mean's σ
        return replacement.with_replacement_epsilon(
            noise_std=record.noise_std / k, lipschitz=record.clip_norm, batch_size=k, n=record.dataset_size,
            rounds=record.steps, delta=delta,
        )  # fmt: skip


class BatchMeanReplacementAccountant(_Base):
    """Draws with replacement, the minibatch mean clipped once: (2C√R/σ)-GDP, no amplification credited
    (:func:`~dpcore.accounting.replacement.batch_mean_epsilon_upper`; Dong, Roth, Su 2022, Cor. 3.3)."""

    name = "with-replacement-batch-mean"
    methods = ("gdp-exact",)

    def supports(self, record: RunRecord, *, modelmix: str = "amplified") -> bool:
        return record.sampling == "replacement" and record.clipping == "batch"

    def describe(self, record: RunRecord, method: str) -> str:
        return (
            "clipped minibatch mean with replacement: Gaussian of sensitivity 2C per round, exact GDP composition "
            "(Dong, Roth, Su 2022, Cor. 3.3), no amplification credited: an upper bound"
        )

    def epsilon(self, record: RunRecord, delta: float, method: str) -> float:
        from dpcore.accounting import replacement

        return replacement.batch_mean_epsilon_upper(
            noise_std=record.noise_std, clip=record.clip_norm, rounds=record.steps, delta=delta
        )


# --------------------------------------------------------------------------- shuffling
class ShuffleAccountant(_Base):
    """Shuffling: the exact trade-off under the labelled adversary A_1 (van Dijk et al., Thm F.1, g = 1)."""

    name = "shuffling-A1"
    methods = ("a1",)

    def supports(self, record: RunRecord, *, modelmix: str = "amplified") -> bool:
        return record.sampling == "shuffle"

    def describe(self, record: RunRecord, method: str) -> str:
        return (
            SHUFFLE_NOTE + ": G_{sqrt(E)/σ} against the labelled adversary A_1 (van Dijk et al., Generalizing "
            "DP-SGD with Shuffling and Batch Clipping, Thm F.1, g = 1); an upper bound for the standard adversary"
        )

    def epsilon(self, record: RunRecord, delta: float, method: str) -> float:
        from dpcore.accounting import shuffled

        n, batch = record.dataset_size, int(record.batch_size)
        epochs = math.ceil(record.steps / events.steps_per_epoch("shuffle", n, batch))  # every started epoch
        s = events.clipped_group_size(record.clipping, batch, record.group_size)
        m = events.groups_per_batch(record.clipping, batch, record.group_size)
        tradeoff = shuffled.mixture_tradeoff("shuffle", sigma=noise_multiplier(record), E=epochs, N=n, s=s, m=m, g=1)
        return float(tradeoff.epsilon(delta))


#: Every accountant, tightest first: the first entry that supports a record accounts for it.
REGISTRY: tuple[_Base, ...] = (
    ModelMixAccountant(),
    PoissonAccountant(scheduled=False),
    PoissonAccountant(scheduled=True),
    FixedAccountant(scheduled=False),
    FixedAccountant(scheduled=True),
    WithReplacementAccountant(),
    BatchMeanReplacementAccountant(),
    ShuffleAccountant(),
)
#: The names an :class:`~dpcore.accounting.records.AccountantChoice` may carry ("none": a non-private run).
ACCOUNTANT_NAMES: tuple[str, ...] = ("none", *(a.name for a in REGISTRY))


def accountant_named(name: str) -> _Base:
    """The registry's accountant called ``name``; ``ValueError`` naming the known ones otherwise."""
    for acc in REGISTRY:
        if acc.name == name:
            return acc
    raise ValueError(f"name must be one of {', '.join(a.name for a in REGISTRY)}; got {name!r}")


def methods_for(sampling: str, clipping: str = "individual") -> tuple[str, ...]:
    """The methods (default first) of the accountant that takes a constant-batch run of ``sampling`` and
    ``clipping``: what ``dpsgd_epsilon`` and the CLI offer for a sampling (``()`` where no entry applies)."""
    events.check_clipping(clipping)
    probe = RunRecord(private=True, sampling=sampling, dataset_size=2, batch_size=1, steps=1, clipping=clipping,
                      clip_norm=1.0, noise_multiplier=1.0, noise_std=1.0)  # fmt: skip
    for acc in REGISTRY:
        if acc.supports(probe):
            return acc.methods
    return ()


def describe_run(record: RunRecord) -> str:
    """What the returned ε was computed for, in words: T, q, σ (and the Gaussian's multiplier against the step's
    sensitivity) and the neighbouring relation (every :func:`~dpcore.accounting.records.epsilon_for_record`
    description ends with it)."""
    if isinstance(record.batch_size, int):
        rate = f"q = {record.sample_rate:.6g}"
    else:
        sizes = [b for b, _ in record.batch_runs()] or record.batch_size
        rate = f"q = b_t/n in [{min(sizes) / record.dataset_size:.6g}, {max(sizes) / record.dataset_size:.6g}]"
    kappa = events.NOISE_FACTOR[record.noise_convention]
    std = "σ·C" if kappa == 1 else f"{kappa:g}σ·C"
    try:
        delta_c = events.step_sensitivity(record.sampling, record.clipping)
        relation = events.ADJACENCY.get(record.sampling, "replace-one")
        against = f", multiplier {noise_multiplier(record):.6g} against sensitivity {delta_c:g}C"
    except ValueError:
        relation, against = events.ADJACENCY.get(record.sampling, "replace-one"), ""
    return (
        f"T = {record.steps} steps, {rate}, σ = {record.noise_multiplier:.6g} (noise std {std}{against}), "
        f"{record.sampling} sampling, {relation} neighbours"
    )
