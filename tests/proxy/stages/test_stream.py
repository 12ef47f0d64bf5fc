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


# -- answers with a JSON schema (proxy/schemas/stream_gate.py) -----------------------------------------------


def schema_stage(guard: bool, policy: str = "reject") -> Stream:
    config = WardenConfig(upstream="http://u:1", guard=guard, schema_policy=policy)
    return Stream(Services(config=config, metrics=Metrics(), guard=_GUARD))


def with_schema(flow: http.HTTPFlow, state: FlowState) -> None:
    from proxy.schemas.plan import SchemaFacts, SchemaPlan, SchemaSource
    from rules.schema import compile_schema

    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    state.schema = SchemaFacts(SchemaPlan(SchemaSource.ROUTE, content=compile_schema(schema)))


DOCUMENT = '\n{"city": "北京 \\u4eac"}'


def answer_events(text: str) -> list[bytes]:
    return [delta(text[i:i + 4]) for i in range(0, len(text), 4)] + [
        b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
        b'data: {"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5}}\n\n',
        b"data: [DONE]\n\n"]


@pytest.mark.parametrize("guard", [False, True])
def test_a_stream_with_a_schema_gets_the_gate_with_or_without_the_content_guard(guard: bool) -> None:
    from proxy.schemas.plan import SchemaResult

    stage = schema_stage(guard)
    try:
        flow, state = answered({"content-type": "text/event-stream"})
        with_schema(flow, state)
        stage.responseheaders(flow)
        relay = sse_relay_of(flow)
        assert relay is not None and relay.guard is not None and relay.guard.gate is not None
        assert relay.guard.scans is guard
        chunks = answer_events(DOCUMENT)
        out = relay_all(relay, chunks)
        assert text_of(out) == DOCUMENT and out.endswith(b"data: [DONE]\n\n")
        if not guard:
            assert out == b"".join(chunks)  # events as they came
            assert not state.ledger.verdicts  # the content guard was off: nothing of its own recorded
        assert state.schema is not None and state.schema.results == [SchemaResult.VALID]
        assert state.answer.usage.completion_tokens == 5
        assert state.output_digest == stage.services.digester.digest(out)
    finally:
        stage.judge_pool.shutdown()


@pytest.mark.parametrize(("policy", "cut"), [("reject", True), ("reask", True), ("flag", False)])
def test_the_configured_policy_decides_whether_the_stream_is_cut(policy: str, cut: bool) -> None:
    from proxy.schemas.plan import SchemaResult
    from proxy.state import Outcome

    stage = schema_stage(False, policy)
    try:
        flow, state = answered({"content-type": "text/event-stream"})
        with_schema(flow, state)
        stage.responseheaders(flow)
        assert flow.response is not None
        chunks = answer_events('{"town": "x"}')
        out = relay_all(flow.response.stream, chunks)
        assert state.schema is not None
        if cut:
            assert b'"code": "schema_violation"' in out and b'"stop"' not in out and b"usage" not in out
            assert state.schema.results == [SchemaResult.REJECTED] and state.outcome is Outcome.SCHEMA_VIOLATION
        else:
            assert out == b"".join(chunks)
            assert state.schema.results == [SchemaResult.INVALID] and state.outcome is Outcome.OK
    finally:
        stage.judge_pool.shutdown()


def test_without_guard_or_schema_the_stream_keeps_the_pass_through_path() -> None:
    stage = schema_stage(False)
    try:
        flow, _ = answered({"content-type": "text/event-stream"})
        stage.responseheaders(flow)
        relay = sse_relay_of(flow)
        assert relay is not None and relay.guard is None
        errored, state = answered({"content-type": "text/event-stream"})
        errored.response = http.Response.make(500, b"", {"content-type": "text/event-stream"})
        with_schema(errored, state)
        stage.responseheaders(errored)
        relay = sse_relay_of(errored)
        assert relay is not None and relay.guard is None  # an error status has no answer to fit a schema
    finally:
        stage.judge_pool.shutdown()


def test_a_compressed_stream_with_a_schema_is_decoded_for_the_gate() -> None:
    import zlib

    from proxy.stages.stream import DecodingRelay

    stage = schema_stage(False)
    try:
        flow, state = answered({"content-type": "text/event-stream", "content-encoding": "gzip"})
        with_schema(flow, state)
        stage.responseheaders(flow)
        assert flow.response is not None and isinstance(flow.response.stream, DecodingRelay)
        assert "content-encoding" not in flow.response.headers
        encoder = zlib.compressobj(wbits=31)
        chunks = answer_events(DOCUMENT)
        out = relay_all(flow.response.stream, [encoder.compress(c) + encoder.flush(zlib.Z_SYNC_FLUSH)
                                               for c in chunks])
        assert out == b"".join(chunks)
    finally:
        stage.judge_pool.shutdown()
