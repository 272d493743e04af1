"""Private data normalisation: noisy per-channel mean and variance of a data set's features, and its privacy cost.

Tramèr & Boneh, "Differentially Private Learning Needs Better Features (or Much More Data)", ICLR 2021, §3 and
App. B ("data normalization" of the ScatterNet models): before DP-SGD, the mean and the variance of every feature
channel are estimated privately over the whole training set and the features are standardised with them (a
frozen batch normalisation).  Their code (``scatter_normalization`` in ``dp_utils.py`` of ftramer/Handcrafted-DP,
copied unchanged into junwan0224/ModelMix) does, per channel k of K and example i of the n training examples:

* m_i[k] = mean over the spatial positions of x_i[k] and s_i[k] = mean over the spatial positions of x_i[k]²;
* each example's vector m_i ∈ R^K is clipped in ℓ2 to C_m, each s_i ∈ R^K to C_s;
* two Gaussian releases: mean = (Σ_i clip(m_i) + N(0, (σ·C_m)² I_K)) / n, second moment likewise with C_s;
* var = max(second moment − mean², 0), post-processing.

**Sensitivity (derived here from the definition).**  Let D' = D ∪ {x*} (add/remove-one neighbours, the relation
of Poisson-sampled DP-SGD).  The released sum S(D) = Σ_{i∈D} clip_C(m_i) changes by S(D') − S(D) = clip_C(m(x*)),
whose ℓ2 norm is at most C, and C is attained by any x* with ‖m(x*)‖ ≥ C: the ℓ2 sensitivity is exactly C
(2C under replace-one, not used here).  Each release is therefore the Gaussian mechanism with noise multiplier σ
= noise std / sensitivity: (α, α/(2σ²))-RDP for every α > 1 (Mironov 2017, Prop. 7) and (1/σ)-GDP (Dong, Roth,
Su 2022, Thm 2.7); the two releases (independent noise) compose to (α, α/σ²)-RDP, exactly √2/σ-GDP (their
Cor. 3.3).  Dividing by n treats the data set size as public, as the averaged DP-SGD update does with q·n.
With σ = 8 (the authors' ``bn_noise_multiplier``), Opacus's orders and the conversion of Balle et al. 2020
this is ε = 0.695 at δ = 1e-5, the number ModelMix §5.1 prints; the exact (GDP) value is 0.634.

**Thresholds.**  ``threshold_rule="median"`` is the authors' choice: C_m, C_s = the medians of ‖m_i‖ and
‖s_i‖ over the training set, data-dependent quantities that no accountant here (nor theirs: "technically a small
privacy leak, sue me...") charges.  The record says so (``thresholds_private=False``) and every ε label built from
it repeats it.  ``threshold_rule="given"`` takes public thresholds and has no such leak.

**Accounting.**  The :class:`NormalizationRecord` describes the releases (sensitivity, noise std, count) like a
:class:`~dpcore.accounting.run_record.RunRecord` describes a training run; :func:`normalization_epsilon` is its ε
alone and :func:`composed_epsilon` composes it with a training run's record through the library's RDP primitives
(:mod:`dpcore.accounting.rdp`, :mod:`dpcore.accounting.modelmix`): RDP adds order by order (Mironov 2017,
Prop. 1), then one conversion to (ε, δ).  This is how Tramèr & Boneh and the ModelMix authors compose
(``get_privacy_spent(rdp_norm + rdp_sgd)``).  It is an upper bound; for plain DP-SGD the library's default
training accountant is PLD, so the increase over the training ε must be read against the training ε under the
same RDP composition (:class:`ComposedEpsilon` holds both).  What could move into :mod:`dpcore.accounting` later:
a record of Gaussian releases beside the :class:`~dpcore.accounting.run_record.RunRecord` and a composition of
heterogeneous events in :mod:`dpcore.accounting.records` (PLD for Poisson DP-SGD, RDP for ModelMix), so that every
run's total ε comes from one place; today the accountant sees only the training record.

>>> feats = torch.rand(500, 3, 4, 4, generator=torch.Generator().manual_seed(0))
>>> out = private_channel_statistics(feats, noise_multiplier=8.0, clip_mean=1.0, clip_second=1.0,
...                                  generator=torch.Generator().manual_seed(1))
>>> [r.name for r in out.record.releases], out.record.releases[0].noise_std
(['mean', 'second_moment'], 8.0)
>>> round(normalization_epsilon(out.record, 1e-5), 4)  # ModelMix §5.1: 'we spend eps=0.695'
0.6948
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from dpcore.accounting import gaussian
from dpcore.accounting import modelmix as mm_accounting
from dpcore.accounting.rdp import RDP_ORDERS, check_orders, rdp_to_epsilon, subsampled_gaussian_rdp
from dpcore.accounting.records import as_record, choose_accountant
from dpcore.accounting.run_record import RunRecord
from dpcore.validation import check_choice, check_nonnegative, check_open_unit, check_positive, check_positive_int

__all__ = [
    "ADJACENCY",
    "COMPOSITION_ORDERS",
    "EPSILON_METHODS",
    "RELEASE_NAMES",
    "THRESHOLD_RULES",
    "GaussianRelease",
    "NormalizationRecord",
    "NormalizedStatistics",
    "ComposedEpsilon",
    "PrivateNormalization",
    "channel_moments",
    "clip_rows",
    "median_thresholds",
    "private_channel_statistics",
    "normalization_rdp",
    "normalization_epsilon",
    "composed_epsilon",
]

ADJACENCY = "add/remove"
RELEASE_NAMES = ("mean", "second_moment")
THRESHOLD_RULES = ("given", "median")
#: "rdp": RDP of the Gaussian releases on an order grid, Balle et al. conversion (the authors' way);
#: "gdp": exact -- Gaussian releases compose to sqrt(Σ 1/σ_r²)-GDP (Dong, Roth, Su 2022, Cor. 3.3)
EPSILON_METHODS = ("rdp", "gdp")
#: orders of the RDP composition with a plain DP-SGD run: Opacus's (1.1 ... 63, the authors' ``ORDERS``) and
#: larger ones, which small ε (large σ, few steps) need
COMPOSITION_ORDERS: tuple[float, ...] = tuple(RDP_ORDERS) + (80.0, 96.0, 128.0, 192.0, 256.0, 384.0, 512.0)
RECORD_VERSION = 1


# ---------------------------------------------------------------------------------------------- the record
@dataclass(frozen=True)
class GaussianRelease:
    """One noisy sum of per-example vectors clipped to ``clip`` in ℓ2 (its add/remove sensitivity), released as
    (sum + N(0, noise_std² I)) / ``divisor``; ``noise_std`` = ``noise_multiplier`` · ``clip``.

    ``clip`` and ``noise_std`` are ``None`` in a *planned* release (:meth:`NormalizationRecord.planned`): a median
    threshold is known only once the data is seen, and ε depends on ``noise_multiplier`` alone."""

    name: str
    dimension: int | None
    clip: float | None
    noise_multiplier: float
    noise_std: float | None
    divisor: int

    def __post_init__(self) -> None:
        check_choice("name", self.name, RELEASE_NAMES)
        if self.dimension is not None:
            check_positive_int("dimension", self.dimension)
        check_positive("noise_multiplier", self.noise_multiplier)
        check_positive_int("divisor", self.divisor)
        if (self.clip is None) != (self.noise_std is None):
            raise ValueError("clip and noise_std must both be numbers (a release made) or both None (planned)")
        if self.clip is None:
            return
        check_nonnegative("clip", self.clip)
        check_nonnegative("noise_std", self.noise_std)
        expected = self.noise_multiplier * self.clip
        if not math.isclose(self.noise_std, expected, rel_tol=1e-9, abs_tol=1e-300):
            raise ValueError(f"noise_std must be noise_multiplier·clip = {expected:g}, got {self.noise_std:g}")


@dataclass(frozen=True)
class NormalizationRecord:
    """What a private normalisation released: the Gaussian releases, the data set size n, the neighbouring
    relation (add/remove), how the clip thresholds were chosen and whether that choice was private."""

    releases: tuple[GaussianRelease, ...]
    dataset_size: int
    threshold_rule: str
    thresholds_private: bool
    adjacency: str = ADJACENCY
    mechanism: str = "private_channel_normalization (Tramer & Boneh 2021)"
    record_version: int = RECORD_VERSION

    def __post_init__(self) -> None:
        releases = tuple(self.releases)
        if not releases or not all(isinstance(r, GaussianRelease) for r in releases):
            raise ValueError(f"releases must be a non-empty sequence of GaussianRelease, got {self.releases!r}")
        object.__setattr__(self, "releases", releases)
        check_positive_int("dataset_size", self.dataset_size)
        check_choice("threshold_rule", self.threshold_rule, THRESHOLD_RULES)
        if not isinstance(self.thresholds_private, bool):
            raise ValueError(f"thresholds_private must be True or False, got {self.thresholds_private!r}")
        if self.threshold_rule == "median" and self.thresholds_private:
            raise ValueError("thresholds_private must be False for threshold_rule='median' (data-dependent)")
        check_choice("adjacency", self.adjacency, (ADJACENCY,))
        if any(r.divisor != self.dataset_size for r in releases):
            raise ValueError(f"every release must divide by dataset_size={self.dataset_size}")

    @classmethod
    def planned(
        cls, noise_multiplier: float, dataset_size: int, *, threshold_rule: str = "median"
    ) -> NormalizationRecord:
        """The record of a normalisation that will release mean and second moment with ``noise_multiplier`` on
        ``dataset_size`` examples, before its thresholds are known (what an accountant needs: σ per release)."""
        check_choice("threshold_rule", threshold_rule, THRESHOLD_RULES)
        n = check_positive_int("dataset_size", dataset_size)
        releases = tuple(GaussianRelease(name, None, None, noise_multiplier, None, n) for name in RELEASE_NAMES)
        return cls(releases, n, threshold_rule, threshold_rule == "given")

    def accounting_view(self) -> tuple[str, int, tuple[float, ...]]:
        """(adjacency, n, σ per release): everything ε depends on (equal for a planned and a made release)."""
        return self.adjacency, self.dataset_size, self.noise_multipliers

    @property
    def noise_multipliers(self) -> tuple[float, ...]:
        return tuple(r.noise_multiplier for r in self.releases)

    @property
    def caveat(self) -> str:
        """'' or the sentence every ε label of this record must carry (data-dependent thresholds)."""
        if self.thresholds_private:
            return ""
        return "clip thresholds = medians of the data (not accounted, as in Tramer-Boneh's code)"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able copy (the ``normalization`` entry of a run's result)."""
        out = asdict(self)
        out["releases"] = [asdict(r) for r in self.releases]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NormalizationRecord:
        """Validate a dict (e.g. read back from a result) into a record; unknown keys are refused."""
        if isinstance(data, NormalizationRecord):
            return data
        if not isinstance(data, Mapping):
            raise ValueError(f"data must be a mapping, got {type(data).__name__}")
        known = {"releases", "dataset_size", "threshold_rule", "thresholds_private", "adjacency", "mechanism",
                 "record_version"}  # fmt: skip
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"normalization record has unknown fields: {', '.join(unknown)}")
        try:
            releases = tuple(GaussianRelease(**dict(r)) for r in data["releases"])
            return cls(**{**dict(data), "releases": releases})
        except (KeyError, TypeError) as exc:
            raise ValueError(f"normalization record is incomplete or malformed: {exc}") from exc


@dataclass(frozen=True)
class NormalizedStatistics:
    """The released per-channel mean and second moment, the variance max(second − mean², 0) derived from them
    (float32, shape (K,)) and the record of the releases."""

    mean: Tensor
    var: Tensor
    record: NormalizationRecord
    second_moment: Tensor


# ---------------------------------------------------------------------------------------------- the mechanism
def _check_features(features: Any) -> Tensor:
    if not isinstance(features, Tensor) or features.ndim < 2 or features.shape[0] < 1 or features.shape[1] < 1:
        shape = getattr(features, "shape", features)
        raise ValueError(f"features must be a tensor (n, K, ...) with n, K >= 1, got {shape!r}")
    return features


_CHUNK = 1024  # examples converted to float64 at a time (50,000 CIFAR-10 feature maps are 3.1 GB in float32)


#: the last call's features (weak reference), their in-place version and its result: a grid of runs on one data
#: set (a dry run, an ablation) computes the moments of its 50,000 feature maps once, not once per run
_LAST_MOMENTS: list[tuple[weakref.ref, int, tuple[Tensor, Tensor]]] = []


def channel_moments(features: Tensor) -> tuple[Tensor, Tensor]:
    """Per example and channel, the spatial mean of x and of x² (float64, each (n, K)); ``features`` (n, K, ...).

    The result for the same tensor object, unmodified since (its in-place version counter unchanged), is reused;
    callers get clones, so changing a returned tensor never changes a later call's answer."""
    features = _check_features(features)
    for ref, version, result in _LAST_MOMENTS:
        if ref() is features and features._version == version:
            return result[0].clone(), result[1].clone()
    result = _channel_moments(features.detach())
    _LAST_MOMENTS[:] = [(weakref.ref(features), features._version, result)]
    return result[0].clone(), result[1].clone()


def _channel_moments(features: Tensor) -> tuple[Tensor, Tensor]:
    means, squares = [], []
    for chunk in torch.split(features, _CHUNK):
        x = chunk.to(torch.float64).flatten(2)
        means.append(x.mean(-1))
        squares.append(x.square().mean(-1))
    m, s = torch.cat(means), torch.cat(squares)
    if not (torch.isfinite(m).all() and torch.isfinite(s).all()):
        raise ValueError("features must be finite (and their squares must not overflow float64)")
    return m, s


def clip_rows(rows: Tensor, clip: float) -> Tensor:
    """Each row scaled to ℓ2 norm ≤ ``clip`` (rows already inside unchanged; ``clip = 0`` zeroes every row)."""
    if not isinstance(rows, Tensor) or rows.ndim != 2:
        raise ValueError(f"rows must be a 2-D tensor, got {getattr(rows, 'shape', rows)!r}")
    clip = check_nonnegative("clip", clip)
    norms = rows.norm(dim=1, keepdim=True)
    factor = torch.where(norms > clip, clip / norms.clamp_min(torch.finfo(rows.dtype).tiny), torch.ones_like(norms))
    return rows * factor


def _medians(m: Tensor, s: Tensor) -> tuple[float, float]:
    return float(torch.quantile(m.norm(dim=1), 0.5)), float(torch.quantile(s.norm(dim=1), 0.5))


def median_thresholds(features: Tensor) -> tuple[float, float]:
    """The authors' data-dependent thresholds (C_m, C_s): medians of ‖m_i‖ and ‖s_i‖ (NOT private; see module)."""
    return _medians(*channel_moments(features))


def _noisy_mean(rows: Tensor, clip: float, sigma: float, generator: torch.Generator | None) -> Tensor:
    total = clip_rows(rows, clip).sum(0)
    noise = torch.randn(total.shape, generator=generator, dtype=torch.float64)
    return (total + sigma * clip * noise) / rows.shape[0]


def private_channel_statistics(
    features: Tensor,
    *,
    noise_multiplier: float,
    clip_mean: float | None = None,
    clip_second: float | None = None,
    generator: torch.Generator | None = None,
) -> NormalizedStatistics:
    """Tramèr & Boneh's private data normalisation of ``features`` (n, K, ...): see the module docstring.

    ``clip_mean`` / ``clip_second`` (C_m, C_s ≥ 0): public thresholds, or both ``None`` for the authors'
    median rule (:func:`median_thresholds`, recorded as not private).  ``noise_multiplier`` σ > 0: the noise std
    of each release is σ·C on the sum.  ``generator`` (CPU) seeds the noise.
    """
    features = _check_features(features)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    if (clip_mean is None) != (clip_second is None):
        raise ValueError("clip_mean and clip_second must both be given (public thresholds) or both be None (median)")
    if generator is not None and (not isinstance(generator, torch.Generator) or generator.device.type != "cpu"):
        raise ValueError(f"generator must be a CPU torch.Generator or None, got {generator!r}")
    m, s = channel_moments(features)
    if clip_mean is None:
        c_m, c_s = _medians(m, s)
        rule = "median"
    else:
        c_m, c_s = check_nonnegative("clip_mean", clip_mean), check_nonnegative("clip_second", clip_second)
        rule = "given"
    n, k = m.shape
    mean = _noisy_mean(m, c_m, sigma, generator)
    second = _noisy_mean(s, c_s, sigma, generator)
    var = (second - mean.square()).clamp_min(0.0)
    releases = tuple(
        GaussianRelease(name, k, c, sigma, sigma * c, n) for name, c in (("mean", c_m), ("second_moment", c_s))
    )
    record = NormalizationRecord(releases, n, rule, rule == "given")
    return NormalizedStatistics(mean.to(torch.float32), var.to(torch.float32), record, second.to(torch.float32))


# ---------------------------------------------------------------------------------------------- accounting
def _as_normalization(record: Any) -> NormalizationRecord:
    return NormalizationRecord.from_dict(record)


def normalization_rdp(record: NormalizationRecord | Mapping[str, Any], orders: Sequence[float]) -> np.ndarray:
    """RDP of the releases at each order: Σ_r α/(2σ_r²) (the library's Gaussian RDP at sampling rate 1)."""
    rec = _as_normalization(record)
    a = check_orders(orders)
    total = np.zeros(a.shape)
    for sigma in rec.noise_multipliers:
        total = total + subsampled_gaussian_rdp(a, noise_multiplier=sigma, sample_rate=1.0)
    return total


def normalization_epsilon(
    record: NormalizationRecord | Mapping[str, Any],
    delta: float,
    *,
    method: str = "rdp",
    orders: Sequence[float] = RDP_ORDERS,
    conversion: str = "balle",
) -> float:
    """ε(δ) of the normalisation's releases alone: ``method="rdp"`` (``orders``, ``conversion``; the authors'
    0.695 for σ = 8) or ``"gdp"`` (exact: √(Σ 1/σ_r²)-GDP, :func:`dpcore.accounting.gaussian.epsilon_from_mu`)."""
    delta = check_open_unit("delta", delta)
    check_choice("method", method, EPSILON_METHODS)
    rec = _as_normalization(record)
    if method == "gdp":
        return gaussian.epsilon_from_mu(math.sqrt(sum(1.0 / s**2 for s in rec.noise_multipliers)), delta)
    return rdp_to_epsilon(orders, normalization_rdp(rec, orders), delta, conversion=conversion)


@dataclass(frozen=True)
class ComposedEpsilon:
    """ε(δ) of a normalisation composed with a training run, and of each part under the same RDP composition."""

    total: float
    training: float
    normalization: float
    delta: float
    description: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _training_rdp(rec: RunRecord, orders: Sequence[float] | None, modelmix: str) -> tuple[np.ndarray, np.ndarray, str]:
    """(orders, RDP of the steps done, what it is) of a Poisson, constant-batch training record."""
    choice = choose_accountant(rec, modelmix=modelmix)
    if choice.adjacency != ADJACENCY:
        raise ValueError(f"the normalisation is accounted under add/remove neighbours; the training run uses "
                         f"{choice.adjacency!r} ({rec.sampling} sampling): compose them under replace-one")  # fmt: skip
    if not isinstance(rec.batch_size, int):
        raise ValueError("composed_epsilon supports a constant batch size only, got a batch-size schedule")
    if choice.name == "modelmix":
        p = rec.linf_p if rec.clip_norm_type == "l2_linf" else None
        a = mm_accounting.default_orders(p) if orders is None else np.asarray(orders, dtype=float)
        kept, done = [], 0
        for phase in rec.modelmix["phases"]:  # a partial run accounts only the steps done
            take = min(phase["steps"], rec.steps - done)
            if take > 0:
                kept.append((take, phase["tau_ratio"]))
            done += take
        setting = mm_accounting.ModelMixSetting(n=rec.dataset_size, batch_size=float(rec.batch_size),
                                                noise_multiplier=choice.noise_multiplier, clip=rec.clip_norm,
                                                linf_blocks=p)  # fmt: skip
        a, values = mm_accounting.schedule_rdp(kept, setting, orders=a)
        return a, values, f"ModelMix RDP (Thm 4.1 / corrected Cor. 4.1, min with plain), p = {p or 1}"
    a = np.asarray(COMPOSITION_ORDERS if orders is None else orders, dtype=float)
    one = subsampled_gaussian_rdp(a, noise_multiplier=choice.noise_multiplier, sample_rate=rec.sample_rate)
    return a, rec.steps * one, "Poisson-subsampled Gaussian RDP"


def composed_epsilon(
    training_record: RunRecord | Mapping[str, Any],
    normalization: NormalizationRecord | Mapping[str, Any],
    delta: float,
    *,
    orders: Sequence[float] | None = None,
    conversion: str = "balle",
    modelmix: str = "amplified",
) -> ComposedEpsilon:
    """ε(δ) of a private normalisation followed by the training run of ``training_record`` (RDP composition).

    The training RDP is the one its accountant uses: ModelMix's (:mod:`dpcore.accounting.modelmix`, its default
    orders) for a ModelMix record (``modelmix="plain"``: the post-processing bound), else the Poisson-subsampled
    Gaussian on :data:`COMPOSITION_ORDERS`; the normalisation adds Σ_r α/(2σ_r²) at every order; one conversion
    (``conversion``) follows.  Requires a private record with Poisson sampling (add/remove neighbours, as the
    normalisation) and a constant batch size.  A non-private record (σ = 0) gives ``total = inf``.
    """
    delta = check_open_unit("delta", delta)
    rec = as_record(training_record)
    norm = _as_normalization(normalization)
    if norm.dataset_size != rec.dataset_size:
        raise ValueError(f"the normalisation released statistics of {norm.dataset_size} examples, the training run "
                         f"uses {rec.dataset_size}: they must be the same data set")  # fmt: skip
    if not rec.private or rec.noise_std == 0:
        eps_norm = normalization_epsilon(norm, delta, orders=COMPOSITION_ORDERS, conversion=conversion)
        return ComposedEpsilon(math.inf, math.inf, eps_norm, delta, "non-private training (σ = 0): ε = ∞")
    a, train, what = _training_rdp(rec, orders, modelmix)
    if rec.steps == 0:
        train = np.zeros_like(a)
    extra = normalization_rdp(norm, a)
    total = rdp_to_epsilon(a, train + extra, delta, conversion=conversion)
    eps_train = rdp_to_epsilon(a, train, delta, conversion=conversion)
    eps_norm = rdp_to_epsilon(a, extra, delta, conversion=conversion)
    sigmas = ", ".join(f"{s:g}" for s in norm.noise_multipliers)
    text = (f"RDP composition ({conversion} conversion, orders {a.min():g}..{a.max():g}) of {what} "
            f"(training alone eps {eps_train:.4g}) and {len(norm.releases)} Gaussian normalisation releases, "
            f"sigma = {sigmas} (alone eps {eps_norm:.4g})")  # fmt: skip
    if norm.caveat:
        text += f"; {norm.caveat}"
    return ComposedEpsilon(total, eps_train, eps_norm, delta, text)


# ---------------------------------------------------------------------------------------------- the object
class PrivateNormalization:
    """Thin stateful wrapper: ``fit(features)`` releases the statistics once; ``record`` and ``epsilon`` follow.

    >>> pn = PrivateNormalization(noise_multiplier=8.0)
    >>> stats = pn.fit(torch.rand(100, 2, 3, 3), generator=torch.Generator().manual_seed(0))
    >>> pn.record.threshold_rule, pn.record.thresholds_private
    ('median', False)
    """

    def __init__(self, noise_multiplier: float, *, clip_mean: float | None = None,
                 clip_second: float | None = None) -> None:  # fmt: skip
        self.noise_multiplier = check_positive("noise_multiplier", noise_multiplier)
        if (clip_mean is None) != (clip_second is None):
            raise ValueError("clip_mean and clip_second must both be given or both be None (median rule)")
        self.clip_mean, self.clip_second = clip_mean, clip_second
        self.statistics: NormalizedStatistics | None = None

    def fit(self, features: Tensor, *, generator: torch.Generator | None = None) -> NormalizedStatistics:
        """Release the statistics of ``features`` (once: a second call would spend the budget again)."""
        if self.statistics is not None:
            raise ValueError("fit was already called: a second release would cost privacy again; make a new object")
        self.statistics = private_channel_statistics(
            features, noise_multiplier=self.noise_multiplier, clip_mean=self.clip_mean,
            clip_second=self.clip_second, generator=generator,
        )  # fmt: skip
        return self.statistics

    @property
    def record(self) -> NormalizationRecord:
        if self.statistics is None:
            raise ValueError("no release yet: call fit(features) first")
        return self.statistics.record

    def epsilon(self, delta: float, *, method: str = "rdp") -> float:
        """ε(δ) of the releases made (see :func:`normalization_epsilon`)."""
        return normalization_epsilon(self.record, delta, method=method)
