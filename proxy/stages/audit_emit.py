"""Stage 6 (response, error): exactly one audit record per exchange, blocked, failed and aborted included.

Appending never blocks. A whole (non-streamed) answer is held until its record is durable, at most a few
group-commit windows, so an exchange the client saw acknowledged is in the log even after a SIGKILL; if
the log cannot make it durable in time the answer is replaced by a 503 (audit fails closed). A streamed
answer has already been sent when its record is written; its record is queued, not awaited.

The wait is the ticket's completion, a future the writer thread resolves after the batch's fsync; asyncio's
`wrap_future` hands the result to the event loop thread-safely (`call_soon_threadsafe`), so nothing polls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

from mitmproxy import http

from audit import AppendTicket, AuditLog, ExchangeRecord
from audit.errors import AuditError
from proxy.errors import ApiError
from proxy.schemas.plan import SchemaFacts
from proxy.services import Services
from proxy.state import FlowState, Outcome, get_state

log = logging.getLogger("warden.audit")

DURABLE_WAIT_SECONDS = 2.0  # far above the batch window: only a stuck disk gets here


def audit_unavailable(request_id: str) -> http.Response:
    error = ApiError(503, "server_error", "audit_unavailable",
                     f"The audit log could not record this exchange (request id {request_id}); "
                     "the answer is withheld.")
    return error.response(request_id)


def withhold(flow: http.HTTPFlow, state: FlowState) -> None:
    """Audit fails closed: without a durable record the answer does not go out."""
    state.outcome = Outcome.INTERNAL_ERROR
    state.status = 503
    flow.response = audit_unavailable(state.request_id)


def record_body(state: FlowState, policy_version: str) -> dict[str, object]:
    """The audit record of one exchange: ids, verdicts, counts and keyed digests, never content."""
    latency = None if state.finished_at is None else int((state.finished_at - state.started) * 1000)
    ledger, provenance, usage = state.ledger, state.provenance, state.answer.usage
    verdicts = {f"@{direction.value}": verdict.value for direction, verdict in ledger.verdicts.items()}
    verdicts.update((rule, action.value) for rule, action in ledger.rule_actions.items())
    record = ExchangeRecord(
        request_id=state.request_id,
        route=state.route.value,
        status=state.status,
        latency_ms=latency,
        trace_id=provenance.trace_id,
        model=state.model,
        lora_adapter=provenance.lora_adapter,
        lora_sha256=provenance.lora_weights_sha256,
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        input_digest=state.input_digest,
        output_digest=state.output_digest,
        outcome=state.outcome.value,
        verdicts=verdicts,
        findings=dict(ledger.finding_counts),
    )
    body = record.to_body()
    body["policy_version"] = policy_version
    body["stream"] = state.stream
    if ledger.blocked_rules:
        body["blocked_rules"] = list(ledger.blocked_rules)
    if ledger.role_actions:  # where in the request each rule matched (rules/roles.py): roles, never text
        body["roles"] = {rule: dict(by_role) for rule, by_role in ledger.role_actions.items()}
    if provenance.model_admin_action is not None:  # adapter admin calls are always audited, allowed or not
        body["model_admin"] = {"action": provenance.model_admin_action,
                               "allowed": bool(provenance.model_admin_allowed)}
    if provenance.base_model is not None:
        body["base_model"] = provenance.base_model
    if state.schema is not None:
        body["schema"] = schema_record(state.schema)
    return body


def schema_record(facts: SchemaFacts) -> dict[str, object]:
    """The exchange's output schema (issue 21): the verdict (the last answer's result; null when nothing in the
    answer was under the schema, such as a refusal, or no answer came), which schema (SHA-256 of its
    canonical form), where it came from, and the answers checked. No violation messages: their JSON pointers
    may name the answer's own object keys (a schema of maps), and the record never holds answer text."""
    verdict = facts.verdict
    return {"result": verdict.value if verdict is not None else None, "sha256": facts.plan.sha256,
            "source": facts.plan.source.value, "attempts": facts.attempts}


class AuditEmit:
    def __init__(self, services: Services, audit_log: AuditLog, *,
                 durable_wait: float = DURABLE_WAIT_SECONDS) -> None:
        self.services = services
        self.log = audit_log
        self.durable_wait = durable_wait

    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        state = get_state(flow)
        if state is None or state.audited:
            return None
        ticket = self._append(flow, state)
        assert flow.response is not None
        if ticket is None:
            if not flow.response.stream:
                withhold(flow, state)
            return None
        if flow.response.stream or ticket.done():
            return None
        return self._await_durable(flow, state, ticket)

    def error(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is not None and not state.audited:
            self._append(flow, state)

    def _append(self, flow: http.HTTPFlow, state: FlowState) -> AppendTicket | None:
        state.audited = True
        try:
            ticket = self.log.append("exchange", record_body(state, self.services.guard.policy.version))
        except AuditError:
            log.exception("audit append failed", extra={"request_id": state.request_id})
            return None
        state.provenance.audit_seq = ticket.seq
        return ticket

    async def _await_durable(self, flow: http.HTTPFlow, state: FlowState, ticket: AppendTicket) -> None:
        try:
            # On timeout wait_for cancels the wrapped future; the writer ignores a cancelled one.
            durable = await asyncio.wait_for(asyncio.wrap_future(ticket.completion()), self.durable_wait)
        except TimeoutError:
            durable = False
        if not durable:  # not fsynced within the bound, or the writer stopped first
            log.error("audit record not durable in time; withholding the answer",
                      extra={"request_id": state.request_id, "seq": ticket.seq})
            withhold(flow, state)
