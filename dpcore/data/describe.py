"""A short, checkable name of the data a result was computed on: data set, split, size, variant, checksum.

:func:`provenance` names the data; :func:`reencoding_captions` is the one rule that turns a provenance naming a
lossy re-encoded copy (the offline mirror's JPEG CIFAR-10) into the caption every figure drawn on it carries
(:meth:`dpcore.report.Report.figure` applies it).
"""

from __future__ import annotations

import os
import re

from dpcore.data.images import cifar10_source
from dpcore.data.manifest import load_manifest
from dpcore.data.resolve import fetch
from dpcore.validation import check_choice

__all__ = ["REENCODED_VARIANTS", "provenance", "reencoding_captions"]

#: manifest file variants that are a lossy re-encoding of the publisher's files
REENCODED_VARIANTS = ("jpeg",)

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


def reencoding_captions(provenance_text: str, *, manifest: PathLike = None) -> dict[str, str]:
    """``{data set title: caption}`` for every data set whose lossy re-encoded copy ``provenance_text`` names.

    ``provenance_text`` is one or more :func:`provenance` strings (joined by anything, e.g. ``"; "``); a data set
    counts when the text holds its title followed, within the same parentheses, by the label of a manifest file of a
    :data:`REENCODED_VARIANTS` variant (``"CIFAR-10 train (50,000; JPEG q75 mirror, …)"``).  The caption says so in
    words: ``"CIFAR-10 images: the offline mirror's lossy JPEG re-encoding (quality 75), not the publisher's
    original files"``.  Nothing is read but the manifest.
    """
    if not isinstance(provenance_text, str):
        raise ValueError(f"provenance_text must be a string (dpcore.data.provenance), got {provenance_text!r}")
    out: dict[str, str] = {}
    for dataset in load_manifest(manifest).values():
        for entry in dataset.files.values():
            if entry.variant not in REENCODED_VARIANTS or not entry.label:
                continue
            pattern = re.escape(dataset.title) + r"\b[^;()]*\([^()]*" + re.escape(entry.label)
            if re.search(pattern, provenance_text):
                quality = re.search(r"q(\d+)", entry.label)
                how = f" (quality {quality.group(1)})" if quality else ""
                out[dataset.title] = (f"{dataset.title} images: the offline mirror's lossy "
                                      f"{entry.variant.upper()} re-encoding{how}, not the publisher's original files")
    return out
