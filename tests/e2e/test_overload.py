"""Whole-process: load shedding (`max_inflight`, `max_queue`, `queue_timeout`) and the guard's time budget
(`guard_budget`, `guard_fail_mode`), as clients and the audit log see them."""

from __future__ import annotations

import concurrent.futures
import json
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Process, ProxyFactory, http_get
from tests.e2e.test_audit import exchange_records, verify

pytestmark = pytest.mark.slow


def slow_chat(delay_ms: int) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], "standin": {"headers_delay_ms": delay_ms}}


def test_beyond_inflight_and_queue_requests_get_429_and_a_stream_in_flight_is_never_cut(
        standin: Process, start_proxy: ProxyFactory, tmp_path: Path) -> None:
    audit_dir = tmp_path / "audit"
    proxy = start_proxy(standin.url, "--max-inflight", "2", "--max-queue", "1", "--queue-timeout", "500ms",
                        "--audit-dir", str(audit_dir))
    url = proxy.url + "/v1/chat/completions"
    stream_body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "tell me a story"}],
                   "standin": {"event_delay_ms": 100, "reply": "once upon a time " * 20}}  # ~8.5 s
    with concurrent.futures.ThreadPoolExecutor(8) as pool, httpx.Client(timeout=30) as client:
        with client.stream("POST", url, json=stream_body) as stream:  # holds one slot throughout
            chunks = stream.iter_bytes()  # kept: a dropped iterator closes the response
            first = next(chunks)
            slow = pool.submit(client.post, url, json=slow_chat(2500))  # holds the other
            wait_until_inflight(proxy, 2)
            queued = pool.submit(client.post, url, json=slow_chat(0))  # waits 500 ms, then 429
            wait_until_queued(proxy, 1)
            flood = [pool.submit(client.post, url, json=slow_chat(0)) for _ in range(4)]  # queue full: 429 now
            refused = [f.result() for f in flood]
            rest = b"".join(chunks)
        timed_out = queued.result()
        assert slow.result().status_code == 200
    assert first and b"data: [DONE]" in rest and b"error" not in rest  # the stream ran to its end
    for response in [*refused, timed_out]:
        assert response.status_code == 429
        assert response.headers["retry-after"] == "1"
        assert response.json()["error"]["code"] == "server_overloaded"
    metrics = http_get(proxy.admin_url + "/metrics")[1].decode()
    assert 'warden_shed_requests_total{reason="queue_full"} 4.0' in metrics
    assert 'warden_shed_requests_total{reason="queue_timeout"} 1.0' in metrics
    assert "warden_queued_requests 0.0" in metrics
    assert httpx.post(url, json=slow_chat(0)).status_code == 200  # every slot was given back
    assert proxy.stop() == 0
    assert verify(audit_dir).returncode == 0
    outcomes = sorted(str(r["exchange"]["outcome"]) for r in exchange_records(audit_dir))  # type: ignore[index]
    assert outcomes == ["ok"] * 3 + ["shed"] * 5
    shed = next(r for r in exchange_records(audit_dir) if r["exchange"]["outcome"] == "shed")  # type: ignore[index]
    assert shed["verdicts"]["@request"] == "skipped"  # type: ignore[index]
    assert shed["exchange"]["status"] == 429  # type: ignore[index]


def wait_until_inflight(proxy: Process, n: int) -> None:
    wait_for_metric(proxy, f"warden_inflight_requests {float(n)}")


def wait_until_queued(proxy: Process, n: int) -> None:
    wait_for_metric(proxy, f"warden_queued_requests {float(n)}")


def wait_for_metric(proxy: Process, line: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if line in http_get(proxy.admin_url + "/metrics")[1].decode():
            return
        time.sleep(0.02)
    raise AssertionError(f"metrics never showed {line!r}")


LONG_PROMPT = "请帮我总结这段话。" * 6000  # ~54k characters: scanned off the event loop, ~10 ms of work


@pytest.mark.parametrize(("mode", "status", "verdict"), [("closed", 503, "timeout"), ("open", 200, "failed_open")])
def test_inspection_over_its_budget_follows_the_fail_mode(standin: Process, start_proxy: ProxyFactory,
                                                          tmp_path: Path, mode: str, status: int,
                                                          verdict: str) -> None:
    audit_dir = tmp_path / "audit"
    proxy = start_proxy(standin.url, "--guard-budget", "1ms", "--guard-fail-mode", mode,
                        "--audit-dir", str(audit_dir))
    marker = f"budget-{mode}"
    response = httpx.post(proxy.url + "/v1/chat/completions", timeout=30, json={
        "model": "m", "messages": [{"role": "user", "content": marker + LONG_PROMPT}]})
    assert response.status_code == status
    if mode == "closed":
        assert response.json()["error"]["code"] == "guard_timeout"
        assert marker not in json.loads(http_get(standin.url + "/_standin/last")[1] or b"{}").__repr__()
    metrics = http_get(proxy.admin_url + "/metrics")[1].decode()
    assert f'warden_guard_over_budget_total{{direction="input",fail_mode="{mode}"}} 1.0' in metrics
    assert proxy.stop() == 0
    record = exchange_records(audit_dir)[0]
    assert record["verdicts"]["@request"] == verdict  # type: ignore[index]
    assert record["exchange"]["outcome"] == ("guard_timeout" if mode == "closed" else "ok")  # type: ignore[index]
