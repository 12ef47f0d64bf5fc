"""The stream gate through the real SseRelay and StreamGuard: valid answers are never cut, at any split of the
SSE bytes or of the deltas (the client gets the upstream's bytes), and an invalid one ends with the
schema_violation event and [DONE] with nothing of the answer past the violation, the finish chunk and usage
included; one result per exchange."""

from __future__ import annotations

import hmac
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.dev.standin import responses_events
from proxy.guard.engine import Policy, compile_policy
from proxy.guard.stream import StreamGuard
from proxy.schemas.plan import SchemaFacts, SchemaPlan, SchemaPolicy, SchemaResult, SchemaSource
from proxy.schemas.stream_gate import StreamGate
from proxy.stages.stream import SseRelay
from proxy.state import FlowState, Outcome, Route
from rules.pseudonym import PseudonymVault
from rules.schema import SchemaCache

CACHE = SchemaCache()
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 40}, "temp": {"type": "integer"},
                   "tags": {"type": "array", "items": {"type": "string"}}, "note": {"type": "string"}},
    "required": ["city", "temp"], "additionalProperties": False,
}
WEATHER = {"type": "object", "required": ["location"], "additionalProperties": False,
           "properties": {"location": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}}}
CLOCK = {"type": "object", "required": ["zone"],
         "properties": {"zone": {"type": "string"}, "hours": {"type": "integer"}}}
PLAN = SchemaPlan(SchemaSource.REQUEST, content=CACHE.compile(ANSWER_SCHEMA),
                  tools={"get_weather": CACHE.compile(WEATHER), "get_time": CACHE.compile(CLOCK)})
OFFERED = frozenset({"get_weather", "get_time", "ping"})  # ping is offered without parameters

# Valid answers: a leading newline, keys in another order, `\u` escapes (a surrogate pair too), escaped quotes,
# CJK, `21.0` for an integer (draft 2020-12 allows it), indentation, whitespace after the document.
VALID = '\n{"temp": 21.0, "city": "北京 \\u00e9\\u4eac",\n  "tags": ["晴", "a\\"b\\\\", "\\ud83d\\ude00"],\n' \
        '  "note": "多云转晴，风力 3 级"}\n'
SHORT_VALID = '\n{"temp": 1.0, "city": "\\u4eac都 \\"x\\""} '
VALID_ARGS = ('{"location": "上海\\n浦东", "unit": "celsius"}', ' { "zone" : "Asia/Shanghai" ,"hours":8.0 }')

# Invalid answers. A member's value is judged when its object closes (a repeated key would replace it: Python's
# `json` keeps the last), so MISSING and WRONG_TYPE end at their closing brace; TRUNCATED only at the end.
PROSE_BEFORE = 'Sure! Here it is: {"city": "北京", "temp": 21}'
PROSE_AFTER = '{"city": "北京", "temp": 21}\n\nHope this helps, with more words after it.'
MISSING = '{"city": "北京", "tags": ["晴"]}'  # `temp` is required
TRUNCATED = '{"city": "北京", "temp": 21, "note": "the model ran out of tok'
WRONG_TYPE = '{"city": "北京", "temp": "warm", "note": "a note"}'
EXTRA_KEY = '{"city": "北京", "temp": 21, "colour": "this must not reach the client"}'
ROW_SCHEMA = {"type": "array", "items": {"type": "integer"}, "maxItems": 4}
ROW_PLAN = SchemaPlan(SchemaSource.ROUTE, content=CACHE.compile(ROW_SCHEMA))


def sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
    return sse({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": choices, "usage": None, **extra})


def pieces(text: str, per_event: int | list[int]) -> list[str]:
    """`text` in deltas of `per_event` characters, or cut at the given positions."""
    if isinstance(per_event, int):
        return [text[i:i + per_event] for i in range(0, len(text), per_event)]
    bounds = [0, *sorted({c for c in per_event if 0 < c < len(text)}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def chat_sse(content: str | None = None, calls: tuple[tuple[str, str], ...] = (), *, per_event: int | list[int] = 5,
             finish: str | None = "stop", done: bool = True, usage: bool = True, lead: str | None = None) -> bytes:
    """A chat stream as vLLM and OpenAI send it: a role chunk, content deltas, then for each tool call a header
    delta (index, id, name, empty arguments) and its argument pieces interleaved with the other calls'; a finish
    chunk, a usage chunk, [DONE]. `lead`: content before the tool calls (models emit "\\n\\n")."""
    out = [chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                   "finish_reason": None}])]
    for piece in pieces(content or "", per_event) + pieces(lead or "", per_event):
        out.append(chunk([{"index": 0, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}]))
    for i, (name, _) in enumerate(calls):
        header = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": ""}}
        out.append(chunk([{"index": 0, "delta": {"tool_calls": [header]}, "logprobs": None, "finish_reason": None}]))
    split = [pieces(arguments, per_event) for _, arguments in calls]
    for n in range(max((len(p) for p in split), default=0)):
        for i, parts in enumerate(split):
            if n < len(parts):
                out.append(chunk([{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {
                    "arguments": parts[n]}}]}, "logprobs": None, "finish_reason": None}]))
    if finish is not None:
        out.append(chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}]))
    if usage:
        out.append(chunk([], usage={"prompt_tokens": 9, "completion_tokens": 31, "total_tokens": 40}))
    if done:
        out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def responses_sse(text: str | None = None, calls: tuple[tuple[str, str], ...] = (), *, per_event: int = 5,
                  end: str = "response.completed") -> bytes:
    """A Responses API stream, made by the stand-in (typed events, the whole answer again at the end)."""
    output: list[dict[str, Any]] = []
    if text is not None:
        output.append({"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    for i, (name, arguments) in enumerate(calls):
        output.append({"id": f"fc_{i}", "type": "function_call", "status": "completed", "call_id": f"call_{i}",
                       "name": name, "arguments": arguments})
    started = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
    done = {"id": "resp_1", "object": "response", "status": "completed", "output": output}
    raw = b"".join(responses_events(started, done, per_event, None))
    if end != "response.completed":
        raw = raw.replace(b"response.completed", end.encode())
    return raw


@pytest.fixture(scope="module")
def policy() -> Policy:
    return compile_policy([])


@dataclass
class Run:
    out: bytes
    state: FlowState
    relay: SseRelay = field(repr=False)

    @property
    def facts(self) -> SchemaFacts:
        assert self.state.schema is not None
        return self.state.schema


def relay_for(plan: SchemaPlan = PLAN, schema_policy: str = "reject", guard: Policy | None = None,
              route: Route = Route.CHAT) -> tuple[SseRelay, FlowState]:
    state = FlowState("r-1", route, 0.0)
    state.schema = SchemaFacts(plan)
    gate = StreamGate(state, state.schema, SchemaPolicy(schema_policy), OFFERED)
    scanner = guard.response if guard is not None else None
    stream_guard = StreamGuard(scanner, PseudonymVault(), route, 400, gate=gate)
    return SseRelay(state, lambda: 0.0, stream_guard, hmac.new(b"k", digestmod="sha256")), state


def run(raw: bytes, cuts: list[int] | tuple[int, ...] = (), *, end: bool = True, **kwargs: Any) -> Run:
    """What the client gets when the upstream's bytes arrive cut at `cuts` (and then end, unless not `end`)."""
    relay, state = relay_for(**kwargs)
    out: list[bytes] = []
    last = 0
    for cut in [*sorted(set(cuts)), len(raw)]:
        if cut > last:
            out += relay(raw[last:cut])
        last = cut
    if end:
        out += relay(b"")
    return Run(b"".join(out), state, relay)


def payloads(out: bytes) -> list[dict[str, Any]]:
    found = []
    for block in out.split(b"\n\n"):
        for line in block.split(b"\n"):
            if line.startswith(b"data: {"):
                found.append(json.loads(line[6:]))
    return found


@dataclass
class Client:
    """What a client reads from a chat stream."""

    content: dict[int, str] = field(default_factory=dict)
    arguments: dict[tuple[int, int], str] = field(default_factory=dict)
    names: dict[tuple[int, int], str] = field(default_factory=dict)
    finish: list[str] = field(default_factory=list)
    usage: bool = False
    error: dict[str, Any] | None = None


def read_chat(out: bytes) -> Client:
    client = Client()
    for payload in payloads(out):
        if "error" in payload:
            client.error = payload["error"]
        client.usage |= bool(payload.get("usage"))
        for choice in payload.get("choices", []):
            index = choice["index"]
            delta = choice.get("delta") or {}
            client.content[index] = client.content.get(index, "") + (delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                key = (index, call["index"])
                function = call.get("function") or {}
                if "name" in function:
                    client.names[key] = function["name"]
                client.arguments[key] = client.arguments.get(key, "") + (function.get("arguments") or "")
            if choice.get("finish_reason") is not None:
                client.finish.append(choice["finish_reason"])
    return client


def assert_cut(out: bytes, param: str) -> dict[str, Any]:
    """The stream ends with the schema_violation event and [DONE], and nothing follows them."""
    assert out.endswith(b"data: [DONE]\n\n")
    assert out.count(b"data: [DONE]") == 1
    last = payloads(out)[-1]
    error = last["error"]
    assert error["code"] == "schema_violation" and error["type"] == "upstream_error"
    assert error["param"] == param
    assert error["message"].startswith("The model's answer does not match its JSON schema: ")
    return dict(error)


def assert_rejected(result: Run) -> None:
    assert result.facts.results == [SchemaResult.REJECTED]
    assert result.facts.violations and all("keyword `" in v for v in result.facts.violations)
    assert result.state.outcome is Outcome.SCHEMA_VIOLATION and result.state.error_detail == "schema_violation"


# -- soundness: valid answers are never cut ------------------------------------------------------------------


@pytest.mark.parametrize("raw", [
    chat_sse(VALID, per_event=8),
    chat_sse(lead="\n\n", calls=(("get_weather", VALID_ARGS[0]), ("get_time", VALID_ARGS[1])), per_event=7,
             finish="tool_calls"),
], ids=["content", "interleaved-tool-calls"])
def test_a_valid_chat_answer_passes_unchanged_at_every_split(raw: bytes) -> None:
    for cut in range(len(raw) + 1):  # inside `data:`, inside UTF-8 sequences and escapes, everywhere
        result = run(raw, [cut])
        assert result.out == raw, cut
        assert result.facts.results == [SchemaResult.VALID], cut
        assert result.state.outcome is Outcome.OK


def test_a_valid_responses_answer_passes_unchanged_at_every_split() -> None:
    raw = responses_sse(SHORT_VALID, (("get_weather", VALID_ARGS[0]),), per_event=7)
    for cut in range(len(raw) + 1):
        result = run(raw, [cut], route=Route.RESPONSES)
        assert result.out == raw, cut
        assert result.facts.results == [SchemaResult.VALID], cut


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3000), max_size=30), st.integers(min_value=1, max_value=11),
       st.lists(st.integers(min_value=1, max_value=len(VALID) - 1), max_size=40),
       st.sampled_from(["content", "tools", "responses"]))
def test_a_valid_answer_is_never_cut_at_any_splits_of_bytes_and_deltas(cuts: list[int], per_event: int,
                                                                      deltas: list[int], shape: str) -> None:
    calls = (("get_time", VALID_ARGS[1]), ("get_weather", VALID_ARGS[0]))
    if shape == "responses":
        raw, route = responses_sse(VALID, calls, per_event=per_event), Route.RESPONSES
    else:
        route = Route.CHAT
        raw = chat_sse(VALID, per_event=deltas or per_event) if shape == "content" else \
            chat_sse(calls=calls, per_event=per_event, finish="tool_calls")
    result = run(raw, [c for c in cuts if c <= len(raw)], route=route)
    assert result.out == raw
    assert result.facts.results == [SchemaResult.VALID]


def test_a_valid_answer_guarded_gets_its_text_and_is_judged_valid(policy: Policy) -> None:
    """With the content guard on, events may be re-cut by its hold-back, but the client reads the same text."""
    raw = chat_sse(VALID, calls=(("get_weather", VALID_ARGS[0]),), per_event=3, finish="tool_calls")
    for cut in range(0, len(raw) + 1, 11):
        result = run(raw, [cut], guard=policy)
        client = read_chat(result.out)
        assert client.content[0] == VALID and client.arguments[(0, 0)] == VALID_ARGS[0], cut
        assert client.finish == ["tool_calls"] and client.usage and client.error is None
        assert result.facts.results == [SchemaResult.VALID]


# -- invalid answers are cut, and nothing past the violation gets out -----------------------------------------


@pytest.mark.parametrize(("answer", "before"), [
    (PROSE_BEFORE, ""),
    (PROSE_AFTER, '{"city": "北京", "temp": 21}\n\n'),
], ids=["prose-before", "prose-after"])
@pytest.mark.parametrize("guarded", [False, True])
def test_text_around_the_document_is_cut_at_its_first_character(policy: Policy, answer: str, before: str,
                                                                 guarded: bool) -> None:
    raw = chat_sse(answer, per_event=4)
    for cut in range(0, len(raw) + 1, 1 if not guarded else 5):
        result = run(raw, [cut], guard=policy if guarded else None)
        assert_cut(result.out, "output")
        client = read_chat(result.out)
        assert client.content.get(0, "") == before, cut  # exactly the text before the violation
        assert client.finish == [] and not client.usage, cut
        assert_rejected(result)


@pytest.mark.parametrize(("answer", "plan", "gone"), [
    (EXTRA_KEY, PLAN, "colour"),  # a name `additionalProperties: false` rules out, cut inside the name
    ('[1, 2.0, "three", 4]', ROW_PLAN, "three"),  # an item of a type the schema excludes
    ("[1, 2, 3, 4, 5, 6]", ROW_PLAN, "5"),  # over maxItems
], ids=["additionalProperties", "item-type", "maxItems"])
def test_a_value_the_schema_excludes_is_cut_before_the_rest_arrives(answer: str, plan: SchemaPlan, gone: str) -> None:
    raw = chat_sse(answer, per_event=3)
    seen = set()
    for cut in range(len(raw) + 1):
        result = run(raw, [cut], plan=plan)
        assert_cut(result.out, "output")
        text = read_chat(result.out).content.get(0, "")
        assert answer.startswith(text) and gone not in text, cut
        seen.add(text)
        assert_rejected(result)
    assert len(seen) == 1  # where the stream is cut does not depend on how its bytes were split


def test_a_missing_required_property_is_cut_at_its_closing_brace() -> None:
    violation = 'at the document root: missing the required property "temp" (keyword `required`)'
    raw = chat_sse(MISSING, per_event=4)
    for cut in range(0, len(raw) + 1, 5):
        result = run(raw, [cut])
        error = assert_cut(result.out, "output")
        client = read_chat(result.out)
        assert client.content[0] == MISSING[:-1], cut  # the document never completes at the client
        assert client.finish == [] and not client.usage
        assert "北京" not in error["message"] and violation in error["message"]
        assert result.facts.violations == (violation,)
        assert_rejected(result)


def test_a_member_of_a_type_the_schema_excludes_is_cut_at_its_first_character() -> None:
    """Repeated names are refused (rules/schema/document.py), so a member's value is final as it comes: the
    string where an integer belongs is cut at its opening quote, before any of it is released."""
    violation = 'at /temp: expected type "integer" (keyword `type`)'
    raw = chat_sse(WRONG_TYPE, per_event=4)
    before = WRONG_TYPE[: WRONG_TYPE.index('"warm"')]
    for cut in range(0, len(raw) + 1, 5):
        result = run(raw, [cut])
        error = assert_cut(result.out, "output")
        client = read_chat(result.out)
        assert client.content[0] == before, cut
        assert client.finish == [] and not client.usage
        assert "北京" not in error["message"] and violation in error["message"]
        assert result.facts.violations == (violation,)
        assert_rejected(result)


def test_a_repeated_property_name_is_cut_where_it_repeats() -> None:
    answer = '{"city": "北京", "temp": 3, "temp": 4}'
    raw = chat_sse(answer, per_event=4)
    result = run(raw, [len(raw) // 2])
    error = assert_cut(result.out, "output")
    assert "appears twice" in error["message"]
    assert read_chat(result.out).content[0] == answer[: answer.rindex('"temp"') + 5]  # known at its closing quote
    assert_rejected(result)


@pytest.mark.parametrize("guarded", [False, True])
def test_an_answer_cut_by_max_tokens_ends_with_the_error_instead_of_the_finish_chunk(policy: Policy,
                                                                                     guarded: bool) -> None:
    raw = chat_sse(TRUNCATED, per_event=4, finish="length")
    for cut in range(0, len(raw) + 1, 5 if not guarded else 13):
        result = run(raw, [cut], guard=policy if guarded else None)
        assert_cut(result.out, "output")
        client = read_chat(result.out)
        assert client.content[0] == TRUNCATED  # the text was out already (held back text flushed); no finish
        assert client.finish == [] and not client.usage
        assert_rejected(result)


def test_the_violation_message_never_quotes_the_answer() -> None:
    secret = "绝密-7781"
    for answer in (f'{{"city": "{secret}", "temp": "{secret}"}}', f'{{"city": "{secret}"}}', f"{secret} {{}}"):
        result = run(chat_sse(answer))
        error = payloads(result.out)[-1]["error"]
        assert secret not in error["message"] and secret not in " ".join(result.facts.violations)


def test_a_key_the_model_chose_is_never_quoted_in_the_message() -> None:
    """Under `additionalProperties` a key is the model's own text (an e-mail address, a phone number): the
    pointer shows it as `*`; names the schema spells and array indices stay."""
    plan = SchemaPlan(SchemaSource.REQUEST, content=CACHE.compile({
        "type": "object", "properties": {"rows": {"type": "array", "items": {
            "type": "object", "additionalProperties": {"type": "integer"}}}}}))
    want = 'at /rows/1/*: expected type "integer" (keyword `type`)'
    for key in ("ann@example.com", "13812345678"):
        answer = f'{{"rows": [{{"a": 1}}, {{"{key}": "x"}}]}}'
        result = run(chat_sse(answer), plan=plan)
        assert result.facts.violations == (want,)
        assert want in payloads(result.out)[-1]["error"]["message"]
        assert run(chat_sse(answer), plan=plan, schema_policy="flag").facts.violations == (want,)


@pytest.mark.parametrize(("arguments", "gone"), [
    ('{"location": "x", "unit": "kelvin"}', "}"),  # judged when the object closes
    ('{"location": "x", "units": "c"}', 's"'),  # a name no property takes, cut inside it
])
def test_a_tool_call_with_invalid_arguments_is_cut_and_named(arguments: str, gone: str) -> None:
    calls = (("get_time", VALID_ARGS[1]), ("get_weather", arguments))
    raw = chat_sse(calls=calls, per_event=4, finish="tool_calls")
    for cut in range(0, len(raw) + 1, 7):
        result = run(raw, [cut])
        assert_cut(result.out, "tool_calls[1].function.arguments")
        client = read_chat(result.out)
        sent = client.arguments.get((0, 1), "")
        assert arguments.startswith(sent) and gone not in sent, cut
        assert client.finish == []
        assert_rejected(result)


def test_a_function_the_request_does_not_offer_is_cut_at_its_name() -> None:
    raw = chat_sse(calls=(("get_weather", VALID_ARGS[0]), ("rm_rf", '{"path": "/"}')), finish="tool_calls")
    result = run(raw)
    error = assert_cut(result.out, "tool_calls[1].function.name")
    assert "get_time, get_weather, ping" in error["message"] and "keyword `name`" in error["message"]
    client = read_chat(result.out)
    assert (0, 1) not in client.names and (0, 1) not in client.arguments
    assert_rejected(result)


def test_reask_is_reject_on_a_stream() -> None:
    result = run(chat_sse(PROSE_BEFORE), schema_policy="reask")
    assert_cut(result.out, "output")
    assert_rejected(result)


# -- flag: nothing is cut ---------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [PROSE_BEFORE, PROSE_AFTER, MISSING, TRUNCATED, WRONG_TYPE])
def test_flag_passes_the_stream_unchanged_and_records_invalid(answer: str) -> None:
    raw = chat_sse(answer, per_event=4)
    result = run(raw, [17, 200], schema_policy="flag")
    assert result.out == raw
    assert result.facts.results == [SchemaResult.INVALID]
    assert result.facts.violations and result.state.outcome is Outcome.OK


def test_flag_names_each_failing_text_when_several_fail() -> None:
    raw = chat_sse(MISSING, calls=(("get_weather", '{"unit": "celsius"}'),), finish="tool_calls")
    result = run(raw, schema_policy="flag")
    assert result.out == raw
    assert result.facts.results == [SchemaResult.INVALID]
    assert [v.split(": ")[0] for v in result.facts.violations] == ["output", "tool_calls[0].function.arguments"]


# -- which texts count, as for whole answers (proxy/schemas/answer.py) ---------------------------------------


def test_an_empty_answer_is_rejected() -> None:
    result = run(chat_sse(None))
    assert_cut(result.out, "output")
    assert_rejected(result)


def test_a_refusal_is_not_judged() -> None:
    raw = b"".join([chunk([{"index": 0, "delta": {"role": "assistant", "refusal": "I can't help with that."},
                            "finish_reason": None}]),
                    chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]), b"data: [DONE]\n\n"])
    result = run(raw)
    assert result.out == raw and result.facts.results == []


def test_tool_calls_without_content_and_a_tool_without_parameters_are_not_judged() -> None:
    only_ping = run(chat_sse(calls=(("ping", "{}"),), finish="tool_calls", lead="\n\n"))
    assert only_ping.facts.results == [] and b"error" not in only_ping.out
    with_weather = run(chat_sse(calls=(("ping", "not json at all"), ("get_weather", VALID_ARGS[0])),
                                finish="tool_calls", lead=" \n"))
    assert with_weather.facts.results == [SchemaResult.VALID] and b"error" not in with_weather.out


def test_every_choice_is_judged_and_named() -> None:
    def event(index: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return chunk([{"index": index, "delta": delta, "finish_reason": finish}])

    good, bad = '{"city": "a", "temp": 1}', '{"city": "b", "temp": 1'
    raw = b"".join([event(0, {"content": good[:9]}), event(1, {"content": bad[:5]}), event(0, {"content": good[9:]}),
                    event(1, {"content": bad[5:]}), event(0, {}, "stop"), event(1, {}, "length"), b"data: [DONE]\n\n"])
    result = run(raw)
    assert_cut(result.out, "choices[1].message.content")
    assert read_chat(result.out).finish == ["stop"]  # choice 0 finished valid before choice 1 was judged
    assert_rejected(result)


@pytest.mark.parametrize("ending", ["done-without-finish", "upstream-closes"])
def test_an_answer_that_ends_without_finish_reason_is_judged_at_the_end(ending: str) -> None:
    raw = chat_sse(TRUNCATED, finish=None, usage=False, done=ending == "done-without-finish")
    result = run(raw)
    assert_cut(result.out, "output")
    assert read_chat(result.out).content[0] == TRUNCATED
    assert_rejected(result)
    valid = run(chat_sse(VALID, finish=None, usage=False, done=ending == "done-without-finish"))
    assert valid.facts.results == [SchemaResult.VALID] and b"error" not in valid.out


def test_a_stream_broken_off_before_its_end_records_no_result() -> None:
    raw = chat_sse(VALID, per_event=4)
    result = run(raw[: len(raw) // 2], end=False)
    closing = result.relay.broken_off("connection lost")
    assert closing is not None and b"upstream_unavailable" in closing
    result.relay.finish()
    assert result.facts.results == [] and result.state.outcome is Outcome.OK


def test_one_result_for_the_whole_stream_and_the_digest_covers_the_cut() -> None:
    raw = chat_sse(VALID, calls=(("get_weather", VALID_ARGS[0]), ("get_time", VALID_ARGS[1])), finish="tool_calls")
    assert run(raw).facts.results == [SchemaResult.VALID]
    result = run(chat_sse(PROSE_AFTER), [40])
    assert result.facts.results == [SchemaResult.REJECTED]
    assert result.state.output_digest == hmac.new(b"k", result.out, digestmod="sha256").hexdigest()


def test_a_tool_call_index_that_is_no_number_ends_the_stream_as_the_upstreams_fault() -> None:
    raw = chunk([{"index": 0, "delta": {"tool_calls": [{"index": [1], "function": {"name": "get_weather",
                                                                                  "arguments": "{"}}]},
                  "finish_reason": None}]) + b"data: [DONE]\n\n"
    result = run(raw)
    assert b"invalid_upstream_stream" in result.out and result.out.endswith(b"data: [DONE]\n\n")


# -- the Responses API ------------------------------------------------------------------------------------


def read_responses(out: bytes) -> tuple[str, dict[int, str], list[str]]:
    """The output text and function arguments a Responses client reads, and the event types it got."""
    text, arguments, kinds = "", {}, []
    for payload in payloads(out):
        kind = payload.get("type", "")
        kinds.append(kind)
        if kind == "response.output_text.delta":
            text += payload["delta"]
        elif kind == "response.function_call_arguments.delta":
            arguments[payload["output_index"]] = arguments.get(payload["output_index"], "") + payload["delta"]
    return text, arguments, kinds


def test_responses_text_cut_at_its_violation() -> None:
    raw = responses_sse(PROSE_AFTER, per_event=4)
    for cut in range(0, len(raw) + 1, 7):
        result = run(raw, [cut], route=Route.RESPONSES)
        assert_cut(result.out, "output")
        text, _, kinds = read_responses(result.out)
        assert text == '{"city": "北京", "temp": 21}\n\n', cut
        assert "response.output_text.done" not in kinds and "response.completed" not in kinds
        assert_rejected(result)


def test_responses_text_invalid_as_a_whole_ends_instead_of_its_done_event() -> None:
    result = run(responses_sse(TRUNCATED), route=Route.RESPONSES)
    assert_cut(result.out, "output")
    text, _, kinds = read_responses(result.out)
    assert text == TRUNCATED and "response.output_text.done" not in kinds
    assert_rejected(result)


def test_responses_function_arguments_are_checked_and_named() -> None:
    raw = responses_sse(VALID, (("get_weather", '{"location": "x", "unit": "kelvin"}'),))
    result = run(raw, route=Route.RESPONSES)
    assert_cut(result.out, "output[1].arguments")
    _, arguments, kinds = read_responses(result.out)
    assert arguments.get(1, "") == '{"location": "x", "unit": "' and "response.completed" not in kinds
    assert_rejected(result)
    unknown = run(responses_sse(VALID, (("rm_rf", "{}"),)), route=Route.RESPONSES)
    assert_cut(unknown.out, "output[1].name")


def test_responses_incomplete_is_judged_and_failed_is_not() -> None:
    raw = responses_sse(TRUNCATED, end="response.incomplete")
    result = run(raw, route=Route.RESPONSES)
    # The text part's own `.done` event came first: the unfinished document is refused there.
    assert_cut(result.out, "output")
    assert_rejected(result)
    no_done = raw.replace(b"response.output_text.done", b"response.output_text.annotation")
    assert run(no_done, route=Route.RESPONSES).facts.results == [SchemaResult.REJECTED]
    failed = responses_sse(TRUNCATED, end="response.failed")
    failed = failed.replace(b"response.output_text.done", b"response.output_text.annotation")
    result = run(failed, route=Route.RESPONSES)
    assert result.out == failed and result.facts.results == [] and result.state.outcome is Outcome.OK
