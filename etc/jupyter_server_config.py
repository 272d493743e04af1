"""Jupyter Server configuration of ``make lab`` (passed with ``--config``): notebooks save without outputs
(:func:`dpcore.lab.strip_outputs_pre_save`), and the file browser is rooted at the repository so that
``notebooks/`` and ``build/scratch/`` (where notebooks run outside the runner write) are both reachable."""

from pathlib import Path

from dpcore.lab import strip_outputs_pre_save

ROOT = Path(__file__).resolve().parents[1]
(ROOT / "build" / "scratch").mkdir(parents=True, exist_ok=True)

c = get_config()  # noqa: F821  (provided by Jupyter when it loads this file)
c.ContentsManager.pre_save_hook = strip_outputs_pre_save
c.ServerApp.root_dir = str(ROOT)
c.ServerApp.preferred_dir = str(ROOT / "notebooks")
