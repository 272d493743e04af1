"""The layout of a saved figure, beside :mod:`dpcore.plots`: the footer below everything drawn, wrapped to the
content's width (:func:`add_footer`, :func:`wrap_to_width`), the :class:`FigureLayout` record (how much of the
saved width the axes span, the aspect ratio, what was moved or marked; :func:`figure_layout`), and
:func:`finish_figure`, which :meth:`dpcore.report.Report.figure` applies to every figure before saving it ("not
run" panels and legends off the data by :func:`dpcore.plots.mark_empty_panels` and
:func:`dpcore.plots.move_covering_legends`, then the footer).  :mod:`dpcore.report` re-exports every public name."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "CAPTION_GID",
    "FOOTER_GID",
    "MIN_AXES_SPAN",
    "PAD_INCHES",
    "FigureLayout",
    "add_footer",
    "wrap_to_width",
    "figure_layout",
    "finish_figure",
]


FOOTER_GID = "dpcore-footer"  # gid of the footer Text artist
CAPTION_GID = "dpcore-caption"  # gid of the caption Text artist (above the footer; e.g. the data's re-encoding)
_CAPTION_FONTSIZE = 8.0
MIN_AXES_SPAN = 0.6  # the axes (with their labels) span at least this fraction of the saved image's width
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


def add_footer(fig: Figure, label: str, *, caption: str = "") -> Any:
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

    ``caption`` (optional): a sentence the reader must see (e.g. that the images are a lossy re-encoding), drawn
    between the figure and the footer, left-aligned in dark 8 pt text and wrapped the same way (gid
    :data:`CAPTION_GID`); an earlier caption is replaced, and an empty one removes it.
    """
    return _add_footer(fig, label, caption)[0]


def _add_footer(fig: Figure, label: str, caption: str = "") -> tuple[Any, _Boxes]:
    """:func:`add_footer`, also returning the boxes it measured (before the caption and the footer)."""
    from matplotlib.font_manager import FontProperties

    if not isinstance(label, str) or not label:
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    if not isinstance(caption, str):
        raise ValueError(f"caption must be a string ('' for none), got {caption!r}")
    for text in list(fig.texts):
        if text.get_gid() in (FOOTER_GID, CAPTION_GID):
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
    y0 = bbox.y0
    if caption:
        cfont = FontProperties(size=_CAPTION_FONTSIZE)

        def cmeasure(line: str) -> float:  # inches
            return renderer.get_text_width_height_descent(line, cfont, ismath=False)[0] / fig.dpi

        note = fig.text(bbox.x0 / width, (y0 - _FOOTER_GAP_PT / 72.0) / height,
                        "\n".join(wrap_to_width(caption, _FOOTER_FILL * bbox.width, cmeasure)), ha="left", va="top",
                        fontproperties=cfont, color="0.1", gid=CAPTION_GID, parse_math=False)  # fmt: skip
        y0 = note.get_window_extent(renderer).y0 / fig.dpi
    font = FontProperties(size=_FOOTER_FONTSIZE)

    def measure(line: str) -> float:  # inches
        return renderer.get_text_width_height_descent(line, font, ismath=False)[0] / fig.dpi

    lines = wrap_to_width(label, _FOOTER_FILL * bbox.width, measure)
    y = (y0 - _FOOTER_GAP_PT / 72.0) / height
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


def finish_figure(fig: Figure, label: str, *, caption: str = "") -> tuple[Any, FigureLayout]:
    """Make ``fig`` ready to save: mark empty panels "not run", move legends that cover data below their
    axes, add the wrapped ``caption`` (if any) and footer ``label`` (:func:`add_footer`); return the footer and
    the layout."""
    from dpcore.plots import mark_empty_panels, move_covering_legends

    not_run = mark_empty_panels(fig)
    moved = move_covering_legends(fig)
    footer, boxes = _add_footer(fig, label, caption)  # the layout is frozen now: no further draw moves anything
    lines = footer.get_text().count("\n") + 1
    # figure_layout(fig, ...) without measuring every Axes again: the footer (and caption) add boxes to the union
    renderer = fig.canvas.get_renderer()
    added = [t.get_tightbbox(renderer) for t in fig.texts if t.get_gid() in (FOOTER_GID, CAPTION_GID)]
    canvas = boxes.inches(fig, added).padded(PAD_INCHES)
    legends = [a.get_tightbbox(renderer) for a in fig.legends if a.get_visible()]
    layout = _layout(fig, canvas, [*boxes.axes, *legends], legends_moved=moved, not_run_panels=not_run,
                     footer_lines=lines)  # fmt: skip
    return footer, layout
