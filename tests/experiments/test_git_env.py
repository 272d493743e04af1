"""The commit a result names, on a copy of the tree without .git (DPCORE_GIT_COMMIT)."""

import pytest

from dpcore.experiments import runner


@pytest.fixture(autouse=True)
def _fresh_cache():
    runner._git.cache_clear()
    yield
    runner._git.cache_clear()


def test_env_commit_is_used_and_labelled(monkeypatch):
    commit = "0123456789abcdef0123456789abcdef01234567"
    monkeypatch.setenv("DPCORE_GIT_COMMIT", commit.upper())
    got = runner.software()
    assert got["git_commit"] == commit
    assert got["git_dirty"] is None
    assert got["git_source"] == "DPCORE_GIT_COMMIT"


@pytest.mark.parametrize("bad", ["abc", "z" * 40, "0123456789abcdef0123456789abcdef0123456"])
def test_env_commit_must_be_a_full_hash(monkeypatch, bad):
    monkeypatch.setenv("DPCORE_GIT_COMMIT", bad)
    with pytest.raises(ValueError, match="DPCORE_GIT_COMMIT"):
        runner.software()


def test_without_env_the_checkout_is_asked(monkeypatch):
    monkeypatch.delenv("DPCORE_GIT_COMMIT", raising=False)
    got = runner.software()
    assert "git_source" not in got
    assert got["git_commit"] is None or len(got["git_commit"]) == 40


def test_device_name_of_the_cpu_is_a_nonempty_string():
    assert isinstance(runner.device_name("cpu"), str) and runner.device_name("cpu")
