"""Reverse mode on listening sockets someone else bound: the workers of `warden serve --workers N` accept on
the supervisor's sockets (proxy/supervisor.py). The pin: see proxy/mitm/__init__.py.

mitmproxy 12's `ReverseInstance` binds in `AsyncioServerInstance.listen(host, port)` with
`asyncio.start_server(handler, host, port)` and has no option for `reuse_port` or an existing socket
(mitmproxy/proxy/mode_servers.py), so `listen` is replaced for reverse mode only, in the worker's process
only. Closing the server (drain: `server=False`) closes this process's descriptors; the kernel's socket and
its accept queue live on while the supervisor or another worker still holds them.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any


def serve_on(sockets: list[socket.socket]) -> None:
    """Make reverse mode accept on `sockets` (bound and listening) instead of binding its HOST:PORT."""
    from mitmproxy.proxy import mode_servers

    if not sockets:
        raise ValueError("serve_on needs at least one listening socket")

    async def listen(self: Any, host: str, port: int) -> list[Any]:
        return [await asyncio.start_server(self.handle_stream, sock=sock) for sock in sockets]

    mode_servers.ReverseInstance.listen = listen  # type: ignore[method-assign]
