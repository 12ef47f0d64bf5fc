from __future__ import annotations

import pytest
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


_PIECES = st.lists(st.sampled_from([b"data: a", b"data: \xe4\xbd\xa0\xe5\xa5\xbd", b": c", b"event: e", b"x" * 40,
                                    b"\n", b"\r", b"\r\n", b"\n\n", b"\r\n\r\n", b"\r\r"]), max_size=30).map(b"".join)


@given(_PIECES, st.lists(st.integers(min_value=0, max_value=2000), max_size=12))
def test_mixed_line_endings_split_anywhere_frame_as_fed_whole(data: bytes, cuts: list[int]) -> None:
    """The framer resumes its scan where it stopped: however a stream is cut, its events are the same."""
    whole = events_of(data, [])
    assert events_of(data, [c for c in cuts if c <= len(data)]) == whole
    assert b"".join(whole[0] + whole[1]) == data


@pytest.mark.parametrize(("first", "line"), [
    (b"", b"data: " + b"x" * 100 + b"\r\n"),  # CRLF throughout
    (b"data: a\r\n", b"data: " + b"x" * 100 + b"\n"),  # one CR, then LF lines: a CR search must not rerun per line
    (b"", b"data: " + b"x" * 100 + b"\r"),  # CR throughout
])
def test_a_long_event_with_cr_line_ends_is_scanned_once(first: bytes, line: bytes) -> None:
    """A 4 MB event in 1 KB chunks: a framer that rescanned the buffer on every chunk took seconds (quadratic)."""
    import time

    body = first + line * (4 * 1024 * 1024 // len(line)) + line[-1:] + b"data: next"
    for size in (1024, len(body)):  # in small chunks, and in one read
        framer = SseFramer()
        started = time.process_time()
        events = [e for i in range(0, len(body), size) for e in framer.feed(body[i:i + size])]
        assert time.process_time() - started < 2.0
        assert len(events) == 1 and events[0].raw == body[: -len(b"data: next")]
