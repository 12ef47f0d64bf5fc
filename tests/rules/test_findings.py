"""Findings: the fast constructors build the same frozen values as the dataclass constructors."""

from __future__ import annotations

import dataclasses

import pytest

from rules.findings import Action, Finding, alternatives, first_spans, new_finding
from rules.policy import DEFAULT_MASKS, Decision, RulePolicy, decide


def test_new_finding_equals_the_dataclass_constructor() -> None:
    args = ("bank_card", "pii", 3, 22, "pii.bank_card", 0.9, True)
    fast, slow = new_finding(*args), Finding(*args)
    assert fast == slow
    assert hash(fast) == hash(slow)
    assert repr(fast) == repr(slow)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.start = 0  # type: ignore[misc]


def test_decide_builds_ordinary_decisions() -> None:
    finding = Finding("cn_mobile", "pii", 0, 11, "pii.cn_mobile", 0.85, None)
    d = decide(finding, RulePolicy("pii.cn_mobile", Action.MASK, level=None))
    assert d == Decision(finding, Action.MASK, None, DEFAULT_MASKS["cn_mobile"], False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.action = Action.ALLOW  # type: ignore[misc]
    alert = decide(finding, RulePolicy("r", Action.BLOCK, level=3, alert=True))
    assert alert == Decision(finding, Action.BLOCK, 3, None, True)


def test_utf8_safe_replaces_lone_surrogates_one_for_one() -> None:
    from rules.findings import utf8_safe

    text = "a\ud800b 忽略\udfff"
    safe = utf8_safe(text)
    assert safe == "a\ufffdb 忽略\ufffd" and len(safe) == len(text)
    safe.encode("utf-8")  # encodable now
    plain = "ordinary text, 普通文本"
    assert utf8_safe(plain) is plain and utf8_safe("ascii") == "ascii"


def test_first_spans_stop_at_the_limit_and_skip_what_unless_sets_aside() -> None:
    pattern = alternatives([r"do (?:it|not do it)"])
    text = "do it, do not do it, do it, do it"
    assert first_spans(pattern, text, 2) == [(0, 5), (7, 19)]
    assert first_spans(pattern, text, 5, unless=lambda found: "not" in found) == [(0, 5), (21, 26), (28, 33)]
