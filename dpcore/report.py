"""What a notebook writes: figures (PNG + PDF + CSV), tables and its claims.

Every file is written atomically (temporary file in the same folder, then ``os.replace``) with
the ordinary file mode (0644 under umask 022), so an interrupted or failed run never leaves a
half-written figure.  Every figure carries a footer with the profile it was produced under,
an optional provenance text, and a ``REDUCED SCALE`` label when the profile shrank the
experiment.  The footer sits below everything else on the figure (axis labels, legends) and is
also stored in the PNG's metadata (text chunk ``dpcore-footer``) and the PDF's ``Subject``.

A notebook typically does::

    from dpcore.papers.p004_contraction.claims import CLAIMS
    report = Report("004_contraction", "contraction_fig2", profile=profile, figures_dir=figures_dir)
    report.figure(fig, "fig2_delta_vs_epsilon", data=frame)
    report.check(CLAIMS["fig2.delta_eps1.q0.1"], ours)
    report.save_claims()

Without ``figures_dir`` the profile's folder is used: ``figures/`` for ``quick`` and
``figures/paper/`` for ``paper`` (see :func:`dpcore.paths.profile_figures_dir`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcore.claims import Claim, ClaimsLog, ClaimSpec
from dpcore.paths import PROFILES, atomic_path, profile_figures_dir
from dpcore.validation import check_choice

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["Report", "atomic_path", "PROFILES", "FOOTER_KEY", "FOOTER_GID", "add_footer"]

FOOTER_KEY = "dpcore-footer"  # PNG text chunk holding the footer
FOOTER_GID = "dpcore-footer"  # gid of the footer Text artist
_FOOTER_GAP_PT = 4.0  # gap between the lowest artist and the footer, in points
_LAYOUT_PASSES = 2  # draws before the layout is frozen (savefig with bbox_inches="tight" draws twice)


def add_footer(fig: Figure, label: str) -> Any:
    """Put ``label`` below everything drawn on ``fig`` (right-aligned); return the Text artist.

    The figure is laid out first (its layout engine, if any, runs as ``savefig`` would run it),
    then the layout is frozen (``set_layout_engine("none")``: the axes keep their positions) and
    the footer is placed under the lowest artist's bounding box, so it never overlaps axis
    labels, tick labels or legends; ``savefig(bbox_inches="tight")`` grows the saved image to
    include it.  Figure legends are re-anchored to figure coordinates (same place on screen): the
    tight crop replaces the figure's bounding box they are anchored to, which would otherwise pull
    a legend at the bottom onto the footer.  An earlier footer is replaced.
    """
    if not isinstance(label, str) or not label:
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    for text in list(fig.texts):
        if text.get_gid() == FOOTER_GID:
            text.remove()
    for _ in range(_LAYOUT_PASSES):  # tight/constrained layouts settle in a pass or two, as in savefig
        fig.canvas.draw()
    if fig.get_layout_engine() is not None:
        fig.set_layout_engine("none")
    for legend in fig.legends:
        if legend.get_bbox_to_anchor() is fig.bbox:
            legend.set_bbox_to_anchor((0.0, 0.0, 1.0, 1.0), transform=fig.transFigure)
    width, height = fig.get_size_inches()
    bbox = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    y = (bbox.y0 - _FOOTER_GAP_PT / 72.0) / height
    return fig.text(bbox.x1 / width, y, label, ha="right", va="top", fontsize=7, color="0.35", gid=FOOTER_GID)


class Report:
    """Output folder of one notebook: ``<figures_dir>/<folder>/``.

    ``reduced`` marks a run at reduced scale (set it from the profile's parameters);
    ``reduced_note`` says how (e.g. "MNIST test set, 2 epochs"); ``provenance`` is a short text
    shown in every footer (e.g. the data set or the commit).
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
        if not isinstance(folder, str) or not folder or not isinstance(notebook, str) or not notebook:
            raise ValueError(f"folder and notebook must be non-empty names, got {folder!r}, {notebook!r}")
        if not isinstance(provenance, str) or not isinstance(reduced_note, str):
            raise ValueError("provenance and reduced_note must be strings")
        self.profile = check_choice("profile", profile, PROFILES)
        root = Path(figures_dir) if figures_dir else profile_figures_dir(self.profile)
        self.out_dir = root / folder
        self.notebook = notebook
        self.reduced = bool(reduced)
        self.reduced_note = reduced_note
        self.provenance = provenance  # the data a figure was computed on (dpcore.data.provenance)
        self.claims = ClaimsLog()
        from dpcore.plots import use_style

        use_style()

    @property
    def label(self) -> str:
        """The footer text: ``dpcore · profile=… [· REDUCED SCALE: …] [· data: provenance]``."""
        text = f"dpcore · profile={self.profile}"
        if self.reduced:
            text += " · REDUCED SCALE" + (f": {self.reduced_note}" if self.reduced_note else "")
        if self.provenance:
            text += f" · data: {self.provenance}"
        return text

    def figure(self, fig: Figure, name: str, *, data: pd.DataFrame | None = None) -> dict[str, Path]:
        """Stamp ``fig`` with the footer and write ``<name>.png``, ``<name>.pdf`` (and ``<name>.csv`` of ``data``)."""
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"name must be a non-empty file stem without '/', got {name!r}")
        label = self.label
        footer = add_footer(fig, label)
        written = {}
        for ext in ("png", "pdf"):
            target = self.out_dir / f"{name}.{ext}"
            # no creation date in the PDF: re-running an unchanged notebook gives identical bytes
            metadata = {FOOTER_KEY: label} if ext == "png" else {"CreationDate": None, "Subject": label}
            with atomic_path(target) as tmp:
                fig.savefig(
                    tmp,
                    format=ext,
                    dpi=150,
                    bbox_inches="tight",
                    bbox_extra_artists=[*fig.get_default_bbox_extra_artists(), footer],
                    pad_inches=0.08,
                    metadata=metadata,
                )
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

    def check(self, spec: ClaimSpec, our_value: Any, *, note: str = "") -> Claim:
        """Check ``our_value`` against ``spec`` at this report's profile and scale (see
        :meth:`dpcore.claims.ClaimsLog.check`); returns the recorded row."""
        return self.claims.check(spec, our_value, note=note, reduced=self.reduced, profile=self.profile)

    def save_claims(self) -> Path:
        """Write ``<notebook>.claims.csv`` next to the figures."""
        return self.claims.write(self.out_dir / f"{self.notebook}.claims.csv")
