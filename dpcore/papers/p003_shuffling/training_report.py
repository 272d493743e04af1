"""Paper 003, Table 3 and Figure 1 (App. H) rendered from the results of the ``003_table3`` experiment.

van Dijk, P. H. Nguyen, T. N. Nguyen, L. M. Nguyen, "Generalizing DP-SGD with Shuffling and Batch
Clipping", App. H, Table 3 ("the best results among the different setups of Figure 1") and Figure 1
(test accuracy of IC/BC/MC × SS/SH for |S_b| ∈ {64, …, 1024}).  Everything here reads the frames of
:func:`dpcore.papers.p003_shuffling.training.cell_frame` and
:func:`dpcore.experiments.history_frame`; nothing trains.  A cell without a result is listed as
missing (on the figures and in the claim notes), never filled in.

Accuracies are compared in percent, as Table 3 prints them.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from dpcore.papers.p003_shuffling.claims import FIG1_MIDDLE_BATCH_SIZES, TABLE3_PRINTED, TRAINING_CLAIMS, table3_key
from dpcore.papers.p003_shuffling.training import SIGMA, GridSettings
from dpcore.plots import VERDICT_MARKS, mark_verdict_cells, new_axes, not_run, series_style, table_panel, verdict_label

__all__ = [
    "APP_H_NONDP",
    "CELL_COLUMNS",
    "fig1_caption_batch_sizes",
    "printed_pair_values",
    "reduced_note",
    "data_provenance",
    "missing_runs",
    "table3_comparison",
    "committed_columns",
    "table3_claim_values",
    "qualitative_values",
    "table3_figure",
    "table3_verdicts",
    "authors_mode_rows",
    "fig1_verdict_keys",
    "fig1_epoch_curves",
    "fig1_best_vs_batch",
    "READINGS",
    "why_differs_frame",
    "why_differs_figure",
    "mode_claim_values",
    "smallest_batch_values",
    "batch_size_values",
]

CELL_COLUMNS = ("run", "status", "dataset", "sampling_label", "family", "batch_size", "clip_norm", "best_accuracy",
                "final_accuracy", "epsilon_paper", "epsilon_standard")  # fmt: skip
_NAMES = {"mnist": "MNIST", "cifar10": "CIFAR-10"}
_FAMILIES = ("IC", "BC", "MC")
_MARGIN_PP = 1.0  # the qualitative claims' margin, percentage points (claims.py states it)


def reduced_note(settings: GridSettings) -> str:
    """How a reduced profile shrinks App. H (figure footers), e.g. "MNIST 4000 train / 1000 test, 3 epochs; …"."""
    if not isinstance(settings, GridSettings):
        raise ValueError(f"settings must be a training.GridSettings, got {type(settings).__name__}")
    parts = []
    for d in settings.datasets:
        train = "all" if settings.train_size[d] is None else f"{settings.train_size[d]}"
        test = "all" if settings.test_size[d] is None else f"{settings.test_size[d]}"
        parts.append(f"{_NAMES.get(d, d)} {train} train / {test} test, {settings.epochs[d]} epochs")
    batches = ", ".join(map(str, settings.batch_sizes))
    tuning = f"C = {settings.c_grid[0]:g} fixed" if len(settings.c_grid) == 1 else "C tuned"
    return "; ".join(parts) + f"; |S_b| ∈ {{{batches}}}; {tuning}"


def data_provenance(settings: GridSettings, describe: Callable[[str, str], str]) -> str:
    """The data of every data set of the grid: its training split's provenance, "+ test" (the test split of the
    same source; ``describe`` is :func:`dpcore.data.provenance`)."""
    if not isinstance(settings, GridSettings):
        raise ValueError(f"settings must be a training.GridSettings, got {type(settings).__name__}")
    if not callable(describe):
        raise ValueError("describe must be callable (name, split) -> str, e.g. dpcore.data.provenance")
    return "; ".join(f"{describe(d, 'train')} + test" for d in settings.datasets)


def _check_cells(cells: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(cells, pd.DataFrame):
        raise ValueError(f"cells must be a DataFrame from training.cell_frame, got {type(cells).__name__}")
    lacking = [c for c in CELL_COLUMNS if c not in cells.columns]
    if lacking:
        raise ValueError(f"cells lacks column(s) {', '.join(lacking)} (use training.cell_frame)")
    return cells


def missing_runs(cells: pd.DataFrame) -> list[str]:
    """Names of the Table 3 / Fig. 1 cells that have no result yet (status other than ``done``)."""
    cells = _check_cells(cells)
    return sorted(cells.loc[cells["status"] != "done", "run"])


def _eps(value: Any) -> str:
    v = float(value) if value is not None else math.nan
    if math.isnan(v):
        return "n/a"
    return "∞" if math.isinf(v) else f"{v:.3g}"


def _pct(fraction: float) -> float:
    return round(100 * fraction, 2) if math.isfinite(fraction) else fraction


def table3_comparison(table: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Table 3 regenerated next to the printed one: one row per (data set, sampling, clipping) of the paper.

    ``table`` is :func:`training.table3_frame` of ``cells``.  Accuracies in percent: ``printed_dp`` /
    ``printed_nondp`` (Table 3), ``best_epoch_pct`` / ``final_epoch_pct`` of our best cell (selected on
    its best epoch), ``nondp_best_pct`` (best non-private cell), its ``batch_size`` and ``clip_norm``,
    ε(δ = 1e-5) under A_1 (``epsilon_A1``) and A_0 (``epsilon_A0``), and the cells still missing
    (``missing_dp``: the family's; ``missing_nondp``: the sampling's non-private ones).
    """
    cells = _check_cells(cells)
    if not isinstance(table, pd.DataFrame) or not {"dataset", "sampling", "clipping"} <= set(table.columns):
        raise ValueError("table must be training.table3_frame(cells)")
    rows = []
    for (dataset, sampling, clipping), (dp, nondp) in TABLE3_PRINTED.items():
        hit = table[(table["dataset"] == dataset) & (table["sampling"] == sampling) & (table["clipping"] == clipping)]
        np_cells = cells[(cells["dataset"] == dataset) & (cells["sampling_label"] == sampling)
                         & (cells["family"] == "NP")]  # fmt: skip
        row: dict[str, Any] = {"dataset": dataset, "sampling": sampling, "clipping": clipping, "printed_dp": dp,
                               "printed_nondp": nondp}  # fmt: skip
        in_grid = ((cells["dataset"] == dataset) & (cells["sampling_label"] == sampling)
                   & (cells["family"] == clipping)).any()  # fmt: skip
        planned = not hit.empty and bool(in_grid)  # e.g. MC at a grid without m >= 2 groups: not in the grid
        rec = hit.iloc[0] if planned else pd.Series(dtype=object)

        def get(key: str, rec: pd.Series = rec) -> float:
            value = rec.get(key)
            return math.nan if value is None or pd.isna(value) else float(value)

        row.update({  # percent at 2 decimals: a 2,000-image test set resolves 0.05 pp (and 10,000 images 0.01)
            "best_epoch_pct": _pct(get("best_accuracy")), "final_epoch_pct": _pct(get("final_accuracy")),
            "nondp_best_pct": _pct(get("nonprivate_best_accuracy")), "batch_size": get("batch_size"),
            "clip_norm": get("clip_norm"), "epsilon_A1": get("epsilon_paper"), "epsilon_A0": get("epsilon_standard"),
            "missing_dp": int(rec["missing"]) if planned else -1,
            "missing_nondp": int((np_cells["status"] != "done").sum()) if len(np_cells) else -1,
        })  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def committed_columns(comparison: pd.DataFrame, committed: pd.DataFrame) -> pd.DataFrame:
    """``comparison`` (a reduced profile's :func:`table3_comparison`) with the committed full-scale results beside
    it (issue 25: the quick figures also show the real result).  ``committed`` is :func:`table3_comparison` of the
    paper profile's cells (``results/paper/``).  Adds ``full_best_pct`` / ``full_final_pct`` (the best finished
    full-scale cell so far, NaN without one), ``full_nondp_pct`` (the best finished non-private cell),
    ``full_batch_size``, ``full_clip_norm`` and ``full_missing`` (the
    family's full-scale cells without a result; -1 outside the paper's grid).  Table 3's values stay ours."""
    for name, frame in (("comparison", comparison), ("committed", committed)):
        if not isinstance(frame, pd.DataFrame) or not {"dataset", "sampling", "clipping"} <= set(frame.columns):
            raise ValueError(f"{name} must be a frame from table3_comparison")
    keys = ["dataset", "sampling", "clipping"]
    renames = {"best_epoch_pct": "full_best_pct", "final_epoch_pct": "full_final_pct",
               "nondp_best_pct": "full_nondp_pct", "batch_size": "full_batch_size", "clip_norm": "full_clip_norm",
               "missing_dp": "full_missing"}  # fmt: skip
    full = committed[[*keys, *renames]].rename(columns=renames)
    out = comparison.drop(columns=[c for c in full.columns if c not in keys and c in comparison.columns])
    out = out.merge(full, on=keys, how="left")
    out["full_missing"] = out["full_missing"].fillna(-1).astype(int)
    return out


def _full_text(row: Mapping[str, Any]) -> tuple[str, str]:
    """(best / final, "|S_b|, C (cells not run)") of a row of :func:`committed_columns`."""
    if int(row["full_missing"]) < 0:
        return "not in grid", "—"
    if math.isnan(float(row["full_best_pct"])):
        return "not run", f"({int(row['full_missing'])} not run)"
    setup = f"{float(row['full_batch_size']):g}, {float(row['full_clip_norm']):g}"
    lost = f" ({int(row['full_missing'])} |S_b| not run)" if int(row["full_missing"]) else ""
    nondp = float(row["full_nondp_pct"])
    np_text = "" if math.isnan(nondp) else f" (NP {nondp:.2f})"
    return f"{float(row['full_best_pct']):.2f} / {float(row['full_final_pct']):.2f}{np_text}", setup + lost


def _complete(row: Mapping[str, Any], which: str) -> bool:
    return int(row[f"missing_{which}"]) == 0


def table3_claim_values(comparison: pd.DataFrame) -> dict[str, tuple[float | None, str]]:
    """``{claim key: (our value in percent or None, note)}`` for the 16 numbers of Table 3 (12 DP entries and
    one non-private baseline per (data set, sampling), printed once per clipping row).

    A number is ours only when every cell it is the best of has a result (all |S_b| of the family, or
    all non-private cells of the sampling); otherwise it is ``None`` (not-run) and the note says how
    many cells are missing and the best so far.  A data set or family outside the profile's grid is
    ``None`` with the note "not in this profile's grid".
    """
    out: dict[str, tuple[float | None, str]] = {}
    for _, row in comparison.iterrows():
        for which, column in (("dp", "best_epoch_pct"), ("nondp", "nondp_best_pct")):
            key = table3_key(row["dataset"], row["sampling"], row["clipping"] if which == "dp" else None)
            if out.get(key, (None,))[0] is not None:
                continue  # the baseline of this sampling, already read off another clipping row
            value = float(row[column])
            missing = int(row[f"missing_{which}"])
            if missing < 0:
                out[key] = (None, "not in this profile's grid")
            elif missing > 0:
                so_far = "none finished" if math.isnan(value) else f"best so far {value:.2f}"
                out[key] = (None, f"{missing} cell(s) missing; {so_far}")
            else:
                note = ""
                if which == "dp":
                    note = (f"|S_b| = {row['batch_size']:g}, C = {row['clip_norm']:g}; final epoch "
                            f"{row['final_epoch_pct']:.2f}; ε(1e-5) A_1 {_eps(row['epsilon_A1'])}, "
                            f"A_0 {_eps(row['epsilon_A0'])}")  # fmt: skip
                out[key] = (value, note)
    return out


def qualitative_values(comparison: pd.DataFrame) -> dict[str, tuple[bool | None, str]]:
    """The three qualitative claims of App. H / Table 3, each decided per data set over its two sampling columns.

    ``table3.<data>.bc_comparable_to_ic``: best BC >= best IC − 1 pp; ``table3.<data>.mc_below_ic_and_bc``: best MC
    < min(best IC, best BC); ``table3.<data>.dp_close_to_nonprivate``: max(best IC, best BC) >= non-private − 1 pp,
    in both the SS and the SH column of the data set (issue 44: MNIST is decided on the CPU, CIFAR-10 needs a GPU).
    ``None`` unless every needed cell of both columns has a result; the note then names the columns outside the
    profile's grid, those with missing cells, and in how many complete columns the statement holds.
    """
    needs = {"bc_comparable_to_ic": ("IC", "BC"), "mc_below_ic_and_bc": _FAMILIES,
             "dp_close_to_nonprivate": ("IC", "BC")}
    out: dict[str, tuple[bool | None, str]] = {}
    for dataset, of_data in comparison.groupby("dataset", sort=False):
        for name, families in needs.items():
            results: list[bool] = []
            outside: list[str] = []
            incomplete: list[str] = []
            for sampling, group in of_data.groupby("sampling", sort=False):
                by = group.set_index("clipping")
                missing = [int(by.loc[f, "missing_dp"]) for f in families]
                if name == "dp_close_to_nonprivate":
                    missing.append(int(by.loc["IC", "missing_nondp"]))
                column = f"{dataset}/{sampling}"
                if min(missing) < 0:
                    outside.append(column)
                    continue
                if max(missing) > 0:
                    incomplete.append(column)
                    continue
                ic, bc, mc = (float(by.loc[f, "best_epoch_pct"]) for f in _FAMILIES)
                nondp = float(by.loc["IC", "nondp_best_pct"])
                results.append({"bc_comparable_to_ic": bc >= ic - _MARGIN_PP, "mc_below_ic_and_bc": mc < min(ic, bc),
                                "dp_close_to_nonprivate": max(ic, bc) >= nondp - _MARGIN_PP}[name])  # fmt: skip
            key = f"table3.{dataset}.{name}"
            if not (outside or incomplete):
                out[key] = (bool(all(results)), f"holds in {sum(results)} of {len(results)} column(s)")
                continue
            parts = [f"not in this profile's grid: {', '.join(outside)}"] if outside else []
            parts += [f"columns with missing cells: {', '.join(incomplete)}"] if incomplete else []
            done = f"; holds in {sum(results)} of {len(results)} complete column(s)" if results else ""
            out[key] = (None, "; ".join(parts) + done)
    return out


def table3_verdicts(comparison: pd.DataFrame, verdicts: Mapping[str, str]) -> list[tuple[str, str]]:
    """Per row of :func:`table3_comparison` (paper 003, Table 3): the verdicts of its DP number and of its non-private
    baseline, read off the claim rows the notebook recorded (``verdicts`` is :func:`dpcore.claims.verdicts` of them);
    a number without a row is "not run"."""
    if not isinstance(comparison, pd.DataFrame) or not {"dataset", "sampling", "clipping"} <= set(comparison.columns):
        raise ValueError("comparison must be a frame from table3_comparison")
    if not isinstance(verdicts, Mapping):
        raise ValueError("verdicts must map claim keys to verdict words (dpcore.claims.verdicts)")
    return [(verdicts.get(table3_key(r["dataset"], r["sampling"], r["clipping"]), "not run"),
             verdicts.get(table3_key(r["dataset"], r["sampling"], None), "not run"))
            for _, r in comparison.iterrows()]  # fmt: skip


#: (reading of :data:`READINGS`, clipping family) -> the claim (format ``sampling``) deciding that authors'-mode row
_MODE_CLAIMS = {("authors_93f6075", "IC"): "table3.mnist.{sampling}.b1024.ic_authors_93f6075_reaches_printed",
                ("bc_divided_by_batch", "BC"): "fig1.mnist.{sampling}.b1024.bc_divided_by_batch_close_to_nonprivate"}


def authors_mode_rows(why: pd.DataFrame, verdicts: Mapping[str, str]) -> pd.DataFrame:
    """The authors'-mode rows beside Table 3 (paper 003, MNIST, |S_b| = 1024; issue 41): one row per (reading other
    than Algorithm 1, cell) of :func:`why_differs_frame` that ran or is planned, with its best-epoch accuracy, the ε
    (δ = 1e-5, A_1) of the noise that ran beside the paper's claimed ε, and the verdict of the claim deciding it
    (``verdicts``: :func:`dpcore.claims.verdicts`; "not run" for a claim without a row, "" where no claim covers it:
    the row is evidence only)."""
    need = {"reading", "cell", "status", "printed_pct", "best_pct", "final_pct", "clip_norm", "sigma_effective",
            "epsilon_A1", "epsilon_claimed"}  # fmt: skip
    if not isinstance(why, pd.DataFrame) or not need <= set(why.columns):
        raise ValueError(f"why must be a frame from why_differs_frame with columns {sorted(need)}")
    if not isinstance(verdicts, Mapping):
        raise ValueError("verdicts must map claim keys to verdict words (dpcore.claims.verdicts)")
    rows = why[(why["reading"] != "algorithm1") & why["status"].isin(["done", "not run"])].copy()
    keys = []
    for _, r in rows.iterrows():
        sampling, family = str(r["cell"]).split()
        pattern = _MODE_CLAIMS.get((r["reading"], family))
        keys.append(pattern.format(sampling=sampling) if pattern else "")
    rows["claim"] = keys
    rows["verdict"] = [verdicts.get(k, "not run") if k else "" for k in keys]
    rows["label"] = [READINGS[r] for r in rows["reading"]]
    return rows.reset_index(drop=True)


def _authors_table(ax: Any, authors: pd.DataFrame) -> None:
    """The :func:`authors_mode_rows` panel of :func:`table3_figure`."""
    ax.axis("off")
    header = ["cell", "reading (authors' practice)", "printed (%)", "ours best / final (%)", "C",
              "σ of the noise that ran", "ε A_1 of the noise that ran", "paper's ε", "verdict (claim)"]  # fmt: skip
    body = []
    for _, r in authors.iterrows():
        done = r["status"] == "done"
        body.append([r["cell"], r["label"], f"{r['printed_pct']:g}",
                     f"{r['best_pct']:.2f} / {r['final_pct']:.2f}" if done else "not run",
                     f"{r['clip_norm']:g}" if done else "—", f"{r['sigma_effective']:.3g}" if done else "—",
                     _eps(r["epsilon_A1"]) if done else "—", _eps(r["epsilon_claimed"]) if done else "—",
                     verdict_label(r["verdict"]) if r["verdict"] else "— (no claim)"])  # fmt: skip
    tab = table_panel(ax, body, header, "Authors' modes, MNIST, |S_b| = 1024 (σ = 2 nominal): each row's ε is that "
                                        "of the noise that ran, beside the ε the paper claims",
                      col_widths=(0.6, 2.4, 0.8, 1.1, 0.5, 1.1, 1.2, 0.8, 1.2))  # fmt: skip
    mark_verdict_cells(tab, len(header) - 1, [v or None for v in authors["verdict"]])


def table3_figure(comparison: pd.DataFrame, *, title: str = "", verdicts: Mapping[str, str] | None = None,
                  authors: pd.DataFrame | None = None) -> Figure:  # fmt: skip
    """Table 3 as printed beside ours, one table per data set, every column labelled (missing cells say so).

    ``verdicts`` (:func:`dpcore.claims.verdicts` of the notebook's claim rows): a last column with the verdict mark
    of each row's DP number and non-private baseline (:func:`table3_verdicts`), coloured by the DP one.
    ``authors`` (:func:`authors_mode_rows`): a further table of the authors'-mode runs with the ε of the noise that
    ran beside the paper's claimed ε (issue 41); left out when it has no row."""
    if not isinstance(comparison, pd.DataFrame) or comparison.empty:
        raise ValueError("comparison must be a non-empty frame from table3_comparison")
    if authors is not None and not isinstance(authors, pd.DataFrame):
        raise ValueError("authors must be a frame from authors_mode_rows, or None")
    full = "full_best_pct" in comparison.columns
    if full:  # a reduced profile: only the data sets it ran, the committed full-scale columns beside them
        ran = set(comparison.loc[comparison["missing_dp"] >= 0, "dataset"])
        comparison = comparison[comparison["dataset"].isin(ran)]
        if comparison.empty:
            raise ValueError("comparison has no data set of this profile's grid (every missing_dp is -1)")
    datasets = list(dict.fromkeys(comparison["dataset"]))
    extra = authors is not None and len(authors) > 0
    panels = len(datasets) + (1 if extra else 0)
    heights = [1.0] * len(datasets) + ([max(len(authors), 1) / 6 + 0.2] if extra else [])
    # at most 6:1 wide (one data set and the full-scale columns: 17 x 3.2 in)
    fig, axes = new_axes(1, panels, width=17.0 if full else 14.0, height=max(1.9 * sum(heights) + 0.4, 3.2),
                         height_ratios=heights)  # fmt: skip
    header = ["sampling", "clipping", "printed DP / non-DP (%)", "ours best epoch (%)", "ours final epoch (%)",
              "ours non-DP best (%)", "|S_b|, C", "ε A_1 (paper)", "ε A_0 (standard)"]  # fmt: skip
    if full:
        header += ["full-scale best / final (%)", "full-scale |S_b|, C"]
    if verdicts is not None:
        header += ["verdict: DP; non-DP"]
    for ax, dataset in zip(axes[: len(datasets), 0], datasets, strict=True):
        ax.axis("off")
        body = []
        rows = comparison[comparison["dataset"] == dataset]
        marks = table3_verdicts(rows, verdicts) if verdicts is not None else []
        for i, (_, r) in enumerate(rows.iterrows()):
            def pct(value: float, missing: int) -> str:
                text = "not in grid" if missing < 0 else ("—" if math.isnan(value) else f"{value:.2f}")
                return text + (f" ({missing} missing)" if missing > 0 else "")

            setup = "—" if math.isnan(r["batch_size"]) else f"{r['batch_size']:g}, {r['clip_norm']:g}"
            body.append([r["sampling"], r["clipping"], f"{r['printed_dp']:g} / {r['printed_nondp']:g}",
                         pct(r["best_epoch_pct"], r["missing_dp"]), pct(r["final_epoch_pct"], r["missing_dp"]),
                         pct(r["nondp_best_pct"], r["missing_nondp"]), setup, _eps(r["epsilon_A1"]),
                         _eps(r["epsilon_A0"]), *(_full_text(r) if full else ()),
                         *([f"{verdict_label(marks[i][0])}; {VERDICT_MARKS[marks[i][1]][0]} {marks[i][1]}"]
                           if verdicts is not None else [])])  # fmt: skip
        where = "; full scale: the committed results under results/paper/, best finished |S_b| so far" if full else ""
        tab = table_panel(ax, body, header, f"{_NAMES.get(dataset, dataset)} (σ = {SIGMA:g}, δ = 1e-5){where}")
        if verdicts is not None:
            mark_verdict_cells(tab, len(header) - 1, [dp for dp, _ in marks])
    if extra:
        _authors_table(axes[-1, 0], authors)
    if title:
        fig.suptitle(title)
    return fig


def _curve_label(run: Mapping[str, Any], with_batch: bool = True) -> str:
    parts = [f"|S_b|={int(run['batch_size'])}"] if with_batch else []
    if run["family"] == "NP":
        return ", ".join(parts + ["non-private"])
    return ", ".join(parts + [f"σ={SIGMA:g}", f"C={run['clip_norm']:g}", f"ε A_1={_eps(run['epsilon_paper'])}",
                              f"A_0={_eps(run['epsilon_standard'])}"])  # fmt: skip


def fig1_epoch_curves(cells: pd.DataFrame, history: pd.DataFrame, *, title: str = "",
                      committed: tuple[pd.DataFrame, pd.DataFrame] | None = None) -> tuple[Figure, pd.DataFrame]:
    """Fig. 1 per family: test accuracy against epoch, one panel per (data set, sampling) × family.

    Each curve (one per |S_b|) is labelled with σ, C and ε under A_1 and A_0; a panel lists its
    missing cells.  ``committed`` (a reduced profile): the paper profile's (cell_frame, history_frame), drawn
    as further rows titled "full scale, committed" for the same data sets (issue 25).  Returns the figure and
    the plotted data (run, epoch, accuracy; with ``committed`` a ``scale`` column).
    """
    cells = _check_cells(cells)
    frames = [(cells, history, "")]
    if committed is not None:
        if not isinstance(committed, tuple) or len(committed) != 2:
            raise ValueError("committed must be (cell_frame('paper'), history_frame('003_table3', 'paper')) or None")
        full_cells = _check_cells(committed[0])
        frames.append((full_cells[full_cells["dataset"].isin(set(cells["dataset"]))], committed[1],
                       "full scale, committed: "))  # fmt: skip
    for _, hist, _ in frames:
        if not isinstance(hist, pd.DataFrame) or not {"run", "epoch", "accuracy"} <= set(hist.columns):
            raise ValueError("history must be dpcore.experiments.history_frame(...) (run, epoch, accuracy)")
    rows = [(c, h, prefix, d, s) for c, h, prefix in frames
            for d, s in dict.fromkeys(zip(c["dataset"], c["sampling_label"], strict=True))]
    present = set().union(*(set(c["family"]) for c, _, _ in frames))
    families = [f for f in (*_FAMILIES, "NP") if f in present]
    fig, axes = new_axes(len(families), len(rows), width=4.3 * len(families), height=2.9 * len(rows) + 0.3)
    for i, (frame, hist, prefix, dataset, sampling) in enumerate(rows):
        for j, family in enumerate(families):
            ax = axes[i, j]
            sel = frame[(frame["dataset"] == dataset) & (frame["sampling_label"] == sampling)
                        & (frame["family"] == family)]  # fmt: skip
            done = sel[sel["status"] == "done"].sort_values("batch_size")
            for k, (_, run) in enumerate(done.iterrows()):
                h = hist[hist["run"] == run["run"]].sort_values("epoch")
                ax.plot(h["epoch"], 100 * h["accuracy"], label=_curve_label(run), **series_style(k, n=5))
            lost = sel[sel["status"] != "done"]["batch_size"].tolist()
            if lost:
                ax.text(0.02, 0.02, "missing: |S_b| = " + ", ".join(map(str, sorted(lost))), transform=ax.transAxes,
                        fontsize=7, color="firebrick", va="bottom")  # fmt: skip
            elif sel.empty:
                not_run(ax, "not in this profile's grid")
            ax.set(title=f"{prefix}{_NAMES.get(dataset, dataset)} {sampling} {family}", xlabel="epoch",
                   ylabel="test accuracy (%)")  # fmt: skip
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if len(done):
                ax.legend(fontsize=6, loc="upper left", framealpha=0.85)
    if title:
        fig.suptitle(title)
    data = history[history["run"].isin(cells["run"])].copy()
    if committed is not None:
        full = frames[1]
        data = pd.concat([data.assign(scale="this profile"),
                          full[1][full[1]["run"].isin(full[0]["run"])].assign(scale="full, committed")],
                         ignore_index=True)  # fmt: skip
    return fig, data.reset_index(drop=True)


def _draw_committed(ax: Any, full: pd.DataFrame, dataset: str) -> list[pd.DataFrame]:
    """The committed full-scale cells of ``dataset`` as hollow markers (one legend entry per family × sampling)."""
    drawn = []
    sub = full[(full["dataset"] == dataset) & (full["status"] == "done")]
    for f, family in enumerate((*_FAMILIES, "NP")):
        for j, sampling in enumerate(("SS", "SH")):
            done = sub[(sub["family"] == family) & (sub["sampling_label"] == sampling)].sort_values("batch_size")
            if done.empty:
                continue
            color = "0.25" if family == "NP" else series_style(2 * f + j, n=6)["color"]
            clips = ", ".join(f"{c:g}" for c in sorted(set(done["clip_norm"].dropna())))
            label = f"{family} {sampling}: full scale, committed" + (f" (C∈{{{clips}}})" if clips else "")
            ax.plot(done["batch_size"], 100 * done["best_accuracy"].astype(float), linestyle="none",
                    marker="o" if sampling == "SS" else "s", markersize=7, markerfacecolor="none",
                    markeredgecolor=color, label=label)  # fmt: skip
            drawn.append(done.assign(curve=label))
    return drawn


def fig1_verdict_keys(cells: pd.DataFrame, dataset: str, sampling: str) -> dict[int, str]:
    """``{|S_b|: claim key}`` of App. H's BC-vs-IC statement at each |S_b| of the grid's ``dataset`` / ``sampling``
    cells (paper 003, Fig. 1): the grid's smallest |S_b| is decided by ``fig1.<d>.<s>.smallest_batch.*``, the others
    by ``fig1.<d>.<s>.b<|S_b|>.*`` where that claim is registered (:data:`claims.TRAINING_CLAIMS`); any subset of
    the batch sizes works (cells without a result stay in the grid)."""
    cells = _check_cells(cells)
    sel = cells[(cells["dataset"] == dataset) & (cells["sampling_label"] == sampling)]
    batches = sorted({int(b) for b in sel["batch_size"]})
    out: dict[int, str] = {}
    for batch in batches:
        which = "smallest_batch" if batch == batches[0] else f"b{batch}"
        key = f"fig1.{dataset}.{sampling}.{which}.bc_comparable_to_ic"
        if key in TRAINING_CLAIMS:
            out[batch] = key
    return out


def _verdict_marks(ax: Any, cells: pd.DataFrame, dataset: str, verdicts: Mapping[str, str]) -> list[dict[str, Any]]:
    """Fig. 1's verdict marks on one panel: above each BC point the mark of the claim deciding BC vs IC at that
    |S_b| (:func:`fig1_verdict_keys`), and at the foot of the panel for a |S_b| whose BC cell has no result.
    Returns one row per mark (sampling, batch_size, claim, verdict)."""
    marks = []
    for j, sampling in enumerate(("SS", "SH")):
        bc = cells[(cells["dataset"] == dataset) & (cells["sampling_label"] == sampling) & (cells["family"] == "BC")
                   & (cells["status"] == "done")]  # fmt: skip
        for batch, key in fig1_verdict_keys(cells, dataset, sampling).items():
            verdict = verdicts.get(key, "not run")
            mark, _, colour = VERDICT_MARKS[verdict]
            point = bc[bc["batch_size"] == batch]
            if len(point):
                ax.annotate(f"{mark} {sampling}", (batch, 100 * float(point["best_accuracy"].iloc[0])),
                            xytext=(0, 6 + 9 * j), textcoords="offset points", ha="center", va="bottom",
                            fontsize=7.5, color=colour, fontweight="bold")  # fmt: skip
            else:
                ax.annotate(f"{mark} {sampling}", (batch, 0.0), xycoords=("data", "axes fraction"),
                            xytext=(0, 14 + 9 * j), textcoords="offset points", ha="center", va="bottom",
                            fontsize=7.5, color=colour)  # fmt: skip
            marks.append({"sampling": sampling, "batch_size": batch, "claim": key, "verdict": verdict})
    return marks


def fig1_best_vs_batch(cells: pd.DataFrame, *, title: str = "", committed: pd.DataFrame | None = None,
                       verdicts: Mapping[str, str] | None = None) -> tuple[Figure, pd.DataFrame]:  # fmt: skip
    """Fig. 1 summary: best test accuracy against |S_b| (log₂ axis), IC/BC/MC × SS/SH and the non-private line.

    One panel per data set; curves labelled with σ, the C values and the range of ε under A_1 and A_0
    over their points; missing cells are listed in the panel.  ``committed`` (a reduced profile: the paper
    profile's :func:`training.cell_frame`) adds the committed full-scale cells of the same data sets as hollow
    markers labelled "full scale, committed" (issue 25).  ``verdicts`` (:func:`dpcore.claims.verdicts` of the
    notebook's claim rows): at each |S_b| a mark per sampling (✓ / ✗ / – …) of App. H's "BC comparable to IC"
    there, above the BC point (at the panel's foot when the BC cell has no result); the x label explains them.
    Returns the figure and the plotted data.
    """
    cells = _check_cells(cells)
    if committed is not None:
        committed = _check_cells(committed)
    if verdicts is not None and not isinstance(verdicts, Mapping):
        raise ValueError("verdicts must map claim keys to verdict words (dpcore.claims.verdicts), or be None")
    datasets = list(dict.fromkeys(cells["dataset"]))
    fig, axes = new_axes(len(datasets), 1, width=7.0 * len(datasets), height=5.0)
    plotted = []
    for ax, dataset in zip(axes[0], datasets, strict=True):
        sub = cells[cells["dataset"] == dataset]
        k = 0
        for family in (*_FAMILIES, "NP"):
            for sampling in ("SS", "SH"):
                sel = sub[(sub["family"] == family) & (sub["sampling_label"] == sampling)]
                done = sel[sel["status"] == "done"].sort_values("batch_size")
                if done.empty:
                    continue
                if family == "NP":
                    label = f"non-private {sampling}"
                    style = {"color": "0.25", "linestyle": ":" if sampling == "SS" else "--", "marker": "x"}
                else:
                    clips = ", ".join(f"{c:g}" for c in sorted(set(done["clip_norm"])))
                    a1 = sorted(float(v) for v in done["epsilon_paper"])
                    a0 = [float(v) for v in done["epsilon_standard"] if not math.isnan(float(v))]
                    a0_text = f"{_eps(min(a0))}–{_eps(max(a0))}" if a0 else "n/a"
                    label = (f"{family} {sampling}: σ={SIGMA:g}, C∈{{{clips}}}, ε A_1 {_eps(a1[0])}–{_eps(a1[-1])},"
                             f" A_0 {a0_text}")  # fmt: skip
                    style = series_style(k, n=6)
                    style.pop("markevery", None)
                    k += 1
                ax.plot(done["batch_size"], 100 * done["best_accuracy"].astype(float), label=label, **style)
                plotted.append(done.assign(curve=label))
        batches = sorted(set(sub["batch_size"]))
        if committed is not None:
            drawn = _draw_committed(ax, committed, dataset)
            plotted.extend(drawn)
            batches = sorted(set(batches) | {int(b) for d in drawn for b in d["batch_size"]})
        lost = sorted(sub.loc[sub["status"] != "done", "run"])
        if lost:
            more = f" … (+{len(lost) - 4})" if len(lost) > 4 else ""
            shown = ", ".join(r.split("/", 1)[1] for r in lost[:4]) + more
            ax.text(0.01, 0.01, f"missing {len(lost)} cell(s): {shown}", transform=ax.transAxes, fontsize=6.5,
                    color="firebrick", va="bottom", wrap=True)  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_xticks(batches, [str(b) for b in batches])
        ax.minorticks_off()
        ax.set_xlim(batches[0] / 1.5, batches[-1] * 1.5)
        ax.set(title=_NAMES.get(dataset, dataset), xlabel="|S_b| (log₂ axis)", ylabel="best test accuracy (%)")
        if verdicts is not None and _verdict_marks(ax, cells, dataset, verdicts):
            ax.set_xlabel("|S_b| (log₂ axis)\n" + textwrap.fill(
                "marks: App. H's 'BC comparable to IC' (BC best epoch ≥ IC's − 1 pp) at that |S_b| and sampling, the "
                "verdict of the notebook's claim row: " + ", ".join(verdict_label(v) for v in
                                                                    ("reproduced", "not reproduced", "not run")), 95),
                fontsize=7.5)  # fmt: skip
        if plotted and ax.get_lines():
            entries = len(ax.get_legend_handles_labels()[1])
            below = -0.2 if verdicts is None else -0.3  # under the x label (two more lines with the marks' key)
            ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, below), ncols=1 if entries <= 8 else 2,
                      frameon=False)  # fmt: skip
    if title:
        fig.suptitle(title)
    data = pd.concat(plotted, ignore_index=True) if plotted else pd.DataFrame(columns=[*CELL_COLUMNS, "curve"])
    return fig, data[[*CELL_COLUMNS, "curve"]]



#: The readings of the "why ours differs" figure, in the order of :data:`training.MODES` (one change at a time from
#: Algorithm 1), with their legend labels.
READINGS: dict[str, str] = {
    "algorithm1": "Algorithm 1 as printed (Table 3 cell)",
    "lr_authors": "+ authors' step-size rule",
    "per_tensor": "+ per-tensor clipping (a3b48f6)",
    "authors_8186d9f": "+ noise on the clipped mean / m (8186d9f)",
    "authors_93f6075": "+ noise / m on the clipped sum (93f6075)",
    "bc_divided_by_batch": "BC noise σC / |S_b| (cb9d355)",
    "largeC": "IC, C grid up to 20",
}


def why_differs_frame(modes: pd.DataFrame) -> pd.DataFrame:
    """One row per (reading, cell) of :func:`training.mode_frame`'s runs (MNIST, |S_b| = 1024): the printed Table 3
    DP accuracy of the cell's column (a best over five |S_b|: ours is one |S_b|), our best-epoch and final accuracy
    (%) under that reading, the ε (δ = 1e-5, A_1) of the mechanism that ran, and the paper's claimed ε.

    ``status`` is "done", "not run" (planned, no result yet) or "n/a" (the reading has no run for that family).
    """
    from dpcore.papers.p003_shuffling.training import MODE_DATASET

    need = {"run", "status", "sampling_label", "family", "mode", "best_accuracy", "final_accuracy", "clip_norm",
            "epsilon_paper", "epsilon_claimed", "sigma_effective"}  # fmt: skip
    if not isinstance(modes, pd.DataFrame) or not need <= set(modes.columns):
        raise ValueError(f"modes must be a frame from training.mode_frame with columns {sorted(need)}")
    rows = []
    for reading in READINGS:
        for sampling in ("SS", "SH"):
            for family in ("IC", "BC"):
                hit = modes[(modes["mode"] == reading) & (modes["sampling_label"] == sampling)
                            & (modes["family"] == family)]  # fmt: skip
                row = {"reading": reading, "cell": f"{sampling} {family}", "run": "", "status": "n/a",
                       "printed_pct": TABLE3_PRINTED[(MODE_DATASET, sampling, family)][0], "best_pct": math.nan,
                       "final_pct": math.nan, "clip_norm": math.nan, "sigma_effective": math.nan,
                       "epsilon_A1": math.nan, "epsilon_claimed": math.nan}  # fmt: skip
                if len(hit):
                    first = hit.iloc[0]
                    done = first["status"] == "done"
                    row.update({"run": first["run"], "status": "done" if done else "not run"})
                    if done:
                        row.update({"best_pct": 100.0 * float(first["best_accuracy"]),
                                    "final_pct": 100.0 * float(first["final_accuracy"]),
                                    "clip_norm": float(first["clip_norm"]),
                                    "sigma_effective": float(first["sigma_effective"]),
                                    "epsilon_A1": float(first["epsilon_paper"]),
                                    "epsilon_claimed": float(first["epsilon_claimed"])})  # fmt: skip
                rows.append(row)
    return pd.DataFrame(rows)


def why_differs_figure(modes: pd.DataFrame, *, title: str = "") -> tuple[Figure, pd.DataFrame]:
    """Paper 003's "why ours differs" bars (MNIST, |S_b| = 1024; issue 21): per cell (SS/SH × IC/BC) the printed
    Table 3 accuracy, then ours under Algorithm 1 as printed and under each of the authors' practices that ran
    (:data:`training.MODES`), each bar with the ε of its own mechanism and, where the run's noise is not the nominal
    one, the paper's claimed ε beside it.  Returns the figure and :func:`why_differs_frame`."""
    from dpcore.plots_why import bar_inputs, why_differs_bars

    frame = why_differs_frame(modes)
    ran = [r for r in READINGS if (frame[frame["reading"] == r]["status"] == "done").any()]
    readings = ran or ["algorithm1"]
    planned = [r for r in READINGS if r not in readings and (frame[frame["reading"] == r]["status"] == "not run").any()]
    cells, printed, ours, eps_text, missing = bar_inputs(frame, readings, value="best_pct", eps_text=_mode_eps_text)
    fig, axes = new_axes(1, 1, width=12.0, height=5.2)
    ax = axes[0, 0]
    why_differs_bars(ax, cells, printed, [READINGS[r] for r in readings], ours, eps_text,
                     ylabel="best-epoch test accuracy (%)", missing_text=missing)  # fmt: skip
    ax.set_ylim(0, 165)  # room above 100 % for the rotated labels, and above them for the legend
    ax.set_yticks(range(0, 101, 20))
    xlabel = "MNIST, |S_b| = 1024, σ = 2 (printed: Table 3's best over |S_b| ∈ {64 … 1024})"
    if planned:
        xlabel += "\n" + textwrap.fill("planned, not run yet: " + "; ".join(READINGS[r] for r in planned), 130)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    return fig, frame


def _mode_eps_text(row: Mapping[str, Any]) -> str:
    if row["status"] != "done":
        return ""
    text = f"ε {_eps(row['epsilon_A1'])}"
    claimed = float(row["epsilon_claimed"])
    if math.isfinite(claimed) and not math.isclose(claimed, float(row["epsilon_A1"]), rel_tol=1e-6):
        text += f" (claimed {_eps(claimed)})"
    return text


def mode_claim_values(why: pd.DataFrame, cells: pd.DataFrame) -> dict[str, tuple[bool | None, str]]:
    """The issue-21 claims (MNIST, |S_b| = 1024) read off :func:`why_differs_frame` and the Table 3 cells
    (:func:`training.cell_frame`, for the non-private cell of the same |S_b|); ``None`` where a needed run has no
    result (the note says which).  Per sampling s of SS, SH:

    * ``fig1.mnist.<s>.b1024.bc_comparable_to_ic``: Algorithm 1's BC best-epoch accuracy >= its IC one − 1 pp;
    * ``fig1.mnist.<s>.b1024.bc_divided_by_batch_close_to_nonprivate``: BC under the authors' HEAD noise placement
      (σC/|S_b|) >= the non-private cell − 1 pp, with the ε (A_1) of the noise that ran in the note;
    * ``table3.mnist.<s>.b1024.ic_authors_93f6075_reaches_printed``: IC under the authors' 93f6075 code >= Table 3's
      printed IC − 1 pp, with the ε (A_1) of the noise that ran in the note.
    """
    if not isinstance(why, pd.DataFrame) or not {"reading", "cell", "status", "best_pct"} <= set(why.columns):
        raise ValueError("why must be a frame from why_differs_frame")
    _check_cells(cells)

    def cell(reading: str, name: str) -> Mapping[str, Any] | None:
        hit = why[(why["reading"] == reading) & (why["cell"] == name) & (why["status"] == "done")]
        return hit.iloc[0] if len(hit) else None

    out: dict[str, tuple[bool | None, str]] = {}
    for sampling in ("SS", "SH"):
        ic, bc = cell("algorithm1", f"{sampling} IC"), cell("algorithm1", f"{sampling} BC")
        key = f"fig1.mnist.{sampling}.b1024.bc_comparable_to_ic"
        if ic is None or bc is None:
            out[key] = (None, f"Algorithm 1's mnist/{sampling}/IC and /BC cells at |S_b| = 1024 need results")
        else:
            out[key] = (bool(bc["best_pct"] >= ic["best_pct"] - _MARGIN_PP),
                        f"BC {bc['best_pct']:.2f} (C = {bc['clip_norm']:g}) vs IC {ic['best_pct']:.2f} "
                        f"(C = {ic['clip_norm']:g}); ε(1e-5) A_1 {_eps(bc['epsilon_A1'])} both")  # fmt: skip
        mode = cell("bc_divided_by_batch", f"{sampling} BC")
        nonprivate = cells[(cells["dataset"] == "mnist") & (cells["sampling_label"] == sampling)
                           & (cells["family"] == "NP") & (cells["batch_size"] == 1024) & (cells["status"] == "done")]
        key = f"fig1.mnist.{sampling}.b1024.bc_divided_by_batch_close_to_nonprivate"
        if mode is None or not len(nonprivate):
            out[key] = (None, f"mnist/{sampling}/BC/b1024/mode/bc_divided_by_batch and mnist/{sampling}/NP/b1024 "
                              "need results")  # fmt: skip
        else:
            np_pct = 100.0 * float(nonprivate["best_accuracy"].iloc[0])
            out[key] = (bool(mode["best_pct"] >= np_pct - _MARGIN_PP),
                        f"under mode bc_divided_by_batch (noise placement clipped_mean_noise_over_batch), "
                        f"at ε(1e-5) A_1 {_eps(mode['epsilon_A1'])} of the noise that ran, not the paper's "
                        f"{_eps(mode['epsilon_claimed'])}: BC {mode['best_pct']:.2f} (C = {mode['clip_norm']:g}, final "
                        f"{mode['final_pct']:.2f}) vs non-private {np_pct:.2f}")  # fmt: skip
        key = f"table3.mnist.{sampling}.b1024.ic_authors_93f6075_reaches_printed"
        ic93 = cell("authors_93f6075", f"{sampling} IC")
        if ic93 is None:
            out[key] = (None, f"mnist/{sampling}/IC/b1024/mode/authors_93f6075 needs a result")
        else:
            printed = float(ic93["printed_pct"])
            out[key] = (bool(ic93["best_pct"] >= printed - _MARGIN_PP),
                        f"under mode authors_93f6075 (noise placement clipped_sum_noise_over_m), at "
                        f"ε(1e-5) A_1 {_eps(ic93['epsilon_A1'])} of the noise that ran, not the paper's "
                        f"{_eps(ic93['epsilon_claimed'])}: IC {ic93['best_pct']:.2f} (C = {ic93['clip_norm']:g}, final "
                        f"{ic93['final_pct']:.2f}) vs printed {printed:.2f}")  # fmt: skip
    return out


def _bc_vs_ic(sel: pd.DataFrame, batch: int) -> tuple[bool, str] | None:
    """App. H's BC-vs-IC direction at one |S_b| (Algorithm 1 as printed, the Table 3 cells): BC best-epoch accuracy
    >= IC's − 1 pp, with the note; ``None`` unless both cells of ``sel`` (one data set and sampling) have a result."""
    pair = {f: sel[(sel["family"] == f) & (sel["batch_size"] == batch) & (sel["status"] == "done")]
            for f in ("IC", "BC")}  # fmt: skip
    if any(p.empty for p in pair.values()):
        return None
    ic, bc = (pair[f].iloc[0] for f in ("IC", "BC"))
    bc_pct, ic_pct = _pct(float(bc["best_accuracy"])), _pct(float(ic["best_accuracy"]))
    return (bool(bc_pct >= ic_pct - _MARGIN_PP),
            f"|S_b| = {batch}: BC {bc_pct:.2f} (C = {bc['clip_norm']:g}) vs IC {ic_pct:.2f} (C = {ic['clip_norm']:g}); "
            f"ε(1e-5) A_1 {_eps(bc['epsilon_paper'])} both")  # fmt: skip


def smallest_batch_values(cells: pd.DataFrame) -> dict[str, tuple[bool | None, str]]:
    """``fig1.mnist.<s>.smallest_batch.bc_comparable_to_ic`` (issue 25): at the smallest |S_b| of the grid where
    MNIST's IC and BC cells of sampling s both have a result, BC best-epoch accuracy >= IC's − 1 pp (a direction,
    compared at any scale; ``None`` without such a |S_b|)."""
    cells = _check_cells(cells)
    out: dict[str, tuple[bool | None, str]] = {}
    for sampling in ("SS", "SH"):
        key = f"fig1.mnist.{sampling}.smallest_batch.bc_comparable_to_ic"
        sel = cells[(cells["dataset"] == "mnist") & (cells["sampling_label"] == sampling)]
        smallest = sorted(set(sel["batch_size"]))
        if not smallest:
            out[key] = (None, "no MNIST cell in this profile's grid")
            continue
        found = _bc_vs_ic(sel, smallest[0])
        out[key] = found or (None, f"mnist/{sampling}/IC and /BC at |S_b| = {smallest[0]} (the grid's smallest) "
                                   "need results")  # fmt: skip
    return out


def batch_size_values(cells: pd.DataFrame, batch_sizes: tuple[int, ...] = FIG1_MIDDLE_BATCH_SIZES
                      ) -> dict[str, tuple[bool | None, str]]:  # fmt: skip
    """``fig1.mnist.<s>.b<|S_b|>.bc_comparable_to_ic`` for the Fig. 1 curves between the smallest and the largest
    batch (paper 003, Fig. 1 and App. H's 'batch clipping yields accuracies comparable to ... individual clipping';
    issue 44): Algorithm 1's BC best-epoch accuracy >= its IC one − 1 pp at that |S_b|, from the Table 3 cells;
    ``None`` where a cell has no result or the |S_b| is outside the profile's grid (the note says which)."""
    cells = _check_cells(cells)
    if not batch_sizes or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in batch_sizes):
        raise ValueError(f"batch_sizes must be a non-empty tuple of positive integers, got {batch_sizes!r}")
    out: dict[str, tuple[bool | None, str]] = {}
    for sampling in ("SS", "SH"):
        sel = cells[(cells["dataset"] == "mnist") & (cells["sampling_label"] == sampling)]
        for batch in batch_sizes:
            key = f"fig1.mnist.{sampling}.b{batch}.bc_comparable_to_ic"
            if batch not in set(sel["batch_size"]):
                out[key] = (None, f"|S_b| = {batch} is not in this profile's grid")
                continue
            found = _bc_vs_ic(sel, batch)
            out[key] = found or (None, f"mnist/{sampling}/IC and /BC at |S_b| = {batch} need results")
    return out


#: App. H, second paragraph: the non-private mini-batch SGD accuracies (percent) per (data set, sampling)
APP_H_NONDP: dict[tuple[str, str], float] = {
    ("mnist", "SS"): 98.31, ("mnist", "SH"): 98.38, ("cifar10", "SS"): 68.94, ("cifar10", "SH"): 70.14,
}


def fig1_caption_batch_sizes(group: int = 64, multiples: tuple[int, ...] = (1, 2, 4, 8, 16)) -> tuple[int, ...]:
    """|S_b| = s·m of Fig. 1's curves (paper 003, Fig. 1 caption): 'For MC, we set s = 64 and m = 2, 4, 8 and 16',
    and IC / BC use the same |S_b| with s = 1 or m = 1; the sizes are ``group`` × each of ``multiples``.  With the
    caption's s = 64 the largest is 64 · 16 = 1024, not the printed 1028 (which is no multiple of 64)."""
    if isinstance(group, bool) or not isinstance(group, int) or group < 1:
        raise ValueError(f"group must be a positive integer, got {group!r}")
    if not multiples or any(isinstance(m, bool) or not isinstance(m, int) or m < 1 for m in multiples):
        raise ValueError(f"multiples must be a non-empty tuple of positive integers, got {multiples!r}")
    return tuple(group * m for m in multiples)


def printed_pair_values(table3: Mapping[str, tuple[float | None, str]]) -> dict[str, tuple[Any, str]]:
    """Our values of App. H's printed numbers that Table 3 also prints (paper 003): ``apph.mnist.SH.nondp`` (the
    non-private shuffling baseline, App. H's 98.38 % beside Table 3's 98.4 %) is ours for
    ``table3.mnist.SH.nondp`` (from :func:`table3_claim_values`); ``apph.nondp_matches_table3`` whether each of
    App. H's four non-private accuracies rounds to Table 3's second number at Table 3's printed precision
    (a check of the paper's own consistency, no training); ``fig1.caption.largest_batch`` the largest |S_b| of
    :func:`fig1_caption_batch_sizes`."""
    if "table3.mnist.SH.nondp" not in table3:
        raise ValueError("table3 must hold the value of 'table3.mnist.SH.nondp' (table3_claim_values)")
    ours, note = table3["table3.mnist.SH.nondp"]
    pairs = []
    for (dataset, sampling), app_h in APP_H_NONDP.items():
        printed = next(v[1] for k, v in TABLE3_PRINTED.items() if k[:2] == (dataset, sampling))
        decimals = len(f"{printed:g}".partition(".")[2])
        text = f"{dataset} {sampling}: App. H {app_h:g}, Table 3 {printed:g}"
        pairs.append((text, round(app_h, decimals) == printed))
    sizes = fig1_caption_batch_sizes()
    return {
        "apph.mnist.SH.nondp": (ours, note),
        "apph.nondp_matches_table3": (all(ok for _, ok in pairs), "; ".join(text for text, _ in pairs)),
        "fig1.caption.largest_batch": (max(sizes), f"|S_b| = 64·m for m = 1, 2, 4, 8, 16: {sizes}"),
    }
