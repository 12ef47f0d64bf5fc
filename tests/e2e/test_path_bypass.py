"""A path the model server routes to an inspected handler is never forwarded uninspected, however it is spelled
(issue 20): uvicorn and aiohttp decode `/v1/chat/%63ompletions` to the chat handler, which Warden took for an
unknown route and forwarded with a resident ID in clear."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.e2e.conftest import Process, ProxyFactory, http_get
from tests.e2e.test_passthrough import RawH2Client
from tests.tls import write_self_signed

pytestmark = pytest.mark.slow

ID = "110105199003071239"
CHAT: dict[str, object] = {"model": "m", "messages": [{"role": "user", "content": f"我的身份证号是 {ID}，请记住。"}]}
MARK = b'{"mark": "nothing since"}'

# Each a spelling of /v1/chat/completions that some model server, or a proxy in front of it, routes to chat.
BYPASSES = [
    "/v1/chat/%63ompletions",
    "/%761/chat/completions",
    "/v1/chat%2Fcompletions",
    "/v1/chat/%2563ompletions",
    "/v1/chat/./completions",
    "/v1/x/../chat/completions",
    "/v1/x/%2E%2E/chat/completions",
    "//v1/chat/completions",
    "/v1/chat/completions;x=1",
    "/v1/chat/completions%3Bx",
    "/V1/CHAT/COMPLETIONS",
    "/v1\\chat\\completions",
    "/v1/chat/completions#x",
    "/v1/chat/completions%3Fx",
    "http://127.0.0.1:1/v1/chat/%63ompletions",  # absolute-form: mitmproxy hands its path on, still encoded
]


@pytest.fixture(scope="module")
def proxy(standin: Process, start_proxy_module: ProxyFactory) -> Process:
    return start_proxy_module(standin.url)


def mark_upstream(standin: Process) -> None:
    """Make the stand-in's last received body a known one, so `reached_upstream` sees anything forwarded after."""
    with socket.create_connection(("127.0.0.1", standin.port), timeout=5) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                     % (len(MARK), MARK))
        while sock.recv(65536):
            pass


def reached_upstream(standin: Process) -> bytes:
    status, body = http_get(standin.url + "/_standin/last")
    assert status == 200
    return body


def post(sock: socket.socket, target: str, body: dict[str, object]) -> tuple[int, bytes]:
    data = json.dumps(body).encode()
    sock.sendall(b"POST %s HTTP/1.1\r\nHost: model\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                 % (target.encode(), len(data), data))
    return read_response(sock)


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """(status, body) of one HTTP/1.1 response framed by Content-Length, leaving the connection usable."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed after {buffer!r}"
        buffer += chunk
    head, _, body = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    length = int(headers["content-length"])
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk
        body += chunk
    return int(lines[0].split()[1]), body


def assert_invalid_path(status: int, body: bytes) -> None:
    assert status == 400, body
    error = json.loads(body)["error"]
    assert (error["type"], error["code"], error["param"]) == ("invalid_request_error", "invalid_path", None)
    assert "/v1/chat/completions" in error["message"]
    assert "%" not in error["message"] and ID not in error["message"]  # names the route, never echoes the path


@pytest.mark.parametrize("target", BYPASSES)
def test_a_chat_path_spelled_otherwise_is_refused_before_the_model_sees_it(
    proxy: Process, standin: Process, target: str
) -> None:
    mark_upstream(standin)
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        assert_invalid_path(*post(sock, target, CHAT))
        assert reached_upstream(standin) == MARK  # nothing was forwarded, the ID least of all
        # The same connection goes on serving, and the canonical path is inspected as before.
        status, body = post(sock, "/v1/chat/completions", CHAT)
    assert status == 200 and json.loads(body)["choices"]
    forwarded = reached_upstream(standin)
    assert b"messages" in forwarded and ID.encode() not in forwarded


def test_an_absolute_form_target_is_classified_by_its_path(proxy: Process, standin: Process) -> None:
    mark_upstream(standin)
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        # mitmproxy forwards it in absolute form, which the stand-in does not route (404) and uvicorn does.
        post(sock, "http://model/v1/chat/completions", CHAT)
    forwarded = reached_upstream(standin)
    assert b"messages" in forwarded and ID.encode() not in forwarded


def test_refusals_are_counted_as_bad_requests_of_the_route_they_resemble(proxy: Process) -> None:
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        assert_invalid_path(*post(sock, "/v1/chat/%63ompletions", CHAT))
    metrics = http_get(proxy.admin_url + "/metrics")[1].decode()
    assert any('route="chat"' in line and 'outcome="bad_request"' in line and not line.startswith("#")
               for line in metrics.splitlines())


def test_an_unknown_route_spelled_oddly_still_passes_through_exactly(proxy: Process, standin: Process) -> None:
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        status, body = post(sock, "/echo/a%2Fb/../c;d", {"x": 1})
    assert status == 200 and json.loads(body)["path"] == "/echo/a%2Fb/../c;d"


@pytest.mark.parametrize("target", ["/v1/chat/%63ompletions", "/V1/chat/completions",
                                    "http://localhost/v1/chat/completions"])
def test_an_http2_path_spelled_otherwise_is_refused(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path, target: str
) -> None:
    # HTTP/2 carries the path in `:path`, which mitmproxy hands on as sent: an absolute URI there reaches an
    # HTTP/1 upstream as an absolute-form target, which uvicorn and aiohttp route by its path.
    cert, key = write_self_signed(tmp_path)
    proxy = start_proxy(standin.url, "--tls-cert", str(cert), "--tls-key", str(key))
    mark_upstream(standin)
    client = RawH2Client(proxy.port, cert)
    client.post(1, target, CHAT)
    assert_invalid_path(*client.read_until(1, ended=True))
    assert reached_upstream(standin) == MARK
    client.post(3, "/v1/chat/completions", CHAT)  # the same connection
    status, body = client.read_until(3, ended=True)
    assert status == 200 and json.loads(body)["choices"]
    assert ID.encode() not in reached_upstream(standin)
    client.sock.close()
