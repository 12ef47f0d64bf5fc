"""Stage 4a (response): a whole answer checked against its schemas (issue 21, DESIGN section 5); streams are
checked in the relay.

It runs before the response inspection: the model's own answer is judged (and re-asked), and the answer that
goes out is then masked as usual. Which texts are checked and what is not a violation (a refusal, a turn that
only calls tools) is proxy/schemas/answer.py's; an answer with nothing under a schema is not counted as a
validation at all. An answer that fits gets `X-Warden-Schema: valid`; one that does not, by `schema_policy`:
- flag: passed unchanged with `X-Warden-Schema: invalid`;
- reject: 502 `schema_violation`, naming the failing text (`param`) and the violations (the schema's words);
- reask: the conversation goes back to the same upstream with the violations appended (proxy/schemas/reask.py),
  at most `schema_reask` times; the first answer to the re-ask that fits replaces the answer (an answer to a
  re-ask with nothing under a schema, such as a refusal, fits), else the last one is rejected. A re-ask the
  upstream does not answer (refused, timed out, broken off, an error status, a body that is not a JSON object)
  ends the exchange as a 502 `upstream_unavailable`.
`state.schema.results` gets one result per answer checked (REASKED for each answer that was re-asked), which
telemetry counts and the span and audit record report. Token counts are summed over the attempts: the upstream
did that work for this exchange.

The re-ask is the client's request as the upstream got it (after masking, with the route schema injected and
our `traceparent`), sent by proxy/schemas/upstream.py off mitmproxy's connection; the hook returns an
awaitable so the event loop never waits on it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable
from typing import Any

from mitmproxy import http

from proxy.answer import ParsedAnswer, parse_answer
from proxy.bodies import BodyError, decode
from proxy.errors import schema_violation, upstream_unavailable
from proxy.headers import strip_hop_by_hop
from proxy.schemas.answer import AnswerCheck, check_answer, offered_functions
from proxy.schemas.plan import SchemaFacts, SchemaPolicy, SchemaResult
from proxy.schemas.reask import reask_body
from proxy.schemas.upstream import Target, UpstreamFailure, http_post
from proxy.services import Services
from proxy.stages.base import fail_closed
from proxy.state import FlowState, Outcome, get_state

log = logging.getLogger("warden.schema")

HEADER = "X-Warden-Schema"
# Not sent with the re-ask: framing and encodings are the re-ask's own (proxy/schemas/upstream.py frames it).
NOT_REPEATED = (b"content-length", b"transfer-encoding", b"content-encoding", b"accept-encoding", b"expect")


class SchemaCheck:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = config = services.config
        self.policy = SchemaPolicy(config.schema_policy)
        self.reasks = max(0, config.schema_reask) if self.policy is SchemaPolicy.REASK else 0

    @fail_closed
    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        state = get_state(flow)
        response = flow.response
        assert response is not None
        if state is None or state.schema is None or state.schema.results or response.stream:
            return None
        if state.outcome is not Outcome.OK or not 200 <= response.status_code < 300:
            return None  # our own answers and the upstream's errors have no schema to fit
        parsed = parse_answer(state.answer, response.raw_content or b"", response.headers.get("content-encoding", ""),
                              self.config.max_response_bytes)
        if parsed.body is None:
            return None  # not a JSON object: the response inspection refuses it (fail closed)
        facts = state.schema
        check = check_answer(state.route, parsed.body, facts.plan, offered_functions(state.route, state.request_json))
        if check.checked == 0:
            return None  # nothing in it is under a schema (a refusal, prose beside offered tools)
        if check.valid:
            self._valid(response, facts)
        elif self.policy is SchemaPolicy.FLAG:
            facts.results.append(SchemaResult.INVALID)
            facts.violations = check.messages()
            response.headers[HEADER] = "invalid"
        elif self.reasks == 0:
            self._reject(flow, state, check)
        else:
            return self._reask(flow, state, parsed.body, check)
        return None

    @staticmethod
    def _valid(response: http.Response, facts: SchemaFacts) -> None:
        facts.results.append(SchemaResult.VALID)
        facts.violations = ()
        response.headers[HEADER] = "valid"

    @staticmethod
    def _reject(flow: http.HTTPFlow, state: FlowState, check: AnswerCheck) -> None:
        facts = state.schema
        assert facts is not None
        facts.results.append(SchemaResult.REJECTED)
        facts.violations = check.messages()
        state.outcome = Outcome.SCHEMA_VIOLATION
        state.error_detail = "schema_violation"
        flow.response = schema_violation(check.param, facts.violations, facts.attempts).response(state.request_id)

    async def _reask(self, flow: http.HTTPFlow, state: FlowState, answer: dict[str, Any], check: AnswerCheck) -> None:
        facts = state.schema
        assert facts is not None
        sent = self._sent(flow)
        if sent is None:
            self._reject(flow, state, check)  # what the upstream got cannot be read back: nothing to extend
            return
        target = Target(flow.request.scheme, flow.request.host, flow.request.port, flow.request.path)
        headers = self._headers(flow)
        offered = offered_functions(state.route, state.request_json)
        config = self.config
        for _ in range(self.reasks):
            sent = reask_body(state.route, sent, answer, check)
            facts.results.append(SchemaResult.REASKED)
            facts.violations = check.messages()
            log.debug("re-asking the upstream", extra={"request_id": state.request_id, "attempt": facts.attempts})
            try:
                reply = await http_post(target, headers, json.dumps(sent, ensure_ascii=False).encode(),
                                        timeout=config.upstream_timeout,
                                        connect_timeout=config.upstream_connect_timeout,
                                        verify_tls=config.upstream_verify, max_bytes=config.max_response_bytes)
            except UpstreamFailure as exc:
                self._failed(flow, state, str(exc))
                return
            if not 200 <= reply.status_code < 300:
                self._failed(flow, state, f"it answered the re-ask with status {reply.status_code}")
                return
            parsed = self._reparse(state, reply)
            if parsed.body is None:
                self._failed(flow, state, "its answer to the re-ask is not a JSON object")
                return
            self._replace(flow, reply)
            answer = parsed.body
            check = check_answer(state.route, answer, facts.plan, offered)
            if check.valid:
                assert flow.response is not None
                self._valid(flow.response, facts)
                return
        self._reject(flow, state, check)

    def _sent(self, flow: http.HTTPFlow) -> dict[str, Any] | None:
        """The body the upstream got, as an object."""
        try:
            content = decode(flow.request.raw_content or b"", flow.request.headers.get("content-encoding", ""),
                             self.config.max_body_bytes)
            body = json.loads(content)
        except (BodyError, ValueError, UnicodeDecodeError, RecursionError):
            return None
        return body if isinstance(body, dict) else None

    @staticmethod
    def _headers(flow: http.HTTPFlow) -> list[tuple[bytes, bytes]]:
        """The client's headers as the upstream got them (our `traceparent` included), less those of one
        connection and those of the body's framing and encoding."""
        headers = flow.request.headers.copy()
        strip_hop_by_hop(headers)
        fields = [(name, value) for name, value in headers.fields if name.lower() not in NOT_REPEATED]
        if not any(name.lower() == b"host" for name, _ in fields):
            fields.insert(0, (b"Host", (flow.request.host_header or flow.request.host).encode()))
        fields.append((b"Accept-Encoding", b"identity"))
        return fields

    def _reparse(self, state: FlowState, reply: http.Response) -> ParsedAnswer:
        """The re-ask's answer parsed as the exchange's answer; its usage added to the earlier attempts'."""
        usage = state.answer.usage
        before = (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)
        usage.prompt_tokens = usage.completion_tokens = usage.cached_tokens = None
        state.answer.parsed = None
        parsed = parse_answer(state.answer, reply.raw_content or b"", reply.headers.get("content-encoding", ""),
                              self.config.max_response_bytes)
        usage.prompt_tokens = _add(before[0], usage.prompt_tokens)
        usage.completion_tokens = _add(before[1], usage.completion_tokens)
        usage.cached_tokens = _add(before[2], usage.cached_tokens)
        return parsed

    @staticmethod
    def _replace(flow: http.HTTPFlow, reply: http.Response) -> None:
        """The re-ask's answer becomes the exchange's answer (its body as sent, so its encoding still holds)."""
        response = flow.response
        assert response is not None
        headers = reply.headers.copy()
        strip_hop_by_hop(headers)
        headers.pop("transfer-encoding", None)
        headers["content-length"] = str(len(reply.raw_content or b""))
        response.status_code = reply.status_code
        response.reason = reply.reason
        response.headers = headers
        response.raw_content = reply.raw_content

    @staticmethod
    def _failed(flow: http.HTTPFlow, state: FlowState, detail: str) -> None:
        state.outcome = Outcome.UPSTREAM_UNAVAILABLE
        state.error_detail = f"schema re-ask: {detail}"
        flow.response = upstream_unavailable(detail).response(state.request_id)


def _add(before: int | None, now: int | None) -> int | None:
    return None if before is None and now is None else (before or 0) + (now or 0)
