"""Fuzzing the rule loader (rules/loader.py): any bytes, any YAML or JSON document, any value in any field.
A rule file is operator input read at start-up and on every reload: whatever it holds, the loader answers
with a RuleFileError naming the file (start-up exits 78, a reload keeps the old rules), never a bare
KeyError, TypeError, ValueError or RecursionError. Budget: tests/fuzz.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from rules.errors import RuleFileError, RulesError
from rules.loader import (
    COMMON_FIELDS,
    NORMALIZE_FIELDS,
    PATTERN_FIELDS,
    PII_FIELDS,
    TOP_FIELDS,
    WORD_FIELDS,
    load,
    load_files,
)
from rules.scanner import Scanner
from tests.fuzz import fuzz


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rules")


def loads_or_names_the_file(path: Path, *, builtin: bool = False) -> None:
    try:
        (load if builtin else load_files)([path])
    except RuleFileError as exc:
        assert exc.path == str(path) and str(exc).startswith(str(path))


def write(folder: Path, suffix: str, data: bytes) -> Path:
    path = folder / f"rules{suffix}"
    path.write_bytes(data)
    return path


SUFFIXES = st.sampled_from([".yaml", ".yml", ".json"])

# --- any bytes, and YAML-ish text built from the pieces that reach the corners of a YAML parser --------------

_YAML_PIECES = st.one_of(
    st.sampled_from([
        "rule: ", "pattern: ", "words: ", "level: ", "action: ", "kind: ", "mask: ", "normalize: ", "version: ",
        "pii: ", "patterns: ", "rules: ", "skip_chars: ", "max_skip: ", "keep_first: ", "replace: ",
        "- ", "{", "}", "[", "]", ", ", ": ", "\n", "  ", "\t", "'", '"', "#", "---\n", "...\n", "%YAML 1.1\n",
        "&a ", "*a", "<<: ", "? ", "!!binary ", "!!timestamp ", "!!int ", "!!str ", "!!set ", "!!omap ",
        "!!python/name:os.system ", "!custom ", "2001-13-45", "2001-02-30 25:61:61", "1e400", ".nan", ".inf",
        "~", "null", "true", "no", "0x1F", "0o17", "1_000", "3", "-1", "9" * 5000, "代考", "替考", "(?i)a|b",
        "(", "\\", "\\u", "\\ud800", "\x00", "\ufeff", "mask", "block", "CHN_ID_CARD", "cn_mobile",
    ]),
    st.text(max_size=8),
)
YAML_TEXT = st.lists(_YAML_PIECES, max_size=30).map("".join)


@fuzz(100)
@given(st.one_of(st.binary(max_size=200), YAML_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))), SUFFIXES)
@example(b"[" * 3000 + b"]" * 3000, ".yaml")  # nesting past the parser's recursion
@example(b"[" * 3000 + b"]" * 3000, ".json")
@example(b"version: 2001-13-45\n", ".yaml")  # a timestamp-looking scalar that is no date
@example(b"[{rule: x, pattern: a, level: " + b"9" * 5000 + b"}]", ".yaml")  # beyond int()'s digit limit
@example(b'{"level": ' + b"9" * 5000 + b"}", ".json")
@example(b"\xef\xbb\xbf{}", ".json")
@example(b"!!timestamp", ".yaml")  # PyYAML: AttributeError
@example(b"!!bool x", ".yaml")  # PyYAML: KeyError
@example(b"!!int x", ".yaml")  # PyYAML: ValueError
def test_any_bytes_load_or_name_the_file(folder: Path, data: bytes, suffix: str) -> None:
    loads_or_names_the_file(write(folder, suffix, data))


# --- documents of the right kind with anything in them ----------------------------------------------------------

KNOWN_NAMES = sorted(TOP_FIELDS | PII_FIELDS | WORD_FIELDS | PATTERN_FIELDS | COMMON_FIELDS | NORMALIZE_FIELDS
                     | {"traditional_to_simplified", "keep_first", "keep_last", "replace"})
GOOD_VALUES = st.sampled_from([
    "CHN_ID_CARD", "cn_mobile", "exam_fraud", "(?i)代[考]|替考", "(unclosed", "a{1001}", "\\C", "mask", "block",
    "default", "full", "****-####", 0, 1, 2, 3, 9, 0.5, 1.5, True, False, None, "", " ",
])
SCALARS = st.one_of(GOOD_VALUES, GOOD_VALUES, st.none(), st.booleans(), st.integers(), st.floats(),
                    st.text(max_size=6))
YAML_KEYS = st.one_of(st.sampled_from(KNOWN_NAMES), st.sampled_from(KNOWN_NAMES), st.text(max_size=4),
                      st.integers(-2, 2), st.booleans(), st.none(), st.floats(allow_nan=False))
JSON_KEYS = st.one_of(st.sampled_from(KNOWN_NAMES), st.sampled_from(KNOWN_NAMES), st.text(max_size=4))


def documents(keys: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(SCALARS, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)), max_leaves=20)


@fuzz(100)
@given(documents(YAML_KEYS), st.sampled_from([".yaml", ".yml"]))
@example({1: "a", "b": "c"}, ".yaml")  # keys of mixed types
@example({"normalize": {1: "a", "b": "c"}}, ".yaml")
@example([{"rule": "x", "pattern": "a", "action": [1]}], ".yaml")  # an unhashable value where a name belongs
@example([{"rule": "x", "kind": {"a": 1}}], ".yaml")
@example({"rule": "x", "pattern": "a", "level": 2, "words": {}}, ".yaml")
def test_any_yaml_document_loads_or_names_the_file(folder: Path, doc: Any, suffix: str) -> None:
    text = yaml.safe_dump(doc, allow_unicode=True)
    loads_or_names_the_file(write(folder, suffix, text.encode("utf-8", "surrogatepass")))


@fuzz(80)
@given(documents(JSON_KEYS))
def test_any_json_document_loads_or_names_the_file(folder: Path, doc: Any) -> None:
    loads_or_names_the_file(write(folder, ".json", json.dumps(doc).encode()))


@fuzz(40)
@given(documents(JSON_KEYS))
def test_merged_over_the_builtin_packs_too(folder: Path, doc: Any) -> None:
    """Overrides of builtin ids go through the merge path (type kept, fields merged)."""
    loads_or_names_the_file(write(folder, ".json", json.dumps(doc).encode()), builtin=True)


RULE = st.fixed_dictionaries({"rule": st.sampled_from(["x", "y", "CHN_ID_CARD", "exam_fraud"])}, optional={
    "pattern": st.one_of(st.sampled_from(["a", "(?i)代[考]|替考", "(unclosed", "a{1001}", "\\C", "(?P<n>a)",
                                          "\\p{Han}+", "x*", "", "[[:alpha:]]", "(a)\\1"]), st.text(max_size=6)),
    "words": st.lists(st.sampled_from(["代考", "a", "ab", " b ", "代 考", "x" * 40]), min_size=1, max_size=3),
    "allow": st.lists(st.sampled_from(["代考班", "b"]), max_size=2),
    "level": st.integers(1, 3), "action": st.sampled_from(["mask", "block", "annotate", "pseudonymize", "allow"]),
    "kind": st.sampled_from(["cn_mobile", "email", "bank_card"]), "enabled": st.booleans(),
    "mask": st.one_of(st.sampled_from(["default", "full"]),
                      st.fixed_dictionaries({"keep_first": st.integers(0, 64), "keep_last": st.integers(0, 64)}),
                      st.fixed_dictionaries({"replace": st.text(max_size=4)})),
    "mask_pattern": st.sampled_from(["****", "###-****", "*#*#"]),
    "min_score": st.floats(0, 1),
})


@fuzz(40)
@given(st.lists(RULE, min_size=1, max_size=4))
@example([{"rule": "x", "pattern": "(unclosed"}])
def test_what_loads_compiles_into_a_scanner_or_says_why(folder: Path, rules: list[dict[str, Any]]) -> None:
    """Past the loader, the scanner compiles the rules (RE2): a pattern RE2 refuses is a RulesError naming the
    file and rule, like every other bad rule."""
    path = write(folder, ".json", json.dumps(rules).encode())
    try:
        loaded = load_files([path])
    except RuleFileError:
        return
    try:
        Scanner(loaded)
    except RulesError as exc:
        assert str(path) in str(exc)
