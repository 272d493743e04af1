"""dpcore's Scattering2D against kymatio 0.3.0 (Tramèr & Boneh's ScatterNet, paper 002 Table I), and the SciPy shim.

The kymatio comparisons need the optional extra (``pip install -e '.[kymatio]'``) and skip cleanly without it.
Agreement asked for: |ours − kymatio| ≤ 1e-4·|kymatio| + 1e-6·max|kymatio| element by element, per order.
"""

import math

import numpy as np
import pytest
import torch

from dpcore.models import Scattering2D
from dpcore.scattering_compat import sph_harm

torch.set_num_threads(1)

ORDERS = {"S0": slice(0, 1), "S1": slice(1, 17), "S2": slice(17, 81)}  # J = 2, L = 8


def test_sph_harm_shim_has_the_old_argument_order():
    az, pol = 0.7, 1.1  # old API: sph_harm(m, n, azimuth, polar)
    assert complex(sph_harm(0, 1, az, pol)) == pytest.approx(math.sqrt(3 / (4 * math.pi)) * math.cos(pol))
    y11 = -math.sqrt(3 / (8 * math.pi)) * math.sin(pol) * complex(math.cos(az), math.sin(az))
    assert complex(sph_harm(1, 1, az, pol)) == pytest.approx(y11)
    with pytest.raises(ValueError, match="order"):
        sph_harm(2, 1, az, pol)


def test_coefficient_order_is_kymatios():
    scat = Scattering2D((16, 16), J=2, L=8)
    assert scat.order[0] == ("s0", ())
    assert [key for key in scat.order[1:17]] == [("s1", (i,)) for i in range(16)]
    # S2 in (j1, θ1, j2, θ2) order: channel 17 + 8·θ1 + θ2 holds (ψ_{0,θ1}, ψ_{1,θ2})
    assert scat.order[17 + 8 * 3 + 5] == ("s2", (3, 8 + 5))
    assert len(scat.order) == 81


def _kymatio(J, L, shape):
    pytest.importorskip("kymatio")
    from dpcore.scattering_compat import import_kymatio_torch

    return import_kymatio_torch().Scattering2D(J=J, shape=shape, L=L)


def _relative_errors(ours: torch.Tensor, ref: torch.Tensor) -> tuple[float, float]:
    """(max |d| / max |ref|, max |d| / |ref| over entries ≥ 1 % of max |ref|)."""
    d, r = (ours.double() - ref.double()).abs(), ref.double().abs()
    return float(d.max() / r.max()), float((d / r)[r >= 0.01 * r.max()].max())


def test_matches_kymatio_on_cifar10_images():
    kym = _kymatio(2, 8, (32, 32))
    from dpcore.data import load_cifar10

    images, _ = load_cifar10("test")
    x = torch.tensor(images[:16]).permute(0, 3, 1, 2).float().div(255).contiguous()  # (16, 3, 32, 32) in [0, 1]
    ref = kym(x)  # (16, 3, 81, 8, 8)
    ours = Scattering2D((32, 32), J=2, L=8)(x)
    assert ref.shape == (16, 3, 81, 8, 8) and ours.shape == (16, 243, 8, 8)
    ours = ours.reshape(ref.shape)  # channel-major: the 81 coefficients of R, then G, then B
    for name, sl in ORDERS.items():
        a, b = ours[:, :, sl], ref[:, :, sl]
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6 * float(b.abs().max()), msg=name)
        of_max, of_large = _relative_errors(a, b)
        assert of_max < 1e-5 and of_large < 1e-4, (name, of_max, of_large)


@pytest.mark.parametrize(("J", "L", "shape"), [(2, 8, (28, 28)), (3, 4, (32, 32)), (1, 6, (16, 24))])
def test_matches_kymatio_on_other_sizes(J, L, shape):
    kym = _kymatio(J, L, shape)
    g = torch.Generator().manual_seed(J * 10 + L)
    x = torch.rand(4, 1, *shape, generator=g)
    ref = kym(x).reshape(4, -1, shape[0] // 2**J, shape[1] // 2**J)
    ours = Scattering2D(shape, J=J, L=L)(x)
    assert ours.shape == ref.shape
    torch.testing.assert_close(ours, ref, rtol=1e-4, atol=1e-6 * float(ref.abs().max()))


def test_the_comparison_catches_a_perturbed_filter_bank():
    """The check can fail: a perturbed filter bank (φ scaled by 1.001) is caught."""
    kym = _kymatio(2, 8, (16, 16))
    x = torch.rand(2, 1, 16, 16, generator=torch.Generator().manual_seed(1))
    scat = Scattering2D((16, 16))
    scat.phi_hat_1.mul_(1.001)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(scat(x), kym(x).reshape(2, 81, 4, 4), rtol=1e-4, atol=1e-6)
    assert np.isfinite(scat(x).numpy()).all()


def test_plain_import_needs_the_shim_with_scipy_1_17():
    """Documents why dpcore.scattering_compat exists; the compat import works in a fresh process."""
    pytest.importorskip("kymatio")
    import subprocess
    import sys

    probe = "import scipy.special; print(hasattr(scipy.special, 'sph_harm'))"  # in a fresh process: the shim
    has_sph_harm = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    plain = subprocess.run([sys.executable, "-c", "import kymatio.torch"], capture_output=True, text=True, timeout=120)
    if has_sph_harm.stdout.strip() == "True":  # may already be applied in this one
        assert plain.returncode == 0
    else:
        assert plain.returncode != 0 and "cannot import name 'sph_harm'" in plain.stderr
    code = "from dpcore.scattering_compat import import_kymatio_torch\nprint(import_kymatio_torch().Scattering2D)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Scattering" in out.stdout, out.stderr


def test_benchmark_script_smoke(tmp_path, monkeypatch):
    """benchmarks/scattering.py at a trivial size (speed is measured, never asserted; agreement is)."""
    pytest.importorskip("kymatio")
    import json
    import sys
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    sys.modules.pop("scattering", None)
    import scattering

    out = tmp_path / "s.json"
    assert scattering.main(["--n", "2", "--repeats", "1", "--data", "random", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert set(data["images_per_s_best"]) == {"dpcore", "kymatio"}
    assert max(data["max_abs_diff_over_max_kymatio"].values()) < 1e-5
    assert "dpcore time / kymatio time" in out.with_suffix(".md").read_text()
    with pytest.raises(ValueError, match="repeats"):
        scattering.main(["--repeats", "0"])
