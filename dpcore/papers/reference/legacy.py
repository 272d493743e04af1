"""Legacy published DP-SGD ε values and the settings that produced them.

Every legacy number below is RDP with the Mironov (2017, Prop. 3) conversion —
Abadi et al.'s moments accountant included (Abadi et al., CCS 2016, §3.1; Mironov, CSF 2017).  The table
regenerates each with all four methods of :mod:`dpcore.accounting.dpsgd` (the two GDP columns are
approximate), so the
published value sits beside the modern (tighter) ones.

Sources: Abadi et al., CCS 2016, §3.1; TF Privacy ``tutorials/README.md`` and
``Classification_Privacy.ipynb``; Opacus ``examples/mnist_README.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcore.accounting.dpsgd import dpsgd_epsilon

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["LegacySetting", "LEGACY_SETTINGS", "legacy_rows", "legacy_table", "EPSILON_COLUMNS"]

#: The ε columns of :func:`legacy_rows` (the published value and ours under every method).
EPSILON_COLUMNS = ("published", "rdp_mironov", "rdp_balle", "pld", "gdp_poisson", "gdp_fixed")


@dataclass(frozen=True)
class LegacySetting:
    """One published (σ, q, T, δ) → ε statement; ``key`` is its claim in :mod:`dpcore.papers.reference.claims`."""

    key: str
    source: str
    noise_multiplier: float
    sample_rate: float
    steps: int
    delta: float
    published: float
    decimals: int  # digits printed after the decimal point


LEGACY_SETTINGS: tuple[LegacySetting, ...] = (
    LegacySetting("abadi2016.eps", "Abadi et al. 2016 §3.1 (q=0.01, σ=4, T=10000)", 4.0, 0.01, 10_000, 1e-5, 1.26, 2),
    LegacySetting(
        "tfp.readme.eps", "TF Privacy README (B=256, σ=1.12, 60 epochs)", 1.12, 256 / 60_000, 14_063, 1e-5, 2.92, 2
    ),
    LegacySetting(
        "tfp.keras_notebook.eps",
        "TF Privacy Keras notebook (B=250, σ=1.3, 15 epochs)",
        1.3,
        250 / 60_000,
        3_600,
        1e-5,
        1.18,
        2,
    ),
    LegacySetting(
        "opacus.mnist.sigma1.3",
        "Opacus MNIST README (B=240, σ=1.3, 15 epochs)",
        1.3,
        240 / 60_000,
        3_750,
        1e-5,
        1.16,
        2,
    ),
    LegacySetting(
        "opacus.mnist.sigma1.1",
        "Opacus MNIST README (B=240, σ=1.1, 60 epochs)",
        1.1,
        240 / 60_000,
        15_000,
        1e-5,
        2.91,
        2,
    ),
    LegacySetting(
        "opacus.mnist.sigma0.7",
        "Opacus MNIST README (B=240, σ=0.7, 45 epochs)",
        0.7,
        240 / 60_000,
        11_250,
        1e-5,
        6.86,
        2,
    ),
)


def legacy_rows(settings: tuple[LegacySetting, ...] = LEGACY_SETTINGS) -> list[dict]:
    """One row per setting: the published ε and ours under every method."""
    rows = []
    for s in settings:
        kw = dict(sample_rate=s.sample_rate, steps=s.steps, delta=s.delta)
        rows.append(
            {
                "key": s.key,
                "source": s.source,
                "sigma": s.noise_multiplier,
                "q": s.sample_rate,
                "steps": s.steps,
                "delta": s.delta,
                "published": s.published,
                "rdp_mironov": dpsgd_epsilon(s.noise_multiplier, **kw, method="rdp-mironov"),
                "rdp_balle": dpsgd_epsilon(s.noise_multiplier, **kw, method="rdp"),
                "pld": dpsgd_epsilon(s.noise_multiplier, **kw, method="pld"),
                "gdp_poisson": dpsgd_epsilon(s.noise_multiplier, **kw, method="gdp"),
                "gdp_fixed": dpsgd_epsilon(s.noise_multiplier, **kw, method="gdp", sampling="fixed"),
            }
        )
    return rows


def legacy_table(rows: Any, *, decimals: int = 4) -> pd.DataFrame:
    """The legacy rows as the notebook prints them: ε columns (:data:`EPSILON_COLUMNS`) rounded to ``decimals``
    decimals, the setting (σ, q, steps, δ) as given, the ``key`` column dropped.

    Rounding every column printed δ = 1e-5 as 0.0 and q = 256/60000 as 0.0043.  ``rows``: :func:`legacy_rows`'s list
    or a DataFrame of it.
    """
    import pandas as pd

    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be an integer >= 0, got {decimals!r}")
    frame = pd.DataFrame(rows).copy()
    missing = [c for c in EPSILON_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"rows must have the columns of legacy_rows(); missing {missing}")
    frame[list(EPSILON_COLUMNS)] = frame[list(EPSILON_COLUMNS)].round(decimals)
    return frame.drop(columns=[c for c in ("key",) if c in frame.columns])
