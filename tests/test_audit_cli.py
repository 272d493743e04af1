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
