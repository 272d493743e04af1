"""Smoke test of benchmarks/throughput.py at a trivial size (performance is measured, never asserted)."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_throughput_script_writes_json_and_markdown(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    sys.modules.pop("throughput", None)
    import throughput

    out = tmp_path / "r.json"
    args = ["--batch", "4", "--repeats", "1", "--warmup", "0", "--threads", "1", "--no-tune-allocator",
            "--models", "cnn003_mnist,scatter_cnn_cifar",
            "--modes", "nonprivate,individual,individual_linf,batch,mixed,opacus_hooks",
            "--out", str(out)]  # fmt: skip
    assert throughput.main(args) == 0
    data = json.loads(out.read_text())
    for name in ("cnn003_mnist", "scatter_cnn_cifar"):
        assert set(data[name]) == {"nonprivate", "individual", "individual_linf", "batch", "mixed", "opacus_hooks"}
        assert all(v > 0 for v in data[name].values())
    assert data["device"] and data["meta"]["batch"] == 4
    assert "| cnn003_mnist | individual |" in out.with_suffix(".md").read_text()


def test_ic_overhead_script_times_every_layer(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    for name in ("throughput", "ic_overhead"):
        sys.modules.pop(name, None)
    import ic_overhead

    out = tmp_path / "o.json"
    args = ["--batch", "4", "--repeats", "1", "--threads", "1", "--no-tune-allocator", "--models", "cnn003_mnist",
            "--out", str(out)]  # fmt: skip
    assert ic_overhead.main(args) == 0
    res = json.loads(out.read_text())["results"]["cnn003_mnist"]
    # the CNN's five trainable layers, each on the route the engine's cost model picks for its shape
    assert [r["chosen"] for r in res["layers"]] == ["grouped forward", "materialise", "shift", "shift", "linear"]
    for r in res["layers"]:
        assert r["extra"] == r["engine"] - r["wgrad"]
        assert all(r[k] > 0 for k in ("wgrad", "engine"))
    assert set(res["layers"][1]) >= {"materialise", "shift", "unfold"}
    assert res["layers_extra"] == sum(r["extra"] for r in res["layers"])
    assert "| Conv2d (32, 14, 14)->(64, 14, 14) | materialise |" in out.with_suffix(".md").read_text()
    # the alternative route is timed on every stride-1 conv layer, and the budget line is written
    assert all("taps" in r for r in res["layers"][:4]) and "taps" not in res["layers"][4]
    assert res["budget_095"] == res["nonprivate_step"] / 0.95 - res["nonprivate_step"]


def test_ic_overhead_taps_route_gives_the_per_sample_norms_and_sum(monkeypatch):
    """The timed alternative computes what it claims: each sample's weight-gradient norm and their sum."""
    import torch
    from torch import nn

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    for name in ("throughput", "ic_overhead"):
        sys.modules.pop(name, None)
    import ic_overhead

    torch.manual_seed(0)
    for cin, cout, k, pad, hw in [(3, 5, 3, 1, 7), (2, 4, 5, 2, 6), (4, 3, 3, 0, 8)]:
        conv = nn.Conv2d(cin, cout, k, padding=pad)
        a = torch.randn(3, cin, hw, hw)
        g = torch.randn(3, cout, hw + 2 * pad - k + 1, hw + 2 * pad - k + 1)
        per = torch.stack([
            torch.nn.grad.conv2d_weight(a[i : i + 1], conv.weight.shape, g[i : i + 1], padding=pad) for i in range(3)
        ])  # fmt: skip
        sq, total = ic_overhead._taps(conv, a, g)()
        torch.testing.assert_close(sq, per.reshape(3, -1).pow(2).sum(1), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(total.permute(2, 3, 0, 1), per.sum(0), rtol=1e-4, atol=1e-4)
    assert ic_overhead._taps(nn.Conv2d(2, 2, 3, stride=2), torch.zeros(1, 2, 5, 5), torch.zeros(1, 2, 2, 2)) is None
    same = torch.zeros(1, 2, 5, 5)
    assert ic_overhead._taps(nn.Conv2d(2, 2, 3, padding="same"), same, same) is None
