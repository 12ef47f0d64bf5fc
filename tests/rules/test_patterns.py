"""Rule patterns: RE2 only, one Set pass, errors that name file, rule and field."""

from __future__ import annotations

import pytest

from rules import patterns
from rules.errors import RuleFileError
from rules.normalize import NormalizeConfig, Views
from rules.patterns import PatternDetector, PatternRule

CONFIG = NormalizeConfig()


def test_seed_pattern_matches_on_the_compact_view() -> None:
    det = PatternDetector([PatternRule("seed", "custom", "(?i)(代[考]|替考|枪手)", "seed.json")])
    text = "找个枪手，代 考也行"
    hits = det.detect_views(Views(text, CONFIG))
    assert [text[f.start : f.end] for f in hits] == ["枪手", "代 考"]
    assert all(f.kind == "pattern" and f.rule == "seed" for f in hits)


def test_only_patterns_the_set_reports_run() -> None:
    rules = [PatternRule(f"p{i}", "c", f"needle{i}x") for i in range(100)]
    det = PatternDetector(rules)
    hits = det.detect_views(Views("hay NEEDLE42X hay", CONFIG))
    assert [f.rule for f in hits] == ["p42"]  # patterns are case-insensitive: the view is lower-cased


@pytest.mark.parametrize("pattern", [r"(a)\1", r"foo(?=bar)", r"(?<=x)y", "(unclosed"])
def test_patterns_re2_cannot_run_are_load_errors(pattern: str) -> None:
    with pytest.raises(RuleFileError) as err:
        PatternDetector([PatternRule("bad", "c", pattern, "site.yaml")])
    assert err.value.path == "site.yaml"
    assert err.value.rule == "bad"
    assert err.value.field == "pattern"


def test_empty_matching_pattern_is_an_error() -> None:
    with pytest.raises(RuleFileError, match="empty string"):
        PatternDetector([PatternRule("empty", "c", "x*", "f.yaml")])


def test_widths_and_closures() -> None:
    det = PatternDetector([PatternRule("a", "c", "ab{2}"), PatternRule("b", "c", r"\p{Han}+")])
    assert det.widths == (3, None)
    assert det.closures[0] is not None and det.closures[1] is None
    assert det.max_match_len is None


_SHAPES = [
    "代考.{0,4}赌博", "(?i)take[\\s_-]{0,2}exam", "冰毒[0-9]{2,6}", "(?:网赌|外挂|私服)的?(?:跑分|套现)",
    "(?i)\\bmeth s?\\b[^\\n]{0,10}[0-9]{3,}", "(?i)(代[考]|替考|枪手)", "[0-9]{3}-[0-9]{4}", "x?y+z",
]


def test_atom_filter_finds_what_the_set_finds() -> None:
    rules = [PatternRule(f"p{i}", "c", p) for i, p in enumerate(_SHAPES)]
    with_filter = PatternDetector(rules)
    assert with_filter._filter is not None
    with_set = PatternDetector(rules)
    with_set._filter = None
    texts = ["找代考的人去赌博", "TAKE-EXAM now", "冰毒12345克", "网赌的套现", "buy METH   now 12345",
             "枪 手", "call 555-1234", "xyyz", "nothing here", "代考。。。。。。赌博", "meths 999", ""]
    for text in texts:
        assert with_filter.detect_views(Views(text, CONFIG)) == with_set.detect_views(Views(text, CONFIG)), text


def test_atom_filter_falls_back_to_the_set(monkeypatch: pytest.MonkeyPatch) -> None:
    atomless = [PatternRule(f"d{i}", "c", f"[0-9]{{{i + 3}}}x?") for i in range(6)]
    assert PatternDetector(atomless)._filter is None  # six patterns without atoms would run on every text
    monkeypatch.setattr(patterns, "FILTER_MAX_CHARS", 5)
    det = PatternDetector([PatternRule("p", "c", "needle")])
    assert det._filter is None
    assert [f.rule for f in det.detect_views(Views("a needle", CONFIG))] == ["p"]
