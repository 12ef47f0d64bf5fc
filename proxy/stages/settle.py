"""Stage 5 (response, error): settle how the exchange ended, once, before audit and telemetry read it.

Status, outcome and end time are facts both the audit record and the metrics and spans report; they are
decided here so that the two can never disagree, whatever order they run in.
"""

from __future__ import annotations

from mitmproxy import http

from proxy.errors import CONNECT_TIMED_OUT
from proxy.services import Services
from proxy.state import FlowState, Outcome, get_state

# What a client is told (or would have been) when no response exists: a closed connection is not a status.
STATUS_WITHOUT_RESPONSE = {Outcome.TOO_LARGE: 413, Outcome.UPSTREAM_TIMEOUT: 504, Outcome.CLIENT_ABORTED: 499}


def classify_error(flow: http.HTTPFlow, state: FlowState) -> Outcome:
    """Which side failed, from mitmproxy's error message and how far the exchange got."""
    if state.outcome is not Outcome.OK:
        return state.outcome  # a stage already knows better (timeout, too large, blocked, ...)
    message = (flow.error.msg if flow.error else "").lower()
    if "client" in message:
        # Clients such as the openai SDK hang up as soon as they read `data: [DONE]`, often before the
        # upstream's closing chunk arrives: after the terminal event that is a complete exchange.
        return Outcome.OK if state.answer.stream_complete else Outcome.CLIENT_ABORTED
    if "exceeds the limit" in message:  # proxy/mitm/wire_bounds.py, either direction
        return Outcome.TOO_LARGE
    if CONNECT_TIMED_OUT in message:
        return Outcome.UPSTREAM_TIMEOUT
    return Outcome.UPSTREAM_UNAVAILABLE


class Settle:
    def __init__(self, services: Services) -> None:
        self.clock = services.clock

    def response(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is None or state.finished_at is not None:
            return
        assert flow.response is not None
        state.status = flow.response.status_code
        if state.outcome is Outcome.OK and state.status >= 400:
            state.outcome = Outcome.UPSTREAM_ERROR
        state.finished_at = self.clock()

    def error(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is None or state.finished_at is not None:
            return
        state.outcome = classify_error(flow, state)
        if flow.response is not None:
            state.status = flow.response.status_code
        else:
            state.status = STATUS_WITHOUT_RESPONSE.get(state.outcome, 502)
        state.error_detail = flow.error.msg if flow.error and state.outcome is not Outcome.OK else None
        state.finished_at = self.clock()
