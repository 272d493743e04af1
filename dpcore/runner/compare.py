"""Regeneration that is stable across CPUs (issue 54): after a notebook runs, each file it rewrote under the figures
folder is compared with the file that was there before the run (on a fresh clone: the committed one) and is either

* **identical** -- nothing to do;
* **within tolerance** -- its numbers differ, each by no more than the tolerance of its kind (:data:`KINDS`), and
  its text is the same: the file that was there is put back, so ``git status`` stays clean on another CPU whose
  floating-point kernels round differently;
* **changed** -- a number beyond its tolerance, other text, other rows or columns, or a new file: the new file stays
  written and the runner lists it loudly.

Numbers are compared by the kind of value they hold, found from the CSV column's name (a claims CSV: the claim's
key and quantity), never one global fudge:

* ``accuracy`` (a trained model's accuracy, balanced accuracy, utility fraction, their seed spread and range): 1
  percentage point absolute (0.01 as a fraction).  Measured: a reduced MNIST run on an AVX-512 Xeon gave 55.2 %
  against 55.3 % on the AMD EPYC that made the committed figures; the seed spread of the committed reduced grids is
  0.04-3 pp (``*_sd`` columns).
* ``loss`` (a trained model's loss or objective): relative 5 %.
* ``computed`` (everything else: ε, δ, σ, sample rates, step counts, Monte-Carlo counts, any column not named
  above): relative 1e-9, or one unit in the last digit written (the CSV tables round to
  :data:`dpcore.report.SIGNIFICANT_DIGITS` significant digits, so a value within 1e-9 may round one unit apart).

Figures are kept by their data: a PNG or PDF that differs is put back when its own CSV (``<name>.csv`` written by
the same notebook) differs within tolerance, or, when it has none or that one is identical (a figure may draw more
than its CSV), when the notebook's data files differ within tolerance and none changed; a figure is written when
its data changed, or when every data file of the notebook is identical (its drawing changed).
Other files (Markdown, text) are compared as text with their numbers of kind ``computed``.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dpcore.paths import PROFILES, atomic_path, profile_figures_dir

__all__ = [
    "Tolerance",
    "KINDS",
    "FileOutcome",
    "NotebookOutcome",
    "kind_of",
    "numbers_within",
    "compare_bytes",
    "snapshot",
    "settle",
    "outcome_lines",
]

FIGURE_SUFFIXES = (".png", ".pdf", ".svg")
DATA_SUFFIXES = (".csv",)


@dataclass(frozen=True)
class Tolerance:
    """How far two values of one kind may differ and still be the same result: ``|a - b| <= max(atol, rtol *
    max(|a|, |b|), one unit in the last written digit)``; ``atol_fraction`` replaces ``atol`` when both values are
    in [-1, 1] (a fraction rather than a percentage)."""

    kind: str
    rtol: float
    atol: float
    atol_fraction: float | None = None
    why: str = ""

    def allows(self, a: float, b: float, unit: float = 0.0) -> bool:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        atol = self.atol
        if self.atol_fraction is not None and max(abs(a), abs(b)) <= 1.0:
            atol = self.atol_fraction
        return abs(a - b) <= max(atol, self.rtol * max(abs(a), abs(b)), unit) * (1 + 1e-9)

    def text(self) -> str:
        parts = [f"relative {self.rtol:g}"] if self.rtol else []
        if self.atol:
            parts.append(f"absolute {self.atol:g}" + (f" ({self.atol_fraction:g} as a fraction)"
                                                      if self.atol_fraction is not None else ""))  # fmt: skip
        return " or ".join(parts) or "exact"


ACCURACY = Tolerance("accuracy", 0.0, 1.0, 0.01, "a trained model's accuracy: 1 percentage point")
LOSS = Tolerance("loss", 0.05, 0.0, None, "a trained model's loss or objective: relative 5 %")
COMPUTED = Tolerance("computed", 1e-9, 0.0, None, "computed values (ε, δ, σ, counts): relative 1e-9")

#: (pattern over a column name, or a claim's key and quantity; its tolerance), first match wins; else COMPUTED
KINDS: tuple[tuple[re.Pattern[str], Tolerance], ...] = (
    (
        re.compile(r"acc(uracy)?\b|acc(uracy)?_|accuracy|_pct\b|\bpct_|\(%\)|\bfraction|utility", re.IGNORECASE),
        ACCURACY,
    ),
    (re.compile(r"loss|objective", re.IGNORECASE), LOSS),
)

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def kind_of(name: str) -> Tolerance:
    """The tolerance of a column (or a claim's ``key quantity``) called ``name`` (:data:`KINDS`, else ``computed``)."""
    for pattern, tolerance in KINDS:
        if pattern.search(name):
            return tolerance
    return COMPUTED


def _unit(token: str) -> float:
    """One unit in the last digit ``token`` writes: ``0.109`` -> 0.001, ``1.5e-05`` -> 1e-06; an integer of up to
    six digits is exact (0: a count), a longer one is one unit (a rounded float)."""
    mantissa, _, exponent = token.lower().lstrip("+-").partition("e")
    shift = int(exponent) if exponent else 0
    if "." in mantissa:
        return 10.0 ** (shift - len(mantissa.split(".", 1)[1]))
    digits = len(mantissa.lstrip("0"))
    return 0.0 if digits <= 6 and not exponent else 10.0**shift


def numbers_within(a: str, b: str, tolerance: Tolerance, *, counts_exact: bool = False) -> tuple[bool, float, str]:
    """Whether texts ``a`` and ``b`` are the same but for their numbers, each pair within ``tolerance`` (``nan``,
    ``inf`` and ``True`` are text); returns (same, the largest absolute difference of a number pair, that pair as
    ``x -> y``, or the first pair beyond the tolerance).  ``counts_exact`` (free text such as a claim's note, where a
    number's kind is not its column's): a number :func:`_unit` reads as a count (an integer of up to six digits) is a
    count of runs, seeds or steps and must be equal; "8 runs" -> "9 runs" is a new result, never noise."""
    if a == b:
        return True, 0.0, ""
    pa, pb = _NUMBER.split(a), _NUMBER.split(b)
    na, nb = _NUMBER.findall(a), _NUMBER.findall(b)
    if pa != pb or len(na) != len(nb):
        return False, math.inf, ""
    largest, pair = 0.0, ""
    for x, y in zip(na, nb, strict=True):
        fx, fy = float(x), float(y)
        if counts_exact and x != y and (_unit(x) == 0.0 or _unit(y) == 0.0):
            return False, abs(fx - fy), f"{x} -> {y}"
        if abs(fx - fy) >= largest and x != y:
            largest, pair = abs(fx - fy), f"{x} -> {y}"
        # one unit in the last digit written, at most one of the 6th significant digit (``%.6g`` trims zeros: "1.5"
        # is 1.50000); a coarser format is then compared more strictly, never more loosely
        cap = (
            10.0 ** (math.floor(math.log10(max(abs(fx), abs(fy)))) - 5) if math.isfinite(fx + fy) and (fx or fy) else 0
        )
        if not tolerance.allows(fx, fy, min(_unit(x), _unit(y), cap)):
            return False, abs(fx - fy), f"{x} -> {y}"
    return True, largest, pair


def _csv_rows(data: bytes) -> list[list[str]] | None:
    try:
        return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    except (UnicodeDecodeError, csv.Error):
        return None


_CLAIM_NUMBER_COLUMNS = ("our_value", "note")


def compare_csv(old: bytes, new: bytes) -> tuple[bool, str]:
    """Whether two CSV files hold the same table within the tolerance of each column's kind (a claims CSV: of each
    row's claim, for ``our_value`` and ``note``; its other columns, the status among them, must be equal); returns
    (within, a description of the first difference beyond it or of the largest one within)."""
    a, b = _csv_rows(old), _csv_rows(new)
    if a is None or b is None:
        return False, "not readable as UTF-8 CSV"
    if not a or not b or a[0] != b[0]:
        return False, "other columns"
    if len(a) != len(b):
        return False, f"{len(a) - 1} rows before, {len(b) - 1} now"
    header = a[0]
    claims = "status" in header and "key" in header and "quantity" in header
    worst = ""
    worst_size = 0.0
    for i, (ra, rb) in enumerate(zip(a[1:], b[1:], strict=True), start=1):
        if len(ra) != len(rb):
            return False, f"row {i}: {len(ra)} cells before, {len(rb)} now"
        row_kind = kind_of(f"{ra[header.index('key')]} {ra[header.index('quantity')]}") if claims else None
        for column, x, y in zip(header, ra, rb, strict=False):
            if x == y:
                continue
            if claims and column not in _CLAIM_NUMBER_COLUMNS:
                return False, f"row {i}, {column}: {x!r} before, {y!r} now"
            tolerance = row_kind if row_kind is not None else kind_of(column)
            same, size, pair = numbers_within(x, y, tolerance, counts_exact=claims and column == "note")
            shown = f"{x} -> {y}" if len(x) <= 40 and len(y) <= 40 or not pair else f"… {pair} …"
            where = f"row {i}, {column}: {shown} ({tolerance.kind}, {tolerance.text()})"
            if not same:
                return False, where
            if size >= worst_size:
                worst, worst_size = where, size
    return True, worst


def compare_bytes(path: Path, old: bytes, new: bytes) -> tuple[str, str]:
    """(``identical`` | ``within`` | ``changed``, why) for a data or text file; figures are decided by
    :func:`settle` from their data."""
    if old == new:
        return "identical", ""
    if path.suffix in DATA_SUFFIXES:
        within, why = compare_csv(old, new)
        return ("within" if within else "changed"), why
    try:
        ta, tb = old.decode("utf-8"), new.decode("utf-8")
    except UnicodeDecodeError:
        return "changed", "other bytes"
    same, _, pair = numbers_within(ta, tb, COMPUTED)
    if same:
        return "within", f"numbers within {COMPUTED.text()} (largest: {pair})"
    return "changed", f"other text ({pair})" if pair else "other text"


@dataclass
class FileOutcome:
    path: Path
    status: str  # identical | within | changed | new
    why: str = ""


@dataclass
class NotebookOutcome:
    key: str
    files: list[FileOutcome] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``changed`` when a file changed or is new, else ``within`` when one differed within tolerance (kept),
        else ``identical``."""
        states = {f.status for f in self.files}
        if states & {"changed", "new"}:
            return "changed"
        return "within" if "within" in states else "identical"


def snapshot(out_figures: Path, profile: str) -> dict[Path, bytes]:
    """The bytes of every file under ``out_figures`` before a run (other profiles' folders skipped): what each
    rewritten file is compared with, and what is put back when the new one is within tolerance."""
    root = Path(out_figures)
    others = [profile_figures_dir(p, root).resolve() for p in PROFILES if p != profile and p != "quick"]
    found: dict[Path, bytes] = {}
    if not root.is_dir():
        return found
    for path in sorted(root.rglob("*")):
        if (
            path.is_file()
            and not path.name.startswith(".")
            and not any(path.resolve().is_relative_to(o) for o in others)
        ):
            found[path.resolve()] = path.read_bytes()
    return found


def _restore(path: Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def settle(written: Mapping[str, Iterable[Path]], before: Mapping[Path, bytes]) -> list[NotebookOutcome]:
    """Decide each file the notebooks wrote (``written``: notebook key -> the paths it wrote, in order) against the
    bytes it replaced (``before``, :func:`snapshot`) and put back those within tolerance (module docstring).
    Returns one :class:`NotebookOutcome` per notebook, in the order of ``written``."""
    outcomes = []
    for key, paths in written.items():
        outcome = NotebookOutcome(key)
        unique = list(dict.fromkeys(Path(p).resolve() for p in paths))
        present = [p for p in unique if p.is_file()]
        figures = [p for p in present if p.suffix in FIGURE_SUFFIXES]
        decided: dict[Path, FileOutcome] = {}
        for path in present:
            if path.suffix in FIGURE_SUFFIXES:
                continue
            if path not in before:
                decided[path] = FileOutcome(path, "new")
                continue
            status, why = compare_bytes(path, before[path], path.read_bytes())
            decided[path] = FileOutcome(path, status, why)
        data = [o for p, o in decided.items() if p.suffix in DATA_SUFFIXES]
        notebook_within = any(o.status == "within" for o in data) and not any(o.status in ("changed", "new")
                                                                             for o in data)  # fmt: skip
        for path in figures:
            if path not in before:
                decided[path] = FileOutcome(path, "new")
                continue
            if before[path] == path.read_bytes():
                decided[path] = FileOutcome(path, "identical")
                continue
            own = decided.get(path.with_suffix(".csv"))
            if own is not None and own.status == "within":
                decided[path] = FileOutcome(path, "within", f"drawn from {own.path.name}, within tolerance")
            elif (own is None or own.status == "identical") and notebook_within:  # drawn from more than its CSV
                decided[path] = FileOutcome(path, "within", "the notebook's data is within tolerance")
            else:
                why = f"its data {own.path.name} is {own.status}" if own is not None else "its drawing changed"
                decided[path] = FileOutcome(path, "changed", why)
        for path in unique:
            if path in decided:
                outcome.files.append(decided[path])
                if decided[path].status == "within":
                    _restore(path, before[path])
        outcomes.append(outcome)
    return outcomes


def outcome_lines(outcomes: Iterable[NotebookOutcome], root: Path) -> list[str]:
    """The runner's report of :func:`settle`: a count line, then a line per notebook that was not identical, and under
    a changed one each file written (loud: ``CHANGED``), under one within tolerance each data file kept with its
    largest difference."""

    def rel(path: Path) -> str:
        try:
            return path.relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            return str(path)

    outcomes = list(outcomes)
    count = {s: sum(o.status == s for o in outcomes) for s in ("identical", "within", "changed")}
    lines = [
        f"outputs: {count['identical']} notebook(s) identical, {count['within']} within tolerance (kept as committed), "
        f"{count['changed']} CHANGED (written)"
    ]
    for outcome in outcomes:
        files = outcome.files
        if outcome.status == "identical":
            continue
        if outcome.status == "within":
            kept = [f for f in files if f.status == "within"]
            lines.append(
                f"outputs within tolerance, kept as committed  {outcome.key} ({len(kept)} of {len(files)} files "
                "differ within the tolerance of their kind of value; committed bytes put back)"
            )
            for f in kept:
                if f.why and f.path.suffix in DATA_SUFFIXES:
                    lines.append(f"    kept {rel(f.path)}: {f.why}")
        else:
            changed = [f for f in files if f.status in ("changed", "new")]
            lines.append(f"OUTPUTS CHANGED  {outcome.key}: {len(changed)} file(s) written (see git diff)")
            for f in changed:
                lines.append(f"    CHANGED {rel(f.path)}: {f.why or f.status}")
    return lines
