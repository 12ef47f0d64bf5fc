from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from proxy.sse import SseFramer, parse_event

STREAM = (
    'data: {"choices": [{"delta": {"content": "你好"}}]}\n\n'
    ": keep-alive comment\n\n"
    "event: response.output_text.delta\ndata: {\"delta\": \"multi\"}\ndata: line\n\n"
    "data: [DONE]\n\n"
).encode()


def events_of(data: bytes, cuts: list[int]) -> tuple[list[bytes], list[bytes]]:
    framer = SseFramer()
    out: list[bytes] = []
    last = 0
    for cut in sorted(set(cuts)):
        out += [e.raw for e in framer.feed(data[last:cut])]
        last = cut
    out += [e.raw for e in framer.feed(data[last:])]
    return out, [e.raw for e in framer.flush()]


def test_whole_stream_frames_into_events() -> None:
    events, rest = events_of(STREAM, [])
    assert rest == []
    assert len(events) == 4
    assert b"".join(events) == STREAM
    parsed = [parse_event(e) for e in events]
    assert parsed[0].data == '{"choices": [{"delta": {"content": "你好"}}]}'.encode()
    assert parsed[1].data is None  # a comment carries no data
    assert parsed[2].event == "response.output_text.delta"
    assert parsed[2].data == b'{"delta": "multi"}\nline'
    assert parsed[3].is_done


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_gives_the_same_events(cuts: list[int]) -> None:
    assert events_of(STREAM, cuts) == events_of(STREAM, [])


@given(st.lists(st.integers(min_value=0, max_value=200), max_size=10), st.sampled_from([b"\r\n", b"\r", b"\n"]))
def test_every_line_ending_style(cuts: list[int], eol: bytes) -> None:
    data = STREAM.replace(b"\n", eol)
    events, rest = events_of(data, [c for c in cuts if c <= len(data)])
    events += rest  # with CR line ends, the final CR can only be judged at the end of the stream
    assert b"".join(events) == data
    assert [parse_event(e).data for e in events] == [parse_event(e).data for e in events_of(STREAM, [])[0]]


def test_unterminated_last_event_is_flushed_as_is() -> None:
    framer = SseFramer()
    assert framer.feed(b"data: a\n\ndata: partial") and framer.pending == len(b"data: partial")
    [last] = framer.flush()
    assert last.raw == b"data: partial" and last.data == b"partial"


def test_trailing_cr_waits_for_a_possible_lf() -> None:
    framer = SseFramer()
    assert framer.feed(b"data: x\r\n\r") == []
    [event] = framer.feed(b"\ndata: y")
    assert event.raw == b"data: x\r\n\r\n"
