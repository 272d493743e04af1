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
    (out_dir / "conftest.py").write_text(_CONFTEST.format(profile=profile), encoding="utf-8")
    return written


#: build/nbval/conftest.py: the notebooks run longest first (their last recorded seconds, as make figures orders
#: them: dpcore.runner.execute.recorded_durations), each notebook's cells in order, before every other test; with
#: pytest-xdist's --dist loadfile the long notebooks then start at once instead of one running alone at the end
_CONFTEST = '''"""Written by python -m dpcore.runner --prepare-nbval: the notebooks run longest first (issue 54)."""

from pathlib import Path

from dpcore.paths import build_dir
from dpcore.runner.execute import recorded_durations

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(session, config, items):
    seconds = recorded_durations("{profile}", out_build=build_dir() / "{profile}")  # this machine's last run first
    first = {{}}
    for index, item in enumerate(items):
        path = Path(str(item.fspath)).resolve()
        if path.suffix == ".ipynb" and path.is_relative_to(HERE):
            key = path.relative_to(HERE).with_suffix("").as_posix()
            first.setdefault(key, (-seconds.get(key, 0.0), index))

    def order(pair):
        index, item = pair
        path = Path(str(item.fspath)).resolve()
        if path.suffix == ".ipynb" and path.is_relative_to(HERE):
            return (0, first[path.relative_to(HERE).with_suffix("").as_posix()], index)
        return (1, (0.0, 0), index)

    items[:] = [item for _, item in sorted(enumerate(items), key=order)]
'''
