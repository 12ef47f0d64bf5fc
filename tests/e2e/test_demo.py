"""`warden demo` is the first thing a new user runs: it must pass on embedded defaults."""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e.conftest import REPO, warden_command

pytestmark = pytest.mark.slow


def test_demo_runs_and_exits_zero() -> None:
    result = subprocess.run(warden_command("demo"), cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "demo: all steps behaved as expected" in result.stdout
    assert "FAIL" not in result.stdout
    # The structured-output step: a first answer that does not fit its schema, re-asked into one that does.
    assert "structured output, re-asked" in result.stdout and "X-Warden-Schema: valid" in result.stdout
