"""Finding mitmproxy's objects behind a flow, and handing it events: the connection handler of a client
connection, the chain of layers under it, and bytes injected as if the upstream had sent them (the pin: see
proxy/mitm/__init__.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mitmproxy import connection, ctx, http
from mitmproxy.proxy import events


def connection_handler(flow: http.HTTPFlow) -> Any:
    """mitmproxy's ConnectionHandler of the flow's client connection (its `transports` hold the sockets), or
    None when the connection is gone (used for the 504 injection and the stream break-off event)."""
    proxyserver: Any = ctx.master.addons.get("proxyserver")
    return proxyserver.connections.get(flow.client_conn.id) if proxyserver else None


MAX_LAYERS = 16  # a reverse proxy's chain is ~5 deep; the bound only guards against a cycle


def layer_chain(root: Any) -> Iterator[Any]:
    """The layers from a connection handler's root down to the first without a child."""
    layer = root
    for _ in range(MAX_LAYERS):
        if layer is None:
            return
        yield layer
        layer = getattr(layer, "layer", None) or getattr(layer, "child_layer", None)



async def inject_from_upstream(handler: Any, server: connection.Server, data: bytes) -> None:
    """Feed `data` to the connection's layers as if the upstream `server` had sent it (the 504 Warden answers
    for an upstream that sent no response headers in time travels mitmproxy's own response path)."""
    await handler.server_event(events.DataReceived(server, data))
