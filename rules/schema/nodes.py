"""A schema as the stream checker reads it (rules/schema/incremental.py): one `Node` per subschema, keyed by
JSON pointer, with what can be decided before a value is finished (the kinds it allows, string enums, length
and count limits, the names `additionalProperties: false` leaves) and which kinds of finished value need the
subschema's own validator. Built once per schema, cached by its hash (bounded), shared, never changed after.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Final
from urllib.parse import unquote

import jsonschema_rs

from rules.schema.compiled import CompiledSchema, pointer_of

PLAN_ENTRIES = 256

# Value kinds, as a bit set: what a value's first character says it is.
K_OBJ, K_ARR, K_STR, K_NUM, K_TRUE, K_FALSE, K_NULL = 1, 2, 4, 8, 16, 32, 64
K_ALL = 127
_TYPE_KINDS: Final[dict[str, int]] = {"object": K_OBJ, "array": K_ARR, "string": K_STR, "number": K_NUM,
                                      "integer": K_NUM, "boolean": K_TRUE | K_FALSE, "null": K_NULL}
# Keywords that need the finished value checked by the validator, by the kinds of value they constrain.
# Absent here: what the cursor decides itself (allOf, anyOf, local $ref, maxLength, maxItems, maxProperties,
# type and enum/const for strings, booleans and null) and pure annotations. Anything unknown: every kind.
_FINAL_KINDS: Final[dict[str, int]] = {
    **dict.fromkeys(("minLength", "pattern", "format", "contentEncoding", "contentMediaType", "contentSchema"),
                    K_STR),
    **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"), K_NUM),
    **dict.fromkeys(("properties", "patternProperties", "additionalProperties", "required", "minProperties",
                     "dependentRequired", "dependentSchemas", "propertyNames", "unevaluatedProperties"), K_OBJ),
    **dict.fromkeys(("items", "prefixItems", "contains", "minContains", "maxContains", "minItems",
                     "uniqueItems", "unevaluatedItems"), K_ARR),
    **dict.fromkeys(("allOf", "anyOf", "maxLength", "maxItems", "maxProperties", "type", "enum", "const", "$ref",
                     "$schema", "$id", "$anchor", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
                     "definitions", "title", "description", "default", "examples", "deprecated", "readOnly",
                     "writeOnly"), 0),
}
# Keywords whose value holds subschemas, walked so that local `$ref`s find their targets.
_ONE_SCHEMA = ("additionalProperties", "items", "contains", "not", "if", "then", "else", "propertyNames",
               "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


class Node:
    """One subschema as the cursor reads it. Built once per schema (`Plan`), shared, never changed after."""

    __slots__ = ("additional", "conj", "doc", "enum_kinds", "enum_kw", "false", "final_kinds", "groups",
                 "items", "key_node", "kinds", "leaf", "max_items", "max_length", "max_properties", "patterns",
                 "pointer", "prefix_items", "properties", "property_names", "str_enum", "trivial", "type_kinds",
                 "validator")

    def __init__(self, pointer: str, doc: dict[str, Any] | None = None) -> None:
        self.pointer = pointer
        self.doc: dict[str, Any] = doc if doc is not None else {}
        self.false = False
        self.trivial = False
        self.leaf = False  # neither trivial nor false, and nothing to follow at the same position
        self.type_kinds = K_ALL
        self.enum_kinds = K_ALL
        self.kinds = K_ALL
        self.enum_kw = "enum"
        self.str_enum: tuple[str, ...] | None = None
        self.max_length: int | None = None
        self.max_items: int | None = None
        self.prefix_items: tuple[Node, ...] = ()
        self.items: Node | None = None
        self.properties: dict[str, Node] = {}
        self.patterns: tuple[tuple[jsonschema_rs.Validator, Node], ...] = ()
        self.additional: Node | None = None
        self.property_names: Node | None = None
        self.max_properties: int | None = None
        self.key_node: Node | None = None
        self.conj: tuple[Node, ...] = ()
        self.groups: tuple[tuple[str, tuple[Node, ...]], ...] = ()
        self.final_kinds = 0
        self.validator: jsonschema_rs.Validator | None = None

    @classmethod
    def names(cls, names: frozenset[str] | set[str], keyword: str, value: object) -> Node:
        """A node for property names: one of `names` (what `additionalProperties: false` or a reached
        `maxProperties` leaves); `keyword` and `value` say why, for the violation."""
        node = cls("", {keyword: value})
        node.kinds = node.type_kinds = node.enum_kinds = K_STR
        node.enum_kw = keyword
        node.str_enum = tuple(sorted(names))
        return node


def kind_of(value: object) -> int:
    if value is None:
        return K_NULL
    if value is True:
        return K_TRUE
    if value is False:
        return K_FALSE
    if isinstance(value, str):
        return K_STR
    if isinstance(value, int | float):
        return K_NUM
    return K_ARR if isinstance(value, list) else K_OBJ


def is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class Plan:
    """The nodes of one draft 2020-12 schema, keyed by JSON pointer; local `$ref`s resolved to nodes."""

    def __init__(self, schema: CompiledSchema) -> None:
        self.nodes: dict[str, Node] = {}
        self.refs: list[tuple[Node, str]] = []
        self.dynamic = False
        self.patterns: dict[str, jsonschema_rs.Validator] = {}
        self.root = self._walk(schema.document, (), ())
        for node, target in self.refs:
            found = self.nodes.get(target)
            if found is None:
                node.final_kinds = K_ALL
            else:
                node.conj += (found,)
        for node in self.nodes.values():
            node.validator = schema.validator if not node.pointer else (
                None if self.dynamic else schema.subschema_validator(node.pointer))
            node.trivial = not node.false and node.final_kinds == 0 and node.kinds == K_ALL and not (
                node.conj or node.groups or node.str_enum is not None or node.max_length is not None
                or node.max_items is not None or node.prefix_items or node.items or node.properties
                or node.patterns or node.additional or node.property_names or node.max_properties is not None)
            node.leaf = not (node.trivial or node.false or node.conj or node.groups)

    def _walk(self, value: object, path: tuple[str, ...], resource: tuple[str, ...]) -> Node:
        pointer = pointer_of(path)
        node = Node(pointer, value if isinstance(value, dict) else None)
        self.nodes[pointer] = node
        if value is False:
            node.false = True
        if not isinstance(value, dict):
            return node
        if path and isinstance(value.get("$id"), str):
            resource = path  # an embedded resource: its "#/..." pointers start here
        final = 0
        for keyword, sub in value.items():
            final |= _FINAL_KINDS.get(keyword, K_ALL)
            if keyword in _ONE_SCHEMA:
                child = self._walk(sub, (*path, keyword), resource)
                if keyword == "additionalProperties":
                    node.additional = child
                elif keyword == "items":
                    node.items = child
                elif keyword == "propertyNames":
                    node.property_names = child
            elif keyword in _SCHEMA_LISTS and isinstance(sub, list):
                children = tuple(self._walk(s, (*path, keyword, str(i)), resource) for i, s in enumerate(sub))
                if keyword == "allOf":
                    node.conj += children
                elif keyword == "prefixItems":
                    node.prefix_items = children
                elif children:
                    node.groups += ((keyword, children),)
            elif keyword in _SCHEMA_MAPS and isinstance(sub, dict):
                children_map = {k: self._walk(s, (*path, keyword, k), resource) for k, s in sub.items()}
                if keyword == "properties":
                    node.properties = children_map
                elif keyword == "patternProperties":
                    node.patterns = tuple((self._pattern(k), c) for k, c in children_map.items())
        if "oneOf" in value:
            final |= K_ALL  # exactly one: the branches' bookkeeping only knows "at least one"
        ref = value.get("$ref")
        if isinstance(ref, str):
            if ref == "#" or ref.startswith("#/"):
                tokens = [unquote(t).replace("~1", "/").replace("~0", "~") for t in ref[1:].split("/")[1:]]
                self.refs.append((node, pointer_of((*resource, *tokens))))
            else:
                final |= K_ALL  # an anchor or a URI: the validator knows where it goes, the cursor does not
        if "$dynamicRef" in value:
            self.dynamic = True
        node.final_kinds = final
        self._read_assertions(node, value)
        return node

    def _pattern(self, pattern: str) -> jsonschema_rs.Validator:
        """Whether a name matches a `patternProperties` regex, asked of jsonschema-rs itself (ECMA-262 as it
        reads it): `{name: null}` fails `{"patternProperties": {pattern: false}}` exactly when it matches."""
        found = self.patterns.get(pattern)
        if found is None:
            found = self.patterns[pattern] = jsonschema_rs.Draft202012Validator(
                {"patternProperties": {pattern: False}})
        return found

    @staticmethod
    def _read_assertions(node: Node, value: dict[str, Any]) -> None:
        types = value.get("type")
        if isinstance(types, str):
            types = [types]
        if isinstance(types, list):
            node.type_kinds = 0
            for t in types:
                node.type_kinds |= _TYPE_KINDS.get(t, 0) if isinstance(t, str) else 0
            if "integer" in types and "number" not in types:
                node.final_kinds |= K_NUM  # 1.0 is an integer, 1.5 is not: known when the number ends
        strings: set[str] | None = None
        for keyword in ("enum", "const"):
            if keyword not in value:
                continue
            allowed = value[keyword] if keyword == "enum" else [value[keyword]]
            if not isinstance(allowed, list):
                continue
            kinds = 0
            for member in allowed:
                kinds |= kind_of(member)
            node.enum_kinds &= kinds
            node.enum_kw = keyword
            these = {m for m in allowed if isinstance(m, str)}
            strings = these if strings is None else strings & these
            node.final_kinds |= kinds & (K_NUM | K_ARR | K_OBJ)
        if strings is not None:
            node.str_enum = tuple(sorted(strings))
        node.kinds = node.type_kinds & node.enum_kinds
        for keyword in ("maxLength", "maxItems", "maxProperties"):
            limit = value.get(keyword)
            if is_count(limit):
                setattr(node, {"maxLength": "max_length", "maxItems": "max_items",
                               "maxProperties": "max_properties"}[keyword], limit)
        if node.additional is not None and node.additional.false and not node.patterns:
            node.key_node = Node.names(frozenset(node.properties), "additionalProperties", False)


_PLANS: OrderedDict[str, Plan | None] = OrderedDict()
_PLANS_LOCK = threading.Lock()


def plan_for(schema: CompiledSchema) -> Node | None:
    """The root node of a schema's plan (cached by the schema's hash, bounded), or None: syntax only."""
    if schema.draft != "2020-12":
        return None
    with _PLANS_LOCK:
        found = _PLANS.get(schema.sha256)
        if found is not None:
            _PLANS.move_to_end(schema.sha256)
            return found.root
    plan = Plan(schema)
    with _PLANS_LOCK:
        _PLANS[schema.sha256] = plan
        while len(_PLANS) > PLAN_ENTRIES:
            _PLANS.popitem(last=False)
    return plan.root
