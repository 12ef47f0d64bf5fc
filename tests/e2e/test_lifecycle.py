"""Start-up, SIGTERM draining and the admin port of a real `warden serve` process."""

from __future__ import annotations

import json
import signal
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import REPO, Process, ProxyFactory, free_port, http_get, warden_command
from tests.tls import write_self_signed

pytestmark = pytest.mark.slow


def test_sigterm_drains_an_open_stream_then_exits_zero(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, "--drain-grace", "20s")
    body = {"model": "m", "messages": [{"role": "user", "content": "d" * 60}], "stream": True,
            "standin": {"chars_per_event": 2, "event_delay_ms": 40}}
    received: list[str] = []
    errors: list[BaseException] = []

    def consume() -> None:
        try:
            with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=body, timeout=30) as r:
                received.extend(line for line in r.iter_lines() if line.startswith("data:"))
        except BaseException as exc:
            errors.append(exc)

    reader = threading.Thread(target=consume)
    reader.start()
    time.sleep(0.4)  # the stream is open and about a third through
    proxy.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    with pytest.raises(httpx.ConnectError):  # no longer accepting
        httpx.get(proxy.url + "/v1/models", timeout=2)
    reader.join(30)
    assert proxy.proc.wait(30) == 0
    assert not errors
    assert received[-1] == "data: [DONE]"
    assert len(received) == 1 + len("Echo: " + "d" * 60) // 2 + 1 + 1  # role, content, finish, [DONE]


def test_grace_period_cuts_a_stream_that_will_not_end(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, "--drain-grace", "500ms")
    body = {"model": "m", "messages": [{"role": "user", "content": "z" * 200}], "stream": True,
            "standin": {"chars_per_event": 1, "event_delay_ms": 100}}
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=body, timeout=30) as r:
        lines = r.iter_lines()
        next(lines)
        started = time.monotonic()
        proxy.proc.send_signal(signal.SIGTERM)
        assert proxy.proc.wait(15) == 0
        assert time.monotonic() - started < 10


def test_port_in_use_fails_start_with_a_clear_message(standin: Process) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            warden_command("serve", "--no-semantic", "--upstream", standin.url, "--listen", f"127.0.0.1:{port}",
                           "--admin", f"127.0.0.1:{free_port()}"),
            cwd=REPO, capture_output=True, timeout=30,
        )
    assert result.returncode == 1
    assert b"cannot listen on" in result.stderr


def test_bad_configuration_exits_78(tmp_path: Path) -> None:
    config = tmp_path / "warden.yaml"
    config.write_text("upstream: http://127.0.0.1:1\nmax_body_bytes: lots\n")
    result = subprocess.run(warden_command("serve", "--config", str(config)), cwd=REPO, capture_output=True,
                            timeout=30)
    assert result.returncode == 78
    assert b"max_body_bytes" in result.stderr


def test_metrics_parse_and_count_outcomes(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url)
    c = openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0)
    c.chat.completions.create(model="standin-base", messages=[{"role": "user", "content": "hi"}])
    list(c.chat.completions.create(model="standin-base", messages=[{"role": "user", "content": "hi"}],
                                   stream=True, stream_options={"include_usage": True}))
    httpx.post(proxy.url + "/v1/chat/completions", json={"model": "standin-base", "standin": {"status": 500}})
    status, text = http_get(proxy.admin_url + "/metrics")
    assert status == 200
    families = {f.name: f for f in text_string_to_metric_families(text.decode())}
    requests = {
        (s.labels["route"], s.labels["model_name"], s.labels["code_class"], s.labels["outcome"]): s.value
        for s in families["warden_requests"].samples if s.name == "warden_requests_total"
    }
    assert requests[("chat", "standin-base", "2xx", "ok")] == 2
    assert requests[("chat", "standin-base", "5xx", "upstream_error")] == 1
    assert families["warden_inflight_requests"].samples[0].value == 0
    assert families["warden_build_info"].samples[0].labels["version"]
    ttft = [s for s in families["warden_time_to_first_token_seconds"].samples if s.name.endswith("_count")]
    assert ttft[0].value == 1
    durations = [s for s in families["warden_request_duration_seconds"].samples if s.name.endswith("_count")]
    assert sum(s.value for s in durations) == 3
    prompt = [s for s in families["warden_prompt_tokens"].samples if s.name.endswith("_total")]
    assert prompt[0].value > 0
    status, body = http_get(proxy.admin_url + "/readyz")
    assert status == 200 and b'"ready": true' in body


def test_tls_listener_serves_http2_with_the_given_certificate(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path
) -> None:
    cert, key = write_self_signed(tmp_path)
    proxy = start_proxy(standin.url, "--tls-cert", str(cert), "--tls-key", str(key))
    tls = ssl.create_default_context(cafile=str(cert))
    url = f"https://localhost:{proxy.port}/v1/chat/completions"
    # curl negotiates h2 by ALPN (httpx offers "http/1.1" first, and mitmproxy honours the client's order).
    for stream in (False, True):
        body = json.dumps({"model": "m", "stream": stream, "messages": [{"role": "user", "content": "over h2"}]})
        result = subprocess.run(
            ["curl", "-sS", "--http2", "--cacert", str(cert), "-H", "content-type: application/json",
             "-d", body, "-w", "\n%{http_version}", url],
            capture_output=True, timeout=20, check=True, text=True,
        )
        payload, _, version = result.stdout.rpartition("\n")
        assert version == "2"
        if stream:
            assert payload.endswith("data: [DONE]\n\n")
        else:
            assert json.loads(payload)["choices"][0]["message"]["content"] == "Echo: over h2"
    with httpx.Client(verify=tls) as http1_client:  # the same port still speaks HTTP/1.1 over TLS
        response = http1_client.get(f"https://localhost:{proxy.port}/v1/models")
        assert response.http_version == "HTTP/1.1" and response.status_code == 200
