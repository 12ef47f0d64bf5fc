"""The fast lane: the body of a relayed SSE answer read off the upstream socket and written to the client without
mitmproxy's per-chunk path, when mitmproxy holds nothing of it (the pin: see proxy/mitm/__init__.py).

Why: a model server's busy streams send one event per read. Through mitmproxy each read wakes the connection's
read task, takes the server-event lock, walks four layers of generators, h11's chunk reader and the HTTP/1
server's per-chunk header lookup, then drains every writer of the connection: `python -m bench.stream_rate`
measured a bare mitmproxy at ~200 us of CPU per event at 4k events/s, where a minimal asyncio relay spends ~50.
The relay callable (proxy/stages/stream.py `SseRelay`) is the same on both paths; only the way bytes reach it and
leave it changes.

How: `arm` puts a `LaneProtocol` in front of the upstream transport's own protocol (mitmproxy's asyncio
StreamReaderProtocol) for the answer's lifetime. Each read goes to it first, and it takes the read only when
mitmproxy is idle on this answer (`Lane.idle`): its read task waits on an empty buffer, its HTTP/1 client layer
has no byte buffered and stands between two chunks, no layer of the chain is paused on a hook, and the client's
connection is writable with its write buffer under the high-water mark (otherwise mitmproxy's own back-pressure
must act). Then the read's whole chunks are unframed (`whole_chunks`), their payload given to the relay as one
piece, and its output written to the client as HTTP/1 chunks in one write. Everything else goes to mitmproxy's
protocol unchanged and in order: a read while mitmproxy is busy, a partial chunk, a malformed size line, and the
terminating chunk, so mitmproxy itself sees the answer end (it calls the relay with b"" and runs its hooks),
sees errors, and sees the connection close. The lane steps aside (the original protocol is put back) once the
terminating chunk or the connection's end has passed it.

Only HTTP/1.1 in clear text on both sides with a chunked answer is armed: TLS records and HTTP/2 frames are
mitmproxy's to make. Internal API used: `ConnectionHandler.transports` and `._server_event_lock`, asyncio's
`StreamReader._buffer/._waiter/._eof`, `Layer._paused/._paused_event_queue`, `HttpLayer.connections/.streams`,
`Http1Client.buf/.state/.read_body/.body_reader`, h11's `ChunkedReader` fields. Anything unexpected at arming
answers False, and mitmproxy's own path carries the answer.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from h11._readers import ChunkedReader
from mitmproxy import http
from mitmproxy.connection import ConnectionState
from mitmproxy.proxy.layers.http import HttpLayer, HttpStream
from mitmproxy.proxy.layers.http._http1 import Http1Client

from proxy.mitm.connections import connection_handler, layer_chain

log = logging.getLogger("warden.fast_lane")

OPEN = ConnectionState.OPEN

# The client's write buffer above which the lane hands reads back to mitmproxy, whose read loop then waits for
# the buffer to drain (asyncio's own default high-water mark for a transport).
CLIENT_HIGH_WATER = 64 * 1024
MAX_LINE = 256  # a chunk size line longer than this (a long extension) is left to h11
# h11's chunk header (h11/_abnf.py `chunk_header`), matched on the same line (up to the first CRLF)
_size_line = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*\r\n").fullmatch

Relay = Callable[[bytes], Iterable[bytes]]


def whole_chunks(data: bytes) -> tuple[list[bytes], int, bool]:
    """The payloads of the complete, non-empty HTTP/1 chunks at the start of `data`, how many bytes they take,
    and whether the terminating chunk's size line (size 0) comes next. Parsing stops there, at an incomplete
    chunk and at anything h11 would not read as a chunk (a bad size line, chunk data not followed by CRLF):
    those bytes are left for mitmproxy. Chunk extensions (`;name=value`) are accepted and dropped, as h11 does."""
    payloads: list[bytes] = []
    pos, end = 0, len(data)
    while pos < end:
        line_end = data.find(b"\r\n", pos, pos + MAX_LINE)
        if line_end < 0:
            break
        match = _size_line(data, pos, line_end + 2)
        if match is None:
            break
        size = int(match.group(1), 16)
        if size == 0:
            return payloads, pos, True
        start = line_end + 2
        stop = start + size
        if stop + 2 > end or data[stop:stop + 2] != b"\r\n":
            break
        payloads.append(data[start:stop])
        pos = stop + 2
    return payloads, pos, False


class Lane:
    """One armed answer: mitmproxy's objects behind it, and what the lane did (for the debug line at the end)."""

    __slots__ = ("client_conn", "client_transport", "handler", "http1", "layers", "original", "passed", "read_body",
                 "reader", "relay", "stream", "streaming_state", "taken", "transport", "waiting_state")

    def __init__(self, *, handler: Any, transport: asyncio.Transport, original: asyncio.BaseProtocol,
                 reader: asyncio.StreamReader, client_transport: asyncio.Transport, client_conn: Any,
                 http1: Http1Client, stream: HttpStream, layers: tuple[Any, ...], relay: Relay) -> None:
        self.handler = handler
        self.transport = transport
        self.original = original
        self.reader = reader
        self.client_transport = client_transport
        self.client_conn = client_conn
        self.http1 = http1
        self.stream = stream
        self.layers = layers
        self.relay = relay
        # mitmproxy's states are bound methods: made once here, compared on every read
        self.read_body = http1.read_body
        self.streaming_state = stream.state_stream_response_body
        self.waiting_state = stream.state_wait_for_response_headers  # its responseheaders hook is running
        self.taken = 0
        self.passed = 0

    def idle(self) -> bool:
        """mitmproxy holds nothing of this answer and would hand the next read straight to the relay. A few
        attribute reads: this runs on every read of the answer."""
        state = self.stream.server_state
        if state != self.streaming_state:
            if state != self.waiting_state:  # the answer is over (done, errored, killed): nothing is the lane's
                self.step_aside()
            return False
        reader: Any = self.reader
        if reader._buffer or reader._waiter is None or reader._eof:
            return False  # its read task has bytes to process, is busy (draining), or has seen the end
        if self.handler._server_event_lock.locked():
            return False
        http1: Any = self.http1
        body: Any = http1.body_reader
        if (http1.buf or http1.state != self.read_body or body.__class__ is not ChunkedReader
                or body._bytes_in_chunk or body._bytes_to_discard or body._reading_trailer):
            return False
        for layer in self.layers:
            if layer._paused is not None or layer._paused_event_queue:
                return False
        client = self.client_transport
        # OPEN is CAN_READ | CAN_WRITE: compared by identity (Flag's `&` is a Python call per read)
        return (self.client_conn.state is OPEN and not client.is_closing()
                and client.get_write_buffer_size() < CLIENT_HIGH_WATER)

    def step_aside(self) -> None:
        if self.transport.get_protocol() is not self.original:
            self.transport.set_protocol(self.original)
            log.debug("fast lane done", extra={"reads_taken": self.taken, "reads_passed": self.passed})


class LaneProtocol(asyncio.Protocol):
    """In front of mitmproxy's protocol on the upstream transport: takes the reads it can, forwards the rest."""

    def __init__(self, lane: Lane) -> None:
        self.lane = lane

    def data_received(self, data: bytes) -> None:
        lane = self.lane
        original: Any = lane.original
        if not lane.idle():
            lane.passed += 1
            original.data_received(data)
            return
        payloads, used, ended = whole_chunks(data)
        if payloads:
            lane.taken += 1
            try:
                # Piece by piece: a long read's batches are each written before the next is scanned.
                for piece in lane.relay(payloads[0] if len(payloads) == 1 else b"".join(payloads)):
                    if piece:
                        lane.client_transport.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            except Exception:
                # The relay guards its own failures (it ends the stream closed); this is a bug of the lane's
                # own. Fail closed: the upstream connection is cut, mitmproxy ends the exchange as broken off.
                log.exception("fast lane failed; cutting the upstream connection")
                lane.step_aside()
                lane.transport.abort()
                return
            lane.handler.timeout_watchdog.register_activity()
        if used < len(data):
            rest = data[used:]
            lane.passed += 1
            if ended:
                lane.step_aside()  # the terminating chunk: mitmproxy's from here on, and so is the connection
            original.data_received(rest)

    def eof_received(self) -> bool | None:
        lane = self.lane
        lane.step_aside()
        result: bool | None = lane.original.eof_received()  # type: ignore[attr-defined]
        return result

    def connection_lost(self, exc: Exception | None) -> None:
        lane = self.lane
        lane.step_aside()
        lane.original.connection_lost(exc)

    def pause_writing(self) -> None:
        self.lane.original.pause_writing()

    def resume_writing(self) -> None:
        self.lane.original.resume_writing()


def arm(flow: http.HTTPFlow, relay: Relay) -> bool:
    """Put the fast lane in front of the flow's upstream connection for this answer, whose body mitmproxy would
    pass to `relay` (the flow's `response.stream`). Called from the responseheaders hook, while mitmproxy waits
    for it. False, and nothing changed, when the exchange is not one the lane can carry."""
    response = flow.response
    if response is None or flow.client_conn.tls or flow.server_conn.tls:
        return False
    if not (flow.request.http_version == "HTTP/1.1" and response.http_version == "HTTP/1.1"):
        return False
    encodings = [v for k, v in response.headers.fields if k.lower() == b"transfer-encoding"]
    if len(encodings) != 1 or encodings[0].strip().lower() != b"chunked":
        return False
    handler = connection_handler(flow)
    if handler is None or handler.layer.context.options.store_streamed_bodies:
        return False  # gone, or mitmproxy is to keep a copy of each chunk it relays (the lane would not)
    server_io = handler.transports.get(flow.server_conn)
    client_io = handler.transports.get(flow.client_conn)
    if server_io is None or client_io is None or server_io.reader is None or client_io.writer is None:
        return False
    reader, server_writer, client_writer = server_io.reader, server_io.writer, client_io.writer
    if not isinstance(reader, asyncio.StreamReader) or not isinstance(client_writer, asyncio.StreamWriter) \
            or not isinstance(server_writer, asyncio.StreamWriter):
        return False
    transport, client_transport = server_writer.transport, client_writer.transport
    original = transport.get_protocol()
    if isinstance(original, LaneProtocol):  # a lane of an earlier answer on this connection, never stepped aside
        original = original.lane.original
    if not isinstance(original, asyncio.StreamReaderProtocol) or not isinstance(transport, asyncio.Transport) \
            or not isinstance(client_transport, asyncio.Transport):
        return False
    layers = tuple(layer_chain(handler.layer))
    http_layer = next((layer for layer in layers if isinstance(layer, HttpLayer)), None)
    if http_layer is None:
        return False
    # The upstream's layers: mitmproxy's HttpClient, its child the HTTP/1 client (TLS would sit between).
    upstream_layers = tuple(layer_chain(http_layer.connections.get(flow.server_conn)))
    http1 = upstream_layers[-1] if upstream_layers else None
    stream = next((s for s in http_layer.streams.values() if getattr(s, "flow", None) is flow), None)
    if not isinstance(http1, Http1Client) or len(upstream_layers) != 2 or not isinstance(stream, HttpStream) \
            or response.stream is not relay:
        return False
    lane = Lane(handler=handler, transport=transport, original=original, reader=reader,
                client_transport=client_transport, client_conn=flow.client_conn, http1=http1, stream=stream,
                layers=(*layers, *upstream_layers, stream), relay=relay)
    transport.set_protocol(LaneProtocol(lane))
    return True
