"""Generate tests/accounting/pld_lower_reference.json: certified lower bounds on the true ε of DP-SGD configurations,
from dp_accounting's OPTIMISTIC privacy loss distribution (issue 26 §2; used by
tests/accounting/test_pld_upper_bound.py).

For each (σ, q, T) the script builds dp_accounting's optimistic PLD of the Poisson-subsampled Gaussian
(``from_gaussian_mechanism(..., pessimistic_estimate=False)``, privacy-bucket rounding of every loss DOWN, so its
hockey-stick divergence δ_opt(ε) is at most the true δ(ε) at every ε), composes it T times
(``self_compose``) and, for each δ, stores

    eps_lower = sup{ε >= 0 : δ_opt(ε) > δ + η},   η = round-off allowance of a T-fold float64 FFT composition,

so that the true ε(δ) >= eps_lower: at any ε below it the optimistic δ already exceeds δ by more than the
composition's round-off.  δ_opt(ε) is read from dp_accounting's PMF arrays here, in log space (dp_accounting's own
``get_epsilon_for_delta`` accumulates Σ p·e^{-ℓ} in linear space; for losses above ~745 nats e^{-ℓ} underflows and
it returns the first loss whose tail mass exceeds δ, an over-estimate -- e.g. 2855.09 at q = 0.5, σ = 0.3,
T = 1000, δ = 1e-8, where its own PMF has δ(2854.17) = 9.97e-9 < 1e-8).

The discretisation interval of the reference is the one :func:`dpcore.accounting.pld.pld_epsilon` uses for the
setting (1e-4, widened for wide loss ranges): any grid gives a valid lower bound, a coarse one a looser one.

Run from the repository root (about ten minutes on one core):

    .venv/bin/python tests/make_pld_lower_reference.py
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import dp_accounting
import numpy as np
from dp_accounting.pld import privacy_loss_distribution as dp_pld

OUT = Path(__file__).parent / "accounting" / "pld_lower_reference.json"
SEED = 26
RANDOM_SETTINGS = 20  # (σ, q, T) drawn at random, a third with σ < 0.5 ...
DELTAS_PER_SETTING = 9  # ... each at this many δ (one composed PLD serves them all: the test stays fast)
#: Explicit extreme settings (σ, q, T, deltas): the issue's large-ε case, the long RDP composition, T = 10^6.
EXTREME = [
    (0.3, 0.5, 1000, [1e-8, 1e-6, 1e-5, 1e-3]),
    (3.536, 1.776e-4, 686_631, [3.49e-4, 1e-5, 1e-7, 1e-2]),
    (0.3, 0.5, 1_000_000, [1e-8, 1e-6, 1e-5, 1e-3]),
    (0.2, 1.0, 1_000_000, [1e-6, 1e-5, 1e-3, 1e-2]),
    (1.1, 256 / 60000, 1_000_000, [1e-8, 1e-6, 1e-5, 1e-3]),
]


def roundoff(steps: int) -> float:
    """Round-off allowance of a T-fold float64 FFT composition (as the accountant charges it, doubled)."""
    return 2.0 * (10.0 * steps + 1000.0) * np.finfo(float).eps


class LogSpaceDelta:
    """δ(ε) = inf_mass + Σ_{ℓ > ε} p_ℓ (1 − e^{ε−ℓ}) of a PMF on a grid, with suffix sums in log space."""

    def __init__(self, pmf) -> None:
        pmf = pmf.to_dense_pmf()
        probs = np.maximum(np.asarray(pmf._probs, dtype=float), 0.0)  # dp_accounting 0.6 internals (pinned)
        self.losses = (np.arange(probs.size) + pmf._lower_loss) * pmf._discretization
        self.inf_mass = float(pmf._infinity_mass)
        self.upper = np.cumsum(probs[::-1])[::-1]  # Σ_{j >= i} p_j
        with np.errstate(divide="ignore"):
            self.log_lower = np.logaddexp.accumulate((np.log(probs) - self.losses)[::-1])[::-1]  # log Σ p e^{-ℓ}

    def __call__(self, eps: float) -> float:
        i = int(np.searchsorted(self.losses, eps, side="right"))  # first loss > ε
        if i >= self.losses.size:
            return self.inf_mass
        return self.inf_mass + float(self.upper[i]) - math.exp(min(eps + float(self.log_lower[i]), 700.0))

    @property
    def top(self) -> float:
        return float(self.losses[-1])


def eps_lower(deltas: list[LogSpaceDelta], delta: float, margin: float) -> float:
    """sup{ε >= 0 : max_d d(ε) > δ + margin} by bisection (δ(ε) is non-increasing)."""

    def over(e: float) -> bool:
        return max(d(e) for d in deltas) > delta + margin

    if not over(0.0):
        return 0.0
    lo, hi = 0.0, max(d.top for d in deltas) + 1.0
    if over(hi):
        return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if over(mid) else (lo, mid)
    return lo


def reference(sigma: float, q: float, steps: int, grid: float, deltas: list[float]) -> list[float]:
    one = dp_pld.from_gaussian_mechanism(
        sigma, sampling_prob=q, pessimistic_estimate=False, use_connect_dots=False, value_discretization_interval=grid
    )
    composed = one.self_compose(steps)
    pmfs = [LogSpaceDelta(composed._pmf_remove)]  # dp_accounting 0.6 internals (pinned)
    if composed._pmf_add is not None:
        pmfs.append(LogSpaceDelta(composed._pmf_add))
    return [eps_lower(pmfs, d, roundoff(steps)) for d in deltas]


def random_settings(rng: np.random.Generator) -> list[tuple[float, float, int, list[float]]]:
    from dpcore.accounting.pld import min_delta

    out = []
    for i in range(RANDOM_SETTINGS):
        small = i % 3 == 0  # a third with σ < 0.5
        sigma = float(
            np.exp(rng.uniform(math.log(0.2), math.log(0.5)) if small else rng.uniform(math.log(0.5), math.log(10)))
        )
        q = 1.0 if rng.random() < 0.15 else float(np.exp(rng.uniform(math.log(1e-4), 0.0)))
        steps = int(np.exp(rng.uniform(0.0, math.log(1e6))))
        low = max(1e-10, 10 * min_delta(steps))
        deltas = sorted(float(np.exp(rng.uniform(math.log(low), math.log(1e-2)))) for _ in range(DELTAS_PER_SETTING))
        out.append((round(sigma, 4), float(f"{q:.4g}"), steps, [float(f"{d:.3g}") for d in deltas]))
    return out


def main() -> None:
    from dpcore.accounting import pld

    rng = np.random.default_rng(SEED)
    cases = []
    for sigma, q, steps, deltas in EXTREME + random_settings(rng):
        try:
            grid = pld._composed(sigma, q, steps, pld.GRID)[0].grid  # the accountant's grid for this setting
        except ValueError as exc:  # outside the accountant's stated range: not a comparison
            print(f"skip σ={sigma} q={q} T={steps}: {exc}", file=sys.stderr)
            continue
        lower = reference(sigma, q, steps, grid, deltas)
        cases.append(dict(sigma=sigma, sample_rate=q, steps=steps, grid=grid, deltas=deltas, eps_lower=lower))
        print(f"σ={sigma} q={q} T={steps} grid={grid:g}: {lower}", file=sys.stderr, flush=True)
    OUT.parent.mkdir(exist_ok=True)
    meta = dict(
        description=__doc__.split("\n\n")[0],
        generator="tests/make_pld_lower_reference.py",
        dp_accounting=dp_accounting.__version__ if hasattr(dp_accounting, "__version__") else "0.6.0",
        seed=SEED,
        margin="2·(10·T + 1000)·2^-52 added to δ",
    )
    OUT.write_text(json.dumps(dict(meta=meta, cases=cases), indent=1) + "\n")
    print(f"wrote {OUT}: {sum(len(c['deltas']) for c in cases)} configurations", file=sys.stderr)


if __name__ == "__main__":
    main()
