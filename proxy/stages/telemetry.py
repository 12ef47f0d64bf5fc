"""Stage 5 (responseheaders, response, error): close the books on an exchange: outcome, status, metrics,
spans, and the one exchange log line (ids and figures, never content). It runs last, after every stage that
fills the flow state.

Hot path: metric children are cached (proxy/telemetry/metrics.py ChildCache). A whole answer's facts (usage,
and for spans its id, model and finish reasons) come from its one parse (proxy/answer.py): the response
inspection's when it guarded the answer, else made here, and only when there is something to learn from it.
"""

from __future__ import annotations

import logging

from mitmproxy import http

from proxy.answer import parse_answer
from proxy.guard.ledger import GuardLedger
from proxy.headers import header
from proxy.schemas.plan import SchemaFacts
from proxy.services import Services
from proxy.state import FlowState, Outcome, Route, get_state
from proxy.telemetry import attributes as A

log = logging.getLogger("warden.exchange")

_GENAI_ROUTES = frozenset({Route.CHAT, Route.COMPLETIONS, Route.RESPONSES, Route.EMBEDDINGS, Route.TRITON_GENERATE})


class Telemetry:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.metrics = services.metrics
        self.tracing = services.tracing

    def response(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is None or state.done:
            return
        assert flow.response is not None
        if not flow.response.stream and state.route in _GENAI_ROUTES:
            self._facts_from_body(flow, state)
        self._finish(flow, state)

    def error(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is None or state.done:
            return
        self._finish(flow, state)

    def _facts_from_body(self, flow: http.HTTPFlow, state: FlowState) -> None:
        """Usage (metrics) and, while a span records, the answer's id, model and finish reasons, from the
        answer's one parse: made here unless the response inspection made it already."""
        assert flow.response is not None
        answer = state.answer
        if answer.parsed is not None:
            return
        content = flow.response.raw_content
        if not content or content[:1] not in (b"{", b" ", b"\n"):
            return
        spans = state.provenance.spans
        if b'"usage"' not in content and (spans is None or not spans.sampled):
            return  # nothing a parse would tell the metrics, and no span to tell
        parse_answer(answer, content, header(flow.response.headers, b"content-encoding"),
                     self.services.config.max_response_bytes)

    def _finish(self, flow: http.HTTPFlow, state: FlowState) -> None:
        state.done = True
        if state.finished_at is None:  # settled by proxy/stages/settle.py; set here only if it did not run
            state.finished_at = self.services.clock()
        m = self.metrics
        model = m.models.label(state.model)
        route = state.route.value
        status = state.status or 0
        duration = state.finished_at - state.started
        m.inflight.dec()
        m.requests_child(route, model, f"{status // 100}xx", state.outcome.value).inc()
        m.duration_child(route, model).observe(duration)
        usage = state.answer.usage
        first_chunk_at = state.answer.first_chunk_at
        if first_chunk_at is not None:
            m.ttft_child(route, model).observe(first_chunk_at - state.started)
            if usage.completion_tokens and usage.completion_tokens > 1 and state.outcome is Outcome.OK:
                per_token = (state.finished_at - first_chunk_at) / (usage.completion_tokens - 1)
                m.tpot_child(route, model).observe(per_token)
        if usage.prompt_tokens:
            m.prompt_tokens_child(model).inc(usage.prompt_tokens)
        if usage.completion_tokens:
            m.generation_tokens_child(model).inc(usage.completion_tokens)
        if usage.cached_tokens:
            m.cached_prompt_tokens_child(model).inc(usage.cached_tokens)
        ledger = state.ledger
        if ledger.detections or ledger.finding_counts or ledger.seconds:
            self._guard_metrics(ledger)
        if state.schema is not None:
            self._schema(state, state.schema)
        if state.provenance.spans is not None:
            try:
                self.tracing.finish(state)
            except Exception:  # telemetry fails open: the exchange is already answered
                log.exception("cannot finish the spans", extra={"request_id": state.request_id})
        level = logging.DEBUG if state.outcome is Outcome.OK else logging.INFO
        if not log.isEnabledFor(level):
            return
        log.log(
            level,
            "exchange",
            extra={"request_id": state.request_id, "trace_id": state.provenance.trace_id, "route": route,
                   "status": status, "outcome": state.outcome.value, "duration_ms": round(duration * 1000, 2),
                   "stream": state.stream},
        )

    def _guard_metrics(self, ledger: GuardLedger) -> None:
        m = self.metrics
        if ledger.detections:
            for d, n in ledger.detections.items():
                m.guard_detections_child(d.detector, m.kinds(d.kind), d.direction.source, d.action.value).inc(n)
        else:  # a guard that reports only counts by kind: attributed as a whole
            for kind, n in ledger.finding_counts.items():
                m.guard_detections_child("guard", m.kinds(kind), "unknown", ledger.action.value).inc(n)
        for direction, seconds in ledger.seconds.items():
            m.guard_duration_child(direction.value).observe(seconds)

    def _schema(self, state: FlowState, facts: SchemaFacts) -> None:
        """One count per answer checked (labels: the SchemaResult and the SchemaSource, both bounded enums);
        the verdict, the schema's digest, its source and the attempts on the SERVER span."""
        source = facts.plan.source.value
        for result in facts.results:
            self.metrics.schema_validations_child(result.value, source).inc()
        spans = state.provenance.spans
        if spans is not None and spans.sampled:
            verdict = facts.verdict
            spans.unique.extend(((A.WARDEN_SCHEMA_RESULT, verdict.value if verdict is not None else None),
                                 (A.WARDEN_SCHEMA_SHA256, facts.plan.sha256), (A.WARDEN_SCHEMA_SOURCE, source),
                                 (A.WARDEN_SCHEMA_ATTEMPTS, facts.attempts)))
