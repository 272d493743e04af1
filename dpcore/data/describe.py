"""A short, checkable name of the data a result was computed on: data set, split, size, variant, checksum."""

from __future__ import annotations

import os

from dpcore.data.images import cifar10_source
from dpcore.data.manifest import load_manifest
from dpcore.data.resolve import fetch
from dpcore.validation import check_choice

__all__ = ["provenance"]

PathLike = str | os.PathLike | None


def provenance(
    name: str,
    split: str | None = None,
    root: PathLike = None,
    *,
    variant: str = "auto",
    mirror: PathLike = None,
    manifest: PathLike = None,
) -> str:
    """E.g. ``"MNIST train (60,000; content md5 6bbc9ace…)"`` or
    ``"CIFAR-10 train (50,000; JPEG q75 mirror, sha256 caee4964…)"``.

    The file is resolved and verified exactly as the loader resolves it (for CIFAR-10 the
    same source choice as :func:`dpcore.data.load_cifar10` with the same ``variant``), so the
    string names what was loaded.  ``split`` defaults to the data set's only split.
    """
    datasets = load_manifest(manifest)
    check_choice("name", name, tuple(datasets))
    dataset = datasets[name]
    if split is None and len(dataset.splits) == 1:
        split = next(iter(dataset.splits))
    check_choice("split", split, tuple(dataset.splits))
    spec = dataset.splits[split]
    if name == "cifar10":
        entry, _ = cifar10_source(variant, root, mirror=mirror, manifest=manifest)
    else:
        relative = spec["files"][0]
        fetch(name, relative, root=root, mirror=mirror, manifest=manifest)
        entry = dataset.files[relative]
    parts = [f"{spec['rows']:,}"] if spec.get("rows") is not None else []
    checksum = ("content " if entry.digest_of == "content" else "") + f"{entry.algorithm} {entry.digest[:8]}…"
    parts.append(f"{entry.label}, {checksum}" if entry.label else checksum)
    title = dataset.title if split == "all" else f"{dataset.title} {split}"
    return f"{title} ({'; '.join(parts)})"
