"""Lora on mitmproxy's test flows: the model server's admin routes are denied unless allowed, and the adapter name
is recorded as records carry names."""

from __future__ import annotations

import json

import pytest
from mitmproxy import http
from mitmproxy.test import tflow, tutils

from proxy.config import WardenConfig
from proxy.guard.engine import Guard
from proxy.services import Services
from proxy.stages.correlate import Correlate
from proxy.stages.lora import Lora
from proxy.state import FlowState, Outcome, Route, get_state
from proxy.telemetry.metrics import Metrics

_GUARD = Guard.load([])


def services(allow: bool) -> Services:
    return Services(config=WardenConfig(upstream="http://u:1", allow_model_admin=allow), metrics=Metrics(),
                    guard=_GUARD)


def posted(path: str, content: bytes) -> http.HTTPFlow:
    request = tutils.treq(path=path.encode(), method=b"POST", content=content,
                          headers=http.Headers(content_type="application/json"))
    return tflow.tflow(req=request)


def through(svc: Services, flow: http.HTTPFlow) -> FlowState:
    correlate = Correlate(svc)
    correlate.requestheaders(flow)
    correlate.request(flow)
    assert Lora(svc).request(flow) is None  # no registry: nothing to wait for
    state = get_state(flow)
    assert state is not None
    return state


def admin_count(metrics: Metrics, action: str, decision: str) -> float:
    return metrics.registry.get_sample_value("warden_model_admin_requests_total",
                                             {"action": action, "decision": decision}) or 0.0


@pytest.mark.parametrize(("path", "action"), [
    ("/v1/load_lora_adapter", "load_lora_adapter"),
    ("/v1/unload_lora_adapter", "unload_lora_adapter"),
    ("/v2/repository/models/m/load", "repository_load"),
])
def test_model_admin_calls_are_denied_with_403(path: str, action: str) -> None:
    svc = services(allow=False)
    flow = posted(path, json.dumps({"lora_name": "sql", "lora_path": "/adapters/sql"}).encode())
    state = through(svc, flow)
    assert state.route is Route.MODEL_ADMIN
    assert flow.response is not None and flow.response.status_code == 403
    error = json.loads(flow.response.content or b"")["error"]
    assert (error["type"], error["code"]) == ("permission_error", "model_admin_denied")
    assert state.outcome is Outcome.BLOCKED
    prov = state.provenance
    assert (prov.model_admin_action, prov.model_admin_allowed) == (action, False)
    assert prov.lora_adapter == "sql"
    assert admin_count(svc.metrics, action, "denied") == 1


def test_model_admin_calls_are_forwarded_when_allowed() -> None:
    svc = services(allow=True)
    flow = posted("/v1/load_lora_adapter", json.dumps({"lora_name": "sql", "lora_path": "/a"}).encode())
    state = through(svc, flow)
    assert flow.response is None and state.outcome is Outcome.OK
    assert (state.provenance.model_admin_action, state.provenance.model_admin_allowed) == ("load_lora_adapter", True)
    assert admin_count(svc.metrics, "load_lora_adapter", "allowed") == 1
    assert admin_count(svc.metrics, "load_lora_adapter", "denied") == 0


def test_an_adapter_name_with_a_lone_surrogate_is_recorded_with_a_replacement_character() -> None:
    flow = posted("/v1/load_lora_adapter", b'{"lora_name": "sql\\ud800x", "lora_path": "/a"}')
    state = through(services(allow=False), flow)
    assert state.provenance.lora_adapter == "sql\ufffdx"
    assert flow.response is not None and flow.response.status_code == 403


def test_an_inference_route_without_a_registry_is_left_alone() -> None:
    flow = posted("/v1/chat/completions", b'{"model": "sql", "messages": []}')
    state = through(services(allow=False), flow)
    assert flow.response is None
    assert state.provenance.model_admin_action is None and state.provenance.lora_adapter is None
