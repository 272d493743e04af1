"""One subpackage per reproduced paper: its accounting code and its claim specifications.

Each ``dpcore.papers.<pkg>`` may hold a ``claims.py`` module defining
``SPECS: tuple[ClaimSpec, ...]`` (see :mod:`dpcore.claims`): the numbers the paper prints (or
implies, or cites) with their location, tolerance and errata.  Packages: ``p000_proactive``,
``p001_isrl``, ``p002_modelmix``, ``p003_shuffling``, ``p004_contraction`` and ``reference``
(published ε of earlier work: Abadi et al. 2016, TF Privacy, Opacus, jax_privacy).

:func:`all_specs` gathers every package's specifications; ``make figures`` writes
``figures/ERRATA.md`` from them and the tests check that their keys are unique.
"""

from __future__ import annotations

import importlib
import pkgutil

from dpcore.claims import ClaimSpec

__all__ = ["all_specs", "claims_modules"]


def claims_modules() -> list[str]:
    """Names of the ``dpcore.papers.<pkg>.claims`` modules that exist, sorted."""
    names = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        package = importlib.import_module(f"{__name__}.{info.name}")
        if any(sub.name == "claims" for sub in pkgutil.iter_modules(package.__path__)):
            names.append(f"{package.__name__}.claims")
    return names


def all_specs() -> tuple[ClaimSpec, ...]:
    """The ``SPECS`` of every paper package that has a ``claims.py`` (packages without one are skipped).

    Raises ``ValueError`` when a ``claims.py`` has no ``SPECS``, when ``SPECS`` holds something
    other than :class:`ClaimSpec`, or when a ``(paper, key)`` pair occurs twice.
    """
    specs: list[ClaimSpec] = []
    seen: dict[tuple[str, str], str] = {}
    for name in claims_modules():
        module = importlib.import_module(name)
        if not hasattr(module, "SPECS"):
            raise ValueError(f"{name} defines no SPECS (a tuple of ClaimSpec)")
        for spec in module.SPECS:
            if not isinstance(spec, ClaimSpec):
                raise ValueError(f"{name}.SPECS must hold ClaimSpec instances, got {type(spec).__name__}")
            ident = (spec.paper, spec.key)
            if ident in seen:
                raise ValueError(f"claim {spec.paper}/{spec.key} is defined twice ({seen[ident]} and {name})")
            seen[ident] = name
            specs.append(spec)
    return tuple(specs)
