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

Only the runner writes the committed folders: ``make figures`` (:mod:`dpcore.runner`) passes each notebook
its ``figures_dir`` (``figures/`` for ``quick``, ``figures/paper/`` for ``paper``: see
:func:`dpcore.paths.profile_figures_dir`; ``make test`` passes ``build/nbval/figures``).  Without
``figures_dir`` -- a notebook opened in JupyterLab or Voilà, a script -- a report writes into the git-ignored
scratch folder ``build/scratch/<profile>/`` (:func:`dpcore.paths.scratch_dir`) and prints a line saying so, so
exploring never changes a committed file.

Repeatable outputs: re-running an unchanged notebook on the same kind of machine writes byte-identical
files (``make figures`` leaves ``git status`` clean):

* PNG and PDF metadata hold no timestamp and no library version (:data:`PNG_METADATA`,
  :data:`PDF_METADATA`: PNG ``Software`` = ``dpcore``, no PDF ``CreationDate``); no SVG is written;
* tables are written with :data:`SIGNIFICANT_DIGITS` significant digits (:func:`table_csv`, the one
  place of that policy), so the last bits of a float from another BLAS or CPU do not show;
* timings are never repeatable: columns named in :data:`TIMING_COLUMNS` (or ending in ``_seconds``) go to
  ``build/timings/<profile>/<folder>/<name>.csv`` and stay out of the committed table;
* with ``DPCORE_REPEATABLE=1`` in the environment (the runner sets it for the notebooks' kernels, with
  one BLAS/OpenMP thread: :data:`dpcore.runner.REPEATABLE_ENV`) a :class:`Report` also puts an imported
  torch on one thread with deterministic algorithms (:func:`repeatable_torch`).

Readable figures (:func:`finish_figure`, applied by :meth:`Report.figure`): a panel with nothing drawn
says "not run: …" (:func:`dpcore.plots.mark_empty_panels`); an axes legend that covers data moves below
its axes (:func:`dpcore.plots.move_covering_legends`); the footer wraps to the width of the figure's
content and never widens the saved image.  The resulting layout (:class:`FigureLayout`: how much of
the saved width the axes span, the aspect ratio, what was moved or marked) is stored in the PNG's text
chunk ``dpcore-layout``; a figure whose axes span less than :data:`MIN_AXES_SPAN` of the width draws a
warning (``tests/test_figures.py`` checks the committed PNGs).  That layout code lives in
:mod:`dpcore.plots_layout`, beside :mod:`dpcore.plots`; this module re-exports its public names.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcore.claims import Claim, ClaimsLog, ClaimSpec
from dpcore.paths import PROFILES, atomic_path, build_dir, scratch_dir
from dpcore.plots_layout import (  # the figure layout lives beside dpcore.plots; re-exported for notebooks and tests
    CAPTION_GID,
    FOOTER_GID,
    MIN_AXES_SPAN,
    PAD_INCHES,
    FigureLayout,
    add_footer,
    figure_layout,
    finish_figure,
    wrap_to_width,
)
from dpcore.validation import check_choice

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "Report",
    "atomic_path",
    "PROFILES",
    "FOOTER_KEY",
    "FOOTER_GID",
    "CAPTION_KEY",
    "CAPTION_GID",
    "LAYOUT_KEY",
    "PNG_METADATA",
    "PDF_METADATA",
    "SIGNIFICANT_DIGITS",
    "TIMING_COLUMNS",
    "MIN_AXES_SPAN",
    "REPEATABLE_VAR",
    "OUTPUTS_LOG_VAR",
    "FigureLayout",
    "add_footer",
    "wrap_to_width",
    "figure_layout",
    "finish_figure",
    "table_csv",
    "timing_columns",
    "repeatable_torch",
    "log_written",
]

FOOTER_KEY = "dpcore-footer"  # PNG text chunk holding the footer
LAYOUT_KEY = "dpcore-layout"  # PNG text chunk holding FigureLayout.text()
CAPTION_KEY = "dpcore-caption"  # PNG text chunk holding the figure's caption (Report.data_caption), when it has one
#: fixed metadata: no timestamp, no library version (matplotlib's defaults carry both)
PNG_METADATA: dict[str, str] = {"Software": "dpcore"}
PDF_METADATA: dict[str, str | None] = {"Creator": "dpcore", "Producer": "dpcore", "CreationDate": None}
SIGNIFICANT_DIGITS = 6  # floats in every CSV table (a run on another CPU or BLAS agrees to far more)
TIMING_COLUMNS = ("seconds", "cpu_s", "wall_s")  # and every column ending in "_seconds"
REPEATABLE_VAR = "DPCORE_REPEATABLE"  # "1": Report() sets torch to one thread, deterministic algorithms
#: a file the runner names for each notebook's kernel: every file a Report writes is appended to it, one path a line
#: (the runner compares what each notebook wrote with what was there: dpcore.runner.compare)
OUTPUTS_LOG_VAR = "DPCORE_OUTPUTS_LOG"
DPI = 150


def table_csv(data: pd.DataFrame, *, significant: int = SIGNIFICANT_DIGITS) -> str:
    """``data`` as CSV text (no index, ``\\n`` line ends) with every float at ``significant`` significant
    digits (``%.<significant>g``), also floats inside text columns; NaN is written as an empty cell."""
    import numpy as np
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if isinstance(significant, bool) or not isinstance(significant, int) or not 1 <= significant <= 17:
        raise ValueError(f"significant must be an integer in [1, 17], got {significant!r}")
    fmt = f"%.{significant}g"

    def cell(value: Any) -> Any:
        if isinstance(value, float | np.floating) and math.isfinite(value):
            return fmt % value
        return value

    frame = data.copy()
    for position in range(frame.shape[1]):
        if pd.api.types.is_object_dtype(frame.iloc[:, position]):
            frame.iloc[:, position] = frame.iloc[:, position].map(cell)
    return frame.to_csv(index=False, float_format=fmt, lineterminator="\n")


def timing_columns(columns: Iterable[Any]) -> list[str]:
    """The columns that hold timings (:data:`TIMING_COLUMNS`, or a name ending in ``_seconds``)."""
    return [c for c in columns if isinstance(c, str) and (c in TIMING_COLUMNS or c.endswith("_seconds"))]


def log_written(path: Path) -> Path:
    """Append ``path`` to the file named by :data:`OUTPUTS_LOG_VAR` when the runner set it (else nothing); return
    ``path``."""
    log = os.environ.get(OUTPUTS_LOG_VAR)
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{Path(path).resolve()}\n")
    return path


def repeatable_torch() -> None:
    """One torch thread and deterministic algorithms (``torch.use_deterministic_algorithms``, warnings for
    an operation without a deterministic implementation): the float reductions of a run then do not depend
    on the machine's core count.  Does nothing when torch is not imported (``OMP_NUM_THREADS=1``, set by
    the runner, covers a later import)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True, warn_only=True)


class Report:
    """Output folder of one notebook: ``<figures_dir>/<folder>/``, or ``build/scratch/<profile>/<folder>/`` when
    ``figures_dir`` is None or empty (not run by the runner; ``scratch`` is then True).

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
        self.scratch = not figures_dir  # outside the runner: never the committed figures/
        root = Path(figures_dir) if figures_dir else scratch_dir(self.profile)
        self.out_dir = root / folder
        if self.scratch:
            print(
                f"dpcore: not run by `make figures`: figures and claims of {folder}/{notebook} go to the scratch "
                f"folder {self.out_dir} (git-ignored); only the runner writes figures/",
                flush=True,
            )
        self.notebook = notebook
        self.reduced = bool(reduced)
        self.reduced_note = reduced_note
        self.provenance = provenance  # the data a figure was computed on (dpcore.data.provenance)
        self.claims = ClaimsLog()
        self.timings_dir = build_dir() / "timings" / self.profile / folder
        self.layouts: dict[str, FigureLayout] = {}  # figure name -> its layout when saved
        from dpcore.plots import use_style

        use_style()
        if os.environ.get(REPEATABLE_VAR) == "1":
            repeatable_torch()

    @property
    def label(self) -> str:
        """The footer text: ``dpcore · profile=… [· REDUCED SCALE: …] [· data: provenance]``."""
        text = f"dpcore · profile={self.profile}"
        if self.reduced:
            text += " · REDUCED SCALE" + (f": {self.reduced_note}" if self.reduced_note else "")
        if self.provenance:
            text += f" · data: {self.provenance}"
        return text

    def data_caption(self, fig: Figure) -> str:
        """The caption ``fig`` must carry about its data: for each data set whose lossy re-encoded copy this report's
        provenance names (:func:`dpcore.data.describe.reencoding_captions`, e.g. the offline mirror's JPEG
        CIFAR-10) and whose title a text of ``fig`` names (titles, labels, legends, table cells; the footer and an
        earlier caption aside), its caption; "" when none applies."""
        from matplotlib.text import Text

        from dpcore.data.describe import reencoding_captions

        captions = reencoding_captions(self.provenance) if self.provenance else {}
        if not captions:
            return ""
        texts = [t.get_text() for t in fig.findobj(Text) if t.get_gid() not in (FOOTER_GID, CAPTION_GID)]
        return " ".join(c for title, c in captions.items() if any(title in text for text in texts))

    def figure(self, fig: Figure, name: str, *, data: pd.DataFrame | None = None) -> dict[str, Path]:
        """Finish ``fig`` (:func:`finish_figure`: "not run" panels, legends off the data, the data caption of
        :meth:`data_caption`, wrapped footer) and write ``<name>.png`` and ``<name>.pdf`` with fixed metadata (and
        ``<name>.csv`` of ``data``).

        The PNG holds the footer (text chunk :data:`FOOTER_KEY`), the caption when there is one
        (:data:`CAPTION_KEY`) and the layout (:data:`LAYOUT_KEY`); a layout with :meth:`FigureLayout.problems`
        (e.g. axes squeezed into a corner) draws a warning.
        """
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"name must be a non-empty file stem without '/', got {name!r}")
        label = self.label
        caption = self.data_caption(fig)
        footer, layout = finish_figure(fig, label, caption=caption)
        self.layouts[name] = layout
        for problem in layout.problems():
            warnings.warn(f"{self.out_dir.name}/{name}: {problem}", stacklevel=2)
        written = {}
        for ext in ("png", "pdf"):
            target = self.out_dir / f"{name}.{ext}"
            # no date or version in the metadata: re-running an unchanged notebook gives identical bytes
            if ext == "png":
                metadata = {
                    **PNG_METADATA,
                    FOOTER_KEY: label,
                    LAYOUT_KEY: layout.text(),
                    **({CAPTION_KEY: caption} if caption else {}),
                }
            else:
                metadata = {**PDF_METADATA, "Subject": f"{caption} · {label}" if caption else label}
            with atomic_path(target) as tmp:
                fig.savefig(
                    tmp,
                    format=ext,
                    dpi=DPI,
                    bbox_inches="tight",
                    bbox_extra_artists=[*fig.get_default_bbox_extra_artists(), footer],
                    pad_inches=PAD_INCHES,
                    metadata=metadata,
                )
            written[ext] = log_written(target)
        if data is not None:
            written["csv"] = self.table(data, name)
        return written

    def table(self, data: pd.DataFrame, name: str) -> Path:
        """Write ``data`` as ``<name>.csv`` (no index) at :data:`SIGNIFICANT_DIGITS` significant digits
        (:func:`table_csv`).  Timing columns (:func:`timing_columns`) are left out: the whole table, timings
        included, goes to ``build/timings/<profile>/<folder>/<name>.csv`` (never committed)."""
        import pandas as pd

        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"name must be a non-empty file stem without '/', got {name!r}")
        if not isinstance(data, pd.DataFrame):
            raise ValueError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        timings = timing_columns(data.columns)
        if timings:
            with atomic_path(self.timings_dir / f"{name}.csv") as tmp:
                tmp.write_text(table_csv(data), encoding="utf-8")
            data = data.drop(columns=timings)
        target = self.out_dir / f"{name}.csv"
        with atomic_path(target) as tmp:
            tmp.write_text(table_csv(data), encoding="utf-8")
        return log_written(target)

    def check(self, spec: ClaimSpec, our_value: Any, *, note: str = "", inconclusive: str = "") -> Claim:
        """Check ``our_value`` against ``spec`` at this report's profile and scale (see
        :meth:`dpcore.claims.ClaimsLog.check`; ``inconclusive``: why the data cannot decide it, computed from the
        runs); returns the recorded row."""
        return self.claims.check(spec, our_value, note=note, reduced=self.reduced, profile=self.profile,
                                 inconclusive=inconclusive)  # fmt: skip

    def save_claims(self) -> Path:
        """Write ``<notebook>.claims.csv`` next to the figures."""
        return log_written(self.claims.write(self.out_dir / f"{self.notebook}.claims.csv"))
