"""Rule patterns: user RE2 regexes over the compact view, many at once (DESIGN section 3).

All patterns go into one `re2.Set` (a single linear pass says which ones match), then only those run
`finditer` for spans. Patterns are compiled case-insensitively because the compact view is case-folded.
RE2 is the only engine: a pattern RE2 cannot compile (backreferences, lookaround, a program over 64 MiB) is a
load-time `RuleFileError` naming the file and the rule; RE2 runs everything it accepts in linear time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import re2

from rules.errors import RuleFileError
from rules.findings import Finding, new_finding
from rules.normalize import SET_SENTINEL, Views, iter_matches, set_hits
from rules.pii import re2_options
from rules.prefix import max_width, prefix_closure


@dataclass(frozen=True, slots=True)
class PatternRule:
    rule: str
    category: str
    pattern: str
    source: str = "<memory>"  # file the pattern came from, for errors


def _reason(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else exc
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)


def pattern_options() -> re2.Options:
    opts = re2_options()
    opts.case_sensitive = False
    return opts


def compile_pattern(rule: PatternRule) -> re2._Regexp:
    """Compile with RE2 or raise a RuleFileError that names file, rule and field."""
    try:
        regexp = re2.compile(rule.pattern, pattern_options())
    except re2.error as exc:
        raise RuleFileError(
            rule.source, f"RE2 cannot compile this pattern ({_reason(exc)}); RE2 has no backreferences or "
            "lookaround, which is what keeps matching linear", rule=rule.rule, field="pattern",
        ) from None
    if regexp.search("") is not None:
        raise RuleFileError(rule.source, "pattern matches the empty string", rule=rule.rule, field="pattern")
    return regexp


# The prefilter in front of the per-pattern searches. RE2's FilteredRE2 (re2.Filter) reduces every pattern to
# literal atoms, at least one of which each match contains, and matches the atoms as one case-insensitive
# literal Set: measured inside the whole scan (builtin + 10,000 words + 100 patterns), ~7-10 us per 1 KB text
# less than the Set of the patterns themselves, whose DFA (`.{0,4}`, `\b`, counted repeats in 100 patterns
# at once) is large. The atoms Set has no fail-closed sentinel: a Set's DFA (many-match) never bails out for
# being slow, it fails only when its memory budget (8 MiB in the binding) cannot hold a single state, which a
# literal Set of at most FILTER_MAX_CHARS bytes of atoms is far from. Patterns without any atom run on every
# text, so the Filter is used only when at most FILTER_MAX_UNFILTERED have none. Otherwise: the Set.
FILTER_MAX_CHARS = 20_000
FILTER_MAX_UNFILTERED = 4


def _atom_filter(rules: Sequence[PatternRule]) -> re2.Filter | None:
    if not rules or sum(len(r.pattern.encode("utf-8")) for r in rules) > FILTER_MAX_CHARS:
        return None
    flt = re2.Filter()
    try:
        for r in rules:
            flt.Add(r.pattern, pattern_options())
        flt.Compile()
    except re2.error:
        return None
    unfiltered = flt.Match(b"", potential=True) or []
    return flt if len(unfiltered) <= FILTER_MAX_UNFILTERED else None


class PatternDetector:
    def __init__(self, rules: Sequence[PatternRule]) -> None:
        self.rules = tuple(rules)
        self._regexes = [compile_pattern(r) for r in self.rules]
        self._set: re2.Set | None = None
        if self.rules:
            self._set = re2.Set.SearchSet(pattern_options())
            for r in self.rules:
                try:
                    self._set.Add(r.pattern)
                except re2.error as exc:
                    msg = f"RE2 Set rejected it: {_reason(exc)}"
                    raise RuleFileError(r.source, msg, rule=r.rule, field="pattern") from None
            self._sentinel = self._set.Add(SET_SENTINEL)
            try:
                self._set.Compile()
            except re2.error as exc:
                msg = f"RE2 Set failed to compile: {_reason(exc)}"
                raise RuleFileError(self.rules[0].source, msg) from None
        self._filter = _atom_filter(self.rules)
        self.widths = tuple(max_width(r.pattern) for r in self.rules)
        self.closures = tuple(prefix_closure(r.pattern) for r in self.rules)

    @property
    def name(self) -> str:
        return "patterns"

    @property
    def max_match_len(self) -> int | None:
        if any(w is None for w in self.widths):
            return None
        return max((w for w in self.widths if w is not None), default=0)

    def detect_views(self, views: Views) -> list[Finding]:
        if self._set is None:
            return []
        view = views.compact
        data = view.data
        if self._filter is not None:
            hits = self._filter.Match(data, potential=True)
        else:
            hits = set_hits(self._set, self._sentinel, len(self.rules), data)
        if not hits:
            return []
        out: list[Finding] = []
        for i in hits:
            rule = self.rules[i]
            for spans in iter_matches(self._regexes[i], data):
                s, e = spans[0]
                if s == e:
                    continue
                start, end = view.raw_span_bytes(s, e)
                out.append(new_finding("pattern", rule.category, start, end, rule.rule, 1.0, None))
        return out
