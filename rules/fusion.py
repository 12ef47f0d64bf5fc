"""Fusion of lexical and semantic findings: a FindingFilter that runs after every detector.

Policy (explicit, tested in tests/rules/test_fusion.py):

1. Semantic findings (kind "semantic") pass unchanged: a semantic hit blocks on its own, without any
   keyword, at its calibrated threshold (its score is >= 0.5 by construction). Rule ids are
   `semantic.<category>`; their default levels come from the category files (exam_fraud 2, drugs 2,
   fraud_scam 2, gambling 2, weapons 3; level 1 warn, 2 block, 3 block with alert). The category names
   are the builtin word-list categories, so a scanner without a `semantic.*` rule of its own can apply
   the word category's policy to them.
2. A lexical finding (kind in `clearable_kinds`, by default "word" and "pattern") whose category is judged
   by a semantic category is cleared, i.e. dropped, when the semantic context score of the windows around
   it is below `clear_below` (pass the detector's trained `clear_below`; 0.25 when unset): the keyword is
   there, the intent is not ("教育部严厉打击替考行为"). Between `clear_below` and 0.5 it is kept: the
   keyword plus a weak semantic signal stays a hit.
3. Rules listed in `never_clear` (e.g. level-3 words) are never cleared; neither are findings of other
   kinds (PII, secrets) or of categories no semantic category judges.
4. A finding of a category in `kept_where_text_opens` that opens the text (only whitespace and punctuation before
   it, no quotation mark) is not cleared: a stock override that opens the user's message is their own order, not a
   quotation of it (proxy/guard/semantic.py keeps `prompt_injection` so, since session 40).
5. Without a scorer (semantic stage off) the filter returns the findings unchanged.

`rules` never imports `models`: the scorer is anything implementing `ContextScorer` (the semantic
detector does), injected by the proxy or the CLI.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Protocol, runtime_checkable

from rules.findings import Finding

SEMANTIC_KIND = "semantic"
# What may stand before a hit that still opens the text: whitespace and punctuation, a quotation mark excepted
_OPENING_MARKS = " \t\r\n,.;:!?，。；：！？、-—*#>"
DEFAULT_CLEAR_BELOW = 0.25


@runtime_checkable
class ContextScorer(Protocol):
    def semantic_category(self, lexical_category: str) -> str | None:
        """The semantic category that judges a word-list category, or None."""
        ...

    def context_scores(self, text: str, start: int, end: int) -> Mapping[str, float]:
        """Scores in [0, 1] per semantic category around raw span [start, end); 0.5 is the decision."""
        ...


class Fusion:
    """FindingFilter: `__call__(text, findings) -> findings`, clearing keyword hits in benign context."""

    def __init__(self, scorer: ContextScorer | None, *, clear_below: float = DEFAULT_CLEAR_BELOW,
                 clearable_kinds: Collection[str] = ("word", "pattern"),
                 never_clear: Collection[str] = (),
                 kept_where_text_opens: Collection[str] = ()) -> None:
        if not 0.0 <= clear_below <= 0.5:
            raise ValueError(f"clear_below must be in [0, 0.5], got {clear_below}")
        self._scorer = scorer
        self.clear_below = clear_below
        self._kinds = frozenset(clearable_kinds)
        self._never = frozenset(never_clear)
        self._opening = frozenset(kept_where_text_opens)

    def __call__(self, text: str, findings: Sequence[Finding]) -> Sequence[Finding]:
        if self._scorer is None:
            return findings
        # where the text's opening marks end: a hit at or before it opens the text
        opening = len(text) - len(text.lstrip(_OPENING_MARKS)) if self._opening else -1
        kept: list[Finding] = []
        for f in findings:
            if self._clears(text, f, opening):
                continue
            kept.append(f)
        return kept

    def _clears(self, text: str, f: Finding, opening: int) -> bool:
        assert self._scorer is not None
        if f.kind not in self._kinds or f.rule in self._never:
            return False
        if f.category in self._opening and f.start <= opening:
            return False
        semantic = self._scorer.semantic_category(f.category)
        if semantic is None:
            return False
        score = self._scorer.context_scores(text, f.start, f.end).get(semantic, 0.0)
        return score < self.clear_below
