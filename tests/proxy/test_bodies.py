"""Rewritten bodies are written back as JSON that keeps what the other side sent, even text UTF-8 cannot hold;
streamed answers an upstream compressed are decoded incrementally and bounded."""

from __future__ import annotations

import json
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proxy.bodies import StreamDecodeError, StreamDecoder, json_bytes


def test_text_is_written_as_utf8_unescaped() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "手机 138****5678"}]}
    assert json_bytes(body) == json.dumps(body, ensure_ascii=False).encode()


def test_a_lone_surrogate_is_written_escaped_as_it_came() -> None:
    sent = b'{"messages": [{"content": "call <CN_MOBILE_1> \\ud800"}]}'
    body = json.loads(sent)
    written = json_bytes(body)
    written.decode("utf-8")  # valid UTF-8
    assert b"\\ud800" in written
    assert json.loads(written) == body


_TEXT = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=8)  # lone surrogates included


@given(st.recursive(_TEXT | st.integers() | st.none(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
                    max_leaves=10))
def test_every_value_the_standard_parser_accepts_round_trips(value: object) -> None:
    assert json.loads(json_bytes(value)) == value


def _gzip_stream(events: list[bytes]) -> list[bytes]:
    """Chunks as a compressing server writes them: each event flushed, then the trailer."""
    encoder = zlib.compressobj(wbits=31)
    return [encoder.compress(e) + encoder.flush(zlib.Z_SYNC_FLUSH) for e in events] + [encoder.flush()]


def test_a_stream_decoder_gives_back_each_flushed_event() -> None:
    events = [b"data: {\"n\": %d}\n\n" % i for i in range(5)]
    decoder = StreamDecoder("gzip", 1 << 20)
    chunks = _gzip_stream(events)
    assert [decoder.decode(c) for c in chunks[:-1]] == events
    assert decoder.decode(chunks[-1]) + decoder.finish() == b""


@pytest.mark.parametrize("wbits", [15, -15])  # "deflate" with its zlib header, and raw (as some servers send)
def test_a_stream_decoder_reads_both_deflate_forms(wbits: int) -> None:
    encoder = zlib.compressobj(wbits=wbits)
    data = encoder.compress(b"data: x\n\n") + encoder.flush()
    decoder = StreamDecoder("deflate", 1 << 20)
    assert decoder.decode(data[:3]) + decoder.decode(data[3:]) + decoder.finish() == b"data: x\n\n"


def test_a_stream_decoder_refuses_a_bomb_garbage_and_encodings_it_cannot_decode() -> None:
    bomb = zlib.compressobj(wbits=31)
    chunk = bomb.compress(b"\0" * (8 << 20)) + bomb.flush(zlib.Z_SYNC_FLUSH)
    assert len(chunk) < 64 << 10
    with pytest.raises(StreamDecodeError, match="expands past"):
        StreamDecoder("gzip", 1 << 20).decode(chunk)
    with pytest.raises(StreamDecodeError, match="not valid gzip"):
        StreamDecoder("gzip", 1 << 20).decode(b"data: plain text\n\n")
    with pytest.raises(StreamDecodeError, match="cannot be decoded"):
        StreamDecoder("br", 1 << 20).decode(b"\x0b\x02\x80")


@pytest.mark.parametrize("doc", [
    b'{"a": 1}', b'{"n": NaN, "i": -Infinity}', b'{"big": 123456789012345678901234567890}', b'{"s": "\\ud800"}',
    b'{"u64": 18446744073709551616, "i64": -9223372036854775809}', b'{"max": 9223372036854775807}',
    '{"u": "\u00e9"}'.encode("utf-16"), b'{"a": 1, "a": 2}', b'{"f": 1e400}', b' [1, 2.5, "x", null] ',
])
def test_parse_json_gives_what_json_loads_gives(doc: bytes) -> None:
    """orjson first for speed, but exactly json.loads' documents and values (the fallback decides the rest)."""
    from proxy.bodies import parse_json

    got, want = parse_json(doc), json.loads(doc)
    assert repr(got) == repr(want)  # NaN != NaN, but their reprs agree; 1 and 1.0 do not


@pytest.mark.parametrize("doc", [b"{", b'{"a": 1} x', b"\xff\xfe{", b"[" * 100_000])
def test_parse_json_refuses_what_json_loads_refuses(doc: bytes) -> None:
    from proxy.bodies import parse_json

    with pytest.raises((ValueError, RecursionError)):
        json.loads(doc)
    with pytest.raises((ValueError, RecursionError)):
        parse_json(doc)
