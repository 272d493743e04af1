"""Toy computations of paper 002 (Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix").

* **Fig. 1** is a schematic in the paper ("each node represents an intermediate state, the dashed lines represent
  the mixing, the arrows represent gradient descent, the green area represents the approximated trajectory
  envelope").  :func:`modelmix_trajectory` runs Algorithm 1 itself on a 2-D noisy quadratic and records every
  quantity the figure shows: the states, the two states each step mixes after lines 6–8 (the corners of that
  step's envelope box: the coordinate-wise convex combinations of w_{k−1} and w_{k−2}), the mixed point and the
  gradient step.  :func:`fig1_checks` verifies the properties the figure illustrates.
* **Example 3.1** (§3.3): f(w, x) = (w − x)²/2 on x ∈ {−20, −10, 90}.  :func:`clipped_gd_path` iterates the
  expected per-sample-clipped gradient (the quantity the example computes) and :func:`clipped_sgd_path` the
  stochastic version; :func:`clipped_limit` is where clipped descent stops (the zero of the expected clipped
  gradient), :func:`smallest_unbiased_clip` the smallest c whose limit is the optimum w* = 20.  With c = 1 the
  limit is the median −10 whatever the start: "clipped SGD could fail to converge regardless of the magnitude
  of the full-batch gradient" (§3.3, after Example 3.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from dpcore.papers.p002_modelmix.clipping_bias import EXAMPLE_31_POINTS, clipped_mean_gradient
from dpcore.validation import check_finite, check_nonnegative, check_positive, check_positive_int

__all__ = [
    "FIG1",
    "ModelMixTrace",
    "quadratic_gradient",
    "modelmix_trajectory",
    "fig1_checks",
    "mixing_mean",
    "mixing_mean_check",
    "trace_table",
    "clipped_gd_path",
    "clipped_sgd_path",
    "clipped_limit",
    "smallest_unbiased_clip",
    "example31_simulation",
    "example31_sampled",
    "example31_tables",
    "fig1_trace",
    "fig1_figure",
    "example31_figure",
]

# The 2-D toy of Fig. 1: F(w) = (w − w*)ᵀ H (w − w*)/2, noisy gradient steps, a few iterations.
FIG1: dict[str, object] = {
    "hessian": ((1.0, 0.3), (0.3, 0.6)),
    "optimum": (0.0, 0.0),
    "w_minus1": (-3.4, 2.6),
    "w0": (-2.6, 2.4),
    "steps": 7,
    "lr": 0.5,
    "tau": 0.1,
    "noise": 0.5,
    "seed": 5,
}


@dataclass(frozen=True)
class ModelMixTrace:
    """One run of Algorithm 1.  ``states[k + 1]`` is w_k for k = −1..T; for step k = 1..T (row k − 1):
    ``corners`` holds (w_{k−1}, w_{k−2}) after lines 6–8, ``alpha`` the mixing weights, ``mixed`` the mixed
    state α∘w_{k−1} + (1 − α)∘w_{k−2} and ``update`` the step η(G_{k−1} + Δ_k), so w_k = mixed − update."""

    states: np.ndarray
    corners: np.ndarray
    alpha: np.ndarray
    mixed: np.ndarray
    update: np.ndarray
    tau: float


def _vector(name: str, value: Sequence[float], d: int | None = None) -> np.ndarray:
    v = np.asarray(value, dtype=float)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)) or (d is not None and v.size != d):
        want = f"length {d}" if d is not None else "non-empty"
        raise ValueError(f"{name} must be a 1-D sequence of finite numbers ({want}), got {value!r}")
    return v


def quadratic_gradient(w: Sequence[float], hessian: Sequence[Sequence[float]], optimum: Sequence[float]) -> np.ndarray:
    """∇F(w) = H (w − w*) of F(w) = (w − w*)ᵀ H (w − w*)/2 (H symmetric positive definite)."""
    h = np.asarray(hessian, dtype=float)
    x = _vector("w", w)
    if h.shape != (x.size, x.size) or not np.allclose(h, h.T) or np.linalg.eigvalsh(h).min() <= 0:
        raise ValueError(f"hessian must be a symmetric positive definite {x.size}x{x.size} matrix, got {hessian!r}")
    return h @ (x - _vector("optimum", optimum, x.size))


def modelmix_trajectory(
    hessian: Sequence[Sequence[float]],
    optimum: Sequence[float],
    w_minus1: Sequence[float],
    w0: Sequence[float],
    *,
    steps: int,
    lr: float,
    tau: float,
    noise: float = 0.0,
    seed: int = 0,
) -> ModelMixTrace:
    """Algorithm 1 (DP-SGD with ModelMix) on F(w) = (w − w*)ᵀH(w − w*)/2 with gradient noise N(0, noise²·I).

    Exactly as printed: the gradient at the *unmixed* w_{k−1}; lines 6–8 push apart, in place, every coordinate
    whose gap |w_{k−1}(j) − w_{k−2}(j)| is below τ by τ/2 on each side (with sign(0) = +1, as the authors'
    ScatterNet code, so equal coordinates are separated too); α_k(j) ~ U[0, 1]; eq. (9)
    w_k = α∘w_{k−1} + (1 − α)∘w_{k−2} − η(G_{k−1} + Δ_k).  No clipping (the toy has no per-sample gradients).
    """
    steps = check_positive_int("steps", steps)
    lr, tau, noise = check_positive("lr", lr), check_nonnegative("tau", tau), check_nonnegative("noise", noise)
    prev2 = _vector("w_minus1", w_minus1).copy()
    prev1 = _vector("w0", w0, prev2.size).copy()
    quadratic_gradient(prev1, hessian, optimum)  # validates hessian and optimum
    rng = np.random.default_rng(seed)
    states, corners, alphas, mixed, updates = [prev2.copy(), prev1.copy()], [], [], [], []
    for _ in range(steps):
        grad = quadratic_gradient(prev1, hessian, optimum) + noise * rng.standard_normal(prev1.size)
        diff = prev1 - prev2
        close = np.abs(diff) < tau
        sign = np.where(diff >= 0, 1.0, -1.0)
        prev1 = prev1 + close * sign * tau / 2
        prev2 = prev2 - close * sign * tau / 2
        alpha = rng.uniform(size=prev1.size)
        mix = alpha * prev1 + (1 - alpha) * prev2
        new = mix - lr * grad
        corners.append(np.stack([prev1, prev2]))
        alphas.append(alpha)
        mixed.append(mix)
        updates.append(lr * grad)
        states.append(new.copy())
        prev2, prev1 = prev1, new
    return ModelMixTrace(np.array(states), np.array(corners), np.array(alphas), np.array(mixed), np.array(updates), tau)


def fig1_trace(**overrides: object) -> ModelMixTrace:
    """The trajectory drawn as Fig. 1: :func:`modelmix_trajectory` with :data:`FIG1` (keys may be overridden)."""
    unknown = sorted(set(overrides) - set(FIG1))
    if unknown:
        raise ValueError(f"unknown Fig. 1 settings {unknown}; allowed: {sorted(FIG1)}")
    p = {**FIG1, **overrides}
    return modelmix_trajectory(p["hessian"], p["optimum"], p["w_minus1"], p["w0"], steps=p["steps"], lr=p["lr"],
                               tau=p["tau"], noise=p["noise"], seed=p["seed"])  # fmt: skip


def fig1_checks(trace: ModelMixTrace, *, atol: float = 1e-12) -> dict[str, bool]:
    """What Fig. 1 illustrates, checked on a trace (claim key -> bool):

    * ``fig1.mixed_in_envelope``: every mixed point lies in its step's envelope box (the green area);
    * ``fig1.gap_at_least_tau``: after lines 6–8 the two mixed states differ by ≥ τ in every coordinate;
    * ``fig1.step_from_mixed``: every arrow starts at the mixed point: w_k = mixed_k − η(G + Δ).
    """
    check_nonnegative("atol", atol)
    lo, hi = trace.corners.min(axis=1), trace.corners.max(axis=1)
    inside = bool(np.all((trace.mixed >= lo - atol) & (trace.mixed <= hi + atol)))
    gap = bool(np.all(np.abs(trace.corners[:, 0] - trace.corners[:, 1]) >= trace.tau - atol))
    steps = bool(np.allclose(trace.states[2:], trace.mixed - trace.update, rtol=0, atol=max(atol, 1e-12)))
    return {"fig1.mixed_in_envelope": inside, "fig1.gap_at_least_tau": gap, "fig1.step_from_mixed": steps}


def mixing_mean(a: Sequence[float], b: Sequence[float], *, draws: int = 20_000, seed: int = 0) -> np.ndarray:
    """Monte-Carlo mean of the mixed state α∘a + (1 − α)∘b, α ~ U[0, 1]^d: ≈ (a + b)/2 (the paper's eq. (10))."""
    a = _vector("a", a)
    b = _vector("b", b, a.size)
    alpha = np.random.default_rng(seed).uniform(size=(check_positive_int("draws", draws), a.size))
    return (alpha * a + (1 - alpha) * b).mean(axis=0)


def trace_table(trace: ModelMixTrace):
    """The trace as a table, one row per step k: the two mixed states (after lines 6–8), α, the mixed state,
    the step η(G + Δ) and the new state w_k (2-D: columns ``..._1`` and ``..._2``)."""
    import pandas as pd

    if trace.states.shape[1] != 2:
        raise ValueError(f"trace_table needs a 2-D trace, got dimension {trace.states.shape[1]}")
    cols: dict[str, np.ndarray] = {"k": np.arange(1, len(trace.mixed) + 1)}
    for name, arr in (("w_prev1", trace.corners[:, 0]), ("w_prev2", trace.corners[:, 1]), ("alpha", trace.alpha),
                      ("mixed", trace.mixed), ("update", trace.update), ("w_k", trace.states[2:])):  # fmt: skip
        cols[f"{name}_1"], cols[f"{name}_2"] = arr[:, 0], arr[:, 1]
    return pd.DataFrame(cols)


def mixing_mean_check(trace: ModelMixTrace, *, draws: int = 20_000, seed: int = 0) -> bool:
    """Whether the Monte-Carlo mean of mixing the trace's last pair lies within 4 standard errors
    (|a − b|/√(12·draws) per coordinate) of the midpoint (a + b)/2: the paper's "in expectation" (before eq. (10))."""
    a, b = trace.corners[-1]
    mean = mixing_mean(a, b, draws=draws, seed=seed)
    se = np.abs(a - b) / np.sqrt(12 * draws)
    return bool(np.all(np.abs(mean - (a + b) / 2) <= 4 * se + 1e-12))


# ------------------------------------------------------------------------------------------------------------
# Example 3.1: clipped descent on f(w, x) = (w − x)²/2
# ------------------------------------------------------------------------------------------------------------
def clipped_gd_path(
    w0: float, *, clip: float, lr: float, steps: int, xs: Sequence[float] = EXAMPLE_31_POINTS
) -> np.ndarray:
    """w_{k+1} = w_k − η·mean_i CP(w_k − x_i, c): descent along the *expected* clipped gradient (steps + 1 values)."""
    w = check_finite("w0", w0)
    lr, steps = check_positive("lr", lr), check_positive_int("steps", steps)
    path = [w]
    for _ in range(steps):
        w = w - lr * clipped_mean_gradient(w, xs, clip=clip)
        path.append(w)
    return np.array(path)


def clipped_sgd_path(
    w0: float,
    *,
    clip: float,
    lr: float,
    steps: int,
    batch: int = 1,
    seed: int = 0,
    xs: Sequence[float] = EXAMPLE_31_POINTS,
) -> np.ndarray:
    """Clipped SGD: each step draws ``batch`` points uniformly with replacement and averages their clipped
    gradients CP(w − x, c) = (w − x)·min(1, c/|w − x|) (Section 2, eq. (6) without noise); steps + 1 values."""
    w = check_finite("w0", w0)
    c, lr = check_positive("clip", clip), check_positive("lr", lr)
    steps, batch = check_positive_int("steps", steps), check_positive_int("batch", batch)
    x = np.asarray(xs, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"xs must be a non-empty 1-D sequence of finite numbers, got {xs!r}")
    draws = x[np.random.default_rng(seed).integers(0, x.size, size=(steps, batch))]
    path = np.empty(steps + 1)
    path[0] = w
    for k in range(steps):
        g = w - draws[k]
        w = w - lr * float(np.mean(g * np.minimum(1.0, c / np.maximum(np.abs(g), 1e-300))))
        path[k + 1] = w
    return path


def clipped_limit(clip: float, xs: Sequence[float] = EXAMPLE_31_POINTS) -> float:
    """Where clipped descent stops: the zero of w ↦ mean_i CP(w − x_i, c), non-decreasing in w.

    Each CP(w − x_i, c) is non-decreasing in w, negative below min x and positive above max x, so the zero lies in
    [min x, max x]; ``brentq`` finds it (to 1e-12).  Where the function is zero on an interval (only when c is
    exactly a gap between points) the returned zero is one point of it.
    """
    check_positive("clip", clip)
    x = np.asarray(xs, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"xs must be a non-empty 1-D sequence of finite numbers, got {xs!r}")
    lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        return lo
    return float(brentq(lambda w: clipped_mean_gradient(w, xs, clip=clip), lo, hi, xtol=1e-12, rtol=1e-14))


def smallest_unbiased_clip(xs: Sequence[float] = EXAMPLE_31_POINTS, *, tol: float = 1e-9) -> float:
    """The smallest c with clipped_limit(c) = w* = mean(x), by bisection on c (monotone here): for the example
    it is max_i |w* − x_i| = 70, above the per-sample gradient std 49.7 the example quotes."""
    check_positive("tol", tol)
    x = np.asarray(xs, dtype=float)
    optimum = float(np.mean(x))
    lo, hi = tol, float(np.max(np.abs(x - optimum))) * 2 + 1.0
    if abs(clipped_limit(hi, xs) - optimum) > 1e-9:
        raise ValueError(f"clipping at c = {hi} does not reach the optimum {optimum}: xs={xs!r}")
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if abs(clipped_limit(mid, xs) - optimum) <= 1e-9 else (mid, hi)
    return hi


def example31_simulation(
    *, starts: Sequence[float] = (-50.0, 0.0, 20.0, 60.0, 150.0), lr: float = 0.5, steps: int = 2000
) -> dict[str, float | bool]:
    """The simulated Example 3.1 (claim key -> value): where descent along the expected clipped gradient ends
    for c = 1 and c = 100 (the same from every start), whether c = 1 ends at the median −10 from every start
    (including the optimum 20 itself), and the smallest unbiased clipping threshold."""
    ends = {c: [float(clipped_gd_path(w, clip=c, lr=lr, steps=steps)[-1]) for w in starts] for c in (1.0, 100.0)}
    return {
        "ex3.1.sim.limit.c1": float(np.median(ends[1.0])),
        "ex3.1.sim.limit.c100": float(np.median(ends[100.0])),
        "ex3.1.sim.c1.wrong_from_every_start": bool(np.allclose(ends[1.0], -10.0, atol=1e-6)),
        "ex3.1.sim.smallest_unbiased_clip": smallest_unbiased_clip(),
    }


# ------------------------------------------------------------------------------------------------------------
# figures
# ------------------------------------------------------------------------------------------------------------
def fig1_figure(trace: ModelMixTrace, *, hessian=FIG1["hessian"], optimum=FIG1["optimum"]):
    """Fig. 1 from a real trajectory: states (nodes, labelled w_k), mixing (dashed, from the two states to the mixed
    point), gradient steps (arrows, from the mixed point to the next state), envelope boxes (green), F's contours."""
    from matplotlib.patches import Rectangle

    from dpcore.plots import new_axes

    fig, axes = new_axes(1, 1, width=7.6, height=4.6)
    ax = axes[0, 0]
    pts = np.vstack([trace.states, trace.corners.reshape(-1, trace.states.shape[1])])
    (x0, y0), (x1, y1) = pts.min(axis=0) - 0.45, pts.max(axis=0) + 0.45
    opt = _vector("optimum", optimum, 2)
    x0, y0, x1, y1 = min(x0, opt[0] - 0.3), min(y0, opt[1] - 0.3), max(x1, opt[0] + 0.3), max(y1, opt[1] + 0.3)
    gx, gy = np.meshgrid(np.linspace(x0, x1, 200), np.linspace(y0, y1, 200))
    h = np.asarray(hessian, dtype=float)
    dx, dy = gx - opt[0], gy - opt[1]
    f = 0.5 * (h[0, 0] * dx**2 + 2 * h[0, 1] * dx * dy + h[1, 1] * dy**2)
    ax.contour(gx, gy, f, levels=8, colors="0.75", linewidths=0.7, zorder=0)
    green = "#2ca02c"
    for k, (a, b) in enumerate(trace.corners):
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        ax.add_patch(Rectangle(tuple(lo), *(hi - lo), facecolor=green, alpha=0.22, edgecolor="none", zorder=1,
                               label="envelope (coordinate-wise mixtures)" if k == 0 else None))  # fmt: skip
        m = trace.mixed[k]
        for corner in (a, b):
            ax.plot([corner[0], m[0]], [corner[1], m[1]], "--", color="0.35", linewidth=0.9, zorder=2,
                    label="mixing" if k == 0 and corner is a else None)  # fmt: skip
        ax.plot(*m, "o", color="0.35", markersize=3.5, zorder=3, label="mixed state" if k == 0 else None)
        ax.annotate("", xy=tuple(trace.states[k + 2]), xytext=tuple(m), zorder=4,
                    arrowprops={"arrowstyle": "-|>", "color": "C0", "linewidth": 1.4})  # fmt: skip
    ax.plot([], [], color="C0", linewidth=1.4, label="gradient step η(G + Δ)")
    ax.plot(trace.states[:, 0], trace.states[:, 1], "o", color="black", markersize=6, zorder=5, label="state $w_k$")
    for k, s in enumerate(trace.states):
        ax.annotate(f"$w_{{{k - 1}}}$", tuple(s), xytext=(5, 4), textcoords="offset points", fontsize=8, zorder=6)
    ax.plot(*opt, marker="*", color="C3", markersize=12, linestyle="none", zorder=5, label="optimum $w^*$")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.set_xlabel("$w(1)$")
    ax.set_ylabel("$w(2)$")
    fig.legend(loc="outside right upper", fontsize=7, frameon=False)
    ax.set_title(f"Fig. 1: ModelMix (Algorithm 1) on a 2-D quadratic, η = {FIG1['lr']:g}, τ = {trace.tau:g}, "
                 f"{len(trace.mixed)} steps", fontsize=9)  # fmt: skip
    return fig


def example31_sampled(*, draws: int = 200_000, seed: int = 0, clip: float = 1.0) -> dict[str, float]:
    """Example 3.1's printed numbers by sampling, as the example describes: "we randomly sample x' from
    {x1, x2, x3} and compute the gradient of f(w, x')".  Returns (claim key -> value) the standard deviation of
    the sampled gradients (pooled over w = 0 and w = 20: "49.7 for any w") and the mean clipped gradient at w = 20
    and w = 0 (printed: 1/3 at both), each from ``draws`` draws per w."""
    draws = check_positive_int("draws", draws, minimum=2)
    c = check_positive("clip", clip)
    rng = np.random.default_rng(seed)
    x = np.asarray(EXAMPLE_31_POINTS)
    out, deviations = {}, []
    for w in (20.0, 0.0):
        g = w - x[rng.integers(0, x.size, size=draws)]
        deviations.append(g - g.mean())
        out[f"ex3.1.sim.sampled_clipped_grad.w{w:g}"] = float(np.mean(g * np.minimum(1.0, c / np.abs(g))))
    pooled = np.concatenate(deviations)
    return {"ex3.1.sim.sampled_grad_std": float(np.sqrt(np.mean(pooled**2))), **out}


EX31_SGD: dict[str, float | int] = {"lr": 0.1, "steps": 2000, "batch": 16}


def example31_tables(
    *, clips: Sequence[float] | None = None, sgd_starts: Sequence[float] = (0.0, 20.0), seed: int = 0
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Data of the Example 3.1 figure: ({"clip", "limit"}: where clipped descent stops against c) and clipped-SGD
    paths (:data:`EX31_SGD`: batch 16, η = 0.1) for c = 1 and c = 100 from each start, keyed "c=..,w0=..".

    The SGD paths use seeds ``seed``, ``seed + 1``, ...: one per path."""
    clip_grid = np.asarray(clips if clips is not None else np.linspace(0.5, 120.0, 240), dtype=float)
    if clip_grid.ndim != 1 or clip_grid.size == 0 or not np.all(clip_grid > 0):
        raise ValueError(f"clips must be a non-empty 1-D sequence of positive numbers, got {clips!r}")
    limits = {"clip": clip_grid, "limit": np.array([clipped_limit(float(c)) for c in clip_grid])}
    paths, i = {}, 0
    for c in (1.0, 100.0):
        for w0 in sgd_starts:
            paths[f"c={c:g},w0={w0:g}"] = clipped_sgd_path(w0, clip=c, seed=seed + i, **EX31_SGD)
            i += 1
    return limits, paths


def example31_figure(limits: dict[str, np.ndarray], paths: dict[str, np.ndarray]):
    """Three panels: (a) c = 1: the expected clipped gradient against w with F'(w) (1/3 at w = 0 and at w = 20);
    (b) where clipped descent stops against c; (c) clipped-SGD paths for c = 1 and c = 100."""
    from dpcore.plots import new_axes, series_style

    fig, axes = new_axes(3, 1, width=13.5, height=3.8)
    ax = axes[0, 0]
    w = np.linspace(-70.0, 100.0, 851)
    ax.plot(w, [clipped_mean_gradient(v, EXAMPLE_31_POINTS, clip=1.0) for v in w], color="C0", linewidth=2,
            label="E[clipped gradient], c = 1")  # fmt: skip
    ax.set_ylabel("E[CP(w − x, 1)]")
    right = ax.twinx()
    right.plot(w, w - 20.0, "--", color="C3", linewidth=1.4, label="F'(w) = w − 20 (right axis)")
    right.set_ylabel("F'(w)")
    right.grid(False)
    for v, offset, ha in ((0.0, (-4, 12), "right"), (20.0, (6, -16), "left")):
        g = clipped_mean_gradient(v, EXAMPLE_31_POINTS, clip=1.0)
        ax.plot(v, g, "o", color="black", zorder=5)
        ax.annotate(f"w = {v:g}: {g:.3f}, F' = {v - 20:g}", (v, g), xytext=offset, textcoords="offset points",
                    fontsize=7, ha=ha)  # fmt: skip
    ax.axhline(0.0, color="0.5", linewidth=0.8)
    ax.set_xlabel("w")
    ax.set_title("(a) c = 1: expected clipped gradient vs F'", fontsize=9)
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="lower right")
    ax = axes[0, 1]
    ax.plot(limits["clip"], limits["limit"], color="C0", linewidth=2, label="where clipped descent stops")
    ax.axhline(20.0, color="C3", linestyle="--", linewidth=1.2, label="optimum w* = 20")
    ax.axhline(-10.0, color="0.5", linestyle=":", linewidth=1.2, label="median x = −10")
    ax.axvline(49.67, color="C2", linestyle="-.", linewidth=1.2, label="gradient-noise std 49.7")
    ax.axvline(70.0, color="C4", linestyle="-.", linewidth=1.2, label="max |w* − x| = 70")
    ax.set_xlabel("clipping threshold c")
    ax.set_ylabel("limit of clipped descent")
    ax.set_title("(b) the clipping bias vanishes only for c ≥ 70", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax = axes[0, 2]
    for i, (name, path) in enumerate(paths.items()):
        style = series_style(i, n=len(paths), markers=False)
        ax.plot(np.arange(path.size), path, label=name.replace(",", ", "), **style)
    ax.axhline(20.0, color="C3", linestyle="--", linewidth=1.0)
    ax.set_xlabel("iteration")
    ax.set_ylabel("w")
    ax.set_title(f"(c) clipped SGD, batch {EX31_SGD['batch']}, η = {EX31_SGD['lr']:g}", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2, frameon=False)
    fig.suptitle("Example 3.1: f(w, x) = (w − x)²/2, x ∈ {−20, −10, 90}: clipping below the noise scale converges "
                 "to the wrong point", fontsize=10)  # fmt: skip
    return fig
