"""Where results and checkpoints of experiment runs live, and how they are written (atomically).

* results: ``results/<profile>/<experiment>/<config hash>.json`` -- written once, when the run finished;
* checkpoints: ``build/checkpoints/<profile>/<experiment>/<config hash>/state.pt`` (git-ignored) --
  rewritten after every epoch.

Both are written to a temporary file in the same folder and moved into place with :func:`os.replace`,
so a killed process leaves either the old file or the new one, never a partial one.  A result file damaged
otherwise (truncated by a copy, emptied, a directory in its place) is refused by :meth:`Store.load` with a
:class:`ResultFileError` naming it and what to do; the runner reads it through :meth:`Store.finished`, which
counts it as an unfinished run (said on the runner's stream) so that the run is trained again.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from dpcore.experiments.config import PROFILES, RunConfig, config_hash
from dpcore.paths import atomic_path, build_dir, repo_root
from dpcore.validation import check_choice

__all__ = [
    "RESULT_FORMAT",
    "ResultFileError",
    "read_result_file",
    "Store",
    "default_results_root",
    "default_checkpoints_root",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_torch_save",
    "encode_nonfinite",
    "decode_float",
]

RESULT_FORMAT = 1


def default_results_root() -> Path:
    """``results/`` of the checkout (paper-profile results are committed; quick ones are not)."""
    return repo_root() / "results"


def default_checkpoints_root() -> Path:
    """``build/checkpoints/`` of the checkout (git-ignored)."""
    return build_dir() / "checkpoints"


def encode_nonfinite(obj: Any) -> Any:
    """Strict JSON has no NaN or ∞: NaN becomes ``None`` and ±∞ the strings ``"inf"`` / ``"-inf"`` (recursively)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, Mapping):
        return {k: encode_nonfinite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode_nonfinite(v) for v in obj]
    return obj


def decode_float(value: Any) -> float:
    """A number written by :func:`encode_nonfinite` back as a float (``None`` -> NaN)."""
    if value is None:
        return math.nan
    if value in ("inf", "-inf"):
        return math.inf if value == "inf" else -math.inf
    return float(value)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:class:`dpcore.paths.atomic_path`: temporary file + fsync + rename)."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return path


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Pretty, sorted, strict JSON (no NaN/inf) written atomically."""
    text = json.dumps(obj, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
    return atomic_write_bytes(path, text.encode())


def atomic_torch_save(path: str | os.PathLike, obj: Any) -> Path:
    """``torch.save`` atomically (:class:`dpcore.paths.atomic_path`)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)
    return path


class ResultFileError(ValueError):
    """A result file exists but cannot be read as a result (truncated, not JSON, a directory, ...): the message names
    the file and what to do."""


def read_result_file(path: str | os.PathLike) -> dict[str, Any]:
    """The JSON object in the result file ``path``; :class:`ResultFileError` naming it if it is not one."""
    path = Path(path)
    remedy = ("delete it to have the runner train the run again, or restore the committed copy with "
              f"`git checkout -- {path}`")  # fmt: skip
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultFileError(f"result file {path} is unreadable ({type(exc).__name__}: {exc}); {remedy}") from exc
    try:
        result = json.loads(text)
    except json.JSONDecodeError as exc:
        what = "empty" if not text.strip() else f"not valid JSON, truncated? ({exc})"
        raise ResultFileError(f"result file {path} is {what}; {remedy}") from exc
    if not isinstance(result, dict):
        raise ResultFileError(f"result file {path} holds a JSON {type(result).__name__}, not a result object; {remedy}")
    return result


@dataclass(frozen=True)
class Store:
    """The result and checkpoint folders of one (profile, experiment)."""

    profile: str
    experiment: str
    results_root: Path
    checkpoints_root: Path

    def __post_init__(self) -> None:
        check_choice("profile", self.profile, PROFILES)
        if not self.experiment or "/" in self.experiment:
            raise ValueError(f"experiment must be a non-empty name without '/', got {self.experiment!r}")
        object.__setattr__(self, "results_root", Path(self.results_root))
        object.__setattr__(self, "checkpoints_root", Path(self.checkpoints_root))

    @classmethod
    def default(cls, profile: str, experiment: str, *, results_root=None, checkpoints_root=None) -> Store:
        return cls(
            profile,
            experiment,
            Path(results_root) if results_root is not None else default_results_root(),
            Path(checkpoints_root) if checkpoints_root is not None else default_checkpoints_root(),
        )

    @property
    def results_dir(self) -> Path:
        return self.results_root / self.profile / self.experiment

    def result_path(self, config: RunConfig) -> Path:
        return self.results_dir / f"{config_hash(config)}.json"

    def checkpoint_dir(self, config: RunConfig) -> Path:
        return self.checkpoints_root / self.profile / self.experiment / config_hash(config)

    def checkpoint_path(self, config: RunConfig) -> Path:
        return self.checkpoint_dir(config) / "state.pt"

    def load(self, config: RunConfig) -> dict[str, Any] | None:
        """The finished result of ``config`` or ``None``; :class:`ResultFileError` if the file cannot be read (e.g.
        truncated) and ``ValueError`` if it is not this run's, both naming the file."""
        path = self.result_path(config)
        if not path.exists():
            return None
        result = read_result_file(path)
        if result.get("format") != RESULT_FORMAT or result.get("hash") != config_hash(config):
            raise ValueError(f"{path} is not a format-{RESULT_FORMAT} result of configuration {config_hash(config)}")
        try:
            stored = RunConfig.from_dict(result["config"]) if isinstance(result.get("config"), dict) else None
        except ValueError as exc:
            raise ValueError(f"{path}: the stored configuration is invalid ({exc})") from exc
        if stored != config:
            raise ValueError(f"{path}: the stored configuration does not match its hash")
        return result

    def finished(self, config: RunConfig, report: Callable[[str], None] | None = None) -> dict[str, Any] | None:
        """Like :meth:`load`, but a result file that cannot be read (:class:`ResultFileError`) counts as unfinished:
        ``None``, and ``report(message)`` (if given) says which file and that the run will be trained again."""
        try:
            return self.load(config)
        except ResultFileError as exc:
            if report is not None:
                report(f"{exc} -- treating the run as unfinished: it will be trained again and the file replaced")
            return None

    def write(self, result: Mapping[str, Any]) -> Path:
        """Write a finished result (``result["config"]`` names the file; NaN/∞ encoded by :func:`encode_nonfinite`)."""
        config = RunConfig.from_dict(result["config"])
        if result.get("hash") != config_hash(config):
            raise ValueError("result['hash'] does not match result['config']")
        return atomic_write_json(self.result_path(config), encode_nonfinite(dict(result)))

    def all_results(self) -> list[dict[str, Any]]:
        """Every result file of this (profile, experiment), sorted by run name."""
        if not self.results_dir.exists():
            return []
        out = [read_result_file(p) for p in sorted(self.results_dir.glob("*.json"))]
        return sorted(out, key=lambda r: r.get("run", ""))
