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

>>> rec = {"private": True, "sampling": "poisson", "clipping": "individual", "clip_norm": 1.0,
...        "noise_multiplier": 4.0, "noise_convention": "standard", "noise_std": 4.0, "dataset_size": 60000,
...        "batch_size": 600, "steps": 10000}
>>> round(epsilon_for_record(rec, 1e-5, method="rdp-mironov"), 3)  # Abadi et al. 2016
1.259
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dp_accounting
import numpy as np
from dp_accounting import pld

from dpcore.accounting import fdp, gaussian, modelmix, replacement, shuffled
from dpcore.accounting.dpsgd import APPROXIMATE, METHODS, PLD_GRID, LabelledEpsilon
from dpcore.accounting.rdp import RDP_ORDERS, rdp_to_epsilon, subsampled_gaussian_rdp
from dpcore.accounting.run_record import RunRecord
from dpcore.validation import check_choice, check_nonnegative, check_open_unit, check_positive

__all__ = [
    "AccountantChoice",
    "LabelledEpsilon",
    "MODELMIX_MODES",
    "SHUFFLE_NOTE",
    "as_record",
    "choose_accountant",
    "epsilon_for_record",
]

MODELMIX_MODES = ("amplified", "plain")
#: The neighbouring relations an :class:`AccountantChoice` names ("-" for a non-private run).
ADJACENCIES = ("-", "add/remove", "replace-one")
#: How a shuffled run's ε is obtained, said wherever that ε is shown (the result's description, the CLI).
SHUFFLE_NOTE = (
    "sampling='shuffle' is accounted by van Dijk et al.'s A_1 analysis, not by a subsampling accountant "
    "(usually far above the Poisson ε of the same σ, q and steps)"
)
_MAX_FRACTIONAL_RUNS = 8
_MAX_PLD_RUNS = 16  # PLD composes one distribution per distinct rate (~0.5 s each)
_INTEGER_ORDERS = tuple(float(a) for a in range(2, 257))
#: Methods each accountant supports; the first is the default.
_METHODS = {
    "dpsgd": METHODS,
    "dpsgd-schedule": METHODS,
    "fixed-wor": ("rdp", "rdp-mironov", "gdp"),
    "fixed-wor-schedule": ("rdp", "rdp-mironov"),
    "shuffling-A1": ("a1",),
    "modelmix": ("rdp", "rdp-mironov"),
    "with-replacement": ("pld",),
    "none": METHODS + ("a1",),
}


@dataclass(frozen=True)
class AccountantChoice:
    """Which accountant a record gets, with which effective parameters, and whether it is rigorous."""

    name: str  # "none", "dpsgd", "dpsgd-schedule", "fixed-wor", "fixed-wor-schedule", "shuffling-A1", "modelmix"
    adjacency: str
    sensitivity: float  # in multiples of C
    noise_multiplier: float  # σ_eff = noise_std / (sensitivity · C)
    description: str
    method: str = ""
    rigorous: bool = True

    def __post_init__(self) -> None:
        check_choice("name", self.name, tuple(_METHODS))
        check_choice("adjacency", self.adjacency, ADJACENCIES)
        check_positive("sensitivity", self.sensitivity, allow_inf=True)
        check_nonnegative("noise_multiplier", self.noise_multiplier)
        if not isinstance(self.description, str):
            raise ValueError(f"description must be a string, got {self.description!r}")
        check_choice("method", self.method, ("", *_METHODS["none"]))
        if not isinstance(self.rigorous, bool):
            raise ValueError(f"rigorous must be True or False, got {self.rigorous!r}")


def as_record(record: RunRecord | Mapping[str, Any]) -> RunRecord:
    """``record`` itself, or a mapping validated into a :class:`RunRecord` (``ValueError`` when invalid)."""
    return RunRecord.from_dict(record)


def _method(name: str, method: str | None, *, runs: int = 1) -> str:
    allowed = _METHODS[name]
    if method is None:
        if name == "dpsgd-schedule" and runs > _MAX_PLD_RUNS:
            return "rdp"  # the rigorous default that stays fast for many distinct batch sizes
        return allowed[0]
    if method not in allowed:
        raise ValueError(f"the {name!r} accountant supports method in {allowed}, got method={method!r}")
    return method


def choose_accountant(
    record: RunRecord | Mapping[str, Any], *, method: str | None = None, modelmix: str = "amplified"
) -> AccountantChoice:
    """The accountant for ``record`` (see the module table); ``ValueError`` when none applies."""
    rec = as_record(record)
    check_choice("modelmix", modelmix, MODELMIX_MODES)
    if method is not None:
        check_choice("method", method, METHODS + ("a1",))
    clip = rec.clip_norm
    scheduled = not isinstance(rec.batch_size, int)
    mm = rec.modelmix
    if not rec.private or rec.noise_std == 0:
        return AccountantChoice(
            "none", "-", math.inf, 0.0, "non-private run (no clipping or σ = 0): ε = ∞", method or "", True
        )
    if rec.sampling == "replacement":
        if rec.clipping != "individual" or mm is not None or not isinstance(rec.batch_size, int):
            raise ValueError("sampling='replacement' is accounted for individual clipping and a constant batch size")
        m = _method("with-replacement", method)
        return AccountantChoice(
            "with-replacement", "replace-one", 2.0, rec.noise_std / (2.0 * rec.clip_norm),
            "with-replacement PLD, replace-one (dpcore.accounting.replacement; Lowy & Razaviyayn 2023, Alg. 2)", m,
        )  # fmt: skip
    if rec.sampling == "poisson":
        if rec.clipping == "mixed":
            raise ValueError(
                "Poisson sampling with mixed clipping cannot be accounted for: adding one record shifts the "
                "group of every later record, so one step's sensitivity is not bounded by 2C"
            )
        sens = 1.0 if rec.clipping == "individual" else 2.0
        sigma = rec.noise_std / (sens * clip)
        if mm is not None and modelmix == "amplified":
            if rec.clipping != "individual" or scheduled:
                raise ValueError(
                    "the ModelMix accountant covers Poisson sampling with individual clipping and a "
                    "constant batch size only; use modelmix='plain'"
                )
            m = _method("modelmix", method)
            return AccountantChoice(
                "modelmix",
                "add/remove",
                sens,
                sigma,
                "ModelMix RDP accountant (Xiao, Wan, Devadas, Thm 4.1 / corrected Cor. 4.1, min with the plain "
                "subsampled Gaussian)",
                m,
            )
        name = "dpsgd-schedule" if scheduled else "dpsgd"
        m = _method(name, method, runs=len(_runs(rec.schedule)) if scheduled else 1)
        what = "batch clipping: the clipped batch mean moves by ≤ 2C" if sens == 2 else "individual clipping"
        return AccountantChoice(
            name,
            "add/remove",
            sens,
            sigma,
            ("APPROXIMATE (GDP central limit theorem): " if m in APPROXIMATE else "")
            + f"Poisson-subsampled Gaussian (Abadi et al. 2016), {what}"
            + ("; post-processing bound for ModelMix" if mm is not None else ""),
            m,
            m not in APPROXIMATE,
        )
    if mm is not None and modelmix == "amplified":
        raise ValueError(
            f"the ModelMix accountant assumes Poisson sampling, not {rec.sampling!r}; use modelmix='plain'"
        )
    sigma = rec.noise_std / (2.0 * clip)
    if rec.sampling == "fixed":
        name = "fixed-wor-schedule" if scheduled else "fixed-wor"
        m = _method(name, method)
        if m in APPROXIMATE:
            return AccountantChoice(
                name,
                "replace-one",
                2.0,
                sigma,
                "APPROXIMATE: GDP central limit theorem for uniform subsampling (Dong, Roth, Su 2022, Cor. 5.4)",
                m,
                False,
            )
        return AccountantChoice(
            name,
            "replace-one",
            2.0,
            sigma,
            "fixed-size sampling without replacement, RDP of the subsampled Gaussian (Wang, Balle, "
            "Kasiviswanathan 2019, Thm 9) under replace-one",
            m,
        )
    # shuffle (RunRecord refuses schedules with shuffling)
    m = _method("shuffling-A1", method)
    return AccountantChoice(
        "shuffling-A1",
        "replace-one",
        2.0,
        sigma,
        SHUFFLE_NOTE + ": G_{sqrt(E)/σ} against the labelled adversary A_1 (van Dijk et al., Generalizing "
        "DP-SGD with Shuffling and Batch Clipping, Thm F.1, g = 1); an upper bound for the standard adversary",
        m,
    )


def _runs(values: tuple[int, ...]) -> list[tuple[int, int]]:
    """Run-length encoding [(value, count), ...]."""
    out: list[list[int]] = []
    for v in values:
        if out and out[-1][0] == v:
            out[-1][1] += 1
        else:
            out.append([v, 1])
    return [(v, c) for v, c in out]


def _poisson_schedule_epsilon(sigma: float, sizes: tuple[int, ...], n: int, delta: float, method: str) -> float:
    """ε of Poisson-subsampled Gaussian steps with per-step rates (runs of equal rate composed)."""
    runs = [(b / n, c) for b, c in _runs(sizes)]
    if method == "gdp":
        mu = math.sqrt(sum(fdp.clt_mu(sigma, q, c, "poisson") ** 2 for q, c in runs))
        return gaussian.epsilon_from_mu(mu, delta)
    if method == "pld":
        if len(runs) > _MAX_PLD_RUNS:
            raise ValueError(
                f"a schedule with {len(runs)} distinct batch sizes is out of the PLD accountant's range "
                f"(at most {_MAX_PLD_RUNS}, about 0.5 s each); use method='rdp'"
            )
        events = []
        for q, c in runs:
            g = dp_accounting.GaussianDpEvent(sigma)
            step = g if q >= 1.0 else dp_accounting.PoissonSampledDpEvent(q, g)
            events.append(dp_accounting.SelfComposedDpEvent(step, c))
        acc = pld.PLDAccountant(value_discretization_interval=PLD_GRID)
        acc.compose(dp_accounting.ComposedDpEvent(events))
        return float(acc.get_epsilon(delta))
    # many distinct rates: exact integer orders only (closed form, fast); fractional orders need a quadrature each
    a = np.asarray(RDP_ORDERS if len(runs) <= _MAX_FRACTIONAL_RUNS else _INTEGER_ORDERS, dtype=float)
    total = sum(c * subsampled_gaussian_rdp(a, sample_rate=q, noise_multiplier=sigma) for q, c in runs)
    return rdp_to_epsilon(a, total, delta, conversion="mironov" if method == "rdp-mironov" else "balle")


def _fixed_epsilon(sigma: float, sizes: tuple[int, ...], n: int, delta: float, method: str) -> float:
    """ε of fixed-size steps without replacement (replace-one) composed by RDP, or the approximate CLT."""
    runs = _runs(sizes)
    if method == "gdp":
        mu = math.sqrt(sum(fdp.clt_mu(sigma, b / n, c, "fixed") ** 2 for b, c in runs))
        return gaussian.epsilon_from_mu(mu, delta)
    a = np.asarray(RDP_ORDERS, dtype=float)
    # σ here is σ_eff = noise_std / (2C), the multiplier against the replace-one sensitivity: in the library's
    # σ vocabulary that is noise_convention="replace_one" (std 2C·σ_eff), whose Gaussian multiplier is σ_eff itself
    total = sum(
        c
        * subsampled_gaussian_rdp(
            a, noise_multiplier=sigma, sampling="fixed", dataset_size=n, batch_size=b, noise_convention="replace_one"
        )
        for b, c in runs
    )
    return rdp_to_epsilon(a, total, delta, conversion="mironov" if method == "rdp-mironov" else "balle")


def _shuffle_epsilon(rec: RunRecord, sigma: float, delta: float) -> float:
    n, batch = rec.dataset_size, int(rec.batch_size)
    per_epoch = n // batch
    epochs = math.ceil(rec.steps / per_epoch)  # every started epoch can hold the differing record once
    s = rec.group_size if rec.clipping == "mixed" else (batch if rec.clipping == "batch" else 1)
    m = max(1, batch // s)
    return float(shuffled.mixture_tradeoff("shuffle", sigma=sigma, E=epochs, N=n, s=s, m=m, g=1).epsilon(delta))


def _modelmix_epsilon(rec: RunRecord, sigma: float, delta: float, method: str) -> float:
    linf = rec.linf_p if rec.clip_norm_type == "l2_linf" else None
    kept, done = [], 0
    for phase in rec.modelmix["phases"]:  # a partial run accounts only the steps done
        take = min(phase["steps"], rec.steps - done)
        if take > 0:
            kept.append((take, phase["tau_ratio"]))
        done += take
    common = dict(
        n=rec.dataset_size,
        batch_size=float(rec.batch_size),
        noise_multiplier=sigma,
        clip=rec.clip_norm,
        delta=delta,
        linf_blocks=linf,
        conversion="mironov" if method == "rdp-mironov" else "balle",
    )
    if len(kept) == 1:
        return float(modelmix.epsilon(steps=kept[0][0], tau=kept[0][1], **common))
    return float(modelmix.schedule_epsilon(kept, **common))


def epsilon_for_record(
    record: RunRecord | Mapping[str, Any], delta: float, *, method: str | None = None, modelmix: str = "amplified"
) -> LabelledEpsilon:
    """ε at ``delta`` of the run described by ``record`` (a :class:`RunRecord`, or a dict validated into one).

    ``method``: ``None`` picks the accountant's rigorous default (PLD for Poisson, RDP for fixed-size and
    ModelMix runs, the A_1 trade-off for shuffled runs); ``"gdp"`` (approximate) only when asked for by
    name.  ``modelmix="plain"`` accounts a ModelMix run as plain DP-SGD (post-processing).  The result is a
    :class:`~dpcore.accounting.dpsgd.LabelledEpsilon`: a float whose ``rigorous``/``label`` and ``description``
    (the :class:`AccountantChoice`'s) travel with the value, so an approximate ε says so.  Raises
    ``ValueError`` for an invalid record and for combinations no accountant here covers.
    """
    delta = check_open_unit("delta", delta)
    rec = as_record(record)
    choice = choose_accountant(rec, method=method, modelmix=modelmix)
    value = _record_epsilon(rec, choice, delta)
    return LabelledEpsilon(value, rigorous=choice.rigorous, method=choice.method, description=choice.description)


def _record_epsilon(rec: RunRecord, choice: AccountantChoice, delta: float) -> float:
    if choice.name == "none":
        return math.inf
    if rec.steps == 0:
        return 0.0
    sigma = choice.noise_multiplier
    if choice.name in ("dpsgd", "dpsgd-schedule"):
        return _poisson_schedule_epsilon(sigma, rec.schedule, rec.dataset_size, delta, choice.method)
    if choice.name in ("fixed-wor", "fixed-wor-schedule"):
        return _fixed_epsilon(sigma, rec.schedule, rec.dataset_size, delta, choice.method)
    if choice.name == "shuffling-A1":
        return _shuffle_epsilon(rec, sigma, delta)
    if choice.name == "with-replacement":
        k = int(rec.batch_size)
        return replacement.with_replacement_epsilon(
            noise_std=rec.noise_std / k, lipschitz=rec.clip_norm, batch_size=k, n=rec.dataset_size,
            rounds=rec.steps, delta=delta,
        )  # fmt: skip
    return _modelmix_epsilon(rec, sigma, delta, choice.method)
