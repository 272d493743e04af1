"""Paper 000 (van Dijk et al., "Proactive DP", arXiv 2102.09030): the convex experiments at full scale.

Logistic regression on a LIBSVM set with n = 5 asynchronous clients plus a server (Algorithms 2–4, Υ(k, i) =
[k ≥ i−1], simulated by :func:`dpcore.training.async_logreg.simulate_async_logreg`), K = 50,000 gradient
computations per client, C = 0.1, η̄_0 = 0.1 and (Table 1/2, App. D.1):

* strongly convex: ridge (λ/2)‖w̄‖² with λ = 1/N, η̄_i = η_0/(1 + β t_i), β = 0.001;
* plain convex: no ridge, η̄_i = η_0/(1 + β √t_i), β = 0.01;

with t_i the planned gradient computations before round i (Table 1, footnote ‡).  The paper does not name its
LIBSVM set; ijcnn1 (49,990 training rows, 5 × 9,998 disjoint shards) is our stand-in, a9a (32,561 rows: each
client draws its own 10,000 rows, shards overlap) the second one.  Privacy settings are the paper's (Tables 3
and 6, N = 10,000, δ = 10⁻⁴); the theorem-faithful rows come from the App. E.1 calculator with eq. (6) and the γ
fixed point (:func:`dpcore.papers.p000_proactive.e1.max_sample_size_e1`).

Experiments (each returns tidy ``pandas`` frames):

* :func:`utility_graph` — Sec. 3.3/4.1, App. D.2: w* from non-private clipped async SGD (same K and schedule),
  then the test accuracy of w* + N(0, C²σ² I) relative to that of w*, mean ± sd over noise draws (Figs 1a, 2a, 4, 5);
* :func:`sample_size_sweep` — Sec. 4.2, App. D.3.1, Table 3 (Figs 1b, 2b, 7, 8);
* :func:`epsilon_sweep` — Sec. 4.3, App. D.3.2, Table 6 plus non-private (Figs 1c, 2c, 11, 12);
* :func:`proactive_loop` — App. E / Fig. 15: utility graph → DP calculator → DP-SGD → accuracy check → loop.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.papers.p000_proactive import calculator as pr
from dpcore.papers.p000_proactive import e1
from dpcore.papers.p000_proactive.tables import SETTINGS, TABLE_3_5, TABLES_6_8
from dpcore.training.async_logreg import LogRegRun, classification_metrics, logistic_predict, simulate_async_logreg
from dpcore.validation import check_choice, check_nonnegative, check_positive, check_positive_int
from dpcore.verdicts import scope_phrase

__all__ = [
    "OBJECTIVES",
    "DATASETS",
    "N_CLIENTS",
    "K",
    "ETA0",
    "CLIP",
    "ClientData",
    "load_clients",
    "objective_run",
    "utility_graph",
    "noisy_confusion",
    "utility_sigma_range",
    "sample_size_sweep",
    "epsilon_rows",
    "epsilon_sweep",
    "final_accuracies",
    "proactive_loop",
    "majority_rate",
    "MAJORITY_MARGIN",
    "claim_values",
    "undecided",
]

N_CLIENTS = 5  # Tables 3-5: n = 5 nodes
K = 50_000  # Table 3: gradient computations per client
ETA0 = 0.1  # Table 3: initial step size
CLIP = 0.1  # Table 1/2, Table 3: C for the convex problems
#: objective -> (β, power p of η_0/(1 + β t^p), ridge?)  (Table 1/2, App. D.1)
OBJECTIVES = {"strongly convex": (0.001, 1.0, True), "plain convex": (0.01, 0.5, False)}
DATASETS = ("ijcnn1", "a9a")
_PAPER_N = SETTINGS["LIBSVM"].N  # 10,000 per client (Table 3)


@dataclass
class ClientData:
    """The clients' local data sets (n, N, d), the test set and how they were made."""

    name: str
    x: np.ndarray
    y: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    partition: str

    @property
    def N(self) -> int:
        return int(self.x.shape[1])

    @property
    def majority_rate(self) -> float:
        """The test accuracy of always predicting the larger class (:func:`majority_rate` of the test labels)."""
        return majority_rate(self.y_test)

    def describe(self) -> str:
        maj = self.majority_rate
        return (
            f"{self.name}: {self.x.shape[0]} clients × N = {self.N:,} ({self.partition}), d = {self.x.shape[2]}, "
            f"test {len(self.y_test):,} rows (majority class {maj:.1%})"
        )


def majority_rate(labels: np.ndarray) -> float:
    """The accuracy of always predicting the larger class of ``labels`` (a 1-D array of class labels): the chance
    floor of a classifier on an imbalanced binary set (issue 41; ijcnn1's test set: 90.5 %).  A run that ends at or
    below it has learned nothing the class balance does not give."""
    y = np.asarray(labels)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D array, got shape {y.shape}")
    counts = np.unique(y, return_counts=True)[1]
    return float(counts.max() / y.size)


def load_clients(
    dataset: str,
    *,
    n_clients: int = N_CLIENTS,
    client_size: int = _PAPER_N,
    seed: int = 0,
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> ClientData:
    """The clients of the paper's convex experiments on LIBSVM set ``dataset``.

    With at least n·N_c training rows the shuffled training set is cut into n disjoint shards of
    min(N_c, rows // n) rows (ijcnn1: 5 × 9,998); with fewer, every client draws its own N_c rows without
    replacement (a9a: 5 × 10,000 from 32,561; the shards overlap, all iid as the paper's "iid dataset").
    ``arrays`` = (x_train, y_train, x_test, y_test) replaces the LIBSVM files (tests).
    """
    check_choice("dataset", dataset, DATASETS)
    n_clients = check_positive_int("n_clients", n_clients)
    client_size = check_positive_int("client_size", client_size)
    if arrays is None:
        from dpcore.data import load_libsvm

        x, y = load_libsvm(dataset, "train")
        xt, yt = load_libsvm(dataset, "test")
    else:
        x, y, xt, yt = arrays
    rng = np.random.default_rng(np.random.SeedSequence([seed, 13]))
    rows = len(x)
    if rows // n_clients >= 0.99 * client_size:
        size = min(client_size, rows // n_clients)
        perm = rng.permutation(rows)[: n_clients * size]
        idx = perm.reshape(n_clients, size)
        partition = "disjoint shards"
    else:
        if client_size > rows:
            raise ValueError(f"client_size must be <= {rows} training rows, got {client_size}")
        idx = np.stack([rng.choice(rows, client_size, replace=False) for _ in range(n_clients)])
        partition = f"each client draws {client_size:,} of {rows:,} rows (shards overlap)"
    return ClientData(
        dataset,
        np.asarray(x, np.float64)[idx],
        np.asarray(y)[idx],
        np.asarray(xt, np.float64),
        np.asarray(yt),
        partition,
    )


def objective_run(objective: str, *, clip: float = CLIP, sigma: float, N: int) -> LogRegRun:
    """The paper's configuration of ``objective`` (Table 1/2) with clipping ``clip`` and noise multiplier σ."""
    check_choice("objective", objective, tuple(OBJECTIVES))
    beta, power, ridge = OBJECTIVES[objective]
    return LogRegRun(
        clip=clip, sigma=sigma, lr0=ETA0, beta=beta, power=power, ridge=1.0 / N if ridge else 0.0, label=objective
    )


def _history(res, runs: list[LogRegRun], seeds, extra: dict) -> pd.DataFrame:
    frames = []
    for c, run in enumerate(runs):
        for k, seed in enumerate(seeds):
            frame = pd.DataFrame({"samples": res.samples, "rounds": res.samples / res.sample_size})
            for key, val in res.metrics.items():
                frame[key.removeprefix("test_")] = val[c, k]
            frame["objective"], frame["seed"] = run.label, seed
            for name, value in extra.items():
                frame[name] = value[c] if isinstance(value, list) else value
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- utility graph
def utility_graph(
    data: ClientData,
    *,
    clips=(0.025, 0.05, 0.075, 0.1, 0.15, 0.2),
    sigmas=None,
    draws: int = 50,
    sample_size: int = 26,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sec. 3.3/4.1, App. D.2: (curves, models).

    For each objective and C, w* is trained by the same asynchronous SGD with clipping C and no noise (K
    gradient computations per client, s = ``sample_size``); then ``draws`` noise directions z ~ N(0, I) (shared
    by all C and σ) give w* + Cσz.  ``curves`` holds per (objective, C, σ) the mean and sd over the draws of the
    accuracy and the balanced accuracy of w* + Cσz, and their fractions of w*'s.  ``models`` holds w*'s
    accuracies.
    """
    sigmas = np.arange(0, 31, 1.0) if sigmas is None else np.asarray(sigmas, dtype=float)
    if sigmas.ndim != 1 or sigmas.size == 0 or (sigmas < 0).any():
        raise ValueError("sigmas must be a non-empty 1-D grid of values >= 0")
    clips = [check_positive("clips[i]", c) for c in clips]
    draws = check_positive_int("draws", draws)
    runs = [objective_run(o, clip=c, sigma=0.0, N=data.N) for o in OBJECTIVES for c in clips]
    res = simulate_async_logreg(data.x, data.y, runs, sample_size=sample_size, K=K, seeds=(seed,))
    w_star = res.weights[:, 0]  # (configs, d + 1)
    d1 = w_star.shape[1]
    z = np.random.default_rng(np.random.SeedSequence([seed, 4])).standard_normal((draws, d1))
    xt, yt = data.x_test, data.y_test
    pos = yt == 1
    xz = xt @ z[:, :-1].T + z[:, -1]  # (n_test, draws): x̃·z
    base = logistic_predict(w_star, xt)  # (n_test, configs): x̃·w*
    rows, models = [], []
    ev = classification_metrics(xt, yt)(w_star)
    for c, run in enumerate(runs):
        acc0, bal0 = float(ev["test_accuracy"][c]), float(ev["test_balanced_accuracy"][c])
        models.append({"objective": run.label, "C": run.clip, "accuracy": acc0, "balanced_accuracy": bal0})
        tp, tn = noisy_confusion(base[:, c], xz, pos, run.clip * sigmas)
        acc = (tp + tn) / len(yt)  # (draws, sigmas)
        bal = 0.5 * (tp / pos.sum() + tn / (~pos).sum())
        sd = (lambda a: a.std(0, ddof=1)) if draws > 1 else (lambda a: np.zeros(a.shape[1]))
        rows.append(pd.DataFrame({
            "objective": run.label, "C": run.clip, "sigma": sigmas,
            "accuracy": acc.mean(0), "accuracy_sd": sd(acc),
            "balanced_accuracy": bal.mean(0), "balanced_accuracy_sd": sd(bal),
            "fraction": acc.mean(0) / acc0, "fraction_sd": sd(acc) / acc0,
            "balanced_fraction": bal.mean(0) / bal0, "balanced_fraction_sd": sd(bal) / bal0,
        }))  # fmt: skip
    return pd.concat(rows, ignore_index=True), pd.DataFrame(models)


def noisy_confusion(base: np.ndarray, xz: np.ndarray, pos: np.ndarray, scales: np.ndarray) -> tuple[np.ndarray, ...]:
    """True positives and true negatives of the predictions [base + a·xz > 0] for every draw and every a in
    ``scales`` (≥ 0): (tp, tn), each (draws, len(scales)).

    base (n,) are the logits of w*, xz (n, draws) those of the noise directions.  Each (example, draw) changes its
    prediction at most once, at a = −base/xz > 0, so the counts follow from one pass over the crossings (a
    cumulative histogram) instead of one pass per a; ties (a exactly at a crossing) count as negative predictions
    only in the direct evaluation and have probability 0.
    """
    base, xz, pos = np.asarray(base, float), np.asarray(xz, float), np.asarray(pos, bool)
    scales = np.asarray(scales, float)
    if base.ndim != 1 or xz.shape[0] != base.shape[0] or xz.ndim != 2 or pos.shape != base.shape:
        raise ValueError(f"base must be (n,), xz (n, draws) and pos (n,), got {base.shape}, {xz.shape}, {pos.shape}")
    if scales.ndim != 1 or (scales < 0).any() or (np.diff(scales) < 0).any():
        raise ValueError("scales must be a non-decreasing 1-D array of values >= 0")
    draws, G = xz.shape[1], len(scales)
    pred0 = base > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = -base[:, None] / xz  # where base + a·xz changes sign
    flips = np.isfinite(cross) & (cross > 0)
    # grid points strictly above the crossing see the flipped prediction; a = 0 never does
    first = np.searchsorted(scales, np.where(flips, cross, np.inf), side="right")
    out = []
    for mask, correct0 in ((pos, pred0), (~pos, ~pred0)):
        delta = np.where(correct0[mask], -1, 1)[:, None] * np.ones((1, draws), dtype=np.int64)
        sel = flips[mask] & (first[mask] < G)
        col = np.broadcast_to(np.arange(draws), sel.shape)[sel]
        flat = col * (G + 1) + first[mask][sel]
        hist = np.bincount(flat, weights=delta[sel], minlength=draws * (G + 1)).round().astype(np.int64)
        hist = hist.reshape(draws, G + 1)
        out.append(int(correct0[mask].sum()) + np.cumsum(hist, axis=1)[:, :G])
    return out[0], out[1]


def utility_sigma_range(
    curves: pd.DataFrame, objective: str, clip: float, *, drop: float = 0.10, column: str = "fraction"
) -> float:
    """The largest σ of the grid up to which the mean ``column`` stays ≥ 1 − ``drop`` (Sec. 4.1: 'at most a 10%
    drop'); NaN when even σ = 0 fails.  Reads the grid in order, so a later recovery does not count."""
    check_nonnegative("drop", drop)
    grp = curves[(curves.objective == objective) & np.isclose(curves.C, clip)].sort_values("sigma")
    if grp.empty:
        raise ValueError(f"no utility-graph rows for objective={objective!r}, C={clip}")
    ok = (grp[column] >= 1 - drop).to_numpy()
    if not ok[0]:
        return float("nan")
    last = len(ok) if ok.all() else int(np.argmin(ok))
    return float(grp["sigma"].to_numpy()[last - 1])


# --------------------------------------------------------------------------- DP-SGD sweeps
def _run_group(
    data: ClientData, runs: list[LogRegRun], s: int, seeds, n_eval: int, extra: dict, timings: list | None, label: str
) -> pd.DataFrame:
    start = time.process_time()
    ev = classification_metrics(data.x_test, data.y_test)
    res = simulate_async_logreg(
        data.x, data.y, runs, sample_size=s, K=K, seeds=tuple(seeds), evaluate=ev, n_eval=n_eval
    )
    if timings is not None:
        timings.append(
            {
                "dataset": data.name,
                "experiment": label,
                "s": s,
                "rounds": res.rounds,
                "configs": len(runs),
                "seeds": len(seeds),
                "cpu_s": time.process_time() - start,
            }
        )
    return _history(res, runs, seeds, {"s": s, **extra})


def sample_size_sweep(
    data: ClientData,
    *,
    s_values=None,
    sigma: float | None = None,
    seeds=(0, 1, 2),
    n_eval: int = 25,
    timings: list | None = None,
) -> pd.DataFrame:
    """Sec. 4.2, App. D.3.1 (Table 3): both objectives at σ = 19.29962 (ε = 0.04945) for every s; history of
    test accuracy and balanced accuracy against gradient computations per client, per seed."""
    _, eps_p, sig_p, _, s_list = TABLE_3_5["Table 3"]
    s_values = s_list if s_values is None else s_values
    sigma = sig_p if sigma is None else sigma
    frames = []
    for s in s_values:
        runs = [objective_run(o, sigma=sigma, N=data.N) for o in OBJECTIVES]
        frames.append(
            _run_group(data, runs, int(s), seeds, n_eval, {"sigma": sigma, "epsilon_label": eps_p}, timings, "s sweep")
        )
    return pd.concat(frames, ignore_index=True)


def epsilon_rows(mode: str = "paper") -> list[dict]:
    """Table 6's (ε, σ, s) rows as printed (``mode="paper"``), or the theorem-faithful rows for the same ε targets
    (``"theorem"``: App. E.1 with eq. (6) and the γ fixed point, N = 10,000, K = 50,000, δ = 10⁻⁴)."""
    check_choice("mode", mode, ("paper", "theorem"))
    setting, table = TABLES_6_8["Table 6"]
    st = SETTINGS[setting]
    rows = []
    for eps, sig, s in table:
        if mode == "theorem":
            r = e1.max_sample_size_e1(st.N, st.K, eps, delta=st.delta)
            sig, s = r.sigma, r.s
        rows.append({"mode": mode, "epsilon": eps, "sigma": float(sig), "s": int(s)})
    return rows


def epsilon_sweep(
    data: ClientData,
    *,
    modes=("paper", "theorem"),
    seeds=(0, 1, 2),
    n_eval: int = 25,
    nonprivate_s: int = 26,
    reuse: pd.DataFrame | None = None,
    timings: list | None = None,
) -> pd.DataFrame:
    """Sec. 4.3, App. D.3.2 (Table 6): both objectives for every (ε, σ, s) row of each mode, plus the non-private
    runs (no noise; with clipping C = 0.1 and without clipping, s = ``nonprivate_s``).  ``reuse`` (a
    :func:`sample_size_sweep` frame) supplies identical runs (same σ, s and seeds) instead of recomputing them."""
    frames = []
    for mode in modes:
        for row in epsilon_rows(mode):
            extra = {"sigma": row["sigma"], "epsilon_label": row["epsilon"], "mode": mode}
            if reuse is not None:
                hit = reuse[(reuse.s == row["s"]) & np.isclose(reuse.sigma, row["sigma"]) & reuse.seed.isin(seeds)]
                if hit.seed.nunique() == len(seeds):
                    frames.append(hit.assign(**extra))
                    continue
            runs = [objective_run(o, sigma=row["sigma"], N=data.N) for o in OBJECTIVES]
            frames.append(_run_group(data, runs, row["s"], seeds, n_eval, extra, timings, f"ε sweep ({mode})"))
    runs = [objective_run(o, sigma=0.0, N=data.N) for o in OBJECTIVES]
    runs += [objective_run(o, clip=np.inf, sigma=0.0, N=data.N) for o in OBJECTIVES]
    variants = ["non-private, C = 0.1"] * 2 + ["non-private, no clipping"] * 2
    frame = _run_group(data, runs, nonprivate_s, seeds, n_eval, {"mode": variants}, timings, "non-private")
    frames.append(frame.assign(sigma=0.0, epsilon_label=np.inf))
    return pd.concat(frames, ignore_index=True)


def final_accuracies(history: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per ``keys`` group: mean, sd, min and max over seeds of the final accuracy and balanced accuracy."""
    last = history.loc[history.groupby([*keys, "seed"])["samples"].idxmax()]
    out = last.groupby(keys).agg(
        accuracy=("accuracy", "mean"), accuracy_sd=("accuracy", "std"), accuracy_min=("accuracy", "min"),
        accuracy_max=("accuracy", "max"), balanced_accuracy=("balanced_accuracy", "mean"),
        balanced_accuracy_sd=("balanced_accuracy", "std"), seeds=("seed", "nunique"),
    )  # fmt: skip
    return out.reset_index()


# --------------------------------------------------------------------------- App. E / Fig. 15
def proactive_loop(
    data: ClientData,
    curves: pd.DataFrame,
    models: pd.DataFrame,
    *,
    objective: str = "plain convex",
    epsilon_target: float = 0.5,
    metric: str = "balanced_accuracy",
    accuracy_drop: float = 0.10,
    phase_K: int = K,
    max_phases: int = 3,
    sigma_step: float = 0.8,
    seed: int = 0,
) -> pd.DataFrame:
    """App. E (Fig. 15) once, on real numbers, for the clients of ``data``.

    1. Utility graph → pairs (C_i, R_i): the client's target is acc_target = (1 − ``accuracy_drop``) × the best
       w* ``metric`` over the C grid; R_i = [0, σ_i] with σ_i the largest grid σ up to which the mean ``metric``
       of w* + N(0, C_i²σ² I) stays ≥ acc_target.  The pair with the largest σ_i is taken (ties: larger C).
    2. DP calculator (App. E.1, eq. (6), γ fixed point, N = 10,000, δ = 10⁻⁴ as Table 3): phase 0 takes σ_i,
       aborts if its ε (eq. (6)) exceeds ε_target, else gets the largest s for that ε; later phases lower σ by
       the factor ``sigma_step`` and get the largest s with ε ≤ ε_target, counting all earlier rounds at the
       new σ (conservative, App. E).
    3. DP-SGD: ``phase_K`` more gradient computations per client, continuing from the last global model.
    4. Accuracy check on the test set; stop when met, or when the calculator finds no admissible s.
    """
    check_choice("metric", metric, ("accuracy", "balanced_accuracy"))
    check_choice("objective", objective, tuple(OBJECTIVES))
    epsilon_target = check_positive("epsilon_target", epsilon_target)
    grp = models[models.objective == objective]
    if grp.empty:
        raise ValueError(f"models has no rows for objective={objective!r}")
    target = (1 - accuracy_drop) * float(grp[metric].max())
    pairs = []
    for clip in grp["C"]:
        cur = curves[(curves.objective == objective) & np.isclose(curves.C, clip)].sort_values("sigma")
        ok = (cur[metric] >= target).to_numpy()
        top = np.nan if not ok[0] else float(cur.sigma.to_numpy()[(len(ok) if ok.all() else int(np.argmin(ok))) - 1])
        pairs.append((top, float(clip)))
    valid = [p for p in pairs if np.isfinite(p[0])]
    if not valid:
        return pd.DataFrame([{"phase": 0, "target": target, "status": "no (C, σ) pair reaches the target: abort"}])
    sigma_max, clip = max(valid)
    pairs_text = "; ".join(f"C = {c:g}: σ ≤ {t:g}" if np.isfinite(t) else f"C = {c:g}: none" for t, c in pairs)
    st = SETTINGS["LIBSVM"]
    ev = classification_metrics(data.x_test, data.y_test)
    rows: list[dict] = []
    history: list[tuple[float, float]] = []
    init, t0 = None, 0.0
    eps0 = pr.epsilon(sigma_max, st.delta) if np.isfinite(sigma_max) and sigma_max**2 > 2 else np.inf
    sigma_next = None
    for j in range(max_phases):
        if j == 0 and eps0 > epsilon_target:
            rows.append(
                {
                    "phase": 0,
                    "C": clip,
                    "sigma_range_max": sigma_max,
                    "epsilon": eps0,
                    "epsilon_target": epsilon_target,
                    "status": "ε of the largest useful σ exceeds the target: abort",
                }
            )
            break
        try:
            if j == 0:  # the largest σ of R: its ε (eq. (6)) is the phase-0 target of the E.1 search
                r = e1.max_sample_size_e1(st.N, phase_K, eps0, delta=st.delta)
            else:
                r = e1.max_sample_size_e1(
                    st.N, phase_K, epsilon_target, delta=st.delta, history=history, sigma_j=sigma_next
                )
        except ValueError as err:
            rows.append({"phase": j, "sigma": sigma_next, "status": f"calculator: no admissible s ({err})"})
            break
        history.append((float(r.s), float(phase_K)))
        run = objective_run(objective, clip=clip, sigma=r.sigma, N=data.N)
        res = simulate_async_logreg(
            data.x, data.y, [run], sample_size=r.s, K=phase_K, seeds=(seed,), evaluate=ev, n_eval=10, init=init, t0=t0
        )
        init, t0 = res.weights, t0 + phase_K
        acc = float(res.metrics[f"test_{metric}"][0, 0, -1])
        met = acc >= target
        rows.append({
            "phase": j, "C": clip, "sigma_range_max": sigma_max, "sigma": r.sigma, "s": r.s, "rounds": res.rounds,
            "epsilon": r.epsilon, "epsilon_target": epsilon_target, "gamma": r.gamma, "theta": r.theta,
            "K_total": t0, "accuracy": float(res.metrics["test_accuracy"][0, 0, -1]),
            "balanced_accuracy": float(res.metrics["test_balanced_accuracy"][0, 0, -1]), "metric": metric,
            "target": target, "utility_pairs": pairs_text,
            "status": "accuracy met: stop" if met else "accuracy below target: lower σ, continue",
        })  # fmt: skip
        if met:
            break
        if j == max_phases - 1:
            rows.append({"phase": j + 1, "status": f"stopped: max_phases = {max_phases} phases run"})
        sigma_next = r.sigma * sigma_step
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- claims
_MAJORITY_NOTE = (
    " | ijcnn1's majority class is 90.5% of its test set and its clipped (C = 0.1) models stay near that "
    "constant predictor (balanced accuracy about 0.5)"
)
#: the qualitative claims, each decided per (data set, objective) on the runs above the data set's majority-class
#: floor (:func:`undecided`)
_ORDERINGS = ("convex.utility.smaller_C_larger_sigma", "convex.s_sweep.larger_s_better",
              "convex.eps_sweep.larger_eps_better", "convex.s_sweep.s26_within_10pct")  # fmt: skip


#: how far above the majority-class rate (the constant predictor's accuracy) a run must end for an ordering to turn on
#: it: one point of accuracy (ijcnn1's clipped runs end within 0.05 point of its 90.5 %, some a few test rows above)
MAJORITY_MARGIN = 0.01


def _check_floors(results: dict, floors: dict[str, float]) -> dict[str, float]:
    if not isinstance(floors, dict) or set(floors) != set(results):
        raise ValueError(f"floors must map each data set of results {sorted(results)} to its majority-class rate, "
                         f"got {floors!r}")  # fmt: skip
    for name, floor in floors.items():
        if not isinstance(floor, (int, float)) or not 0.5 <= float(floor) < 1.0:
            raise ValueError(f"floors[{name!r}] must be a majority-class rate in [0.5, 1), got {floor!r}")
    return {n: float(f) for n, f in floors.items()}


def _comparisons(results: dict[str, dict[str, pd.DataFrame]], floors: dict[str, float]) -> dict[str, list[dict]]:
    """Per qualitative claim, one comparison per (data set, objective): the two accuracies it turns on (``a``, the
    one the claim expects higher or decent, and ``b``), whether it holds, and whether it is decidable: some run it
    turns on ends above the data set's majority-class floor (for s = 26 within 10 points of the noiseless run: the
    s = 26 run itself; for the utility graph: w* at both C, since the ≤ 10 % drop is measured from w*)."""
    objs = list(OBJECTIVES)
    out: dict[str, list[dict]] = {k: [] for k in _ORDERINGS}
    for n, r in results.items():
        floor = floors[n] + MAJORITY_MARGIN
        s_fin = final_accuracies(r["s_sweep"], ["objective", "s"]).set_index(["objective", "s"])
        paper = final_accuracies(r["eps_sweep"], ["objective", "mode", "epsilon_label"]).set_index(
            ["objective", "mode", "epsilon_label"])  # fmt: skip
        s_lo = min(s_fin.index.get_level_values("s"))
        curves = r["curves"]
        for o in objs:
            base = curves[(curves.objective == o) & (curves.sigma == 0)]
            w_star = [float(base[np.isclose(base.C, c)].accuracy.mean()) for c in (0.075, 0.1)]
            if any(np.isnan(w_star)):
                raise ValueError(f"results[{n!r}]['curves'] must hold σ = 0 (w*) at C = 0.075 and 0.1 for {o}")
            sig = (utility_sigma_range(curves, o, 0.075), utility_sigma_range(curves, o, 0.1))
            out["convex.utility.smaller_C_larger_sigma"].append(dict(
                n=n, o=o, holds=bool(sig[0] >= sig[1]), decidable=min(w_star) > floor, a=min(w_star), b=max(w_star),
                what=f"w* {min(w_star):.4f} / {max(w_star):.4f} at C = 0.075 / 0.1"))
            a, b = float(s_fin.loc[(o, 26)].accuracy), float(s_fin.loc[(o, s_lo)].accuracy)
            out["convex.s_sweep.larger_s_better"].append(dict(
                n=n, o=o, holds=a > b, decidable=max(a, b) > floor, a=a, b=b,
                what=f"s = 26 {a:.4f}, s = {s_lo} {b:.4f}"))
            a = float(paper.loc[(o, "paper", 0.1)].accuracy)
            b = float(paper.loc[(o, "paper", 0.04945)].accuracy)
            out["convex.eps_sweep.larger_eps_better"].append(dict(
                n=n, o=o, holds=a >= b, decidable=max(a, b) > floor, a=a, b=b,
                what=f"ε = 0.1 {a:.4f}, ε = 0.04945 {b:.4f}"))
            a = float(s_fin.loc[(o, 26)].accuracy)
            b = float(paper.loc[(o, "non-private, no clipping", np.inf)].accuracy)
            out["convex.s_sweep.s26_within_10pct"].append(dict(
                n=n, o=o, holds=a >= b - 0.10, decidable=a > floor, a=a, b=b,
                what=f"s = 26 {a:.4f} vs noiseless {b:.4f}"))
    return out


def _floor_text(floors: dict[str, float]) -> str:
    """E.g. "ijcnn1 91.5 %, a9a 77.4 %": each data set's floor, its majority-class rate + :data:`MAJORITY_MARGIN`."""
    return ", ".join(f"{n} {100 * (f + MAJORITY_MARGIN):.1f} %" for n, f in floors.items())


def undecided(results: dict[str, dict[str, pd.DataFrame]], floors: dict[str, float]) -> dict[str, str]:
    """``{claim key: reason}`` for the qualitative convex claims the runs cannot decide (issue 41): every comparison
    of the claim (one per data set and objective) turns on runs that end at or below the data set's majority-class
    floor: its majority-class rate ``floors[name]`` (:func:`majority_rate`: the constant predictor's accuracy,
    ijcnn1 90.5 %) + :data:`MAJORITY_MARGIN`, so which run is "better" says nothing.  A claim with a comparison
    above its floor is decided on those (see :func:`claim_values`) and is absent here."""
    floors = _check_floors(results, floors)
    out = {}
    for key, comps in _comparisons(results, floors).items():
        if not any(c["decidable"] for c in comps):
            out[key] = (f"every run it compares ends at or below its data set's majority-class floor (the constant "
                        f"predictor's accuracy + 1 point: {_floor_text(floors)}): "
                        + "; ".join(f"{c['n']} {c['o']}: {c['what']}" for c in comps))  # fmt: skip
    return out


def claim_values(results: dict[str, dict[str, pd.DataFrame]],
                 floors: dict[str, float]) -> dict[str, tuple[object, str]]:  # fmt: skip
    """Our value and note for every key of ``claims.CONVEX_CLAIMS``.

    ``results`` maps each stand-in data set to its frames ``{"curves", "s_sweep", "eps_sweep"}``, ``floors`` each
    to its test set's majority-class rate (:func:`majority_rate`).  Printed numbers of the paper's unnamed data set
    get ``None`` (not-run) with our values in the note.  The qualitative claims are decided per data set and
    objective on the comparisons whose runs end above the majority-class floor (issue 41: a run at the constant
    predictor's accuracy decides no ordering; ijcnn1's clipped runs sit at its 90.5 %); the note names those left
    out.  Where none is above the floor the value is that of all comparisons and :func:`undecided` gives the reason
    the row is inconclusive.
    """
    from dpcore.papers.p000_proactive.claims import CONVEX_CLAIMS

    if not results:
        raise ValueError("results must hold at least one data set")
    floors = _check_floors(results, floors)
    objs = list(OBJECTIVES)
    sig = {(n, o, c): utility_sigma_range(r["curves"], o, c) for n, r in results.items() for o in objs
           for c in (0.1, 0.075)}  # fmt: skip
    paper = {n: final_accuracies(r["eps_sweep"], ["objective", "mode", "epsilon_label"])
             .set_index(["objective", "mode", "epsilon_label"]) for n, r in results.items()}  # fmt: skip

    def acc_note(mode: str, eps: float) -> str:
        parts = []
        for n in results:
            f = paper[n]
            for o in objs:
                row = f.loc[(o, mode, eps)]
                parts.append(
                    f"{n} {o}: {row.accuracy:.4f} ± {row.accuracy_sd:.4f} (balanced {row.balanced_accuracy:.4f})"
                )
        text = "ours (final test accuracy, mean ± sd over seeds): " + "; ".join(parts)
        return text + _MAJORITY_NOTE if "ijcnn1" in results else text

    top = {n: float(r["curves"].sigma.max()) for n, r in results.items()}

    def sigma_note(clip: float) -> str:
        return f"ours, largest σ with ≤ 10% drop at C = {clip:g}: " + "; ".join(
            f"{n} {o}: {sig[(n, o, clip)]:g}" + (" (end of the σ grid)" if sig[(n, o, clip)] == top[n] else "")
            for n in results
            for o in objs
        )

    out: dict[str, tuple[object, str]] = {
        "convex.acc.eps0.04945": (None, acc_note("paper", 0.04945)),
        "convex.acc.eps0.1": (None, acc_note("paper", 0.1)),
        "convex.acc.nonprivate": (
            None,
            acc_note("non-private, C = 0.1", np.inf)
            + " | without clipping: "
            + acc_note("non-private, no clipping", np.inf).split(": ", 1)[1],
        ),
        "convex.utility.C0.1.sigma_max": (None, sigma_note(0.1)),
        "convex.utility.C0.1.sigma_range": (None, sigma_note(0.1)),
        "convex.utility.C0.075.sigma_range": (None, sigma_note(0.075)),
    }
    details = {"convex.utility.smaller_C_larger_sigma": sigma_note(0.075) + " | " + sigma_note(0.1)}
    for key, comps in _comparisons(results, floors).items():
        used = [c for c in comps if c["decidable"]] or comps
        left = [c for c in comps if not c["decidable"]]
        text = "ours: " + "; ".join(f"{c['n']} {c['o']}: {c['what']}" for c in comps)
        if left and len(left) < len(comps):
            text = (f"decided on the comparisons above the majority-class floor (the constant predictor's accuracy + 1 "
                    f"point: {_floor_text(floors)}); left out, at or below it: "
                    + ", ".join(f"{c['n']} {c['o']}" for c in left) + " | " + text)
        scope = scope_phrase(len(used) if left and len(left) < len(comps) else len(comps), len(comps),
                             "configurations (data set × objective)")  # fmt: skip
        text = (f"stand-in data ({', '.join(results)}; the paper names no data set): decided by {scope} | " + text)
        out[key] = (all(c["holds"] for c in used), text + (f" | {details[key]}" if key in details else ""))
    if set(out) != set(CONVEX_CLAIMS):
        raise ValueError(f"claim keys differ: {sorted(set(out) ^ set(CONVEX_CLAIMS))}")
    return out
