"""What the semantic stage reads instead of the raw text: the spellings that hide words from it folded back.

The tokenizer already maps each code point as e5's SentencePiece normalizer does (NFKC: full-width and
mathematical letters become ASCII). What it cannot see through, and what evasions use (issue 23):

* separators inside Chinese words: `忽 略 上 述`, `忽-略`, `忽·略`, `启_动`, `把*你` (a run of up to three
  separator characters between two ideographs or Chinese punctuation marks is removed, as rules/normalize.py's
  compact view does for word lists);
* spaced or dotted single letters: `i g n o r e`, `I-g-n-o-r-e`, `i.g.n.o.r.e` (four or more single letters,
  each after one separator, are joined);
* Cyrillic and Greek look-alikes among Latin letters: `Іgnоrе` (folded in a token that mixes them with Latin
  letters, and everywhere in a text whose letters are mostly Latin);
* leetspeak: `1gn0r3 pr3v10u5` (in a text holding at least two tokens with a digit between letters, the digits
  0 1 3 4 5 7 and @ $ become letters in every token that has a letter; hex runs of 8+ are left alone);
* shouting: a run of two or more all-capital words is lower-cased (the cased vocabulary cuts `IGNORE ALL
  PREVIOUS` into fragments unrelated to the same words in lower case);
* invisible characters (zero-width, bidi controls, soft hyphen) are removed;
* escaped text reads as what it encodes: a run of PERCENT_ESCAPES or more percent-encoded bytes (`%E6%9D%AD...`, a
  link's query) and a run of two or more `\\uXXXX` escapes (a JSON log's Chinese) whose bytes are printable UTF-8.
  Unread, such a run is a string of pieces the gate has never seen, and the injection head took it for an encoded
  payload (session 33: a Chinese search term and a reading list in a link, a log line of praise, three of eval61-65's
  23 flagged injection look-alikes); read, the heads judge the words, harmless or not (rules/decode.py scans the
  decoded runs as well, for every detector). The shipped attack heads were trained before this fold read escapes: about
  thirty of their training texts hold such a run (eval17-60: 15 positives, 14 look-alikes; three exemplars), and
  read the same way at the next retraining.

Where it goes: every place a text is tokenized for the gate or the encoder, identically in training
(models/semantic.training_rows, `fold=True`) and detection (models/semantic.split_windows and _split_long;
offsets stay those of the raw text, since windows are cut on it). The attack heads are trained and served
through it since session 15 (models/attack_heads.py FOLD; the heads file records it, user_heads.UserHeads.fold,
so its detector reads windows as its training did). The topic heads were trained on raw text and still read it:
folding for them would mean retraining them, and their held-out sets may be re-read only once. A text none of
the folds apply to comes back unchanged; on the held-out sets' texts it costs ~10 us of CPU per text (about 5% of
split_windows), and changes 3 of eval16's 340 texts (spaces between ideographs).
"""

from __future__ import annotations

import re

from rules import lookalikes
from rules.decode_escapes import unescape

_INVISIBLE_CHARS = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u200b"
                                    "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062"
                                    "\u2063\u2064\u2066\u2067\u2068\u2069\ufeff")
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]+")


_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f\u201c\u201d"
_CJK_SEPARATED = re.compile(f"(?<=[{_CJK}])[ \t*\\-_.·•|/\\\\~+#－＊＿·・\u3000]{{1,3}}(?=[{_CJK}])")

# single letters, each after one separator; inside such a run two or three spaces are a word gap
_SPACED = re.compile(r"(?<![A-Za-z0-9])[A-Za-z](?:(?:[ ._*·/|~+\-]| {2,3})[A-Za-z](?![A-Za-z0-9])){3,}")
_GAP = re.compile(r" {2,3}")
_SPACED_SEP = re.compile(r"[ ._*·/|~+\-]")


PERCENT_ESCAPES = 4  # "%E6%9D%AD" is one character: four bytes are at least two, or four letters
_PERCENT_RUN = re.compile(rf"(?:%[0-9A-Fa-f]{{2}}){{{PERCENT_ESCAPES},}}")
_U_RUN = re.compile(r"(?:\\u[0-9A-Fa-f]{4}){2,}")
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")

_SHOUT = re.compile(r"\b[A-Z]{2,}(?:[\s,.:;!'\"-]+[A-Z]{2,}\b)+")


def fold(text: str) -> str:
    """`text` with the evasions above undone (see the module docstring); the same text when none applies."""
    if "%" in text and _PERCENT_RUN.search(text):
        text = _PERCENT_RUN.sub(_unpercent, text)
    if "\\u" in text and _U_RUN.search(text):
        text = _U_RUN.sub(_unescape, text)
    if not text.isascii():
        if _INVISIBLE.search(text):
            text = _INVISIBLE.sub("", text)
        text = lookalikes.fold(text)
        if _CJK_SEPARATED.search(text):
            text = _CJK_SEPARATED.sub("", text)
    if _SPACED.search(text):
        text = _SPACED.sub(_join_letters, text)
    text = lookalikes.unleet(text)
    if _SHOUT.search(text):
        text = _SHOUT.sub(lambda m: m.group().lower(), text)
    return text


def _unpercent(m: re.Match[str]) -> str:
    """A run of percent-encoded bytes as its text; a run cut inside a character (a window's edge) keeps the cut
    bytes as they were."""
    run = m.group()
    data = bytes.fromhex(run.replace("%", ""))
    for cut in range(4):  # a UTF-8 character is at most four bytes: a cut one leaves at most three behind
        try:
            text = data[:len(data) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return run if _UNPRINTABLE.search(text) else text + run[len(run) - 3 * cut:]
    return run


def _unescape(m: re.Match[str]) -> str:
    """A run of `\\uXXXX` escapes as its text (surrogate pairs joined), unless it decodes to what is not printable."""
    text = unescape(m.group(), len(m.group()))[0].decode("utf-8", "replace")
    return m.group() if _UNPRINTABLE.search(text) else text


def _join_letters(m: re.Match[str]) -> str:
    return " ".join(_SPACED_SEP.sub("", w) for w in _GAP.split(m.group()))

