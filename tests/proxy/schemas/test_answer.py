"""The texts of a whole answer under a schema plan, and what is wrong with them (proxy/schemas/answer.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from proxy.schemas.answer import check_answer, offered_functions
from proxy.schemas.plan import SchemaPlan, SchemaSource
from proxy.state import Route
from rules.schema import SchemaCache

CACHE = SchemaCache()
PERSON = CACHE.compile({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                        "required": ["name"], "additionalProperties": False})
WEATHER = CACHE.compile({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
CONTENT = SchemaPlan(SchemaSource.REQUEST, PERSON)
TOOLS = SchemaPlan(SchemaSource.REQUEST, None, {"weather": WEATHER})
SECRET = "Zaphod-7c1e"  # answer text that must never appear in a message


def chat(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": i, "message": {"role": "assistant", **m}, "finish_reason": "stop"}
                        for i, m in enumerate(messages)]}


def call(name: str, arguments: str, call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("text", [
    '{"name": "Ann"}', '\n{"age": 1.0, "name": "Ann"}\n', '{\n  "name": "A\\u006en"\n}', ' \t{"name":""}\r\n',
])
def test_a_valid_document_whatever_its_whitespace_order_or_escapes(text: str) -> None:
    check = check_answer(Route.CHAT, chat({"content": text}), CONTENT)
    assert check.checked == 1 and check.valid and check.messages() == ()


@pytest.mark.parametrize(("text", "keyword"), [
    (f'{{"name": 3, "nick": "{SECRET}"}}', "type"),
    (f'Sure! {{"name": "{SECRET}"}}', "json"),  # prose before
    (f'```json\n{{"name": "{SECRET}"}}\n```', "json"),  # a Markdown fence
    (f'{{"name": "{SECRET}"', "json"),  # truncated (max_tokens)
    (f"{SECRET} is not JSON", "json"),
    ("", "json"),
    ('{"name": NaN}', "json"),
])
def test_an_invalid_text_fails_in_the_schema_s_words_only(text: str, keyword: str) -> None:
    check = check_answer(Route.CHAT, chat({"content": text}), CONTENT)
    assert not check.valid and check.param == "output"
    assert any(f"keyword `{keyword}`" in m for m in check.messages())
    assert SECRET not in " ".join(check.messages())


def test_null_content_without_a_refusal_is_an_empty_answer() -> None:
    check = check_answer(Route.CHAT, chat({"content": None}), CONTENT)
    assert not check.valid and "empty" in check.messages()[0]


def test_a_refusal_is_not_checked() -> None:
    check = check_answer(Route.CHAT, chat({"content": None, "refusal": "I can't help with that."}), CONTENT)
    assert check.checked == 0 and check.valid


def test_every_choice_is_checked_and_later_choices_are_named() -> None:
    check = check_answer(Route.CHAT, chat({"content": '{"name": "a"}'}, {"content": "{}"}, {"content": "x"}), CONTENT)
    assert check.checked == 3
    assert [f.param for f in check.failures] == ["choices[1].message.content", "choices[2].message.content"]
    assert [f.item for f in check.failures] == [1, 2]
    assert all(m.startswith("choices[") for m in check.messages())  # several texts failed: each says which


def test_tool_call_arguments_are_checked_against_their_function() -> None:
    body = chat({"content": None, "tool_calls": [call("weather", '{"city": "Oslo"}'), call("weather", "{}", "c2")]})
    check = check_answer(Route.CHAT, body, TOOLS, {"weather"})
    assert check.checked == 2
    (failure,) = check.failures
    assert (failure.param, failure.item, failure.call) == ("tool_calls[1].function.arguments", 0, 1)
    assert "required" in failure.violations[0]


def test_content_beside_tool_calls_is_not_judged_against_the_content_schema() -> None:
    plan = SchemaPlan(SchemaSource.REQUEST, PERSON, {"weather": WEATHER})
    for content in (None, "", "\n\n"):
        body = chat({"content": content, "tool_calls": [call("weather", '{"city": "Oslo"}')]})
        assert check_answer(Route.CHAT, body, plan, {"weather"}).checked == 1


def test_a_function_the_request_does_not_offer_is_a_violation_of_name() -> None:
    body = chat({"content": None, "tool_calls": [call(SECRET, "{}")]})
    check = check_answer(Route.CHAT, body, TOOLS, {"weather", "no_params"})
    (failure,) = check.failures
    assert failure.param == "tool_calls[0].function.name" and "keyword `name`" in failure.violations[0]
    assert "no_params, weather" in failure.violations[0] and SECRET not in failure.violations[0]


def test_an_offered_function_without_parameters_has_nothing_to_check() -> None:
    body = chat({"content": None, "tool_calls": [call("no_params", "whatever")]})
    assert check_answer(Route.CHAT, body, TOOLS, {"weather", "no_params"}).checked == 0


def test_prose_beside_offered_tools_is_not_under_a_schema() -> None:
    assert check_answer(Route.CHAT, chat({"content": "Hello!"}), TOOLS, {"weather"}).checked == 0


def test_an_answer_without_choices_has_no_text() -> None:
    check = check_answer(Route.CHAT, {"choices": []}, CONTENT)
    assert not check.valid and check.param == "output"


def responses(*items: dict[str, Any]) -> dict[str, Any]:
    return {"object": "response", "output": list(items)}


def message(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": list(parts)}


def test_responses_output_text_and_function_calls() -> None:
    body = responses({"type": "reasoning", "summary": []},
                     message({"type": "output_text", "text": '{"name": "A"}'}),
                     {"type": "function_call", "call_id": "c", "name": "weather", "arguments": json.dumps({})})
    check = check_answer(Route.RESPONSES, body, SchemaPlan(SchemaSource.REQUEST, PERSON, {"weather": WEATHER}),
                         {"weather"})
    assert check.checked == 2
    (failure,) = check.failures
    assert (failure.param, failure.item, failure.call) == ("output[2].arguments", 2, 2)


def test_responses_invalid_text_refusal_and_silence() -> None:
    bad = check_answer(Route.RESPONSES, responses(message({"type": "output_text", "text": "no"})), CONTENT)
    assert bad.param == "output" and bad.failures[0].item == 0
    refused = check_answer(Route.RESPONSES, responses(message({"type": "refusal", "refusal": "no"})), CONTENT)
    assert refused.checked == 0
    silent = check_answer(Route.RESPONSES, responses({"type": "reasoning", "summary": []}), CONTENT)
    assert not silent.valid and "no text" in silent.messages()[0]


def test_offered_functions_chat_and_responses() -> None:
    chat_tools = {"tools": [{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {}},
                            {"type": "web_search"}]}
    assert offered_functions(Route.CHAT, chat_tools) == {"a"}
    assert offered_functions(Route.RESPONSES, {"tools": [{"type": "function", "name": "b"}]}) == {"b"}
    assert offered_functions(Route.CHAT, None) == frozenset()


def test_a_pointer_quotes_only_names_the_schema_spells() -> None:
    schema = CACHE.compile({"type": "object", "properties": {"users": {
        "type": "object", "additionalProperties": {"type": "array", "items": {
            "type": "object", "properties": {"age": {"type": "integer"}}}}}}})
    answer = json.dumps({"users": {"ann@example.com": [{"age": 1}, {"age": "x"}], "12345678901": [{"age": "y"}]}})
    check = check_answer(Route.CHAT, chat({"content": answer}), SchemaPlan(SchemaSource.REQUEST, schema))
    assert sorted(m.split(":")[0] for m in check.messages()) == ["at /users/*/0/age", "at /users/*/1/age"]
    assert "example" not in " ".join(check.messages()) and "12345678901" not in " ".join(check.messages())
