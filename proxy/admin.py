"""The admin port: `/healthz` (process alive), `/readyz` (the upstream answers its health check and we are
not draining), `/metrics` (Prometheus text format). Loopback by default: it is not for the pod's clients.

`/metrics` needs `Authorization: Bearer <token>` whenever a token is configured, and a token is required to
start at all on an address that is not loopback (anyone on the network could read it otherwise). `/healthz`
and `/readyz` stay open: the kubelet's probes carry no credentials.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import hmac
import ipaddress
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from prometheus_client import CONTENT_TYPE_LATEST

from proxy.config import ConfigError, WardenConfig
from proxy.httpget import ProbeError, http_get

log = logging.getLogger("warden.admin")

READY_CACHE_SECONDS = 1.0  # kubelet probes every few seconds; never hammer the model server
PROBE_SECONDS = 2.0  # one request to the upstream
# A check may make two requests (the health path answered 404, then the fallback): the whole check stays
# under the scrape hook's bound (proxy/telemetry/metrics.py SCRAPE_HOOK_SECONDS = 3 s), so warden_upstream_up is fresh.
CHECK_SECONDS = 2.5
# Once the fallback is in use, the health path is asked again this often: the upstream may be replaced in
# place (llama-cpp-python swapped for llama-server, whose /health also says "still loading the model").
RECHECK_PRIMARY_SECONDS = 300.0
# Where readiness goes when the backend's health path answers 404. The OpenAI-compatible servers all list
# their models; llama-cpp-python's server has no /health at all (the native llama-server has one). Triton's
# native HTTP API has no /v1/models, and `openai`'s health path already is /v1/models.
FALLBACK_PATHS: dict[str, str] = {
    "llama_cpp": "/v1/models",
    "vllm": "/v1/models",
    "sglang": "/v1/models",
    "tgi": "/v1/models",
}

HEAD_SECONDS = 10.0  # to send a whole request head (a probe or a scrape sends it in one write)
MAX_HEAD_BYTES = 16 * 1024  # a probe's or a scrape's head is a few hundred bytes, a bearer token included
LINGER_SECONDS = 1.0  # after answering, unread input is discarded this long so the answer is not reset away
LINGER_BYTES = 256 * 1024
MAX_TOKEN_FILE_BYTES = 4096

Probe = Callable[[str], Awaitable[tuple[int, bytes]]]


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z) and `localhost`; `0.0.0.0` and `::` are every address."""
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False  # another name: what it resolves to is not ours to trust
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _read_token_file(path: str) -> str:
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_TOKEN_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"admin_token_file {path}: cannot read it: {exc.strerror or type(exc).__name__}") from None
    if len(raw) > MAX_TOKEN_FILE_BYTES:
        raise ConfigError(f"admin_token_file {path}: longer than {MAX_TOKEN_FILE_BYTES} bytes: not a token file")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ConfigError(f"admin_token_file {path}: not ASCII text") from None
    token = text.rstrip("\r\n")  # `echo token > file` and most editors end the file with a newline
    if not token:
        raise ConfigError(f"admin_token_file {path}: empty")
    return token


def admin_token(config: WardenConfig) -> str | None:
    """The token `/metrics` requires, or None. Raises ConfigError (never quoting the token) when the token
    file cannot be used, the token cannot travel in a header, or the admin address is not loopback and no
    token is configured."""
    if config.admin_token and config.admin_token_file:
        raise ConfigError("admin_token and admin_token_file are both set: keep one")
    if config.admin_token_file:
        token: str | None = _read_token_file(config.admin_token_file)
        source = f"admin_token_file {config.admin_token_file}"
    else:
        token, source = config.admin_token or None, "admin_token"
    # RFC 6750 b64token characters and the like: anything printable but a space survives a header unchanged.
    if token is not None and not all("!" <= ch <= "~" for ch in token):
        raise ConfigError(f"{source}: the token must be printable ASCII without spaces")
    if token is None and not is_loopback(config.admin.host):
        raise ConfigError(
            f"the admin address {config.admin} is not loopback, so /metrics would answer anyone who can reach it: "
            "set a bearer token with --admin-token-file FILE (WARDEN_ADMIN_TOKEN_FILE, a mounted Secret) or "
            "--admin-token TOKEN (WARDEN_ADMIN_TOKEN), or bind --admin to 127.0.0.1"
        )
    return token


def with_admin_token(config: WardenConfig) -> WardenConfig:
    """`config` with the token file read once, at start-up (a rotated Secret takes a restart)."""
    return dataclasses.replace(config, admin_token=admin_token(config), admin_token_file=None)


class Readiness:
    """The upstream's health, asked at most once a second, shared by `/readyz` and `warden_upstream_up`.

    The backend's health path is asked; when it answers 404 and the backend has a fallback (FALLBACK_PATHS),
    the fallback is asked and, if it answers 2xx, used directly until it fails or RECHECK_PRIMARY_SECONDS
    pass. An explicit `health_path` never falls back: the user named the path, and a 404 there is a fault to
    see, not to route around."""

    def __init__(self, config: WardenConfig, probe: Probe | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.url = config.upstream + config.readiness_path
        fallback = None if config.health_path else FALLBACK_PATHS.get(config.backend)
        self.fallback_url = config.upstream + fallback if fallback and fallback != config.readiness_path else None
        verify = config.upstream_verify
        self._probe = probe or (lambda url: http_get(url, PROBE_SECONDS, verify_tls=verify))
        self._clock = clock
        self.draining = False
        self._cached: tuple[float, bool, str] | None = None
        self._fallback_since: float | None = None  # when the health path last answered 404 and the fallback 2xx
        self._lock = asyncio.Lock()  # a probe and a scrape at once ask the upstream once

    async def check(self) -> tuple[bool, str]:
        if self.draining:
            return False, "draining"
        return await self.upstream()

    async def upstream(self) -> tuple[bool, str]:
        """Whether the upstream answers its health check (draining aside), and why not."""
        async with self._lock:
            now = self._clock()
            if self._cached and now - self._cached[0] < READY_CACHE_SECONDS:
                return self._cached[1], self._cached[2]
            try:
                async with asyncio.timeout(CHECK_SECONDS):
                    ok, reason = await self._ask_upstream(now)
            except TimeoutError:
                ok, reason = False, f"upstream {self.url} did not answer within {CHECK_SECONDS} s"
            self._cached = (now, ok, reason)
            return ok, reason

    async def _ask_upstream(self, now: float) -> tuple[bool, str]:
        if (self.fallback_url and self._fallback_since is not None
                and now - self._fallback_since < RECHECK_PRIMARY_SECONDS):
            status, reason = await self._ask(self.fallback_url)
            if not _ok(status):
                self._fallback_since = None  # the next check asks the health path first again
            return _ok(status), f"{reason} (its {self.url} answers 404)"
        status, reason = await self._ask(self.url)
        if status == 404 and self.fallback_url:
            fallback_status, fallback_reason = await self._ask(self.fallback_url)
            if _ok(fallback_status):
                if self._fallback_since is None:
                    log.info("the upstream has no health path; readiness follows its model list",
                             extra={"health_url": self.url, "fallback_url": self.fallback_url})
                self._fallback_since = now
            else:
                self._fallback_since = None
            return _ok(fallback_status), f"{reason}; {fallback_reason}"
        self._fallback_since = None
        return _ok(status), reason

    async def _ask(self, url: str) -> tuple[int | None, str]:
        try:
            status, _ = await self._probe(url)
        except ProbeError as exc:
            return None, f"upstream {url} unreachable: {exc}"
        return status, f"upstream {url} answered {status}"


def _ok(status: int | None) -> bool:
    return status is not None and 200 <= status < 300


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    status: str
    content_type: str
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


UNAUTHORIZED = Answer("401 Unauthorized", "text/plain", b"unauthorized\n",
                      (("WWW-Authenticate", 'Bearer realm="warden-admin"'),))
HEAD_TOO_LARGE = Answer("431 Request Header Fields Too Large", "text/plain", b"request head too large\n")
BAD_REQUEST = Answer("400 Bad Request", "text/plain", b"bad request\n")


def bearer_credentials(head: bytes) -> bytes | None:
    """The token of the one `Authorization: Bearer` header in `head`; None when absent, repeated or another
    scheme (RFC 6750 2.1; the scheme name is case-insensitive, RFC 9110 11.1)."""
    found: list[bytes] = []
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"authorization":
            found.append(value.strip())
    if len(found) != 1:
        return None
    scheme, _, token = found[0].partition(b" ")
    return token.strip() if scheme.lower() == b"bearer" and token.strip() else None


class ReadinessCheck(Protocol):
    """What `/readyz` asks: `Readiness` in one process, the supervisor's pod readiness with workers."""

    async def check(self) -> tuple[bool, str]: ...


class Exposition(Protocol):
    """What `/metrics` serves: `Metrics` in one process, the workers' merged metrics with workers."""

    async def exposition(self) -> bytes: ...


class AdminServer:
    """The admin endpoint. On `config.admin` (TCP), or, for a worker of `--workers N`, on a private Unix socket
    `unix_path` that only the supervisor reads (its directory is 0700: the file system is the access control,
    so no token is asked there)."""

    def __init__(self, config: WardenConfig, metrics: Exposition, readiness: ReadinessCheck,
                 unix_path: str | None = None) -> None:
        self.config = config
        self.metrics = metrics
        self.readiness = readiness
        self.unix_path = unix_path
        # Refuses an open /metrics on a non-loopback address here too.
        token = admin_token(config) if unix_path is None else None
        # Only a digest is kept: comparing digests takes the same time whatever the presented token's length.
        self._token_digest = hashlib.sha256(token.encode()).digest() if token is not None else None
        self._server: asyncio.Server | None = None

    @property
    def metrics_protected(self) -> bool:
        return self._token_digest is not None

    async def start(self) -> None:
        if self.unix_path is not None:
            self._server = await asyncio.start_unix_server(self._handle, self.unix_path, limit=MAX_HEAD_BYTES)
            return
        self._server = await asyncio.start_server(self._handle, self.config.admin.host, self.config.admin.port,
                                                  limit=MAX_HEAD_BYTES)
        log.info("admin port listening", extra={
            "admin": f"{self.config.admin.host}:{self.port}",
            "metrics": "bearer token required" if self.metrics_protected else "open (loopback only, no token set)",
        })

    @property
    def port(self) -> int:
        """The TCP port (0 on a Unix socket)."""
        assert self._server is not None
        if self.unix_path is not None:
            return 0
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def authorized(self, head: bytes) -> bool:
        if self._token_digest is None:
            return True
        presented = bearer_credentials(head)
        if presented is None:
            return False
        return hmac.compare_digest(hashlib.sha256(presented).digest(), self._token_digest)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            method = b""
            try:
                async with asyncio.timeout(HEAD_SECONDS):
                    head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.LimitOverrunError:
                answer = HEAD_TOO_LARGE
            else:
                parts = head.split(b"\r\n", 1)[0].split()
                if len(parts) == 3:
                    method, path = parts[0], parts[1].decode("latin-1")
                    answer = await self._route(method, path.split("?", 1)[0], head)
                else:
                    answer = BAD_REQUEST
            extra = "".join(f"{name}: {value}\r\n" for name, value in answer.headers)
            writer.write(
                f"HTTP/1.1 {answer.status}\r\nContent-Type: {answer.content_type}\r\n"
                f"Content-Length: {len(answer.body)}\r\n{extra}Connection: close\r\n\r\n".encode()
                + (answer.body if method != b"HEAD" else b"")
            )
            await writer.drain()
            await _linger(reader, writer)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _route(self, method: bytes, path: str, head: bytes) -> Answer:
        if method not in (b"GET", b"HEAD"):
            return Answer("405 Method Not Allowed", "text/plain", b"method not allowed\n", (("Allow", "GET, HEAD"),))
        if path == "/healthz":
            return Answer("200 OK", "text/plain", b"ok\n")
        if path == "/readyz":
            ok, reason = await self.readiness.check()
            body = json.dumps({"ready": ok, "reason": reason}).encode() + b"\n"
            return Answer("200 OK" if ok else "503 Service Unavailable", "application/json", body)
        if path == "/metrics":
            if not self.authorized(head):
                return UNAUTHORIZED
            return Answer("200 OK", CONTENT_TYPE_LATEST, await self.metrics.exposition())
        return Answer("404 Not Found", "text/plain", b"not found\n")


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Half-close, then read and drop what the client still sends (a body on a GET, the rest of an over-long
    head) for a bounded time: closing with unread input makes the kernel send a reset, which can destroy the
    answer before the client reads it (nginx's lingering close does the same)."""
    with contextlib.suppress(OSError, RuntimeError, TimeoutError):
        if writer.can_write_eof():
            writer.write_eof()
        async with asyncio.timeout(LINGER_SECONDS):
            dropped = 0
            while dropped < LINGER_BYTES and (chunk := await reader.read(65536)):
                dropped += len(chunk)
