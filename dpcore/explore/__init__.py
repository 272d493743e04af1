"""Explorers: interactive views of the library and the paper packages (``notebooks/explore/``, ``make explore``).

This package is a presentation layer, like the notebooks: it may import the library and every paper package,
and nothing in the library or in a paper package imports it (``tests/test_layout.py``).  Each topic module holds

* ``compute(**values) -> View``: a pure function from the controls' values to the numbers and curves shown,
  calling the library / paper functions (``tests/test_explore_*.py`` check its numbers equal theirs);
* ``draw(view, fig)``: the plot; ``build(**overrides)``: the widget (:class:`~dpcore.explore.widgets.Explorer`).

Topics: :mod:`~dpcore.explore.dpsgd` (DP-SGD accountants and the inverse), :mod:`~dpcore.explore.modelmix`
(paper 002), :mod:`~dpcore.explore.shuffling` (paper 003), :mod:`~dpcore.explore.contraction` (paper 004),
:mod:`~dpcore.explore.calculators` (paper 000's Proactive-DP calculator and paper 001's per-silo noise).
Explorers write no file.
"""

TOPICS = ("dpsgd", "modelmix", "shuffling", "contraction", "calculators")

__all__ = ["TOPICS"]
