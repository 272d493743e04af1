"""``ERRATA.md``: the findings of every paper with a few of their rows, our values per profile
(:func:`errata_markdown`, :func:`write_errata`)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

from dpcore import claims as claims_mod
from dpcore.claims import ClaimSpec
from dpcore.paths import PROFILES, atomic_write_text, profile_figures_dir
from dpcore.runner import sources
from dpcore.validation import check_choice

__all__ = ["ROWS_SHOWN", "errata_markdown", "errata_text", "write_errata"]

#: the rows shown under each finding (the others are counted: "… n more rows in claims.csv"); one under a finding
#: whose readings already give the values, ε and result files (a not-reproduced one)
ROWS_SHOWN = 2
#: the longest line of ERRATA.md
LINE_CHARS = 300


def _read_optional(path: Path) -> dict[tuple[str, str], dict]:
    if not path.exists():
        return {}
    return {(r["paper"], r["key"]): r for r in claims_mod.read_claims_csv(path)}


def _md(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _lines(text: str) -> list[str]:
    """``text`` as lines of at most :data:`LINE_CHARS` characters (one Markdown paragraph)."""
    return textwrap.wrap(" ".join(text.split()), width=LINE_CHARS - 1, break_long_words=False, break_on_hyphens=False)


def _undecided(spec: ClaimSpec, results: Mapping[str, Mapping[tuple[str, str], Mapping]]) -> bool:
    """Whether a row of ``spec`` in some profile is inconclusive from its notebook's data (no explanation needed)."""
    return any(claims_mod.is_undecided(rows.get((spec.paper, spec.key), {})) for rows in results.values())


def _belongs(spec: ClaimSpec, finding: claims_mod.Finding, results: Mapping) -> bool:
    """Whether ``spec`` is one of ``finding``'s rows here: an audit finding's ``source = audit`` claims; an
    erratum / not-reproduced / inconclusive finding's claims explained by that kind, and, for an inconclusive one,
    those the notebook's data found undecidable."""
    if not finding.covers(spec.key):
        return False
    if finding.kind == "audit":
        return spec.source == "audit"
    if finding.kind == "trained":  # a claim decided by the verdict rules (issue 50)
        return spec.rule is not None
    why = spec.explanation
    if why is not None:
        return why.status == finding.kind
    return finding.kind == "inconclusive" and _undecided(spec, results)


def errata_markdown(
    specs: Iterable[ClaimSpec],
    results: dict[str, dict[tuple[str, str], dict]],
    findings: Iterable[claims_mod.Finding] = (),
) -> str:
    """``ERRATA.md`` of the first profile of ``results`` (which maps a profile to its claims.csv rows): per paper,
    each finding with a row that ran at that profile (kind and short clause, whether it changes a conclusion, how
    many rows, the evidence, the readings tried), then at most :data:`ROWS_SHOWN` of its rows with the printed value
    and ours (with the explanation's expected value where they differ; ours is the first profile's value, else
    another's, named), the others counted; the paper's findings that ran only at another profile are named in one
    line.  A finding's rows: the claims its kind explains, an inconclusive finding's rows also those the notebook's
    data found undecidable, an audit finding's the ``source = audit`` claims.  Explained or undecided rows no
    finding covers are listed last under their paper.  Each finding's sentence leads ``SCORECARD.md``; every line
    here stays under :data:`LINE_CHARS` characters and the full note of each row is in ``claims.csv``."""
    for profile in results:
        check_choice("profile", profile, PROFILES)
    specs = list(specs)
    findings = list(findings)
    shown = [s for s in specs if s.explanation is not None or s.source == "audit" or s.rule is not None
             or _undecided(s, results)]  # fmt: skip
    order = {p: i for i, p in enumerate(claims_mod.PAPERS)}
    first = next(iter(results), "")
    here = results.get(first, {})
    counts = claims_mod._counts(here.values())  # the one count (dpcore.verdicts.count_by_status), by status
    lines = [
        "# Findings: where the papers and dpcore differ, by root cause",
        "",
        *_lines(f"Profile {first or 'none'}, from `dpcore/papers/*/claims.py` and `claims.csv` (rules: "
                f"`docs/verdicts.md`); rows `key`: printed → ours; counts: {claims_mod.count_phrase(counts)}."),
    ]
    def cells(spec: ClaimSpec) -> list[str]:
        why = spec.explanation
        expected = claims_mod._short_value(why.expected) if why is not None else ""
        ours = f"not run (expected {expected})" if why is not None else "not run"
        for profile, rows in results.items():  # this file's profile first, then the others that ran it
            row = rows.get((spec.paper, spec.key))
            if row and row["our_value"] != "":
                value = claims_mod._short_value(row["our_value"])
                close = why is not None and claims_mod.values_match(
                    why.expected, claims_mod.parse_value(row["our_value"], like=why.expected), rtol=why.rtol,
                    atol=why.atol)  # fmt: skip
                ours = value if not expected or value == expected or close else f"{value} (expected {expected})"
                ours = ours if profile == first else f"{ours}, {profile}"
                ours += " (undecided)" if claims_mod.is_undecided(row) else ""
                break
        return [_md(c) for c in (spec.key, claims_mod._short_value(spec.value), ours)]

    def row_line(spec: ClaimSpec) -> str:
        key, printed, ours = cells(spec)
        return f"- `{key}`: {printed} → {ours}"

    def ran_here(spec: ClaimSpec) -> bool:
        row = here.get((spec.paper, spec.key))
        return bool(row) and row.get("status") != "not-run"

    def audit_rows(finding: claims_mod.Finding, rows_of: list[ClaimSpec]) -> list[str]:  # how many hold, here
        ran = [s for s in rows_of if ran_here(s)]
        statuses = [here[(s.paper, s.key)]["status"] for s in ran]
        said = ", ".join(f"{statuses.count(k)} {claims_mod.VERDICT_WORDS.get(k, k)}" for k in dict.fromkeys(statuses))
        keys = ", ".join(f"`{k}`" for k in finding.keys)
        return _lines(f"Rows {keys}: of {len(ran)} run here, {said}.")

    def table(rows_of: list[ClaimSpec], shown: int = ROWS_SHOWN) -> list[str]:  # at most `shown`, those run here first
        rows_of = sorted(rows_of, key=lambda s: not ran_here(s))
        more = len(rows_of) - shown
        return [row_line(s) for s in rows_of[:shown]] + (
            [f"- … {more} more row{'s' * (more > 1)} in claims.csv"] if more > 0 else [])  # fmt: skip

    for paper in sorted({s.paper for s in shown}, key=lambda p: order.get(p, 99)):
        mine = [s for s in shown if s.paper == paper]
        lines += ["", f"## Paper {paper}"]
        covered: set[str] = set()
        elsewhere = []
        for f in (f for f in findings if f.paper == paper and f.kind in (*claims_mod.EXPLAINED, "audit", "trained")):
            rows_of = [s for s in mine if _belongs(s, f, results)]
            covered.update(s.key for s in rows_of)
            if rows_of and not any(ran_here(s) for s in rows_of):
                elsewhere.append(f.kind.replace("-", " "))
            if not rows_of or not any(ran_here(s) for s in rows_of):
                continue
            weight = f.weight_words
            plural = "s" * (len(rows_of) > 1)
            label = claims_mod.finding_label(f, [here[(s.paper, s.key)] for s in rows_of if ran_here(s)])
            lines += ["", f"### {label}: {f.short}"]
            lines += _lines(f"{weight.capitalize()}; {len(rows_of)} row{plural}; evidence: {f.evidence}.")
            if f.readings:
                closest = f" Closest: {f.closest}." if f.closest else " Closest: computed per row (claims.csv note)."
                lines += _lines("Tried: " + "; ".join(f.readings) + f".{closest} Untested: {f.untested}.")
            if f.kind == "audit":
                lines += audit_rows(f, rows_of)
            elif f.kind != "trained":  # a trained finding's rows: each note names its closest reading and control
                lines += table(rows_of, 1 if f.readings else ROWS_SHOWN)
        rest = [s for s in mine if s.key not in covered]
        if rest:
            lines += ["", "### explained rows under no finding", "", *table(rest)]
        if elsewhere:
            counted = ", ".join(f"{elsewhere.count(k)} {k}" for k in dict.fromkeys(elsewhere))
            lines += ["", f"Run at the other profile only: {counted} finding(s)."]
    return "\n".join(lines) + "\n"


def errata_text(specs: Iterable[ClaimSpec], root: Path, profile: str = "quick") -> str:
    """``ERRATA.md`` of ``profile`` from the ``claims.csv`` of the profiles under ``root`` (the figures folder): our
    values of ``profile`` first, then those of the other profiles' ``claims.csv`` that exist."""
    check_choice("profile", profile, PROFILES)
    order = [profile, *(p for p in PROFILES if p != profile)]
    results = {p: _read_optional(profile_figures_dir(p, root) / "claims.csv") for p in order}
    results = {p: rows for p, rows in results.items() if rows or p == profile}
    return errata_markdown(specs, results, sources.findings())


def write_errata(specs: Iterable[ClaimSpec], root: Path, profile: str = "quick") -> Path:
    """Write ``ERRATA.md`` of ``profile`` (:func:`errata_text`) into its figures folder under ``root``
    (``root/ERRATA.md`` for quick, ``root/paper/ERRATA.md`` for paper).  Another profile's ``ERRATA.md`` is never
    rewritten."""
    text = errata_text(specs, root, profile)
    return atomic_write_text(profile_figures_dir(profile, root) / "ERRATA.md", text)
