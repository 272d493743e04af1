"""The command line: python -m dpcore epsilon | calibrate."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpcore.accounting.dpsgd import dpsgd_epsilon
from dpcore.cli import COMMANDS, Command, build_parser, main, register

ROOT = Path(__file__).resolve().parents[1]


def test_epsilon_prints_every_method_labelled(capsys):
    argv = ["epsilon", "--noise-multiplier", "1.1", "--sample-rate", "0.0043", "--epochs", "60", "--delta", "1e-5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "T = 13954" in out  # ⌈60 / 0.0043⌉
    for method in ("pld", "rdp", "rdp-mironov"):
        line = next(x for x in out.splitlines() if x.strip().startswith(method + " "))
        assert "(rigorous)" in line
    gdp = next(x for x in out.splitlines() if x.strip().startswith("gdp"))
    assert "(approximate)" in gdp
    rdp_line = next(x for x in out.splitlines() if x.strip().startswith("rdp "))
    value = float(rdp_line.split("ε =")[1].split()[0])
    expected = dpsgd_epsilon(1.1, sample_rate=0.0043, steps=13954, delta=1e-5, method="rdp")
    assert value == pytest.approx(expected, rel=1e-5)


def test_fixed_sampling_and_single_method(capsys):
    argv = ["epsilon", "--noise-multiplier", "1.0", "--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5",
            "--sampling", "fixed", "--dataset-size", "1000", "--method", "rdp"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "sampling = fixed" in out and "rdp " in out and "pld" not in out


def test_calibrate_prints_a_feasible_sigma(capsys):
    argv = ["calibrate", "--epsilon", "3", "--sample-rate", "0.01", "--steps", "1000", "--delta", "1e-5",
            "--method", "rdp"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    sigma = float(out.split("σ =")[1].split()[0])
    assert dpsgd_epsilon(sigma, sample_rate=0.01, steps=1000, delta=1e-5, method="rdp") <= 3.0 * (1 + 1e-5)


@pytest.mark.parametrize(
    "argv",
    [
        ["epsilon", "--noise-multiplier", "-1", "--sample-rate", "0.01", "--steps", "10", "--delta", "1e-5"],
        ["epsilon", "--noise-multiplier", "nan", "--sample-rate", "0.01", "--steps", "10", "--delta", "1e-5"],
        ["epsilon", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10", "--epochs", "1",
         "--delta", "1e-5"],
        ["epsilon", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10", "--delta", "1e-5",
         "--sampling", "fixed"],
        ["calibrate", "--epsilon", "0", "--sample-rate", "0.01", "--steps", "10", "--delta", "1e-5"],
        ["nonsense"],
        [],
    ],
)  # fmt: skip
def test_bad_input_exits_with_a_message(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert capsys.readouterr().err.strip()


@pytest.mark.parametrize("command", ["epsilon", "calibrate"])
def test_help_documents_every_option(command):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    for action in sub._actions:
        if action.option_strings and action.dest != "help":
            assert action.help and len(action.help) > 10, action.option_strings


def test_more_commands_can_be_registered(capsys):
    def add(p):
        p.add_argument("--name", required=True, help="who to greet (a test command)")

    def run(args):
        print(f"hello {args.name}")
        return 0

    register(Command("hello-test", "a test command", add, run))
    try:
        assert main(["hello-test", "--name", "dp"]) == 0
        assert "hello dp" in capsys.readouterr().out
        with pytest.raises(ValueError, match="already registered"):
            register(Command("hello-test", "again", add, run))
    finally:
        COMMANDS.pop("hello-test")


def test_python_dash_m_dpcore():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "dpcore", "epsilon", "--noise-multiplier", "2", "--sample-rate", "0.01",
            "--steps", "100", "--delta", "1e-5", "--method", "gdp"]  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, check=True).stdout
    assert "(approximate)" in out
    help_text = subprocess.run([sys.executable, "-m", "dpcore", "--help"], capture_output=True, text=True, env=env,
                               cwd=ROOT, check=True).stdout  # fmt: skip
    assert "epsilon" in help_text and "calibrate" in help_text
