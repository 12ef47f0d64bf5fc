"""The answer's identity (id, model, finish reasons) read from SSE bytes and from whole JSON answers."""

from __future__ import annotations

import gzip
import json
from typing import Any

from proxy.answer import parse_answer, peek_chunk, record_answer, record_usage
from proxy.state import AnswerFacts


def chunk(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


def test_peek_reads_id_model_and_finish_reasons_not_content() -> None:
    state = AnswerFacts()
    first = {"id": "chatcmpl-1", "model": "m", "choices": [
        {"index": 0, "delta": {"content": 'fake "id":"evil" "finish_reason":"pwned"'}, "finish_reason": None}]}
    peek_chunk(chunk(first), state)
    last = {"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
    peek_chunk(chunk(last) + chunk({**last, "choices": [{"index": 1, "delta": {}, "finish_reason": "stop"}]}), state)
    assert (state.response_id, state.response_model) == ("chatcmpl-1", "m")
    assert state.finish_reasons == ["length", "stop"]


def test_record_answer() -> None:
    state = AnswerFacts()
    record_answer(state, {"id": "x", "model": "m", "choices": [{"finish_reason": "stop"}, {"finish_reason": "stop"},
                                                                  {"finish_reason": None}]})
    assert (state.response_id, state.response_model, state.finish_reasons) == ("x", "m", ["stop"])


def test_record_usage_keeps_unknown_cached_tokens_unknown() -> None:
    state = AnswerFacts()
    record_usage(state, {"prompt_tokens": 12, "completion_tokens": 3})
    assert (state.usage.prompt_tokens, state.usage.completion_tokens, state.usage.cached_tokens) == (12, 3, None)
    record_usage(state, {"prompt_tokens": 12, "prompt_tokens_details": {"cached_tokens": 8}})
    assert state.usage.cached_tokens == 8
    record_usage(state, "not an object")
    assert state.usage.prompt_tokens == 12


def test_parse_answer_parses_once_and_records_the_facts_from_that_parse() -> None:
    facts = AnswerFacts()
    raw = json.dumps({"id": "x", "model": "m", "choices": [{"finish_reason": "stop"}],
                      "usage": {"prompt_tokens": 5, "completion_tokens": 2}}).encode()
    parsed = parse_answer(facts, raw, "", 1 << 20)
    assert parsed.body is not None and parsed.content == raw and facts.parsed is parsed
    assert (facts.response_id, facts.response_model, facts.finish_reasons) == ("x", "m", ["stop"])
    assert (facts.usage.prompt_tokens, facts.usage.completion_tokens) == (5, 2)
    assert parse_answer(facts, b"changed", "", 1 << 20) is parsed  # cached: parsed once per exchange


def test_parse_answer_says_why_an_answer_cannot_be_read() -> None:
    assert parse_answer(AnswerFacts(), b"{not json", "", 1 << 20).error == "the model server's answer is not valid JSON"
    assert parse_answer(AnswerFacts(), b"[1]", "", 1 << 20).error == "the model server's answer is not a JSON object"
    bomb = gzip.compress(b"{" + b" " * 4096 + b"}")
    assert parse_answer(AnswerFacts(), bomb, "gzip", 1024).body is None  # decoded within the answer limit
