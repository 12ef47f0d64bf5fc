"""The pure parts of proxy/mitm/wire_bounds.py: which connections a bound has run out on. The patched mitmproxy
layers themselves are exercised whole-process in tests/e2e/test_bounds.py."""

from __future__ import annotations

from typing import Any

from proxy.mitm.wire_bounds import LINGER_SECONDS, Wire, WireLimits, body_too_large_message, expired

LIMITS = WireLimits(max_header_bytes=1024, header_timeout=30.0, idle_timeout=75.0, request_body_bytes=100,
                    response_body_bytes=1000)


class FakeServer:
    """What `expired` reads of mitmproxy's Http1Server."""

    def __init__(self, *, buffered: bytes = b"", stream_id: int = 1, waiting_since: float = 0.0,
                 head_started: float | None = None, lingering_since: float | None = None,
                 reading_head: bool = True) -> None:
        self.buf = buffered
        self.stream_id = stream_id
        self.warden_waiting_since = waiting_since
        self.warden_head_started = head_started
        self.warden_lingering_since = lingering_since
        self.state: Any = self.read_headers if reading_head else self.read_body

    def read_headers(self) -> None: ...
    def read_body(self) -> None: ...


def reasons(*servers: FakeServer, now: float) -> list[str]:
    return [e.reason for e in expired(Wire(LIMITS), servers, now)]  # type: ignore[arg-type]


def test_a_new_connection_must_start_its_first_request_within_the_header_timeout() -> None:
    assert reasons(FakeServer(), now=29.0) == []
    assert reasons(FakeServer(), now=31.0) == ["header_timeout"]


def test_a_keep_alive_connection_may_idle_longer_between_requests() -> None:
    idle = FakeServer(stream_id=3, waiting_since=100.0)
    assert reasons(idle, now=170.0) == []
    assert reasons(idle, now=176.0) == ["idle_timeout"]


def test_a_started_head_is_timed_from_its_first_byte_and_answered_408() -> None:
    slow = FakeServer(buffered=b"GET / HT", stream_id=3, waiting_since=0.0, head_started=60.0)
    assert reasons(slow, now=89.0) == []
    (expiry,) = expired(Wire(LIMITS), [slow], 91.0)  # type: ignore[list-item]
    assert expiry.reason == "header_timeout"
    assert expiry.answer.startswith(b"HTTP/1.1 408")


def test_an_exchange_in_progress_is_never_timed_out_here() -> None:
    assert reasons(FakeServer(reading_head=False), now=10_000.0) == []


def test_a_lingering_close_ends_after_its_time() -> None:
    lingering = FakeServer(reading_head=False, lingering_since=5.0)
    assert reasons(lingering, now=5.0 + LINGER_SECONDS - 1) == []
    assert reasons(lingering, now=5.0 + LINGER_SECONDS + 1) == ["linger_done"]


def test_zero_turns_a_timeout_off() -> None:
    limits = WireLimits(max_header_bytes=0, header_timeout=0, idle_timeout=0, request_body_bytes=0,
                        response_body_bytes=0)
    servers: list[Any] = [FakeServer(), FakeServer(stream_id=3), FakeServer(buffered=b"G")]
    assert expired(Wire(limits), servers, 1e9) == []


def test_messages_name_warden_limits_not_mitmproxys() -> None:
    assert body_too_large_message(True, 100) == "The request body exceeds the limit of 100 bytes."
    answer = body_too_large_message(False, 1000)
    assert "answer exceeds the limit of 1000 bytes" in answer and "mitmproxy" not in answer
