"""Bytes written as numerals of old Chinese systems, for rules/decode.py: 太玄经 tetragrams, 算筹 counting rods, 简谱
digits in base 7 and the 二十八宿 lunar mansions in base 28. Each hides a text's UTF-8 bytes (or, for the mansions,
its characters) in symbols no word list reads and a model undoes on request; the decoder keeps a reading only when it
is text that reads as words or Chinese, so a classics question, a maths-history table, a melody and an astronomy
lesson stay as they are.

太玄经 (Tai Xuan Jing) tetragrams: the 81 of U+1D306-U+1D356 in code-point order are the digits 0-80 (U+1D300-U+1D305,
the monogram and digrams, are none). Read two ways (`taixuan`): two symbols a byte (first * 81 + second, so the first
is 0-3: a list of the tetragrams in order is no such run), and the run as one big-endian base-81 integer. A run is
TAIXUAN_SYMBOLS symbols or more, a space between two at most.

算筹 counting-rod numerals: the unit forms U+1D360-U+1D368 (vertical, 1-9) stand at the units, hundreds, ten
thousands ..., the tens forms U+1D369-U+1D371 (horizontal, 1-9) at the tens, thousands ..., 〇 (U+3007) for a zero:
rods alternate so that a number needs no place marks. A number is read only when every digit's form fits its place
counted from the right (`rod_number`): that is what makes it unambiguous; the ideographic tally marks (U+1D372-
U+1D378) are no digits. Two forms: numbers apart by spaces (or `,` `、`), ROD_NUMBERS of them, all 0-255 as bytes or all
code points as characters (`rods`); or one number of ROD_DIGITS digits or more as a big-endian integer.

简谱 (numbered musical notation) in base 7: each byte three base-7 digits, high first, written as the notes 1-7 (digit
plus one) or as 0-6 (a 7 says the first, a 0 the second; else both are tried); bar lines (`|`, `‖`, `||`) and spaces
between them are not digits. Read only in a text that names 简谱 (`JIANPU_NAMED`) or where three-digit groups follow
a bar line (`JIANPU_HINT`) and every group between the bar lines is three digits (`jianpu_worth`); a run is
JIANPU_BYTES bytes or more, and its digits a multiple of three. A melody (single notes, dashes, dots, octave marks)
reads as control bytes or as no UTF-8.

二十八宿 base 28: the mansions 角亢氐房心尾箕斗牛女虚危室壁奎娄胃昴毕觜参井鬼柳星张翼轸 (角 = 0 ... 轸 = 27), three a
number, high first (28^3 = 21,952 covers the basic CJK block): the number as an offset from 一 (U+4E00), or, when
every number is 0-255, as a byte; other characters in the run are kept, and `·` or a space may stand between
mansions. Half the mansions are everyday characters (心 星 女 牛 张), so a run is MANSION_CHARS mansions or more
with nothing but separators and MANSION_OTHERS other characters at most between two, each stretch of mansions whole
threes, and a reading as characters needs two
common two-character words (the decoder's `word_hits`), as 区位码's does. The 28 listed in order, or by quarter,
are not a multiple of three, or decode to uncommon characters.

The hints are alternatives of the decoder's cold RE2 pass.
"""

from __future__ import annotations

import re

from rules.decode_radix import _big_endian

# 太玄经
TAIXUAN_FIRST = 0x1D306
TAIXUAN_SYMBOLS = 16  # symbols in a run (8 bytes)
TAIXUAN_MAX = 2048
_TETRA = "[\U0001d306-\U0001d356]"
TAIXUAN_RUN = re.compile(f"{_TETRA}(?: ?{_TETRA}){{{TAIXUAN_SYMBOLS - 1},}}")
TAIXUAN_HINT = "(?:[\\x{1D306}-\\x{1D356}] ?){3}[\\x{1D306}-\\x{1D356}]"


def taixuan(run: str) -> list[tuple[bytes, bool]]:
    """A run's readings: two symbols a byte (when every pair is 0-255), and the base-81 integer (its first TAIXUAN_MAX
    symbols; cut or not)."""
    digits = [ord(c) - TAIXUAN_FIRST for c in run if c != " "]
    cut = len(digits) > TAIXUAN_MAX
    digits = digits[:TAIXUAN_MAX]
    out = []
    if len(digits) % 2 == 0:
        pairs = [digits[i] * 81 + digits[i + 1] for i in range(0, len(digits), 2)]
        if max(pairs) < 256:
            out.append((bytes(pairs), cut))
    out.append((_big_endian(digits, 81), cut))
    return out


# 算筹
_UNIT = {chr(0x1D360 + i): i + 1 for i in range(9)}
_TENS = {chr(0x1D369 + i): i + 1 for i in range(9)}
ROD_ZERO = "\u3007"
ROD_NUMBERS = 8  # numbers apart in a run
ROD_DIGITS = 24  # digits of one number read as a big integer (10 bytes)
ROD_MAX = 4096  # digits of a run read
_ROD = "[\U0001d360-\U0001d371\u3007]"
ROD_RUN = re.compile(f"{_ROD}+(?:[ ,、，]+{_ROD}+)*")
_ROD_RE2 = "[\\x{1D360}-\\x{1D371}\\x{3007}]"
ROD_HINT = f"(?:{_ROD_RE2}+[ ,、，]+){{3}}[\\x{{1D360}}-\\x{{1D371}}]|{_ROD_RE2}{{12}}"
_ROD_TOKEN = re.compile(f"{_ROD}+")


def rod_number(token: str) -> int | None:
    """A counting-rod number, or None when a digit's form does not fit its place (units vertical, tens horizontal,
    alternating from the right; 〇 anywhere) or it has no rod at all."""
    n, rods = 0, 0
    for place, c in enumerate(reversed(token)):
        if c == ROD_ZERO:
            continue
        digit = (_TENS if place % 2 else _UNIT).get(c)
        if digit is None:
            return None
        n += digit * 10 ** place
        rods += 1
    return n if rods else None


def rods(run: str) -> list[tuple[bytes | str, bool]]:
    """A run's readings: its numbers as bytes (all 0-255) or as characters (all code points), or one long number as a
    big-endian integer; bytes or text, and whether it was cut at ROD_MAX digits."""
    tokens = _ROD_TOKEN.findall(run[:ROD_MAX * 2])
    cut = len(run) > ROD_MAX * 2
    numbers = [rod_number(t) for t in tokens]
    if any(n is None for n in numbers):
        return []
    values = [n for n in numbers if n is not None]
    if len(values) >= ROD_NUMBERS:
        if max(values) < 256:
            return [(bytes(values), cut)]
        if max(values) <= 0x10FFFF and not any(0xD800 <= v < 0xE000 for v in values):
            return [("".join(map(chr, values)), cut)]
        return []
    if len(tokens) == 1 and len(tokens[0]) >= ROD_DIGITS:
        n = values[0]
        return [(n.to_bytes((n.bit_length() + 7) // 8, "big"), cut)]
    return []


# 简谱
JIANPU_BYTES = 8
JIANPU_MAX = 4096  # digits of a run read
JIANPU_NAMED = re.compile(r"(?i)简谱|簡譜|jianpu|numbered (?:musical )?notation")
JIANPU_HINT = r"(?i:简谱|簡譜|jianpu|numbered (?:musical )?notation)|[|‖] ?[0-7]{3} [0-7]{3} [0-7]{3}"
_BAR = r"(?:\|\|?|‖|:\||\|:)"
JIANPU_RUN = re.compile(rf"(?:{_BAR}[ \t]*)?[0-7]+(?:[ \t]*(?:{_BAR}[ \t]*)?[0-7]+)+(?:[ \t]*{_BAR})?")
_JIANPU_GROUPED = re.compile(r"[0-7]{3}")


def jianpu_worth(run: str, named: bool) -> bool:
    """JIANPU_BYTES bytes of digits, and either the text names 简谱 or the run is three-digit groups with a bar."""
    digits = sum(c.isdigit() for c in run)
    if digits < 3 * JIANPU_BYTES or digits % 3:
        return False
    return named or (("|" in run or "‖" in run) and all(len(g) == 3 for g in re.findall(r"[0-7]+", run)))


def jianpu(run: str) -> list[tuple[bytes, bool]]:
    """A run's readings as base-7 triples: notes 1-7 (digit plus one) and digits 0-6, as its digits allow."""
    digits = [int(c) for c in run if c.isdigit()]
    cut = len(digits) > JIANPU_MAX
    digits = digits[:JIANPU_MAX - JIANPU_MAX % 3]
    out = []
    for shift in (1, 0):
        if (shift and 0 in digits) or (not shift and 7 in digits):
            continue
        values = [(a - shift) * 49 + (b - shift) * 7 + (c - shift) for a, b, c in zip(*[iter(digits)] * 3, strict=True)]
        if max(values) < 256:
            out.append((bytes(values), cut))
    return out


# 二十八宿
MANSIONS = "角亢氐房心尾箕斗牛女虚危室壁奎娄胃昴毕觜参井鬼柳星张翼轸"
_MANSION = {c: i for i, c in enumerate(MANSIONS)} | {"虛": 10, "婁": 15, "畢": 16, "參": 20, "張": 25, "軫": 27}
_M = MANSIONS + "虛婁畢參張軫"
MANSION_CHARS = 12  # mansions in a run (four numbers)
MANSION_MAX = 3072
_SEP = "·・• "
MANSION_OTHERS = 4  # other characters between two mansions of a run ("·D·A·N·，·")
MANSION_RUN = re.compile(f"[{_M}](?:[{_SEP}]?(?:[^{_M}{_SEP}\\s][{_SEP}]?){{0,{MANSION_OTHERS}}}[{_M}])+")
MANSION_HINT = f"(?:[{_M}][{_SEP}]?){{5}}[{_M}]"


def mansion_worth(run: str) -> bool:
    return sum(c in _MANSION for c in run) >= MANSION_CHARS


def mansions(run: str) -> list[tuple[bytes | str, bool]]:
    """A run's readings: each three mansions a character offset from 一, and (when every number is 0-255) bytes;
    other characters kept, separators dropped; and whether it was cut at MANSION_MAX. None when a stretch of
    mansions is not whole threes."""
    numbers: list[int | str] = []
    stretch: list[int] = []
    for c in [*run[:MANSION_MAX], "\n"]:  # a last other character flushes the last stretch
        if c in _MANSION:
            stretch.append(_MANSION[c])
        elif c not in _SEP:
            if len(stretch) % 3:
                return []
            numbers += [a * 784 + b * 28 + d for a, b, d in zip(*[iter(stretch)] * 3, strict=True)]
            numbers.append(c)
            stretch = []
    numbers.pop()
    cut = len(run) > MANSION_MAX
    out: list[tuple[bytes | str, bool]] = [
        ("".join(chr(0x4E00 + n) if isinstance(n, int) else n for n in numbers), cut)]
    if all(n < 256 for n in numbers if isinstance(n, int)):
        out.append((b"".join(bytes((n,)) if isinstance(n, int) else n.encode() for n in numbers), cut))
    return out
