"""The re-ask request (proxy/schemas/reask.py): the conversation extended the way the API's rules require."""

from __future__ import annotations

import json
from typing import Any

from proxy.schemas.answer import check_answer
from proxy.schemas.plan import SchemaPlan, SchemaSource
from proxy.schemas.reask import CALL_NOT_RUN, reask_body
from proxy.state import Route
from rules.schema import SchemaCache

CACHE = SchemaCache()
PERSON = CACHE.compile({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
WEATHER = CACHE.compile({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
SENT = {"model": "m", "messages": [{"role": "user", "content": "who?"}], "stream": True,
        "stream_options": {"include_usage": True}, "response_format": {"type": "json_object"}}


def chat(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": i, "message": {"role": "assistant", "refusal": None, **m}}
                        for i, m in enumerate(messages)]}


def test_chat_text_the_answer_then_the_violations_as_the_user() -> None:
    answer = chat({"content": 'Here: {"name": 1}'})
    check = check_answer(Route.CHAT, answer, SchemaPlan(SchemaSource.REQUEST, PERSON))
    body = reask_body(Route.CHAT, SENT, answer, check)
    assert body["stream"] is False and "stream_options" not in body
    assert body["response_format"] == SENT["response_format"] and body["model"] == "m"
    first, assistant, user = body["messages"]
    assert first == SENT["messages"][0]
    assert assistant == {"role": "assistant", "content": 'Here: {"name": 1}'}  # no refusal: null etc.
    assert user["role"] == "user" and check.messages()[0] in user["content"]
    assert "Here" not in user["content"]  # our words and the schema's, never the answer's
    assert len(SENT["messages"]) == 1  # the sent body is not changed


def test_chat_n_choices_the_first_failing_choice_is_the_turn() -> None:
    answer = chat({"content": '{"name": "ok"}'}, {"content": "{}"})
    check = check_answer(Route.CHAT, answer, SchemaPlan(SchemaSource.REQUEST, PERSON))
    messages = reask_body(Route.CHAT, SENT, answer, check)["messages"]
    assert messages[1] == {"role": "assistant", "content": "{}"} and messages[2]["role"] == "user"


def test_chat_tool_calls_every_call_gets_its_tool_message() -> None:
    answer = chat({"content": None, "tool_calls": [
        {"id": "ok1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}},
        {"id": "bad2", "type": "function", "function": {"name": "weather", "arguments": '{"town": "Oslo"}'}},
    ]})
    check = check_answer(Route.CHAT, answer, SchemaPlan(SchemaSource.REQUEST, None, {"weather": WEATHER}), {"weather"})
    messages = reask_body(Route.CHAT, SENT, answer, check)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assistant = messages[1]
    assert assistant["content"] is None and [c["id"] for c in assistant["tool_calls"]] == ["ok1", "bad2"]
    assert assistant["tool_calls"][1]["function"] == {"name": "weather", "arguments": '{"town": "Oslo"}'}
    assert messages[2] == {"role": "tool", "tool_call_id": "ok1", "content": CALL_NOT_RUN}
    assert messages[3]["tool_call_id"] == "bad2" and "required" in messages[3]["content"]


def test_chat_a_call_without_an_id_gets_one_of_ours() -> None:
    answer = chat({"content": None, "tool_calls": [{"type": "function", "function": {"name": "weather",
                                                                                      "arguments": "x"}}]})
    check = check_answer(Route.CHAT, answer, SchemaPlan(SchemaSource.REQUEST, None, {"weather": WEATHER}), {"weather"})
    messages = reask_body(Route.CHAT, SENT, answer, check)["messages"]
    assert messages[1]["tool_calls"][0]["id"] == messages[2]["tool_call_id"] == "call_warden_0"


def test_re_asks_accumulate_the_conversation() -> None:
    plan = SchemaPlan(SchemaSource.REQUEST, PERSON)
    first = chat({"content": "a"})
    body = reask_body(Route.CHAT, SENT, first, check_answer(Route.CHAT, first, plan))
    second = chat({"content": "b"})
    body = reask_body(Route.CHAT, body, second, check_answer(Route.CHAT, second, plan))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in body["messages"] if m["role"] == "assistant"] == ["a", "b"]


def test_responses_a_string_input_becomes_the_user_message() -> None:
    answer = {"output": [{"type": "message", "id": "msg_1", "role": "assistant",
                          "content": [{"type": "output_text", "text": "nope", "annotations": []}]}]}
    sent = {"model": "m", "input": "who?", "text": {"format": {"type": "json_object"}}, "stream": True}
    check = check_answer(Route.RESPONSES, answer, SchemaPlan(SchemaSource.REQUEST, PERSON))
    body = reask_body(Route.RESPONSES, sent, answer, check)
    assert body["stream"] is False and body["text"] == sent["text"]
    user, assistant, again = body["input"]
    assert user == {"role": "user", "content": "who?"} and assistant == {"role": "assistant", "content": "nope"}
    assert again["role"] == "user" and "keyword `json`" in again["content"]


def test_responses_function_calls_get_their_outputs() -> None:
    answer = {"output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
                          "arguments": "{}", "status": "completed"}]}
    sent = {"model": "m", "input": [{"role": "user", "content": "weather?"}], "store": False}
    check = check_answer(Route.RESPONSES, answer, SchemaPlan(SchemaSource.REQUEST, None, {"weather": WEATHER}),
                         {"weather"})
    items = reask_body(Route.RESPONSES, sent, answer, check)["input"]
    assert items[1] == {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{}"}
    assert items[2]["type"] == "function_call_output" and items[2]["call_id"] == "call_1"
    assert "required" in items[2]["output"] and len(items) == 3
    json.dumps(items)  # plain JSON
