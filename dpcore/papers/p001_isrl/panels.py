"""The panels of Figs. 4-9 (Lowy & Razaviyayn, ICLR 2023, §6 and App. I) as :class:`experiments.Panel` objects.

Grids follow App. I: "10 evenly spaced points" are log-spaced in the authors' code; where the
authors' script *sums* the M silo messages (MNIST, insurance MB-SGD) its stepsize grid is
multiplied by M here, because Algorithm 2's server averages them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpcore.federated import datasets as fd
from dpcore.papers.p001_isrl import accounting as isrl
from dpcore.papers.p001_isrl import experiments as fe
from dpcore.validation import check_positive_int

__all__ = ["mnist_panel", "insurance_panel", "obesity_panel", "obesity_grids", "mean_upsilon2", "run_insurance",
           "AUTHORS_BATCH_MEAN", "insurance_batch_mean_mode"]

#: the curve label of ISRL-DP MB-SGD under the authors' insurance clipping (one clip of each silo's minibatch mean)
AUTHORS_BATCH_MEAN = "Noisy MB SGD, authors' batch-mean clipping"


def mnist_panel(
    silos_per_round: int, *, rounds: int, epsilons: Sequence[float], grid_points: int, reps: int, lipschitz: float
) -> fe.Panel:
    """Fig. 4/7 panel (App. I.1): MB-SGD grid e^−6…1 (× M), Local SGD e^−8…e^−1, K at ε = 18, window output."""
    m = check_positive_int("silos_per_round", silos_per_round)
    return fe.Panel(silos_per_round=m, rounds=rounds, epsilons=tuple(epsilons),
                    mb_stepsizes=tuple(fe.log_grid(-6, 0, grid_points, scale=m)),
                    local_stepsizes=tuple(fe.log_grid(-8, -1, grid_points)), reps=reps, lipschitz=lipschitz,
                    batch_epsilon=18.0)


def insurance_panel(
    silos_per_round: int, *, rounds: int, epsilons: Sequence[float], grid_points: int, reps: int,
    clips: Sequence[float],
) -> fe.Panel:
    """Fig. 5/8/9 panel (App. I.2): MB-SGD grid e^−8…e (× M), Local SGD e^−10…1, clip thresholds tuned, K at ε = 3."""
    m = check_positive_int("silos_per_round", silos_per_round)
    return fe.Panel(silos_per_round=m, rounds=rounds, epsilons=tuple(epsilons),
                    mb_stepsizes=tuple(fe.log_grid(-8, 1, grid_points, scale=m)),
                    local_stepsizes=tuple(fe.log_grid(-10, 0, grid_points)), reps=reps, clips=tuple(clips),
                    batch_epsilon=3.0)


def obesity_grids(grid_points: int) -> tuple[list[float], list[float]]:
    """(MB-SGD, Local SGD) stepsizes of App. I.3: ``grid_points`` in e^−7…e^−1, extended by e^−12…e^−9 for both.

    The paper gives Local SGD "additional tuning with smaller stepsizes (especially for small ε)"; at
    ε = 0.5 ISRL-DP MB-SGD's selected stepsize sits at the grid's lower edge e^−7 as well, so the same
    extension is given to both algorithms (tuning only the baseline further would favour it).
    """
    grid = fe.log_grid(-12, -8, 5)[:-1] + fe.log_grid(-7, -1, grid_points)
    return list(grid), list(grid)


def obesity_panel(
    silos_per_round: int, *, rounds: int, epsilons: Sequence[float], grid_points: int, reps: int, lipschitz: float
) -> fe.Panel:
    """Fig. 6 panel (App. I.3): L = 20, K at ε = 9, last iterate as output (the authors' script)."""
    m = check_positive_int("silos_per_round", silos_per_round)
    mb, local = obesity_grids(grid_points)
    return fe.Panel(silos_per_round=m, rounds=rounds, epsilons=tuple(epsilons), mb_stepsizes=tuple(mb),
                    local_stepsizes=tuple(local), reps=reps, lipschitz=lipschitz, batch_epsilon=9.0, output="last")


def mean_upsilon2(trials: fd.FederatedTrials) -> float:
    """Mean over trials of υ*² = (1/N) Σ_i ‖∇F̂_i(w*)‖² at the pooled optimum w* (the heterogeneity of App. I)."""
    return float(np.mean([fd.global_optimum(trials, t)["upsilon2"] for t in range(trials.num_trials)]))


def run_insurance(
    frame, chosen: Sequence[Sequence[int]], *, trials: int, rounds: int, epsilons: Sequence[float], grid_points: int,
    reps: int, clips: Sequence[float], seed: int = 0,
) -> tuple[dict[tuple[int, int], fe.PanelResult], dict[int, float]]:
    """Run the insurance panels ``chosen`` = [(N, M), ...] (Figs. 5, 8, 9) on fresh silos by level of charges.

    Returns ``({(N, M): result}, {N: mean υ*²})``; the silos of N use seed ``seed + N``, the runs
    ``seed + 1000 N + M``.
    """
    results, upsilon2 = {}, {}
    for num_silos, m in (tuple(p) for p in chosen):
        federation = fd.insurance_by_charges(frame, num_silos=num_silos, trials=trials, seed=seed + num_silos)
        panel = insurance_panel(m, rounds=rounds, epsilons=epsilons, grid_points=grid_points, reps=reps, clips=clips)
        results[(num_silos, m)] = fe.run_panel(federation, panel, seed=seed + 1000 * num_silos + m)
        upsilon2[num_silos] = mean_upsilon2(federation)
    return results, upsilon2


def _mode_epsilon(sweep: fe.Sweep, sizes: np.ndarray, batch: np.ndarray, epsilon: float) -> float:
    """The upper bound on ε that ran (:func:`isrl.batch_mean_epsilon_upper`) for the silo with the fewest records."""
    i = np.unravel_index(int(np.argmin(sizes)), sizes.shape)
    n, k = int(sizes[i]), int(batch[i])
    # the σ the sweep ran (its own calibration and noise_scale); σ ∝ L, so L = 1 gives σ/L for every clip threshold
    sigma = fe._silo_noise(sweep, n, k, epsilon, 1.0) * sweep.noise_scale
    return isrl.batch_mean_epsilon_upper(noise_std=sigma, clip=1.0, rounds=sweep.rounds, delta=1.0 / n**2)


def insurance_batch_mean_mode(
    frame, results: dict[tuple[int, int], fe.PanelResult], *, trials: int, seed: int = 0
) -> tuple[dict[tuple[int, int], fe.PanelResult], pd.DataFrame]:
    """The insurance panels ``results`` (from :func:`run_insurance` with the same ``trials`` and ``seed``) with ISRL-DP
    MB-SGD re-run under the authors' clipping: each silo clips its minibatch *mean* once
    (``clip_scope="batch_mean"``; lowya/Private-Federated-Learning-Without-a-Trusted-Server@421aeb6,
    ``DP_FL_insurance_linreg_FINAL.py`` lines 187-190), same silos, grid, σ formula and seeds; the three other
    curves are the panel's own.

    Returns ``({(N, M): result}, table)``: the results carry the mode's curve under the label "Noisy MB SGD" (so
    every claim function reads them unchanged); ``table`` has one row per (N, M, ε) with both MB-SGD means, Local
    SGD's, and ``epsilon_ran_upper``, the ε that the mode's noise gives at most (the claimed ε is the calibration
    target, not what ran: one record moves a clipped mean by 2L, not 2L/K).
    """
    if not isinstance(results, dict) or not results or not all(
            isinstance(r, fe.PanelResult) for r in results.values()):
        raise ValueError("results must be a non-empty {(N, M): PanelResult} from run_insurance")
    out, rows = {}, []
    for (num_silos, m), result in results.items():
        federation = fd.insurance_by_charges(frame, num_silos=num_silos, trials=trials, seed=seed + num_silos)
        sweep = dataclasses.replace(result.panel.sweep("mb-sgd", True), clip_scope="batch_mean")
        run = fe.run_sweep(federation, sweep, seed=seed + 1000 * num_silos + m)  # run_panel's seed of this curve
        chosen = fe.select(run)
        chosen.insert(0, "curve", fe.LABELS[("mb-sgd", True)])
        curve = fe.summarize(chosen)
        curve.insert(0, "curve", fe.LABELS[("mb-sgd", True)])
        keep = result.curves["curve"] != fe.LABELS[("mb-sgd", True)]
        out[(num_silos, m)] = dataclasses.replace(
            result, selected=pd.concat([chosen, result.selected[result.selected["curve"] != chosen["curve"][0]]],
                                       ignore_index=True),
            curves=pd.concat([curve, result.curves[keep]], ignore_index=True),
            seconds={**result.seconds, AUTHORS_BATCH_MEAN: run.seconds})
        for eps in sweep.epsilons:
            rows.append({"N": num_silos, "M": m, "epsilon": eps,
                         "mb_sgd_per_example": result.mean_at(fe.LABELS[("mb-sgd", True)], eps),
                         "mb_sgd_batch_mean": out[(num_silos, m)].mean_at(fe.LABELS[("mb-sgd", True)], eps),
                         "local_sgd": result.mean_at(fe.LABELS[("local-sgd", True)], eps),
                         "epsilon_ran_upper": _mode_epsilon(sweep, federation.sizes, run.batch_sizes, eps)})
    return out, pd.DataFrame(rows)
