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

Cost (bench/telemetry.py): spans are not live SDK spans but values built once per exchange, and OTLP is
encoded by proxy/otlp_wire.py; the SDK's own path measured 3 to 5 times the budget of 10% CPU per request.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proxy import attributes as A
from proxy.state import FlowState, Outcome, Route

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

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


class TracingConfigError(ValueError):
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

    def __init__(self, inner: SpanExporter, on_failure: Callable[[], None]) -> None:
        self.inner = inner
        self.on_failure = on_failure

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.inner.export(spans)
        except Exception:
            log.exception("span export failed")
            result = SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            self.on_failure()
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))


@dataclass(slots=True)
class FlowSpans:
    """One exchange's two spans while they are open: ids, start times and start attributes only. The SDK span
    objects are built once, at the end (`Tracing.finish`): the SDK's live spans (locks, attribute validation,
    a processor call at start) cost several times more per exchange than the exchange's whole budget."""

    trace_id: int
    server_id: int
    parent: Any  # the client's SpanContext (remote), or None for a new trace
    trace_state: Any  # opentelemetry.trace.TraceState or None
    flags: int  # W3C trace flags of our spans (bit 0: sampled)
    start_ns: int
    name: str
    attributes: dict[str, Any]
    client_id: int = 0
    client_start_ns: int = 0
    client_name: str = ""
    client_attributes: dict[str, Any] | None = None

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


class Tracing:
    """The tracer for the process, or a disabled stand-in that costs nothing. Built once, injected.

    The SDK does the configuration (sampler and resource from `OTEL_*`), the batching (BatchSpanProcessor,
    `OTEL_BSP_*`) and the exporting (OTLP HTTP and gRPC, console); Warden builds the finished `ReadableSpan`s
    itself at the end of each exchange and encodes OTLP with proxy/otlp_wire.py (bench/telemetry.py)."""

    def __init__(self, provider: Any = None, processors: Sequence[Any] = ()) -> None:
        self.provider = provider
        self.processors = tuple(processors)
        self.enabled = provider is not None
        self.scope: Any = None
        if provider is not None:
            from opentelemetry.sdk.util.instrumentation import InstrumentationScope

            from proxy.metrics import build_version

            self.sampler = provider.sampler
            self.ids = provider.id_generator
            self.resource = provider.resource
            self.scope = InstrumentationScope(A.INSTRUMENTATION_SCOPE, build_version())

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

        from proxy.otlp_wire import EncodedRequest, OtlpWireEncoder

        encoder = OtlpWireEncoder(UNIQUE_ATTRIBUTES)
        provider = TracerProvider(resource=build_resource(env), shutdown_on_exit=False)  # OTEL_TRACES_SAMPLER
        processors = []
        for name in settings.exporters:
            exporter: Any
            if name == "console":
                exporter = ConsoleSpanExporter()
            elif settings.protocol == "grpc":
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc
                from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

                class FastGrpc(Grpc):
                    def _translate_data(self, data: Sequence[ReadableSpan]) -> ExportTraceServiceRequest:
                        request: ExportTraceServiceRequest = ExportTraceServiceRequest.FromString(encoder.encode(data))
                        return request

                exporter = FastGrpc()
            else:
                import opentelemetry.exporter.otlp.proto.http.trace_exporter as http_exporter

                # The HTTP exporter calls its module's `encode_spans` and serializes the result: hand it bytes.
                def encode_spans(spans: Sequence[ReadableSpan]) -> EncodedRequest:
                    return EncodedRequest(encoder.encode(spans))

                setattr(http_exporter, "encode_spans", encode_spans)  # noqa: B010 - a deliberate module patch
                exporter = http_exporter.OTLPSpanExporter()
            if on_export_failure is not None:
                exporter = _CountingExporter(exporter, on_export_failure)
            processors.append(BatchSpanProcessor(exporter))
        tracing = cls(provider, processors)
        atexit.register(tracing.shutdown)
        log.info("tracing on", extra={"exporters": list(settings.exporters), "protocol": settings.protocol})
        return tracing

    @classmethod
    def for_exporter(cls, exporter: SpanExporter, sampler: Any = None) -> Tracing:
        """Synchronous export to `exporter` (tests: the SDK's in-memory exporter)."""
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        provider = TracerProvider(resource=build_resource({}), sampler=sampler, shutdown_on_exit=False)
        return cls(provider, [SimpleSpanProcessor(exporter)])

    def shutdown(self) -> None:
        """Flush and stop the exporters (idempotent; registered at exit)."""
        processors, self.processors = self.processors, ()
        for processor in processors:
            processor.shutdown()

    # -- per exchange ---------------------------------------------------------------------------------------

    def start_server(self, headers: MutableMapping[str, str], state: FlowState, path: str, scheme: str) -> FlowSpans:
        """Continue the client's trace (or start one) and decide sampling; nothing is built yet."""
        from opentelemetry.trace import NonRecordingSpan, SpanKind, set_span_in_context

        parent = parse_traceparent(headers.get("traceparent"), headers.get("tracestate"))
        operation, http_route = ROUTE_INFO.get(state.route, (None, None))
        name = f"{state.method} {http_route}" if http_route else state.method
        attrs: dict[str, Any] = {
            A.HTTP_REQUEST_METHOD: state.method,
            A.URL_PATH: path.split("?", 1)[0],
            A.WARDEN_REQUEST_ID: state.request_id,
            A.WARDEN_ROUTE: state.route.value,
        }
        if scheme != "http":  # the default is not worth a field on every span
            attrs[A.URL_SCHEME] = scheme
        if http_route:
            attrs[A.HTTP_ROUTE] = http_route
        if operation:
            attrs[A.GEN_AI_OPERATION_NAME] = operation
        trace_id = parent.trace_id if parent is not None else self.ids.generate_trace_id()
        context = set_span_in_context(NonRecordingSpan(parent)) if parent is not None else None
        trace_state = parent.trace_state if parent is not None else None
        decision = self.sampler.should_sample(context, trace_id, name, SpanKind.SERVER, attrs, None, trace_state)
        if decision.attributes:
            attrs.update(decision.attributes)
        random_flag = int(parent.trace_flags) & 0x02 if parent is not None else 0x02  # W3C level 2 "random"
        spans = FlowSpans(trace_id, self.ids.generate_span_id(), parent, decision.trace_state or trace_state,
                          (0x01 if decision.decision.is_sampled() else 0) | random_flag, time.time_ns(), name, attrs)
        state.trace_id = format(trace_id, "032x")
        return spans

    def start_client(self, spans: FlowSpans, headers: MutableMapping[str, str], state: FlowState,
                     provider: str, host: str, port: int) -> None:
        """The CLIENT span of the upstream call; its context goes into the upstream request's headers."""
        spans.client_id = self.ids.generate_span_id()
        spans.client_start_ns = time.time_ns()
        headers["traceparent"] = f"00-{spans.trace_id:032x}-{spans.client_id:016x}-{spans.flags:02x}"
        if spans.trace_state:
            headers["tracestate"] = spans.trace_state.to_header()
        if not spans.sampled:
            return
        operation = ROUTE_INFO.get(state.route, (None, None))[0]
        attrs: dict[str, Any] = {A.HTTP_REQUEST_METHOD: state.method, A.SERVER_ADDRESS: host, A.SERVER_PORT: port}
        if operation:
            name = f"{operation} {state.model}" if state.model else operation
            attrs[A.GEN_AI_OPERATION_NAME] = operation
            attrs[A.GEN_AI_PROVIDER_NAME] = provider
            if state.model:
                attrs[A.GEN_AI_REQUEST_MODEL] = state.model
            attrs[A.GEN_AI_REQUEST_STREAM] = state.stream
            body = state.request_json or {}
            max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
            if isinstance(max_tokens, int) and not isinstance(max_tokens, bool):
                attrs[A.GEN_AI_REQUEST_MAX_TOKENS] = max_tokens
            for key, attr in (("temperature", A.GEN_AI_REQUEST_TEMPERATURE), ("top_p", A.GEN_AI_REQUEST_TOP_P)):
                value = body.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    attrs[attr] = float(value)
        else:
            name = state.method
        spans.client_name = name
        spans.client_attributes = attrs

    def finish(self, state: FlowState) -> None:
        """Build the exchange's finished spans with everything the stages learned and hand them to the
        processors (called by the telemetry stage)."""
        spans = state.spans
        if not isinstance(spans, FlowSpans):
            return
        state.spans = None
        if not spans.sampled or not self.processors:
            return
        from opentelemetry.sdk.trace import Event, ReadableSpan
        from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

        end = time.time_ns()
        flags = TraceFlags(spans.flags)
        server_context = SpanContext(spans.trace_id, spans.server_id, False, flags, spans.trace_state)
        failed = state.outcome in _FAILED
        error_type = None
        if failed:
            error_type = str(state.status) if state.outcome is Outcome.UPSTREAM_ERROR and state.status \
                else state.outcome.value
        finished = []
        if spans.client_attributes is not None:
            attrs = spans.client_attributes
            attrs.update(_client_finish_attributes(state))
            status = Status(StatusCode.UNSET)
            if error_type is not None and state.outcome in _UPSTREAM_FAILED | {Outcome.CLIENT_ABORTED}:
                attrs[A.ERROR_TYPE] = error_type
                if state.outcome is not Outcome.CLIENT_ABORTED:
                    status = Status(StatusCode.ERROR)
            context = SpanContext(spans.trace_id, spans.client_id, False, flags, spans.trace_state)
            finished.append(ReadableSpan(
                spans.client_name, context, server_context, self.resource, attrs, kind=SpanKind.CLIENT,
                status=status, start_time=spans.client_start_ns, end_time=end, instrumentation_scope=self.scope,
            ))
        attrs = spans.attributes
        attrs.update(_server_finish_attributes(state))
        status = Status(StatusCode.UNSET)
        if error_type is not None:
            attrs[A.ERROR_TYPE] = error_type
            if (state.status or 0) >= 500 or state.outcome is Outcome.INTERNAL_ERROR:
                status = Status(StatusCode.ERROR)
        events = [Event(A.GEN_AI_GUARDRAIL_RESULT_EVENT, _guardrail_event(state, stage, verdict), end)
                  for stage, verdict in state.stage_verdicts.items()]
        finished.append(ReadableSpan(
            spans.name, server_context, spans.parent, self.resource, attrs, events=events, kind=SpanKind.SERVER,
            status=status, start_time=spans.start_ns, end_time=end, instrumentation_scope=self.scope,
        ))
        for processor in self.processors:
            for span in finished:
                processor.on_end(span)


def build_resource(env: Mapping[str, str]) -> Any:
    """The SDK's resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME), named `warden` unless they say."""
    from opentelemetry.sdk.resources import Resource

    extra: dict[str, Any] = {}
    named = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    if not named:
        extra["service.name"] = A.DEFAULT_SERVICE_NAME
    return Resource.create(extra)


def _client_finish_attributes(state: FlowState) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    if state.status is not None:
        attrs[A.HTTP_RESPONSE_STATUS_CODE] = state.status
    if state.response_id:
        attrs[A.GEN_AI_RESPONSE_ID] = state.response_id
    if state.response_model:
        attrs[A.GEN_AI_RESPONSE_MODEL] = state.response_model
    if state.finish_reasons:
        attrs[A.GEN_AI_RESPONSE_FINISH_REASONS] = list(state.finish_reasons)
    usage = state.usage
    if usage.prompt_tokens is not None:
        attrs[A.GEN_AI_USAGE_INPUT_TOKENS] = usage.prompt_tokens
    if usage.completion_tokens is not None:
        attrs[A.GEN_AI_USAGE_OUTPUT_TOKENS] = usage.completion_tokens
    if usage.cached_tokens is not None:
        attrs[A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = usage.cached_tokens
    ttfc = state.time_to_first_chunk
    if ttfc is not None:
        attrs[A.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = ttfc
    _lora_attributes(state, attrs)
    return attrs


def _lora_attributes(state: FlowState, attrs: dict[str, Any]) -> None:
    if state.lora_adapter:
        attrs[A.WARDEN_LORA_ADAPTER] = state.lora_adapter
    if state.lora_weights_sha256:
        attrs[A.WARDEN_LORA_WEIGHTS_SHA256] = state.lora_weights_sha256
    if state.base_model:
        attrs[A.WARDEN_BASE_MODEL] = state.base_model


def _server_finish_attributes(state: FlowState) -> dict[str, Any]:
    attrs: dict[str, Any] = {A.WARDEN_OUTCOME: state.outcome.value, A.WARDEN_ACTION: state.action}
    if state.status is not None:
        attrs[A.HTTP_RESPONSE_STATUS_CODE] = state.status
    if state.model:
        attrs[A.GEN_AI_REQUEST_MODEL] = state.model
    if state.input_digest:
        attrs[A.WARDEN_INPUT_HMAC] = state.input_digest
    if state.output_digest:
        attrs[A.WARDEN_OUTPUT_HMAC] = state.output_digest
    if state.policy_version:
        attrs[A.WARDEN_POLICY_VERSION] = state.policy_version
    if state.audit_seq is not None:
        attrs[A.WARDEN_AUDIT_SEQ] = state.audit_seq
    if state.model_admin_action:
        attrs[A.WARDEN_MODEL_ADMIN_ACTION] = state.model_admin_action
        attrs[A.WARDEN_MODEL_ADMIN_ALLOWED] = bool(state.model_admin_allowed)
    _lora_attributes(state, attrs)
    return attrs


def _guardrail_event(state: FlowState, stage: str, verdict: str) -> dict[str, Any]:
    rules = state.guard_rules.get(stage)
    if rules is None and not state.guard_rules and len(state.stage_verdicts) == 1:
        rules = tuple(state.rule_verdicts)  # one guarded direction: every rule verdict belongs to it
    source = "input" if stage == "request" else "output"
    kinds = sorted({kind for (_s, kind, direction, _a) in state.guard_detections if direction == source})
    event: dict[str, Any] = {
        A.GUARDRAIL_COMPONENT: A.GUARDRAIL_COMPONENT_VALUE,
        A.GUARDRAIL_POLICY_ID: state.policy_id or "warden",
        A.GUARDRAIL_RESULT: verdict,
        A.GUARDRAIL_SOURCE: source,
        A.GUARDRAIL_RULE_IDS: sorted(rules or ()),
    }
    if state.policy_version:
        event[A.GUARDRAIL_POLICY_VERSION] = state.policy_version
    if kinds:
        event[A.GUARDRAIL_FINDING_KINDS] = kinds
    return event
