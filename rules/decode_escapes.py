"""Unicode escapes and quoted-printable for rules/decode.py: where their runs are, and what one decodes to within a
byte budget. The decoder (`Decoder._escaped_runs`) keeps a run that decodes to text and scans it with the plain text
around it on its line, as it does for HTML numeric references.

Unicode escapes (`\\u5ffd\\u7565...`, `\\U0001F600`, `\\u{1F600}`): JSON, JavaScript, Python and Java write non-ASCII
text this way, and a model reads it as the text. A JSON encoder that escapes only non-ASCII characters leaves the
ASCII between them (`"\\u4f60\\u73b0\\u5728\\u662fDAN\\uff0c..."`), so ESCAPE_GAP plain characters or other
escapes (`\\n`, `\\"`) may stand between two; a surrogate pair (`\\ud83d\\ude00`) is one character. A run of ESCAPES
or more is decoded whatever it says: an ordinary JSON log with escaped Chinese decodes to ordinary Chinese, scanned
and clean.

Quoted-printable (`=E5=BF=BD=E7=95=A5...`, e-mail bodies: RFC 2045): `=XX` is a byte, `=` at a line's end a soft
line break (joined: an encoder breaks lines at 76 characters, inside a character's escapes too). Ordinary text has
`=` followed by two hex digits too (`a=1F`, `?id=AB12`, `color=FF0000`), a few to a line; a run needs QP_ESCAPES
escapes (three Chinese characters have nine), none more than QP_GAP characters (or soft line breaks) from the next,
and what it decodes to must be UTF-8 text (`_as_text`): the bytes behind hex values in code and URLs are not.

Both run patterns are RE2 over the text's UTF-8, like the HTML references'. Escape runs are looked for from the
first place the decoder's hot pass met `ESCAPE_HINT`; quoted-printable runs only in a text that holds QP_ESCAPES
`=XX` (`QP_HINT`, after a memchr for `=`: ordinary prose pays the memchr, code with many `=` ~0.6 us per KB).
"""

from __future__ import annotations

import binascii
import re

import re2

ESCAPES = 4  # escapes in a run ("越狱模式" is four)
ESCAPE_GAP = 16  # plain characters (or `\n`, `\"` escapes) between two escapes
ESCAPE_CHARS = 10  # the longest escape (`\U0010FFFF`, `\u{10FFFF}`) is one byte at least: n bytes need <= 10n chars
_ESCAPE = r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|u\{[0-9A-Fa-f]{1,6}\})"
_ESCAPE_GAP = r"(?:[^\\\r\n]|\\[^uU\r\n])"
ESCAPE_RUN = re2.compile(rf"{_ESCAPE}(?:{_ESCAPE_GAP}{{0,{ESCAPE_GAP}}}{_ESCAPE}){{{ESCAPES - 1},}}")
# Where escapes are, as an alternative of the decoder's hot pass (contiguous ones one match; the pass's alternative is
# a backslash followed by this, or by an octal escape's digits): it cost that pass nothing measurable, where a search
# of its own (after a memchr for the backslash) cost ~0.5 us per KB of code.
ESCAPE_HINT = r"[uU][0-9A-Fa-f{}]*"
_PIECE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|u\{([0-9A-Fa-f]{1,6})\}|(.))", re.DOTALL)
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "b": "", "f": "", "/": "/", "\\": "\\", '"': '"', "'": "'"}

QP_ESCAPES = 8  # `=XX` escapes in a run
QP_GAP = 16  # plain characters and soft line breaks (`=\n`) between two; a hard line break ends a run
_QP = r"=[0-9A-Fa-f]{2}"
_QP_GAP = r"(?:[^=\r\n]|=\r?\n)"
QP_RUN = re2.compile(rf"{_QP}(?:{_QP_GAP}{{0,{QP_GAP}}}{_QP}){{{QP_ESCAPES - 1},}}")
QP_HINT = re.compile(_QP.encode())  # QP_ESCAPES of these anywhere, or QP_RUN's pass (~2 us per KB) is not made


def _char(m: re.Match[str]) -> str:
    """One escape as its character: a UTF-16 code unit (a surrogate half too, joined later), a code point (U+FFFD
    past U+10FFFF), or a JSON/C escape (`\\n`; an unknown one stays as it is)."""
    unit, long, braced, other = m.groups()
    if unit is not None:
        return chr(int(unit, 16))
    if other is not None:
        return _SIMPLE.get(other, m.group())
    code = int(long if long is not None else braced, 16)
    return chr(code) if code <= 0x10FFFF else "\ufffd"


def unescape(run: str, budget: int) -> tuple[bytes, bool]:
    """A run of Unicode escapes decoded, as UTF-8, as far as `budget` bytes go (the run is cut before the last
    escape that the cut may have split). Surrogate pairs join; a lone surrogate is U+FFFD (unprintable)."""
    part = run[:budget * ESCAPE_CHARS]
    if len(part) < len(run):
        part = part[:max(1, part.rfind("\\"))]
    chars = _PIECE.sub(_char, part)
    data = chars.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")
    return data[:budget], len(data) > budget or len(part) < len(run)


def quoted_printable(run: str, budget: int) -> tuple[bytes, bool]:
    """A quoted-printable run decoded (soft line breaks joined), as far as `budget` bytes go: a byte is at most
    three characters (`=E5`) and a soft line break takes two or three of every 76, so the prefix of 4 * budget
    characters, cut before its last `=`, is enough."""
    part = run[:budget * 4]
    if len(part) < len(run):
        part = part[:max(1, part.rfind("="))]
    data = binascii.a2b_qp(part.encode("utf-8"))
    return data[:budget], len(data) > budget or len(part) < len(run)
