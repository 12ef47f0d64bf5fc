"""What an answer says about itself, read on the way: its id, model, finish reasons and token usage, from a
whole JSON answer or from relayed SSE bytes. Content is never read here."""

from __future__ import annotations

import re
from typing import Any

from proxy.state import FlowState

# Answer identity in SSE events: the top-level `id` and `model` come
# first in every OpenAI-style chunk; content cannot fake them (its quotes are escaped).
_ID = re.compile(rb'"id":\s*"([^"\\]{1,200})"')
_MODEL = re.compile(rb'"model":\s*"([^"\\]{1,200})"')
_FINISH = re.compile(rb'"finish_reason":\s*"([A-Za-z_]{1,40})"')
MAX_FINISH_REASONS = 16


def peek_chunk(data: bytes, state: FlowState) -> None:
    """Answer id, model and finish reasons from relayed SSE bytes (while a span records)."""
    peek_identity(data, state)
    peek_finish_reasons(data, state)


def peek_identity(data: bytes, state: FlowState) -> None:
    if state.response_id is None:
        match = _ID.search(data)
        if match:
            state.response_id = match.group(1).decode("utf-8", "replace")
    if state.response_model is None:
        match = _MODEL.search(data)
        if match:
            state.response_model = match.group(1).decode("utf-8", "replace")


def peek_finish_reasons(data: bytes, state: FlowState) -> None:
    if b'"finish_reason":"' in data or b'"finish_reason": "' in data:
        for match in _FINISH.finditer(data):
            reason = match.group(1).decode()
            if reason not in state.finish_reasons and len(state.finish_reasons) < MAX_FINISH_REASONS:
                state.finish_reasons.append(reason)


def record_usage(state: FlowState, usage: object) -> None:
    """Copy an OpenAI `usage` object into the flow state (absent cached tokens stay unknown)."""
    if not isinstance(usage, dict):
        return
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if isinstance(prompt, int):
        state.usage.prompt_tokens = prompt
    if isinstance(completion, int):
        state.usage.completion_tokens = completion
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        state.usage.cached_tokens = details["cached_tokens"]


def record_answer(state: FlowState, body: dict[str, Any]) -> None:
    """Answer id, model and finish reasons from a whole JSON answer."""
    if isinstance(body.get("id"), str):
        state.response_id = body["id"][:200]
    if isinstance(body.get("model"), str):
        state.response_model = body["model"][:200]
    choices = body.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        if isinstance(reason, str) and reason not in state.finish_reasons \
                and len(state.finish_reasons) < MAX_FINISH_REASONS:
            state.finish_reasons.append(reason[:40])
