"""``python -m dpcore audit``: prints the bound next to ε, exits 1 when the audit flags the run."""

import pytest

from dpcore.cli import main


def test_audit_command_correct_run_exits_zero(capsys):
    code = main(["audit", "--noise-multiplier", "2", "--sample-rate", "0.5", "--steps", "4", "--runs", "2000",
                 "--delta", "1e-3"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "ε lower bound" in out and "accountant ε" in out and "all iterates observed" in out


def test_audit_command_flags_a_broken_run(capsys):
    code = main(["audit", "--noise-multiplier", "2", "--sample-rate", "0.5", "--steps", "8", "--runs", "2000",
                 "--delta", "1e-3", "--broken", "noise-seed-reused"])  # fmt: skip
    assert code == 1 and "FLAGGED" in capsys.readouterr().out


def test_audit_command_rejects_bad_input():
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--noise-multiplier", "2", "--sample-rate", "0.3", "--steps", "4", "--delta", "1e-3",
              "--block", "999"])  # fmt: skip
    assert exc.value.code == 2


def test_audit_command_shuffled_prints_both_epsilons(capsys):
    code = main(["audit", "--shuffled", "mixed", "--group-size", "2", "--noise-multiplier", "1", "--runs", "40",
                 "--delta", "1e-3"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "A_1 (batches known)" in out and "A_0 (batches hidden)" in out and "heuristic ε" in out
    assert out.count("accountant ε") == 2 and "replace-one" in out


@pytest.mark.parametrize(
    "argv",
    [["--noise-multiplier", "2", "--delta", "1e-3"],  # Dirac audit without --sample-rate / --steps
     ["--shuffled", "mixed", "--noise-multiplier", "1", "--delta", "1e-3"],  # mixed without --group-size
     ["--shuffled", "batch", "--noise-multiplier", "1", "--delta", "1e-3", "--one-run", "10"]],
)  # fmt: skip
def test_audit_command_rejects_incomplete_input(argv):
    with pytest.raises(SystemExit) as exc:
        main(["audit", *argv])
    assert exc.value.code == 2
