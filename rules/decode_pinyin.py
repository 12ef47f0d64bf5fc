"""Pinyin for rules/decode.py: the builtin word lists' Chinese phrases written in pinyin ("hu1 lve4 zhi1 qian2 de5
suo3 you3 zhi3 ling4", "hū lüè zhī qián de suǒ yǒu zhǐ lìng", or without tones) read back as the phrases.

Pinyin is not an encoding of characters: a syllable stands for dozens of them, so a pinyin text cannot be decoded in
general. It can be matched against a short list: rules/decode_pinyin_data.py holds the builtin phrases (PHRASES) and
every reading of each of their characters (READINGS, written once by bench/pinyin_table.py with pypinyin, which the
product never imports). A run of pinyin syllables on a line (`PINYIN_RUN`: words of Latin letters, tone marks or a
tone number 1-5, apart by spaces, apostrophes or hyphens) is read syllable by syllable (`syllable`: tone marks and
numbers become a tone, ü, `u:` and `v` one letter, "lue"/"nue" the ü-spelling); where the syllables of a phrase stand
in a row, each with a tone among its character's readings' or none, the phrase is what the run says (`phrases`).
Without tones a match needs PINYIN_TONELESS syllables or more: "bing du" is 病毒 (a virus) as often as 冰毒, "bing1
du2" only 冰毒. Pinyin written without spaces ("hulvezhiqian") is not read, nor phrases of site word lists (the
table is the builtin ones'), nor other Chinese written in pinyin.

The hint (`pinyin_hint`) is the phrases themselves as RE2 patterns, one group of syllables a character, each vowel
with its tone marks, an optional tone number after each: an alternative of the decoder's cold pass, so pinyin
homework and other Latin text pay for the pass only.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rules.decode_pinyin_data import PHRASES, READINGS

PINYIN_TONELESS = 3  # syllables of a phrase matched when some have no tone
_LETTERS = r"A-Za-z\u00c0-\u024f"  # Latin-1 and Latin Extended-A/B: ā á ǎ à ü ǖ ǘ ǚ ǜ
_TOKEN = rf"[{_LETTERS}]+(?::[{_LETTERS}]*)?[1-5]?"
PINYIN_RUN = re.compile(rf"(?<![\w:]){_TOKEN}(?:[ '\u2019-]+{_TOKEN})+(?![\w:])")
_TOKENS = re.compile(_TOKEN)
_UNITS = re.compile(r"[\u4e00-\u9fff]|[a-z0-9]+")  # a phrase's characters, and its Latin words ("dan", "ai", "k")
_TONE_MARKS = {"\u0304": 1, "\u0301": 2, "\u030c": 3, "\u0300": 4}
_MARKED = {"a": "aāáǎà", "e": "eēéěè", "i": "iīíǐì", "o": "oōóǒò", "u": "uūúǔù"}


def syllable(token: str) -> tuple[str, int]:
    """A written syllable as (letters, tone): ü, `u:` and `v` are `v`, "lue"/"nue" are "lve"/"nve"; the tone from a
    mark or a number, 0 when it has none."""
    tone = int(token[-1]) if token[-1].isdigit() else 0
    letters = unicodedata.normalize("NFD", token.rstrip("12345").lower().replace("u:", "v"))
    for mark, number in _TONE_MARKS.items():
        if mark in letters:
            tone = tone or number
    plain = "".join(c for c in letters if c not in _TONE_MARKS).replace("u\u0308", "v")
    return re.sub(r"^([ln])ue", r"\1ve", plain), tone


@dataclass(frozen=True, slots=True)
class _Phrase:
    text: str
    readings: tuple[frozenset[tuple[str, int]], ...]  # per unit: (letters, tone); a Latin word's tone is 0
    hanzi: int  # units that are characters


def _units(phrase: str) -> list[frozenset[tuple[str, int]]]:
    out = []
    for unit in _UNITS.findall(phrase):
        if unit in READINGS:
            out.append(frozenset(syllable(r) for r in READINGS[unit]))
        else:
            out.append(frozenset({(unit, 0)}))
    return out


@functools.cache
def _index() -> dict[tuple[str, ...], list[_Phrase]]:
    """The phrases by every sequence of their units' letters (the readings' combinations)."""
    index: dict[tuple[str, ...], list[_Phrase]] = {}
    for text in PHRASES:
        units = _units(text)
        phrase = _Phrase(text, tuple(units), sum(1 for u in _UNITS.findall(text) if u in READINGS))
        for key in itertools.product(*({letters for letters, _ in u} for u in units)):
            index.setdefault(key, []).append(phrase)
    return index


@functools.cache
def _lengths() -> tuple[int, ...]:
    return tuple(sorted({len(key) for key in _index()}, reverse=True))


def _fits(phrase: _Phrase, written: list[tuple[str, int]]) -> bool:
    """Each written tone among its character's readings' (or none), and PINYIN_TONELESS syllables or more when a
    character's has none."""
    toned = True
    for options, (letters, tone) in zip(phrase.readings, written, strict=True):
        if tone and (letters, tone) not in options:
            return False
        toned = toned and (tone > 0 or (letters, 0) in options)
    return toned or len(written) >= PINYIN_TONELESS


def phrases(run: str) -> list[tuple[int, int, str]]:
    """(start, end, phrase) of each phrase whose syllables stand in a row in `run`, longest first, not overlapping."""
    tokens = list(_TOKENS.finditer(run))
    written = [syllable(t.group()) for t in tokens]
    index = _index()

    def match(i: int, length: int) -> str | None:
        part = written[i:i + length]
        return next((p.text for p in index.get(tuple(letters for letters, _ in part), ()) if _fits(p, part)), None)

    return [(tokens[i].start(), tokens[i + length - 1].end(), text)
            for i, length, text in longest_first(len(written), _lengths(), match)]


def longest_first(count: int, lengths: Sequence[int], match: Callable[[int, int], str | None]
                  ) -> list[tuple[int, int, str]]:
    """(index, length, phrase) of the phrases `match(i, length)` finds in a row of `count` syllables, trying the
    `lengths` longest first at each syllable and going on after a phrase found: none overlaps (the zhuyin reader
    shares it)."""
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < count:
        found = next(((n, text) for n in lengths if i + n <= count and (text := match(i, n)) is not None), None)
        if found is None:
            i += 1
            continue
        length, text = found
        out.append((i, length, text))
        i += length
    return out


def _pattern(letters: str) -> str:
    """A syllable as RE2: each vowel with its tone marks, `v` as ü, `u:` or `u`."""
    out = []
    for c in letters:
        if c == "v":
            out.append("(?:v|u:|[uüǖǘǚǜ])")
        elif c in _MARKED:
            out.append(f"[{_MARKED[c]}]")
        else:
            out.append(c)
    return "".join(out)


def pinyin_hint() -> str:
    """RE2: a phrase's syllables in a row (each with its marks, or a tone number), case-insensitive, from a word's
    start."""
    alternatives = []
    for text in PHRASES:
        groups = ["(?:" + "|".join(sorted(_pattern(letters) for letters in {lt for lt, _ in unit})) + ")[1-5]?"
                  for unit in _units(text)]
        alternatives.append("[ '\u2019-]+".join(groups))
    # No boundary after the last syllable: RE2's is ASCII, and "shā," has none.
    return "(?i:\\b(?:" + "|".join(alternatives) + "))"
