"""The real data sets through the shipped manifest: the offline mirror (../shared/data) verifies against it,
the loaders give the published sizes and class counts, and nothing falls back to another data set.

These tests read the mirror (``DPCORE_DATA_MIRROR`` or ``../shared/data``) and fill the ``data/`` cache;
none of them downloads (the one test that exercises failure points every URL at a closed local port).
"""

import json
import shutil
import subprocess

import numpy as np
import pytest

from dpcore import data
from dpcore.data import resolve
from dpcore.paths import repo_root

MIRRORED = ("mnist", "cifar10", "ijcnn1", "a9a", "insurance", "obesity")


def test_manifest_describes_every_file():
    datasets = data.load_manifest()
    assert set(datasets) == {"mnist", "fashion-mnist", "cifar10", "svhn", "ijcnn1", "a9a", "insurance", "obesity"}
    for ds in datasets.values():
        assert ds.license and ds.origin and ds.title
        for entry in ds.files.values():
            assert entry.urls or entry.mirror, entry.relative
            assert entry.bytes, entry.relative
            if entry.relative.endswith((".gz", ".bz2")) and not entry.relative.endswith(".tar.gz"):
                # content checksums wherever a content checksum is known (Fashion-MNIST publishes only file md5s)
                assert entry.digest_of == ("file" if ds.name == "fashion-mnist" else "content"), entry.relative
    mnist = datasets["mnist"].files["MNIST/raw/train-images-idx3-ubyte.gz"]
    assert (mnist.algorithm, mnist.digest, mnist.digest_of) == ("md5", "6bbc9ace898e44ae57da46a324031adb", "content")
    cifar = datasets["cifar10"].files
    assert cifar["cifar-10-python.tar.gz"].digest == "c58f30108f718f92721af3b95e74349a"
    assert cifar["cifar10-jpeg/cifar10-jpeg.tar.gz"].digest.startswith("caee4964")


def test_every_mirror_file_verifies_against_the_manifest():
    folder = resolve.mirror_dir()
    assert folder is not None and folder.is_dir(), "the offline mirror ../shared/data (or DPCORE_DATA_MIRROR) is needed"
    for name in MIRRORED:
        for entry in data.load_manifest()[name].files.values():
            if entry.mirror:
                assert resolve.verify(folder / entry.mirror, entry) is None, entry.mirror


def test_data_folder_tracks_only_readme_and_manifest():
    if shutil.which("git") is None or not (repo_root() / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "data/"], cwd=repo_root(), capture_output=True, text=True, check=True)
    assert sorted(listed.stdout.split()) == ["data/README.md", "data/manifest.json"]


def test_mnist_train_and_test_splits():
    images, labels = data.load_mnist("train")
    assert images.shape == (60_000, 28, 28) and images.dtype == np.uint8 and labels.dtype == np.int64
    assert np.bincount(labels).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert images.mean() / 255 == pytest.approx(0.1307, abs=1e-4)
    images, labels = data.load_mnist("test")
    assert images.shape == (10_000, 28, 28)
    assert np.bincount(labels).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    with pytest.raises(ValueError, match="split"):
        data.load_mnist("validation")


def test_cifar10_both_splits():
    images, labels = data.load_cifar10("train")
    assert images.shape == (50_000, 32, 32, 3) and images.dtype == np.uint8 and labels.dtype == np.int64
    assert np.bincount(labels).tolist() == [5000] * 10
    if "JPEG" in data.provenance("cifar10", "train"):  # SOURCES.md: the JPEG copy's channel means
        np.testing.assert_allclose(images.mean(axis=(0, 1, 2)) / 255, [0.4913, 0.4821, 0.4465], atol=2e-4)
    images, labels = data.load_cifar10("test")
    assert images.shape == (10_000, 32, 32, 3) and np.bincount(labels).tolist() == [1000] * 10
    with pytest.raises(ValueError, match="variant"):
        data.load_cifar10("test", variant="png")


@pytest.mark.parametrize(
    "name, split, shape, positives",
    [("ijcnn1", "train", (49_990, 22), 4853), ("ijcnn1", "test", (91_701, 22), None),
     ("a9a", "train", (32_561, 123), None), ("a9a", "test", (16_281, 123), None)],
)
def test_libsvm_sets(name, split, shape, positives):
    x, y = data.load_libsvm(name, split)
    assert x.shape == shape and x.dtype == np.float32 and set(np.unique(y).tolist()) == {0, 1}
    if positives is not None:
        assert int(y.sum()) == positives
    if name == "a9a":
        assert set(np.unique(x).tolist()) == {0.0, 1.0} and np.all(x.sum(axis=1) <= 14)


def test_libsvm_bad_arguments():
    with pytest.raises(ValueError, match="name"):
        data.load_libsvm("covtype", "train")
    with pytest.raises(ValueError, match="split"):
        data.load_libsvm("ijcnn1", "validation")


def test_tabular_datasets():
    insurance = data.load_insurance()
    assert insurance.shape == (1338, 7)
    assert insurance["charges"].mean() == pytest.approx(13270.4223, abs=1e-3)
    assert int((insurance["smoker"] == "yes").sum()) == 274
    obesity = data.load_obesity()
    assert obesity.shape == (2111, 17) and obesity["NObeyesdad"].nunique() == 7
    x, y = data.load_digits()
    assert x.shape == (1797, 64) and set(np.unique(y)) == set(range(10))


def test_provenance_names_variant_size_and_checksum():
    assert data.provenance("mnist", "train") == "MNIST train (60,000; content md5 6bbc9ace…)"
    assert data.provenance("insurance") == "insurance (1,338; sha256 505c1cbc…)"
    assert data.provenance("ijcnn1", "train") == "LIBSVM ijcnn1 train (49,990; content sha256 7fe29167…)"
    assert data.provenance("cifar10", "train") in (
        "CIFAR-10 train (50,000; JPEG q75 mirror, sha256 caee4964…)",
        "CIFAR-10 train (50,000; publisher python pickles, md5 c58f3010…)",
    )
    with pytest.raises(ValueError, match="split"):
        data.provenance("mnist")


def test_no_mirror_and_no_network_is_a_data_error_not_a_substitute(tmp_path, monkeypatch):
    """With no cache, no mirror and no reachable URL, loading fails with the full story (no fallback)."""
    doc = json.loads((repo_root() / "data" / "manifest.json").read_text())
    for ds in doc["datasets"].values():
        for entry in ds["files"].values():
            entry["urls"] = ["http://127.0.0.1:9/" + u.rsplit("/", 1)[-1] for u in entry["urls"]]  # closed port
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(doc))
    monkeypatch.setenv("DPCORE_DATA_MIRROR", str(tmp_path / "nonexistent"))
    with pytest.raises(data.DataError) as info:
        data.load_mnist("train", tmp_path / "cache", manifest=manifest)
    text = str(info.value)
    assert "'mnist'" in text and "train-images-idx3-ubyte.gz" in text
    assert f"mirror {tmp_path / 'nonexistent'}" in text and "http://127.0.0.1:9/train-images-idx3-ubyte.gz" in text
    with pytest.raises(data.DataError, match="neither the publisher's archive nor the JPEG mirror copy"):
        data.load_cifar10("train", tmp_path / "cache", manifest=manifest)


def test_verified_path_keeps_working_for_manifest_files():
    path = data.verified_path("MNIST/raw/train-labels-idx1-ubyte.gz")
    assert data.read_idx(path).shape == (60_000,)
    with pytest.raises(data.DataError, match="no entry in the manifest"):
        data.verified_path("MNIST/raw/unknown.gz")
