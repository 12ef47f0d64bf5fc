from __future__ import annotations

from typing import Any

from proxy.guard.extract import put, request_texts, response_texts
from proxy.state import Route


def paths(fields: list[Any]) -> dict[str, str]:
    return {f.where: f.text for f in fields}


def test_chat_request_strings_parts_and_tool_arguments() -> None:
    body = {"messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi 你好"}, {"type": "image_url", "image_url": {}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "t", "type": "function", "function": {"name": "f", "arguments": "{\"q\": 1}"}}]},
    ]}
    assert paths(request_texts(Route.CHAT, body)) == {
        "messages[0].content": "be brief",
        "messages[1].content[0].text": "hi 你好",
        "messages[2].tool_calls[0].function.arguments": "{\"q\": 1}",
    }


def test_completions_embeddings_responses_kserve_triton() -> None:
    assert paths(request_texts(Route.COMPLETIONS, {"prompt": ["a", "b"]})) == {"prompt[0]": "a", "prompt[1]": "b"}
    assert paths(request_texts(Route.EMBEDDINGS, {"input": "x"})) == {"input": "x"}
    responses = {"instructions": "sys", "input": [{"role": "user", "content": [{"type": "input_text", "text": "q"}]}]}
    assert paths(request_texts(Route.RESPONSES, responses)) == {"instructions": "sys", "input[0].content[0].text": "q"}
    kserve = {"inputs": [{"name": "t", "datatype": "BYTES", "shape": [1], "data": ["hello"]},
                         {"name": "n", "datatype": "FP32", "shape": [1], "data": [1.0]}]}
    assert paths(request_texts(Route.KSERVE_V2, kserve)) == {"inputs[0].data[0]": "hello"}
    assert paths(request_texts(Route.TRITON_GENERATE, {"text_input": "t"})) == {"text_input": "t"}


def test_response_texts_and_put() -> None:
    body: dict[str, Any] = {"choices": [{"message": {"role": "assistant", "content": "answer", "tool_calls": [
        {"function": {"name": "f", "arguments": "{}"}}]}}, {"text": "legacy"}]}
    fields = response_texts(Route.CHAT, body)
    assert paths(fields) == {"choices[0].message.content": "answer",
                             "choices[0].message.tool_calls[0].function.arguments": "{}",
                             "choices[1].text": "legacy"}
    put(body, fields[0].path, "masked")
    assert body["choices"][0]["message"]["content"] == "masked"
    output = {"output": [{"type": "message", "content": [{"type": "output_text", "text": "r"}]}]}
    assert paths(response_texts(Route.RESPONSES, output)) == {"output[0].content[0].text": "r"}


def test_hostile_shapes_are_ignored_not_fatal() -> None:
    for body in ({"messages": "nope"}, {"messages": [1, None, {"content": 5}]}, {"prompt": {"x": 1}}):
        assert request_texts(Route.CHAT, body) == [] or request_texts(Route.COMPLETIONS, body) == []


def test_reasoning_and_refusal_are_answer_text() -> None:
    body: dict[str, Any] = {"choices": [{"message": {"role": "assistant", "content": None, "reasoning": "r1",
                                                     "reasoning_content": "r0", "refusal": "no"}}]}
    assert paths(response_texts(Route.CHAT, body)) == {"choices[0].message.reasoning_content": "r0",
                                                       "choices[0].message.reasoning": "r1",
                                                       "choices[0].message.refusal": "no"}


def roles(fields: list[Any]) -> dict[str, str]:
    return {f.where: f.role.value for f in fields}


def test_every_chat_message_is_a_field_with_its_role() -> None:
    body = {"messages": [
        {"role": "system", "content": "s"}, {"role": "developer", "content": "d"},
        {"role": "user", "content": [{"type": "text", "text": "u"},
                                     {"type": "tool_result", "tool_use_id": "t", "content": "tr"},
                                     {"type": "tool_result", "content": [{"type": "text", "text": "tr2"}]},
                                     {"type": "document", "source": {"type": "text", "data": "doc"}}]},
        {"role": "assistant", "content": "a", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": "t"}, {"role": "function", "content": "f"},
        {"role": "weird", "content": "w"}, {"content": "none"},
    ]}
    assert roles(request_texts(Route.CHAT, body)) == {
        "messages[0].content": "system", "messages[1].content": "system",
        "messages[2].content[0].text": "user", "messages[2].content[1].content": "tool",
        "messages[2].content[2].content[0].text": "tool", "messages[2].content[3].source.data": "document",
        "messages[3].content": "assistant", "messages[3].tool_calls[0].function.arguments": "assistant",
        "messages[4].content": "tool", "messages[5].content": "tool",
        "messages[6].content": "user", "messages[7].content": "user",  # unknown or missing: the strictest
    }


def test_responses_items_with_their_roles() -> None:
    body = {"instructions": "i", "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "q"}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{\"a\": 1}"},
        {"type": "function_call_output", "call_id": "c", "output": "result"},
        {"type": "function_call_output", "call_id": "d", "output": [{"type": "input_text", "text": "r2"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "earlier"}]},
        {"type": "mcp_call", "arguments": "{}", "output": "mcp out"},
    ]}
    assert roles(request_texts(Route.RESPONSES, body)) == {
        "instructions": "system", "input[0].content[0].text": "user", "input[1].arguments": "assistant",
        "input[2].output": "tool", "input[3].output[0].text": "tool", "input[4].content[0].text": "assistant",
        "input[5].arguments": "assistant", "input[5].output": "tool",
    }
    assert roles(request_texts(Route.RESPONSES, {"input": "just text"})) == {"input": "user"}


def test_other_routes_are_user_text_and_answers_assistant_text() -> None:
    assert set(roles(request_texts(Route.COMPLETIONS, {"prompt": ["a", "b"]})).values()) == {"user"}
    assert set(roles(request_texts(Route.TRITON_GENERATE, {"text_input": "t"})).values()) == {"user"}
    answer = {"choices": [{"message": {"content": "x", "reasoning": "r"}}, {"text": "t"}]}
    assert set(roles(response_texts(Route.CHAT, answer)).values()) == {"assistant"}
    output = {"output": [{"type": "function_call_output", "output": "o"}], "output_text": "ot"}
    assert set(roles(response_texts(Route.RESPONSES, output)).values()) == {"assistant"}
