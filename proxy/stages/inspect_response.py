"""Stage 4 (response): whole answers get the same treatment as prompts (streams are guarded in the relay).

Order matters: the answer is scanned as the model wrote it (placeholders and all), masked, and only then
are the request's pseudonyms restored, so a value the client itself sent comes back intact while PII the
model produced on its own is masked.
"""

from __future__ import annotations

from collections.abc import Awaitable

from mitmproxy import http

from audit.records import Verdict
from proxy.answer import parse_answer
from proxy.bodies import json_bytes
from proxy.errors import ApiError, content_blocked, guard_timeout
from proxy.guard.body import BodyInspector, BodyScan
from proxy.guard.extract import put
from proxy.guard.ledger import Direction
from proxy.headers import header, set_headers
from proxy.services import Services
from proxy.stages.base import fail_closed
from proxy.state import INSPECTED_ROUTES, FlowState, Outcome, get_state


class InspectResponse:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = config = services.config
        self.inspector = BodyInspector(services.guard, Direction.RESPONSE, services.metrics,
                                       budget=config.guard_budget, fail_mode=config.guard_fail_mode)

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
        # Parsed once for the exchange: the answer's usage, id and finish reasons come from this parse too.
        parsed = parse_answer(state.answer, response.raw_content or b"", header(response.headers, b"content-encoding"),
                              self.config.max_response_bytes)
        if parsed.body is None:
            # An answer we cannot read cannot be checked: it is not passed on (fail closed).
            self._refuse(flow, state, parsed.error)
            return None
        body = parsed.body
        scan = self.inspector.inspect_body(state, body)
        if isinstance(scan, BodyScan):
            self._apply(flow, state, scan, body, parsed.content)
            return None
        return self._apply_later(flow, state, scan, body, parsed.content)

    async def _apply_later(self, flow: http.HTTPFlow, state: FlowState, pending: Awaitable[BodyScan],
                           body: dict[str, object], content: bytes) -> None:
        self._apply(flow, state, await pending, body, content)

    def _apply(self, flow: http.HTTPFlow, state: FlowState, scan: BodyScan, body: dict[str, object],
               content: bytes) -> None:
        """Enforce the scan on the answer: withhold it, or rewrite the changed fields. Over budget, open, it
        goes out uninspected with the pseudonyms still restored; closed, it is withheld (503)."""
        assert flow.response is not None
        if scan.inspection is None and not self.inspector.fail_open:
            state.outcome = Outcome.GUARD_TIMEOUT
            flow.response = guard_timeout(self.config.guard_budget, output=True).response(state.request_id)
            self._finish(flow, state, flow.response.content or b"")
            return
        if scan.blocked:
            state.outcome = Outcome.BLOCKED
            error = content_blocked(self.config.block_status, state.ledger.blocked_rules, output=True)
            flow.response = error.response(state.request_id)
            self._finish(flow, state, flow.response.content or b"")
            return
        rewrites = scan.rewrites(restore=True)
        for path, text in rewrites:
            put(body, path, text)
        if rewrites:
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
        set_headers(flow.response.headers, {b"x-warden-action": state.ledger.action.value,
                                            b"x-warden-request-id": state.request_id})
