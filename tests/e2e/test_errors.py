"""Every failure the proxy answers itself is OpenAI-shaped JSON with the right status, and it keeps serving."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import time
from pathlib import Path

import httpx
import openai
import pytest

from tests.e2e.conftest import Process, ProxyFactory, free_port, http_get
from tests.tls import write_self_signed

pytestmark = pytest.mark.slow

MESSAGES = [{"role": "user", "content": "hello"}]


def assert_openai_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "code"}
    assert error["code"] == code
    assert error["message"]


def test_upstream_down_is_502(start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(f"http://127.0.0.1:{free_port()}")
    response = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert_openai_error(response, 502, "upstream_unavailable")
    with pytest.raises(openai.APIStatusError) as info:
        openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0).chat.completions.create(
            model="m", messages=MESSAGES,  # type: ignore[arg-type]
        )
    assert info.value.status_code == 502
    status, body = http_get(proxy.admin_url + "/readyz")
    assert status == 503 and b"unreachable" in body
    status, _ = http_get(proxy.admin_url + "/healthz")
    assert status == 200


def test_upstream_timeout_is_504_and_proxy_keeps_serving(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, "--upstream-timeout", "300ms")
    slow = httpx.post(proxy.url + "/v1/chat/completions", timeout=10,
                      json={"model": "m", "messages": MESSAGES, "standin": {"headers_delay_ms": 1500}})
    assert_openai_error(slow, 504, "upstream_timeout")
    fast = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert fast.status_code == 200


def test_upstream_that_never_accepts_the_connection_is_504(standin: Process, start_proxy: ProxyFactory) -> None:
    # A listening socket whose accept queue is full: Linux drops further SYNs, so a connect hangs (the kernel
    # alone would retry for ~2 minutes), as with a firewalled or dead host.
    with socket.socket() as black_hole, socket.socket() as filler:
        black_hole.bind(("127.0.0.1", 0))
        black_hole.listen(0)
        filler.connect(black_hole.getsockname())
        proxy = start_proxy(f"http://127.0.0.1:{black_hole.getsockname()[1]}", "--upstream-connect-timeout", "500ms",
                            wait_ready=False)
        started = time.monotonic()
        response = httpx.post(proxy.url + "/v1/chat/completions", timeout=30,
                              json={"model": "m", "messages": MESSAGES})
        assert time.monotonic() - started < 10
        assert_openai_error(response, 504, "upstream_timeout")
        assert "connect" in response.json()["error"]["message"]
        response = httpx.post(proxy.url + "/v1/chat/completions", timeout=30,
                              json={"model": "m", "messages": MESSAGES})
        assert_openai_error(response, 504, "upstream_timeout")
    metrics = http_get(proxy.admin_url + "/metrics")[1].decode()
    assert 'outcome="upstream_timeout"' in metrics


def test_timeout_from_environment(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, env={"WARDEN_UPSTREAM_TIMEOUT": "200ms"})
    slow = httpx.post(proxy.url + "/v1/chat/completions", timeout=10,
                      json={"model": "m", "messages": MESSAGES, "standin": {"headers_delay_ms": 1000}})
    assert slow.status_code == 504


def test_body_over_limit_is_413(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, "--max-body", "64KiB")
    big = {"model": "m", "messages": [{"role": "user", "content": "x" * 70_000}]}
    assert_openai_error(httpx.post(proxy.url + "/v1/chat/completions", json=big), 413, "request_too_large")

    def chunked() -> object:
        for _ in range(100):
            yield b"x" * 1024

    response = httpx.post(proxy.url + "/v1/chat/completions", content=chunked(),  # type: ignore[arg-type]
                          headers={"Content-Type": "application/json"})
    assert_openai_error(response, 413, "request_too_large")
    small = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert small.status_code == 200


def test_default_limit_is_8_mib_and_is_answered_before_the_body_is_read(
    standin: Process, start_proxy: ProxyFactory
) -> None:
    proxy = start_proxy(standin.url)
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        # Only the headers: a proxy that waited for the 8 MiB body would never answer.
        sock.sendall(b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % (8 * 1024 * 1024 + 1))
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"request_too_large" in answer


@pytest.mark.parametrize(("guard", "traced"), [(True, False), (False, False), (True, True)])
def test_upstream_breaking_off_mid_stream_ends_the_stream_with_an_error_event(
    standin: Process, start_proxy: ProxyFactory, guard: bool, traced: bool
) -> None:
    tracing = {"OTEL_TRACES_EXPORTER": "console", "OTEL_TRACES_SAMPLER": "always_on"} if traced else {}
    proxy = start_proxy(standin.url, *(() if guard else ("--no-guard",)), env=tracing)
    body = {"model": "m", "messages": MESSAGES, "stream": True, "standin": {"drop_after_events": 2}}
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=body) as r:
        assert r.status_code == 200
        raw = b"".join(r.iter_bytes())  # a complete chunked body: no protocol error
    events = [block for block in raw.split(b"\n\n") if block]
    assert events[-1] == b"data: [DONE]"
    error = json.loads(events[-2].removeprefix(b"data: "))["error"]
    assert error["code"] == "upstream_unavailable" and "broke off" in error["message"]
    # The official client raises the error event as an APIError instead of returning a torn answer.
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0)
    with pytest.raises(openai.APIError, match="broke off"):
        for _ in client.chat.completions.create(model="m", messages=MESSAGES, stream=True,  # type: ignore[arg-type]
                                                extra_body={"standin": {"drop_after_events": 2}}):
            pass
    assert httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES}).status_code == 200
    metrics = http_get(proxy.admin_url + "/metrics")[1].decode()
    assert 'outcome="upstream_unavailable"' in metrics


@pytest.mark.parametrize("guard", [True, False])
def test_upstream_breaking_off_mid_stream_ends_an_http2_stream_with_an_error_event(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path, guard: bool
) -> None:
    cert, key = write_self_signed(tmp_path)
    proxy = start_proxy(standin.url, "--tls-cert", str(cert), "--tls-key", str(key),
                        *(() if guard else ("--no-guard",)))
    url = f"https://localhost:{proxy.port}/v1/chat/completions"
    broken = json.dumps({"model": "m", "messages": MESSAGES, "stream": True, "standin": {"drop_after_events": 2}})
    whole = json.dumps({"model": "m", "messages": MESSAGES})
    # curl negotiates h2 by ALPN; a reset stream would make it exit non-zero (HTTP/2 stream was not closed
    # cleanly). `--next` sends a second request on the same connection (num_connects 0): it stays usable.
    result = subprocess.run(
        ["curl", "-sS", "--http2", "--cacert", str(cert), "-H", "content-type: application/json", "-d", broken,
         "-w", "\n%{http_version}\n", url, "--next", "--http2", "--cacert", str(cert),
         "-H", "content-type: application/json", "-d", whole, "-w", "\n%{num_connects}", url],
        capture_output=True, timeout=20, text=True,
    )
    assert result.returncode == 0, result.stderr
    first, version, second, connects = result.stdout.rsplit("\n", 3)
    assert version == "2"
    assert json.loads(second)["choices"][0]["message"]["content"] and connects == "0"
    events = [block for block in first.split("\n\n") if block]
    assert events[-1] == "data: [DONE]"
    error = json.loads(events[-2].removeprefix("data: "))["error"]
    assert error["code"] == "upstream_unavailable" and "broke off" in error["message"]
    assert len(events) >= 4  # the role chunk and the first content events came before the break


def test_upstream_breaking_off_mid_stream_over_tls_ends_the_http1_stream_with_an_error_event(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path
) -> None:
    cert, key = write_self_signed(tmp_path)
    proxy = start_proxy(standin.url, "--tls-cert", str(cert), "--tls-key", str(key))
    body = {"model": "m", "messages": MESSAGES, "stream": True, "standin": {"drop_after_events": 2}}
    with httpx.Client(verify=ssl.create_default_context(cafile=str(cert))) as client, client.stream(
        "POST", f"https://localhost:{proxy.port}/v1/chat/completions", json=body
    ) as r:
        assert r.http_version == "HTTP/1.1" and r.status_code == 200
        raw = b"".join(r.iter_bytes())
    events = [block for block in raw.split(b"\n\n") if block]
    assert events[-1] == b"data: [DONE]"
    assert json.loads(events[-2].removeprefix(b"data: "))["error"]["code"] == "upstream_unavailable"


def test_garbage_on_the_wire_gets_400_and_proxy_keeps_serving(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url)
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400")
    assert b'"error"' in answer
    assert httpx.get(proxy.url + "/v1/models").status_code == 200
