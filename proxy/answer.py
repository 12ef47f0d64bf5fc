"""What an answer says about itself, read on the way: its id, model, finish reasons and token usage, from a
whole JSON answer or from relayed SSE bytes. Content is never read here.

A whole answer is parsed once (`parse_answer`), by whichever stage needs it first: the response inspection
when it guards the answer, else the telemetry stage for the token counts and the span's facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from proxy.bodies import BodyError, decode, parse_json
from proxy.state import AnswerFacts

# Answer identity in SSE events: the top-level `id` and `model` come
# first in every OpenAI-style chunk; content cannot fake them (its quotes are escaped).
_ID = re.compile(rb'"id":\s*"([^"\\]{1,200})"')
_MODEL = re.compile(rb'"model":\s*"([^"\\]{1,200})"')
_FINISH = re.compile(rb'"finish_reason":\s*"([A-Za-z_]{1,40})"')
MAX_FINISH_REASONS = 16


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """A whole answer's body, decoded (bounded) and parsed: a JSON object, or why not."""

    content: bytes  # decoded as it came (b"" when it could not be decoded)
    body: dict[str, object] | None
    error: str = ""  # when body is None: why, in our words (the 502 says it)


def parse_answer(facts: AnswerFacts, raw: bytes, content_encoding: str, limit: int) -> ParsedAnswer:
    """The answer's body as a JSON object, parsed at most once per exchange (cached in `facts.parsed`); its
    usage, id, model and finish reasons are recorded in `facts` from the same parse. Decoded within `limit`,
    as bounded as it was sent: no bombs."""
    if facts.parsed is not None:
        return facts.parsed
    try:
        content = decode(raw, content_encoding, limit)
        body = parse_json(content)
    except (BodyError, ValueError, UnicodeDecodeError, RecursionError):
        parsed = ParsedAnswer(b"", None, "the model server's answer is not valid JSON")
    else:
        if isinstance(body, dict):
            parsed = ParsedAnswer(content, body)
            record_usage(facts, body.get("usage"))
            record_answer(facts, body)
        else:
            parsed = ParsedAnswer(content, None, "the model server's answer is not a JSON object")
    facts.parsed = parsed
    return parsed


def peek_chunk(data: bytes, facts: AnswerFacts) -> None:
    """Answer id, model and finish reasons from relayed SSE bytes (while a span records)."""
    peek_identity(data, facts)
    peek_finish_reasons(data, facts)


def peek_identity(data: bytes, facts: AnswerFacts) -> None:
    if facts.response_id is None:
        match = _ID.search(data)
        if match:
            facts.response_id = match.group(1).decode("utf-8", "replace")
    if facts.response_model is None:
        match = _MODEL.search(data)
        if match:
            facts.response_model = match.group(1).decode("utf-8", "replace")


def peek_finish_reasons(data: bytes, facts: AnswerFacts) -> None:
    if b'"finish_reason":"' in data or b'"finish_reason": "' in data:
        for match in _FINISH.finditer(data):
            reason = match.group(1).decode()
            if reason not in facts.finish_reasons and len(facts.finish_reasons) < MAX_FINISH_REASONS:
                facts.finish_reasons.append(reason)


def record_usage(facts: AnswerFacts, usage: object) -> None:
    """Copy an OpenAI `usage` object into the answer's facts (absent cached tokens stay unknown)."""
    if not isinstance(usage, dict):
        return
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if isinstance(prompt, int):
        facts.usage.prompt_tokens = prompt
    if isinstance(completion, int):
        facts.usage.completion_tokens = completion
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        facts.usage.cached_tokens = details["cached_tokens"]


def record_answer(facts: AnswerFacts, body: dict[str, object]) -> None:
    """Answer id, model and finish reasons from a whole JSON answer."""
    answer_id, model = body.get("id"), body.get("model")
    if isinstance(answer_id, str):
        facts.response_id = answer_id[:200]
    if isinstance(model, str):
        facts.response_model = model[:200]
    choices = body.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        if isinstance(reason, str) and reason not in facts.finish_reasons \
                and len(facts.finish_reasons) < MAX_FINISH_REASONS:
            facts.finish_reasons.append(reason[:40])
