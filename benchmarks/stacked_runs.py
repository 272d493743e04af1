"""Samples/s of k paper-003 runs trained as one stacked model against one run alone (issue 44).

Paper 003 (van Dijk et al., "Generalizing DP-SGD with shuffling and batch clipping", Algorithm 1, App. H) trains
LeNet-5 on MNIST with σ = 2 over a grid of C values and cells.  For |S_b| in ``--batches`` (64, 1024) and each of
individual (IC) and batch clipping (BC) this script times, in one process and interleaved:

* ``alone``: one run with the public :class:`~dpcore.training.Trainer` (its automatic engine: the per-layer engine
  for IC, one batch gradient for BC), samples/s = |S_b| x rounds / s;
* ``stacked k``: k runs (different seeds and C) with :class:`~dpcore.training.stacked.StackedTrainer`, k in
  ``--ks`` (1, 4, 8), samples/s = k x |S_b| x rounds / s summed over the runs;

each round a full round of Algorithm 1 (fixed-size subsampling of N = 60,000 MNIST-shaped synthetic images, clipping,
noise, SGD step).  The ratio stacked / alone in the same run says whether stacking pays on this device.  Usage::

    python benchmarks/stacked_runs.py --out benchmarks/stacked_runs.json   # also rewrites its section of results.md

``--quick`` is a smoke run (few rounds, not written to results.md unless ``--md`` is given).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcore.experiments.runner import device_name  # noqa: E402
from dpcore.models import build_model  # noqa: E402
from dpcore.training import TrainConfig, Trainer, resolve_device, tune_cpu_allocator  # noqa: E402
from dpcore.training.stacked import StackedTrainer  # noqa: E402

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- stacked-runs:begin -->", "<!-- stacked-runs:end -->"
#: C per family for the timed runs (stacked runs use C, 2C, 3C, ...: the C values of a tuning grid)
CLIP = {"individual": 1.0, "batch": 0.1}
N_TRAIN = 60000


def _trainer(x: torch.Tensor, y: torch.Tensor, clipping: str, batch: int, seed: int, clip: float,
             device: str) -> Trainer:  # fmt: skip
    cfg = TrainConfig(sampling="fixed", batch_size=batch, epochs=100, clipping=clipping, clip_norm=clip,
                      noise_multiplier=2.0, noise_convention="replace_one", lr=0.025, device=device, seed=seed,
                      max_physical_batch=512)  # fmt: skip
    return Trainer(build_model("lenet5", seed=seed, variant="classic"), (x, y), cfg)


def _time(step, rounds: int, min_seconds: float) -> list[float]:
    """Seconds per round of ``step()``: one warm-up round, then at least ``rounds`` rounds and ``min_seconds``."""
    step()
    out: list[float] = []
    start = time.perf_counter()
    while len(out) < rounds or time.perf_counter() - start < min_seconds:
        t = time.perf_counter()
        step()
        out.append(time.perf_counter() - t)
    return out


def measure(batches: list[int], ks: list[int], families: list[str], rounds: int, min_seconds: float,
            device: str) -> list[dict]:  # fmt: skip
    dev = resolve_device(device)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(N_TRAIN, 1, 28, 28, generator=gen).to(dev)
    y = torch.randint(0, 10, (N_TRAIN,), generator=gen).to(dev)
    rows = []
    for batch in batches:
        for family in families:
            alone = _trainer(x, y, family, batch, 0, CLIP[family], str(dev))
            t_alone = _time(alone.step, rounds, min_seconds)
            base = batch / statistics.median(t_alone)
            rows.append({"batch": batch, "clipping": family, "mode": "alone", "k": 1, "samples_per_s": base,
                         "ratio": 1.0, "seconds_per_round": statistics.median(t_alone), "rounds": len(t_alone),
                         "engine": sorted(alone.privatizer.engine_used)})  # fmt: skip
            for k in ks:
                stack = StackedTrainer([_trainer(x, y, family, batch, j, CLIP[family] * (j + 1), str(dev))
                                        for j in range(k)])  # fmt: skip
                t_stack = _time(stack.step, rounds, min_seconds)
                stack.close()
                rate = k * batch / statistics.median(t_stack)
                rows.append({"batch": batch, "clipping": family, "mode": "stacked", "k": k, "samples_per_s": rate,
                             "ratio": rate / base, "seconds_per_round": statistics.median(t_stack),
                             "rounds": len(t_stack), "engine": ["stacked"]})  # fmt: skip
                print(f"|S_b|={batch} {family} k={k}: {rate:.0f} samples/s ({rate / base:.2f}x alone {base:.0f})",
                      flush=True)  # fmt: skip
    return rows


def markdown(rows: list[dict], meta: dict) -> str:
    lines = [
        BEGIN,
        "## Stacked runs: k paper-003 runs as one model (issue 44)",
        "",
        f"Device: {meta['device']} ({meta['device_name']}, kernels {meta['cpu_capability']}); torch {meta['torch']}; "
        f"threads {meta['threads']}; LeNet-5 (classic), MNIST-shaped synthetic data (N = {N_TRAIN}), fixed-size "
        "subsampling, σ = 2, SGD; the median of at least "
        f"{meta['rounds']} rounds and {meta['min_seconds']:g} s after one warm-up round per row; the other "
        "trainings on the machine paused while measuring.  `alone`: one run with the public Trainer (per-layer "
        "engine for IC, one batch gradient for BC); `stacked k`: k runs (seeds 0..k-1, C, 2C, ...) with "
        "`dpcore.training.stacked.StackedTrainer` (torch.func vmap over the runs); samples/s summed over the runs; "
        "ratio to `alone` in the same run.  Written by `benchmarks/stacked_runs.py`.",
        "",
        "| \\|S_b\\| | clipping | mode | k | s / round | samples/s | ratio to alone |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mode = "alone" if r["mode"] == "alone" else f"stacked {r['k']}"
        lines.append(f"| {r['batch']} | {r['clipping']} | {mode} | {r['k']} | {r['seconds_per_round']:.4f} | "
                     f"{r['samples_per_s']:.0f} | {r['ratio']:.2f} |")  # fmt: skip
    stacks = [r for r in rows if r["mode"] == "stacked" and r["k"] > 1]
    faster = [r for r in stacks if r["ratio"] > 1.0]
    best = max(stacks, key=lambda r: r["ratio"], default=None)
    if faster:
        verdict = "Stacking k >= 2 runs is faster than one run alone on this device for: " + ", ".join(
            f"{r['clipping']} at {r['batch']} with k = {r['k']} ({r['ratio']:.2f}x)" for r in faster) + "."
    elif best is not None:
        verdict = (f"Stacking k >= 2 runs is slower than one run alone on this device at every |S_b| and k measured "
                   f"(best: {best['clipping']} at {best['batch']} with k = {best['k']}, {best['ratio']:.2f}x): a CPU "
                   "step is compute-bound, not launch-bound, and vmap's batched per-sample gradients (grouped "
                   "convolutions over runs x samples) cost more than the per-layer engine's; on this CPU the grid "
                   "is better trained one process per run.")
    else:
        verdict = "No stack of k >= 2 runs was measured."
    lines += ["", verdict, "", "The k = 1 rows time the stacked formulation itself against the public engines (for BC "
              "at 1024 its one gradient of the whole batch beats the trainer's two micro-batches of 512).", END]
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    """Replace this script's section of ``path`` (between its markers), or append it."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[64, 1024])
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--families", nargs="+", default=["individual", "batch"], choices=["individual", "batch"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-seconds", type=float, default=2.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--render", action="store_true", help="rewrite the markdown section from --out, measuring nothing")
    ap.add_argument("--quick", action="store_true", help="smoke run: |S_b| = 64, k = 1, 2; one round each")
    ap.add_argument("--out", type=Path, default=HERE / "stacked_runs.json")
    ap.add_argument("--md", type=Path, default=None, help="markdown file whose section is rewritten "
                    "(default: benchmarks/results.md, none with --quick)")  # fmt: skip
    args = ap.parse_args(argv)
    if args.quick:
        args.batches, args.ks, args.rounds, args.min_seconds = [64], [1, 2], 1, 0.0
    if args.render:
        saved = json.loads(args.out.read_text())
        write_section(args.md or HERE / "results.md", markdown(saved["rows"], saved["meta"]))
        return
    torch.set_num_threads(args.threads)
    tune_cpu_allocator()
    rows = measure(args.batches, args.ks, args.families, args.rounds, args.min_seconds, args.device)
    dev = resolve_device(args.device)
    meta = {"device": str(dev), "device_name": device_name(dev), "torch": torch.__version__,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(),
            "rounds": args.rounds, "min_seconds": args.min_seconds}  # fmt: skip
    if not args.quick:
        args.out.write_text(json.dumps({"rows": rows, "meta": meta}, indent=2) + "\n")
    md = args.md if args.md is not None else (None if args.quick else HERE / "results.md")
    if md is not None:
        write_section(md, markdown(rows, meta))


if __name__ == "__main__":
    main()
