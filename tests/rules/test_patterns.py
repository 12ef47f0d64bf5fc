"""Rule patterns: RE2 only, one Set pass, errors that name file, rule and field."""

from __future__ import annotations

import pytest

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
