"""The Scanner end to end: policy per rule, overlaps, filters, plug-in detectors, version, hold-back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.errors import RuleFileError
from rules.findings import Action, Finding
from rules.normalize import Views
from rules.scanner import Scanner, ScanResult
from tests.rules import values as v

SCANNER = Scanner.load()


def test_clean_text_is_allowed() -> None:
    result = SCANNER.scan("今天天气不错，我们去公园散步吧。The weather is nice.")
    assert result == ScanResult((), (), Action.ALLOW, ())
    assert SCANNER.scan("").action is Action.ALLOW


def test_decisions_follow_levels_and_actions() -> None:
    text = f"我的身份证是{v.ID_18}，能找人代考吗？我不想活了"
    result = SCANNER.scan(text)
    by_rule = {d.finding.rule: d for d in result.decisions}
    assert by_rule["CHN_ID_CARD"].action is Action.MASK
    assert by_rule["exam_fraud"].action is Action.BLOCK and by_rule["exam_fraud"].alert  # level 3
    assert by_rule["self_harm"].action is Action.BLOCK and not by_rule["self_harm"].alert  # level 2, a reply
    assert result.action is Action.BLOCK and result.alert
    assert result.rules_hit == ("CHN_ID_CARD", "exam_fraud", "self_harm")
    assert len(result.decisions) == len(result.findings)


def test_seed_rule_files_as_they_are(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(
        '{"rule": "CHN_ID_CARD", "mask_pattern": "****-****-****-####", "enabled": true}', "utf-8"
    )
    (tmp_path / "b.json").write_text('[{"pattern": "(?i)(代[考]|替考|枪手)", "level": 3}]', "utf-8")
    scanner = Scanner.load([tmp_path / "a.json", tmp_path / "b.json"], builtin=False)
    text = f"{v.ID_18} 枪手"
    result = scanner.scan(text)
    assert [(d.finding.rule, d.action) for d in result.decisions] == [
        ("CHN_ID_CARD", Action.MASK), ("b.json#0", Action.BLOCK)
    ]
    assert result.decisions[0].mask is not None and result.decisions[0].mask.pattern == "****-****-****-####"


def test_disabled_rule_finds_nothing(tmp_path: Path) -> None:
    (tmp_path / "off.yaml").write_text("- {rule: CHN_MOBILE, enabled: false}", "utf-8")
    scanner = Scanner.load([tmp_path / "off.yaml"])
    assert scanner.scan("13812345678").findings == ()


def test_empty_policy_is_a_startup_error(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError, match="no enabled rules"):
        Scanner.load([], builtin=False)


def test_overlapping_pii_is_reported_once() -> None:
    # 18 digits that are a valid ID and, by construction here, also Luhn-valid would be both; the stronger
    # (passed checksum, higher score, then detector order) wins.
    text = f"号{v.ID_18}号"
    kinds = [f.kind for f in SCANNER.scan(text).findings]
    assert kinds == ["cn_resident_id"]


def test_partly_overlapping_values_are_all_reported() -> None:
    text = "110105199003071239.wang@example.org"
    result = SCANNER.scan(text)
    assert [(f.kind, text[f.start : f.end]) for f in result.findings] == [
        ("cn_resident_id", "110105199003071239"), ("email", text)]
    assert result.covered == ()
    # Inside an e-mail address (no checksum): values of their own, every kind reported.
    name = f"m-110105199003071239-{v.UNIONPAY_19}-name@example.org"
    assert sorted(f.kind for f in SCANNER.scan(name).findings) == ["bank_card", "cn_resident_id", "email"]


IBAN_WITH_A_PHONE = v.spaced("IT84Q1350571110659448951933", (4, 4, 4, 4, 4, 4))  # "Q135 0571 1106" reads as one


def test_a_value_inside_a_checked_one_is_covered_not_reported() -> None:
    result = SCANNER.scan(IBAN_WITH_A_PHONE)
    assert [f.kind for f in result.findings] == ["iban"] and result.rules_hit == ("IBAN",)
    assert [(d.finding.kind, IBAN_WITH_A_PHONE[d.finding.start : d.finding.end]) for d in result.covered] == [
        ("cn_mobile", "135 0571 1106")]
    assert result.action is Action.MASK


def test_covered_findings_never_block_but_are_masked(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("- {rule: CHN_MOBILE, action: block}\n- {rule: IBAN, action: allow}\n", "utf-8")
    scanner = Scanner.load([tmp_path / "r.yaml"])
    assert scanner.scan("13812345678").action is Action.BLOCK
    result = scanner.scan(IBAN_WITH_A_PHONE)
    assert result.action is Action.ALLOW and not result.blocked  # the phone-like digits are the IBAN's
    (tmp_path / "m.yaml").write_text("- {rule: IBAN, action: allow}\n", "utf-8")
    result = Scanner.load([tmp_path / "m.yaml"]).scan(IBAN_WITH_A_PHONE)
    # The IBAN is allowed, its digits that read as a phone number are masked: the verdict says so.
    assert result.action is Action.MASK and [d.action for d in result.decisions] == [Action.ALLOW]
    assert [d.action for d in result.covered] == [Action.MASK]


def test_min_score_drops_weak_findings(tmp_path: Path) -> None:
    assert [f.kind for f in SCANNER.scan("E12345678").findings] == ["cn_passport"]
    (tmp_path / "strict.yaml").write_text("- {rule: CHN_PASSPORT, min_score: 0.9}", "utf-8")
    strict = Scanner.load([tmp_path / "strict.yaml"])
    assert strict.scan("E12345678").findings == ()
    assert [f.kind for f in strict.scan("护照E12345678").findings] == ["cn_passport"]


class Upper:
    """A plug-in detector: every run of 'ZZZ' is a finding of its own rule."""

    name = "zzz"
    max_match_len = 3

    def detect(self, text: str) -> Sequence[Finding]:
        starts = [i for i in range(len(text)) if text[i : i + 3] == "ZZZ"]
        return [Finding("semantic", "exam_fraud", i, i + 3, "zzz", 0.9) for i in starts]


class UserCategories:
    """A plug-in detector of a user's own categories, with the levels of their category files."""

    name = "user"
    max_match_len = None
    default_levels: ClassVar[dict[str, int]] = {"medical_advice": 2, "investment_advice": 1}

    def detect(self, text: str) -> Sequence[Finding]:
        return [Finding("semantic", c, 0, len(text), f"semantic.{c}", 0.8) for c in self.default_levels if c in text]


def test_a_plugin_category_takes_its_default_level_unless_a_rule_file_sets_it(tmp_path: Path) -> None:
    scanner = Scanner.load(extra_detectors=[UserCategories()])
    assert scanner.scan("medical_advice").action is Action.BLOCK
    assert scanner.scan("investment_advice").action is Action.ANNOTATE
    rules = tmp_path / "user.yaml"
    rules.write_text("words:\n- {rule: investment_words, category: investment_advice, words: [稳赚不赔], level: 2}\n"
                     "- {rule: medical_words, category: medical_advice, words: [包治百病], action: annotate}\n")
    scanner = Scanner.load([rules], extra_detectors=[UserCategories()])
    assert scanner.scan("investment_advice").action is Action.BLOCK
    assert scanner.scan("medical_advice").action is Action.ANNOTATE


def test_plugin_detectors_and_filters() -> None:
    seen: list[int] = []

    def drop_semantic(text: str, findings: Sequence[Finding]) -> Sequence[Finding]:
        seen.append(len(findings))
        return [f for f in findings if f.kind != "semantic" or "keep" in text]

    scanner = Scanner.load(extra_detectors=[Upper()], filters=[drop_semantic])
    assert scanner.scan("aZZZb").findings == ()
    result = scanner.scan("keep ZZZ")
    (d,) = result.decisions
    assert d.finding.kind == "semantic"
    assert d.action is Action.BLOCK  # category exam_fraud takes the exam_fraud rule's policy
    assert seen == [1, 1]


def test_version_is_a_stable_digest_of_the_rules(tmp_path: Path) -> None:
    assert Scanner.load().version == SCANNER.version
    (tmp_path / "x.yaml").write_text("- {rule: CHN_MOBILE, enabled: false}", "utf-8")
    assert Scanner.load([tmp_path / "x.yaml"]).version != SCANNER.version


def test_max_hold_back_is_bounded() -> None:
    assert 17 <= SCANNER.max_hold_back <= 8191
    assert SCANNER.viable_start("我的号码是138") == len("我的号码是")
    assert SCANNER.viable_start("hello, world!") == len("hello, world!")
    assert SCANNER.viable_start("mail me at zhang.san") == len("mail me at ")  # could become an e-mail


def test_raw_offsets_with_fullwidth_and_invisible_characters() -> None:
    text = "电话：１３８\u200b１２３４５６７８，找人代\u200c考"
    result = SCANNER.scan(text)
    spans = [text[f.start : f.end] for f in result.findings]
    assert spans == ["１３８\u200b１２３４５６７８", "代\u200c考"]


_WINDOW_PIECES = st.sampled_from([
    "代考", "代", "考", "枪手", "机", "take my exam", "TAKE MY ", "exam", "冰毒", "的", "，", "１３８", "13812345678",
    v.ID_18, "zhang.san@example.com", "@", "4111 1111 1111 1111", " ", "*", "\u200b", "ａ", "賣", "Ignore previous",
    " instructions", "x", "\n",
])


def test_builtin_scanner_has_the_stream_window_set() -> None:
    assert SCANNER._window_set is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(_WINDOW_PIECES, max_size=12).map("".join), st.integers(0, 80))
def test_scan_window_finds_what_scan_from_finds(text: str, start: int) -> None:
    start = min(start, len(text))
    assert SCANNER.scan_window(text, start, Views(text, SCANNER.config)) == SCANNER.scan_from(text, start)


def test_scan_window_fails_closed_when_its_set_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # RE2's Set answers "no match" (no sentinel) when its DFA runs out of memory: then every kind runs.
    scanner = Scanner.load()
    monkeypatch.setattr(scanner, "_window_match", lambda data: [])
    text = "hello 13812345678, 找人代考"
    assert scanner.scan_window(text, 0, Views(text, scanner.config)) == scanner.scan_from(text, 0)
    assert scanner.scan_from(text, 0).findings
