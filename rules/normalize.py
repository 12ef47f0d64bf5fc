"""Text normalization with an offset map back to the raw text (DESIGN section 3).

Two views of a text are matched:

* the *base* view: per-code-point NFKC (full-width digits and letters become ASCII), zero-width and bidi
  controls removed, optionally traditional -> simplified Chinese. Case is kept: PII detectors run here,
  because checksums (JWTs, USCC letters, IBANs) need the original letters.
* the *compact* view: the base view case-folded, with runs of configurable skip characters removed when
  they sit inside a word (`代*考`, `代 考`, `代-考` -> `代考`; `p.o.r.n` -> `porn`). Word lists and rule
  patterns run here.

Every view keeps an `OffsetMap` so a span found in it maps back to Python string indices into the raw text.
Speed: an ASCII text without skip characters costs one `isascii()` and one `lower()`; otherwise the
character work is done by `str.translate` with tables built once, and only characters that change length
(removed or expanded) are visited from Python.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from importlib import resources

# Zero-width, joiners, bidi embeddings/overrides/isolates, word joiner, invisible operators, BOM, soft hyphen,
# Mongolian vowel separator: characters that render as nothing and are used to split words past filters.
INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u200b\u200c\u200d\u200e\u200f"
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u3164\ufeff"
    "\ufe00\ufe01\ufe02\ufe03\ufe04\ufe05\ufe06\ufe07\ufe08\ufe09\ufe0a\ufe0b\ufe0c\ufe0d\ufe0e\ufe0f"
)

# Code point ranges that hold every character whose NFKC form differs from itself and that matters here
# (scanning all 1.1M code points at first use would cost a second): the BMP, mathematical alphanumerics,
# enclosed alphanumerics/ideographs, CJK compatibility ideographs supplement.
_NFKC_RANGES = ((0x80, 0x10000), (0x1D400, 0x1D800), (0x1F100, 0x1F300), (0x2F800, 0x2FA20))

DEFAULT_SKIP_CHARS = " \t*-_.·•|/\\~+#"
DEFAULT_MAX_SKIP = 3

CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


@dataclass(frozen=True, slots=True)
class NormalizeConfig:
    """How texts are normalized; set per rule set (rule files' `normalize:` section)."""

    traditional_to_simplified: bool = True
    skip_chars: str = DEFAULT_SKIP_CHARS
    max_skip: int = DEFAULT_MAX_SKIP  # longest run of skip characters removed inside a word


class OffsetMap:
    """Maps indices of a derived text back to its source through a sorted list of edits.

    Each edit replaced source[rs:re] by derived[ns:ne]; text between edits is copied one to one. A span that
    touches part of an edit widens to the whole edited source span, so masking never leaves half a character.
    """

    __slots__ = ("_ne", "_ns", "_re", "_rs")

    def __init__(self, ns: list[int], ne: list[int], rs: list[int], re_: list[int]) -> None:
        self._ns, self._ne, self._rs, self._re = ns, ne, rs, re_

    def start(self, n: int) -> int:
        i = bisect_right(self._ns, n) - 1
        if i < 0:
            return n
        if n < self._ne[i]:
            return self._rs[i]
        return self._re[i] + (n - self._ne[i])

    def end(self, n: int) -> int:
        i = bisect_left(self._ns, n) - 1
        if i < 0:
            return n
        if n <= self._ne[i]:
            return self._re[i]
        return self._re[i] + (n - self._ne[i])


def _apply_edits(src: str, edits: list[tuple[int, int, str]]) -> tuple[str, OffsetMap]:
    parts: list[str] = []
    ns: list[int] = []
    ne: list[int] = []
    rs: list[int] = []
    re_: list[int] = []
    pos = 0
    out_len = 0
    for a, b, rep in edits:
        parts.append(src[pos:a])
        out_len += a - pos
        ns.append(out_len)
        rs.append(a)
        re_.append(b)
        parts.append(rep)
        out_len += len(rep)
        ne.append(out_len)
        pos = b
    parts.append(src[pos:])
    return "".join(parts), OffsetMap(ns, ne, rs, re_)


class View:
    """One normalized view of a raw text: `text`, its UTF-8 `data`, and offset maps back to the raw text."""

    __slots__ = ("_ascii", "_maps", "data", "text")

    def __init__(self, text: str, maps: tuple[OffsetMap, ...]) -> None:
        self.text = text
        self._maps = maps  # innermost last: view -> parent -> ... -> raw
        self.data = text.encode("utf-8", "surrogatepass")
        self._ascii = len(self.data) == len(text)

    def char_index(self, byte_offset: int) -> int:
        """Character index in `text` of a UTF-8 byte offset (RE2 runs on bytes: twice as fast as str)."""
        if self._ascii:
            return byte_offset
        return len(self.data[:byte_offset].decode("utf-8", "surrogatepass"))

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """Raw-text span of the view span [start, end)."""
        for m in reversed(self._maps):
            start, end = m.start(start), m.end(end)
        return start, end

    def raw_start(self, start: int) -> int:
        for m in reversed(self._maps):
            start = m.start(start)
        return start


@functools.cache
def _t2s_table() -> dict[int, str]:
    """OpenCC's traditional -> simplified character table (first candidate; phrases are not applied)."""
    table: dict[int, str] = {}
    text = resources.files("opencc").joinpath("dictionary/TSCharacters.txt").read_text("utf-8")
    for line in text.splitlines():
        src, _, dst = line.partition("\t")
        first = dst.split(" ")[0] if dst else ""
        if len(src) == 1 and len(first) == 1 and src != first:
            table[ord(src)] = first
    return table


@dataclass(frozen=True, slots=True)
class _Tables:
    same_len: dict[int, str]  # one code point -> one code point
    var_re: re.Pattern[str] | None  # code points that vanish or expand
    var_map: dict[str, str]


def _char_class(chars: list[str]) -> str:
    return "".join(re.escape(c) for c in chars)


@functools.cache
def _tables(t2s: bool, fold: bool) -> _Tables:
    t2s_map = _t2s_table() if t2s else {}
    same: dict[int, str] = {}
    var: dict[str, str] = {}
    for lo, hi in _NFKC_RANGES:
        for cp in range(lo, hi):
            if 0xD800 <= cp < 0xE000:
                continue
            c = chr(cp)
            n = unicodedata.normalize("NFKC", c)
            n = "".join(t2s_map.get(ord(x), x) for x in n)
            if fold:
                n = n.casefold()
            if n != c:
                if len(n) == 1:
                    same[cp] = n
                else:
                    var[c] = n
    for c in INVISIBLE:
        same.pop(ord(c), None)
        var[c] = ""
    if fold:
        for cp in range(ord("A"), ord("Z") + 1):
            same[cp] = chr(cp + 32)
    var_re = re.compile(f"[{_char_class(sorted(var))}]") if var else None
    return _Tables(same, var_re, var)


def warm_up(config: NormalizeConfig) -> None:
    """Build the translation tables now (about 0.1 s) rather than on the first scanned text."""
    _tables(config.traditional_to_simplified, False)
    _tables(config.traditional_to_simplified, True)
    _skip_res(config.skip_chars, config.max_skip)


def _translate(raw: str, t2s: bool, fold: bool) -> tuple[str, OffsetMap | None]:
    if raw.isascii():
        return (raw.lower() if fold else raw), None
    tables = _tables(t2s, fold)
    if tables.var_re is None or tables.var_re.search(raw) is None:
        return raw.translate(tables.same_len), None
    edits = [(m.start(), m.end(), tables.var_map[m.group()]) for m in tables.var_re.finditer(raw)]
    text, omap = _apply_edits(raw, edits)
    return text.translate(tables.same_len), omap


@functools.cache
def _skip_res(skip_chars: str, max_skip: int) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    if max_skip <= 0:
        skip_chars = ""
    cls = _char_class(sorted(set(skip_chars)))
    nonspace = _char_class(sorted(set(skip_chars) - {" ", "\t", "\n", "\r"}))
    present = re.compile(f"[{cls}\\s]")
    # Between two ideographs any skip run goes; between two letters only a run without whitespace, so that
    # ordinary word spacing (and with it Latin word boundaries) survives. Digits are never joined: that is
    # the PII view's business and "1-2" must not become "12".
    parts = [f"(?<=[{CJK_CLASS}])[{cls}]{{1,{max_skip}}}(?=[{CJK_CLASS}])"] if cls else []
    if nonspace:
        parts.append(f"(?<=[^\\W\\d_])[{nonspace}]{{1,{max_skip}}}(?=[^\\W\\d_])")
    # Any other whitespace run becomes one space ("ignore   previous\ninstructions").
    parts.append("(?P<ws>\\s{2,}|[\\t\\n\\r\\f\\v])")
    return present, re.compile("|".join(parts))


def base_view(raw: str, config: NormalizeConfig) -> View:
    """NFKC + invisible characters removed (+ traditional -> simplified); case kept. For PII detectors."""
    text, omap = _translate(raw, config.traditional_to_simplified, False)
    return View(text, () if omap is None else (omap,))


def compact_view(raw: str, config: NormalizeConfig) -> View:
    """The base view case-folded with in-word skip characters removed. For word lists and rule patterns."""
    text, omap = _translate(raw, config.traditional_to_simplified, True)
    maps: tuple[OffsetMap, ...] = () if omap is None else (omap,)
    res = _skip_res(config.skip_chars, config.max_skip)
    if res is not None and res[0].search(text) is not None:
        edits = [(m.start(), m.end(), "" if m.group("ws") is None else " ") for m in res[1].finditer(text)]
        edits = [e for e in edits if text[e[0] : e[1]] != e[2]]
        if edits:
            text, smap = _apply_edits(text, edits)
            maps = (*maps, smap)
    return View(text, maps)


def normalize_literal(word: str, config: NormalizeConfig) -> str:
    """A listed word in the form it takes in the compact view (so lists match what texts become)."""
    return compact_view(word, config).text


class Views:
    """Both views of one raw text, each built on first use."""

    __slots__ = ("_base", "_compact", "config", "raw")

    def __init__(self, raw: str, config: NormalizeConfig) -> None:
        self.raw = raw
        self.config = config
        self._base: View | None = None
        self._compact: View | None = None

    @property
    def base(self) -> View:
        if self._base is None:
            self._base = base_view(self.raw, self.config)
        return self._base

    @property
    def compact(self) -> View:
        if self._compact is None:
            self._compact = compact_view(self.raw, self.config)
        return self._compact
