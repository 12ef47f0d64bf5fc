"""Core values shared by every detector, the policy and the proxy: findings, actions, the Detector and
FindingFilter protocols."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

import re2


class Action(StrEnum):
    """What the policy does with a finding, ordered by severity (see `SEVERITY`)."""

    ALLOW = "allow"
    ANNOTATE = "annotate"
    MASK = "mask"
    PSEUDONYMIZE = "pseudonymize"
    BLOCK = "block"


SEVERITY: dict[Action, int] = {
    Action.ALLOW: 0,
    Action.ANNOTATE: 1,
    Action.MASK: 2,
    Action.PSEUDONYMIZE: 3,
    Action.BLOCK: 4,
}


def strongest(actions: Sequence[Action]) -> Action:
    """The most severe of `actions`; `allow` when there are none."""
    return max(actions, key=SEVERITY.__getitem__, default=Action.ALLOW)


@dataclass(frozen=True, slots=True)
class Finding:
    """One match in a text. `start`/`end` are Python string indices into the raw (un-normalized) text."""

    kind: str  # detector kind: "cn_resident_id", "bank_card", "word", "pattern", "semantic", ...
    category: str  # "pii", "secret", or a word/semantic category such as "exam_fraud"
    start: int
    end: int
    rule: str  # id of the rule that produced it
    score: float = 1.0  # confidence in [0, 1]
    valid: bool | None = None  # checksum verdict: True passed, None no checksum exists (False never surfaces)


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_safe(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD. JSON lets a client escape one ("\\ud800"), and UTF-8 cannot hold it:
    RE2 and SentencePiece, which take UTF-8, raise on it. One character for another keeps every offset, so a detector
    that reads the safe text reports offsets of the raw one."""
    return _SURROGATE.sub("\ufffd", text) if not text.isascii() and _SURROGATE.search(text) else text


@runtime_checkable
class Detector(Protocol):
    """A plug-in point: anything that finds things in text (PII kinds, word lists, patterns, the model)."""

    @property
    def name(self) -> str: ...

    @property
    def max_match_len(self) -> int | None:
        """Longest raw match this detector can produce, or None when unbounded (drives stream hold-back)."""
        ...

    def detect(self, text: str) -> Sequence[Finding]: ...


@dataclass(frozen=True, slots=True)
class SpanDetector:
    """A Detector over a function that finds spans in a text: each span one finding of `kind`, `category` and `rule`
    (the model-free injection signatures, rules/addressed.py and rules/smuggled.py). Unbounded matches: requests
    only, never the stream."""

    name: str
    kind: str
    category: str
    rule: str
    spans: Callable[[str], Sequence[tuple[int, int]]]

    @property
    def max_match_len(self) -> int | None:
        return None

    def detect(self, text: str) -> Sequence[Finding]:
        return [Finding(kind=self.kind, category=self.category, start=a, end=b, rule=self.rule)
                for a, b in self.spans(text)]


def first_spans(pattern: re2._Regexp, readable: str, limit: int,
                unless: Callable[[str], bool] | None = None) -> list[tuple[int, int]]:
    """[start, end) of the first `limit` matches of `pattern` in `readable` (a text as a signature reads it: folded, one
    character for one, so offsets hold for the raw text), but those whose matched text `unless` sets aside (an obeying
    verb said in the negative)."""
    out: list[tuple[int, int]] = []
    for m in pattern.finditer(readable):
        if unless is not None and unless(m.group(0)):
            continue
        out.append((m.start(), m.end()))
        if len(out) == limit:
            break
    return out


def alternatives(parts: Sequence[str], *, max_mem: int | None = None) -> re2._Regexp:
    """One case-insensitive RE2 pattern matching any of `parts` (the model-free signatures' forms); `max_mem` raises
    RE2's budget for a pattern whose lazy DFA outgrows the default 8 MiB."""
    options = re2.Options()
    options.case_sensitive = False
    if max_mem is not None:
        options.max_mem = max_mem
    return re2.compile("|".join(f"(?:{p})" for p in parts), options)


@runtime_checkable
class FindingFilter(Protocol):
    """Runs after all detectors on the raw text and their findings; may drop, add or re-score findings
    (the semantic fusion plugs in here). Must be pure: the stream scanner calls it on windows of the text."""

    def __call__(self, text: str, findings: Sequence[Finding]) -> Sequence[Finding]: ...


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[object, object], None], ...]:
    return tuple(cls.__dict__[n].__set__ for n in names)


_new = object.__new__
_F_KIND, _F_CATEGORY, _F_START, _F_END, _F_RULE, _F_SCORE, _F_VALID = _slot_setters(
    Finding, ("kind", "category", "start", "end", "rule", "score", "valid")
)


def new_finding(kind: str, category: str, start: int, end: int, rule: str, score: float,
                valid: bool | None) -> Finding:
    """`Finding(...)` for the detectors' hot loops: fills the slots directly instead of through the frozen
    dataclass `__init__` (one `object.__setattr__` lookup per field): 0.75 us instead of 1.2-1.6 us, and a
    scan makes several per text. The result is an ordinary, equal, frozen Finding."""
    f = _new(Finding)
    _F_KIND(f, kind)
    _F_CATEGORY(f, category)
    _F_START(f, start)
    _F_END(f, end)
    _F_RULE(f, rule)
    _F_SCORE(f, score)
    _F_VALID(f, valid)
    return f
