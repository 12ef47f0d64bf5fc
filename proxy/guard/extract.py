"""Where the text is in each API's JSON: every text field with its JSON path and role, for requests and answers.

Pure functions over parsed JSON. A path is a tuple of keys and indices; `put` writes a rewritten string back
to exactly that place, so masking touches only the affected strings and leaves the rest of the body as is.

Every field of a request carries the role of its writer as the API's shape says it (rules/roles.py): every
message of the history is a field, not only the last user turn, because indirect injection arrives in tool
outputs, documents and earlier turns. Chat: `system`/`developer` messages are system, `assistant` content and
tool-call arguments assistant, `tool`/`function` messages and `tool_result` content parts (the Anthropic-style
part some gateways pass through) tool, `document` parts with a text source document; a message of any other
or no role is user, the strictest reading. Responses: `instructions` system, items by their role,
`function_call`/`custom_tool_call` arguments assistant, every `*_output` item's output (and `mcp_call`'s) tool.
Prompts, inputs, KServe and Triton texts are user. Answers are assistant (role policy applies to requests).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from proxy.state import Route
from rules.roles import Role

Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class TextField:
    path: Path
    text: str
    role: Role = Role.USER

    @property
    def where(self) -> str:
        """`messages[1].content[0].text`: a path to show in errors and audit records (never the text)."""
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
        return out


def _strings(value: Any, path: Path, role: Role = Role.USER) -> Iterator[TextField]:
    if isinstance(value, str):
        if value:
            yield TextField(path, value, role)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, (*path, i), role)


_PART_TEXT_KEYS = ("text", "input_text", "output_text", "refusal")


def _content(value: Any, path: Path, role: Role = Role.USER) -> Iterator[TextField]:
    """Chat `content`: a string, or a list of parts of which the text-like ones carry `text`; a `tool_result`
    part's content is tool text, a `document` part's text source document text."""
    if isinstance(value, str):
        if value:
            yield TextField(path, value, role)
    elif isinstance(value, list):
        for i, part in enumerate(value):
            if isinstance(part, dict):
                kind = part.get("type")
                if kind == "tool_result":
                    yield from _content(part.get("content"), (*path, i, "content"), Role.TOOL)
                    continue
                if kind == "document":
                    source = part.get("source")
                    if isinstance(source, dict) and isinstance(source.get("data"), str) and source["data"] \
                            and source.get("type") == "text":
                        yield TextField((*path, i, "source", "data"), source["data"], Role.DOCUMENT)
                    elif isinstance(source, dict) and source.get("type") == "content":
                        yield from _content(source.get("content"), (*path, i, "source", "content"), Role.DOCUMENT)
                    continue
                for key in _PART_TEXT_KEYS:
                    if isinstance(part.get(key), str) and part[key]:
                        yield TextField((*path, i, key), part[key], role)
            elif isinstance(part, str) and part:
                yield TextField((*path, i), part, role)


def _tool_calls(message: dict[str, Any], path: Path, role: Role = Role.ASSISTANT) -> Iterator[TextField]:
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for i, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str) and function["arguments"]:
                yield TextField((*path, "tool_calls", i, "function", "arguments"), function["arguments"], role)


# Message roles as the APIs name them -> who wrote the text. Anything else (a missing or unknown role) is user.
ROLE_NAMES: dict[str, Role] = {
    "system": Role.SYSTEM, "developer": Role.SYSTEM, "user": Role.USER, "assistant": Role.ASSISTANT,
    "tool": Role.TOOL, "function": Role.TOOL, "ipython": Role.TOOL,
}


def role_of(message: dict[str, Any]) -> Role:
    name = message.get("role")
    return ROLE_NAMES.get(name, Role.USER) if isinstance(name, str) else Role.USER


def _responses_items(value: Any, path: Path, *, answer: bool = False) -> Iterator[TextField]:
    """Responses API `input`/`output`: a string, or items with `content` (string or parts) and tool calls."""
    default = Role.ASSISTANT if answer else Role.USER
    if isinstance(value, str):
        if value:
            yield TextField(path, value, default)
        return
    if not isinstance(value, list):
        return
    for i, item in enumerate(value):
        if isinstance(item, str):
            yield from _strings(item, (*path, i), default)
        elif isinstance(item, dict):
            kind = item.get("type")
            role = Role.ASSISTANT if answer else role_of(item)
            if "content" in item:
                yield from _content(item["content"], (*path, i, "content"), role)
            if isinstance(item.get("arguments"), str) and item["arguments"]:  # a call the model wrote
                yield TextField((*path, i, "arguments"), item["arguments"], Role.ASSISTANT)
            if isinstance(item.get("input"), str) and item["input"] and kind == "custom_tool_call":
                yield TextField((*path, i, "input"), item["input"], Role.ASSISTANT)
            output = item.get("output")
            out_role = Role.ASSISTANT if answer else Role.TOOL
            if isinstance(output, str) and output:
                yield TextField((*path, i, "output"), output, out_role)
            elif isinstance(output, list) and not answer:
                yield from _content(output, (*path, i, "output"), out_role)
            if isinstance(item.get("text"), str) and item["text"]:
                yield TextField((*path, i, "text"), item["text"], role)


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
                    role = role_of(message)
                    fields += _content(message.get("content"), ("messages", i, "content"), role)
                    fields += _tool_calls(message, ("messages", i))
    elif route is Route.COMPLETIONS:
        fields += _strings(body.get("prompt"), ("prompt",))
    elif route is Route.EMBEDDINGS:
        fields += _strings(body.get("input"), ("input",))
    elif route is Route.RESPONSES:
        if isinstance(body.get("instructions"), str) and body["instructions"]:
            fields.append(TextField(("instructions",), body["instructions"], Role.SYSTEM))
        fields += _responses_items(body.get("input"), ("input",))
    elif route is Route.KSERVE_V2:
        fields += _kserve_inputs(body)
    elif route is Route.TRITON_GENERATE:
        fields += _strings(body.get("text_input"), ("text_input",))
    return fields


# Chat message (and stream delta) strings besides `content` that carry model text: reasoning (vLLM's
# `reasoning_content`, and `reasoning`, its newer name) and the OpenAI API's `refusal`.
MESSAGE_TEXT_KEYS = ("reasoning_content", "reasoning", "refusal")


ANSWER = Role.ASSISTANT  # an answer's every text field: the model wrote it


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
                    fields += _content(message.get("content"), ("choices", i, "message", "content"), ANSWER)
                    for key in MESSAGE_TEXT_KEYS:
                        if isinstance(message.get(key), str) and message[key]:
                            fields.append(TextField(("choices", i, "message", key), message[key], ANSWER))
                    fields += _tool_calls(message, ("choices", i, "message"))
                if isinstance(choice.get("text"), str) and choice["text"]:
                    fields.append(TextField(("choices", i, "text"), choice["text"], ANSWER))
    elif route is Route.RESPONSES:
        fields += _responses_items(body.get("output"), ("output",), answer=True)
        if isinstance(body.get("output_text"), str) and body["output_text"]:
            fields.append(TextField(("output_text",), body["output_text"], ANSWER))
    elif route is Route.TRITON_GENERATE:
        fields += _strings(body.get("text_output"), ("text_output",), ANSWER)
    elif route is Route.KSERVE_V2:
        outputs = body.get("outputs")
        if isinstance(outputs, list):
            for i, tensor in enumerate(outputs):
                if isinstance(tensor, dict) and str(tensor.get("datatype", "")).upper() == "BYTES":
                    fields += _strings(tensor.get("data"), ("outputs", i, "data"), ANSWER)
    return fields


def put(body: Any, path: Path, value: str) -> None:
    """Write `value` at `path` inside `body` (the path came from `request_texts`/`response_texts`)."""
    target = body
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value

