"""Claims registry: every published number a notebook regenerates, next to ours.

A *claim specification* (:class:`ClaimSpec`) holds one number of a paper (or of another
publication) with where it comes from (``source``: ``printed`` / ``derived`` / ``reference``,
and ``location``), the tolerance it is compared with, and, when we know the paper's number is
wrong, an :class:`Erratum` with the value we expect instead and the evidence.  The
specifications live in each paper package's ``claims.py``; notebooks only compute our value
and call :meth:`ClaimsLog.check` (or :meth:`dpcore.report.Report.check`).

The status of a claim is never typed by hand; :func:`compute_status` derives it:

* ``not-run``           -- our value is ``None``/NaN, or the claim needs the paper's full scale
  (``scale="full"``) and the run was reduced (our reduced-scale value then goes into the note);
* ``reproduced``        -- our value matches the specification's value within its tolerance;
* ``differs-explained`` -- it does not, but it matches the erratum's expected value within the
  erratum's tolerance;
* ``differs``           -- anything else (a failure: ``make figures`` and ``make test`` exit non-zero).

>>> spec = ClaimSpec("ref", "abadi.eps", "Abadi et al. 2016 §3.1", "epsilon", 1.26, "reference",
...                  "Abadi et al., CCS 2016, §3.1", atol=0.005)
>>> ClaimsLog().check(spec, 1.2586).status
'reproduced'
>>> wrong = ClaimSpec("000", "t8.eps.row3", "Table 8", "epsilon of row 3", 1.5, "printed", "Table 8, row 3",
...                   rtol=1e-3, erratum=Erratum(1.2498, "s = 1267 gives eps = 1.2498 (Thm 3.1)", rtol=1e-3))
>>> ClaimsLog().check(wrong, 1.2497).status
'differs-explained'
>>> ClaimsLog().check(wrong, 1.4).status
'differs'
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.paths import PROFILES, atomic_write_text

__all__ = [
    "COLUMNS",
    "PAPERS",
    "PROFILES",
    "SCALES",
    "SOURCES",
    "STATUSES",
    "Claim",
    "ClaimSpec",
    "ClaimsLog",
    "Erratum",
    "Value",
    "collect",
    "compute_status",
    "format_value",
    "parse_value",
    "read_claims_csv",
    "scorecard_markdown",
    "specs_by_key",
    "values_match",
    "write_claims_csv",
]

PAPERS = ("000", "001", "002", "003", "004", "ref")
SOURCES = ("printed", "derived", "reference")
STATUSES = ("reproduced", "differs-explained", "differs", "not-run")
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

Value = float | int | str | bool

_KEY = re.compile(r"^[\w.+\-=]+$")


# ---------------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------------
def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not _is_bool(value)


def _is_missing(value: Any) -> bool:
    """``None`` or a NaN of any real type (Python float, numpy float16/32/64, ...)."""
    return value is None or (_is_number(value) and math.isnan(float(value)))


def _check_value(name: str, value: Any) -> None:
    if _is_missing(value):
        raise ValueError(f"{name} must be a number, string or bool, not None/NaN (got {value!r})")
    if not (_is_bool(value) or _is_number(value) or isinstance(value, str)):
        raise ValueError(f"{name} must be a number, string or bool, got {type(value).__name__} {value!r}")


def _check_tolerance(name: str, tol: Any) -> float:
    if not _is_number(tol) or not math.isfinite(float(tol)) or float(tol) < 0:
        raise ValueError(f"{name} must be a finite number in [0, inf), got {tol!r}")
    return float(tol)


def _check_text(name: str, text: Any) -> None:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} must be a non-empty string, got {text!r}")


def values_match(reference: Value, ours: Any, *, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """Whether ``ours`` equals ``reference`` within ``atol + rtol * |reference|``.

    Types never mix: a bool only equals a bool (``True`` is not ``1``), a string only equals the
    same string (tolerances do not apply to strings), a number only equals a number; an infinite
    reference equals only the same infinity.  ``None``/NaN never match.
    """
    rtol = _check_tolerance("rtol", rtol)
    atol = _check_tolerance("atol", atol)
    if _is_missing(ours) or _is_missing(reference):
        return False
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
    """A value as written to ``claims.csv``: ``""`` for None/NaN, ``True``/``False``, full-precision numbers."""
    if _is_missing(value):
        return ""
    if _is_bool(value):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if _is_number(value):
        return repr(float(value))
    return str(value)


def parse_value(text: str, like: Value | None = None) -> Value | None:
    """Inverse of :func:`format_value`; ``like`` (the specification's value) says when text stays text."""
    if text == "":
        return None
    if isinstance(like, str):
        return text
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
class Erratum:
    """The paper's value is wrong (or not reproducible); we expect ``expected`` instead.

    ``evidence`` names the check that shows it, in one or two sentences (e.g. "Thm 3.1 with
    s = 1267 gives eps = 1.2498; the printed 1.5 needs s = 1500").  A claim whose value misses
    the printed number is ``differs-explained`` only when it matches ``expected`` within
    ``atol + rtol * |expected|``.
    """

    expected: Value
    evidence: str
    rtol: float = 0.0
    atol: float = 0.0

    def __post_init__(self) -> None:
        _check_value("erratum.expected", self.expected)
        _check_text("erratum.evidence", self.evidence)
        _check_tolerance("erratum.rtol", self.rtol)
        _check_tolerance("erratum.atol", self.atol)
        if (isinstance(self.expected, str) or _is_bool(self.expected)) and (self.rtol or self.atol):
            raise ValueError(f"erratum.rtol/atol must be 0 for a str/bool expected value, got {self.expected!r}")

    @property
    def tolerance(self) -> str:
        return _tolerance_text(self.rtol, self.atol)


@dataclass(frozen=True)
class ClaimSpec:
    """One number of a paper (or of another publication) and how ours is compared with it.

    ``source`` is ``printed`` (as printed; ``location`` says where: table/figure/equation/page),
    ``derived`` (implied by the paper but not printed; ``location`` says how it follows) or
    ``reference`` (another publication; ``location`` names it and the place).  ``scale="full"``
    marks a number measured by training at the paper's scale: at a reduced profile it is
    ``not-run`` (never compared with a different experiment).
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
    erratum: Erratum | None = None
    scale: str = "any"
    note: str = ""

    def __post_init__(self) -> None:
        if self.paper not in PAPERS:
            raise ValueError(f"paper must be one of {PAPERS}, got {self.paper!r}")
        _check_text("key", self.key)
        if not _KEY.match(self.key):
            raise ValueError(f"key must be letters, digits and . _ - + = only (no spaces or commas), got {self.key!r}")
        _check_text("artifact", self.artifact)
        _check_text("quantity", self.quantity)
        _check_value("value", self.value)
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {self.source!r}")
        _check_text("location", self.location)
        _check_tolerance("rtol", self.rtol)
        _check_tolerance("atol", self.atol)
        if (isinstance(self.value, str) or _is_bool(self.value)) and (self.rtol or self.atol):
            raise ValueError(f"rtol/atol must be 0 for a str/bool value, got value {self.value!r}")
        if self.erratum is not None:
            if not isinstance(self.erratum, Erratum):
                raise ValueError(f"erratum must be an Erratum or None, got {type(self.erratum).__name__}")
            if values_match(self.value, self.erratum.expected, rtol=self.rtol, atol=self.atol):
                raise ValueError(
                    f"erratum.expected {self.erratum.expected!r} matches the value {self.value!r} within the "
                    f"tolerance: that is no erratum ({self.paper}/{self.key})"
                )
        if self.scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {self.scale!r}")
        if not isinstance(self.note, str):
            raise ValueError(f"note must be a string, got {self.note!r}")

    @property
    def tolerance(self) -> str:
        return _tolerance_text(self.rtol, self.atol)


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


def compute_status(spec: ClaimSpec, our_value: Any, *, reduced: bool = False) -> str:
    """Status of ``our_value`` against ``spec`` (see the module docstring for the rules)."""
    if not isinstance(spec, ClaimSpec):
        raise ValueError(f"spec must be a ClaimSpec, got {type(spec).__name__}")
    if _is_missing(our_value):
        return "not-run"
    if not (_is_bool(our_value) or _is_number(our_value) or isinstance(our_value, str)):
        raise ValueError(f"our_value must be a number, string, bool or None, got {type(our_value).__name__}")
    if spec.scale == "full" and reduced:
        return "not-run"
    if values_match(spec.value, our_value, rtol=spec.rtol, atol=spec.atol):
        return "reproduced"
    erratum = spec.erratum
    if erratum is not None and values_match(erratum.expected, our_value, rtol=erratum.rtol, atol=erratum.atol):
        return "differs-explained"
    return "differs"


# ---------------------------------------------------------------------------------------------
# the log of one notebook
# ---------------------------------------------------------------------------------------------
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
        self, spec: ClaimSpec, our_value: Any, *, note: str = "", reduced: bool = False, profile: str = "quick"
    ) -> Claim:
        """Compare ``our_value`` with ``spec`` and record the row; the only way to record a claim.

        The status comes from :func:`compute_status`.  The note gathers the specification's
        standing note, ``note``, and, for ``differs-explained``/``differs`` with an erratum, the
        erratum's expected value.  A full-scale claim at a reduced run is ``not-run`` and our
        reduced-scale value goes into the note (the ``our_value`` column stays empty).  Checking
        the same key again (re-running a cell) replaces the earlier row.
        """
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
        if not isinstance(note, str):
            raise ValueError(f"note must be a string, got {note!r}")
        status = compute_status(spec, our_value, reduced=bool(reduced))
        ours = _plain(our_value)
        extra = ""
        if status == "not-run" and ours is not None:
            extra = f"full-scale claim; at reduced scale ours = {format_value(ours)}"
            ours = None
        elif spec.erratum is not None and status != "reproduced":
            erratum = spec.erratum
            matched = "matches" if status == "differs-explained" else "does NOT match"
            extra = (
                f"erratum: ours {matched} the expected {format_value(erratum.expected)} ({erratum.tolerance}); "
                f"{erratum.evidence}"
            )
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


def scorecard_markdown(rows: list[dict], *, profile: str = "quick") -> str:
    """Counts per paper and status, then every row that is not ``reproduced``.

    Raises ``ValueError`` for a status outside :data:`STATUSES`.
    """
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        if row["status"] not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {row['status']!r} ({row['paper']}/{row['key']})")
        counts.setdefault(row["paper"], dict.fromkeys(STATUSES, 0))[row["status"]] += 1
    table = [
        {"paper": p, **{s: str(counts[p][s]) for s in STATUSES}, "total": str(sum(counts[p].values()))}
        for p in sorted(counts)
    ]
    total = {"paper": "all", **{s: str(sum(c[s] for c in counts.values())) for s in STATUSES}}
    total["total"] = str(len(rows))
    table.append(total)
    others = [r for r in rows if r["status"] != "reproduced"]
    parts = [
        f"# Scorecard: published numbers vs dpcore (profile {profile})",
        "",
        "Generated by `make figures` from `claims.csv` next to this file; statuses are computed from the values, "
        "the tolerances and the errata of the claim specifications (`dpcore/papers/*/claims.py`); "
        "see `figures/ERRATA.md` for the errata.",
        "",
        _markdown_table(table, ["paper", *STATUSES, "total"]),
        "",
        f"## Rows not reproduced ({len(others)})",
        "",
        _markdown_table(others, COLUMNS) if others else "None.",
        "",
    ]
    return "\n".join(parts)
