"""mitmproxy's own error pages as OpenAI-shaped JSON, on the HTTP/1 and HTTP/2 paths (proxy/errors.py `mitm_error`
decides what they say). The pin: see proxy/mitm/__init__.py."""

from __future__ import annotations

from typing import Any

from mitmproxy import http

from proxy.errors import RESPONSE_TIMED_OUT, SERVER_HEADER, UPSTREAM_TIMEOUT_MARK, mitm_error


def install_mitmproxy_error_pages() -> None:
    """Replace mitmproxy 12's HTML error pages with OpenAI-shaped JSON (HTTP/1 and HTTP/2 paths).

    Both call module-level functions that we swap; covered by the e2e tests,
    which fail loudly if a new release moves them.
    """
    from mitmproxy.net.http import http1
    from mitmproxy.proxy.layers.http import _http1, _http2

    def make_error_response(status_code: int, message: str = "") -> bytes:
        error = mitm_error(status_code, message)
        resp = http.Response.make(
            error.status,
            error.body(),
            http.Headers(Server=SERVER_HEADER, Connection="close", Content_Type="application/json"),
        )
        data: bytes = http1.assemble_response(resp)
        return data

    def format_error(status_code: int, message: str) -> bytes:
        return mitm_error(status_code, message).body()

    _http1.make_error_response = make_error_response
    _mark_upstream_timeouts()
    _http2.format_error = format_error  # type: ignore[attr-defined]
    _json_h2_error_pages()


def _json_h2_error_pages() -> None:
    """mitmproxy 12's HTTP/2 server writes its error pages with `content-type: text/html` whatever their body:
    an error it answers before any response headers (a body over the size limit, an upstream that failed) is
    sent here the same way, but labelled as the JSON it is. Wraps `Http2Server._handle_event`; idempotent."""
    from mitmproxy.proxy.commands import SendData
    from mitmproxy.proxy.layers.http._events import ResponseProtocolError
    from mitmproxy.proxy.layers.http._http2 import Http2Server

    original = Http2Server._handle_event
    if getattr(original, "warden", False):
        return

    def _handle_event(self: Any, event: Any) -> Any:
        if isinstance(event, ResponseProtocolError) and not self.is_closed(event.stream_id) \
                and self.is_open_for_us(event.stream_id):
            stream = self.h2_conn.streams[event.stream_id]
            status = event.code.http_status_code()
            if not stream.state_machine.headers_sent and status is not None:
                error = mitm_error(status, event.message)
                self.h2_conn.send_headers(event.stream_id, [
                    (b":status", b"%d" % error.status), (b"server", SERVER_HEADER.encode()),
                    (b"content-type", b"application/json"),
                ])
                self.h2_conn.send_data(event.stream_id, error.body(), end_stream=True)
                yield SendData(self.conn, self.h2_conn.data_to_send())
                return
        yield from original(self, event)

    _handle_event.warden = True  # type: ignore[attr-defined]
    Http2Server._handle_event = _handle_event  # type: ignore[method-assign]


def _mark_upstream_timeouts() -> None:
    """An upstream error on a flow the deadline marked (UPSTREAM_TIMEOUT_MARK) says so in its message, which the
    error pages above turn into the 504. Wraps mitmproxy 12's `HttpStream.handle_protocol_error`, the one place
    its error message is made for the client; idempotent."""
    from mitmproxy.proxy.layers.http import HttpStream
    from mitmproxy.proxy.layers.http._events import ResponseProtocolError

    original = HttpStream.handle_protocol_error
    if getattr(original, "warden", False):
        return

    def handle_protocol_error(self: Any, event: Any) -> Any:
        seconds = self.flow.metadata.get(UPSTREAM_TIMEOUT_MARK)
        if seconds is not None and isinstance(event, ResponseProtocolError):
            event = ResponseProtocolError(event.stream_id, f"{RESPONSE_TIMED_OUT} {seconds:g} s", event.code)
        return (yield from original(self, event))

    handle_protocol_error.warden = True  # type: ignore[attr-defined]
    HttpStream.handle_protocol_error = handle_protocol_error  # type: ignore[method-assign]
