/* dpcore: the explorers of the documentation site without a kernel (issue 54).

   Each <div class="dpcore-static-explorer"> holds a <script type="application/json"> written by docs/build_site.py
   from dpcore.explore.static.grid_data: a grid of the explorer's control values, each point computed at build time
   by the explorer's own compute().  This script draws sliders (one per axis of the grid; buttons for a choice), the
   read-out of the chosen point (the numbers the live explorer shows there) and its lines as an SVG plot.  Nothing is
   fetched: no library, no CDN; the page works offline.  tests/browser/test_docs_site.py moves a slider. */
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
  var W = 640, H = 340, M = { left: 64, right: 16, top: 12, bottom: 44 };

  function num(v) {
    if (v === "nan") return NaN;
    if (v === "inf") return Infinity;
    if (v === "-inf") return -Infinity;
    return v;
  }

  /* Python's "%.6g" (dpcore.explore.widgets.format_value) */
  function formatValue(v) {
    var x = num(v);
    if (x === null || x === undefined) return "—";
    if (isNaN(x)) return "nan";
    if (!isFinite(x)) return x > 0 ? "inf" : "-inf";
    if (x === 0) return "0";
    var parts = x.toExponential(5).split("e");
    var exp = parseInt(parts[1], 10);
    var strip = function (s) { return s.indexOf(".") < 0 ? s : s.replace(/0+$/, "").replace(/\.$/, ""); };
    if (exp < -4 || exp >= 6) {
      var e = Math.abs(exp);
      return strip(parts[0]) + "e" + (exp < 0 ? "-" : "+") + (e < 10 ? "0" + e : String(e));
    }
    return strip(x.toFixed(Math.max(0, 5 - exp)));
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svgEl(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }

  function niceTicks(lo, hi, log) {
    var ticks = [];
    if (log) {
      var a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
      var step = Math.max(1, Math.ceil((b - a) / 6));
      for (var k = a; k <= b; k += step) ticks.push(Math.pow(10, k));
      return ticks;
    }
    var span = hi - lo || Math.abs(hi) || 1;
    var raw = span / 5, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var unit = [1, 2, 2.5, 5, 10].map(function (f) { return f * mag; }).find(function (u) { return u >= raw; });
    for (var t = Math.ceil(lo / unit) * unit; t <= hi + unit * 1e-9; t += unit) ticks.push(Math.abs(t) < unit * 1e-9 ? 0 : t);
    return ticks;
  }

  function tickLabel(t) {
    var a = Math.abs(t);
    if (a !== 0 && (a < 1e-3 || a >= 1e5)) return t.toExponential(0).replace("e+", "e");
    return String(Number(t.toPrecision(6)));
  }

  function drawPlot(svg, grid, point, legend) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    while (legend.firstChild) legend.removeChild(legend.firstChild);
    var lines = [];
    Object.keys(point.series || {}).forEach(function (name, i) {
      var s = point.series[name], xs = grid.xs[s[0]], pts = [];
      for (var k = 0; k < xs.length; k++) {
        var x = num(xs[k]), y = num(s[1][k]);
        if (!isFinite(x) || !isFinite(y) || (grid.log_x && x <= 0) || (grid.log_y && y <= 0)) continue;
        pts.push([x, y]);
      }
      lines.push({ name: name, pts: pts, color: COLORS[i % COLORS.length], dashed: grid.dashed.indexOf(name) >= 0 });
    });
    var all = [].concat.apply([], lines.map(function (l) { return l.pts; }));
    if (!all.length) {
      var empty = svgEl("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "font-size": 13 });
      empty.textContent = "nothing to draw at these values";
      svg.appendChild(empty);
      return;
    }
    function range(values, log) {
      var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
      if (log) { lo = Math.log10(lo); hi = Math.log10(hi); }
      if (lo === hi) { lo -= 0.5; hi += 0.5; }
      if (!log && lo > 0 && lo < (hi - lo) * 0.5) lo = 0;
      return log ? [Math.pow(10, lo), Math.pow(10, hi)] : [lo, hi];
    }
    var xr = range(all.map(function (p) { return p[0]; }), grid.log_x);
    var yr = range(all.map(function (p) { return p[1]; }), grid.log_y);
    function scale(v, r, log, a, b) {
      var t = log ? (Math.log10(v) - Math.log10(r[0])) / (Math.log10(r[1]) - Math.log10(r[0])) : (v - r[0]) / (r[1] - r[0]);
      return a + t * (b - a);
    }
    var px = function (x) { return scale(x, xr, grid.log_x, M.left, W - M.right); };
    var py = function (y) { return scale(y, yr, grid.log_y, H - M.bottom, M.top); };
    var axes = svgEl("g", { "font-size": 11, fill: "#333" });
    niceTicks(xr[0], xr[1], grid.log_x).filter(function (t) { return t >= xr[0] * (1 - 1e-9) && t <= xr[1] * (1 + 1e-9); })
      .forEach(function (t) {
        var x = px(t);
        axes.appendChild(svgEl("line", { x1: x, x2: x, y1: M.top, y2: H - M.bottom, stroke: "#e5e5e5" }));
        var label = svgEl("text", { x: x, y: H - M.bottom + 16, "text-anchor": "middle" });
        label.textContent = tickLabel(t);
        axes.appendChild(label);
      });
    niceTicks(yr[0], yr[1], grid.log_y).filter(function (t) { return t >= yr[0] * (1 - 1e-9) && t <= yr[1] * (1 + 1e-9); })
      .forEach(function (t) {
        var y = py(t);
        axes.appendChild(svgEl("line", { x1: M.left, x2: W - M.right, y1: y, y2: y, stroke: "#e5e5e5" }));
        var label = svgEl("text", { x: M.left - 6, y: y + 4, "text-anchor": "end" });
        label.textContent = tickLabel(t);
        axes.appendChild(label);
      });
    axes.appendChild(svgEl("rect", { x: M.left, y: M.top, width: W - M.left - M.right, height: H - M.top - M.bottom,
                                     fill: "none", stroke: "#888" }));
    var xl = svgEl("text", { x: (M.left + W - M.right) / 2, y: H - 8, "text-anchor": "middle", "font-size": 12 });
    xl.textContent = grid.x_label + (grid.log_x ? " (log)" : "");
    var yl = svgEl("text", { x: 14, y: (M.top + H - M.bottom) / 2, "text-anchor": "middle", "font-size": 12,
                             transform: "rotate(-90 14 " + (M.top + H - M.bottom) / 2 + ")" });
    yl.textContent = grid.y_label + (grid.log_y ? " (log)" : "");
    axes.appendChild(xl);
    axes.appendChild(yl);
    svg.appendChild(axes);
    lines.forEach(function (l) {
      if (!l.pts.length) return;
      var d = l.pts.map(function (p, k) { return (k ? "L" : "M") + px(p[0]).toFixed(1) + " " + py(p[1]).toFixed(1); });
      var path = svgEl("path", { d: d.join(" "), fill: "none", stroke: l.color, "stroke-width": 2,
                                 "data-series": l.name });
      if (l.dashed) path.setAttribute("stroke-dasharray", "6 4");
      svg.appendChild(path);
      if (l.pts.length <= 15) {
        l.pts.forEach(function (p) {
          svg.appendChild(svgEl("circle", { cx: px(p[0]).toFixed(1), cy: py(p[1]).toFixed(1), r: 2.5, fill: l.color }));
        });
      }
      var item = el("li");
      var swatch = el("span", { class: "dpcore-swatch" + (l.dashed ? " dpcore-dashed" : ""),
                                style: "border-color:" + l.color });
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(l.name));
      legend.appendChild(item);
    });
  }

  function render(box) {
    var source = box.querySelector("script[type='application/json']");
    if (!source) return;
    var grid = JSON.parse(source.textContent);
    var index = grid.axes.map(function (a) { return a.default; });
    box.appendChild(el("div", { class: "dpcore-static-title" }, grid.title));
    var controls = el("div", { class: "dpcore-static-controls" });
    var outputs = [];
    grid.axes.forEach(function (axis, i) {
      var row = el("div", { class: "dpcore-static-control", "data-axis": axis.name });
      var id = box.id + "-" + axis.name;
      row.appendChild(el("label", { for: id }, axis.label));
      var shown = el("output", { for: id, class: "dpcore-static-value" });
      if (typeof axis.values[0] === "string") {
        var group = el("span", { class: "dpcore-static-choice", id: id, role: "radiogroup", "aria-label": axis.label });
        axis.values.forEach(function (v, k) {
          var b = el("button", { type: "button", role: "radio", "data-index": k }, v);
          b.addEventListener("click", function () { index[i] = k; update(); });
          group.appendChild(b);
        });
        row.appendChild(group);
      } else {
        var input = el("input", { type: "range", id: id, min: 0, max: axis.values.length - 1, step: 1,
                                  value: axis.default, "aria-label": axis.label });
        input.addEventListener("input", function () { index[i] = parseInt(input.value, 10); update(); });
        row.appendChild(input);
        row.appendChild(shown);
      }
      outputs.push(shown);
      controls.appendChild(row);
    });
    box.appendChild(controls);
    var readout = el("table", { class: "dpcore-readout dpcore-static-readout" });
    box.appendChild(readout);
    var notes = el("ul", { class: "dpcore-notes" });
    box.appendChild(notes);
    var figure = el("div", { class: "dpcore-static-plot" });
    var title = el("div", { class: "dpcore-static-plot-title" });
    var svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": grid.y_label + " against " + grid.x_label });
    var legend = el("ul", { class: "dpcore-static-legend" });
    figure.appendChild(title);
    figure.appendChild(svg);
    figure.appendChild(legend);
    box.appendChild(figure);

    function update() {
      var at = 0;
      grid.axes.forEach(function (axis, i) {
        at = at * axis.values.length + index[i];
        var v = axis.values[index[i]];
        outputs[i].textContent = typeof v === "string" ? v : formatValue(v);
        box.querySelectorAll("[data-axis='" + axis.name + "'] button").forEach(function (b) {
          b.setAttribute("aria-checked", String(parseInt(b.getAttribute("data-index"), 10) === index[i]));
        });
      });
      var point = grid.points[at];
      box.setAttribute("data-point", String(at));
      while (readout.firstChild) readout.removeChild(readout.firstChild);
      while (notes.firstChild) notes.removeChild(notes.firstChild);
      if (point.error) {
        var row = el("tr");
        row.appendChild(el("td", { class: "dpcore-error" }, "refused at these values: " + point.error));
        readout.appendChild(row);
        title.textContent = "";
        drawPlot(svg, grid, {}, legend);
        return;
      }
      Object.keys(point.values).forEach(function (key) {
        var row = el("tr", { "data-key": key });
        row.appendChild(el("td", {}, grid.strings[point.labels[key]]));
        row.appendChild(el("td", { class: "dpcore-value", "data-key": key }, formatValue(point.values[key])));
        readout.appendChild(row);
      });
      point.notes.forEach(function (n) { notes.appendChild(el("li", {}, grid.strings[n])); });
      title.textContent = grid.strings[point.title];
      drawPlot(svg, grid, point, legend);
    }
    update();
    box.classList.add("dpcore-static-ready");
  }

  function start() {
    document.querySelectorAll(".dpcore-static-explorer").forEach(function (box) {
      try {
        render(box);
      } catch (err) {
        box.appendChild(el("p", { class: "dpcore-error" }, "this explorer could not be drawn: " + err));
        throw err;
      }
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
