"""Shipped data: checksums, loaders, error messages, download path (local fixture)."""

import functools
import gzip
import hashlib
import http.server
import json
import shutil
import threading

import numpy as np
import pytest

from dpcore import data
from dpcore.paths import data_dir


def test_manifest_covers_shipped_files():
    manifest = data.load_manifest()
    shipped = {k for k, v in manifest.items() if v["shipped"]}
    assert shipped == {
        "MNIST/raw/t10k-images-idx3-ubyte.gz",
        "MNIST/raw/t10k-labels-idx1-ubyte.gz",
        "MNIST/raw/train-labels-idx1-ubyte.gz",
        "insurance.csv",
        "ObesityDataSet_raw_and_data_sinthetic.csv",
    }
    for rel in shipped:
        digest = hashlib.sha256((data_dir() / rel).read_bytes()).hexdigest()
        assert digest == manifest[rel]["sha256"], rel
        assert manifest[rel]["source"] and manifest[rel]["license"]


def test_mnist_test_split():
    images, labels = data.load_mnist("test")
    assert images.shape == (10_000, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def test_mnist_train_is_missing_with_instructions():
    with pytest.raises(data.DataError, match=r"train-images-idx3-ubyte\.gz.*download\('mnist'\)"):
        data.load_mnist("train")


def test_tabular_datasets():
    insurance = data.load_insurance()
    assert insurance.shape == (1338, 7)
    assert insurance["charges"].mean() == pytest.approx(13270.4223, abs=1e-3)
    obesity = data.load_obesity()
    assert obesity.shape == (2111, 17) and obesity["NObeyesdad"].nunique() == 7
    x, y = data.load_digits()
    assert x.shape == (1797, 64) and set(np.unique(y)) == set(range(10))


def _copy_tree(tmp_path):
    root = tmp_path / "data"
    shutil.copytree(data_dir(), root, ignore=shutil.ignore_patterns("*-ubyte", "cifar*", "*.mat"))
    return root


def test_corrupt_file_is_detected(tmp_path):
    root = _copy_tree(tmp_path)
    path = root / "insurance.csv"
    path.write_bytes(path.read_bytes().replace(b"southwest", b"southeast", 1))
    with pytest.raises(data.DataError, match=r"insurance\.csv is corrupt: sha256"):
        data.load_insurance(root)


def test_missing_file_names_it(tmp_path):
    root = _copy_tree(tmp_path)
    (root / "ObesityDataSet_raw_and_data_sinthetic.csv").unlink()
    with pytest.raises(data.DataError, match=r"ObesityDataSet_raw_and_data_sinthetic\.csv is missing"):
        data.load_obesity(root)


def test_cifar_missing_names_file(tmp_path):
    with pytest.raises(data.DataError, match="cifar-10-batches-py"):
        data.load_cifar10("train", root=tmp_path)


def test_bad_split():
    with pytest.raises(ValueError, match="split"):
        data.load_mnist("validation")
    with pytest.raises(ValueError, match="name"):
        data.download("imagenet")


def _idx_bytes(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 8, array.ndim]) + b"".join(d.to_bytes(4, "big") for d in array.shape)
    return gzip.compress(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def local_mirror(tmp_path):
    """An HTTP server on 127.0.0.1 serving ``tmp_path/server`` (no network needed)."""
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(server_dir))
    handler.log_message = lambda *args, **kwargs: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield server_dir, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


def test_download_through_torchvision_from_local_fixture(tmp_path, local_mirror):
    """The real download path (torchvision.datasets.MNIST.download), served by a local HTTP mirror."""
    from dpcore.torchvision_compat import import_torchvision

    datasets = import_torchvision().datasets
    server, url = local_mirror
    rng = np.random.default_rng(0)
    files = {
        "train-images-idx3-ubyte.gz": _idx_bytes(rng.integers(0, 256, (6, 28, 28))),
        "train-labels-idx1-ubyte.gz": _idx_bytes(np.arange(6) % 10),
        "t10k-images-idx3-ubyte.gz": _idx_bytes(rng.integers(0, 256, (4, 28, 28))),
        "t10k-labels-idx1-ubyte.gz": _idx_bytes(np.arange(4)),
    }
    for name, payload in files.items():
        (server / name).write_bytes(payload)

    class FixtureMNIST(datasets.MNIST):
        mirrors = [url]
        resources = [(name, hashlib.md5(payload).hexdigest()) for name, payload in files.items()]

    root = tmp_path / "data"
    raw = data.download("mnist", root, dataset_cls=FixtureMNIST)
    assert raw == root / "FixtureMNIST" / "raw"
    assert (raw / "train-images-idx3-ubyte.gz").exists()
    # our loader reads the torchvision raw layout and verifies against a manifest
    (root / "MNIST").symlink_to(root / "FixtureMNIST")
    manifest = {
        f"MNIST/raw/{name}": {"md5": hashlib.md5(payload).hexdigest(), "shipped": False}
        for name, payload in files.items()
    }
    (root / "manifest.json").write_text(json.dumps({"files": manifest}))
    images, labels = data.load_mnist("train", root)
    assert images.shape == (6, 28, 28) and labels.tolist() == [0, 1, 2, 3, 4, 5]


def test_synthetic_generators_are_seeded():
    a = data.make_logistic_regression(50, 5, seed=3)
    b = data.make_logistic_regression(50, 5, seed=3)
    assert all(np.array_equal(u, v) for u, v in zip(a, b, strict=True))
    assert set(np.unique(a[1])) <= {0, 1}
    x, y, w = data.make_linear_regression(100, 4, seed=1, noise=0.0)
    assert np.allclose(x @ w, y)
    with pytest.raises(ValueError, match="n must"):
        data.make_linear_regression(0, 4, seed=1)
    with pytest.raises(ValueError, match="noise"):
        data.make_logistic_regression(10, 2, seed=0, noise=0.7)
