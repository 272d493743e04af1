"""What a notebook writes: figures (PNG + PDF + CSV), tables and its claims.

Every file is written atomically (temporary file in the same folder, then
``os.replace``), so an interrupted or failed run never leaves a half-written
figure.  Every figure carries a footer with the profile it was produced under,
and a ``REDUCED SCALE`` label when the profile shrank the experiment.

A notebook typically does::

    report = Report("00_accounting", "dpsgd_accountants", profile=profile, figures_dir=figures_dir)
    report.figure(fig, "epsilon_vs_epochs", data=frame)
    report.record("ref", "Abadi et al. 2016", "epsilon", 1.26, ours, atol=0.005)
    report.save_claims()
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcore.claims import Claim, ClaimsLog
from dpcore.paths import figures_dir as default_figures_dir
from dpcore.validation import check_choice

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["Report", "atomic_path", "PROFILES"]

PROFILES = ("quick", "paper")


class atomic_path:
    """Context manager yielding a temporary path that replaces ``path`` on success."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def __enter__(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.stem}.", suffix=self.path.suffix)
        os.close(fd)
        self.tmp = Path(tmp)
        return self.tmp

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            os.replace(self.tmp, self.path)
        else:
            self.tmp.unlink(missing_ok=True)


class Report:
    """Output folder of one notebook: ``<figures_dir>/<folder>/``.

    ``reduced`` marks a run at reduced scale (set it from the profile's
    parameters); ``reduced_note`` says how (e.g. "MNIST test set, 2 epochs").
    """

    def __init__(
        self,
        folder: str,
        notebook: str,
        *,
        profile: str = "quick",
        figures_dir: str | os.PathLike | None = None,
        reduced: bool = False,
        reduced_note: str = "",
        provenance: str = "",
    ) -> None:
        if not folder or not notebook:
            raise ValueError("folder and notebook must be non-empty names")
        self.profile = check_choice("profile", profile, PROFILES)
        root = Path(figures_dir) if figures_dir else default_figures_dir()
        self.out_dir = root / folder
        self.notebook = notebook
        self.reduced = bool(reduced)
        self.reduced_note = reduced_note
        self.provenance = provenance  # the data a figure was computed on (dpcore.data.provenance)
        self.claims = ClaimsLog()

    @property
    def label(self) -> str:
        text = f"dpcore · profile={self.profile}"
        if self.reduced:
            text += " · REDUCED SCALE" + (f": {self.reduced_note}" if self.reduced_note else "")
        if self.provenance:
            text += f" · data: {self.provenance}"
        return text

    def figure(self, fig: Figure, name: str, *, data: pd.DataFrame | None = None) -> dict[str, Path]:
        """Stamp ``fig`` with the profile label and write PNG, PDF (and CSV of ``data``)."""
        fig.text(0.995, 0.005, self.label, ha="right", va="bottom", fontsize=7, color="0.35")
        written = {}
        for ext in ("png", "pdf"):
            target = self.out_dir / f"{name}.{ext}"
            # no creation date in the PDF: re-running an unchanged notebook gives identical bytes
            metadata = {"CreationDate": None} if ext == "pdf" else None
            with atomic_path(target) as tmp:
                fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight", metadata=metadata)
            written[ext] = target
        if data is not None:
            written["csv"] = self.table(data, name)
        return written

    def table(self, data: pd.DataFrame, name: str) -> Path:
        """Write ``data`` as ``<name>.csv`` (no index)."""
        target = self.out_dir / f"{name}.csv"
        with atomic_path(target) as tmp:
            data.to_csv(tmp, index=False)
        return target

    def record(self, *args: Any, **kwargs: Any) -> Claim:
        """Record a claim (see :meth:`dpcore.claims.ClaimsLog.record`)."""
        return self.claims.record(*args, **kwargs)

    def save_claims(self) -> Path:
        """Write ``<notebook>.claims.csv`` next to the figures."""
        return self.claims.write(self.out_dir / f"{self.notebook}.claims.csv")
