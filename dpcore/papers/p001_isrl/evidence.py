"""Paper 001's trained claims read as evidence (issue 50): the selected runs of Figs. 4-9 as
:class:`~dpcore.verdicts.Run` records, one per (claim, panel, scale), for :meth:`dpcore.claims.ClaimsLog.decide`.

Every number of Figs. 4-9 the paper states is a mean over trials of the selected runs (App. I protocol), so a run
here is that mean with its standard error over the trials (paired per trial where the claim compares two curves of
the same trials: Local − MB, MB at ε − non-private MB), which the verdict rules use as the spread (rule 5,
``Run.se``).  An ordering "at every tested ε" is decided by its weakest cell: the (panel, ε) whose paired difference
has the smallest mean / standard error; its mean is the run's ``margin`` (distance from the decision boundary).

The full-scale evidence is the paper profile's selected runs
(``figures/paper/001_isrl_dp/<notebook>_selected_runs.csv``, written by the notebooks at ``PROFILE=paper``); at the
quick profile they are passed beside the reduced runs the notebook has just made, so both profiles give one verdict
(full-scale runs decide wherever they exist).  No value of ours lives in source: everything here is computed from
those frames.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.paths import repo_root
from dpcore.verdicts import Run, TrainedRule

__all__ = [
    "ACCOUNTING",
    "FIG5_PANELS",
    "PIPELINE",
    "READING",
    "SELECTED_FILES",
    "committed_selected",
    "evidence_frames",
    "paired_cell",
    "rule",
    "mnist_runs",
    "insurance_runs",
    "obesity_runs",
]

MB, LOCAL, MB_NP, LOCAL_NP = "Noisy MB SGD", "Noisy Local SGD", "MB SGD", "Local SGD"
#: the paper's own accounting of every trained claim: App. I's σ formula at the printed ε (the replace-one shortfall
#: of some calibrations is an erratum of its own, not counted again against the accuracy rows)
ACCOUNTING = "App. I's σ² = 8L² ln(1/δ) R/(n² ε²) (Abadi et al. 2016, Thm 1), δ = 1/n², as the paper calibrates it"
#: the pipeline tag a positive control would carry (none is committed for these federated models)
PIPELINE = "001 federated linear / softmax regression (dpcore.federated, App. I protocol)"
READING = "ISRL-DP MB-SGD as printed (per-record clipping, App. I σ), App. I's stepsize protocol"
#: the committed full-scale selected runs of each training notebook (paper profile)
SELECTED_FILES = {
    "mnist_logistic": "mnist_selected_runs.csv",
    "insurance_linear": "insurance_selected_runs.csv",
    "obesity_softmax": "obesity_selected_runs.csv",
}
_FIG7_M = 18  # App. I.1's Fig. 7 panel (M = 18); the other MNIST panels are Fig. 4's
#: the paper's Fig. 5 panels (N, M); the other insurance panels are Figs. 8-9's (whatever a profile runs)
FIG5_PANELS = ((10, 5), (5, 2))


def rule(epsilon: float) -> TrainedRule:
    """The rule of a trained claim of paper 001 at the printed ``epsilon`` (``inf``: non-private)."""
    return TrainedRule(epsilon=epsilon, accounting=ACCOUNTING, pipeline=PIPELINE)


def committed_selected(notebook: str, root: str | Path | None = None) -> pd.DataFrame | None:
    """The paper profile's committed selected runs of ``notebook`` (a key of :data:`SELECTED_FILES`), or None."""
    if notebook not in SELECTED_FILES:
        raise ValueError(f"notebook must be one of {sorted(SELECTED_FILES)}, got {notebook!r}")
    base = Path(root) if root is not None else repo_root() / "figures" / "paper" / "001_isrl_dp"
    path = base / SELECTED_FILES[notebook]
    return pd.read_csv(path) if path.is_file() else None


def evidence_frames(notebook: str, selected: pd.DataFrame, *, reduced: bool,
                    root: str | Path | None = None) -> list[tuple[pd.DataFrame, str, str]]:  # fmt: skip
    """``[(selected runs, scale, source)]``: this profile's runs (``reduced`` -> scale "reduced") and, at a reduced
    profile, the committed full-scale runs of the paper profile (:func:`committed_selected`)."""
    if not isinstance(selected, pd.DataFrame):
        raise ValueError(f"selected must be a DataFrame, got {type(selected).__name__}")
    out = [(selected, "reduced" if reduced else "full", "this profile's runs")]
    if reduced:
        full = committed_selected(notebook, root)
        if full is not None:
            out.append((full, "full", f"figures/paper/001_isrl_dp/{SELECTED_FILES[notebook]}"))
    return out


def _trials(frame: pd.DataFrame, curve: str, epsilon: float) -> pd.Series:
    rows = frame[(frame["curve"] == curve) & np.isclose(frame["epsilon"].astype(float), epsilon)]
    values = rows.set_index("trial")["test_metric"].astype(float)
    return values[np.isfinite(values)]


def _nonprivate(frame: pd.DataFrame, curve: str) -> pd.Series:
    values = frame[frame["curve"] == curve].set_index("trial")["test_metric"].astype(float)
    return values[np.isfinite(values)]


def _mean_se(values: pd.Series) -> tuple[float, float, int]:
    n = int(values.size)
    if n == 0:
        return math.nan, math.nan, 0
    se = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return float(values.mean()), se, n


def paired_cell(a: pd.Series, b: pd.Series) -> tuple[float, float, int]:
    """(mean, paired standard error, trials) of ``a − b`` (per-trial values indexed by trial) over the trials both
    have."""
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    return _mean_se(joined["a"] - joined["b"])


def _epsilons(frame: pd.DataFrame, cap: float = math.inf) -> list[float]:
    eps = sorted({float(e) for e in frame.loc[frame["curve"] == MB, "epsilon"] if float(e) <= cap + 1e-12})
    return eps


def _weakest(frame: pd.DataFrame, epsilons: Iterable[float], better: str, worse: str) -> dict | None:
    """The cell (ε) whose paired difference worse − better has the smallest mean/SE; None without cells."""
    cells = []
    for eps in epsilons:
        mean, se, n = paired_cell(_trials(frame, worse, eps), _trials(frame, better, eps))
        if n == 0:
            continue
        z = mean / se if se and math.isfinite(se) and se > 0 else math.copysign(math.inf, mean)
        cells.append(dict(epsilon=eps, mean=mean, se=se, n=n, z=z))
    if not cells:
        return None
    worst = min(cells, key=lambda c: c["z"])
    worst["all"] = all(c["mean"] > 0 for c in cells)
    worst["cells"] = cells
    return worst


def _ordering_run(frame: pd.DataFrame, name: str, setting: str, scale: str, source: str, epsilons: Sequence[float],
                  better: str = MB, worse: str = LOCAL) -> Run | None:  # fmt: skip
    """'``better``'s mean is below ``worse``'s at every ε of ``epsilons``' as a bool run (margin: the weakest cell's
    mean paired difference, se its paired standard error)."""
    cell = _weakest(frame, epsilons, better, worse)
    if cell is None:
        return None
    cells = "; ".join(f"ε {c['epsilon']:g}: {c['mean']:+.4g} ± {c['se']:.2g}" for c in cell["cells"])
    return Run(f"{name} (weakest ε {cell['epsilon']:g}; {worse} − {better} per ε: {cells})", READING, cell["all"],
               max(epsilons), True, setting, scale=scale, source=source, margin=cell["mean"],
               se=cell["se"] if math.isfinite(cell["se"]) else math.nan, trials=max(cell["n"], 1))  # fmt: skip


def _mean_run(name: str, values: pd.Series, epsilon: float, setting: str, scale: str, source: str,
              *, mean: float | None = None, se: float | None = None) -> Run | None:  # fmt: skip
    m, s, n = _mean_se(values)
    m = m if mean is None else mean
    s = s if se is None else se
    if n == 0 or not math.isfinite(m):
        return None
    return Run(name, READING, m, epsilon, True, setting, scale=scale, source=source,
               se=s if math.isfinite(s) else math.nan, trials=n)  # fmt: skip


def _panels(frame: pd.DataFrame, columns: Sequence[str]) -> list[tuple[tuple[int, ...], pd.DataFrame]]:
    return [((int(k),) if len(columns) == 1 else tuple(int(v) for v in k), g)
            for k, g in frame.groupby(list(columns) if len(columns) > 1 else columns[0])]  # fmt: skip


def _add(out: dict[str, list[Run]], key: str, run: Run | None) -> None:
    out.setdefault(key, [])
    if run is not None:
        out[key].append(run)


def _threshold(frame: pd.DataFrame) -> float | None:
    """Smallest tested ε from which ISRL-DP MB-SGD's mean stays at or below non-private Local SGD's (None: never)."""
    ref = float(_nonprivate(frame, LOCAL_NP).mean())
    eps = _epsilons(frame)
    below = [float(_trials(frame, MB, e).mean()) <= ref for e in eps]
    for i in range(len(below)):
        if all(below[i:]):
            return eps[i]
    return None


def mnist_runs(frames: Iterable[tuple[pd.DataFrame, str, str]]) -> dict[str, list[Run]]:
    """``{claim key: runs}`` of Figs. 4 and 7 from the selected runs (column ``M``): per panel, the smallest tested ε
    from which ISRL-DP MB-SGD stays at or below non-private Local SGD, and MB-SGD below ISRL-DP Local SGD at every
    tested ε (weakest cell, paired standard error)."""
    out: dict[str, list[Run]] = {}
    for frame, scale, source in frames:
        for (m,), panel in _panels(frame, ["M"]):
            fig = "fig7" if m == _FIG7_M else "fig4"
            setting, name = f"M = {m}", f"{source}, M = {m}"
            eps = _epsilons(panel)
            found = _threshold(panel)
            n = int(panel["trial"].nunique())
            _add(
                out,
                f"{fig}.M={m}.beats_nonprivate_local_from_eps",
                None
                if found is None
                else Run(name, READING, found, max(eps), True, setting, scale=scale, source=source, trials=n),
            )
            _add(out, f"{fig}.M={m}.mb_beats_isrl_local", _ordering_run(panel, name, setting, scale, source, eps))
    return out


def insurance_runs(
    frames: Iterable[tuple[pd.DataFrame, str, str]], fig5_panels: Sequence[Sequence[int]] = FIG5_PANELS
) -> dict[str, list[Run]]:
    """``{claim key: runs}`` of Figs. 5, 8, 9 and App. I.2 from the selected runs (columns ``N``, ``M``; the test
    metric is the relative RMSE): naive gain at ε = 1, privacy cost at ε = 3 (paired with non-private MB-SGD), Fig. 5's
    orderings at ε ≤ 2 and ratio at ε ≥ 2, Fig. 9's ε = 3 ordering, and the shares over (panel, ε)."""
    fig5 = {tuple(int(v) for v in p) for p in fig5_panels}
    out: dict[str, list[Run]] = {}
    for frame, scale, source in frames:
        below, wins = [], []
        for (num, m), panel in _panels(frame, ["N", "M"]):
            tag, setting = f"N={num}.M={m}", f"N = {num}, M = {m}"
            name = f"{source}, {setting}"
            eps = _epsilons(panel)
            if any(math.isclose(e, 1.0) for e in eps):
                _add(
                    out,
                    f"app_i2.{tag}.naive_gain.eps=1",
                    _mean_run(name, 1.0 - _trials(panel, MB, 1.0), 1.0, setting, scale, source),
                )
            if any(math.isclose(e, 3.0) for e in eps):
                mean, se, n = paired_cell(_trials(panel, MB, 3.0), _nonprivate(panel, MB_NP))
                if n:
                    _add(
                        out,
                        f"app_i2.{tag}.privacy_cost.eps=3",
                        Run(
                            name,
                            READING,
                            mean,
                            3.0,
                            True,
                            setting,
                            scale=scale,
                            source=source,
                            se=se if math.isfinite(se) else math.nan,
                            trials=n,
                        ),
                    )
            if (num, m) in fig5:
                low = [e for e in eps if e <= 2.0 + 1e-12]
                if low:
                    _add(
                        out,
                        f"fig5.{tag}.mb_beats_local.eps_le_2",
                        _ordering_run(panel, name, setting, scale, source, low),
                    )
                high = [e for e in eps if e >= 2.0 - 1e-12]
                if high:
                    ref = _nonprivate(panel, LOCAL_NP)
                    per_trial = pd.concat([_trials(panel, MB, e) for e in high], axis=1).mean(axis=1) / ref
                    _add(
                        out,
                        f"fig5.{tag}.ratio_to_local_sgd.eps_ge_2",
                        _mean_run(name, per_trial.dropna(), max(high), setting, scale, source),
                    )
            else:
                for e in eps:
                    wins.append(float(_trials(panel, LOCAL, e).mean()) > float(_trials(panel, MB, e).mean()))
            below += [float(_trials(panel, MB, e).mean()) < 1.0 for e in eps]
            if (num, m) == (3, 3) and any(math.isclose(e, 3.0) for e in eps):
                _add(
                    out,
                    "fig9.N=3.M=3.local_beats_mb.eps=3",
                    _ordering_run(panel, name, setting, scale, source, [3.0], better=LOCAL, worse=MB),
                )
        all_eps = max(float(e) for e in frame["epsilon"] if np.isfinite(float(e)))
        if below:
            share = float(np.mean(below))
            _add(
                out,
                "app_i2.below_naive.most",
                Run(
                    f"{source}: {sum(below)} of {len(below)} (panel, ε) below 1",
                    READING,
                    share > 0.5,
                    all_eps,
                    True,
                    "all panels",
                    scale=scale,
                    source=source,
                    margin=share - 0.5,
                ),
            )
        if wins:
            share = float(np.mean(wins))
            _add(
                out,
                "figs8_9.mb_beats_local.most",
                Run(
                    f"{source}: {sum(wins)} of {len(wins)} (panel, ε) of Figs. 8-9 with MB-SGD below Local SGD",
                    READING,
                    share > 0.5,
                    all_eps,
                    True,
                    "Figs. 8-9 panels",
                    scale=scale,
                    source=source,
                    margin=share - 0.5,
                ),
            )
    return out


def obesity_runs(frames: Iterable[tuple[pd.DataFrame, str, str]]) -> dict[str, list[Run]]:
    """``{claim key: runs}`` of Fig. 6 from the selected runs (column ``M``): per ε the relative gain
    (Local − MB)/Local of the means, its standard error from the paired per-trial differences (over the mean of
    Local SGD, whose own spread is left out), and the 'every ε' ordering (weakest cell)."""
    out: dict[str, list[Run]] = {}
    for frame, scale, source in frames:
        for (m,), panel in _panels(frame, ["M"]):
            setting, name = f"M = {m}", f"{source}, M = {m}"
            eps = _epsilons(panel)
            for e in eps:
                local = _trials(panel, LOCAL, e)
                mean, se, n = paired_cell(local, _trials(panel, MB, e))
                if n == 0 or float(local.mean()) == 0:
                    continue
                ref = float(local.mean())
                _add(
                    out,
                    f"fig6.M={m}.gain.eps={e:g}",
                    Run(
                        name,
                        READING,
                        mean / ref,
                        e,
                        True,
                        setting,
                        scale=scale,
                        source=source,
                        se=se / abs(ref) if math.isfinite(se) else math.nan,
                        trials=n,
                    ),
                )
            _add(out, f"fig6.M={m}.mb_beats_local.all_eps", _ordering_run(panel, name, setting, scale, source, eps))
    return out
