"""Claims registry: every published number a notebook regenerates, next to ours.

A notebook creates a :class:`ClaimsLog`, calls :meth:`ClaimsLog.record` for each
printed number it recomputes and finally :meth:`ClaimsLog.write`.  ``make figures``
gathers all logs into ``figures/claims.csv`` (columns :data:`COLUMNS`) and
``figures/SCORECARD.md``.

The status of a claim is never typed by hand; it is computed from the values and
the tolerance:

* ``reproduced``        -- ``|ours - paper| <= atol + rtol * |paper|`` (or equal strings);
* ``differs-explained`` -- outside tolerance and an ``erratum`` (non-empty) explains why;
* ``differs``           -- outside tolerance, no explanation;
* ``not-run``           -- ``our_value`` is ``None``/NaN (the profile does not run it).

>>> log = ClaimsLog()
>>> log.record("ref", "Abadi et al. 2016 §3.1", "epsilon", 1.26, 1.2586, atol=0.005).status
'reproduced'
>>> log.record("000", "Table 8", "epsilon of row 3", 1.5, 1.2498, rtol=1e-3,
...            erratum="s = 1267 gives eps = 1.2498").status
'differs-explained'
"""

from __future__ import annotations

import csv
import io
import math
import os
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from dpcore.validation import check_choice, check_nonnegative

__all__ = [
    "COLUMNS",
    "PAPERS",
    "STATUSES",
    "Claim",
    "ClaimsLog",
    "compute_status",
    "collect",
    "write_claims_csv",
    "scorecard_markdown",
]

COLUMNS = ("paper", "artifact", "quantity", "paper_value", "our_value", "tolerance", "status", "note")
PAPERS = ("000", "001", "002", "003", "004", "ref")
STATUSES = ("reproduced", "differs-explained", "differs", "not-run")

Value = float | int | str | None


@dataclass(frozen=True)
class Claim:
    """One published number and our regeneration of it (a row of ``claims.csv``)."""

    paper: str
    artifact: str
    quantity: str
    paper_value: Value
    our_value: Value
    tolerance: str
    status: str
    note: str


def _is_missing(value: Value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _tolerance_text(rtol: float, atol: float) -> str:
    parts = []
    if rtol:
        parts.append(f"rel {rtol:g}")
    if atol:
        parts.append(f"abs {atol:g}")
    return " + ".join(parts) if parts else "exact"


def compute_status(
    paper_value: Value, our_value: Value, *, rtol: float = 0.0, atol: float = 0.0, explained: bool = False
) -> str:
    """Status of a claim from its values and tolerance (see module docstring)."""
    rtol = check_nonnegative("rtol", rtol)
    atol = check_nonnegative("atol", atol)
    if _is_missing(our_value):
        return "not-run"
    if isinstance(paper_value, str) or isinstance(our_value, str):
        same = str(paper_value) == str(our_value)
    else:
        if _is_missing(paper_value):
            raise ValueError("paper_value must be a number or a string, got None/NaN")
        same = abs(float(our_value) - float(paper_value)) <= atol + rtol * abs(float(paper_value))
    if same:
        return "reproduced"
    return "differs-explained" if explained else "differs"


class ClaimsLog:
    """The claims one notebook records; written to one CSV per notebook."""

    def __init__(self) -> None:
        self.claims: list[Claim] = []

    def record(
        self,
        paper: str,
        artifact: str,
        quantity: str,
        paper_value: Value,
        our_value: Value,
        *,
        rtol: float = 0.0,
        atol: float = 0.0,
        note: str = "",
        erratum: str | None = None,
    ) -> Claim:
        """Record a claim; its status is computed, never given.

        ``erratum`` is the explanation used when our value is outside the
        tolerance (a non-empty string turns ``differs`` into ``differs-explained``
        and is prepended to ``note``).  It is ignored for a reproduced value.
        """
        check_choice("paper", paper, PAPERS)
        if not artifact or not quantity:
            raise ValueError("artifact and quantity must be non-empty strings")
        if erratum is not None and not str(erratum).strip():
            raise ValueError("erratum must be a non-empty explanation (or None)")
        status = compute_status(paper_value, our_value, rtol=rtol, atol=atol, explained=erratum is not None)
        if status == "differs-explained":
            note = f"{erratum}. {note}".strip() if note else str(erratum)
        if isinstance(our_value, float) and not _is_missing(our_value):
            our_value = float(f"{our_value:.6g}")
        claim = Claim(paper, artifact, quantity, paper_value, our_value, _tolerance_text(rtol, atol), status, note)
        self.claims.append(claim)
        return claim

    def to_rows(self) -> list[dict]:
        return [asdict(c) for c in self.claims]

    def write(self, path: str | os.PathLike) -> Path:
        """Write the log as CSV (atomically) and return its path."""
        return write_claims_csv(self.to_rows(), path)

    def _repr_markdown_(self) -> str:
        return _markdown_table(self.to_rows(), COLUMNS)


def _fmt(value: Value) -> str:
    return "" if _is_missing(value) else str(value)


def write_claims_csv(rows: Iterable[dict], path: str | os.PathLike) -> Path:
    """Write claim rows with exactly :data:`COLUMNS`, via a temporary file and rename."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _fmt(row[k]) for k in COLUMNS})
    return _atomic_write_text(Path(path), buffer.getvalue())


def _atomic_write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def collect(root: str | os.PathLike) -> list[dict]:
    """Read every ``*.claims.csv`` under ``root`` (sorted by path) into rows."""
    rows: list[dict] = []
    for path in sorted(Path(root).rglob("*.claims.csv")):
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if tuple(reader.fieldnames or ()) != COLUMNS:
                raise ValueError(f"{path}: columns must be {COLUMNS}, got {reader.fieldnames}")
            rows.extend(reader)
    return rows


def _markdown_table(rows: list[dict], columns: Iterable[str]) -> str:
    columns = list(columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = [_fmt(row[c]).replace("|", "\\|").replace("\n", " ") for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scorecard_markdown(rows: list[dict]) -> str:
    """Counts per paper and status, then every row that is not ``reproduced``."""
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
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
        "# Scorecard: published numbers vs dpcore",
        "",
        "Generated by `make figures` from `figures/claims.csv`; statuses are computed from the values and tolerances.",
        "",
        _markdown_table(table, ["paper", *STATUSES, "total"]),
        "",
        f"## Rows not reproduced ({len(others)})",
        "",
        _markdown_table(others, COLUMNS) if others else "None.",
        "",
    ]
    return "\n".join(parts)
