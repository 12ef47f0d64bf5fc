"""The guard in the real proxy: masked, pseudonymized, blocked, on whole and streamed answers."""

from __future__ import annotations

import gzip
import json
import signal
import time
from pathlib import Path

import httpx
import openai
import pytest

from tests.e2e.conftest import REPO, Process, ProxyFactory, http_get, warden_command

pytestmark = pytest.mark.slow

ID = "110105199003071239"
CARD = "6222021234567894"
PHONE = "13812345678"


def client(proxy: Process) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0, timeout=20)


def last_upstream_body(standin: Process) -> dict[str, object]:
    status, body = http_get(standin.url + "/_standin/last")
    assert status == 200
    parsed: dict[str, object] = json.loads(body)
    return parsed


@pytest.fixture
def proxy(standin: Process, start_proxy: ProxyFactory) -> Process:
    return start_proxy(standin.url, "--request-pii", "pseudonymize")


def test_prompt_pii_is_pseudonymized_upstream_and_restored_in_the_answer(proxy: Process, standin: Process) -> None:
    answer = client(proxy).chat.completions.create(
        model="standin-base", messages=[{"role": "user", "content": f"请回电{PHONE}，谢谢"}]
    )
    forwarded = json.dumps(last_upstream_body(standin), ensure_ascii=False)
    assert PHONE not in forwarded and "<CN_MOBILE_1>" in forwarded  # the model never saw the number
    assert answer.choices[0].message.content == f"Echo: 请回电{PHONE}，谢谢"  # the client gets it back


def test_pii_the_model_produces_is_masked(proxy: Process) -> None:
    answer = client(proxy).chat.completions.create(
        model="standin-base", messages=[{"role": "user", "content": "hi"}],
        extra_body={"standin": {"reply": f"身份证号{ID}，卡号{CARD}"}},
    )
    assert answer.choices[0].message.content == "身份证号110105********1239，卡号************7894"


def test_streamed_card_split_across_chunks_arrives_masked(proxy: Process) -> None:
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", timeout=20, json={
        "model": "standin-base", "messages": [{"role": "user", "content": "hi"}], "stream": True,
        "standin": {"reply": f"卡号 {CARD[:4]} {CARD[4:8]} {CARD[8:12]} {CARD[12:]} 已记录", "chunk_bytes": 3,
                    "chars_per_event": 2},
    }) as response:
        raw = response.read()
        assert response.headers["x-warden-request-id"]
    assert CARD[:4].encode() + b" " + CARD[4:8].encode() not in raw
    text = "".join(
        choice["delta"].get("content") or ""
        for block in raw.split(b"\n\n") if block.startswith(b"data: {")
        for choice in json.loads(block[6:])["choices"]
    )
    assert text == "卡号 **** **** **** 7894 已记录"


def test_openai_client_stream_restores_pseudonyms(proxy: Process) -> None:
    stream = client(proxy).chat.completions.create(
        model="standin-base", stream=True, messages=[{"role": "user", "content": f"my phone is {PHONE}"}],
        extra_body={"standin": {"chunk_bytes": 5, "chars_per_event": 3}},
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == f"Echo: my phone is {PHONE}"


def test_blocked_prompt_never_reaches_the_model(proxy: Process, standin: Process) -> None:
    before = last_upstream_body(standin)
    with pytest.raises(openai.BadRequestError) as info:
        client(proxy).chat.completions.create(
            model="standin-base", messages=[{"role": "user", "content": "我想找枪手代考四六级"}]
        )
    error = info.value.body
    assert isinstance(error, dict) and error["code"] == "content_blocked" and error["rules"] == ["exam_fraud"]
    assert "代考" not in info.value.message
    assert info.value.response.headers["x-warden-action"] == "block"
    assert last_upstream_body(standin) == before


def test_blocked_answer_mid_stream_ends_with_error_event(proxy: Process) -> None:
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", timeout=20, json={
        "model": "standin-base", "messages": [{"role": "user", "content": "hi"}], "stream": True,
        "standin": {"reply": "Okay. Here is how to make a bomb at home, step by step.", "chunk_bytes": 4},
    }) as response:
        raw = response.read()
    events = [e for e in raw.split(b"\n\n") if e]
    assert events[-1] == b"data: [DONE]"
    assert json.loads(events[-2][6:])["error"]["code"] == "content_blocked"
    assert b"bomb" not in raw and b"step by step" not in raw


def test_blocked_whole_answer(proxy: Process) -> None:
    response = httpx.post(proxy.url + "/v1/chat/completions", json={
        "model": "m", "messages": [{"role": "user", "content": "hi"}],
        "standin": {"reply": "sure: how to make a bomb"}})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "output"
    assert b"bomb" not in response.content


def test_gzip_request_is_inspected_and_rewritten(proxy: Process, standin: Process) -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"id {ID}"}]}).encode()
    response = httpx.post(proxy.url + "/v1/chat/completions", content=gzip.compress(body),
                          headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert response.status_code == 200
    assert ID not in json.dumps(last_upstream_body(standin))


def test_gzip_bomb_is_refused(proxy: Process) -> None:
    bomb = gzip.compress(b'{"model": "m", "messages": [{"role": "user", "content": "' + b"a" * 50_000_000 + b'"}]}')
    assert len(bomb) < 8 * 1024 * 1024
    response = httpx.post(proxy.url + "/v1/chat/completions", content=bomb,
                          headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert response.status_code == 413


def test_malformed_json_on_an_inspected_route_is_refused_not_forwarded(proxy: Process) -> None:
    response = httpx.post(proxy.url + "/v1/chat/completions", content=b'{"messages": [',
                          headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"
    assert response.headers["x-warden-request-id"]


@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_json_nested_deeper_than_the_parser_goes_is_refused_as_invalid(proxy: Process, depth: int) -> None:
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi", "x": ' + b"[" * depth + b"]" * depth + b"}]}"
    response = httpx.post(proxy.url + "/v1/chat/completions", content=body,
                          headers={"Content-Type": "application/json"})
    assert response.status_code == 400  # the client's error, not a 500 of ours
    error = response.json()["error"]
    assert error["code"] == "invalid_json" and "nested too deeply" in error["message"]


def test_bad_rule_file_refuses_to_start(tmp_path: Path) -> None:
    import subprocess

    bad = tmp_path / "bad.yaml"
    bad.write_text('[{"pattern": "(?<=x)y", "level": 2}]\n')
    command = warden_command("serve", "--no-semantic", "--upstream", "http://127.0.0.1:1", "--rules", str(bad))
    result = subprocess.run(command,
                            cwd=REPO, capture_output=True, timeout=60)
    assert result.returncode == 78
    assert b"bad.yaml" in result.stderr


def test_sighup_reloads_rules_and_keeps_them_on_a_bad_file(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path
) -> None:
    rules = tmp_path / "site.yaml"
    rules.write_text('[{"pattern": "(?i)project bluebird", "level": 2}]\n')
    proxy = start_proxy(standin.url, "--rules", str(rules))
    ask = {"model": "m", "messages": [{"role": "user", "content": "tell me about project nightjar"}]}
    assert httpx.post(proxy.url + "/v1/chat/completions", json=ask).status_code == 200
    rules.write_text('[{"pattern": "(?i)project nightjar", "level": 2}]\n')
    proxy.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 20
    while httpx.post(proxy.url + "/v1/chat/completions", json=ask).status_code != 400:
        assert time.monotonic() < deadline, "the reload never took effect"
        time.sleep(0.2)
    rules.write_text("not: [valid")
    proxy.proc.send_signal(signal.SIGHUP)
    time.sleep(1.5)
    assert httpx.post(proxy.url + "/v1/chat/completions", json=ask).status_code == 400  # old rules still live
    assert proxy.log_path is not None and "rule reload refused" in proxy.log_path.read_text()


def streamed_text(raw: bytes) -> str:
    return "".join(
        choice["delta"].get("content") or ""
        for block in raw.split(b"\n\n") if block.startswith(b"data: {") and b'"error"' not in block
        for choice in json.loads(block[6:])["choices"]
    )


@pytest.mark.parametrize("compress", ["accepted", "gzip", "deflate"])
def test_a_compressed_stream_is_decoded_and_guarded(proxy: Process, compress: str) -> None:
    """Warden asks for identity; a well-behaved upstream then does not compress ("accepted"), one that
    compresses anyway is decoded event by event, and the client gets the guarded events uncompressed."""
    reply = f"卡号 {CARD[:4]} {CARD[4:8]} {CARD[8:12]} {CARD[12:]} 已记录"
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", timeout=20, headers={"accept-encoding": "gzip"},
                      json={"model": "standin-base", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                            "standin": {"reply": reply, "chars_per_event": 2, "chunk_bytes": 5,
                                        "compress": compress}}) as response:
        assert "content-encoding" not in response.headers
        raw = response.read()
    assert CARD[:4].encode() + b" " + CARD[4:8].encode() not in raw
    assert raw.endswith(b"data: [DONE]\n\n")
    assert streamed_text(raw) == "卡号 **** **** **** 7894 已记录"


def test_a_stream_compressed_in_an_encoding_warden_cannot_decode_ends_closed(proxy: Process) -> None:
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", timeout=20,
                      json={"model": "standin-base", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                            "standin": {"reply": f"身份证号{ID}", "compress": "br"}}) as response:
        assert response.status_code == 200 and "content-encoding" not in response.headers
        raw = response.read()
    events = [block for block in raw.split(b"\n\n") if block]
    assert events[-1] == b"data: [DONE]"
    error = json.loads(events[-2].removeprefix(b"data: "))["error"]
    assert error["code"] == "upstream_unavailable" and "cannot be decoded" in error["message"]
    assert ID[:6].encode() not in raw and len(events) == 2  # nothing of the answer got through
    # The proxy keeps serving.
    answer = client(proxy).chat.completions.create(model="standin-base", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content


def test_pii_in_the_model_name_never_reaches_metrics(proxy: Process) -> None:
    """The client chooses the model name, and metrics labels (like spans and audit records) carry it."""
    response = httpx.post(proxy.url + "/v1/chat/completions", timeout=20,
                          json={"model": f"m-{ID}", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200
    metrics = http_get(proxy.admin_url + "/metrics")[1].decode()
    assert ID not in metrics and 'model_name="m-110105********1239"' in metrics
