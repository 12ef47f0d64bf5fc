"""Pass-through is exact and streams are relayed event by event: the official openai client through
`warden serve` to the stand-in, compared with the stand-in's own answers."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
from pathlib import Path

import httpx
import openai
import pytest

from tests.e2e.conftest import Process, ProxyFactory
from tests.tls import write_self_signed

pytestmark = pytest.mark.slow

MESSAGES = [{"role": "user", "content": "你好，请把这段话原样返回: naïve café ☕ 中文"}]


@pytest.fixture
def proxy(standin: Process, start_proxy: ProxyFactory) -> Process:
    return start_proxy(standin.url)


def sse_payloads(raw: bytes) -> list[dict[str, object]]:
    events = [e for e in raw.split(b"\n\n") if e.startswith(b"data: ") and e != b"data: [DONE]"]
    return [json.loads(e[6:]) for e in events]


def sse_text(raw: bytes) -> str:
    return "".join(
        choice["delta"].get("content") or ""  # type: ignore[index, union-attr]
        for payload in sse_payloads(raw) for choice in payload["choices"]  # type: ignore[attr-defined]
    )


def sse_usage(raw: bytes) -> object:
    return [p["usage"] for p in sse_payloads(raw) if p.get("usage")]


def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0, timeout=10)


def test_chat_non_streamed_equals_direct(proxy: Process, standin: Process) -> None:
    via = client(proxy.url).chat.completions.create(model="standin-base", messages=MESSAGES)  # type: ignore[arg-type]
    direct = client(standin.url).chat.completions.create(model="standin-base", messages=MESSAGES)  # type: ignore[arg-type]
    assert via.choices[0].message.content == direct.choices[0].message.content
    assert via.choices[0].message.content == "Echo: " + MESSAGES[0]["content"]
    assert via.usage is not None and via.usage.prompt_tokens == direct.usage.prompt_tokens  # type: ignore[union-attr]


@pytest.mark.parametrize("chunk_bytes", [0, 1, 3, 7, 64])
def test_stream_with_awkward_splits_equals_direct(proxy: Process, standin: Process, chunk_bytes: int) -> None:
    body = {"model": "standin-base", "messages": MESSAGES, "stream": True,
            "stream_options": {"include_usage": True},
            "standin": {"chunk_bytes": chunk_bytes, "prefix_cache": False}}
    via = httpx.post(proxy.url + "/v1/chat/completions", json=body, timeout=10)
    direct = httpx.post(standin.url + "/v1/chat/completions", json=body, timeout=10)
    assert via.status_code == 200
    assert via.headers["content-type"].startswith("text/event-stream")
    # However the upstream cut its writes, the client gets whole events with the same text and usage.
    # (The guard may hold back a few characters that could start a match, so event boundaries may move.)
    assert sse_text(via.content) == sse_text(direct.content)
    assert sse_usage(via.content) == sse_usage(direct.content)
    assert via.content.endswith(b"data: [DONE]\n\n")

    stream = client(proxy.url).chat.completions.create(
        model="standin-base", messages=MESSAGES, stream=True,  # type: ignore[arg-type]
        stream_options={"include_usage": True}, extra_body={"standin": {"chunk_bytes": chunk_bytes}},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Echo: " + MESSAGES[0]["content"]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_completions_embeddings_models(proxy: Process) -> None:
    c = client(proxy.url)
    completion = c.completions.create(model="standin-base", prompt="hello world")
    assert completion.choices[0].text == "Echo: hello world"
    streamed = "".join(
        ch.choices[0].text for ch in c.completions.create(model="standin-base", prompt="流式 text", stream=True)
        if ch.choices
    )
    assert streamed == "Echo: 流式 text"
    embedding = c.embeddings.create(model="standin-base", input=["a", "b"])
    assert len(embedding.data) == 2
    assert {m.id for m in c.models.list()} == {"standin-base", "standin-lora-sql"}


def test_first_event_arrives_before_upstream_finishes(proxy: Process) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 40}], "stream": True,
            "standin": {"chars_per_event": 2, "event_delay_ms": 50}}
    started = time.monotonic()
    first_at = None
    events = 0
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=body, timeout=20) as resp:
        for line in resp.iter_lines():
            if line.startswith("data:"):
                events += 1
                if first_at is None:
                    first_at = time.monotonic() - started
    total = time.monotonic() - started
    assert events > 20
    assert first_at is not None
    # ~25 events 50 ms apart: a buffering proxy would deliver the first one only at the end.
    assert first_at < 0.5 < total


def test_exact_passthrough_of_method_path_query_headers_body(proxy: Process, standin: Process) -> None:
    body = bytes(range(256)) * 10  # not JSON, not UTF-8
    headers = {"X-Custom": "v1", "Content-Type": "application/octet-stream", "Authorization": "Bearer t0k"}
    via = httpx.put(proxy.url + "/echo/a%20b?x=1&y=%E4%B8%AD", content=body, headers=headers).json()
    assert via["method"] == "PUT"
    assert via["path"] == "/echo/a%20b?x=1&y=%E4%B8%AD"
    assert via["body_len"] == len(body)
    seen = {k.lower(): v for k, v in via["headers"]}
    assert seen["x-custom"] == "v1"
    assert seen["authorization"] == "Bearer t0k"
    assert seen["x-request-id"]  # generated and forwarded


@pytest.mark.parametrize(("supplied", "kept"), [
    ("req-42.a:b", True), ("110105199003071239", False), ("x" * 200, False),
])
def test_a_clients_request_id_is_kept_only_when_sane_and_free_of_pii(proxy: Process, supplied: str, kept: bool) -> None:
    """Logs and audit records carry the request id: a PII value (an ID number is a valid token) is replaced."""
    response = httpx.get(proxy.url + "/echo", headers={"X-Request-ID": supplied})
    seen = {k.lower(): v for k, v in response.json()["headers"]}
    assert (seen["x-request-id"] == supplied) is kept
    assert response.headers["x-warden-request-id"] == seen["x-request-id"]


def test_hop_by_hop_headers_are_not_forwarded(proxy: Process) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    conn.request("GET", "/echo", headers={"Connection": "keep-alive, X-Hop", "X-Hop": "secret-hop",
                                          "Keep-Alive": "timeout=5", "X-End": "kept"})
    seen = {k.lower(): v for k, v in json.loads(conn.getresponse().read())["headers"]}
    assert seen.get("x-end") == "kept"
    assert "x-hop" not in seen
    assert "keep-alive" not in seen


def test_upstream_status_codes_pass_through(proxy: Process) -> None:
    with pytest.raises(openai.APIStatusError) as info:
        client(proxy.url).chat.completions.create(
            model="m", messages=MESSAGES, extra_body={"standin": {"status": 503}},  # type: ignore[arg-type]
        )
    assert info.value.status_code == 503
    assert info.value.body["code"] == "standin_error"  # type: ignore[index]
    assert httpx.get(proxy.url + "/nowhere").status_code == 404


def test_keep_alive_reuses_the_client_connection(proxy: Process) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    sockets = set()
    for i in range(5):
        conn.request("POST", "/v1/completions", body=json.dumps({"model": "m", "prompt": f"p{i}"}),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert json.loads(response.read())["choices"][0]["text"] == f"Echo: p{i}"
        assert conn.sock is not None
        sockets.add(id(conn.sock))
    assert len(sockets) == 1


def test_malformed_json_is_forwarded_and_proxy_keeps_serving(proxy: Process) -> None:
    bad = httpx.post(proxy.url + "/v1/chat/completions", content=b'{"model": "m", "messages": [',
                     headers={"Content-Type": "application/json"})
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid_json"  # the upstream's own answer
    bad_utf8 = httpx.post(proxy.url + "/v1/chat/completions", content=b'{"model": "\xff\xfe"}',
                          headers={"Content-Type": "application/json"})
    assert bad_utf8.status_code == 400
    ok = client(proxy.url).chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert ok.choices[0].message.content


def test_concurrent_streams(proxy: Process) -> None:
    results: list[str] = []

    def one(i: int) -> None:
        stream = client(proxy.url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": f"stream {i} 中文"}], stream=True,
            extra_body={"standin": {"chunk_bytes": 5}},
        )
        results.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted(f"Echo: stream {i} 中文" for i in range(16))


def aborted_streams(standin: Process) -> int:
    return int(httpx.get(standin.url + "/_standin/aborted").json()["aborted_streams"])


def wait_for_aborted(standin: Process, before: int, within: float = 5.0) -> None:
    """The stand-in saw its stream's reader go away: the proxy cancelled the upstream request."""
    deadline = time.monotonic() + within
    while aborted_streams(standin) == before:
        assert time.monotonic() < deadline, "the upstream stream was not cancelled"
        time.sleep(0.05)


# ~8 s of events: long enough that only a cancelled upstream request stops early.
SLOW_STREAM = {"model": "m", "messages": [{"role": "user", "content": "y" * 400}], "stream": True,
               "standin": {"chars_per_event": 1, "event_delay_ms": 20}}


@pytest.mark.parametrize("guard", [True, False])
def test_client_vanishing_mid_stream_cancels_upstream_and_leaves_proxy_serving(
    standin: Process, start_proxy: ProxyFactory, guard: bool
) -> None:
    proxy = start_proxy(standin.url, *(() if guard else ("--no-guard",)))
    before = aborted_streams(standin)
    body = json.dumps(SLOW_STREAM).encode()
    sock = socket.create_connection(("127.0.0.1", proxy.port))
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    assert b"200 OK" in sock.recv(4096)
    sock.close()  # vanish mid-stream
    wait_for_aborted(standin, before)
    ok = client(proxy.url).chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert ok.choices[0].message.content


class RawH2Client:
    """An HTTP/2 client over TLS that can reset one stream and go on using the connection (httpx cannot: it
    offers http/1.1 first by ALPN, which mitmproxy honours, and sets no stream resets apart)."""

    def __init__(self, port: int, cafile: Path) -> None:
        import h2.config
        import h2.connection

        tls = ssl.create_default_context(cafile=str(cafile))
        tls.set_alpn_protocols(["h2"])
        self.sock = tls.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                    server_hostname="localhost")
        assert self.sock.selected_alpn_protocol() == "h2"
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.headers: dict[bytes, bytes] = {}  # of the last response read
        self.conn.initiate_connection()
        self.flush()

    def flush(self) -> None:
        self.sock.sendall(self.conn.data_to_send())

    def post(self, stream_id: int, path: str, body: dict[str, object], *, content_length: bool = True) -> None:
        data = json.dumps(body).encode()
        length = [("content-length", str(len(data)))] if content_length else []
        self.conn.send_headers(stream_id, [(":method", "POST"), (":path", path), (":scheme", "https"),
                                           (":authority", "localhost"), ("content-type", "application/json"),
                                           *length])
        self.conn.send_data(stream_id, data, end_stream=True)
        self.flush()

    def read_until(self, stream_id: int, *, ended: bool) -> tuple[int, bytes]:
        """(status, body so far) of `stream_id`, once its first data (or, with `ended`, its end) arrived; the
        response headers are kept in `self.headers`."""
        import h2.events

        status, body = 0, b""
        while True:
            for event in self.conn.receive_data(self.sock.recv(65536)):
                if getattr(event, "stream_id", None) != stream_id:
                    continue
                if isinstance(event, h2.events.ResponseReceived):
                    self.headers = dict(event.headers)
                    status = int(self.headers[b":status"])
                elif isinstance(event, h2.events.DataReceived):
                    body += event.data
                    self.conn.acknowledge_received_data(event.flow_controlled_length, stream_id)
                    if not ended:
                        self.flush()
                        return status, body
                elif isinstance(event, h2.events.StreamEnded | h2.events.StreamReset):
                    self.flush()
                    return status, body
            self.flush()


def test_an_http2_client_cancelling_a_stream_cancels_upstream_and_keeps_its_connection(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path
) -> None:
    import h2.errors

    cert, key = write_self_signed(tmp_path)
    proxy = start_proxy(standin.url, "--tls-cert", str(cert), "--tls-key", str(key))
    before = aborted_streams(standin)
    client_h2 = RawH2Client(proxy.port, cert)
    client_h2.post(1, "/v1/chat/completions", SLOW_STREAM)
    status, first = client_h2.read_until(1, ended=False)
    assert status == 200 and first.startswith(b"data: ")
    client_h2.conn.reset_stream(1, h2.errors.ErrorCodes.CANCEL)
    client_h2.flush()
    wait_for_aborted(standin, before)
    client_h2.post(3, "/v1/chat/completions", {"model": "m", "messages": MESSAGES})  # the same connection
    status, body = client_h2.read_until(3, ended=True)
    assert status == 200 and json.loads(body)["choices"][0]["message"]["content"]
    client_h2.sock.close()


def test_stand_in_streams_given_pieces_one_event_each(standin: Process) -> None:
    pieces = ["流式", "输出", " token", "s", " ok"]
    body = {"model": "standin-base", "messages": MESSAGES, "stream": True,
            "standin": {"pieces": pieces, "chars_per_event": 1}}
    events = [json.loads(line[6:]) for line in httpx.post(standin.url + "/v1/chat/completions", json=body,
                                                          timeout=10).text.splitlines()
              if line.startswith("data: {")]
    contents = [e["choices"][0]["delta"].get("content") for e in events if e["choices"]]
    assert contents == ["", *pieces, None]  # the role chunk, one event per piece, the finish chunk


@pytest.mark.parametrize("guard", [True, False])
def test_an_http2_request_without_content_length_reaches_the_upstream_whole(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path, guard: bool
) -> None:
    """HTTP/2 frames bodies itself; forwarded to the HTTP/1 upstream, the body needs its Content-Length, or
    the upstream reads none and takes the bytes for the next request."""
    cert, key = write_self_signed(tmp_path)
    proxy = start_proxy(standin.url, "--tls-cert", str(cert), "--tls-key", str(key),
                        *(() if guard else ("--no-guard",)))
    client_h2 = RawH2Client(proxy.port, cert)
    body = {"model": "m", "messages": [{"role": "user", "content": "no length header"}]}
    for stream_id in (1, 3):  # the second request reuses the upstream connection: it must not be desynchronised
        client_h2.post(stream_id, "/v1/chat/completions", body, content_length=False)
        status, answer = client_h2.read_until(stream_id, ended=True)
        assert status == 200
        assert json.loads(answer)["choices"][0]["message"]["content"] == "Echo: no length header"
    client_h2.sock.close()


def test_an_http2_body_over_the_limit_gets_a_json_413(standin: Process, start_proxy: ProxyFactory,
                                                       tmp_path: Path) -> None:
    cert, key = write_self_signed(tmp_path)
    proxy = start_proxy(standin.url, "--tls-cert", str(cert), "--tls-key", str(key), "--max-body", "1KiB")
    client_h2 = RawH2Client(proxy.port, cert)
    client_h2.post(1, "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "x" * 4096}]},
                   content_length=False)
    status, body = client_h2.read_until(1, ended=True)
    assert status == 413 and client_h2.headers[b"content-type"] == b"application/json"
    assert json.loads(body)["error"]["code"] == "request_too_large"
    client_h2.sock.close()


def test_an_unguarded_compressed_stream_goes_on_as_it_comes(standin: Process, start_proxy: ProxyFactory) -> None:
    """--no-guard passes a compressed stream on exactly, event by event: not held back until its end."""
    proxy = start_proxy(standin.url, "--no-guard")
    body = {"model": "m", "messages": MESSAGES, "stream": True,
            "standin": {"compress": "gzip", "chars_per_event": 1, "event_delay_ms": 30}}
    started = time.monotonic()
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=body, timeout=20) as r:
        assert r.headers["content-encoding"] == "gzip"
        chunks = r.iter_bytes()
        first = next(chunks)
        first_at = time.monotonic() - started
        raw = first + b"".join(chunks)
    total = time.monotonic() - started
    assert first.startswith(b"data: ") and first_at < total / 2  # ~30 events, 30 ms apart
    assert sse_text(raw) and raw.endswith(b"data: [DONE]\n\n")
