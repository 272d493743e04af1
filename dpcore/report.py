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
warning (``tests/test_figures.py`` checks the committed PNGs).
"""

from __future__ import annotations

import math
import numbers
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcore.claims import Claim, ClaimsLog, ClaimSpec
from dpcore.paths import PROFILES, atomic_path, build_dir, scratch_dir
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
    "LAYOUT_KEY",
    "PNG_METADATA",
    "PDF_METADATA",
    "SIGNIFICANT_DIGITS",
    "TIMING_COLUMNS",
    "MIN_AXES_SPAN",
    "REPEATABLE_VAR",
    "FigureLayout",
    "add_footer",
    "wrap_to_width",
    "figure_layout",
    "finish_figure",
    "table_csv",
    "timing_columns",
    "repeatable_torch",
]

FOOTER_KEY = "dpcore-footer"  # PNG text chunk holding the footer
FOOTER_GID = "dpcore-footer"  # gid of the footer Text artist
LAYOUT_KEY = "dpcore-layout"  # PNG text chunk holding FigureLayout.text()
#: fixed metadata: no timestamp, no library version (matplotlib's defaults carry both)
PNG_METADATA: dict[str, str] = {"Software": "dpcore"}
PDF_METADATA: dict[str, str | None] = {"Creator": "dpcore", "Producer": "dpcore", "CreationDate": None}
SIGNIFICANT_DIGITS = 6  # floats in every CSV table (a run on another CPU or BLAS agrees to far more)
TIMING_COLUMNS = ("seconds", "cpu_s", "wall_s")  # and every column ending in "_seconds"
MIN_AXES_SPAN = 0.6  # the axes (with their labels) span at least this fraction of the saved image's width
REPEATABLE_VAR = "DPCORE_REPEATABLE"  # "1": Report() sets torch to one thread, deterministic algorithms
DPI = 150
PAD_INCHES = 0.08
_FOOTER_FONTSIZE = 7.0
_FOOTER_GAP_PT = 4.0  # gap between the lowest artist and the footer, in points
_FOOTER_SEPARATOR = " · "  # the footer breaks here first
_FOOTER_FILL = 0.96  # of the content's width: text measured at the figure's dpi is a little wider at DPI
_LAYOUT_PASSES = 2  # draws before the layout is frozen (savefig with bbox_inches="tight" draws twice)


def wrap_to_width(text: str, width: float, measure: Callable[[str], float]) -> list[str]:
    """Break ``text`` into lines no wider than ``width`` as ``measure(line)`` sees them: at the footer's
    ``" · "`` separators first, at spaces inside a part too wide alone; a word wider than ``width`` stays whole."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"text must be a non-empty string, got {text!r}")
    if not (isinstance(width, numbers.Real) and math.isfinite(width) and width > 0):
        raise ValueError(f"width must be a positive number, got {width!r}")
    lines: list[str] = []
    current = ""
    for part in text.split(_FOOTER_SEPARATOR):
        joined = f"{current}{_FOOTER_SEPARATOR}{part}" if current else part
        if measure(joined) <= width:
            current = joined
            continue
        if current:
            lines.append(current)
            current = ""
        for word in part.split(" "):
            joined = f"{current} {word}" if current else word
            if current and measure(joined) > width:
                lines.append(current)
                joined = word
            current = joined
    lines.append(current)
    return lines


def _layout_state(fig: Figure) -> tuple | None:
    """Everything a layout engine moves: every axes' active and original position and the figure's
    super-titles' positions (None for a figure with subfigures, whose layout this does not capture).  A layout pass
    that leaves it unchanged is a fixed point: the next pass, a function of the same state, changes nothing."""
    if fig.subfigs:
        return None
    boxes = tuple((tuple(ax.get_position(original=False).bounds), tuple(ax.get_position(original=True).bounds))
                  for ax in fig.axes)  # fmt: skip
    titles = tuple(None if t is None else t.get_position() for t in (fig._suptitle, fig._supxlabel, fig._supylabel))
    return boxes, titles


@dataclass
class _Boxes:
    """The pixel boxes ``Figure.get_tightbbox(renderer)`` unites, collected once: the visible, in-layout non-Axes
    children's (``others``) and every visible Axes' (``axes``); one pass serves the footer's placement and the
    layout record (an Axes' tight box is the costly part: its tick labels are laid out)."""

    others: list
    axes: list

    @classmethod
    def collect(cls, fig: Figure, renderer: Any) -> _Boxes:
        others = [a.get_tightbbox(renderer) for a in fig.get_children()
                  if a not in fig.axes and a.get_visible() and a.get_in_layout()]  # fmt: skip
        return cls([b for b in others if b is not None], [ax.get_tightbbox(renderer) for ax in fig.axes
                                                          if ax.get_visible()])  # fmt: skip

    def inches(self, fig: Figure, extra: Iterable[Any] = ()) -> Any:
        """Their union (and ``extra``'s), in inches: ``fig.get_tightbbox(renderer)`` as matplotlib computes it."""
        from matplotlib.transforms import Bbox, TransformedBbox

        bb = [b for b in [*self.others, *extra, *self.axes]
              if math.isfinite(b.width) and math.isfinite(b.height) and (b.width != 0 or b.height != 0)]  # fmt: skip
        if not bb:
            return fig.bbox_inches
        return TransformedBbox(Bbox.union(bb), fig.dpi_scale_trans.inverted())


def add_footer(fig: Figure, label: str) -> Any:
    """Put ``label`` below everything drawn on ``fig`` (right-aligned), wrapped to the width of what is
    drawn; return the Text artist.

    The figure is laid out first (its layout engine, if any, runs as ``savefig`` would run it),
    then the layout is frozen (``set_layout_engine("none")``: the axes keep their positions) and
    the footer is placed under the lowest artist's bounding box, so it never overlaps axis
    labels, tick labels or legends; ``savefig(bbox_inches="tight")`` grows the saved image down to
    include it, never sideways: its lines are no wider than the figure's content (:func:`wrap_to_width`).
    Figure legends are re-anchored to figure coordinates (same place on screen): the
    tight crop replaces the figure's bounding box they are anchored to, which would otherwise pull
    a legend at the bottom onto the footer.  An earlier footer is replaced.
    """
    return _add_footer(fig, label)[0]


def _add_footer(fig: Figure, label: str) -> tuple[Any, _Boxes]:
    """:func:`add_footer`, also returning the boxes it measured (before the footer)."""
    from matplotlib.font_manager import FontProperties

    if not isinstance(label, str) or not label:
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    for text in list(fig.texts):
        if text.get_gid() == FOOTER_GID:
            text.remove()
    state = _layout_state(fig)
    for _ in range(_LAYOUT_PASSES):  # tight/constrained layouts settle in a pass or two, as in savefig
        fig.canvas.draw()
        settled, state = state, _layout_state(fig)
        if state is not None and state == settled:  # a fixed point: a further pass would change nothing
            break
    if fig.get_layout_engine() is not None:
        fig.set_layout_engine("none")
    for legend in fig.legends:
        if legend.get_bbox_to_anchor() is fig.bbox:
            legend.set_bbox_to_anchor((0.0, 0.0, 1.0, 1.0), transform=fig.transFigure)
    renderer = fig.canvas.get_renderer()
    width, height = fig.get_size_inches()
    boxes = _Boxes.collect(fig, renderer)
    bbox = boxes.inches(fig)  # fig.get_tightbbox(renderer)
    font = FontProperties(size=_FOOTER_FONTSIZE)

    def measure(line: str) -> float:  # inches
        return renderer.get_text_width_height_descent(line, font, ismath=False)[0] / fig.dpi

    lines = wrap_to_width(label, _FOOTER_FILL * bbox.width, measure)
    y = (bbox.y0 - _FOOTER_GAP_PT / 72.0) / height
    footer = fig.text(
        bbox.x1 / width,
        y,
        "\n".join(lines),
        ha="right",
        va="top",
        fontproperties=font,
        color="0.35",
        gid=FOOTER_GID,
        parse_math=False,
    )
    return footer, boxes


@dataclass(frozen=True)
class FigureLayout:
    """How a saved figure is laid out (stored in the PNG text chunk :data:`LAYOUT_KEY`).

    ``axes_span``: the fraction of the saved image's width between the leftmost and the rightmost edge of
    the axes' tight boxes (tick labels, axis labels, titles and legends included) and figure legends: low
    for a plot squeezed into a corner.  ``aspect``: width / height of the saved image.  ``legends_moved``: axes
    legends moved below their axes because they covered data.  ``not_run_panels``: empty panels marked
    "not run".  ``footer_lines``: lines of the wrapped footer.
    """

    axes_span: float
    aspect: float
    legends_moved: int = 0
    not_run_panels: int = 0
    footer_lines: int = 1

    def text(self) -> str:
        """``axes_span=0.931 aspect=2.503 legends_moved=0 not_run_panels=0 footer_lines=2``."""
        return (
            f"axes_span={self.axes_span:.3f} aspect={self.aspect:.3f} legends_moved={self.legends_moved} "
            f"not_run_panels={self.not_run_panels} footer_lines={self.footer_lines}"
        )

    @classmethod
    def parse(cls, text: str) -> FigureLayout:
        """The layout written by :meth:`text`; raises ``ValueError`` for anything else."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        try:
            fields = dict(item.split("=", 1) for item in text.split())
            return cls(
                axes_span=float(fields.pop("axes_span")),
                aspect=float(fields.pop("aspect")),
                legends_moved=int(fields.pop("legends_moved")),
                not_run_panels=int(fields.pop("not_run_panels")),
                footer_lines=int(fields.pop("footer_lines")),
            )
        except (KeyError, ValueError) as exc:
            raise ValueError(f"text must be a FigureLayout.text(), got {text!r}") from exc

    def problems(self, *, min_span: float = MIN_AXES_SPAN, max_aspect: float = 6.0) -> list[str]:
        """What makes the figure hard to read: axes squeezed into part of the width, or an extreme shape."""
        found = []
        if self.axes_span < min_span:
            found.append(f"the axes span {self.axes_span:.0%} of the width (< {min_span:.0%}): squeezed into a corner")
        if not 1.0 / max_aspect <= self.aspect <= max_aspect:
            found.append(f"aspect ratio {self.aspect:.2f} outside [1/{max_aspect:g}, {max_aspect:g}]")
        return found


def figure_layout(fig: Figure, *, pad_inches: float = PAD_INCHES, **counts: int) -> FigureLayout:
    """The :class:`FigureLayout` of ``fig`` as ``savefig(bbox_inches="tight", pad_inches=pad_inches)`` will
    save it (the figure drawn as it is now); ``counts`` fill ``legends_moved``, ``not_run_panels`` and
    ``footer_lines``."""
    if not (isinstance(pad_inches, numbers.Real) and math.isfinite(pad_inches) and pad_inches >= 0):
        raise ValueError(f"pad_inches must be a number >= 0, got {pad_inches!r}")
    renderer = fig.canvas.get_renderer()
    canvas = fig.get_tightbbox(renderer).padded(pad_inches)  # inches
    boxes = [a.get_tightbbox(renderer) for a in [*fig.axes, *fig.legends] if a.get_visible()]
    return _layout(fig, canvas, boxes, **counts)


def _layout(fig: Figure, canvas: Any, boxes: list, **counts: int) -> FigureLayout:
    """The layout of a figure saved as ``canvas`` (inches) whose Axes and figure legends have the pixel ``boxes``."""
    boxes = [b for b in boxes if b is not None]
    span = 0.0
    if boxes:
        left, right = min(b.x0 for b in boxes) / fig.dpi, max(b.x1 for b in boxes) / fig.dpi
        span = (min(right, canvas.x1) - max(left, canvas.x0)) / canvas.width
    aspect = canvas.width / canvas.height
    return FigureLayout(axes_span=round(float(span), 3), aspect=round(float(aspect), 3), **counts)


def finish_figure(fig: Figure, label: str) -> tuple[Any, FigureLayout]:
    """Make ``fig`` ready to save: mark empty panels "not run", move legends that cover data below their
    axes, add the wrapped footer ``label`` (:func:`add_footer`); return the footer and the layout."""
    from dpcore.plots import mark_empty_panels, move_covering_legends

    not_run = mark_empty_panels(fig)
    moved = move_covering_legends(fig)
    footer, boxes = _add_footer(fig, label)  # the layout is frozen now: no further draw moves anything
    lines = footer.get_text().count("\n") + 1
    # figure_layout(fig, ...) without measuring every Axes again: the footer adds one box to the union
    renderer = fig.canvas.get_renderer()
    canvas = boxes.inches(fig, [footer.get_tightbbox(renderer)]).padded(PAD_INCHES)
    legends = [a.get_tightbbox(renderer) for a in fig.legends if a.get_visible()]
    layout = _layout(fig, canvas, [*boxes.axes, *legends], legends_moved=moved, not_run_panels=not_run,
                     footer_lines=lines)  # fmt: skip
    return footer, layout


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

    def figure(self, fig: Figure, name: str, *, data: pd.DataFrame | None = None) -> dict[str, Path]:
        """Finish ``fig`` (:func:`finish_figure`: "not run" panels, legends off the data, wrapped footer) and
        write ``<name>.png`` and ``<name>.pdf`` with fixed metadata (and ``<name>.csv`` of ``data``).

        The PNG holds the footer (text chunk :data:`FOOTER_KEY`) and the layout (:data:`LAYOUT_KEY`); a
        layout with :meth:`FigureLayout.problems` (e.g. axes squeezed into a corner) draws a warning.
        """
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"name must be a non-empty file stem without '/', got {name!r}")
        label = self.label
        footer, layout = finish_figure(fig, label)
        self.layouts[name] = layout
        for problem in layout.problems():
            warnings.warn(f"{self.out_dir.name}/{name}: {problem}", stacklevel=2)
        written = {}
        for ext in ("png", "pdf"):
            target = self.out_dir / f"{name}.{ext}"
            # no date or version in the metadata: re-running an unchanged notebook gives identical bytes
            if ext == "png":
                metadata = {**PNG_METADATA, FOOTER_KEY: label, LAYOUT_KEY: layout.text()}
            else:
                metadata = {**PDF_METADATA, "Subject": label}
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
            written[ext] = target
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
        return target

    def check(self, spec: ClaimSpec, our_value: Any, *, note: str = "", inconclusive: str = "") -> Claim:
        """Check ``our_value`` against ``spec`` at this report's profile and scale (see
        :meth:`dpcore.claims.ClaimsLog.check`; ``inconclusive``: why the data cannot decide it, computed from the
        runs); returns the recorded row."""
        return self.claims.check(spec, our_value, note=note, reduced=self.reduced, profile=self.profile,
                                 inconclusive=inconclusive)  # fmt: skip

    def save_claims(self) -> Path:
        """Write ``<notebook>.claims.csv`` next to the figures."""
        return self.claims.write(self.out_dir / f"{self.notebook}.claims.csv")
