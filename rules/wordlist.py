"""Word lists: categories of literal words matched in one pass over the compact view (DESIGN section 3).

All words of all categories, normalized like texts are (NFKC, case fold, traditional -> simplified, skip
characters removed), go into ONE RE2 alternation compiled with leftmost-longest semantics and run over the
UTF-8 bytes; the matched text is looked up in a dict to find its rule. No per-word Python loop runs at scan
time. Measured (10,000 mixed CJK/Latin words, 1 KB mixed text, this machine): RE2 alternation on bytes
~4 us, RE2 Set on bytes ~3.5 us (but a Set gives no spans), RE2 alternation on str ~7 us (the wrapper
re-encodes and maps offsets); see bench/ for the integrated figures. pyahocorasick was ~2.5x slower than
RE2 in FACTS.md's measurement, so it is not used.

Words that start or end with an ASCII letter or digit need an ASCII boundary on that side ("ass" is not in
"class"); CJK words need none. An allow-list of benign phrases suppresses any word match that lies inside an
allow-phrase match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import re2

from rules.findings import Finding
from rules.normalize import NormalizeConfig, View, Views, iter_matches, normalize_literal
from rules.pii import re2_options

_ASCII_WORD = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True, slots=True)
class WordRule:
    rule: str
    category: str
    words: tuple[str, ...]
    allow: tuple[str, ...] = ()


class WordListDetector:
    """All word rules compiled into one alternation (plus one for the allow-list)."""

    def __init__(self, rules: Sequence[WordRule], config: NormalizeConfig) -> None:
        self._owner: dict[bytes, tuple[str, str]] = {}
        allow: set[str] = set()
        for r in rules:
            for w in r.words:
                n = normalize_literal(w, config)
                if n:
                    self._owner.setdefault(n.encode(), (r.rule, r.category))
            allow.update(a for a in (normalize_literal(a, config) for a in r.allow) if a)
        opts = re2_options(longest=True)
        self._re = self._alternation([w.decode() for w in self._owner], opts)
        self._allow = self._alternation(sorted(allow), opts)
        words = [w.decode() for w in self._owner]
        self.max_len = max((len(w) for w in (*words, *allow)), default=0)
        # Every prefix of every word or allow phrase: the stream holds back a tail only while it could still
        # grow into one of them.
        self._prefixes = frozenset(w[:i] for w in (*words, *allow) for i in range(1, len(w) + 1))
        self._skip = config.skip_chars
        self._max_skip = config.max_skip

    @staticmethod
    def _alternation(words: Sequence[str], opts: re2.Options) -> re2._Regexp | None:
        if not words:
            return None
        return re2.compile("|".join(re2.escape(w) for w in words), opts)

    @property
    def name(self) -> str:
        return "words"

    @property
    def max_match_len(self) -> int | None:
        return self.max_len

    def __len__(self) -> int:
        return len(self._owner)

    def detect_views(self, views: Views) -> list[Finding]:
        if self._re is None:
            return []
        view = views.compact
        data = view.data
        hits: list[tuple[int, int, str, str]] = []
        for spans in iter_matches(self._re, data):
            s, e = spans[0]
            word = data[s:e]
            if (word[0] in _ASCII_WORD and s > 0 and data[s - 1] in _ASCII_WORD) or (
                word[-1] in _ASCII_WORD and e < len(data) and data[e] in _ASCII_WORD
            ):
                continue
            rule, category = self._owner[word]
            hits.append((s, e, rule, category))
        if not hits:
            return []
        if self._allow is not None:
            allowed = [spans[0] for spans in iter_matches(self._allow, data)]
            if allowed:
                hits = [h for h in hits if not any(a <= h[0] and h[1] <= b for a, b in allowed)]
        return [self._finding(view, *h) for h in hits]

    @staticmethod
    def _finding(view: View, s: int, e: int, rule: str, category: str) -> Finding:
        start, end = view.raw_span(view.char_index(s), view.char_index(e))
        return Finding(kind="word", category=category, start=start, end=end, rule=rule, valid=None)

    def viable_start(self, view: View) -> int:
        """Index in `view.text` where the longest suffix that could still grow into a word begins."""
        text = view.text
        n = len(text)
        stripped = text.rstrip(self._skip)
        if n - len(stripped) > self._max_skip:
            stripped = text
        m = len(stripped)
        for k in range(min(self.max_len, m), 0, -1):
            if stripped[m - k :] in self._prefixes:
                return m - k
        return n
