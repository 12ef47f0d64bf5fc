"""Word lists: categories of literal words matched in one pass over the compact view (DESIGN section 3).

All words of all categories, normalized like texts are (NFKC, lower case, traditional -> simplified, skip
characters removed), go into ONE multi-pattern matcher; no per-word Python loop runs at scan time. Which
matcher is measured, not assumed (2 loaded cores; 1 KB mixed zh/en texts the matcher has not seen before):

    10,000 words  RE2 alternation, lazy DFA (64 MiB)   p50 86 us, p99 1,800 us; ~23/150 us once warm
                  RE2, DFA pre-built over the list      p50 12 us, p99 60 us alone, but +60 MiB, and inside
                  (256 MiB)                             the whole scan it was slower (p50 627 us vs 321 us:
                                                        the big DFA thrashes the CPU caches) and the
                                                        pre-build took up to 15 s
                  pyahocorasick (iter on str)           p50 37 us, p99 70 us, built up front (iter_long: 54/100)
                  ahocorasick-rs (Rust, ContiguousNFA,  12 us alone on bytes, 16 on str (pyahocorasick 47);
                  leftmost-longest)                     inside the whole scan ~180 us per text vs ~200 with
                                                        pyahocorasick or ahocorasick-rs's DFA
    ~150 words    RE2 alternation                       ~5 us: its DFA is small and warms at once

So: up to AHO_THRESHOLD words one RE2 alternation (leftmost-longest semantics) over the UTF-8 bytes; above
it ahocorasick-rs's automaton (leftmost-longest, non-overlapping) over the same bytes. Both return the same
matches (tested). Lists of up to PREFILTER_MAX words also get a fuzzy prefilter over the base view, so a
text none of them can match never builds the compact view (`fuzzy_prefilter`). Reproduce with
`.venv/bin/python -m bench.scan` (builtin vs builtin + 10,000 words).

Words that start or end with an ASCII letter or digit need an ASCII boundary on that side ("ass" is not in
"class"); CJK words need none. An allow-list of benign phrases suppresses any word match that lies inside an
allow-phrase match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import ahocorasick_rs
import re2

from rules.findings import Finding, new_finding
from rules.normalize import NormalizeConfig, View, Views, found_in, iter_matches, normalize_literal, utf8_chars
from rules.pii import re2_options

# ASCII letters and digits as byte values: in UTF-8 no byte of a multi-byte character is one of them, so
# testing the byte before/after a match tests the character before/after it.
_ASCII_WORD = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
AHO_THRESHOLD = 2_000
ALLOW_PRECOMPUTE_MAX = 200  # allow phrases; words x phrases substring tests at load
PREFILTER_MAX = 500  # words; a bigger fuzzy alternation grows a DFA that costs more than the view it saves


# Characters whose `str.lower()` is not one character (SpecialCasing: U+0130 -> "i" + U+0307). For every
# other character c, RE2's case-insensitive match of c.lower() accepts c (checked over all code points in
# tests/rules/test_wordlist.py).
LOWER_EXPANDS = "\u0130"


def fuzzy_prefilter(words: Sequence[str], config: NormalizeConfig) -> str:
    """An RE2 over the *base* view that matches wherever the compact view could contain one of `words`
    (compact forms). The compact view is the base view lower-cased, with control whitespace as spaces, and
    with skip characters and spaces removed or whitespace runs folded to one space; every other character
    keeps its position in order. So a word's non-space characters appear in order in the base view, each as
    a character whose lower case it is, with nothing but skip characters and whitespace between them:
    `(?i:c1[sep]*c2[sep]*...)` matches whenever the word can (RE2's case folding accepts every character
    whose `lower()` is the word's character; LOWER_EXPANDS, where that fails, always match). A superset,
    never a miss: a text it does not match builds neither the lowered nor the compact view (bench texts with
    the builtin pack: those views cost ~40 us per 1 KB, the prefilter ~3 us)."""
    seps = set(config.skip_chars) | set(" \t\n\r\f\v")
    sep = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in sorted(seps)) + "]*"
    alts = []
    for w in words:
        chars = [re2.escape(c) for c in w if c != " "]
        if chars:
            alts.append(sep.join(chars))
    alts.append("[" + "".join(f"\\x{{{ord(c):x}}}" for c in LOWER_EXPANDS) + "]")
    return "(?i:" + "|".join(alts) + ")"


def fuzzy_tail(words: Sequence[str], config: NormalizeConfig) -> str | None:
    """An RE2 over the *base* view for the stream hold-back: followed by `\\z`, it matches every suffix whose
    compact form could still grow into one of `words` (compact forms). The word list's exact question (is
    the compact view's tail, trailing skip characters stripped, a prefix of a word?) needs the compact view;
    this one is asked of the base view the PII closures run on, so a streamed chunk builds no other view.
    Same reasoning as `fuzzy_prefilter`: a prefix's non-space characters appear in order in the base view,
    case-folded, with only skip characters and whitespace between and after them; so each word contributes
    its prefix closure `c1(?:sep*c2(?:sep*c3)?)?` and the whole is followed by `sep*`. A superset, never a
    miss (more hold-back, never less; the stream caps it at `max_hold_back + 1`). None when a word contains
    U+0307: the only character RE2's case folding cannot reach (U+0130 lowers to "i" + U+0307) could then be
    inside a viable prefix."""
    if any("\u0307" in w for w in words):
        return None
    seps = set(config.skip_chars) | set(" \t\n\r\f\v")
    sep = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in sorted(seps)) + "]*"
    alts = []
    for w in dict.fromkeys(words):
        chars = [re2.escape(c) for c in w if c != " "]
        if not chars:
            continue
        closure = chars[-1]
        for c in reversed(chars[:-1]):
            closure = f"{c}(?:{sep}{closure})?"
        alts.append(closure)
    if not alts:
        return None
    return "(?i:(?:" + "|".join(alts) + ")" + sep + ")"


class _Matcher:
    """Leftmost-longest non-overlapping matches of a set of literals in a view's UTF-8 bytes, as (start, end,
    value) byte offsets, ascending: findings turn them into characters in one pass (`detect_views`)."""

    def __init__(self, literals: dict[str, tuple[str, str]]) -> None:
        self._literals = {w.encode("utf-8", "surrogatepass"): owner for w, owner in literals.items()}
        self._owners = list(self._literals.values())
        self._aho: ahocorasick_rs.BytesAhoCorasick | None = None
        self._re = None
        if len(literals) > AHO_THRESHOLD:
            # ContiguousNFA: the smallest automaton, so it stays in cache between texts while the rest of the
            # scan runs (measured inside the whole scan, 10,000 words: ~180 us per text vs ~200 for the DFA
            # and for pyahocorasick); over bytes: 12 us per 1 KB text alone vs 16 on str.
            self._aho = ahocorasick_rs.BytesAhoCorasick(
                list(self._literals), matchkind=ahocorasick_rs.MatchKind.LeftmostLongest,
                implementation=ahocorasick_rs.Implementation.ContiguousNFA,
            )
        elif literals:
            self._re = re2.compile("|".join(re2.escape(w) for w in literals), re2_options(longest=True))

    def __bool__(self) -> bool:
        return bool(self._literals)

    def matches(self, view: View) -> list[tuple[int, int, tuple[str, str]]]:
        if self._aho is not None:
            owners = self._owners
            return [(s, e, owners[i]) for i, s, e in self._aho.find_matches_as_indexes(view.data)]
        out: list[tuple[int, int, tuple[str, str]]] = []
        if self._re is not None:
            data = view.data
            literals = self._literals
            for spans in iter_matches(self._re, data):
                s, e = spans[0]
                out.append((s, e, literals[data[s:e]]))
        return out


@dataclass(frozen=True, slots=True)
class WordRule:
    rule: str
    category: str
    words: tuple[str, ...]
    allow: tuple[str, ...] = ()


class WordListDetector:
    """All word rules compiled into one alternation (plus one for the allow-list)."""

    def __init__(self, rules: Sequence[WordRule], config: NormalizeConfig) -> None:
        owner: dict[str, tuple[str, str]] = {}
        allow: dict[str, tuple[str, str]] = {}
        for r in rules:
            for w in r.words:
                n = normalize_literal(w, config)
                if n:
                    owner.setdefault(n, (r.rule, r.category))
            for a in r.allow:
                n = normalize_literal(a, config)
                if n:
                    allow.setdefault(n, (r.rule, "allow"))
        self._count = len(owner)
        self._words = _Matcher(owner)
        # Words that occur inside some allow phrase: only a hit on one of them can lie inside an allow match,
        # so texts without such a hit skip the allow pass. (None: too many phrases to precompute; always run.)
        self._allowable: frozenset[bytes] | None = None
        if len(allow) <= ALLOW_PRECOMPUTE_MAX:
            self._allowable = frozenset(
                w.encode("utf-8", "surrogatepass") for w in owner if any(w in a for a in allow)
            )
        self._prefilter = None
        self.prefilter_pattern: str | None = None  # the stream scanner folds it into one Set with the PII kinds
        if 0 < len(owner) <= PREFILTER_MAX:
            self.prefilter_pattern = fuzzy_prefilter(list(owner), config)
            self._prefilter = re2.compile(self.prefilter_pattern, re2_options())
        self._allow = _Matcher(allow)
        self.max_len = max((len(w) for w in (*owner, *allow)), default=0)
        # Every prefix of every word or allow phrase: the stream holds back a tail only while it could still
        # grow into one of them.
        # The same question over the base view, for lists small enough to have the prefilter (the compact
        # view is then rarely built while streaming): see `fuzzy_tail`.
        self.tail = fuzzy_tail([*owner, *allow], config) if self._prefilter is not None else None
        self._prefixes = frozenset(w[:i] for w in (*owner, *allow) for i in range(1, len(w) + 1))
        self._first = frozenset(w[0] for w in (*owner, *allow))
        self._skip = config.skip_chars
        self._max_skip = config.max_skip

    @property
    def name(self) -> str:
        return "words"

    @property
    def max_match_len(self) -> int | None:
        return self.max_len

    def __len__(self) -> int:
        return self._count

    def detect_views(self, views: Views, *, prefiltered: bool = False) -> list[Finding]:
        """Findings in `views`; `prefiltered`: the caller has run `prefilter_pattern` on the base view and
        it matched (the stream's Set), so it is not run again here."""
        if not self._words:
            return []
        if self._prefilter is not None and not prefiltered and not views.has_compact and not found_in(
            self._prefilter, views.base.data
        ):
            return []
        view = views.compact
        data = view.data
        n = len(data)
        hits: list[tuple[int, int, str, str]] = []
        for s, e, (rule, category) in self._words.matches(view):
            if (data[s] in _ASCII_WORD and s > 0 and data[s - 1] in _ASCII_WORD) or (
                data[e - 1] in _ASCII_WORD and e < n and data[e] in _ASCII_WORD
            ):
                continue
            hits.append((s, e, rule, category))
        if not hits:
            return []
        allowable = self._allowable
        if self._allow and (allowable is None or any(data[h[0] : h[1]] in allowable for h in hits)):
            allowed = [(a, b) for a, b, _ in self._allow.matches(view)]
            if allowed:
                hits = [h for h in hits if not any(a <= h[0] and h[1] <= b for a, b in allowed)]
        # Byte offsets to characters in one ascending pass over the hits (they do not overlap): ~5 us less per
        # hit than View.raw_span_bytes, whose conversions start over from a checkpoint each time.
        out = []
        ascii_view = len(data) == len(view.text)  # (View.index would build a ByteIndex to say no)
        b = c = 0
        for s, e, rule, category in hits:
            if ascii_view:
                cs, ce = s, e
            else:
                cs = c + utf8_chars(data, b, s)
                ce = cs + utf8_chars(data, s, e)
                b, c = e, ce
            start, end = view.raw_span(cs, ce)
            out.append(new_finding("word", category, start, end, rule, 1.0, None))
        return out

    def viable_start(self, view: View) -> int:
        """Index in `view.text` where the longest suffix that could still grow into a word begins."""
        text = view.text
        n = len(text)
        stripped = text.rstrip(self._skip)
        if n - len(stripped) > self._max_skip:
            stripped = text
        m = len(stripped)
        first = self._first
        prefixes = self._prefixes
        for j in range(max(0, m - self.max_len), m):  # leftmost first: the longest viable suffix
            if stripped[j] in first and stripped[j:m] in prefixes:
                return j
        return n
