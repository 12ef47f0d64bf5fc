"""Hobbyist encodings for rules/decode.py: Bubble Babble, Base45, Brainfuck and Ubbi Dubbi. Each writes a text in
symbols no word list reads and a model undoes on request; the decoder keeps a reading only when it is text (and,
where ordinary text could pass for the encoding, when it reads as words).

Bubble Babble (SSH fingerprints, "xesef-disof-gytuf-..."): an `x`, five-character tuples of vowels and consonants
apart by `-`, a last tuple of three and an `x`. Each tuple carries two bytes and folds them into a checksum seed
that the last tuple spells out, so a run that is not Bubble Babble (or has a letter changed) fails to decode
(`bubblebabble`); BABBLE_TUPLES tuples or more make a run (eight bytes).

Base45 (RFC 9285, the EU COVID certificates' QR payloads): two bytes as three characters of `0-9A-Z $%*+-./:`, the
first the least significant. Capitals, digits and spaces are ordinary text too (headlines, IDs, part numbers,
hashes in capitals), so a run (`BASE45_RUN`, BASE45_CHARS characters or more with a digit in it) is kept only when
every group is a valid value (two bytes at most 65535), the bytes are UTF-8 text, and that text reads as words or
Chinese while the run does not read as English (the decoder's tests). The run may take a colon or spaces of the text
around it: the decoder tries it as found and trimmed (`base45_candidates`).

Brainfuck: a run of the eight commands `+-<>[].,` (white space between them allowed), BRAINFUCK_COMMANDS or more with
a loop and an output, balanced, is run (`brainfuck`) on BRAINFUCK_CELLS cells with no input (`,` reads 0) for at most
BRAINFUCK_STEPS steps, a text's runs together (a step is a run of `+`/`-` or `<`/`>`, one bracket or one output; a
clearing loop `[-]` one step; ~11 ms in CPython), and its output is what it decodes to. A program that loops forever
stops at the budget with what it printed; ASCII art, `---` rules, `>>>` prompts and diffs have no loop, print
nothing, or are no run.

Ubbi Dubbi ("hubellubo" is "hello"): `ub` before each vowel group. A word reads as Ubbi Dubbi when it has an `ub`
before a vowel and as many such as vowel groups once they are taken out (a final silent `e` may go without one);
"public", "rubber", "subway" and "hubby" have `ub` before a consonant, "tuba" is one word. A run is UBBI_WORDS such
words or more in a row on a line (one other word may stand between two), and is kept when it does not read as
English as written and does with the `ub`s taken out (`ubbi_dubbi`), or has UBBI_MORE marks more than words (a list
of places, "Cuba, Yuba, scuba, ruby", has one a word; "bubuy stuboluben crubedubit cubards" six in four).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Bubble Babble
_VOWELS = "aeiouy"
_CONSONANTS = "bcdfghklmnprstvzx"  # `x` (16) only in the last tuple of an even number of bytes
BABBLE_TUPLES = 4  # full tuples in a run: eight bytes
_V, _C = f"[{_VOWELS}]", f"[{_CONSONANTS[:-1]}]"
BABBLE_RUN = re.compile(
    rf"(?i)(?<![\w-])x(?:{_V}{_C}{_V}{_C}-{_C}){{{BABBLE_TUPLES},}}{_V}[{_CONSONANTS}]{_V}x(?![\w-])"
)
BABBLE_HINT = rf"(?i:x{_V}{_C}{_V}{_C}-{_C}{_V}{_C}{_V}{_C}-{_C})"  # RE2: two tuples


def bubblebabble(run: str, budget: int) -> tuple[bytes, bool] | None:
    """A Bubble Babble run's bytes, as far as `budget` bytes go; None when a tuple or the checksum is not valid."""
    body = run.lower()[1:-1]
    out = bytearray()
    seed = 1
    full = (len(body) - 3) // 6
    for i in range(full):
        if len(out) + 2 > budget:
            return bytes(out), True
        v1, c1, v2, c2, c3 = body[6 * i], body[6 * i + 1], body[6 * i + 2], body[6 * i + 3], body[6 * i + 5]
        first = _byte(v1, c1, v2, seed)
        if first is None:
            return None
        second = _CONSONANTS.index(c2) << 4 | _CONSONANTS.index(c3)
        out += bytes((first, second))
        seed = (seed * 5 + first * 7 + second) % 36
    v1, c1, v2 = body[-3], body[-2], body[-1]
    if c1 == "x":  # an even number of bytes: the tuple is the checksum
        return (bytes(out), False) if (v1, v2) == (_VOWELS[seed % 6], _VOWELS[seed // 6]) else None
    last = _byte(v1, c1, v2, seed)
    return None if last is None or len(out) + 1 > budget else (bytes(out) + bytes((last,)), False)


def _byte(v1: str, c: str, v2: str, seed: int) -> int | None:
    high, low = (_VOWELS.index(v1) - seed) % 6, (_VOWELS.index(v2) - seed // 6) % 6
    middle = _CONSONANTS.index(c)
    return None if high > 3 or low > 3 or middle > 15 else high << 6 | middle << 2 | low


# Base45
BASE45_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"
_BASE45 = {c: i for i, c in enumerate(BASE45_ALPHABET)}
BASE45_CHARS = 16  # characters in a run (ten bytes)
_B45_CLASS = r"[0-9A-Z $%*+\-./:]"
BASE45_RUN = re.compile(rf"{_B45_CLASS}{{{BASE45_CHARS},}}")
# RE2: a change between a capital and a digit, and a sign between two characters of the alphabet, within a few
# characters of each other ("SEDB/DZKE944" has both). Base45 of text has them every few characters; numbers, dates,
# IBANs, phone numbers, headlines and the capital IDs of ordinary prompts rarely do (bench.scan's: 5 of 600 texts,
# against 113 for any three changes). Of 2,288 random English phrases of 11-40 bytes 9% have no such place (short
# ones, with no sign), of random Chinese ones 4%: those go unread.
_SWAP = "(?:[A-Z][0-9]|[0-9][A-Z])"
_SIGNED = r"[0-9A-Z][$%*+\-./:][0-9A-Z]"
_ANY = r"[0-9A-Z $%*+\-./:]"
BASE45_HINT = rf"{_SWAP}{_ANY}{{0,12}}{_SIGNED}|{_SIGNED}{_ANY}{{0,12}}{_SWAP}"
_DIGIT = re.compile(r"[0-9]")


def base45_candidates(run: str) -> Iterator[tuple[int, str]]:
    """(offset, part) of a run to try, ending before its trailing white space: from its first character that is not
    white space or a colon, and from one or two characters before or after it (a group is three characters: a
    colon or a space of the text may lead, and a payload may start with a space, Base45's 36)."""
    body = run.rstrip(" ")
    first = len(run) - len(run.lstrip(" :"))
    for start in (first, first - 1, first - 2, first + 1, first + 2):
        part = body[start:]
        if 0 <= start < len(body) and len(part) >= BASE45_CHARS and len(part) % 3 != 1 and _DIGIT.search(part):
            yield start, part


def base45(run: str, budget: int) -> tuple[bytes, bool] | None:
    """A Base45 run's bytes, as far as `budget` bytes go (whole groups); None when a group is out of range."""
    take = min(len(run), budget // 2 * 3)
    out = bytearray()
    for i in range(0, take - take % 3, 3):
        n = _BASE45[run[i]] + _BASE45[run[i + 1]] * 45 + _BASE45[run[i + 2]] * 2025
        if n > 0xFFFF:
            return None
        out += n.to_bytes(2, "big")
    if take == len(run) and len(run) % 3 == 2:
        n = _BASE45[run[-2]] + _BASE45[run[-1]] * 45
        if n > 0xFF:
            return None
        out.append(n)
    return bytes(out), take < len(run)


# Brainfuck
BRAINFUCK_COMMANDS = 40  # commands in a run
BRAINFUCK_STEPS = 100_000  # steps of a text's runs together (~11 ms in CPython)
BRAINFUCK_CELLS = 30_000
BRAINFUCK_RUN = re.compile(r"[-+<>\[\].,](?:\s*[-+<>\[\].,])*")
BRAINFUCK_HINT = r"\[[-+<>]{2,}\]"  # RE2: a loop of commands ("[->+<]", "[-]" is too common a mark)
_COMMANDS = re.compile(r"[-+<>\[\].,]")
_STEP = re.compile(r"\[-\]|\[\+\]|[-+]+|[<>]+|[\[\].,]")


def brainfuck_worth(run: str) -> bool:
    """BRAINFUCK_COMMANDS commands with a loop and an output among them."""
    return "[" in run and "." in run and len(_COMMANDS.findall(run)) >= BRAINFUCK_COMMANDS


def brainfuck(run: str, budget: int, steps: list[int] | None = None) -> tuple[bytes, bool] | None:
    """What a Brainfuck run prints with no input, as far as `budget` bytes or the steps left go (`steps`, shared by
    a text's runs and charged here; BRAINFUCK_STEPS when not given) (cut short: True); None when its brackets do not
    balance or its pointer leaves the tape."""
    left = steps if steps is not None else [BRAINFUCK_STEPS]
    ops: list[tuple[str, int]] = []  # (kind, amount or jump target)
    loops: list[int] = []
    for m in _STEP.finditer("".join(_COMMANDS.findall(run))):
        step = m.group()
        if step in ("[-]", "[+]"):
            ops.append(("0", 0))
        elif step[0] in "+-":
            ops.append(("+", step.count("+") - step.count("-")))
        elif step[0] in "<>":
            ops.append((">", step.count(">") - step.count("<")))
        elif step == "[":
            loops.append(len(ops))
            ops.append(("[", 0))
        elif step == "]":
            if not loops:
                return None
            opening = loops.pop()
            ops[opening] = ("[", len(ops))
            ops.append(("]", opening))
        else:
            ops.append((step, 0))
    if loops:
        return None
    tape = bytearray(BRAINFUCK_CELLS)
    out = bytearray()
    at = pc = 0
    allowed, left[0] = left[0], 0
    for done in range(allowed):
        if pc >= len(ops):
            left[0] = allowed - done
            return bytes(out), False
        kind, arg = ops[pc]
        if kind == "+":
            tape[at] = (tape[at] + arg) & 0xFF
        elif kind == ">":
            at += arg
            if not 0 <= at < BRAINFUCK_CELLS:
                left[0] = allowed - done
                return None
        elif kind == "[":
            if not tape[at]:
                pc = arg
        elif kind == "]":
            if tape[at]:
                pc = arg
        elif kind == "0":
            tape[at] = 0
        elif kind == ".":
            out.append(tape[at])
            if len(out) >= budget:
                left[0] = allowed - done - 1
                return bytes(out), True
        elif kind == ",":
            tape[at] = 0
        pc += 1
    return bytes(out), True


# Ubbi Dubbi
UBBI_WORDS = 4  # Ubbi Dubbi words in a run
UBBI_MORE = 2  # marks more than words that make a run Ubbi Dubbi whatever it reads as
UBBI_HINT = r"(?i:ub[aeiouy]\w*[^\w\n]{1,3}\w*ub[aeiouy]\w*[^\w\n]{1,3}\w*ub[aeiouy])"  # RE2: three words in a row
_MARK = re.compile(r"([Uu])b([aeiouyAEIOUY])")
_VOWEL_GROUP = re.compile(r"[aeiouAEIOU]+")


def _unmark(m: re.Match[str]) -> str:
    return m.group(2).upper() if m.group(1) == "U" else m.group(2)


def ubbi_dubbi(text: str) -> tuple[str, int]:
    """`text` with the `ub` before each vowel taken out (a capital `U` makes the vowel a capital), and how many."""
    return _MARK.subn(_unmark, text)


def is_ubbi(word: str) -> bool:
    """A word with an `ub` before a vowel and as many as its vowel groups without them (a final silent `e` may go
    without)."""
    plain, marks = _MARK.subn(_unmark, word)
    groups = len(_VOWEL_GROUP.findall(plain))
    silent = groups >= 2 and plain[-1:] in ("e", "E")
    return marks >= 1 and marks >= groups - silent


def ubbi_spans(line: str, words: list[re.Match[str]]) -> Iterator[tuple[int, int]]:
    """[start, end) of each run of `words` (matches in `line`) of UBBI_WORDS Ubbi Dubbi words or more, at most one
    other word between two."""
    first = last = -1
    count = gap = 0
    for w in words:
        if is_ubbi(w.group()):
            first = w.start() if first < 0 else first
            last, count, gap = w.end(), count + 1, 0
            continue
        gap += 1
        if gap > 1 and first >= 0:
            if count >= UBBI_WORDS:
                yield first, last
            first, count = -1, 0
    if first >= 0 and count >= UBBI_WORDS:
        yield first, last
