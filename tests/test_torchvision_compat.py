"""torchvision imports on the CPU build of torch through the compat module."""

import subprocess
import sys


def test_import_torchvision_in_fresh_process():
    code = (
        "from dpcore.torchvision_compat import import_torchvision\n"
        "tv = import_torchvision()\n"
        "import torchvision.datasets, torchvision.transforms\n"
        "print(tv.__version__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("0.28")


def test_plain_import_needs_the_workaround_on_cpu_torch():
    """Documents why the module exists: on a CPU torch the bare import fails (skipped on CUDA torch)."""
    import torch

    out = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True, text=True, timeout=120)
    if torch.version.cuda is None:
        assert out.returncode != 0 and "torchvision::nms does not exist" in out.stderr
    else:
        assert out.returncode == 0
