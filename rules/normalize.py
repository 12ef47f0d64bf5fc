"""Text normalization with an offset map back to the raw text (DESIGN section 3).

Two views of a text are matched:

* the *base* view: per-code-point NFKC (full-width digits and letters become ASCII), zero-width and bidi
  controls removed, optionally traditional -> simplified Chinese. Case is kept: PII detectors run here,
  because checksums (JWTs, USCC letters, IBANs) need the original letters.
* the *compact* view: the base view lower-cased, with runs of configurable skip characters removed when
  they sit inside a word (`代*考`, `代 考`, `代-考` -> `代考`; `p.o.r.n` -> `porn`). Word lists and rule
  patterns run here.

Every view keeps an `OffsetMap` so a span found in it maps back to Python string indices into the raw text.
Speed: an ASCII text without skip characters costs one `isascii()` and one `lower()`; otherwise the
character work is done by `str.translate` with tables built once, and only characters that change length
(removed or expanded) are visited from Python. Skip runs are found and removed in one pass of C over the
lowered text (rules/_compact.c), or of Python's `re` (`_skip_runs`) where that module was not built; both
are defined by the RE2 of `_skip_re`.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from itertools import accumulate, chain
from operator import add
from types import ModuleType
from typing import Any

import re2
from re2 import _Anchor, _re2

_native: ModuleType | None
try:
    from rules import _compact as _native  # the skip runs in C (rules/_compact.c), built at install
except ImportError:  # installed without a compiler: `_SkipRuns` finds the same runs with Python's `re`
    _native = None

_UNANCHORED = _Anchor.UNANCHORED
_ANCHOR_START = _Anchor.ANCHOR_START
_ANCHOR_BOTH = _Anchor.ANCHOR_BOTH
_bytes_to_chars = _re2.BytesToCharLen

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


_CONTINUATION = bytes(range(0x80, 0xC0))


def utf8_chars(data: bytes, start: int, end: int) -> int:
    """Characters in data[start:end] (UTF-8 from `str.encode`, surrogatepass included): its bytes that do not
    continue a character, counted in C by deleting the others."""
    return len(data[start:end].translate(None, _CONTINUATION))


class ByteIndex:
    """Character <-> UTF-8 byte offsets of one text, for non-ASCII texts. Every conversion is remembered as a
    checkpoint and the next one starts from the nearest checkpoint below it, so a scan's conversions cost
    about one pass over the text in total instead of one pass each (100 KB texts with hundreds of findings)."""

    __slots__ = ("_bytes", "_chars", "data", "text")

    def __init__(self, text: str, data: bytes) -> None:
        self.text = text
        self.data = data
        self._chars = [0]  # checkpoints, ascending in both lists
        self._bytes = [0]

    def _remember(self, i: int, c: int, b: int) -> None:
        if self._chars[i - 1] != c:
            self._chars.insert(i, c)
            self._bytes.insert(i, b)

    def char_of(self, b: int) -> int:
        i = bisect_right(self._bytes, b)
        b0, c0 = self._bytes[i - 1], self._chars[i - 1]
        c = c0 + int(_bytes_to_chars(self.data, b0, b))
        self._remember(i, c, b)
        return c

    def byte_of(self, c: int) -> int:
        i = bisect_right(self._chars, c)
        b0, c0 = self._bytes[i - 1], self._chars[i - 1]
        b = b0 + len(self.text[c0:c].encode("utf-8", "surrogatepass"))
        self._remember(i, c, b)
        return b


class _ByteMap:
    """An OffsetMap kept in UTF-8 byte offsets between two texts, with the same start/end interface in
    characters: converts child characters -> child bytes -> parent bytes -> parent characters."""

    __slots__ = ("_bmap", "_child", "_parent")

    def __init__(self, child: ByteIndex | None, parent: ByteIndex | None, bmap: OffsetMap) -> None:
        self._child = child  # None: that text is ASCII, offsets are the same in bytes and characters
        self._parent = parent
        self._bmap = bmap

    def _to_bytes(self, n: int) -> int:
        return n if self._child is None else self._child.byte_of(n)

    def _to_chars(self, b: int) -> int:
        return b if self._parent is None else self._parent.char_of(b)

    def start(self, n: int) -> int:
        return self._to_chars(self._bmap.start(self._to_bytes(n)))

    def end(self, n: int) -> int:
        return self._to_chars(self._bmap.end(self._to_bytes(n)))

    def start_of_byte(self, b: int) -> int:
        """Parent character index of child byte offset `b` (matchers over bytes skip the child's chars)."""
        return self._to_chars(self._bmap.start(b))

    def end_of_byte(self, b: int) -> int:
        return self._to_chars(self._bmap.end(b))


def _apply_edits(src: str, edits: list[tuple[int, int, str]]) -> tuple[str, OffsetMap]:
    """Apply sorted, non-overlapping edits (source start, source end, replacement) and map the result back.
    Written as comprehensions: this runs once per edit on every text with skip runs."""
    rs = [a for a, _, _ in edits]
    re_ = [b for _, b, _ in edits]
    shift = list(accumulate((len(r) - (b - a) for a, b, r in edits), initial=0))
    ns = [a + d for a, d in zip(rs, shift, strict=False)]
    ne = [n + len(r) for n, (_, _, r) in zip(ns, edits, strict=True)]
    pieces = [src[b:a] for b, a in zip([0, *re_], [*rs, len(src)], strict=True)]
    reps = [r for _, _, r in edits]
    text = "".join(chain.from_iterable(zip(pieces, [*reps, ""], strict=True)))
    return text, OffsetMap(ns, ne, rs, re_)


# A pattern that matches every text, added last to every re2.Set: RE2's Set.Match answers "no match" when its
# DFA runs out of memory, and the Python wrapper hides the error. A missing sentinel means exactly that, and
# the caller then runs every pattern instead of none (fail closed).
# `\A`, not the empty pattern: an empty pattern matches at every position, so every DFA state is a matching
# one and the Set's inner loop records its match ids at every byte: a 1 KB text cost 9.3 us with one PII
# prefilter and the empty sentinel, 3.3 us with `\A` (it matches at position 0 alone), and the PII kinds' Set
# went from 11.1 to 5-6 us warm (tests/rules/test_normalize.py holds the semantics).
SET_SENTINEL = "\\A"


def set_hits(rset: Any, sentinel: int, total: int, data: bytes) -> list[int]:
    """Indices of the patterns of an re2.Set that match `data`, ascending; all of them if the Set failed."""
    hits = rset.Match(data)
    if not hits or sentinel not in hits:
        return list(range(total))
    if len(hits) == 1:
        return []
    return sorted(i for i in hits if i != sentinel)


def found_in(regexp: Any, data: bytes) -> bool:
    """Whether a compiled RE2 matches anywhere in `data` (RE2's matcher directly: no Match object)."""
    return bool(regexp._regexp.Match(_UNANCHORED, data, 0, len(data))[0][0] >= 0)


def iter_matches(regexp: Any, data: bytes, pos: int = 0) -> Iterator[list[tuple[int, int]]]:
    """Successive non-overlapping matches of a compiled RE2 over bytes, as lists of group spans ((-1, -1)
    for a group that did not take part). Calls RE2's matcher directly: the wrapper's finditer builds a
    Match object and a generator frame per match, which was most of the scan time on PII-dense text."""
    match = regexp._regexp.Match
    end = len(data)
    while pos <= end:
        spans = match(_UNANCHORED, data, pos, end)
        s, e = spans[0]
        if s < 0:
            return
        yield spans
        pos = e if e > s else e + 1


class View:
    """One normalized view of a raw text: `text`, its UTF-8 `data`, and offset maps back to the raw text."""

    __slots__ = ("_ascii", "_index", "data", "maps", "text")

    def __init__(self, text: str, maps: tuple[OffsetMap | _ByteMap, ...], data: bytes | None = None,
                 index: ByteIndex | None = None) -> None:
        self.text = text
        self.maps = maps  # innermost last: view -> parent -> ... -> raw
        self.data = text.encode("utf-8", "surrogatepass") if data is None else data
        self._ascii = len(self.data) == len(text)
        # Built on first use: most views (a stream's window on every event) never convert an offset.
        self._index = index

    @property
    def index(self) -> ByteIndex | None:
        """Byte <-> character conversions; None for an ASCII text (offsets are equal)."""
        if self._index is None and not self._ascii:
            self._index = ByteIndex(self.text, self.data)
        return self._index

    def char_index(self, byte_offset: int) -> int:
        """Character index in `text` of a UTF-8 byte offset (RE2 runs on bytes: twice as fast as str)."""
        if self._ascii:
            return byte_offset
        index = self.index
        assert index is not None
        return index.char_of(byte_offset)

    def char_count(self, bstart: int, bend: int) -> int:
        """Characters in data[bstart:bend] (without moving the ascending-conversion cursor)."""
        return bend - bstart if self._ascii else int(_bytes_to_chars(self.data, bstart, bend))

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """Raw-text span of the view span [start, end)."""
        for m in reversed(self.maps):
            start, end = m.start(start), m.end(end)
        return start, end

    def raw_span_bytes(self, bstart: int, bend: int) -> tuple[int, int]:
        """Raw-text span of the view's byte span data[bstart:bend] (a byte-level last map is applied to the
        bytes directly: no byte -> character -> byte round trip through this view's text)."""
        maps = self.maps
        if maps and isinstance(maps[-1], _ByteMap):
            last = maps[-1]
            start, end = last.start_of_byte(bstart), last.end_of_byte(bend)
            maps = maps[:-1]
        else:
            start = self.char_index(bstart)
            end = start + self.char_count(bstart, bend)
        for m in reversed(maps):
            start, end = m.start(start), m.end(end)
        return start, end

    def raw_start(self, start: int) -> int:
        for m in reversed(self.maps):
            start = m.start(start)
        return start


@functools.cache
def t2s_table() -> dict[int, str]:
    """OpenCC's traditional -> simplified character table (first candidate; phrases are not applied)."""
    table: dict[int, str] = {}
    text = resources.files("opencc").joinpath("dictionary/TSCharacters.txt").read_text("utf-8")
    for line in text.splitlines():
        src, _, dst = line.partition("\t")
        first = dst.split(" ")[0] if dst else ""
        if len(src) == 1 and len(first) == 1 and src != first:
            table[ord(src)] = first
    return table


# Full-width punctuation that NFKC would turn into ASCII but that carries no evasion value: leaving it alone
# keeps ordinary Chinese text (，：！？（）……) on the fast path where nothing is rewritten.
KEEP = frozenset("！（），：；？…")


def _ranges(cps: list[int], esc: Callable[[int], str]) -> str:
    out = []
    i = 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        out.append(esc(cps[i]) if i == j else f"{esc(cps[i])}-{esc(cps[j])}")
        i = j + 1
    return "".join(out)


def _py_esc(cp: int) -> str:
    return f"\\U{cp:08x}"


def _re2_esc(cp: int) -> str:
    return f"\\x{{{cp:x}}}"


@dataclass(frozen=True, slots=True)
class _Tables:
    table: dict[str, str]  # every character that changes -> its replacement ("" when removed)
    any_change: Any  # RE2 over UTF-8 bytes: is there anything to rewrite at all?
    any_var: Any  # RE2 over UTF-8 bytes: anything that changes length?
    var: re.Pattern[str]  # one character that changes length
    runs: Any  # RE2 over UTF-8 bytes: runs of characters that change


@functools.cache
def _tables(t2s: bool) -> _Tables:
    t2s_map = t2s_table() if t2s else {}
    table: dict[str, str] = {}
    for lo, hi in _NFKC_RANGES:
        for cp in range(lo, hi):
            if 0xD800 <= cp < 0xE000:
                continue
            c = chr(cp)
            if c in KEEP:
                continue
            n = unicodedata.normalize("NFKC", c)
            n = "".join(t2s_map.get(ord(x), x) for x in n)
            if n != c:
                table[c] = n
    for c in INVISIBLE:
        table[c] = ""
    cps = sorted(ord(c) for c in table)
    var_cps = sorted(ord(c) for c, n in table.items() if len(n) != 1)
    return _Tables(
        table,
        any_change=re2.compile(f"[{_ranges(cps, _re2_esc)}]", _re2_opts()),
        any_var=re2.compile(f"[{_ranges(var_cps, _re2_esc)}]", _re2_opts()),
        var=re.compile(f"[{_ranges(var_cps, _py_esc)}]"),
        runs=re2.compile(f"[{_ranges(cps, _re2_esc)}]+", _re2_opts()),
    )


def changing_chars(t2s: bool) -> frozenset[str]:
    """Every character the base view rewrites or removes. The base view maps each code point on its own
    (per-code-point NFKC, invisible characters, traditional -> simplified), so a text none of whose
    characters is here is its own base view; the stream scanner tests only each new chunk against this set
    (a `frozenset.isdisjoint` over a few characters: an RE2 call costs ~0.8 us in the binding alone)."""
    return _changing_chars(t2s)


@functools.cache
def _changing_chars(t2s: bool) -> frozenset[str]:
    return frozenset(_tables(t2s).table)


def _re2_opts() -> Any:
    opts = re2.Options()
    opts.max_mem = 64 << 20
    opts.log_errors = False
    return opts


def warm_up(config: NormalizeConfig) -> None:
    """Build the translation tables now (about 0.1 s) rather than on the first scanned text."""
    _tables(config.traditional_to_simplified)
    _skip_re(config.skip_chars, config.max_skip)
    _skip_runs(config.skip_chars, config.max_skip)


def _translate(raw: str, t2s: bool) -> tuple[str, OffsetMap | None, bytes | None]:
    """The base view's text and map, and its UTF-8 bytes when they are already known (text unchanged)."""
    if raw.isascii():
        return raw, None, None
    tables = _tables(t2s)
    data = raw.encode("utf-8", "surrogatepass")
    if not found_in(tables.any_change, data):
        return raw, None, data
    table = tables.table
    text, omap = raw, None
    if found_in(tables.any_var, data):
        # Only characters that vanish or expand move offsets; they get edits, the rest is one to one.
        text, omap = _apply_edits(raw, [(m.start(), m.end(), table[m.group()]) for m in tables.var.finditer(raw)])
    # The remaining changes are one character for one: rewrite the runs found by RE2 over the bytes (Python's
    # re with this class took ~30 us per 1 KB text that has any).
    if omap is not None:
        data = text.encode("utf-8", "surrogatepass")
    out: list[bytes] = []
    pos = 0
    for spans in iter_matches(tables.runs, data):
        a, b = spans[0]
        out.append(data[pos:a])
        run = data[a:b].decode("utf-8", "surrogatepass")
        out.append("".join([table.get(c, c) for c in run]).encode("utf-8", "surrogatepass"))
        pos = b
    if not out:
        return text, omap, data
    out.append(data[pos:])
    new = b"".join(out)
    return new.decode("utf-8", "surrogatepass"), omap, new


@functools.cache
def _skip_re(skip_chars: str, max_skip: int) -> Any:
    """What the compact view removes, as one RE2 over the lower-cased view's bytes: a skip run between two
    ideographs; a run of non-space skip characters between two letters; a whitespace run (folded to one
    space). Digits are never joined: that is the PII view's business and "1-2" must not become "12".
    `_skip_runs` finds the same runs faster; this one runs when a skip character is a letter itself."""
    k = max(0, max_skip)
    cps = sorted({ord(c) for c in skip_chars})
    nonspace = sorted({ord(c) for c in skip_chars} - {ord(c) for c in " \t\n\r\f\v"})
    cjk = "\\x{3400}-\\x{4dbf}\\x{4e00}-\\x{9fff}\\x{f900}-\\x{faff}"
    alts = []
    if cps and k:
        alts.append(f"[{cjk}][{_ranges(cps, _re2_esc)}]{{1,{k}}}[{cjk}]")
    if nonspace and k:
        alts.append(f"\\pL[{_ranges(nonspace, _re2_esc)}]{{1,{k}}}\\pL")
    alts.append("\\s{2,}")
    return re2.compile("|".join(alts), _re2_opts())


_SPACE_BYTES = frozenset(b" \t\n\r\f\v")
_CONTROL_WS = ("\n", "\t", "\r", "\f", "\v")


def base_view(raw: str, config: NormalizeConfig) -> View:
    """NFKC + invisible characters removed (+ traditional -> simplified); case kept. For PII detectors."""
    text, omap, data = _translate(raw, config.traditional_to_simplified)
    return View(text, () if omap is None else (omap,), data)


def _lower(text: str) -> tuple[str, OffsetMap | None]:
    low = text.lower()
    if len(low) == len(text):
        return low, None
    # A few characters lower to two ("İ" -> "i̇"): map those explicitly.
    edits = [(i, i + 1, c.lower()) for i, c in enumerate(text) if len(c.lower()) != 1]
    out, omap = _apply_edits(text, edits)
    return out.lower(), omap


def lowered_of(base: View) -> View:
    """The base view lower-cased, control whitespace as spaces (one for one): the compact view before skip
    runs are removed."""
    return View(*_lowered_text(base))


def _lowered_text(base: View) -> tuple[str, tuple[OffsetMap | _ByteMap, ...]]:
    text, lmap = _lower(base.text)
    maps = base.maps if lmap is None else (*base.maps, lmap)
    for ws in _CONTROL_WS:
        if ws in text:
            text = text.replace(ws, " ")
    return text, maps


def compact_of(base: View, config: NormalizeConfig, lowered: View | None = None) -> View:
    """The base view lower-cased with in-word skip characters removed and whitespace runs collapsed."""
    runs = _skip_runs(config.skip_chars, config.max_skip)
    if runs is None:
        return _compact_re2(lowered_of(base) if lowered is None else lowered, config)
    text, maps = _lowered_text(base) if lowered is None else (lowered.text, lowered.maps)
    if _native is not None:
        found = _native.compact(text, runs.chars, config.max_skip, runs.cjk_letters, _is_letter)
        if found is None:
            return View(text, maps) if lowered is None else lowered
        new_text, ns, ne, rs, re_ = found
        return View(new_text, (*maps, OffsetMap(ns, ne, rs, re_)))
    # Without the C module, Python's `re`; the common case in one `split` and no Match objects: split yields
    # the text between runs, then per run the run and each group (None unless a space run was folded or a run
    # awaits RE2's verdict).
    parts = runs.split(text)
    per = runs.regex.groups + 2
    count = len(parts) // per
    if count and parts.count(None) == count * (per - 2):  # only runs dropped, no replacement to interleave
        pieces = parts[::per]
        lengths = list(map(len, parts[1::per]))
        ns = list(accumulate(map(len, pieces[:-1])))
        rs = list(map(add, ns, accumulate(lengths, initial=0)))
        return View("".join(pieces), (*maps, OffsetMap(ns, ns, rs, list(map(add, rs, lengths)))))
    if count:
        edits = runs.edits(text, [(m.start(), m.end(), m.lastindex) for m in runs.regex.finditer(text)])
        if edits:
            new_text, omap = _apply_edits(text, edits)
            return View(new_text, (*maps, omap))
    return View(text, maps) if lowered is None else lowered


@dataclass(frozen=True, slots=True)
class _SkipRuns:
    """Finds what `_skip_re` finds in a lowered text, in one pass of Python's `re` over the text instead of
    one RE2 call per run (~2 us each: most of the compact view on Chinese prose, whose Faker sentences end
    in ASCII '.'). `re` has lookbehind, so a match is the run alone, and two runs around one letter ("代 考
    试") need no resumed search. Letters are RE2's `\\pL` (the tables may differ from Python's): next to an
    ASCII letter or a CJK ideograph a run matches directly; next to any other non-ASCII character it
    matches in a group of `verify` and stays only if RE2 calls both neighbours letters. Where rules/_compact.c
    was built, it finds the same runs in C from `chars` and `cjk_letters`, and this regex is not used."""

    chars: str  # the skip characters, for rules._compact
    cjk_letters: bool  # RE2 calls every unified ideograph a letter (`_plain_letters`)
    regex: re.Pattern[str]
    verify: frozenset[int]  # groups: runs whose neighbours RE2 must confirm as letters
    fold: int  # group: a space run folded to one space
    split: Callable[[str], list[Any]]  # `regex` in one more group, around the whole run: its split (str or None)

    def edits(self, text: str, found: list[tuple[int, int, int | None]]) -> list[tuple[int, int, str]]:
        """(start, end, replacement) of the runs in `found` (start, end, matched group)."""
        verify = self.verify
        return [
            (a, b, " " if g == self.fold else "")
            for a, b, g in found
            if g not in verify or (_is_letter(text[a - 1]) and _is_letter(text[b]))
        ]


@functools.cache
def _skip_runs(skip_chars: str, max_skip: int) -> _SkipRuns | None:
    """The lowered view keeps no control whitespace, so its only whitespace is the space (`_skip_re`'s
    `\\s`). A run is then decided by the characters around it alone, since skip characters are neither letters
    nor ideographs; None when one is, and `_compact_re2` applies."""
    k = max(0, max_skip)
    skip = set(skip_chars) - set(_CONTROL_WS)
    if any(_is_letter(c) or re.fullmatch(f"[{CJK_CLASS}]", c) for c in skip):
        return None
    nonspace = skip - {" "}
    alts = []
    verify = 0  # the group of runs RE2 must confirm, if any; the folded space runs' group follows it
    if skip and k:
        alts.append(f"(?<=[{CJK_CLASS}][{_py_chars(skip)}])[{_py_chars(skip)}]{{0,{k - 1}}}(?=[{CJK_CLASS}])")
    if nonspace and k:
        ns, run, known = _py_chars(nonspace), f"[{_py_chars(nonspace)}]{{0,{k - 1}}}", _plain_letters()
        alts.append(f"(?<=[{known}][{ns}]){run}(?=[{known}])")
        alts.append(f"(?<=[{_MAYBE_LETTER}][{ns}])({run})(?=[{_MAYBE_LETTER}])")
        verify = 1
    alts.append("(?<= )( +)")
    # The first character of a run, consumed, then the alternatives of `_skip_re` in its order, each looking
    # back past that character; `re` skips to the next possible first character in C.
    pattern = f"[{_py_chars(skip | {' '})}](?:{'|'.join(alts)})"
    return _SkipRuns("".join(sorted(skip)), _plain_letters() != "A-Za-z", re.compile(pattern),
                     frozenset({verify} - {0}), verify + 1, re.compile(f"({pattern})").split)


_MAYBE_LETTER = "A-Za-z\u0080-\U0010ffff"


def _py_chars(chars: str | set[str]) -> str:
    return "".join(_py_esc(ord(c)) for c in sorted(chars))


@functools.cache
def _plain_letters() -> str:
    """ASCII letters, and the CJK unified ideographs if RE2's tables call every one of them a letter: runs
    next to these need no RE2 call."""
    cjk = "".join(map(chr, (*range(0x3400, 0x4DC0), *range(0x4E00, 0xA000))))
    whole = re2.compile("\\A\\pL+\\z", _re2_opts())
    return "A-Za-z\u3400-\u4dbf\u4e00-\u9fff" if found_in(whole, cjk.encode()) else "A-Za-z"


@functools.lru_cache(maxsize=4096)
def _is_letter(c: str) -> bool:
    """Whether RE2's `\\pL` matches the character `c`."""
    return found_in(_letter_re(), c.encode("utf-8", "surrogatepass"))


@functools.cache
def _letter_re() -> Any:
    return re2.compile("\\A\\pL\\z", _re2_opts())


def _compact_re2(low: View, config: NormalizeConfig) -> View:
    """`compact_of` by RE2 over the lowered view's bytes, one search per run: for skip characters that are
    letters or ideographs."""
    maps, data = low.maps, low.data
    rx = _skip_re(config.skip_chars, config.max_skip)
    match = rx._regexp.Match
    end = len(data)
    spans = match(_UNANCHORED, data, 0, end)
    if spans[0][0] < 0:
        return low
    # Edits are made on the UTF-8 bytes and the map is kept in bytes: no byte -> character conversion per
    # edit (texts with many skip runs paid for one per edit), only per finding, in _ByteMap.
    out: list[bytes] = []
    ns: list[int] = []
    ne: list[int] = []
    rs: list[int] = []
    re_: list[int] = []
    pos = shift = 0
    while spans[0][0] >= 0:
        a, b = spans[0]
        if data[a] in _SPACE_BYTES:
            rep, resume = b" ", b
        else:
            # letter/ideograph, skip run, letter/ideograph: drop the run; resume at the closing character,
            # which may open the next run ("代 考 试").
            lead = data[a]
            a += 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
            b -= 1
            while data[b] & 0xC0 == 0x80:
                b -= 1
            rep, resume = b"", b
        out.append(data[pos:a])
        out.append(rep)
        rs.append(a)
        re_.append(b)
        n = a + shift
        ns.append(n)
        ne.append(n + len(rep))
        shift += len(rep) - (b - a)
        pos = b
        spans = match(_UNANCHORED, data, resume, end)
    out.append(data[pos:])
    new_data = b"".join(out)
    new_text = new_data.decode("utf-8", "surrogatepass")
    child = None if len(new_data) == len(new_text) else ByteIndex(new_text, new_data)
    parent = low.index
    bmap = _ByteMap(child, parent, OffsetMap(ns, ne, rs, re_))
    return View(new_text, (*maps, bmap), new_data, child)


def compact_view(raw: str, config: NormalizeConfig) -> View:
    return compact_of(base_view(raw, config), config)


def normalize_literal(word: str, config: NormalizeConfig) -> str:
    """A listed word in the form it takes in the compact view (so lists match what texts become)."""
    return compact_view(word, config).text


class Views:
    """The views of one raw text, each built on first use: `base` (PII), `lowered` (word prefilters) and
    `compact` (word lists and patterns, built from `lowered`)."""

    __slots__ = ("_base", "_compact", "_lowered", "config", "raw")

    def __init__(self, raw: str, config: NormalizeConfig) -> None:
        self.raw = raw
        self.config = config
        self._base: View | None = None
        self._lowered: View | None = None
        self._compact: View | None = None

    @classmethod
    def unchanged(cls, raw: str, config: NormalizeConfig, data: bytes | None = None) -> Views:
        """Views of a text known to hold no character of `changing_chars` (its base view is itself): the
        same views `Views(raw, config)` builds, without searching the text for characters to rewrite.
        `data`: the text's UTF-8 bytes, when the caller has them."""
        views = cls.__new__(cls)
        views.raw = raw
        views.config = config
        views._base = View(raw, (), data)
        views._lowered = views._compact = None
        return views

    @property
    def base(self) -> View:
        if self._base is None:
            self._base = base_view(self.raw, self.config)
        return self._base

    @property
    def lowered(self) -> View:
        if self._lowered is None:
            self._lowered = lowered_of(self.base)
        return self._lowered

    @property
    def has_compact(self) -> bool:
        """Whether the compact view is built already (a prefilter that would spare building it is moot)."""
        return self._compact is not None

    @property
    def compact(self) -> View:
        if self._compact is None:
            # Not through `lowered`: the compact view needs the lowered text, not its UTF-8 bytes.
            self._compact = compact_of(self.base, self.config, self._lowered)
        return self._compact
