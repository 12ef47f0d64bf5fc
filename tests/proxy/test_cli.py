"""The `warden` command's dispatch (proxy/cli.py): what it sets up before a subcommand's module loads."""

from __future__ import annotations

import os

import pytest

from proxy import cli


def _help(command: str) -> int | str | None:
    """`warden <command> --help`, its exit status whether the subcommand returns it or argparse exits with it."""
    try:
        return cli.main([command, "--help"])
    except SystemExit as done:
        return done.code


def test_the_commands_that_judge_traffic_run_blas_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"serve", "scan", "demo"} <= cli.ONE_BLAS_THREAD
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert _help("scan") == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"


def test_an_operators_own_blas_setting_is_kept_and_other_commands_leave_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    assert _help("serve") == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    assert _help("audit") == 0
    assert "OPENBLAS_NUM_THREADS" not in os.environ
