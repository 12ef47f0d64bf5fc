from __future__ import annotations

import asyncio
import hmac
import json
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.test import tflow
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from proxy.addons import Pipeline, default_stages
from proxy.config import WardenConfig
from proxy.guard.engine import Guard
from proxy.guard.ledger import Detection, Direction
from proxy.schemas.plan import SchemaFacts, SchemaPlan, SchemaResult, SchemaSource
from proxy.services import Services
from proxy.stages.settle import Settle
from proxy.stages.stream import SseRelay
from proxy.stages.telemetry import Telemetry
from proxy.state import STATE_KEY, FlowState, Route
from proxy.telemetry import attributes as A
from proxy.telemetry.metrics import Metrics
from proxy.telemetry.tracing import Tracing
from rules.findings import Action
from rules.schema import SchemaCache

_GUARD = Guard.load()


def chunk(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


class Sampled:
    sampled = True


@pytest.mark.parametrize("recording", [True, False])
def test_the_relay_reads_the_answers_identity_while_a_span_records(recording: bool) -> None:
    state = FlowState("r", Route.CHAT, 0.0)
    state.provenance.spans = Sampled() if recording else None
    relay = SseRelay(state, lambda: 1.0, None, hmac.new(b"k", digestmod="sha256"))
    answer = state.answer
    first = chunk({"id": "g", "model": "m",
                   "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]})
    last = chunk({"id": "g", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    assert relay(first) == [first]
    assert relay(last + b"data: [DONE]\n\n") == [last + b"data: [DONE]\n\n"]
    if recording:
        assert (answer.response_id, answer.response_model, answer.finish_reasons) == ("g", "m", ["stop"])
    else:
        assert (answer.response_id, answer.response_model, answer.finish_reasons) == (None, None, [])


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(metrics.registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def test_finish_observes_every_series_from_the_flow_state() -> None:
    clock = iter([10.0])
    metrics = Metrics()
    services = Services(config=WardenConfig(upstream="http://u:1"), metrics=metrics, guard=_GUARD,
                        clock=lambda: next(clock))
    flow = tflow.tflow()
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    flow.response.stream = True
    state = FlowState("r", Route.CHAT, 8.0, model="m", stream=True)
    state.answer.first_chunk_at = 8.5
    usage = state.answer.usage
    usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens = 100, 11, 64
    state.ledger.detections = {Detection("lexical", "cn_mobile", Direction.REQUEST, Action.MASK): 2}
    state.ledger.seconds = {Direction.REQUEST: 0.002}
    state.schema = SchemaFacts(SchemaPlan(SchemaSource.ROUTE, SchemaCache().compile({"type": "object"})),
                               [SchemaResult.REASKED, SchemaResult.VALID])
    flow.metadata[STATE_KEY] = state
    metrics.inflight.inc()
    Settle(services).response(flow)  # the pipeline settles status, outcome and end time first
    Telemetry(services).response(flow)
    got = samples(metrics)
    chat_m = (("model_name", "m"), ("route", "chat"))
    assert got[("warden_requests_total", (("code_class", "2xx"), ("model_name", "m"), ("outcome", "ok"),
                                          ("route", "chat")))] == 1
    assert got[("warden_request_duration_seconds_sum", chat_m)] == 2.0
    assert got[("warden_time_to_first_token_seconds_sum", chat_m)] == 0.5
    assert got[("warden_time_per_output_token_seconds_sum", chat_m)] == 0.15  # 1.5 s over 10 more tokens
    assert got[("warden_prompt_tokens_cached_total", (("model_name", "m"),))] == 64
    assert got[("warden_guard_detections_total", (("action", "mask"), ("direction", "input"), ("kind", "cn_mobile"),
                                                   ("stage", "lexical")))] == 2
    assert got[("warden_guard_duration_seconds_count", (("stage", "request"),))] == 1
    assert got[("warden_schema_validations_total", (("result", "valid"), ("source", "route")))] == 1
    assert got[("warden_schema_validations_total", (("result", "reasked"), ("source", "route")))] == 1
    assert got[("warden_inflight_requests", ())] == 0
    assert state.done


PERSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.mark.parametrize(("policy", "content", "result", "status"), [
    ("reject", '{"name": "Ann"}', "valid", 200),
    ("flag", '{"name": 7}', "invalid", 200),
    ("reject", "Ann", "rejected", 502),
])
def test_the_schema_verdict_is_counted_by_source_and_on_the_server_span(policy: str, content: str, result: str,
                                                                        status: int) -> None:
    exporter = InMemorySpanExporter()
    metrics = Metrics()
    services = Services(config=WardenConfig(upstream="http://127.0.0.1:8000", schema_policy=policy), metrics=metrics,
                        guard=_GUARD, tracing=Tracing.for_exporter(exporter))
    body = {"model": "m", "messages": [{"role": "user", "content": "who?"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": PERSON}}}
    flow = tflow.tflow()
    flow.request = http.Request.make("POST", "http://127.0.0.1:8000/v1/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    flow.response = None
    pipeline = Pipeline(default_stages(services))
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}

    async def run() -> None:
        for hook in ("requestheaders", "request", "responseheaders", "response"):
            if hook == "responseheaders":
                flow.response = http.Response.make(200, json.dumps(answer).encode(),
                                                   {"content-type": "application/json"})
            pending = getattr(pipeline, hook)(flow)
            if pending is not None:
                await pending

    asyncio.run(run())
    assert flow.response is not None and flow.response.status_code == status
    got = samples(metrics)
    assert got[("warden_schema_validations_total", (("result", result), ("source", "request")))] == 1
    assert sum(v for (name, _), v in got.items() if name == "warden_schema_validations_total") == 1
    (server,) = [s for s in exporter.get_finished_spans() if s.kind is SpanKind.SERVER]
    attributes = server.attributes or {}
    sha256 = SchemaCache().compile(PERSON).sha256
    assert (attributes[A.WARDEN_SCHEMA_RESULT], attributes[A.WARDEN_SCHEMA_SOURCE]) == (result, "request")
    assert (attributes[A.WARDEN_SCHEMA_SHA256], attributes[A.WARDEN_SCHEMA_ATTEMPTS]) == (sha256, 1)
    assert content not in json.dumps(dict(attributes))  # never the answer


def test_an_exchange_without_a_schema_verdict_counts_nothing() -> None:
    metrics = Metrics()
    services = Services(config=WardenConfig(upstream="http://u:1"), metrics=metrics, guard=_GUARD)
    flow = tflow.tflow(resp=True)
    state = FlowState("r", Route.CHAT, 0.0)
    state.schema = SchemaFacts(SchemaPlan(SchemaSource.REQUEST, SchemaCache().compile(PERSON)))  # a refusal
    flow.metadata[STATE_KEY] = state
    metrics.inflight.inc()
    Settle(services).response(flow)
    Telemetry(services).response(flow)
    assert not [k for k in samples(metrics) if k[0] == "warden_schema_validations_total"]
