"""The layout's import rules, read from the source (ast) of every module under dpcore/.

* the library (everything outside ``dpcore.papers``) never imports a paper package;
* a paper package imports the library and never another paper package;
* no two modules import each other, directly or through a chain (package ``__init__`` re-exports aside);
* ``dpcore.accounting`` holds no module named after a paper;
* ``dpcore.explore`` (the widget helpers and the paper-independent DP-SGD explorer) is library: it imports no paper
  package (each paper's explorer is ``dpcore.papers.<paper>.explore``); only paper packages and itself import it.

And the tests mirror the package (issue 43): ``dpcore/<package>/`` is tested under ``tests/<package>/`` and
``dpcore/papers/<paper>/`` under ``tests/papers/<paper>/`` (each a package, as ``tests/accounting/`` is); a test folder
names a dpcore package; a test file at the top of ``tests/`` is for a top-level module (``dpcore/claims.py`` ->
``tests/test_claims.py``) or the whole repository, never named after a package or a paper.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "dpcore"
PAPERS = "dpcore.papers"
EXPLORE = "dpcore.explore"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every dpcore module ``path`` imports (module level and inside functions; relative imports resolved)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names)  # "from pkg import module"
    return {m for m in out if m == "dpcore" or m.startswith("dpcore.")}


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
GRAPH = {name: {m for m in _imports(path) if m in MODULES and m != name} for name, path in MODULES.items()}


def _paper_of(module: str) -> str | None:
    if module == PAPERS or not module.startswith(PAPERS + "."):
        return None
    return module.split(".")[2]


def test_the_papers_package_exists():
    expected = {"p000_proactive", "p001_isrl", "p002_modelmix", "p003_shuffling", "p004_contraction", "reference"}
    assert expected <= {_paper_of(m) for m in MODULES if _paper_of(m)}


def _is_explore(module: str) -> bool:
    return module == EXPLORE or module.startswith(EXPLORE + ".")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not _is_explore(m) and _paper_of(m) is None))
def test_only_paper_packages_import_the_explorer_widgets(module):
    bad = sorted(m for m in GRAPH[module] if _is_explore(m))
    assert not bad, f"{module} imports the explorers (a presentation layer for papers and notebooks): {bad}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _paper_of(m) is None))
def test_library_never_imports_a_paper_package(module):
    bad = sorted(m for m in GRAPH[module] if m.startswith(PAPERS + "."))
    assert not bad, f"{module} (library) imports paper code: {bad}"


#: the one allowed crossing (issue 51): a positive control runs the very pipeline code it vouches for, so the reference
#: package's control experiment imports paper 002's ScatterNet trainer and its composed accounting; nothing else
SAME_PIPELINE = {("dpcore.papers.reference.training", "dpcore.papers.p002_modelmix.training")}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _paper_of(m)))
def test_paper_packages_never_import_each_other(module):
    own = _paper_of(module)
    bad = sorted(m for m in GRAPH[module] if _paper_of(m) not in (None, own) and (module, m) not in SAME_PIPELINE)
    assert not bad, f"{module} imports another paper's module: {bad}"


def test_no_import_cycles():
    """Module-to-module cycles (edges into a package ``__init__`` are re-exports and are skipped)."""
    edges = {m: {t for t in targets if not MODULES[t].name == "__init__.py"} for m, targets in GRAPH.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [])
    assert not cycles, f"import cycles: {cycles}"


def test_accounting_has_no_paper_modules():
    words = ("proactive", "isrl", "contraction", "legacy", "shuffling", "clipping_bias")
    names = [m for m in MODULES if m.startswith("dpcore.accounting.")]
    bad = [m for m in names if any(w in m.rsplit(".", 1)[1] for w in words)]
    assert not bad, f"paper-specific modules in dpcore.accounting: {bad}"


def test_the_rules_can_fail():
    """The import parser sees function-level and relative imports (so the rules above can fail), and the explorer
    package is among the library modules the paper rule checks."""
    src = ROOT / "papers" / "p000_proactive" / "tables.py"
    assert "dpcore.papers.p000_proactive.calculator" in _imports(src)
    assert {"dpcore.explore.widgets", "dpcore.explore.dpsgd"} <= set(MODULES)
    assert "dpcore.explore.widgets" in GRAPH["dpcore.papers.p004_contraction.explore"]


def test_every_accounting_module_has_its_own_test_file():
    """Tests mirror the package: ``dpcore/accounting/<m>.py`` is tested in ``tests/accounting/test_<m>.py``."""
    tests = ROOT.parent / "tests" / "accounting"
    modules = sorted(p.stem for p in (ROOT / "accounting").glob("*.py") if p.name != "__init__.py")
    assert modules, "no accounting modules found: the rule would pass vacuously"
    missing = [m for m in modules if not (tests / f"test_{m}.py").is_file()]
    assert not missing, f"accounting modules without tests/accounting/test_<module>.py: {missing}"


TESTS = ROOT.parent / "tests"
#: test folders that mirror no package: the browser tests (the site, the notebooks and the explorers in Chromium)
UNMIRRORED = {"browser"}
#: flat files named after a package that another pending change still edits: they move when it lands (each entry must
#: still be a flat file; drop it here once moved)
FLAT_FOR_NOW: set[str] = set()


def _packages(folder: Path) -> list[str]:
    return sorted(p.parent.name for p in folder.glob("*/__init__.py"))


def _misplaced(flat: list[str]) -> list[str]:
    """The flat test files (names) that belong in a package's folder: ``test_<package>[_...].py`` for a dpcore
    package or paper package, and any name holding a word of a paper ``pNNN_short`` (``pNNN``, ``NNN``, ``short``:
    ``test_isrl_claims.py``, ``test_p001_rates.py``, ``test_experiments_003.py``; they name nothing else)."""
    papers = _packages(ROOT / "papers")
    first = set(_packages(ROOT)) | set(papers)
    anywhere = {w for p in papers if (m := re.fullmatch(r"p(\d{3})_(\w+)", p)) for w in (f"p{m[1]}", m[1], m[2])}
    bad = []
    for name in flat:
        words = Path(name).stem.split("_")[1:]
        if words and (words[0] in first or anywhere & set(words)):
            bad.append(name)
    return bad


def test_every_package_has_its_test_folder():
    """``dpcore/<package>/`` -> ``tests/<package>/``, ``dpcore/papers/<paper>/`` -> ``tests/papers/<paper>/``: each a
    package (``__init__.py``: ``tests/papers/*/test_claims.py`` share a name) holding at least one test file."""
    wanted = [Path(p) for p in _packages(ROOT)] + [Path("papers") / p for p in _packages(ROOT / "papers")]
    assert len(wanted) > 8, f"too few dpcore packages found ({wanted}): the rule would pass vacuously"
    missing = [str(w) for w in wanted if not any((TESTS / w).rglob("test_*.py"))]
    assert not missing, f"dpcore packages without tests/<package>/test_*.py: {missing}"
    not_packages = [str(w) for w in wanted if not (TESTS / w / "__init__.py").is_file()]
    assert not not_packages, f"test folders without __init__.py (same-named test files collide): {not_packages}"


def test_every_test_folder_names_a_package():
    """No test folder outside the mirror (``tests/misc/``, a misspelt ``tests/papers/p003_shuffle/``)."""
    folders = {p.parent.relative_to(TESTS) for p in TESTS.rglob("test_*.py")} - {Path(".")}
    stray = sorted(str(f) for f in folders if f.parts[0] not in UNMIRRORED and not (ROOT / f / "__init__.py").is_file())
    assert not stray, f"test folders that mirror no dpcore package: {stray}"


def test_no_test_file_for_a_package_is_left_flat():
    flat = sorted(p.name for p in TESTS.glob("test_*.py"))
    bad = [n for n in _misplaced(flat) if n not in FLAT_FOR_NOW]
    assert not bad, f"flat test files that belong under tests/<package>/ or tests/papers/<paper>/: {bad}"
    moved = sorted(n for n in FLAT_FOR_NOW if n not in flat)
    assert not moved, f"{moved} no longer flat: drop them from FLAT_FOR_NOW in tests/test_layout.py"


def test_the_mirror_rules_can_fail():
    """The flat-file rule catches a paper's number, name or short name anywhere in the name, and a library
    package's name first; it lets top-level modules' and repository tests be."""
    planted = [
        "test_p001_rates.py",
        "test_isrl_claims.py",
        "test_experiments_003.py",
        "test_data_fetch.py",
        "test_audit_dirac.py",
        "test_runner.py",
        "test_reference_claims.py",
        "test_modelmix_toys.py",
    ]
    assert _misplaced(planted) == planted
    fine = [
        "test_claims.py",
        "test_cli.py",
        "test_issue41_registered.py",
        "test_public_api_fuzz.py",
        "test_fixed_sampling_sigma.py",
        "test_docs_build.py",
        "test_memo.py",
    ]
    assert _misplaced(fine) == []
