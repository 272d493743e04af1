"""Loaders on small fake files (IDX, CIFAR-10 pickles and JPEGs, LIBSVM) served from a fake mirror."""

import bz2
import gzip
import hashlib
import io
import json
import pickle
import tarfile

import numpy as np
import pytest

from dpcore import data
from dpcore.data import arrays_cache, images

CIFAR_PY = "cifar-10-python.tar.gz"
CIFAR_JPEG = "cifar10-jpeg/cifar10-jpeg.tar.gz"


def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 8, array.ndim]) + b"".join(d.to_bytes(4, "big") for d in array.shape)
    return header + array.astype(np.uint8).tobytes()


def _tar(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, payload in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload))
    return buffer.getvalue()


class FakeMirror:
    """A mirror folder plus a manifest describing the files written into it."""

    def __init__(self, tmp_path):
        self.root, self.mirror, self.path = tmp_path / "cache", tmp_path / "mirror", tmp_path / "manifest.json"
        self.datasets: dict = {}

    def add(self, dataset, relative, payload, *, content=None, splits=None, title=None, **extra):
        (self.mirror / relative).parent.mkdir(parents=True, exist_ok=True)
        (self.mirror / relative).write_bytes(payload)
        ds = self.datasets.setdefault(dataset, {"title": title or dataset, "splits": {}, "files": {}})
        checked = content if content is not None else payload
        ds["files"][relative] = {"urls": [], "mirror": relative, "bytes": len(payload),
                                 "sha256": hashlib.sha256(checked).hexdigest(),
                                 "digest_of": "content" if content is not None else "file", **extra}
        ds["splits"].update(splits or {})
        ds.update({k: v for k, v in (("title", title),) if v})
        self.path.write_text(json.dumps({"datasets": self.datasets}))

    @property
    def kw(self):
        return dict(mirror=self.mirror, manifest=self.path)


@pytest.fixture
def fake(tmp_path):
    return FakeMirror(tmp_path)


def test_mnist_from_idx_files(fake):
    rng = np.random.default_rng(0)
    pixels, labels = rng.integers(0, 256, (12, 28, 28)), np.arange(12) % 10
    split = {"train": {"rows": 12, "files": ["MNIST/raw/a.gz", "MNIST/raw/b.gz"]}}
    fake.add("mnist", "MNIST/raw/a.gz", gzip.compress(_idx(pixels)), content=_idx(pixels), splits=split, title="MNIST")
    fake.add("mnist", "MNIST/raw/b.gz", gzip.compress(_idx(labels)), content=_idx(labels))
    x, y = data.load_mnist("train", fake.root, **fake.kw)
    assert x.dtype == np.uint8 and np.array_equal(x, pixels) and y.dtype == np.int64 and np.array_equal(y, labels)
    assert data.provenance("mnist", "train", fake.root, **fake.kw).startswith("MNIST train (12; content sha256 ")
    fake.datasets["mnist"]["splits"]["train"]["rows"] = 60_000
    fake.path.write_text(json.dumps({"datasets": fake.datasets}))
    with pytest.raises(data.DataError, match="12 records, the manifest says 60000"):
        data.load_mnist("train", fake.root, **fake.kw)


def test_read_idx_rejects_a_truncated_payload(tmp_path):
    path = tmp_path / "bad-idx"
    path.write_bytes(_idx(np.zeros((3, 4)))[:-1])
    with pytest.raises(data.DataError, match="IDX header says"):
        data.read_idx(path)


def _cifar_images(n_per_class=2, classes=10, seed=0):
    rng = np.random.default_rng(seed)
    # smooth images so that JPEG at high quality stays close to the original
    base = rng.integers(40, 215, (classes * n_per_class, 1, 1, 3))
    return np.broadcast_to(base, (classes * n_per_class, 32, 32, 3)).astype(np.uint8)


def _cifar_python_tar(train, test):
    def batch(x, y):
        return pickle.dumps({b"data": x.transpose(0, 3, 1, 2).reshape(len(x), -1), b"labels": list(map(int, y))})

    (xtr, ytr), (xte, yte) = train, test
    parts = np.array_split(np.arange(len(xtr)), 5)
    members = {f"cifar-10-batches-py/data_batch_{i + 1}": batch(xtr[p], ytr[p]) for i, p in enumerate(parts)}
    members["cifar-10-batches-py/test_batch"] = batch(xte, yte)
    return _tar(members)


def _cifar_jpeg_tar(split_arrays):
    from PIL import Image

    members = {}
    for split, (x, y) in split_arrays.items():
        for i, (pixels, label) in enumerate(zip(x, y, strict=True)):
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, format="JPEG", quality=95)
            members[f"{split}/{images.CIFAR10_CLASSES[label]}/{i:04d}.jpg"] = buffer.getvalue()
    return _tar(members)


def _cifar_splits(n_train=20, n_test=10):
    return {"train": {"rows": n_train}, "test": {"rows": n_test}}


def test_cifar10_prefers_the_publisher_pickles_and_caches_the_decode(fake, monkeypatch):
    xtr, xte = _cifar_images(2), _cifar_images(1, seed=1)
    ytr, yte = np.arange(20) % 10, np.arange(10)
    fake.add("cifar10", CIFAR_PY, _cifar_python_tar((xtr, ytr), (xte, yte)), splits=_cifar_splits(),
             title="CIFAR-10", variant="python", label="publisher python pickles")
    fake.add("cifar10", CIFAR_JPEG, _cifar_jpeg_tar({"train": (xtr, ytr), "test": (xte, yte)}),
             variant="jpeg", label="JPEG q75 mirror")
    x, y = data.load_cifar10("train", fake.root, **fake.kw)
    assert np.array_equal(x, xtr) and np.array_equal(y, ytr) and x.flags.c_contiguous
    assert data.provenance("cifar10", "train", fake.root, **fake.kw).startswith(
        "CIFAR-10 train (20; publisher python pickles, sha256 ")
    entry, _ = data.cifar10_source(root=fake.root, **fake.kw)
    assert arrays_cache.cache_path(entry, "train", "images", fake.root).is_file()

    def no_decode(*args):
        raise AssertionError("decoded again instead of reading data/cache/")

    monkeypatch.setattr(images, "_decode_python", no_decode)
    x2, _ = data.load_cifar10("train", fake.root, **fake.kw)
    assert np.array_equal(x2, xtr)


def test_cifar10_reads_the_jpeg_copy_when_no_pickles_can_be_had(fake):
    xtr, xte = _cifar_images(2), _cifar_images(1, seed=1)
    ytr, yte = np.repeat(np.arange(10), 2), np.arange(10)
    fake.add("cifar10", CIFAR_JPEG, _cifar_jpeg_tar({"train": (xtr, ytr), "test": (xte, yte)}),
             splits=_cifar_splits(), title="CIFAR-10", variant="jpeg", label="JPEG q75 mirror")
    fake.datasets["cifar10"]["files"][CIFAR_PY] = {"urls": ["http://127.0.0.1:9/cifar-10-python.tar.gz"],
                                                   "mirror": None, "md5": "0" * 32, "digest_of": "file"}
    fake.path.write_text(json.dumps({"datasets": fake.datasets}))
    x, y = data.load_cifar10("train", fake.root, **fake.kw)
    assert x.shape == (20, 32, 32, 3) and y.tolist() == ytr.tolist()  # ordered by class, then file name
    assert np.abs(x.astype(int) - xtr.astype(int)).max() <= 3  # lossy, but close on flat images
    assert "JPEG q75 mirror" in data.provenance("cifar10", "train", fake.root, **fake.kw)
    with pytest.raises(data.DataError, match="cifar-10-python.tar.gz"):
        data.load_cifar10("train", fake.root, variant="python", **fake.kw)


def test_libsvm_dense_float32_with_fixed_width_and_01_labels(fake):
    train = b"-1 1:0.5 3:1\n+1 2:2\n"
    test = b"+1 1:1\n"  # fewer features present: the width still comes from the manifest
    splits = {"train": {"rows": 2, "files": ["libsvm/t.trn.bz2"]}, "test": {"rows": 1, "files": ["libsvm/t.tst.bz2"]}}
    fake.add("ijcnn1", "libsvm/t.trn.bz2", bz2.compress(train), content=train, splits=splits, title="LIBSVM ijcnn1")
    fake.add("ijcnn1", "libsvm/t.tst.bz2", bz2.compress(test), content=test)
    fake.datasets["ijcnn1"]["svmlight"] = {"n_features": 4, "zero_based": False}
    fake.path.write_text(json.dumps({"datasets": fake.datasets}))
    x, y = data.load_libsvm("ijcnn1", "train", fake.root, **fake.kw)
    assert x.dtype == np.float32 and x.tolist() == [[0.5, 0, 1, 0], [0, 2, 0, 0]] and y.tolist() == [0, 1]
    x, y = data.load_libsvm("ijcnn1", "test", fake.root, **fake.kw)
    assert x.shape == (1, 4) and y.tolist() == [1]
