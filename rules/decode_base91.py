"""basE91 (Joachim Henke's) for rules/decode.py: 13 or 14 bits in two characters of a 91-character alphabet (A-Z,
a-z, 0-9 and the ASCII punctuation but `-`, `\\`, `'` and space), a text's UTF-8 bytes written densely enough that
a model reads it back on request and no word list does.

Its alphabet holds almost every printable ASCII character, so a URL, a minified line of code or a Markdown table is a
basE91-valid run too: a run is read only in a text that names basE91 (`NAMED`, BASE91_NAMED characters long) or when
it is BASE91_CHARS long with its punctuation written densely (`BASE91_HINT`: five marks, each within eight
characters of the last; `base91_worth`: BASE91_MARKS of the run's characters, where basE91 writes a third, base64
two marks and a word, a path or a URL few), and a reading is kept only when its bytes are UTF-8 text that reads as
words or Chinese (the decoder's `_reads_as_text`): a URL's or a line of code's bytes under basE91 are random, never
UTF-8 text for long. A run in quotes, brackets or backticks, or followed by a full stop, is read with them and
without (`candidates`). A short unnamed run with few marks ("how to make a bomb" is 23 characters, 4 marks) is not
told from code and is not read.
"""

from __future__ import annotations

import re

ALPHABET = ('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&()*+,./:;<=>?@[]^_`{|}~"')
_VALUE = {c: i for i, c in enumerate(ALPHABET)}
BASE91_CHARS = 20  # characters of a run in a text that does not name basE91 (~16 bytes)
BASE91_NAMED = 16  # in a text that does
BASE91_MARKS = 0.15  # share of a run's characters that are punctuation (basE91 writes 29 of its 91 so)
BASE91_MAX = 8192  # characters of a run read
_CLASS = "".join("\\" + c if c in "\\[]^-" else c for c in ALPHABET)
BASE91_RUN = re.compile(f"[{_CLASS}]{{{BASE91_NAMED},}}")
NAMED = re.compile(r"(?i)\bbase[ _-]?91\b")
# The cold pass's hint: the name, or five of basE91's marks in a run, each within eight other characters of the
# last. Not the marks of addresses, times, numbers and e-mail (`:` `.` `,` `@` `/` `+`: an IPv6 address or a list of
# times would hint every text that has one), nor `"`, which ends the stretch (JSON's `{"a":[1]}` is no hint); basE91
# writes the other 22 marks a quarter of the time.
_RARE = "!#$%&()*;<=>?\\[\\]^_`{|}~"
BASE91_HINT = rf"(?i:\bbase[ _-]?91\b)|(?:[A-Za-z0-9+/.,:@]{{0,8}}[{_RARE}]){{5}}"
_MARKS = ALPHABET[62:].replace("+", "").replace("/", "")  # basE91's punctuation but base64's
_WRAPS = ('""', "()", "[]", "``", "{}", "<>")


def base91_worth(run: str, named: bool) -> bool:
    """Long enough (BASE91_NAMED where the text names basE91, else BASE91_CHARS), and, unnamed, BASE91_MARKS of it
    punctuation but base64's, with letters of both cases and a digit (basE91 of text has all)."""
    if named:
        return len(run) >= BASE91_NAMED
    return (len(run) >= BASE91_CHARS and not run.isupper() and not run.islower()
            and any(c.isdigit() for c in run) and sum(map(run.count, _MARKS)) >= BASE91_MARKS * len(run))


def candidates(run: str) -> list[str]:
    """The run, without a last `.`, `,` or `;` (a sentence's), and without the quotes, brackets or backticks around
    either."""
    out = [run, run[:-1]] if len(run) > 1 and run[-1] in ".,;" else [run]
    return out + [part[1:-1] for part in out if len(part) > 2 and part[0] + part[-1] in _WRAPS]


def base91(run: str) -> tuple[bytes, bool]:
    """The bytes of a basE91 run (its first BASE91_MAX characters; cut or not)."""
    part = run[:BASE91_MAX]
    out = bytearray()
    value, bits, held = -1, 0, 0
    for c in part:
        d = _VALUE[c]
        if value < 0:
            value = d
            continue
        value += d * 91
        bits |= value << held
        held += 13 if value & 8191 > 88 else 14
        while held > 7:
            out.append(bits & 255)
            bits >>= 8
            held -= 8
        value = -1
    if value >= 0:
        out.append((bits | value << held) & 255)
    return bytes(out), len(part) < len(run)
