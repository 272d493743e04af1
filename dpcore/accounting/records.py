"""Run records → ε: pick the accountant that matches what a run did, and refuse what nothing here accounts for.

A :class:`~dpcore.accounting.run_record.RunRecord` (from :meth:`dpcore.training.Trainer.record` or the
federated algorithms) says how batches were sampled, how gradients were clipped, the clip norm C, the noise
std κ·C·σ and the number of steps.  The accountant needs the noise std *relative to the sensitivity* of
one step, which depends on the neighbouring relation that the sampler implies:

=============  ===========  =========================  ============================================
sampling       adjacency    sensitivity of one step    accountant (default: rigorous)
=============  ===========  =========================  ============================================
``poisson``    add/remove   C (individual), 2C (batch)  subsampled Gaussian: PLD (default), RDP;
                            mixed: refused (adding one   batch-size schedules composed step by step
                            record shifts the groups
                            of all later ones)
``fixed``      replace-one  2C (all clippings)          RDP of sampling without replacement (Wang,
                                                        Balle, Kasiviswanathan 2019), default
``shuffle``    replace-one  2C (all clippings)          the exact trade-off under the labelled
                                                        adversary A_1 (:mod:`dpcore.accounting.shuffled`)
``replacement``  replace-one  2C                     with-replacement PLD (individual clipping) or
                                                        exact GDP of the clipped mean (batch clipping),
                                                        :mod:`dpcore.accounting.replacement`
=============  ===========  =========================  ============================================

The effective noise multiplier is σ_eff = noise_std / (sensitivity · C): for the standard noise std σ·C with
fixed-size batches or shuffling that is σ/2 (the same as :func:`dpcore.accounting.dpsgd.dpsgd_epsilon` with
``sampling="fixed"``).  The GDP central limit theorem (``method="gdp"``, Poisson or fixed) is approximate: it
is used only when asked for by name, and its :class:`AccountantChoice` and the returned ε say
``rigorous=False``.  :func:`epsilon_for_record` returns a :class:`~dpcore.accounting.dpsgd.LabelledEpsilon`:
a float that carries the accountant's description and whether it is rigorous (a shuffled run's says that
the A_1 analysis produced it: :data:`SHUFFLE_NOTE`).

ModelMix runs use :mod:`dpcore.accounting.modelmix` (Poisson, individual clipping, ℓ2 or ℓ2 + ℓ∞), or with
``modelmix="plain"`` the plain DP-SGD bound, which holds because mixing is post-processing of the noisy
releases.  Non-private runs (or σ = 0) have ε = ∞; a run with no steps has ε = 0.

The accountants are objects (:mod:`dpcore.accounting.registry`): :func:`choose_accountant` takes the first entry
of :data:`~dpcore.accounting.registry.REGISTRY` (tightest first) that supports the record.

>>> rec = {"private": True, "sampling": "poisson", "clipping": "individual", "clip_norm": 1.0,
...        "noise_multiplier": 4.0, "noise_convention": "standard", "noise_std": 4.0, "dataset_size": 60000,
...        "batch_size": 600, "steps": 10000}
>>> round(epsilon_for_record(rec, 1e-5, method="rdp-mironov"), 3)  # Abadi et al. 2016
1.259
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpcore.accounting import events
from dpcore.accounting.registry import (
    ACCOUNTANT_NAMES,
    ALL_METHODS,
    MODELMIX_MODES,
    REGISTRY,
    SHUFFLE_NOTE,
    LabelledEpsilon,
    accountant_named,
    describe_run,
    noise_multiplier,
)
from dpcore.accounting.run_record import RunRecord
from dpcore.validation import check_bool, check_choice, check_nonnegative, check_open_unit, check_positive

__all__ = [
    "AccountantChoice",
    "LabelledEpsilon",
    "MODELMIX_MODES",
    "SHUFFLE_NOTE",
    "as_record",
    "choose_accountant",
    "epsilon_for_record",
    "noise_multiplier_for_record",
    "record_from_event",
]

#: The neighbouring relations an :class:`AccountantChoice` names ("-" for a non-private run).
ADJACENCIES = ("-", "add/remove", "replace-one")


@dataclass(frozen=True)
class AccountantChoice:
    """Which accountant a record gets, with which effective parameters, and whether it is rigorous."""

    name: str  # "none" or the name of an entry of dpcore.accounting.registry.REGISTRY
    adjacency: str
    sensitivity: float  # in multiples of C
    noise_multiplier: float  # σ_eff = noise_std / (sensitivity · C)
    description: str
    method: str = ""
    rigorous: bool = True

    def __post_init__(self) -> None:
        check_choice("name", self.name, ACCOUNTANT_NAMES)
        check_choice("adjacency", self.adjacency, ADJACENCIES)
        check_positive("sensitivity", self.sensitivity, allow_inf=True)
        check_nonnegative("noise_multiplier", self.noise_multiplier)
        if not isinstance(self.description, str):
            raise ValueError(f"description must be a string, got {self.description!r}")
        check_choice("method", self.method, ("", *ALL_METHODS))
        check_bool("rigorous", self.rigorous)


def as_record(record: RunRecord | Mapping[str, Any] | Any) -> RunRecord:
    """``record`` itself, a mapping validated into a :class:`RunRecord`, or a dp_accounting ``DpEvent`` of the
    kinds :func:`record_from_event` covers (``ValueError`` when invalid)."""
    if not isinstance(record, (RunRecord, Mapping)) and type(record).__module__.startswith("dp_accounting"):
        return record_from_event(record)
    return RunRecord.from_dict(record)


def record_from_event(event: Any) -> RunRecord:
    """The :class:`RunRecord` of a dp_accounting ``DpEvent`` that this package accounts for (the inverse of
    :meth:`RunRecord.to_event`): a (self-)composition of ``GaussianDpEvent(σ)``, ``PoissonSampledDpEvent(q,
    Gaussian)`` (add/remove-one; one σ for all) or ``SampledWithoutReplacementDpEvent(n, b, Gaussian)``
    (replace-one), and ``NoOpDpEvent`` / ``NonPrivateDpEvent``.  The record has clip norm 1 and noise std σ
    (so the Gaussian's multiplier is σ, as in the event); ``ValueError`` naming ``event`` for anything else."""
    import dp_accounting as dpa

    steps: list[tuple[Any, int]] = []

    def walk(ev: Any, times: int) -> None:
        if isinstance(ev, dpa.SelfComposedDpEvent):
            walk(ev.event, times * int(ev.count))
        elif isinstance(ev, dpa.ComposedDpEvent):
            for child in ev.events:
                walk(child, times)
        elif not isinstance(ev, dpa.NoOpDpEvent):
            steps.append((ev, times))

    walk(event, 1)
    bad = ValueError(
        f"event must be a composition of GaussianDpEvent, PoissonSampledDpEvent(q, GaussianDpEvent) or "
        f"SampledWithoutReplacementDpEvent(n, b, GaussianDpEvent) with one noise multiplier, got {event!r}"
    )
    if any(isinstance(ev, dpa.NonPrivateDpEvent) for ev, _ in steps):
        return RunRecord(private=False, sampling="poisson", dataset_size=1, batch_size=1, steps=1, clipping="none",
                         clip_norm=math.inf, noise_multiplier=0.0, noise_std=0.0)  # fmt: skip
    if not steps:
        return RunRecord(private=True, sampling="poisson", dataset_size=1, batch_size=1, steps=0,
                         clipping="individual", clip_norm=1.0, noise_multiplier=1.0, noise_std=1.0)  # fmt: skip
    kinds, sigmas, sizes = set(), set(), []
    for ev, count in steps:
        if isinstance(ev, dpa.GaussianDpEvent):
            kinds.add("poisson")
            sigmas.add(ev.noise_multiplier)
            sizes.append((1.0, count))
        elif isinstance(ev, dpa.PoissonSampledDpEvent) and isinstance(ev.event, dpa.GaussianDpEvent):
            kinds.add("poisson")
            sigmas.add(ev.event.noise_multiplier)
            sizes.append((float(ev.sampling_probability), count))
        elif isinstance(ev, dpa.SampledWithoutReplacementDpEvent) and isinstance(ev.event, dpa.GaussianDpEvent):
            kinds.add("fixed")
            sigmas.add(ev.event.noise_multiplier)
            sizes.append(((int(ev.sample_size), int(ev.source_dataset_size)), count))
        else:
            raise bad
    if len(kinds) != 1 or len(sigmas) != 1:
        raise bad
    sigma, total = float(sigmas.pop()), sum(c for _, c in sizes)
    if kinds == {"fixed"}:
        if len({size[1] for size, _ in sizes}) != 1:
            raise bad
        n = sizes[0][0][1]
        schedule: tuple[int, ...] = tuple(b for (b, _), c in sizes for _ in range(c))
        batch = schedule[0] if len(set(schedule)) == 1 else schedule
        # replace-one: the event's σ is against the sensitivity 2C, i.e. noise std 2σ·C (noise_convention)
        return RunRecord(private=True, sampling="fixed", dataset_size=n, batch_size=batch, steps=total,
                         clipping="individual", clip_norm=1.0, noise_multiplier=sigma, noise_convention="replace_one",
                         noise_std=2.0 * sigma)  # fmt: skip
    n, batches = events.sizes_for_rates([q for q, _ in sizes])
    schedule = tuple(b for b, (_, c) in zip(batches, sizes, strict=True) for _ in range(c))
    batch = schedule[0] if len(set(schedule)) == 1 else schedule
    return RunRecord(private=True, sampling="poisson", dataset_size=n, batch_size=batch, steps=total,
                     clipping="individual", clip_norm=1.0, noise_multiplier=sigma, noise_std=sigma)  # fmt: skip


def choose_accountant(
    record: RunRecord | Mapping[str, Any], *, method: str | None = None, modelmix: str = "amplified"
) -> AccountantChoice:
    """The accountant for ``record``: the first entry of the registry that supports it (see the module table);
    ``ValueError`` when none applies, or when the one that applies refuses the record's parameters."""
    rec = as_record(record)
    check_choice("modelmix", modelmix, MODELMIX_MODES)
    if method is not None:
        check_choice("method", method, ALL_METHODS)
    if not rec.private or rec.noise_std == 0:
        return AccountantChoice(
            "none", "-", math.inf, 0.0, "non-private run (no clipping or σ = 0): ε = ∞", method or "", True
        )
    for acc in REGISTRY:
        if not acc.supports(rec, modelmix=modelmix):
            continue
        acc.check(rec)
        if method is None:
            chosen = acc.default_method(rec)
        elif method in acc.methods:
            chosen = method
        else:
            raise ValueError(f"the {acc.name!r} accountant supports method in {acc.methods}, got method={method!r}")
        return AccountantChoice(
            acc.name, acc.adjacency, events.step_sensitivity(rec.sampling, rec.clipping), noise_multiplier(rec),
            acc.describe(rec, chosen), chosen, acc.rigorous(chosen),
        )  # fmt: skip
    raise ValueError(
        f"no accountant here covers sampling={rec.sampling!r} with clipping={rec.clipping!r}"
        + ("" if isinstance(rec.batch_size, int) else " and a batch_size schedule")
        + (" and ModelMix phases; use modelmix='plain'" if rec.modelmix is not None else "")
    )


def epsilon_for_record(
    record: RunRecord | Mapping[str, Any], delta: float, *, method: str | None = None, modelmix: str = "amplified"
) -> LabelledEpsilon:
    """ε at ``delta`` of the run described by ``record`` (a :class:`RunRecord`, or a dict validated into one).

    ``method``: ``None`` picks the accountant's rigorous default (PLD for Poisson and draws with replacement, RDP
    for fixed-size and ModelMix runs, the A_1 trade-off for shuffled runs); ``"gdp"`` (approximate) only when
    asked for by name.  ``modelmix="plain"`` accounts a ModelMix run as plain DP-SGD (post-processing).  The
    result is a :class:`~dpcore.accounting.dpsgd.LabelledEpsilon`: a float whose ``rigorous``/``label`` and
    ``description`` (the :class:`AccountantChoice`'s) travel with the value, so an approximate ε says so.  Raises
    ``ValueError`` for an invalid record and for combinations no accountant here covers.
    """
    delta = check_open_unit("delta", delta)
    rec = as_record(record)
    choice = choose_accountant(rec, method=method, modelmix=modelmix)
    if choice.name == "none":
        return LabelledEpsilon(math.inf, rigorous=True, method=choice.method, description=choice.description)
    value = 0.0 if rec.steps == 0 else accountant_named(choice.name).epsilon(rec, delta, choice.method)
    description = f"{choice.description}; {describe_run(rec)}"
    return LabelledEpsilon(value, rigorous=choice.rigorous, method=choice.method, description=description)


def noise_multiplier_for_record(
    record: RunRecord | Mapping[str, Any] | Any,
    target_epsilon: float,
    delta: float,
    *,
    method: str | None = None,
    modelmix: str = "amplified",
    rtol: float = 1e-3,
) -> float:
    """Smallest noise multiplier σ (in the record's ``noise_convention``, to ``rtol`` relative) whose run -- the
    record with that σ, everything else kept -- has ``epsilon_for_record(…) <= target_epsilon``.

    The one calibrator (:func:`dpcore.accounting.calibrate.smallest_sigma`) over :func:`epsilon_for_record`'s
    accountant, or that accountant's own faster calibration where it has one (the Poisson PLD's coarse-to-fine
    search, :func:`dpcore.accounting.pld.pld_noise_multiplier`); either way never overshooting the target.
    """
    from dpcore.accounting.calibrate import check_rtol, smallest_sigma

    target = check_positive("target_epsilon", target_epsilon)
    delta = check_open_unit("delta", delta)
    rtol = check_rtol(rtol)
    rec = as_record(record)
    if not rec.private:
        raise ValueError("record must be of a private run (clipping and noise) to calibrate its noise multiplier")
    if rec.steps == 0:
        raise ValueError("record has steps = 0: every noise multiplier meets the target; steps must be >= 1")
    choice = choose_accountant(rec, method=method, modelmix=modelmix)
    accountant = accountant_named(choice.name)
    kappa, clip = events.NOISE_FACTOR[rec.noise_convention], rec.clip_norm

    def at(sigma: float) -> RunRecord:
        return dataclasses.replace(rec, noise_multiplier=sigma, noise_std=kappa * clip * sigma)

    fast = getattr(accountant, "calibrate", None)
    if fast is not None:
        sigma = fast(rec, target, delta, choice.method, rtol)
        if sigma is not None:
            return sigma
    try:
        return smallest_sigma(lambda s: accountant.epsilon(at(s), delta, choice.method), target, rtol=rtol)
    except ValueError as exc:  # say which run could not be calibrated
        raise ValueError(f"{exc} (at {describe_run(rec)}, delta={delta:g}, method={choice.method!r})") from exc
