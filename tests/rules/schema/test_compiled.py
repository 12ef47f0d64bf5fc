"""Compiled schemas: cached by content, bounded, remote `$ref` refused without fetching, older drafts as
declared, violations in our words (pointer, keyword, the schema's side only)."""

from __future__ import annotations

import pytest

from rules.schema import InvalidSchema, SchemaCache, Violation, compile_schema
from rules.schema.compiled import MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, MAX_VIOLATIONS


def test_cached_by_content_and_bounded() -> None:
    cache = SchemaCache(entries=2)
    first = cache.compile({"type": "object", "required": ["a"]})
    assert cache.compile({"required": ["a"], "type": "object"}) is first  # same content, other key order
    cache.compile({"type": "string"})
    cache.compile({"type": "integer"})
    assert len(cache) == 2
    assert cache.compile({"type": "object", "required": ["a"]}) is not first  # evicted, least recently used
    assert first.sha256 == compile_schema({"type": "object", "required": ["a"]}).sha256


@pytest.mark.parametrize(("schema", "words"), [
    ({"$ref": "https://example.com/s.json"}, "never fetched"),
    ({"$schema": "https://example.com/my-meta"}, "unknown $schema"),
    ({"type": "strin"}, "not a valid draft"),
    ({"pattern": "("}, "not a regular expression"),
    ([1, 2], "a JSON object or a boolean"),
    ({"a" * (MAX_SCHEMA_BYTES + 1): True}, "the limit is"),
])
def test_refused_schemas(schema: object, words: str) -> None:
    with pytest.raises(InvalidSchema) as caught:
        SchemaCache().compile(schema)
    assert words in str(caught.value)


def test_depth_is_bounded() -> None:
    schema: dict[str, object] = {"type": "object"}
    for _ in range(MAX_SCHEMA_DEPTH):
        schema = {"properties": {"a": schema}}
    with pytest.raises(InvalidSchema, match="deeper"):
        compile_schema(schema)


def test_drafts() -> None:
    assert compile_schema({"type": "integer"}).draft == "2020-12"
    old = compile_schema({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]})
    assert old.draft == "7"
    assert not old.is_valid([1]) and old.is_valid(["a", 1])  # draft-07's tuple `items`
    assert compile_schema(True).is_valid({"anything": [1]}) and not compile_schema(False).is_valid(None)


def test_validator_semantics_warden_relies_on() -> None:
    integer = compile_schema({"type": "integer"})
    assert integer.is_valid(1.0) and integer.is_valid(10**30) and not integer.is_valid(1.5)
    assert compile_schema({"format": "email"}).is_valid("not an email")  # format is an annotation
    assert compile_schema({"enum": [1]}).is_valid(1.0)
    assert not compile_schema({"enum": [1]}).is_valid(True)


def test_subschema_validators_reach_the_roots_definitions() -> None:
    schema = compile_schema({"$defs": {"n": {"type": "integer"}, "a/b": {"maxLength": 1}},
                             "properties": {"x": {"$ref": "#/$defs/n"}}})
    assert schema.subschema_validator("") is schema.validator
    x = schema.subschema_validator("/properties/x")
    assert x is not None and x.is_valid(3) and not x.is_valid("3")
    slash = schema.subschema_validator("/$defs/a~1b")
    assert slash is not None and not slash.is_valid("ab")
    assert schema.subschema_validator("/properties/nope") is None


def test_violations_name_pointer_and_keyword_never_the_answer() -> None:
    schema = compile_schema({"type": "object", "required": ["name"], "additionalProperties": False,
                             "properties": {"age": {"type": "integer", "maximum": 150}, "name": {"type": "string"}}})
    found = schema.violations({"age": 4111111111111111, "SECRET": "hunter2"})
    assert {(v.pointer, v.keyword) for v in found} == {("", "required"), ("", "additionalProperties"),
                                                       ("/age", "maximum")}
    for violation in found:
        assert "4111" not in violation.message() and "hunter2" not in violation.message()
        assert "SECRET" not in violation.message()
    assert schema.violations({"name": "x"}) == ()
    many = compile_schema({"items": {"type": "string"}}).violations(list(range(20)))
    assert len(many) == MAX_VIOLATIONS


def test_violation_message() -> None:
    assert Violation("", "type", 'expected type "object"').message() == \
        'at the document root: expected type "object" (keyword `type`)'
    assert Violation("/a/0", "maxLength", "longer than 3 characters").message() == \
        "at /a/0: longer than 3 characters (keyword `maxLength`)"


def test_a_lone_surrogate_is_a_violation_not_a_crash() -> None:
    schema = SchemaCache().compile({"type": "string", "maxLength": 3})  # jsonschema-rs raised UnicodeEncodeError
    assert not schema.is_valid("\ud83d")
    assert [v.keyword for v in schema.violations("\ud83d")] == ["json"]
