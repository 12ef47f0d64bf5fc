"""Octal escapes, Ascii85, uuencode and UTF-7 for rules/decode.py: where their runs are, and what one decodes to within
a byte budget. Each is a way mail, printers, shells and C have long written bytes as ASCII, and a model reads all
four; the decoder keeps a run whose bytes are text and scans it.

Octal escapes (`\\350\\277\\220\\347\\273\\264`): git's quotepath, C string literals, `printf '\\345...'` and logs
print non-ASCII bytes so, three escapes to a Chinese character. A run is OCTALS escapes or more, with up to OCTAL_GAP
plain characters or other backslash escapes (`\\n`, `\\"`) between two, as for Unicode escapes: a file name with
two Chinese characters has six and is left alone. It decodes to bytes (`\\033[0m` to ESC, plain characters as
themselves) kept when they are UTF-8 text (`_as_text`), and is read with its line's plain text around it: a git
status line decodes to its Chinese file names, scanned and clean.

Ascii85 (Adobe's `<~ ... ~>`, PostScript and PDF streams): only the delimited form is read. Its alphabet is `!`
to `u`, 85 of the 94 printable ASCII characters, so bare runs are everywhere: 32% of the 16,173 non-blank lines of
this project's rules/ and proxy/ hold a token of 16 or more such characters, and 98% of bench.scan's English lines
are one once spaces are skipped (as `a85decode` skips them); none of those 6,474 tokens decodes to UTF-8 text.
Trying them would cost every text a pass and decode nothing.
`<~` is rare (Haskell's lens and Scala's Akka streams write `<~` and `~>` as operators; what lies between them is
never Ascii85 that decodes to UTF-8). A block decodes with `base64.a85decode` (whitespace skipped, `z` for four
zero bytes), cut to whole five-character groups at the budget, and is kept when its bytes are text: a PDF content
stream of text operators decodes to them, scanned and clean; an image or a compressed stream is not UTF-8.

uuencode (`begin 644 name`, lines of 61 characters starting with `M`, `` ` `` and `end`): Usenet and old mail.
The run is the header and the lines after it that are uuencoded lines (a length character and at most 62 characters
of ` ` to `` ` ``: a lower-case letter ends it, so "begin 2024 with" before a line of prose is no run); each line
decodes with `binascii.a2b_uu` until the budget is spent or a line is not one a uuencoder wrote (longer than its
length character says, or invalid). Kept when the bytes are text: an ordinary uuencoded README is, and scanned
clean; an uuencoded archive is not UTF-8.

UTF-7 (`+ZeVkzYAD-`: modified base64 of UTF-16BE between `+` and `-`, RFC 2152): a run is shift sequences of
UTF7_UNITS base64 characters or more (one UTF-16 unit), with up to UTF7_GAP plain ASCII characters between two (as
an encoder leaves ASCII direct: `+T2BzsFcoZi8-DAN+/wxfAFPRgAVqIV8PXfJUL3Uo-`). A `+` is everywhere (`+1 555 0100`,
`C++17`, `a+b-c`, base64 itself), so a run is decoded only in a text that declares UTF-7 (`charset=utf-7`,
`UTF7`), or when one of its shift sequences has UTF7_LONG base64 characters or more and what it decodes to reads
as English or Chinese (the decoder's `_reads_as_english` / `_reads_as_chinese`): base64 decodes as UTF-16 to code
units drawn at random, which the codec mostly rejects (non-zero padding bits, lone surrogates: it took 12% of
100,000 random base64 strings of 16-64 characters) and which never read as text (none of the 100,000 did). Each shift
sequence decodes with the `utf-7` codec; one that it rejects is U+FFFD (unprintable). A base64 run of the decoder's
that starts with `+` and holds a `-` is no base64 (no alphabet has both): it is left to UTF-7, and its length is not
charged to the budget twice.

Run patterns are RE2 over the text's UTF-8, like the Unicode escapes'. Octal, Ascii85 and uuencode runs are looked
for from where the decoder's hot pass met their hints (`OCTAL_HINT` inside the Unicode escapes' alternative,
`A85_HINT` and `UU_HINT` in one more: ~0.1 us per KB); UTF-7 runs from the line of the first base64 run with a `+`
in it, or from the start of a text in which that pass met `UTF7_DECLARED`. A run is bounded by the byte budget like
every other: the characters past what it allows are not read.
"""

from __future__ import annotations

import base64
import binascii
import re

import re2

# Octal escapes of bytes
OCTALS = 8  # escapes in a run (eight bytes: "越狱模式" is twelve)
OCTAL_GAP = 16  # plain characters (or `\n`, `\"` escapes) between two escapes
_OCTAL = r"\\[0-3][0-7]{2}"
_OCTAL_GAP = r"(?:[^\\\r\n]|\\[^0-7\r\n])"
OCTAL_RUN = re2.compile(rf"{_OCTAL}(?:{_OCTAL_GAP}{{0,{OCTAL_GAP}}}{_OCTAL}){{{OCTALS - 1},}}")
OCTAL_HINT = r"[0-3][0-7]{2}"  # after a backslash: the hot pass's alternative for escapes (Unicode or octal)
_OCTAL_PIECE = re.compile(rb"\\(?:([0-3][0-7]{2})|(.))", re.DOTALL)
_C_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"\\": b"\\", b'"': b'"', b"'": b"'", b"a": b"\a", b"b": b"\b",
              b"f": b"\f", b"v": b"\v", b"e": b"\x1b"}


def _byte(m: re.Match[bytes]) -> bytes:
    code, other = m.groups()
    if code is not None:
        return bytes((int(code, 8),))
    return _C_ESCAPES.get(other, m.group())


def octal(run: str, budget: int) -> tuple[bytes, bool]:
    """A run of octal escapes as its bytes (plain characters as their UTF-8), as far as `budget` bytes go: a byte is
    at most four characters (`\\350`), so the prefix of 4 * budget characters, cut before its last backslash, is
    enough."""
    part = run[:budget * 4]
    if len(part) < len(run):
        part = part[:max(1, part.rfind("\\"))]
    data = _OCTAL_PIECE.sub(_byte, part.encode("utf-8", "surrogatepass"))
    return data[:budget], len(data) > budget or len(part) < len(run)


# Ascii85 (Adobe)
A85_RUN = re2.compile(r"<~[!-uz \t\r\n]*~>")
A85_HINT = r"<~"
_A85_WHITE = re.compile(r"[ \t\r\n]+")
_A85_GROUPS = re.compile(r"(?:z|[!-u]{5})*")


def ascii85(run: str, budget: int) -> tuple[bytes, bool]:
    """An Adobe Ascii85 block (`<~...~>`) decoded, as far as `budget` bytes go: five characters (or a `z`) are four
    bytes, so 2 * budget characters (whitespace too) are enough; a prefix is cut to whole groups. Invalid: no
    bytes."""
    body = run[2:-2]
    part = body[:budget * 2]
    compact = _A85_WHITE.sub("", part)
    cut = len(part) < len(body)
    if cut:
        whole = _A85_GROUPS.match(compact)
        compact = whole.group() if whole else ""
    try:
        data = base64.a85decode(compact)
    except ValueError:  # `z` inside a group, a group past 2**32
        return b"", False
    return data[:budget], len(data) > budget or cut


# uuencode
UU_HINT = r"begin [0-7]{3}"
UU_RUN = re2.compile(r"begin [0-7]{3,4} [^\r\n]*(?:\r?\n[ -`]{1,62})+(?:\r?\nend)?")
_LINE_BREAK = re.compile(r"\r?\n")


def uudecode(run: str, budget: int) -> tuple[bytes, bool]:
    """A uuencoded block's lines decoded one by one (the header skipped), until `end`, a line no uuencoder writes
    (longer than its length character says, or invalid) or `budget` bytes (the lines past it are not read)."""
    out: list[bytes] = []
    size = 0
    for line in _LINE_BREAK.split(run)[1:]:
        if line == "end":
            break
        if size >= budget:
            return b"".join(out)[:budget], True
        chars = (((ord(line[0]) - 32) & 63) + 2) // 3 * 4  # characters after the length one
        if len(line) > chars + 2:  # one checksum character, or a trailing space, at most
            break
        try:
            chunk = binascii.a2b_uu(line)
        except binascii.Error:
            break
        out.append(chunk)
        size += len(chunk)
    data = b"".join(out)
    return data[:budget], len(data) > budget


# UTF-7
UTF7_UNITS = 3  # base64 characters in a shift sequence: one UTF-16 code unit
UTF7_GAP = 16  # plain ASCII characters between two shift sequences
UTF7_LONG = 16  # base64 characters of one shift sequence, in a text that does not declare UTF-7
_SHIFT = rf"\+[A-Za-z0-9+/]{{{UTF7_UNITS},}}-?"
UTF7_RUN = re2.compile(rf"{_SHIFT}(?:[\t -*,-~]{{0,{UTF7_GAP}}}{_SHIFT})*")
UTF7_DECLARED = r"(?i:utf-?7)"
UTF7_LONG_SHIFT = re.compile(rf"\+[A-Za-z0-9+/]{{{UTF7_LONG}}}")
_SHIFTED = re.compile(r"\+(?:([A-Za-z0-9+/]+)-?|-)")
_OPEN_SHIFT = re.compile(r"\+[A-Za-z0-9+/]*\Z")


def _unshift(m: re.Match[str]) -> str:
    body = m.group(1)
    if body is None:
        return "+"  # `+-` is a plus sign
    try:
        return f"+{body}-".encode("ascii").decode("utf-7")
    except UnicodeDecodeError:  # non-zero padding bits, a partial unit, a lone surrogate
        return "\ufffd"


def utf7(run: str, budget: int) -> tuple[bytes, bool]:
    """A UTF-7 run decoded, as UTF-8, as far as `budget` bytes go: an ASCII character in a shift sequence is 8/3
    base64 characters, so the prefix of 3 * budget characters is enough; a shift sequence it cuts is cut to whole
    groups of eight base64 characters (three UTF-16 units)."""
    part = run[:budget * 3]
    cut = len(part) < len(run)
    if cut and (open_shift := _OPEN_SHIFT.search(part)) is not None:
        units = (len(open_shift.group()) - 1) // 8 * 8
        part = part[:open_shift.start() + 1 + units] if units else part[:open_shift.start()]
    data = _SHIFTED.sub(_unshift, part).encode("utf-8", "surrogatepass")
    return data[:budget], len(data) > budget or cut
