"""OpenTelemetry tracing, configured by the standard `OTEL_*` environment variables (DESIGN section 6).

Per exchange: a SERVER span `POST /v1/chat/completions` that continues the client's W3C `traceparent`, and
a CLIENT child `chat {model}` whose context is injected into the upstream request, so the model server's own
spans (vLLM reads `traceparent`) nest under ours. Spans carry ids, counts, model names, keyed digests and
guard verdicts; never request or answer content.

Exporter choice follows the SDK's variables with one deliberate difference: with no `OTEL_*` variable set,
tracing is off (the spec's default exporter is `otlp`, which would make every sidecar without a collector
retry exports forever). `OTEL_TRACES_EXPORTER` = `otlp`, `console`, `none` (comma-separated for several);
unset, it is `otlp` when an `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT` is set, else `none`.
`OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` = `http/protobuf` (default) or `grpc`. The SDK itself reads the
sampler (`OTEL_TRACES_SAMPLER`, `_ARG`), resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), batch
(`OTEL_BSP_*`) and the exporters' endpoint, headers, timeout and compression variables.
`OTEL_SDK_DISABLED=true` turns everything off. Propagation is W3C Trace Context (`traceparent`,
`tracestate`), what vLLM reads; other headers (`baggage`, B3) pass to the upstream untouched, so
`OTEL_PROPAGATORS` is not consulted. Exports run in the SDK's worker thread; a failing collector is logged
and counted (`warden_span_export_failures_total`), never felt by requests (telemetry export fails open).

Cost (bench/telemetry.py, budget: 10% CPU per request, ~300 us): the SDK's live spans measured 3 to 5 times
the budget. Here an exchange's spans are plain values until it ends; then each is queued as one `PendingSpan`
(a tuple of immutable values) and written in the exporter's thread, a batch at a time, straight to OTLP
protobuf bytes (proxy/telemetry/otlp_wire.py SpanWriter: low-cardinality attributes and the guardrail events encoded
once per distinct value and reused). Measured on `warden serve` (tracing on vs off, thread CPU time around
each stage, 2026-12-01): writing the two spans on the event loop, cold between requests, cost ~90 us per
exchange, ~3-5x what the same code costs in a loop; written in the export thread, in batches, a fraction of
that. Earlier: SDK `ReadableSpan`s waiting in the queue (a dozen GC-tracked objects per span) made full
garbage collections 1.5 times as frequent, ~40 us per request; the tuples queued now hold only immutable
values, which the collector stops tracking.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from proxy.exceptions import ProxyError
from proxy.state import FlowState, Outcome, Route
from proxy.telemetry import attributes as A
from proxy.telemetry.otlp_wire import SAMPLED_CONTEXT, EncodedRequest, OtlpWireEncoder, SpanWriter

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    from audit.records import Verdict
    from proxy.guard.ledger import Direction

log = logging.getLogger("warden.tracing")

EXPORTERS = ("otlp", "console", "none")
PROTOCOLS = ("http/protobuf", "grpc")

_TRACEPARENT = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")
_TRACEPARENT_PARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:$|-)")
# Attributes whose values rarely repeat: the wire encoder does not cache them.
UNIQUE_ATTRIBUTES = frozenset({A.WARDEN_REQUEST_ID, A.GEN_AI_RESPONSE_ID, A.WARDEN_INPUT_HMAC, A.WARDEN_OUTPUT_HMAC,
                               A.WARDEN_AUDIT_SEQ, A.URL_PATH, A.GEN_AI_USAGE_INPUT_TOKENS,
                               A.GEN_AI_USAGE_OUTPUT_TOKENS, A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS})

# Route -> (GenAI operation name or None, low-cardinality http.route).
ROUTE_INFO: dict[Route, tuple[str | None, str | None]] = {
    Route.CHAT: (A.OP_CHAT, "/v1/chat/completions"),
    Route.RESPONSES: (A.OP_CHAT, "/v1/responses"),
    Route.COMPLETIONS: (A.OP_TEXT_COMPLETION, "/v1/completions"),
    Route.EMBEDDINGS: (A.OP_EMBEDDINGS, "/v1/embeddings"),
    Route.TRITON_GENERATE: (A.OP_TEXT_COMPLETION, "/v2/models/{model}/generate"),
    Route.KSERVE_V2: (None, "/v2/models/{model}/infer"),
    Route.MODELS: (None, "/v1/models"),
    Route.HEALTH: (None, None),
    Route.MODEL_ADMIN: (None, None),
    Route.OTHER: (None, None),
}

# Outcomes that are failures of the exchange (error.type is set); blocked is a guard result, not an error.
_FAILED = frozenset({Outcome.UPSTREAM_ERROR, Outcome.UPSTREAM_UNAVAILABLE, Outcome.UPSTREAM_TIMEOUT,
                     Outcome.TOO_LARGE, Outcome.BAD_REQUEST, Outcome.CLIENT_ABORTED, Outcome.INTERNAL_ERROR})
_UPSTREAM_FAILED = frozenset({Outcome.UPSTREAM_ERROR, Outcome.UPSTREAM_UNAVAILABLE, Outcome.UPSTREAM_TIMEOUT})


class TracingConfigError(ProxyError, ValueError):
    """An `OTEL_*` value Warden cannot honour; the message names the variable and the accepted values."""


@dataclass(frozen=True, slots=True)
class TracingSettings:
    exporters: tuple[str, ...]  # empty: tracing off
    protocol: str = "http/protobuf"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> TracingSettings:
        if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            return cls(())
        raw = env.get("OTEL_TRACES_EXPORTER")
        if raw is None:
            endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
            raw = "otlp" if endpoint else "none"
        names = tuple(dict.fromkeys(n.strip().lower() for n in raw.split(",") if n.strip()))
        unknown = [n for n in names if n not in EXPORTERS]
        if unknown:
            raise TracingConfigError(f"OTEL_TRACES_EXPORTER: unsupported {unknown}; use {', '.join(EXPORTERS)}")
        protocol = (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                    or "http/protobuf").strip().lower()
        if "otlp" in names and protocol not in PROTOCOLS:
            raise TracingConfigError(f"OTEL_EXPORTER_OTLP_PROTOCOL: unsupported {protocol!r}; use {PROTOCOLS}")
        return cls(tuple(n for n in names if n != "none"), protocol)


def trace_id_from_traceparent(value: str) -> str | None:
    """The trace id of a W3C `traceparent` header (for logs when tracing is off), or None when malformed."""
    match = _TRACEPARENT.fullmatch(value.strip())
    if match is None or match.group(1) == "0" * 32:
        return None
    return match.group(1)


class _CountingExporter:
    """Wraps an exporter to count failed exports (the SDK only logs them)."""

    def __init__(self, inner: SpanExporter, on_failure: Callable[[], None] | None) -> None:
        self.inner = inner
        self.on_failure = on_failure

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result: SpanExportResult = self.inner.export(self.batch(spans))
        except Exception:
            log.exception("span export failed")
            result = SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS and self.on_failure is not None:
            self.on_failure()
        return result

    def batch(self, spans: Sequence[Any]) -> Sequence[Any]:
        return spans

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))


@dataclass(slots=True)
class FlowSpans:
    """One exchange's two spans while they are open: ids, start times and start attributes only; the spans
    themselves are written once, at the end (`Tracing.finish`). Attributes are kept as a flat tuple
    `(key, value, ...)` of low-cardinality values (encoded once per distinct tuple, proxy/telemetry/otlp_wire.py
    SpanWriter) and pairs of values that rarely repeat (ids), so the end of the exchange does not walk them
    one by one."""

    trace_id: int
    server_id: int
    parent: Any  # the client's SpanContext (remote), or None for a new trace
    trace_state: Any  # opentelemetry.trace.TraceState or None
    flags: int  # W3C trace flags of our spans (bit 0: sampled)
    start_ns: int
    name: str
    shared: tuple[Any, ...]
    unique: list[tuple[str, Any]]
    client_id: int = 0
    client_start_ns: int = 0
    client_name: str = ""
    client_shared: tuple[Any, ...] | None = None

    @property
    def sampled(self) -> bool:
        return bool(self.flags & 1)


def parse_traceparent(traceparent: str | None, tracestate: str | None) -> Any:
    """The remote parent SpanContext of a W3C `traceparent` (and `tracestate`), or None (W3C Trace Context,
    section 3.2: version 00 layout, all-zero ids and version ff invalid; later versions parsed by prefix)."""
    if not traceparent:
        return None
    match = _TRACEPARENT_PARENT.match(traceparent.strip())
    if match is None:
        return None
    version, trace_hex, span_hex, flags_hex = match.groups()
    if version == "ff" or (version == "00" and len(traceparent.strip()) != 55):
        return None
    trace_id, span_id = int(trace_hex, 16), int(span_hex, 16)
    if not trace_id or not span_id:
        return None
    from opentelemetry.trace import SpanContext, TraceFlags, TraceState

    state = TraceState.from_header([tracestate]) if tracestate else TraceState()
    return SpanContext(trace_id, span_id, True, TraceFlags(int(flags_hex, 16)), state)


class WireExporter(_CountingExporter):
    """Hands a span exporter the `PendingSpan`s `Tracing.finish` queued, as one `WrittenBatch` (which the
    patched `encode_spans` of the OTLP exporters turns into the request bytes); counts failed exports. Its
    SpanWriter is used by the exporting thread only (the SDK serializes a processor's exports)."""

    def __init__(self, inner: Any, encoder: OtlpWireEncoder, resource: Any, scope: Any,
                 on_failure: Callable[[], None] | None) -> None:
        super().__init__(inner, on_failure)
        self.encoder = encoder
        self.writer = SpanWriter()
        self.resource = resource
        self.scope = scope

    def batch(self, spans: Sequence[Any]) -> Sequence[Any]:
        return WrittenBatch(spans, self.encoder, self.writer, self.resource, self.scope)


class PendingSpan(tuple[Any, ...]):
    """One finished span as plain values, queued for the exporter's thread to write: `(trace_id,
    trace_state header, end time, *_Written)`. The SDK's BatchSpanProcessor reads nothing of a queued span but
    `span.context.trace_flags.sampled` (only sampled spans are queued). Its fields are plain tuples of
    immutable values, which the garbage collector stops tracking: one tracked object per queued span (SDK
    spans were a dozen)."""

    __slots__ = ()
    context = SAMPLED_CONTEXT


class WrittenBatch(list[Any]):
    """A batch of `PendingSpan`s with what its request needs (len() stays the number of spans, which the SDK's
    exporters count)."""

    def __init__(self, spans: Sequence[Any], encoder: OtlpWireEncoder, writer: SpanWriter, resource: Any,
                 scope: Any) -> None:
        super().__init__(spans)
        self.encoder = encoder
        self.writer = writer
        self.resource = resource
        self.scope = scope

    def request(self) -> bytes:
        """The ExportTraceServiceRequest bytes. A span that cannot be written (a bug of ours) is dropped and
        logged, not the batch: up to `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` exchanges share it."""
        encoded = []
        dropped = 0
        for pending in self:
            try:
                encoded.append(self._write(pending))
            except Exception:
                if not dropped:
                    log.exception("cannot write a span; dropped")
                dropped += 1
        if dropped > 1:
            log.warning("dropped spans that could not be written", extra={"spans": dropped})
        return self.encoder.encode_written(self.resource, self.scope, encoded)

    def _write(self, pending: Sequence[Any]) -> bytes:
        trace_id, trace_state, end = pending[:3]
        w = _Written._make(pending[3:])  # raises on a PendingSpan of another shape: dropped, not misread
        writer = self.writer
        events = b"".join([writer.event(end, A.GEN_AI_GUARDRAIL_RESULT_EVENT, e) for e in w.events])
        return writer.span(trace_id, w.span_id, trace_state, w.parent_id, w.parent_remote, w.name, w.kind, w.start,
                           end, writer.shared(w.shared) + writer.unique(w.unique), events, w.error)


_ENCODER = OtlpWireEncoder(UNIQUE_ATTRIBUTES)  # for SDK spans (none of Warden's own reach it in practice)


def _encode_spans(spans: Sequence[Any]) -> EncodedRequest:
    """Stands in for the OTLP exporters' `encode_spans`: our own batches are already bytes."""
    if isinstance(spans, WrittenBatch):
        return EncodedRequest(spans.request())
    return EncodedRequest(_ENCODER.encode(spans))


def _grpc_exporter() -> Any:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    class FastGrpc(Grpc):
        def _translate_data(self, data: Sequence[ReadableSpan]) -> ExportTraceServiceRequest:
            raw = _encode_spans(data).SerializeToString()
            request: ExportTraceServiceRequest = ExportTraceServiceRequest.FromString(raw)
            return request

    return FastGrpc()


def _http_exporter() -> Any:
    import opentelemetry.exporter.otlp.proto.http.trace_exporter as http_exporter

    # The HTTP exporter calls its module's `encode_spans` and serializes the result: hand it bytes.
    setattr(http_exporter, "encode_spans", _encode_spans)  # noqa: B010 - a deliberate module patch
    return http_exporter.OTLPSpanExporter()


def _header_values(headers: Any) -> tuple[str | None, str | None]:
    """`traceparent` and `tracestate` of the request, read from mitmproxy's raw header fields in one pass (two
    `Headers.get` calls cost more than the rest of the span start); repeated fields are joined with ", " as
    `Headers.get` does."""
    fields = getattr(headers, "fields", None)
    if type(fields) is not tuple:
        return headers.get("traceparent"), headers.get("tracestate")
    parent: list[bytes] = []
    state: list[bytes] = []
    for key, value in fields:
        if len(key) in (10, 11) and key[:5].lower() == b"trace":
            lowered = key.lower()
            if lowered == b"traceparent":
                parent.append(value)
            elif lowered == b"tracestate":
                state.append(value)
    return (b", ".join(parent).decode("utf-8", "surrogateescape") if parent else None,
            b", ".join(state).decode("utf-8", "surrogateescape") if state else None)


def _set_header(headers: Any, name: bytes, value: str) -> None:
    """Set one header; appended to mitmproxy's raw fields when the request has none of that name (the common
    case), else replaced through `Headers` itself."""
    fields = getattr(headers, "fields", None)
    if type(fields) is tuple:
        for key, _ in fields:
            if key.lower() == name:
                break
        else:
            headers.fields = (*fields, (name, value.encode()))
            return
    headers[name.decode()] = value


class Tracing:
    """The tracer for the process, or a disabled stand-in that costs nothing. Built once, injected.

    The SDK does the configuration (sampler and resource from `OTEL_*`), the batching (BatchSpanProcessor,
    `OTEL_BSP_*`) and the exporting (OTLP HTTP and gRPC, console). Warden writes each exchange's finished
    spans itself: straight to OTLP bytes for the OTLP exporters (proxy/telemetry/otlp_wire.py SpanWriter; the queue
    then holds one bytes object per span, nothing the garbage collector must walk), and as SDK
    `ReadableSpan`s for any other exporter (console, tests' in-memory exporter)."""

    def __init__(self, provider: Any = None, processors: Sequence[Any] = (),
                 wire_processors: Sequence[Any] = ()) -> None:
        self.provider = provider
        self.processors = tuple(processors)  # take ReadableSpans
        self.wire_processors = tuple(wire_processors)  # take PendingSpans (their exporter is a WireExporter)
        self.enabled = provider is not None
        self.scope: Any = None
        if provider is not None:
            self.sampler = provider.sampler
            self.ids = provider.id_generator
            self.resource = provider.resource
            self.scope = instrumentation_scope()
            # The SDK's own samplers read no attributes (and echo back the ones they get): they get none.
            self._builtin_sampler = type(self.sampler).__module__ == "opentelemetry.sdk.trace.sampling"
            self._sample = plain_sampler(self.sampler)

    @classmethod
    def disabled(cls) -> Tracing:
        return cls()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None,
                 on_export_failure: Callable[[], None] | None = None) -> Tracing:
        """Tracing as the `OTEL_*` variables say; raises TracingConfigError for values we cannot honour.
        `env` picks the exporters; the SDK reads the rest (endpoint, headers, sampler, ...) from the process
        environment."""
        env = os.environ if env is None else env
        settings = TracingSettings.from_env(env)
        if not settings.exporters:
            return cls.disabled()
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

        provider = TracerProvider(resource=build_resource(env), shutdown_on_exit=False)  # OTEL_TRACES_SAMPLER
        processors = []
        wire_processors = []
        for name in settings.exporters:
            if name == "console":
                exporter: Any = ConsoleSpanExporter()
                if on_export_failure is not None:
                    exporter = _CountingExporter(exporter, on_export_failure)
                processors.append(BatchSpanProcessor(exporter))
                continue
            inner = _grpc_exporter() if settings.protocol == "grpc" else _http_exporter()
            wire: Any = WireExporter(inner, OtlpWireEncoder(UNIQUE_ATTRIBUTES), provider.resource,
                                 instrumentation_scope(), on_export_failure)
            wire_processors.append(BatchSpanProcessor(wire))
        tracing = cls(provider, processors, wire_processors)
        atexit.register(tracing.shutdown)
        log.info("tracing on", extra={"exporters": list(settings.exporters), "protocol": settings.protocol})
        return tracing

    @classmethod
    def for_exporter(cls, exporter: SpanExporter, sampler: Any = None, wire: bool = False) -> Tracing:
        """Synchronous export to `exporter` (tests: the SDK's in-memory exporter gets ReadableSpans; with
        `wire`, the exporter gets `WrittenBatch`es as the OTLP exporters do)."""
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        provider = TracerProvider(resource=build_resource({}), sampler=sampler, shutdown_on_exit=False)
        if wire:
            wrapped: Any = WireExporter(exporter, OtlpWireEncoder(UNIQUE_ATTRIBUTES), provider.resource,
                                    instrumentation_scope(), None)
            return cls(provider, (), [SimpleSpanProcessor(wrapped)])
        return cls(provider, [SimpleSpanProcessor(exporter)])

    def shutdown(self) -> None:
        """Flush and stop the exporters (idempotent; registered at exit)."""
        processors = self.processors + self.wire_processors
        self.processors = self.wire_processors = ()
        for processor in processors:
            processor.shutdown()

    # -- per exchange ---------------------------------------------------------------------------------------

    def start_server(self, headers: MutableMapping[str, str], state: FlowState, path: str, scheme: str) -> FlowSpans:
        """Continue the client's trace (or start one) and decide sampling; nothing is built yet."""
        traceparent, tracestate = _header_values(headers)
        parent = parse_traceparent(traceparent, tracestate) if traceparent else None
        operation, http_route = ROUTE_INFO.get(state.route, (None, None))
        name = f"{state.method} {http_route}" if http_route else state.method
        shared = (A.HTTP_REQUEST_METHOD, state.method, A.WARDEN_ROUTE, state.route.value,
                  A.URL_SCHEME, scheme if scheme != "http" else None,  # the default is not worth a field
                  A.HTTP_ROUTE, http_route, A.GEN_AI_OPERATION_NAME, operation)
        unique = [(A.URL_PATH, path.split("?", 1)[0]), (A.WARDEN_REQUEST_ID, state.request_id)]
        trace_id = parent.trace_id if parent is not None else self.ids.generate_trace_id()
        trace_state = parent.trace_state if parent is not None else None
        if self._sample is not None:
            sampled = self._sample(parent, trace_id)
        else:
            sampled, trace_state = self._sample_with_sdk(parent, trace_id, trace_state, name, shared, unique)
        random_flag = int(parent.trace_flags) & 0x02 if parent is not None else 0x02  # W3C level 2 "random"
        spans = FlowSpans(trace_id, self.ids.generate_span_id(), parent, trace_state,
                          (0x01 if sampled else 0) | random_flag, time.time_ns(), name, shared, unique)
        state.provenance.trace_id = format(trace_id, "032x")
        return spans

    def _sample_with_sdk(self, parent: Any, trace_id: int, trace_state: Any, name: str, shared: tuple[Any, ...],
                         unique: list[tuple[str, Any]]) -> tuple[bool, Any]:
        """A sampler `plain_sampler` cannot read: asked through the SDK's interface. A custom sampler gets the
        span's start attributes and may add some (to `unique`) and change the trace state; the SDK's own get
        no attributes."""
        from opentelemetry.trace import NonRecordingSpan, SpanKind, set_span_in_context

        context = set_span_in_context(NonRecordingSpan(parent)) if parent is not None else None
        attrs = None if self._builtin_sampler else _as_dict(shared, unique)
        decision = self.sampler.should_sample(context, trace_id, name, SpanKind.SERVER, attrs, None, trace_state)
        if decision.attributes and not self._builtin_sampler:
            unique.extend(decision.attributes.items())
        return decision.decision.is_sampled(), decision.trace_state or trace_state

    def start_client(self, spans: FlowSpans, headers: MutableMapping[str, str], state: FlowState,
                     provider: str, host: str, port: int) -> None:
        """The CLIENT span of the upstream call; its context goes into the upstream request's headers."""
        spans.client_id = self.ids.generate_span_id()
        spans.client_start_ns = time.time_ns()
        _set_header(headers, b"traceparent", f"00-{spans.trace_id:032x}-{spans.client_id:016x}-{spans.flags:02x}")
        if spans.trace_state:
            _set_header(headers, b"tracestate", spans.trace_state.to_header())
        if not spans.sampled:
            return
        operation = ROUTE_INFO.get(state.route, (None, None))[0]
        if operation:
            body = state.request_json or {}
            max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
            if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
                max_tokens = None
            temperature, top_p = body.get("temperature"), body.get("top_p")
            spans.client_name = f"{operation} {state.model}" if state.model else operation
            spans.client_shared = (
                A.HTTP_REQUEST_METHOD, state.method, A.SERVER_ADDRESS, host, A.SERVER_PORT, port,
                A.GEN_AI_OPERATION_NAME, operation, A.GEN_AI_PROVIDER_NAME, provider,
                A.GEN_AI_REQUEST_MODEL, state.model or None, A.GEN_AI_REQUEST_STREAM, bool(state.stream),
                A.GEN_AI_REQUEST_MAX_TOKENS, max_tokens, A.GEN_AI_REQUEST_TEMPERATURE, _number(temperature),
                A.GEN_AI_REQUEST_TOP_P, _number(top_p),
            )
        else:
            spans.client_name = state.method
            spans.client_shared = (A.HTTP_REQUEST_METHOD, state.method, A.SERVER_ADDRESS, host, A.SERVER_PORT, port)

    def finish(self, state: FlowState) -> None:
        """Write the exchange's finished spans with everything the stages learned and hand them to the
        processors (called by the telemetry stage)."""
        provenance = state.provenance
        spans = provenance.spans
        if not isinstance(spans, FlowSpans):
            return
        provenance.spans = None
        if not spans.sampled or not (self.processors or self.wire_processors):
            return
        end = time.time_ns()
        outcome = state.outcome
        error_type = None
        if outcome in _FAILED:
            error_type = str(state.status) if outcome is Outcome.UPSTREAM_ERROR and state.status else outcome.value
        lora = (A.WARDEN_LORA_ADAPTER, provenance.lora_adapter or None,
                A.WARDEN_LORA_WEIGHTS_SHA256, provenance.lora_weights_sha256 or None,
                A.WARDEN_BASE_MODEL, provenance.base_model or None)
        answer, ledger = state.answer, state.ledger
        status = state.status
        written: list[_Written] = []
        if spans.client_shared is not None:
            client_error = error_type if outcome in _UPSTREAM_FAILED or outcome is Outcome.CLIENT_ABORTED else None
            usage = answer.usage
            written.append(_Written(
                spans.client_name, _CLIENT, spans.client_id, spans.server_id, False, spans.client_start_ns,
                (*spans.client_shared,
                 A.HTTP_RESPONSE_STATUS_CODE, status, A.GEN_AI_RESPONSE_MODEL, answer.response_model or None,
                 A.GEN_AI_RESPONSE_FINISH_REASONS, tuple(answer.finish_reasons) or None, A.ERROR_TYPE, client_error,
                 *lora),
                ((A.GEN_AI_RESPONSE_ID, answer.response_id or None), (A.GEN_AI_USAGE_INPUT_TOKENS, usage.prompt_tokens),
                 (A.GEN_AI_USAGE_OUTPUT_TOKENS, usage.completion_tokens),
                 (A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, usage.cached_tokens),
                 (A.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, state.time_to_first_chunk)),
                (), client_error is not None and outcome is not Outcome.CLIENT_ABORTED,
            ))
        admin = provenance.model_admin_action or None
        parent = spans.parent
        written.append(_Written(
            spans.name, _SERVER, spans.server_id, parent.span_id if parent is not None else 0,
            bool(parent is not None and parent.is_remote), spans.start_ns,
            (*spans.shared,
             A.WARDEN_OUTCOME, outcome.value, A.WARDEN_ACTION, ledger.action.value, A.HTTP_RESPONSE_STATUS_CODE, status,
             A.GEN_AI_REQUEST_MODEL, state.model or None, A.WARDEN_POLICY_VERSION, provenance.policy_version or None,
             A.WARDEN_MODEL_ADMIN_ACTION, admin, A.WARDEN_MODEL_ADMIN_ALLOWED,
             bool(provenance.model_admin_allowed) if admin else None, A.ERROR_TYPE, error_type, *lora),
            (*spans.unique, (A.WARDEN_INPUT_HMAC, state.input_digest or None),
             (A.WARDEN_OUTPUT_HMAC, state.output_digest or None), (A.WARDEN_AUDIT_SEQ, provenance.audit_seq)),
            tuple(_guardrail_event(state, direction, verdict) for direction, verdict in ledger.verdicts.items()),
            error_type is not None and ((status or 0) >= 500 or outcome is Outcome.INTERNAL_ERROR),
        ))
        if self.wire_processors:
            self._emit_wire(spans, written, end)
        if self.processors:
            self._emit_sdk(spans, written, end)

    def _emit_wire(self, spans: FlowSpans, written: list[_Written], end: int) -> None:
        trace_state = spans.trace_state.to_header() if spans.trace_state else ""
        for w in written:
            span = PendingSpan((spans.trace_id, trace_state, end, *w))
            for processor in self.wire_processors:
                processor.on_end(span)

    def _emit_sdk(self, spans: FlowSpans, written: list[_Written], end: int) -> None:
        from opentelemetry.sdk.trace import Event, ReadableSpan
        from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

        flags = TraceFlags(spans.flags)
        server_context = SpanContext(spans.trace_id, spans.server_id, False, flags, spans.trace_state)
        for w in written:
            server = w.kind == _SERVER
            context = server_context if server else \
                SpanContext(spans.trace_id, w.span_id, False, flags, spans.trace_state)
            span = ReadableSpan(
                w.name, context, spans.parent if server else server_context, self.resource,
                _as_dict(w.shared, w.unique), kind=SpanKind.SERVER if server else SpanKind.CLIENT,
                events=[Event(A.GEN_AI_GUARDRAIL_RESULT_EVENT, _as_dict(e, ()), end) for e in w.events],
                status=Status(StatusCode.ERROR if w.error else StatusCode.UNSET), start_time=w.start, end_time=end,
                instrumentation_scope=self.scope,
            )
            for processor in self.processors:
                processor.on_end(span)


_SERVER, _CLIENT = 1, 2  # opentelemetry.trace.SpanKind values (the module is imported only when tracing is on)


class _Written(NamedTuple):
    """One finished span, as both writers take it (a NamedTuple: built twice per exchange, and a frozen
    dataclass's __init__ costs several times more). Immutable values only: it waits in the export queue."""

    name: str
    kind: int
    span_id: int
    parent_id: int  # 0: none
    parent_remote: bool
    start: int
    shared: tuple[Any, ...]  # (key, value, ...), None values absent
    unique: tuple[tuple[str, Any], ...]
    events: tuple[tuple[Any, ...], ...]  # gen_ai.guardrail.result events, each a flat (key, value, ...) tuple
    error: bool


def _as_dict(flat: tuple[Any, ...], pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """Attributes as a dict (None values absent), in the order the wire writer encodes them."""
    attrs = {flat[i]: flat[i + 1] for i in range(0, len(flat), 2) if flat[i + 1] is not None}
    for key, value in pairs:
        if value is not None:
            attrs[key] = value
    return attrs


def instrumentation_scope() -> Any:
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from proxy.telemetry.metrics import build_version

    return InstrumentationScope(A.INSTRUMENTATION_SCOPE, build_version())


def plain_sampler(sampler: Any) -> Callable[[Any, int], bool] | None:
    """The SDK's own samplers (`OTEL_TRACES_SAMPLER`: always_on, always_off, traceidratio and their parentbased
    forms) as a plain decision `(remote parent SpanContext or None, trace id) -> sampled`, the same as their
    `should_sample` for the server span of an incoming request, whose parent, if any, comes from a
    `traceparent` header (so it is remote) and which leave the trace state alone. Measured live, cold
    between requests: the SDK's call (a parent Context built, ParentBased, StaticSampler, a SamplingResult)
    was most of the ~35 us `start_server` cost. None for any other sampler: it is asked through the SDK."""
    from opentelemetry.sdk.trace import sampling

    method = getattr(type(sampler), "should_sample", None)
    try:  # the samplers' fields are private: an SDK that renames them gets the SDK's call, not an error
        if method is sampling.StaticSampler.should_sample:
            sampled = bool(sampler._decision.is_sampled())
            return lambda parent, trace_id: sampled
        if method is sampling.TraceIdRatioBased.should_sample:
            bound, limit = int(sampler.bound), sampling.TraceIdRatioBased.TRACE_ID_LIMIT
            return lambda parent, trace_id: trace_id & limit < bound
        if method is sampling.ParentBased.should_sample:
            root = plain_sampler(sampler._root)
            if_sampled = plain_sampler(sampler._remote_parent_sampled)
            if_not_sampled = plain_sampler(sampler._remote_parent_not_sampled)
        else:
            return None
    except AttributeError:
        return None
    if root is None or if_sampled is None or if_not_sampled is None:
        return None

    def parent_based(parent: Any, trace_id: int) -> bool:
        if parent is None:
            return root(None, trace_id)
        return (if_sampled if parent.trace_flags.sampled else if_not_sampled)(parent, trace_id)

    return parent_based


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def build_resource(env: Mapping[str, str]) -> Any:
    """The SDK's resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME), named `warden` unless they say."""
    from opentelemetry.sdk.resources import Resource

    extra: dict[str, Any] = {}
    named = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    if not named:
        extra["service.name"] = A.DEFAULT_SERVICE_NAME
    return Resource.create(extra)


def _guardrail_event(state: FlowState, direction: Direction, verdict: Verdict) -> tuple[Any, ...]:
    """One gen_ai.guardrail.result event's attributes, flat `(key, value, ...)` (None values absent)."""
    ledger, provenance = state.ledger, state.provenance
    rules = ledger.matched_rules.get(direction)
    if rules is None and not ledger.matched_rules and len(ledger.verdicts) == 1:
        rules = tuple(ledger.rule_actions)  # one guarded direction: every rule verdict belongs to it
    kinds = tuple(sorted({d.kind for d in ledger.detections if d.direction is direction}))
    return (A.GUARDRAIL_COMPONENT, A.GUARDRAIL_COMPONENT_VALUE, A.GUARDRAIL_POLICY_ID,
            provenance.policy_id or "warden", A.GUARDRAIL_RESULT, verdict.value, A.GUARDRAIL_SOURCE, direction.source,
            A.GUARDRAIL_RULE_IDS, tuple(sorted(rules or ())), A.GUARDRAIL_POLICY_VERSION,
            provenance.policy_version or None, A.GUARDRAIL_FINDING_KINDS, kinds or None)
