"""The stream checker against the full validator: a document the full validator accepts is never cut, at any
split and in any spelling; one it refuses is refused by the end; where the checker cuts, the text before the
cut is one it accepts. The JSON-Schema-Test-Suite (draft 2020-12) and generated schemas are the corpus;
then each early rule at the exact character it must fire on."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.errors import RulesError
from rules.schema import CompiledSchema, InvalidSchema, SchemaCache, parse_document
from rules.schema.incremental import REPEATED_NAMES_REFUSED, StreamChecker

SUITE = Path(__file__).parents[2] / "data" / "json-schema-test-suite" / "draft2020-12"
CACHE = SchemaCache(entries=4096)


def suite_cases() -> tuple[list[tuple[str, CompiledSchema, object]], list[str]]:
    """(name, compiled schema, instance) for every case whose schema compiles; the names of those skipped."""
    cases: list[tuple[str, CompiledSchema, object]] = []
    skipped: list[str] = []
    for path in sorted(SUITE.glob("**/*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            name = f"{path.relative_to(SUITE)}: {group['description']}"
            try:
                compiled = CACHE.compile(group["schema"])
            except InvalidSchema as exc:
                # Only schemas that need a document from elsewhere: Warden never fetches one.
                assert "remote $ref" in exc.reason or "http://localhost:1234/" in exc.reason, (name, exc.reason)
                skipped.extend(f"{name}: {t['description']}" for t in group["tests"])
                continue
            cases.extend((f"{name}: {t['description']}", compiled, t["data"]) for t in group["tests"])
    return cases, skipped


CASES, SKIPPED = suite_cases()


def truth(schema: CompiledSchema, text: str, *, unique_keys: bool = False) -> bool:
    """What the full validator says of the whole text (the ground truth the checker must never contradict)."""
    document = parse_document(text)
    if not document.ok:
        return False
    if unique_keys:
        def refuse(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            if len({k for k, _ in pairs}) != len(pairs):
                raise ValueError("repeated")
            return dict(pairs)
        try:
            json.loads(text, object_pairs_hook=refuse)
        except ValueError:
            return False
    try:
        return not schema.violations(document.value)
    except ValueError:  # a lone surrogate the validator cannot read
        return False


# --- spellings of one value ----------------------------------------------------------------------------


def spell(value: object, rng: random.Random, *, ws: bool = False, shuffle: bool = False, escape: bool = False,
          float_ints: bool = False, duplicates: bool = False) -> str:
    """`value` as JSON text: whitespace anywhere it may go, keys shuffled, every string character as a
    \\u escape, integers as 1.0 / 1e0 / 10e-1, and repeated keys whose first value is junk (Python's json
    keeps the last, so the document means the same)."""

    def gap() -> str:
        return rng.choice(["", " ", "\n  ", "\t", "\r\n", "  "]) if ws else ""

    def string(s: str) -> str:
        if not escape:
            return json.dumps(s, ensure_ascii=rng.random() < 0.5)
        units = s.encode("utf-16-le", "surrogatepass")
        hexes = (f"{int.from_bytes(units[k:k + 2], 'little'):04x}" for k in range(0, len(units), 2))
        return '"' + "".join("\\u" + (h.upper() if rng.random() < 0.5 else h) for h in hexes) + '"'

    def go(v: object) -> str:
        if isinstance(v, dict):
            items = list(v.items())
            if shuffle:
                rng.shuffle(items)
            members = [(string(k), go(x)) for k, x in items]
            if duplicates and members:
                junk = rng.choice(['"junk"', "123456", "[1, {\"x\": null}]", "{}", "true", "-0.5e3"])
                at = rng.randrange(len(members))
                members.insert(rng.randrange(at + 1), (members[at][0], junk))
            body = ",".join(f"{gap()}{k}{gap()}:{gap()}{x}{gap()}" for k, x in members)
            return "{" + (body or gap()) + "}"
        if isinstance(v, list):
            body = ",".join(f"{gap()}{go(x)}{gap()}" for x in v)
            return "[" + (body or gap()) + "]"
        if isinstance(v, str):
            return string(v)
        if isinstance(v, int) and not isinstance(v, bool) and float_ints and abs(v) < 2**53:
            return rng.choice([f"{v}.0", f"{v}e0", f"{v}0e-1", f"{v}.00E+0"])
        return json.dumps(v)

    return gap() + go(value) + gap()


def spellings(value: object, rng: random.Random, *, unique_keys: bool = False) -> list[str]:
    texts = [json.dumps(value), json.dumps(value, separators=(",", ":"), ensure_ascii=False),
             "\n" + json.dumps(value, indent=2) + "\n",
             spell(value, rng, ws=True, shuffle=True),
             spell(value, rng, escape=True, float_ints=True),
             spell(value, rng, ws=True, shuffle=True, escape=rng.random() < 0.5, float_ints=True)]
    if not unique_keys:
        texts.append(spell(value, rng, ws=rng.random() < 0.5, shuffle=True, duplicates=True))
    return texts


def splits(text: str, rng: random.Random, *, every_point: bool) -> Iterator[list[str]]:
    """Every single split point, and one character at a time; or a few random multi-splits."""
    if every_point:
        for k in range(len(text) + 1):
            yield [text[:k], text[k:]]
        yield list(text)
        return
    for _ in range(2):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 12)))) \
            if len(text) > 1 else []
        yield [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def check(schema: CompiledSchema, text: str, rng: random.Random, *, every_point: bool = False,
          unique_keys: bool = False) -> tuple[bool, int | None]:
    """Feeds `text` at several splits; asserts the three properties. Returns (valid, where it was cut)."""
    valid = truth(schema, text, unique_keys=unique_keys)
    cut_at: int | None = None
    for pieces in splits(text, rng, every_point=every_point):
        checker = StreamChecker(schema, unique_keys=unique_keys)
        offset = 0
        cut: int | None = None
        for piece in pieces:
            index = checker.feed(piece)
            if index is not None:
                assert 0 <= index < len(piece) or (index == 0 and not piece), (index, piece)
                cut = offset + index
                assert checker.accepted == cut
                assert checker.feed("x") == 0
                break
            offset += len(piece)
        verdict = checker.end()
        assert checker.end() is verdict  # idempotent
        if valid:
            assert cut is None, f"cut at {cut} ({checker.violation}) of valid {text!r} split {pieces!r}"
            assert verdict is None, f"{verdict} of valid {text!r}"
        else:
            assert verdict is not None, f"invalid {text!r} passed"
        if cut is not None:
            assert checker.violation is verdict
            again = StreamChecker(schema, unique_keys=unique_keys)
            assert again.feed(text[:cut]) is None, f"the text before the cut at {cut} of {text!r} is refused"
            assert again.feed(text[cut:]) == 0, "the same text cut elsewhere"
            cut_at = cut if cut_at is None else cut_at
            assert cut == cut_at, "where a text is cut does not depend on how it was split"
    return valid, cut_at


# --- the corpus ------------------------------------------------------------------------------------------


def test_suite_corpus_is_there() -> None:
    assert len(CASES) > 1200
    assert len(SKIPPED) == 54, SKIPPED  # remote refs and remote metaschemas: counted, not silently lost


@pytest.mark.parametrize("unique_keys", [False, True])
def test_suite_cases_every_split_and_spelling(unique_keys: bool) -> None:
    rng = random.Random(21)
    valid_seen = invalid_seen = 0
    for _name, schema, instance in CASES:
        texts = spellings(instance, rng, unique_keys=unique_keys)
        for k, text in enumerate(texts):
            valid, _ = check(schema, text, rng, every_point=k == 0 and len(text) <= 120, unique_keys=unique_keys)
            valid_seen += valid
            invalid_seen += not valid
    assert valid_seen > 3000 and invalid_seen > 2500


# --- generated schemas and documents ---------------------------------------------------------------------

KEYS = ["a", "ab", "b", "é", "a/b", "~0", "", "😀"]
STRINGS = ["", "a", "ab", "abc", "é", "😀", 'x"y', "\\", "\n", "\x00", "a😀b", "\ud83d", "\udc00x"]

json_values = st.recursive(
    st.none() | st.booleans() | st.sampled_from(STRINGS)
    | st.sampled_from([0, 1, -1, 2, 7, 10**20, -(2**63)]) | st.sampled_from([1.5, 1.0, -0.0, 2.5e-3, 1e300]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12)


@st.composite
def schema_for(draw: st.DrawFn, value: object, depth: int = 0) -> Any:
    """A schema that `value` satisfies, as tight as the draw makes it (bounds at the value's own size)."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([True, {}]))
    if isinstance(value, bool) or value is None:
        return draw(st.sampled_from([{"type": "boolean" if value is not None else "null"}, {"const": value},
                                     {"enum": [value, "x", 0]}]))
    if isinstance(value, int | float):
        integral = isinstance(value, int) or value.is_integer()
        return draw(st.sampled_from([
            {"type": "integer" if integral else "number"}, {"type": ["number", "string"]},
            {"minimum": value, "maximum": value}, {"enum": [value, "1"]}, {"const": value},
            {"type": "number", "multipleOf": 0.5} if isinstance(value, int) and abs(value) < 2**53 else {}]))
    if isinstance(value, str):
        return draw(st.sampled_from([
            {"type": "string", "maxLength": len(value), "minLength": len(value)}, {"const": value},
            {"enum": sorted({value, value + "z", "a" + value, "zz"})}, {"maxLength": len(value) + 1},
            {"type": "string", "pattern": "^" if not value else "[\\s\\S]"}]))
    if isinstance(value, list):
        n = len(value)
        prefix = draw(st.integers(0, n))
        rest = [draw(schema_for(x, depth + 1)) for x in value[prefix:]]
        node: dict[str, Any] = {"type": "array", "maxItems": n + draw(st.integers(0, 1)), "minItems": n}
        if prefix:
            node["prefixItems"] = [draw(schema_for(x, depth + 1)) for x in value[:prefix]]
        node["items"] = {"anyOf": rest} if rest else draw(st.sampled_from([False, {"type": "null"}]))
        return draw(wrapped(node))
    assert isinstance(value, dict)
    props = {k: draw(schema_for(x, depth + 1)) for k, x in value.items()}
    node = {"type": "object", "properties": props, "required": sorted(draw(st.sets(st.sampled_from(list(props))))
                                                                      if props else [])}
    choice = draw(st.integers(0, 3))
    if choice == 0:
        node["additionalProperties"] = False
    elif choice == 1:
        node["maxProperties"] = len(value)
        node["propertyNames"] = {"maxLength": max((len(k) for k in value), default=0)}
    elif choice == 2 and value:
        node["propertyNames"] = {"enum": sorted(value)}
        node["additionalProperties"] = {"not": {"type": "null"}}
    return draw(wrapped(node))


@st.composite
def wrapped(draw: st.DrawFn, node: dict[str, Any]) -> Any:
    how = draw(st.integers(0, 4))
    if how == 1:
        return {"anyOf": [{"type": "string", "maxLength": 0}, node, {"type": "integer"}]}
    if how == 2:
        return {"allOf": [node, {"not": {"type": "null"}}]}
    if how == 3:
        return {"oneOf": [node, {"type": "boolean"}]}
    if how == 4:  # an embedded resource: its "#/..." pointers start at its $id
        return {"$id": f"urn:uuid:{draw(st.uuids())}", "$defs": {"d": node}, "$ref": "#/$defs/d"}
    return node


def mutate(value: object, rng: random.Random) -> object:
    """A nearby document, usually one the tight schema refuses."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(sorted(value))
        out = dict(value)
        if rng.random() < 0.2:
            del out[key]
        elif rng.random() < 0.2:
            out[key + "q"] = 1
        else:
            out[key] = mutate(value[key], rng)
        return out
    if isinstance(value, list) and value and rng.random() < 0.7:
        at = rng.randrange(len(value))
        if rng.random() < 0.2:
            return [*value, value[at]]
        return [*value[:at], mutate(value[at], rng), *value[at + 1:]]
    return rng.choice([None, True, "abcd", "", 3, 2.5, [], {}, [1], {"a": None}, "é" * 3])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), json_values, st.randoms(use_true_random=False), st.booleans())
def test_generated_tight_schemas(data: st.DataObject, value: object, rng: random.Random, unique_keys: bool) -> None:
    schema = data.draw(schema_for(value))
    try:
        compiled = CACHE.compile(schema)
    except InvalidSchema:
        return
    # Tight schemas take their value, unless a lone surrogate in it trips the validator (then invalid).
    assert truth(compiled, json.dumps(value)) or re.search(r"\\ud[89a-f]", json.dumps(value)), schema
    for k, text in enumerate(spellings(value, rng, unique_keys=unique_keys)):
        check(compiled, text, rng, every_point=k == 1 and len(text) <= 60, unique_keys=unique_keys)
    for _ in range(2):
        other = mutate(value, rng)
        check(compiled, spell(other, rng, ws=rng.random() < 0.5, shuffle=True), rng, unique_keys=unique_keys)


loose_schemas = st.recursive(
    st.sampled_from([True, False, {}, {"type": "integer"}, {"type": ["string", "null"]}, {"enum": ["a", 1, None]},
                     {"const": "ab"}, {"maxLength": 1}, {"minLength": 2}, {"pattern": "^a"}, {"maximum": 1},
                     {"$ref": "#"}, {"maxItems": 1}, {"maxProperties": 1}, {"required": ["a"]},
                     {"uniqueItems": True}, {"contains": {"type": "null"}}, {"minProperties": 1},
                     {"dependentRequired": {"a": ["b"]}}, {"enum": [{"a": 1}, [1], "a", 1.5]}, {"multipleOf": 2},
                     {"const": {"a": None}}, {"unevaluatedProperties": False}, {"propertyNames": {"pattern": "^a"}},
                     {"unevaluatedItems": {"type": "integer"}}]),
    lambda inner: st.one_of(
        st.builds(lambda p, a: {"properties": p, "additionalProperties": a},
                  st.dictionaries(st.sampled_from(KEYS), inner, max_size=3), inner),
        st.builds(lambda p: {"patternProperties": p}, st.dictionaries(st.sampled_from(["^a", "b$", "é"]), inner,
                                                                       max_size=2)),
        st.builds(lambda p, i: {"prefixItems": p, "items": i}, st.lists(inner, max_size=2), inner),
        st.builds(lambda x: {"propertyNames": x}, inner),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: {"oneOf": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: {"allOf": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda x: {"not": x}, inner),
        st.builds(lambda x, y: {"if": x, "then": y}, inner, inner),
        st.builds(lambda x: {"unevaluatedProperties": x, "properties": {"a": True}}, inner),
        st.builds(lambda x: {"$defs": {"d": x}, "items": {"$ref": "#/$defs/d"}}, inner),
        st.builds(lambda x, y: {"dependentSchemas": {"a": x}, "else": y}, inner, inner),
        st.builds(lambda x, y: {"contains": x, "maxContains": 1, "prefixItems": [y]}, inner, inner),
        st.builds(lambda x: {"$defs": {"x": {"$anchor": "x", "anyOf": [x]}}, "items": {"$ref": "#x"}}, inner),
        st.builds(lambda x, u: {"$id": f"urn:uuid:{u}", "$defs": {"d": x}, "properties": {"a": {"$ref": "#/$defs/d"}}},
                  inner, st.uuids()),
        st.builds(lambda x: {"$defs": {"n": {"$dynamicAnchor": "n", "anyOf": [x]}}, "items": {"$dynamicRef": "#n"}},
                  inner)),
    max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loose_schemas, st.lists(json_values, min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_generated_loose_schemas(schema: Any, values: list[object], rng: random.Random) -> None:
    try:
        compiled = CACHE.compile(schema)
    except InvalidSchema:
        return
    for value in values:
        for k, text in enumerate(spellings(value, rng)[:5]):
            check(compiled, text, rng, every_point=k == 1 and len(text) <= 60)


# --- each early rule, at its character -------------------------------------------------------------------


def cut(schema: object, text: str, *, unique_keys: bool = False) -> tuple[int | None, str | None]:
    """Where `text` fed one character at a time is cut (None: not before the end), and the keyword."""
    checker = StreamChecker(CACHE.compile(schema), unique_keys=unique_keys)
    for k, ch in enumerate(text):
        if checker.feed(ch) is not None:
            assert checker.violation is not None
            return k, checker.violation.keyword
    return None, None


def test_syntax_cut_at_the_first_impossible_character() -> None:
    for text, at in [("Sure! {}", 0), ("```json\n{}", 0), ("{} {}", 3), ("[1,]", 3), ('{"a" 1}', 5),
                     ('{"a":1,}', 7), ("01", 1), ("-a", 1), ("1.e5", 2), ("1e+", None), ("tru", None),
                     ("trUe", 2), ("NaN", 0), ("-Infinity", 1), ('"a\\x"', 3), ('"\\u12G4"', 5),
                     ('"a\tb"', 2), ("[1 2]", 3), ('{"a":1 "b":2}', 7), ("\ufeff{}", 0), ("1 ", None),
                     (" \n\t\r[] \r\n", None), ("{}x", 2), ('{"a":[}', 6), ("[1}", 2)]:
        got, keyword = cut(True, text)
        assert got == at, (text, got)
        if at is not None:
            assert keyword == "json"


def test_types_at_the_first_character() -> None:
    assert cut({"type": "object"}, '\n ["a"]') == (2, "type")
    assert cut({"type": "integer"}, '"1"') == (0, "type")
    assert cut({"type": "integer"}, "1.0") == (None, None)  # an integer in draft 2020-12
    assert cut({"type": "integer"}, "1.5 ") == (3, "type")  # known when the number ends
    assert cut({"items": {"type": "integer"}}, "[1e2, 1.5]") == (9, "type")
    assert cut({"type": "boolean"}, "null") == (0, "type")
    assert cut({"enum": [True, 1]}, "false") == (0, "enum")
    assert cut({"const": None}, "true") == (0, "const")
    assert cut({"enum": [1]}, "1.0 ") == (None, None)  # equal as JSON numbers


def test_enum_prefixes_compare_decoded_characters() -> None:
    schema = {"enum": ["café", "cab"]}
    assert cut(schema, '"caf\\u00e9"') == (None, None)
    assert cut(schema, '"caf\\u00e8"') == (9, "enum")  # the escape's last digit decides
    assert cut(schema, '"cax"') == (3, "enum")
    assert cut(schema, '"cafés"') == (5, "enum")
    assert cut(schema, '"ca"') == (3, "enum")  # a prefix of both, but it ends there
    assert cut({"const": "😀"}, '"\\ud83d\\ude00"') == (None, None)
    assert cut({"const": "😀"}, '"\\ud83dx"') == (7, "const")  # a lone high surrogate, known at the next char


def test_max_length_counts_python_characters() -> None:
    assert cut({"maxLength": 0}, '"x') == (1, "maxLength")
    assert cut({"maxLength": 2}, '"ab"') == (None, None)
    assert cut({"maxLength": 2}, '"abc"') == (3, "maxLength")
    assert cut({"maxLength": 1}, '"😀"') == (None, None)
    assert cut({"maxLength": 1}, '"\\ud83d\\ude00"') == (None, None)  # a pair is one character
    assert cut({"maxLength": 1}, '"\\u00e9\\n"') == (8, "maxLength")
    assert cut({"items": {"maxLength": 0}}, '["", "x"]') == (6, "maxLength")


def test_member_values_wait_for_their_object_unless_keys_are_unique() -> None:
    schema = {"properties": {"a": {"type": "string", "maxLength": 0}}}
    # Python's json keeps the last "a": the first value is not final until the object closes.
    assert cut(schema, '{"a": "x", "a": ""}') == (None, None)
    assert cut(schema, '{"a": "x"}') == (9, "maxLength")
    assert cut(schema, '{"a": 5, "b": 1}') == (15, "type")
    assert cut(schema, '{"a": "x', unique_keys=True) == (7, "maxLength")
    assert cut(schema, '{"a": 5', unique_keys=True) == (6, "type")
    assert cut(schema, '{"a": "", "a": ""}', unique_keys=True) == (12, "json")
    checker = StreamChecker(CACHE.compile(True), unique_keys=True)
    assert checker.feed('[{"b": 1, "b": 2}]') == 12
    # Inside an array, an item is final as soon as it ends.
    assert cut({"items": schema}, '[{"a": "x"}, {}]') == (10, "maxLength")


def test_repeated_names_read_as_parse_document_reads_them() -> None:
    refused = not parse_document('{"a": 1, "a": 2}').ok
    assert REPEATED_NAMES_REFUSED is refused
    assert StreamChecker(CACHE.compile(True)).unique_keys is refused
    checker = StreamChecker(CACHE.compile({"properties": {"a": {"maxLength": 0}}}))
    assert checker.feed('{"a": "x", "a": ""}') == (7 if refused else None)
    assert (checker.end() is None) is not refused


def test_property_names() -> None:
    closed = {"properties": {"name": {}, "nick": {}}, "additionalProperties": False}
    assert cut(closed, '{"name": 1, "nick": 2}') == (None, None)
    assert cut(closed, '{"nix": 1}') == (4, "additionalProperties")
    assert cut(closed, '{"n\\u0061me": 1, "names": 2}') == (22, "additionalProperties")
    assert cut(closed, '{"nam": 1}') == (5, "additionalProperties")  # a prefix, ended early
    assert cut({"additionalProperties": False}, '{"') == (1, "additionalProperties")
    assert cut({"additionalProperties": False}, "{}") == (None, None)
    assert cut({"properties": {"a": False}}, '{"a": 1}') == (3, "false")
    patterned = {"patternProperties": {"^x-": {}}, "additionalProperties": False}
    assert cut(patterned, '{"x-a": 1, "y": 2}') == (13, "additionalProperties")
    assert cut({"propertyNames": {"maxLength": 2}}, '{"ab": 1, "abc": 2}') == (13, "maxLength")
    assert cut({"propertyNames": {"enum": ["a", "b"]}}, '{"c": 1}') == (2, "enum")
    assert cut({"maxProperties": 1}, '{"a": 1, "a": 2}') == (None, None)  # one property, twice
    assert cut({"maxProperties": 1}, '{"a": 1, "b": 2}') == (10, "maxProperties")
    assert cut({"maxProperties": 1}, '{"a": 1, "b": 2}', unique_keys=True) == (7, "maxProperties")


def test_arrays() -> None:
    assert cut({"maxItems": 2}, "[1, 2, 3]") == (5, "maxItems")  # the comma promises a third item
    assert cut({"maxItems": 0}, "[ 1]") == (2, "maxItems")
    assert cut({"prefixItems": [{}, {}], "items": False}, "[1, 2]") == (None, None)
    assert cut({"prefixItems": [{}, {}], "items": False}, "[1, 2, 3]") == (5, "items")
    assert cut({"prefixItems": [{"type": "string"}]}, "[1]") == (1, "type")
    assert cut({"minItems": 2}, "[1]") == (2, "minItems")


def test_finished_values_get_the_full_validator() -> None:
    assert cut({"required": ["a"]}, '{"b": 1}') == (7, "required")
    assert cut({"items": {"pattern": "^a"}}, '["ab", "ba"]') == (10, "pattern")
    assert cut({"items": {"minimum": 3}}, "[3, 2]") == (5, "minimum")
    assert cut({"items": {"not": {"const": 1}}}, "[2, 1]") == (5, "not")
    assert cut({"uniqueItems": True}, "[1, 1]") == (5, "uniqueItems")
    # A literal is known at its first character, and judged there.
    assert cut({"not": {"const": True}}, "true") == (0, "not")
    assert cut({"items": {"not": {"type": "null"}}}, "[1, nul") == (4, "not")


def test_alternatives_die_together() -> None:
    schema = {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "array", "maxItems": 1}]}
    assert cut(schema, '[1, 2, 3]') == (None, None)
    assert cut(schema, '["a"]') == (None, None)  # the first branch is dead, the second holds
    assert cut(schema, '["a", 2]') == (4, "anyOf")  # both branches dead at the comma
    assert cut({"oneOf": [{"type": "string"}, {"type": "integer"}]}, "null") == (0, "oneOf")
    assert cut({"oneOf": [{"type": "number"}, {"type": "integer"}]}, "1 ") == (1, "oneOf")  # both hold
    # Items share their candidates (and what a name decides): a branch one item kills is dead for the next.
    shared = {"anyOf": [{"items": {"additionalProperties": False, "properties": {"a": {}}}},
                        {"items": {"properties": {"b": {"type": "integer"}}}}]}
    assert cut(shared, '[{"a": 1}, {"b": 2}, {"a": "x"}]') == (None, None)
    assert cut(shared, '[{"b": 1}, {"a": 1}, {"b": "x"}]') == (30, "anyOf")
    assert cut(shared, '[{"b": "x"}, {"a": 1}]') == (10, "anyOf")
    recursive = {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#"}}]}
    assert cut(recursive, "[[1, [2]], 3]") == (None, None)
    assert cut(recursive, '[[1, ["x"]]]') == (6, "anyOf")


def test_refs_and_booleans() -> None:
    schema = {"$defs": {"n": {"type": "integer"}, "a b": {"maxLength": 1}},
              "properties": {"x": {"$ref": "#/$defs/n"}}, "items": {"$ref": "#/$defs/a%20b"}}
    assert cut(schema, '["a", "bc"]') == (8, "maxLength")
    assert cut(False, " 1") == (0, "false")
    assert cut({"anyOf": [False, False]}, "1") == (0, "anyOf")
    assert cut({"not": True}, "[1, 2]") == (5, "not")


def test_unfinished_and_empty_documents_fail_at_the_end() -> None:
    schema = CACHE.compile(True)
    for text in ["", "  ", '{"a": ', '{"a": "b', "[1, 2", "-", "1e", "nul", '"\\u12']:
        checker = StreamChecker(schema)
        assert checker.feed(text) is None
        violation = checker.end()
        assert violation is not None and violation.keyword == "json", text


def test_other_drafts_are_checked_for_syntax_only() -> None:
    schema = CACHE.compile({"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"})
    checker = StreamChecker(schema)
    assert checker.feed('"x"') is None
    assert checker.end() is not None
    assert StreamChecker(schema).feed("[1,]") == 3


def test_numbers_and_strings_python_reads() -> None:
    schema = CACHE.compile({"items": {"type": "number"}})
    for text in ["[-0]", "[0.0e-0]", f"[{'9' * 400}]", "[1E+2]", "[1e-400]"]:
        checker = StreamChecker(schema)
        assert checker.feed(text) is None, text
        assert checker.end() is None, text
    # Python reads 1e400 as inf, which jsonschema-rs does not take for a number: refused when it ends.
    assert cut({"items": {"type": "number"}}, "[1e400]") == (6, "type")
    huge = StreamChecker(CACHE.compile(True))  # over Python's 4300 digits: parse_document refuses it
    assert huge.feed("9" * 5000) is None
    assert huge.end() is not None
    # A lone surrogate escape: Python's json reads it, jsonschema-rs reads its type but not its characters.
    lone = StreamChecker(CACHE.compile({"items": {"type": "string"}}))
    assert lone.feed('["\\ud83d"]') is None
    assert lone.end() is None
    lone = StreamChecker(CACHE.compile({"maxLength": 5}))
    assert lone.feed('"\\ud83d"') is None
    violation = lone.end()
    assert violation is not None and violation.keyword == "json"


def test_bounded_length_and_misuse() -> None:
    checker = StreamChecker(CACHE.compile(True), max_chars=10)
    assert checker.feed('["abc",') is None
    assert checker.feed('"defgh"]') == 3
    assert checker.violation is not None and "longer than 10" in checker.violation.message()
    assert checker.end() is checker.violation
    ended = StreamChecker(CACHE.compile(True))
    ended.feed("1")
    assert ended.end() is None
    with pytest.raises(RulesError):
        ended.feed("2")


def test_messages_never_quote_the_answer() -> None:
    secret = "SECRET-4111111111111111"
    schemas: list[object] = [{"type": "integer"}, {"additionalProperties": False}, {"enum": ["a"]},
                             {"properties": {"a": {"maxLength": 1}}}, {"required": ["a"]}, True]
    for schema in schemas:
        for text in [f'"{secret}"', f'{{"{secret}": 1}}', f'{{"a": "{secret}"}}', f"{secret}", f'["{secret}"] x']:
            checker = StreamChecker(CACHE.compile(schema))
            checker.feed(text)
            violation = checker.end()
            if violation is not None:
                assert secret not in violation.message() and "4111" not in violation.message()
