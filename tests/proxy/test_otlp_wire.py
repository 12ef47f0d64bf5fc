from __future__ import annotations

import time

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags, TraceState

from proxy.otlp_wire import OtlpWireEncoder

RESOURCE = Resource.create({"service.name": "warden", "k8s.pod.name": "p-1"})
SCOPE = InstrumentationScope("warden.proxy", "0.1.0")


def spans() -> list[ReadableSpan]:
    now = time.time_ns()
    parent = SpanContext(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7, True, TraceFlags(1),
                         TraceState([("congo", "t61rcWkgMzE")]))
    server_ctx = SpanContext(parent.trace_id, 0x1111111111111111, False, TraceFlags(1), parent.trace_state)
    client_ctx = SpanContext(parent.trace_id, 0x2222222222222222, False, TraceFlags(1), parent.trace_state)
    server = ReadableSpan(
        "POST /v1/chat/completions", server_ctx, parent, RESOURCE,
        {"http.request.method": "POST", "http.response.status_code": 200, "warden.outcome": "ok",
         "warden.audit.seq": 2**40, "neg": -5, "flag": False},
        events=(Event("gen_ai.guardrail.result", {"gen_ai.guardrail.rule_ids": ["a", "b"],
                                                  "gen_ai.guardrail.result": "pass"}, now),),
        kind=SpanKind.SERVER, status=Status(StatusCode.ERROR, "boom"), start_time=now - 5000, end_time=now,
        instrumentation_scope=SCOPE,
    )
    client = ReadableSpan(
        "chat 模型", client_ctx, server_ctx, RESOURCE,
        {"gen_ai.request.temperature": 0.25, "gen_ai.response.finish_reasons": ["stop"],
         "gen_ai.request.stream": True, "gen_ai.usage.input_tokens": 12, "ints": [1, 2]},
        kind=SpanKind.CLIENT, start_time=now - 4000, end_time=now - 10, instrumentation_scope=SCOPE,
    )
    root = ReadableSpan("GET", SpanContext(7, 8, False, TraceFlags(0)), None, RESOURCE, {}, kind=SpanKind.SERVER,
                        start_time=1, end_time=2, instrumentation_scope=SCOPE)
    return [server, client, root]


def test_the_wire_encoder_matches_the_sdk_encoder() -> None:
    batch = spans()
    ours = ExportTraceServiceRequest.FromString(OtlpWireEncoder().encode(batch))
    theirs = encode_spans(batch)
    assert ours == theirs, f"\nours:\n{ours}\ntheirs:\n{theirs}"


def test_the_encoder_is_stable_across_calls() -> None:
    encoder = OtlpWireEncoder()
    batch = spans()
    assert encoder.encode(batch) == encoder.encode(batch)


def test_cached_values_keep_their_type() -> None:
    encoder = OtlpWireEncoder()
    base = spans()[2]
    as_bool = ReadableSpan("x", base.context, None, RESOURCE, {"k": True}, start_time=1, end_time=2,
                           instrumentation_scope=SCOPE)
    as_int = ReadableSpan("x", base.context, None, RESOURCE, {"k": 1}, start_time=1, end_time=2,
                          instrumentation_scope=SCOPE)
    first, second = (ExportTraceServiceRequest.FromString(encoder.encode([s])) for s in (as_bool, as_int))
    assert first.resource_spans[0].scope_spans[0].spans[0].attributes[0].value.bool_value is True
    assert second.resource_spans[0].scope_spans[0].spans[0].attributes[0].value.int_value == 1
