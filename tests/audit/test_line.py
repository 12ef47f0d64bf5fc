"""The record line format (audit/line.py): one definition the writer encodes and every reader parses."""

from __future__ import annotations

import json

import pytest

from audit.errors import RecordError
from audit.line import RECORD_AT, LineFormatError, encode_line, parse_line, read_header, read_seq
from audit.records import encode_record
from tests.audit.test_golden_log import GOLDEN

TS = "2027-01-15T08:00:00.000Z"


def line_of(body: dict[str, object], *, seq: int = 7, kind: str = "exchange", mac: bytes = b"\xab" * 32) -> bytes:
    return encode_line(mac, encode_record(seq, TS, "c/ns/pod/boot", kind, body))


def test_a_line_is_the_record_with_its_mac_first() -> None:
    record = encode_record(7, TS, "c/ns/pod/boot", "exchange", {"a": 1})
    line = encode_line(bytes(range(32)), record)
    assert line == b'{"_mac":"' + bytes(range(32)).hex().encode() + b'","a":1,' + record[len(b'{"a":1,'):]
    assert RECORD_AT == 75 and b"{" + line[RECORD_AT:] == record
    assert parse_line(line) == (bytes(range(32)), record)


@pytest.mark.parametrize("line", [
    b"not a record",
    b"",
    b'{"_mac":"' + b"zz" * 32 + b'","kind":"exchange"}',  # not hex
    b'{"_mac":"' + b"ab " * 21 + b'a","kind":"exchange"}',  # hex with spaces (bytes.fromhex would take it)
    b'{"_mac":"' + b"ab" * 32 + b'",',  # nothing after the MAC
    b'{"_mac":"' + b"ab" * 31 + b'","kind":"exchange"}',  # a MAC too short
])
def test_anything_else_is_a_line_format_error(line: bytes) -> None:
    with pytest.raises(LineFormatError) as caught:
        parse_line(line)
    assert isinstance(caught.value, RecordError)  # what callers of the old split_line caught
    assert read_seq(line) is None


def test_the_header_is_read_without_parsing_or_not_at_all() -> None:
    assert read_header(line_of({"exchange": {"status": 200}})) == ("exchange", 7, TS)
    # A body key sorting between the header keys, or "seq" again in the body: parse instead, never misread.
    assert read_header(line_of({"model": "x"})) is None  # kind < model < origin
    assert read_header(line_of({"nested": {"seq": 1}})) is None
    assert read_header(line_of({"zz": '"seq":3'})) == ("exchange", 7, TS)  # escaped inside a string


def test_read_seq_takes_only_an_integer_seq() -> None:
    assert read_seq(line_of({}, seq=12)) == 12
    line = line_of({}, seq=12).replace(b'"seq":12', b'"seq":true')
    assert read_seq(line) is None
    assert read_seq(line_of({})[:-5]) is None  # torn


def test_every_line_of_the_golden_log_reads_the_same_fast_and_slow() -> None:
    lines = [line for seg in sorted((GOLDEN / "log" / "segments").iterdir())
             for line in seg.read_bytes().split(b"\n")[:-1]]
    assert len(lines) == 19
    for line in lines:
        mac, record = parse_line(line)
        assert encode_line(mac, record) == line
        obj = json.loads(record)
        assert read_seq(line) == obj["seq"]
        header = read_header(line)
        assert header is None or header == (obj["kind"], obj["seq"], obj["ts"])
