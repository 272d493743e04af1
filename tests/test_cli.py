"""The command line: python -m dpcore epsilon | calibrate."""

from __future__ import annotations

import inspect
import math
import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from dpcore.accounting.dpsgd import dpsgd_epsilon, dpsgd_noise_multiplier
from dpcore.accounting.events import steps_for_epochs
from dpcore.cli import COMMANDS, Command, build_parser, format_up, main, register
from dpcore.training import TrainConfig, Trainer

ROOT = Path(__file__).resolve().parents[1]


def test_epsilon_prints_every_method_labelled(capsys):
    argv = ["epsilon", "--noise-multiplier", "1.1", "--sample-rate", "0.0043", "--epochs", "60", "--delta", "1e-5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "T = 13980" in out  # as the trainer counts: 60 epochs × round(1 / 0.0043) = 60 × 233 (was ⌈60/q⌉ = 13954)
    for method in ("pld", "rdp", "rdp-mironov"):
        line = next(x for x in out.splitlines() if x.strip().startswith(method + " "))
        assert "(rigorous)" in line
    gdp = next(x for x in out.splitlines() if x.strip().startswith("gdp"))
    assert "(approximate)" in gdp
    rdp_line = next(x for x in out.splitlines() if x.strip().startswith("rdp "))
    value = float(rdp_line.split("ε =")[1].split()[0])
    expected = dpsgd_epsilon(1.1, sample_rate=0.0043, steps=13980, delta=1e-5, method="rdp")
    assert expected <= value <= expected * (1 + 1e-5)  # printed rounded up


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


RUN = ["--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5"]


@pytest.mark.parametrize(
    "argv,flag",
    [
        (["epsilon", "--noise-multiplier", "1e308", *RUN], "--noise-multiplier"),
        (["epsilon", "--noise-multiplier", "1e-308", *RUN], "--noise-multiplier"),
        (["epsilon", "--noise-multiplier", "inf", *RUN], "--noise-multiplier"),
        (["epsilon", "--noise-multiplier", "1", "--sample-rate", "5e-324", "--epochs", "2", "--delta", "1e-5"],
         "--sample-rate"),
        (["epsilon", "--noise-multiplier", "1", "--sample-rate", "0.5", "--epochs", "1e308", "--delta", "1e-5"],
         "--epochs"),
        (["calibrate", "--epsilon", "1", *RUN, "--rtol", "1e-308"], "--rtol"),
        (["calibrate", "--epsilon", "1", *RUN, "--method", "rdp", "--rtol", "1e-308"], "--rtol"),
        (["epsilon", "--noise-multiplier", "1", "--batch-size", "20", "--steps", "10", "--delta", "1e-5"],
         "--dataset-size"),
        (["epsilon", "--noise-multiplier", "1", "--batch-size", "20", "--dataset-size", "1000", "--sample-rate",
          "0.03", "--steps", "10", "--delta", "1e-5"], "--sample-rate"),
        (["epsilon", "--noise-multiplier", "1", "--batch-size", "2000", "--dataset-size", "1000", "--steps", "10",
          "--delta", "1e-5"], "--batch-size"),
        (["epsilon", "--noise-multiplier", "1", *RUN, "--sampling", "shuffle"], "--dataset-size"),
        (["epsilon", "--noise-multiplier", "1", *RUN, "--sampling", "fixed", "--dataset-size", "1000", "--method",
          "pld"], "--method"),
        (["epsilon", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "0", "--delta", "1e-5"],
         "--steps"),
    ],
)  # fmt: skip
@pytest.mark.timeout(120)  # a hang guard (issue 54: no wall-clock limit in a test)
def test_bad_input_names_the_flag_without_a_traceback(argv, flag, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and f"argument {flag}" in err
    assert "Traceback" not in err and "array(" not in err


def test_extreme_but_valid_inputs_are_answered(capsys):
    # q = 1e-300: every method answers (RDP's log-sum rounded to -1e-26 and was refused with an array dump)
    assert main(["epsilon", "--noise-multiplier", "1", "--sample-rate", "1e-300", "--steps", "100",
                 "--delta", "1e-5"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert out.count("ε =") == 4
    # 1e-10 epochs at q = 0.5 is one step (as the trainer runs it), not T = 0 with ε = 0
    assert main(["epsilon", "--noise-multiplier", "1", "--sample-rate", "0.5", "--epochs", "1e-10",
                 "--delta", "1e-5", "--method", "rdp"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "T = 1 " in out and float(out.split("ε =")[1].split()[0]) > 1


def test_batch_and_dataset_size_give_the_rate(capsys):
    argv = ["epsilon", "--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size", "60000",
            "--steps", "100", "--delta", "1e-5", "--method", "rdp"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "q = 256/60000 = 0.00426667" in out
    value = float(out.split("ε =")[1].split()[0])
    assert value == pytest.approx(dpsgd_epsilon(1.1, sample_rate=256 / 60000, steps=100, delta=1e-5, method="rdp"),
                                  rel=1e-5)  # fmt: skip


@pytest.mark.parametrize("sampling", ["poisson", "fixed", "shuffle"])
def test_epochs_count_steps_as_the_trainer(sampling, capsys):
    # 20 epochs of 512 / 50,000: the trainer runs 1960 steps (1940 shuffled); ⌈E/q⌉ gave 1954
    n, b, epochs = 50_000, 512, 20
    cfg = TrainConfig(sampling=sampling, batch_size=b, epochs=epochs, clip_norm=1.0, noise_multiplier=1.0,
                      lr=0.1, device="cpu")  # fmt: skip
    trainer = Trainer(nn.Linear(1, 2), (torch.zeros(n, 1), torch.zeros(n, dtype=torch.long)), cfg)
    assert steps_for_epochs(epochs, sampling=sampling, dataset_size=n, batch_size=b) == trainer.total_steps
    assert trainer.total_steps == (1940 if sampling == "shuffle" else 1960)
    method = "a1" if sampling == "shuffle" else "gdp"
    argv = ["epsilon", "--noise-multiplier", "1", "--batch-size", str(b), "--dataset-size", str(n), "--epochs",
            str(epochs), "--delta", "1e-5", "--sampling", sampling, "--method", method]  # fmt: skip
    assert main(argv) == 0
    assert f"T = {trainer.total_steps} " in capsys.readouterr().out


@pytest.mark.parametrize("epochs,b,n", [(0.3, 7, 100), (2.5, 3, 10), (1e-9, 1, 1000), (3, 10, 10)])
def test_steps_for_epochs_is_the_trainer_rule(epochs, b, n):
    for sampling in ("poisson", "fixed", "shuffle"):
        cfg = TrainConfig(sampling=sampling, batch_size=b, epochs=epochs, clip_norm=1.0, noise_multiplier=1.0,
                          lr=0.1, device="cpu")  # fmt: skip
        trainer = Trainer(nn.Linear(1, 2), (torch.zeros(n, 1), torch.zeros(n, dtype=torch.long)), cfg)
        assert steps_for_epochs(epochs, sampling=sampling, dataset_size=n, batch_size=b) == trainer.total_steps


def test_shuffle_says_it_uses_the_a1_analysis(capsys):
    argv = ["epsilon", "--noise-multiplier", "1", "--batch-size", "512", "--dataset-size", "50000", "--epochs", "20",
            "--delta", "1e-5", "--sampling", "shuffle"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "note: sampling='shuffle' is accounted by van Dijk et al.'s A_1 analysis" in out
    assert "a1" in out and "(rigorous, against A_1)" in out
    assert float(out.split("ε =")[1].split()[0]) == pytest.approx(77.33, abs=0.01)


def test_printed_values_are_rounded_up(capsys):
    assert format_up(3.576111) == "3.57612"  # rounding to nearest printed 3.57611, below the bound
    assert format_up(2.0) == "2" and format_up(999999.5) == "1e+6" and format_up(math.inf) == "inf"
    argv = ["calibrate", "--epsilon", "3", "--sample-rate", "0.01", "--steps", "1000", "--delta", "1e-5",
            "--method", "gdp"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    shown = float(out.split("σ =")[1].split()[0])
    calibrated = dpsgd_noise_multiplier(3, sample_rate=0.01, steps=1000, delta=1e-5, method="gdp")
    assert calibrated <= shown <= calibrated * (1 + 1e-5)
    assert float(out.split("ε at σ =")[1].split(",")[0]) >= dpsgd_epsilon(
        shown, sample_rate=0.01, steps=1000, delta=1e-5, method="gdp"
    )


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0, max_value=1e300, allow_nan=False, allow_subnormal=True), st.integers(1, 17))
def test_format_up_never_prints_below_the_value(value, digits):
    text = format_up(value, digits)
    assert Decimal(text) >= Decimal(value)
    assert len(Decimal(text).normalize().as_tuple().digits) <= max(digits, 1)
    if value > 0:
        assert Decimal(text) <= Decimal(value) * (1 + Decimal(10) ** (1 - digits))


def test_help_imports_nothing_heavy():
    code = ("import sys\nfrom dpcore.cli import main\nfor argv in (['--help'], ['epsilon', '--help'], "
            "['calibrate', '--help']):\n    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "print(sorted(m for m in ('torch', 'dp_accounting', 'scipy', 'dpcore.accounting.dpsgd') "
            "if m in sys.modules))")  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


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


def test_help_describes_the_rule_of_events():
    """--epochs help is composed from events' rule in words (cli.py keeps no copy); test_events.py checks the words
    against the code."""
    from dpcore import cli
    from dpcore.accounting import events

    source = inspect.getsource(cli)
    for words in (
        *events.ROUNDS_PER_EPOCH_RULE.values(),
        events.EPOCHS_TO_STEPS_RULE,
        "'rdp-mironov'",
    ):
        assert words not in source, words  # read from events.py / the registry, not copied
    text = cli._epochs_help()
    for sampling, rule in events.ROUNDS_PER_EPOCH_RULE.items():
        assert re.search(rf"{re.escape(rule)} for [a-z ]*\b{sampling}\b", text), (sampling, text)
    assert events.EPOCHS_TO_STEPS_RULE in text and events.ROUNDS_PER_EPOCH_FROM_RATE_RULE in text


def _readme_console_example() -> tuple[list[str], list[str]]:
    """The README's ``$ python -m dpcore epsilon …`` example: its argv and the lines it shows."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```console\n\$ python -m dpcore (epsilon [^\n]*)\n(.*?)```", text, re.S)
    assert block, "README.md has no `$ python -m dpcore epsilon` console example"
    return block.group(1).split(), block.group(2).strip("\n").splitlines()


def test_readme_command_line_example_is_what_the_cli_prints(capsys):
    """Issue 43: the README's example read T = 13,980 where the CLI and the trainer count 14,040."""
    argv, shown = _readme_console_example()
    assert main(argv) == 0
    printed = capsys.readouterr().out.strip("\n").splitlines()
    steps = re.search(r"\bT = (\d+)", shown[0])
    assert steps and f"T = {steps.group(1)} " in printed[0], (shown[0], printed[0])
    shown_eps = {m.group(1): m.group(2) for m in map(re.compile(r"^\s+(\S+)\s+ε = (\S+)").match, shown) if m}
    printed_eps = {m.group(1): m.group(2) for m in map(re.compile(r"^\s+(\S+)\s+ε = (\S+)").match, printed) if m}
    assert shown_eps and shown_eps == printed_eps
    assert shown == printed
