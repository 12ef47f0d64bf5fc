"""Zhuyin (注音, bopomofo) for rules/decode.py: the builtin word lists' Chinese phrases written in zhuyin ("ㄏㄨ
ㄌㄩㄝˋ ㄓ ㄑㄧㄢˊ ...") read back as the phrases, as rules/decode_pinyin.py reads them in pinyin.

Zhuyin is pinyin's syllables in another script, so the pinyin table (rules/decode_pinyin_data.py) serves both: each
reading is written in zhuyin by rule (`zhuyin`: initial, medial and final; zhi/chi/shi/ri/zi/ci/si are their initial
alone; y-, w- and j/q/x + u are the medials ㄧ ㄨ ㄩ) and no other table or dependency is needed. A run
(`ZHUYIN_RUN`: zhuyin letters and tone marks, spaces between syllables or none) is cut into syllables at spaces, tone
marks (ˊ ˇ ˋ after one, ˙ before one) and, where tone-1 syllables stand unmarked side by side, at the longest
syllable of the table (`syllables`); where a phrase's syllables stand in a row, each with its tone among its
character's readings' (an unmarked one is tone 1), the phrase is what the run says. Zhuyin written without marks
matches a phrase of ZHUYIN_TONELESS syllables or more, as toneless pinyin does. A child's homework in zhuyin says
ordinary words, which are no phrase. The hint is two zhuyin letters in a row, an alternative of the cold pass.
"""

from __future__ import annotations

import functools
import re

from rules.decode_pinyin import longest_first, syllable
from rules.decode_pinyin_data import PHRASES, READINGS

ZHUYIN_TONELESS = 3  # syllables of a phrase matched when none has a mark
_INITIALS = {"zh": "ㄓ", "ch": "ㄔ", "sh": "ㄕ", "b": "ㄅ", "p": "ㄆ", "m": "ㄇ", "f": "ㄈ", "d": "ㄉ", "t": "ㄊ",
             "n": "ㄋ", "l": "ㄌ", "g": "ㄍ", "k": "ㄎ", "h": "ㄏ", "j": "ㄐ", "q": "ㄑ", "x": "ㄒ", "r": "ㄖ",
             "z": "ㄗ", "c": "ㄘ", "s": "ㄙ"}
_FINALS = {"a": "ㄚ", "o": "ㄛ", "e": "ㄜ", "ai": "ㄞ", "ei": "ㄟ", "ao": "ㄠ", "ou": "ㄡ", "an": "ㄢ", "en": "ㄣ",
           "ang": "ㄤ", "eng": "ㄥ", "er": "ㄦ", "i": "ㄧ", "u": "ㄨ", "v": "ㄩ", "ia": "ㄧㄚ", "ie": "ㄧㄝ",
           "iao": "ㄧㄠ", "iu": "ㄧㄡ", "ian": "ㄧㄢ", "in": "ㄧㄣ", "iang": "ㄧㄤ", "ing": "ㄧㄥ", "iong": "ㄩㄥ",
           "ua": "ㄨㄚ", "uo": "ㄨㄛ", "uai": "ㄨㄞ", "ui": "ㄨㄟ", "uan": "ㄨㄢ", "un": "ㄨㄣ", "uang": "ㄨㄤ",
           "ong": "ㄨㄥ", "ve": "ㄩㄝ", "van": "ㄩㄢ", "vn": "ㄩㄣ"}
_Y_W = {"yi": "i", "ya": "ia", "ye": "ie", "yao": "iao", "you": "iu", "yan": "ian", "yin": "in", "yang": "iang",
        "ying": "ing", "yong": "iong", "yu": "v", "yue": "ve", "yuan": "van", "yun": "vn", "wu": "u", "wa": "ua",
        "wo": "uo", "wai": "uai", "wei": "ui", "wan": "uan", "wen": "un", "wang": "uang", "weng": "ong"}
_TONES = {"ˊ": 2, "ˇ": 3, "ˋ": 4, "˙": 5, "ˉ": 1}
_LETTER = "\u3105-\u312f"
_MARK = "ˉˊˇˋ˙"
ZHUYIN_RUN = re.compile(f"[{_LETTER}˙][{_LETTER}{_MARK}]*(?:[ \u3000]+[{_LETTER}˙][{_LETTER}{_MARK}]*)+"
                        f"|[{_LETTER}˙][{_LETTER}{_MARK}]{{3,}}")
ZHUYIN_HINT = "[\\x{3105}-\\x{312F}][\\x{3105}-\\x{312F}\\x{02C7}\\x{02CA}\\x{02CB}\\x{02D9}]"


def zhuyin(letters: str) -> str | None:
    """A pinyin syllable's letters (rules/decode_pinyin.py `syllable`: ü is `v`) in zhuyin; None for one that has
    none (ḿ, ng)."""
    letters = _Y_W.get(letters, letters)
    initial = next((i for i in _INITIALS if letters.startswith(i)), "")
    final = letters[len(initial):]
    if initial in ("j", "q", "x") and final.startswith("u"):
        final = "v" + final[1:]
    if initial and final == "i" and initial in ("zh", "ch", "sh", "r", "z", "c", "s"):
        return _INITIALS[initial]
    if final not in _FINALS:
        return None
    return _INITIALS.get(initial, "") + _FINALS[final]


@functools.cache
def _table() -> tuple[dict[tuple[str, ...], list[tuple[str, tuple[frozenset[int], ...]]]], frozenset[str], int]:
    """The phrases made only of ideographs by every sequence of their characters' zhuyin (with each character's
    tones), the syllables of the table, and the longest syllable's length."""
    readings: dict[str, dict[str, set[int]]] = {}
    for char, pinyins in READINGS.items():
        for written in pinyins:
            letters, tone = syllable(written)
            written_z = zhuyin(letters)
            if written_z is not None:
                readings.setdefault(char, {}).setdefault(written_z, set()).add(tone)
    index: dict[tuple[str, ...], list[tuple[str, tuple[frozenset[int], ...]]]] = {}
    for phrase in PHRASES:
        if not all(c in readings for c in phrase):
            continue  # Latin words ("k粉", "你现在是dan") are not written in zhuyin
        keys: list[tuple[tuple[str, ...], tuple[frozenset[int], ...]]] = [((), ())]
        for c in phrase:
            keys = [((*k, z), (*t, frozenset(tones))) for k, t in keys for z, tones in readings[c].items()]
        for key, tones in keys:
            index.setdefault(key, []).append((phrase, tones))
    spelled = frozenset(z for by in readings.values() for z in by)
    return index, spelled, max(map(len, spelled))


def syllables(run: str) -> list[tuple[int, int, str, int]]:
    """(start, end, zhuyin, tone) of a run's syllables: cut at spaces and marks, and unmarked letters side by side at
    the longest syllable of the table (tone 0: unmarked)."""
    _, spelled, longest = _table()
    out: list[tuple[int, int, str, int]] = []
    for m in re.finditer(f"˙?[{_LETTER}]+[ˉˊˇˋ]?", run):
        chunk, start = m.group(), m.start()
        tone = 5 if chunk[0] == "˙" else _TONES.get(chunk[-1], 0)
        body = chunk.strip(_MARK)
        at = start + (chunk[0] == "˙")
        while body:
            size = next((n for n in range(min(longest, len(body)), 0, -1) if body[:n] in spelled), len(body))
            last = size == len(body)
            out.append((at, at + size + (last and chunk[-1] in "ˉˊˇˋ"), body[:size], tone if last else 0))
            at, body = at + size, body[size:]
    return out


def phrases(run: str) -> list[tuple[int, int, str]]:
    """(start, end, phrase) of each builtin phrase whose syllables stand in a row in `run`, longest first."""
    index, _, _ = _table()
    written = syllables(run)
    lengths = sorted({len(k) for k in index}, reverse=True)

    def match(i: int, length: int) -> str | None:
        part = written[i:i + length]
        marked = [t for _, _, _, t in part]
        for phrase, tones in index.get(tuple(z for _, _, z, _ in part), ()):
            if any(marked):  # marked: every tone among its character's (unmarked is tone 1)
                if all((t or 1) in options for t, options in zip(marked, tones, strict=True)):
                    return phrase
            elif length >= ZHUYIN_TONELESS:
                return phrase
        return None

    return [(written[i][0], written[i + length - 1][1], phrase)
            for i, length, phrase in longest_first(len(written), lengths, match)]
