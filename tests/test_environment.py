"""environment.yml lists the same dependencies as pyproject.toml; pins are consistent."""

import re
import tomllib

import yaml

from dpcore.paths import repo_root


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject():
    return tomllib.loads((repo_root() / "pyproject.toml").read_text())["project"]


def test_environment_yml_matches_pyproject():
    project = _pyproject()
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared += extra
    env = yaml.safe_load((repo_root() / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    listed = [r for r in pip_section if not r.startswith("-")]
    assert sorted(map(str.lower, listed)) == sorted(map(str.lower, declared))
    assert "python=3.11" in env["dependencies"]


def test_torch_is_pinned_everywhere():
    constraints = (repo_root() / "constraints.txt").read_text().splitlines()
    assert "torch==2.13.0" in constraints and "torchvision==0.28.0" in constraints
    assert "torch==2.13.0" in _pyproject()["dependencies"]


def test_every_dependency_is_pinned_in_constraints():
    project = _pyproject()
    names = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        names |= {_name(r) for r in extra}
    pinned = {_name(line) for line in (repo_root() / "constraints.txt").read_text().splitlines() if "==" in line}
    assert names <= pinned, sorted(names - pinned)
