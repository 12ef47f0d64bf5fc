"""Stage 4 (response): whole answers get the same treatment as prompts (streams are guarded in the relay).

Order matters: the answer is scanned as the model wrote it (placeholders and all), masked, and only then
are the request's pseudonyms restored, so a value the client itself sent comes back intact while PII the
model produced on its own is masked.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable
from typing import Any

from mitmproxy import http

from audit.records import Verdict
from proxy.answer import record_answer, record_usage
from proxy.bodies import BodyError, decode, json_bytes
from proxy.errors import ApiError, content_blocked, guard_timeout
from proxy.guard.engine import OFFLOAD_CHARS, Inspection, inspect
from proxy.guard.extract import TextField, put, response_texts
from proxy.guard.ledger import Direction
from proxy.services import Services
from proxy.stages.base import fail_closed
from proxy.state import INSPECTED_ROUTES, FlowState, Outcome, get_state
from rules.findings import Action
from rules.pseudonym import PseudonymVault
from rules.scanner import Scanner

log = logging.getLogger("warden.guard")


class InspectResponse:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = services.config

    @fail_closed
    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        state = get_state(flow)
        assert flow.response is not None
        if state is None or flow.response.stream or state.outcome is not Outcome.OK:
            return None  # streams are guarded by the relay; our own answers (blocks, errors) need nothing
        response = flow.response
        if not self.config.guard or state.route not in INSPECTED_ROUTES or not 200 <= response.status_code < 300:
            state.ledger.verdicts.setdefault(Direction.RESPONSE, Verdict.SKIPPED)
            self._finish(flow, state, response.raw_content or b"")
            return None
        try:
            content = decode(response.raw_content or b"", response.headers.get("content-encoding", ""),
                             self.config.max_response_bytes)  # decoded as bounded as sent: no bombs
            body = json.loads(content)
        except (BodyError, ValueError, UnicodeDecodeError, RecursionError):
            # An answer we cannot read cannot be checked: it is not passed on (fail closed).
            self._refuse(flow, state, "the model server's answer is not valid JSON")
            return None
        if not isinstance(body, dict):
            self._refuse(flow, state, "the model server's answer is not a JSON object")
            return None
        record_usage(state.answer, body.get("usage"))  # parsed here once; telemetry need not parse it again
        spans = state.provenance.spans
        if spans is not None and spans.sampled:  # the span's answer facts, from the same parse
            record_answer(state.answer, body)
        fields = response_texts(state.route, body)
        vault = state.ledger.vault or PseudonymVault()
        if self.services.guard.policy.offload or sum(len(f.text) for f in fields) > OFFLOAD_CHARS:
            return self._inspect_off_loop(flow, state, body, content, fields, vault)
        started = time.perf_counter()
        inspection = inspect(self._scanner, fields, vault)
        self._enforce(flow, state, body, content, fields, vault, inspection, time.perf_counter() - started)
        return None

    @property
    def _scanner(self) -> Scanner:
        return self.services.guard.policy.whole_response

    async def _inspect_off_loop(self, flow: http.HTTPFlow, state: FlowState, body: dict[str, Any], content: bytes,
                                fields: list[TextField], vault: PseudonymVault) -> None:
        started = time.perf_counter()
        try:
            inspection = await asyncio.wait_for(asyncio.to_thread(inspect, self._scanner, fields, vault),
                                                self.config.guard_budget or None)
        except TimeoutError:
            self._over_budget(flow, state, body, content, fields, vault, time.perf_counter() - started)
            return
        self._enforce(flow, state, body, content, fields, vault, inspection, time.perf_counter() - started)

    def _over_budget(self, flow: http.HTTPFlow, state: FlowState, body: dict[str, Any], content: bytes,
                     fields: list[TextField], vault: PseudonymVault, seconds: float) -> None:
        """As for prompts (stages/inspect_request.py): closed, the answer is withheld (503); open, it goes out
        uninspected (pseudonyms still restored), recorded `failed_open`."""
        mode = self.config.guard_fail_mode
        self.services.metrics.guard_over_budget.labels("output", mode).inc()
        log.warning("inspection over budget", extra={"request_id": state.request_id, "direction": "output",
                                                     "budget_s": self.config.guard_budget, "fail_mode": mode})
        if mode == "open":
            self._enforce(flow, state, body, content, fields, vault, Inspection(Action.ALLOW, (), ()), seconds)
            state.ledger.verdicts[Direction.RESPONSE] = Verdict.FAILED_OPEN
            return
        state.ledger.over_budget(Direction.RESPONSE, seconds, fail_open=False)
        state.outcome = Outcome.GUARD_TIMEOUT
        flow.response = guard_timeout(self.config.guard_budget, output=True).response(state.request_id)
        self._finish(flow, state, flow.response.content or b"")

    def _enforce(self, flow: http.HTTPFlow, state: FlowState, body: dict[str, Any], content: bytes,
                 fields: list[TextField], vault: PseudonymVault, inspection: Inspection, seconds: float) -> None:
        assert flow.response is not None
        state.ledger.record(Direction.RESPONSE, inspection.action, inspection.decisions, seconds)
        if inspection.action is Action.BLOCK:
            state.outcome = Outcome.BLOCKED
            state.ledger.blocked_rules = inspection.blocking_rules
            error = content_blocked(self.config.block_status, inspection.blocking_rules, output=True)
            flow.response = error.response(state.request_id)
            self._finish(flow, state, flow.response.content or b"")
            return
        original = {f.path: f.text for f in fields}
        final = dict(original)
        for field, text in inspection.rewritten:
            final[field.path] = text
        if len(vault):
            final = {path: vault.restore(text) for path, text in final.items()}
        changed = [path for path, text in final.items() if text != original[path]]
        for path in changed:
            put(body, path, final[path])
        if changed:
            content = json_bytes(body)
            flow.response.content = content
        self._finish(flow, state, content)

    def _refuse(self, flow: http.HTTPFlow, state: FlowState, why: str) -> None:
        state.outcome = Outcome.UPSTREAM_ERROR
        state.ledger.verdicts[Direction.RESPONSE] = Verdict.ERROR
        flow.response = ApiError(502, "upstream_error", "invalid_upstream_response", why).response(state.request_id)
        self._finish(flow, state, b"")

    def _finish(self, flow: http.HTTPFlow, state: FlowState, content: bytes) -> None:
        assert flow.response is not None
        state.output_digest = self.services.digester.digest(content)
        flow.response.headers["x-warden-action"] = state.ledger.action.value
        flow.response.headers["x-warden-request-id"] = state.request_id

