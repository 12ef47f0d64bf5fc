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
