"""Stage 2 (request): parse the body once, extract every text field, detect, decide, enforce.

Block answers locally before anything reaches the model; mask and pseudonymize rewrite only the affected
strings. Big bodies are scanned in a worker thread so one long prompt never stalls other streams.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable

from mitmproxy import http

from audit.records import Verdict
from proxy.bodies import json_bytes
from proxy.errors import content_blocked, guard_timeout
from proxy.guard.engine import OFFLOAD_CHARS, Inspection, inspect
from proxy.guard.extract import TextField, put, request_texts
from proxy.guard.ledger import Direction
from proxy.services import Services
from proxy.stages.base import fail_closed, request_json
from proxy.state import INSPECTED_ROUTES, FlowState, Outcome, get_state
from rules.findings import Action
from rules.pseudonym import PseudonymVault

log = logging.getLogger("warden.guard")


class InspectRequest:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = services.config

    @fail_closed
    def request(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        state = get_state(flow)
        if state is None or flow.response is not None:
            return None
        if not self.config.guard:
            state.ledger.verdicts[Direction.REQUEST] = Verdict.SKIPPED
            state.input_digest = self.services.digester.digest(flow.request.raw_content or b"")
            return None
        if state.route not in INSPECTED_ROUTES:
            if self.config.scan_unknown_routes:
                self._scan_raw(flow, state)
            else:
                state.ledger.verdicts[Direction.REQUEST] = Verdict.SKIPPED
                state.input_digest = self.services.digester.digest(flow.request.raw_content or b"")
            return None
        # The answer is inspected, so ask for it uncompressed (identity is always acceptable to the client): a
        # compressed stream could not be read event by event without decoding it first (stages/stream.py
        # decodes, or ends the stream closed, when an upstream compresses anyway).
        flow.request.headers["accept-encoding"] = "identity"
        body = request_json(flow, state, self.config.max_body_bytes)
        if body is None:
            self._unparsed(flow, state)
            return None
        state.input_digest = self.services.digester.digest(state.request_body or b"")
        fields = request_texts(state.route, body)
        vault = PseudonymVault()
        for f in fields:
            vault.learn(f.text)  # placeholders sent back from an earlier turn keep their numbers
        state.ledger.vault = vault
        policy = self.services.guard.policy
        state.provenance.policy_version = policy.version
        if policy.offload or sum(len(f.text) for f in fields) > OFFLOAD_CHARS:
            return self._inspect_off_loop(flow, state, body, fields, vault)
        started = time.perf_counter()
        inspection = inspect(policy.request, fields, vault)
        self._enforce(flow, state, body, inspection, time.perf_counter() - started)
        return None

    async def _inspect_off_loop(self, flow: http.HTTPFlow, state: FlowState, body: dict[str, object],
                                fields: list[TextField], vault: PseudonymVault) -> None:
        scanner = self.services.guard.policy.request
        started = time.perf_counter()
        try:
            inspection = await asyncio.wait_for(asyncio.to_thread(inspect, scanner, fields, vault),
                                                self.config.guard_budget or None)
        except TimeoutError:
            self._over_budget(flow, state, time.perf_counter() - started)
            return
        self._enforce(flow, state, body, inspection, time.perf_counter() - started)

    def _over_budget(self, flow: http.HTTPFlow, state: FlowState, seconds: float) -> None:
        """The scan outran `guard_budget` (a flood of long prompts, a starved CPU). The scan thread cannot be
        stopped, but the exchange no longer waits for it: closed, it is refused (503); open, it is forwarded
        as it came, recorded `failed_open`, never `pass`."""
        mode = self.config.guard_fail_mode
        self.services.metrics.guard_over_budget.labels("input", mode).inc()
        state.ledger.over_budget(Direction.REQUEST, seconds, fail_open=mode == "open")
        log.warning("inspection over budget", extra={"request_id": state.request_id, "direction": "input",
                                                     "budget_s": self.config.guard_budget, "fail_mode": mode})
        if mode == "open":
            return
        state.outcome = Outcome.GUARD_TIMEOUT
        flow.response = guard_timeout(self.config.guard_budget).response(state.request_id)

    def _unparsed(self, flow: http.HTTPFlow, state: FlowState) -> None:
        """No JSON object to inspect. An empty body has nothing to scan; anything else cannot be checked
        and is refused rather than forwarded unseen (fail closed)."""
        if not flow.request.raw_content:
            state.ledger.verdicts[Direction.REQUEST] = Verdict.PASS
            return
        error = state.request_body_error
        assert error is not None
        state.outcome = Outcome.BAD_REQUEST
        state.ledger.verdicts[Direction.REQUEST] = Verdict.ERROR
        flow.response = error.response(state.request_id)

    def _scan_raw(self, flow: http.HTTPFlow, state: FlowState) -> None:
        """`scan_unknown_routes`: an unknown route's body, scanned as text when it is UTF-8 (undecodable
        or compressed bodies are recorded as skipped, never as passed)."""
        raw = flow.request.raw_content or b""
        state.input_digest = self.services.digester.digest(raw)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            state.ledger.verdicts[Direction.REQUEST] = Verdict.SKIPPED
            return
        vault = PseudonymVault()
        state.ledger.vault = vault
        inspection = inspect(self.services.guard.policy.request, [TextField((), text)], vault)
        state.ledger.record(Direction.REQUEST, inspection.action, inspection.decisions)
        if inspection.action is Action.BLOCK:
            self._block(flow, state, inspection)
        elif inspection.rewritten:
            flow.request.content = inspection.rewritten[0][1].encode()

    def _enforce(self, flow: http.HTTPFlow, state: FlowState, body: dict[str, object],
                 inspection: Inspection, seconds: float) -> None:
        state.ledger.record(Direction.REQUEST, inspection.action, inspection.decisions, seconds)
        if inspection.action is Action.BLOCK:
            self._block(flow, state, inspection)
            return
        model_masked = self._mask_model(state, body)
        if inspection.rewritten or model_masked:
            for field, text in inspection.rewritten:
                put(body, field.path, text)
            flow.request.content = json_bytes(body)

    def _mask_model(self, state: FlowState, body: dict[str, object]) -> bool:
        """PII in the `model` name (correlate masked it for records already) is masked for the model server too:
        no model is named after an ID number, and the server would log it. A name without PII is the routing
        key and goes on untouched."""
        model = body.get("model")
        if not isinstance(model, str) or state.model == state.requested_model:
            return False
        masked = self.services.guard.recordable_name(model, remember=False)
        if masked == model:
            return False
        body["model"] = masked
        return True

    def _block(self, flow: http.HTTPFlow, state: FlowState, inspection: Inspection) -> None:
        state.outcome = Outcome.BLOCKED
        state.ledger.blocked_rules = inspection.blocking_rules
        response = content_blocked(self.config.block_status, inspection.blocking_rules).response(state.request_id)
        response.headers["x-warden-action"] = Action.BLOCK.value
        flow.response = response
