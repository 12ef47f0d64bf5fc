"""Upstream timeouts: no connection within `upstream_connect_timeout`, or no response headers within
`upstream_timeout` -> an OpenAI-shaped 504.

mitmproxy has no upstream read timeout. When the deadline passes, the 504 is delivered through the
connection's own event queue as if the upstream had sent it (with `Connection: close`), so it flows through
every later stage like any answer, and the real upstream connection is then aborted. A TLS upstream's stream
cannot take plain bytes (its TLS layer would read them as a broken record): there the flow is marked
(errors.UPSTREAM_TIMEOUT_MARK) and the upstream connection aborted, and mitmproxy's own error path answers the
504 (errors.py).

Nor has it a connect timeout: `asyncio.open_connection` to a host that drops SYNs waits for the kernel's
retries (~2 minutes with Linux defaults). The `server_connect` hook runs inside the task that connects, so
that task is cancelled when the connect deadline passes; mitmproxy then answers the failed connect itself,
with our message, which errors.py turns into the 504.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from mitmproxy import connection, http
from mitmproxy.net.http import http1
from mitmproxy.proxy import server_hooks

from proxy.errors import CONNECT_TIMED_OUT, UPSTREAM_TIMEOUT_MARK, upstream_timeout
from proxy.mitm.connections import connection_handler, inject_from_upstream
from proxy.services import Services
from proxy.stages.base import fail_closed
from proxy.state import Outcome, get_state

log = logging.getLogger("warden.deadline")


class Deadline:
    def __init__(self, services: Services) -> None:
        self.timeout = services.config.upstream_timeout
        self.connect_timeout = services.config.upstream_connect_timeout
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._connect_timers: dict[str, asyncio.TimerHandle] = {}  # by server connection id
        self._tasks: set[asyncio.Task[None]] = set()  # strong references until the 504 is delivered

    @fail_closed
    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or self.timeout <= 0:
            return
        loop = asyncio.get_running_loop()
        self._timers[flow.id] = loop.call_later(self.timeout, self._expire, flow)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        self._cancel(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._cancel(flow)

    def response(self, flow: http.HTTPFlow) -> None:
        self._cancel(flow)

    def _cancel(self, flow: http.HTTPFlow) -> None:
        timer = self._timers.pop(flow.id, None)
        if timer is not None:
            timer.cancel()

    def _expire(self, flow: http.HTTPFlow) -> None:
        self._timers.pop(flow.id, None)
        if flow.response is not None or not flow.live:
            return
        handler = connection_handler(flow)
        if handler is None or flow.server_conn not in handler.transports:
            # Still connecting (or already gone): mitmproxy's own connect error path answers with a 502.
            return
        state = get_state(flow)
        if state is not None:
            state.outcome = Outcome.UPSTREAM_TIMEOUT
        transport = handler.transports[flow.server_conn]
        if flow.server_conn.tls:
            log.warning("upstream timeout", extra={"request_id": state.request_id if state else None,
                                                   "timeout_s": self.timeout})
            flow.metadata[UPSTREAM_TIMEOUT_MARK] = self.timeout
            if transport.writer is not None:
                transport.writer.transport.abort()
            return
        response = upstream_timeout(self.timeout).response(state.request_id if state else None)
        response.headers["connection"] = "close"
        data = http1.assemble_response(response)

        async def deliver() -> None:
            await inject_from_upstream(handler, flow.server_conn, data)
            if transport.writer is not None:
                transport.writer.transport.abort()

        log.warning("upstream timeout", extra={"request_id": state.request_id if state else None,
                                               "timeout_s": self.timeout})
        task = asyncio.get_running_loop().create_task(deliver())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        task = asyncio.current_task()
        if self.connect_timeout <= 0 or task is None:
            return
        self._arm_connect(data.server, task, self.connect_timeout)

    def server_connected(self, data: server_hooks.ServerConnectionHookData) -> None:
        self._disarm_connect(data.server)

    def server_connect_error(self, data: server_hooks.ServerConnectionHookData) -> None:
        self._disarm_connect(data.server)

    def _arm_connect(self, server: connection.Server, task: asyncio.Task[Any], delay: float) -> None:
        loop = asyncio.get_running_loop()
        self._connect_timers[server.id] = loop.call_later(delay, self._connect_expired, server, task)

    def _disarm_connect(self, server: connection.Server) -> None:
        timer = self._connect_timers.pop(server.id, None)
        if timer is not None:
            timer.cancel()

    def _connect_expired(self, server: connection.Server, task: asyncio.Task[Any]) -> None:
        self._connect_timers.pop(server.id, None)
        if task.done() or server.state is not connection.ConnectionState.CLOSED:
            return
        if server.timestamp_start is None:
            # Still queued behind mitmproxy's per-client connection limit, not connecting: cancelling there
            # would skip mitmproxy's error path and leave the request without an answer. Look again later.
            self._arm_connect(server, task, self.connect_timeout)
            return
        remaining = server.timestamp_start + self.connect_timeout - time.time()
        if remaining > 0:
            self._arm_connect(server, task, remaining)
            return
        log.warning("upstream connect timeout", extra={"timeout_s": self.connect_timeout})
        task.cancel(f"{CONNECT_TIMED_OUT} after {self.connect_timeout:g} s")
