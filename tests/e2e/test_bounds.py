"""Whole-process tests, with raw sockets, of what a client may make the proxy do on the wire: framing headers
named by `Connection` (smuggling), `Connection: close`, request head size and time, idle keep-alive
connections, body limits per direction, lingering close after a 413, and what Warden's own errors reveal.
Each asserts what the upstream received (the stand-in's own log), what the client received, and that the
proxy serves the next request."""

from __future__ import annotations

import contextlib
import json
import socket
import time
import urllib.error
import urllib.request
from io import BufferedReader

import httpx
import pytest

from tests.e2e.conftest import Process, ProxyFactory, free_port, http_get

pytestmark = pytest.mark.slow

RESIDENT_ID = "110105199003071239"


def received(standin: Process) -> list[dict[str, str]]:
    status, body = http_get(standin.url + "/_standin/received")
    assert status == 200
    entries: list[dict[str, str]] = json.loads(body)["received"]
    return entries


def read_response(stream: BufferedReader) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response from `stream`: status, headers (lower-cased names), body."""
    status_line = stream.readline()
    assert status_line.startswith(b"HTTP/1."), status_line
    status = int(status_line.split()[1])
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", ""):
        body = b""
        while (size := int(stream.readline().split(b";")[0], 16)) > 0:
            body += stream.read(size)
            stream.readline()
        stream.readline()
    else:
        body = stream.read(int(headers.get("content-length", "0")))
    return status, headers, body


def closed_by_peer(sock: socket.socket, within: float) -> bool:
    """The proxy closed the connection (EOF or reset) within `within` seconds."""
    sock.settimeout(within)
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def chat_request(path: str, content: str, *, extra_headers: str = "") -> bytes:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": content}]}).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: model\r\nContent-Type: application/json\r\n{extra_headers}"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


# -- bypasses ---------------------------------------------------------------------------------------------------

def test_connection_naming_content_length_does_not_unframe_the_body(standin: Process,
                                                                    start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url)
    marker = f"smuggled-{time.monotonic_ns()}"
    smuggled = chat_request("/v1/chat/completions", f"{marker} my id is {RESIDENT_ID}")
    outer = (b"POST /v1/other HTTP/1.1\r\nHost: model\r\nConnection: keep-alive, Content-Length\r\n"
             b"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(smuggled)) + smuggled
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(outer)
        stream = sock.makefile("rb")
        status, _, body = read_response(stream)
        assert (status, b"not valid JSON" in body) == (400, True)  # the stand-in's answer to a text body
        assert closed_by_peer(sock, 1.0) is False  # one request, one answer: nothing else on this connection
    mine = [entry for entry in received(standin) if marker in entry["body"]]
    # The upstream got one request, /v1/other, whose body is the would-be second request: never a chat.
    assert [entry["path"] for entry in mine] == ["/v1/other"]
    assert mine[0]["body"] == smuggled.decode()
    assert httpx.get(proxy.url + "/v1/models").status_code == 200


@pytest.mark.parametrize(("version", "connection"), [("HTTP/1.1", "close"), ("HTTP/1.0", None)])
def test_a_client_asking_to_close_gets_its_connection_closed(standin: Process, start_proxy: ProxyFactory,
                                                             version: str, connection: str | None) -> None:
    proxy = start_proxy(standin.url)
    header = f"Connection: {connection}\r\n" if connection else ""
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(f"GET /v1/models {version}\r\nHost: model\r\n{header}\r\n".encode())
        stream = sock.makefile("rb")
        status, headers, _ = read_response(stream)
        assert status == 200
        assert headers.get("connection", "").lower() == "close"  # RFC 9112 section 9.6: said, and done
        assert closed_by_peer(sock, 5.0)


def test_keep_alive_still_keeps_the_connection(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url)
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        stream = sock.makefile("rb")
        for _ in range(3):
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: model\r\nConnection: keep-alive\r\n\r\n")
            status, headers, _ = read_response(stream)
            assert status == 200
            assert headers.get("connection", "").lower() != "close"


# -- the request head --------------------------------------------------------------------------------------------

def test_a_head_without_end_is_refused_with_431_and_bounded_memory(standin: Process,
                                                                  start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url)
    before = rss_kib(proxy.proc.pid)
    for flood in (b"A" * (100 * 1024 * 1024),  # no line end at all
                  b"GET /v1/models HTTP/1.1\r\nX-Big: " + b"B" * (16 * 1024 * 1024)):  # one huge header
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(flood)  # the proxy answers and closes long before the end: what is tested
            answer = b""
            try:
                while chunk := sock.recv(65536):
                    answer += chunk
            except ConnectionResetError:
                pass
        assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
        assert b'"request_header_too_large"' in answer
    grown = rss_kib(proxy.proc.pid) - before
    assert grown < 20 * 1024, f"RSS grew by {grown} KiB"  # it grew by 121 MiB before the bound
    assert httpx.get(proxy.url + "/v1/models").status_code == 200
    assert 'warden_connections_closed_total{reason="header_too_large"} 2.0' in http_get(
        proxy.admin_url + "/metrics")[1].decode()


def test_a_head_within_the_limit_passes(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, "--max-header", "64KiB")
    response = httpx.get(proxy.url + "/v1/models", headers={"X-Padding": "p" * 60_000})
    assert response.status_code == 200


def test_a_slow_head_gets_408_and_an_idle_connection_is_closed(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, "--header-timeout", "1s", "--idle-timeout", "2s")
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as slow:
        slow.sendall(b"GET /v1/models HTTP/1.1\r\nHost: mod")  # and nothing more
        started = time.monotonic()
        slow.settimeout(5)
        answer = slow.recv(65536)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert time.monotonic() - started < 4
        assert closed_by_peer(slow, 3.0)
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as silent:
        assert closed_by_peer(silent, 4.0)  # the first request must start within the header timeout
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as idle:
        idle.sendall(b"GET /v1/models HTTP/1.1\r\nHost: model\r\n\r\n")
        status, _, _ = read_response(idle.makefile("rb"))
        assert status == 200
        assert not closed_by_peer(idle, 1.0)  # kept alive a while ...
        assert closed_by_peer(idle, 4.0)  # ... not for ever
    metrics = http_get(proxy.admin_url + "/metrics")[1].decode()
    assert 'warden_connections_closed_total{reason="header_timeout"} 2.0' in metrics
    assert 'warden_connections_closed_total{reason="idle_timeout"} 1.0' in metrics
    assert httpx.get(proxy.url + "/v1/models").status_code == 200


# -- bodies -------------------------------------------------------------------------------------------------------

def embeddings_request(n: int) -> dict[str, object]:
    return {"model": "m", "input": [f"text {i}" for i in range(n)]}


def test_answers_have_their_own_larger_limit(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, "--max-body", "1MiB")
    response = httpx.post(proxy.url + "/v1/embeddings", json=embeddings_request(20_000), timeout=60)
    assert response.status_code == 200
    assert len(response.content) > 1024 * 1024  # an answer over the request limit passes
    tight = start_proxy(standin.url, "--max-body", "1MiB", "--max-response-body", "1MiB")
    refused = httpx.post(tight.url + "/v1/embeddings", json=embeddings_request(20_000), timeout=60)
    assert refused.status_code == 502
    error = refused.json()["error"]
    assert error["code"] == "response_too_large"
    assert "1048576 bytes" in error["message"] and "mitmproxy" not in error["message"]
    assert httpx.post(tight.url + "/v1/embeddings", json=embeddings_request(3)).status_code == 200


def test_a_client_that_sends_before_it_reads_gets_the_413(standin: Process, start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, "--max-body", "1MiB")
    body = b'{"model": "m", "prompt": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    request = urllib.request.Request(proxy.url + "/v1/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=20)
    assert refused.value.code == 413
    error = json.loads(refused.value.read())["error"]
    assert error["code"] == "request_too_large"
    assert "1048576 bytes" in error["message"] and "mitmproxy" not in error["message"]
    assert refused.value.headers["Server"] == "warden"
    assert httpx.get(proxy.url + "/v1/models").status_code == 200


def test_an_endless_body_after_the_413_is_cut_at_the_linger_bound(standin: Process,
                                                                 start_proxy: ProxyFactory) -> None:
    proxy = start_proxy(standin.url, "--max-body", "1KiB")
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=30) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: model\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100000000000\r\n\r\n")
        stream = sock.makefile("rb")
        status, headers, _ = read_response(stream)
        assert status == 413 and headers["connection"] == "close"
        sent, started = 0, time.monotonic()
        chunk = b"z" * 65536
        try:
            while time.monotonic() - started < 30:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert time.monotonic() - started < 25  # cut at 64 MiB or 10 s, whichever first
        assert sent <= 80 * 1024 * 1024
    assert httpx.get(proxy.url + "/v1/models").status_code == 200


# -- what Warden's own answers reveal -----------------------------------------------------------------------------

def test_errors_name_neither_mitmproxy_nor_the_upstream_address(start_proxy: ProxyFactory) -> None:
    port = free_port()
    proxy = start_proxy(f"http://127.0.0.1:{port}", wait_ready=False)
    response = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": []})
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "upstream_unavailable"
    assert str(port) not in response.text and "127.0.0.1" not in response.text
    assert response.headers.get("server") in (None, "warden")
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400") and b"mitmproxy" not in answer.lower()
