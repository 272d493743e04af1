"""Build the documentation site (``make docs``): stage the sources, then Sphinx with warnings as errors.

    python docs/build_site.py [--out build/docs] [--src build/docs-src] [--profile quick]

The site is made from what the last ``make figures`` left, and never trains or re-runs a paper notebook:

* the hand-written pages of ``docs/`` (index, sharp edges, API reference, explorers);
* pages generated here from data: the per-paper verdicts and scorecards from ``figures/claims.csv`` and
  ``figures/paper/claims.csv``, the errata from the claim specifications (``dpcore.papers.all_specs``), the
  figures from the committed ``figures/`` PNGs and CSVs, and the numbers of the sharp-edges page from the
  accountants of ``dpcore.accounting``;
* the notebooks: the executed copies of the last ``make figures`` (``build/<profile>/<key>.ipynb``, kept only
  on the machine that ran it) when present, else the committed notebooks (code and text, no outputs:
  their results are the figures and tables of the paper pages);
* the explorers of ``notebooks/explore/`` in their static default state: the executed copy under
  ``build/<profile>/explore/`` when present, else executed here with papermill (they are cheap by design);
  the interactive widget views are dropped (they need a live kernel: ``make explore``) and the PNG each
  explorer stores beside its widget is kept.  A checkout without ``notebooks/explore/`` gets a page saying so.

Each paper page starts with the paper's findings (``dpcore.papers.findings``: one per root cause, and the
one-line verdict of ``dpcore.claims.verdict_line``), then the counts, the notebooks, the scorecard grouped by
notebook, the explanations (errata, not reproduced, inconclusive) and the figures.  Every figure links to the
notebook cell that draws it (found in the notebook's code: the ``report.figure(fig, name)`` call whose name
matches the file) and to the claims of that notebook whose artifact names the same figure or table number.
No staged page holds the build machine's absolute path of the repository (paths in the notebooks are
rewritten relative to it).

Sphinx runs with ``-W --keep-going``: any warning (a docstring that does not parse, a broken cross-reference
to a page, a missing image) fails the build.
"""

from __future__ import annotations

import argparse
import ast
import csv
import functools
import html
import math
import os
import re
import shutil
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FIGURES = ROOT / "figures"
NOTEBOOKS = ROOT / "notebooks"
#: the statuses of a claims.csv row (as ``dpcore.claims.STATUSES``; tests/test_docs_build.py checks they agree);
#: audit rows have their own (issue 50: fails-audit / passes-audit / authors-code)
STATUSES = (
    "reproduced",
    "erratum",
    "not-reproduced",
    "inconclusive",
    "differs",
    "not-run",
    "fails-audit",
    "passes-audit",
    "authors-code",
)
#: statuses of older claims.csv files, with what to do about them (an error, never silently mapped)
RETIRED_STATUSES = {
    "differs-explained": "issue 41 replaced it by erratum / not-reproduced / inconclusive: re-run `make figures`",
}
PAPER_ORDER = ("000", "001", "002", "003", "004", "ref")
#: Short names of the papers in headings (the full titles come from the claims modules).
SHORT = {
    "000": "Proactive DP",
    "001": "ISRL-DP federated learning",
    "002": "ModelMix",
    "003": "Shuffling and batch clipping",
    "004": "Contraction (information-theoretic FL)",
    "ref": "Reference accountants, audit, engine tour",
}
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: papermill's tag of the cell holding the parameters it injected
INJECTED_TAG = "injected-parameters"
#: the findings section's text when this checkout's claims code has no findings API
NO_FINDINGS_API = "findings: not yet available in this checkout"


# ------------------------------------------------------------------------------------------------
# claims -> counts and verdicts
# ------------------------------------------------------------------------------------------------
def read_rows(path: Path) -> list[dict]:
    """The rows of a ``claims.csv`` (empty when the file does not exist)."""
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def check_status(status: object, where: str = "") -> str:
    """``status`` when it is one of :data:`STATUSES`; a ``ValueError`` naming it (and ``where`` it was) otherwise."""
    if status in STATUSES:
        return str(status)
    hint = RETIRED_STATUSES.get(str(status))
    at = f" ({where})" if where else ""
    raise ValueError(f"status must be one of {STATUSES}, got {status!r}{at}" + (f": {hint}" if hint else ""))


#: the claims.csv sources counted apart from the paper's numbers (as ``dpcore.claims.OWN_CHECKS``): consistency
#: checks, and audits of the authors' code (a value reached only under their code is not a reproduction)
OWN_CHECKS = ("consistency", "audit")


def counts(rows: Iterable[Mapping]) -> dict[str, int]:
    """Rows per status; our own checks that ran apart (``consistency`` / ``consistency-ok``, ``audit`` /
    ``audit-ok``; one not run counts as ``not-run``), as ``dpcore.claims``' scorecard counts.  A row whose status is
    not one of :data:`STATUSES` raises ``ValueError``."""
    from dpcore.verdicts import count_by_status  # the one count (issue 50)

    rows = list(rows)
    for row in rows:
        check_status(row.get("status"), f"rows: {row.get('paper')}/{row.get('key')}")
    return count_by_status(rows)


def count_phrase(c: Mapping[str, int], profile: str) -> str:
    """E.g. "80 of 139 reproduced, 4 errata, 2 not reproduced, 19 not run at the quick profile"."""
    from dpcore.claims import count_phrase as phrase

    return phrase(c, where=f"at the {profile} profile", differs="**{n} differ** (not yet investigated)")


def verdict(quick: Mapping[str, int], paper: Mapping[str, int] | None) -> str:
    """The verdict from the counts alone: the fallback of :func:`paper_verdict` where this checkout has no
    findings API (``dpcore.claims.verdict_line``)."""
    both = [quick] + ([paper] if paper else [])
    where = "at the quick profile" if not paper or not sum(paper[s] for s in STATUSES) else "at either profile"
    total = {s: sum(c[s] for c in both) for s in STATUSES}
    parts = []
    if total["differs"]:
        parts.append(f"{total['differs']} number(s) differ from the paper, not yet investigated")
    if total["erratum"]:
        parts.append(f"{total['erratum']} printed number(s) wrong by the paper's own formulas (errata)")
    if total["not-reproduced"]:
        parts.append(f"{total['not-reproduced']} result(s) not reproduced {where}")
    if total["inconclusive"]:
        parts.append(f"{total['inconclusive']} claim(s) the data cannot decide")
    if not parts:
        return f"every number run {where} is reproduced"
    return "; ".join(parts)


# ------------------------------------------------------------------------------------------------
# findings (issue 41): read from the claims code when this checkout has them
# ------------------------------------------------------------------------------------------------
class Findings(NamedTuple):
    """The findings API of this checkout: ``items`` (every paper's ``Finding``, in each paper's order) and
    ``verdict_line(paper, findings, rows) -> str``; see :func:`load_findings`."""

    items: tuple
    verdict_line: Any

    def of(self, paper: str) -> list:
        return [f for f in self.items if f.paper == paper]


def load_findings() -> Findings | None:
    """``dpcore.papers.findings()`` and ``dpcore.claims.verdict_line`` when this checkout has them, else None
    (the pages then say :data:`NO_FINDINGS_API` and the verdicts come from the counts)."""
    import dpcore.claims as claims_mod
    import dpcore.papers as papers_mod

    gather = getattr(papers_mod, "findings", None)
    line = getattr(claims_mod, "verdict_line", None)
    if gather is None or line is None:
        return None
    return Findings(tuple(gather()), line)


def paper_verdict(findings: Findings | None, paper: str, rows: Sequence[Mapping], paper_rows: Sequence[Mapping]) -> str:
    """The one-line verdict of ``paper``: ``verdict_line`` over its findings and the rows of both profiles, or
    (no findings API) :func:`verdict` from the counts."""
    if findings is not None:
        return str(findings.verdict_line(paper, findings.of(paper), [*rows, *paper_rows]))
    return verdict(counts(rows), counts(paper_rows) if paper_rows else None)


def status_label(status: str) -> str:
    """The words of a status ("not-reproduced" -> "not reproduced"); ``ValueError`` for an unknown one."""
    return check_status(status).replace("-", " ")


# ------------------------------------------------------------------------------------------------
# small HTML / MyST helpers
# ------------------------------------------------------------------------------------------------
def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def short(value: str, limit: int = 40) -> str:
    """A cell value shortened for a table (the full text stays in the row's note / CSV)."""
    text = str(value)
    try:
        number = float(text)
    except ValueError:
        return text if len(text) <= limit else text[: limit - 1] + "…"
    if math.isfinite(number) and text.count(".") == 1 and len(text) > 10:
        return f"{number:.6g}"
    return text


def html_table(header: list[str], rows: list[list[str]], *, classes: str = "table dpcore-table", fold: str = "") -> str:
    """A raw HTML table inside a MyST ``{raw} html`` block (:func:`table_markup`); with ``fold`` (escaped HTML), the
    table is folded under a ``<details>`` whose summary is ``fold`` (issue 54: paper 001's page was 71,000 px tall)."""
    markup = table_markup(header, rows, classes=classes)
    if fold:
        markup = f'<details class="dpcore-fold"><summary>{fold}</summary>\n{markup}\n</details>'
    return "\n".join(["```{raw} html", markup, "```", ""])


def table_markup(header: list[str], rows: list[list[str]], *, classes: str = "table dpcore-table") -> str:
    """A raw HTML table: ``header`` is escaped here, ``rows`` are HTML cells (escaped by the caller); a row of another
    length than ``header`` raises ``ValueError``."""
    lines = [f'<div class="dpcore-table-wrap"><table class="{classes}">', "<thead><tr>"]
    lines += [f"<th>{esc(h)}</th>" for h in header]
    lines.append("</tr></thead><tbody>")
    labels = [esc(h) for h in header]  # each cell names its column: narrow screens stack the cells
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"rows must have {len(header)} cells as header, got {len(row)}: {row!r}")
        lines.append(
            "<tr>" + "".join(f'<td data-label="{h}">{cell}</td>' for h, cell in zip(labels, row, strict=True)) + "</tr>"
        )
    lines.append("</tbody></table></div>")
    return "\n".join(lines)


def status_cell(status: str) -> str:
    """A coloured status badge; ``ValueError`` for a status that is not one of :data:`STATUSES`."""
    status = check_status(status)
    return f'<span class="dpcore-status dpcore-{status}">{esc(status_label(status))}</span>'


def md_text(text: object) -> str:
    """Plain text safe inside a MyST paragraph or heading (Markdown's inline characters escaped)."""
    return re.sub(r"([\\`*_\[\]<>|#{}])", r"\\\1", str(text))


def inline_code(escaped: str) -> str:
    """Already-escaped HTML text with its Markdown `code spans` as ``<code>``, and line-break opportunities in its long
    identifiers and paths (:func:`soft_breaks`)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", soft_breaks(escaped))


#: a long token of escaped text (an identifier, a key, a path, a list of hashes), and the places where it may break:
#: after ``.``, ``_``, ``/``, ``:`` or ``=`` followed by a letter, after ``{``, ``,`` or ``@`` followed by eight or
#: more letters or digits (a hash) -- never inside a number such as 0.0123, 1e-05, 16,909 or 16909/7
_LONG_TOKEN = re.compile(r"[^\s<>`]{14,}")
_BREAK_AT = re.compile(r"(?<=[._/:=])(?=[A-Za-z])|(?<=[{,@])(?=[A-Za-z0-9]{8})")


#: a token of escaped text (entities and backticks end it), one that holds a place where browsers break lines (a hyphen,
#: a dash, a slash), and a compound of words whose hyphen or dash may end a line (replace-one, inclusion–exclusion)
_TOKEN = re.compile(r"[^\s<>`&]+")
_JOINS = re.compile(r"[-–/]")
_WORD_COMPOUND = re.compile(r"[(\[]?[A-Za-z]+(?:[-–][A-Za-z]+)+[)\],.;:]*")


def soft_breaks(escaped: str) -> str:
    """Already-escaped HTML text whose tokens break only where a reader expects it (issue 54: at 1280 px tables broke
    "16909" and "erratum" mid-token; ``_static/dpcore.css`` no longer breaks anywhere): a long key or path gets
    ``<wbr>`` (a line-break opportunity) between its parts (``003.table3.`` / ``mnist_sh``); a number or formula
    that holds a hyphen, a dash or a slash (``5.0375e-05``, ``L84-85``, ``ln(1/δ)/σ²``, ``(CIFAR-10)``), where
    browsers would break it, is kept on one line (``<span class="dpcore-nowrap">``); words and compounds of words
    (``replace-one``) are left as they are."""

    def whole(piece: str) -> str:
        if _JOINS.search(piece[:-1]) and not _WORD_COMPOUND.fullmatch(piece):
            return f'<span class="dpcore-nowrap">{piece}</span>'
        return piece

    def one(match: re.Match) -> str:
        token = match.group(0)
        if len(token) >= 14 and _BREAK_AT.search(token):  # each part kept whole in turn: 1/<wbr>n²)-ISRL-DP
            return "<wbr>".join(whole(piece) for piece in _BREAK_AT.split(token))
        return whole(token)

    return _TOKEN.sub(one, escaped)


#: a table of the built site that :func:`whole_tokens_in_tables` leaves alone (its cells went through soft_breaks when
#: they were written), a table, a cell, a tag
_OWN_TABLE = "dpcore-table"
_TABLE = re.compile(r"<table\b[^>]*>.*?</table>", re.S)
_CELL = re.compile(r"(<t[dh]\b[^>]*>)(.*?)(</t[dh]>)", re.S)
_TAG = re.compile(r"(<[^>]*>)")
_TAG_NAME = re.compile(r"</?\s*([A-Za-z][A-Za-z0-9-]*)")
#: elements whose text is never touched: code, preformatted text, formulas, and what is already kept whole
_KEPT = ("code", "pre", "script", "style", "math", "svg", "kbd", "samp")
_VOID = ("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr")


def _whole_tokens_in_cell(cell: str) -> str:
    """One table cell's inner HTML with :func:`soft_breaks` applied to its text, outside the :data:`_KEPT` elements
    and the spans already kept on one line."""
    out, stack = [], []  # stack: (tag name, whether its text is kept as it is)
    for part in _TAG.split(cell):
        if not part.startswith("<"):
            out.append(part if any(kept for _, kept in stack) else soft_breaks(part))
            continue
        out.append(part)
        name = _TAG_NAME.match(part)
        if name is None or part.startswith("<!") or part.endswith("/>"):
            continue  # a comment, a doctype, a self-closed element
        tag = name.group(1).lower()
        if tag in _VOID:
            continue
        if part.startswith("</"):
            for i in range(len(stack) - 1, -1, -1):  # close the innermost open element of that name
                if stack[i][0] == tag:
                    del stack[i:]
                    break
        else:
            stack.append((tag, tag in _KEPT or "dpcore-nowrap" in part))
    return "".join(out)


def whole_tokens_in_tables(page: str) -> str:
    """A built HTML page whose table cells break only between words (issue 54, "no table cell breaks a token at
    1280 px"): the tables Sphinx renders from Markdown (``docs/running.md``: ``(LeNet-5/MNIST,``) and the notebooks'
    output tables (pandas: ``2.482661e-05``, ``CIFAR-10``, ``φD/√(Nn)``) get :func:`soft_breaks` on their cells'
    text -- a number or formula with a hyphen, dash or slash kept on one line, a long key given ``<wbr>`` -- as the
    claim tables (``dpcore-table``, already done when written) have; a table too wide then scrolls inside its box."""

    def table(match: re.Match) -> str:
        markup = match.group(0)
        opening = markup[: markup.index(">") + 1]
        if _OWN_TABLE in opening:
            return markup
        return _CELL.sub(lambda m: m.group(1) + _whole_tokens_in_cell(m.group(2)) + m.group(3), markup)

    return _TABLE.sub(table, page)


def keep_table_tokens_whole(out: Path) -> int:
    """Apply :func:`whole_tokens_in_tables` to every HTML page under ``out`` (after Sphinx); returns how many pages
    changed."""
    changed = 0
    for path in sorted(Path(out).rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        if "<table" not in text:
            continue
        new = whole_tokens_in_tables(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed += 1
    return changed


def slug(text: str) -> str:
    """Lowercase letters, digits and hyphens: a label / element id Sphinx keeps as it is."""
    out = re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")
    if not out:
        raise ValueError(f"text must hold a letter or digit to make a label, got {text!r}")
    return out


# ------------------------------------------------------------------------------------------------
# staging
# ------------------------------------------------------------------------------------------------
class Site:
    """What the pages are made of: claims rows of both profiles, specs, notebooks, titles, findings, and (filled
    while the notebooks are staged) which notebook cell draws which figure."""

    def __init__(self, src: Path, profile: str, *, figures: Path = FIGURES) -> None:
        from dpcore.papers import all_specs, notebook_claims, titles

        self.src = src
        self.profile = profile
        self.figures = Path(figures)
        self.rows = read_rows(self.figures / "claims.csv")
        self.paper_rows = read_rows(self.figures / "paper" / "claims.csv")
        if not self.rows:
            raise SystemExit(f"{self.figures / 'claims.csv'} is missing: run `make figures` first")
        self.specs = all_specs()
        self.notebooks = notebook_claims()
        self.titles = titles()
        self.findings = load_findings()
        #: figure folder -> the figure calls of its notebooks (filled by :func:`stage_notebook`)
        self.drawing: dict[str, list[FigureCall]] = {}

    def papers(self) -> list[str]:
        found = {r["paper"] for r in self.rows}
        return [p for p in PAPER_ORDER if p in found]

    def rows_of(self, paper: str, *, profile: str = "quick") -> list[dict]:
        rows = self.rows if profile == "quick" else self.paper_rows
        return [r for r in rows if r["paper"] == paper]

    def notebook_keys(self, paper: str) -> list[str]:
        keys: list[str] = []
        for nb in self.notebooks:
            if nb.paper == paper and nb.notebook not in keys:
                keys.append(nb.notebook)
        return keys

    def title(self, paper: str) -> str:
        return self.titles.get(paper, SHORT[paper]) if paper != "ref" else SHORT[paper]

    def verdict(self, paper: str) -> str:
        return paper_verdict(self.findings, paper, self.rows_of(paper), self.rows_of(paper, profile="paper"))


def executed_or_source(key: str, profile: str) -> tuple[Path, bool]:
    """The executed copy of the last ``make figures`` when it exists, else the committed notebook."""
    executed = ROOT / "build" / profile / f"{key}.ipynb"
    source = NOTEBOOKS / f"{key}.ipynb"
    if executed.exists() and executed.stat().st_mtime >= source.stat().st_mtime:
        return executed, True
    return source, False


# ------------------------------------------------------------------------------------------------
# which notebook cell draws which figure
# ------------------------------------------------------------------------------------------------
class FigureCall(NamedTuple):
    """One ``report.figure(fig, name)`` call of a notebook cell: the names it can write, as a regular expression
    (``{...}`` of an f-string matches anything), and how many of its characters are fixed (the more, the more
    specific: a file two calls match belongs to the more specific one)."""

    notebook: str
    cell: int  # index of the cell in the committed notebook
    pattern: str
    fixed: int

    @property
    def label(self) -> str:
        """The MyST label of the cell (a target placed just before it on the notebook's page)."""
        return cell_label(self.notebook, self.cell)


def cell_label(notebook: str, cell: int) -> str:
    return f"nbcell-{slug(notebook)}-{cell}"


def _name_patterns(node: ast.expr, tree: ast.AST, *, depth: int = 0) -> list[tuple[str, int]]:
    """The file names an expression can be, as (regex, fixed characters): a string, an f-string, or a variable
    assigned one of those in the same cell (``name = ...`` or the loop ``for name, ... in ((..., ...), ...)``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [(re.escape(node.value), len(node.value))]
    if isinstance(node, ast.JoinedStr):
        regex, fixed = "", 0
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                regex, fixed = regex + re.escape(part.value), fixed + len(part.value)
            else:
                regex += ".+"
        return [(regex, fixed)]
    if isinstance(node, ast.Name) and depth == 0:
        out: list[tuple[str, int]] = []
        for value in _assigned(node.id, tree):
            out += _name_patterns(value, tree, depth=1)
        return out
    return []


def _assigned(name: str, tree: ast.AST) -> list[ast.expr]:
    """The expressions variable ``name`` is given in ``tree``: plain assignments and loops over literal tuples."""
    values: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == name:
                values.append(node.value)
        elif isinstance(node, ast.For) and isinstance(node.iter, ast.Tuple | ast.List):
            target = node.target
            if isinstance(target, ast.Name) and target.id == name:
                values += list(node.iter.elts)
            elif isinstance(target, ast.Tuple):
                names = [t.id if isinstance(t, ast.Name) else None for t in target.elts]
                if name in names:
                    at = names.index(name)
                    values += [
                        e.elts[at]
                        for e in node.iter.elts
                        if isinstance(e, ast.Tuple | ast.List) and len(e.elts) == len(names)
                    ]
    return values


def figure_calls(source: str, notebook: str, cell: int) -> list[FigureCall]:
    """The ``<report>.figure(fig, name, ...)`` calls of one code cell (IPython ``%`` / ``!`` lines skipped; a cell
    that does not parse has none)."""
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    calls: list[FigureCall] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "figure"):
            continue
        if not isinstance(node.func.value, ast.Name) or node.func.value.id in ("plt", "pyplot", "matplotlib"):
            continue
        name = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "name"), None)
        if name is None:
            continue
        for regex, fixed in _name_patterns(name, tree):
            calls.append(FigureCall(notebook, cell, regex, fixed))
    return calls


def drawn_by(calls: Iterable[FigureCall], stem: str) -> FigureCall | None:
    """The call that writes figure ``stem``: the most specific one whose pattern matches it; None when none does,
    or when two cells match it equally well (no guess)."""
    matches = [c for c in calls if re.fullmatch(c.pattern, stem)]
    if not matches:
        return None
    best = max(c.fixed for c in matches)
    top = {(c.notebook, c.cell) for c in matches if c.fixed == best}
    if len(top) > 1:
        return None
    return next(c for c in matches if c.fixed == best)


_REF_WORD = re.compile(r"\b(Fig|Table)s?\b\.?")
_REF_ITEM = re.compile(r"\s*(,|and|[-–])?\s*(\d+|[IVX]+)[a-z]?(?=$|[\s,;/)(.–-])")
_ROMAN = {"I": 1, "V": 5, "X": 10}


def _number(token: str) -> int:
    if token.isdigit():
        return int(token)
    values = [_ROMAN[c] for c in token]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def artifact_refs(artifact: str) -> set[tuple[str, int]]:
    """The figures and tables an artifact names: "Figs 1(c), 2(c), 11, 12" -> {("fig", 1), ("fig", 2), ...};
    "Table II" -> {("table", 2)}; "Figs. 8-9" -> {("fig", 8), ("fig", 9)}; "App. I.1" -> set()."""
    refs: set[tuple[str, int]] = set()
    for word in _REF_WORD.finditer(artifact):
        kind = word.group(1).lower()
        rest = re.sub(r"\([^)]*\)", "", artifact[word.end() :])
        pos, last = 0, None
        while (item := _REF_ITEM.match(rest, pos)) is not None:
            if item.group(1) and item.group(1) in "-–" and last is None:
                break
            n = _number(item.group(2))
            if item.group(1) and item.group(1) in "-–" and last is not None and n > last:
                refs.update((kind, k) for k in range(last + 1, n + 1))
            else:
                refs.add((kind, n))
            last, pos = n, item.end()
    return refs


def stem_refs(stem: str) -> set[tuple[str, int]]:
    """The paper figure or table a file name is about: "fig01_..." -> {("fig", 1)}; "tables_6_8_..." ->
    {("table", 6), ("table", 8)}; "sigma_vs_epsilon" -> set()."""
    found = re.match(r"(fig|table)s?_?(\d+(?:_\d+)*)(?=_|$)", stem)
    if found is None:
        return set()
    return {(found.group(1), int(n)) for n in found.group(2).split("_")}


def decided_keys(site: Site, paper: str, notebook: str, stem: str) -> list[str]:
    """The claim keys of ``notebook`` whose artifact names the figure or table ``stem`` draws (e.g. fig01_... and
    "Fig. 1(c)"); empty when the file names no figure or table of the paper."""
    refs = stem_refs(stem)
    if not refs:
        return []
    artifacts = {s.key: s.artifact for s in site.specs if s.paper == paper}
    keys = [k for nb in site.notebooks if nb.paper == paper and nb.notebook == notebook for k in nb.keys]
    return [k for k in keys if refs & artifact_refs(artifacts.get(k, ""))]


# ------------------------------------------------------------------------------------------------
# staging notebooks
# ------------------------------------------------------------------------------------------------
def stage_notebook(site: Site, key: str) -> bool:
    """Copy one paper notebook into ``<src>/notebooks/<key>.ipynb``; True when it carries outputs.

    A label is placed before each cell that draws a figure (:func:`figure_calls`), for the paper page's links;
    the calls are recorded in ``site.drawing`` under the notebook's figure folder."""
    import nbformat

    path, executed = executed_or_source(key, site.profile)
    nb = nbformat.read(path, as_version=4)
    note = (
        f"*Rendered from the executed notebook of the last `make figures` (profile {site.profile}).*"
        if executed
        else "*Rendered from the committed notebook without outputs: the executed copies of `make figures` "
        "(`build/<profile>/`) are not kept in the repository. Its results are the figures and scorecard rows "
        "of the paper page; run it with `make figures NB='" + key + "'` or open it with `make lab`.*"
    )
    calls = _label_figure_cells(nb, key)
    site.drawing.setdefault(key.split("/")[0], []).extend(calls)
    _ensure_title(nb, key)
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(note))
    _drop_widgets(nb)
    _relative_paths(nb)
    out = site.src / "notebooks" / f"{key}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return executed


#: what ``Report.figure`` (``{'png': PosixPath('figures/...'), ...}``) and ``Report.table`` (``PosixPath(...)``) return,
#: printed when the call ends a cell
FIGURE_PATHS_REPR = re.compile(r"^(?:\{'(?:png|pdf|csv)': )?\w*Path\(")
_LABEL_CELL = re.compile(r"\((nbcell-[a-z0-9-]+)\)=")


def embed_figures(site: Site, key: str) -> int:
    """Show each figure of notebook ``key`` under the cell that draws it (issue 54: the pages printed the dict of paths
    ``report.figure`` returns, ``{'png': PosixPath('figures/...')}``, and no figure).

    Run after every notebook is staged (:func:`stage_notebook` records the figure calls): each PNG of the notebook's
    figure folder that :func:`drawn_by` gives to a cell of this notebook goes, as a MyST figure of the staged copy
    under ``figures/`` with its file name as caption, in a markdown cell right after that cell; the dict of paths
    (:data:`FIGURE_PATHS_REPR`) goes.  Returns how many figures the page shows."""
    import nbformat

    path = site.src / "notebooks" / f"{key}.ipynb"
    nb = nbformat.read(path, as_version=4)
    folder = key.split("/")[0]
    up = "../" * (key.count("/") + 1)  # from notebooks/<key>.ipynb back to the staged root
    shown: dict[str, list[str]] = {}
    for png in sorted((site.src / "figures" / folder).glob("*.png")):
        call = drawn_by(site.drawing.get(folder, []), png.stem)
        if call is not None and call.notebook == key:
            shown.setdefault(call.label, []).append(png.name)
    cells, label, count = [], None, 0
    for cell in nb.cells:
        cells.append(cell)
        if cell.cell_type == "markdown":
            found = _LABEL_CELL.fullmatch(cell.source.strip())
            label = found.group(1) if found else label
            continue
        if cell.cell_type != "code":
            continue
        cell["outputs"] = [
            o
            for o in cell.get("outputs", [])
            if not (o.get("output_type") == "execute_result"
                    and FIGURE_PATHS_REPR.match(str(o.get("data", {}).get("text/plain", ""))))
        ]  # fmt: skip
        names = shown.pop(label, []) if label else []
        label = None
        if names:
            lines = []
            for name in names:
                rel = f"figures/{folder}/{name}"
                lines += [f"```{{figure}} {up}{rel}", f":alt: {Path(name).stem}", ":width: 100%", "",
                          f"`{rel}`, written by the cell above.", "```", ""]  # fmt: skip
            cells.append(nbformat.v4.new_markdown_cell("\n".join(lines)))
            count += len(names)
    nb.cells = cells
    nbformat.write(nb, path)
    return count


def _label_figure_cells(nb, key: str) -> list[FigureCall]:  # noqa: ANN001
    """Insert a MyST label (``(nbcell-...)=``) before every code cell that draws a figure; its figure calls.

    Cells are numbered as in the notebook read, papermill's injected cell not counted (so that an executed copy
    and the committed notebook give the same labels)."""
    import nbformat

    calls: list[FigureCall] = []
    cells, index = [], 0
    for cell in nb.cells:
        injected = INJECTED_TAG in cell.get("metadata", {}).get("tags", [])
        if cell.cell_type == "code" and not injected:
            mine = figure_calls(cell.source, key, index)
            if mine:
                cells.append(nbformat.v4.new_markdown_cell(f"({cell_label(key, index)})="))
                calls += mine
        cells.append(cell)
        index += 0 if injected else 1
    nb.cells = cells
    return calls


def _ensure_title(nb, key: str) -> None:  # noqa: ANN001
    """Give the notebook one top-level title (``# ...``) as its first cell, the page's title."""
    import nbformat

    first = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if first is not None and first.source.lstrip().startswith("# "):
        nb.cells.remove(first)
        nb.cells.insert(0, first)
        return
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"# `{key}`"))


def _drop_widgets(nb) -> None:  # noqa: ANN001
    """Remove interactive widget views (they need a live kernel) and keep the rest of each output.

    An output is a bundle of representations of one object: an explorer's holds its widget view *and* a PNG of
    its default state (and a text read-out).  Only the widget view is dropped; an output left with nothing to
    show goes."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data is not None and WIDGET_MIME in data:
                data.pop(WIDGET_MIME)
                if not data:
                    continue
            kept.append(output)
        cell["outputs"] = kept
    nb.metadata.pop("widgets", None)


def relative_text(text: str, root: Path = ROOT) -> str:
    """``text`` with the absolute path of the repository (``root``) made relative: ``<root>/figures/x`` ->
    ``figures/x``, ``<root>`` alone -> ``.``."""
    base = str(root).rstrip("/")
    return text.replace(base + "/", "").replace(base, ".")


def _relative_paths(nb, root: Path = ROOT) -> None:  # noqa: ANN001
    """Rewrite the repository's absolute path relative to it in every cell's source and text outputs (papermill's
    injected ``figures_dir``, a warning's file name): no page shows the build machine's folders.  Papermill's
    notebook metadata (its input and output paths) goes."""
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.source = relative_text(cell.source, root)
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = relative_text(output["text"], root)
            if "traceback" in output:
                output["traceback"] = [relative_text(t, root) for t in output["traceback"]]
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/") or mime.endswith(("json", "+xml")):
                    if isinstance(value, str):
                        output["data"][mime] = relative_text(value, root)
                    elif isinstance(value, list):
                        output["data"][mime] = [relative_text(v, root) if isinstance(v, str) else v for v in value]


def stage_figures(site: Site) -> None:
    """Copy the committed figure PNGs and CSVs (no PDFs, no Markdown) into ``<src>/figures``."""
    for path in sorted(site.figures.rglob("*")):
        if path.is_file() and path.suffix in (".png", ".csv") and not path.name.startswith("."):
            target = site.src / "figures" / path.relative_to(site.figures)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


# ------------------------------------------------------------------------------------------------
# paper pages
# ------------------------------------------------------------------------------------------------
def claims_label(paper: str, notebook: str, profile: str = "quick") -> str:
    """The label of a notebook's claims section on its paper's page."""
    return f"claims-{'paper-' if profile == 'paper' else ''}{slug(paper)}-{slug(notebook)}"


def figure_links(site: Site, paper: str, stem: str, folder: str, *, profile: str = "quick") -> str:
    """The caption's links of one figure: the cell that draws it and the claims it decides (MyST)."""
    call = drawn_by(site.drawing.get(folder, []), stem)
    if call is None:
        return "Drawing cell not found in this paper's notebooks."
    nb = call.notebook
    text = f"Drawn by {{ref}}`{nb}, cell {call.cell} <{call.label}>`"
    owned = [n for n in site.notebooks if n.paper == paper and n.notebook == nb]
    if not owned:
        return text + "."
    mine = set(owned[0].keys)
    sections = [p for p in (profile, "quick") if any(r["key"] in mine for r in site.rows_of(paper, profile=p))]
    if not sections:  # a section per notebook exists only where claims.csv has its rows
        return text + "; its notebook's claims have no row in claims.csv yet."
    label = claims_label(paper, nb, sections[0])
    keys = decided_keys(site, paper, nb, stem)
    if not keys:
        return text + f"; no claim names its figure: the claims its notebook checks are {{ref}}`here <{label}>`."
    shown = ", ".join(f"`{k}`" for k in keys[:6]) + (f" and {len(keys) - 6} more" if len(keys) > 6 else "")
    what = "claim" if len(keys) == 1 else f"{len(keys)} claims"
    return text + f"; decides {{ref}}`{what} <{label}>`: {shown}."


def figure_blocks(site: Site, paper: str, folders: list[str], sub: str = "") -> list[str]:
    """MyST figure directives for every PNG of ``figures/<sub>/<folder>/``: links to its CSV, to the notebook cell
    that draws it and to the claims it decides."""
    lines: list[str] = []
    staged = site.src / "figures"  # the staged copy: a figure written meanwhile by a running job is not half there
    base = staged / sub if sub else staged
    for folder in folders:
        pngs = sorted((base / folder).glob("*.png"))
        if not pngs:
            continue
        lines += [f"### `figures/{sub + '/' if sub else ''}{folder}/`", ""]
        for png in pngs:
            rel = f"../figures/{sub + '/' if sub else ''}{folder}/{png.name}"
            csv_path = png.with_suffix(".csv")
            caption = f"`{png.stem}`"
            if csv_path.exists():
                caption += f" — plotted numbers: {{download}}`{csv_path.name} <{rel[:-4]}.csv>`"
            caption += ". " + figure_links(site, paper, png.stem, folder, profile="paper" if sub else "quick")
            lines += [f"```{{figure}} {rel}", f":alt: {png.stem}", ":width: 100%", "", caption, "```", ""]
    return lines


def findings_section(site: Site, paper: str) -> list[str]:
    """The page's first section: the one-line verdict and each finding (kind, weight, sentence, rows, evidence)."""
    lines = ["## Findings", "", f"**Verdict:** {md_text(site.verdict(paper))}.", ""]
    if site.findings is None:
        lines += ["```{note}", NO_FINDINGS_API.capitalize() + " (no `dpcore.papers.findings`): the verdict above "
                  "comes from the counts of the scorecard below.", "```", ""]  # fmt: skip
        return lines
    mine = site.findings.of(paper)
    if not mine:
        lines += ["No finding is recorded for this paper yet (`FINDINGS` of its `claims.py`).", ""]
        return lines
    from dpcore.claims import finding_rows

    items = []
    for f in mine:
        where = []
        for profile in ("quick", "paper"):
            rows = finding_rows(f, site.rows_of(paper, profile=profile))
            if rows:
                c = counts(rows)
                spread = ", ".join(
                    [
                        *(f"{c[s]} {status_label(s)}" for s in STATUSES if c[s]),
                        *(f"{c[s + '-ok']}/{c[s]} {s} checks hold" for s in OWN_CHECKS if c.get(s)),
                    ]
                )
                where.append(f"{len(rows)} at the {profile} profile ({spread})")
        weight = getattr(f, "weight_words", None) or ("changes a conclusion" if f.conclusion else "cosmetic")
        keys = ", ".join(f"<code>{esc(k)}</code>" for k in f.keys)
        items.append(
            f'<li class="dpcore-finding" id="finding-{slug(paper)}-{slug(f.key)}">'
            f"{finding_badge(f.kind)} "
            f'<span class="dpcore-weight dpcore-{"conclusion" if f.conclusion else "cosmetic"}">'
            f"{weight}</span> {inline_code(esc(f.text))}"
            f'<div class="dpcore-finding-meta">rows: {"; ".join(where) or "none in claims.csv"} · keys: {keys}'
            f" · evidence: {inline_code(esc(f.evidence))}</div>{finding_rows_html(site, paper, f)}</li>"
        )
    lines += ["```{raw} html", '<ol class="dpcore-findings">', *items, "</ol>", "```", ""]
    return lines


def finding_badge(kind: str) -> str:
    """A finding's kind as a coloured badge: a status's (:func:`status_cell`), or, for a kind that is no status (an
    ``audit`` finding, our audit of the authors' code; a ``trained`` one, decided by the verdict rules), its own words
    (``dpcore.claims.FINDING_LABELS``) and colour; ``ValueError`` for a kind that is neither."""
    if kind in STATUSES:
        return status_cell(kind)
    from dpcore.claims import FINDING_LABELS

    if kind not in FINDING_LABELS:
        raise ValueError(f"kind must be a status or one of {tuple(FINDING_LABELS)}, got {kind!r}")
    return f'<span class="dpcore-status dpcore-{slug(kind)}">{esc(FINDING_LABELS[kind])}</span>'


def explanation_of(spec: Any) -> Any:
    """The spec's explanation (``Erratum`` / ``NotReproduced`` / ``Inconclusive``) or None."""
    return getattr(spec, "explanation", None)


def paper_page(site: Site, paper: str, executed: Mapping[str, bool]) -> str:
    quick_rows = site.rows_of(paper)
    paper_rows = site.rows_of(paper, profile="paper")
    qc, pc = counts(quick_rows), counts(paper_rows) if paper_rows else None
    heading = f"Paper {paper}: {SHORT[paper]}" if paper != "ref" else SHORT[paper]
    lines = [f"# {heading}", ""]
    if paper != "ref":
        lines += [f"*{md_text(site.title(paper))}*", ""]
    lines += findings_section(site, paper)
    lines += ["## Counts", "", f"- quick profile: {count_phrase(qc, 'quick')}."]
    if pc:
        lines.append(f"- paper profile (`results/paper/`, `figures/paper/`): {count_phrase(pc, 'paper')}.")
    lines += [
        "",
        "Generated from `figures/claims.csv`"
        + (", `figures/paper/claims.csv`" if pc else "")
        + " and the claim specifications and findings in `dpcore/papers/*/claims.py` by `docs/build_site.py`.",
        "",
        "## Notebooks",
        "",
    ]
    keys = site.notebook_keys(paper)
    for key in keys:
        topics = [nb.topic for nb in site.notebooks if nb.notebook == key and nb.paper == paper]
        state = "executed" if executed.get(key) else "source"
        lines.append(f"- [`{key}`](../notebooks/{key}.ipynb) ({state}): {md_text('; '.join(topics))}")
    lines += ["", "```{toctree}", ":hidden:", ""] + [f"../notebooks/{k}" for k in keys] + ["```", ""]

    lines += ["## Scorecard", ""]
    topic_rows = []
    for nb in site.notebooks:
        if nb.paper != paper:
            continue
        mine = [r for r in quick_rows if r["key"] in set(nb.keys)]
        c = counts(mine)
        name = f"<code>{soft_breaks(esc(nb.notebook))}</code>"
        topic_rows.append([soft_breaks(esc(nb.topic)), name] + [str(c[s]) for s in STATUSES])
    lines.append(html_table(["topic", "notebook", *(status_label(s) for s in STATUSES)], topic_rows))
    lines += ["Every claim at the quick profile (`figures/claims.csv`; the full note of each row is in the CSV):", ""]
    lines += _claims_by_notebook(site, paper, quick_rows, "quick", level="###")
    if paper_rows:
        lines += ["### Paper profile", "", "Rows of `figures/paper/claims.csv` (results of `results/paper/`):", ""]
        lines += _claims_by_notebook(site, paper, paper_rows, "paper", level="####")

    lines += _explanations(site, paper, quick_rows)

    folders = sorted({k.split("/")[0] for k in keys})
    lines += ["## Figures", "", "The committed figures of the quick profile (`figures/`)."]
    lines += ["Figures of training at reduced scale say so in their footer (**REDUCED SCALE**).", ""]
    lines += figure_blocks(site, paper, folders)
    paper_figs = figure_blocks(site, paper, folders, "paper")
    if paper_figs:
        lines += ["## Figures at the paper profile", "", "Rendered from `results/paper/` (`figures/paper/`).", ""]
        lines += paper_figs
    return "\n".join(lines) + "\n"


def _claims_by_notebook(site: Site, paper: str, rows: list[dict], profile: str, *, level: str) -> list[str]:
    """One labelled section per notebook (the figures' links land there), its rows in a table."""
    lines: list[str] = []
    placed: set[str] = set()
    for nb in site.notebooks:
        if nb.paper != paper:
            continue
        mine = [r for r in rows if r["key"] in set(nb.keys)]
        if not mine:
            continue
        placed.update(r["key"] for r in mine)
        lines += [f"({claims_label(paper, nb.notebook, profile)})=", f"{level} {md_text(nb.topic)}", ""]
        lines += [f"Checked by `{nb.notebook}`:", "", _claims_table(mine, fold=rows_summary(mine))]
    rest = [r for r in rows if r["key"] not in placed]
    if rest:
        lines += [f"{level} Rows no notebook claims", "", _claims_table(rest, fold=rows_summary(rest))]
    return lines


def _explanations(site: Site, paper: str, quick_rows: list[dict]) -> list[str]:
    """The claims whose miss is explained: errata, not reproduced, inconclusive (kind, evidence, ours)."""
    lines = ["## Explanations", ""]
    explained = [s for s in site.specs if s.paper == paper and explanation_of(s) is not None]
    if not explained:
        return lines + ["No claim of this paper carries an explanation (erratum, not reproduced, inconclusive).", ""]
    by_key = {r["key"]: r for r in quick_rows}
    covering = site.findings.of(paper) if site.findings is not None else []
    table = []
    for spec in explained:
        why = explanation_of(spec)
        ours = by_key.get(spec.key, {})
        finding = next((f for f in covering if f.covers(spec.key)), None)
        link = f'<a href="#finding-{slug(paper)}-{slug(finding.key)}">{esc(finding.key)}</a>' if finding else "—"
        cells = [
            f"<code>{soft_breaks(esc(spec.key))}</code><br>{status_cell(type(why).status)}"
            + (f"<br><small>finding: {link}</small>" if covering else ""),
            soft_breaks(esc(spec.artifact)),
            soft_breaks(esc(short(str(spec.value)))) + f"<br><small>{soft_breaks(esc(spec.location))}</small>",
            soft_breaks(esc(short(str(why.expected)))) + f" ({soft_breaks(esc(why.tolerance))})",
            inline_code(esc(why.evidence)),
            soft_breaks(esc(short(ours.get("our_value", "")))) + "<br>" + status_cell(ours.get("status", "not-run")),
        ]
        table.append(cells)
    n = {k: sum(type(explanation_of(s)).status == k for s in explained) for k in ("erratum", "not-reproduced",
                                                                                  "inconclusive")}  # fmt: skip
    lines += [
        f"{len(explained)} claims of this paper miss the printed value for a known reason: {n['erratum']} errata "
        f"(the paper is wrong by its own formulas), {n['not-reproduced']} not reproduced (our runs do not reach "
        f'it), {n["inconclusive"]} inconclusive (the data cannot decide). "Expected" is the corrected value of '
        "an erratum, our committed value otherwise (`figures/ERRATA.md` is the same list for all papers):",
        "",
        html_table(
            ["key", "artifact", "printed (where)", "expected", "evidence", "ours (quick)"],
            table,
            fold=esc(f"{len(explained)} explained claims"),
        ),
    ]
    return lines


CLAIMS_HEADER = ["key", "artifact", "quantity", "paper", "ours", "tolerance", "status"]


def rows_summary(rows: Sequence[Mapping]) -> str:
    """The summary of folded rows: "12 rows: 8 reproduced, 4 erratum" (escaped HTML)."""
    c = counts(rows)
    spread = ", ".join(f"{c.get(s, 0)} {status_label(s)}" for s in STATUSES if c.get(s, 0))
    return esc(f"{len(rows)} row{'s' if len(rows) != 1 else ''}" + (f": {spread}" if spread else ""))


def finding_rows_html(site: Site, paper: str, finding: Any) -> str:
    """The rows of ``finding`` at both profiles, folded under the finding (``<details>``; issue 54)."""
    from dpcore.claims import finding_rows

    parts, total = [], 0
    for profile in ("quick", "paper"):
        rows = finding_rows(finding, site.rows_of(paper, profile=profile))
        if rows:
            total += len(rows)
            parts.append(f'<p class="dpcore-fold-profile">{profile} profile: {rows_summary(rows)}</p>')
            parts.append(table_markup(CLAIMS_HEADER, _claims_cells(rows)))
    if not total:
        return ""
    return (f'<details class="dpcore-fold dpcore-finding-rows"><summary>its {total} row{"s" if total != 1 else ""}'
            f"</summary>{''.join(parts)}</details>")  # fmt: skip


def _claims_table(rows: list[dict], *, fold: str = "") -> str:
    return html_table(CLAIMS_HEADER, _claims_cells(rows), fold=fold)


def _claims_cells(rows: list[dict]) -> list[list[str]]:
    return [
        [
            f"<code>{soft_breaks(esc(r['key']))}</code>",
            soft_breaks(esc(r["artifact"])),
            soft_breaks(esc(r["quantity"])),
            soft_breaks(esc(short(r["paper_value"]))),
            soft_breaks(esc(short(r["our_value"]))) if r["our_value"] else "—",
            soft_breaks(esc(r["tolerance"])),
            status_cell(r["status"]),
        ]
        for r in rows
    ]


#: README sections the site's reference page includes, in this order (the README is their one source).
#: (issue 54: the README is the front page; its reference sections moved to docs/running.md, data.md, cli.md, scale.md,
#: which docs/reference.md lists)
README_REFERENCE: tuple[str, ...] = ()


def readme_sections(text: str) -> dict[str, str]:
    """``{heading: body}`` of the README's ``## `` sections (the heading line included in the body)."""
    sections: dict[str, str] = {}
    current, lines = None, []
    for line in text.splitlines():
        if line.startswith("## "):
            if current is not None:
                sections[current] = "\n".join(lines).rstrip() + "\n"
            current, lines = line[3:].strip(), [line]
        elif current is not None:
            lines.append(line)
    if current is not None:
        sections[current] = "\n".join(lines).rstrip() + "\n"
    return sections


def readme_fragments(gen: Path) -> None:
    """The README's quick start and reference sections, for ``quickstart.md`` and ``reference.md``."""
    sections = readme_sections((ROOT / "README.md").read_text(encoding="utf-8"))

    def find(prefix: str) -> str:
        for heading, body in sections.items():
            if heading.startswith(prefix):
                return body
        raise SystemExit(f"README.md has no section '## {prefix}...' (docs/build_site.py includes it)")

    quick = find("Quick start").split("\n", 1)[1]
    # the README's picture points into figures/ at the repository root; the site has its own copy
    quick = quick.replace("](docs/", "](")
    (gen / "quickstart.md").write_text(quick, encoding="utf-8")
    (gen / "readme_reference.md").write_text("\n".join(find(p) for p in README_REFERENCE), encoding="utf-8")


def verdicts_fragment(site: Site, *, links: bool = True) -> str:
    """The per-paper verdict table (landing page, README): one generated verdict line per paper."""
    header = ["paper", "verdict", "quick profile", "paper profile"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for paper in site.papers():
        qc = counts(site.rows_of(paper))
        prows = site.rows_of(paper, profile="paper")
        pc = counts(prows) if prows else None
        name = f"[{paper}: {SHORT[paper]}](papers/{paper}.md)" if links else f"{paper}: {SHORT[paper]}"
        line = site.verdict(paper).replace("|", "\\|").replace("\n", " ")
        if links:  # the site: a range of numbers (Tables 9–11) stays on one line (U+2060 WORD JOINER after its dash)
            line = re.sub(r"(?<=\d)([-–])(?=\d)", "\\1\u2060", line)
        lines.append(
            f"| {name} | {line} | {count_phrase(qc, 'quick')} | "
            + (count_phrase(pc, "paper") if pc else "no claim at this profile")
            + " |"
        )
    total = counts(site.rows)
    lines += [
        "",
        f"All papers, quick profile: {count_phrase(total, 'quick')} "
        "(generated from `figures/claims.csv` and `figures/paper/claims.csv` at build time).",
        "",
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# sharp edges: numbers computed by the accountants at build time
# ------------------------------------------------------------------------------------------------
def sharp_edges_fragment() -> str:
    from dpcore.accounting import RunRecord, dpsgd_epsilon, epsilon_for_record, events

    sigma, n, batch, epochs, delta = 1.1, 60_000, 256, 10, 1e-5
    q = batch / n
    steps = events.steps_for_epochs(epochs, sampling="shuffle", dataset_size=n, batch_size=batch)  # ⌊n/b⌋ per epoch
    lines = [
        f"One setting, accounted several ways: σ = {sigma}, C = 1, batches of {batch} from n = {n:,} records, "
        f"{steps:,} steps ({epochs} epochs), δ = {delta:g}. Computed by `docs/build_site.py` with "
        "`dpsgd_epsilon` and `epsilon_for_record` when the site is built:",
        "",
        "| sampling | neighbours | noise std | method | ε | rigorous |",
        "|---|---|---|---|---|---|",
    ]

    def add(sampling: str, adj: str, std: str, method: str, eps: float) -> None:
        rig = getattr(eps, "rigorous", True)
        lines.append(f"| {sampling} | {adj} | {std} | {method} | {float(eps):.3f} | {'yes' if rig else '**no**'} |")

    common = {"sample_rate": q, "steps": steps, "delta": delta}
    for method in ("pld", "rdp", "rdp-mironov", "gdp"):
        add("Poisson", "add/remove", "σC", f"`{method}`", dpsgd_epsilon(sigma, method=method, **common))
    add(
        "Poisson",
        "add/remove",
        '2σC (`noise_convention="replace_one"`)',
        "`pld`",
        dpsgd_epsilon(sigma, method="pld", noise_convention="replace_one", **common),
    )
    add(
        "fixed size, without replacement",
        "replace-one",
        "σC",
        "`rdp`",
        dpsgd_epsilon(sigma, method="rdp", sampling="fixed", dataset_size=n, **common),
    )
    for convention, factor in events.NOISE_FACTOR.items():
        record = RunRecord(
            private=True,
            sampling="shuffle",
            dataset_size=n,
            batch_size=batch,
            steps=steps,
            clipping="individual",
            clip_norm=1.0,
            noise_multiplier=sigma,
            noise_std=factor * sigma,
            noise_convention=convention,
        )
        std = "σC" if factor == 1 else f'{factor:g}σC (`noise_convention="{convention}"`)'
        add("shuffled (one permutation per epoch)", "replace-one", std, "A_1 (`a1`)", epsilon_for_record(record, delta))
    return "\n".join(lines) + "\n"


def paper_mode_fragment(site: Site) -> str:
    """Examples of 'the paper's ε is not the run's ε', read from the claims (printed vs corrected)."""
    wanted = [
        s
        for s in site.specs
        if s.paper == "000" and s.key.endswith(".epsilon_eq6") and getattr(explanation_of(s), "status", "") == "erratum"
    ]
    by_key = {r["key"]: r for r in site.rows_of("000")}
    lines = [
        "| row (paper 000) | ε the table prints | ε that eq. (6) guarantees at its σ | status |",
        "|---|---|---|---|",
    ]
    for spec in wanted[:4]:
        row = by_key.get(spec.key, {})
        lines.append(
            f"| `{spec.key}` | {spec.value} | {float(explanation_of(spec).expected):.4g} | "
            f"{status_label(row.get('status', 'not-run'))} |"
        )
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------
# explorers
# ------------------------------------------------------------------------------------------------
def stage_explorers(site: Site, timings: dict[str, float] | None = None) -> list[str]:
    """Stage ``notebooks/explore/*.ipynb``: the explorer's grid drawn with sliders (:func:`static_explorer_block`),
    then its static default state; the staged names.  ``timings`` gets the seconds spent on grids (``grids``)."""
    folder = NOTEBOOKS / "explore"
    names: list[str] = []
    if not folder.is_dir():
        return names
    import nbformat

    for path in sorted(folder.glob("*.ipynb")):
        key = f"explore/{path.stem}"
        executed, was_executed = executed_or_source(key, site.profile)
        out = site.src / "explore" / path.name
        out.parent.mkdir(parents=True, exist_ok=True)
        if was_executed:
            nb = nbformat.read(executed, as_version=4)
        else:
            nb = _execute_explorer(path, out)
        _ensure_title(nb, key)
        t0 = time.perf_counter()
        blocks = [static_explorer_block(path.stem, i, grid_json(path.stem, i, g)[0])
                  for i, g in enumerate(explorer_grids(path.stem))]  # fmt: skip
        if timings is not None:
            timings["grids"] = timings.get("grids", 0.0) + time.perf_counter() - t0
        nb.cells[1:1] = [
            nbformat.v4.new_markdown_cell(STATIC_NOTE if blocks else NO_GRID_NOTE),
            *(nbformat.v4.new_markdown_cell(b) for b in blocks),
            nbformat.v4.new_markdown_cell(
                "## Static default state\n\nThe live explorer at its defaults, as the kernel drew it (every "
                "control, and the on-demand computations, need a live kernel: `make explore`)."
            ),
        ]
        _drop_widgets(nb)
        _relative_paths(nb)
        nbformat.write(nb, out)
        names.append(path.stem)
    return names


#: the explorer page's first note when the explorer has static grids, and when it has none
STATIC_NOTE = (
    "*Interactive without a kernel: the sliders move over a grid of the explorer's main controls computed when this "
    "site was built, each point by the explorer's own `compute` (`dpcore.explore.static`), so the numbers are those "
    "the live explorer shows at those values. Values between the grid's, the other controls and the on-demand "
    "computations need a live kernel: run `make explore` and open this explorer.*"
)
NO_GRID_NOTE = (
    "*Static default state: the widgets need a live kernel. Run `make explore` and open this explorer to "
    "move the sliders.*"
)
#: computed explorer grids kept between builds, each under a key of the library's source and the numeric packages
GRID_CACHE = ROOT / "build" / "docs-cache" / "grids"


def explorer_grids(topic: str) -> list[Any]:
    """The static grids (``STATIC_GRIDS``, :class:`dpcore.explore.static.StaticGrid`) of the modules behind explorer
    ``topic`` (``dpcore.explore.TOPICS``); empty for a topic without any."""
    import importlib

    from dpcore.explore import TOPICS

    grids: list[Any] = []
    for module in TOPICS.get(topic, ()):
        grids += list(getattr(importlib.import_module(module), "STATIC_GRIDS", ()))
    return grids


@functools.lru_cache(maxsize=1)
def _library_digest() -> str:
    """SHA-256 of every ``dpcore/**/*.py`` and of the Python, NumPy and SciPy versions: what a grid's numbers depend
    on (a change of any recomputes the grids)."""
    import hashlib
    import importlib.metadata

    digest = hashlib.sha256(sys.version.encode())
    for dist in ("numpy", "scipy", "dp-accounting"):
        try:
            digest.update(f"{dist}={importlib.metadata.version(dist)}".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{dist}=-".encode())
    for path in sorted((ROOT / "dpcore").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def grid_json(topic: str, index: int, grid: Any, *, cache: Path | None = GRID_CACHE) -> tuple[str, bool]:
    """Grid ``index`` of explorer ``topic`` as JSON text (:func:`dpcore.explore.static.grid_data`) and whether it came
    from ``cache`` (a file per grid, reused while :func:`_library_digest` is unchanged; None: always compute)."""
    import json

    from dpcore.explore.static import grid_data

    key = f"{_library_digest()}:{grid.title}:{grid.size}"
    stored = cache / f"{slug(topic)}-{index}.json" if cache is not None else None
    if stored is not None and stored.exists():
        try:
            cached = json.loads(stored.read_text(encoding="utf-8"))
        except ValueError:
            cached = {}
        if cached.get("key") == key:
            return json.dumps(cached["data"], ensure_ascii=False, separators=(",", ":"), allow_nan=False), True
    data = grid_data(grid)
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(json.dumps({"key": key, "data": data}, ensure_ascii=False), encoding="utf-8")
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False), False


def static_explorer_block(topic: str, index: int, text: str) -> str:
    """A MyST raw-HTML block holding grid ``index`` of ``topic`` (JSON ``text``) for ``_static/dpcore-explorer.js``,
    which draws its sliders, read-out and plot; without JavaScript the page says so."""
    safe = text.replace("</", "<\\/")  # the JSON cannot end its <script> element
    return "\n".join(
        [
            "```{raw} html",
            f'<div class="dpcore-static-explorer" id="static-{slug(topic)}-{index}">',
            f'<script type="application/json">{safe}</script>',
            "<noscript>The sliders need JavaScript; the static default state is below.</noscript>",
            "</div>",
            "```",
            "",
        ]
    )


def _execute_explorer(path: Path, out: Path):  # noqa: ANN202
    """Execute one explorer notebook with papermill (its defaults), in a scratch folder under build/."""
    import nbformat
    import papermill

    from dpcore.runner import KERNEL

    scratch = ROOT / "build" / "scratch" / "docs"
    scratch.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MPLBACKEND", "Agg")
    papermill.execute_notebook(
        str(path), str(out), kernel_name=KERNEL, cwd=str(path.parent), progress_bar=False, execution_timeout=600
    )
    return nbformat.read(out, as_version=4)


def explorers_fragment(names: list[str]) -> str:
    if not names:
        return (
            "```{note}\nThis checkout has no explorer notebooks yet (`notebooks/explore/` is absent or empty): "
            "the next `make docs` after they appear renders them here.\n```\n"
        )
    lines = ["```{toctree}", ":maxdepth: 1", ""] + [f"explore/{n}" for n in names] + ["```", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------------
def stage(src: Path, profile: str, *, figures: Path = FIGURES) -> dict[str, float]:
    """Write every source page into ``src`` (emptied first) from the claims and figures of ``figures``; the
    seconds each part took."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for path in DOCS.rglob("*"):
        rel = path.relative_to(DOCS)
        if path.is_file() and rel.parts[0] not in ("__pycache__",) and path.name != "build_site.py":
            target = src / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    site = Site(src, profile, figures=figures)
    stage_figures(site)
    gen = src / "_generated"
    gen.mkdir()
    executed: dict[str, bool] = {}
    for paper in site.papers():
        for key in site.notebook_keys(paper):
            if key not in executed:  # a notebook of two papers (the audit) is staged once
                executed[key] = stage_notebook(site, key)
    for key in executed:  # once every notebook's figure calls are known
        embed_figures(site, key)
    timings["stage"] = time.perf_counter() - t0
    (src / "papers").mkdir(exist_ok=True)
    for paper in site.papers():
        (src / "papers" / f"{paper}.md").write_text(paper_page(site, paper, executed), encoding="utf-8")
    (gen / "verdicts.md").write_text(verdicts_fragment(site), encoding="utf-8")
    readme_fragments(gen)
    (gen / "paper_mode.md").write_text(paper_mode_fragment(site), encoding="utf-8")
    t1 = time.perf_counter()
    (gen / "sharp_edges_table.md").write_text(sharp_edges_fragment(), encoding="utf-8")
    timings["accountants"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    (gen / "explorers.md").write_text(explorers_fragment(stage_explorers(site, timings)), encoding="utf-8")
    timings["explorers"] = time.perf_counter() - t2
    return timings


README_START, README_END = "<!-- verdicts:start -->", "<!-- verdicts:end -->"


def readme_with_verdicts(text: str) -> str:
    """``text`` (the README) with its verdict table (between its markers) generated from the committed claims."""
    if text.count(README_START) != 1 or text.count(README_END) != 1:
        raise SystemExit(f"README.md must hold {README_START} and {README_END} once each")
    before, rest = text.split(README_START)
    _, after = rest.split(README_END)
    site = Site(ROOT / "build" / "docs-src", "quick")
    return before + README_START + "\n" + verdicts_fragment(site, links=False).rstrip() + "\n" + README_END + after


def update_readme(path: Path = ROOT / "README.md") -> bool:
    """Rewrite the README's verdict table from the claims (``--readme``, by hand after the claims changed; ``make
    docs`` never writes a tracked file, and tests/test_readme_verdicts.py fails while the table is stale)."""
    text = path.read_text(encoding="utf-8")
    new = readme_with_verdicts(text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def build(out: Path, src: Path, profile: str = "quick", *, jobs: str = "1", figures: Path = FIGURES) -> int:
    from sphinx.cmd.build import build_main

    timings = stage(src, profile, figures=figures)
    t0 = time.perf_counter()
    doctrees = src.parent / (src.name + "-doctrees")
    rc = build_main(["-W", "--keep-going", "-q", "-j", jobs, "-b", "html", "-d", str(doctrees), str(src), str(out)])
    timings["sphinx"] = time.perf_counter() - t0
    if rc == 0:
        t0 = time.perf_counter()
        keep_table_tokens_whole(out)  # Markdown and notebook-output tables: numbers and formulas kept whole
        timings["tables"] = time.perf_counter() - t0
    print(
        "docs: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()) + f"; site: {out}/index.html",
        flush=True,
    )
    return rc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "docs", help="HTML output folder")
    parser.add_argument("--src", type=Path, default=ROOT / "build" / "docs-src", help="staged sources (emptied)")
    parser.add_argument("--profile", default="quick", choices=("quick", "paper"), help="executed notebooks to use")
    parser.add_argument("--jobs", default="1", help="Sphinx parallel jobs")
    parser.add_argument("--readme", action="store_true", help="only rewrite README.md's verdict table")
    parser.add_argument(
        "--figures", type=Path, default=FIGURES, help="claims and figures to build from (default: figures/)"
    )
    args = parser.parse_args(argv)
    if args.readme:
        print("README.md verdicts: " + ("updated" if update_readme() else "unchanged"))
        return 0
    return build(args.out.resolve(), args.src.resolve(), args.profile, jobs=args.jobs, figures=args.figures.resolve())


if __name__ == "__main__":
    sys.exit(main())
