"""Explorers: interactive views of the library (``notebooks/explore/``, ``make explore``).

This package is library: it knows no paper (``tests/test_layout.py``).  It holds

* :mod:`~dpcore.explore.widgets`: :class:`~dpcore.explore.widgets.Explorer` (controls, a read-out of named numbers,
  a plot redrawn in place, a "computing…" state) and :class:`~dpcore.explore.widgets.View`;
* :mod:`~dpcore.explore.dpsgd`: the DP-SGD explorer (every accountant of :mod:`dpcore.accounting.dpsgd`, and the
  inverse, σ for a target ε);
* :mod:`~dpcore.explore.dashboard`: the Voilà template of ``make explore`` (a landing page listing the explorers, no
  CDN request).

Each paper's explorer lives in its paper package, on top of these widgets, and is named by the package's ``PAPER``
(``explorer_topic``, ``explorer``; :func:`dpcore.papers.explorer_topics`).  Each topic module holds
``compute(**values) -> View`` (a pure function from the controls' values to the numbers and curves shown, calling the
library / paper functions and tested like them: ``tests/explore/``), ``draw(view, fig)`` and ``build(**overrides)``.
Explorers write no file.
"""

from typing import Any

#: the library's own explorer notebooks of ``notebooks/explore/`` and the module each one builds
LIBRARY_TOPICS: dict[str, tuple[str, ...]] = {"dpsgd": ("dpcore.explore.dpsgd",)}

__all__ = ["LIBRARY_TOPICS", "TOPICS"]


def __getattr__(name: str) -> Any:
    """``TOPICS``: every explorer notebook of ``notebooks/explore/`` and the modules it builds -- the library's
    (:data:`LIBRARY_TOPICS`) and each paper's, read from the papers' ``PAPER`` objects
    (:func:`dpcore.papers.explorer_topics`; no paper module is named here, issue 50)."""
    if name == "TOPICS":
        from dpcore.papers import explorer_topics

        return {**LIBRARY_TOPICS, **explorer_topics()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
