"""What the runner checks the claims against, loaded from :mod:`dpcore.papers` when first needed (the library
imports no paper package at module level): the specifications, which notebook checks which claim, the findings,
the claims that need a GPU and the papers' titles."""

from __future__ import annotations

from dpcore import claims as claims_mod
from dpcore.claims import ClaimSpec, NotebookClaims

__all__ = ["specs", "notebooks", "findings", "gpu_keys", "titles"]


def specs() -> list[ClaimSpec]:
    from dpcore import papers

    return list(papers.all_specs())


def notebooks() -> list[NotebookClaims]:
    from dpcore import papers

    return list(papers.notebook_claims())


def findings() -> list[claims_mod.Finding]:
    from dpcore import papers

    return list(papers.findings())


def gpu_keys() -> dict[str, tuple[str, ...]]:
    from dpcore import papers

    return papers.gpu_keys()


def titles() -> dict[str, str]:
    from dpcore import papers

    return papers.titles()
