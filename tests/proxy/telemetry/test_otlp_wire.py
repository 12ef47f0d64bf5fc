from __future__ import annotations

import time
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags, TraceState

from proxy.telemetry.otlp_wire import OtlpWireEncoder, SpanWriter

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


def test_the_span_writer_matches_the_sdk_encoder() -> None:
    """SpanWriter (Warden's own spans, no SDK objects) against the SDK's encoder on the same span: strings
    short and long (>= 128 bytes: two-byte lengths) and multi-byte, ints small, large and negative, bools,
    floats, sequences, absent (None) values, events, a remote parent, an error status."""
    writer = SpanWriter()
    shared: tuple[Any, ...] = (
        "http.request.method", "POST", "absent", None, "gen_ai.request.stream", True, "server.port", 8000,
        "gen_ai.request.temperature", 0.25, "gen_ai.response.finish_reasons", ("stop", "length"),
        "gen_ai.guardrail.rule_ids", (), "warden.model_admin.allowed", False, "small", 5)
    unique: list[tuple[str, Any]] = [
        ("warden.request_id", "r" * 32), ("long", "长" * 60), ("gen_ai.usage.input_tokens", 127),
        ("gen_ai.usage.output_tokens", 128), ("warden.audit.seq", 2**40), ("neg", -5), ("none", None),
        ("gen_ai.response.time_to_first_chunk", 0.125)]
    event = ("gen_ai.guardrail.result", "pass", "gen_ai.guardrail.source", "input", "gen_ai.guardrail.rule_ids",
             ("a", "b"), "gen_ai.guardrail.finding_kinds", None)
    now = time.time_ns()
    parent = SpanContext(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7, True, TraceFlags(1),
                         TraceState([("congo", "t61rcWkgMzE")]))
    for _ in range(2):  # the second time from the caches
        for error, parent_ctx in ((True, parent), (False, None)):
            raw = writer.span(parent.trace_id, 0x1111111111111111, parent.trace_state.to_header(),
                              parent_ctx.span_id if parent_ctx else 0, parent_ctx is not None, "chat m", 2,
                              now - 5000, now, writer.shared(shared) + writer.unique(unique),
                              writer.event(now, "gen_ai.guardrail.result", event), error)
            ours = ExportTraceServiceRequest.FromString(
                OtlpWireEncoder().encode_written(RESOURCE, SCOPE, [raw]))
            attrs: dict[str, Any] = {shared[i]: shared[i + 1] for i in range(0, len(shared), 2)
                                     if shared[i + 1] is not None}
            attrs.update((k, v) for k, v in unique if v is not None)
            sdk = ReadableSpan(
                "chat m", SpanContext(parent.trace_id, 0x1111111111111111, False, TraceFlags(1), parent.trace_state),
                parent_ctx, RESOURCE, attrs, kind=SpanKind.CLIENT,
                events=(Event("gen_ai.guardrail.result", {"gen_ai.guardrail.result": "pass",
                                                          "gen_ai.guardrail.source": "input",
                                                          "gen_ai.guardrail.rule_ids": ("a", "b")}, now),),
                status=Status(StatusCode.ERROR if error else StatusCode.UNSET), start_time=now - 5000, end_time=now,
                instrumentation_scope=SCOPE,
            )
            assert ours == encode_spans([sdk]), f"\nours:\n{ours}\ntheirs:\n{encode_spans([sdk])}"


def test_text_utf8_cannot_encode_is_written_with_question_marks() -> None:
    """A lone surrogate in any text would make the whole request invalid UTF-8: it becomes "?"."""
    writer = SpanWriter()
    raw = writer.span(1, 2, "", 0, False, "chat m\ud800", 2, 1, 2,
                      writer.shared(("k", "v\udc80")) + writer.unique([("id", "x\ud800")]), b"", False)
    request = ExportTraceServiceRequest.FromString(OtlpWireEncoder().encode_written(RESOURCE, SCOPE, [raw]))
    span = request.resource_spans[0].scope_spans[0].spans[0]
    assert span.name == "chat m?"
    assert {a.key: a.value.string_value for a in span.attributes} == {"k": "v?", "id": "x?"}
