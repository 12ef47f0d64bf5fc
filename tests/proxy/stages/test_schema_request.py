"""SchemaRequest on mitmproxy's test flows: the plan comes from the request or the route, an unusable schema
is refused with 400 before anything goes upstream, and a route schema is injected as `response_format`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.test import tflow, tutils

from proxy.config import WardenConfig
from proxy.guard.engine import Guard
from proxy.schemas.plan import SchemaSource
from proxy.schemas.sources import RouteSchemas
from proxy.services import Services
from proxy.stages.correlate import Correlate
from proxy.stages.schema_request import SchemaRequest
from proxy.state import FlowState, Outcome, get_state
from proxy.telemetry.metrics import Metrics
from rules.schema import SchemaCache

_GUARD = Guard.load()
PERSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
          "additionalProperties": False}


def services(tmp_path: Path | None = None, schema: dict[str, Any] | None = None, **config: Any) -> Services:
    cache = SchemaCache()
    route = RouteSchemas()
    if schema is not None:
        assert tmp_path is not None
        path = tmp_path / "person.json"
        path.write_text(json.dumps(schema))
        route = RouteSchemas.load(str(path), (), cache)
    return Services(config=WardenConfig(upstream="http://u:1", **config), metrics=Metrics(), guard=_GUARD,
                    schema_cache=cache, route_schemas=route)


def posted(body: dict[str, Any], path: str = "/v1/chat/completions") -> http.HTTPFlow:
    request = tutils.treq(path=path.encode(), method=b"POST", content=json.dumps(body).encode(),
                          headers=http.Headers(content_type="application/json"))
    return tflow.tflow(req=request)


def planned(svc: Services, flow: http.HTTPFlow) -> FlowState:
    correlate = Correlate(svc)
    correlate.requestheaders(flow)
    correlate.request(flow)
    SchemaRequest(svc).request(flow)
    state = get_state(flow)
    assert state is not None
    return state


def chat(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}


def test_a_request_json_schema_is_planned_and_forwarded_as_it_came() -> None:
    body = chat(response_format={"type": "json_schema", "json_schema": {"name": "p", "schema": PERSON}})
    flow = posted(body)
    before = flow.request.content
    state = planned(services(), flow)
    assert state.schema is not None and state.schema.plan.source is SchemaSource.REQUEST
    assert state.schema.plan.content is not None and state.schema.plan.content.document == PERSON
    assert flow.request.content == before and flow.response is None


def test_json_object_means_any_object() -> None:
    state = planned(services(), posted(chat(response_format={"type": "json_object"})))
    assert state.schema is not None and state.schema.plan.content is not None
    assert state.schema.plan.content.is_valid({}) and not state.schema.plan.content.is_valid([])


def test_tools_parameters_are_planned_by_name() -> None:
    tools = [{"type": "function", "function": {"name": "get_person", "parameters": PERSON}},
             {"type": "function", "function": {"name": "no_params"}}]
    state = planned(services(), posted(chat(tools=tools)))
    assert state.schema is not None and state.schema.plan.content is None
    assert set(state.schema.plan.tools) == {"get_person"}


@pytest.mark.parametrize(("body", "param"), [
    (chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "nope"}}}),
     "response_format.json_schema.schema"),
    (chat(response_format={"type": "json_schema", "json_schema": {"schema": {"$ref": "https://e.org/s.json"}}}),
     "response_format.json_schema.schema"),
    (chat(tools=[{"type": "function", "function": {"name": "t", "parameters": {"minimum": "x"}}}]),
     "tools[0].function.parameters"),
    (chat(response_format="json"), "response_format"),
])
def test_an_unusable_schema_is_refused_before_anything_goes_upstream(body: dict[str, Any], param: str) -> None:
    flow = posted(body)
    state = planned(services(), flow)
    assert flow.response is not None and flow.response.status_code == 400
    error = json.loads(flow.response.content or b"")["error"]
    assert error["code"] == "invalid_schema" and error["param"] == param
    assert state.outcome is Outcome.BAD_REQUEST and state.schema is None


def test_a_remote_ref_is_never_fetched_and_says_so() -> None:
    body = chat(response_format={"type": "json_schema",
                                 "json_schema": {"name": "x", "schema": {"$ref": "http://169.254.169.254/x"}}})
    flow = posted(body)
    planned(services(), flow)
    assert flow.response is not None
    assert "never fetched" in json.loads(flow.response.content or b"")["error"]["message"]


def test_a_route_schema_is_injected_as_response_format(tmp_path: Path) -> None:
    flow = posted(chat())
    state = planned(services(tmp_path, PERSON), flow)
    assert state.schema is not None and state.schema.plan.source is SchemaSource.ROUTE and state.schema.plan.injected
    sent = json.loads(flow.request.content or b"")
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON}}


def test_injection_off_still_validates_against_the_route_schema(tmp_path: Path) -> None:
    flow = posted(chat())
    state = planned(services(tmp_path, PERSON, schema_inject="off"), flow)
    assert state.schema is not None and not state.schema.plan.injected
    assert "response_format" not in json.loads(flow.request.content or b"")


def test_a_request_with_its_own_format_is_not_given_the_route_schema(tmp_path: Path) -> None:
    flow = posted(chat(response_format={"type": "text"}))
    state = planned(services(tmp_path, PERSON), flow)
    assert state.schema is None and "json_schema" not in (flow.request.content or b"").decode()


def test_responses_text_format_is_planned() -> None:
    body = {"model": "m", "input": "hi", "text": {"format": {"type": "json_schema", "name": "p", "schema": PERSON}}}
    state = planned(services(), posted(body, "/v1/responses"))
    assert state.schema is not None and state.schema.plan.content is not None


def test_routes_without_structured_answers_get_no_plan(tmp_path: Path) -> None:
    flow = posted({"model": "m", "input": "hi"}, "/v1/embeddings")
    assert planned(services(tmp_path, PERSON), flow).schema is None


def test_an_answer_with_a_schema_is_asked_for_uncompressed_even_unguarded() -> None:
    flow = posted(chat(response_format={"type": "json_object"}))
    flow.request.headers["accept-encoding"] = "gzip, br"
    planned(services(guard=False), flow)
    assert flow.request.headers["accept-encoding"] == "identity"


def test_a_llama_cpp_backend_gets_the_schema_in_the_json_object_form(tmp_path: Path) -> None:
    """llama-cpp-python's server answers `json_schema` with a 500 (tried against it); it and llama-server
    both read `{"type": "json_object", "schema": ...}`."""
    flow = posted(chat())
    planned(services(tmp_path, PERSON, backend="llama_cpp"), flow)
    assert json.loads(flow.request.content or b"")["response_format"] == {"type": "json_object", "schema": PERSON}
