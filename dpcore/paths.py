"""Where things live in a checkout (data, figures, build outputs, notebooks) and how files are written.

Each profile has its own figures folder, so the quick and the paper profile never overwrite each
other: ``figures/`` for ``quick`` (committed) and ``figures/paper/`` for ``paper``.  Only the runner
(``make figures``, :mod:`dpcore.runner`) writes there: it passes the folder to every notebook.  A notebook
run anywhere else (JupyterLab, Voilà, a script) writes into :func:`scratch_dir` (``build/scratch/<profile>/``,
git-ignored) instead.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "PROFILES",
    "repo_root",
    "data_dir",
    "figures_dir",
    "profile_figures_dir",
    "build_dir",
    "scratch_dir",
    "notebooks_dir",
    "atomic_path",
    "atomic_write_text",
]

PROFILES = ("quick", "paper")


def repo_root() -> Path:
    """The checkout that holds this package (``DPCORE_ROOT`` overrides it)."""
    env = os.environ.get("DPCORE_ROOT")
    if env:
        return Path(env).resolve()
    return Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """``data/`` of the checkout (``DPCORE_DATA`` overrides it)."""
    env = os.environ.get("DPCORE_DATA")
    return Path(env).resolve() if env else repo_root() / "data"


def figures_dir() -> Path:
    """``figures/`` of the checkout: the quick profile's outputs (committed) and ``ERRATA.md``."""
    return repo_root() / "figures"


def profile_figures_dir(profile: str, root: str | os.PathLike | None = None) -> Path:
    """The figures folder of ``profile``: ``<root>`` for ``quick``, ``<root>/paper`` for ``paper``.

    ``root`` defaults to :func:`figures_dir`.
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    base = Path(root) if root is not None else figures_dir()
    return base if profile == "quick" else base / profile


def build_dir() -> Path:
    """``build/`` of the checkout: executed notebooks and scratch (git-ignored)."""
    return repo_root() / "build"


def scratch_dir(profile: str = "quick") -> Path:
    """``build/scratch/<profile>/``: where a notebook run outside the runner writes (never ``figures/``).

    :class:`dpcore.report.Report` uses it when it is not given a ``figures_dir`` (the runner always gives one).
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    return build_dir() / "scratch" / profile


def notebooks_dir() -> Path:
    """``notebooks/`` of the checkout."""
    return repo_root() / "notebooks"


def _file_mode() -> int:
    """The mode ``open()`` would give a new file: 0666 minus the process umask (0644 under umask 022)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


class atomic_path:
    """Context manager yielding a temporary path that replaces ``path`` on success.

    The temporary file lives in the target's folder (so ``os.replace`` is atomic) and gets the
    ordinary file mode (0644 under umask 022; ``mkstemp`` alone would leave 0600).  On an
    exception the temporary file is removed and ``path`` keeps its previous content.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def __enter__(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.stem}.", suffix=f"{self.path.suffix}.tmp")
        os.close(fd)
        self.tmp = Path(tmp)
        return self.tmp

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            try:
                os.chmod(self.tmp, _file_mode())
                os.replace(self.tmp, self.path)
            except BaseException:
                self.tmp.unlink(missing_ok=True)
                raise
        else:
            self.tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically with the ordinary file mode; return ``path``."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
