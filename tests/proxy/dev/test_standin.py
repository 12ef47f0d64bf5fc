"""The stand-in model server, in process, with the official `openai` client and raw httpx as callers: the
knobs the schema tests lean on (`replies`, `tool_calls`, the Responses API) answer in OpenAI's shapes, and the
older knobs answer as they always did."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from proxy.dev.standin import StandinConfig, StandinServer, serve


@pytest.fixture(scope="module")
def server() -> Iterator[StandinServer]:
    standin = serve("127.0.0.1", 0, StandinConfig())
    yield standin
    standin.shutdown()
    standin.server_close()


@pytest.fixture(scope="module")
def url(server: StandinServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=10)


def sse_payloads(raw: bytes) -> list[dict[str, Any]]:
    """The JSON of each `data:` line (not `[DONE]`), in order."""
    found = []
    for block in raw.split(b"\n\n"):
        for line in block.split(b"\n"):
            if line.startswith(b"data: {"):
                found.append(json.loads(line[6:]))
    return found


def post_stream(url: str, path: str, body: dict[str, Any]) -> bytes:
    with httpx.stream("POST", url + path, json=body, timeout=10) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        return response.read()


CHAT = {"model": "standin-base", "messages": [{"role": "user", "content": "hi"}]}


# ---- the knobs that were there before ----------------------------------------------------------------------


def test_echo_reply_and_pieces_are_unchanged(client: openai.OpenAI, url: str) -> None:
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "你好 there"}])
    assert answer.choices[0].message.content == "Echo: 你好 there"
    assert answer.choices[0].finish_reason == "stop" and answer.choices[0].message.tool_calls is None
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}],
                                            extra_body={"standin": {"reply": "fixed"}})
    assert answer.choices[0].message.content == "fixed"
    raw = post_stream(url, "/v1/chat/completions", {**CHAT, "stream": True,
                                                   "standin": {"pieces": ["a", "bc", "d"], "reply": "ignored"}})
    deltas = [p["choices"][0]["delta"] for p in sse_payloads(raw)]
    assert deltas == [{"role": "assistant", "content": ""}, {"content": "a"}, {"content": "bc"}, {"content": "d"}, {}]
    assert raw.endswith(b"data: [DONE]\n\n")


def test_raw_sse_drop_and_compress_are_unchanged(url: str) -> None:
    raw = post_stream(url, "/v1/chat/completions", {**CHAT, "stream": True, "standin": {"raw_sse": "data: x\n\n"}})
    assert raw == b"data: x\n\n"
    dropped = {**CHAT, "stream": True, "standin": {"drop_after_events": 2}}
    with httpx.stream("POST", url + "/v1/chat/completions", timeout=10, json=dropped) as response, \
            pytest.raises(httpx.HTTPError):
        response.read()
    with httpx.stream("POST", url + "/v1/chat/completions", timeout=10, headers={"accept-encoding": "gzip"},
                      json={**CHAT, "stream": True, "standin": {"compress": "accepted"}}) as response:
        assert response.headers["content-encoding"] == "gzip"
        assert "".join(p["choices"][0]["delta"].get("content") or "" for p in sse_payloads(response.read())
                       if p["choices"]) == "Echo: hi"


def test_completions_stream_is_unchanged(client: openai.OpenAI) -> None:
    text = "".join(c.choices[0].text for c in client.completions.create(model="m", prompt="abc", stream=True)
                   if c.choices)
    assert text == "Echo: abc"


# ---- replies: one per attempt ------------------------------------------------------------------------------


def test_replies_are_chosen_by_the_assistant_turns_in_the_conversation(client: openai.OpenAI) -> None:
    knobs = {"standin": {"replies": ["first", "second"], "reply": "not used"}}
    conversation: list[Any] = [{"role": "user", "content": "q"}]
    assert client.chat.completions.create(model="m", messages=conversation,
                                          extra_body=knobs).choices[0].message.content == "first"
    conversation += [{"role": "assistant", "content": "first"}, {"role": "user", "content": "fix it"}]
    assert client.chat.completions.create(model="m", messages=conversation,
                                          extra_body=knobs).choices[0].message.content == "second"
    conversation += [{"role": "assistant", "content": "second"}, {"role": "user", "content": "again"}]
    assert client.chat.completions.create(model="m", messages=conversation,  # past the end: the last one
                                          extra_body=knobs).choices[0].message.content == "second"


def test_replies_stream_too(url: str) -> None:
    body = {"model": "m", "stream": True, "standin": {"replies": ["one", "two"], "chunk_bytes": 5},
            "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "one"},
                         {"role": "user", "content": "again"}]}
    payloads = sse_payloads(post_stream(url, "/v1/chat/completions", body))
    assert "".join(p["choices"][0]["delta"].get("content") or "" for p in payloads) == "two"


# ---- tool calls ----------------------------------------------------------------------------------------------

CALLS = [{"name": "get_weather", "arguments": '{"city": "Paris", "unit": "c"}'},
         {"name": "get_time", "arguments": '{"tz": "Europe/Paris"}'}]


def test_tool_calls_whole(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}],
                                            extra_body={"standin": {"tool_calls": CALLS}})
    choice = answer.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    calls = choice.message.tool_calls
    assert calls is not None and len(calls) == 2
    assert [(c.type, c.function.name, c.function.arguments) for c in calls] == [  # type: ignore[union-attr]
        ("function", c["name"], c["arguments"]) for c in CALLS]
    assert all(c.id.startswith("call_") for c in calls) and calls[0].id != calls[1].id
    assert answer.usage is not None and answer.usage.completion_tokens > 0


def test_tool_calls_stream_as_openai_streams_them(url: str) -> None:
    raw = post_stream(url, "/v1/chat/completions", {**CHAT, "stream": True, "stream_options": {"include_usage": True},
                                                   "standin": {"tool_calls": CALLS, "chars_per_event": 5}})
    payloads = sse_payloads(raw)
    assert raw.endswith(b"data: [DONE]\n\n")
    deltas = [p["choices"][0]["delta"] for p in payloads if p["choices"]]
    first, second = deltas[0], deltas[1]
    assert first["role"] == "assistant" and first["content"] is None
    assert first["tool_calls"] == [{"index": 0, "id": first["tool_calls"][0]["id"], "type": "function",
                                    "function": {"name": "get_weather", "arguments": ""}}]
    assert second["tool_calls"][0]["index"] == 1 and second["tool_calls"][0]["function"]["name"] == "get_time"
    assert second["tool_calls"][0]["id"].startswith("call_") and second["tool_calls"][0]["function"]["arguments"] == ""
    pieces = [d["tool_calls"][0] for d in deltas[2:-1]]
    assert all(set(p) == {"index", "function"} and set(p["function"]) == {"arguments"} for p in pieces)
    assert [p["index"] for p in pieces[:4]] == [0, 1, 0, 1]  # the two calls' pieces interleave
    assert all(len(p["function"]["arguments"]) <= 5 for p in pieces)
    for i, call in enumerate(CALLS):
        assert "".join(p["function"]["arguments"] for p in pieces if p["index"] == i) == call["arguments"]
    assert payloads[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert payloads[-1]["choices"] == [] and payloads[-1]["usage"]["completion_tokens"] > 0


def test_tool_calls_stream_through_the_openai_client_at_awkward_bytes(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="m", stream=True, messages=[{"role": "user", "content": "q"}],
        extra_body={"standin": {"tool_calls": CALLS, "chars_per_event": 3, "chunk_bytes": 7}})
    arguments: dict[int, str] = {}
    names: dict[int, str] = {}
    finish = None
    for chunk in stream:
        for call in chunk.choices[0].delta.tool_calls or []:
            if call.function is not None and call.function.name:
                names[call.index] = call.function.name
            arguments[call.index] = arguments.get(call.index, "") + ((call.function and call.function.arguments) or "")
        finish = chunk.choices[0].finish_reason or finish
    assert names == {0: "get_weather", 1: "get_time"}
    assert arguments == {0: CALLS[0]["arguments"], 1: CALLS[1]["arguments"]}
    assert finish == "tool_calls"


def test_tool_calls_by_attempt_and_an_empty_attempt_answers_text(client: openai.OpenAI) -> None:
    knobs = {"standin": {"tool_calls": [[CALLS[0]], []], "replies": ["unused", "plain text"]}}
    first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}], extra_body=knobs)
    assert first.choices[0].message.tool_calls is not None
    assert first.choices[0].message.tool_calls[0].function.arguments == CALLS[0]["arguments"]  # type: ignore[union-attr]
    again = client.chat.completions.create(
        model="m", extra_body=knobs,
        messages=[{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": []},
                  {"role": "user", "content": "again"}])
    assert again.choices[0].message.tool_calls is None and again.choices[0].message.content == "plain text"


# ---- the Responses API -----------------------------------------------------------------------------------


def test_responses_whole(client: openai.OpenAI) -> None:
    response = client.responses.create(model="standin-base", input="hello 你好")
    assert response.object == "response" and response.status == "completed"
    assert response.output_text == "Echo: hello 你好"
    item = response.output[0]
    assert item.type == "message" and item.role == "assistant"
    assert item.content[0].type == "output_text"
    assert response.usage is not None and response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens


def test_responses_replies_count_assistant_items_in_the_input(client: openai.OpenAI) -> None:
    knobs = {"standin": {"replies": ["a", "b"]}}
    assert client.responses.create(model="m", input="q", extra_body=knobs).output_text == "a"
    again = client.responses.create(model="m", extra_body=knobs, input=[
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "fix"}])
    assert again.output_text == "b"


def test_responses_stream_sends_the_typed_events(url: str, client: openai.OpenAI) -> None:
    raw = post_stream(url, "/v1/responses", {"model": "m", "input": "hi", "stream": True,
                                             "standin": {"reply": '{"a": 1}', "chars_per_event": 3}})
    assert b"[DONE]" not in raw
    blocks = [b for b in raw.split(b"\n\n") if b]
    assert all(b.startswith(b"event: ") for b in blocks)
    payloads = sse_payloads(raw)
    kinds = [p["type"] for p in payloads]
    assert [b.split(b"\n")[0][7:].decode() for b in blocks] == kinds
    assert kinds == ["response.created", "response.in_progress", "response.output_item.added",
                     "response.content_part.added", *["response.output_text.delta"] * 3,
                     "response.output_text.done", "response.content_part.done", "response.output_item.done",
                     "response.completed"]
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert "".join(p["delta"] for p in payloads if p["type"] == "response.output_text.delta") == '{"a": 1}'
    assert payloads[0]["response"]["status"] == "in_progress" and payloads[0]["response"]["output"] == []
    assert payloads[-1]["response"]["output"][0]["content"][0]["text"] == '{"a": 1}'
    # The openai client's own stream helper accumulates them into the final response.
    with client.responses.stream(model="m", input="hi", extra_body={"standin": {"reply": "done", "chunk_bytes": 4}}
                                 ) as stream:
        final = stream.get_final_response()
    assert final.output_text == "done"


def test_responses_function_calls(client: openai.OpenAI, url: str) -> None:
    response = client.responses.create(model="m", input="q", extra_body={"standin": {"tool_calls": CALLS[:1]}})
    call = response.output[0]
    assert call.type == "function_call" and call.name == "get_weather"
    assert call.arguments == CALLS[0]["arguments"] and call.call_id.startswith("call_")
    raw = post_stream(url, "/v1/responses", {"model": "m", "input": "q", "stream": True,
                                             "standin": {"tool_calls": CALLS[:1], "chars_per_event": 4}})
    payloads = sse_payloads(raw)
    deltas = [p["delta"] for p in payloads if p["type"] == "response.function_call_arguments.delta"]
    assert "".join(deltas) == CALLS[0]["arguments"] and len(deltas) > 1
    assert payloads[-1]["type"] == "response.completed"
