"""Trace on mitmproxy's test flows: off, it only reads the client's trace id; on, the upstream request carries a
`traceparent` of the flow's own trace, and a locally answered request gets none."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mitmproxy import http
from mitmproxy.test import tflow, tutils
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from proxy.config import WardenConfig
from proxy.guard.engine import Guard
from proxy.services import Services
from proxy.stages.trace import Trace
from proxy.state import STATE_KEY, FlowState, Route
from proxy.telemetry.metrics import Metrics
from proxy.telemetry.tracing import Tracing

_GUARD = Guard.load([])
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_SPAN = "b7ad6b7169203331"
PARENT = f"00-{TRACE_ID}-{PARENT_SPAN}-01"


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.for_exporter(InMemorySpanExporter())
    yield tracing
    tracing.shutdown()


def stage(tracing: Tracing | None = None) -> Trace:
    return Trace(Services(config=WardenConfig(upstream="http://u:8000"), metrics=Metrics(), guard=_GUARD,
                          tracing=tracing or Tracing.disabled()))


def chat_flow(traceparent: str | None = None) -> tuple[http.HTTPFlow, FlowState]:
    headers = http.Headers(content_type="application/json")
    if traceparent:
        headers["traceparent"] = traceparent
    request = tutils.treq(path=b"/v1/chat/completions", method=b"POST", content=b"{}", headers=headers)
    flow = tflow.tflow(req=request)
    state = FlowState("r", Route.CHAT, 0.0, method="POST")
    flow.metadata[STATE_KEY] = state
    return flow, state


def parts(traceparent: str) -> list[str]:
    version, trace_id, span_id, flags = traceparent.split("-")
    return [version, trace_id, span_id, flags]


def test_disabled_sets_nothing_but_the_clients_trace_id() -> None:
    trace = stage()
    flow, state = chat_flow(PARENT)
    trace.requestheaders(flow)
    trace.request(flow)
    assert state.provenance.spans is None
    assert state.provenance.trace_id == TRACE_ID  # for the logs
    assert flow.request.headers["traceparent"] == PARENT  # passes to the upstream untouched
    bare, bare_state = chat_flow()
    trace.requestheaders(bare)
    trace.request(bare)
    assert bare_state.provenance.trace_id is None and bare_state.provenance.spans is None
    assert "traceparent" not in bare.request.headers


def test_the_upstream_request_continues_the_clients_trace(tracing: Tracing) -> None:
    trace = stage(tracing)
    flow, state = chat_flow(PARENT)
    trace.requestheaders(flow)
    assert state.provenance.spans is not None and state.provenance.trace_id == TRACE_ID
    trace.request(flow)
    version, trace_id, span_id, flags = parts(flow.request.headers["traceparent"])
    assert (version, trace_id) == ("00", TRACE_ID)
    assert span_id != PARENT_SPAN and span_id == format(state.provenance.spans.client_id, "016x")
    assert int(flags, 16) & 1 == 1  # sampled


def test_without_a_client_trace_the_injected_one_is_the_flows(tracing: Tracing) -> None:
    trace = stage(tracing)
    flow, state = chat_flow()
    trace.requestheaders(flow)
    trace.request(flow)
    assert state.provenance.trace_id is not None and len(state.provenance.trace_id) == 32
    assert parts(flow.request.headers["traceparent"])[1] == state.provenance.trace_id


def test_a_request_answered_locally_gets_no_upstream_traceparent(tracing: Tracing) -> None:
    trace = stage(tracing)
    flow, state = chat_flow(PARENT)
    trace.requestheaders(flow)
    flow.response = http.Response.make(400, b"{}")  # blocked by the guard
    trace.request(flow)
    assert flow.request.headers["traceparent"] == PARENT
    assert state.provenance.spans is not None and state.provenance.spans.client_id == 0  # no CLIENT span
