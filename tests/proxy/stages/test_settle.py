from __future__ import annotations

from mitmproxy.test import tflow

from proxy.config import resolve
from proxy.guard.engine import Guard
from proxy.services import Services
from proxy.stages.settle import Settle, classify_error
from proxy.state import STATE_KEY, FlowState, Outcome, Route
from proxy.telemetry.metrics import Metrics


def test_classify_error() -> None:
    flow = tflow.tflow(err=True)
    state = FlowState("r", Route.CHAT, 0.0)
    assert flow.error is not None
    flow.error.msg = "Client disconnected."
    assert classify_error(flow, state) is Outcome.CLIENT_ABORTED
    state.answer.stream_complete = True
    assert classify_error(flow, state) is Outcome.OK
    flow.error.msg = "Connection refused"
    assert classify_error(flow, state) is Outcome.UPSTREAM_UNAVAILABLE
    state.outcome = Outcome.UPSTREAM_TIMEOUT
    assert classify_error(flow, state) is Outcome.UPSTREAM_TIMEOUT


def test_settles_once_with_status_outcome_and_end_time() -> None:
    services = Services(resolve({"upstream": "http://127.0.0.1:1"}, env={}), Metrics(), Guard.load([]),
                        clock=lambda: 7.0)
    flow = tflow.tflow(resp=True)
    assert flow.response is not None
    flow.response.status_code = 503
    state = FlowState("r", Route.CHAT, 0.0)
    flow.metadata[STATE_KEY] = state
    Settle(services).response(flow)
    assert (state.status, state.outcome, state.finished_at) == (503, Outcome.UPSTREAM_ERROR, 7.0)
    flow.response.status_code = 200
    Settle(services).response(flow)  # a second call changes nothing
    assert state.status == 503


def test_an_error_without_a_response_gets_a_status_that_says_so() -> None:
    services = Services(resolve({"upstream": "http://127.0.0.1:1"}, env={}), Metrics(), Guard.load([]))
    flow = tflow.tflow(err=True)
    assert flow.error is not None
    flow.error.msg = "Client disconnected."
    state = FlowState("r", Route.CHAT, 0.0)
    flow.metadata[STATE_KEY] = state
    Settle(services).error(flow)
    assert (state.status, state.outcome) == (499, Outcome.CLIENT_ABORTED)
    assert state.error_detail == "Client disconnected."
