"""One subpackage per reproduced paper: its accounting code and its claim specifications.

Each ``dpcore.papers.<pkg>`` may hold a ``claims.py`` module defining
``SPECS: tuple[ClaimSpec, ...]`` (see :mod:`dpcore.claims`): the numbers the paper prints (or
implies, or cites) with their location, tolerance and errata.  Packages: ``p000_proactive``,
``p001_isrl``, ``p002_modelmix``, ``p003_shuffling``, ``p004_contraction`` and ``reference``
(published ε of earlier work: Abadi et al. 2016, TF Privacy, Opacus, jax_privacy).

:func:`all_specs` gathers every package's specifications; ``make figures`` writes
``figures/ERRATA.md`` from them and the tests check that their keys are unique.  Each ``claims.py``
also says which notebook checks which of its specifications (``NOTEBOOKS``, a tuple of
:class:`~dpcore.claims.NotebookClaims`: :func:`notebook_claims`) and may name its paper (``TITLE``:
:func:`titles`), which the scorecard uses.
"""

from __future__ import annotations

import importlib
import pkgutil

from dpcore.claims import ClaimSpec, Finding, NotebookClaims

__all__ = ["all_specs", "claims_modules", "findings", "gpu_keys", "notebook_claims", "titles"]


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


def notebook_claims() -> tuple[NotebookClaims, ...]:
    """The ``NOTEBOOKS`` of every ``claims.py``: which notebook checks which claim.

    Raises ``ValueError`` when a ``claims.py`` has no ``NOTEBOOKS``, or when its ``NOTEBOOKS`` do not
    hold each of its ``SPECS`` exactly once (a key twice, a key that is no spec, a spec no notebook
    checks, a paper that differs from the spec's).
    """
    owned: list[NotebookClaims] = []
    for name in claims_modules():
        module = importlib.import_module(name)
        notebooks = getattr(module, "NOTEBOOKS", None)
        if not isinstance(notebooks, tuple) or not all(isinstance(n, NotebookClaims) for n in notebooks):
            raise ValueError(f"{name} must define NOTEBOOKS, a tuple of NotebookClaims (which notebook checks what)")
        specs = {(s.paper, s.key) for s in module.SPECS}
        seen: dict[tuple[str, str], str] = {}
        for nb in notebooks:
            for key in nb.keys:
                ident = (nb.paper, key)
                if ident in seen:
                    raise ValueError(f"{name}: claim {nb.paper}/{key} is checked by {seen[ident]} and {nb.notebook}")
                if ident not in specs:
                    raise ValueError(f"{name}: NOTEBOOKS names {nb.paper}/{key}, which is not in its SPECS")
                seen[ident] = nb.notebook
        missing = sorted(f"{p}/{k}" for p, k in specs - set(seen))
        if missing:
            raise ValueError(f"{name}: no notebook checks {len(missing)} claim(s): {', '.join(missing[:5])}")
        owned.extend(notebooks)
    return tuple(owned)


def titles() -> dict[str, str]:
    """``{paper: TITLE}`` of the ``claims.py`` modules that name their paper (the first one per paper)."""
    found: dict[str, str] = {}
    for name in claims_modules():
        module = importlib.import_module(name)
        title = getattr(module, "TITLE", None)
        if title is None:
            continue
        if not isinstance(title, str) or not title.strip():
            raise ValueError(f"{name}.TITLE must be a non-empty string, got {title!r}")
        papers = {s.paper for s in module.SPECS}
        for paper in sorted(papers):
            found.setdefault(paper, title)
    return found


def findings() -> tuple[Finding, ...]:
    """The ``FINDINGS`` of every ``claims.py`` (a tuple of :class:`~dpcore.claims.Finding`, in each paper's order:
    the order of its verdict line; a module without ``FINDINGS`` has none).  Raises ``ValueError`` when
    ``FINDINGS`` holds something else or a finding names another paper than the module's specs."""
    found: list[Finding] = []
    for name in claims_modules():
        module = importlib.import_module(name)
        items = getattr(module, "FINDINGS", ())
        if not isinstance(items, tuple) or not all(isinstance(f, Finding) for f in items):
            raise ValueError(f"{name}.FINDINGS must be a tuple of Finding")
        papers = {s.paper for s in module.SPECS}
        for f in items:
            if f.paper not in papers:
                raise ValueError(f"{name}: finding {f.key} names paper {f.paper}, not one of {sorted(papers)}")
        found.extend(items)
    return tuple(found)


def gpu_keys() -> dict[str, tuple[str, ...]]:
    """``{paper: GPU_KEYS}``: per paper, glob patterns of the claim keys whose runs need a GPU (the paper profile's
    reason for not running them, :func:`dpcore.claims.not_run_reason`)."""
    out: dict[str, tuple[str, ...]] = {}
    for name in claims_modules():
        module = importlib.import_module(name)
        keys = getattr(module, "GPU_KEYS", ())
        if not isinstance(keys, tuple) or not all(isinstance(k, str) and k for k in keys):
            raise ValueError(f"{name}.GPU_KEYS must be a tuple of glob patterns")
        for paper in {s.paper for s in module.SPECS}:
            out[paper] = out.get(paper, ()) + keys
    return out
