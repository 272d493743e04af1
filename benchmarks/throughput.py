"""Throughput of the dpcore DP training step against non-private training and Opacus, side by side.

For each model (the paper-003 CNN on MNIST-shaped input, ResNet-20 on CIFAR-shaped input; batch 256)
one process measures, interleaved round by round after a warm-up, the samples per second of one
training step (forward, backward, clipping, noise, SGD update) in each mode:

* ``nonprivate``   plain PyTorch: mean loss, ``backward()``, ``SGD.step()``;
* ``individual``   dpcore, s = 1 (DP-SGD);
* ``batch``        dpcore, m = 1 (batch clipping: one clipped gradient of the whole batch);
* ``mixed``        dpcore, s = 64, m = 4 (paper 003's mixed clipping);
* ``opacus_hooks`` Opacus 1.6 ``GradSampleModule`` (hooks) + ``DPOptimizer``;
* ``opacus_ghost`` Opacus 1.6 ghost clipping (``GradSampleModuleFastGradientClipping``);
* ``individual_vmap`` dpcore, s = 1, forcing the generic ``torch.func`` engine (``vmap(grad)``) for reference
  (``individual`` uses the automatic choice, the per-layer engine for these models).

Usage: ``python benchmarks/throughput.py --quick --out benchmarks/results.json`` (also writes
``results.md`` next to the JSON).  Throughput is the median over the repeats; the table also gives
each mode's ratio to ``nonprivate`` measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcore.experiments.runner import device_name  # noqa: E402
from dpcore.models import CNN003, ResNet20, ScatterCNN  # noqa: E402
from dpcore.training import Privatizer, TrainConfig, make_loss, resolve_device, tune_cpu_allocator  # noqa: E402

MODES = ("nonprivate", "individual", "individual_linf", "batch", "mixed", "opacus_hooks", "opacus_ghost",
         "individual_vmap")
#: ModelMix's l2 + l-inf clipping (paper 002, Algorithm 2) in mode individual_linf: p = 100, the authors' trunc_ratio
LINF_P = 100
MODELS = {
    "cnn003_mnist": (lambda: CNN003(in_channels=1), (1, 28, 28)),
    "resnet20_cifar": (lambda: ResNet20(), (3, 32, 32)),
    "scatter_cnn_cifar": (lambda: ScatterCNN("cifar10"), (243, 8, 8)),  # paper 002's CNN on ScatterNet features
}
MIXED_GROUP = 64
NOTES = """Notes (written with the table; see dpcore/training/persample.py for the engines).

* `individual` uses the per-layer engine: one forward, one backward to the layer outputs only, then per layer
  (chosen by a multiply-add cost model) either the per-sample gradients (for convolutions one grouped
  weight-gradient convolution with the samples as groups, for the first layer a grouped forward convolution,
  for Linear layers a batched matmul) or only their norms by the ghost-norm identity followed by one
  re-weighted weight-gradient convolution of the whole batch (clip factors applied to the output gradients).
  For convolutions the ghost norm sums shifted blocks of the per-sample Gram matrix of the input pixels
  (L^2 cin multiply-adds) instead of unfolding the input (T^2 cin k^2); on the CNN this takes the 7x7 and 3x3
  layers, while the 14x14 layer materialises per-sample gradients.
* Where `individual` loses time against `nonprivate`: `benchmarks/ic_overhead.md` (from
  `benchmarks/ic_overhead.py`) times every layer's per-sample norms and clipped sum by each route against the
  one batched weight gradient non-private training computes, and sets the layers' extra time against the extra
  that 0.95x would allow.  The per-sample gradients are the batched weight gradient's own multiply-adds, but as
  256 small products (contraction length T, one output per sample) instead of one long one: the oneDNN and MKL
  kernels this CPU build offers run them at a fraction of the batched kernel's GFLOP/s (grouped convolution,
  unfold + batched matmul, and one batched matmul per kernel offset over shifted views were all timed there),
  except on ResNet-20's 32x32 layers where the grouped convolution is as fast.  The ghost routes avoid the
  per-sample gradients but add Gram products; on the ScatterNet CNN's 243->64 layer those alone, at the batched
  kernel's speed and with every other cost free, take about the whole 0.95 budget of the step.  With the kernels
  measured here the layers alone exceed that budget about 2x (ResNet-20) to 3x (the two small CNNs).
* `individual_linf` is individual clipping followed by ModelMix's coordinate truncation to C/sqrt(p), p = 100
  (paper 002, Algorithm 2; the authors' runs): it needs the per-sample gradients themselves, which the engine
  materialises, clips, truncates and sums a chunk of samples at a time while they are in cache (on the
  ScatterNet CNN 2.3x faster per step than materialising the whole batch at once, measured idle on one thread
  before the change).
* `individual_vmap` is the generic torch.func engine (vmap(grad)) on the same step, for reference.
* `batch` needs no per-sample gradients (one backward of the summed loss, one clip, one noise draw).
* `mixed` (s = 64) runs one ordinary backward per group of 64.
* Every mode, Opacus included, runs with glibc told to keep freed memory (`tune_cpu_allocator`); without it the
  page faults on fresh per-step tensors slow the per-sample modes markedly (measured with one thread on the
  CNN: per-layer engine about 15 % slower, torch.func engine almost 2x slower).
* The machine is shared: ratios within one run are comparable, absolute samples/s vary between runs, and so do
  ratios by a few hundredths (`mixed` on the CNN: 0.96 in one table, 0.85-0.91 in five runs a day later, with the
  code of either day).
* No GPU was available when this table was made; the script runs unchanged on CUDA (`--device cuda`, the
  default `auto` picks it when present).
"""
warnings.filterwarnings("ignore", message="Full backward hook is firing")


def _fresh(builder: Callable[[], nn.Module], device: torch.device) -> nn.Module:
    torch.manual_seed(0)
    return builder().to(device)


def _nonprivate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Callable[[], None]:
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def _dpcore(model: nn.Module, x: torch.Tensor, y: torch.Tensor, clipping: str, device: torch.device, engine="auto",
            linf_p: int | None = None):  # fmt: skip
    cfg = TrainConfig(
        clip_norm_type="l2" if linf_p is None else "l2_linf",
        linf_p=linf_p,
        engine=engine,
        sampling="fixed",
        batch_size=x.shape[0],
        steps=1,
        clipping=clipping,
        group_size=MIXED_GROUP if clipping == "mixed" else None,
        clip_norm=1.0,
        noise_multiplier=1.0,
        lr=0.01,
        device=str(device),
    )
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=0.01)
    priv = Privatizer(model, make_loss("cross_entropy"), cfg, device)
    counter = [0]

    def step() -> None:
        grads = priv.gradient(x, y, counter[0], x.shape[0])
        for p, g in zip(params, grads, strict=True):
            p.grad = g
        opt.step()
        opt.zero_grad(set_to_none=True)
        counter[0] += 1

    return step


def _opacus(model: nn.Module, x: torch.Tensor, y: torch.Tensor, ghost: bool) -> Callable[[], None] | None:
    try:
        import opacus  # noqa: F401
        from opacus import GradSampleModule
        from opacus.grad_sample import GradSampleModuleFastGradientClipping
        from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping
        from opacus.utils.fast_gradient_clipping_utils import DPLossFastGradientClipping
    except ImportError:
        return None
    b = x.shape[0]
    if not ghost:
        gsm = GradSampleModule(model, batch_first=True, loss_reduction="mean")
        opt = DPOptimizer(
            torch.optim.SGD(gsm.parameters(), lr=0.01), noise_multiplier=1.0, max_grad_norm=1.0, expected_batch_size=b
        )

        def step() -> None:
            opt.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(gsm(x), y).backward()
            opt.step()

        return step
    gsm = GradSampleModuleFastGradientClipping(
        model, batch_first=True, loss_reduction="mean", max_grad_norm=1.0, use_ghost_clipping=True
    )
    opt = DPOptimizerFastGradientClipping(
        torch.optim.SGD(gsm.parameters(), lr=0.01),
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        expected_batch_size=b,
        loss_reduction="mean",
    )
    crit = DPLossFastGradientClipping(gsm, opt, nn.CrossEntropyLoss(reduction="mean"), loss_reduction="mean")

    def ghost_step() -> None:
        opt.zero_grad(set_to_none=True)
        crit(gsm(x), y).backward()
        opt.step()

    return ghost_step


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def measure(
    name: str, batch: int, repeats: int, warmup: int, device: torch.device, modes: tuple[str, ...] = MODES
) -> dict[str, dict[str, float]]:
    """Seconds per step of every mode, interleaved: {mode: {"median": s, "min": s, "n": repeats}}."""
    builder, shape = MODELS[name]
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(batch, *shape, generator=gen).to(device)
    y = torch.randint(0, 10, (batch,), generator=gen).to(device)
    steps: dict[str, Callable[[], None]] = {}
    for mode in modes:
        model = _fresh(builder, device)
        if mode == "nonprivate":
            steps[mode] = _nonprivate(model, x, y)
        elif mode in ("individual", "batch", "mixed"):
            steps[mode] = _dpcore(model, x, y, mode, device)
        elif mode == "individual_linf":
            steps[mode] = _dpcore(model, x, y, "individual", device, linf_p=LINF_P)
        elif mode == "individual_vmap":
            steps[mode] = _dpcore(model, x, y, "individual", device, engine="vmap")
        else:
            fn = _opacus(model, x, y, ghost=mode == "opacus_ghost")
            if fn is not None:
                steps[mode] = fn
    for fn in steps.values():
        for _ in range(warmup):
            fn()
    _sync(device)
    times: dict[str, list[float]] = {m: [] for m in steps}
    for _ in range(repeats):
        for mode, fn in steps.items():
            _sync(device)
            t0 = time.perf_counter()
            fn()
            _sync(device)
            times[mode].append(time.perf_counter() - t0)
    return {m: {"median": statistics.median(t), "min": min(t), "n": len(t)} for m, t in times.items()}


def markdown(results: dict, timings: dict, meta: dict) -> str:
    lines = [
        "# DP training throughput (samples/s)",
        "",
        f"Device: {results['device']}; torch {meta['torch']}; threads {meta['threads']}; batch {meta['batch']}; "
        f"{meta['repeats']} interleaved repeats after {meta['warmup']} warm-up steps.",
        "Samples/s from the fastest repeat of each mode (the JSON values) and from the median repeat; ratios are to",
        "`nonprivate` in the same run.  Mixed clipping uses s = 64, m = 4.  glibc allocator tuned for every mode "
        f"(dpcore.training.tune_cpu_allocator): {meta['allocator_tuned']}.",
        "",
        "| model | mode | samples/s (best) | ratio (best) | samples/s (median) | ratio (median) |",
        "|---|---|---|---|---|---|",
    ]
    b = meta["batch"]
    for name, modes in timings.items():
        base_med, base_min = modes["nonprivate"]["median"], modes["nonprivate"]["min"]
        for mode, t in modes.items():
            lines.append(
                f"| {name} | {mode} | {b / t['min']:.0f} | {base_min / t['min']:.3f} | "
                f"{b / t['median']:.0f} | {base_med / t['median']:.3f} |"
            )
    lines += ["", "Target ratios (best repeat; median in brackets):", ""]
    for name, modes in timings.items():

        def ratio(a: str, c: str, key: str, modes: dict = modes) -> str:
            if a not in modes or c not in modes:
                return "n/a"
            return f"{modes[c][key] / modes[a][key]:.3f}"

        parts = []
        for a, c, label in (
            ("individual", "nonprivate", "individual / non-private"),
            ("individual_linf", "nonprivate", "l2 + l-inf / non-private"),
            ("batch", "nonprivate", "batch / non-private"),
            ("individual", "opacus_hooks", "individual / Opacus hooks"),
            ("individual", "opacus_ghost", "individual / Opacus ghost"),
        ):
            parts.append(f"{label} = {ratio(a, c, 'min')} ({ratio(a, c, 'median')})")
        lines.append(f"- {name}: " + "; ".join(parts))
    lines += ["", NOTES]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (the `make bench` setting)")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("results.json"))
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ", ".join(MODELS))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--device", default="auto")
    parser.add_argument("--no-tune-allocator", action="store_true", help="keep glibc's default malloc settings")
    args = parser.parse_args(argv)
    threads = args.threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    device = resolve_device(args.device)
    tuned = device.type == "cpu" and not args.no_tune_allocator and tune_cpu_allocator()
    repeats = args.repeats or (8 if args.quick else 20)
    modes = tuple(m for m in args.modes.split(",") if m)
    names = [n for n in args.models.split(",") if n]
    for n in names:
        if n not in MODELS:
            parser.error(f"unknown model {n!r}")
    timings = {n: measure(n, args.batch, repeats, args.warmup, device, modes) for n in names}
    label = device_name(device)
    if device.type == "cpu":
        label = f"cpu ({label}, kernels {torch.backends.cpu.get_cpu_capability()})"
    # samples/s from the fastest repeat: on a shared machine the minimum time is the least disturbed one
    results: dict = {n: {m: args.batch / t["min"] for m, t in modes_.items()} for n, modes_ in timings.items()}
    results["device"] = label
    meta = {
        "torch": torch.__version__,
        "threads": threads,
        "batch": args.batch,
        "repeats": repeats,
        "warmup": args.warmup,
        "allocator_tuned": bool(tuned),
        "seconds_per_step": timings,
    }
    results["meta"] = meta
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(results, timings, meta))
    print(markdown(results, timings, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
