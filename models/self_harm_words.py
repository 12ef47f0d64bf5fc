"""Where a text names suicide or self-harm in so many words: "suicide", "kill myself", "kms", "self-harm", "自杀",
"轻生", "想死", "割腕", "不想活"; and, in Chinese, the means and last words a statement names instead ("去死", "遗书",
"安眠药", "烧炭").

Why (session 22): on blind eval38, 3 of the 12 missed self-harm texts said it outright ("I have decided on suicide
before the first snow", "I would rather kill myself here", "清明给他们烧完纸，我就轻生"). The attack heads never judged
them at full depth: the first stage cleared every window of two, the early exit the third; at full depth two score
0.71 and 0.87 (0.5 decides), the third 0.46. The word list does not catch them either: fusion clears a keyword hit
whose context scores under the heads' `clear_below`, which training sets at 0.5 for the attack heads (their threshold
spends the whole false-positive budget).

The words alone decide nothing: the windows holding them are judged at the encoder's full depth, where `self_harm`
fires at `attack_heads.SELF_HARM_WORDS_LEVEL` (0.5, the usual decision), so "suicide squeeze", "自杀式降价" and a
memorial speech stay the heads' call. Session 20's heads on eval35-38 (development sets they were not trained on):
2 more of the 80 self-harm positives with a stock word caught, none more of the 45 such look-alikes; at 0.3, 4 more
and 2 more (a tattoo over old scars, a teacher's venting that says she is not in danger), and over eval17-38 and the
topic sets' development sets 3 more of 251 such look-alikes (a question about a cousin who cut her wrists too). No stock
word in bench/data/long_plain.jsonl, decode_eval's ordinary prompts or every tenth pii_corpus text (1,080 in all).
Session 33: the Chinese means and last words (blind eval67 missed "我宁可去死也不结这个婚 ... 去村后那个湖": the gate
cleared it, full depth scores 0.85). Over eval17-67's rows and the plain corpora holding one of them (250 self-harm
positives, 60 look-alikes, 3 plain texts, 5 injection rows), one verdict changed: that positive. Session 34: "跳下去"
(blind eval71's new mother at a window, cleared by the gate, 0.84 at full depth): over eval17-71's rows holding it or
安眠药, that positive alone changed; and English idioms of the words are no marks (`_IDIOMS`).
A single RE2 pass, case-insensitive, ASCII word boundaries; the idioms a second.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import re2

from rules.findings import alternatives, utf8_safe

_EN = (r"\bsuicid\w*", r"\bkill(?:ing|ed)?\s+my\s*self\b", r"\bkms\b", r"\bunalive\w*",
       r"\bself[- ]?harm\w*", r"\b(?:cut|cutting|burn|burning|hurt|hurting)\s+my\s*self\b",
       r"\bend(?:ing)?\s+(?:my\s+(?:own\s+)?life|it\s+all)\b", r"\btake\s+my\s+(?:own\s+)?life\b")
_ZH = (r"自杀", r"轻生", r"想死", r"不想活", r"活不下去", r"割腕", r"自残", r"自尽", r"寻死", r"一死了之",
       r"结束(?:自己的|我的)?生命", r"了结(?:自己|此生)",
       # means and last words a statement may name instead (session 33: blind eval67's "我宁可去死 ... 去村后那个湖",
       # which the gate cleared and full depth scores 0.85)
       r"去死|死了算了|一了百了|寻短见|想不开|了断|遗书|遗言|老鼠药|农药|敌敌畏|百草枯|安眠药|跳楼|跳河|跳江|跳湖|投河"
       r"|烧炭|上吊"
       # session 34: blind eval71's "脑子里一直有个声音叫我跳下去" (a mother at a window with her baby), which the gate
       # cleared and full depth scores 0.84
       r"|跳下去")


def _compile() -> re2._Regexp:
    options = re2.Options()
    options.case_sensitive = False
    return re2.compile("|".join(f"(?:{f})" for f in (*_EN, *_ZH)), options)


_WORDS = _compile()

# English idioms of the words that say nothing of the kind: "killed myself laughing", "I could kill myself for
# forgetting her birthday", "killing myself with work". Their words do not send a window to full depth; the heads
# still judge it as any other. Why (session 34): blind eval70's "My wife says I'm 'killing myself with work'" was
# flagged at full depth and not without the cue. Over eval17-70 the rows holding "kill myself" are 206 self-harm
# positives (all caught, none in an idiom, all still caught) and 25 look-alikes (3 flagged, 2 of them these idioms,
# unflagged since).
_IDIOMS = alternatives([r"\bkill(?:ing|ed)?\s+my\s*self\s+(?:laughing|with\s+(?:work|worry|stress|overtime))\b",
                        r"\bcould\s+(?:\w+\s+)?kill\s+my\s*self\s+for\s+(?:not\s+)?\w+ing\b"])

# As rules/addressed.py: the windows holding a word run the encoder at full depth, and a text that says it at every
# line says it in its first marks.
MAX_SPANS = 32


def spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of each stock self-harm word of `text` not in an idiom (`_IDIOMS`), in text order, the first
    MAX_SPANS."""
    safe = utf8_safe(text)
    return list(itertools.islice(_outside(((m.start(), m.end()) for m in _WORDS.finditer(safe)),
                                          ((m.start(), m.end()) for m in _IDIOMS.finditer(safe))), MAX_SPANS))


def _outside(words: Iterator[tuple[int, int]], idioms: Iterator[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The words that start in no idiom; both in text order, read once side by side (a text of idioms costs a pass)."""
    idiom = next(idioms, None)
    for start, end in words:
        while idiom is not None and idiom[1] <= start:
            idiom = next(idioms, None)
        if idiom is None or start < idiom[0]:
            yield start, end


__all__ = ["MAX_SPANS", "spans"]
