"""How fast the front door of dpcore's accounting is, against dp_accounting, in one run (issue 52).

Measured in fresh child processes, each once with one BLAS/OpenMP thread (``OMP_NUM_THREADS=1`` and friends, as
the runner and the tests pin) and once with the environment's default thread count (a user's plain shell):

* import: ``python -X importtime -c "import dpcore.accounting"`` (the cumulative time of that line), the same
  for ``import dpcore`` and ``import dp_accounting``, and whether torch / dp_accounting got loaded;
* ε of the README's setting (σ = 1.1, q = 256/60000, 60 epochs, δ = 1e-5) by :func:`dpcore.dpsgd_epsilon`
  against ``dp_accounting.pld.PLDAccountant`` on the same T;
* calibration to ε = 3 on the same setting: :func:`dpcore.dpsgd_noise_multiplier` against
  ``dp_accounting.calibrate_dp_mechanism`` (PLD, bracket [0.5, 10], tol 1e-3 on σ).

Times are the best of ``REPEATS`` calls with every cache cleared (one call where the first took over 5 s).
Ratios are taken within one child process, so a machine shared with other jobs moves both sides together.

    .venv/bin/python benchmarks/accounting_speed.py            # prints a Markdown table and JSON
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
REPEATS = 3
SLOW = 5.0
#: The README's setting: MNIST, Opacus / TF Privacy example.
SIGMA, BATCH, N, EPOCHS, DELTA, TARGET = 1.1, 256, 60000, 60, 1e-5, 3.0


def _env(one_thread: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env["PYTHONPATH"] = str(ROOT)
    if one_thread:
        env.update({k: "1" for k in THREAD_VARS})
    return env


def import_time(module: str, one_thread: bool) -> dict[str, object]:
    """Cumulative import time (s) of ``module`` by ``-X importtime`` (median of 3 fresh interpreters), and which
    heavy packages it loaded."""
    code = f"import sys, {module}; print(sorted(m for m in ('torch', 'dp_accounting', 'scipy') if m in sys.modules))"
    times, loaded = [], ""
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, env=_env(one_thread),
            cwd=ROOT, check=True,
        )  # fmt: skip
        top = [ln for ln in out.stderr.splitlines() if re.search(rf"\|\s*{re.escape(module)}$", ln)]
        times.append(int(top[-1].split("|")[1]) / 1e6)
        loaded = out.stdout.strip()
    times.sort()
    return {"seconds": times[1], "loaded": loaded}


def _best(fn, clear) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    best, value = float("inf"), None
    for _ in range(REPEATS):
        clear()
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
        if best > SLOW:
            break
    return best, value


def child() -> None:
    """Run in a child process: time ε and calibration, dpcore against dp_accounting, print JSON."""
    import dp_accounting
    from dp_accounting import pld

    import dpcore.accounting as acc
    from dpcore.accounting import pld as ours

    def clear() -> None:
        ours.cache_clear()
        for name in ("cache_clear",):
            for mod in ("dpcore.accounting.registry", "dpcore.accounting.pld_backend"):
                fn = getattr(sys.modules.get(mod), name, None)
                if fn is not None:
                    fn()

    def nothing() -> None:
        pass

    q = BATCH / N
    eps_t, eps = _best(lambda: acc.dpsgd_epsilon(SIGMA, sample_rate=q, epochs=EPOCHS, delta=DELTA), clear)
    steps = _steps(q)

    def event(sigma: float) -> dp_accounting.DpEvent:
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
        )

    def dp_eps() -> float:
        a = pld.PLDAccountant()
        a.compose(event(SIGMA))
        return float(a.get_epsilon(DELTA))

    dp_eps_t, dp_value = _best(dp_eps, nothing)
    cal_t, cal = _best(lambda: acc.dpsgd_noise_multiplier(TARGET, sample_rate=q, epochs=EPOCHS, delta=DELTA), clear)
    bracket = dp_accounting.ExplicitBracketInterval(0.5, 10.0)
    dp_cal_t, dp_cal = _best(
        lambda: dp_accounting.calibrate_dp_mechanism(pld.PLDAccountant, event, TARGET, DELTA, bracket, tol=1e-3),
        nothing,
    )
    print(
        json.dumps(
            {
                "steps": steps,
                "epsilon": [float(eps), eps_t],
                "dp_epsilon": [dp_value, dp_eps_t],
                "calibrate": [float(cal), cal_t],
                "dp_calibrate": [float(dp_cal), dp_cal_t],
            }
        )
    )


def _steps(q: float) -> int:
    from dpcore.accounting.dpsgd import resolve_steps

    return resolve_steps(q, None, EPOCHS)


def measure() -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for label, one in (("one thread", True), ("default threads", False)):
        row: dict[str, object] = {}
        for module in ("dpcore", "dpcore.accounting", "dp_accounting"):
            row[f"import {module}"] = import_time(module, one)
        res = subprocess.run(
            [sys.executable, __file__, "--child"], capture_output=True, text=True, env=_env(one), cwd=ROOT, check=True
        )
        row.update(json.loads(res.stdout.strip().splitlines()[-1]))
        out[label] = row
    return out


def table(results: dict[str, dict[str, object]]) -> str:
    lines = [
        "| threads | import dpcore (s) | import dpcore.accounting (s) | loaded | import dp_accounting (s) | "
        "ε dpcore (s) | ε dp_accounting (s) | ratio | calibration dpcore (s) | calibration dp_accounting (s) | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r in results.items():
        e, de, c, dc = r["epsilon"], r["dp_epsilon"], r["calibrate"], r["dp_calibrate"]  # type: ignore[misc]
        lines.append(
            f"| {label} | {r['import dpcore']['seconds']:.3f} | {r['import dpcore.accounting']['seconds']:.3f} | "  # type: ignore[index]
            f"{r['import dpcore.accounting']['loaded']} | {r['import dp_accounting']['seconds']:.3f} | "  # type: ignore[index]
            f"{e[1]:.4f} | {de[1]:.4f} | {e[1] / de[1]:.3f} | {c[1]:.3f} | {dc[1]:.3f} | {c[1] / dc[1]:.3f} |"
        )
    first = next(iter(results.values()))
    lines.append("")
    lines.append(
        f"Setting: σ = {SIGMA}, q = {BATCH}/{N}, {EPOCHS} epochs = T {first['steps']} steps, δ = {DELTA}; "
        f"ε dpcore {first['epsilon'][0]:.6f}, dp_accounting {first['dp_epsilon'][0]:.6f}; calibrated σ for "  # type: ignore[index]
        f"ε = {TARGET}: dpcore {first['calibrate'][0]:.6f}, dp_accounting {first['dp_calibrate'][0]:.6f}."  # type: ignore[index]
    )
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        res = measure()
        print(table(res))
        print(json.dumps(res))
