"""小鹤双拼 (Xiaohe shuangpin) for rules/decode.py: the builtin word lists' Chinese phrases typed two keys a syllable
("hult vi qm" is hu lüe zhi qian) read back as pinyin, then as the phrases through rules/decode_pinyin.py.

Shuangpin is pinyin typed short: the first key is the initial (zh = v, ch = i, sh = u, the others as written), the
second the final by the scheme's table (`_FINAL`); a syllable without an initial is its two-letter form ("er", "ai",
"aa" for a, "ah" for ang). Six keys hold two finals each, told apart by the initial as pinyin's spelling rules do
(`syllable`): x ia/ua, k ing/uai, l iang/uang, s ong/iong, v ü/ui, o o/uo. Like pinyin, shuangpin says nothing
without the phrases: a run's letter pairs become syllables and the pinyin reader finds the builtin phrases among them
(toneless: PINYIN_TONELESS syllables or more). Read only in a text that names 双拼 or 小鹤 (`SHUANGPIN_HINT`, an
alternative of the decoder's cold pass); a run is words of an even number of letters on a line (`SHUANGPIN_RUN`),
cut into pairs, so a keyboard layout described, or English beside the name, says no phrase.
"""

from __future__ import annotations

import re

from rules.decode_pinyin import phrases as pinyin_phrases

SHUANGPIN_HINT = r"(?i:双拼|雙拼|小鹤|小鶴|shuangpin|xiaohe)"
_GAP = r"[ \t'’,，.。、;；:：!！?？]+"
SHUANGPIN_RUN = re.compile(rf"(?<![A-Za-z])(?:[A-Za-z]{{2}})+(?:{_GAP}(?:[A-Za-z]{{2}})+)*(?![A-Za-z])")
_PAIRS = re.compile(r"(?:[A-Za-z]{2})+")
_INITIAL = {"v": "zh", "i": "ch", "u": "sh"} | {c: c for c in "bpmfdtnlgkhjqxrzcsyw"}
_FINAL = {"q": "iu", "w": "ei", "e": "e", "r": "uan", "t": "ue", "y": "un", "u": "u", "i": "i", "o": "uo", "p": "ie",
          "a": "a", "s": "ong", "d": "ai", "f": "en", "g": "eng", "h": "ang", "j": "an", "k": "ing", "l": "iang",
          "z": "ou", "x": "ia", "c": "ao", "v": "ui", "b": "in", "n": "iao", "m": "ian"}
_ZERO = {"aa": "a", "ai": "ai", "an": "an", "ah": "ang", "ao": "ao", "ee": "e", "ei": "ei", "en": "en", "eg": "eng",
         "er": "er", "oo": "o", "ou": "ou"}
# The second reading of a shared key, and the initials that take it (pinyin's spelling rules).
_OTHER = {"x": ("ua", "gkhvziurw"), "k": ("uai", "gkhviu"), "l": ("uang", "gkhviu"), "s": ("iong", "jqx"),
          "v": ("v", "ln"), "o": ("o", "bpmfyw")}


def syllable(pair: str) -> str | None:
    """A key pair's pinyin syllable (toneless, ü as `v`), or None when the pair is none."""
    first, second = pair[0], pair[1]
    if first in "aoe":
        return _ZERO.get(pair)
    initial = _INITIAL.get(first)
    if initial is None:
        return None
    final = _FINAL[second]
    other = _OTHER.get(second)
    if other is not None and first in other[1]:
        final = other[0]
    if first in "jqxy" and final == "ui":
        final = "u"  # ju, qu, xu, yu: ü written u
    if first == "y" and final in ("i", "in", "ing"):
        return "y" + final if final != "i" else "yi"
    if first == "w" and final == "u":
        return "wu"
    return initial + final


def phrases(run: str) -> list[tuple[int, int, str]]:
    """(start, end, phrase) of each builtin phrase a run's key pairs spell, through the pinyin reader."""
    spans: list[tuple[int, int]] = []
    written: list[str] = []
    for word in _PAIRS.finditer(run):
        for i in range(word.start(), word.end(), 2):
            spans.append((i, i + 2))
            written.append(syllable(run[i:i + 2].lower()) or "qq")  # no syllable: no phrase goes through it
    line = " ".join(written)
    starts = {}
    at = 0
    for k, s in enumerate(written):
        starts[at] = k
        at += len(s) + 1
    out = []
    for start, end, phrase in pinyin_phrases(line):
        first = starts[start]
        last = first + line[start:end].count(" ")
        out.append((spans[first][0], spans[last][1], phrase))
    return out
