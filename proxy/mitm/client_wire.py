"""The last bytes of a streamed response that mitmproxy has given up on (the upstream broke off), written to the
client through the connection's own framing and TLS.

mitmproxy's error path ends such a response by closing an HTTP/1 connection or resetting an HTTP/2 stream, and
offers no command to send more first. So the bytes are framed and encrypted here with the objects mitmproxy
itself uses for that connection, and written to its transport: an HTTP/1 chunk plus the terminating chunk,
or an HTTP/2 DATA frame that ends the stream (mitmproxy then finds the stream closed and resets nothing),
passed through the client TLS layer's `send_data` when the listener serves TLS. Writing the plain bytes to a
TLS connection would corrupt it: the client would read them as a broken TLS record.

Internal API of mitmproxy (the pin: see proxy/mitm/__init__.py): the connection handler's layer chain
(`NextLayer.layer`, the mode and TLS layers' `child_layer`), `HttpLayer.connections` and `.streams`,
`Http2Server.h2_conn`, `TLSLayer.send_data`. Anything unexpected answers False, and mitmproxy's own ending stands.
"""

from __future__ import annotations

from typing import Any

import h2.exceptions
from mitmproxy import http
from mitmproxy.connection import ConnectionState
from mitmproxy.proxy.commands import SendData
from mitmproxy.proxy.layers.http import HttpLayer
from mitmproxy.proxy.layers.http._http2 import Http2Server
from mitmproxy.proxy.layers.tls import ClientTLSLayer

from proxy.mitm.connections import connection_handler, layer_chain


def write_to_client(flow: http.HTTPFlow, data: bytes) -> bool:
    """Append `data` to the flow's response, already on its way to the client, as its last bytes. False when
    that cannot be done (the connection is gone or not writable, an HTTP/2 stream is closed or has no window
    left for `data`, a layer is not what mitmproxy 12 builds); nothing has been written then."""
    assert flow.response is not None
    handler = connection_handler(flow)
    transport = handler.transports.get(flow.client_conn) if handler else None
    writer = transport.writer if transport else None
    if writer is None or writer.is_closing() or not flow.client_conn.state & ConnectionState.CAN_WRITE:
        return False
    layers = list(layer_chain(handler.layer))
    tls = next((layer for layer in layers if isinstance(layer, ClientTLSLayer)), None)
    if flow.client_conn.tls and tls is None:
        return False
    wire: bytes | None
    if flow.request.http_version.startswith("HTTP/1"):
        wire = _http1_tail(flow, data)
    elif flow.request.http_version == "HTTP/2.0":
        http_layer = next((layer for layer in layers if isinstance(layer, HttpLayer)), None)
        wire = _http2_tail(http_layer, flow, data) if http_layer is not None else None
    else:
        return False
    if wire is None:
        return False
    if tls is None:
        writer.write(wire)
    else:
        for command in tls.send_data(wire):  # the TLS records, as SendData commands
            if isinstance(command, SendData):
                writer.write(command.data)
    return True


def _http1_tail(flow: http.HTTPFlow, data: bytes) -> bytes:
    """A chunked body gets `data` as a chunk plus the terminating chunk: the client sees a complete response."""
    assert flow.response is not None
    if "chunked" in flow.response.headers.get("transfer-encoding", "").lower():
        return b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)
    return data


def _http2_tail(http_layer: Any, flow: http.HTTPFlow, data: bytes) -> bytes | None:
    """The HTTP/2 frames that carry `data` and end the flow's stream, or None."""
    server = http_layer.connections.get(flow.client_conn)
    if not isinstance(server, Http2Server):
        return None
    stream_id = next((sid for sid, stream in http_layer.streams.items() if getattr(stream, "flow", None) is flow),
                     None)
    if stream_id is None or not server.is_open_for_us(stream_id):
        return None
    conn = server.h2_conn
    # One frame, within the client's flow-control window: h2 would otherwise raise or have to wait.
    if len(data) > min(conn.local_flow_control_window(stream_id), conn.max_outbound_frame_size):
        return None
    try:
        conn.send_data(stream_id, data, end_stream=True)
    except h2.exceptions.H2Error:
        return None
    frames: bytes = conn.data_to_send()
    return frames
