"""Paper 002, Tables I-III and Fig. 2 rendered from the results of the ``002_table1``, ``002_table2`` and
``002_fig2`` experiments (:mod:`dpcore.papers.p002_modelmix.training`).

Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix", §5 (Tables I-III) and §3.2
(Fig. 2).  Nothing here trains: everything reads the frames of :func:`training.run_frame`,
:func:`training.median_frame` and :func:`training.curves_frame`.  A cell without all its seeds is listed as
missing (on the figures and in the claim notes), never filled in.  Accuracies are in percent, as printed.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from dpcore.papers.p002_modelmix.claims import (
    SECTION5_KEYS,
    TABLE1_EPSILONS,
    TABLE1_PRINTED,
    TABLE2_EPSILONS,
    TABLE2_PRINTED,
    TABLE3_ACCURACIES,
    TABLE3_PRINTED,
)
from dpcore.papers.p002_modelmix.training import (
    AUTHORS_BN_NOISE,
    DELTA,
    FIG2,
    FIG2_CURVES,
    TABLE1,
    TABLE2,
    epsilon_for_accuracy,
)
from dpcore.plots import new_axes, series_style, table_panel
from dpcore.training.private_norm import NormalizationRecord, normalization_epsilon
from dpcore.validation import check_choice

__all__ = [
    "reduced_note",
    "with_note",
    "table_comparison",
    "table_claim_values",
    "mm_more_accurate",
    "table3_comparison",
    "table3_claim_values",
    "section5_claim_values",
    "fig2_claim_values",
    "table_figure",
    "accuracy_vs_epsilon_figure",
    "table3_figure",
    "fig2_figure",
]

_NAMES = {"cifar10": "CIFAR-10", "fmnist": "FMNIST", "svhn": "SVHN"}
_METHOD = {"dpsgd": "DP-SGD (no MM)", "mm": "DP-SGD + MM"}
_MARGIN_PP = 1.0  # fig2.tau0.05_costs_little (claims.py states it)


def reduced_note(profile: str) -> str:
    """How the profile shrinks §5 (figure footers), e.g. "Table I: CIFAR-10 1000 train / 500 test, T = 16; …"."""
    check_choice("profile", profile, tuple(TABLE1))
    parts = []
    for name, grid in (("Table I", TABLE1[profile]), ("Table II", TABLE2[profile])):
        for key, (_, _, batch, steps, _) in grid.datasets.items():
            train = "all" if grid.train_size is None else str(grid.train_size)
            test = "all" if grid.test_size is None else str(grid.test_size)
            parts.append(f"{name}: {_NAMES[key]} {train} train / {test} test, batch {batch}, T = {steps}, "
                         f"{len(grid.seeds)} seed(s)")  # fmt: skip
    f2 = FIG2[profile]
    for key, (_, batch, steps) in f2.datasets.items():
        parts.append(f"Fig. 2: {_NAMES[key]} {f2.train_size or 'all'} train, batch {batch}, T = {steps}")
    return "; ".join(parts)


def with_note(title: str, note: str, *, width: int = 110) -> str:
    """``title`` with a reduced grid's statement (``Grid.note``) wrapped under it, so that a figure's title never
    widens its canvas; ``title`` unchanged when ``note`` is empty."""
    if not isinstance(title, str) or not isinstance(note, str):
        raise ValueError("title and note must be strings")
    if not isinstance(width, int) or width < 20:
        raise ValueError(f"width must be an int >= 20, got {width!r}")
    return title if not note else title + "\n" + textwrap.fill(note, width)


def _cell(medians: pd.DataFrame, key: str, method: str, eps: float) -> Mapping[str, Any] | None:
    hit = medians[(medians["key"] == key) & (medians["method"] == method) & (medians["target_eps"] == eps)]
    return None if hit.empty else hit.iloc[0].to_dict()


def table_comparison(medians: pd.DataFrame, table: str) -> pd.DataFrame:
    """Table I (``table="table1"``) or II beside the printed one: one row per printed cell.

    Columns: data set key, method, ε column, printed accuracy, our median / min / max final-iterate test
    accuracy over the finished seeds, seeds done and planned (-1: not in this profile's grid), the median ε
    the run's accountant reports, and the noise multiplier z.
    """
    check_choice("table", table, ("table1", "table2"))
    printed = TABLE1_PRINTED if table == "table1" else TABLE2_PRINTED
    rows = []
    for (key, method), values in printed.items():
        columns = TABLE1_EPSILONS if table == "table1" else TABLE2_EPSILONS[key]
        for eps, value in zip(columns, values, strict=True):
            c = _cell(medians, key, method, eps)
            row = {"key": key, "method": method, "eps": eps, "printed_pct": value}
            if c is None:
                row.update({"ours_pct": math.nan, "min_pct": math.nan, "max_pct": math.nan, "seeds_done": -1,
                            "seeds_planned": -1, "epsilon_reported": math.nan, "z": math.nan})  # fmt: skip
            else:
                row.update({"ours_pct": c["median_pct"], "min_pct": c["min_pct"], "max_pct": c["max_pct"],
                            "seeds_done": c["seeds_done"], "seeds_planned": c["seeds_planned"],
                            "epsilon_reported": c["epsilon"], "z": c["noise_multiplier"]})  # fmt: skip
            rows.append(row)
    return pd.DataFrame(rows)


def _eps_key(eps: float) -> str:
    return "eps_inf" if math.isinf(eps) else f"eps{eps:g}"


def table_claim_values(comparison: pd.DataFrame, table: str) -> dict[str, tuple[float | None, str]]:
    """``{claim key: (our median accuracy or None, note)}`` for every printed cell of Table I or II.

    A value is ours only when every planned seed of the cell has a result; otherwise ``None`` with the
    number of seeds missing (or "not in this profile's grid").
    """
    check_choice("table", table, ("table1", "table2"))
    out: dict[str, tuple[float | None, str]] = {}
    for _, r in comparison.iterrows():
        key = f"{table}.{r['key']}.{r['method']}.{_eps_key(r['eps'])}"
        done, planned = int(r["seeds_done"]), int(r["seeds_planned"])
        if planned < 0:
            out[key] = (None, "not in this profile's grid")
        elif done < planned:
            so_far = "" if done == 0 else f"; median so far {r['ours_pct']:.2f}"
            out[key] = (None, f"{planned - done} of {planned} seed(s) missing{so_far}")
        else:
            eps = "" if math.isinf(r["eps"]) else f"; eps reported {r['epsilon_reported']:.4g} at z = {r['z']:.4g}"
            out[key] = (float(r["ours_pct"]), f"median of {done} seed(s), range {r['min_pct']:.1f}-{r['max_pct']:.1f}"
                        + eps)  # fmt: skip
    return out


def mm_more_accurate(comparison: pd.DataFrame, claim_key: str) -> tuple[bool | None, str]:
    """Whether the ModelMix median beats the baseline's in every finite-ε column that is complete for both
    (``None`` when no column is); the note lists the columns compared and the margins."""
    margins = []
    finite = comparison[[not math.isinf(e) for e in comparison["eps"]]]
    for (key, eps), group in finite.groupby(["key", "eps"], sort=False):
        by = group.set_index("method")
        if not {"dpsgd", "mm"} <= set(by.index):
            continue
        complete = all(0 < int(by.loc[m, "seeds_done"]) == int(by.loc[m, "seeds_planned"]) for m in ("dpsgd", "mm"))
        if complete:
            margins.append((key, eps, float(by.loc["mm", "ours_pct"]) - float(by.loc["dpsgd", "ours_pct"])))
    if not margins:
        return None, f"{claim_key}: no column complete for both methods"
    note = "MM - baseline (pp): " + ", ".join(f"{_NAMES[k]} eps {e:g}: {d:+.1f}" for k, e, d in margins)
    return all(d > 0 for _, _, d in margins), note


def table3_comparison(medians: pd.DataFrame) -> pd.DataFrame:
    """Table III beside the printed one: per (data set, method, accuracy) the printed ε and ours
    (:func:`training.epsilon_for_accuracy` on the medians of every finite ε with all seeds done), the ε range
    trained and the largest median accuracy reached."""
    rows, curves = [], {}
    for (key, method), values in TABLE3_PRINTED.items():
        sel = medians[(medians["key"] == key) & (medians["method"] == method)] if len(medians) else medians
        done = sel[[math.isfinite(e) and 0 < d == p for e, d, p in
                    zip(sel.get("target_eps", []), sel.get("seeds_done", []), sel.get("seeds_planned", []),
                        strict=True)]] if len(sel) else sel  # fmt: skip
        points = list(zip(done["target_eps"], done["median_pct"], strict=True)) if len(done) else []
        curves[(key, method)] = points
        for acc, value in zip(TABLE3_ACCURACIES[key], values, strict=True):
            rows.append({
                "key": key, "method": method, "accuracy_pct": acc, "printed_eps": value,
                "ours_eps": epsilon_for_accuracy(points, acc) if points else math.nan,
                "points": len(points), "planned_points": int(sum(math.isfinite(e) for e in sel["target_eps"]))
                if len(sel) else -1,
                "eps_range": f"{min(p[0] for p in points):g}-{max(p[0] for p in points):g}" if points else "",
                "max_median_pct": max(p[1] for p in points) if points else math.nan,
            })  # fmt: skip
    frame = pd.DataFrame(rows)
    frame.attrs["curves"] = curves  # (key, method) -> the (ε, median %) points read (for section5_claim_values)
    return frame


def table3_claim_values(comparison: pd.DataFrame) -> dict[str, tuple[float | None, str]]:
    """``{claim key: (our ε or None, note)}`` for the 20 numbers of Table III (``None`` when the accuracy is not
    reached by the trained ε, when a planned point is missing, or outside this profile's grid), and for the §5.1-5.3
    and abstract numbers that are no table cell (:func:`section5_claim_values`: they are read off the same curves,
    and this is the call through which the training notebook reports every ``TRAINING_CLAIMS`` key)."""
    out: dict[str, tuple[float | None, str]] = section5_claim_values(comparison)
    for _, r in comparison.iterrows():
        key = f"table3.{r['key']}.{r['method']}.acc{r['accuracy_pct']:g}"
        if r["planned_points"] < 0:
            out[key] = (None, "not in this profile's grid")
        elif r["points"] < r["planned_points"]:
            out[key] = (None, f"{r['planned_points'] - r['points']} of {r['planned_points']} eps point(s) missing")
        elif math.isnan(r["ours_eps"]):
            out[key] = (None, f"not reached: best median {r['max_median_pct']:.1f} % over eps {r['eps_range']}")
        else:
            out[key] = (float(r["ours_eps"]), f"interpolated over {r['points']} eps point(s) ({r['eps_range']})")
    return out


def fig2_claim_values(curves: pd.DataFrame, runs: pd.DataFrame) -> dict[str, tuple[bool | None, str]]:
    """The three Fig. 2 statements, each checked on every data set whose six curves are finished."""
    keys = list(dict.fromkeys(runs["key"]))
    checks: dict[str, list[bool]] = {"tau0.05_costs_little": [], "larger_tau_hurts_late": [],
                                     "mm_beats_dpsgd_same_noise": []}  # fmt: skip
    notes: list[str] = []
    missing: list[str] = []
    for key in keys:
        sel = runs[runs["key"] == key]
        if (sel["status"] != "done").any():
            missing.append(_NAMES.get(key, key))
            continue
        last = curves[curves["key"] == key].sort_values("step").groupby("curve").last()
        acc = 100 * last["test_accuracy"]
        loss = last["train_loss"]
        checks["tau0.05_costs_little"].append(bool(acc["sgd_mm_tau0.05"] >= acc["sgd"] - _MARGIN_PP))
        checks["larger_tau_hurts_late"].append(bool(loss["sgd_mm_tau0.1"] > loss["sgd_mm_tau0.05"]))
        best_reg = max(acc["dpsgd_lr0.1"], acc["dpsgd_lr0.2"])
        checks["mm_beats_dpsgd_same_noise"].append(bool(acc["dpsgd_mm_lr0.2_tau0.05"] >= best_reg))
        notes.append(
            f"{_NAMES.get(key, key)}: test acc SGD {acc['sgd']:.1f}, MM 0.05 {acc['sgd_mm_tau0.05']:.1f}, MM 0.1 "
            f"{acc['sgd_mm_tau0.1']:.1f}; train loss MM 0.1 {loss['sgd_mm_tau0.1']:.3f} vs 0.05 "
            f"{loss['sgd_mm_tau0.05']:.3f}; private: DP-SGD 0.1 {acc['dpsgd_lr0.1']:.1f}, 0.2 {acc['dpsgd_lr0.2']:.1f},"
            f" MM 0.2 {acc['dpsgd_mm_lr0.2_tau0.05']:.1f}"
        )  # fmt: skip
    out: dict[str, tuple[bool | None, str]] = {}
    for name, results in checks.items():
        note = "; ".join(notes) + (f"; missing curves: {', '.join(missing)}" if missing else "")
        out[f"fig2.{name}"] = (None if missing or not results else all(results), note)
    return out


_NOT_RUN = ""  # the claim's own note says why it is not-run


def _eps_ratio(comparison: pd.DataFrame) -> tuple[float | None, str]:
    """Median over Table III's accuracies (both data sets) of our ε(regular) / ε(ModelMix), where both are reached."""
    ratios = []
    for (key, acc), group in comparison.groupby(["key", "accuracy_pct"], sort=False):
        by = group.set_index("method")["ours_eps"]
        if {"dpsgd", "mm"} <= set(by.index) and not (math.isnan(by["dpsgd"]) or math.isnan(by["mm"])):
            ratios.append((key, acc, float(by["dpsgd"]) / float(by["mm"])))
    if not ratios:
        return None, "no Table III accuracy reached by both methods on our curves"
    values = sorted(r for _, _, r in ratios)
    mid = len(values) // 2
    median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    return median, "ratios: " + ", ".join(f"{_NAMES[k]} {a:g} %: {r:.1f}" for k, a, r in ratios)


def section5_claim_values(comparison: pd.DataFrame) -> dict[str, tuple[float | None, str]]:
    """``{claim key: (ours or None, note)}`` for the §5.1-5.3 and abstract numbers (``claims.SECTION5_KEYS``).

    §5.1's normalisation ε: the library's accountant of two Gaussian releases with the authors' noise multiplier
    (:func:`dpcore.training.private_norm.normalization_epsilon`); §5.2's "20x" and the abstract's 145.8: read off our
    Table III curves (``comparison`` from :func:`table3_comparison`); [19]'s ε = 3 numbers, the SimCLR transfer and
    GEP numbers: ``None`` (not-run, the reason in each claim's note).
    """
    out: dict[str, tuple[float | None, str]] = dict.fromkeys(SECTION5_KEYS, (None, _NOT_RUN))
    norm = NormalizationRecord.planned(AUTHORS_BN_NOISE, 50_000)
    out["sec5.1.normalization_eps"] = (
        normalization_epsilon(norm, DELTA),
        f"exact (GDP) value {normalization_epsilon(norm, DELTA, method='gdp'):.4f}",
    )
    out["sec5.2.eps_ratio"] = _eps_ratio(comparison)
    points = comparison.attrs.get("curves", {}).get(("cifar10", "dpsgd"), [])
    if points:
        eps = epsilon_for_accuracy(points, 70.4)
        span = f"{min(p[0] for p in points):g}-{max(p[0] for p in points):g}"
        out["abstract.cifar10.dpsgd.eps_for_70.4"] = (
            None if math.isnan(eps) else eps,
            f"not reached over eps {span}" if math.isnan(eps) else f"interpolated over eps {span}",
        )
    else:
        out["abstract.cifar10.dpsgd.eps_for_70.4"] = (None, "no complete regular DP-SGD CIFAR-10 point")
    return out


# ---------------------------------------------------------------------------------------------- figures
def _pct(value: float, done: int, planned: int) -> str:
    if planned < 0:
        return "not in grid"
    text = "—" if math.isnan(value) else f"{value:.1f}"
    return text + (f" ({planned - done} seed(s) missing)" if done < planned else "")


def _check_committed(committed: pd.DataFrame | None) -> None:
    if committed is not None and (not isinstance(committed, pd.DataFrame)
                                  or not {"key", "method", "eps", "ours_pct", "seeds_done"} <= set(committed.columns)):
        raise ValueError("committed must be table_comparison(...) of the paper profile, or None")


def _eps_cell(value: float) -> str:
    return "—" if math.isnan(value) else ("∞" if math.isinf(value) else f"{value:.3g}")


def _authors_cells(authors: pd.DataFrame | None, key: str, method: str, eps: float) -> list[str]:
    """The two authors'-configuration cells of a Table I row (:func:`ablation_report.authors_reading_frame`)."""
    hit = None if authors is None or key != "cifar10" else authors[(authors["method"] == method)
                                                                   & (authors["eps"] == eps)]  # fmt: skip
    if hit is None or hit.empty:
        return ["—", "—"]
    h = hit.iloc[0]
    if h["status"] != "done":
        return ["not run", "—"]
    total = float(h["epsilon_total"])
    training = float(h["epsilon_training"])
    eps_text = _eps_cell(total) if math.isinf(total) else f"{training:.3g} + norm. = {total:.3g}"
    return [f"{h['final_pct']:.1f} / {h['authors_pct']:.1f}", eps_text]


def table_figure(comparison: pd.DataFrame, table: str, *, title: str = "", committed: pd.DataFrame | None = None,
                 authors: pd.DataFrame | None = None) -> Figure:  # fmt: skip
    """Table I or II as printed beside ours (median, range, seeds, reported ε and z), one block per data set.

    ``committed`` (a reduced profile): the paper profile's :func:`table_comparison`; a column gives its
    median at the same (method, ε) with the seeds finished, labelled "full scale, committed" (issue 25).
    ``authors`` (:func:`ablation_report.authors_reading_frame`, Table I): two columns for the CIFAR-10 rows, the
    authors' whole configuration (full scale, committed, seed 0: final iterate / authors' readout) and its total ε
    with the private normalisation it releases (training + normalisation; issue 41); our own setting releases no
    normalisation, so its reported ε is its total."""
    check_choice("table", table, ("table1", "table2"))
    if not isinstance(comparison, pd.DataFrame) or comparison.empty:
        raise ValueError("comparison must be a non-empty frame from table_comparison")
    _check_committed(committed)
    if authors is not None and (not isinstance(authors, pd.DataFrame)
                                or not {"method", "eps", "status", "final_pct", "authors_pct", "epsilon_training",
                                        "epsilon_total"} <= set(authors.columns)):  # fmt: skip
        raise ValueError("authors must be ablation_report.authors_reading_frame(...), or None")
    keys = list(dict.fromkeys(comparison["key"]))
    fig, axes = new_axes(1, len(keys), width=13.0 if authors is None else 16.5, height=3.0 * len(keys) + 0.4)
    header = ["method", "eps", "printed (%)", "ours median (%)", "ours range (%)",
              "eps reported" if authors is None else "ours: eps (= total)", "z"]  # fmt: skip
    widths = [1.2, 0.6, 0.8, 1.2, 1.0, 1.1, 0.7]
    if committed is not None:
        header.append("full scale, committed (%)")
        widths.append(1.4)
    if authors is not None:
        header += ["authors' config.: final / readout (%)", "its eps: training + norm. = total"]
        widths += [1.7, 1.7]
    for ax, key in zip(axes[:, 0], keys, strict=True):
        ax.axis("off")
        body = []
        for _, r in comparison[comparison["key"] == key].iterrows():
            rng = "—" if math.isnan(r["min_pct"]) else f"{r['min_pct']:.1f}–{r['max_pct']:.1f}"
            eps = "∞" if math.isinf(r["eps"]) else f"{r['eps']:g}"
            row = [_METHOD[r["method"]], eps, f"{r['printed_pct']:g}",
                   _pct(r["ours_pct"], int(r["seeds_done"]), int(r["seeds_planned"])), rng,
                   _eps_cell(r["epsilon_reported"]), "—" if math.isnan(r["z"]) else f"{r['z']:.4g}"]  # fmt: skip
            if committed is not None:
                hit = committed[(committed["key"] == key) & (committed["method"] == r["method"])
                                & (committed["eps"] == r["eps"])]  # fmt: skip
                full = hit.iloc[0] if len(hit) else None
                row.append("not in grid" if full is None else
                           _pct(full["ours_pct"], int(full["seeds_done"]), int(full["seeds_planned"])))
            if authors is not None:
                row += _authors_cells(authors, key, r["method"], float(r["eps"]))
            body.append(row)
        where = f"{_NAMES.get(key, key)} (δ = 1e-5; final-iterate test accuracy, median over seeds)"
        if authors is not None and key == "cifar10":
            where += ("; authors' config.: full scale, committed, one seed; its private normalisation priced by RDP "
                      "composition; ours releases none")
        table_panel(ax, body, header, where, col_widths=widths)
    if title:
        fig.suptitle(title)
    return fig


def accuracy_vs_epsilon_figure(comparison: pd.DataFrame, *, title: str = "",
                               committed: pd.DataFrame | None = None) -> tuple[Figure, pd.DataFrame]:  # fmt: skip
    """Accuracy against ε per data set: printed rows (dashed) and ours (median with the seed range as error bars);
    ε = ∞ drawn at the right edge.  ``committed`` (a reduced profile): the paper profile's
    :func:`table_comparison`, whose finished medians are drawn as hollow markers labelled "full scale, committed"
    (issue 25).  Returns the figure and the plotted data (``scale`` says which rows are the committed ones)."""
    _check_committed(committed)
    keys = list(dict.fromkeys(comparison["key"]))
    fig, axes = new_axes(len(keys), 1, width=5.2 * len(keys), height=4.0)
    full_rows = []
    for ax, key in zip(axes[0], keys, strict=True):
        sub = comparison[comparison["key"] == key]
        full = committed[(committed["key"] == key) & (committed["seeds_done"] > 0)] if committed is not None else None
        eps_all = set(sub["eps"]) | (set(full["eps"]) if full is not None else set())
        finite = sorted(e for e in eps_all if math.isfinite(e))
        inf_x = finite[-1] * 1.25 if finite else 1.0
        for k, method in enumerate(("dpsgd", "mm")):
            rows = sub[sub["method"] == method].copy()
            rows["x"] = [inf_x if math.isinf(e) else e for e in rows["eps"]]
            style = series_style(2 * k, n=4)
            style.pop("markevery", None)
            ax.plot(rows["x"], rows["printed_pct"], label=f"{_METHOD[method]}: printed", **{**style, "linestyle": "--"})
            done = rows[rows["seeds_done"] > 0]
            if len(done):
                err = [done["ours_pct"] - done["min_pct"], done["max_pct"] - done["ours_pct"]]
                ax.errorbar(done["x"], done["ours_pct"], yerr=err, label=f"{_METHOD[method]}: ours (median, range)",
                            capsize=3, **{**series_style(2 * k + 1, n=4), "markevery": None})  # fmt: skip
            if full is not None and len(full[full["method"] == method]):
                frows = full[full["method"] == method].copy()
                frows["x"] = [inf_x if math.isinf(e) else e for e in frows["eps"]]
                frows = frows.sort_values("x")
                ax.plot(frows["x"], frows["ours_pct"], linestyle=":", marker="o", markerfacecolor="none",
                        color=series_style(2 * k + 1, n=4)["color"],
                        label=f"{_METHOD[method]}: full scale, committed (median)")  # fmt: skip
                full_rows.append(frows.drop(columns="x").assign(scale="full, committed"))
        ax.set_xticks([*finite, inf_x], [*(f"{e:g}" for e in finite), "∞"])
        ax.set(title=_NAMES.get(key, key), xlabel="ε (δ = 1e-5)", ylabel="test accuracy (%)")
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    data = comparison.copy()
    if full_rows:
        data = pd.concat([data.assign(scale="this profile"), *full_rows], ignore_index=True)
    return fig, data


def table3_figure(medians: pd.DataFrame, comparison: pd.DataFrame, *, title: str = "") -> Figure:
    """Table III's reading: our median accuracy against ε per method (every trained ε, log axis) with the printed
    (ε, accuracy) points of Table III and our interpolated ε for each printed accuracy."""
    keys = list(dict.fromkeys(comparison["key"]))
    fig, axes = new_axes(len(keys), 1, width=5.5 * len(keys), height=4.0)
    for ax, key in zip(axes[0], keys, strict=True):
        for k, method in enumerate(("dpsgd", "mm")):
            sel = medians[(medians["key"] == key) & (medians["method"] == method)] if len(medians) else medians
            pts = sel[[math.isfinite(e) and d > 0 for e, d in zip(sel["target_eps"], sel["seeds_done"],
                                                                   strict=True)]] if len(sel) else sel  # fmt: skip
            style = series_style(2 * k, n=4)
            style.pop("markevery", None)
            if len(pts):
                pts = pts.sort_values("target_eps")
                ax.plot(pts["target_eps"], pts["median_pct"], label=f"{_METHOD[method]}: ours (median)", **style)
            printed = comparison[(comparison["key"] == key) & (comparison["method"] == method)]
            ax.scatter(printed["printed_eps"], printed["accuracy_pct"], marker="x", s=40, color=style["color"],
                       label=f"{_METHOD[method]}: Table III printed")  # fmt: skip
            ours = printed[printed["ours_eps"].notna()]
            if len(ours):
                ax.scatter(ours["ours_eps"], ours["accuracy_pct"], marker="o", s=30, facecolors="none",
                           edgecolors=style["color"], label=f"{_METHOD[method]}: ours interpolated")  # fmt: skip
        ax.set_xscale("log")
        ax.set(title=_NAMES.get(key, key), xlabel="ε (δ = 1e-5, log axis)", ylabel="test accuracy (%)")
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    return fig


def fig2_figure(curves: pd.DataFrame, runs: pd.DataFrame, *, title: str = "") -> tuple[Figure, pd.DataFrame]:
    """Fig. 2 redrawn: per data set, non-private (a, b) and same-noise private (c, d) curves; test accuracy and
    training loss against the iteration.  Missing curves are named on their panel."""
    keys = list(dict.fromkeys(runs["key"]))
    fig, axes = new_axes(4, len(keys), width=17.0, height=3.4 * len(keys) + 0.3)
    labels = {"sgd": "SGD", "sgd_mm_tau0.1": "SGD + MM, τ = 0.1η", "sgd_mm_tau0.05": "SGD + MM, τ = 0.05η",
              "dpsgd_lr0.1": "DP-SGD, η = 0.1", "dpsgd_lr0.2": "DP-SGD, η = 0.2",
              "dpsgd_mm_lr0.2_tau0.05": "DP-SGD + MM, η = 0.2, τ = 0.05η"}  # fmt: skip
    for i, key in enumerate(keys):
        for j, (private, metric, ylabel) in enumerate(((False, "test_accuracy", "test accuracy (%)"),
                                                       (False, "train_loss", "training loss"),
                                                       (True, "test_accuracy", "test accuracy (%)"),
                                                       (True, "train_loss", "training loss"))):  # fmt: skip
            ax = axes[i, j]
            names = [c for c, (p, _, _) in FIG2_CURVES.items() if p == private]
            lost = []
            for k, curve in enumerate(names):
                data = curves[(curves["key"] == key) & (curves["curve"] == curve)].sort_values("step")
                if data.empty:
                    lost.append(labels[curve])
                    continue
                y = 100 * data[metric] if metric == "test_accuracy" else data[metric]
                ax.plot(data["step"], y, label=labels[curve], **series_style(k, n=3))
            if lost:
                ax.text(0.02, 0.02, "missing: " + ", ".join(lost), transform=ax.transAxes, fontsize=7,
                        color="firebrick", va="bottom")  # fmt: skip
            panel = "private, same noise (ε = 8 for DP-SGD)" if private else "non-private"
            ax.set(title=f"{_NAMES.get(key, key)}: {panel}", xlabel="iteration", ylabel=ylabel)
            if ax.get_lines():
                ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    return fig, curves.copy()
