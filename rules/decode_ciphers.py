"""Letter ciphers and letter codes for rules/decode.py: Atbash, QWERTY shifts, Vigenère with a stated key, A1Z26 and
Bacon's cipher. Each turns ordinary English into letters, numbers or symbols no word list reads, and each is a
puzzle-book classic a model decodes on request. The decoder keeps a reading only when it reads as English
(`_reads_as_english`) and the run as written does not.

Atbash (a<->z, b<->y, ...; case kept) and QWERTY shifts (the text typed with the hand one key to the right, "ohmptr
s;;" for "ignore all", or to the left) keep word lengths and spaces, so they are read like ROT13: Atbash on the
decoder's clause runs (`_cipher_spans`: Latin words few of which are common English), hinted by the same RE2 pass of
rotated and reversed common words with the Atbash ones added (`atbash`); a shifted run has `;`, `[`, `,` and `.` in
its words (l, p, m, and the comma itself), which end a clause, so it is read per line like ROT47, between the first
and last tokens that shift back to a common word (`KEY_LEFT`, `KEY_RIGHT`: the decodings; `TYPED_RIGHT`,
`TYPED_LEFT`: the typings, from which the hint words are made).

Vigenère: the key must be stated nearby ("key: LANTERN", "keyword is LANTERN", "密钥：LANTERN": `KEY_STATED`); the
decoder decrypts the clause runs on the key's line and the two after it (and the one before) with that key
(`vigenere`: the key advances on letters only). Without a stated key nothing is tried: a search over keys would read
English into any text of letters given enough keys.

A1Z26 ("9-7-14-15-18-5 / 1-12-12"): letters as their positions 1-26, `-` (or a comma or a space) between letters,
` / ` (or `|`, or two spaces, or a space between dash-joined letters) between words; a run has A1Z26_LETTERS numbers
or more (`A1Z26_RUN`), so "1-2-3 / 4", dates and phone numbers are no run or decode to no English. Bacon's cipher
("AABAA ABBAB ..."): each letter five A/B symbols, its index in binary (the 26-letter alphabet, or Bacon's own 24
letters with I=J and U=V: both are tried), letters apart by spaces, words by `/`, `//`, `|` or two spaces;
BACON_LETTERS groups or more (`BACON_RUN`): A/B test labels and rhyme schemes are shorter or decode to nothing.

The hints (`KEY_HINT`, `A1Z26_HINT`, `BACON_HINT`) are alternatives of the decoder's one cold RE2 pass, with those of
ROT47, spelled alphabets and the CJK kinds: a text pays for that pass once, and for a kind's own search only when its
hint is there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

# Atbash: the alphabet mirrored (an involution: encoding and decoding are one table).
ATBASH = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba"
)

# QWERTY rows, unshifted and shifted. Typed one key to the right, "q" is "w" and "l" is ";": KEY_LEFT reads such text
# (each key as the one to its left); typed one key to the left, KEY_RIGHT reads it. A row's first key has no key to
# its left (and its last none to its right): it stays.
_ROWS = (
    "`1234567890-=",
    "qwertyuiop[]\\",
    "asdfghjkl;'",
    "zxcvbnm,./",
    "~!@#$%^&*()_+",
    "QWERTYUIOP{}|",
    'ASDFGHJKL:"',
    "ZXCVBNM<>?",
)
KEY_LEFT = str.maketrans({row[i]: row[i - 1] for row in _ROWS for i in range(1, len(row))})
KEY_RIGHT = str.maketrans({row[i]: row[i + 1] for row in _ROWS for i in range(len(row) - 1)})
TYPED_RIGHT, TYPED_LEFT = KEY_RIGHT, KEY_LEFT  # what a right-shifted hand types is KEY_RIGHT of the intended keys
KEY_EDGES = "aqzAQZ"  # typed one key to the left, these are ambiguous: `s`, `w`, `x` moved, or themselves kept

# Vigenère: a key of letters stated as such: after a sign ("key: lantern", "key=Lantern", "密钥：LANTERN"), or in
# capitals or quotes after the word or "is" ("with the key LANTERN", "the keyword is 'lantern'": "the key factor" and
# "the key is missing" are English). A key runs to a character that is no letter, digit, `_` or `-`: an API key ("key:
# AKIAIOSF...", "密钥是ghp_...") is none. The key is the group that took part, of 3 to 24 letters.
_KEY_WORDS = r"(?i:\b(?:key(?:[ -]?word)?|pass ?phrase|cipher key)\b)"
_KEY_ZH = r"(?:密钥|秘钥|关键词|关键字)"
_KEY_END = r"(?:[^A-Za-z0-9_-]|$)"
KEY_STATED = re.compile(
    rf"(?:{_KEY_WORDS}|{_KEY_ZH})[ \t]*"
    r"(?:(?:=|:|：|是|为)[ \t]*[\"'“‘「(]?([A-Za-z]{3,24})"
    r"|(?:(?i:is)[ \t]+)?(?:[\"'“‘「(]([A-Za-z]{3,24})[\"'”’」)]|([A-Z]{3,24})))"
    rf"{_KEY_END}",
    re.ASCII,  # `\b` as RE2 reads it: "的key: LANTERN" has one before the key word
)
KEY_HINT = KEY_STATED.pattern
KEY_LINES_AFTER = 2  # a ciphertext on the key's line, on one of the two lines after it, or on the line before


def vigenere(run: str, key: str) -> str:
    """`run` decrypted with `key` (P = C - K): letters shift back by the key's letter, case kept; other characters
    stay and do not advance the key."""
    shifts = [ord(k) - ord("a") for k in key.lower()]
    out: list[str] = []
    i = 0
    for c in run:
        base = 97 if "a" <= c <= "z" else 65 if "A" <= c <= "Z" else 0
        if not base:
            out.append(c)
            continue
        out.append(chr(base + (ord(c) - base - shifts[i % len(shifts)]) % 26))
        i += 1
    return "".join(out)


# Keyword substitution: the cipher alphabet is the key's letters, each once, then the rest of the alphabet in order
# (key LANTERN: LANTERBCDFGHIJKMOPQSUVWXYZ). Like Vigenère, only with a stated key: a search over keys reads English
# into any text of letters.
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def keyword_alphabet(key: str) -> str:
    """The cipher alphabet of `key`: its letters deduplicated, then the others in order."""
    head = "".join(dict.fromkeys(key.lower()))
    return head + "".join(c for c in _ALPHABET if c not in head)


def substitution(run: str, key: str) -> str:
    """`run` decrypted with the keyword alphabet of `key` (each cipher letter as the plain letter at its place in the
    alphabet), case kept."""
    cipher = keyword_alphabet(key)
    table = str.maketrans(cipher + cipher.upper(), _ALPHABET + _ALPHABET.upper())
    return run.translate(table)


# Keyed columnar transposition: the plaintext's letters, upper-cased, written in rows under the key, the columns read
# in the key's alphabetical order (equal letters left to right), and written in groups of five. A run is such groups
# only (`COLUMNAR_RUN`: the last may be shorter); the key's columns are cut back to the rows they had (the first
# len % k columns one longer) and read row by row (`columnar`). What comes out has no spaces: `segmented` puts them
# back between the decoder's known words.
COLUMNAR_RUN = re.compile(r"[A-Z]{5}(?: [A-Z]{5})+(?: [A-Z]{1,4})?")


def columnar(run: str, key: str) -> str:
    """The letters of a columnar-transposition run read back under `key`."""
    letters = run.replace(" ", "")
    k, n = len(key), len(letters)
    rows, long_columns = divmod(n, k)
    order = sorted(range(k), key=lambda i: (key.upper()[i], i))
    columns: dict[int, str] = {}
    at = 0
    for column in order:
        height = rows + (column < long_columns)
        columns[column] = letters[at:at + height]
        at += height
    return "".join(columns[c][r] for r in range(rows + 1) for c in range(k) if r < len(columns[c]))


SEGMENT_WORD = 16  # the longest word looked for


def segmented(letters: str, words: frozenset[str]) -> tuple[str, int]:
    """`letters` (no spaces) split into the most letters covered by `words` (of two letters or more, or "a" and "i"),
    the letters between them kept as one word; and how many letters the words cover."""
    lower = letters.lower()
    n = len(lower)
    best: list[tuple[int, int]] = [(0, 0)] * (n + 1)  # (covered, start of the last piece) for each prefix
    for end in range(1, n + 1):
        best[end] = (best[end - 1][0], -(end - 1) - 1)  # the letter uncovered (a negative start marks it)
        for start in range(max(0, end - SEGMENT_WORD), end):
            word = lower[start:end]
            if (len(word) > 1 or word in "ai") and word in words and best[start][0] + len(word) > best[end][0]:
                best[end] = (best[start][0] + len(word), start)
    pieces: list[str] = []
    loose = ""
    end = n
    while end > 0:
        start = best[end][1]
        if start < 0:
            loose = lower[end - 1] + loose
            end -= 1
            continue
        if loose:
            pieces.append(loose)
            loose = ""
        pieces.append(lower[start:end])
        end = start
    if loose:
        pieces.append(loose)
    return " ".join(reversed(pieces)), best[n][0]


# A1Z26
A1Z26_LETTERS = 8  # numbers in a run ("ignore all" is nine)
_POSITION = r"(?:0?[1-9]|1[0-9]|2[0-6])"
_A1Z26_SEP = r"(?:[ \t]*[-,/|][ \t]*|[ \t]*//[ \t]*|[ \t]+)"
A1Z26_RUN = re.compile(rf"(?<![\w.-]){_POSITION}(?:{_A1Z26_SEP}{_POSITION}){{{A1Z26_LETTERS - 1},}}(?![\w-])")
A1Z26_HINT = (
    r"\b[0-9]{1,2}(?:-[0-9]{1,2}){3}\b"  # dash-joined letters
    r"|\b[0-9]{1,2}(?:[ ,]+[0-9]{1,2}){2,}[ ,]*(?:/|  )[ ,]*[0-9]{1,2}\b"  # spaced ones, words apart by / or two spaces
)
_WORD_BREAK = re.compile(r"[ \t]*[/|]+[ \t]*")
_WIDE_BREAK = re.compile(r"[ \t]{2,}|\t")
_SPACE_BREAK = re.compile(r"[ \t]*,[ \t]*|[ \t]+")
_LETTER_BREAK = re.compile(r"[ \t]*[-,][ \t]*|[ \t]+")


def _words(run: str) -> list[str]:
    """A run's words: apart by `/` or `|`; else by two spaces; else, when letters are joined by `-`, by a space or a
    comma; else one word."""
    if "/" in run or "|" in run:
        return _WORD_BREAK.split(run)
    if "  " in run or "\t" in run:
        return _WIDE_BREAK.split(run)
    if "-" in run:
        return _SPACE_BREAK.split(run)
    return [run]


def a1z26(run: str) -> str:
    """An A1Z26 run as its letters, a space between words."""
    return " ".join("".join(chr(96 + int(n)) for n in _LETTER_BREAK.split(w.strip()) if n) for w in _words(run))


# Bacon's cipher
BACON_LETTERS = 6  # five-symbol groups in a run
_GROUP = r"[ABab]{5}"
_BACON_SEP = r"(?:[ \t]*(?:/{1,2}|\|)[ \t]*|[ \t]+)"
BACON_RUN = re.compile(rf"(?<![A-Za-z]){_GROUP}(?:{_BACON_SEP}{_GROUP}){{{BACON_LETTERS - 1},}}(?![A-Za-z])")
BACON_HINT = r"(?i:\b[ab]{5}\b[ \t/|]+\b[ab]{5}\b[ \t/|]+\b[ab]{5}\b)"
_BACON_26 = "abcdefghijklmnopqrstuvwxyz"
_BACON_24 = "abcdefghiklmnopqrstuwxyz"  # Bacon's: I and J one letter, U and V one
_BITS = str.maketrans("ABab", "0101")
_GROUPS = re.compile(_GROUP)


def bacon(run: str, known: Callable[[str], bool]) -> tuple[str, str]:
    """A Bacon run read with the 26-letter and with the 24-letter alphabet (`?` for a group past its end); in the
    latter an `i` may be a `j` and a `u` a `v`, as a `known` word says."""
    readings = []
    for alphabet in (_BACON_26, _BACON_24):
        words = []
        for word in _words(run.replace("//", "/")):
            codes = (int(g.translate(_BITS), 2) for g in _GROUPS.findall(word))
            words.append("".join(alphabet[c] if c < len(alphabet) else "?" for c in codes))
        readings.append(" ".join(words))
    twins = {i: _TWIN[c] for i, c in enumerate(readings[1]) if c in _TWIN}
    return readings[0], resolved(readings[1], twins, known)


_TWIN = {"i": "j", "u": "v"}  # one letter of Bacon's 24 each
_LATIN_WORD = re.compile(r"[A-Za-z]+")
VARIANT_LETTERS = 4  # ambiguous letters tried in a word (16 variants)


def resolved(plain: str, alternatives: Mapping[int, str], known: Callable[[str], bool]) -> str:
    """`plain` with each word that is not `known` replaced by its first variant that is: a variant reads some of the
    word's first VARIANT_LETTERS characters at positions of `alternatives` as the alternative there."""
    out = list(plain)
    for m in _LATIN_WORD.finditer(plain):
        spots = [i for i in range(m.start(), m.end()) if i in alternatives][:VARIANT_LETTERS]
        if not spots or known(m.group()):
            continue
        for mask in range(1, 1 << len(spots)):
            trial = out[m.start() : m.end()]
            for bit, i in enumerate(spots):
                if mask >> bit & 1:
                    trial[i - m.start()] = alternatives[i]
            if known("".join(trial)):
                out[m.start() : m.end()] = trial
                break
    return "".join(out)


def keyboard_left(run: str, known: Callable[[str], bool]) -> str:
    """A run typed one key to the left, read back: each key as the one to its right, but a row's first letter (a, q,
    z: no key is left of it) may be the typist's own, as a `known` word says."""
    edges = {i: c for i, c in enumerate(run) if c in KEY_EDGES}
    return resolved(run.translate(KEY_RIGHT), edges, known)
