"""Pick the accountant that matches a training run record, and refuse what nothing here accounts for.

A record (from :meth:`dpcore.training.Trainer.record`) says how batches were sampled, how gradients
were clipped, the clip norm C, the noise std κ·C·σ and the number of rounds.  The accountant needs
the noise std *relative to the sensitivity* of one round, which depends on the neighbouring relation
that the sampler implies:

=============  ===========  =========================  ============================================
sampling       adjacency    sensitivity of one round   accountant
=============  ===========  =========================  ============================================
``poisson``    add/remove   C (individual), 2C (batch)  :func:`dpcore.accounting.dpsgd.dpsgd_epsilon`
                            mixed: refused (adding one record shifts the groups of all later ones)
``fixed``      replace-one  2C (all clippings)          GDP CLT for uniform subsampling (Bu et al. 2020)
``shuffle``    replace-one  2C (all clippings)          paper 003 Thm F.1, g = 1: G_{√E/σ} under its
                                                        adversary A_1 (:mod:`dpcore.accounting.shuffled`)
=============  ===========  =========================  ============================================

The effective noise multiplier is σ_eff = noise_std / sensitivity: with paper 003's convention
(noise 2Cσ) and replace-one sampling σ_eff = σ; with the standard convention (noise Cσ) and Poisson
individual clipping σ_eff = σ (standard DP-SGD).  Mismatched pairs are accounted honestly (e.g. the
standard convention with fixed-size batches gives σ_eff = σ/2).

ModelMix runs use :func:`dpcore.accounting.modelmix.epsilon` (Poisson, individual clipping, ℓ2 or
ℓ2 + ℓ∞), or with ``modelmix="plain"`` the plain DP-SGD bound, which holds because mixing is
post-processing of the noisy releases.  A scheduled batch size (paper 000) is composed round by round.
Non-private runs (or σ = 0) have ε = ∞.

>>> rec = {"private": True, "sampling": "poisson", "clipping": "individual", "clip_norm": 1.0,
...        "noise_multiplier": 4.0, "noise_convention": "standard", "noise_std": 4.0, "dataset_size": 60000,
...        "batch_size": 600, "steps": 10000, "modelmix": None, "linf_p": None, "clip_norm_type": "l2"}
>>> round(epsilon_for_record(rec, 1e-5, method="rdp-mironov"), 3)  # Abadi et al. 2016
1.259
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dp_accounting
from dp_accounting import pld, rdp

from dpcore.accounting import fdp, gaussian
from dpcore.accounting.dpsgd import METHODS, PLD_GRID, dpsgd_epsilon
from dpcore.accounting.rdp import RDP_ORDERS, rdp_to_epsilon
from dpcore.validation import check_choice, check_open_unit

__all__ = ["AccountantChoice", "choose_accountant", "epsilon_for_record", "MODELMIX_MODES"]

MODELMIX_MODES = ("amplified", "plain")
_REQUIRED = ("private", "sampling", "clipping", "clip_norm", "noise_std", "dataset_size", "batch_size", "steps")


@dataclass(frozen=True)
class AccountantChoice:
    """Which accountant a record gets and with which effective parameters."""

    name: str  # "none", "dpsgd", "dpsgd-schedule", "gdp-uniform", "shuffling-A1", "modelmix"
    adjacency: str
    sensitivity: float  # in multiples of C
    noise_multiplier: float  # σ_eff = noise_std / (sensitivity · C)
    description: str


def _optional_module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _check_record(record: Mapping[str, Any]) -> None:
    missing = [k for k in _REQUIRED if k not in record]
    if missing:
        raise ValueError(f"record is missing {', '.join(missing)}")


def choose_accountant(record: Mapping[str, Any], *, modelmix: str = "amplified") -> AccountantChoice:
    """The accountant for ``record`` (see the module table); ``ValueError`` when none applies."""
    _check_record(record)
    check_choice("modelmix", modelmix, MODELMIX_MODES)
    if not record["private"] or record["noise_std"] == 0 or record["clipping"] == "none":
        return AccountantChoice("none", "-", math.inf, 0.0, "non-private run (no clipping or σ = 0): ε = ∞")
    clip = float(record["clip_norm"])
    if math.isinf(clip):
        raise ValueError("record has clip_norm = inf: the sensitivity is unbounded")
    sampling, clipping = record["sampling"], record["clipping"]
    scheduled = not isinstance(record["batch_size"], (int, float))
    mm = record.get("modelmix")
    if sampling == "poisson":
        if clipping == "mixed":
            raise ValueError(
                "Poisson sampling with mixed clipping cannot be accounted for: adding one record shifts the "
                "group of every later record, so one round's sensitivity is not bounded by 2C"
            )
        sens = 1.0 if clipping == "individual" else 2.0
        sigma = record["noise_std"] / (sens * clip)
        if mm is not None and modelmix == "amplified":
            if clipping != "individual" or scheduled:
                raise ValueError(
                    "the ModelMix accountant covers Poisson sampling with individual clipping and a "
                    "constant batch size only"
                )
            if _optional_module("dpcore.accounting.modelmix") is None:
                raise ValueError("dpcore.accounting.modelmix is not available; use modelmix='plain'")
            return AccountantChoice(
                "modelmix",
                "add/remove",
                sens,
                sigma,
                "ModelMix RDP accountant (paper 002 Thm 4.1 / corrected Cor. 4.1, min with the plain sampled Gaussian)",
            )
        name = "dpsgd-schedule" if scheduled else "dpsgd"
        what = "batch clipping: the clipped batch mean moves by ≤ 2C" if sens == 2 else "individual clipping"
        return AccountantChoice(
            name,
            "add/remove",
            sens,
            sigma,
            f"Poisson-subsampled Gaussian (Abadi et al. 2016), {what}"
            + ("; post-processing bound for ModelMix" if mm is not None else ""),
        )
    if mm is not None and modelmix == "amplified":
        raise ValueError(f"the ModelMix accountant assumes Poisson sampling, not {sampling!r}; use modelmix='plain'")
    sigma = record["noise_std"] / (2.0 * clip)
    if sampling == "fixed":
        if scheduled:
            raise ValueError("fixed-size sampling with a batch-size schedule has no accountant here")
        return AccountantChoice(
            "gdp-uniform",
            "replace-one",
            2.0,
            sigma,
            "uniform subsampling without replacement, GDP central limit theorem (Bu et al. "
            "2020 / Dong et al. 2022 Cor. 5.4; paper 003's A_0; asymptotic)",
        )
    if sampling == "shuffle":
        if scheduled:
            raise ValueError("shuffling with a batch-size schedule has no accountant here")
        if _optional_module("dpcore.accounting.shuffled") is None:
            raise ValueError("shuffled batches need dpcore.accounting.shuffling, which is not available")
        return AccountantChoice(
            "shuffling-A1",
            "replace-one",
            2.0,
            sigma,
            "paper 003 Thm F.1 (g = 1): G_{sqrt(E)/σ} against its stronger adversary A_1 "
            "(assumes |d| = |d'|); no standard (A_0) shuffling accountant exists here",
        )
    raise ValueError(f"unknown sampling {sampling!r} in record")


def _schedule_epsilon(sigma: float, rates: list[float], delta: float, method: str) -> float:
    """ε of Poisson-subsampled Gaussian rounds with per-round rates (runs of equal rate composed)."""
    runs: list[list[float]] = []
    for q in rates:
        if runs and runs[-1][0] == q:
            runs[-1][1] += 1
        else:
            runs.append([q, 1])
    if method == "gdp":
        mu = math.sqrt(sum(fdp.clt_mu(sigma, q, n, "poisson") ** 2 for q, n in runs))
        return gaussian.epsilon_from_mu(mu, delta)
    events = []
    for q, n in runs:
        g = dp_accounting.GaussianDpEvent(sigma)
        step = g if q >= 1.0 else dp_accounting.PoissonSampledDpEvent(q, g)
        events.append(dp_accounting.SelfComposedDpEvent(step, int(n)))
    event = dp_accounting.ComposedDpEvent(events)
    if method == "pld":
        acc = pld.PLDAccountant(value_discretization_interval=PLD_GRID)
        acc.compose(event)
        return float(acc.get_epsilon(delta))
    acc = rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(event)
    return rdp_to_epsilon(RDP_ORDERS, acc._rdp, delta, conversion="mironov" if method == "rdp-mironov" else "balle")


def epsilon_for_record(
    record: Mapping[str, Any], delta: float, *, method: str | None = None, modelmix: str = "amplified"
) -> float:
    """ε at ``delta`` of the run described by ``record`` with the matching accountant.

    ``method`` (Poisson runs): one of :data:`dpcore.accounting.dpsgd.METHODS`, default ``"pld"``;
    fixed-size runs only support ``"gdp"`` (the default for them); shuffled runs ignore it.
    ``modelmix="plain"`` accounts a ModelMix run as plain DP-SGD (post-processing).
    Raises ``ValueError`` for combinations no accountant here covers.
    """
    delta = check_open_unit("delta", delta)
    choice = choose_accountant(record, modelmix=modelmix)
    if choice.name == "none":
        return math.inf
    steps = int(record["steps"])
    if steps <= 0:
        return 0.0
    n = int(record["dataset_size"])
    sigma = choice.noise_multiplier
    if choice.name == "dpsgd":
        method = method or "pld"
        check_choice("method", method, METHODS)
        return dpsgd_epsilon(sigma, sample_rate=record["batch_size"] / n, steps=steps, delta=delta, method=method)
    if choice.name == "dpsgd-schedule":
        method = method or "pld"
        check_choice("method", method, METHODS)
        rates = [s / n for s in list(record["batch_size"])[:steps]]
        return _schedule_epsilon(sigma, rates, delta, method)
    if choice.name == "gdp-uniform":
        if method not in (None, "gdp"):
            raise ValueError(f"fixed-size sampling is accounted with method='gdp' only, got {method!r}")
        return dpsgd_epsilon(
            sigma, sample_rate=record["batch_size"] / n, steps=steps, delta=delta, method="gdp", sampling="fixed"
        )
    if choice.name == "shuffling-A1":
        shuffled = importlib.import_module("dpcore.accounting.shuffled")
        per_epoch = n // int(record["batch_size"])
        epochs = math.ceil(steps / per_epoch)  # every started epoch can hold the differing record once
        s = int(record.get("group_size") or record["batch_size"])
        m = max(1, int(record["batch_size"]) // s)
        return float(shuffled.mixture_tradeoff("shuffle", sigma=sigma, E=epochs, N=n, s=s, m=m, g=1).epsilon(delta))
    # ModelMix
    mm_module = importlib.import_module("dpcore.accounting.modelmix")
    mm = record["modelmix"]
    linf = record.get("linf_p") if record.get("clip_norm_type") == "l2_linf" else None
    phases = [(int(p["steps"]), float(p["tau_ratio"])) for p in mm["phases"]]
    done, kept = 0, []
    for n_steps, tau in phases:  # a partial run accounts only the rounds done
        take = min(n_steps, steps - done)
        if take > 0:
            kept.append((take, tau))
        done += take
    common = dict(
        n=n,
        batch_size=float(record["batch_size"]),
        noise_multiplier=sigma,
        clip=float(record["clip_norm"]),
        delta=delta,
        linf_blocks=linf,
    )
    if len(kept) == 1:
        return float(mm_module.epsilon(steps=kept[0][0], tau=kept[0][1], **common))
    return float(mm_module.schedule_epsilon(kept, **common))
