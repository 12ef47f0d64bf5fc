"""Cyrillic and Greek letters drawn like Latin ones, read as the Latin letters: `Ѕhорріng аѕѕіѕtаntѕ` is "Shopping
assistants" to any reader and to no ASCII pattern.

`fold(text)` replaces one character by one (offsets stay those of the raw text): in a text whose letters are mostly
Latin, every look-alike; otherwise only inside words that mix them with Latin letters, so Russian and Greek prose
stay as they are. Chinese written in Martian script ("伱媞尛助掱") is read back too (rules/martian.py, since
session 39). Used by the model-free injection signatures (rules/addressed.py, rules/smuggled.py) and by the
semantic stage's fold (models/fold.py), which moved it here in session 24.
"""

from __future__ import annotations

import re

from rules import martian

# Unicode's confusables that fonts make identical to Latin letters
LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏԛԝ" "АВЕКМНОРСТХІЈЅ" "οαιικνρτυχ" "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdhlqw" "ABEKMHOPCTXIJS" "oaiikvptux" "ABEZHIKMNOPTYX")
_LOOKALIKE_CHARS = re.compile("[аеорсухіјѕԁһӏԛԝАВЕКМНОРСТХІЈЅοαιικνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ]")
_WORD = re.compile(r"[^\W\d_]+")
_CYR_GREEK = re.compile("[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f]")


def fold(text: str) -> str:
    """`text` with its look-alike letters read as Latin (see the module docstring), one character for one; the same
    text when it has none."""
    if text.isascii():
        return text
    text = martian.fold(text)
    if _LOOKALIKE_CHARS.search(text) is None:
        return text
    latin = sum(c.isascii() for c in text if c.isalpha())
    other = len(_CYR_GREEK.findall(text))
    if latin > other:
        return text.translate(LOOKALIKES)

    def mixed(m: re.Match[str]) -> str:
        w = m.group()
        return w.translate(LOOKALIKES) if any(c.isascii() for c in w) else w

    return _WORD.sub(mixed, text)


__all__ = ["LOOKALIKES", "fold"]
