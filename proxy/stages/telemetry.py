"""Stage 5 (response, error): close the books on an exchange: outcome, status, metrics."""

from __future__ import annotations

import json
import logging

from mitmproxy import http

from proxy.services import Services
from proxy.stages.stream import record_usage
from proxy.state import FlowState, Outcome, get_state

log = logging.getLogger("warden.exchange")


def classify_error(flow: http.HTTPFlow, state: FlowState) -> Outcome:
    """Which side failed, from mitmproxy's error message and how far the exchange got."""
    if state.outcome is not Outcome.OK:
        return state.outcome  # a stage already knows better (timeout, too large, blocked, ...)
    message = (flow.error.msg if flow.error else "").lower()
    if "client" in message:
        # Clients such as the openai SDK hang up as soon as they read `data: [DONE]`, often before the
        # upstream's closing chunk arrives: after the terminal event that is a complete exchange.
        return Outcome.OK if state.stream_complete else Outcome.CLIENT_ABORTED
    if "body_size_limit" in message or "exceeds" in message:
        return Outcome.TOO_LARGE
    return Outcome.UPSTREAM_UNAVAILABLE


class Telemetry:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.metrics = services.metrics

    def response(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is None or state.done:
            return
        assert flow.response is not None
        state.status = flow.response.status_code
        if state.outcome is Outcome.OK and state.status >= 400:
            state.outcome = Outcome.UPSTREAM_ERROR
        if not flow.response.stream and state.usage.prompt_tokens is None:
            self._usage_from_body(flow, state)
        self._finish(flow, state)

    def error(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is None or state.done:
            return
        state.outcome = classify_error(flow, state)
        if flow.response is not None:
            state.status = flow.response.status_code
        else:
            state.status = {Outcome.TOO_LARGE: 413, Outcome.UPSTREAM_TIMEOUT: 504,
                            Outcome.CLIENT_ABORTED: 499}.get(state.outcome, 502)
        state.error_detail = flow.error.msg if flow.error and state.outcome is not Outcome.OK else None
        self._finish(flow, state)

    def _usage_from_body(self, flow: http.HTTPFlow, state: FlowState) -> None:
        assert flow.response is not None
        content = flow.response.raw_content
        if not content or b'"usage"' not in content:
            return
        try:
            body = json.loads(flow.response.get_content(strict=False) or b"")
        except (ValueError, UnicodeDecodeError):
            return
        if isinstance(body, dict):
            record_usage(state, body.get("usage"))

    def _finish(self, flow: http.HTTPFlow, state: FlowState) -> None:
        state.done = True
        state.finished_at = self.services.clock()
        m = self.metrics
        model = m.models.label(state.model)
        route = state.route.value
        status = state.status or 0
        m.inflight.dec()
        m.requests_child(route, model, f"{status // 100}xx", state.outcome.value).inc()
        m.duration_child(route, model).observe(state.finished_at - state.started)
        if state.first_chunk_at is not None:
            m.ttft_child(route, model).observe(state.first_chunk_at - state.started)
        usage = state.usage
        if usage.prompt_tokens:
            m.prompt_tokens_child(model).inc(usage.prompt_tokens)
        if usage.completion_tokens:
            m.generation_tokens_child(model).inc(usage.completion_tokens)
        if usage.cached_tokens:
            m.cached_prompt_tokens_child(model).inc(usage.cached_tokens)
        level = logging.DEBUG if state.outcome is Outcome.OK else logging.INFO
        if not log.isEnabledFor(level):
            return
        log.log(
            level,
            "exchange",
            extra={"request_id": state.request_id, "route": route, "status": status,
                   "outcome": state.outcome.value, "duration_ms": round((state.finished_at - state.started) * 1000, 2),
                   "stream": state.stream},
        )
