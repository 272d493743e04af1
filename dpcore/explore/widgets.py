"""The widget side of every explorer: controls, a read-out of named numbers, a plot redrawn in place.

An explorer is a pure function ``compute(**values) -> View`` (tested like any library function: the numbers it
returns are the library's) plus :class:`Explorer`, which wires ipywidgets controls to it.  Nothing here knows a
paper.  Each change of a control recomputes the :class:`View`, rewrites the read-out (an HTML table whose cells
carry ``data-key`` attributes, so a browser test can read them) and redraws the figure into the same
``ipywidgets.Image`` (no new output per change).  The read-out says when the last update ran and how long it took;
a failing input (``ValueError`` naming the parameter and its range) is shown instead of a traceback.

Displayed in a notebook, an :class:`Explorer` sends the live widget *and* a PNG of its current state, so a headless
run (papermill, nbval, a static HTML page) shows the default state as a static figure.
"""

from __future__ import annotations

import base64
import html
import io
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["View", "Explorer", "format_value", "readout_html", "figure_png", "plain_log_axes", "PNG_DPI"]

PNG_DPI = 80  # the live plot: small and fast to encode (the committed figures use dpcore.report's 150)


@dataclass(frozen=True)
class View:
    """What an explorer shows for one set of control values.

    ``values``: the named numbers of the read-out (key -> value); ``labels``: key -> the text shown beside it
    (which accountant, rigorous or approximate); ``notes``: lines shown under the read-out (what is approximate or
    coarsened, which theorem); ``data``: whatever the explorer's ``draw`` needs (curves).
    """

    values: Mapping[str, float]
    labels: Mapping[str, str]
    notes: tuple[str, ...] = ()
    data: Any = None
    title: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


def format_value(value: float) -> str:
    """How the read-out prints a number: 6 significant digits, ``inf`` and ``nan`` spelled out."""
    if value is None:
        return "—"
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.6g}"


def readout_html(view: View, *, status: str = "") -> str:
    """The read-out table of ``view`` (one row per value, ``data-key`` on each row and value cell) and its notes."""
    rows = []
    for key, value in view.values.items():
        label = html.escape(view.labels.get(key, key))
        rows.append(
            f'<tr data-key="{html.escape(key)}"><td style="padding-right:1em">{label}</td>'
            f'<td class="dpcore-value" data-key="{html.escape(key)}" style="font-family:monospace">'
            f"{format_value(value)}</td></tr>"
        )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in view.notes)
    parts = [f'<table class="dpcore-readout">{"".join(rows)}</table>']
    if notes:
        parts.append(f'<ul class="dpcore-notes" style="font-size:90%;color:#444">{notes}</ul>')
    if status:
        parts.append(f'<div class="dpcore-status" style="font-size:85%;color:#666">{html.escape(status)}</div>')
    return "".join(parts)


def figure_png(fig: Figure, *, dpi: int = PNG_DPI) -> bytes:
    """``fig`` as PNG bytes: one Agg draw, encoded by Pillow at a low compression level (``savefig`` draws again
    and compresses harder: twice as slow for a plot that is redrawn on every change)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image as PILImage

    fig.set_dpi(dpi)
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    buffer = io.BytesIO()
    PILImage.fromarray(np.asarray(canvas.buffer_rgba())).save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


def plain_log_axes(ax: Any, *, x: bool = False, y: bool = True) -> None:
    """Log scale on the chosen axes with plain tick labels (``1e-05``) and no minor ticks: matplotlib's mathtext
    labels (10⁻⁵) and minor-tick labels cost most of a redraw (half a second on a busy 2-core machine)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    for flag, axis, set_scale in ((x, ax.xaxis, ax.set_xscale), (y, ax.yaxis, ax.set_yscale)):
        if flag:
            set_scale("log")
            axis.set_major_locator(LogLocator(base=10, numticks=6))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0e}" if v < 1e-2 or v >= 1e3 else f"{v:g}"))
            axis.set_minor_locator(NullLocator())


def finish_axes(ax: Any, title: str, xlabel: str, ylabel: str) -> None:
    """The explorers' common axes finish: labels, a small title, the legend and a light grid."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


class Explorer:
    """Controls + read-out + plot, recomputed on every change.

    ``controls``: name -> ipywidgets control (its ``value`` is passed to ``compute`` under that name);
    ``compute(**values) -> View``; ``draw(view, fig)`` draws into a fresh matplotlib figure of ``figsize``.
    ``last_seconds`` is the wall time of the last update (compute + draw + encode), ``updates`` counts them.
    """

    def __init__(
        self,
        title: str,
        controls: Mapping[str, Any],
        compute: Callable[..., View],
        draw: Callable[[View, Figure], None],
        *,
        intro: str = "",
        figsize: tuple[float, float] = (8.0, 3.6),
        on_demand: tuple[str, Callable[..., View]] | None = None,
    ) -> None:
        import ipywidgets as w

        if not controls:
            raise ValueError("controls must name at least one control")
        self.title = title
        self.controls = dict(controls)
        self.compute = compute
        self.draw = draw
        self.figsize = figsize
        self.view: View | None = None
        self.error = ""
        self.png = b""
        self.last_seconds = math.nan
        self.updates = 0
        self.header = w.HTML(f"<h3>{html.escape(title)}</h3>" + (f"<p>{html.escape(intro)}</p>" if intro else ""))
        self.readout = w.HTML("computing…")
        self.readout.add_class("dpcore-readout-box")
        self.image = w.Image(format="png")
        self.image.layout.width = f"{round(figsize[0] * PNG_DPI)}px"  # its pixel size: never stretched
        self.image.layout.max_width = "100%"
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        box_controls = w.VBox(list(self.controls.values()), layout=w.Layout(min_width="29em", flex="0 0 auto"))
        right: list[Any] = [self.readout]
        self.on_demand = on_demand
        self.demand_view: View | None = None
        if on_demand is not None:  # a slow computation (seconds) runs when asked, never on every slider move
            self.button = w.Button(description=on_demand[0], layout=w.Layout(width="auto"))
            self.button.add_class("dpcore-on-demand")
            self.demand_out = w.HTML("")
            self.demand_out.add_class("dpcore-on-demand-box")
            self.button.on_click(lambda _: self.run_on_demand())
            right += [self.button, self.demand_out]
        self.widget = w.VBox([self.header, w.HBox([box_controls, w.VBox(right)]), self.image])
        self.widget.add_class("dpcore-explorer")
        self.update()

    @property
    def values(self) -> dict[str, Any]:
        """The controls' current values."""
        return {name: control.value for name, control in self.controls.items()}

    def set(self, **values: Any) -> None:
        """Set controls as a person would (each change triggers an update, as in the browser)."""
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"name must be one of the controls {sorted(self.controls)}, got {name!r}")
            self.controls[name].value = value

    def _on_change(self, change: Mapping[str, Any]) -> None:
        if self.on_demand is not None and self.demand_view is not None:
            stale = "inputs changed: press the button"
            self.demand_out.value = f'<div class="dpcore-stale" style="color:#666">{stale}</div>'
            self.demand_view = None
        self.update()

    def run_on_demand(self) -> View | None:
        """Run the slow computation for the current values ("computing…" while it runs) and show its read-out."""
        if self.on_demand is None:
            raise ValueError("on_demand must be given to the Explorer to run it")
        self.demand_out.value = "computing…"
        start = time.perf_counter()
        try:
            view = self.on_demand[1](**self.values)
        except ValueError as exc:
            self.demand_out.value = f'<div class="dpcore-error" style="color:#a00">{html.escape(str(exc))}</div>'
            return None
        self.demand_view = view
        self.demand_out.value = readout_html(view, status=f"computed in {time.perf_counter() - start:.2f} s")
        return view

    def update(self) -> View | None:
        """Recompute and redraw in place; a ``ValueError`` of the computation is shown, not raised."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        start = time.perf_counter()
        self.readout.value = "computing…"
        try:
            view = self.compute(**self.values)
        except ValueError as exc:
            self.error = str(exc)
            self.readout.value = f'<div class="dpcore-error" style="color:#a00">{html.escape(self.error)}</div>'
            return None
        self.error = ""
        fig = Figure(figsize=self.figsize, dpi=PNG_DPI)  # not pyplot: nothing to close, no global state
        FigureCanvasAgg(fig)
        fig.subplots_adjust(left=0.09, right=0.98, bottom=0.14, top=0.9)  # fixed margins: no layout passes
        self.draw(view, fig)
        self.png = figure_png(fig)
        self.image.value = self.png
        self.view = view
        self.updates += 1
        self.last_seconds = time.perf_counter() - start
        self.readout.value = readout_html(view, status=f"update {self.updates}: {self.last_seconds:.2f} s")
        return view

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The live widget for a frontend with a kernel, and a PNG + text of the current state for static output."""
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        if self.png:
            bundle["image/png"] = base64.b64encode(self.png).decode("ascii")
        text = [self.title]
        if self.view is not None:
            text += [f"{self.view.labels.get(k, k)}: {format_value(v)}" for k, v in self.view.values.items()]
            text += list(self.view.notes)
        if self.error:
            text.append(f"error: {self.error}")
        bundle["text/plain"] = "\n".join(text)
        return bundle
