"""The admin port: `/healthz` (process alive), `/readyz` (the upstream answers its health check and we are
not draining), `/metrics` (Prometheus text format). Loopback by default: it is not for the pod's clients."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable

from prometheus_client import CONTENT_TYPE_LATEST

from proxy.config import WardenConfig
from proxy.httpget import ProbeError, http_get
from proxy.metrics import Metrics

log = logging.getLogger("warden.admin")

READY_CACHE_SECONDS = 1.0  # kubelet probes every few seconds; never hammer the model server


class Readiness:
    def __init__(self, config: WardenConfig, probe: Callable[[str], Awaitable[tuple[int, bytes]]] | None = None):
        self.url = config.upstream + config.readiness_path
        self.verify = config.upstream_verify
        self._probe = probe or (lambda url: http_get(url, 2.0, verify_tls=self.verify))
        self.draining = False
        self._cached: tuple[float, bool, str] | None = None

    async def check(self) -> tuple[bool, str]:
        if self.draining:
            return False, "draining"
        now = time.monotonic()
        if self._cached and now - self._cached[0] < READY_CACHE_SECONDS:
            return self._cached[1], self._cached[2]
        try:
            status, _ = await self._probe(self.url)
            ok, reason = 200 <= status < 300, f"upstream {self.url} answered {status}"
        except ProbeError as exc:
            ok, reason = False, f"upstream {self.url} unreachable: {exc}"
        self._cached = (now, ok, reason)
        return ok, reason


class AdminServer:
    def __init__(self, config: WardenConfig, metrics: Metrics, readiness: Readiness) -> None:
        self.config = config
        self.metrics = metrics
        self.readiness = readiness
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.config.admin.host, self.config.admin.port)

    @property
    def port(self) -> int:
        assert self._server is not None
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                head = await reader.readuntil(b"\r\n\r\n")
            parts = head.split(b"\r\n", 1)[0].split()
            method, path = (parts[0], parts[1].decode("latin-1")) if len(parts) >= 2 else (b"", "")
            status, content_type, body = await self._route(method, path.split("?", 1)[0])
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n".encode() + (body if method != b"HEAD" else b"")
            )
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _route(self, method: bytes, path: str) -> tuple[str, str, bytes]:
        if method not in (b"GET", b"HEAD"):
            return "405 Method Not Allowed", "text/plain", b"method not allowed\n"
        if path == "/healthz":
            return "200 OK", "text/plain", b"ok\n"
        if path == "/readyz":
            ok, reason = await self.readiness.check()
            body = json.dumps({"ready": ok, "reason": reason}).encode() + b"\n"
            return ("200 OK" if ok else "503 Service Unavailable"), "application/json", body
        if path == "/metrics":
            return "200 OK", CONTENT_TYPE_LATEST, await self.metrics.exposition()
        return "404 Not Found", "text/plain", b"not found\n"
