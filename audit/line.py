"""The record line, defined once: the writer encodes it; recovery, the verifier and `warden audit show` parse it.

A line is the canonical JSON of the record with its MAC as the first key, then a newline:

    {"_mac":"<64 hex>","kind":"exchange","origin":"c/ns/pod/boot","seq":7,"ts":"...",...}

`_mac` sorts before every other key (they are lower-case identifiers), so the MAC-covered bytes, the canonical
record without `_mac`, are `b"{" + line[RECORD_AT:]`: no re-serialization is needed to check a MAC. The Merkle
leaf is the whole line without its newline (RFC 6962 section 2.1: SHA-256(0x00 || line)).
"""

from __future__ import annotations

import json
import re
from binascii import Error as HexError
from binascii import unhexlify

from audit.errors import RecordError

MAC_SIZE = 32
MAC_OPEN = b'{"_mac":"'
MAC_CLOSE = b'",'
RECORD_AT = len(MAC_OPEN) + 2 * MAC_SIZE + len(MAC_CLOSE)  # 75: where the record's first key starts
_HEX_AT = len(MAC_OPEN)
_HEX_END = RECORD_AT - len(MAC_CLOSE)

# In canonical JSON the header keys sort kind < origin < seq < ts, adjacent unless the body has a key between
# them. `"seq":` can only be a key (a quote inside a string is escaped), so when it occurs once in the line and
# this matches, it is the record's own header. `ts` is always 24 characters (audit.canonical.format_ts).
HEADER = re.compile(rb'"kind":"([a-z][a-z0-9_.]*)","origin":"[^"\\]*","seq":([0-9]+),"ts":"([^"\\]{24})"')
_SEQ_KEY = b'"seq":'


class LineFormatError(RecordError):
    """A line is not in record form: no MAC prefix, a MAC that is not hex, nothing after the MAC."""


def encode_line(mac: bytes, record: bytes) -> bytes:
    """The stored line (without newline) for a canonical record (`{...}`, no `_mac`) and its MAC."""
    return MAC_OPEN + mac.hex().encode("ascii") + MAC_CLOSE + record[1:]


def parse_line(line: bytes) -> tuple[bytes, bytes]:
    """(mac, record bytes the MAC covers) of a stored line, without its newline. Raises LineFormatError."""
    if line[:_HEX_AT] != MAC_OPEN or line[_HEX_END:RECORD_AT] != MAC_CLOSE or len(line) <= RECORD_AT:
        raise LineFormatError("line does not start with the record MAC", found=line[:RECORD_AT][:80])
    try:
        mac = unhexlify(line[_HEX_AT:_HEX_END])
    except HexError as exc:
        raise LineFormatError("record MAC is not hex", found=line[:RECORD_AT]) from exc
    return mac, b"{" + line[RECORD_AT:]


def read_header(line: bytes) -> tuple[str, int, str] | None:
    """(kind, seq, ts) read without parsing the JSON, or None when the line is unusual (then parse it).

    The verifier's fast path: a body key sorting between the header keys, or `"seq":` occurring twice, gives
    None, never a wrong header."""
    if line.count(_SEQ_KEY) != 1:
        return None
    found = HEADER.search(line)
    if found is None:
        return None
    return found.group(1).decode("ascii"), int(found.group(2)), found.group(3).decode("ascii")


def read_seq(line: bytes) -> int | None:
    """The seq of a well-formed record line, else None (crash recovery: where a torn tail starts)."""
    try:
        _mac, record = parse_line(line)
        obj = json.loads(record)
    except (RecordError, ValueError, RecursionError):  # RecursionError: nesting past the parser's stack
        return None
    seq = obj.get("seq") if isinstance(obj, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None
