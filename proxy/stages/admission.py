"""Stage 1b (requestheaders; response, error): a slot of `max_inflight` per exchange, or a 429 (proxy/admission.py).

Runs right after correlate, before the body is read or anything is scanned: a shed exchange costs almost
nothing. Its 429 is OpenAI-shaped, says `Retry-After`, is counted (`warden_shed_requests_total`) and, like every
exchange, gets its audit record (outcome `shed`, request verdict `skipped`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from mitmproxy import http

from audit.records import Verdict
from proxy.admission import AdmissionGate, Entry
from proxy.errors import overloaded
from proxy.guard.ledger import Direction
from proxy.services import Services
from proxy.stages.base import fail_closed
from proxy.state import FlowState, Outcome, get_state

log = logging.getLogger("warden.admission")

RETRY_AFTER_SECONDS = 1


class Admission:
    def __init__(self, services: Services) -> None:
        config = services.config
        self.gate = AdmissionGate(config.max_inflight, config.max_queue, config.queue_timeout)
        self.metrics = services.metrics

    @fail_closed
    def requestheaders(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        state = get_state(flow)
        if state is None or flow.response is not None:
            return None
        entry = self.gate.enter()
        if entry is Entry.ADMITTED:
            state.admitted = True
            return None
        if entry is Entry.FULL:
            self._shed(flow, state, "queue_full")
            return None
        return self._queue(flow, state)

    async def _queue(self, flow: http.HTTPFlow, state: FlowState) -> None:
        self.metrics.queued.inc()
        try:
            admitted = await self.gate.wait()
        finally:
            self.metrics.queued.dec()
        if admitted:
            state.admitted = True
        else:
            self._shed(flow, state, "queue_timeout")

    def _shed(self, flow: http.HTTPFlow, state: FlowState, reason: str) -> None:
        state.outcome = Outcome.SHED
        state.ledger.verdicts[Direction.REQUEST] = Verdict.SKIPPED
        self.metrics.shed.labels(reason).inc()
        response = overloaded(RETRY_AFTER_SECONDS).response(state.request_id)
        response.headers["retry-after"] = str(RETRY_AFTER_SECONDS)
        flow.response = response
        log.info("shed", extra={"request_id": state.request_id, "reason": reason,
                                "inflight": self.gate.inflight, "queued": self.gate.waiting})

    def response(self, flow: http.HTTPFlow) -> None:
        self._release(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._release(flow)

    def _release(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is not None and state.admitted:
            state.admitted = False  # once: a flow may see both response and error
            self.gate.leave()
