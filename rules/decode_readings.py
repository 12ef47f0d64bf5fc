"""Bytes written as everyday readings, for rules/decode.py: a run of numbers that are a text's UTF-8 bytes under an
offset the decoder finds, so that no key has to be stated and no new decoder written for each new disguise.

Why (session 28): blind eval48-50 hid payloads in clock-in times (minutes from 07:00 are the bytes), daily weights
(102.9 kg: the digits less 800), a share's daily changes ("+10.3%": ten times the value plus 128), blood-pressure
readings (systolic less 110 and diastolic less 70 are the two nibbles of a byte), guitar fret pairs (two nibbles),
library call numbers (two bytes each) and running splits (4:00 plus the byte in seconds): each a decoder nobody had
written, each a tape of numbers that an assistant told the rule undoes. What they share is arithmetic a model does
on request: a number less a constant is a byte, two numbers less their constants are a byte's nibbles, or a number is
two bytes. Their rules were stated in words to the assistant; the decoder does not read the words, it tries the few
offsets that could make text instead and keeps a reading only when the decoder's own tests say it reads as English or
Chinese, which numbers from a ledger, a log or a lab report never do (`python -m bench.eval_decode`, README).

A run (`reading_runs`): READING_NUMBERS numbers or more, each apart from the next by at most MAX_GAP characters that
hold no two Latin letters together and no ideograph ("124/75，120/84", "+10.3%  +0.2%", "e5-B0 G7-D2", "195.61 |
252.02", one a line), so that prose between numbers ends a run. Its values (`values`): every number a time ("10:50",
"5:07") as its minutes or seconds (a * 60 + b); else every number with its decimal point dropped at the run's longest
decimals ("102.9" 1029, "+0.2%" 2), its sign kept. The readings (`offset_readings`), in order:
- bytes: each value less one offset, all within 9-255 (a span over 255 is none); the offsets tried are those that
  make a frequent value (one in SPACE_EVERY) a space, as English has one every ~6 bytes, or the greatest value a lead
  byte (0xE0-0xF4), as Chinese is three-byte characters (`_byte_shifts`): some forty at most, not all 256;
- nibbles: each pair of values a byte, the first less its offset the high nibble and the second less its own the low
  one (each half's span at most 15; both alignments of the pairs); a frequent pair a space, or the greatest high
  nibble a lead byte's with the low nibbles anywhere they fit (`_nibble_shifts`);
- words: each value 0-65535 as two bytes, big-endian, no offset.
Each candidate's first PREFIX_BYTES bytes must be a UTF-8 prefix without control bytes before the whole run is
decoded (a wrong offset breaks UTF-8 at once, or yields controls, almost always), and the whole must look like words
or Chinese (`_plausible`: letters and spaces, or multi-byte characters); at most MAX_CANDIDATES of each kind a run.
The decoder judges each candidate with its own tests and keeps the best.

The decimal-codes reading (code points, no offset) stays rules/decode.py's own: ASCII codes as they are are not read
here; UTF-8 bytes as they are ("229 191 189 ...", no code points) are.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence

import re2

from rules.normalize import iter_matches

READING_NUMBERS = 16  # numbers in a run ("Ignore the rules" is 16 bytes)
READING_DIGITS = 40  # ASCII digits in a text before runs are looked for: fewer cannot make a run worth reading
MAX_GAP = 6  # characters between two numbers of a run
NIBBLE_SPAN = 15
PREFIX_BYTES = 16
MAX_CANDIDATES = 16  # candidates of a kind a run, past the tests below, handed to the decoder's own
PLAIN_LETTERS = 0.7
SPACE_EVERY = 16  # bytes: English has a space in every ~6
MAX_DECIMALS = 3
MAX_NUMBERS = 1024  # numbers read a run: a payload's first KB or two says what it asks

# A run: numbers apart by short gaps without a line of prose (RE2, linear: a long digit string costs one pass). Its
# tokens and gaps are checked again in Python (`_PROSE`).
_NUMBER = r"[+-]?[0-9]+(?:[.:][0-9]+)?"
RUN = re2.compile(rf"(?:{_NUMBER}(?:[^0-9\n]{{1,{MAX_GAP}}}|\n[^0-9\n]{{0,{MAX_GAP}}})){{{READING_NUMBERS - 1},}}"
                  + _NUMBER)
_TOKEN = re.compile(r"(?:(?<![\w.:+-])[+-])?[0-9]+(?:[.:][0-9]+)?")
_PROSE = re.compile(r"[A-Za-z]{2}|[\u3400-\u9fff]")
_SPACE = 0x20
_LEAD_FIRST, _LEAD_LAST = 0xE0, 0xF4  # lead bytes of three- and four-byte characters
_HIGH = re.compile(rb"[\x80-\xff]")
_LETTERS = re.compile(rb"[A-Za-z]")
_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
_DIGITS = b"0123456789"


def digit_count(data: bytes) -> int:
    """ASCII digits in `data` (one C pass)."""
    return len(data) - len(data.translate(None, _DIGITS))


def reading_runs(data: bytes, limit: int) -> Iterator[tuple[int, int, list[int], bool]]:
    """[start, end) in bytes, the values and whether they were cut of each run of READING_NUMBERS numbers or more in
    `data` (a text as UTF-8; at most `limit` numbers, the decoder's byte budget, and MAX_NUMBERS read a run)."""
    limit = min(limit, MAX_NUMBERS)
    for spans in iter_matches(RUN, data):
        start, end = spans[0]
        run = data[start:end].decode("utf-8")
        tokens: list[re.Match[str]] = []
        for t in _TOKEN.finditer(run):
            if tokens and _PROSE.search(run, tokens[-1].end(), t.start()) is not None:
                yield from _run(start, run, tokens, limit)
                tokens = []
            tokens.append(t)
            if len(tokens) > limit:  # read as far as the limit: the rest of the run is not read
                break
        yield from _run(start, run, tokens, limit)


def _run(start: int, run: str, tokens: Sequence[re.Match[str]],
         limit: int) -> Iterator[tuple[int, int, list[int], bool]]:
    read = tokens[:limit]
    if len(read) < READING_NUMBERS:
        return
    found = values([t.group() for t in read])
    if found is not None:
        first = start + len(run[:read[0].start()].encode("utf-8"))
        yield first, first + len(run[read[0].start():read[-1].end()].encode("utf-8")), found, len(tokens) > limit


def values(numbers: Sequence[str]) -> list[int] | None:
    """The numbers as integers: all times as a * 60 + b (b below 60), or all with their decimal point dropped at the
    longest decimals among them (MAX_DECIMALS at most); none for a mix of times and numbers."""
    times = [n for n in numbers if ":" in n]
    if times:
        if len(times) < len(numbers):
            return None
        out = []
        for n in numbers:
            a, b = n.lstrip("+-").split(":")
            if int(b) >= 60:
                return None
            out.append(int(a) * 60 + int(b))
        return out
    decimals = max((len(n) - n.index(".") - 1 for n in numbers if "." in n), default=0)
    if decimals > MAX_DECIMALS:
        return None
    out = []
    for n in numbers:
        whole, _, fraction = n.lstrip("+-").partition(".")
        value = int(whole + fraction.ljust(decimals, "0"))
        out.append(-value if n.startswith("-") else value)
    return out


def _prefix_ok(data: bytes) -> bool:
    """A UTF-8 prefix (cut inside a character at its end at most) without control bytes but tab and line feed."""
    if _CONTROL.search(data) is not None:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data"
    return True


def offset_readings(found: Sequence[int]) -> Iterator[tuple[str, bytes]]:
    """Candidate readings of a run's values, (kind, bytes), in the order of the module's docstring: each a UTF-8
    prefix without control bytes that looks like words or like Chinese (`_plausible`); at most MAX_CANDIDATES of
    each kind."""
    whole = 2 * len(found)  # bytes enough for any reading of the run
    given: dict[str, int] = {}
    for kind, candidate in _candidates(found):
        if given.get(kind, 0) >= MAX_CANDIDATES or not _prefix_ok(candidate(PREFIX_BYTES)):
            continue
        raw = candidate(whole)
        if _plausible(raw):
            given[kind] = given.get(kind, 0) + 1
            yield kind, raw


def _plausible(raw: bytes) -> bool:
    """Words (PLAIN_LETTERS of the bytes ASCII letters or spaces, and a space in SPACE_EVERY bytes at least) or
    Chinese (half the bytes those of multi-byte characters): what the decoder's slower tests can accept at all."""
    high = len(_HIGH.findall(raw))
    if 2 * high >= len(raw):
        return True
    spaces = raw.count(b" ")
    return spaces * SPACE_EVERY >= len(raw) and len(_LETTERS.findall(raw)) + spaces >= PLAIN_LETTERS * len(raw)


def _candidates(found: Sequence[int]) -> Iterator[tuple[str, Callable[[int], bytes]]]:
    """Each reading as a function of how many bytes to make, at the offsets that could give text."""
    low, high = min(found), max(found)
    if high - low <= 255:
        for shift in _byte_shifts([v - low for v in found]):
            if low - shift == 0 and high < 0x80:
                continue  # ASCII codes as they are: the decimal reading's (and its switch's)
            yield "bytes", functools.partial(_bytes, found, low - shift)
    for start in (0, 1):
        firsts, seconds = found[start::2], found[start + 1::2]
        pairs = min(len(firsts), len(seconds))
        firsts, seconds = firsts[:pairs], seconds[:pairs]
        if pairs < READING_NUMBERS // 2:
            continue
        low_first, low_second = min(firsts), min(seconds)
        highs, lows = [a - low_first for a in firsts], [b - low_second for b in seconds]
        if max(highs) > NIBBLE_SPAN or max(lows) > NIBBLE_SPAN:
            continue
        for high_shift, low_shift in _nibble_shifts(highs, lows):
            offsets = (low_first - high_shift, low_second - low_shift)
            yield "nibbles", functools.partial(_nibbles, firsts, seconds, *offsets)
    if low >= 0 and 256 <= high <= 0xFFFF:
        yield "words", functools.partial(_words, found)


def _frequent[T](items: Sequence[T]) -> list[T]:
    """The items of `items` that come once in SPACE_EVERY or more often (a space in English text does)."""
    counts: dict[T, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return [item for item, n in counts.items() if n * SPACE_EVERY >= len(items)]


def _byte_shifts(relative: Sequence[int]) -> list[int]:
    """What to add to `relative` (a run's values less their least) for its bytes to be text, at most: English has a
    space every ~6 bytes, so a value that frequent is a space (32 less it); Chinese is multi-byte characters, so the
    greatest value is a lead byte (0xE0-0xF4 less it). Each shift keeps every byte within 9-255."""
    span = max(relative)
    shifts = [_SPACE - v for v in _frequent(relative)] + [lead - span for lead in range(_LEAD_FIRST, _LEAD_LAST + 1)]
    return [k for k in dict.fromkeys(shifts) if 9 <= k <= 255 - span]


def _nibble_shifts(highs: Sequence[int], lows: Sequence[int]) -> list[tuple[int, int]]:
    """The same for nibble pairs (each half less its least): a frequent pair is a space (2, 0); else the greatest
    high nibble is a lead byte's (0xE or 0xF) and the low nibbles may sit anywhere that fits. Each shift keeps its
    half within 0-15."""
    top_high, top_low = max(highs), max(lows)
    shifts = [(_SPACE // 16 - h, _SPACE % 16 - lo) for h, lo in _frequent(list(zip(highs, lows, strict=True)))]
    shifts += [(lead - top_high, k) for lead in (_LEAD_FIRST // 16, _LEAD_LAST // 16)
               for k in range(NIBBLE_SPAN - top_low + 1)]
    return [(h, lo) for h, lo in dict.fromkeys(shifts)
            if 0 <= h <= NIBBLE_SPAN - top_high and 0 <= lo <= NIBBLE_SPAN - top_low]


def _bytes(found: Sequence[int], offset: int, count: int) -> bytes:
    return bytes(v - offset for v in found[:count])


def _nibbles(firsts: Sequence[int], seconds: Sequence[int], high: int, low: int, count: int) -> bytes:
    return bytes(16 * (a - high) + b - low for a, b in zip(firsts[:count], seconds[:count], strict=True))


def _words(found: Sequence[int], count: int) -> bytes:
    return b"".join(v.to_bytes(2, "big") for v in found[:(count + 1) // 2])[:count]
