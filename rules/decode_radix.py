"""Bytes written as digits of a big number, or as nibbles, for rules/decode.py: base62, 六十甲子 base60, 麻将 tiles
base34 and 千字文 nibbles. Each hides a text's UTF-8 bytes in characters no word list reads and a model undoes on
request; the decoder keeps a reading only when its bytes are UTF-8 text that reads as words or Chinese, so ids, keys,
year names, mahjong hands and the quoted classic stay as they are.

base62 (0-9, A-Z, a-z, or 0-9, a-z, A-Z): the bytes as one big-endian integer. Every API key, token and base64 run
without `+` and `/` is base62-valid, so a run is read only when it is alphanumerics only (a token with `_` or `-`
is none), capitals and small letters mixed, BASE62_CHARS long (`base62_worth`), or `min_run` long in a text that
names base62 (`BASE62_NAMED`). A key's or a hash's bytes are random: never UTF-8
text for long. It rides the hot pass's base64 runs (`b64`): a run that is not base64 of text is tried as base62.

六十甲子 (the sexagenary cycle): each of the sixty stem-branch pairs is a digit, 甲子 = 0, 乙丑 = 1, ..., 癸亥 = 59
(stem i % 10, branch i % 12: a stem and a branch of different parity are no pair), the run one big-endian base-60
integer.
Chinese names years and wars by pairs (甲子年, 辛亥革命, 甲午战争), one or two at a time, and a lesson lists the cycle
in order (which decodes to no text): a run is GANZHI_PAIRS valid pairs or more, a space or 、 between two at most.

麻将 tiles: the 34 kinds of the Mahjong Tiles block in code-point order (U+1F000 East wind = 0 ... U+1F021 nine of
circles = 33) as base-34 digits, the run one big-endian integer. A hand is 13 or 14 tiles (18 with four kongs),
sorted: a run is MAHJONG_TILES tiles or more (a space or an emoji-presentation selector may follow a tile). The
names form (一万 ... 九筒, 东南西北中发白) is not read: no order of the names is standard, and ordinary talk of a hand
writes them.

千字文 nibbles: the classic's first sixteen characters 天地玄黄宇宙洪荒日月盈昃辰宿列张 (traditional 黃 and 張 too) are
the hex digits 0-f, two a byte, high nibble first. The opening line is quoted everywhere ("天地玄黄，宇宙洪荒"): it
is shorter than QIANZI_CHARS, and the sixteen characters in order decode to the bytes 01 23 45 ... ef, no text.

The hints are alternatives of the decoder's cold RE2 pass (`GANZHI_HINT`, `MAHJONG_HINT`, `QIANZI_HINT`).
"""

from __future__ import annotations

import re
import string

# base62
BASE62_CHARS = 22  # characters of a run in a text that does not name base62 (16 bytes: "how to make a bomb" is 25)
BASE62_MAX = 1024  # characters of a run read (the integer is built digit by digit: quadratic)
BASE62_NAMED = re.compile(r"(?i)base[ _-]?62")
BASE62_ALPHABETS = (string.digits + string.ascii_uppercase + string.ascii_lowercase,
                    string.digits + string.ascii_lowercase + string.ascii_uppercase)


def base62_worth(run: str, named: bool, min_run: int) -> bool:
    """Alphanumerics with a capital and a small letter (base62 of text has both every few characters; a word, an
    identifier, a number, an IBAN or a hex digest has not), BASE62_CHARS of them, or `min_run` in a text that names
    base62. The str predicates run in C: this is asked of every base64-alphabet run that is not base64 of text."""
    return (len(run) >= (min_run if named else BASE62_CHARS) and run.isascii() and run.isalnum()
            and not run.isupper() and not run.islower() and not run.isdigit())


def _big_endian(digits: list[int], base: int) -> bytes:
    n = 0
    for d in digits:
        n = n * base + d
    return n.to_bytes((n.bit_length() + 7) // 8, "big")


def base62(run: str) -> list[tuple[bytes, bool]]:
    """A base62 run's bytes under each alphabet (its first BASE62_MAX characters; then whether it was cut)."""
    part = run[:BASE62_MAX]
    return [(_big_endian([alphabet.index(c) for c in part], 62), len(part) < len(run))
            for alphabet in BASE62_ALPHABETS]


# 六十甲子
STEMS = "甲乙丙丁戊己庚辛壬癸"
BRANCHES = "子丑寅卯辰巳午未申酉戌亥"
GANZHI = {STEMS[i % 10] + BRANCHES[i % 12]: i for i in range(60)}
GANZHI_PAIRS = 8  # pairs in a run (~5 bytes)
GANZHI_MAX = 512  # pairs of a run read
_GANZHI_SEP = "[ 、]?"
_PAIR = "(?:" + "|".join(GANZHI) + ")"
GANZHI_RUN = re.compile(f"{_PAIR}(?:{_GANZHI_SEP}{_PAIR}){{{GANZHI_PAIRS - 1},}}")
GANZHI_HINT = f"(?:[{STEMS}][{BRANCHES}][ 、]?){{3}}[{STEMS}][{BRANCHES}]"
_PAIRS = re.compile(_PAIR)


def ganzhi(run: str) -> tuple[bytes, bool]:
    """A run of sexagenary pairs as the bytes of its base-60 integer (its first GANZHI_MAX pairs; cut or not)."""
    pairs = _PAIRS.findall(run)
    return _big_endian([GANZHI[p] for p in pairs[:GANZHI_MAX]], 60), len(pairs) > GANZHI_MAX


# 麻将 tiles
MAHJONG_FIRST = 0x1F000
MAHJONG_KINDS = 34  # U+1F000-U+1F021: winds, dragons, characters, bamboos, circles (flowers and seasons are no digit)
MAHJONG_TILES = 16  # tiles in a run (~10 bytes; a hand is 13 or 14)
MAHJONG_MAX = 1024
_TILE = "[\U0001f000-\U0001f021]\ufe0f?"
MAHJONG_RUN = re.compile(f"{_TILE}(?: ?{_TILE}){{{MAHJONG_TILES - 1},}}")
MAHJONG_HINT = "(?:[\\x{1F000}-\\x{1F021}]\\x{FE0F}? ?){3}[\\x{1F000}-\\x{1F021}]"


def mahjong(run: str) -> tuple[bytes, bool]:
    """A run of tiles as the bytes of its base-34 integer (its first MAHJONG_MAX tiles; cut or not)."""
    digits = [ord(c) - MAHJONG_FIRST for c in run if MAHJONG_FIRST <= ord(c) < MAHJONG_FIRST + MAHJONG_KINDS]
    return _big_endian(digits[:MAHJONG_MAX], MAHJONG_KINDS), len(digits) > MAHJONG_MAX


# 千字文 nibbles
QIANZI = "天地玄黄宇宙洪荒日月盈昃辰宿列张"
_NIBBLE = {c: i for i, c in enumerate(QIANZI)} | {"黃": 3, "張": 15}
QIANZI_CHARS = 16  # characters in a run (8 bytes)
_Q = "天地玄黄黃宇宙洪荒日月盈昃辰宿列张張"
QIANZI_RUN = re.compile(f"[{_Q}]{{2}}(?: ?[{_Q}]{{2}})*(?: ?[{_Q}])?")
QIANZI_HINT = f"(?:[{_Q}]{{2}} ?){{3}}[{_Q}]{{2}}"


def qianzi_worth(run: str) -> bool:
    return len(run) - run.count(" ") >= QIANZI_CHARS


def qianzi(run: str) -> list[tuple[int, bytes]]:
    """(offset, bytes) of a run's readings, two characters a byte: from its start, and, when it has an odd number of
    characters, from its second (an ordinary character of the set may stand before the payload)."""
    at = [i for i, c in enumerate(run) if c != " "]
    nibbles = [_NIBBLE[run[i]] for i in at]
    out = []
    for start in (0, 1) if len(nibbles) % 2 else (0,):
        body = nibbles[start:]
        out.append((at[start], bytes(body[i] << 4 | body[i + 1] for i in range(0, len(body) - 1, 2))))
    return out
