"""The admin port as a whole process: /metrics behind a bearer token when the port is not loopback (refused
without one), and readiness against llama.cpp servers with and without a /health endpoint."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import (
    REPO,
    Process,
    ProxyFactory,
    free_port,
    start_standin,
    wait_for_port,
    warden_command,
)

EXIT_CONFIG = 78
TOKEN = "e2e-admin-token-7f3a9c"


def serve_exit(upstream: str, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = warden_command("serve", "--no-semantic", "--upstream", upstream,
                             "--listen", f"127.0.0.1:{free_port()}", *extra)
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("admin", ["0.0.0.0", "[::]"])
def test_non_loopback_admin_without_token_refuses_to_start(standin: Process, admin: str) -> None:
    done = serve_exit(standin.url, "--admin", f"{admin}:{free_port()}")
    assert done.returncode == EXIT_CONFIG, done.stderr
    assert "not loopback" in done.stderr
    assert "--admin-token-file" in done.stderr and "WARDEN_ADMIN_TOKEN" in done.stderr


def test_empty_token_file_refuses_to_start_naming_the_file(standin: Process, tmp_path: Path) -> None:
    empty = tmp_path / "admin-token"
    empty.write_text("\n")
    done = serve_exit(standin.url, "--admin", f"0.0.0.0:{free_port()}", "--admin-token-file", str(empty))
    assert done.returncode == EXIT_CONFIG, done.stderr
    assert f"admin_token_file {empty}: empty" in done.stderr


def admin_up(proxy: Process, port: int) -> str:
    """Wait for the admin port (given separately: the fixture's own --admin flag is overridden)."""
    wait_for_port(port, proxy.proc)
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("source", ["file", "env"])
def test_token_guards_metrics_and_leaves_the_probes_open(standin: Process, start_proxy: ProxyFactory,
                                                         tmp_path: Path, source: str) -> None:
    port = free_port()
    if source == "file":
        token_file = tmp_path / "admin-token"
        token_file.write_text(TOKEN + "\n")  # a trailing newline, as `echo` or a Secret edited by hand has
        proxy = start_proxy(standin.url, "--admin", f"0.0.0.0:{port}", "--admin-token-file", str(token_file),
                            wait_ready=False)
    else:
        proxy = start_proxy(standin.url, "--admin", f"0.0.0.0:{port}", env={"WARDEN_ADMIN_TOKEN": TOKEN},
                            wait_ready=False)
    url = admin_up(proxy, port)
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        refused = httpx.get(url + "/metrics", headers=headers)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert refused.text == "unauthorized\n"
    scraped = httpx.get(url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert scraped.status_code == 200 and "warden_build_info" in scraped.text
    assert httpx.get(url + "/healthz").status_code == 200
    assert httpx.get(url + "/readyz").status_code == 200
    assert proxy.log_path is not None
    log = proxy.log_path.read_text()
    assert '"metrics": "bearer token required"' in log
    assert TOKEN not in log


def test_loopback_admin_without_token_says_metrics_are_open(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url)
    assert httpx.get(proxy.admin_url + "/metrics").status_code == 200
    assert proxy.log_path is not None
    assert '"metrics": "open (loopback only, no token set)"' in proxy.log_path.read_text()


@pytest.fixture(scope="module")
def llama_cpp_python() -> Iterator[Process]:
    """A stand-in without /health, as llama-cpp-python's server (the native llama-server has one)."""
    process = start_standin("--no-health")
    yield process
    process.stop()


def ready_and_up(proxy: Process, timeout: float = 10.0) -> tuple[int, dict[str, object], float]:
    """/readyz once it turns 200 (or its last answer), and warden_upstream_up from /metrics."""
    deadline = time.monotonic() + timeout
    while True:
        answer = httpx.get(proxy.admin_url + "/readyz")
        if answer.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    text = httpx.get(proxy.admin_url + "/metrics").text
    up = next(f for f in text_string_to_metric_families(text) if f.name == "warden_upstream_up")
    return answer.status_code, json.loads(answer.text), up.samples[0].value


@pytest.mark.parametrize("kind", ["llama-server", "llama-cpp-python"])
def test_llama_cpp_backend_is_ready_with_or_without_a_health_path(
    kind: str, standin: Process, llama_cpp_python: Process, start_proxy: ProxyFactory
) -> None:
    upstream = standin if kind == "llama-server" else llama_cpp_python
    assert (httpx.get(upstream.url + "/health").status_code == 404) is (kind == "llama-cpp-python")
    proxy = start_proxy(upstream.url, "--backend", "llama_cpp")
    status, body, up = ready_and_up(proxy)
    assert status == 200, body
    assert up == 1.0
    if kind == "llama-cpp-python":
        assert "/health answered 404" in str(body["reason"])
        assert "/v1/models answered 200" in str(body["reason"])
    reply = httpx.post(proxy.url + "/v1/chat/completions",
                       json={"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    assert reply.status_code == 200


def test_an_explicit_health_path_does_not_fall_back(llama_cpp_python: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(llama_cpp_python.url, "--backend", "llama_cpp", "--health-path", "/health")
    status, body, up = ready_and_up(proxy, timeout=2.0)
    assert status == 503 and "/health answered 404" in str(body["reason"])
    assert up == 0.0
