"""Where individual clipping's extra time goes, layer by layer, against what non-private training pays.

Non-private training computes one weight gradient per layer, Σ_i ∇_W f_i, with one batched weight-gradient
kernel.  Individual clipping (DP-SGD, paper 003's s = 1) needs in addition the norm ‖∇_W f_i‖ of every
sample's gradient before it can form Σ_i c_i ∇_W f_i.  For each trainable layer of a benchmark model this script
times, on the layer's real inputs and output gradients from one step (batch 256):

* ``wgrad``: the batched weight gradient alone (what the non-private backward pays for the layer's weights);
* every route of dpcore's per-layer engine (:mod:`dpcore.training.persample`): ``materialise`` (per-sample
  gradients), ``shift`` and ``unfold`` (ghost norms from Gram matrices plus one re-weighted weight gradient),
  each the norms *and* the clipped sum, as the engine runs them;
* the route the engine's cost model picks, and its extra time over ``wgrad``;
* ``taps``, a route the engine does not take, timed to show why: per-sample gradients of a stride-1 convolution
  as one batched matmul per kernel offset over shifted views of the padded input (no unfolding, no grouped
  convolution), plus the norms and the clipped sum;
* the speed of the weight-gradient multiply-adds (GFLOP/s, 2 per multiply-add) in the batched ``wgrad`` and in the
  per-sample gradients of the ``materialise`` route, which computes the same multiply-adds sample by sample.

``ghost_floor``: the multiply-adds of the ``shift`` route's two Gram products (L²·cin for the input pixels, T²·cout
for the output gradients, per sample) timed at the batched ``wgrad``'s GFLOP/s: what the ghost norm would cost if
its Gram products ran as fast as the batched weight gradient and the sums over kernel offsets were free.

``budget_095`` is the extra time per step that individual / non-private >= 0.95 allows (non-private step / 0.95 -
non-private step); the layers' extra alone is compared with it.

The sum of the chosen routes' extra times is what the per-sample norms cost with these kernels, and it estimates
the individual / non-private throughput ratio they allow if everything else cost the same as in non-private
training (``ratio_layers_only`` = non-private step / (non-private step + Σ extra)).  Each time is the fastest of
``--repeats`` runs of that computation alone; layers timed in isolation and whole steps are not exactly additive
(caches), so the estimate and the measured whole-step ratio differ by a few per cent from run to run.

Usage: ``python benchmarks/ic_overhead.py --out benchmarks/ic_overhead.json`` (also writes ``ic_overhead.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import throughput  # noqa: E402

import dpcore.training.persample as persample  # noqa: E402
from dpcore.experiments.runner import device_name  # noqa: E402
from dpcore.training import make_loss, tune_cpu_allocator  # noqa: E402

ROUTES = ("materialise", "shift", "unfold")
#: individual / non-private throughput the issue asked for (issue 25)
TARGET_RATIO = 0.95


def _fastest(fn: Callable[[], object], repeats: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _capture(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> list[tuple[nn.Module, torch.Tensor, torch.Tensor]]:
    """(layer, input, output gradient) of every trainable layer, from the engine's own forward/backward."""
    seen: list[tuple[nn.Module, torch.Tensor, torch.Tensor]] = []
    original = persample._layer_term

    def record(module: nn.Module, a: torch.Tensor, g: torch.Tensor, m: int, s: int, mat: bool):
        seen.append((module, a, g))
        return original(module, a, g, m, s, mat)

    persample._layer_term = record
    try:
        persample._layer_block(model, make_loss("cross_entropy"), x, y, 1, materialize=False)
    finally:
        persample._layer_term = original
    return seen


def _wgrad(module: nn.Module, a: torch.Tensor, g: torch.Tensor) -> Callable[[], object]:
    if isinstance(module, nn.Linear):
        return lambda: g.reshape(-1, g.shape[-1]).t().mm(a.reshape(-1, a.shape[-1]))
    return lambda: torch.nn.grad.conv2d_weight(
        a, module.weight.shape, g, stride=module.stride, padding=module.padding, dilation=module.dilation
    )


def _route(module: nn.Module, a: torch.Tensor, g: torch.Tensor, route: str | None) -> Callable[[], object]:
    n = a.shape[0]
    ones = torch.ones(n, dtype=g.dtype)

    def run() -> object:
        persample._FORCE_CONV_ROUTE = route
        try:
            term = persample._layer_term(module, a, g, n, 1, False)
        finally:
            persample._FORCE_CONV_ROUTE = None
        return term.weight_sum(ones) if term.weight_sum is not None else term.sq_norms

    return run


def _taps(module: nn.Conv2d, a: torch.Tensor, g: torch.Tensor) -> Callable[[], object] | None:
    """Per-sample gradients of a stride-1, dilation-1, ungrouped convolution as k_h·k_w batched matmuls of the
    output gradients (padded to the padded input's width) with shifted views of the flattened padded input, then the
    norms and the clipped sum (all factors 1); None where the layer is not eligible."""
    if module.stride != (1, 1) or module.dilation != (1, 1) or module.groups != 1 or module.padding_mode != "zeros":
        return None
    if isinstance(module.padding, str):  # "same" / "valid": not timed
        return None
    n, cin, h, w = a.shape
    cout, ho, wo = g.shape[1:]
    (kh, kw), (ph, pw) = module.kernel_size, module.padding
    width = w + 2 * pw

    def run() -> object:
        x = nn.functional.pad(a, (pw, pw, ph, ph)).reshape(n, cin, -1)
        x = nn.functional.pad(x, (0, kw))  # the last offset's view may run past the padded image by kw - 1
        gp = nn.functional.pad(g, (0, width - wo)).reshape(n, cout, ho * width)
        per = torch.empty(n, kh, kw, cout, cin, dtype=g.dtype)
        for i in range(kh):
            for j in range(kw):
                off = i * width + j
                torch.bmm(gp, x[:, :, off : off + ho * width].transpose(1, 2), out=per[:, i, j])
        sq = per.reshape(n, -1).pow(2).sum(1)
        return sq, per.sum(0)

    return run


def _weight_flops(module: nn.Module, a: torch.Tensor, g: torch.Tensor) -> float:
    """2 × the multiply-adds of the layer's weight gradient over the batch (= of all its per-sample gradients)."""
    if isinstance(module, nn.Linear):
        return 2.0 * a.numel() * g.shape[-1]
    return 2.0 * g.numel() * module.weight[0].numel()


def _chosen(module: nn.Module, a: torch.Tensor, g: torch.Tensor, prefer: str | None = None) -> str:
    if isinstance(module, nn.Linear):
        return "linear"
    return persample.conv_route_taken(module, a.shape, g.shape, prefer=prefer)


def measure(name: str, batch: int, repeats: int) -> dict:
    builder, shape = throughput.MODELS[name]
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(batch, *shape, generator=gen)
    y = torch.randint(0, 10, (batch,), generator=gen)
    device = torch.device("cpu")
    # whole steps: the throughput benchmark's own interleaved measurement (same inputs, same seeds)
    steps = throughput.measure(name, batch, repeats, 2, device, modes=("nonprivate", "individual"))
    np_s, ic_s = steps["nonprivate"]["min"], steps["individual"]["min"]
    layers = []
    for module, a, g in _capture(throughput._fresh(builder, device), x, y):
        row = {
            "layer": f"{type(module).__name__} {tuple(a.shape[1:])}->{tuple(g.shape[1:])}",
            "chosen": _chosen(module, a, g),
            "wgrad": _fastest(_wgrad(module, a, g), repeats),
        }
        if isinstance(module, nn.Conv2d) and row["chosen"] in ROUTES:
            for route in ROUTES:
                if _chosen(module, a, g, prefer=route) == route:  # else the engine would take another route
                    row[route] = _fastest(_route(module, a, g, route), repeats)
        row["engine"] = _fastest(_route(module, a, g, None), repeats)
        row["extra"] = row["engine"] - row["wgrad"]
        taps = _taps(module, a, g) if isinstance(module, nn.Conv2d) else None
        if taps is not None:
            row["taps"] = _fastest(taps, repeats)
        flops = _weight_flops(module, a, g)
        row["gflops_wgrad"] = flops / row["wgrad"] / 1e9
        if "materialise" in row:
            row["gflops_materialise"] = flops / row["materialise"] / 1e9
        if isinstance(module, nn.Conv2d):
            macs = persample.shift_gram_macs(a.shape[1], g.shape[1], g.shape[2] * g.shape[3], a.shape[2] * a.shape[3])
            row["ghost_floor"] = 2.0 * a.shape[0] * macs / (row["gflops_wgrad"] * 1e9)
        layers.append(row)
    extra = sum(r["extra"] for r in layers)
    return {
        "nonprivate_step": np_s,
        "individual_step": ic_s,
        "ratio": np_s / ic_s,
        "layers_extra": extra,
        "ratio_layers_only": np_s / (np_s + extra),
        "budget_095": np_s / TARGET_RATIO - np_s,
        "layers": layers,
    }


def markdown(results: dict, meta: dict) -> str:
    ms = 1e3
    lines = [
        "# Individual clipping's extra cost per layer (milliseconds per step)",
        "",
        f"Device: {meta['device']}; torch {meta['torch']}; threads {meta['threads']}; batch {meta['batch']}; "
        f"fastest of {meta['repeats']} repeats; glibc allocator tuned: {meta['allocator_tuned']}.",
        "`wgrad`: the batched weight gradient that non-private training computes for the layer.  Route columns: the",
        "per-sample norms plus the clipped sum by that route (blank: not eligible).  `engine`: the route dpcore's",
        "cost model picks; `extra` = engine - wgrad.  `taps`: per-sample gradients as one batched matmul per kernel",
        "offset over shifted views of the padded input (not an engine route; timed to show why).  GFLOP/s: the",
        "weight-gradient multiply-adds (x2) per second, batched (`wgrad`) and sample by sample (`materialise`).",
        "`ghost floor`: the two Gram products of the `shift` route at the batched `wgrad`'s GFLOP/s (offset sums",
        "free).",
        f"`budget {TARGET_RATIO}`: the extra time per step that individual / non-private >= {TARGET_RATIO} allows.",
        "Written by `benchmarks/ic_overhead.py`.",
        "",
    ]
    for name, r in results.items():
        lines += [
            f"## {name}",
            "",
            f"Whole step: non-private {r['nonprivate_step'] * ms:.1f}, individual {r['individual_step'] * ms:.1f} "
            f"(ratio {r['ratio']:.3f}).  Sum of the layers' extra: {r['layers_extra'] * ms:.1f}; with only that extra "
            f"the ratio would be {r['ratio_layers_only']:.3f}.  Budget {TARGET_RATIO}: {r['budget_095'] * ms:.1f} "
            f"({r['layers_extra'] / r['budget_095']:.1f}x exceeded by the layers alone).",
            "",
            "| layer | chosen route | wgrad | materialise | shift | unfold | taps | engine | extra | ghost floor "
            "| GFLOP/s wgrad | GFLOP/s materialise |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in r["layers"]:
            times = ("wgrad", *ROUTES, "taps", "engine", "extra", "ghost_floor")
            cells = [f"{row[k] * ms:.2f}" if k in row else "" for k in times]
            cells += [f"{row[k]:.0f}" if k in row else "" for k in ("gflops_wgrad", "gflops_materialise")]
            lines.append(f"| {row['layer']} | {row['chosen']} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("ic_overhead.json"))
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    parser.add_argument("--models", default=",".join(throughput.MODELS))
    parser.add_argument("--no-tune-allocator", action="store_true", help="keep glibc's default malloc settings")
    args = parser.parse_args(argv)
    if args.batch < 1 or args.repeats < 1:
        parser.error("--batch and --repeats must be at least 1")
    names = [n for n in args.models.split(",") if n]
    for n in names:
        if n not in throughput.MODELS:
            parser.error(f"unknown model {n!r}")
    threads = args.threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    tuned = not args.no_tune_allocator and tune_cpu_allocator()
    results = {n: measure(n, args.batch, args.repeats) for n in names}
    meta = {
        "device": f"cpu ({device_name('cpu')}, kernels {torch.backends.cpu.get_cpu_capability()})",
        "torch": torch.__version__,
        "threads": threads,
        "batch": args.batch,
        "repeats": args.repeats,
        "allocator_tuned": bool(tuned),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"results": results, "meta": meta}, indent=2) + "\n")
    text = markdown(results, meta)
    args.out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
