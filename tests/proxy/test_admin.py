from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from proxy import admin
from proxy.admin import (
    AdminServer,
    Probe,
    Readiness,
    admin_token,
    bearer_credentials,
    is_loopback,
    with_admin_token,
)
from proxy.config import ConfigError, HostPort, WardenConfig
from proxy.httpget import ProbeError
from proxy.telemetry.metrics import Metrics
from proxy.telemetry.upstream_metrics import watch_upstream_health

UP = "http://up:8000"
TOKEN = "s3cr3t-Token_value.42"


# ---- the token ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("localhost", True), ("LOCALHOST", True),
    ("::ffff:127.0.0.1", True),
    ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("fe80::1%eth0", False), ("example.org", False),
    ("", False), ("128.0.0.1", False),
])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def config(**values: object) -> WardenConfig:
    return dataclasses.replace(WardenConfig(upstream=UP), **values)  # type: ignore[arg-type]


def test_loopback_admin_needs_no_token() -> None:
    assert admin_token(config()) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "warden.internal"])
def test_non_loopback_admin_without_token_is_refused_with_how_to_set_one(host: str) -> None:
    with pytest.raises(ConfigError) as caught:
        admin_token(config(admin=HostPort(host, 9464)))
    message = str(caught.value)
    assert f"{host}:9464" in message and "not loopback" in message
    assert "--admin-token-file" in message and "WARDEN_ADMIN_TOKEN" in message


def test_token_from_config_and_from_file(tmp_path: Path) -> None:
    assert admin_token(config(admin=HostPort("0.0.0.0", 9464), admin_token=TOKEN)) == TOKEN
    file = tmp_path / "token"
    file.write_text(TOKEN + "\n")  # as `echo` writes it
    resolved = with_admin_token(config(admin=HostPort("::", 9464), admin_token_file=str(file)))
    assert (resolved.admin_token, resolved.admin_token_file) == (TOKEN, None)
    file.write_text(TOKEN + "\r\n")
    assert admin_token(config(admin_token_file=str(file))) == TOKEN


@pytest.mark.parametrize(("content", "expected"), [
    (b"", "empty"), (b"\n", "empty"), (b"two words\n", "printable ASCII without spaces"),
    (b" leading", "printable ASCII"), ("jeton-é".encode(), "not ASCII"),
    (b"x" * 5000, "longer than 4096 bytes"),
])
def test_unusable_token_file_is_a_config_error_naming_the_file(tmp_path: Path, content: bytes,
                                                                 expected: str) -> None:
    file = tmp_path / "token"
    file.write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        admin_token(config(admin_token_file=str(file)))
    assert str(file) in str(caught.value) and expected in str(caught.value)
    if content.strip():
        assert content.decode("utf-8", "replace").strip() not in str(caught.value)  # never the token itself


def test_missing_token_file_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match=f"admin_token_file {missing}: cannot read it"):
        admin_token(config(admin_token_file=str(missing)))


def test_token_and_token_file_together_are_refused(tmp_path: Path) -> None:
    file = tmp_path / "token"
    file.write_text(TOKEN)
    with pytest.raises(ConfigError, match="both set"):
        admin_token(config(admin_token=TOKEN, admin_token_file=str(file)))


def test_token_with_a_space_is_refused_without_quoting_it() -> None:
    with pytest.raises(ConfigError) as caught:
        admin_token(config(admin_token="hunter2 hunter3"))
    assert "hunter2" not in str(caught.value)


def test_admin_server_itself_refuses_an_open_non_loopback_metrics() -> None:
    cfg = config(admin=HostPort("0.0.0.0", 0))
    with pytest.raises(ConfigError):
        AdminServer(cfg, Metrics(), Readiness(cfg, probe=answers({})))


@pytest.mark.parametrize(("header", "token"), [
    (b"Authorization: Bearer abc", b"abc"),
    (b"authorization:   bearer   abc  ", b"abc"),
    (b"AUTHORIZATION: BEARER abc", b"abc"),
    (b"Authorization: Basic YWJjOmRlZg==", None),
    (b"Authorization: Bearer", None),
    (b"Authorization: Bearer ", None),
    (b"X-Authorization: Bearer abc", None),
    (b"Authorization: Bearer abc\r\nAuthorization: Bearer abc", None),  # repeated: ambiguous
])
def test_bearer_credentials(header: bytes, token: bytes | None) -> None:
    assert bearer_credentials(b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n\r\n") == token


# ---- readiness ------------------------------------------------------------------------------------------


Answers = dict[str, "int | ProbeError"]


def answers(table: Answers, asked: list[str] | None = None) -> Probe:
    """A probe answering from `table` (path -> status, or the ProbeError it raises); records what it asked."""

    async def probe(url: str) -> tuple[int, bytes]:
        path = url.removeprefix(UP)
        if asked is not None:
            asked.append(path)
        answer = table.get(path, 404)
        if isinstance(answer, ProbeError):
            raise answer
        return answer, b""

    return probe


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def readiness(table: Answers, asked: list[str], clock: Clock | None = None, **values: object) -> Readiness:
    return Readiness(config(**values), probe=answers(table, asked), clock=clock or Clock())


def test_llama_server_with_health_is_ready_on_its_health_path() -> None:
    asked: list[str] = []
    ok, reason = asyncio.run(readiness({"/health": 200, "/v1/models": 200}, asked, backend="llama_cpp").check())
    assert ok and asked == ["/health"] and reason == f"upstream {UP}/health answered 200"


def test_llama_cpp_python_without_health_is_ready_through_the_model_list() -> None:
    asked: list[str] = []
    ok, reason = asyncio.run(readiness({"/v1/models": 200}, asked, backend="llama_cpp").check())
    assert ok and asked == ["/health", "/v1/models"]
    assert "/health answered 404" in reason and "/v1/models answered 200" in reason


def test_the_fallback_is_remembered_and_the_health_path_asked_again_later() -> None:
    asked: list[str] = []
    clock = Clock()
    probe = readiness({"/v1/models": 200}, asked, clock, backend="llama_cpp")

    async def go() -> None:
        assert (await probe.check())[0]
        clock.advance(0.5)
        assert (await probe.check())[0]  # cached: nothing asked
        assert asked == ["/health", "/v1/models"]
        asked.clear()
        clock.advance(5)
        assert (await probe.check())[0]
        assert asked == ["/v1/models"]  # straight to the working path
        asked.clear()
        clock.advance(admin.RECHECK_PRIMARY_SECONDS)
        assert (await probe.check())[0]
        assert asked == ["/health", "/v1/models"]  # now and then the health path again

    asyncio.run(go())


def test_a_failing_fallback_sends_the_next_check_to_the_health_path() -> None:
    asked: list[str] = []
    clock = Clock()
    table: Answers = {"/v1/models": 200}
    probe = readiness(table, asked, clock, backend="llama_cpp")

    async def go() -> None:
        assert (await probe.check())[0]
        table["/v1/models"] = ProbeError("ConnectionRefusedError")
        clock.advance(2)
        asked.clear()
        ok, reason = await probe.check()
        assert not ok and asked == ["/v1/models"] and "unreachable: ConnectionRefusedError" in reason
        table.update({"/health": 200, "/v1/models": 200})  # replaced by a server with a health path
        clock.advance(2)
        asked.clear()
        assert (await probe.check())[0]
        assert asked == ["/health"]

    asyncio.run(go())


@pytest.mark.parametrize("status", [503, 500])
def test_a_health_path_that_says_not_ready_is_believed(status: int) -> None:
    asked: list[str] = []  # llama-server answers 503 while it loads the model: no fallback then
    ok, _ = asyncio.run(readiness({"/health": status, "/v1/models": 200}, asked, backend="llama_cpp").check())
    assert not ok and asked == ["/health"]


def test_an_explicit_health_path_never_falls_back() -> None:
    asked: list[str] = []
    ok, reason = asyncio.run(readiness({"/v1/models": 200}, asked, backend="llama_cpp",
                                       health_path="/health").check())
    assert not ok and asked == ["/health"] and "answered 404" in reason


@pytest.mark.parametrize(("backend", "expected"), [("triton", ["/v2/health/ready"]), ("openai", ["/v1/models"])])
def test_backends_without_a_fallback(backend: str, expected: list[str]) -> None:
    asked: list[str] = []
    ok, _ = asyncio.run(readiness({}, asked, backend=backend).check())
    assert not ok and asked == expected


def test_fallbacks_exist_for_every_backend_with_a_health_path_and_a_model_list() -> None:
    assert admin.FALLBACK_PATHS.keys() == {"llama_cpp", "vllm", "sglang", "tgi"}


def test_unreachable_upstream_and_draining() -> None:
    asked: list[str] = []
    probe = readiness({"/health": ProbeError("ConnectionRefusedError")}, asked)
    ok, reason = asyncio.run(probe.check())
    assert not ok and "unreachable" in reason and asked == ["/health"]  # no fallback on a failure to connect
    probe = readiness({"/health": 200}, asked)
    probe.draining = True
    assert asyncio.run(probe.check()) == (False, "draining")
    assert asyncio.run(probe.upstream())[0]  # the upstream itself is fine: warden_upstream_up stays 1


def test_concurrent_checks_ask_the_upstream_once() -> None:
    asked: list[str] = []
    probe = readiness({"/v1/models": 200}, asked, backend="llama_cpp")

    async def go() -> list[tuple[bool, str]]:
        return list(await asyncio.gather(*(probe.check() for _ in range(5))))

    results = asyncio.run(go())
    assert all(ok for ok, _ in results) and asked == ["/health", "/v1/models"]


def test_a_hanging_upstream_is_not_ready_within_the_check_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admin, "CHECK_SECONDS", 0.05)

    async def hang(url: str) -> tuple[int, bytes]:
        await asyncio.sleep(10)
        return 200, b""

    ok, reason = asyncio.run(Readiness(config(), probe=hang).check())
    assert not ok and "did not answer within" in reason


def test_warden_upstream_up_reads_the_readiness_probe() -> None:
    cfg = config(backend="llama_cpp")
    table: Answers = {"/v1/models": 200}
    metrics = Metrics()
    clock = Clock()
    watch_upstream_health(Readiness(cfg, probe=answers(table), clock=clock).upstream, metrics)  # as build_services

    def up() -> float:
        text = asyncio.run(metrics.exposition()).decode()
        family = next(f for f in text_string_to_metric_families(text) if f.name == "warden_upstream_up")
        return float(family.samples[0].value)

    assert up() == 1.0  # llama-cpp-python: no /health, yet up
    table["/v1/models"] = 503
    clock.advance(2)
    assert up() == 0.0


# ---- the server -----------------------------------------------------------------------------------------


Scenario = Callable[[AdminServer], Awaitable[None]]


def serve(scenario: Scenario) -> None:
    """Run `scenario` against a real admin server on a loopback port, with a token configured."""
    cfg = config(admin=HostPort("127.0.0.1", 0), admin_token=TOKEN)

    async def go() -> None:
        admin_server = AdminServer(cfg, Metrics(), Readiness(cfg, probe=answers({"/health": 200})))
        await admin_server.start()
        try:
            await scenario(admin_server)
        finally:
            await admin_server.close()

    asyncio.run(go())


async def exchange(port: int, raw: bytes, *, half_close: bool = False) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        if half_close:
            writer.write_eof()
        async with asyncio.timeout(5):
            return await reader.read()
    finally:
        writer.close()


def get(path: str, *headers: str, method: str = "GET") -> bytes:
    return (f"{method} {path} HTTP/1.1\r\nHost: warden\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n").encode()


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_metrics_needs_the_bearer_token() -> None:
    async def scenario(server: AdminServer) -> None:
        for headers in ((), ("Authorization: Bearer wrong",), (f"Authorization: Bearer {TOKEN}x",),
                        (f"Authorization: Basic {TOKEN}",), ("Authorization: Bearer " + TOKEN[:-1],)):
            answer = await exchange(server.port, get("/metrics", *headers))
            assert status_of(answer) == 401, headers
            assert b"\r\nWWW-Authenticate: Bearer" in answer
            assert answer.endswith(b"\r\n\r\nunauthorized\n")
            assert TOKEN[:6].encode() not in answer
        answer = await exchange(server.port, get("/metrics", f"Authorization: Bearer {TOKEN}"))
        assert status_of(answer) == 200 and b"warden_build_info" in answer
        answer = await exchange(server.port, get("/metrics", f"authorization: bearer {TOKEN}", method="HEAD"))
        assert status_of(answer) == 200 and answer.endswith(b"\r\n\r\n")
        assert status_of(await exchange(server.port, get("/metrics", method="HEAD"))) == 401

    serve(scenario)


def test_probes_stay_open() -> None:
    async def scenario(server: AdminServer) -> None:
        assert status_of(await exchange(server.port, get("/healthz"))) == 200
        answer = await exchange(server.port, get("/readyz"))
        assert status_of(answer) == 200 and b'"ready": true' in answer

    serve(scenario)


def test_an_over_long_head_is_answered_431_and_the_server_serves_on() -> None:
    async def scenario(server: AdminServer) -> None:
        raw = b"GET /healthz HTTP/1.1\r\nX-Pad: " + b"a" * (admin.MAX_HEAD_BYTES * 4)
        assert status_of(await exchange(server.port, raw)) == 431
        assert status_of(await exchange(server.port, get("/healthz"))) == 200

    serve(scenario)


def test_a_get_or_head_with_a_body_is_answered_and_closed() -> None:
    async def scenario(server: AdminServer) -> None:
        for method in ("GET", "HEAD"):
            # The body is never read: declared longer than sent and the connection left open, it cannot wedge.
            raw = get("/healthz", "Content-Length: 100000", method=method) + b"x" * 1000
            assert status_of(await exchange(server.port, raw)) == 200
        raw = get("/healthz", "Transfer-Encoding: chunked") + b"5\r\nhello\r\n"
        assert status_of(await exchange(server.port, raw)) == 200
        assert status_of(await exchange(server.port, get("/healthz"))) == 200

    serve(scenario)


def test_a_slow_head_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admin, "HEAD_SECONDS", 0.1)

    async def scenario(server: AdminServer) -> None:
        assert await exchange(server.port, b"GET /healthz HTTP/1.1\r\n") == b""
        assert status_of(await exchange(server.port, get("/healthz"))) == 200

    serve(scenario)


def test_garbage_and_other_methods() -> None:
    async def scenario(server: AdminServer) -> None:
        assert status_of(await exchange(server.port, b"\r\n\r\n")) == 400
        assert status_of(await exchange(server.port, get("/metrics", method="POST"))) == 405
        assert status_of(await exchange(server.port, get("/nope"))) == 404

    serve(scenario)
