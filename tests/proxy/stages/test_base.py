"""A failure in our own stage code fails the exchange closed (500), never open."""

from __future__ import annotations

import json

from mitmproxy import http
from mitmproxy.test import tflow

from proxy.stages.base import fail_closed, request_json
from proxy.state import STATE_KEY, FlowState, Outcome, Route


class Broken:
    @fail_closed
    def request(self, flow: http.HTTPFlow) -> None:
        raise RuntimeError("bug in our code")


def flow_with_state() -> tuple[http.HTTPFlow, FlowState]:
    flow = tflow.tflow()
    state = FlowState(request_id="rid-1", route=Route.CHAT, started=0.0)
    flow.metadata[STATE_KEY] = state
    return flow, state


def test_exception_before_forwarding_answers_500() -> None:
    flow, state = flow_with_state()
    Broken().request(flow)
    assert flow.response is not None and flow.response.status_code == 500
    assert json.loads(flow.response.content or b"")["error"]["code"] == "internal_error"
    assert flow.response.headers["x-warden-request-id"] == "rid-1"
    assert state.outcome is Outcome.INTERNAL_ERROR


def test_exception_while_streaming_kills_the_flow() -> None:
    flow, state = flow_with_state()
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    flow.response.stream = True
    flow.live = True
    Broken().request(flow)
    assert flow.error is not None and flow.killable is False
    assert state.outcome is Outcome.INTERNAL_ERROR


def test_request_json_parses_once_and_tolerates_garbage() -> None:
    flow, state = flow_with_state()
    flow.request.headers["content-type"] = "application/json"
    flow.request.content = b'{"model": "m"}'
    assert request_json(flow, state, 1 << 20) == {"model": "m"}
    flow.request.content = b"changed"
    assert request_json(flow, state, 1 << 20) == {"model": "m"}  # cached: parsed once per flow
    other, other_state = flow_with_state()
    other.request.headers["content-type"] = "application/json"
    other.request.content = b"\xff{not json"
    assert request_json(other, other_state, 1 << 20) is None
