"""The re-ask's HTTP/1.1 POST (proxy/schemas/upstream.py) against real loopback servers that answer with
scripted bytes: every framing, bounds, failures in our words, and TLS checked as configured."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from mitmproxy import http

from proxy.schemas.upstream import Target, UpstreamFailure, http_post
from tests.tls import write_self_signed

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def answering(raw: bytes, *, delay: float = 0.0) -> Script:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        received.append(head + await reader.readexactly(length))
        await asyncio.sleep(delay)
        writer.write(raw)
        await writer.drain()
        writer.close()

    received: list[bytes] = []
    script.received = received  # type: ignore[attr-defined]
    return script


def post(script: Script, *, tls: ssl.SSLContext | None = None, verify: bool | str = True, timeout: float = 5.0,
         max_bytes: int = 1 << 20, host: str = "127.0.0.1") -> http.Response:
    async def go() -> http.Response:
        server = await asyncio.start_server(script, "127.0.0.1", 0, ssl=tls)
        port = server.sockets[0].getsockname()[1]
        try:
            target = Target("https" if tls else "http", host, port, "/v1/chat/completions?x=1")
            headers = [(b"Host", b"upstream:8000"), (b"Content-Type", b"application/json"),
                       (b"Content-Length", b"999"), (b"traceparent", b"00-" + b"1" * 32 + b"-" + b"2" * 16 + b"-01")]
            return await http_post(target, headers, b'{"a": 1}', timeout=timeout, connect_timeout=2.0,
                                   verify_tls=verify, max_bytes=max_bytes)
        finally:
            server.close()

    return asyncio.run(go())


OK = b'{"ok": true}'


def test_a_content_length_answer_and_the_request_as_sent() -> None:
    script = answering(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n" + OK)
    response = post(script)
    assert response.status_code == 200 and response.raw_content == OK
    (sent,) = script.received  # type: ignore[attr-defined]
    assert sent.startswith(b"POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: upstream:8000\r\n")
    assert b"Content-Length: 8\r\n" in sent and b"999" not in sent and b"Connection: close" in sent
    assert b"traceparent: 00-" in sent and sent.endswith(b'\r\n\r\n{"a": 1}')


def test_a_chunked_answer_with_trailers_and_an_interim_answer_first() -> None:
    raw = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5;ext=1\r\n{\"ok\"\r\n7\r\n: true}\r\n0\r\nX-Trailer: t\r\n\r\n")
    response = post(answering(raw))
    assert response.status_code == 200 and response.raw_content == OK


def test_an_answer_read_until_the_connection_closes() -> None:
    response = post(answering(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n" + OK))
    assert response.raw_content == OK and response.headers["content-encoding"] == "gzip"  # as sent


def test_an_error_status_is_an_answer() -> None:
    assert post(answering(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\n{}")).status_code == 400


@pytest.mark.parametrize("raw", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 20000\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4e20\r\n",
    b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 20000,
])
def test_an_answer_over_the_limit_is_refused_whatever_its_framing(raw: bytes) -> None:
    with pytest.raises(UpstreamFailure, match="exceeds the limit of 10000 bytes"):
        post(answering(raw), max_bytes=10000)


@pytest.mark.parametrize(("raw", "said"), [
    (b"NOT HTTP\r\n\r\n", "invalid HTTP response"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n" + OK, "closed the connection before the whole answer"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "invalid chunked body"),
    (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70000 + b"\r\n\r\n", "head exceeds"),
])
def test_a_broken_answer_is_a_failure_in_our_words(raw: bytes, said: str) -> None:
    with pytest.raises(UpstreamFailure, match=said) as failure:
        post(answering(raw))
    assert "127.0.0.1" not in str(failure.value)


def test_no_answer_within_the_timeout() -> None:
    with pytest.raises(UpstreamFailure, match=r"no answer to the re-ask within 0.2 s"):
        post(answering(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", delay=2.0), timeout=0.2)


def test_a_refused_connection() -> None:
    async def go() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        await http_post(Target("http", "127.0.0.1", port, "/"), [], b"", timeout=1.0, connect_timeout=1.0,
                        max_bytes=10)

    with pytest.raises(UpstreamFailure, match="refused"):
        asyncio.run(go())


def test_tls_is_checked_against_the_configured_ca(tmp_path: Path) -> None:
    cert, key = write_self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n" + OK
    assert post(answering(raw), tls=tls, verify=str(cert)).raw_content == OK
    assert post(answering(raw), tls=tls, verify=False).raw_content == OK
    with pytest.raises(UpstreamFailure, match="TLS handshake failed"):
        post(answering(raw), tls=tls, verify=True)  # certifi's roots do not know it
