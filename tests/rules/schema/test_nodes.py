"""The schema as the stream checker reads it: what each node decides early, and the plan cache."""

from __future__ import annotations

from rules.schema import SchemaCache
from rules.schema.nodes import K_NUM, K_OBJ, K_STR, plan_for

CACHE = SchemaCache()


def test_a_node_knows_its_kinds_limits_and_names() -> None:
    schema = CACHE.compile({"type": "object", "additionalProperties": False, "maxProperties": 3,
                            "properties": {"n": {"type": "string", "maxLength": 4, "enum": ["ab", "abcd"]},
                                           "i": {"type": "integer", "minimum": 0}}})
    root = plan_for(schema)
    assert root is not None and root.kinds == K_OBJ and root.max_properties == 3
    assert root.key_node is not None and root.key_node.str_enum == ("i", "n")
    name = root.properties["n"]
    assert name.kinds == K_STR and name.max_length == 4 and name.str_enum == ("ab", "abcd")
    integer = root.properties["i"]
    assert integer.kinds == K_NUM and integer.final_kinds & K_NUM  # 1.0 vs 1.5 and the minimum: when it ends


def test_local_refs_resolve_to_their_nodes_and_remote_ones_wait_for_the_validator() -> None:
    schema = CACHE.compile({"$defs": {"p": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/p"}}})
    root = plan_for(schema)
    assert root is not None
    assert root.properties["a"].conj == (root.properties["a"].conj[0],)
    assert root.properties["a"].conj[0].kinds == K_STR


def test_plans_are_cached_by_schema_and_older_drafts_get_none() -> None:
    schema = CACHE.compile({"type": "array", "maxItems": 2})
    assert plan_for(schema) is plan_for(schema)
    older = CACHE.compile({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array"})
    assert plan_for(older) is None
