"""Sphinx configuration of the dpcore site (built by ``make docs`` through ``docs/build_site.py``).

Sphinx + MyST-NB + the PyData theme: the stack of the projects dpcore is compared with (Opacus and
jax_privacy document with Sphinx; NumPy, SciPy, pandas with the PyData theme), API pages straight from the
docstrings (autodoc + napoleon), Markdown pages, and notebooks rendered from their stored outputs without a
kernel (``nb_execution_mode = "off"``).  Everything the pages load is served from the site itself: no CDN
(no MathJax, no widget JavaScript), so the site works offline and the browser test sees no failed request.
"""

from __future__ import annotations

import dpcore

project = "dpcore"
author = "dpcore contributors"
copyright = "dpcore contributors, MIT License"  # noqa: A001
release = dpcore.__version__ if hasattr(dpcore, "__version__") else "0.1.0"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "figures/**", "_generated/**"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
master_doc = "index"

# MyST / MyST-NB: render stored outputs, never execute; no widget JavaScript from a CDN.
nb_execution_mode = "off"
nb_ipywidgets_js = {}
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
nb_merge_streams = True
# Notebook headings jump levels (a notebook is written as a report, not as a Sphinx chapter).
suppress_warnings = ["myst.header"]

# autodoc: the public API (``__all__`` of each package), in source order, with type hints in the signature.
autodoc_default_options = {"members": True, "member-order": "bysource", "undoc-members": False}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_mock_imports: list[str] = []
napoleon_google_docstring = False
napoleon_numpy_docstring = True

html_theme = "pydata_sphinx_theme"
html_title = "dpcore"
html_static_path = ["_static"]
html_css_files = ["dpcore.css"]
# the explorers' sliders without a kernel (issue 54): a small script of our own, served with the site (no CDN)
html_js_files = [("dpcore-explorer.js", {"defer": "defer"})]
html_show_sourcelink = False
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "navbar_align": "left",
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "sharp_edges": [], "explorers": []}

# An explicit default colour mode (the theme's script logs a console error when none is set).
html_context = {"default_mode": "light"}
# A favicon of our own: without one the browser asks the server for /favicon.ico (a 404 in the console).
html_favicon = "_static/favicon.svg"
