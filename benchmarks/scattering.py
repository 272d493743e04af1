"""Speed and agreement of dpcore's Scattering2D against kymatio 0.3.0's (J = 2, L = 8, CIFAR-10-shaped input).

Both transforms run, interleaved round by round after a warm-up, on the same batch of images (CIFAR-10 test
images in [0, 1] with ``--data cifar10``, else uniform noise); the table gives images per second (best and
median repeat), dpcore's time relative to kymatio's, and the largest difference per scattering order
relative to that order's largest kymatio coefficient.  Needs the ``bench`` extra (kymatio).

Usage: ``python benchmarks/scattering.py --n 256 --repeats 5 --out benchmarks/scattering.json``
(also writes ``scattering.md`` next to the JSON).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcore.models import Scattering2D  # noqa: E402
from dpcore.scattering_compat import import_kymatio_torch  # noqa: E402

ORDERS = {"S0": slice(0, 1), "S1": slice(1, 17), "S2": slice(17, 81)}


def _images(n: int, data: str) -> torch.Tensor:
    if data == "cifar10":
        from dpcore.data import load_cifar10

        images, _ = load_cifar10("test")
        return torch.tensor(images[:n]).permute(0, 3, 1, 2).float().div(255).contiguous()
    return torch.rand(n, 3, 32, 32, generator=torch.Generator().manual_seed(0))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256, help="images per call")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data", choices=("cifar10", "random"), default="cifar10")
    ap.add_argument("--out", type=Path, default=None, help="JSON output (a .md table is written beside it)")
    args = ap.parse_args(argv)
    if args.n < 1 or args.repeats < 1 or args.threads < 1:
        raise ValueError(f"--n, --repeats and --threads must be >= 1, got {args.n}, {args.repeats}, {args.threads}")
    torch.set_num_threads(args.threads)
    x = _images(args.n, args.data)
    transforms = {
        "dpcore": Scattering2D((32, 32), J=2, L=8),
        "kymatio": import_kymatio_torch().Scattering2D(J=2, shape=(32, 32), L=8),
    }
    outputs = {name: f(x[:2]) for name, f in transforms.items()}  # warm-up
    times: dict[str, list[float]] = {name: [] for name in transforms}
    for _ in range(args.repeats):
        for name, f in transforms.items():
            start = time.perf_counter()
            outputs[name] = f(x)
            times[name].append(time.perf_counter() - start)
    ours, ref = outputs["dpcore"].reshape(args.n, 3, 81, 8, 8).double(), outputs["kymatio"].double()
    diff = {k: float((ours[:, :, s] - ref[:, :, s]).abs().max() / ref[:, :, s].abs().max()) for k, s in ORDERS.items()}
    result = {
        "device": f"cpu ({platform.machine()}); torch {torch.__version__}; threads {args.threads}",
        "meta": {"n": args.n, "repeats": args.repeats, "data": args.data},
        "images_per_s_best": {k: args.n / min(v) for k, v in times.items()},
        "images_per_s_median": {k: args.n / statistics.median(v) for k, v in times.items()},
        "time_ratio_dpcore_to_kymatio_best": min(times["dpcore"]) / min(times["kymatio"]),
        "time_ratio_dpcore_to_kymatio_median": statistics.median(times["dpcore"]) / statistics.median(times["kymatio"]),
        "max_abs_diff_over_max_kymatio": diff,
    }
    lines = [
        "# Scattering2D (J = 2, L = 8, 3×32×32): dpcore vs kymatio 0.3.0",
        "",
        f"{result['device']}; {args.n} {args.data} images per call; {args.repeats} interleaved repeats after warm-up.",
        "",
        "| transform | images/s (best) | images/s (median) |",
        "|---|---|---|",
        *(f"| {k} | {result['images_per_s_best'][k]:.0f} | {result['images_per_s_median'][k]:.0f} |" for k in times),
        "",
        f"dpcore time / kymatio time: {result['time_ratio_dpcore_to_kymatio_best']:.2f} (best), "
        f"{result['time_ratio_dpcore_to_kymatio_median']:.2f} (median).",
        "",
        "max |dpcore − kymatio| / max |kymatio| per order: " + ", ".join(f"{k} {v:.1e}" for k, v in diff.items()),
    ]
    print("\n".join(lines))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
