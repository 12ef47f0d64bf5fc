"""Text hidden in emoji and their modifiers for rules/decode.py: regional-indicator letters, bytes in variation
selectors and base100 ("base💯"). Each is looked for only in a text holding its UTF-8 lead byte (`FOUR_BYTES` and
then `EMOJI_LEAD`, `PLANE_14`), so a text without emoji pays a memchr or two.

Regional indicators (U+1F1E6-U+1F1FF) are the letters A-Z that pairs of make flags: 🇬🇧 is G and B. Written one by
one ("🇮 🇬 🇳 🇴 🇷 🇪", or contiguous, a space between words) they spell words that no word list reads. A run is
REGIONAL_LETTERS letters or more with at most a few separators between two (`REGIONAL_RUN`); the separator that
stands between most letters is the one inside words, any other is a word break (`regional`): letters spaced by one
space and words by three, or by a zero-width space and a space, or contiguous and a space, all read. A row of flags
("🇺🇸🇬🇧🇫🇷", or spaced) is letters in aligned pairs that are all regions (`FLAGS`): ordinary text, not read.

Variation selectors (U+FE00-U+FE0F and U+E0100-U+E01EF) render as nothing; 256 of them can carry a byte each after
one visible character ("emoji smuggling": U+FE00+b for b < 16, U+E0100+b-16 for the others, the bytes UTF-8). An
emoji carries one (U+FE0F, emoji presentation), never a run: VARIATION_BYTES in a row are read (`variation_bytes`).

base100 writes each byte b as the emoji U+1F3F7+b (its UTF-8 is F0 9F, then (b+55)//64+0x8F and (b+55)%64+0x80): a
run of BASE100_BYTES such emoji in a row is read back (`base100`). The range holds common emoji (👍 👀 💯 🐶), so
a decoded run is kept only when it reads as words (`reads_as_words`, or the decoder's English or Chinese tests): a
row of thumbs-up is "VVVVVVVV", a row of animals punctuation and capitals.
"""

from __future__ import annotations

import re
from collections import Counter

# Leads, as ints: `0xF0 in data` is a memchr (~0.03 us per KB), a two-byte `in` a string search (~1.2 us per KB).
FOUR_BYTES = 0xF0  # the lead byte of U+10000-U+3FFFF: emoji, and rare ideographs
EMOJI_LEAD = b"\xf0\x9f"  # the first two UTF-8 bytes of U+1F000-U+1FFFF: regional indicators and base100
# The lead byte of U+C0000-U+FFFFF: the selectors U+E0100-U+E01EF (every byte 16-255: a run of eight bytes of text
# has one), and tag characters.
PLANE_14 = 0xF3

# Regional indicators
REGIONAL_LETTERS = 6  # letters in a run ("ignore" is six; a flag two)
REGIONAL_GAP = 4  # separator characters between two letters
_RI = "\U0001f1e6-\U0001f1ff"
_GAP_CHARS = " \t\u00a0\u200b-\u200d\u2060\ufeff/|·.,!?_-"
REGIONAL_RUN = re.compile(f"[{_RI}](?:[{_GAP_CHARS}]{{0,{REGIONAL_GAP}}}[{_RI}])+")
_LETTER_OR_GAP = re.compile(f"[{_RI}]|[^{_RI}]+")
# The regions that have a flag (ISO 3166-1 and Unicode's extra ones: AC, CP, DG, EA, EU, IC, TA, UN, XK).
_FLAG_LIST = """
AC AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
CA CC CD CF CG CH CI CK CL CM CN CO CP CR CU CV CW CX CY CZ DE DG DJ DK DM DO DZ EA EC EE EG EH ER ES ET EU FI FJ FK
FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU IC ID IE IL IM IN IO IQ IR IS IT
JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP
MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE
RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TA TC TD TF TG TH TJ TK TL TM TN TO TR TT
TV TW TZ UA UG UM UN US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW
"""
FLAGS = frozenset(_FLAG_LIST.split())


def _letter(c: str) -> str:
    return chr(ord(c) - 0x1F1E6 + ord("a"))


def regional(run: str) -> str | None:
    """A run of regional indicators as lower-case words (the commonest separator between two letters is inside a
    word, any other a word break); None for a row of flags: contiguous letters in aligned pairs that are all
    regions."""
    parts = _LETTER_OR_GAP.findall(run)
    gaps = Counter(parts[i + 1] if not _is_ri(parts[i + 1]) else "" for i in range(len(parts) - 1)
                   if _is_ri(parts[i]))
    inside = gaps.most_common(1)[0][0] if gaps else ""
    groups: list[list[str]] = [[]]  # contiguous letters
    words: list[list[str]] = [[]]
    for part in parts:
        if _is_ri(part):
            groups[-1].append(part)
            words[-1].append(_letter(part))
            continue
        groups.append([])
        if part != inside:
            words.append([])
    flags = all(len(g) % 2 == 0 and all(_pair(g[i], g[i + 1]) in FLAGS for i in range(0, len(g), 2))
                for g in groups if g)
    return None if flags else " ".join("".join(w) for w in words if w)


def _is_ri(part: str) -> bool:
    return len(part) == 1 and "\U0001f1e6" <= part <= "\U0001f1ff"


def _pair(a: str, b: str) -> str:
    return (_letter(a) + _letter(b)).upper()


# Variation selectors
VARIATION_BYTES = 8  # selectors in a run
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
VARIATION_RUN = re.compile(f"[^{_SELECTORS}\\s]?[{_SELECTORS}]{{{VARIATION_BYTES},}}")  # with the visible carrier


def variation_bytes(run: str) -> bytes:
    """The bytes a run of variation selectors carries (its carrier skipped): U+FE00-U+FE0F are 0-15,
    U+E0100-U+E01EF 16-255."""
    return bytes(ord(c) - 0xFE00 if ord(c) < 0xFE10 else ord(c) - 0xE0100 + 16 for c in run
                 if "\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef")


# base100
BASE100_BYTES = 8  # emoji in a run
BASE100_FIRST = 0x1F3F7  # byte 0
BASE100_RUN = re.compile(f"[\U0001f3f7-\U0001f4f6]{{{BASE100_BYTES},}}")


def base100(run: str) -> bytes:
    """A run of base100 emoji as its bytes."""
    return bytes(ord(c) - BASE100_FIRST for c in run)


WORD_SHARE = 0.7  # share of a text's characters but spaces that its words of two letters or more hold
_WORDS = re.compile(r"[^\W\d_]{2,}")


def reads_as_words(text: str) -> bool:
    """Words and spaces, mostly: two words of three letters or more, and WORD_SHARE of the characters but white space
    in words of two letters or more (a row of emoji decodes to one repeated capital, or to punctuation and digits)."""
    words = _WORDS.findall(text)
    letters = sum(map(len, words))
    solid = len(text) - sum(c.isspace() for c in text)
    return sum(len(w) >= 3 for w in words) >= 2 and letters >= WORD_SHARE * solid
