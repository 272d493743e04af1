"""Claims registry: every published number a notebook regenerates, next to ours.

A *claim specification* (:class:`ClaimSpec`) holds one number of a paper (or of another
publication) with where it comes from (``source``: ``printed`` / ``derived`` / ``reference`` /
``consistency``, and ``location``), the tolerance it is compared with, and, when we know the
paper's number is wrong, an :class:`Erratum` with the value we expect instead and the evidence.
A printed range ("30–40 %") is an :class:`Interval`: ours reproduces it when it lies inside.
The specifications live in each paper package's ``claims.py``, which also says which notebook
checks each of them (:class:`NotebookClaims`); notebooks only compute our value and call
:meth:`ClaimsLog.check` (or :meth:`dpcore.report.Report.check`), with ``None`` and the reason
for a claim they do not compute at their profile.

``consistency`` rows hold a value the paper's own setup fixes by construction (a calibration
target, a number read off the formula a figure plots): they check that our code is consistent
with it, reproduce nothing, and the scorecard counts them apart from the paper's numbers.
``audit`` rows are our checks of the authors' released code (a named mode of it, at the ε of the
noise that ran, or a privacy audit of it): a value reached only under such a mode is not a
reproduction of the paper's claim, so these rows are counted apart too, under the paper's
``audit`` findings (:data:`FINDING_LABELS`).

The status of a claim is never typed by hand; :func:`compute_status` derives it:

* ``not-run``           -- our value is ``None``/NaN, or the claim needs the paper's full scale
  (``scale="full"``) and the run was reduced (our reduced-scale value then goes into the note);
* ``reproduced``        -- our value matches the specification's value within its tolerance;
* ``inconclusive``      -- the notebook found the data cannot decide it (``ClaimsLog.check(...,
  inconclusive=reason)``: runs at chance, seeds on both sides), whatever the value;
* ``erratum`` / ``not-reproduced`` / ``inconclusive`` -- it does not match, but it matches the expected value
  of the specification's :class:`Explanation` (:class:`Erratum`: the paper is wrong by its own formulas;
  :class:`NotReproduced`: our runs do not reach it; :class:`Inconclusive`) within its tolerance;
* ``differs``           -- anything else (a failure: ``make figures`` and ``make test`` exit non-zero).

Each paper package groups its explained rows by root cause into a few :class:`Finding` objects, which lead
the scorecard, ``ERRATA.md`` and the README (:func:`verdict_line`).

>>> spec = ClaimSpec("ref", "abadi.eps", "Abadi et al. 2016 §3.1", "epsilon", 1.26, "reference",
...                  "Abadi et al., CCS 2016, §3.1", atol=0.005)
>>> ClaimsLog().check(spec, 1.2586).status
'reproduced'
>>> wrong = ClaimSpec("000", "t8.eps.row3", "Table 8", "epsilon of row 3", 1.5, "printed", "Table 8, row 3",
...                   rtol=1e-3, explanation=Erratum(1.2498, "s = 1267 gives eps = 1.2498 (Thm 3.1)", rtol=1e-3))
>>> ClaimsLog().check(wrong, 1.2497).status
'erratum'
>>> ClaimsLog().check(wrong, 1.4).status
'differs'
"""

from __future__ import annotations

import csv
import fnmatch
import io
import math
import numbers
import os
import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dpcore.paths import PROFILES, atomic_write_text
from dpcore.verdicts import (
    ALL_STATUSES,
    AUDIT_STATUSES,
    AUDIT_WORDS,
    Control,
    Run,
    TrainedRule,
    Weight,
    audit_changes_conclusion,
    audit_status,
    changes_conclusion,
    decide,
)
from dpcore.verdicts import count_by_status as _count_by_status
from dpcore.verdicts import count_phrase as _count_phrase

__all__ = [
    "COLUMNS",
    "EXPLAINED",
    "FINDING_KINDS",
    "FINDING_LABELS",
    "OWN_CHECKS",
    "AUDIT_VERDICT",
    "NOT_RUN_REASONS",
    "Explanation",
    "Finding",
    "Inconclusive",
    "NotReproduced",
    "TRAINING_NOTEBOOKS",
    "explanation_problems",
    "UNDECIDED_NOTE",
    "is_undecided",
    "finding_problems",
    "finding_rows",
    "not_run_reason",
    "verdict_line",
    "VERDICT_WORDS",
    "verdicts",
    "PAPERS",
    "PROFILES",
    "REASON_CHARS",
    "SCALES",
    "SOURCES",
    "count_phrase",
    "STATUSES",
    "Claim",
    "ClaimSpec",
    "ClaimsLog",
    "Erratum",
    "Interval",
    "NotebookClaims",
    "Paper",
    "Value",
    "collect",
    "compute_status",
    "format_value",
    "parse_value",
    "read_claims_csv",
    "scorecard_markdown",
    "short_reason",
    "specs_by_key",
    "unchecked",
    "values_match",
    "write_claims_csv",
]

PAPERS = ("000", "001", "002", "003", "004", "ref")
SOURCES = ("printed", "derived", "reference", "consistency", "audit")
#: the sources counted apart from the paper's numbers: our own checks (consistency with the paper's setup; audits of
#: the authors' code), each with how many of its rows hold
OWN_CHECKS = ("consistency", "audit")
#: rows shown under each finding in SCORECARD.md (the rest: claims.csv; the finding says what they share); none under
#: a trained or audit finding, whose rows' notes name the runs
SCORECARD_ROWS_PER_FINDING = 1
#: what a row says (the guide's vocabulary): ``erratum`` -- the paper is wrong by its own formulas or settings,
#: shown by a computation anyone reruns; ``not-reproduced`` -- an experiment none of our runs reaches at the
#: printed privacy level; ``inconclusive`` -- the data cannot decide; ``differs`` -- not yet investigated
#: (fails ``make figures``); ``not-run`` -- with its reason (:data:`NOT_RUN_REASONS`)
STATUSES = ALL_STATUSES
#: the statuses of an audit row (``source = audit``), in their own words (:func:`dpcore.verdicts.audit_status`)
AUDIT_ROW_STATUSES = AUDIT_STATUSES
#: the statuses an :class:`Explanation` gives a row whose value misses the printed one
EXPLAINED = ("erratum", "not-reproduced", "inconclusive")
#: the kinds of a :class:`Finding`; ``audit``: our audit of the authors' code (its rows are ``source = audit``)
#: ``trained``: trained claims decided by the verdict rules (their rows' statuses, computed, give its label)
FINDING_KINDS = ("reproduced", "erratum", "not-reproduced", "inconclusive", "not-run", "audit", "trained")
#: a finding's kind in the words the scorecard, ERRATA.md, the README and the docs show
FINDING_LABELS: dict[str, str] = {
    "reproduced": "reproduced", "erratum": "erratum", "not-reproduced": "not reproduced",
    "inconclusive": "inconclusive", "not-run": "not run", "audit": "audit of the authors' code",
    "trained": "trained claims, decided by the verdict rules",
}


def finding_label(finding: Finding, rows: Iterable[Mapping]) -> str:
    """A finding's kind in words; a ``trained`` finding's label is computed from the statuses of its rows that ran
    (e.g. "not reproduced (2), inconclusive (6)"), never typed."""
    if finding.kind != "trained":
        return FINDING_LABELS[finding.kind]
    counts: dict[str, int] = {}
    for r in rows:
        if r.get("status") != "not-run":
            counts[str(r.get("status"))] = counts.get(str(r.get("status")), 0) + 1
    if not counts:
        return "not run"
    return ", ".join(f"{VERDICT_WORDS.get(k, k)} ({n})" for k, n in sorted(counts.items()))
#: why a row is ``not-run``, in a fixed vocabulary (:func:`not_run_reason` picks one from the row)
NOT_RUN_REASONS = (
    "needs a GPU",
    "needs a data set we do not have",
    "needs CPU time not yet spent",
    "reduced at this profile",
)
#: a status in the words a figure or table shows it (the guide's verdict vocabulary)
VERDICT_WORDS: dict[str, str] = {"reproduced": "reproduced", "erratum": "erratum", "not-reproduced": "not reproduced",
                                 "inconclusive": "inconclusive", "differs": "differs", "not-run": "not run",
                                 **AUDIT_WORDS}
#: the verdict word of an ``audit`` row that holds: the value was reached under the authors' code, at the ε of the
#: noise that ran (its note), not a reproduction of the paper's claim
AUDIT_VERDICT = "authors' code"
FINDING_CHARS = 300  # the longest finding sentence (ERRATA.md keeps every line under 300 characters)
SCALES = ("any", "full")
COLUMNS = (
    "paper",
    "key",
    "artifact",
    "quantity",
    "source",
    "location",
    "paper_value",
    "our_value",
    "tolerance",
    "status",
    "profile",
    "note",
)

_KEY = re.compile(r"^[\w.+\-=]+$")
REASON_CHARS = 100  # the longest one-line reason in the scorecard (the full note is in claims.csv)


# ---------------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------------
class Interval:
    """A range the paper prints ("30–40 %" is ``Interval(0.3, 0.4)``; "σ ∈ [18, 22]" is ``Interval(18, 22)``).

    Our value (a number) reproduces it when ``low − tol(low) ≤ ours ≤ high + tol(high)`` with
    ``tol(x) = atol + rtol·|x|`` of the specification (usually 0: the range is the tolerance).
    Written to ``claims.csv`` as ``[low, high]``.

    >>> Interval(0.3, 0.4)
    Interval(0.3, 0.4)
    >>> format_value(Interval(18, 22))
    '[18, 22]'
    """

    __slots__ = ("low", "high")

    def __init__(self, low: float, high: float) -> None:
        for name, bound in (("low", low), ("high", high)):
            if not _is_number(bound) or not math.isfinite(float(bound)):
                raise ValueError(f"interval {name} must be a finite number, got {bound!r}")
        if not low < high:
            raise ValueError(f"interval low must be < high, got [{low!r}, {high!r}]")
        self.low = low
        self.high = high

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Interval) and (self.low, self.high) == (other.low, other.high)

    def __hash__(self) -> int:
        return hash((Interval, self.low, self.high))

    def __repr__(self) -> str:
        return f"Interval({self.low!r}, {self.high!r})"

    def contains(self, value: float, *, rtol: float = 0.0, atol: float = 0.0) -> bool:
        """Whether ``value`` lies in the range widened by ``atol + rtol·|bound|`` at each end."""
        low, high, val = float(self.low), float(self.high), float(value)
        return low - (atol + rtol * abs(low)) <= val <= high + (atol + rtol * abs(high))


Value = float | int | str | bool | Interval


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not _is_bool(value)


def _is_missing(value: Any) -> bool:
    """``None`` or a NaN of any real type (Python float, numpy float16/32/64, ...)."""
    return value is None or (_is_number(value) and math.isnan(float(value)))


def _check_value(name: str, value: Any, *, interval: bool = False) -> None:
    kinds = "a number, string, bool or Interval" if interval else "a number, string or bool"
    if _is_missing(value):
        raise ValueError(f"{name} must be {kinds}, not None/NaN (got {value!r})")
    if isinstance(value, Interval) and interval:
        return
    if not (_is_bool(value) or _is_number(value) or isinstance(value, str)):
        raise ValueError(f"{name} must be {kinds}, got {type(value).__name__} {value!r}")


def _check_tolerance(name: str, tol: Any) -> float:
    if not _is_number(tol) or not math.isfinite(float(tol)) or float(tol) < 0:
        raise ValueError(f"{name} must be a finite number in [0, inf), got {tol!r}")
    return float(tol)


def _check_text(name: str, text: Any) -> None:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} must be a non-empty string, got {text!r}")


def _check_identity(paper: Any, key: Any) -> None:
    """A finding's or a claim's ``paper`` (one of :data:`PAPERS`) and ``key`` (letters, digits and . _ - + =)."""
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {PAPERS}, got {paper!r}")
    _check_text("key", key)
    if not _KEY.match(key):
        raise ValueError(f"key must be letters, digits and . _ - + = only (no spaces or commas), got {key!r}")


def values_match(reference: Value, ours: Any, *, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """Whether ``ours`` equals ``reference`` within ``atol + rtol * |reference|``.

    Types never mix: a bool only equals a bool (``True`` is not ``1``), a string only equals the
    same string (tolerances do not apply to strings), a number only equals a number; an infinite
    reference equals only the same infinity.  ``None``/NaN never match.  An :class:`Interval`
    reference matches a finite number inside it (widened by the tolerances at each end).
    """
    rtol = _check_tolerance("rtol", rtol)
    atol = _check_tolerance("atol", atol)
    if _is_missing(ours) or _is_missing(reference):
        return False
    if isinstance(reference, Interval):
        return _is_number(ours) and math.isfinite(float(ours)) and reference.contains(ours, rtol=rtol, atol=atol)
    if isinstance(ours, Interval):
        raise ValueError(f"our_value must be a number, string, bool or None, not an Interval ({ours!r})")
    if _is_bool(reference) or _is_bool(ours):
        return _is_bool(reference) and _is_bool(ours) and bool(reference) == bool(ours)
    if isinstance(reference, str) or isinstance(ours, str):
        return isinstance(reference, str) and isinstance(ours, str) and reference == ours
    if not (_is_number(reference) and _is_number(ours)):
        raise ValueError(f"our_value must be a number, string, bool or None, got {type(ours).__name__} {ours!r}")
    ref, val = float(reference), float(ours)
    if math.isinf(ref) or math.isinf(val):
        return ref == val
    return abs(val - ref) <= atol + rtol * abs(ref)


def _tolerance_text(rtol: float, atol: float) -> str:
    parts = []
    if rtol:
        parts.append(f"rel {rtol:g}")
    if atol:
        parts.append(f"abs {atol:g}")
    return " + ".join(parts) if parts else "exact"


def format_value(value: Any) -> str:
    """A value as written to ``claims.csv``: ``""`` for None/NaN, ``True``/``False``, full-precision numbers,
    ``[low, high]`` for an :class:`Interval`."""
    if _is_missing(value):
        return ""
    if isinstance(value, Interval):
        return f"[{format_value(value.low)}, {format_value(value.high)}]"
    if _is_bool(value):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if _is_number(value):
        return repr(float(value))
    return str(value)


def parse_value(text: str, like: Value | None = None) -> Value | None:
    """Inverse of :func:`format_value`; ``like`` (the specification's value) says when text stays text
    (a ``str``) or may be a range (an :class:`Interval`: ``[low, high]``; a plain number stays a number)."""
    if text == "":
        return None
    if isinstance(like, str):
        return text
    bounds = re.fullmatch(r"\[(\S+), (\S+)\]", text) if isinstance(like, Interval) else None
    if bounds is not None:
        low, high = (parse_value(b) for b in bounds.groups())
        return Interval(low, high)
    if text in ("True", "False"):
        return text == "True"
    try:
        number = float(text)
    except ValueError:
        return text
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    return number


# ---------------------------------------------------------------------------------------------
# specifications
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Explanation:
    """Why ours misses the printed value, and the value we get instead (``expected``, within ``rtol``/``atol``).

    Use one of the three kinds, never this base: :class:`Erratum` (the paper is wrong by its own formulas or
    settings), :class:`NotReproduced` (an experiment our runs do not reach), :class:`Inconclusive` (the data
    cannot decide).  A row that misses the printed value gets the kind's status only while ours matches
    ``expected``; any other value is ``differs`` (not yet investigated).  ``evidence`` says what shows it in
    one or two sentences; ``summary`` (optional, at most :data:`REASON_CHARS` characters) is the one-line
    reason the scorecard shows (else the first clause of ``evidence``).
    """

    expected: Value
    evidence: str
    rtol: float = 0.0
    atol: float = 0.0
    summary: str = ""

    #: the row status this kind gives (set by each subclass)
    status: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if type(self) is Explanation:
            raise ValueError("use Erratum, NotReproduced or Inconclusive, not the Explanation base class")
        _check_value("explanation.expected", self.expected)
        _check_text("explanation.evidence", self.evidence)
        _check_tolerance("explanation.rtol", self.rtol)
        _check_tolerance("explanation.atol", self.atol)
        if (isinstance(self.expected, str) or _is_bool(self.expected)) and (self.rtol or self.atol):
            raise ValueError(f"explanation.rtol/atol must be 0 for a str/bool expected value, got {self.expected!r}")
        if not isinstance(self.summary, str) or len(self.summary) > REASON_CHARS or "\n" in self.summary:
            raise ValueError(
                f"explanation.summary must be one line of at most {REASON_CHARS} characters, got {self.summary!r}"
            )

    @property
    def tolerance(self) -> str:
        return _tolerance_text(self.rtol, self.atol)


@dataclass(frozen=True)
class Erratum(Explanation):
    """The paper's value is wrong by the paper's own definitions: ``expected`` is what its formulas and settings
    give, computed deterministically (no training run) by code anyone can rerun; ``by`` names that code
    (``module:function``) where it is not the notebook's own calculator call (required for a claim whose
    notebook trains, see :data:`TRAINING_NOTEBOOKS` in the runner's checks)."""

    by: str = ""
    status: ClassVar[str] = "erratum"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.by, str) or (self.by and not re.fullmatch(r"[\w.]+:[\w.]+", self.by)):
            raise ValueError(f"erratum.by must be '' or 'module:function', got {self.by!r}")


def _check_readings(readings: Any, closest: Any, untested: Any) -> None:
    """The readings tried (a tuple of non-empty strings), the closest one and what stays untested (one line each,
    at most :data:`FINDING_CHARS` characters) of a :class:`NotReproduced` row or a :class:`Finding`."""
    if not isinstance(readings, tuple) or not all(isinstance(r, str) and r for r in readings):
        raise ValueError(f"readings must be a tuple of non-empty strings, got {readings!r}")
    for name, value in (("closest", closest), ("untested", untested)):
        if not isinstance(value, str) or len(value) > FINDING_CHARS or "\n" in value:
            raise ValueError(f"{name} must be one line of at most {FINDING_CHARS} characters, got {value!r}")


#: how a row the notebook's data found undecidable starts its note (:meth:`ClaimsLog.check`, ``inconclusive=``)
UNDECIDED_NOTE = "inconclusive: "


def is_undecided(row: Mapping) -> bool:
    """Whether a claims.csv row is ``inconclusive`` because its notebook's data cannot decide it (its note, written
    by :meth:`ClaimsLog.check` with ``inconclusive=``, starts with :data:`UNDECIDED_NOTE`)."""
    return row.get("status") == "inconclusive" and str(row.get("note", "")).startswith(UNDECIDED_NOTE)


@dataclass(frozen=True)
class NotReproduced(Explanation):
    """An experiment whose printed value none of our runs reaches at the printed privacy level (never an erratum:
    we do not know the paper is wrong).  ``expected`` is our value as committed (a change beyond the tolerance
    is ``differs`` until looked at); ``readings`` the readings tried (mode, result files, value, ε),
    ``closest`` the one that came closest, ``untested`` what stays untested (e.g. the original data files)."""

    readings: tuple[str, ...] = ()
    closest: str = ""
    untested: str = ""
    status: ClassVar[str] = "not-reproduced"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_readings(self.readings, self.closest, self.untested)


@dataclass(frozen=True)
class Inconclusive(Explanation):
    """The data cannot decide the claim: runs that end near chance (``floor`` states the floor used, e.g. "below
    twice the chance accuracy") or seeds on both sides of the answer.  ``expected`` is our value as committed."""

    floor: str = ""
    status: ClassVar[str] = "inconclusive"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.floor, str):
            raise ValueError(f"floor must be a string, got {self.floor!r}")


@dataclass(frozen=True)
class Finding:
    """One root cause behind some of a paper's rows (issue 41): what a reader needs in two minutes.

    ``kind`` is one of :data:`FINDING_KINDS`; ``text`` one sentence (at most :data:`FINDING_CHARS` characters);
    ``short`` the clause the paper's one-line verdict uses (e.g. "Corollary 4.1 as printed is wrong");
    ``conclusion`` whether it changes a conclusion of the paper (else it is cosmetic); ``keys`` glob patterns
    over the paper's claim keys it covers; ``evidence`` where the evidence is (functions, result files).  A
    ``not-reproduced`` finding also names the ``readings`` tried (mode, result files, value, ε), the ``closest``
    one and what stays ``untested``.
    A finding of kind erratum / not-reproduced / inconclusive covers exactly the claims whose explanation has
    that kind (:func:`finding_problems`); a ``reproduced`` or ``not-run`` finding summarises rows of that status;
    an ``audit`` finding (what our audits of the authors' code show, e.g. that it exceeds the claimed ε) covers
    exactly the paper's ``source = audit`` claims, whose rows hold or are not run.
    """

    paper: str
    key: str
    kind: str
    text: str
    short: str
    conclusion: bool
    keys: tuple[str, ...]
    evidence: str
    readings: tuple[str, ...] = ()
    closest: str = ""
    untested: str = ""
    confidence: float | None = None
    weight: Weight | None = None

    def __post_init__(self) -> None:
        _check_identity(self.paper, self.key)
        _check_readings(self.readings, self.closest, self.untested)
        if self.confidence is not None and not (isinstance(self.confidence, float) and 0 < self.confidence < 1):
            raise ValueError(f"confidence must be None (an estimate) or a float in (0, 1), got {self.confidence!r}")
        if self.weight is not None:
            if not isinstance(self.weight, Weight):
                raise ValueError(f"weight must be a Weight or None, got {type(self.weight).__name__}")
            if changes_conclusion(self.weight) != bool(self.conclusion):
                raise ValueError(f"{self.paper}/{self.key}: conclusion={self.conclusion} contradicts the stated rule "
                                 f"(dpcore.verdicts.changes_conclusion of {self.weight})")  # fmt: skip
        if self.kind == "not-reproduced" and not (self.readings and self.closest and self.untested):
            raise ValueError(
                f"a not-reproduced finding ({self.key}) names the readings tried, the closest one and what stays "
                "untested (readings, closest, untested)"
            )
        if self.kind not in FINDING_KINDS:
            raise ValueError(f"kind must be one of {FINDING_KINDS}, got {self.kind!r}")
        for name, limit in (("text", FINDING_CHARS), ("short", 100), ("evidence", FINDING_CHARS)):
            value = getattr(self, name)
            _check_text(name, value)
            if len(value) > limit or "\n" in value:
                raise ValueError(f"{name} must be one line of at most {limit} characters, got {len(value)}: {value!r}")
        if not _is_bool(self.conclusion):
            raise ValueError(f"conclusion must be a bool, got {self.conclusion!r}")
        if not isinstance(self.keys, tuple) or not self.keys or not all(isinstance(k, str) and k for k in self.keys):
            raise ValueError(f"keys must be a non-empty tuple of glob patterns, got {self.keys!r}")

    @property
    def changes_a_conclusion(self) -> bool:
        """Whether it changes a conclusion: as stated, except that an audit finding needs a bound at a stated
        confidence (:func:`dpcore.verdicts.audit_changes_conclusion`): an estimate never does."""
        if self.kind == "audit":
            return audit_changes_conclusion(self.confidence, self.conclusion)
        return bool(self.conclusion)

    @property
    def weight_words(self) -> str:
        """"changes a conclusion", "cosmetic", or for an audit estimate "an estimate (no confidence bound)"."""
        if self.kind == "audit" and self.confidence is None:
            return "an estimate (no confidence bound)"
        return "changes a conclusion" if self.changes_a_conclusion else "cosmetic"

    def covers(self, key: str) -> bool:
        """Whether the claim ``key`` (of this finding's paper) is one of this finding's rows."""
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.keys)


@dataclass(frozen=True)
class ClaimSpec:
    """One number of a paper (or of another publication) and how ours is compared with it.

    ``source`` is ``printed`` (as printed; ``location`` says where: table/figure/equation/page),
    ``derived`` (implied by the paper but not printed; ``location`` says how it follows),
    ``reference`` (another publication; ``location`` names it and the place) or ``consistency``
    (a value the setup fixes by construction, e.g. a calibration target: a check of our code, not
    a reproduction) or ``audit`` (our check of the authors' released code: a named mode of it at the ε of the noise
    that ran, or a privacy audit of it; counted apart, under an ``audit`` finding).  ``value`` may be an
    :class:`Interval` for a printed range.  ``explanation`` says why ours
    misses it where it does (:class:`Erratum`, :class:`NotReproduced`, :class:`Inconclusive`).  ``scale="full"``
    marks a number measured by training at the paper's scale: at a reduced profile it is
    ``not-run`` (never compared with a different experiment).  ``rule`` (a :class:`~dpcore.verdicts.TrainedRule`)
    marks a trained claim whose status is computed from the committed runs by the verdict rules
    (:meth:`ClaimsLog.decide`, issue 50): it carries no typed value of ours.
    """

    paper: str
    key: str
    artifact: str
    quantity: str
    value: Value
    source: str
    location: str
    rtol: float = 0.0
    atol: float = 0.0
    explanation: Explanation | None = None
    scale: str = "any"
    note: str = ""
    rule: TrainedRule | None = None

    def __post_init__(self) -> None:
        _check_identity(self.paper, self.key)
        if self.rule is not None:
            if not isinstance(self.rule, TrainedRule):
                raise ValueError(f"rule must be a TrainedRule or None, got {type(self.rule).__name__}")
            if isinstance(self.explanation, NotReproduced | Inconclusive):
                raise ValueError(f"{self.paper}/{self.key}: a claim decided by a rule carries no typed "
                                 "NotReproduced/Inconclusive (its verdict is computed from the runs)")
        _check_text("artifact", self.artifact)
        _check_text("quantity", self.quantity)
        _check_value("value", self.value, interval=True)
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {self.source!r}")
        _check_text("location", self.location)
        _check_tolerance("rtol", self.rtol)
        _check_tolerance("atol", self.atol)
        if (isinstance(self.value, str) or _is_bool(self.value)) and (self.rtol or self.atol):
            raise ValueError(f"rtol/atol must be 0 for a str/bool value, got value {self.value!r}")
        if self.explanation is not None:
            if not isinstance(self.explanation, Explanation):
                raise ValueError(
                    "explanation must be an Erratum, NotReproduced, Inconclusive or None, "
                    f"got {type(self.explanation).__name__}"
                )
            if values_match(self.value, self.explanation.expected, rtol=self.rtol, atol=self.atol):
                raise ValueError(
                    f"explanation.expected {self.explanation.expected!r} matches the value {self.value!r} within the "
                    f"tolerance: ours would reproduce it ({self.paper}/{self.key})"
                )
        if self.scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {self.scale!r}")
        if not isinstance(self.note, str):
            raise ValueError(f"note must be a string, got {self.note!r}")

    @property
    def tolerance(self) -> str:
        if isinstance(self.value, Interval):
            widened = _tolerance_text(self.rtol, self.atol)
            return "in range" if widened == "exact" else f"in range, {widened} at each end"
        return _tolerance_text(self.rtol, self.atol)


@dataclass(frozen=True)
class Paper:
    """One paper package as the registry reads it (issue 50, ``dpcore.papers``): its paper ``id`` (one of
    :data:`PAPERS`), ``slug`` (the package name, e.g. ``p003_shuffling``), ``title``, the claim ``specs``, which
    ``notebooks`` check them, its ``findings`` (in the order of its verdict line), its explorer (``explorer_topic`` and
    ``explorer`` module, "" for none) and ``gpu_keys`` (glob patterns of claim keys whose runs need a GPU)."""

    id: str
    slug: str
    title: str
    specs: tuple[ClaimSpec, ...]
    notebooks: tuple[NotebookClaims, ...]
    findings: tuple[Finding, ...] = ()
    explorer_topic: str = ""
    explorer: str = ""
    gpu_keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.id not in PAPERS:
            raise ValueError(f"id must be one of {PAPERS}, got {self.id!r}")
        if not isinstance(self.slug, str) or not re.fullmatch(r"[a-z]\w*", self.slug):
            raise ValueError(f"slug must be a package name, got {self.slug!r}")
        if not isinstance(self.title, str):
            raise ValueError(f"title must be a string, got {self.title!r}")
        kinds = (("specs", ClaimSpec), ("notebooks", NotebookClaims), ("findings", Finding), ("gpu_keys", str))
        for name, kind in kinds:
            value = getattr(self, name)
            if not isinstance(value, tuple) or not all(isinstance(v, kind) for v in value):
                raise ValueError(f"{self.slug}: {name} must be a tuple of {kind.__name__}")
        if bool(self.explorer) != bool(self.explorer_topic):
            raise ValueError(f"{self.slug}: explorer and explorer_topic go together, got {self.explorer_topic!r}, "
                             f"{self.explorer!r}")  # fmt: skip


@dataclass(frozen=True)
class NotebookClaims:
    """The claims of one paper that one notebook checks: ``notebook`` is its key under ``notebooks/``
    (e.g. ``001_isrl_dp/mnist_logistic``), ``topic`` what they are about in a few words (the
    scorecard's label, e.g. "Figs. 4, 7 (MNIST)"), ``keys`` the claim keys.  Every notebook reports
    every one of its keys at every profile (``None`` with the reason where it does not compute it)."""

    paper: str
    notebook: str
    topic: str
    keys: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.paper not in PAPERS:
            raise ValueError(f"paper must be one of {PAPERS}, got {self.paper!r}")
        _check_text("notebook", self.notebook)
        if not re.fullmatch(r"[\w.\-]+(/[\w.\-]+)+", self.notebook):
            raise ValueError(f"notebook must be a key such as '001_isrl_dp/mnist_logistic', got {self.notebook!r}")
        _check_text("topic", self.topic)
        if not isinstance(self.keys, tuple) or not self.keys:
            raise ValueError(f"keys must be a non-empty tuple of claim keys, got {self.keys!r}")
        for key in self.keys:
            _check_text("keys", key)
        if len(set(self.keys)) != len(self.keys):
            raise ValueError(f"keys of {self.notebook} must be distinct")

    @classmethod
    def of(cls, notebook: str, topic: str, specs: Iterable[ClaimSpec]) -> NotebookClaims:
        """The claims ``specs`` (all of one paper; their keys, in order) checked by ``notebook``."""
        specs = list(specs)
        papers = {s.paper for s in specs}
        if len(papers) != 1:
            raise ValueError(f"specs must be a non-empty list of one paper's claims, got papers {sorted(papers)}")
        return cls(papers.pop(), notebook, topic, tuple(s.key for s in specs))


def unchecked(log: ClaimsLog, specs: Iterable[ClaimSpec]) -> list[ClaimSpec]:
    """The specifications of ``specs`` that ``log`` has no row for yet (a notebook reports them as not-run)."""
    done = {(c.paper, c.key) for c in log.claims}
    return [s for s in specs if (s.paper, s.key) not in done]


def specs_by_key(specs: Iterable[ClaimSpec]) -> dict[str, ClaimSpec]:
    """``{spec.key: spec}``; raises ``ValueError`` on a duplicate key or a non-ClaimSpec item."""
    table: dict[str, ClaimSpec] = {}
    for spec in specs:
        if not isinstance(spec, ClaimSpec):
            raise ValueError(f"specs must be ClaimSpec instances, got {type(spec).__name__}")
        if spec.key in table:
            raise ValueError(f"duplicate claim key {spec.key!r} (paper {spec.paper})")
        table[spec.key] = spec
    return table


def compute_status(spec: ClaimSpec, our_value: Any, *, reduced: bool = False, inconclusive: bool = False) -> str:
    """Status of ``our_value`` against ``spec`` (see the module docstring for the rules); ``inconclusive``: the
    notebook found that its data cannot decide the claim."""
    if not isinstance(spec, ClaimSpec):
        raise ValueError(f"spec must be a ClaimSpec, got {type(spec).__name__}")
    if _is_missing(our_value):
        return "not-run"
    if not (_is_bool(our_value) or _is_number(our_value) or isinstance(our_value, str)):
        raise ValueError(f"our_value must be a number, string, bool or None, got {type(our_value).__name__}")
    if spec.scale == "full" and reduced:
        return "not-run"
    if inconclusive:
        return "inconclusive"
    if spec.source == "audit":  # an audit row has statuses of its own words, never reproduced (issue 50)
        return audit_status(spec.key, values_match(spec.value, our_value, rtol=spec.rtol, atol=spec.atol))
    if values_match(spec.value, our_value, rtol=spec.rtol, atol=spec.atol):
        return "reproduced"
    why = spec.explanation
    if why is not None and values_match(why.expected, our_value, rtol=why.rtol, atol=why.atol):
        return why.status
    return "differs"


_DATA_SET_NEEDS = re.compile(
    r"needs [^;]*(data|features|ImageNet|SimCLR|SVHN|Fashion-MNIST)|download-only|does not name|set is unnamed", re.I
)


def not_run_reason(row: Mapping, gpu_keys: Iterable[str] = ()) -> str:
    """Why a ``not-run`` row was not run, as one of :data:`NOT_RUN_REASONS` (the row's note has the details).

    A note that says the claim needs data we do not have (a download-only or unavailable data set, one the
    paper does not name, features pretrained on other data) -> "needs a data set we do not have"; otherwise,
    at the quick profile (the reduced one by definition) -> "reduced at this profile"; at the paper profile, a
    key matching one of the paper's ``gpu_keys`` globs (its grids that need a GPU: ``GPU_KEYS`` in its claims
    module) -> "needs a GPU", else "needs CPU time not yet spent".  Raises ``ValueError`` for a row that is not
    ``not-run``.
    """
    if row.get("status") != "not-run":
        raise ValueError(f"row must be a not-run row, got status {row.get('status')!r} ({row.get('key')})")
    if _DATA_SET_NEEDS.search(str(row.get("note", ""))):
        return NOT_RUN_REASONS[1]
    if row.get("profile") == "quick":
        return NOT_RUN_REASONS[3]
    if any(fnmatch.fnmatchcase(str(row.get("key", "")), g) for g in gpu_keys):
        return NOT_RUN_REASONS[0]
    return NOT_RUN_REASONS[2]


def finding_problems(findings: Iterable[Finding], specs: Iterable[ClaimSpec],
                     rows: Iterable[Mapping] = ()) -> list[str]:  # fmt: skip
    """What is wrong with the findings of some papers (empty: nothing), one message each.

    Each spec with an :class:`Explanation` is covered by exactly one finding of its paper, of the same kind;
    each finding covers at least one spec of its paper; finding keys are unique per paper; a covered row of
    ``rows`` (claims.csv rows) has the finding's status or ``not-run`` (a ``reproduced`` finding whose row now
    differs is stale), or, under a not-reproduced / inconclusive finding, ``reproduced`` (a training claim may
    hold at the reduced profile and not at full scale, or the reverse).  Each ``source = audit`` spec is covered
    by exactly one ``audit`` finding of its paper and by no finding of another kind (a value reached only under
    the authors' code is never counted as reproduced), and an audit finding covers only such specs.
    """
    findings = list(findings)
    specs = list(specs)
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for f in findings:
        if (f.paper, f.key) in seen:
            problems.append(f"finding {f.paper}/{f.key} is defined twice")
        seen.add((f.paper, f.key))
        if not any(s.paper == f.paper and f.covers(s.key) for s in specs):
            problems.append(f"finding {f.paper}/{f.key} covers no claim (keys {f.keys})")
    table = {(s.paper, s.key): s for s in specs}
    for spec in specs:
        mine = [f for f in findings if f.paper == spec.paper and f.covers(spec.key)]
        audits = [f.key for f in mine if f.kind == "audit"]
        if spec.source == "audit" and (len(audits) != 1 or len(mine) != 1):
            problems.append(f"{spec.paper}/{spec.key}: an audit claim must be covered by exactly one finding, of kind "
                            f"audit, got {[(f.key, f.kind) for f in mine]}")  # fmt: skip
        elif spec.source != "audit" and audits:
            problems.append(f"{spec.paper}/{spec.key}: a {spec.source} claim under the audit finding(s) {audits}")
        if spec.explanation is None:  # a finding's patterns may match rows of its tables that hold
            continue
        explained = [f for f in mine if f.kind in EXPLAINED]
        if len(explained) != 1:
            problems.append(
                f"{spec.paper}/{spec.key}: a {spec.explanation.status} claim must be covered by exactly one "
                f"finding, got {[f.key for f in explained]}"
            )
        elif explained[0].kind != spec.explanation.status:
            problems.append(
                f"{spec.paper}/{spec.key}: {spec.explanation.status} claim under the {explained[0].kind} finding "
                f"{explained[0].key}"
            )
    for row in rows:
        spec = table.get((str(row.get("paper")), str(row.get("key"))))
        for f in findings:
            if f.paper == row.get("paper") and f.covers(str(row.get("key"))) and f.kind != "not-run":
                if f.kind in EXPLAINED and (spec is None or spec.explanation is None):
                    continue  # a row of the same table that holds, or one the notebook's data decides
                # an experiment may hold at one profile and not at another; a computation may not; an audit holds
                if f.kind == "trained":
                    allowed = ("reproduced", "not-reproduced", "inconclusive", "not-run")
                elif f.kind == "audit":
                    allowed = (*AUDIT_STATUSES, "not-run")
                else:
                    allowed = (f.kind, "not-run") + (("reproduced",) if f.kind != "erratum" else ())
                if row.get("status") not in allowed:
                    problems.append(
                        f"{row['paper']}/{row['key']}: status {row.get('status')} under the {f.kind} finding {f.key}"
                    )
    return problems


#: the notebooks whose claims are measured by training runs: an :class:`Erratum` there must name (``by``) the
#: deterministic computation that proves it, else the miss is a failed reproduction, not a mistake in the paper
TRAINING_NOTEBOOKS = (
    "000_proactive_dp/convex_training",
    "000_proactive_dp/nonconvex_training",
    "001_isrl_dp/mnist_logistic",
    "001_isrl_dp/insurance_linear",
    "001_isrl_dp/obesity_softmax",
    "002_modelmix/training",
    "003_shuffling_batch_clipping/training",
    "training/engine_tour",
)


def explanation_problems(specs: Iterable[ClaimSpec], notebooks: Iterable[NotebookClaims]) -> list[str]:
    """Errata whose evidence is a training run (issue 41: never call a failed reproduction an erratum): a claim
    checked by one of :data:`TRAINING_NOTEBOOKS`, or measured at full scale (``scale="full"``), may carry an
    :class:`Erratum` only with ``by`` naming the computation that proves it; ``by`` must import."""
    import importlib

    where = {(nb.paper, key): nb.notebook for nb in notebooks for key in nb.keys}
    problems = []
    for spec in specs:
        why = spec.explanation
        if not isinstance(why, Erratum):
            continue
        trained = spec.scale == "full" or where.get((spec.paper, spec.key)) in TRAINING_NOTEBOOKS
        if trained and not why.by:
            problems.append(
                f"{spec.paper}/{spec.key}: an erratum on a training-measured claim must name the computation that "
                "proves it (Erratum.by); a run that misses the printed value is NotReproduced"
            )
        if why.by:
            module, _, name = why.by.partition(":")
            try:
                target = importlib.import_module(module)
                for part in name.split("."):
                    target = getattr(target, part)
            except (ImportError, AttributeError) as exc:
                problems.append(f"{spec.paper}/{spec.key}: Erratum.by {why.by!r} does not resolve: {exc}")
    return problems


def finding_rows(finding: Finding, rows: Iterable[Mapping],
                 specs: Mapping[tuple[str, str], ClaimSpec] | None = None) -> list[Mapping]:  # fmt: skip
    """The claims.csv rows ``finding`` covers: those its patterns match, and, for an erratum / not-reproduced /
    inconclusive finding, only those of that status or (given ``specs``) whose explanation is of that kind."""
    out = []
    for r in rows:
        if r.get("paper") != finding.paper or not finding.covers(str(r.get("key"))):
            continue
        if finding.kind in EXPLAINED and r.get("status") != finding.kind:
            spec = (specs or {}).get((str(r.get("paper")), str(r.get("key"))))
            if spec is None or spec.explanation is None or spec.explanation.status != finding.kind:
                continue
        out.append(r)
    return out


def verdict_line(paper: str, findings: Iterable[Finding], rows: Iterable[Mapping]) -> str:
    """The paper's one-line plain verdict, generated from its findings (issue 41), e.g. "the accountant holds;
    Corollary 4.1 as printed is wrong; Table I is not reproduced at the printed ε".

    In the order the paper package lists them, each finding's ``short`` clause; a finding none of whose rows
    ran at any profile in ``rows`` (rows of every profile) is left out, unless it is a ``not-run`` finding;
    ``differs`` rows, if any, end the line ("n rows differ, not yet investigated").
    """
    rows = [r for r in rows if r.get("paper") == paper]
    parts = []
    for f in findings:
        if f.paper != paper:
            continue
        mine = finding_rows(f, rows)
        if f.kind == "not-run" or any(r.get("status") != "not-run" for r in mine):
            parts.append(f.short)
    differs = sum(r.get("status") == "differs" for r in rows)
    if differs:
        said = f"{differs} rows differ" if differs > 1 else "1 row differs"
        parts.append(f"{said}, not yet investigated")
    return "; ".join(parts) if parts else "no finding yet"


# ---------------------------------------------------------------------------------------------
# the log of one notebook
# ---------------------------------------------------------------------------------------------
def verdicts(rows: Iterable[Any]) -> dict[str, str]:
    """``{claim key: verdict in words}`` (:data:`VERDICT_WORDS`, e.g. "not reproduced") of recorded claim rows: the
    :class:`Claim` objects of a :class:`ClaimsLog` or ``claims.csv`` rows (mappings with ``key`` and ``status``).
    A figure marks its cells from these, never from typed text; a key without a row is the caller's "not run".
    An ``audit`` row (``source``) that holds reads :data:`AUDIT_VERDICT`: reached under the authors' code, not a
    reproduction of the paper's claim."""
    out: dict[str, str] = {}
    for row in rows:
        key, status, source = (row.get("key"), row.get("status"), row.get("source")) if isinstance(row, Mapping) else (
            getattr(row, "key", None), getattr(row, "status", None), getattr(row, "source", None))  # fmt: skip
        if not isinstance(key, str) or status not in VERDICT_WORDS:
            raise ValueError(f"rows must be claim rows with a key and a status among {STATUSES}, got {row!r}")
        out[key] = AUDIT_VERDICT if source == "audit" and status == "authors-code" else VERDICT_WORDS[status]
    return out


@dataclass(frozen=True)
class Claim:
    """One row of ``claims.csv``: a specification, our value and the computed status."""

    paper: str
    key: str
    artifact: str
    quantity: str
    source: str
    location: str
    paper_value: Value
    our_value: Value | None
    tolerance: str
    status: str
    profile: str
    note: str


def _join(*parts: str) -> str:
    return "; ".join(p.strip() for p in parts if p and p.strip())


def _plain(value: Any) -> Value | None:
    """numpy scalars -> Python scalars, NaN -> None (the CSV keeps full precision)."""
    if _is_missing(value):
        return None
    if _is_bool(value):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if _is_number(value):
        return float(value)
    return value


class ClaimsLog:
    """The claims one notebook checks; written to one CSV per notebook."""

    def __init__(self) -> None:
        self.claims: list[Claim] = []

    def check(
        self,
        spec: ClaimSpec,
        our_value: Any,
        *,
        note: str = "",
        reduced: bool = False,
        profile: str = "quick",
        inconclusive: str = "",
    ) -> Claim:
        """Compare ``our_value`` with ``spec`` and record the row; the only way to record a claim.

        The status comes from :func:`compute_status`.  The note gathers the specification's
        standing note, ``note``, and, for a row the explanation covers (or ``differs``), the
        explanation's kind and expected value.  A full-scale claim at a reduced run is ``not-run`` and our
        reduced-scale value goes into the note (the ``our_value`` column stays empty).  ``inconclusive``: the
        reason the notebook's data cannot decide the claim (e.g. "every run ends below 20 %, twice chance"),
        computed from the runs; the row is then ``inconclusive`` and the reason leads its note.  Checking
        the same key again (re-running a cell) replaces the earlier row.
        """
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
        if not isinstance(note, str):
            raise ValueError(f"note must be a string, got {note!r}")
        if not isinstance(inconclusive, str):
            raise ValueError(f"inconclusive must be a string (the reason, or ''), got {inconclusive!r}")
        status = compute_status(spec, our_value, reduced=bool(reduced), inconclusive=bool(inconclusive))
        ours = _plain(our_value)
        extra = ""
        why = spec.explanation
        if status == "not-run" and ours is not None:
            extra = f"full-scale claim; at reduced scale ours = {format_value(ours)}"
            ours = None
        elif status == "inconclusive" and inconclusive:
            extra = f"{UNDECIDED_NOTE}{inconclusive}"
        elif why is not None and status in (*EXPLAINED, "differs"):
            matched = "matches" if status in EXPLAINED else "does NOT match"
            expected = f"{format_value(why.expected)} ({why.tolerance})"
            extra = f"{why.status}: ours {matched} the expected {expected}; {why.evidence}"
        claim = Claim(
            paper=spec.paper,
            key=spec.key,
            artifact=spec.artifact,
            quantity=spec.quantity,
            source=spec.source,
            location=spec.location,
            paper_value=_plain(spec.value),
            our_value=ours,
            tolerance=spec.tolerance,
            status=status,
            profile=profile,
            note=_join(extra, note, spec.note),
        )
        self.claims = [c for c in self.claims if (c.paper, c.key) != (spec.paper, spec.key)]
        self.claims.append(claim)
        return claim

    def decide(
        self,
        spec: ClaimSpec,
        runs: Iterable[Run],
        *,
        control: Control | None = None,
        profile: str = "quick",
        note: str = "",
    ) -> Claim:
        """Record a trained claim decided by its rule (``spec.rule``, :func:`dpcore.verdicts.decide`) from ``runs``,
        the committed results read as :class:`~dpcore.verdicts.Run` records (full-scale ones decide wherever they
        exist, at every profile: one verdict per claim); ``control`` the pipeline's positive control.  Our value is
        the matching run's, else the closest reading's; the note names the runs, the closest reading and the
        control.  Checking the same key again replaces the earlier row."""
        if not isinstance(spec, ClaimSpec) or spec.rule is None:
            raise ValueError("spec must be a ClaimSpec with a rule (a TrainedRule); use check() for the others")
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
        if not isinstance(note, str):
            raise ValueError(f"note must be a string, got {note!r}")
        value = spec.value
        if isinstance(value, Interval) or isinstance(value, str):
            raise ValueError(f"{spec.key}: a rule decides a number or a bool, not {value!r}")
        verdict = decide(value, runs, spec.rule, atol=spec.atol, rtol=spec.rtol, control=control,
                         full_scale=spec.scale == "full")  # fmt: skip
        claim = Claim(
            paper=spec.paper, key=spec.key, artifact=spec.artifact, quantity=spec.quantity, source=spec.source,
            location=spec.location, paper_value=_plain(spec.value), our_value=_plain(verdict.value),
            tolerance=spec.tolerance, status=verdict.status, profile=profile,
            note=_join(f"rule: {verdict.note}", note, spec.note),
        )  # fmt: skip
        self.claims = [c for c in self.claims if (c.paper, c.key) != (spec.paper, spec.key)]
        self.claims.append(claim)
        return claim

    def to_rows(self) -> list[dict]:
        return [asdict(c) for c in self.claims]

    def write(self, path: str | os.PathLike) -> Path:
        """Write the log as CSV (atomically) and return its path."""
        return write_claims_csv(self.to_rows(), path)

    def _repr_markdown_(self) -> str:
        return _markdown_table(self.to_rows(), COLUMNS)


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------
def write_claims_csv(rows: Iterable[Mapping], path: str | os.PathLike) -> Path:
    """Write claim rows with exactly :data:`COLUMNS`, atomically (mode 0644 under umask 022)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: format_value(row[k]) for k in COLUMNS})
    return atomic_write_text(path, buffer.getvalue())


def read_claims_csv(path: str | os.PathLike) -> list[dict]:
    """Rows of one claims CSV (all values as text); raises ``ValueError`` on wrong columns."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: columns must be {COLUMNS}, got {reader.fieldnames}")
        return list(reader)


def collect(root: str | os.PathLike, *, exclude: Iterable[str | os.PathLike] = ()) -> list[dict]:
    """Read every ``*.claims.csv`` under ``root`` (sorted by path), skipping folders in ``exclude``."""
    skipped = [Path(p).resolve() for p in exclude]
    rows: list[dict] = []
    for path in sorted(Path(root).rglob("*.claims.csv")):
        resolved = path.resolve()
        if any(resolved.is_relative_to(s) for s in skipped):
            continue
        rows.extend(read_claims_csv(path))
    return rows


def _markdown_table(rows: list[dict], columns: Iterable[str]) -> str:
    columns = list(columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = [format_value(row[c]).replace("|", "\\|").replace("\n", " ") for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# the scorecard
# ---------------------------------------------------------------------------------------------
_REDUCED = "full-scale claim; at reduced scale ours = "
_ABBREVIATION = re.compile(
    r"(?:\b(?:figs?|eqs?|thm|tab|apps?|sec|cor|def|alg|ex|al|cf|vs|resp|approx|no|pp?|ca|e\.g|i\.e)|\b[a-z])$",
    re.IGNORECASE,
)


def _first_clause(text: str) -> str:
    """The text up to its first ``"; "`` or sentence end (abbreviations such as "Fig. 2" do not end one)."""
    text = " ".join(str(text).split())
    cut = text.find("; ")
    cut = len(text) if cut < 0 else cut
    for match in re.finditer(r"\. (?=[A-Z(])", text[:cut]):
        if not _ABBREVIATION.search(text[: match.start()]):
            cut = match.start()
            break
    return text[:cut].rstrip(" .:;")


def _shorten(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _short_value(value: Any) -> str:
    """A claims.csv value (text, or a value of a :class:`Claim`) for the scorecard: numbers to 4 significant
    digits, ``—`` for none."""
    text = value if isinstance(value, str) else format_value(value)
    if text == "":
        return "—"
    try:
        number = float(text)
    except ValueError:
        return _shorten(text, 40)
    if re.fullmatch(r"[+-]?\d+", str(text)):
        return str(text)
    return f"{number:.4g}"


def short_reason(row: Mapping, spec: ClaimSpec | None = None, *, limit: int = REASON_CHARS) -> str:
    """One line (at most ``limit`` characters) saying why a row is not ``reproduced``.

    erratum / not-reproduced / inconclusive: the explanation's summary or the first clause of its evidence;
    ``differs``: what it misses; ``not-run``: the notebook's reason (a reduced-scale run says so with our value).
    The full note stays in ``claims.csv``.
    """
    status = row.get("status", "")
    note = str(row.get("note", "") or "")
    why = spec.explanation if spec is not None else None
    if status == "reproduced":
        return ""
    if status == "not-run":
        if note.startswith(_REDUCED):
            ours = note[len(_REDUCED) :].split(";", 1)[0].strip()
            text = f"full-scale claim, run at reduced scale here (ours there: {_short_value(ours)})"
        else:
            text = _first_clause(note)
            if (not text or text.startswith("ours")) and spec is not None and spec.note:
                text = _first_clause(spec.note)  # the notebook's note only gives our value: the spec says why
            text = text or "not computed at this profile"
    elif status in EXPLAINED and why is not None and why.status == status:
        text = why.summary or _first_clause(why.evidence)
    elif status == "differs":
        expected = "" if why is None else f" nor the {why.status} value {format_value(why.expected)}"
        text = f"matches neither the paper ({row.get('tolerance', '')}){expected}"
    else:  # no specification at hand: the evidence follows the note's "<kind>: ours matches ...; "
        text = _first_clause(
            re.sub(r"^(erratum|not-reproduced|inconclusive): ours (matches|does NOT match) the expected [^;]*; ", "",
                   re.sub(r"^inconclusive: ", "", note))
        )
    return _shorten(text, limit)


def _counts(rows: Iterable[Mapping]) -> dict[str, int]:
    """Rows per status: :func:`dpcore.verdicts.count_by_status`, the one count (issue 50)."""
    return _count_by_status(rows)


def count_phrase(counts: Mapping[str, int], *, where: str = "here", differs: str = "**{n} differ unexplained**") -> str:
    """E.g. "12 of 15 reproduced, 2 errata, 1 not reproduced, 1 not run here" (zero parts left out) from
    :func:`dpcore.verdicts.count_by_status` (:func:`dpcore.verdicts.count_phrase`)."""
    return _count_phrase(counts, where=where, differs=differs)


def _key_groups(keys: list[str], limit: int = 180) -> str:
    """``table1.* (25), fig2.* (3), app_i1.upsilon2``: keys grouped by their first segment (a group of one shows
    the key), shortened to ``limit``."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        groups.setdefault(key.split(".", 1)[0], []).append(key)
    text = ", ".join(f"`{g[0]}`" if len(g) == 1 else f"`{h}.*` ({len(g)})" for h, g in groups.items())
    return _shorten(text, limit)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def scorecard_markdown(
    rows: list[dict],
    *,
    profile: str = "quick",
    specs: Iterable[ClaimSpec] = (),
    notebooks: Iterable[NotebookClaims] = (),
    titles: Mapping[str, str] | None = None,
    findings: Iterable[Finding] = (),
    gpu_keys: Mapping[str, Iterable[str]] | None = None,
) -> str:
    """``SCORECARD.md`` of one profile, readable in two minutes.

    First screen: per paper, its one-line verdict (:func:`verdict_line`) and its findings (kind, whether it
    changes a conclusion, the rows it covers), then the counts per status.  Then, per paper, the rows of each
    finding (key, printed, ours, status), any ``differs`` row, and the rows not run at this profile grouped by
    :func:`not_run_reason` (``gpu_keys``: per paper, its GPU grids' key globs).  Consistency checks
    (``source = consistency``) are counted apart.  Raises ``ValueError`` for a status outside :data:`STATUSES`.
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    for row in rows:
        if row["status"] not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {row['status']!r} ({row['paper']}/{row['key']})")
    table = {(s.paper, s.key): s for s in specs}
    findings = list(findings)
    gpu_keys = {p: tuple(g) for p, g in (gpu_keys or {}).items()}
    titles = dict(titles or {})
    topic_of = {(nb.paper, key): (nb.topic, nb.notebook) for nb in notebooks for key in nb.keys}
    papers = sorted({r["paper"] for r in rows}, key=lambda p: PAPERS.index(p) if p in PAPERS else 99)
    total = _counts(rows)
    shown = [s for s in STATUSES if total[s] or s == "reproduced"]  # the count table's columns: statuses that occur
    parts = [
        f"# Scorecard: the papers' claims vs dpcore (profile {profile})",
        "",
        "Each paper: its verdict in one line, then its findings (one root cause each). Rules: `docs/verdicts.md`; "
        "details: `ERRATA.md`.",
        "",
    ]
    by_paper = {p: [r for r in rows if r["paper"] == p] for p in papers}
    for paper in papers:
        mine = by_paper[paper]
        title = titles.get(paper, "")
        name = f"**Paper {paper}**" if paper != "ref" else "**Reference publications**"
        named = f"{name} ({title})" if title and paper != "ref" else name
        parts += _wrapped(f"- {named}: {verdict_line(paper, findings, mine)}.", "  ")
        for f in (f for f in findings if f.paper == paper):
            covered = finding_rows(f, mine, table)
            ran = [r for r in covered if r["status"] != "not-run"]
            if f.kind == "not-run":
                parts += _wrapped(f"  - *not run* ({len(covered)} rows): {f.text}", "    ")
                continue
            if not ran:
                continue
            weight = f.weight_words
            plural = "s" * (len(ran) > 1)
            parts += _wrapped(f"  - *{finding_label(f, ran)}* ({weight}; {len(ran)} row{plural}): {f.text}", "    ")
    parts += [
        "",
        *_wrapped(f"{len(rows)} claims checked at the {profile} profile: {count_phrase(total)}. From `claims.csv` "
                  "beside this file (full notes there).", ""),
        "",
        "| paper | " + " | ".join(shown) + " | consistency checks | total |",
        "|" + "---|" * (len(shown) + 3),
    ]
    for paper in [*papers, "all"]:
        c = _counts(rows if paper == "all" else by_paper[paper])
        n = len(rows if paper == "all" else by_paper[paper])
        parts.append(
            f"| {paper} | "
            + " | ".join(str(c[s]) for s in shown)
            + f" | {c['consistency-ok']}/{c['consistency']} | {n} |"
        )
    for paper in papers:
        parts += _paper_section(paper, by_paper[paper], table, titles.get(paper, ""), topic_of,
                                [f for f in findings if f.paper == paper], gpu_keys.get(paper, ()))  # fmt: skip
    return "\n".join(parts) + "\n"


def _wrapped(text: str, indent: str, width: int = 200) -> list[str]:
    """``text`` as Markdown lines of at most ``width`` characters, continuation lines indented by ``indent`` (one
    list item or paragraph when rendered)."""
    return textwrap.wrap(text, width=width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def _row_line(row: Mapping, reason: str = "") -> str:
    status = "**differs**" if row["status"] == "differs" else VERDICT_WORDS.get(row["status"], row["status"])
    cells = [row["key"], _short_value(row["paper_value"]), _short_value(row["our_value"]), status]
    if reason:
        cells.append(reason)
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _paper_section(
    paper: str,
    rows: list[dict],
    table: Mapping[tuple[str, str], ClaimSpec],
    title: str,
    topic_of: Mapping[tuple[str, str], tuple[str, str]],
    findings: list[Finding],
    gpu_keys: tuple[str, ...],
) -> list[str]:
    heading = "Reference publications" if paper == "ref" else f"Paper {paper}" + (f": {title}" if title else "")
    lines = ["", f"## {heading}", "", f"{count_phrase(_counts(rows))}.", ""]
    shown: set[str] = set()
    for f in findings:
        if f.kind not in (*EXPLAINED, "audit", "trained"):
            continue
        covered = [r for r in finding_rows(f, rows, table) if r["status"] != "not-run"]
        if not covered:
            continue
        if f.kind in ("trained", "audit"):  # their rows' notes name the runs, the closest reading, the control
            lines += [*_wrapped(f"**{finding_label(f, covered)}**: {f.short} ({len(covered)} rows in claims.csv)", ""),
                      ""]  # fmt: skip
            shown.update(r["key"] for r in covered)
            continue
        more = len(covered) - SCORECARD_ROWS_PER_FINDING
        lines += [*_wrapped(f"**{finding_label(f, covered)}**: {f.short}", ""), "",
                  "| key | printed | ours | status |",
                  "|---|---|---|---|", *(_row_line(r) for r in covered[:SCORECARD_ROWS_PER_FINDING]), ""]  # fmt: skip
        if more > 0:
            lines += [f"… {more} more in claims.csv.", ""]
        shown.update(r["key"] for r in covered)
    rest = [r for r in rows if r["status"] not in ("reproduced", "not-run") and r["key"] not in shown]
    if rest:
        lines += [f"Not under a finding ({len(rest)}):", "", "| key | printed | ours | status | reason |",
                  "|---|---|---|---|---|"]  # fmt: skip
        lines += [_row_line(r, short_reason(r, table.get((r["paper"], r["key"])))) for r in rest]
        lines.append("")
    not_run = [r for r in rows if r["status"] == "not-run"]
    if not_run:
        lines += [f"Not run at this profile ({len(not_run)}), by reason and topic:", ""]
        groups: dict[tuple[str, str], list[dict]] = {}
        for r in not_run:
            topic = topic_of.get((r["paper"], r["key"]), ("other claims", ""))[0]
            groups.setdefault((not_run_reason(r, gpu_keys), topic), []).append(r)
        for (reason, topic), group in sorted(groups.items(), key=lambda kv: NOT_RUN_REASONS.index(kv[0][0])):
            lines.append(f"- {reason} ({topic}): {len(group)} — {_key_groups([r['key'] for r in group])}")
    return lines
