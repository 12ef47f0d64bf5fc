"""Tracing (requestheaders, request): the SERVER span that continues the client's `traceparent`, and the
CLIENT span whose context is injected into the upstream request. The telemetry stage ends both.

Placed after the request inspection, so a request the guard answers locally gets no CLIENT span and the
injected `traceparent` is the one of the call that really reaches the model server. With tracing off
(no `OTEL_*` variables), the only work is reading the client's trace id for the logs; its `traceparent`
then passes to the upstream untouched.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from mitmproxy import http

from proxy.headers import header
from proxy.services import Services
from proxy.state import get_state
from proxy.telemetry.tracing import trace_id_from_traceparent

log = logging.getLogger("warden.trace")


class Trace:
    def __init__(self, services: Services) -> None:
        self.tracing = services.tracing
        self.enabled = services.tracing.enabled
        self.lora = services.lora
        self.backend = services.config.backend
        upstream = urlsplit(services.config.upstream)
        self.host = upstream.hostname or ""
        self.port = upstream.port or (443 if upstream.scheme == "https" else 80)

    # Tracing fails open (DESIGN section 10.6: only telemetry export may): a span that cannot be made is
    # logged, and the exchange goes on untraced.

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is None:
            return
        if not self.enabled:
            traceparent = header(flow.request.headers, b"traceparent")
            if traceparent:
                state.provenance.trace_id = trace_id_from_traceparent(traceparent)
            return
        try:
            scheme = "https" if flow.client_conn.tls_established else "http"
            state.provenance.spans = self.tracing.start_server(flow.request.headers, state, flow.request.path, scheme)
        except Exception:
            log.exception("cannot start the server span", extra={"request_id": state.request_id})

    def request(self, flow: http.HTTPFlow) -> None:
        if not self.enabled:
            return
        state = get_state(flow)
        spans = state.provenance.spans if state is not None else None
        if state is None or spans is None or flow.response is not None:
            return  # answered locally (blocked, too large, denied): no upstream call to trace
        try:
            provider = (self.lora.provider if self.lora is not None else None) or self.backend
            self.tracing.start_client(spans, flow.request.headers, state, provider, self.host, self.port)
        except Exception:
            log.exception("cannot start the client span", extra={"request_id": state.request_id})
