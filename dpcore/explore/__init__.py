"""Explorers: interactive views of the library (``notebooks/explore/``, ``make explore``).

This package is library: it knows no paper (``tests/test_layout.py``).  It holds

* :mod:`~dpcore.explore.widgets`: :class:`~dpcore.explore.widgets.Explorer` (controls, a read-out of named numbers,
  a plot redrawn in place, a "computing…" state) and :class:`~dpcore.explore.widgets.View`;
* :mod:`~dpcore.explore.dpsgd`: the DP-SGD explorer (every accountant of :mod:`dpcore.accounting.dpsgd`, and the
  inverse, σ for a target ε);
* :mod:`~dpcore.explore.dashboard`: the Voilà template of ``make explore`` (a landing page listing the explorers, no
  CDN request).

Each paper's explorer lives in its paper package, on top of these widgets: :mod:`dpcore.papers.p000_proactive.explore`
(Proactive-DP calculator), :mod:`dpcore.papers.p001_isrl.explore` (ISRL-DP noise per silo),
:mod:`dpcore.papers.p002_modelmix.explore`, :mod:`dpcore.papers.p003_shuffling.explore` and
:mod:`dpcore.papers.p004_contraction.explore`.  Each topic module holds ``compute(**values) -> View`` (a pure function
from the controls' values to the numbers and curves shown, calling the library / paper functions and tested like
them: ``tests/explore/``), ``draw(view, fig)`` and ``build(**overrides)``.  Explorers write no file.
"""

#: The explorer notebooks of ``notebooks/explore/`` and the module each one builds.
TOPICS: dict[str, tuple[str, ...]] = {
    "dpsgd": ("dpcore.explore.dpsgd",),
    "modelmix": ("dpcore.papers.p002_modelmix.explore",),
    "shuffling": ("dpcore.papers.p003_shuffling.explore",),
    "contraction": ("dpcore.papers.p004_contraction.explore",),
    "calculators": ("dpcore.papers.p000_proactive.explore", "dpcore.papers.p001_isrl.explore"),
}

__all__ = ["TOPICS"]
