"""Bytes written in symbols for rules/decode.py: base36, base16384, I Ching hexagrams, DNA letters, whitespace at line
ends, and Latin letters written as runes. Each hides a text's bytes (or letters) in characters no word list reads
and a model undoes on request; the decoder keeps a reading only when it is UTF-8 text that reads as words or Chinese
(or, for runes, as English), so ids, hashes, Chinese prose, genomes, editors' trailing spaces and rune art stay as
they are.

base36 (0-9 and a-z, one case): the bytes as one big-endian integer. Hex digests, UUIDs without dashes, base32 and
slugs are base36-valid, so a run needs BASE36_CHARS characters with digits and letters, and is kept only when its
integer's bytes read as text: a digest's are random bytes, never UTF-8 for long. A run is read to BASE36_MAX
characters (Python's int() of a non-power-of-two base is quadratic, and capped at 4,300 digits).

base16384 ("每7个字节变成4个汉字"): 14 bits a character at U+4E00 + v (U+4E00-U+8DFF), big-endian; n tail bytes
(1-6) end with the marker U+3D00 + n. A run of ideographs is ordinary Chinese, so a run is read only when it ends with
a marker, or has B16384_CHARS characters of which at most B16384_PLAIN are common ones (its output is mostly rare
characters; running Chinese is ~99% common): `base16384_worth`. Either way its bytes must read as text.

I Ching hexagrams (U+4DC0-U+4DFF, ䷀䷁...): six bits each in code-point order, the last group zero-padded; HEXAGRAMS
symbols or more in a row (a study question names one or two, or lists them in order, which decodes to control
bytes).

DNA (A=00 C=01 G=10 T=11, four letters a byte, most significant first; FASTA lines joined): DNA_LETTERS letters or
more. A genome's bytes are arbitrary (a C-rich stretch gives letters, an A-rich one digits and signs), so a run is
kept only when it reads as words or Chinese; random and real sequences decode to bytes that are not UTF-8.

Whitespace (space = 0, tab = 1 at line ends): WHITESPACE_LINES lines or more whose trailing run is exactly eight
spaces and tabs mixing both, read as one bit stream over the block's lines. Markdown's two-space breaks, an editor's
trailing spaces or tabs of indentation never mix eight of both on eight lines.

Runes (U+16A0-U+16F8): no table is standard, so each rune reads as its conventional transliteration (`RUNES`, from
the Unicode names); the three that converters share between letters (ᚲ c/k, ᛃ j/y, ᛉ z/x) give two readings, each
word settled by the decoder's `known` words as Bacon's i/j are (`runes`). A run is RUNE_LETTERS runes or more (spaces
and runic punctuation between words) and is kept when a reading reads as words of RUNE_DISTINCT different letters:
a single rune or rune art does not.

The hints are alternatives of the decoder's cold RE2 pass (`BASE36_HINT`, `B16384_HINT`, `HEXAGRAM_HINT`,
`DNA_HINT`, `WHITESPACE_HINT`, `RUNE_HINT`); base16384 without a marker rides on the shifted ideographs' hint (three
uncommon ideographs), which its runs always carry.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rules.decode_ciphers import resolved

# base36
BASE36_CHARS = 24  # characters in a run (15 bytes)
BASE36_MAX = 1024  # characters of a run read (~660 bytes)
BASE36_RUN = re.compile(rf"(?<![0-9A-Za-z+/=_-])(?:[0-9a-z]{{{BASE36_CHARS},}}|[0-9A-Z]{{{BASE36_CHARS},}})"
                        r"(?![0-9A-Za-z+/=_-])")
# RE2: three letters past `f` close together between alphanumerics, the way base36 of text has them every few
# characters (26 of its 36 digits are letters, 20 past `f`); hex digests have none, IBANs, card and order numbers
# one or two, AWS keys are shorter (`[0-9a-z]{24}` let 116 of bench.scan's 1,500 prompts through, 0 now).
BASE36_HINT = ("[0-9a-z]{10}[g-z][0-9a-z]{0,3}[g-z][0-9a-z]{0,3}[g-z][0-9a-z]{11}"
               "|[0-9A-Z]{10}[G-Z][0-9A-Z]{0,3}[G-Z][0-9A-Z]{0,3}[G-Z][0-9A-Z]{11}")
BASE36_LETTERS = 0.4  # share of a run's characters that are letters (base36 of text: ~0.72)
_DIGIT = re.compile(r"[0-9]")
_PAST_HEX = re.compile(r"[g-zG-Z]")


def base36_worth(run: str) -> bool:
    """Digits, BASE36_LETTERS letters and one past `f` (a word, a number, an IBAN or a hex digest is not base36
    output)."""
    letters = sum(c.isalpha() for c in run)
    return (_DIGIT.search(run) is not None and letters >= BASE36_LETTERS * len(run)
            and _PAST_HEX.search(run) is not None)


def base36(run: str) -> tuple[bytes, bool]:
    """A base36 run's bytes (its first BASE36_MAX characters, then whether it was cut)."""
    part = run[:BASE36_MAX]
    n = int(part, 36)
    return n.to_bytes((n.bit_length() + 7) // 8, "big"), len(part) < len(run)


# base16384
B16384_FIRST = 0x4E00
B16384_MARK = 0x3D00
B16384_CHARS = 16  # characters of a run without a tail marker
B16384_PLAIN = 0.7  # at most this share of such a run's ideographs are common ones
B16384_RUN = re.compile(f"[\u4e00-\u8dff]{{2,}}[\u3d01-\u3d06]|[\u4e00-\u8dff]{{{B16384_CHARS},}}")
B16384_HINT = "[\\x{4E00}-\\x{8DFF}][\\x{3D01}-\\x{3D06}]"
_TAIL_CHARS = {1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4}  # characters that carry n tail bytes
B16384_OFFSETS = 3  # starts tried in a marked run (ordinary ideographs may stand before the payload)


def base16384_worth(run: str, common: frozenset[str]) -> bool:
    """A marked run, or one of B16384_CHARS ideographs at most B16384_PLAIN common."""
    if "\u3d01" <= run[-1] <= "\u3d06":
        return True
    return sum(c in common for c in run) <= B16384_PLAIN * len(run)


def _bits_to_bytes(values: list[int], width: int, size: int) -> bytes:
    """`values` of `width` bits each, big-endian, as their first `size` bytes."""
    n = 0
    for v in values:
        n = n << width | v
    total = width * len(values)
    return (n >> (total - 8 * size)).to_bytes(size, "big") if size else b""


def base16384(run: str) -> list[tuple[int, bytes]]:
    """(offset, bytes) of a base16384 run's readings: for a marked run, from each of the first B16384_OFFSETS starts
    that leave whole groups before the tail; else from its start, whole bytes."""
    last = ord(run[-1]) - B16384_MARK
    if not 1 <= last <= 6:
        values = [ord(c) - B16384_FIRST for c in run]
        return [(0, _bits_to_bytes(values, 14, 14 * len(values) // 8))]
    body = run[:-1]
    first = (len(body) - _TAIL_CHARS[last]) % 4
    out = []
    for start in range(first, min(len(body) - _TAIL_CHARS[last], first + 4 * B16384_OFFSETS) + 1, 4):
        values = [ord(c) - B16384_FIRST for c in body[start:]]
        out.append((start, _bits_to_bytes(values, 14, (len(values) - _TAIL_CHARS[last]) // 4 * 7 + last)))
    return out


# I Ching hexagrams
HEXAGRAMS = 8  # symbols in a run (six bytes)
HEXAGRAM_RUN = re.compile(f"[\u4dc0-\u4dff](?:[ \t]?[\u4dc0-\u4dff]){{{HEXAGRAMS - 1},}}")
HEXAGRAM_HINT = "[\\x{4DC0}-\\x{4DFF}]{3}"


def hexagrams(run: str) -> bytes:
    """A run of hexagrams as the bytes of their six bits each (white space skipped, the last group's padding
    dropped)."""
    values = [ord(c) - 0x4DC0 for c in run if "\u4dc0" <= c <= "\u4dff"]
    return _bits_to_bytes(values, 6, 6 * len(values) // 8)


# DNA
DNA_LETTERS = 32  # nucleotides in a run (eight bytes)
DNA_RUN = re.compile(r"(?<![A-Za-z])(?:[ACGT]+(?:\r?\n[ACGT]+)*|[acgt]+(?:\r?\n[acgt]+)*)(?![A-Za-z])")
DNA_HINT = f"[ACGT]{{{DNA_LETTERS}}}|[acgt]{{{DNA_LETTERS}}}"
_NUCLEOTIDE = str.maketrans("ACGTacgt", "01230123")
_NOT_NUCLEOTIDE = re.compile(r"[^ACGTacgt]")


def dna_worth(run: str) -> bool:
    letters = len(run) - run.count("\n") - run.count("\r")
    return letters >= DNA_LETTERS and letters % 4 == 0


def dna(run: str) -> bytes:
    """A DNA run (line breaks skipped) as bytes, four nucleotides a byte."""
    digits = _NOT_NUCLEOTIDE.sub("", run).translate(_NUCLEOTIDE)
    return int(digits, 4).to_bytes(len(digits) // 4, "big") if digits else b""


# Whitespace at line ends
WHITESPACE_LINES = 8  # lines whose trailing run is eight mixed spaces and tabs
WHITESPACE_HINT = "[^ \\t\\n][ \\t]{8}\\r?\\n"
_TRAILING = re.compile(r"[ \t]+(?=\r?$)", re.MULTILINE)
_EIGHT = re.compile(r"(?: *\t[ \t]*| *)")


def trailing_blocks(text: str) -> list[tuple[int, int, str]]:
    """(start, end, bits) of each block of consecutive lines that end in white space, WHITESPACE_LINES of whose
    trailing runs are exactly eight spaces and tabs mixing both; a space is 0, a tab 1 (a line's indentation, white
    space only, is no trailing run)."""
    out: list[tuple[int, int, str]] = []
    runs: list[re.Match[str]] = []

    def close() -> None:
        mixed = sum(len(m.group()) == 8 and " " in m.group() and "\t" in m.group() for m in runs)
        if mixed >= WHITESPACE_LINES:
            bits = "".join(m.group() for m in runs).translate(_WHITE_BITS)
            out.append((runs[0].start(), runs[-1].end(), bits))
        runs.clear()

    for m in _TRAILING.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if m.start() == line_start:
            continue  # a blank or white-space-only line: no trailing run, and no break either
        if runs and text.count("\n", runs[-1].end(), line_start) > 1 + _blank_lines(text, runs[-1].end(), line_start):
            close()
        runs.append(m)
    close()
    return out


_WHITE_BITS = str.maketrans(" \t", "01")


def _blank_lines(text: str, start: int, end: int) -> int:
    """Lines of white space only between `start` and `end`."""
    return sum(not line.strip() for line in text[start:end].split("\n")[1:-1])


def whitespace(bits: str) -> bytes:
    """A block's bits as bytes, eight a byte (a last partial byte dropped)."""
    usable = len(bits) - len(bits) % 8
    return int(bits[:usable], 2).to_bytes(usable // 8, "big") if usable else b""


# Runes
RUNE_LETTERS = 8  # runes in a run
RUNE_DISTINCT = 6  # different letters in a reading that is kept
_RUNE = "\u16a0-\u16ea\u16f1-\u16f8"
_RUNE_BREAK = "\u16eb-\u16ed"  # ᛫ ᛬ ᛭: runic word dividers
RUNE_RUN = re.compile(f"[{_RUNE}]+(?:[ {_RUNE_BREAK}]+[{_RUNE}]+)*")
RUNE_HINT = "[\\x{16A0}-\\x{16EA}\\x{16F1}-\\x{16F8}]{2}"
# Each rune's conventional transliteration (Elder Futhark, Anglo-Saxon futhorc, Younger Futhark, medieval and the
# Franks Casket's), from the last part of its Unicode name where it has one.
RUNES = dict(zip(
    "ᚠᚡᚢᚣᚤᚥᚦᚧᚨᚩᚪᚫᚬᚭᚮᚯᚰᚱᚲᚳᚴᚵᚶᚷᚸᚹᚺᚻᚼᚽᚾᚿᛀᛁᛂᛃᛄᛅᛆᛇᛈᛉᛊᛋᛌᛍᛎᛏᛐᛑᛒᛓᛔᛕᛖᛗᛘᛙᛚᛛᛜᛝᛞᛟᛠᛡᛢᛣᛤᛥᛦᛧᛨᛩᛪᛱᛲᛳᛴᛵᛶᛷᛸ",
    ["f", "v", "u", "y", "y", "w", "th", "th", "a", "o", "a", "ae", "o", "o", "o", "oe", "on", "r", "k", "c", "k", "g",
     "ng", "g", "g", "w", "h", "h", "h", "h", "n", "n", "n", "i", "e", "j", "j", "a", "a", "i", "p", "z", "s", "s", "s",
     "c", "z", "t", "t", "d", "b", "b", "p", "p", "e", "m", "m", "m", "l", "l", "ng", "ng", "d", "o", "ea", "io", "q",
     "k", "k", "st", "r", "r", "y", "q", "x", "k", "sh", "oo", "os", "is", "eh", "ac", "ae"], strict=True))
RUNE_TWINS = {"ᚲ": ("k", "c"), "ᛃ": ("j", "y"), "ᛄ": ("j", "y"), "ᛉ": ("z", "x")}  # letters converters share
_BREAKS = re.compile(f"[ {_RUNE_BREAK}]+")


def rune_count(run: str) -> int:
    return sum(c in RUNES for c in run)


def runes(run: str, known: Callable[[str], bool]) -> list[str]:
    """A run of runes read with each shared rune's first letter and with its second, each word that is not `known`
    settled by its other letters where that makes it so."""
    words = _BREAKS.split(run)
    readings = []
    for pick in (0, 1):
        plain: list[str] = []
        other: dict[int, str] = {}  # character offsets of shared runes' letters, and their other letter
        size = 0
        for word in words:
            if plain:
                plain.append(" ")
                size += 1
            for c in word:
                letters = RUNE_TWINS[c][pick] if c in RUNE_TWINS else RUNES.get(c, c)
                if c in RUNE_TWINS:
                    other[size] = RUNE_TWINS[c][1 - pick]
                plain.append(letters)
                size += len(letters)
        readings.append(resolved("".join(plain), other, known) if other else "".join(plain))
    return readings
