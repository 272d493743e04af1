"""Re-derive the statuses of committed claim rows from the current specifications, without rerunning notebooks.

For a change of the status *vocabulary* or of an explanation's *kind* (issue 41: ``differs-explained`` became
``erratum`` / ``not-reproduced`` / ``inconclusive``): each row's status is recomputed by
:func:`dpcore.claims.compute_status` from the row's stored value and the current :class:`~dpcore.claims.ClaimSpec`,
exactly as the notebook would compute it, and the note's leading "<kind>: ours matches ..." clause is renamed to
the new kind.  The columns that describe the claim and only copy its specification (``artifact``, ``quantity``,
``source``, ``location``, ``tolerance``: :data:`SPEC_COLUMNS`) are refreshed from it too (e.g. a claim moved to
``source = audit``, issue 41).  It never changes a value: a row whose value no longer matches its specification becomes
``differs`` (and ``make figures`` then fails until the notebook is rerun).  Rows the notebook found
``inconclusive`` from its data (:func:`dpcore.claims.is_undecided`), and ``not-run`` rows, keep their
status.  Use it where rerunning is expensive
(paper 001's paper profile trains for about 18 CPU-minutes); the notebook's next run rewrites the same rows.

    python -m dpcore.restatus --profile paper --nb '001_isrl_dp/*'
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import sys
from pathlib import Path

from dpcore import claims as claims_mod
from dpcore.paths import PROFILES, figures_dir, profile_figures_dir
from dpcore.validation import check_choice

__all__ = ["SPEC_COLUMNS", "restatus_rows", "restatus", "main"]

#: the claims.csv columns copied from the specification as they are (never a value: ``paper_value`` is checked
#: against the spec by the claims check, and a changed printed value needs the notebook rerun)
SPEC_COLUMNS = ("artifact", "quantity", "source", "location", "tolerance")

_LEAD = re.compile(
    r"^(erratum|differs-explained|not-reproduced|inconclusive): ours (matches|does NOT match) the expected "
)


def restatus_rows(rows: list[dict], specs: dict[tuple[str, str], claims_mod.ClaimSpec]) -> tuple[list[dict], int]:
    """``rows`` (claims.csv rows, text values) with statuses recomputed; returns them and how many changed.

    Raises ``ValueError`` for a row whose claim no longer exists (rerun its notebook instead)."""
    out, changed = [], 0
    for row in rows:
        ident = (row["paper"], row["key"])
        if ident not in specs:
            raise ValueError(f"rows: {row['paper']}/{row['key']} is no longer a claim: rerun its notebook")
        spec = specs[ident]
        new = dict(row)
        new.update({column: str(getattr(spec, column)) for column in SPEC_COLUMNS})
        if row["status"] != "not-run" and not claims_mod.is_undecided(row) and spec.rule is None:
            ours = claims_mod.parse_value(row["our_value"], like=spec.value)
            new["status"] = claims_mod.compute_status(spec, ours)
            why = spec.explanation
            if why is not None:
                new["note"] = _LEAD.sub(rf"{why.status}: ours \2 the expected ", row["note"])
        changed += new != row
        out.append(new)
    return out, changed


def restatus(profile: str, pattern: str = "*", root: Path | None = None) -> dict[str, int]:
    """Rewrite the ``*.claims.csv`` of ``profile`` whose notebook key matches ``pattern``; returns
    ``{notebook key: rows changed}``.  The aggregated claims.csv, SCORECARD.md and ERRATA.md are rewritten after."""
    from dpcore.papers import all_specs, notebook_claims, titles
    from dpcore.runner import write_claims_summary, write_errata

    check_choice("profile", profile, PROFILES)
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"pattern must be a non-empty glob over notebook keys, got {pattern!r}")
    out = profile_figures_dir(profile, root)
    specs = {(s.paper, s.key): s for s in all_specs()}
    others = [profile_figures_dir(p, root).resolve() for p in PROFILES if p not in (profile, "quick")]
    done: dict[str, int] = {}
    for path in sorted(out.rglob("*.claims.csv")):
        if any(path.resolve().is_relative_to(o) for o in others):
            continue
        key = path.relative_to(out).as_posix()[: -len(".claims.csv")]
        if not fnmatch.fnmatchcase(key, pattern):
            continue
        rows, changed = restatus_rows(claims_mod.read_claims_csv(path), specs)
        claims_mod.write_claims_csv(rows, path)
        done[key] = changed
    if not done:
        raise ValueError(f"pattern {pattern!r} matches no notebook's claims under {out}")
    write_claims_summary(out, profile, specs=list(specs.values()), notebooks=notebook_claims(), titles=titles())
    write_errata(list(specs.values()), figures_dir() if root is None else root, profile)
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpcore.restatus", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=PROFILES, required=True)
    parser.add_argument("--nb", default="*", help="glob over notebook keys, e.g. '001_isrl_dp/*'")
    args = parser.parse_args(argv)
    for key, changed in restatus(args.profile, args.nb).items():
        print(f"{key}: {changed} row(s) re-derived", file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
