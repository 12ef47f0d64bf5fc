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

# Connections taken per wake-up of the listening socket. asyncio takes up to its `backlog` (100) at once, so with
# one queue shared by several processes the first to wake took every waiting connection: measured with wrk's 64
# keep-alive connections, one of two workers served none of the requests in one round of three
# (bench/workers.py "balance"). One at a time, each wake-up of every worker takes one, and an idle worker,
# back at its selector first, takes more (nginx's `multi_accept off`).
ACCEPT_BATCH = 1


class SharedListener(socket.socket):
    """A listening socket another process bound and set listening: asyncio's `listen(backlog)` call, which
    would also reset the kernel's queue length the supervisor chose, does nothing here, so `backlog` only
    sets how many connections one wake-up accepts."""

    def listen(self, backlog: int = 0, /) -> None:
        return None


def serve_on(sockets: list[socket.socket]) -> None:
    """Make reverse mode accept on `sockets` (bound and listening) instead of binding its HOST:PORT. The
    sockets are taken over (detached)."""
    from mitmproxy.proxy import mode_servers

    if not sockets:
        raise ValueError("serve_on needs at least one listening socket")
    shared = [SharedListener(sock.family, sock.type, sock.proto, fileno=sock.detach()) for sock in sockets]

    async def listen(self: Any, host: str, port: int) -> list[Any]:
        return [await asyncio.start_server(self.handle_stream, sock=sock, backlog=ACCEPT_BATCH) for sock in shared]

    mode_servers.ReverseInstance.listen = listen  # type: ignore[method-assign]
