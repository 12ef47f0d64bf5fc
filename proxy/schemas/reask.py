"""The request that asks the model again when its answer does not fit its schema (issue 21, policy `reask`).

Pure: from the body the upstream got and the answer it gave, the next body. The conversation is extended the
way the API's own rules require, so any OpenAI-compatible server takes it:
- chat, message text: the answer as an `assistant` message, then a `user` message that states the violations
  and asks for only a JSON document that fits;
- chat, tool calls: the `assistant` message with its `tool_calls`, then one `role: tool` message per call
  (the API refuses an assistant turn whose calls are not all answered): the violations for a call that does
  not fit, "not run" for the others;
- Responses: `input` becomes a list (a string input is the user message it stands for) and gets the same
  items in Responses' form (`function_call` then `function_call_output` for calls).
With n > 1 choices, the first failing choice is the turn that is appended; the answer to the re-ask is
checked whole again. The words are ours; they quote only the violations (the schema's words) and never the
answer beyond echoing the model's own turn back to it. The re-ask is never streamed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from proxy.schemas.answer import AnswerCheck, Failure
from proxy.state import Route

CONTENT_REASK = ("Your previous answer does not match the required JSON schema: {violations}. Answer again with "
                 "only a JSON document that matches the schema: no other text, no Markdown code fence.")
CALL_REASK = ("Not run: these arguments do not match the function's parameters schema: {violations}. Call the "
              "function again with arguments that are only a JSON object matching the schema.")
CALL_NOT_RUN = "Not run: another call in this turn does not match its schema. Make the calls again."


def _listed(failure: Failure) -> str:
    return "; ".join(failure.violations) or "unknown"


def reask_body(route: Route, sent: Mapping[str, Any], answer: Mapping[str, Any], check: AnswerCheck) -> dict[str, Any]:
    """The next request: `sent` (what the upstream got) with the answer's turn and the violations appended,
    never streamed. `check` is the answer's failed check."""
    body = dict(sent)
    body["stream"] = False
    body.pop("stream_options", None)  # only allowed with `stream: true` (OpenAI, vLLM refuse it otherwise)
    if route is Route.RESPONSES:
        body["input"] = _responses_input(sent.get("input"), answer, check)
    else:
        body["messages"] = _chat_messages(sent.get("messages"), answer, check)
    return body


def _chat_messages(messages: object, answer: Mapping[str, Any], check: AnswerCheck) -> list[Any]:
    extended = list(messages) if isinstance(messages, list) else []
    item = check.failures[0].item
    failures = [f for f in check.failures if f.item == item]
    choices = answer.get("choices")
    choice = choices[item] if isinstance(choices, list) and item < len(choices) else None
    message = choice.get("message") if isinstance(choice, dict) else None
    message = message if isinstance(message, dict) else {}
    content = message.get("content")
    listed_calls = message.get("tool_calls")
    calls = [c if isinstance(c, dict) else {} for c in listed_calls] if isinstance(listed_calls, list) else []
    turn: dict[str, Any] = {"role": "assistant", "content": content if isinstance(content, str) else None}
    ids: list[str] = []
    if calls:
        turn["tool_calls"] = []
        for j, call in enumerate(calls):
            function = call.get("function")
            function = function if isinstance(function, dict) else {}
            ids.append(call["id"] if isinstance(call.get("id"), str) and call["id"] else f"call_warden_{j}")
            turn["tool_calls"].append({"id": ids[-1], "type": "function",
                                       "function": {"name": function.get("name"),
                                                    "arguments": function.get("arguments")}})
    elif turn["content"] is None:
        turn["content"] = ""  # an assistant turn needs content or calls
    if choice is not None:
        extended.append(turn)
    by_call = {f.call: f for f in failures if f.call is not None}
    if by_call:
        for j, call_id in enumerate(ids):
            failure = by_call.get(j)
            text = CALL_REASK.format(violations=_listed(failure)) if failure else CALL_NOT_RUN
            extended.append({"role": "tool", "tool_call_id": call_id, "content": text})
    text_failures = [f for f in failures if f.call is None]
    if text_failures:
        listed = "; ".join(_listed(f) for f in text_failures)
        extended.append({"role": "user", "content": CONTENT_REASK.format(violations=listed)})
    return extended


def _responses_input(sent: object, answer: Mapping[str, Any], check: AnswerCheck) -> list[Any]:
    if isinstance(sent, list):
        extended = list(sent)
    elif isinstance(sent, str):
        extended = [{"role": "user", "content": sent}]
    else:
        extended = []
    output = answer.get("output")
    items = [(k, item) for k, item in enumerate(output if isinstance(output, list) else ()) if isinstance(item, dict)]
    calls: list[tuple[int, str]] = []
    for k, item in items:
        if item.get("type") == "message":
            parts = item.get("content")
            for part in parts if isinstance(parts, list) else ():
                if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str):
                    extended.append({"role": "assistant", "content": part["text"]})
        elif item.get("type") == "function_call":
            call_id = item.get("call_id")
            call_id = call_id if isinstance(call_id, str) and call_id else f"call_warden_{k}"
            calls.append((k, call_id))
            # Without the item's `id`: with `store: false` the server would look for an item it never kept.
            extended.append({"type": "function_call", "call_id": call_id, "name": item.get("name"),
                             "arguments": item.get("arguments")})
    by_call = {f.call: f for f in check.failures if f.call is not None}
    if by_call:
        for k, call_id in calls:
            failure = by_call.get(k)
            text = CALL_REASK.format(violations=_listed(failure)) if failure else CALL_NOT_RUN
            extended.append({"type": "function_call_output", "call_id": call_id, "output": text})
    text_failures = [f for f in check.failures if f.call is None]
    if text_failures:
        listed = "; ".join(_listed(f) for f in text_failures)
        extended.append({"role": "user", "content": CONTENT_REASK.format(violations=listed)})
    return extended
