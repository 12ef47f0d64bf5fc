"""Stream on mitmproxy's test flows: SSE answers get the relay, hop-by-hop headers go, and the relay guards text
split across upstream chunks and digests exactly what the client got."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.test import tflow

from proxy.config import WardenConfig
from proxy.guard.engine import Guard
from proxy.services import Services
from proxy.stages.stream import SseRelay, Stream, sse_relay_of
from proxy.state import STATE_KEY, FlowState, Route
from proxy.telemetry.metrics import Metrics

_GUARD = Guard.load()
ID_NUMBER = "110105199003071239"


@pytest.fixture
def stage() -> Iterator[Stream]:
    stream = Stream(Services(config=WardenConfig(upstream="http://u:1"), metrics=Metrics(), guard=_GUARD))
    yield stream
    stream.judge_pool.shutdown()


def answered(headers: dict[str, str], client_close: bool = False) -> tuple[http.HTTPFlow, FlowState]:
    flow = tflow.tflow()
    flow.response = http.Response.make(200, b"", headers)
    state = FlowState("r-1", Route.CHAT, 0.0, client_close=client_close)
    flow.metadata[STATE_KEY] = state
    return flow, state


def delta(content: str) -> bytes:
    payload: dict[str, Any] = {"id": "c", "model": "m",
                               "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def text_of(output: bytes) -> str:
    """The assistant text the client reads from the relayed events."""
    text = []
    for line in output.split(b"\n"):
        if line.startswith(b"data: {"):
            for choice in json.loads(line[6:]).get("choices", []):
                text.append((choice.get("delta") or {}).get("content") or "")
    return "".join(text)


def test_an_event_stream_answer_gets_the_relay(stage: Stream) -> None:
    flow, state = answered({"content-type": "text/event-stream; charset=utf-8"})
    stage.responseheaders(flow)
    assert flow.response is not None
    assert isinstance(flow.response.stream, SseRelay) and sse_relay_of(flow) is flow.response.stream
    assert flow.response.stream.guard is not None  # an inspected route: guarded
    assert state.stream
    assert flow.response.headers["x-warden-request-id"] == "r-1"
    assert flow.response.headers["x-warden-action"] == state.ledger.action.value


def test_a_non_sse_answer_gets_no_relay(stage: Stream) -> None:
    flow, state = answered({"content-type": "application/json"})
    stage.responseheaders(flow)
    assert flow.response is not None and not flow.response.stream
    assert sse_relay_of(flow) is None and not state.stream
    assert flow.response.headers["x-warden-request-id"] == "r-1"
    assert "x-warden-action" not in flow.response.headers


@pytest.mark.parametrize("client_close", [False, True])
def test_hop_by_hop_headers_are_stripped_and_close_is_kept_when_the_client_asked(
    stage: Stream, client_close: bool
) -> None:
    flow, _ = answered({"content-type": "application/json", "connection": "keep-alive, x-hop",
                        "keep-alive": "timeout=5", "x-hop": "1", "x-end": "2"}, client_close=client_close)
    stage.responseheaders(flow)
    assert flow.response is not None
    headers = flow.response.headers
    assert "keep-alive" not in headers and "x-hop" not in headers and headers["x-end"] == "2"
    assert headers.get("connection") == ("close" if client_close else None)


def relay_all(relay: Any, chunks: list[bytes]) -> bytes:
    """Feed the chunks and the end marker as mitmproxy does, on a loop (the relay may hand late verdicts to it)."""

    async def run() -> bytes:
        out = b""
        for chunk in [*chunks, b""]:
            out += b"".join(relay(chunk))
        return out

    return asyncio.run(run())


def test_an_id_split_across_two_chunks_arrives_masked(stage: Stream) -> None:
    flow, state = answered({"content-type": "text/event-stream"})
    stage.responseheaders(flow)
    assert flow.response is not None
    chunks = [delta("身份证号 " + ID_NUMBER[:9]), delta(ID_NUMBER[9:] + " 已登记"),
              b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
              b"data: [DONE]\n\n"]
    out = relay_all(flow.response.stream, chunks)
    text = text_of(out)
    assert ID_NUMBER not in out.decode()
    assert "身份证号 110105********1239 已登记" in text  # masked, not dropped
    assert out.rstrip().endswith(b"data: [DONE]")
    assert state.answer.stream_complete
    assert state.ledger.verdicts  # the answer's verdict is recorded when the stream ends
    assert state.output_digest == stage.services.digester.digest(out)


def test_the_output_digest_covers_what_the_client_got_unguarded() -> None:
    svc = Services(config=WardenConfig(upstream="http://u:1", guard=False), metrics=Metrics(), guard=_GUARD)
    stream = Stream(svc)
    try:
        flow, state = answered({"content-type": "text/event-stream"})
        stream.responseheaders(flow)
        assert flow.response is not None
        relay = sse_relay_of(flow)
        assert relay is not None and relay.guard is None
        chunks = [delta("a " + ID_NUMBER), b"data: [DONE]\n\n"]
        out = relay_all(flow.response.stream, chunks)
        assert out == b"".join(chunks)  # unguarded: as the upstream sent it
        assert state.output_digest == svc.digester.digest(out)
        assert state.output_digest != svc.digester.digest(chunks[0])
    finally:
        stream.judge_pool.shutdown()
