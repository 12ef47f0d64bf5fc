"""Upstream timeout: no response headers within `upstream_timeout` -> an OpenAI-shaped 504.

mitmproxy has no upstream read timeout. When the deadline passes, the 504 is delivered through the
connection's own event queue as if the upstream had sent it (with `Connection: close`), so it flows through
every later stage like any answer, and the real upstream connection is then aborted.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mitmproxy import ctx, http
from mitmproxy.net.http import http1
from mitmproxy.proxy import events

from proxy.errors import upstream_timeout
from proxy.services import Services
from proxy.stages.base import fail_closed
from proxy.state import Outcome, get_state

log = logging.getLogger("warden.deadline")


class Deadline:
    def __init__(self, services: Services) -> None:
        self.timeout = services.config.upstream_timeout
        self._timers: dict[str, asyncio.TimerHandle] = {}
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
        handler = self._handler(flow)
        if handler is None or flow.server_conn not in handler.transports:
            # Still connecting (or already gone): mitmproxy's own connect error path answers with a 502.
            return
        state = get_state(flow)
        if state is not None:
            state.outcome = Outcome.UPSTREAM_TIMEOUT
        response = upstream_timeout(self.timeout).response(state.request_id if state else None)
        response.headers["connection"] = "close"
        data = http1.assemble_response(response)
        transport = handler.transports[flow.server_conn]

        async def deliver() -> None:
            await handler.server_event(events.DataReceived(flow.server_conn, data))
            if transport.writer is not None:
                transport.writer.transport.abort()

        log.warning("upstream timeout", extra={"request_id": state.request_id if state else None,
                                               "timeout_s": self.timeout})
        task = asyncio.get_running_loop().create_task(deliver())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    def _handler(flow: http.HTTPFlow) -> Any:
        proxyserver: Any = ctx.master.addons.get("proxyserver")
        return proxyserver.connections.get(flow.client_conn.id) if proxyserver else None
