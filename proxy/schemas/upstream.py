"""A tiny asyncio HTTP/1.1 POST to the upstream, for the schema re-ask (proxy/stages/schema.py).

The re-ask is Warden's own request, made while mitmproxy holds the client's exchange at its `response` hook:
it cannot go through mitmproxy's connection to the upstream, so it opens its own, one per re-ask
(`Connection: close`: re-asks are rare and a pool would outlive its use). It is bounded like the proxied
answer: connect within `upstream_connect_timeout`, the whole answer within `upstream_timeout`, at most
`max_response_bytes` of body. TLS is checked like the proxied traffic (certifi's roots, or `upstream_ca`, or
not at all when `upstream_tls_verify` is off), as proxy/httpget.py does for probes. The response head is read
by mitmproxy's own HTTP/1 parser, so both paths frame answers alike.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Sequence
from dataclasses import dataclass

from mitmproxy import http
from mitmproxy.net.http import http1

from proxy.exceptions import ProxyError
from proxy.httpget import tls_context

MAX_HEAD_BYTES = 64 * 1024  # a response line and headers; a model server's are a few hundred bytes
MAX_INTERIM = 8  # 1xx answers skipped before the real one
# Framing is ours: these are dropped from the caller's headers and written by `http_post` itself.
FRAMING = frozenset({b"content-length", b"transfer-encoding", b"connection", b"expect"})


class UpstreamFailure(ProxyError):
    """The upstream could not be asked or did not answer; the message says how, in our words (no address, no
    bytes of the answer)."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where the upstream is: what mitmproxy's own request to it used."""

    scheme: str  # http | https
    host: str
    port: int
    path: str  # with its query


async def http_post(target: Target, headers: Sequence[tuple[bytes, bytes]], body: bytes, *,
                    timeout: float | None, connect_timeout: float, verify_tls: bool | str = True,
                    max_bytes: int) -> http.Response:
    """POST `body` and return the upstream's answer (any status) with its body as sent (`raw_content`, still
    in its content encoding). UpstreamFailure when it cannot be asked, does not answer within `timeout`
    seconds (None or <= 0: no limit), breaks off, or sends more than `max_bytes` of body."""
    context = tls_context(verify_tls) if target.scheme == "https" else None
    head = bytearray(f"POST {target.path or '/'} HTTP/1.1\r\n".encode())
    for name, value in headers:
        if name.lower() not in FRAMING:
            head += name + b": " + value + b"\r\n"
    head += b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    deadline = timeout if timeout and timeout > 0 else None
    try:
        async with asyncio.timeout(deadline):
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(target.host, target.port, ssl=context, limit=MAX_HEAD_BYTES,
                                            server_hostname=target.host if context else None),
                    connect_timeout if connect_timeout > 0 else None)
            except TimeoutError:
                raise UpstreamFailure(f"no connection within {connect_timeout:g} s") from None
            try:
                writer.write(bytes(head) + body)
                await writer.drain()
                return await _read_response(reader, max_bytes)
            finally:
                writer.close()
    except TimeoutError:
        raise UpstreamFailure(f"no answer to the re-ask within {deadline:g} s" if deadline
                              else "the re-ask timed out") from None
    except ssl.SSLError:
        raise UpstreamFailure("the TLS handshake failed") from None
    except ConnectionRefusedError:
        raise UpstreamFailure("the connection was refused") from None
    except asyncio.IncompleteReadError:
        raise UpstreamFailure("it closed the connection before the whole answer") from None
    except asyncio.LimitOverrunError:
        raise UpstreamFailure(f"its answer's head exceeds {MAX_HEAD_BYTES} bytes") from None
    except OSError as exc:
        said = "the connection was reset" if isinstance(exc, ConnectionResetError) else "the connection failed"
        raise UpstreamFailure(said) from None


async def _read_response(reader: asyncio.StreamReader, max_bytes: int) -> http.Response:
    for _ in range(MAX_INTERIM + 1):
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = [line for line in raw.split(b"\r\n") if line]
        try:
            response = http1.read_response_head(lines)
            size = http1.expected_http_body_size(http.Request.make("POST", "http://upstream/"), response)
        except (ValueError, IndexError):
            raise UpstreamFailure("it sent an invalid HTTP response") from None
        if not 100 <= response.status_code < 200:
            break
    else:
        raise UpstreamFailure("it sent an invalid HTTP response")
    if size is None:
        content = await _read_chunked(reader, max_bytes)
    elif size >= 0:
        if size > max_bytes:
            raise UpstreamFailure(f"its answer exceeds the limit of {max_bytes} bytes")
        content = await reader.readexactly(size)
    else:
        content = await reader.read(max_bytes + 1)
        while len(content) <= max_bytes and (more := await reader.read(max_bytes + 1 - len(content))):
            content += more
        if len(content) > max_bytes:
            raise UpstreamFailure(f"its answer exceeds the limit of {max_bytes} bytes")
    response.raw_content = content
    return response


async def _read_chunked(reader: asyncio.StreamReader, max_bytes: int) -> bytes:
    """RFC 9112 section 7.1, bounded: chunk sizes are the upstream's word, so they are checked first."""
    out = bytearray()
    while True:
        line = await reader.readuntil(b"\r\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise UpstreamFailure("it sent an invalid chunked body") from None
        if size < 0 or len(out) + size > max_bytes:
            raise UpstreamFailure(f"its answer exceeds the limit of {max_bytes} bytes")
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, ignored
                pass
            return bytes(out)
        out += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise UpstreamFailure("it sent an invalid chunked body")
