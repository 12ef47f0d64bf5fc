"""Whole-process fixtures: `warden standin` and `warden serve` as real subprocesses on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}:\n{out}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {port} after {timeout} s")


def warden_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "proxy.cli", *args]


@dataclass
class Process:
    proc: subprocess.Popen[bytes]
    port: int
    admin_port: int = 0
    log_path: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.admin_port}"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def stderr_text(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode()


def start_standin(*extra: str) -> Process:
    port = free_port()
    proc = subprocess.Popen(
        warden_command("standin", "--port", str(port), *extra), cwd=REPO,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    wait_for_port(port, proc)
    return Process(proc, port)


@pytest.fixture(scope="session")
def standin() -> Iterator[Process]:
    process = start_standin()
    yield process
    process.stop()


ProxyFactory = Callable[..., Process]


@pytest.fixture
def start_proxy(tmp_path: Path) -> Iterator[ProxyFactory]:
    """Start `warden serve` against an upstream URL with extra flags; every proxy is stopped afterwards."""
    started: list[Process] = []

    def start(upstream: str, *extra: str, env: dict[str, str] | None = None, wait_ready: bool = True,
              semantic: bool = False) -> Process:
        # The semantic model (hundreds of MiB, seconds to load) is on by default in `warden serve`; the
        # tests that are not about it start lexical-only proxies (tests/e2e/test_semantic.py turns it on).
        if not semantic:
            extra = ("--no-semantic", *extra)
        port, admin = free_port(), free_port()
        log = open(tmp_path / f"warden-{port}.log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(
            warden_command("serve", "--upstream", upstream, "--listen", f"127.0.0.1:{port}",
                           "--admin", f"127.0.0.1:{admin}", *extra),
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, **(env or {})},
        )
        process = Process(proc, port, admin, tmp_path / f"warden-{port}.log")
        started.append(process)
        try:
            wait_for_port(port, proc)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\n{(tmp_path / f'warden-{port}.log').read_text()}") from None
        if wait_ready:
            wait_for_port(admin, proc)
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture(scope="module")
def start_proxy_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyFactory]:
    """Like `start_proxy`, for proxies shared by a module (the semantic model takes seconds to load)."""
    yield from start_proxy.__wrapped__(tmp_path_factory.mktemp("proxy"))  # type: ignore[attr-defined]


def http_get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
