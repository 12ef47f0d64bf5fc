"""Rule files: both seed formats as they are, the full form, merging, and errors naming file/rule/field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules.errors import RuleFileError
from rules.findings import Action
from rules.loader import builtin_paths, load, load_files


def write(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False), "utf-8")
    return path


def test_builtin_packs_ship_as_package_data() -> None:
    names = {p.name for p in builtin_paths()}
    assert {"pii.yaml", "words.yaml"} <= names
    rules = load()
    ids = {e.rule for e in rules.entries}
    assert {"CHN_ID_CARD", "BANK_CARD", "exam_fraud", "prompt_injection", "self_harm"} <= ids


def test_seed_single_rule_overrides_the_builtin_by_id(tmp_path: Path) -> None:
    seed = write(tmp_path, "seed.json", {"rule": "CHN_ID_CARD", "mask_pattern": "****-****-****-####", "enabled": True})
    rules = load([seed])
    (entry,) = [e for e in rules.entries if e.rule == "CHN_ID_CARD"]
    assert entry.type == "pii"
    assert entry.fields["kind"] == "cn_resident_id"
    assert entry.fields["mask_pattern"] == "****-****-****-####"
    assert entry.fields["action"] is Action.MASK  # kept from the builtin pack
    assert entry.source == str(seed)


def test_seed_single_rule_without_builtins_resolves_the_alias(tmp_path: Path) -> None:
    seed = write(tmp_path, "seed.json", {"rule": "CHN_ID_CARD", "mask_pattern": "****-****-****-####", "enabled": True})
    (entry,) = load([seed], builtin=False).entries
    assert entry.fields["kind"] == "cn_resident_id"


def test_seed_pattern_list(tmp_path: Path) -> None:
    seed = write(tmp_path, "words.json", [{"pattern": "(?i)(代[考]|替考|枪手)", "level": 3}])
    (entry,) = load([seed], builtin=False).entries
    assert entry.type == "pattern"
    assert entry.rule == "words.json#0"
    assert entry.fields["level"] == 3


def test_full_form_yaml(tmp_path: Path) -> None:
    f = write(tmp_path, "site.yaml", """
version: 1
normalize: {traditional_to_simplified: false, max_skip: 2}
words:
  - {rule: w, category: c, level: 1, words: [甲乙, 丙丁], allow: [甲乙丙]}
patterns:
  - {rule: p, pattern: "EMP-[0-9]{6}", action: mask}
pii:
  - {rule: MY_ID, kind: cn_resident_id, mask: {keep_first: 3, keep_last: 3}}
""")
    rules = load([f], builtin=False)
    assert rules.normalize.traditional_to_simplified is False and rules.normalize.max_skip == 2
    by_id = {e.rule: e for e in rules.entries}
    assert by_id["w"].fields["words"] == ("甲乙", "丙丁")
    assert by_id["p"].fields["action"] is Action.MASK
    assert by_id["MY_ID"].fields["mask"] == {"keep_first": 3, "keep_last": 3}


def test_later_files_override_fields(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", "words: [{rule: w, words: [x1], level: 3}]")
    b = write(tmp_path, "b.yaml", "- {rule: w, level: 1}")
    (entry,) = load_files([a, b]).entries
    assert entry.type == "words" and entry.fields["level"] == 1 and entry.fields["words"] == ("x1",)


@pytest.mark.parametrize(
    ("content", "rule", "field", "message"),
    [
        ([{"pattern": "x", "level": 4}], "f.json#0", "level", "level 1, 2 or 3"),
        ([{"pattern": "x", "levle": 2}], "f.json#0", "levle", "unknown field"),
        ([{"rule": "w", "words": []}], "w", "words", "non-empty"),
        ([{"rule": "w", "words": ["a"], "action": "drop"}], "w", "action", "allow|annotate"),
        ([{"rule": "NOPE", "enabled": True}], "NOPE", "kind", "unknown PII rule"),
        ([{"rule": "CHN_ID_CARD", "mask_pattern": "abc"}], "CHN_ID_CARD", "mask_pattern", "mask like"),
        ([{"rule": "x", "pattern": "a"}, {"rule": "x", "pattern": "b"}], "x", "rule", "duplicate"),
        ([{"rule": "w", "words": ["a"], "min_score": 2}], "w", "min_score", "[0, 1]"),
        ({"version": 1, "normalize": {"max_skip": 99}}, None, "normalize.max_skip", "0-8"),
        ({"version": 2}, None, "version", "unsupported version"),
        ({"bogus": 1}, None, "bogus", "unknown top-level"),
        ("[1, 2]", "f.json#0", None, "must be a mapping"),
    ],
)
def test_errors_name_file_rule_and_field(
    tmp_path: Path, content: object, rule: str | None, field: str | None, message: str
) -> None:
    path = write(tmp_path, "f.json", content)
    with pytest.raises(RuleFileError) as err:
        load([path], builtin=False)
    assert err.value.path == str(path)
    assert err.value.rule == rule
    assert err.value.field == field
    assert message in str(err.value)


def test_syntax_errors_say_where(tmp_path: Path) -> None:
    bad_yaml = write(tmp_path, "bad.yaml", "words:\n  - {rule: w, words: [a\n")
    with pytest.raises(RuleFileError, match="YAML syntax error at line"):
        load([bad_yaml], builtin=False)
    bad_json = write(tmp_path, "bad.json", "[{")
    with pytest.raises(RuleFileError, match="JSON syntax error at line 1"):
        load([bad_json], builtin=False)
    with pytest.raises(RuleFileError, match="cannot read"):
        load([tmp_path / "missing.yaml"], builtin=False)


def test_reply_is_one_text_or_one_per_language(tmp_path: Path) -> None:
    from rules.scanner import Scanner

    f = tmp_path / "r.yaml"
    f.write_text("words:\n  - {rule: r1, level: 2, words: [abcxyz], reply: 'get help'}\n"
                 "  - {rule: r2, level: 2, words: [defxyz], reply: {zh: 请求助}}\n", "utf-8")
    s = Scanner.load([f], builtin=False)
    assert s.policy("r1").reply == {"zh": "get help", "en": "get help"}  # type: ignore[union-attr]
    assert s.policy("r2").reply == {"zh": "请求助", "en": "请求助"}  # type: ignore[union-attr]
    f.write_text("words:\n  - {rule: r1, level: 2, words: [abcxyz], reply: {fr: aide}}\n", "utf-8")
    with pytest.raises(RuleFileError, match="reply"):
        Scanner.load([f], builtin=False)
