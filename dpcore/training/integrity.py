"""What a training run verifies before it trusts it: its training data, and a checkpoint it resumes from.

Training data.  The accountants count every row of the training set (the sampling rate q = b/N of
DP-SGD, Abadi et al. 2016, and the dataset size of every run record), so every row must be one the
loss trains on: :func:`check_training_data` refuses labels the loss would ignore or cannot take (for
the cross-entropy loss, labels outside [0, classes) -- torch's ignore index −100 included -- and
non-integer labels; for the logistic loss, targets outside [0, 1]), refuses a NaN or ±inf anywhere in X or y
(naming the tensor and its first bad row, before the first step), converts numpy arrays and
integer labels of any width, and names the argument (``data[1] (y)``, ``client_data[2][0] (X)``).

Checkpoints.  A checkpoint carries fingerprints of what it continues: the configuration, the
training data (:func:`data_fingerprint`: SHA-256 of the shape, dtype and bytes of X and y; 0.4-0.5 s
for the 60,000 MNIST training images as float32 (188 MB) on one shared CPU core, once per run) and the model's structure
(:func:`model_fingerprint`: parameter and buffer names, shapes and dtypes, module types).  A
checkpoint whose fingerprints differ from the resuming run's is refused (:class:`CheckpointError`,
naming the file); one written before fingerprints existed is accepted with a
:class:`CheckpointWarning` that says what was not verified.  :func:`read_checkpoint` turns
torch's errors on a truncated, empty or foreign file into a :class:`CheckpointError` naming the file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

__all__ = [
    "CheckpointError",
    "CheckpointWarning",
    "check_training_data",
    "check_labels",
    "check_finite_rows",
    "as_tensor",
    "data_fingerprint",
    "model_fingerprint",
    "read_checkpoint",
    "check_fingerprints",
    "same_configuration",
    "field_defaults",
    "legacy_warning",
    "check_state",
    "resume_from",
]

_CHUNK_BYTES = 1 << 26  # rows are hashed in chunks of about 64 MiB (a GPU tensor is copied chunk by chunk)


class CheckpointError(ValueError):
    """A checkpoint cannot be resumed from: unreadable, not a checkpoint, or of another run (the message says which
    file, why, and what to do)."""


class CheckpointWarning(UserWarning):
    """A checkpoint was resumed from without verifying something (it was written before that was recorded)."""


# ---- training data ----------------------------------------------------------------------------------------------
def as_tensor(name: str, value: Any) -> Tensor:
    """``value`` as a tensor: a tensor as it is, a numpy array converted (not copied when writable); else
    ``ValueError`` naming ``name``."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise ValueError(f"{name} must hold numbers (bool, int or float), got a numpy array of dtype {value.dtype}")
        return torch.from_numpy(value if value.flags.writeable else value.copy())
    raise ValueError(f"{name} must be a torch.Tensor or a numpy array, got {type(value).__name__}")


#: values per block of :func:`check_finite_rows`'s scan (bounded extra memory, a few MB)
_CHECK_BLOCK = 1 << 22
#: tensors already found finite: id -> (weak reference, version counter when checked).  A cached data set handed to
#: many trainers (every client of every run of a grid) is scanned once; an in-place write bumps ``_version`` (shared
#: with every view of the same base), a freed tensor drops out, so nothing changed since is ever skipped.
_FOUND_FINITE: dict[int, tuple[weakref.ref, int]] = {}
#: below this many values a scan is cheaper than the bookkeeping
_CACHE_MIN_NUMEL = 1 << 20


def _known_finite(t: Tensor) -> bool:
    """Whether ``t`` or the base it is a view of was found finite and not written in place since."""
    for candidate in (t, t._base):
        if candidate is None:
            continue
        entry = _FOUND_FINITE.get(id(candidate))
        if entry is not None and entry[0]() is candidate and entry[1] == candidate._version:
            return True
    return False


def _remember_finite(t: Tensor) -> None:
    key = id(t)
    _FOUND_FINITE[key] = (weakref.ref(t, lambda _ref, key=key: _FOUND_FINITE.pop(key, None)), t._version)


def check_finite_rows(name: str, t: Tensor) -> Tensor:
    """``t`` unchanged when every value is finite; else ``ValueError`` naming ``name``, the first row (index along
    dimension 0) holding a NaN or ±inf, what it holds and how many rows are bad.  Integer and bool tensors are finite.
    A large tensor found finite (or a view of one) is not scanned again until it is written in place
    (``_version``) or freed: a grid hands the same cached data set to every trainer.

    Checked before the first step: a NaN in one row would otherwise train silently until a batch samples that row
    (then the whole update is NaN), or never, while the accountant counts it."""
    if not (t.is_floating_point() or t.is_complex()) or t.numel() == 0:
        return t
    large = t.numel() >= _CACHE_MIN_NUMEL
    if large and _known_finite(t):
        return t
    rows = t.reshape(t.shape[0], -1) if t.dim() else t.reshape(1, 1)
    # scanned a block of rows at a time: one mask of the whole tensor would cost numel bytes (GBs for cached features)
    step = max(1, _CHECK_BLOCK // max(1, rows.shape[1]))
    if all(bool(torch.isfinite(rows[i : i + step]).all()) for i in range(0, rows.shape[0], step)):
        if large:
            _remember_finite(t)
        return t
    finite = torch.isfinite(rows).all(dim=1)
    bad = (~finite).nonzero().flatten()
    first = int(bad[0])
    row = t[first].reshape(-1)
    kinds = [
        k for k, m in (("NaN", torch.isnan(row)), ("+inf", row == np.inf), ("-inf", row == -np.inf)) if bool(m.any())
    ]
    raise ValueError(
        f"{name} must be finite: row {first} holds {' and '.join(kinds)} "
        f"({len(bad)} of {t.shape[0] if t.dim() else 1} rows are not finite); clean or drop them before training"
    )


def _probe(model: nn.Module, x: Tensor, name: str, device: torch.device | None) -> Tensor:
    """The model's output on the first two examples (two: batch-statistics layers refuse one; eval mode, no gradient,
    global RNG untouched)."""
    first = x[:2].to(device) if device is not None else x[:2]
    was_training = model.training
    devices = [first.device] if first.device.type == "cuda" else []
    try:
        with torch.random.fork_rng(devices=devices), torch.no_grad():
            model.eval()
            out = model(first)
    except (RuntimeError, TypeError, ValueError, IndexError) as exc:
        params = {str(p.dtype) for p in model.parameters()}
        raise ValueError(
            f"the model cannot take {name} (X): model(X[:2]) failed with {type(exc).__name__}: {exc} "
            f"(X is {x.dtype} of shape {tuple(x.shape)}; the model's parameters are {', '.join(sorted(params))})"
        ) from exc
    finally:
        model.train(was_training)
    if not isinstance(out, Tensor):
        raise ValueError(f"the model must return a tensor, got {type(out).__name__} for {name} (X)")
    return out


def check_labels(name: str, y: Tensor, loss: str | Callable, output: Tensor | None) -> Tensor:
    """``y`` as the named ``loss`` takes it (``ValueError`` naming ``name`` otherwise); a callable loss is not checked.

    ``"cross_entropy"``: one integer class label per example in [0, classes), classes = ``output.shape[1]``
    (converted to int64); ``"bce"``: targets in [0, 1]; ``"mse"``: finite real targets.
    """
    if not isinstance(loss, str):
        return y
    if y.is_complex():
        raise ValueError(f"{name} must hold real labels, got {y.dtype}")
    if loss == "cross_entropy":
        if y.dim() != 1:
            raise ValueError(f"{name} must be one class label per example (shape (n,)), got shape {tuple(y.shape)}")
        if y.dtype == torch.bool or y.is_floating_point():
            raise ValueError(
                f"{name} must hold integer class labels for the cross-entropy loss, got {y.dtype} "
                "(convert whole-number labels with y.long())"
            )
        y = y.to(torch.int64)
        if output is None or output.dim() != 2:
            shape = None if output is None else tuple(output.shape)
            raise ValueError(f"the cross-entropy loss needs model outputs of shape (n, classes), got {shape}")
        classes = output.shape[1]
        bad = (y < 0) | (y >= classes)
        if bool(bad.any()):
            values = sorted({int(v) for v in y[bad][:1000].tolist()})[:5]
            ignore = " (−100 is cross-entropy's ignore index: such rows would not be trained on, yet ε counts them)"
            raise ValueError(
                f"{name} must hold class labels in [0, {classes}) (the model has {classes} outputs); "
                f"{int(bad.sum())} labels are outside, e.g. {values}" + (ignore if -100 in values else "")
            )
        return y
    if y.is_floating_point() and not bool(torch.isfinite(y).all()):
        raise ValueError(f"{name} must hold finite targets; it holds NaN or ±inf")
    if loss == "bce" and y.numel() and not (bool((y >= 0).all()) and bool((y <= 1).all())):
        raise ValueError(
            f"{name} must hold targets in [0, 1] for the logistic loss 'bce', got values in "
            f"[{float(y.min())}, {float(y.max())}] (map labels ±1 to 0/1)"
        )
    return y


def check_training_data(
    model: nn.Module,
    data: Any,
    loss: str | Callable,
    *,
    name: str = "data",
    device: torch.device | str | None = None,
) -> tuple[Tensor, Tensor]:
    """``data`` = (X, y) checked and converted for training ``model`` with ``loss`` (see the module docstring).

    X and y may be tensors or numpy arrays (converted); they need the same non-zero number of rows; the model
    must accept X (probed on the first two examples, on ``device``); y must suit the loss (:func:`check_labels`);
    X and y must be finite (:func:`check_finite_rows`: the first row with a NaN or ±inf is named).
    Every refusal is a ``ValueError`` naming ``name``.
    """
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise ValueError(f"{name} must be a pair (X, y), got {type(data).__name__}")
    x = as_tensor(f"{name}[0] (X)", data[0])
    y = as_tensor(f"{name}[1] (y)", data[1])
    if x.dim() == 0 or y.dim() == 0 or x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError(
            f"{name} must be (X, y) with the same non-zero number of rows, got shapes {tuple(x.shape)} and "
            f"{tuple(y.shape)}"
        )
    if x.is_complex():
        raise ValueError(f"{name}[0] (X) must be real, got {x.dtype}")
    check_finite_rows(f"{name}[0] (X)", x)  # before the model sees a row: NaN in one row is named, not trained on
    check_finite_rows(f"{name}[1] (y)", y)
    out = _probe(model, x, f"{name}[0]", torch.device(device) if device is not None else None)
    return x, check_labels(f"{name}[1] (y)", y, loss, out)


# ---- fingerprints -----------------------------------------------------------------------------------------------
def _hash_tensor(h: Any, t: Tensor) -> None:
    h.update(f"{t.dtype}|{tuple(t.shape)}|".encode())
    flat = t.detach().reshape(t.shape[0], -1) if t.dim() else t.detach().reshape(1, 1)
    row = max(flat.shape[1] * flat.element_size(), 1)
    step = max(1, _CHUNK_BYTES // row)
    for start in range(0, flat.shape[0], step):
        chunk = flat[start : start + step].cpu().contiguous().reshape(-1)
        if chunk.numel():
            h.update(chunk.view(torch.uint8).numpy().data)


def data_fingerprint(pairs: Sequence[tuple[Tensor, Tensor]]) -> str:
    """SHA-256 (hex) of the shapes, dtypes and bytes of every (X, y) in ``pairs``, in order: equal fingerprints mean
    the same training data, wherever the tensors live (CPU or GPU)."""
    h = hashlib.sha256(b"dpcore-data-v1|")
    for x, y in pairs:
        _hash_tensor(h, x)
        _hash_tensor(h, y)
    return h.hexdigest()


def model_fingerprint(model: nn.Module) -> str:
    """SHA-256 (hex) of the model's structure: its module names and types, and the names, shapes and dtypes of its
    parameters and buffers (not their values, which training changes)."""
    h = hashlib.sha256(b"dpcore-model-v1|")
    for name, module in model.named_modules():
        h.update(f"{name}:{type(module).__module__}.{type(module).__qualname__}|".encode())
    for name, t in model.state_dict().items():
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}|".encode())
    return h.hexdigest()


# ---- checkpoints ------------------------------------------------------------------------------------------------
def read_checkpoint(path: str | os.PathLike, *, remedy: str = "delete it to train from scratch") -> dict[str, Any]:
    """The dict saved at ``path`` (``torch.load(weights_only=True)`` on the CPU); a missing, truncated, empty or
    foreign file is a :class:`CheckpointError` naming it and ``remedy``."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no checkpoint file there ({'a directory' if path.is_dir() else 'missing'})")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, EOFError, RuntimeError, pickle.UnpicklingError, KeyError, ValueError, TypeError,
            AttributeError, IndexError, UnicodeDecodeError) as exc:  # fmt: skip
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "empty or truncated file"
        why = f"{type(exc).__name__}: {first}"
        raise CheckpointError(f"{path} is not a readable checkpoint ({why}); {remedy}") from exc
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} is not a checkpoint (it holds a {type(state).__name__}, not a dict); {remedy}")
    return state


def check_fingerprints(state: Mapping[str, Any], expected: Mapping[str, str]) -> list[str]:
    """Compare the fingerprints ``expected`` ({"data": ..., "model": ...}) with the ``<kind>_fingerprint`` entries of
    a checkpoint ``state``: a mismatch is a :class:`CheckpointError`; returns the kinds the checkpoint lacks."""
    missing = []
    for kind, now in expected.items():
        saved = state.get(f"{kind}_fingerprint")
        if saved is None:
            missing.append(kind)
        elif saved != now:
            what = {"data": "on other training data", "model": "of another model"}.get(kind, f"with other {kind}")
            raise CheckpointError(
                f"checkpoint was written by a run {what} ({kind} fingerprint {str(saved)[:16]}… != this run's "
                f"{now[:16]}…); resuming would continue another run"
            )
    return missing


def same_configuration(saved: Any, now: str, defaults: Mapping[str, Any]) -> bool:
    """Whether a checkpoint's configuration fingerprint ``saved`` (sorted JSON of the configuration's fields) is that
    of ``now``; a field the checkpoint lacks counts as equal when this run has it at its default in ``defaults``
    (a field added to the configuration after the checkpoint was written, as the configuration hash of the
    experiment runner leaves such fields out)."""
    if saved == now:
        return True
    try:
        old, new = json.loads(saved), json.loads(now)
    except (TypeError, json.JSONDecodeError):
        return False
    if not isinstance(old, dict) or not isinstance(new, dict) or set(old) - set(new):
        return False
    for key, value in new.items():
        if key in old:
            if old[key] != value:
                return False
        elif key not in defaults or json.loads(json.dumps(defaults[key], default=str)) != value:
            return False
    return True


def field_defaults(cls: type) -> dict[str, Any]:
    """``{field: default}`` of the dataclass ``cls`` (fields with a default or a default factory)."""
    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"cls must be a dataclass type, got {cls!r}")
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def legacy_warning(missing: Sequence[str]) -> None:
    """Warn that a checkpoint without the fingerprints ``missing`` is resumed unverified."""
    if missing:
        warnings.warn(
            f"checkpoint has no {' or '.join(missing)} fingerprint (written before checkpoints recorded one): "
            f"resuming without verifying that it continues a run on this {' and '.join(missing)}; delete it to "
            "train from scratch if in doubt",
            CheckpointWarning,
            stacklevel=3,
        )


def resume_from(trainer: Any, state: Mapping[str, Any], source: str | os.PathLike, remedy: str) -> None:
    """``trainer.load_state_dict(state)`` with its refusals and warnings naming the checkpoint file ``source``: a
    :class:`CheckpointError` (or a ``ValueError``/``KeyError``/``RuntimeError`` of a malformed state) becomes a
    :class:`CheckpointError` that names ``source`` and ``remedy``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            trainer.load_state_dict(dict(state))
        except (ValueError, KeyError, RuntimeError, TypeError, IndexError) as exc:
            raise CheckpointError(f"{source}: cannot resume from it: {exc}; {remedy}") from exc
    for w in caught:
        warnings.warn(f"{source}: {w.message}", w.category, stacklevel=3)


def check_state(
    state: Any, *, fmt: int, keys: Sequence[str], fingerprint: str, defaults: Mapping[str, Any],
    fingerprints: Mapping[str, str],
) -> None:  # fmt: skip
    """Refuse (:class:`CheckpointError`) a saved trainer state of another format, lacking ``keys``, of another
    configuration (``fingerprint``; fields missing from an older state count as at their ``defaults``) or of other
    data / another model (``fingerprints``); a state without data and model fingerprints is accepted with a warning."""
    if not isinstance(state, dict):
        raise CheckpointError(f"checkpoint state must be a dict, got {type(state).__name__}")
    if state.get("format") != fmt:
        raise CheckpointError(f"checkpoint format {state.get('format')!r} is not {fmt}")
    lacking = sorted(set(keys) - set(state))
    if lacking:
        raise CheckpointError(f"checkpoint state lacks {', '.join(lacking)}")
    if not same_configuration(state["fingerprint"], fingerprint, defaults):
        raise CheckpointError("checkpoint was written by a run with a different configuration")
    legacy_warning(check_fingerprints(state, fingerprints))
