"""Fuzzing the SSE path: the framer (proxy/sse.py) on arbitrary bytes cut anywhere, and the relay and stream
guard it feeds (proxy/stages/stream.py, proxy/guard/stream.py) on arbitrary, often hostile, event streams.

The framer has no error of its own: anything is bytes of some event. The one bounded-event error belongs to
the relay (an event unfinished after MAX_PENDING_EVENT bytes ends a guarded stream with an error event).
Budget: tests/fuzz.py.
"""

from __future__ import annotations

import hmac
import json
from typing import Any
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import proxy.stages.stream as stream_stage
from proxy.guard.engine import Policy, compile_policy
from proxy.guard.stream import StreamGuard
from proxy.sse import SseEvent, SseFramer, parse_event
from proxy.stages.stream import SseRelay
from proxy.state import FlowState, Outcome, Route
from rules.pseudonym import PseudonymVault
from tests.fuzz import fuzz

CR, LF = 0x0D, 0x0A

# --- a reference framer and field parser, written straight from the spec text -------------------------------


def reference_split(data: bytes) -> tuple[list[bytes], bytes]:
    """(complete events, the unfinished rest). A line ends in CRLF, LF or CR; an event ends at a line end that
    directly follows another one. A CR at the very end cannot be judged yet (it may start a CRLF)."""
    events: list[bytes] = []
    start = i = 0
    after_eol = False
    n = len(data)
    while i < n:
        if data[i] in (CR, LF):
            if data[i] == CR and i + 1 == n:
                break
            j = i + 2 if data[i] == CR and data[i + 1] == LF else i + 1
            if after_eol:
                events.append(data[start:j])
                start = j
                after_eol = False
            else:
                after_eol = True
            i = j
        else:
            after_eol = False
            i += 1
    return events, data[start:]


def reference_fields(raw: bytes) -> tuple[str | None, bytes | None]:
    """WHATWG HTML 9.2.6 "Interpreting an event stream": the `event` and `data` fields of one event."""
    lines: list[bytes] = []
    line = bytearray()
    i = 0
    while i < len(raw):
        b = raw[i]
        if b in (CR, LF):
            lines.append(bytes(line))
            line.clear()
            i += 2 if b == CR and raw[i + 1:i + 2] == b"\n" else 1
            continue
        line.append(b)
        i += 1
    if line:
        lines.append(bytes(line))  # a flushed last event may lack its line end
    name: str | None = None
    data: list[bytes] | None = None
    for text in lines:
        if not text or text[:1] == b":":
            continue
        field, colon, value = text.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if field == b"data":
            data = [*(data or []), value]
        elif field == b"event":
            name = value.decode("utf-8", "replace")
    return name, None if data is None else b"\n".join(data)


# --- strategies ---------------------------------------------------------------------------------------------

_PIECES = st.one_of(
    st.sampled_from([
        b"data: ", b"data:", b"data", b"event: ", b"event:x", b"id: 7", b"retry: 10", b":", b": ping", b" ",
        b"\n", b"\r", b"\r\n", b"\n\n", b"\r\n\r\n", b"\r\r", b"\n\r", b"[DONE]", b'{"choices":[]}',
        "你好".encode(), b"\xe4\xbd", b"\xff\xfe", b"\x00",
    ]),
    st.binary(max_size=24),
)
SSE_BYTES = st.lists(_PIECES, max_size=40).map(b"".join)
CUTS = st.lists(st.integers(min_value=0, max_value=600), max_size=16)


def feed_cut(framer: SseFramer, data: bytes, cuts: list[int]) -> list[SseEvent]:
    events: list[SseEvent] = []
    last = 0
    for cut in [*sorted({c for c in cuts if c <= len(data)}), len(data)]:
        events += framer.feed(data[last:cut])
        last = cut
    return events


# --- the framer -------------------------------------------------------------------------------------------


@fuzz(200)
@given(SSE_BYTES, CUTS)
@example(b"\r", [])
@example(b"\n\r\n", [1, 2])
@example(b"data: a\r\r\ndata: b\n\n", [8])
def test_framer_frames_any_bytes_cut_anywhere_as_the_spec_does(data: bytes, cuts: list[int]) -> None:
    framer = SseFramer()
    events = feed_cut(framer, data, cuts)
    want, rest = reference_split(data)
    assert [e.raw for e in events] == want
    assert framer.pending == len(rest)  # held back: exactly the unfinished event
    flushed = framer.flush()
    assert [e.raw for e in flushed] == ([rest] if rest else [])
    assert framer.pending == 0
    # Offsets: the events tile the input, nothing lost, nothing repeated.
    assert b"".join(e.raw for e in [*events, *flushed]) == data


@fuzz(200)
@given(SSE_BYTES)
@example(b"data\n\n")  # a field with no colon: an empty data line
@example(b"data:  two spaces\n\n")  # only one space is dropped
@example(b"event: \xff\ndata: x\r\n\r\n")
def test_parsed_fields_follow_the_spec(data: bytes) -> None:
    events, rest = reference_split(data)
    for raw in [*events, *([rest] if rest else [])]:
        event = parse_event(raw)
        assert event.raw == raw
        assert (event.event, event.data) == reference_fields(raw)
        assert event.is_done == (event.data == b"[DONE]")


@fuzz(150)
@given(SSE_BYTES, CUTS)
def test_take_pending_hands_over_exactly_the_unfinished_event(data: bytes, cuts: list[int]) -> None:
    framer = SseFramer()
    events = feed_cut(framer, data, cuts)
    rest = framer.take_pending()
    assert b"".join(e.raw for e in events) + rest == data
    assert framer.pending == 0 and framer.flush() == []
    # Framing starts again after what was taken: the next bytes are a stream of their own.
    assert [e.raw for e in framer.feed(b"data: next\n\n")] == [b"data: next\n\n"]


# --- the relay without a guard: exact pass-through, whatever the bytes ----------------------------------------


def run_relay(relay: SseRelay, data: bytes, cuts: list[int]) -> bytes:
    out: list[bytes] = []
    last = 0
    for cut in [*sorted({c for c in cuts if c <= len(data)}), len(data)]:
        if cut > last:  # b"" means the end of the stream to the relay
            out += relay(data[last:cut])
        last = cut
    out += relay(b"")
    return b"".join(out)


def new_relay(guard: StreamGuard | None, route: Route = Route.CHAT) -> tuple[SseRelay, FlowState]:
    state = FlowState("rid", route, 0.0)
    return SseRelay(state, lambda: 1.0, guard, hmac.new(b"k", digestmod="sha256")), state


@fuzz(150)
@given(SSE_BYTES, CUTS, st.sampled_from([8 * 1024 * 1024, 16]))
def test_unguarded_relay_passes_any_bytes_on_exactly(data: bytes, cuts: list[int], bound: int) -> None:
    """The bound on an unfinished event (16 bytes: hit often) changes nothing for an unguarded stream."""
    with mock.patch.object(stream_stage, "MAX_PENDING_EVENT", bound):
        relay, state = new_relay(None)
        out = run_relay(relay, data, cuts)
    assert out == data
    assert state.output_digest == hmac.new(b"k", data, digestmod="sha256").hexdigest()


def test_unguarded_output_digest_covers_an_unterminated_last_event() -> None:
    """Found by the fuzz test above: an upstream whose stream ends without a blank line. The client gets the
    bytes; the audit record's output digest must cover them too."""
    relay, state = new_relay(None)
    assert run_relay(relay, b"data: ", []) == b"data: "
    assert state.output_digest == hmac.new(b"k", b"data: ", digestmod="sha256").hexdigest()


# --- the guarded relay on hostile event streams ---------------------------------------------------------------

ID = "110105199003071239"
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=16),
                         st.text(max_size=4))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)), max_leaves=6)
TEXT = st.one_of(
    st.text(alphabet="ab 你好<>_CNMOBILE1234567890X.", max_size=24),
    st.sampled_from([ID, ID[:9], ID[9:], "bomb", "make a bomb", "<CN_MOBILE_1>", "<CN_MOB", "13812345678"]),
)
TEXTISH = st.one_of(TEXT, TEXT, TEXT, JSON_VALUES)  # mostly text, sometimes any JSON value in its place
INDEX = st.one_of(st.integers(0, 1), st.integers(0, 1), st.none(), st.text(max_size=2), JSON_VALUES)
FINISH = st.one_of(st.none(), st.none(), st.just("stop"), JSON_VALUES)


def _delta() -> st.SearchStrategy[dict[str, Any]]:
    tool = st.fixed_dictionaries({"index": INDEX}, optional={"function": st.one_of(
        st.fixed_dictionaries({"arguments": TEXTISH}), JSON_VALUES)})
    return st.fixed_dictionaries({}, optional={
        "content": TEXTISH, "reasoning_content": TEXTISH, "refusal": TEXTISH,
        "tool_calls": st.one_of(st.lists(st.one_of(tool, JSON_VALUES), max_size=2), JSON_VALUES)})


CHOICE = st.one_of(
    st.fixed_dictionaries({"index": INDEX, "delta": st.one_of(_delta(), JSON_VALUES), "finish_reason": FINISH}),
    st.fixed_dictionaries({"index": INDEX, "text": TEXTISH, "finish_reason": FINISH}),
    st.fixed_dictionaries({"delta": _delta()}, optional={"finish_reason": FINISH}),
    JSON_VALUES,
)
CHAT_OBJ = st.fixed_dictionaries({"choices": st.lists(CHOICE, max_size=3)}, optional={"id": st.just("c1")})
RESPONSES_OBJ = st.fixed_dictionaries({
    "type": st.sampled_from(["response.output_text.delta", "response.output_text.done", "response.completed",
                             "response.output_item.done", "response.content_part.done", "response.created"]),
    "output_index": INDEX, "content_index": INDEX,
}, optional={
    "delta": TEXTISH, "text": TEXTISH,
    "response": st.one_of(st.fixed_dictionaries({"output": st.lists(st.fixed_dictionaries({"content": st.lists(
        st.fixed_dictionaries({"type": st.just("output_text"), "text": TEXTISH}), max_size=2)}), max_size=2)}),
        JSON_VALUES),
    "item": st.one_of(st.fixed_dictionaries({"content": st.lists(st.fixed_dictionaries({"text": TEXTISH}),
                                                                 max_size=2)}), JSON_VALUES),
    "part": st.one_of(st.fixed_dictionaries({"text": TEXTISH}), JSON_VALUES),
})


@st.composite
def event_bytes(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["chat", "chat", "chat", "responses", "json", "done", "comment", "raw"]))
    eol = draw(st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"]))
    if kind == "done":
        return b"data: [DONE]" + eol + eol
    if kind == "comment":
        return b": keep-alive" + eol + eol
    if kind == "raw":
        return draw(SSE_BYTES)
    obj: Any = {"chat": CHAT_OBJ, "responses": RESPONSES_OBJ, "json": JSON_VALUES}[kind]
    payload = json.dumps(draw(obj), ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    head = b""
    if kind == "responses" and draw(st.booleans()):
        head = b"event: " + str(json.loads(payload).get("type", "x")).encode() + eol
    return head + b"data: " + payload + eol + eol


STREAMS = st.lists(event_bytes(), max_size=10).map(b"".join)


@pytest.fixture(scope="module")
def policy() -> Policy:
    return compile_policy([], request_pii="pseudonymize")


def guarded_output(policy: Policy, route: Route, data: bytes, cuts: list[int]) -> tuple[bytes, FlowState]:
    vault = PseudonymVault()
    vault.pseudonymize("CN_MOBILE", "13812345678")
    relay, state = new_relay(StreamGuard(policy.response, vault, route, 400), route)
    return run_relay(relay, data, cuts), state


ROUTES = st.sampled_from([Route.CHAT, Route.COMPLETIONS, Route.RESPONSES])


@fuzz(100)
@given(STREAMS, CUTS, ROUTES)
def test_guarded_relay_survives_any_stream_and_any_cut(policy: Policy, data: bytes, cuts: list[int],
                                                       route: Route) -> None:
    """No hostile event makes the guard raise (the relay would end the stream as Warden's own 500), and the
    client gets the same bytes however the upstream's writes were cut."""
    whole, state = guarded_output(policy, route, data, [])
    assert state.outcome is not Outcome.INTERNAL_ERROR, whole[-400:]
    cut, cut_state = guarded_output(policy, route, data, cuts)
    assert cut == whole
    assert cut_state.outcome is state.outcome
    assert state.output_digest == hmac.new(b"k", whole, digestmod="sha256").hexdigest()


@fuzz(40)
@given(STREAMS, CUTS, ROUTES)
def test_the_bounded_event_error_is_the_only_ending_a_long_event_causes(policy: Policy, data: bytes,
                                                                         cuts: list[int], route: Route) -> None:
    """With the bound at 64 bytes, where it trips depends on the cuts (it is checked per upstream read), but
    it only ever ends the stream as the upstream's error, with [DONE] last."""
    with mock.patch.object(stream_stage, "MAX_PENDING_EVENT", 64):
        out, state = guarded_output(policy, route, data, cuts)
    assert state.outcome is not Outcome.INTERNAL_ERROR
    if b"an event longer than 64 bytes" in out:
        assert state.outcome is Outcome.UPSTREAM_UNAVAILABLE and out.endswith(b"data: [DONE]\n\n")


# --- faults the fuzzers found, kept as plain regression tests --------------------------------------------------


def chat_event(choice: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps({"id": "c1", "choices": [choice]}).encode() + b"\n\n"


@pytest.mark.parametrize("last", [
    {"index": 0, "delta": {"content": None}, "finish_reason": "stop"},  # llama.cpp-style finish chunk
    {"index": 0, "text": None, "finish_reason": "stop"},
    {"index": 0, "delta": {"content": 7}, "finish_reason": "stop"},  # not text at all: left as it came
])
def test_a_finish_chunk_with_null_text_releases_the_held_back_tail(policy: Policy, last: dict[str, Any]) -> None:
    """The guard holds back "1381" (it could start a phone number) until the finish chunk, whose text was
    `null`: `None + "1381"` raised and the stream ended as Warden's own internal error."""
    first = {"index": 0, "delta": {"content": "call 1381"}, "finish_reason": None}
    out, state = guarded_output(policy, Route.CHAT, chat_event(first) + chat_event(last) + b"data: [DONE]\n\n", [])
    assert state.outcome is Outcome.OK
    released = "".join(
        str(c.get("delta", {}).get("content") or "") + str(c.get("text") or "")
        for block in out.split(b"\n\n") if block.startswith(b"data: {")
        for c in json.loads(block[6:])["choices"])
    assert released.replace("7", "") == "call 1381"


@pytest.mark.parametrize("event", [
    chat_event({"index": [0], "delta": {"content": "hi"}, "finish_reason": None}),
    chat_event({"index": {}, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}),
    chat_event({"index": 0, "delta": {"tool_calls": [{"index": [1], "function": {"arguments": "{}"}}]}}),
    b'data: {"type": "response.output_text.delta", "output_index": [0], "content_index": 0, "delta": "x"}\n\n',
    b'data: {"type": "response.output_text.done", "output_index": {}, "content_index": 0, "text": "x"}\n\n',
])
def test_an_index_that_is_a_list_or_object_ends_the_stream_as_the_upstreams_error(policy: Policy,
                                                                                 event: bytes) -> None:
    out, state = guarded_output(policy, Route.CHAT, event + b"data: [DONE]\n\n", [])
    assert state.outcome is not Outcome.INTERNAL_ERROR
    assert b"invalid_upstream_stream" in out and out.endswith(b"data: [DONE]\n\n")
