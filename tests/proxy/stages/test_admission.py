"""Admission on mitmproxy's test flows: a slot per exchange until it ends, or a 429 that says when to retry."""

from __future__ import annotations

import asyncio
import json

from mitmproxy import http
from mitmproxy.test import tflow

from audit.records import Verdict
from proxy.config import WardenConfig
from proxy.guard.engine import Guard
from proxy.guard.ledger import Direction
from proxy.services import Services
from proxy.stages.admission import RETRY_AFTER_SECONDS, Admission
from proxy.state import STATE_KEY, FlowState, Outcome, Route
from proxy.telemetry.metrics import Metrics

_GUARD = Guard.load([])


def admission(max_inflight: int, max_queue: int = 0, queue_timeout: float = 10.0) -> tuple[Admission, Metrics]:
    metrics = Metrics()
    config = WardenConfig(upstream="http://u:1", max_inflight=max_inflight, max_queue=max_queue,
                          queue_timeout=queue_timeout)
    return Admission(Services(config=config, metrics=metrics, guard=_GUARD)), metrics


def flow_with_state(request_id: str = "r") -> tuple[http.HTTPFlow, FlowState]:
    flow = tflow.tflow()
    state = FlowState(request_id, Route.CHAT, 0.0)
    flow.metadata[STATE_KEY] = state
    return flow, state


def shed_count(metrics: Metrics, reason: str) -> float:
    return metrics.registry.get_sample_value("warden_shed_requests_total", {"reason": reason}) or 0.0


def test_an_admitted_flow_holds_a_slot_until_it_ends_and_releases_it_once() -> None:
    stage, _ = admission(1)
    flow, state = flow_with_state()
    assert stage.requestheaders(flow) is None
    assert state.admitted and stage.gate.inflight == 1 and flow.response is None
    flow.response = http.Response.make(200, b"{}")
    stage.response(flow)
    assert not state.admitted and stage.gate.inflight == 0
    stage.error(flow)  # a flow may see both response and error: the slot is given back once
    assert stage.gate.inflight == 0


def test_an_error_releases_the_slot() -> None:
    stage, _ = admission(1)
    flow, state = flow_with_state()
    stage.requestheaders(flow)
    stage.error(flow)
    assert not state.admitted and stage.gate.inflight == 0
    other, other_state = flow_with_state("r2")
    stage.requestheaders(other)  # the freed slot is taken again
    assert other_state.admitted and other.response is None


def test_a_full_queue_sheds_with_429_and_retry_after() -> None:
    stage, metrics = admission(1, max_queue=0)
    first, _ = flow_with_state("r1")
    stage.requestheaders(first)
    flow, state = flow_with_state("r2")
    assert stage.requestheaders(flow) is None
    assert flow.response is not None and flow.response.status_code == 429
    assert flow.response.headers["retry-after"] == str(RETRY_AFTER_SECONDS)
    assert flow.response.headers["x-warden-request-id"] == "r2"
    error = json.loads(flow.response.content or b"")["error"]
    assert (error["type"], error["code"]) == ("rate_limit_error", "server_overloaded")
    assert state.outcome is Outcome.SHED and not state.admitted
    assert state.ledger.verdicts[Direction.REQUEST] is Verdict.SKIPPED
    assert shed_count(metrics, "queue_full") == 1
    stage.response(flow)  # a shed flow holds no slot: ending it does not free the admitted one's
    assert stage.gate.inflight == 1


def test_a_flow_that_already_has_a_response_is_left_alone() -> None:
    stage, metrics = admission(1)
    flow, state = flow_with_state()
    flow.response = http.Response.make(413, b"{}")
    assert stage.requestheaders(flow) is None
    assert not state.admitted and stage.gate.inflight == 0
    assert flow.response.status_code == 413 and state.outcome is Outcome.OK
    assert shed_count(metrics, "queue_full") == 0


def test_a_queued_flow_is_admitted_when_a_slot_is_released() -> None:
    stage, metrics = admission(1, max_queue=1, queue_timeout=5.0)
    first, _ = flow_with_state("r1")
    stage.requestheaders(first)
    flow, state = flow_with_state("r2")

    async def run() -> None:
        pending = stage.requestheaders(flow)
        assert pending is not None
        task = asyncio.ensure_future(pending)
        await asyncio.sleep(0)
        assert metrics.registry.get_sample_value("warden_queued_requests") == 1
        assert stage.gate.waiting == 1 and not state.admitted
        first.response = http.Response.make(200, b"{}")
        stage.response(first)  # the slot goes straight to the waiter
        await asyncio.wait_for(task, 1.0)

    asyncio.run(run())
    assert state.admitted and flow.response is None
    assert stage.gate.inflight == 1 and stage.gate.waiting == 0
    assert metrics.registry.get_sample_value("warden_queued_requests") == 0


def test_a_queued_flow_is_shed_after_the_queue_timeout() -> None:
    stage, metrics = admission(1, max_queue=1, queue_timeout=0.01)
    first, _ = flow_with_state("r1")
    stage.requestheaders(first)
    flow, state = flow_with_state("r2")
    pending = stage.requestheaders(flow)
    assert pending is not None

    async def run() -> None:
        await pending

    asyncio.run(run())
    assert flow.response is not None and flow.response.status_code == 429
    assert state.outcome is Outcome.SHED and not state.admitted
    assert shed_count(metrics, "queue_timeout") == 1 and shed_count(metrics, "queue_full") == 0
    assert stage.gate.inflight == 1 and stage.gate.waiting == 0
    assert metrics.registry.get_sample_value("warden_queued_requests") == 0
