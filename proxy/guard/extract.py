"""Where the text is in each API's JSON: every text field with its JSON path, for requests and answers.

Pure functions over parsed JSON. A path is a tuple of keys and indices; `put` writes a rewritten string back
to exactly that place, so masking touches only the affected strings and leaves the rest of the body as is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from proxy.state import Route

Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class TextField:
    path: Path
    text: str

    @property
    def where(self) -> str:
        """`messages[1].content[0].text`: a path to show in errors and audit records (never the text)."""
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
        return out


def _strings(value: Any, path: Path) -> Iterator[TextField]:
    if isinstance(value, str):
        if value:
            yield TextField(path, value)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, (*path, i))


def _content(value: Any, path: Path) -> Iterator[TextField]:
    """Chat `content`: a string, or a list of parts of which the text-like ones carry `text`."""
    if isinstance(value, str):
        if value:
            yield TextField(path, value)
    elif isinstance(value, list):
        for i, part in enumerate(value):
            if isinstance(part, dict):
                for key in ("text", "input_text", "output_text", "refusal"):
                    if isinstance(part.get(key), str) and part[key]:
                        yield TextField((*path, i, key), part[key])
            elif isinstance(part, str) and part:
                yield TextField((*path, i), part)


def _tool_calls(message: dict[str, Any], path: Path) -> Iterator[TextField]:
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for i, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str) and function["arguments"]:
                yield TextField((*path, "tool_calls", i, "function", "arguments"), function["arguments"])


def _responses_items(value: Any, path: Path) -> Iterator[TextField]:
    """Responses API `input`/`output`: a string, or items with `content` (string or parts) and tool calls."""
    if isinstance(value, str):
        if value:
            yield TextField(path, value)
        return
    if not isinstance(value, list):
        return
    for i, item in enumerate(value):
        if isinstance(item, str):
            yield from _strings(item, (*path, i))
        elif isinstance(item, dict):
            if "content" in item:
                yield from _content(item["content"], (*path, i, "content"))
            for key in ("arguments", "output", "text"):
                if isinstance(item.get(key), str) and item[key]:
                    yield TextField((*path, i, key), item[key])


def _kserve_inputs(body: dict[str, Any]) -> Iterator[TextField]:
    """KServe v2 `inputs` with `datatype: BYTES`: strings (or base64 when flagged) inside `data`."""
    inputs = body.get("inputs")
    if not isinstance(inputs, list):
        return
    for i, tensor in enumerate(inputs):
        if isinstance(tensor, dict) and str(tensor.get("datatype", "")).upper() == "BYTES":
            yield from _strings(tensor.get("data"), ("inputs", i, "data"))


def request_texts(route: Route, body: dict[str, Any]) -> list[TextField]:
    fields: list[TextField] = []
    if route is Route.CHAT:
        messages = body.get("messages")
        if isinstance(messages, list):
            for i, message in enumerate(messages):
                if isinstance(message, dict):
                    fields += _content(message.get("content"), ("messages", i, "content"))
                    fields += _tool_calls(message, ("messages", i))
    elif route is Route.COMPLETIONS:
        fields += _strings(body.get("prompt"), ("prompt",))
    elif route is Route.EMBEDDINGS:
        fields += _strings(body.get("input"), ("input",))
    elif route is Route.RESPONSES:
        if isinstance(body.get("instructions"), str) and body["instructions"]:
            fields.append(TextField(("instructions",), body["instructions"]))
        fields += _responses_items(body.get("input"), ("input",))
    elif route is Route.KSERVE_V2:
        fields += _kserve_inputs(body)
    elif route is Route.TRITON_GENERATE:
        fields += _strings(body.get("text_input"), ("text_input",))
    return fields


# Chat message (and stream delta) strings besides `content` that carry model text: reasoning (vLLM's
# `reasoning_content`, and `reasoning`, its newer name) and the OpenAI API's `refusal`.
MESSAGE_TEXT_KEYS = ("reasoning_content", "reasoning", "refusal")


def response_texts(route: Route, body: dict[str, Any]) -> list[TextField]:
    fields: list[TextField] = []
    if route in (Route.CHAT, Route.COMPLETIONS):
        choices = body.get("choices")
        if isinstance(choices, list):
            for i, choice in enumerate(choices):
                if not isinstance(choice, dict):
                    continue
                message = choice.get("message")
                if isinstance(message, dict):
                    fields += _content(message.get("content"), ("choices", i, "message", "content"))
                    for key in MESSAGE_TEXT_KEYS:
                        if isinstance(message.get(key), str) and message[key]:
                            fields.append(TextField(("choices", i, "message", key), message[key]))
                    fields += _tool_calls(message, ("choices", i, "message"))
                if isinstance(choice.get("text"), str) and choice["text"]:
                    fields.append(TextField(("choices", i, "text"), choice["text"]))
    elif route is Route.RESPONSES:
        fields += _responses_items(body.get("output"), ("output",))
        if isinstance(body.get("output_text"), str) and body["output_text"]:
            fields.append(TextField(("output_text",), body["output_text"]))
    elif route is Route.TRITON_GENERATE:
        fields += _strings(body.get("text_output"), ("text_output",))
    elif route is Route.KSERVE_V2:
        outputs = body.get("outputs")
        if isinstance(outputs, list):
            for i, tensor in enumerate(outputs):
                if isinstance(tensor, dict) and str(tensor.get("datatype", "")).upper() == "BYTES":
                    fields += _strings(tensor.get("data"), ("outputs", i, "data"))
    return fields


def put(body: Any, path: Path, value: str) -> None:
    """Write `value` at `path` inside `body` (the path came from `request_texts`/`response_texts`)."""
    target = body
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value

