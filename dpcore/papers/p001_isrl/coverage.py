"""Why a claim of Lowy & Razaviyayn (ICLR 2023) is not computed at a profile: the reason its ``not-run`` row gives.

Every notebook of paper 001 reports every claim it owns (``NOTEBOOKS`` in
:mod:`dpcore.papers.p001_isrl.claims`) at every profile.  A reduced profile runs fewer panels (the
(N, M) or M of Figs. 4-9), fewer ε or fewer App. I settings; :func:`not_run_reason` reads the
panel, ε and setting out of the claim key and names what the profile left out, e.g.
"ε = 6 not in this profile's grid (ε ∈ 1.5, 12)".

>>> not_run_reason("fig4.M=25.mb_beats_isrl_local", silos_per_round=[12], epsilons=[1.5, 12.0])
'panel M = 25 not in this profile (M ∈ 12)'
>>> not_run_reason("fig6.M=3.gain.eps=6", silos_per_round=[3], epsilons=[0.5, 3.0, 9.0])
"ε = 6 not in this profile's grid (ε ∈ 0.5, 3, 9)"
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = ["not_run_reason", "calibration_reason"]

_PANEL = re.compile(r"\.N=(\d+)\.M=(\d+)\.")
_SILOS = re.compile(r"\.M=(\d+)\.")
_EPS = re.compile(r"\.eps=([0-9.]+)$")
_SETTING = re.compile(r"^calib\.([^.]+)\.")


class _Setting(Protocol):  # dpcore.papers.p001_isrl.audit.Setting
    name: str
    epsilons: tuple[float, ...]
    eps_max: float


def _listed(values: Iterable[float]) -> str:
    return ", ".join(f"{v:g}" for v in values) or "none"


def _numbers(name: str, values: Iterable) -> list[float]:
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers, got {values!r}") from None


def not_run_reason(
    key: str,
    *,
    epsilons: Iterable[float] = (),
    panels: Iterable[Sequence[int]] = (),
    silos_per_round: Iterable[int] = (),
    settings: Iterable[str] = (),
) -> str:
    """The reason why claim ``key`` has no value at a profile with these parameters.

    ``epsilons``: the ε the profile tests; ``panels``: its (N, M) panels (insurance); ``silos_per_round``:
    its M (MNIST, obesity); ``settings``: the App. I settings it audits (``privacy_accounting``).  The first
    ingredient of the key that the profile lacks is named; a key whose ingredients are all there (e.g.
    an ordering that needs more panels) gets the generic reason.
    """
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a non-empty claim key, got {key!r}")
    eps = _numbers("epsilons", epsilons)
    pairs = [tuple(int(x) for x in _numbers("panels", p)) for p in panels]
    if any(len(p) != 2 for p in pairs):
        raise ValueError(f"panels must be (N, M) pairs, got {pairs!r}")
    ms = [int(m) for m in _numbers("silos_per_round", silos_per_round)]
    names = list(settings)
    if not all(isinstance(n, str) for n in names):
        raise ValueError(f"settings must be setting names such as 'mnist', got {names!r}")
    setting = _SETTING.match(key)
    if setting and setting.group(1) not in names:
        return f"setting {setting.group(1)} not audited at this profile (settings: {', '.join(names) or 'none'})"
    panel = _PANEL.search(key)
    if panel:
        n, m = int(panel.group(1)), int(panel.group(2))
        if (n, m) not in pairs:
            shown = ", ".join(f"({a}, {b})" for a, b in pairs) or "none"
            return f"panel N = {n}, M = {m} not in this profile ((N, M) ∈ {shown})"
    elif (silos := _SILOS.search(key)) and int(silos.group(1)) not in ms:
        return f"panel M = {silos.group(1)} not in this profile (M ∈ {_listed(ms)})"
    value = _EPS.search(key)
    if value and float(value.group(1)) not in eps:
        return f"ε = {float(value.group(1)):g} not in this profile's grid (ε ∈ {_listed(eps)})"
    if key.endswith("eps_le_2") and not any(e <= 2 for e in eps):
        return f"needs a tested ε ≤ 2 (ε ∈ {_listed(eps)})"
    if key.endswith("eps_ge_2") and not any(e >= 2 for e in eps):
        return f"needs a tested ε ≥ 2 (ε ∈ {_listed(eps)})"
    if key.startswith("figs8_9."):
        return "needs the Figs. 8-9 panels, none in this profile"
    return "not computed at this profile"


def calibration_reason(key: str, settings: Sequence[_Setting], local_epsilons: Iterable[float]) -> str:
    """:func:`not_run_reason` of a ``calib.<setting>.<algorithm>.eps=<ε>`` claim of ``privacy_accounting``, given
    the audited ``settings`` (:class:`~dpcore.papers.p001_isrl.audit.Setting`: each with its MB-SGD ε) and the
    Local SGD ε (``local_epsilons``, up to each setting's ε_max)."""
    match = re.fullmatch(r"calib\.([^.]+)\.(mb-sgd|local-sgd)\.eps=[0-9.]+", key) if isinstance(key, str) else None
    if match is None:
        raise ValueError(f"key must be a calibration claim key 'calib.<setting>.<algorithm>.eps=<ε>', got {key!r}")
    local = _numbers("local_epsilons", local_epsilons)
    tested = {s.name: (list(s.epsilons) if match.group(2) == "mb-sgd" else [e for e in local if e <= s.eps_max])
              for s in settings}  # fmt: skip
    name = match.group(1)
    return not_run_reason(key, settings=list(tested), epsilons=tested.get(name, []))
