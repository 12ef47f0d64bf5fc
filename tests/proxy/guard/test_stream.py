"""The stream guard: for real payloads split at every byte position, the client gets the same text as the
non-streamed answer, and no listed value is ever visible."""

from __future__ import annotations

import hmac
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.guard.engine import Policy, compile_policy, inspect
from proxy.guard.extract import TextField
from proxy.guard.stream import StreamGuard
from proxy.schemas.plan import SchemaResult
from proxy.sse import SseFramer
from proxy.stages.stream import SseRelay
from proxy.state import FlowState, Outcome, Route
from rules import masking
from rules.pseudonym import PseudonymVault

ID = "110105199003071239"
CARD = "6222021234567894"
PHONE = "13812345678"
ANSWER = f"好的，您的身份证{ID}和银行卡{CARD[:4]} {CARD[4:8]} {CARD[8:12]} {CARD[12:]}已登记，联系 <CN_MOBILE_1> 即可。"


@pytest.fixture(scope="module")
def policy() -> Policy:
    return compile_policy([], request_pii="pseudonymize")


def chat_sse(text: str, per_event: int = 3, usage: bool = True) -> bytes:
    def event(payload: dict[str, object]) -> bytes:
        return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"

    out = [event({"id": "c1", "object": "chat.completion.chunk",
                  "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})]
    for i in range(0, len(text), per_event):
        out.append(event({"id": "c1", "object": "chat.completion.chunk",
                          "choices": [{"index": 0, "delta": {"content": text[i:i + per_event]},
                                       "finish_reason": None}]}))
    out.append(event({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    if usage:
        out.append(event({"id": "c1", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 9}}))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def vault_with_phone() -> PseudonymVault:
    vault = PseudonymVault()
    assert vault.pseudonymize("CN_MOBILE", PHONE) == "<CN_MOBILE_1>"
    return vault


def relay(policy: Policy, raw: bytes, cuts: list[int], route: Route = Route.CHAT) -> bytes:
    """What the client receives when the upstream's bytes arrive cut at `cuts`."""
    guard = StreamGuard(policy.response, vault_with_phone(), route, 400)
    framer = SseFramer()
    out: list[bytes] = []
    last = 0
    for cut in [*sorted(set(cuts)), len(raw)]:
        for event in framer.feed(raw[last:cut]):
            out += guard.on_event(event)
        last = cut
    for event in framer.flush():
        out += guard.on_event(event)
    out += guard.end()
    return b"".join(out)


def client_text(raw: bytes) -> str:
    text = ""
    for block in raw.split(b"\n\n"):
        if block.startswith(b"data: {"):
            payload = json.loads(block[6:])
            for choice in payload.get("choices", []):
                text += choice.get("delta", {}).get("content") or choice.get("text") or ""
    return text


def expected_text(policy: Policy, text: str) -> str:
    vault = vault_with_phone()
    result = policy.response.scan(text)
    return vault.restore(masking.apply(text, result, vault))


def test_whole_answer_masked_and_restored(policy: Policy) -> None:
    out = relay(policy, chat_sse(ANSWER), [])
    text = client_text(out)
    assert text == expected_text(policy, ANSWER)
    assert ID not in text and CARD[:4] + " " + CARD[4:8] not in text
    assert PHONE in text  # the client's own value, restored
    assert out.endswith(b"data: [DONE]\n\n")
    assert b'"usage": {"prompt_tokens": 3' in out


def test_every_single_cut_position(policy: Policy) -> None:
    raw = chat_sse(ANSWER, per_event=5)
    want = expected_text(policy, ANSWER)
    for cut in range(len(raw) + 1):  # inside multi-byte characters, inside `data:`, everywhere
        out = relay(policy, raw, [cut])
        assert client_text(out) == want, cut
        assert ID.encode() not in out, cut


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=4000), max_size=25), st.integers(min_value=1, max_value=9))
def test_any_split_any_event_size_equals_whole(policy: Policy, cuts: list[int], per_event: int) -> None:
    raw = chat_sse(ANSWER, per_event=per_event)
    out = relay(policy, raw, [c for c in cuts if c <= len(raw)])
    assert client_text(out) == expected_text(policy, ANSWER)
    for value in (ID.encode(), CARD.encode(), " ".join([CARD[:4], CARD[4:8], CARD[8:12], CARD[12:]]).encode()):
        assert value not in out


def test_streamed_equals_non_streamed_inspection(policy: Policy) -> None:
    """The non-streamed path (proxy.guard.engine.inspect, then restore) gives the client the same text."""
    vault = vault_with_phone()
    inspection = inspect(policy.response, [TextField(("t",), ANSWER)], vault)
    whole = vault.restore(inspection.rewritten[0][1])
    assert client_text(relay(policy, chat_sse(ANSWER), [7, 100, 333])) == whole


def test_block_mid_stream_ends_with_error_event_and_done(policy: Policy) -> None:
    answer = "Sure. Here is how to make a bomb: step one, and more text after it."
    out = relay(policy, chat_sse(answer), [11, 50])
    events = [e for e in out.split(b"\n\n") if e]
    assert events[-1] == b"data: [DONE]"
    error = json.loads(events[-2][6:])["error"]
    assert error["code"] == "content_blocked" and error["rules"] == ["weapons"]
    text = client_text(out)
    assert "bomb" not in text and text.startswith("Sure.")
    assert "step one" not in out.decode()


def test_completions_stream(policy: Policy) -> None:
    def event(text: str, finish: str | None = None) -> bytes:
        return b"data: " + json.dumps({"choices": [{"index": 0, "text": text, "finish_reason": finish}]}).encode() \
            + b"\n\n"

    raw = b"".join([event(f"id {ID[:9]}"), event(ID[9:] + " ok"), event("", "stop"), b"data: [DONE]\n\n"])
    out = relay(policy, raw, [], Route.COMPLETIONS)
    assert client_text(out) == "id 110105********1239 ok"


def test_responses_api_typed_events(policy: Policy) -> None:
    def event(name: str, payload: dict[str, object]) -> bytes:
        return f"event: {name}\n".encode() + b"data: " + json.dumps({"type": name, **payload}).encode() + b"\n\n"

    raw = b"".join([
        event("response.output_text.delta", {"output_index": 0, "content_index": 0, "delta": "card " + CARD[:7]}),
        event("response.output_text.delta", {"output_index": 0, "content_index": 0, "delta": CARD[7:] + " done"}),
        event("response.output_text.done", {"output_index": 0, "content_index": 0, "text": "card " + CARD + " done"}),
        event("response.completed", {"response": {"output": [{"type": "message", "content": [
            {"type": "output_text", "text": "card " + CARD + " done"}]}]}}),
    ])
    out = relay(policy, raw, [30, 61, 200], Route.RESPONSES)
    assert CARD.encode() not in out
    deltas = "".join(json.loads(b[b.index(b"data: ") + 6:])["delta"]
                     for b in out.split(b"\n\n") if b"output_text.delta" in b)
    assert deltas == "card ************7894 done"
    done = [json.loads(b[b.index(b"data: ") + 6:]) for b in out.split(b"\n\n") if b"output_text.done" in b]
    assert [d["text"] for d in done] == ["card ************7894 done"]
    assert out.count(b"event: response.completed") == 1


def test_comments_and_unknown_events_pass_unchanged(policy: Policy) -> None:
    raw = b": ping\n\nevent: custom\ndata: {\"x\": 1}\n\ndata: [DONE]\n\n"
    assert relay(policy, raw, [3]) == raw


def test_an_event_that_is_not_json_ends_the_stream_closed(policy: Policy) -> None:
    out = relay(policy, b"data: {not json\n\ndata: [DONE]\n\n", [])
    assert b"invalid_upstream_stream" in out and out.endswith(b"data: [DONE]\n\n")


def test_a_bug_in_the_guard_ends_the_stream_closed(policy: Policy) -> None:
    from proxy.state import Outcome

    class Exploding(StreamGuard):
        def on_event(self, event: object) -> list[bytes]:
            raise RuntimeError("bug")

    state = FlowState("rid", Route.CHAT, 0.0)
    relay = SseRelay(state, lambda: 0.0, Exploding(policy.response, PseudonymVault(), Route.CHAT, 400),
                     hmac.new(b"k", digestmod="sha256"))
    out = b"".join(relay(chat_sse("some text with " + ID)))
    assert ID.encode() not in out
    assert b"internal_error" in out and out.endswith(b"data: [DONE]\n\n")
    assert state.outcome is Outcome.INTERNAL_ERROR
    assert list(relay(b"data: more\n\n")) == []  # nothing after the failure


def events_of(raw: bytes) -> list[bytes]:
    return [block + b"\n\n" for block in raw.split(b"\n\n") if block]


def test_single_choice_fast_path_equals_the_generic_path(policy: Policy, monkeypatch: pytest.MonkeyPatch) -> None:
    """`on_one_delta` is a shortcut of `on_choices`: the client gets the same text, split at every position."""
    raw = chat_sse(ANSWER, per_event=2)
    fast = [client_text(relay(policy, raw, [cut])) for cut in range(0, len(raw), 7)]
    monkeypatch.setattr(StreamGuard, "on_one_delta", lambda *args: None)
    generic = [client_text(relay(policy, raw, [cut])) for cut in range(0, len(raw), 7)]
    assert fast == generic == [expected_text(policy, ANSWER)] * len(fast)


def test_unchanged_events_are_forwarded_byte_for_byte(policy: Policy) -> None:
    raw = chat_sse("Plain words, nothing to hide!", per_event=40)  # nothing held back at its end
    assert relay(policy, raw, []) == raw


def test_what_only_the_standard_parser_accepts_is_written_back_unchanged(policy: Policy) -> None:
    """orjson rejects NaN and integers beyond 64 bits; such events are parsed and written by `json`, so a
    rewritten event keeps them as the upstream sent them."""
    big = 2**70
    raw = b"".join([
        b'data: {"choices": [{"index": 0, "delta": {"content": "id ' + ID[:9].encode() + b'"}}], "x": NaN, "n": '
        + str(big).encode() + b"}\n\n",
        b'data: {"choices": [{"index": 0, "delta": {"content": "' + ID[9:].encode() + b' ok"}}], "x": NaN}\n\n',
        b"data: [DONE]\n\n",
    ])
    out = relay(policy, raw, [])
    assert ID.encode() not in out
    events = [json.loads(e[6:]) for e in events_of(out) if e.startswith(b"data: {")]
    assert "".join(e["choices"][0]["delta"]["content"] for e in events) == "id 110105********1239 ok"
    assert any(e.get("n") == big for e in events)
    assert b"NaN" in out


def sse_relay(guard: StreamGuard | None) -> tuple[SseRelay, FlowState]:
    state = FlowState("rid", Route.CHAT, 0.0)
    return SseRelay(state, lambda: 0.0, guard, hmac.new(b"k", digestmod="sha256")), state


def test_relay_one_event_per_chunk_equals_whole_reads(policy: Policy) -> None:
    """The one-event-per-read path (vLLM, the stand-in) gives the client the bytes of the guard one event at a
    time; a read of many events (guarded as a batch) the same text in as many events."""
    raw = chat_sse(ANSWER, per_event=3)
    one, _ = sse_relay(StreamGuard(policy.response, vault_with_phone(), Route.CHAT, 400))
    per_event = b"".join(b"".join(one(e)) for e in events_of(raw)) + b"".join(one(b""))
    whole, _ = sse_relay(StreamGuard(policy.response, vault_with_phone(), Route.CHAT, 400))
    at_once = b"".join(whole(raw)) + b"".join(whole(b""))
    assert per_event == relay(policy, raw, [])
    assert client_text(per_event) == client_text(at_once) == expected_text(policy, ANSWER)
    assert len(events_of(at_once)) == len(events_of(per_event)) == len(events_of(raw))


def test_a_bug_in_the_guard_on_a_one_event_read_ends_the_stream_closed(policy: Policy) -> None:
    from proxy.state import Outcome

    class Exploding(StreamGuard):
        def on_event(self, event: object) -> list[bytes]:
            raise RuntimeError("bug")

    relay_, state = sse_relay(Exploding(policy.response, PseudonymVault(), Route.CHAT, 400))
    first = events_of(chat_sse("some text with " + ID))[1]
    out = b"".join(relay_(first))
    assert ID.encode() not in out
    assert b"internal_error" in out and out.endswith(b"data: [DONE]\n\n")
    assert state.outcome is Outcome.INTERNAL_ERROR
    assert list(relay_(b"data: more\n\n")) == []


@pytest.mark.parametrize("key", ["reasoning", "reasoning_content", "refusal"])
def test_reasoning_and_refusal_deltas_are_guarded_in_their_own_lane(policy: Policy, key: str) -> None:
    # The ID number is split across two events of the reasoning lane, with content deltas in between.
    text = f"身份证{ID}请核对"
    raw = b"".join(
        b"data: " + json.dumps({"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                               ensure_ascii=False).encode() + b"\n\n"
        for delta in ({key: text[:8]}, {"content": "ok"}, {key: text[8:]})
    ) + b"data: [DONE]\n\n"
    out = relay(policy, raw, [])
    streamed = "".join(json.loads(block[6:])["choices"][0]["delta"].get(key) or ""
                       for block in out.split(b"\n\n") if block.startswith(b"data: {"))
    assert ID not in streamed and ID not in out.decode()
    assert streamed == expected_text(policy, text)


@pytest.mark.parametrize("written", [True, False])
def test_a_broken_off_stream_digests_the_error_event_only_once_it_is_written(policy: Policy, written: bool) -> None:
    relay_, state = sse_relay(StreamGuard(policy.response, PseudonymVault(), Route.CHAT, 400))
    first = events_of(chat_sse("some text"))[1]
    out = b"".join(relay_(first))
    closing = relay_.broken_off("connection lost")
    assert closing is not None and b"upstream_unavailable" in closing and closing.endswith(b"data: [DONE]\n\n")
    assert relay_.broken_off("again") is None  # the stream has ended: nothing more to say
    if written:
        relay_.sent(closing)
    relay_.finish()
    client_got = out + closing if written else out
    assert state.output_digest == hmac.new(b"k", client_got, digestmod="sha256").hexdigest()


def test_an_event_that_never_ends_is_not_held_without_bound(policy: Policy, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guarded, the stream ends closed once the unfinished event passes the bound; unguarded, its bytes go on."""
    import proxy.stages.stream as stream_stage

    monkeypatch.setattr(stream_stage, "MAX_PENDING_EVENT", 1000)
    first = events_of(chat_sse("fine so far"))[1]
    endless = b'data: {"choices": [{"index": 0, "delta": {"content": "' + ID.encode() + b" " + b"x" * 600
    guarded, state = sse_relay(StreamGuard(policy.response, PseudonymVault(), Route.CHAT, 400))
    out = b"".join(guarded(first)) + b"".join(guarded(endless)) + b"".join(guarded(endless))
    assert ID.encode() not in out and out.endswith(b"data: [DONE]\n\n")
    assert b"longer than 1000 bytes" in out and state.outcome.value == "upstream_unavailable"
    assert list(guarded(b"data: more\n\n")) == [] and list(guarded(b"")) == []
    plain, _ = sse_relay(None)
    passed = b"".join(plain(first)) + b"".join(plain(endless)) + b"".join(plain(endless))
    assert passed == first + endless + endless


def test_an_event_nested_deeper_than_any_parser_goes_ends_the_stream_closed(policy: Policy) -> None:
    guarded, _ = sse_relay(StreamGuard(policy.response, PseudonymVault(), Route.CHAT, 400))
    deep = b'data: {"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n\n"
    out = b"".join(guarded(deep))
    assert b"not JSON" in out and out.endswith(b"data: [DONE]\n\n")


def test_a_compressed_stream_is_decoded_and_a_chunk_that_cannot_be_ends_it_once(policy: Policy) -> None:
    import zlib

    from proxy.bodies import StreamDecoder
    from proxy.stages.stream import DecodingRelay

    encoder = zlib.compressobj(wbits=31)
    events = events_of(chat_sse("card " + ID + " ok"))

    def compressed(event: bytes) -> bytes:
        return encoder.compress(event) + encoder.flush(zlib.Z_SYNC_FLUSH)

    relay_, state = sse_relay(StreamGuard(policy.response, PseudonymVault(), Route.CHAT, 400))
    decoding = DecodingRelay(relay_, StreamDecoder("gzip", 1 << 20))
    out = b"".join(b"".join(decoding(compressed(e))) for e in events)
    assert ID.encode() not in out and client_text(out) == expected_text(policy, "card " + ID + " ok")
    closing = b"".join(decoding(b"not gzip at all"))
    assert b"cannot be decoded" in closing and closing.endswith(b"data: [DONE]\n\n")
    assert list(decoding(compressed(b"data: more\n\n"))) == [] and list(decoding(b"")) == []
    assert state.output_digest == hmac.new(b"k", out + closing, digestmod="sha256").hexdigest()

    blocked_relay, _ = sse_relay(StreamGuard(policy.response, PseudonymVault(), Route.CHAT, 400))
    blocked = DecodingRelay(blocked_relay, StreamDecoder("gzip", 1 << 20))
    encoder = zlib.compressobj(wbits=31)
    said = b"".join(b"".join(blocked(compressed(e))) for e in events_of(chat_sse("how to make a bomb at home")))
    assert b"content_blocked" in said
    assert list(blocked(b"not gzip at all")) == []  # a blocked stream has said its last word


# -- the schema gate before the scanner (proxy/schemas/stream_gate.py) --------------------------------------

ID_SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
             "additionalProperties": False}


def gated_relay(policy: Policy, schema: object, *, scanning: bool = True) -> tuple[SseRelay, FlowState]:
    from proxy.schemas.plan import SchemaFacts, SchemaPlan, SchemaPolicy, SchemaSource
    from proxy.schemas.stream_gate import StreamGate
    from rules.schema import compile_schema

    state = FlowState("rid", Route.CHAT, 0.0)
    state.schema = SchemaFacts(SchemaPlan(SchemaSource.REQUEST, content=compile_schema(schema)))
    gate = StreamGate(state, state.schema, SchemaPolicy.REJECT)

    def on_block(rules: tuple[str, ...]) -> None:
        state.outcome = Outcome.BLOCKED

    guard = StreamGuard(policy.response if scanning else None, vault_with_phone(), Route.CHAT, 400, on_block,
                        gate=gate)
    return SseRelay(state, lambda: 0.0, guard, hmac.new(b"k", digestmod="sha256")), state


def relay_cut(relay_: SseRelay, raw: bytes, cut: int) -> bytes:
    """The upstream's bytes in two reads split at `cut`, then its end (b"" is the end: never fed before it)."""
    return b"".join([*(relay_(raw[:cut]) if cut else []), *(relay_(raw[cut:]) if cut < len(raw) else []),
                     *relay_(b"")])


def test_the_text_before_a_schema_violation_is_masked_and_what_the_lane_held_is_released(policy: Policy) -> None:
    """The gate judges the model's raw text; the guard masks what is released, the held-back tail included."""
    answer = '{"id": "身份证' + ID + '"}  好的，已登记'
    before = answer[:answer.index("好")]
    raw = chat_sse(answer, per_event=4)
    for cut in range(0, len(raw) + 1, 3):
        relay_, state = gated_relay(policy, ID_SCHEMA)
        out = relay_cut(relay_, raw, cut)
        assert client_text(out) == expected_text(policy, before), cut
        assert ID.encode() not in out and "已登记" not in out.decode()
        error = json.loads(events_of(out)[-2][6:])["error"]
        assert error["code"] == "schema_violation" and out.endswith(b"data: [DONE]\n\n")
        assert state.outcome is Outcome.SCHEMA_VIOLATION


def test_a_cut_inside_a_held_back_value_releases_it_as_the_whole_text_would(policy: Policy) -> None:
    """A root string over maxLength is cut in the middle of what could still become an ID number: the scanner's
    hold-back is flushed, so the client gets what masking the text before the cut gives."""
    answer = '"证件 ' + ID + ' 其余"'
    raw = chat_sse(answer, per_event=2)
    for cut in range(0, len(raw) + 1, 5):
        relay_, _ = gated_relay(policy, {"type": "string", "maxLength": 12})
        out = relay_cut(relay_, raw, cut)
        assert client_text(out) == expected_text(policy, answer[:13]), cut  # the quote and 12 characters
        assert b"schema_violation" in out and "其余" not in out.decode()


def test_a_block_in_the_text_before_a_schema_violation_wins(policy: Policy) -> None:
    answer = '{"note": "how to make a bomb at home"} and more'
    relay_, state = gated_relay(policy, ID_SCHEMA)
    out = relay_cut(relay_, chat_sse(answer, per_event=len(answer)), 0)
    assert b"content_blocked" in out and b"schema_violation" not in out and b"bomb" not in out
    assert state.outcome is Outcome.BLOCKED
    assert state.schema is not None and state.schema.results == [SchemaResult.REJECTED]


def test_without_the_content_guard_the_gate_alone_leaves_events_as_they_came(policy: Policy) -> None:
    answer = '{"id": "' + ID + '", "note": "<CN_MOBILE_1>"}'
    raw = chat_sse(answer, per_event=3)
    relay_, state = gated_relay(policy, ID_SCHEMA, scanning=False)
    assert relay_cut(relay_, raw, 100) == raw  # no masking, no restoring: only the schema is checked
    assert state.schema is not None and state.schema.results == [SchemaResult.VALID]
    assert not state.ledger.verdicts  # the content guard decided nothing on this stream
