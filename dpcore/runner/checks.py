"""The claims of a run checked: consistency with the specifications (:func:`claim_problems`), coverage of every
notebook's claims (:func:`coverage_problems`), drift from the committed claims (:func:`drift_problems`), the
``claims.csv`` and ``SCORECARD.md`` summary (:func:`write_claims_summary`) and ``make test``'s drift check
(:func:`check_claims`)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

from dpcore import claims as claims_mod
from dpcore.claims import ClaimSpec, NotebookClaims, parse_value, values_match
from dpcore.paths import PROFILES, atomic_write_text, profile_figures_dir
from dpcore.runner import sources
from dpcore.runner.discovery import is_explorer
from dpcore.validation import check_choice

__all__ = [
    "ClaimsProblem",
    "claim_problems",
    "drift_problems",
    "gather",
    "gather_by_notebook",
    "coverage_problems",
    "scorecard_text",
    "committed_summaries",
    "write_claims_summary",
    "check_claims",
]


class ClaimsProblem(ValueError):
    """The claims of a run are inconsistent or fail (``differs``); ``problems`` lists each one."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def _row_id(row: dict) -> str:
    return f"{row.get('paper', '?')}/{row.get('key', '?')}"


def _row_tolerance(spec: ClaimSpec, status: str) -> tuple[float, float]:
    why = spec.explanation
    if status in claims_mod.EXPLAINED and why is not None and why.status == status:
        return why.rtol, why.atol
    return spec.rtol, spec.atol


def claim_problems(
    rows: Iterable[dict], specs: Iterable[ClaimSpec] | None, *, profile: str, allow_differs: bool = False
) -> list[str]:
    """Everything wrong with a set of claim rows, one message each (empty: all fine).

    Checks each row's status is in :data:`~dpcore.claims.STATUSES` and not ``differs`` (unless
    ``allow_differs``), its profile is ``profile``, its ``(paper, key)`` occurs once, and, when
    ``specs`` is given, that the key is specified and the row's paper value, source and status follow from
    the specification (a stale row after an edited spec, or a hand-typed status, is caught).
    """
    table = None if specs is None else {(s.paper, s.key): s for s in specs}
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for row in rows:
        ident = (row.get("paper", ""), row.get("key", ""))
        name = _row_id(row)
        status = row.get("status", "")
        if ident in seen:
            problems.append(f"{name}: checked twice")
        seen.add(ident)
        if status not in claims_mod.STATUSES:
            problems.append(f"{name}: status {status!r} is not one of {claims_mod.STATUSES}")
            continue
        if row.get("profile") != profile:
            problems.append(f"{name}: profile {row.get('profile')!r} in the {profile!r} claims")
        if status == "differs" and not allow_differs:
            problems.append(
                f"{name}: differs (paper {row.get('paper_value')}, ours {row.get('our_value')}, {row.get('tolerance')})"
            )
        if table is None:
            continue
        spec = table.get(ident)
        if spec is None:
            problems.append(f"{name}: no such claim in dpcore.papers.*.claims")
            continue
        if row.get("paper_value") != claims_mod.format_value(spec.value):
            problems.append(f"{name}: paper value {row.get('paper_value')} but the spec says {spec.value!r}")
        if row.get("source") != spec.source:  # it decides how the row is counted (own checks apart)
            problems.append(f"{name}: source {row.get('source')} but the spec says {spec.source} (python -m "
                            "dpcore.restatus, or rerun its notebook)")
        if spec.rule is not None:  # decided from the runs by dpcore.verdicts.decide (issue 50): its note says how
            if status not in ("reproduced", "not-reproduced", "inconclusive", "not-run") or not str(
                    row.get("note", "")).startswith("rule: "):  # fmt: skip
                problems.append(f"{name}: status {status} of a rule-decided claim not written by ClaimsLog.decide")
            continue
        ours = parse_value(row.get("our_value", ""), like=spec.value)
        # the notebook's data found the claim undecidable (ClaimsLog.check(..., inconclusive=reason)): its note says why
        expected = claims_mod.compute_status(spec, ours, inconclusive=claims_mod.is_undecided(row))
        if status != expected:
            problems.append(f"{name}: status {status}, but ours = {row.get('our_value')} gives {expected} by the spec")
    return problems


def drift_problems(fresh: Iterable[dict], committed: Iterable[dict], specs: Iterable[ClaimSpec]) -> list[str]:
    """Rows of a fresh run that differ from the committed ones beyond the claim's tolerance.

    A claim in one set and not the other, a changed status, or an our-value further from the
    committed one than the tolerance of the claim (the explanation's for an explained status) is
    drift; values that are text or bool must be equal.
    """
    table = {(s.paper, s.key): s for s in specs}
    new = {(r["paper"], r["key"]): r for r in fresh}
    old = {(r["paper"], r["key"]): r for r in committed}
    problems = [f"{p}/{k}: in the fresh run but not in the committed claims" for p, k in sorted(set(new) - set(old))]
    problems += [f"{p}/{k}: in the committed claims but not in the fresh run" for p, k in sorted(set(old) - set(new))]
    for ident in sorted(set(new) & set(old)):
        a, b = old[ident], new[ident]
        name = _row_id(a)
        if a["status"] != b["status"]:
            problems.append(f"{name}: status {a['status']} committed, {b['status']} now")
            continue
        spec = table.get(ident)
        if spec is None:
            problems.append(f"{name}: no such claim in dpcore.papers.*.claims")
            continue
        ours_old = parse_value(a["our_value"], like=spec.value)
        ours_new = parse_value(b["our_value"], like=spec.value)
        if ours_old is None and ours_new is None:
            continue
        rtol, atol = _row_tolerance(spec, a["status"])
        if ours_old is None or ours_new is None or not values_match(ours_old, ours_new, rtol=rtol, atol=atol):
            problems.append(
                f"{name}: ours {a['our_value']} committed, {b['our_value']} now (tolerance {a['tolerance']})"
            )
    return problems


def gather(out_figures: Path, profile: str) -> list[dict]:
    """The per-notebook claims of ``profile`` under ``out_figures`` (other profiles' folders skipped)."""
    others = [profile_figures_dir(p, out_figures) for p in PROFILES if p != profile and p != "quick"]
    return claims_mod.collect(out_figures, exclude=others)


def gather_by_notebook(out_figures: Path, profile: str) -> dict[str, list[dict]]:
    """``{notebook key: its claim rows}`` from the ``<folder>/<notebook>.claims.csv`` files of ``profile``
    under ``out_figures`` (a report's folder and name are the notebook's key, e.g. ``001_isrl_dp/mnist_logistic``)."""
    others = [profile_figures_dir(p, out_figures).resolve() for p in PROFILES if p != profile and p != "quick"]
    found: dict[str, list[dict]] = {}
    for path in sorted(Path(out_figures).rglob("*.claims.csv")):
        if any(path.resolve().is_relative_to(o) for o in others):
            continue
        key = path.relative_to(out_figures).as_posix()[: -len(".claims.csv")]
        found[key] = claims_mod.read_claims_csv(path)
    return found


def coverage_problems(
    by_notebook: dict[str, list[dict]], notebooks: Iterable[NotebookClaims], *, ran: Iterable[str] = ()
) -> list[str]:
    """Claims that a notebook owns but did not report, or reports without owning them.

    ``by_notebook`` maps a notebook key to the rows of its claims CSV (:func:`gather_by_notebook`);
    every notebook's rows must be exactly the claims it owns (``notebooks``: which notebook checks
    what).  A notebook in ``ran`` (it ran without failing) that owns claims must have written them.
    """
    owned: dict[str, set[tuple[str, str]]] = {}
    for nb in notebooks:
        owned.setdefault(nb.notebook, set()).update((nb.paper, k) for k in nb.keys)
    problems: list[str] = []
    for notebook, rows in sorted(by_notebook.items()):
        have = {(r.get("paper", ""), r.get("key", "")) for r in rows}
        mine = owned.get(notebook, set())
        missing = sorted(f"{p}/{k}" for p, k in mine - have)
        extra = sorted(f"{p}/{k}" for p, k in have - mine)
        if missing:
            problems.append(
                f"{notebook}: {len(missing)} of its claims not reported (not-run needs a row with the reason): "
                + ", ".join(missing[:6])
                + (" ..." if len(missing) > 6 else "")
            )
        if is_explorer(notebook) and rows:
            problems.append(f"{notebook}: an explorer notebook reports claims ({len(rows)}): explorers check none")
        elif extra:
            problems.append(f"{notebook}: reports claims another notebook (or none) owns: " + ", ".join(extra[:6]))
    for notebook in sorted(set(ran)):
        if owned.get(notebook) and notebook not in by_notebook:
            problems.append(f"{notebook}: ran but wrote no claims ({len(owned[notebook])} owned)")
    return problems


def scorecard_text(
    rows: list[dict],
    profile: str = "quick",
    *,
    specs: Iterable[ClaimSpec] = (),
    notebooks: Iterable[NotebookClaims] = (),
    titles: dict[str, str] | None = None,
) -> str:
    """``SCORECARD.md`` of ``profile`` from its claims ``rows`` (with the papers' findings and GPU grids)."""
    return claims_mod.scorecard_markdown(rows, profile=profile, specs=specs, notebooks=notebooks, titles=titles,
                                         findings=sources.findings(), gpu_keys=sources.gpu_keys())  # fmt: skip


def committed_summaries(root: Path, profile: str = "quick") -> dict[str, str]:
    """``{"SCORECARD.md": text, "ERRATA.md": text}`` of ``profile`` regenerated from the committed ``claims.csv``
    under ``root`` (the figures folder) and the current specifications and findings: what ``make figures`` would
    write beside them.  A committed file that differs is stale (e.g. a finding's text edited without rerunning)."""
    from dpcore.runner.errata import errata_text

    check_choice("profile", profile, PROFILES)
    rows = claims_mod.read_claims_csv(profile_figures_dir(profile, root) / "claims.csv")
    specs = sources.specs()
    card = scorecard_text(rows, profile, specs=specs, notebooks=sources.notebooks(), titles=sources.titles())
    return {"SCORECARD.md": card, "ERRATA.md": errata_text(specs, root, profile)}


def write_claims_summary(
    out_figures: Path,
    profile: str = "quick",
    *,
    specs: Iterable[ClaimSpec] = (),
    notebooks: Iterable[NotebookClaims] = (),
    titles: dict[str, str] | None = None,
) -> list[dict]:
    """Gather every notebook's claims under ``out_figures`` into ``claims.csv`` and ``SCORECARD.md``
    (the scorecard uses the ``specs``, the ``notebooks`` and the papers' ``titles`` when given).

    Raises ``ValueError`` (before writing anything) for a status outside the vocabulary.
    """
    rows = gather(out_figures, profile)
    card = scorecard_text(rows, profile, specs=specs, notebooks=notebooks, titles=titles)
    claims_mod.write_claims_csv(rows, out_figures / "claims.csv")
    atomic_write_text(out_figures / "SCORECARD.md", card)
    return rows


def check_claims(
    fresh_dir: Path,
    committed_csv: Path,
    specs: Iterable[ClaimSpec],
    *,
    notebooks: Iterable[NotebookClaims] | None = None,
    stream: TextIO = sys.stdout,
) -> int:
    """The drift check of ``make test``: 0 when the fresh quick claims under ``fresh_dir`` and the
    committed ``committed_csv`` are consistent, have no ``differs`` row, and agree within tolerance,
    and (given ``notebooks``) every notebook, all of which ran, reported exactly the claims it owns."""
    specs = list(specs)
    problems: list[str] = []
    try:
        fresh = gather(fresh_dir, "quick")
        if notebooks is not None:
            notebooks = list(notebooks)
            every = [nb.notebook for nb in notebooks]
            problems += coverage_problems(gather_by_notebook(fresh_dir, "quick"), notebooks, ran=every)
    except ValueError as exc:  # a per-notebook CSV with other columns: reported, exit 1
        problems.append(str(exc))
        fresh = []
    if not fresh:
        problems.append(f"no *.claims.csv under {fresh_dir}: did the quick notebooks run?")
    committed: list[dict] = []
    if not committed_csv.exists():
        problems.append(f"{committed_csv} does not exist: run `make figures`")
    else:
        try:
            committed = claims_mod.read_claims_csv(committed_csv)
        except ValueError as exc:  # old columns: reported, exit 1
            problems.append(f"{exc}: run `make figures`")
    problems += [f"fresh run: {p}" for p in claim_problems(fresh, specs, profile="quick")]
    problems += [f"committed {committed_csv.name}: {p}" for p in claim_problems(committed, specs, profile="quick")]
    problems += [f"drift: {p}" for p in drift_problems(fresh, committed, specs)]
    problems += [f"findings: {p}" for p in claims_mod.finding_problems(sources.findings(), specs, fresh)]
    if notebooks is not None:
        problems += claims_mod.explanation_problems(specs, notebooks)
    for problem in problems:
        print(f"claims: {problem}", file=stream)
    try:  # the one count (dpcore.verdicts.count_by_status)
        counted = claims_mod.count_phrase(claims_mod._counts(fresh)) or "none"
    except ValueError as exc:
        counted = f"not counted ({exc})"
    verdict = "FAILED" if problems else "ok"
    print(
        f"check-claims {verdict}: {len(fresh)} fresh claims ("
        + counted
        + f") vs {len(committed)} committed in {committed_csv}; {len(problems)} problem(s)",
        file=stream,
        flush=True,
    )
    return 1 if problems else 0
