"""Re-decide paper 001's paper-profile trained rows from the committed selected runs (a maintenance command).

Kept apart from :mod:`dpcore.papers.p001_isrl.evidence` (which :mod:`~dpcore.papers.p001_isrl.claims` imports) so
that the claims and the evidence import no cycle.
"""

from __future__ import annotations

from pathlib import Path

from dpcore.papers.p001_isrl.evidence import (
    committed_selected,
    evidence_frames,
    insurance_runs,
    mnist_runs,
    obesity_runs,
)
from dpcore.paths import repo_root

__all__ = ["redecide_paper_rows"]


def redecide_paper_rows(root: str | Path | None = None) -> dict[str, int]:
    """Re-decide the paper profile's trained rows of the three training notebooks from their committed selected runs
    (``figures/paper/001_isrl_dp/<notebook>_selected_runs.csv``) exactly as the notebooks do at ``PROFILE=paper``
    (same runs, same :meth:`~dpcore.claims.ClaimsLog.decide` call), without retraining, and rewrite those rows of
    ``<notebook>.claims.csv``; every other row is kept.  Returns ``{notebook: rows rewritten}``.  The notebooks'
    next paper-profile run rewrites the same rows from fresh runs.

        python -m dpcore.papers.p001_isrl.redecide
    """
    from dataclasses import asdict

    from dpcore.claims import ClaimsLog, read_claims_csv, write_claims_csv
    from dpcore.papers.p001_isrl.claims import CLAIMS

    base = Path(root) if root is not None else repo_root() / "figures" / "paper" / "001_isrl_dp"
    builders = {"mnist_logistic": mnist_runs, "insurance_linear": insurance_runs, "obesity_softmax": obesity_runs}
    done = {}
    for notebook, build in builders.items():
        selected = committed_selected(notebook, base)
        path = base / f"{notebook}.claims.csv"
        if selected is None or not path.is_file():
            continue
        log = ClaimsLog()
        for key, runs in build(evidence_frames(notebook, selected, reduced=False)).items():
            log.decide(CLAIMS[key], runs, profile="paper")
        new = {c.key: asdict(c) for c in log.claims}
        rows = [new.get(r["key"], r) for r in read_claims_csv(path)]
        write_claims_csv(rows, path)
        done[notebook] = len(new)
    return done


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    print(redecide_paper_rows())
