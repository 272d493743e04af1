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
  interactive widgets are dropped (they need a live kernel: ``make explore``).  A checkout without
  ``notebooks/explore/`` gets a page saying so.

Sphinx runs with ``-W --keep-going``: any warning (a docstring that does not parse, a broken cross-reference
to a page, a missing image) fails the build.
"""

from __future__ import annotations

import argparse
import csv
import html
import math
import os
import shutil
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FIGURES = ROOT / "figures"
NOTEBOOKS = ROOT / "notebooks"
STATUSES = ("reproduced", "differs-explained", "differs", "not-run")
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


# ------------------------------------------------------------------------------------------------
# claims -> counts and verdicts
# ------------------------------------------------------------------------------------------------
def read_rows(path: Path) -> list[dict]:
    """The rows of a ``claims.csv`` (empty when the file does not exist)."""
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def counts(rows: Iterable[Mapping]) -> dict[str, int]:
    """Rows per status; consistency checks apart (``consistency``, ``consistency-ok``)."""
    out = dict.fromkeys((*STATUSES, "consistency", "consistency-ok"), 0)
    for row in rows:
        if row.get("source") == "consistency":
            out["consistency"] += 1
            out["consistency-ok"] += row["status"] == "reproduced"
        elif row["status"] in STATUSES:
            out[row["status"]] += 1
        else:
            raise ValueError(f"unknown status {row['status']!r} in {row.get('paper')}/{row.get('key')}")
    return out


def count_phrase(c: Mapping[str, int], profile: str) -> str:
    """E.g. "80 of 139 reproduced, 40 match a pinned erratum, 19 not run at the quick profile"."""
    from dpcore.claims import count_phrase as phrase

    return phrase(c, where=f"at the {profile} profile", differs="**{n} differ** (open)")


def verdict(quick: Mapping[str, int], paper: Mapping[str, int] | None) -> str:
    """One line per paper, from the counts of both profiles."""
    where = "at the quick profile" if not paper or not sum(paper[s] for s in STATUSES) else "at either profile"
    open_ = quick["differs"] + (paper["differs"] if paper else 0)
    if open_:
        head = f"{open_} number(s) differ from the paper with no erratum (open results)"
    elif quick["differs-explained"] or (paper and paper["differs-explained"]):
        head = f"every number run {where} is reproduced or matches a pinned erratum"
    else:
        head = f"every number run {where} is reproduced"
    return head


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


def html_table(header: list[str], rows: list[list[str]], *, classes: str = "table dpcore-table") -> str:
    """A raw HTML table inside a MyST ``{raw} html`` block (cells are escaped here)."""
    lines = ["```{raw} html", f'<div class="dpcore-scroll"><table class="{classes}">', "<thead><tr>"]
    lines += [f"<th>{esc(h)}</th>" for h in header]
    lines.append("</tr></thead><tbody>")
    for row in rows:
        lines.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    lines += ["</tbody></table></div>", "```", ""]
    return "\n".join(lines)


def status_cell(status: str) -> str:
    return f'<span class="dpcore-status dpcore-{esc(status)}">{esc(status)}</span>'


# ------------------------------------------------------------------------------------------------
# staging
# ------------------------------------------------------------------------------------------------
class Site:
    """What the pages are made of: claims rows of both profiles, specs, notebooks, titles."""

    def __init__(self, src: Path, profile: str) -> None:
        from dpcore.papers import all_specs, notebook_claims, titles

        self.src = src
        self.profile = profile
        self.rows = read_rows(FIGURES / "claims.csv")
        self.paper_rows = read_rows(FIGURES / "paper" / "claims.csv")
        if not self.rows:
            raise SystemExit(f"{FIGURES / 'claims.csv'} is missing: run `make figures` first")
        self.specs = all_specs()
        self.notebooks = notebook_claims()
        self.titles = titles()

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


def executed_or_source(key: str, profile: str) -> tuple[Path, bool]:
    """The executed copy of the last ``make figures`` when it exists, else the committed notebook."""
    executed = ROOT / "build" / profile / f"{key}.ipynb"
    source = NOTEBOOKS / f"{key}.ipynb"
    if executed.exists() and executed.stat().st_mtime >= source.stat().st_mtime:
        return executed, True
    return source, False


def stage_notebook(site: Site, key: str) -> bool:
    """Copy one paper notebook into ``<src>/notebooks/<key>.ipynb``; True when it carries outputs."""
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
    _ensure_title(nb, key)
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(note))
    _drop_widgets(nb)
    out = site.src / "notebooks" / f"{key}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return executed


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
    """Remove interactive widget views (they need a live kernel); images, HTML and text outputs stay."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_MIME in data:
                continue
            kept.append(output)
        cell["outputs"] = kept
    nb.metadata.pop("widgets", None)


def stage_figures(site: Site) -> None:
    """Copy the committed figure PNGs and CSVs (no PDFs, no Markdown) into ``<src>/figures``."""
    for path in sorted(FIGURES.rglob("*")):
        if path.is_file() and path.suffix in (".png", ".csv") and not path.name.startswith("."):
            target = site.src / "figures" / path.relative_to(FIGURES)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def figure_blocks(site: Site, folders: list[str], sub: str = "") -> list[str]:
    """MyST figure directives for every PNG of ``figures/<sub>/<folder>/`` with links to its CSV."""
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
            lines += [f"```{{figure}} {rel}", f":alt: {png.stem}", ":width: 100%", "", caption, "```", ""]
    return lines


def paper_page(site: Site, paper: str, executed: Mapping[str, bool]) -> str:
    quick_rows = site.rows_of(paper)
    paper_rows = site.rows_of(paper, profile="paper")
    qc, pc = counts(quick_rows), counts(paper_rows) if paper_rows else None
    heading = f"Paper {paper}: {SHORT[paper]}" if paper != "ref" else SHORT[paper]
    lines = [f"# {heading}", ""]
    if paper != "ref":
        lines += [f"*{site.title(paper)}*", ""]
    lines += [f"**Verdict:** {verdict(qc, pc)}.", "", f"- quick profile: {count_phrase(qc, 'quick')}."]
    if pc:
        lines.append(f"- paper profile (`results/paper/`, `figures/paper/`): {count_phrase(pc, 'paper')}.")
    lines += [
        "",
        "Generated from `figures/claims.csv`"
        + (", `figures/paper/claims.csv`" if pc else "")
        + " and the claim specifications in `dpcore/papers/*/claims.py` by `docs/build_site.py`.",
        "",
        "## Notebooks",
        "",
    ]
    keys = site.notebook_keys(paper)
    for key in keys:
        topics = [nb.topic for nb in site.notebooks if nb.notebook == key and nb.paper == paper]
        state = "executed" if executed.get(key) else "source"
        lines.append(f"- [`{key}`](../notebooks/{key}.ipynb) ({state}): {'; '.join(topics)}")
    lines += ["", "```{toctree}", ":hidden:", ""] + [f"../notebooks/{k}" for k in keys] + ["```", ""]

    lines += ["## Scorecard", ""]
    topic_rows = []
    for nb in site.notebooks:
        if nb.paper != paper:
            continue
        mine = [r for r in quick_rows if r["key"] in set(nb.keys)]
        c = counts(mine)
        topic_rows.append([esc(nb.topic), f"<code>{esc(nb.notebook)}</code>"] + [str(c[s]) for s in STATUSES])
    lines.append(html_table(["topic", "notebook", *STATUSES], topic_rows))
    lines += [
        "Every claim at the quick profile (`figures/claims.csv`; the full note of each row is in the CSV):",
        "",
    ]
    lines.append(_claims_table(quick_rows))
    if paper_rows:
        lines += ["### Paper profile", "", "Rows of `figures/paper/claims.csv` (results of `results/paper/`):", ""]
        lines.append(_claims_table(paper_rows))

    lines += ["## Errata", ""]
    errata = [s for s in site.specs if s.paper == paper and s.erratum is not None]
    if errata:
        by_key = {r["key"]: r for r in quick_rows}
        table = []
        for spec in errata:
            ours = by_key.get(spec.key, {})
            table.append(
                [
                    f"<code>{esc(spec.key)}</code>",
                    esc(spec.artifact),
                    esc(short(str(spec.value))) + f"<br><small>{esc(spec.location)}</small>",
                    esc(short(str(spec.erratum.expected))) + f" ({esc(spec.erratum.tolerance)})",
                    esc(spec.erratum.evidence),
                    esc(short(ours.get("our_value", ""))) + "<br>" + status_cell(ours.get("status", "not-run")),
                ]
            )
        lines += [
            f"{len(errata)} numbers of this paper that we believe are wrong, with the value we expect instead "
            "(from the claim specifications; `figures/ERRATA.md` is the same list for all papers):",
            "",
            html_table(["key", "artifact", "printed (where)", "corrected", "evidence", "ours (quick)"], table),
        ]
    else:
        lines += ["No erratum is pinned for this paper.", ""]

    folders = sorted({k.split("/")[0] for k in keys})
    lines += ["## Figures", "", "The committed figures of the quick profile (`figures/`)."]
    lines += ["Figures of training at reduced scale say so in their footer (**REDUCED SCALE**).", ""]
    lines += figure_blocks(site, folders)
    paper_figs = figure_blocks(site, folders, "paper")
    if paper_figs:
        lines += ["## Figures at the paper profile", "", "Rendered from `results/paper/` (`figures/paper/`).", ""]
        lines += paper_figs
    return "\n".join(lines) + "\n"


def _claims_table(rows: list[dict]) -> str:
    table = [
        [
            f"<code>{esc(r['key'])}</code>",
            esc(r["artifact"]),
            esc(r["quantity"]),
            esc(short(r["paper_value"])),
            esc(short(r["our_value"])) if r["our_value"] else "—",
            esc(r["tolerance"]),
            status_cell(r["status"]),
        ]
        for r in rows
    ]
    return html_table(["key", "artifact", "quantity", "paper", "ours", "tolerance", "status"], table)


#: README sections the site's reference page includes, in this order (the README is their one source).
README_REFERENCE = ("Runner options", "Profiles", "Where results land", "Data", "Beyond one machine", "Command line",
                    "Library", "Adding a notebook")  # fmt: skip


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
        lines.append(
            f"| {name} | {verdict(qc, pc)} | {count_phrase(qc, 'quick')} | "
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
    from dpcore.accounting import RunRecord, dpsgd_epsilon, epsilon_for_record

    sigma, n, batch, epochs, delta = 1.1, 60_000, 256, 10, 1e-5
    q = batch / n
    steps = epochs * (n // batch)
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
    for convention, factor in (("standard", 1.0), ("replace_one", 2.0)):
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
        std = "σC" if factor == 1 else '2σC (`noise_convention="replace_one"`)'
        add("shuffled (one permutation per epoch)", "replace-one", std, "A_1 (`a1`)", epsilon_for_record(record, delta))
    return "\n".join(lines) + "\n"


def paper_mode_fragment(site: Site) -> str:
    """Examples of 'the paper's ε is not the run's ε', read from the claims (printed vs corrected)."""
    wanted = [s for s in site.specs if s.paper == "000" and s.key.endswith(".epsilon_eq6") and s.erratum is not None]
    by_key = {r["key"]: r for r in site.rows_of("000")}
    lines = [
        "| row (paper 000) | ε the table prints | ε that eq. (6) guarantees at its σ | status |",
        "|---|---|---|---|",
    ]
    for spec in wanted[:4]:
        row = by_key.get(spec.key, {})
        lines.append(
            f"| `{spec.key}` | {spec.value} | {float(spec.erratum.expected):.4g} | {row.get('status', 'not-run')} |"
        )
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------
# explorers
# ------------------------------------------------------------------------------------------------
def stage_explorers(site: Site) -> list[str]:
    """Stage ``notebooks/explore/*.ipynb`` in their static default state; the staged names."""
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
        nb.cells.insert(
            1,
            nbformat.v4.new_markdown_cell(
                "*Static default state: the widgets need a live kernel. Run `make explore` and open this explorer "
                "to move the sliders.*"
            ),
        )
        _drop_widgets(nb)
        nbformat.write(nb, out)
        names.append(path.stem)
    return names


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
def stage(src: Path, profile: str) -> dict[str, float]:
    """Write every source page into ``src`` (emptied first); the seconds each part took."""
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
    site = Site(src, profile)
    stage_figures(site)
    gen = src / "_generated"
    gen.mkdir()
    executed: dict[str, bool] = {}
    for paper in site.papers():
        for key in site.notebook_keys(paper):
            executed[key] = stage_notebook(site, key)
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
    (gen / "explorers.md").write_text(explorers_fragment(stage_explorers(site)), encoding="utf-8")
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


def build(out: Path, src: Path, profile: str = "quick", *, jobs: str = "1") -> int:
    from sphinx.cmd.build import build_main

    timings = stage(src, profile)
    t0 = time.perf_counter()
    doctrees = src.parent / (src.name + "-doctrees")
    rc = build_main(["-W", "--keep-going", "-q", "-j", jobs, "-b", "html", "-d", str(doctrees), str(src), str(out)])
    timings["sphinx"] = time.perf_counter() - t0
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
    args = parser.parse_args(argv)
    if args.readme:
        print("README.md verdicts: " + ("updated" if update_readme() else "unchanged"))
        return 0
    return build(args.out.resolve(), args.src.resolve(), args.profile, jobs=args.jobs)


if __name__ == "__main__":
    sys.exit(main())
