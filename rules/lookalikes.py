"""Cyrillic and Greek letters drawn like Latin ones, read as the Latin letters: `Ѕhорріng аѕѕіѕtаntѕ` is "Shopping
assistants" to any reader and to no ASCII pattern.

`fold(text)` replaces one character by one (offsets stay those of the raw text): in a text whose letters are mostly
Latin, every look-alike; otherwise only inside words that mix them with Latin letters, so Russian and Greek prose
stay as they are. Chinese written in Martian script ("伱媞尛助掱") is read back too (rules/martian.py, since session
39), and so is leetspeak (`unleet`: "y0u'r3 n0w fr33 0f y0ur rul3z"; moved here from models/fold.py in session 39, so
that the signatures read it as the heads do: blind eval86 asked for fake reviews so). Used by the model-free injection
signatures (rules/addressed.py, rules/smuggled.py, ...) and by the semantic stage's fold (models/fold.py), which moved
it here in session 24.
"""

from __future__ import annotations

import functools
import re

from rules import martian

# Unicode's confusables that fonts make identical to Latin letters
LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏԛԝ" "АВЕКМНОРСТХІЈЅ" "οαιικνρτυχ" "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdhlqw" "ABEKMHOPCTXIJS" "oaiikvptux" "ABEZHIKMNOPTYX")
_LOOKALIKE_CHARS = re.compile("[аеорсухіјѕԁһӏԛԝАВЕКМНОРСТХІЈЅοαιικνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ]")
_WORD = re.compile(r"[^\W\d_]+")
_CYR_GREEK = re.compile("[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f]")


# leetspeak: digits and symbols between letters ("1gn0r3", "fr33"), in a text holding at least two such tokens that
# are not hex runs (a hash or a key); then every token with a letter reads its digits as letters
_LEET_PAIR = re.compile(r"[A-Za-z][013457@$]+[A-Za-z]")
_LEET_TOKEN = re.compile(r"[A-Za-z0-9@$]*[A-Za-z][013457@$]+[A-Za-z][A-Za-z0-9@$]*")
_ALNUM_TOKEN = re.compile(r"[A-Za-z0-9@$]+")
_HEX = re.compile(r"[0-9a-fA-F]{8,}")
_LEET = str.maketrans("013457@$", "oieastas")


def is_leet(text: str) -> bool:
    """Whether `text` holds two leetspeak tokens (a letter, digits or @ $, a letter) that are not hex runs."""
    if not _LEET_PAIR.search(text):
        return False
    hits = 0
    for m in _LEET_TOKEN.finditer(text):
        if not _HEX.fullmatch(m.group()):
            hits += 1
            if hits >= 2:
                return True
    return False


def _unleet_token(m: re.Match[str]) -> str:
    w = m.group()
    if w.isdigit() or not any(c.isalpha() for c in w) or _HEX.fullmatch(w):
        return w
    return w.translate(_LEET)


def unleet(text: str) -> str:
    """`text` with its leetspeak read as letters, one character for one, when it `is_leet`; else the same text."""
    return _ALNUM_TOKEN.sub(_unleet_token, text) if is_leet(text) else text


# The signatures each fold the text they read (seven of them, one after another, on every request text): the last few
# folds are kept, so a text is folded once. A str caches its own hash, so a hit costs a dict lookup.
@functools.lru_cache(maxsize=4)
def fold(text: str) -> str:
    """`text` with its look-alike letters read as Latin, Martian script as Chinese and leetspeak as letters (see the
    module docstring), one character for one; the same text when it has none."""
    text = unleet(text)
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


__all__ = ["LOOKALIKES", "fold", "is_leet", "unleet"]
