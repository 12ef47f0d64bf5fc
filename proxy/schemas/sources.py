"""Where an exchange's schemas come from (issue 21): the request's own `response_format` (chat) or
`text.format` (Responses), its tools' `parameters`, and Warden's route schemas (`--schema`, the `schemas:`
map from model glob to file) for chat requests that bring no `response_format` of their own.

A schema in a request is the client's and hostile until compiled (rules/schema/compiled.py bounds it and
never fetches a remote `$ref`): one that cannot be used is a RequestSchemaError naming where it is, and the
request gets a 400 before anything goes upstream. Route schemas are compiled at start-up; one that cannot
be used stops the start (fail closed).
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from proxy.exceptions import ProxyError
from proxy.schemas.plan import SchemaPlan, SchemaSource
from proxy.state import Route
from rules.schema import CompiledSchema, InvalidSchema, SchemaCache

JSON_OBJECT_SCHEMA: dict[str, object] = {"type": "object"}  # what `{"type": "json_object"}` promises
MAX_TOOLS = 128  # OpenAI's own limit on `tools`
INJECTED_NAME = "warden_route_schema"


class RequestSchemaError(ProxyError):
    """A schema in the request that cannot be used: `param` is where (`response_format.json_schema.schema`),
    `reason` is why (the schema's words, never the prompt's)."""

    def __init__(self, param: str, reason: str) -> None:
        self.param = param
        self.reason = reason
        super().__init__(f"{param}: {reason}")


class RouteSchemaError(ProxyError):
    """A configured schema file that cannot be read or used: a start-up error."""


@dataclass(frozen=True, slots=True)
class RouteSchema:
    name: str  # the file's stem, as a response_format name may spell it
    path: str
    schema: CompiledSchema


@dataclass(frozen=True, slots=True)
class RouteSchemas:
    """The configured schemas: `by_model` (glob, schema) in order, then `default` (`--schema`)."""

    by_model: tuple[tuple[str, RouteSchema], ...] = ()
    default: RouteSchema | None = None
    _memo: dict[str, RouteSchema | None] = field(default_factory=dict, compare=False)

    @classmethod
    def load(cls, default: str | None, by_model: tuple[tuple[str, str], ...], cache: SchemaCache) -> RouteSchemas:
        return cls(tuple((glob, _load(path, cache)) for glob, path in by_model),
                   _load(default, cache) if default else None)

    def __bool__(self) -> bool:
        return bool(self.by_model) or self.default is not None

    def for_model(self, model: str | None) -> RouteSchema | None:
        """The schema of a model's chat answers: the first glob that matches, else the default."""
        if not self.by_model:
            return self.default
        key = model or ""
        if key in self._memo:
            return self._memo[key]
        found = next((s for glob, s in self.by_model if model is not None and fnmatch.fnmatchcase(model, glob)),
                     self.default)
        if len(self._memo) < 4096:  # model names come from clients: the memo is bounded
            self._memo[key] = found
        return found


def _load(path: str, cache: SchemaCache) -> RouteSchema:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RouteSchemaError(f"schema file {path}: cannot read it: {exc}") from None
    try:
        compiled = cache.compile(document)
    except InvalidSchema as exc:
        raise RouteSchemaError(f"schema file {path}: {exc}") from None
    name = re.sub(r"[^A-Za-z0-9_-]", "_", Path(path).stem)[:64] or INJECTED_NAME
    return RouteSchema(name, path, compiled)


def _compile(cache: SchemaCache, schema: object, param: str) -> CompiledSchema:
    try:
        return cache.compile(schema)
    except InvalidSchema as exc:
        raise RequestSchemaError(param, str(exc)) from None


def _format_schema(fmt: Mapping[str, object], param: str, cache: SchemaCache) -> CompiledSchema | None:
    """A `response_format` (chat: schema under `json_schema`) or `text.format` (Responses: flat)."""
    kind = fmt.get("type")
    if kind == "json_object":
        return cache.compile(JSON_OBJECT_SCHEMA)
    if kind != "json_schema":
        return None  # `text`, or a type Warden does not know: the upstream judges it
    holder = fmt.get("json_schema", fmt) if "json_schema" in fmt else fmt
    where = f"{param}.json_schema" if "json_schema" in fmt else param
    if not isinstance(holder, dict):
        raise RequestSchemaError(where, "json_schema must be an object")
    if "schema" not in holder:
        return cache.compile({})  # OpenAI makes `schema` optional: any JSON document
    return _compile(cache, holder["schema"], f"{where}.schema")


def _tool_schemas(tools: object, route: Route, cache: SchemaCache) -> dict[str, CompiledSchema]:
    """Function tools' `parameters` by tool name (chat: under `function`; Responses: flat)."""
    if not isinstance(tools, list):
        return {}
    found: dict[str, CompiledSchema] = {}
    for i, tool in enumerate(tools[:MAX_TOOLS]):
        if not isinstance(tool, dict) or tool.get("type", "function") != "function":
            continue
        function = tool.get("function") if route is Route.CHAT else tool
        if not isinstance(function, dict):
            continue
        name, parameters = function.get("name"), function.get("parameters")
        if not isinstance(name, str) or parameters is None:
            continue
        where = f"tools[{i}].function.parameters" if route is Route.CHAT else f"tools[{i}].parameters"
        found[name] = _compile(cache, parameters, where)
    return found


def plan_for(route: Route, body: Mapping[str, object], route_schemas: RouteSchemas,
             cache: SchemaCache) -> tuple[SchemaPlan | None, RouteSchema | None]:
    """The schemas this request's answer must fit, and the route schema to add to the upstream request when
    the plan's content schema is Warden's own (None otherwise). RequestSchemaError for a schema in the
    request that cannot be used."""
    if route is Route.CHAT:
        fmt, fmt_param = body.get("response_format"), "response_format"
    elif route is Route.RESPONSES:
        text = body.get("text")
        fmt, fmt_param = (text.get("format") if isinstance(text, dict) else None), "text.format"
    else:
        return None, None
    tools = _tool_schemas(body.get("tools"), route, cache)
    content = _format_schema(fmt, fmt_param, cache) if isinstance(fmt, dict) else None
    if fmt is not None and not isinstance(fmt, dict):
        raise RequestSchemaError(fmt_param, "must be an object")
    if fmt is not None or route is not Route.CHAT:
        if content is None and not tools:
            return None, None
        return SchemaPlan(SchemaSource.REQUEST, content, tools), None
    model = body.get("model")
    own = route_schemas.for_model(model if isinstance(model, str) else None)
    if own is None:
        return (SchemaPlan(SchemaSource.REQUEST, None, tools), None) if tools else (None, None)
    return SchemaPlan(SchemaSource.ROUTE, own.schema, tools), own


def injected_format(schema: RouteSchema, backend: str = "vllm") -> dict[str, object]:
    """The `response_format` a route schema goes upstream as. vLLM (>= 0.12 dropped `guided_json`), SGLang and
    llama.cpp's own `llama-server` constrain decoding to OpenAI's json_schema form; llama-cpp-python's server
    refuses it with a 500 (its `response_format.type` is `text` or `json_object`, measured against it here)
    and takes the schema as `json_object`'s `schema`, which `llama-server` reads too: so for `llama_cpp`."""
    if backend == "llama_cpp":
        return {"type": "json_object", "schema": schema.schema.document}
    return {"type": "json_schema", "json_schema": {"name": schema.name, "schema": schema.schema.document}}
