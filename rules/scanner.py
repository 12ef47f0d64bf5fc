"""The Scanner: an immutable compiled rule set that scans one text and decides what to do with each finding.

    scanner = Scanner.load(["site.yaml"])          # builtin packs + site rules, compiled once
    result = scanner.scan(text)                     # findings, decisions, strongest action
    masking.apply(text, result, vault)              # rewritten text

Order per text: PII detectors (base view), word lists and patterns (compact view), plug-in detectors (raw
text), then the finding filters (semantic fusion), then per-rule `min_score`, then overlapping PII findings
are ranked (higher score, then a passed checksum, then the longer span, then the detector order). A PII
finding with the very span of a stronger one is another reading of the same value (an 18-digit number that
is both a valid ID and a valid card): it is dropped, reported once. One inside the span of a stronger one
whose checksum passed is part of that value (digit groups of an IBAN that read as a phone number, the IPv4
tail of an IPv6 address): it is not reported, never blocks, but is kept in `ScanResult.covered` and masked
all the same, as the stronger value's mask format may show its characters. Any other overlap is distinct
values sharing characters (an ID that starts an e-mail address, a card number inside one): all are
reported, and masking covers the union of their spans (rules/masking.py). Then one Decision per finding.
A Scanner is never mutated after construction, so one instance is shared by every thread and request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from rules.errors import RuleFileError
from rules.findings import SEVERITY, Action, Detector, Finding, FindingFilter
from rules.loader import LoadedRules, RuleEntry, load
from rules.normalize import _UNANCHORED, SET_SENTINEL, Views, warm_up
from rules.patterns import PatternDetector, PatternRule
from rules.pii import BUILTIN_SPECS, PiiDetector, re2_options
from rules.policy import Decision, MaskSpec, RulePolicy, decide, policy_for
from rules.wordlist import WordListDetector, WordRule

__all__ = ["FindingFilter", "ScanResult", "Scanner"]

# 2: overlapping PII findings are all masked, partial overlaps reported; more written forms of cn_mobile.
# 3: a card before another number, values glued to found ones, digits after an e-mail's TLD (rules/pii.py).
ENGINE_VERSION = "warden-rules/3"
# Hold-back cap for detectors without a bound (unbounded rule patterns, plug-ins without max_match_len).
UNBOUNDED_CAP = 256

_PII_PRIORITY = {s.kind: i for i, s in enumerate(BUILTIN_SPECS)}
_PII_CATEGORIES = frozenset(("pii", "secret"))
_REWRITES = frozenset((Action.MASK, Action.PSEUDONYMIZE))


def _pii_rank(f: Finding) -> tuple[float, bool, int, int]:
    return (-f.score, f.valid is not True, f.start - f.end, _PII_PRIORITY.get(f.kind, 99))


def _position(f: Finding) -> tuple[int, int, str]:
    return (f.start, f.end, f.rule)


@dataclass(frozen=True, slots=True)
class ScanResult:
    findings: tuple[Finding, ...]
    decisions: tuple[Decision, ...]
    action: Action
    rules_hit: tuple[str, ...]
    # Decisions on PII findings inside a stronger finding's span (see the module docstring): not reported,
    # never blocking, but their mask or pseudonym applies where the stronger finding's format would show them.
    covered: tuple[Decision, ...] = ()

    @property
    def alert(self) -> bool:
        return any(d.alert for d in self.decisions)

    @property
    def blocked(self) -> bool:
        return self.action is Action.BLOCK


EMPTY_RESULT = ScanResult((), (), Action.ALLOW, ())

RE2Match = Callable[[Any, bytes, int, int], list[tuple[int, int]]]  # the binding's RE2.Match


@dataclass(frozen=True, slots=True)
class WindowProbe:
    """What a stream window is asked, for a scanner whose windows are answered from their UTF-8 bytes alone
    (`Scanner.bytes_only_windows`): the RE2 binding's own match functions, which the stream scanner calls
    once per streamed event (rules/stream.py), where every Python call in between costs.

    `tail` (None: nothing is ever held back) answers what to hold back, through `held_chars`. `set_hits` is
    the window Set, `Scanner.scan_window`'s first step: when it returns only `sentinel`, nothing at all is
    in the bytes, and `scan_window` has no finding either."""

    tail: RE2Match | None
    set_hits: Callable[[bytes], list[int]]
    sentinel: int
    # Answers already given, by unreleased text (rules/stream.py fills it): both questions, asked of the
    # unreleased text alone, depend on nothing else (neither pattern looks at context: no ^, \b or lookbehind
    # in the PII closures and word tails; the Set is given the unreleased bytes only). A stream's unreleased
    # text is mostly one token, often with a short held tail, and tokens repeat across streams: live, the two
    # RE2 calls cost ~11 us of a ~14 us feed (their automata are evicted between events), a lookup ~0.2 us.
    answers: dict[str, ProbeAnswer] = field(default_factory=dict)


@dataclass(slots=True)
class ProbeAnswer:
    """What a `WindowProbe` said about one unreleased text: `held` characters at its end could still grow into
    a match; `clear`: the window Set found nothing in it (None: not asked yet)."""

    held: int
    clear: bool | None = None


def held_chars(tail: RE2Match, data: bytes, n: int, from_byte: int = 0) -> int:
    """Characters at the end of a base view (UTF-8 `data`, `n` characters) that could still grow into a match
    of `tail` (the PII closures and word tails, followed by \\z), 0 for none. With `from_byte`, only suffixes
    starting at or after that byte count; the bytes before it stay visible to the search as context."""
    start = tail(_UNANCHORED, data, from_byte, len(data))[0][0]
    if not 0 <= start < len(data):
        return 0
    # Counted from the end: the held tail is short, and decoding it is cheaper than a byte -> character
    # conversion from the window's start (RE2 over UTF-8 starts matches on character boundaries).
    return len(data) - start if len(data) == n else len(data[start:].decode("utf-8", "surrogatepass"))


def _mask_spec(fields: Mapping[str, Any]) -> MaskSpec | None:
    if "mask_pattern" in fields:
        return MaskSpec("pattern", pattern=fields["mask_pattern"])
    mask = fields.get("mask", "default")
    if mask == "default":
        return None
    if mask == "full":
        return MaskSpec("keep", 0, 0)
    if "replace" in mask:
        return MaskSpec("replace", text=mask["replace"])
    return MaskSpec("keep", first=mask.get("keep_first", 0), last=mask.get("keep_last", 0))


def _policy(entry: RuleEntry) -> RulePolicy:
    f = entry.fields
    default = Action.MASK if entry.type == "pii" else Action.BLOCK
    level = f.get("level")
    if level is None and "action" not in f and entry.type != "pii":
        level = 2  # fail closed: a word or pattern rule without a level blocks
    return policy_for(entry.rule, level=level, action=f.get("action"), mask=_mask_spec(f),
                      min_score=f.get("min_score", 0.5), default=default, reply=f.get("reply"))


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


class Scanner:
    """Immutable compiled rules. Build with `Scanner.load(...)`; share freely across threads."""

    def __init__(self, rules: LoadedRules, *, extra_detectors: Sequence[Detector] = (),
                 filters: Sequence[FindingFilter] = ()) -> None:
        self.rules = rules
        self.config = rules.normalize
        warm_up(self.config)
        enabled = [e for e in rules.entries if e.fields.get("enabled", True)]
        self._policies: dict[str, RulePolicy] = {e.rule: _policy(e) for e in enabled}
        self._min_scores = {rule: p.min_score for rule, p in self._policies.items()}
        self._category_policy: dict[str, RulePolicy] = {}
        for e in enabled:
            if e.type != "pii":
                self._category_policy.setdefault(e.fields.get("category", e.rule), self._policies[e.rule])
        # A plug-in detector's own categories (a user's semantic categories) take the level of their category
        # file unless a rule file's word or pattern rule of that category gives them a policy (set above).
        for det in extra_detectors:
            for category, level in getattr(det, "default_levels", {}).items():
                self._category_policy.setdefault(category, policy_for(f"semantic.{category}", level=level,
                                                                      action=None))
        pii_rule_of = {e.fields["kind"]: e.rule for e in enabled if e.type == "pii"}
        self._pii = PiiDetector([s for s in BUILTIN_SPECS if s.kind in pii_rule_of], pii_rule_of)
        self._words = WordListDetector(
            [WordRule(e.rule, e.fields.get("category", e.rule), e.fields["words"], e.fields.get("allow", ()))
             for e in enabled if e.type == "words"],
            self.config,
        )
        self._patterns = PatternDetector(
            [PatternRule(e.rule, e.fields.get("category", "custom"), e.fields["pattern"], e.source)
             for e in enabled if e.type == "pattern"]
        )
        self._patterns_need_compact = bool(self._patterns.rules)
        self._extra = tuple(extra_detectors)
        self._filters = tuple(filters)
        self._build_holdback()
        self._build_window_set()
        self._build_window_probe()
        digest = hashlib.sha256(ENGINE_VERSION.encode())
        digest.update(json.dumps(_jsonable({
            "normalize": [
                self.config.traditional_to_simplified, self.config.skip_chars, self.config.max_skip
            ],
            "rules": [[e.rule, e.type, e.fields] for e in rules.entries],
            "extra": [d.name for d in self._extra],
        }), sort_keys=True, ensure_ascii=False).encode())
        self._version = digest.hexdigest()[:16]

    @classmethod
    def load(cls, paths: Sequence[str | Path] = (), *, builtin: bool = True,
             extra_detectors: Sequence[Detector] = (), filters: Sequence[FindingFilter] = ()) -> Scanner:
        """Load, validate and compile the builtin packs (unless `builtin=False`) and `paths`, in order.
        Raises RuleFileError (file, rule, field) on any problem, and on an empty policy (fail closed)."""
        rules = load(paths, builtin=builtin)
        if not any(e.fields.get("enabled", True) for e in rules.entries) and not extra_detectors:
            where = ", ".join(rules.sources) or "<no files>"
            raise RuleFileError(where, "no enabled rules: an empty policy would pass everything")
        return cls(rules, extra_detectors=extra_detectors, filters=filters)

    # -- identity -------------------------------------------------------------------------------------

    @property
    def version(self) -> str:
        """Stable digest of the loaded rules (and plug-in detector names), for telemetry and audit."""
        return self._version

    @property
    def rule_ids(self) -> tuple[str, ...]:
        return tuple(self._policies)

    def policy(self, rule: str) -> RulePolicy | None:
        return self._policies.get(rule)

    def policy_of(self, finding: Finding) -> RulePolicy | None:
        """The policy `scan` applies to a finding: its rule's, else its category's (a plug-in detector's
        `semantic.<category>` findings take the word list's policy)."""
        return self._policies.get(finding.rule) or self._category_policy.get(finding.category)

    # -- scanning -------------------------------------------------------------------------------------

    def scan(self, text: str) -> ScanResult:
        return self.scan_from(text, 0)

    def scan_from(self, text: str, start: int, views: Views | None = None) -> ScanResult:
        """Scan `text` but keep only findings that start at or after `start` (the stream scanner passes
        already released text as left context, so boundaries and context words see it)."""
        if not text:
            return EMPTY_RESULT
        if views is None:
            views = Views(text, self.config)
        findings = self._pii.detect_views(views)
        if self._patterns_need_compact:
            views.compact  # noqa: B018 -- patterns need it anyway: the word prefilter would be wasted work
        findings += self._words.detect_views(views)
        findings += self._patterns.detect_views(views)
        return self._finish(text, start, findings)

    def scan_window(self, text: str, start: int, views: Views) -> ScanResult:
        """`scan_from` for a stream's window (released context + unreleased text, ~100 characters): the same
        findings, with the PII kinds' prefilters and the word list's prefilter run as ONE re2.Set over the
        base view instead of two searches (an RE2 call costs ~0.8 us in the binding alone, more than the
        matching on a window). Falls back to `scan_from` where that Set is not built (no PII kinds, a word
        list without a prefilter, or rule patterns: they need the compact view anyway)."""
        wset = self._window_set
        if wset is None or not text:
            return self.scan_from(text, start, views)
        view = views.base
        raw_hits = self._window_match(view.data)  # the binding's Set directly: its wrapper adds a Python call
        sentinel = self._window_sentinel
        if raw_hits and len(raw_hits) == 1 and raw_hits[0] == sentinel:  # the common case: nothing at all
            return self._finish(text, start, []) if self._extra or self._filters else EMPTY_RESULT
        if not raw_hits or sentinel not in raw_hits:
            hits = list(range(self._window_words + 1))  # the Set failed (out of memory): run everything
        else:
            hits = sorted(i for i in raw_hits if i != sentinel)
        if hits and hits[-1] == self._window_words:
            findings = self._pii.detect_hits(view, hits[:-1]) if len(hits) > 1 else []
            findings += self._words.detect_views(views, prefiltered=True)
        elif hits:
            findings = self._pii.detect_hits(view, hits)
        else:
            findings = []
        return self._finish(text, start, findings)

    def _finish(self, text: str, start: int, findings: list[Finding]) -> ScanResult:
        if not findings and not self._extra and not self._filters:
            return EMPTY_RESULT
        for det in self._extra:
            findings.extend(det.detect(text))
        for flt in self._filters:
            findings = list(flt(text, findings))
        if start:
            findings = [f for f in findings if f.start >= start]
        if not findings:
            return EMPTY_RESULT
        return self._decide(self._resolve(findings))

    def _build_window_set(self) -> None:
        self._window_set: Any = None
        self._window_sentinel = -1
        self._window_words = len(self._pii.specs)  # the word prefilter's index in the Set
        words = self._words.prefilter_pattern
        if not self._pii.specs or words is None or self._patterns_need_compact:
            return
        wset = re2.Set.SearchSet(re2_options())
        for spec in self._pii.specs:
            wset.Add(spec.prefilter)
        wset.Add(words)
        self._window_sentinel = wset.Add(SET_SENTINEL)
        wset.Compile()
        self._window_set = wset
        self._window_match = wset._set.Match

    def _resolve(self, findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
        """The findings to report, in text order, and the covered ones (see the module docstring)."""
        mins = self._min_scores
        if self._extra or self._filters:
            findings = list(dict.fromkeys(findings))  # plug-ins may repeat a finding; ours never do
        kept = [f for f in findings if f.score >= mins.get(f.rule, 0.5) and f.end > f.start]
        covered: list[Finding] = []
        pii = [f for f in kept if f.category in _PII_CATEGORIES]
        if len(pii) > 1:
            pii.sort(key=_pii_rank)
            reported: list[Finding] = []
            for f in pii:
                # Against reported findings only: a finding inside a covered one is inside that one's
                # container too, which is stronger still and passed its checksum.
                where: list[Finding] | None = reported
                for c in reported:
                    if c.start <= f.start and f.end <= c.end:
                        if c.start == f.start and c.end == f.end:
                            where = None
                            break
                        if c.valid is True:
                            where = covered
                            break
                if where is not None:
                    where.append(f)
            if len(reported) < len(pii):
                # By identity: findings are distinct here (ours never repeat, plug-ins' were deduplicated),
                # and hashing a Finding hashes all seven fields.
                keep = {id(f) for f in reported}
                kept = [f for f in kept if f.category not in _PII_CATEGORIES or id(f) in keep]
                covered.sort(key=_position)
        kept.sort(key=_position)
        return kept, covered

    def _decide(self, resolved: tuple[list[Finding], list[Finding]]) -> ScanResult:
        findings, covered = resolved
        policies = self._policies
        by_category = self._category_policy
        decisions = tuple([decide(f, policies.get(f.rule) or by_category.get(f.category)) for f in findings])
        severity = SEVERITY
        action = Action.ALLOW
        for d in decisions:
            if severity[d.action] > severity[action]:
                action = d.action
        hidden: tuple[Decision, ...] = ()
        if covered:
            hidden = tuple([decide(f, policies.get(f.rule) or by_category.get(f.category)) for f in covered])
            for d in hidden:
                # A covered finding is no value of its kind (it never blocks), but the text is rewritten for
                # it, and the verdict says so.
                if d.action in _REWRITES and severity[d.action] > severity[action]:
                    action = d.action
        return ScanResult(
            findings=tuple(findings),
            decisions=decisions,
            action=action,
            rules_hit=tuple(sorted({f.rule for f in findings})),
            covered=hidden,
        )

    # -- streaming support ------------------------------------------------------------------------------

    def _build_holdback(self) -> None:
        bounds: list[int] = [self._pii.max_match_len or 0, self._words.max_len]
        # One RE2 over the base view answers for the PII closures and, for lists with a prefilter, the word
        # lists (their fuzzy closure): one match call per streamed chunk, and no lowered or compact view.
        base_closures = [c for c in self._pii.closures if c is not None]
        self._words_tail_on_base = self._words.tail is not None
        if self._words.tail is not None:
            base_closures.append(self._words.tail)
        opts = re2_options()
        self._pii_tail = re2.compile(f"(?:{'|'.join(base_closures)})\\z", opts) if base_closures else None
        self._words_on_compact = bool(len(self._words)) and not self._words_tail_on_base
        skip = "".join(f"\\x{{{ord(c):x}}}" for c in sorted(set(self.config.skip_chars)))
        pat_closures = [c for c in self._patterns.closures if c is not None]
        self._pattern_tail = None
        if pat_closures:
            skip_run = f"[{skip}]{{0,{self.config.max_skip}}}" if skip else ""
            popts = re2_options()
            popts.case_sensitive = False
            self._pattern_tail = re2.compile(f"(?:{'|'.join(pat_closures)}){skip_run}\\z", popts)
        # Detectors we cannot see into hold back their whole bound.
        self._blind_hold = 0
        for width, closure in zip(self._patterns.widths, self._patterns.closures, strict=True):
            w = UNBOUNDED_CAP if width is None else width
            bounds.append(w)
            if closure is None:
                self._blind_hold = max(self._blind_hold, w - 1)
        for det in self._extra:
            bound = det.max_match_len
            w = UNBOUNDED_CAP if bound is None else bound
            bounds.append(w)
            self._blind_hold = max(self._blind_hold, w - 1)
        self._max_hold_back = max(0, max(bounds) - 1)

    @property
    def max_hold_back(self) -> int:
        """Longest bounded raw match minus 1 over all detectors (normalized characters; invisible characters
        inside a match come on top). Unbounded detectors count as UNBOUNDED_CAP."""
        return self._max_hold_back

    def viable_start(self, tail: str) -> int:
        """Index in `tail` where the shortest suffix begins that could still grow into a match; len(tail)
        when no suffix can. Used by the stream scanner to decide what to hold back."""
        return self.viable_start_views(Views(tail, self.config), 0) if tail else 0

    @property
    def bytes_only_windows(self) -> bool:
        """Whether a stream window that is its own base view is answered from its UTF-8 bytes alone
        (`window_probe`): PII kinds and word lists with a prefilter, no rule patterns, compact-view word
        lists, plug-in detectors or filters."""
        return self._window_probe is not None

    def _build_window_probe(self) -> None:
        self._window_probe: WindowProbe | None = None
        if (self._window_set is not None and self._pattern_tail is None and not self._words_on_compact
                and not self._extra and not self._filters):
            # No blind hold-back either: only rule patterns and plug-in detectors have one.
            tail = self._pii_tail._regexp.Match if self._pii_tail is not None else None
            self._window_probe = WindowProbe(tail, self._window_match, self._window_sentinel)

    @property
    def window_probe(self) -> WindowProbe | None:
        """The searches a stream window that is its own base view is asked, from its UTF-8 bytes alone (no
        Views object per streamed event); None unless `bytes_only_windows`."""
        return self._window_probe


    def viable_start_views(self, views: Views, lo: int) -> int:
        """Like `viable_start` on already normalized views of a text, never below raw index `lo` (the stream
        passes its whole window, released context included, so the views are built once per chunk)."""
        n = len(views.raw)
        q = max(lo, n - self._blind_hold) if self._blind_hold else n
        if self._pii_tail is not None:
            v = views.base
            held = held_chars(self._pii_tail._regexp.Match, v.data, len(v.text))
            if held:
                q = min(q, max(lo, v.raw_start(len(v.text) - held)))
        if self._pattern_tail is not None:
            compact = views.compact
            start = self._pattern_tail._regexp.Match(_UNANCHORED, compact.data, 0, len(compact.data))[0][0]
            if 0 <= start < len(compact.data):
                q = min(q, max(lo, compact.raw_start(compact.char_index(start))))
        if self._words_on_compact:
            compact = views.compact
            s = self._words.viable_start(compact)
            if s < len(compact.text):
                q = min(q, max(lo, compact.raw_start(s)))
        return q
