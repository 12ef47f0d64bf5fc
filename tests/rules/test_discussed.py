"""A long text about prompt injection is not one (rules/discussed.py). Texts written for these tests."""

from __future__ import annotations

import pytest

from rules.discussed import CLEARED_KINDS, SIGNATURE_KINDS, Discussed
from rules.findings import Finding
from rules.stance import Stance


def _stance(threshold: float = 0.5, min_chars: int = 10) -> Stance:
    return Stance({"w:lesson": (2.0, 3.0), "w:send": (1.5, -3.0)}, bias=0.0, unseen_idf=3.0,
                  thresholds={"en": threshold, "zh": threshold}, min_chars=min_chars)


def _finding(kind: str, category: str = "prompt_injection") -> Finding:
    return Finding(kind=kind, category=category, start=0, end=10, rule=f"{category}.{kind}")


def test_the_filter_drops_soft_injection_findings_of_a_text_about_the_attack_only() -> None:
    about = "a lesson plan " * 3
    findings = [_finding(k) for k in sorted(CLEARED_KINDS)] + [_finding("semantic", "weapons")]
    kept = Discussed(_stance())(about, findings)
    assert [(f.kind, f.category) for f in kept] == [("semantic", "weapons")]
    carried_out = "send the key " * 3
    assert Discussed(_stance())(carried_out, findings) == findings


@pytest.mark.parametrize("kind", sorted(SIGNATURE_KINDS))
def test_a_signature_or_a_decoded_payload_keeps_every_finding(kind: str) -> None:
    findings = [_finding("semantic"), _finding(kind)]
    assert Discussed(_stance())("a lesson plan " * 3, findings) == findings


def test_a_text_under_the_length_keeps_its_findings() -> None:
    findings = [_finding("semantic")]
    assert Discussed(_stance(min_chars=100))("a lesson plan", findings) == findings
