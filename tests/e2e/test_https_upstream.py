"""A model server behind TLS (`--upstream https://...`): proxied answers and streams, the upstream's certificate
checked against `--upstream-ca`, the readiness probe, and the failures (untrusted certificate, response-header
timeout, a stream that breaks off) answered in the OpenAI shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.e2e.conftest import Process, ProxyFactory, http_get, start_standin
from tests.tls import write_self_signed

MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def tls_standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, Path]]:
    """A stand-in serving HTTPS with a self-signed certificate for `localhost`; yields it and that certificate."""
    cert, key = write_self_signed(tmp_path_factory.mktemp("upstream-tls"))
    process = start_standin("--tls-cert", str(cert), "--tls-key", str(key))
    yield process, cert
    process.stop()


def https_url(process: Process) -> str:
    return f"https://localhost:{process.port}"


def test_answers_and_streams_come_through_a_tls_upstream(
    tls_standin: tuple[Process, Path], start_proxy: ProxyFactory
) -> None:
    upstream, ca = tls_standin
    proxy = start_proxy(https_url(upstream), "--upstream-ca", str(ca))
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0)
    answer = client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert answer.choices[0].message.content
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in client.chat.completions.create(
        model="m", messages=MESSAGES, stream=True) if chunk.choices)  # type: ignore[arg-type]
    assert streamed == answer.choices[0].message.content
    status, body = http_get(proxy.admin_url + "/readyz")
    assert status == 200 and b"https://localhost" in body


def test_an_untrusted_upstream_certificate_is_refused(
    tls_standin: tuple[Process, Path], start_proxy: ProxyFactory
) -> None:
    upstream, _ = tls_standin
    proxy = start_proxy(https_url(upstream), wait_ready=False)  # certifi's roots: the self-signed one is not in them
    response = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES}, timeout=20)
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "upstream_unavailable"
    status, body = http_get(proxy.admin_url + "/readyz")
    assert status == 503 and b"unreachable" in body


def test_upstream_timeout_on_a_tls_upstream_is_504(
    tls_standin: tuple[Process, Path], start_proxy: ProxyFactory
) -> None:
    upstream, ca = tls_standin
    proxy = start_proxy(https_url(upstream), "--upstream-ca", str(ca), "--upstream-timeout", "300ms")
    slow = httpx.post(proxy.url + "/v1/chat/completions", timeout=10,
                      json={"model": "m", "messages": MESSAGES, "standin": {"headers_delay_ms": 1500}})
    assert slow.status_code == 504
    error = slow.json()["error"]
    assert error["code"] == "upstream_timeout" and "0.3 s" in error["message"]
    fast = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES}, timeout=10)
    assert fast.status_code == 200
    metrics = http_get(proxy.admin_url + "/metrics")[1].decode()
    assert 'outcome="upstream_timeout"' in metrics


def test_a_tls_upstream_breaking_off_a_stream_ends_it_with_an_error_event(
    tls_standin: tuple[Process, Path], start_proxy: ProxyFactory
) -> None:
    upstream, ca = tls_standin
    proxy = start_proxy(https_url(upstream), "--upstream-ca", str(ca))
    body = {"model": "m", "messages": MESSAGES, "stream": True, "standin": {"drop_after_events": 2}}
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=body, timeout=10) as r:
        assert r.status_code == 200
        raw = b"".join(r.iter_bytes())
    events = [block for block in raw.split(b"\n\n") if block]
    assert events[-1] == b"data: [DONE]"
    assert json.loads(events[-2].removeprefix(b"data: "))["error"]["code"] == "upstream_unavailable"
