"""ITA2 (Baudot-Murray) punched tape for rules/decode.py: letters as five-hole rows drawn one a line ("●○·○○○"), or as
bare 5-bit groups in a text that names the code. A model reads a tape drawing on request; no word list does.

A row is five data positions and the feed hole, drawn with a hole character (`HOLES`: ●, o, O, *, x, 1, ...), a
no-hole one (`BLANKS`: ○, ◦, 0, -, .) and a feed mark (`FEEDS`: ·, •, ∙, ⋅, or `.` when no other mark is there and
`.` is no blank of the row), single spaces or `|` borders around them allowed; the feed mark stands in the same
column on every row of a run (a drawn tape's sprocket line), wherever that column is. A run is TAPE_ROWS rows or
more, read top to bottom. In a text that names ITA2 or Baudot (`NAMED`), rows of five without a feed mark and runs of
5-bit groups of 0 and 1 ("10000 00001 ...", BITS_GROUPS or more) are read too.

Bit order: hole 1 is the leftmost position as written (the feed mark skipped) and the least significant bit (E is
hole 1 alone, 0x01; T hole 5 alone, 0x10), the usual ITA2 table numbering; a drawing made the other way round reads
as text only reversed, so both orders are read (`readings`) and the decoder keeps the first that reads as text.
Codes: the ITA2 letters and figures tables (`LETTERS`, `FIGURES`: FIGS 0x1B and LTRS 0x1F shift, null and CR
dropped, LF a line break; the figures' national-use codes as the US teleprinter has them), starting in letters shift.

Tapes in ordinary text: a history lesson's table labels each row with its letter (no run: a row is symbols only),
and an unlabelled table in alphabetical order reads "abcdefg...", no words. Random holes read as letters, so a
reading that is not English must look like words whose letter pairs are English ones (`reads_as_letters`); between
the two orders the decoder keeps English first, then the higher share of common pairs (`pair_share`).

The hint is an alternative of the decoder's cold RE2 pass (`TAPE_HINT`: three rows in a row, or a name).
"""

from __future__ import annotations

import re

from rules.decode_emoji import reads_as_words

LETTERS = "\0E\nA SIU\rDRJNFCKTZLWHYPQOBG\x1bMXV\x1f"
FIGURES = "\x003\n- '87\r$4',!:(5+)2#6019?&\x1b./=\x1f"
FIGS, LTRS = 0x1B, 0x1F
HOLES = "●⬤⚫◉oO*xX1#"
BLANKS = "○◯⚪◦0-."
FEEDS = "·•∙⋅・"
TAPE_ROWS = 8  # rows in a run ("ignore all" is ten)
BITS_GROUPS = 8  # bare 5-bit groups in a run
_SYMBOLS = re.escape(HOLES + BLANKS + FEEDS)
_ROW = rf"[ \t|]*[{_SYMBOLS}](?:[ \t]?[{_SYMBOLS}]){{4,5}}[ \t|]*"
TAPE_RUN = re.compile(rf"(?m)^{_ROW}(?:\r?\n{_ROW}){{{TAPE_ROWS - 1},}}$")
BITS_RUN = re.compile(rf"(?<![01])[01]{{5}}(?:[ \t,/]+[01]{{5}}){{{BITS_GROUPS - 1},}}(?![01])")
NAMED = re.compile(r"(?i)\bita[ -]?2\b|\bbaudot\b|\bmurray code\b|博多码|波多码|电传码")
# RE2: three rows of six symbols in a row, or the code named.
_ROW6 = rf"[ \t|]*(?:[{_SYMBOLS}][ \t]?){{5}}[{_SYMBOLS}][ \t|]*\r?\n"
TAPE_HINT = rf"(?:^|\n){_ROW6}{_ROW6}{_ROW6}|{NAMED.pattern}"
_SEPARATORS = str.maketrans("", "", " \t|\r")


def row(line: str, named: bool) -> tuple[int, int] | None:
    """(feed column, 5-bit value, hole 1 the least significant bit) of a drawn row, or None. Five symbols without a
    feed mark are a row only in a text that names the code (`named`): the column is then -1."""
    symbols = line.translate(_SEPARATORS)
    if len(symbols) == 6:
        feeds = [i for i, c in enumerate(symbols) if c in FEEDS]
        if not feeds and symbols.count(".") == 1:
            feeds = [symbols.index(".")]
        if len(feeds) != 1:
            return None
        feed = feeds[0]
        data = symbols[:feed] + symbols[feed + 1:]
    elif len(symbols) == 5 and named:
        feed, data = -1, symbols
    else:
        return None
    value = 0
    for bit, c in enumerate(data):
        if c in HOLES:
            value |= 1 << bit
        elif c not in BLANKS:
            return None
    return feed, value


def tape_values(run: str, named: bool) -> list[int] | None:
    """A run's rows as values, or None when a row is no row or the feed column moves (no drawn tape)."""
    rows = [row(line, named) for line in run.splitlines()]
    if any(r is None for r in rows) or len({r[0] for r in rows if r is not None}) != 1:
        return None
    return [r[1] for r in rows if r is not None]


def bits_values(run: str) -> list[int]:
    """A run of bare 5-bit groups as values, the first digit hole 1 (the least significant)."""
    return [int(g[::-1], 2) for g in re.findall(r"[01]{5}", run)]


def _reversed(value: int) -> int:
    return int(f"{value:05b}"[::-1], 2)


def ita2(values: list[int]) -> str:
    """Values read as ITA2 from letters shift, lower case."""
    table = LETTERS
    out: list[str] = []
    for v in values:
        if v == FIGS:
            table = FIGURES
        elif v == LTRS:
            table = LETTERS
        elif v not in (0, 8):
            out.append(table[v])
    return "".join(out).lower()


def readings(values: list[int]) -> tuple[str, str]:
    """The run read with hole 1 the least significant bit, and the other way round."""
    return ita2(values), ita2([_reversed(v) for v in values])


# Fifty of the commonest English letter pairs: what tells a reading from the other bit order's, which is a fixed
# permutation of the letters and so keeps English-like letter counts, but not English pairs (see PAIR_SHARE).
COMMON_PAIRS = frozenset((
    "th", "he", "in", "er", "an", "re", "on", "at", "en", "nd", "ti", "es", "or", "te", "of", "ed", "is", "it", "al",
    "ar", "st", "to", "nt", "ng", "se", "ha", "as", "ou", "io", "le", "ve", "co", "me", "de", "hi", "ri", "ro", "ic",
    "ne", "ea", "ra", "ce", "li", "ch", "ll", "be", "ma", "si", "om", "ur",
))
# Of a reading's letter pairs inside words, the share that are common ones: English sentences ~0.3-0.5, the letters of
# 30 random ITA2 codes 0.05 (median) and 0.23 (95th percentile).
PAIR_SHARE = 0.3
_LETTER_RUNS = re.compile(r"[a-z]+")


def pair_share(text: str) -> float:
    """The share of the letter pairs inside words that are COMMON_PAIRS."""
    pairs = [w[i:i + 2] for w in _LETTER_RUNS.findall(text) for i in range(len(w) - 1)]
    return sum(p in COMMON_PAIRS for p in pairs) / len(pairs) if pairs else 0.0


def reads_as_letters(text: str) -> bool:
    """Words (`reads_as_words`) whose letter pairs are English ones PAIR_SHARE of the time."""
    return reads_as_words(text) and pair_share(text) >= PAIR_SHARE
