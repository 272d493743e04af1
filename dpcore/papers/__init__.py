"""One subpackage per reproduced paper; each exposes one ``PAPER`` value (a :class:`dpcore.claims.Paper`).

:func:`packages` finds them (:data:`PACKAGES` in this checkout); :func:`papers` reads each one's ``PAPER`` (id,
slug, title, claim specifications, notebooks, findings, explorer, GPU keys) and every registry function below is
computed from that list:
:func:`all_specs` (``make figures`` writes ``figures/ERRATA.md`` from them; keys unique), :func:`notebook_claims`
(which notebook checks which claim), :func:`titles` (the scorecard's paper names), :func:`findings` (one root cause
each, the verdict line's order), :func:`gpu_keys` (claims whose runs need a GPU) and :func:`explorer_topics` (the
explorer notebooks of ``notebooks/explore/``).  Packages: ``p000_proactive``, ``p001_isrl``, ``p002_modelmix``,
``p003_shuffling``, ``p004_contraction``, ``reference`` (published ε of earlier work) and ``audit`` (the privacy-audit
suite; paper id ``ref``).

A package's ``PAPER`` is built on first use from its ``claims.py`` (``SPECS``, ``NOTEBOOKS``, ``TITLE``,
``FINDINGS``, ``GPU_KEYS``) and the explorer its ``__init__`` names (:func:`build_paper`).  Adding a paper: see
``docs/verdicts.md`` ("Adding a paper").  Packages are imported by name (``importlib``): the library imports no paper
package statically (``tests/test_layout.py``).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

from dpcore.claims import ClaimSpec, Finding, NotebookClaims, Paper

__all__ = ["PACKAGES", "all_specs", "build_paper", "claims_modules", "explorer_topics", "findings", "gpu_keys",
           "notebook_claims", "packages", "paper_attribute", "papers", "titles"]  # fmt: skip

#: the paper packages of this checkout, in the order their claims are gathered (alphabetical); :func:`packages`
#: finds them (a subpackage with a ``claims.py``), so a new paper needs no edit here
PACKAGES = ("audit", "p000_proactive", "p001_isrl", "p002_modelmix", "p003_shuffling", "p004_contraction", "reference")


def packages() -> list[str]:
    """The subpackages of ``dpcore.papers`` that hold a ``claims.py``, sorted (:data:`PACKAGES` in this checkout)."""
    names = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        package = importlib.import_module(f"{__name__}.{info.name}")
        if any(sub.name == "claims" for sub in pkgutil.iter_modules(package.__path__)):
            names.append(info.name)
    return names


def build_paper(package: str, explorer_topic: str = "", explorer: str = "") -> Paper:
    """The ``PAPER`` of ``dpcore.papers.<package>`` from its ``claims.py``: ``SPECS`` (all of one paper id),
    ``NOTEBOOKS``, ``TITLE`` (optional), ``FINDINGS`` (optional) and ``GPU_KEYS`` (optional), plus the explorer the
    package names.  Raises ``ValueError`` when ``SPECS`` is missing or not ClaimSpec, or names two paper ids."""
    name = f"{__name__}.{package.rsplit('.', 1)[-1]}.claims"
    module = importlib.import_module(name)
    specs = getattr(module, "SPECS", None)
    if not isinstance(specs, tuple) or not all(isinstance(s, ClaimSpec) for s in specs):
        raise ValueError(f"{name} must define SPECS, a tuple of ClaimSpec")
    ids = {s.paper for s in specs}
    if len(ids) != 1:
        raise ValueError(f"{name}: SPECS must be claims of one paper, got {sorted(ids)}")
    title = getattr(module, "TITLE", "")
    if not isinstance(title, str) or (hasattr(module, "TITLE") and not title.strip()):
        raise ValueError(f"{name}.TITLE must be a non-empty string, got {title!r}")
    notebooks = getattr(module, "NOTEBOOKS", ())  # none: notebook_claims() says no notebook checks its claims
    if not isinstance(notebooks, tuple) or not all(isinstance(n, NotebookClaims) for n in notebooks):
        raise ValueError(f"{name}.NOTEBOOKS must be a tuple of NotebookClaims (which notebook checks what)")
    items = getattr(module, "FINDINGS", ())
    if not isinstance(items, tuple) or not all(isinstance(f, Finding) for f in items):
        raise ValueError(f"{name}.FINDINGS must be a tuple of Finding")
    keys = getattr(module, "GPU_KEYS", ())
    if not isinstance(keys, tuple) or not all(isinstance(k, str) and k for k in keys):
        raise ValueError(f"{name}.GPU_KEYS must be a tuple of glob patterns")
    return Paper(ids.pop(), package.rsplit(".", 1)[-1], title, specs, notebooks, items, explorer_topic, explorer, keys)


def paper_attribute(package: str, explorer: tuple[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of a paper package (PEP 562): ``PAPER`` built on first use by :func:`build_paper`
    from the package's ``claims.py`` and ``explorer`` (topic, module), so that importing one module of the package does
    not import its claims.  In the package's ``__init__``: ``__getattr__ = paper_attribute(__name__, EXPLORER)``."""

    def __getattr__(name: str) -> Any:
        if name == "PAPER":
            return build_paper(package, *explorer)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def papers() -> tuple[Paper, ...]:
    """The ``PAPER`` of every paper package (:func:`packages`), in that order; a package that exposes none is read
    from its ``claims.py`` (:func:`build_paper`)."""
    out = []
    for package in packages():
        module = importlib.import_module(f"{__name__}.{package}")
        paper = getattr(module, "PAPER", None) if hasattr(module, "EXPLORER") else build_paper(package)
        if not isinstance(paper, Paper):
            raise ValueError(f"{__name__}.{package} must expose PAPER, a dpcore.claims.Paper")
        out.append(paper)
    return tuple(out)


def claims_modules() -> list[str]:
    """Names of the ``dpcore.papers.<pkg>.claims`` modules, in :data:`PACKAGES` order."""
    return [f"{__name__}.{p.slug}.claims" for p in papers()]


def all_specs() -> tuple[ClaimSpec, ...]:
    """The specifications of every paper (:func:`papers`).  Raises ``ValueError`` when a ``(paper, key)`` pair occurs
    twice."""
    specs: list[ClaimSpec] = []
    seen: dict[tuple[str, str], str] = {}
    for paper in papers():
        for spec in paper.specs:
            ident = (spec.paper, spec.key)
            if ident in seen:
                raise ValueError(f"claim {spec.paper}/{spec.key} is defined twice ({seen[ident]} and {paper.slug})")
            seen[ident] = paper.slug
            specs.append(spec)
    return tuple(specs)


def notebook_claims() -> tuple[NotebookClaims, ...]:
    """Every paper's notebooks: which notebook checks which claim.

    Raises ``ValueError`` when a paper's notebooks do not hold each of its specs exactly once (a key twice, a key that
    is no spec, a spec no notebook checks, a paper that differs from the spec's).
    """
    owned: list[NotebookClaims] = []
    for paper in papers():
        if not paper.notebooks:
            raise ValueError(f"{paper.slug}.claims must define NOTEBOOKS, a tuple of NotebookClaims (which notebook "
                             "checks what)")  # fmt: skip
        specs = {(s.paper, s.key) for s in paper.specs}
        seen: dict[tuple[str, str], str] = {}
        for nb in paper.notebooks:
            for key in nb.keys:
                ident = (nb.paper, key)
                if ident in seen:
                    raise ValueError(f"{paper.slug}: claim {nb.paper}/{key} is checked by {seen[ident]} and "
                                     f"{nb.notebook}")  # fmt: skip
                if ident not in specs:
                    raise ValueError(f"{paper.slug}: NOTEBOOKS names {nb.paper}/{key}, which is not in its SPECS")
                seen[ident] = nb.notebook
        missing = sorted(f"{p}/{k}" for p, k in specs - set(seen))
        if missing:
            raise ValueError(f"{paper.slug}: no notebook checks {len(missing)} claim(s): {', '.join(missing[:5])}")
        owned.extend(paper.notebooks)
    return tuple(owned)


def titles() -> dict[str, str]:
    """``{paper id: title}`` of the papers that name themselves (the first one per id)."""
    found: dict[str, str] = {}
    for paper in papers():
        if paper.title:
            found.setdefault(paper.id, paper.title)
    return found


def findings() -> tuple[Finding, ...]:
    """Every paper's findings, in each paper's order (the order of its verdict line).  Raises ``ValueError`` when a
    finding names another paper than its package's specs."""
    found: list[Finding] = []
    for paper in papers():
        for f in paper.findings:
            if f.paper != paper.id:
                raise ValueError(f"{paper.slug}: finding {f.key} names paper {f.paper}, not {paper.id}")
        found.extend(paper.findings)
    return tuple(found)


def gpu_keys() -> dict[str, tuple[str, ...]]:
    """``{paper id: GPU keys}``: glob patterns of the claim keys whose runs need a GPU (the paper profile's reason for
    not running them, :func:`dpcore.claims.not_run_reason`)."""
    out: dict[str, tuple[str, ...]] = {}
    for paper in papers():
        out[paper.id] = out.get(paper.id, ()) + paper.gpu_keys
    return out


def explorer_topics() -> dict[str, tuple[str, ...]]:
    """``{topic: explorer modules}`` of the papers' explorers (``notebooks/explore/<topic>.ipynb``), in
    :data:`PACKAGES` order (two papers may share a topic)."""
    out: dict[str, tuple[str, ...]] = {}
    for paper in papers():
        if paper.explorer:
            out[paper.explorer_topic] = out.get(paper.explorer_topic, ()) + (paper.explorer,)
    return out
