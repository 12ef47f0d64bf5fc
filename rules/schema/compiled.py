"""JSON Schemas compiled once and cached by content hash, and their violations in Warden's own words.

The validator is jsonschema-rs (draft 2020-12; measured in ../FACTS: 15 us p50 on a 1 KB answer against a
20-property schema, against ~850 us for the pure-Python `jsonschema`). Every subschema is compiled too
(`validator_map_for`), keyed by its JSON pointer, so the stream checker (rules/schema/incremental.py) can
check a finished sub-value against the subschema it falls under with the root's `$defs` in reach.

A schema comes from a client as often as from an operator, so it is hostile until compiled: bounded in size
and depth, meta-validated against draft 2020-12, and a `$ref` that is not inside the document is refused,
never fetched. A violation names the JSON pointer and the keyword and quotes only the schema, never the
answer: the message reaches the client, logs and spans.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema_rs

from rules.errors import RulesError

MAX_SCHEMA_BYTES = 256 * 1024  # of the compact serialization; OpenAI's own limit is far below (100 properties)
MAX_SCHEMA_DEPTH = 32  # JSON nesting of the schema document
MAX_VIOLATIONS = 5  # reported per document: enough to re-ask, short enough for a header or a log line
CACHE_ENTRIES = 256
# `$schema` values accepted, by draft. No `$schema` means 2020-12. An older draft that a client declares (zod
# emits draft-07) is validated as that draft; the stream checker then decides on syntax alone (its keyword
# reading is 2020-12's: `items` as an array means something else in draft-07).
DRAFTS: dict[str, str] = {
    **{f"{scheme}://json-schema.org/draft/2020-12/schema{end}": "2020-12" for scheme in ("https", "http")
       for end in ("", "#")},
    **{f"{scheme}://json-schema.org/draft/2019-09/schema{end}": "2019-09" for scheme in ("https", "http")
       for end in ("", "#")},
    **{f"http://json-schema.org/draft-0{n}/schema{end}": n for n in ("7", "6", "4") for end in ("", "#")},
}
_VALIDATORS: dict[str, Any] = {
    "2020-12": jsonschema_rs.Draft202012Validator, "2019-09": jsonschema_rs.Draft201909Validator,
    "7": jsonschema_rs.Draft7Validator, "6": jsonschema_rs.Draft6Validator, "4": jsonschema_rs.Draft4Validator,
}


class InvalidSchema(RulesError):
    """A schema Warden will not use. `reason` is our words (it may quote the schema, never an answer);
    `pointer` is where in the schema, when known."""

    def __init__(self, reason: str, pointer: str = "") -> None:
        self.reason = reason
        self.pointer = pointer
        super().__init__(f"{reason} (at {pointer})" if pointer else reason)


class RemoteRefRefused(Exception):
    """Raised inside jsonschema-rs's retriever; it never escapes compile_schema."""


def _refuse_remote(uri: str) -> Any:
    raise RemoteRefRefused(f"remote $ref {uri!r} is never fetched")


def escape_token(token: object) -> str:
    """One RFC 6901 reference token."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer_of(path: Iterator[object] | list[object] | tuple[object, ...]) -> str:
    return "".join("/" + escape_token(t) for t in path)


@dataclass(frozen=True, slots=True)
class Violation:
    """Why a document fails its schema: where (a JSON pointer into the answer; "" is the whole document),
    which keyword, and a detail built from the schema alone."""

    pointer: str
    keyword: str
    detail: str

    def message(self) -> str:
        where = f"at {self.pointer}" if self.pointer else "at the document root"
        return f"{where}: {self.detail} (keyword `{self.keyword}`)"


LONE_SURROGATE = Violation("", "json", "a string holds a lone UTF-16 surrogate escape, which is not Unicode text")


def _depth(value: object) -> int:
    """Nesting depth without recursion (a hostile schema may be deeper than Python's stack)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > MAX_SCHEMA_DEPTH:
                return deepest
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return deepest


def canonical_bytes(schema: object) -> bytes:
    """The schema's identity: compact, keys sorted, so the same schema sent twice hashes the same."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8", "surrogatepass")


def _at(document: object, path: Sequence[object]) -> object:
    node = document
    for token in path:
        in_dict = isinstance(node, dict) and isinstance(token, str) and token in node
        if in_dict or (isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node)):
            node = node[token]  # type: ignore[index]
        else:
            return None
    return node


def _short(value: object, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_LIMITS = {
    "maxLength": "longer than {} characters", "minLength": "shorter than {} characters",
    "maximum": "greater than {}", "minimum": "less than {}",
    "exclusiveMaximum": "not less than {}", "exclusiveMinimum": "not greater than {}",
    "multipleOf": "not a multiple of {}", "maxItems": "more than {} items", "minItems": "fewer than {} items",
    "maxProperties": "more than {} properties", "minProperties": "fewer than {} properties",
}


def describe(keyword: str, schema_value: object, error: jsonschema_rs.ValidationError) -> str:
    """The detail of one violation, from the keyword's value in the schema (never from the answer)."""
    if keyword == "type":
        return f"expected type {_short(schema_value)}"
    if keyword == "required":
        missing = getattr(error.kind, "property", None)
        named = f" {_short(missing)}" if isinstance(missing, str) else ""
        return f"missing the required property{named}"
    if keyword == "enum":
        return f"not one of the allowed values {_short(schema_value)}"
    if keyword == "const":
        return f"not the required constant {_short(schema_value)}"
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        return "a property the schema does not allow"
    if keyword in ("additionalItems", "items", "unevaluatedItems", "prefixItems"):
        return "an item the schema does not allow"
    if keyword == "pattern":
        return f"does not match the pattern {_short(schema_value)}"
    if keyword == "uniqueItems":
        return "items are not unique"
    if keyword in _LIMITS:
        return _LIMITS[keyword].format(_short(schema_value))
    if keyword in ("anyOf", "oneOf"):
        return f"matches {'none' if keyword == 'anyOf' else 'not exactly one'} of the alternatives"
    if keyword == "not":
        return "matches a schema it must not"
    if keyword == "false":
        return "no value is allowed here"
    return f"fails `{keyword}`"


@dataclass(frozen=True, slots=True, eq=False)
class CompiledSchema:
    """One schema, ready to validate with. `document` is the schema as given (read only: it is shared through
    the cache); `subschemas` has a validator for every subschema, keyed `#/json/pointer` (jsonschema-rs)."""

    sha256: str
    document: object
    draft: str  # "2020-12" unless the schema's `$schema` declares an older draft (DRAFTS)
    validator: jsonschema_rs.Validator
    subschemas: jsonschema_rs.ValidatorMap

    def is_valid(self, instance: object) -> bool:
        try:
            return bool(self.validator.is_valid(instance))
        except UnicodeEncodeError:
            return False  # LONE_SURROGATE: see violations

    def violations(self, instance: object, limit: int = MAX_VIOLATIONS) -> tuple[Violation, ...]:
        """The first `limit` violations, in the validator's order; () when valid. A string with a lone UTF-16
        surrogate (JSON's `"\\ud83d"` escape parses to one) is not Unicode text and cannot be validated: it is a
        violation of its own (I-JSON, RFC 7493 section 2.1, forbids it), not a crash."""
        try:
            return self._violations(instance, limit)
        except UnicodeEncodeError:
            return (LONE_SURROGATE,)

    def _violations(self, instance: object, limit: int) -> tuple[Violation, ...]:
        found: list[Violation] = []
        for error in self.validator.iter_errors(instance):
            schema_path = list(error.schema_path)
            keyword = str(schema_path[-1]) if schema_path else "false"
            value = _at(self.document, schema_path)
            found.append(Violation(pointer_of(list(error.instance_path)), keyword, describe(keyword, value, error)))
            if len(found) >= limit:
                break
        return tuple(found)

    def subschema_validator(self, pointer: str) -> jsonschema_rs.Validator | None:
        """The validator of the subschema at `pointer` ("" is the root), with the root's definitions."""
        if not pointer:
            return self.validator
        return self.subschemas.get("#" + pointer)


def compile_schema(schema: object) -> CompiledSchema:
    """Check and compile a schema (InvalidSchema names why not). Prefer SchemaCache.compile."""
    try:
        canonical = canonical_bytes(schema)
    except (TypeError, ValueError) as exc:
        raise InvalidSchema(f"not a JSON document: {exc}") from None
    return _compile(schema, canonical, hashlib.sha256(canonical).hexdigest())


def _compile(schema: object, canonical: bytes, sha256: str) -> CompiledSchema:
    if not isinstance(schema, dict | bool):
        raise InvalidSchema(f"a schema is a JSON object or a boolean, not {type(schema).__name__}")
    if len(canonical) > MAX_SCHEMA_BYTES:
        raise InvalidSchema(f"the schema is {len(canonical)} bytes; the limit is {MAX_SCHEMA_BYTES}")
    if _depth(schema) > MAX_SCHEMA_DEPTH:
        raise InvalidSchema(f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
    draft = "2020-12"
    if isinstance(schema, dict):
        declared = schema.get("$schema")
        if declared is not None:
            if not isinstance(declared, str) or declared not in DRAFTS:
                raise InvalidSchema(f"unknown $schema {_short(declared)}; draft 2020-12 is the default", "/$schema")
            draft = DRAFTS[declared]
        try:
            jsonschema_rs.meta.validate(schema)
        except jsonschema_rs.ValidationError as exc:
            where = pointer_of(list(exc.instance_path))
            raise InvalidSchema(f"not a valid draft {draft} schema: {exc.message.splitlines()[0]}", where) from None
        except (ValueError, jsonschema_rs.ReferencingError) as exc:
            raise InvalidSchema(f"not a valid draft {draft} schema: {str(exc).splitlines()[0]}") from None
    try:
        validator = _VALIDATORS[draft](schema, retriever=_refuse_remote, mask="***")
        subschemas = jsonschema_rs.validator_map_for(schema, retriever=_refuse_remote, mask="***")
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "RemoteRefRefused" in first:
            raise InvalidSchema(first.split("RemoteRefRefused: ")[-1]) from None
        if '"regex"' in first:
            raise InvalidSchema("the schema cannot be compiled: a `pattern` is not a regular expression") from None
        raise InvalidSchema(f"the schema cannot be compiled: {first}") from None
    return CompiledSchema(sha256, schema, draft, validator, subschemas)


class SchemaCache:
    """Compiled schemas by the SHA-256 of their canonical form, least recently used out first. Thread-safe:
    requests compile on the event loop, reloads and tests from other threads."""

    def __init__(self, entries: int = CACHE_ENTRIES) -> None:
        self.entries = entries
        self._cache: OrderedDict[str, CompiledSchema] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._cache)

    def compile(self, schema: object) -> CompiledSchema:
        try:
            canonical = canonical_bytes(schema)
        except (TypeError, ValueError) as exc:
            raise InvalidSchema(f"not a JSON document: {exc}") from None
        if len(canonical) > MAX_SCHEMA_BYTES:  # before hashing a huge hostile schema
            raise InvalidSchema(f"the schema is {len(canonical)} bytes; the limit is {MAX_SCHEMA_BYTES}")
        sha256 = hashlib.sha256(canonical).hexdigest()
        with self._lock:
            found = self._cache.get(sha256)
            if found is not None:
                self._cache.move_to_end(sha256)
                return found
        compiled = _compile(schema, canonical, sha256)
        with self._lock:
            self._cache[sha256] = compiled
            while len(self._cache) > self.entries:
                self._cache.popitem(last=False)
        return compiled
