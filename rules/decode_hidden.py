"""Zero-width bits and Unicode Braille for rules/decode.py: where their runs are (`HIDDEN_RUN`, looked for only
after the decoder's hot pass has met `HIDDEN_HINT`) and what one reads as.

Zero-width steganography hides a text as bits in characters that render as nothing: U+200B for 0 and U+200C for 1
(or the other way round, or U+200D / U+2060 / U+FEFF), eight to a byte, sometimes with a third character between
characters. Ordinary text uses them one at a time: a ZWJ inside an emoji sequence (between two emoji, never two in
a row), a ZWNJ inside a Persian or Indic word, a U+200B word break in CJK text or a long URL. A run of
ZERO_WIDTH_BITS or more in a row is read, and kept by the decoder only when a reading is UTF-8 that reads as English
or Chinese; a run of one character (invisible padding) reads as NULs or as 0xFF bytes, never as text.

Braille (U+2800-U+28FF) is read as grade-1 (uncontracted) English: the 26 letters, the number sign before a-j
(digits), the capital sign, comma, full stop, question and exclamation marks, apostrophe, hyphen, colon and
semicolon; the blank cell and spaces are spaces. Contractions (grade 2) are not expanded: a contracted word reads as
its letters and signs, not as the word. Braille art (drawings in 8-dot cells) is mostly cells that are none of those:
`braille` says how many were known, and the decoder keeps a run only when BRAILLE_KNOWN of them were.

Upside-down text ("suoᴉʇɔnɹʇsuᴉ snoᴉʌǝɹd llɐ ǝɹouƃᴉ", one of blind eval39's missed injections) is Latin text with
each character replaced by its usual look-alike turned over (ɐ q ɔ p ǝ ɟ ƃ ɥ ᴉ ɾ ʞ l ɯ u o d b ɹ s ʇ n ʌ ʍ x ʎ z,
∀ ꓭ Ɔ ᗡ Ǝ Ⅎ ⅁ H I ſ ꓘ ˥ W N O Ԁ Ό ᴚ S ┴ ∩ Λ M X ⅄ Z, ¡ ¿ ˙ and the rest) and the string reversed. A run is
those characters and spaces on one line (`FLIPPED_RUN`) with FLIPPED_LETTERS turned letters (`_TURNED`: the ones no
ordinary Latin text has); the decoder reads it right way up (`upside_down`) and keeps it only when that reads as
English. IPA has some turned letters (ɐ ɹ ɥ ɯ ʍ ʎ) among others that end a run (ɪ ʊ ð ŋ ˈ), Vietnamese and
pinyin none, and neither reads as English turned back. A run past the byte budget is read as far as it allows:
the end of the text it turns.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

import re2

ZERO_WIDTH_BITS = 16  # characters in a run: two bytes of bits
BRAILLE_CELLS = 8  # cells in a run, spaces between words allowed
BRAILLE_KNOWN = 0.9  # share of a run's cells that must be grade-1 letters, digits, signs or punctuation
_ZERO_WIDTH = r"[\x{200B}-\x{200D}\x{2060}\x{FEFF}]"
_CELL = r"[\x{2800}-\x{28FF}]"
HIDDEN_RUN = re2.compile(rf"(?P<zw>{_ZERO_WIDTH}{{{ZERO_WIDTH_BITS},}})"
                         rf"|(?P<braille>{_CELL}(?:[ \t]*{_CELL}){{{BRAILLE_CELLS - 1},}})")
# The decoder's hot pass looks for two or more such characters in a row (spaces between Braille cells allowed), where
# every run starts: an alternative that cost that pass nothing measurable, where HIDDEN_RUN's counted repetitions in
# it cost ~1.2 us per ordinary text (bench.scan's, submatches and all) and a pass of their own ~2.2 us per KB.
HIDDEN_HINT = rf"(?:{_ZERO_WIDTH}|{_CELL})(?:[ \t]*(?:{_ZERO_WIDTH}|{_CELL}))+"  # a run is one match


def _code_point(bits: str) -> str:
    """A group of bits as one character (U+FFFD, unprintable, for a surrogate or past U+10FFFF)."""
    code = int(bits, 2) if len(bits) <= 21 else -1
    return chr(code) if 0 <= code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"


def zero_width_readings(run: str) -> Iterator[tuple[bytes, bool]]:
    """The bytes a run of zero-width characters may hide, each with whether it ended inside a byte: the run's two
    commonest characters as the bits (the lower code point 0, then 1), any other one between characters. Without
    such separators, or when every group between them has 8 bits, 8 bits make a byte; otherwise each group is one
    character's code point (`bin(ord(c))`, as some tools write it)."""
    common = [c for c, _ in Counter(run).most_common(2)]
    if len(common) < 2:
        return
    low, high = sorted(common)
    separators = dict.fromkeys(map(ord, set(run) - {low, high}), " ")
    for zero, one in ((low, high), (high, low)):
        groups = run.translate({ord(zero): "0", ord(one): "1", **separators}).split()
        if separators and any(len(g) != 8 for g in groups):
            yield "".join(map(_code_point, groups)).encode("utf-8"), False
            continue
        bits = "".join(groups)
        usable = len(bits) - len(bits) % 8
        if usable:
            yield int(bits[:usable], 2).to_bytes(usable // 8, "big"), usable < len(bits)


def _cell(dots: str) -> str:
    return chr(0x2800 + sum(1 << (int(d) - 1) for d in dots))


_LETTER_DOTS = ("1", "12", "14", "145", "15", "124", "1245", "125", "24", "245", "13", "123", "134", "1345", "135",
                "1234", "12345", "1235", "234", "2345", "136", "1236", "2456", "1346", "13456", "1356")
_LETTERS = {_cell(dots): chr(ord("a") + i) for i, dots in enumerate(_LETTER_DOTS)}
_DIGITS = {_cell(_LETTER_DOTS[i]): "1234567890"[i] for i in range(10)}  # a-j after the number sign
_SIGNS = {_cell("2"): ",", _cell("256"): ".", _cell("236"): "?", _cell("235"): "!", _cell("3"): "'",
          _cell("36"): "-", _cell("25"): ":", _cell("23"): ";", "\u2800": " ", " ": " ", "\t": " "}
_NUMBER_SIGN = _cell("3456")
_CAPITAL_SIGN = _cell("6")


def braille(run: str) -> tuple[str, float]:
    """A Braille run as grade-1 text, and the share of its cells that are letters, digits, signs or punctuation."""
    out: list[str] = []
    known = cells = 0
    digits = capital = False
    for c in run:
        cells += c not in " \t"
        if c in (_NUMBER_SIGN, _CAPITAL_SIGN):  # signs for the next cells: not written themselves
            digits = digits or c == _NUMBER_SIGN
            capital = capital or c == _CAPITAL_SIGN
            known += 1
            continue
        if digits and c in _DIGITS:
            out.append(_DIGITS[c])
        elif c in _LETTERS:
            out.append(_LETTERS[c].upper() if capital else _LETTERS[c])
        elif c in _SIGNS:
            out.append(_SIGNS[c])
        else:
            continue
        known += c not in " \t"
        digits = digits and c in _DIGITS
        capital = False
    return "".join(out), known / cells if cells else 0.0


# Upside-down text: each character turned by its usual look-alike (the string reversed too). Keys: what a flipper
# writes; values: the character it stands for. The pairs n/u, d/p, b/q, M/W and 6/9 swap, l, o, s, x, z, H, I, N, O,
# S, X, Z, 0 and 8 stay. Some flippers write `ı`, `ן` or `ə` for i, l and e, `Ɐ` for A, `⊥` for T.
_FLIPPED = {
    "ɐ": "a", "q": "b", "ɔ": "c", "p": "d", "ǝ": "e", "ə": "e", "ɟ": "f", "ƃ": "g", "ɥ": "h", "ᴉ": "i", "ı": "i",
    "ɾ": "j", "ʞ": "k", "l": "l", "ן": "l", "ɯ": "m", "u": "n", "o": "o", "d": "p", "b": "q", "ɹ": "r", "s": "s",
    "ʇ": "t", "n": "u", "ʌ": "v", "ʍ": "w", "x": "x", "ʎ": "y", "z": "z",
    "∀": "A", "Ɐ": "A", "ꓭ": "B", "Ɔ": "C", "ᗡ": "D", "Ǝ": "E", "Ⅎ": "F", "⅁": "G", "H": "H", "I": "I", "ſ": "J",
    "ꓘ": "K", "˥": "L", "W": "M", "N": "N", "O": "O", "Ԁ": "P", "Ό": "Q", "ᴚ": "R", "S": "S", "┴": "T", "⊥": "T",
    "∩": "U", "Λ": "V", "M": "W", "X": "X", "⅄": "Y", "Z": "Z",
    "0": "0", "Ɩ": "1", "ᄅ": "2", "Ɛ": "3", "ㄣ": "4", "ϛ": "5", "9": "6", "ㄥ": "7", "8": "8", "6": "9",
    "˙": ".", "'": ",", "‘": ",", ",": "'", "¿": "?", "¡": "!", "„": '"', "‾": "_", "⅋": "&", "؛": ";",
    "(": ")", ")": "(", "[": "]", "]": "[", "{": "}", "}": "{", "<": ">", ">": "<", " ": " ",
}
_UNFLIP = str.maketrans(_FLIPPED)
# The turned letters no ordinary Latin text has (what FLIPPED_LETTERS counts); IPA has some of them (ɐ ɹ ɥ ɯ ʍ ʎ),
# Vietnamese and pinyin none.
_TURNED = "ɐǝɟƃɥᴉʞɯɹʇʌʍʎ∀ƎℲᴚ⅄"
FLIPPED_LETTERS = 8  # turned letters in a run: "ǝɹouƃᴉ llɐ" ("ignore all") has five, the whole order fifteen
_FLIPPED_CHARS = re.escape("".join(c for c in _FLIPPED if c != " "))
FLIPPED_RUN = re.compile(f"[{_FLIPPED_CHARS}](?:[{_FLIPPED_CHARS} ]*[{_FLIPPED_CHARS}])?")
# The decoder looks for runs only in a text holding a byte that starts the UTF-8 of U+0240-U+02BF (IPA: every turned
# lower-case letter but ǝ, ƃ and ᴉ is there; Chinese, pinyin, Vietnamese and European text have none), from the first
# one's line: two memchr calls, ~0.05 us per KB. As an alternative of the hot pass every turned letter was a
# match of its own (a megabyte of upside-down text took seconds).
FLIPPED_LEADS = (0xC9, 0xCA)


def turned_letters(run: str) -> int:
    """How many of `run`'s characters are turned letters (`_TURNED`)."""
    return sum(map(run.count, _TURNED))


def upside_down(run: str) -> str:
    """An upside-down run read right way up: reversed, each look-alike as the character it stands for."""
    return run[::-1].translate(_UNFLIP)
