"""proxy/mitm/fast_lane.py `whole_chunks` reads HTTP/1 chunks as h11 does, and leaves everything else to it: what
it takes and what h11 then reads from the rest are, together, what h11 reads from the whole. (The lane in a real
proxy: tests/e2e/test_fast_lane.py.)"""

from __future__ import annotations

import random

import h11
import pytest
from h11._readers import ChunkedReader
from h11._receivebuffer import ReceiveBuffer

from proxy.mitm.fast_lane import whole_chunks


def chunk(payload: bytes, ext: bytes = b"") -> bytes:
    return b"%x%s\r\n%s\r\n" % (len(payload), ext, payload)


def h11_read(data: bytes) -> tuple[bytes, bool, bool]:
    """What h11's chunk reader makes of `data` from its first state: (payload bytes, ended, failed)."""
    reader, buf = ChunkedReader(), ReceiveBuffer()
    buf += data
    out = b""
    try:
        while (event := reader(buf)) is not None:
            if isinstance(event, h11.EndOfMessage):
                return out, True, False
            out += bytes(event.data)
    except h11.ProtocolError:
        return out, False, True
    return out, False, False


def test_one_chunk_is_taken_whole() -> None:
    data = chunk(b'data: {"a":1}\n\n')
    assert whole_chunks(data) == ([b'data: {"a":1}\n\n'], len(data), False)


def test_several_chunks_in_one_read() -> None:
    data = chunk(b"one") + chunk(b"two") + chunk(b"three" * 10)
    payloads, used, ended = whole_chunks(data)
    assert payloads == [b"one", b"two", b"three" * 10] and used == len(data) and not ended


def test_the_terminating_chunk_is_left_for_mitmproxy() -> None:
    data = chunk(b"last") + b"0\r\n\r\n"
    assert whole_chunks(data) == ([b"last"], len(chunk(b"last")), True)
    assert whole_chunks(b"0\r\n\r\n") == ([], 0, True)
    assert whole_chunks(b"0") == ([], 0, False)  # not yet a line: could be 0a


def test_a_size_with_leading_zeros_is_not_the_end() -> None:
    data = b"000a\r\n0123456789\r\n"
    assert whole_chunks(data) == ([b"0123456789"], len(data), False)


@pytest.mark.parametrize("cut", [1, 2, 3, 5, 7, 8])
def test_an_incomplete_chunk_is_left_whole(cut: int) -> None:
    first, second = chunk(b"done"), chunk(b"half")
    assert whole_chunks(first + second[:cut]) == ([b"done"], len(first), False)


def test_chunk_extensions_are_dropped_as_h11_drops_them() -> None:
    data = chunk(b"abc", b";name=value") + chunk(b"de", b";x \t")
    payloads, used, _ = whole_chunks(data)
    assert payloads == [b"abc", b"de"] and used == len(data)
    assert h11_read(data) == (b"abcde", False, False)


@pytest.mark.parametrize("bad", [
    b"zz\r\nabc\r\n",  # not hex
    b"3\r\nabcXY",  # data not followed by CRLF
    b"-3\r\nabc\r\n",
    b"3x\r\nabc\r\n",
    b"1" * 21 + b"\r\n",  # more digits than h11 reads
    b"2 ;x\r\nab\r\n",  # h11 allows no space before an extension
    b"\r\n",
])
def test_what_is_not_a_chunk_is_left_for_h11_to_reject(bad: bytes) -> None:
    good = chunk(b"ok")
    assert whole_chunks(good + bad) == ([b"ok"], len(good), False)


def test_whole_chunks_then_h11_read_what_h11_reads_alone() -> None:
    """Random chunk streams, cut at random places (as reads cut them), some with a terminator or garbage: the
    lane's payloads plus h11's reading of the rest from a chunk boundary equal h11's reading of the whole."""
    rng = random.Random(7)
    for _ in range(2000):
        stream = b"".join(chunk(rng.randbytes(rng.randint(1, 40)), rng.choice([b"", b"", b";e=1", b" ", b" ;e"]))
                          for _ in range(rng.randint(0, 5)))
        stream += rng.choice([b"", b"0\r\n\r\n", b"zz\r\n", b"5\r\nabcdeXX"])
        data = stream[:rng.randint(0, len(stream))]
        payloads, used, ended = whole_chunks(data)
        rest, rest_ended, rest_failed = h11_read(data[used:])
        whole, whole_ended, whole_failed = h11_read(data)
        assert b"".join(payloads) + rest == whole
        assert (rest_ended, rest_failed) == (whole_ended, whole_failed)
        assert not ended or data[used:].startswith(b"0")
