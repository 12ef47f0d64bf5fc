"""Stage 1 (requestheaders, request): request id, route, body size limit, model and stream flag."""

from __future__ import annotations

import re
import uuid

from mitmproxy import http

from proxy.errors import invalid_path
from proxy.headers import header, set_headers, strip_hop_by_hop, wants_close
from proxy.paths import judge_path
from proxy.services import Services
from proxy.stages.base import fail_closed, request_json
from proxy.state import INSPECTED_ROUTES, STATE_KEY, FlowState, Outcome, get_state, record_name

# A client-supplied id is echoed into logs and headers: accept only a bounded, printable token.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


class Correlate:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.limit = services.config.max_body_bytes

    @fail_closed
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        headers = flow.request.headers
        supplied = header(headers, b"x-request-id")
        # Logs and audit records carry the id: one holding PII (an ID number is a sane token too) is replaced.
        sane = _REQUEST_ID.fullmatch(supplied) is not None and self.services.guard.recordable_name(
            supplied, remember=False) == supplied
        request_id = supplied if sane else uuid.uuid4().hex
        if request_id != supplied:
            set_headers(headers, {b"x-request-id": request_id})
        client_close = wants_close(flow.request.http_version, headers)
        strip_hop_by_hop(headers)
        path = judge_path(flow.request.path)
        state = FlowState(
            request_id=request_id,
            route=path.route,
            started=self.services.clock(),
            method=flow.request.method,
            client_close=client_close,
        )
        flow.metadata[STATE_KEY] = state
        self.services.metrics.inflight.inc()
        if path.refused:  # a spelling the model server may route to an inspected route (proxy/paths.py)
            state.outcome = Outcome.BAD_REQUEST
            flow.response = invalid_path(path.resembles).response(request_id)
        # A body over max_body_bytes never gets this far as a request: proxy/mitm/wire_bounds.py answers the 413
        # from the declared Content-Length (or the bytes read so far) before the body is read, and Settle
        # records the outcome from that error.

    @fail_closed
    def request(self, flow: http.HTTPFlow) -> None:
        frame_body_for_http1(flow.request)
        state = get_state(flow)
        if state is None or flow.response is not None:
            return
        # Only bodies that can be JSON: an upload to an unknown route is not parsed for a model name.
        if state.route not in INSPECTED_ROUTES and "json" not in header(flow.request.headers, b"content-type"):
            return
        body = request_json(flow, state, self.limit)
        if body is not None:
            state.requested_model = name = record_name(body.get("model"))
            # The client chooses the name, and it goes into metrics labels, spans and audit records.
            state.model = self.services.guard.recordable_name(name) if name else name
            state.stream = body.get("stream") is True


def frame_body_for_http1(request: http.Request) -> None:
    """Give a buffered HTTP/2 or HTTP/3 request body the Content-Length it may lack. HTTP/2 frames a body by its
    DATA frames, so a client need not send one; mitmproxy forwards such a request to an HTTP/1 upstream without
    Content-Length or chunked encoding, and the upstream then reads no body (RFC 9112 section 6.3) and takes
    the body's bytes for the start of the next request on that connection."""
    if not (request.is_http2 or request.is_http3) or not request.raw_content:
        return
    if "content-length" not in request.headers and "transfer-encoding" not in request.headers:
        request.headers["content-length"] = str(len(request.raw_content))
