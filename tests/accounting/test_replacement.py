"""dpcore.accounting.replacement: the with-replacement accountant lives in the library; paper 001 re-exports it."""

import ast
from pathlib import Path

import pytest

from dpcore.accounting import replacement
from dpcore.papers.p001_isrl import accounting as isrl

LIBRARY = Path(replacement.__file__).parent


def test_paper_001_reexports_the_library_functions():
    assert isrl.mbsgd_epsilon is replacement.with_replacement_epsilon
    assert isrl.with_replacement_pld is replacement.with_replacement_pld
    assert isrl.batch_mean_epsilon_upper is replacement.batch_mean_epsilon_upper


def test_the_accounting_library_imports_no_paper_package():
    for path in LIBRARY.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("dpcore.papers"), path.name
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("dpcore.papers") for a in node.names), path.name


def test_epsilon_grows_with_rounds_and_refuses_out_of_range_inputs():
    kw = dict(noise_std=1.0, lipschitz=1.0, batch_size=4, n=50, delta=1e-5)
    assert replacement.with_replacement_epsilon(rounds=5, **kw) < replacement.with_replacement_epsilon(rounds=20, **kw)
    with pytest.raises(ValueError, match="rounds"):
        replacement.with_replacement_epsilon(rounds=replacement.MAX_ROUNDS + 1, **kw)
    with pytest.raises(ValueError, match="batch_size"):
        replacement.check_sizes(1, 10, 11)
