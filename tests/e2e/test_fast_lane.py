"""The fast lane (proxy/mitm/fast_lane.py) in a real proxy: a streamed answer read off the upstream socket while
mitmproxy holds none of it gives the client what mitmproxy's own path gives, however the upstream's writes cut
the chunked wire, and hands the end, errors and the connection back to mitmproxy.

"What mitmproxy's path gives" is the same text in the same events' fields, not always the same bytes: the lane
hands the relay a read's chunks as one piece (one batch: proxy/guard/stream.py `on_events`), mitmproxy hands
it chunk by chunk, and a batch may spread held-back text over its events differently."""

from __future__ import annotations

import json
import random
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Process, ProxyFactory

pytestmark = pytest.mark.slow

CARD = "6222021234567894"
PAUSE = 0.003  # between the upstream's writes: each lands in a read of its own


def sse(text: str) -> bytes:
    payload = {"id": "chatcmpl-lane", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def wire_of(texts: list[str]) -> list[bytes]:
    """One HTTP/1 chunk per SSE event, as vLLM and llama.cpp write them."""
    return [b"%x\r\n%s\r\n" % (len(e), e) for e in (*(sse(t) for t in texts), b"data: [DONE]\n\n")]


def cut(chunks: list[bytes], how: str, *, end: bool = True) -> list[bytes]:
    """The upstream's writes: the chunked wire cut one chunk per write, every 7 bytes, three chunks per write,
    or at random places."""
    wire = b"".join(chunks) + (b"0\r\n\r\n" if end else b"")
    if how == "per_chunk":
        return [*chunks, *([b"0\r\n\r\n"] if end else [])]
    if how == "every_7":
        return [wire[i:i + 7] for i in range(0, len(wire), 7)]
    if how == "three_per_write":
        writes = [b"".join(chunks[i:i + 3]) for i in range(0, len(chunks), 3)]
        return [*writes, *([b"0\r\n\r\n"] if end else [])]
    rng = random.Random(how)
    cuts = sorted(rng.sample(range(1, len(wire)), 25))
    return [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True)]


class Scripted(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), ScriptedHandler)
        self.writes: list[bytes] = []
        self.close_after = False  # end the connection after the writes (an upstream that broke off)
        self.pause = PAUSE
        self.connections = 0
        self.sent = 0  # bytes of the current answer's writes that the kernel took

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class ScriptedHandler(socketserver.BaseRequestHandler):
    """Answers each request of a keep-alive connection with the server's scripted writes."""

    server: Scripted

    def handle(self) -> None:
        sock = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.connections += 1
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                data = sock.recv(65536)
                if not data:
                    return
                buf += data
            head, buf = buf.split(b"\r\n\r\n", 1)
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(buf) < length:
                buf += sock.recv(65536)
            buf = buf[length:]
            sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            self.server.sent = 0
            for write in self.server.writes:
                if self.server.pause:
                    time.sleep(self.server.pause)
                sock.sendall(write)
                self.server.sent += len(write)
            if self.server.close_after:
                sock.shutdown(socket.SHUT_RDWR)
                return


@pytest.fixture(scope="module")
def upstream() -> Iterator[Scripted]:
    server = Scripted()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def proxies(upstream: Scripted, start_proxy_module: ProxyFactory) -> tuple[Process, Process]:
    """The same guarded proxy with the lane (logging at debug, to count what it took) and without."""
    lane = start_proxy_module(upstream.url, "--log-level", "debug")
    no_lane = start_proxy_module(upstream.url, "--no-fast-lane")
    return lane, no_lane


def stream(proxy: Process, client: httpx.Client | None = None) -> bytes:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with (client or httpx).stream("POST", proxy.url + "/v1/chat/completions", json=body, timeout=20) as response:
        assert response.status_code == 200
        return response.read()


def lane_reports(proxy: Process) -> list[dict[str, object]]:
    assert proxy.log_path is not None
    lines = Path(proxy.log_path).read_text().splitlines()
    return [json.loads(line) for line in lines if '"fast lane done"' in line]


def texts(raw: bytes) -> str:
    return "".join(c["delta"].get("content") or "" for block in raw.split(b"\n\n") if block.startswith(b"data: {")
                   for c in json.loads(block[6:]).get("choices", []))


ANSWER = ["Your ", "card ", CARD[:4], CARD[4:10], CARD[10:], " is ", "on file, ", "thanks. ", *["ok "] * 20]


def same_answer(with_lane: bytes, without: bytes) -> None:
    assert texts(with_lane) == texts(without)
    def shape(raw: bytes) -> list[object]:
        return [json.loads(e[6:]).get("object") if e.startswith(b"data: {") else e for e in raw.split(b"\n\n")]
    assert set(shape(with_lane)) == set(shape(without))


@pytest.mark.parametrize("how", ["per_chunk", "every_7", "three_per_write", "random-1", "random-2"])
def test_the_lane_gives_the_client_what_mitmproxy_gives(upstream: Scripted, proxies: tuple[Process, Process],
                                                        how: str) -> None:
    lane, no_lane = proxies
    upstream.writes, upstream.close_after = cut(wire_of(ANSWER), how), False
    with_lane, without = stream(lane), stream(no_lane)
    same_answer(with_lane, without)
    assert texts(with_lane) == "Your card ************7894 is on file, thanks. " + "ok " * 20  # guarded: masked
    time.sleep(0.2)  # the report is logged when the answer ends
    reports = lane_reports(lane)
    assert reports  # armed, and stepped aside at the end
    if how in ("per_chunk", "three_per_write"):  # reads that end on a chunk's end: the lane's
        assert int(str(reports[-1]["reads_taken"])) > 0
    # (cut every 7 bytes, no read ends where a chunk does: mitmproxy reads every byte, as without the lane)


def test_a_blocked_answer_under_the_lane_ends_as_on_mitmproxys_path(upstream: Scripted,
                                                                      proxies: tuple[Process, Process]) -> None:
    lane, no_lane = proxies
    upstream.writes = cut(wire_of(["Okay. ", "Here is ", "how to make ", "a bomb ", "at home, ", "step by step."]),
                          "per_chunk")
    with_lane, without = stream(lane), stream(no_lane)
    same_answer(with_lane, without)
    events = [e for e in with_lane.split(b"\n\n") if e]
    assert events[-1] == b"data: [DONE]"
    assert json.loads(events[-2][6:])["error"]["code"] == "content_blocked"
    assert b"bomb" not in with_lane


def test_an_upstream_that_breaks_off_under_the_lane_ends_with_an_error_event(
        upstream: Scripted, proxies: tuple[Process, Process]) -> None:
    lane, no_lane = proxies
    upstream.writes, upstream.close_after = cut(wire_of(["partial ", "answer ", "then "] * 3), "per_chunk",
                                                end=False)[:-1], True
    try:
        with_lane, without = stream(lane), stream(no_lane)
    finally:
        upstream.close_after = False
    same_answer(with_lane, without)
    events = [e for e in with_lane.split(b"\n\n") if e]
    assert events[-1] == b"data: [DONE]"
    assert json.loads(events[-2][6:])["error"]["code"] == "upstream_unavailable"
    assert texts(with_lane).startswith("partial answer then")


def test_a_kept_alive_upstream_connection_carries_the_next_answer(upstream: Scripted,
                                                                  proxies: tuple[Process, Process]) -> None:
    lane, _ = proxies
    upstream.writes, upstream.close_after = cut(wire_of(["first ", "answer"]), "per_chunk"), False
    before, reported = upstream.connections, len(lane_reports(lane))
    with httpx.Client() as client:
        first = stream(lane, client)
        upstream.writes = cut(wire_of(["second ", "answer"]), "every_7")
        second = stream(lane, client)
    assert texts(first) == "first answer" and texts(second) == "second answer"
    assert upstream.connections - before == 1  # one upstream connection, the lane stepped aside in between
    time.sleep(0.2)
    assert len(lane_reports(lane)) - reported == 2  # armed for each answer


def test_a_client_that_stops_reading_stops_the_upstream(upstream: Scripted, proxies: tuple[Process, Process]) -> None:
    """Back-pressure: the lane hands reads back to mitmproxy once the client's write buffer is full, and
    mitmproxy stops reading the upstream, so a client that does not read holds a bounded amount in the proxy."""
    lane, _ = proxies
    total_events = 12_000
    upstream.writes, upstream.pause = cut(wire_of(["x" * 2000] * total_events), "per_chunk"), 0.0
    body = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}).encode()
    try:
        with socket.create_connection(("127.0.0.1", lane.port)) as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                           b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
            time.sleep(3.0)  # not reading
            # The kernel's socket buffers on loopback hold ~9 MB of it (measured: 8.7-8.9 MB with and without the
            # lane); a proxy that kept reading would have taken all 26 MB.
            assert 0 < upstream.sent < 16 * 2**20
            received, tail = 0, b""
            client.settimeout(20)
            while data := client.recv(1 << 20):  # until the proxy closes (the client asked it to)
                received += len(data)
                tail = (tail + data)[-64:]
            assert upstream.sent == sum(map(len, upstream.writes))  # then everything came through
            assert received > 2000 * total_events and tail.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")
    finally:
        upstream.pause = PAUSE
