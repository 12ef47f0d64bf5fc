"""Route schemas: loaded and compiled at start-up (a bad file stops the start), chosen by model glob."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proxy.config import resolve
from proxy.schemas.sources import RouteSchemaError, RouteSchemas
from rules.schema import SchemaCache


def write(tmp_path: Path, name: str, schema: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(schema))
    return str(path)


def test_the_first_matching_glob_wins_then_the_default(tmp_path: Path) -> None:
    a, b, d = (write(tmp_path, f"{n}.json", {"title": n}) for n in ("a", "b", "d"))
    schemas = RouteSchemas.load(d, (("qwen-*", a), ("qwen-7b*", b)), SchemaCache())
    assert schemas.for_model("qwen-7b-chat").name == "a"  # type: ignore[union-attr]
    assert schemas.for_model("llama") is schemas.default
    assert schemas.for_model(None) is schemas.default
    assert RouteSchemas.load(None, (("x", a),), SchemaCache()).for_model("y") is None


@pytest.mark.parametrize("content", ["{not json", json.dumps({"type": 5}), json.dumps({"$ref": "https://x/y"})])
def test_a_bad_schema_file_stops_the_start(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(RouteSchemaError, match=r"bad\.json"):
        RouteSchemas.load(str(path), (), SchemaCache())


def test_config_reads_the_map_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    config_file = tmp_path / "conf" / "warden.yaml"
    config_file.write_text("upstream: http://u:1\nschemas:\n  'qwen-*': q.json\nschema: d.json\n"
                           "schema_policy: flag\nschema_reask: 3\n")
    config = resolve({}, env={}, config_file=config_file)
    assert config.schemas == (("qwen-*", str(tmp_path / "conf" / "q.json")),)
    assert config.schema == str(tmp_path / "conf" / "d.json")
    assert (config.schema_policy, config.schema_reask, config.schema_inject) == ("flag", 3, "auto")
    from_env = resolve({}, env={"WARDEN_UPSTREAM": "http://u:1", "WARDEN_SCHEMAS": "a*=/s/a.json,b=/s/b.json",
                                "WARDEN_SCHEMA": "/s/d.json"})
    assert from_env.schemas == (("a*", "/s/a.json"), ("b", "/s/b.json")) and from_env.schema == "/s/d.json"
    with pytest.raises(ValueError, match="schema_policy"):
        resolve({"upstream": "http://u:1", "schema_policy": "ignore"}, env={})


def test_schema_reask_is_bounded() -> None:
    assert resolve({"upstream": "http://u:1", "schema_reask": "5"}, env={}).schema_reask == 5
    with pytest.raises(ValueError, match="at most 5"):
        resolve({"upstream": "http://u:1", "schema_reask": "6"}, env={})
