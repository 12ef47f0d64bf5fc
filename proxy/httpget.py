"""A tiny asyncio HTTP/1.1 GET for the admin port's probes of the upstream (health, models, metrics)."""

from __future__ import annotations

import asyncio
import ssl
from urllib.parse import urlsplit

import certifi

from proxy.exceptions import ProxyError

MAX_ANSWER_BYTES = 16 * 1024 * 1024  # vLLM's metrics are tens of KiB; an endless answer must not fill memory


class ProbeError(ProxyError):
    """The upstream could not be asked; the message says how it failed."""


def tls_context(verify: bool | str) -> ssl.SSLContext:
    """The roots mitmproxy checks the proxied traffic against (certifi's, or `upstream_ca`), or none: Warden's
    own requests to the upstream (probes, schema re-asks) check it as the proxied traffic does."""
    context = ssl.create_default_context(cafile=verify if isinstance(verify, str) else certifi.where())
    if verify is False:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["http/1.1"])
    return context


async def http_get(url: str, timeout: float = 2.0, *, verify_tls: bool | str = True,
                   max_bytes: int = MAX_ANSWER_BYTES) -> tuple[int, bytes]:
    parts = urlsplit(url)
    tls = parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    context = tls_context(verify_tls) if tls else None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(parts.hostname, port, ssl=context)
            try:
                writer.write(
                    f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n"
                    "User-Agent: warden-probe\r\n\r\n".encode()
                )
                await writer.drain()
                raw = bytearray()
                while chunk := await reader.read(65536):
                    raw += chunk
                    if len(raw) > max_bytes:
                        raise ProbeError(f"answer longer than {max_bytes} bytes")
            finally:
                writer.close()
    except (OSError, TimeoutError) as exc:
        raise ProbeError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None
    head, _, body = bytes(raw).partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split()
    if len(status_line) < 2 or not status_line[1].isdigit():
        raise ProbeError("malformed HTTP response")
    if b"transfer-encoding: chunked" in head.lower():
        try:
            body = _dechunk(body)
        except ValueError:
            raise ProbeError("malformed chunked body") from None
    return int(status_line[1]), body


def _dechunk(data: bytes) -> bytes:
    out = bytearray()
    while data:
        line, _, data = data.partition(b"\r\n")
        size = int(line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += data[:size]
        data = data[size + 2 :]
    return bytes(out)
