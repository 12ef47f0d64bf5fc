"""Stage 2 (request): parse the body once, inspect it (proxy/guard/body.py: extract, detect, decide), enforce.

Block answers locally before anything reaches the model; mask and pseudonymize rewrite only the affected
strings. Over `guard_budget`, the fail mode decides: closed refuses (503), open forwards it as it came.
"""

from __future__ import annotations

from collections.abc import Awaitable

from mitmproxy import http

from audit.records import Verdict
from proxy.bodies import json_bytes
from proxy.errors import content_blocked, guard_timeout, safe_reply
from proxy.guard.body import BodyInspector, BodyScan
from proxy.guard.extract import TextField, put
from proxy.guard.ledger import Direction
from proxy.services import Services
from proxy.stages.base import fail_closed, request_json
from proxy.state import INSPECTED_ROUTES, FlowState, Outcome, Route, get_state
from rules.findings import Action


class InspectRequest:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = config = services.config
        self.inspector = BodyInspector(services.guard, Direction.REQUEST, services.metrics,
                                       budget=config.guard_budget, fail_mode=config.guard_fail_mode)

    @fail_closed
    def request(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        state = get_state(flow)
        if state is None or flow.response is not None:
            return None
        if not self.config.guard:
            self._skip(flow, state)
            return None
        if state.route not in INSPECTED_ROUTES:
            if self.config.scan_unknown_routes:
                return self._scan_raw(flow, state)
            self._skip(flow, state)
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
        scan = self.inspector.inspect_body(state, body)
        if isinstance(scan, BodyScan):
            self._apply(flow, state, scan, body)
            return None
        return self._apply_later(flow, state, scan, body)

    async def _apply_later(self, flow: http.HTTPFlow, state: FlowState, pending: Awaitable[BodyScan],
                           body: dict[str, object] | None) -> None:
        self._apply(flow, state, await pending, body)

    def _apply(self, flow: http.HTTPFlow, state: FlowState, scan: BodyScan, body: dict[str, object] | None) -> None:
        """Enforce the scan on the request: refuse it, or rewrite the changed fields (`body` None: the raw
        body of an unknown route, one text field)."""
        if scan.inspection is None:  # over budget: open, forwarded uninspected (recorded failed_open)
            if not self.inspector.fail_open:
                state.outcome = Outcome.GUARD_TIMEOUT
                flow.response = guard_timeout(self.config.guard_budget).response(state.request_id)
            elif body is not None and self._mask_model(state, body):
                flow.request.content = json_bytes(body)  # the name was judged already (correlate): cheap
            return
        if scan.blocked:
            self._block(flow, state, self._reply(state, scan))
            return
        rewrites = scan.rewrites()
        if body is None:
            if rewrites:
                flow.request.content = rewrites[0][1].encode()
            return
        model_masked = self._mask_model(state, body)
        if rewrites or model_masked:
            for path, text in rewrites:
                put(body, path, text)
            flow.request.content = json_bytes(body)

    def _skip(self, flow: http.HTTPFlow, state: FlowState) -> None:
        state.ledger.verdicts[Direction.REQUEST] = Verdict.SKIPPED
        state.input_digest = self.services.digester.digest(flow.request.raw_content or b"")

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

    def _scan_raw(self, flow: http.HTTPFlow, state: FlowState) -> Awaitable[None] | None:
        """`scan_unknown_routes`: an unknown route's body, scanned as text when it is UTF-8 (undecodable
        or compressed bodies are recorded as skipped, never as passed)."""
        raw = flow.request.raw_content or b""
        state.input_digest = self.services.digester.digest(raw)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            state.ledger.verdicts[Direction.REQUEST] = Verdict.SKIPPED
            return None
        scan = self.inspector.inspect_fields(state, [TextField((), text)])
        if isinstance(scan, BodyScan):
            self._apply(flow, state, scan, None)
            return None
        return self._apply_later(flow, state, scan, None)

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

    def _reply(self, state: FlowState, scan: BodyScan) -> str | None:
        """A chat request blocked by a rule with a `reply` (rules/policy.py) is answered with it, in the prompt's
        language (Chinese when a fifth of its letters are ideographs), even when other rules block it too: the
        request reaches the model neither way, and every blocking rule is still named (X-Warden-Rules, the audit
        record), but a person who says they want to die while asking something else that blocks ("how many of
        these pills is an overdose" fires drugs beside self_harm) gets the help lines, not an error. None when no
        blocking rule has a reply."""
        if state.route is not Route.CHAT or scan.inspection is None:
            return None
        scanner = self.services.guard.policy.request
        replies, texts = [], []
        for fs in scan.inspection.scans:  # the language of the fields that block, not of a system prompt
            for d in fs.result.decisions:
                if d.action is Action.BLOCK:
                    policy = scanner.policy_of(d.finding)
                    if policy is not None and policy.reply is not None:
                        replies.append(policy.reply)
                        texts.append(fs.field.text)
        if not replies:
            return None
        text = " ".join(texts)
        letters = sum(1 for c in text if c.isalpha())
        cjk = sum(1 for c in text if "\u3400" <= c <= "\u9fff")
        return replies[0]["zh" if letters and cjk * 5 >= letters else "en"]

    def _block(self, flow: http.HTTPFlow, state: FlowState, reply: str | None = None) -> None:
        state.outcome = Outcome.BLOCKED
        rules = state.ledger.blocked_rules
        if reply is not None:
            flow.response = safe_reply(reply, model=state.requested_model, stream=state.stream,
                                       request_id=state.request_id, rules=rules)
            return
        response = content_blocked(self.config.block_status, rules).response(state.request_id)
        response.headers["x-warden-action"] = Action.BLOCK.value
        flow.response = response
