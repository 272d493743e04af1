"""Quick-profile parameterised copies of every notebook for nbval (:func:`prepare_nbval`, ``make test``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from dpcore.runner.discovery import discover, load_profile, notebook_key, notebook_parameters, profile_problems

__all__ = ["prepare_nbval"]


def prepare_nbval(out_dir: Path, profile: str = "quick", root: Path | None = None) -> list[Path]:
    """Write parameterised, unexecuted copies of every notebook for nbval (``out_dir`` is replaced).

    The copies write their figures and claims under ``out_dir/figures`` (checked by
    ``--check-claims``), never into the committed ``figures/``.  Raises ``ValueError`` for a profile key that is
    not a parameter of its notebook (:func:`~dpcore.runner.discovery.profile_problems`).
    """
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    table = load_profile(profile, root)
    problems = profile_problems(discover("*", root), profile, root, table)
    if problems:  # the same check as make figures: a misspelt key would silently run the notebook's default
        raise ValueError("; ".join(problems))
    shutil.rmtree(out_dir, ignore_errors=True)  # no stale copies (or claims) of renamed or deleted notebooks
    written = []
    for path in discover("*", root):
        key = notebook_key(path, root)
        nb = load_notebook_node(str(path))  # also normalises cell metadata (tags) as papermill expects
        nb = parameterize_notebook(nb, notebook_parameters(key, profile, out_dir / "figures", table))
        target = out_dir / f"{key}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append(target)
    return written
