"""Bounds on what a client may make mitmproxy hold, patched into mitmproxy 12's HTTP/1 server layer and HTTP
stream (`Http1Server.read_headers`, `.read_body`, `.send`, `.mark_done`, `HttpStream.check_body_size`; the pin:
see proxy/mitm/__init__.py); the whole-process tests in tests/e2e/test_bounds.py fail loudly if a release
moves them.

- **The request head.** mitmproxy buffers a head until its blank line without limit (its own comment: "FIXME:
  protect against header size DoS"): 100 MiB without a line end raised the RSS by 121 MiB. A head over
  `max_header_bytes` gets 431 and the connection closes (nginx: large_client_header_buffers). A head still
  incomplete after `header_timeout` gets 408 (nginx: client_header_timeout), and a keep-alive connection idle
  for `idle_timeout` between requests is closed (nginx: keepalive_timeout); the first request of a connection
  must start within `header_timeout`. Without these a half-open connection was held for ever.
- **Bodies, per direction.** mitmproxy's `body_size_limit` limits requests and answers alike, so a 20 MB
  embeddings answer became a 502 under the 8 MiB request limit. Requests are held to `max_body_bytes`, whole
  answers to `max_response_bytes`; streamed answers are framed event by event (proxy/sse.py) and never reach
  this check. The messages name Warden's limits, not mitmproxy's option.
- **Lingering close.** A client that sends its whole body before it reads (`requests`, `urllib`) got a reset
  instead of the 413: the connection was closed with its body unread, and the kernel answers unread data with
  RST. Now the 413 is sent, the write side is shut, and the rest of the body is read and discarded, bounded by
  LINGER_BYTES and LINGER_SECONDS (nginx: lingering_close).

The timeouts are enforced by one sweep a second over the live HTTP/1 server layers (`ConnectionSweeper`), not by
a timer per connection.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import weakref
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from typing import Any

from mitmproxy import flow as mflow
from mitmproxy.connection import ConnectionState
from mitmproxy.net.http.http1 import expected_http_body_size
from mitmproxy.proxy import commands, events
from mitmproxy.proxy.layer import CommandGenerator
from mitmproxy.proxy.layers.http import HttpLayer, HttpStream, SendHttp, _http1
from mitmproxy.proxy.layers.http._events import ErrorCode, RequestProtocolError, ResponseProtocolError
from mitmproxy.proxy.layers.http._hooks import HttpErrorHook, HttpRequestHeadersHook, HttpResponseHeadersHook
from mitmproxy.proxy.layers.http._http1 import Http1Server

from proxy.mitm.connections import layer_chain

log = logging.getLogger("warden.wire")

LINGER_BYTES = 64 * 1024 * 1024  # body bytes read and discarded after a 413, at most
LINGER_SECONDS = 10.0  # ... and for at most this long (nginx's lingering_time is 30 s)
SWEEP_SECONDS = 1.0
_HEAD_END = re.compile(rb"\n\r?\n")  # h11's blank line: the end of a head


@dataclass(frozen=True, slots=True)
class WireLimits:
    max_header_bytes: int
    header_timeout: float
    idle_timeout: float
    request_body_bytes: int
    response_body_bytes: int


class Wire:
    """The limits in force and the live HTTP/1 server layers they are enforced on. `count(reason)` is called for
    every connection closed by a bound (a metric); reasons: header_too_large, header_timeout, idle_timeout,
    linger_done."""

    def __init__(self, limits: WireLimits, count: Callable[[str], None] = lambda reason: None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.count = count
        self.clock = clock
        self.servers: weakref.WeakSet[Http1Server] = weakref.WeakSet()


def install(wire: Wire) -> None:
    """Patch mitmproxy's HTTP/1 server and HTTP stream (once per process) and enforce `wire`'s limits. The
    patches are process-wide, as mitmproxy's classes are: the wire in force lives on the patched class."""
    if not hasattr(Http1Server, "warden_wire"):
        _patch_http1_server()
        HttpStream.check_body_size = _check_body_size  # type: ignore[method-assign]
    Http1Server.warden_wire = wire  # type: ignore[attr-defined]


def _wire() -> Wire:
    wire: Wire = Http1Server.warden_wire  # type: ignore[attr-defined]
    return wire


# -- the HTTP/1 server layer ----------------------------------------------------------------------------------

def _patch_http1_server() -> None:
    original_init = Http1Server.__init__
    original_read_headers = Http1Server.read_headers
    original_read_body = Http1Server.read_body
    original_send = Http1Server.send
    original_mark_done = Http1Server.mark_done

    def __init__(self: Any, context: Any) -> None:
        original_init(self, context)
        wire = _wire()
        self.warden_waiting_since = wire.clock()  # since when a head is awaited (connection start, last answer)
        self.warden_head_started = None  # first byte of the head being read (monotonic seconds)
        self.warden_lingering_since = None  # the 413 was sent; the body is being discarded
        self.warden_discarded = 0
        wire.servers.add(self)

    def read_headers(self: Any, event: events.ConnectionEvent) -> CommandGenerator[None]:
        if isinstance(event, events.DataReceived) and self.buf:
            wire = _wire()
            if self.warden_head_started is None:
                self.warden_head_started = wire.clock()
            limit = wire.limits.max_header_bytes
            if limit and len(self.buf) > limit and not _HEAD_END.search(bytes(self.buf)[: limit + 4]):
                wire.count("header_too_large")
                yield commands.SendData(self.conn, _http1.make_error_response(
                    431, f"The request head exceeds the limit of {limit} bytes."))
                yield commands.CloseConnection(self.conn)
                self.state = self.done
                return
        yield from original_read_headers(self, event)
        if self.state != self.read_headers:
            self.warden_head_started = None

    # read_body and send run for every piece of a body (send: every relayed event of a stream): they hand back
    # mitmproxy's own generator unless there is something to do, instead of wrapping it in one more.
    def read_body(self: Any, event: events.Event) -> CommandGenerator[None]:
        if self.warden_lingering_since is not None and isinstance(event, events.DataReceived):
            return linger(self, event)
        return original_read_body(self, event)

    def linger(self: Any, event: events.DataReceived) -> CommandGenerator[None]:
        self.warden_discarded += len(event.data)
        if self.warden_discarded > LINGER_BYTES:
            _wire().count("linger_done")
            yield commands.CloseConnection(self.conn)
            self.state = self.done
            return
        yield from original_read_body(self, event)

    def send(self: Any, event: Any) -> CommandGenerator[None]:
        if (isinstance(event, ResponseProtocolError) and event.code is ErrorCode.REQUEST_TOO_LARGE
                and not self.response and not self.request_done
                and self.conn.state & ConnectionState.CAN_WRITE):
            return too_large(self, event)
        return original_send(self, event)

    def too_large(self: Any, event: ResponseProtocolError) -> CommandGenerator[None]:
        # Lingering close: the 413, our write side shut, the rest of the body read (read_body) and dropped.
        # The stream is errored already, so what is read goes nowhere.
        yield commands.SendData(self.conn, _http1.make_error_response(413, event.message))
        yield commands.CloseTcpConnection(self.conn, half_close=True)
        self.warden_lingering_since = _wire().clock()
        self.warden_discarded = 0

    def mark_done(self: Any, *, request: bool = False, response: bool = False) -> CommandGenerator[None]:
        yield from original_mark_done(self, request=request, response=response)
        if self.state == self.read_headers and self.warden_head_started is None:
            self.warden_waiting_since = _wire().clock()

    Http1Server.__init__ = __init__  # type: ignore[method-assign]
    Http1Server.read_headers = read_headers  # type: ignore[method-assign]
    Http1Server.read_body = read_body  # type: ignore[method-assign]
    Http1Server.send = send  # type: ignore[method-assign]
    Http1Server.mark_done = mark_done  # type: ignore[method-assign]


# -- the HTTP stream: body limits per direction ---------------------------------------------------------------

def body_too_large_message(request: bool, limit: int) -> str:
    if request:
        return f"The request body exceeds the limit of {limit} bytes."
    return f"The model server's answer exceeds the limit of {limit} bytes."  # errors.ANSWER_TOO_LARGE


def _declares_length(fields: Iterable[tuple[bytes, bytes]]) -> bool:
    # A loop, not any() over a generator: 0.29 against 0.68 us, four times per exchange.
    for name, _ in fields:  # noqa: SIM110
        if len(name) == 14 and name.lower() == b"content-length":
            return True
    return False


def _check_body_size(self: Any, request: bool) -> Generator[Any, Any, bool]:
    """mitmproxy 12's `HttpStream.check_body_size` with a limit per direction and Warden's own message (its
    `stream_large_bodies` branch is left out: Warden never sets that option). True when the body is over its
    limit and the exchange was ended."""
    limits = Http1Server.warden_wire.limits  # type: ignore[attr-defined]  # _wire(), inline on this hot path
    limit = limits.request_body_bytes if request else limits.response_body_bytes
    if not limit:
        return False
    buffered = self.request_body_buf if request else self.response_body_buf
    if buffered:
        expected_size: int | None = len(buffered)
    else:
        message = self.flow.request if request else self.flow.response
        if not _declares_length(message.headers.fields):
            # Without Content-Length, expected_http_body_size gives 0, -1 (until close) or None (chunked), or
            # raises: never over a limit here (a chunked or unbounded body is cut as it is buffered). Its header
            # lookups cost this hot path (four calls per exchange) as much as the rest of this check.
            return False
        try:
            expected_size = expected_http_body_size(self.flow.request, None if request else self.flow.response)
        except ValueError:
            expected_size = None  # as mitmproxy: a malformed Content-Length is not cut here
    if expected_size is None or expected_size <= limit:
        return False
    if request and not self.request_body_buf:
        yield HttpRequestHeadersHook(self.flow)
    if not request and not self.response_body_buf:
        yield HttpResponseHeadersHook(self.flow)
    message = body_too_large_message(request, limit)
    code = ErrorCode.REQUEST_TOO_LARGE if request else ErrorCode.RESPONSE_TOO_LARGE
    self.flow.error = mflow.Error(message)
    yield HttpErrorHook(self.flow)
    yield SendHttp(ResponseProtocolError(self.stream_id, message, code), self.context.client)
    self.client_state = self.state_errored
    if not request:
        yield SendHttp(RequestProtocolError(self.stream_id, message, code), self.context.server)
        self.server_state = self.state_errored
    self.flow.live = False
    return True


# -- the sweep: head and idle timeouts, linger time -----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Expiry:
    server: Http1Server
    reason: str  # header_timeout | idle_timeout | linger_done
    answer: bytes  # what the client is told first (b"" for nothing)


def expired(wire: Wire, servers: Iterable[Http1Server], now: float) -> list[Expiry]:
    """The connections a bound has run out on. Pure: the caller closes them."""
    limits = wire.limits
    out: list[Expiry] = []
    for server in servers:
        s: Any = server
        if s.warden_lingering_since is not None:
            if now - s.warden_lingering_since > LINGER_SECONDS:
                out.append(Expiry(server, "linger_done", b""))
        elif s.state == s.read_headers:
            if s.buf:
                started = s.warden_head_started or s.warden_waiting_since
                if limits.header_timeout and now - started > limits.header_timeout:
                    answer = _http1.make_error_response(
                        408, f"The request head was not complete within {limits.header_timeout:g} s.")
                    out.append(Expiry(server, "header_timeout", answer))
            else:
                first = s.stream_id == 1  # no request yet on this connection
                bound = limits.header_timeout if first else limits.idle_timeout
                if bound and now - s.warden_waiting_since > bound:
                    out.append(Expiry(server, "header_timeout" if first else "idle_timeout", b""))
    return out


class ConnectionSweeper:
    """Closes, once a second, the connections whose head, idle or linger time ran out."""

    def __init__(self, wire: Wire, proxyserver: Any) -> None:
        self.wire = wire
        self.proxyserver = proxyserver

    def sweep(self) -> int:
        closed = self._sweep_undecided()
        for expiry in expired(self.wire, list(self.wire.servers), self.wire.clock()):
            client = expiry.server.conn
            handler = self.proxyserver.connections.get(client.id)
            io = handler.transports.get(client) if handler is not None else None
            if io is None or io.handler is None:
                continue
            if expiry.answer and not client.tls and io.writer is not None and not io.writer.is_closing():
                io.writer.write(expiry.answer)  # plain HTTP only: on TLS the bytes would break the record stream
            io.handler.cancel(expiry.reason)
            self.wire.servers.discard(expiry.server)
            self.wire.count(expiry.reason)
            closed += 1
        return closed

    def _sweep_undecided(self) -> int:
        """Connections that never got as far as HTTP (nothing sent, or a TLS handshake never finished): mitmproxy
        picks the protocol from the first bytes, so until then no HTTP layer exists to hold a bound."""
        bound = self.wire.limits.header_timeout
        if not bound:
            return 0
        closed = 0
        now = time.time()  # mitmproxy stamps connections with the wall clock
        for handler in list(self.proxyserver.connections.values()):
            client = handler.client
            if now - client.timestamp_start <= bound:
                continue
            if any(isinstance(layer, HttpLayer) for layer in layer_chain(handler.layer)):
                continue
            io = handler.transports.get(client)
            if io is not None and io.handler is not None:
                io.handler.cancel("header_timeout")
                self.wire.count("header_timeout")
                closed += 1
        return closed

    async def run(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                self.sweep()
            except Exception:  # a bound not enforced this second must not stop the next sweeps
                log.exception("connection sweep failed")
