from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.test import tflow
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind, StatusCode

from proxy.addons import Pipeline, default_stages
from proxy.config import WardenConfig
from proxy.guard.engine import Guard
from proxy.services import Services
from proxy.state import get_state
from proxy.telemetry import attributes as A
from proxy.telemetry.metrics import Metrics
from proxy.telemetry.otlp_wire import OtlpWireEncoder, SpanWriter
from proxy.telemetry.tracing import (
    Tracing,
    TracingConfigError,
    TracingSettings,
    WireExporter,
    WrittenBatch,
    build_resource,
    parse_traceparent,
    trace_id_from_traceparent,
)

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01"
ID_NUMBER = "11010519491231002X"  # a valid GB 11643 number (the standard's example)
MOBILE = "13812345678"


@pytest.mark.parametrize(("env", "exporters", "protocol"), [
    ({}, (), "http/protobuf"),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, ("otlp",), "http/protobuf"),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, ("otlp",), "http/protobuf"),
    ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ("otlp",), "grpc"),
    ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
      "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, ("otlp",), "http/protobuf"),
    ({"OTEL_TRACES_EXPORTER": "console,otlp"}, ("console", "otlp"), "http/protobuf"),
    ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, (), "http/protobuf"),
    ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, (), "http/protobuf"),
])
def test_settings_follow_the_otel_variables(env: dict[str, str], exporters: tuple[str, ...], protocol: str) -> None:
    settings = TracingSettings.from_env(env)
    assert settings.exporters == exporters
    assert settings.protocol == protocol


@pytest.mark.parametrize(("env", "message"), [
    ({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER"),
    ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL"),
])
def test_unsupported_settings_are_configuration_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(TracingConfigError, match=message):
        TracingSettings.from_env(env)


def test_no_variables_means_tracing_off() -> None:
    assert not Tracing.from_env({}).enabled


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_both_otlp_protocols_build_an_exporter(protocol: str) -> None:
    tracing = Tracing.from_env({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": protocol})
    assert tracing.enabled
    tracing.shutdown()


def test_resource_is_named_warden_unless_the_environment_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert build_resource({}).attributes["service.name"] == "warden"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "llm-gateway")
    assert build_resource({"OTEL_SERVICE_NAME": "llm-gateway"}).attributes["service.name"] == "llm-gateway"
    monkeypatch.delenv("OTEL_SERVICE_NAME")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=gw,k8s.pod.name=p")
    resource = build_resource({"OTEL_RESOURCE_ATTRIBUTES": "service.name=gw,k8s.pod.name=p"})
    assert resource.attributes["service.name"] == "gw"
    assert resource.attributes["k8s.pod.name"] == "p"


def test_trace_id_from_traceparent() -> None:
    assert trace_id_from_traceparent(PARENT) == TRACE_ID
    assert trace_id_from_traceparent("00-" + "0" * 32 + "-b7ad6b7169203331-01") is None
    assert trace_id_from_traceparent("garbage") is None


# -- the stages, driven in order like mitmproxy does, with the SDK's in-memory exporter ------------------------

@pytest.fixture(scope="module")
def guard() -> Guard:
    return Guard.load()


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    yield InMemorySpanExporter()


def make_services(guard: Guard, tracing: Tracing, **config: Any) -> Services:
    cfg = WardenConfig(upstream="http://127.0.0.1:8000", **config)
    return Services(config=cfg, metrics=Metrics(), guard=guard, tracing=tracing)


async def call(pipeline: Pipeline, hook: str, flow: http.HTTPFlow) -> None:
    result = getattr(pipeline, hook)(flow)
    if result is not None and inspect.isawaitable(result):
        await result


def chat_flow(body: dict[str, Any], headers: dict[str, str] | None = None) -> http.HTTPFlow:
    flow = tflow.tflow()
    fields = {"content-type": "application/json", **(headers or {})}
    flow.request = http.Request.make(
        "POST", "http://127.0.0.1:8000/v1/chat/completions", json.dumps(body).encode(),
        http.Headers([(k.encode(), v.encode()) for k, v in fields.items()]),
    )
    flow.response = None
    return flow


ANSWER = {"id": "chatcmpl-42", "object": "chat.completion", "model": "m-served",
          "choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}],
          "usage": {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 8}}}


def exchange(services: Services, flow: http.HTTPFlow, answer: dict[str, Any] | None = ANSWER) -> None:
    pipeline = Pipeline(default_stages(services))

    async def run() -> None:
        await call(pipeline, "requestheaders", flow)
        await call(pipeline, "request", flow)
        if flow.response is None:
            flow.response = http.Response.make(200, json.dumps(answer).encode(),
                                               {"content-type": "application/json"})
            await call(pipeline, "responseheaders", flow)
        await call(pipeline, "response", flow)

    asyncio.run(run())


def by_kind(spans: tuple[ReadableSpan, ...]) -> dict[SpanKind, ReadableSpan]:
    return {s.kind: s for s in spans}


def test_server_and_client_spans_continue_the_trace_and_reach_the_upstream(
    guard: Guard, exporter: InMemorySpanExporter
) -> None:
    services = make_services(guard, Tracing.for_exporter(exporter))
    flow = chat_flow({"model": "m", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 7,
                      "temperature": 0.2}, {"traceparent": PARENT, "tracestate": "vendor=1"})
    exchange(services, flow)
    spans = by_kind(exporter.get_finished_spans())
    server, client = spans[SpanKind.SERVER], spans[SpanKind.CLIENT]
    assert server.name == "POST /v1/chat/completions"
    assert client.name == "chat m"
    assert format(server.context.trace_id, "032x") == TRACE_ID
    assert server.parent is not None and format(server.parent.span_id, "016x") == "b7ad6b7169203331"
    assert client.parent is not None and client.parent.span_id == server.context.span_id
    injected = flow.request.headers["traceparent"]
    assert injected == f"00-{TRACE_ID}-{client.context.span_id:016x}-01"
    assert flow.request.headers["tracestate"] == "vendor=1"
    c = client.attributes or {}
    assert c[A.GEN_AI_OPERATION_NAME] == "chat"
    assert c[A.GEN_AI_PROVIDER_NAME] == "vllm"
    assert c[A.GEN_AI_REQUEST_MODEL] == "m"
    assert c[A.GEN_AI_REQUEST_MAX_TOKENS] == 7
    assert c[A.GEN_AI_REQUEST_TEMPERATURE] == 0.2
    assert c[A.GEN_AI_REQUEST_STREAM] is False
    assert c[A.GEN_AI_RESPONSE_ID] == "chatcmpl-42"
    assert c[A.GEN_AI_RESPONSE_MODEL] == "m-served"
    assert tuple(c[A.GEN_AI_RESPONSE_FINISH_REASONS]) == ("stop",)  # type: ignore[arg-type]
    assert (c[A.GEN_AI_USAGE_INPUT_TOKENS], c[A.GEN_AI_USAGE_OUTPUT_TOKENS]) == (12, 3)
    assert c[A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 8
    assert (c[A.SERVER_ADDRESS], c[A.SERVER_PORT]) == ("127.0.0.1", 8000)
    s = server.attributes or {}
    assert s[A.HTTP_RESPONSE_STATUS_CODE] == 200
    assert s[A.WARDEN_OUTCOME] == "ok"
    assert len(str(s[A.WARDEN_INPUT_HMAC])) == 64
    state = get_state(flow)
    assert state is not None and state.provenance.trace_id == TRACE_ID
    results = [e for e in server.events if e.name == A.GEN_AI_GUARDRAIL_RESULT_EVENT]
    assert {(e.attributes or {})[A.GUARDRAIL_SOURCE] for e in results} == {"input", "output"}


def test_a_blocked_request_has_no_client_span_and_a_block_event(guard: Guard, exporter: InMemorySpanExporter) -> None:
    services = make_services(guard, Tracing.for_exporter(exporter))
    flow = chat_flow({"model": "m", "messages": [{"role": "user", "content": "我想找人代考"}]})
    exchange(services, flow)
    spans = exporter.get_finished_spans()
    assert [s.kind for s in spans] == [SpanKind.SERVER]
    attrs = spans[0].attributes or {}
    assert attrs[A.WARDEN_OUTCOME] == "blocked"
    assert A.ERROR_TYPE not in attrs  # a guard block is a result, not an error
    (event,) = [e for e in spans[0].events if e.name == A.GEN_AI_GUARDRAIL_RESULT_EVENT]
    ev = event.attributes or {}
    assert ev[A.GUARDRAIL_RESULT] == "block"
    assert ev[A.GUARDRAIL_SOURCE] == "input"
    assert "exam_fraud" in tuple(ev[A.GUARDRAIL_RULE_IDS])  # type: ignore[arg-type]
    assert ev[A.GUARDRAIL_COMPONENT] == "warden"
    assert "traceparent" not in flow.request.headers


def test_spans_never_carry_content(guard: Guard, exporter: InMemorySpanExporter) -> None:
    services = make_services(guard, Tracing.for_exporter(exporter))
    content = f"my id is {ID_NUMBER}, call {MOBILE}"
    flow = chat_flow({"model": "m", "messages": [{"role": "user", "content": content}]})
    answer = {**ANSWER, "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                     "finish_reason": "stop"}]}
    exchange(services, flow, answer)
    spans = exporter.get_finished_spans()
    assert len(spans) == 2
    dumped = "".join(s.to_json() for s in spans)
    # Fragments long enough not to turn up by chance in the dump's hex ids, digests and timestamps ("1949"
    # alone did, once in a few hundred runs).
    for secret in (ID_NUMBER, MOBILE, "my id is", "19491231", "12345678"):
        assert secret not in dumped
    server = by_kind(spans)[SpanKind.SERVER]
    kinds: set[str] = set()
    for event in server.events:
        kinds.update(tuple((event.attributes or {}).get(A.GUARDRAIL_FINDING_KINDS, ())))  # type: ignore[arg-type]
    assert {"cn_resident_id", "cn_mobile"} <= kinds


def test_an_unsampled_trace_still_propagates(guard: Guard, exporter: InMemorySpanExporter) -> None:
    services = make_services(guard, Tracing.for_exporter(exporter, sampler=ALWAYS_OFF))
    flow = chat_flow({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    exchange(services, flow)
    assert exporter.get_finished_spans() == ()
    assert int(flow.request.headers["traceparent"][-2:], 16) & 1 == 0  # propagated, flagged not sampled


def test_tracing_off_passes_traceparent_through_and_logs_the_trace_id(guard: Guard) -> None:
    services = make_services(guard, Tracing.disabled())
    flow = chat_flow({"model": "m", "messages": [{"role": "user", "content": "hello"}]}, {"traceparent": PARENT})
    exchange(services, flow)
    assert flow.request.headers["traceparent"] == PARENT
    state = get_state(flow)
    assert state is not None and state.provenance.trace_id == TRACE_ID and state.provenance.spans is None


def test_upstream_failures_mark_both_spans(guard: Guard, exporter: InMemorySpanExporter) -> None:
    services = make_services(guard, Tracing.for_exporter(exporter))
    flow = chat_flow({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    pipeline = Pipeline(default_stages(services))

    async def run() -> None:
        await call(pipeline, "requestheaders", flow)
        await call(pipeline, "request", flow)
        flow.error = flow.error or type(tflow.terr())("Connection refused")  # mitmproxy's error value
        await call(pipeline, "error", flow)

    asyncio.run(run())
    spans = by_kind(exporter.get_finished_spans())
    for kind in (SpanKind.SERVER, SpanKind.CLIENT):
        assert (spans[kind].attributes or {})[A.ERROR_TYPE] == "upstream_unavailable"
        assert spans[kind].status.status_code is StatusCode.ERROR


@pytest.mark.parametrize(("traceparent", "valid"), [
    (PARENT, True),
    (f"01-{TRACE_ID}-b7ad6b7169203331-01-future-fields", True),  # a later version: parse what we know
    (f"00-{TRACE_ID}-b7ad6b7169203331-01-extra", False),  # version 00 has exactly four fields
    (f"ff-{TRACE_ID}-b7ad6b7169203331-01", False),
    (f"00-{'0' * 32}-b7ad6b7169203331-01", False),
    (f"00-{TRACE_ID}-{'0' * 16}-01", False),
    (f"00-{TRACE_ID.upper()}-b7ad6b7169203331-01", False),
    ("", False),
])
def test_parse_traceparent_follows_w3c_trace_context(traceparent: str, valid: bool) -> None:
    parent = parse_traceparent(traceparent, "a=1,b=2")
    assert (parent is not None) is valid
    if parent is not None:
        assert parent.is_remote and parent.trace_id == int(TRACE_ID, 16)
        assert parent.trace_state.to_header() == "a=1,b=2"


# -- the OTLP path: spans written straight to protobuf bytes must be the SDK's encoding of the same spans ------

class CapturingExporter:
    """What an OTLP exporter gets from the wire path: one WrittenBatch per export, kept as request bytes."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.batches: list[WrittenBatch] = []

    def export(self, spans: WrittenBatch) -> SpanExportResult:
        assert isinstance(spans, WrittenBatch)
        self.batches.append(spans)
        self.requests.append(spans.request())
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def both_paths(exporter: InMemorySpanExporter) -> tuple[Tracing, CapturingExporter]:
    """One tracer writing every span both ways: ReadableSpans to `exporter`, OTLP bytes to the capture."""
    sdk = Tracing.for_exporter(exporter)
    capture = CapturingExporter()
    wire: Any = WireExporter(capture, OtlpWireEncoder(), sdk.resource, sdk.scope, None)  # a SpanExporter by duck typing
    return Tracing(sdk.provider, sdk.processors, [SimpleSpanProcessor(wire)]), capture


@pytest.mark.parametrize(("body", "headers", "fail"), [
    ({"model": "m", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 7, "temperature": 0.2,
      "top_p": 1}, {"traceparent": PARENT, "tracestate": "vendor=1"}, False),
    ({"model": "m", "messages": [{"role": "user", "content": "我想找人代考"}]}, {}, False),  # blocked
    ({"model": "m", "messages": [{"role": "user", "content": f"id {ID_NUMBER}, call {MOBILE}"}]}, {}, False),
    ({"model": "m", "messages": [{"role": "user", "content": "hello"}], "stream": True}, {}, True),  # refused
])
def test_wire_spans_are_the_sdk_encoding_of_the_same_spans(
    guard: Guard, exporter: InMemorySpanExporter, body: dict[str, Any], headers: dict[str, str], fail: bool
) -> None:
    tracing, capture = both_paths(exporter)
    services = make_services(guard, tracing)
    flow = chat_flow(body, headers)
    if fail:
        pipeline = Pipeline(default_stages(services))

        async def run() -> None:
            await call(pipeline, "requestheaders", flow)
            await call(pipeline, "request", flow)
            flow.error = type(tflow.terr())("Connection refused")
            await call(pipeline, "error", flow)

        asyncio.run(run())
    else:
        exchange(services, flow)
    spans = exporter.get_finished_spans()
    assert len(spans) == len(capture.requests) >= 1
    for span, request in zip(spans, capture.requests, strict=True):
        ours = ExportTraceServiceRequest.FromString(request)
        assert ours == encode_spans([span]), f"\nours:\n{ours}\nsdk:\n{encode_spans([span])}"


def test_traceparent_is_added_once_and_a_clients_is_replaced(guard: Guard, exporter: InMemorySpanExporter) -> None:
    services = make_services(guard, Tracing.for_exporter(exporter))
    plain = chat_flow({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    exchange(services, plain)
    assert len(plain.request.headers.get_all("traceparent")) == 1
    assert "tracestate" not in plain.request.headers
    mixed_case = chat_flow({"model": "m", "messages": [{"role": "user", "content": "hello"}]},
                           {"TraceParent": PARENT, "TraceState": "vendor=1"})
    exchange(services, mixed_case)
    (injected,) = mixed_case.request.headers.get_all("traceparent")
    assert injected.startswith(f"00-{TRACE_ID}-") and injected != PARENT
    assert mixed_case.request.headers.get_all("tracestate") == ["vendor=1"]
    server = by_kind(exporter.get_finished_spans()[-2:])[SpanKind.SERVER]
    assert server.parent is not None and format(server.parent.span_id, "016x") == "b7ad6b7169203331"


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_both_otlp_exporters_send_the_written_bytes(
    guard: Guard, exporter: InMemorySpanExporter, protocol: str
) -> None:
    """The OTLP exporters turn a WrittenBatch into exactly the request the wire path wrote."""
    from proxy.telemetry.tracing import _encode_spans, _grpc_exporter

    tracing, capture = both_paths(exporter)
    exchange(make_services(guard, tracing), chat_flow({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
    assert len(capture.batches) == 2
    batch = WrittenBatch([*capture.batches[0], *capture.batches[1]], OtlpWireEncoder(), SpanWriter(),
                         tracing.resource, tracing.scope)
    assert len(ExportTraceServiceRequest.FromString(batch.request()).resource_spans[0].scope_spans[0].spans) == 2
    if protocol == "grpc":
        grpc = _grpc_exporter()
        request = grpc._translate_data(batch)
        assert request == ExportTraceServiceRequest.FromString(batch.request())
        grpc.shutdown()
    else:
        assert _encode_spans(batch).SerializeToString() == batch.request()
    spans = exporter.get_finished_spans()
    assert ExportTraceServiceRequest.FromString(_encode_spans(spans).SerializeToString()) == encode_spans(spans)


def test_queued_spans_are_sampled_and_hold_only_untracked_values(guard: Guard, exporter: InMemorySpanExporter) -> None:
    """The batch processor keeps spans for up to its schedule delay: each is one GC-tracked object, and what it
    holds (attribute tuples, events) the collector stops tracking."""
    import gc

    from proxy.telemetry.tracing import PendingSpan

    tracing, capture = both_paths(exporter)
    exchange(make_services(guard, tracing), chat_flow({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
    queued = [span for batch in capture.batches for span in batch]
    assert len(queued) == 2 and all(isinstance(span, PendingSpan) for span in queued)
    assert all(span.context.trace_flags.sampled for span in queued)  # all the SDK's processors read of a span
    for _ in range(3):  # a pass untracks a tuple whose items are untracked by then: nesting takes a pass per level
        gc.collect()

    def tracked(value: object) -> list[object]:
        if isinstance(value, tuple) and gc.is_tracked(value):
            return [v for item in value for v in tracked(item)] or [value]
        return [value] if gc.is_tracked(value) else []

    assert not [t for span in queued for value in span for t in tracked(value)]


@pytest.mark.parametrize(("name", "arg"), [
    ("always_on", None), ("always_off", None), ("traceidratio", "0.25"), ("parentbased_always_on", None),
    ("parentbased_always_off", None), ("parentbased_traceidratio", "0.5"), ("traceidratio", "0"),
])
def test_plain_samplers_decide_as_the_sdk_does(name: str, arg: str | None) -> None:
    import random

    from opentelemetry.sdk.trace.sampling import _get_from_env_or_default
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

    from proxy.telemetry.tracing import plain_sampler

    env = {"OTEL_TRACES_SAMPLER": name, **({"OTEL_TRACES_SAMPLER_ARG": arg} if arg else {})}
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        sdk = _get_from_env_or_default()
    plain = plain_sampler(sdk)
    assert plain is not None
    rng = random.Random(7)
    for _ in range(400):
        trace_id = rng.getrandbits(128) or 1
        parent = None
        if rng.random() < 0.6:
            parent = SpanContext(trace_id, rng.getrandbits(64) or 1, True, TraceFlags(rng.choice((0, 1, 3))))
        context = set_span_in_context(NonRecordingSpan(parent)) if parent is not None else None
        expected = sdk.should_sample(context, trace_id, "POST /v1/chat/completions").decision.is_sampled()
        assert plain(parent, trace_id) is expected


def test_other_samplers_are_asked_through_the_sdk() -> None:
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, Sampler, SamplingResult

    from proxy.telemetry.tracing import plain_sampler

    class Custom(Sampler):
        def should_sample(self, *args: Any, **kwargs: Any) -> SamplingResult:
            return ALWAYS_ON.should_sample(*args, **kwargs)

        def get_description(self) -> str:
            return "custom"

    assert plain_sampler(Custom()) is None
    assert plain_sampler(ParentBased(Custom())) is None


def test_a_model_name_with_a_lone_surrogate_is_recorded_with_a_replacement_character(
    guard: Guard, exporter: InMemorySpanExporter
) -> None:
    """JSON lets a client send `"\\ud800"`, which UTF-8 cannot encode: the name is recorded with U+FFFD (the
    request itself goes upstream as it came), and the spans are exported."""
    tracing, capture = both_paths(exporter)
    flow = chat_flow({"model": "m\ud800x", "messages": [{"role": "user", "content": "hi"}]})
    exchange(make_services(guard, tracing), flow)
    assert len(capture.requests) == 2
    client = ExportTraceServiceRequest.FromString(capture.requests[0]).resource_spans[0].scope_spans[0].spans[0]
    assert client.name == "chat m\ufffdx"
    models = [a.value.string_value for a in client.attributes if a.key == A.GEN_AI_REQUEST_MODEL]
    assert models == ["m\ufffdx"]
    assert b'"m\\ud800x"' in flow.request.content  # forwarded unchanged


def test_a_span_that_cannot_be_written_is_dropped_not_the_batch(
    guard: Guard, exporter: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    from proxy.telemetry.tracing import PendingSpan

    tracing, capture = both_paths(exporter)
    exchange(make_services(guard, tracing), chat_flow({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
    good = [span for batch in capture.batches for span in batch]
    broken = PendingSpan(("not an int", *good[0][1:]))  # a trace id of the wrong type: a bug, not input
    first = capture.batches[0]
    batch = WrittenBatch([good[0], broken, good[1]], OtlpWireEncoder(), SpanWriter(), first.resource, first.scope)
    with caplog.at_level("ERROR", logger="warden.tracing"):
        request = ExportTraceServiceRequest.FromString(batch.request())
    assert len(request.resource_spans[0].scope_spans[0].spans) == 2
    assert "cannot write a span" in caplog.text
