"""OpenAI-shaped error responses (`{"error": {"message", "type", "code"}}`), the only place that maps our
failures to HTTP statuses, and the patch that makes mitmproxy's own error pages speak the same shape."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from mitmproxy import http


@dataclass(frozen=True, slots=True)
class ApiError:
    status: int
    type: str
    code: str
    message: str
    param: str | None = None
    rules: tuple[str, ...] = ()  # rule ids behind a policy decision (never the matched text)

    def payload(self) -> dict[str, object]:
        error: dict[str, object] = {"message": self.message, "type": self.type, "code": self.code,
                                    "param": self.param}
        if self.rules:
            error["rules"] = list(self.rules)
        return {"error": error}

    def body(self) -> bytes:
        return json.dumps(self.payload()).encode()

    def response(self, request_id: str | None = None) -> http.Response:
        headers = {"Content-Type": "application/json"}
        if request_id:
            headers["X-Warden-Request-Id"] = request_id
        return http.Response.make(self.status, self.body(), headers)


def upstream_unavailable(detail: str) -> ApiError:
    return ApiError(502, "upstream_error", "upstream_unavailable", f"The model server is unavailable: {detail}")


def upstream_timeout(seconds: float) -> ApiError:
    return ApiError(
        504, "upstream_error", "upstream_timeout", f"The model server did not answer within {seconds:g} s."
    )


def body_too_large(limit: int) -> ApiError:
    return ApiError(
        413, "invalid_request_error", "request_too_large", f"The request body exceeds the limit of {limit} bytes."
    )


def content_blocked(status: int, rules: tuple[str, ...], *, output: bool = False) -> ApiError:
    what = "The model's answer" if output else "The request"
    return ApiError(status, "invalid_request_error", "content_blocked",
                    f"{what} was blocked by policy (rules: {', '.join(rules) or 'unknown'}).",
                    param="output" if output else None, rules=rules)


def safe_reply(text: str, *, model: str | None, stream: bool, request_id: str | None,
               rules: tuple[str, ...]) -> http.Response:
    """A blocked chat request answered as the assistant (a rule's `reply`, e.g. self-harm: the person may need
    help, not an error): an OpenAI chat completion, or its stream of chunks when the client asked for one.
    `rules` go in a header, as on a block; the text is the rule file's, never the client's."""
    ident = f"chatcmpl-warden-{request_id or 'reply'}"
    created = int(time.time())
    name = model or "warden"
    headers = {"X-Warden-Action": "block", "X-Warden-Rules": ",".join(rules)}
    if request_id:
        headers["X-Warden-Request-Id"] = request_id
    if not stream:
        body = {"id": ident, "object": "chat.completion", "created": created, "model": name,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
        return http.Response.make(200, json.dumps(body, ensure_ascii=False).encode(),
                                  {"Content-Type": "application/json", **headers})
    chunk = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": name}
    events = [
        {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    data = "".join(f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events) + "data: [DONE]\n\n"
    return http.Response.make(200, data.encode(), {"Content-Type": "text/event-stream", **headers})


def invalid_json(detail: str) -> ApiError:
    return ApiError(400, "invalid_request_error", "invalid_json", f"The request body is not valid JSON: {detail}")


def invalid_path(resembles: str | None) -> ApiError:
    """A path spelled other than its route's own spelling (proxy/paths.py); `resembles` is a route pattern,
    never the client's text."""
    what = f"resembles {resembles}" if resembles else "is too long or has too many readings to route"
    return ApiError(400, "invalid_request_error", "invalid_path",
                    f"The request path is not in canonical form and {what}; send the route's own spelling (no "
                    "percent-encoding, dot segments, repeated slashes, backslashes, ';' parameters or host).")


def invalid_schema(param: str, reason: str) -> ApiError:
    """A schema in the request Warden will not use (rules.schema.InvalidSchema): nothing goes upstream."""
    return ApiError(400, "invalid_request_error", "invalid_schema", f"The schema at {param} is not usable: {reason}",
                    param=param)


def schema_violation(param: str, violations: tuple[str, ...], attempts: int) -> ApiError:
    """The answer does not fit its schema. `violations` are rules.schema.Violation messages (a JSON pointer, a
    keyword and the schema's words, never the answer's text); `param` names what was checked (`output`,
    `tool_calls[0].function.arguments`)."""
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    listed = "; ".join(violations) or "unknown"
    return ApiError(502, "upstream_error", "schema_violation",
                    f"The model's answer does not match its JSON schema{tried}: {listed}", param=param)


def unsupported_encoding(encoding: str) -> ApiError:
    return ApiError(415, "invalid_request_error", "unsupported_content_encoding",
                    f"Content-Encoding {encoding!r} cannot be inspected; send identity, gzip or deflate.")


def overloaded(retry_after: int) -> ApiError:
    return ApiError(429, "rate_limit_error", "server_overloaded",
                    f"The model server is at capacity; retry after {retry_after} s.")


def guard_timeout(seconds: float, *, output: bool = False) -> ApiError:
    what = "the model's answer was withheld" if output else "the request was not forwarded"
    return ApiError(503, "server_error", "guard_timeout",
                    f"Inspection did not finish within {seconds:g} s; {what}.")


def internal_error(request_id: str) -> ApiError:
    return ApiError(
        500, "server_error", "internal_error",
        f"Warden failed while handling this request (request id {request_id}); it was not forwarded.",
    )


# mitmproxy answers some failures itself (connect refused, a body over its limit without a
# Content-Length, an upstream that breaks off before its headers) with an HTML page. Clients of an
# OpenAI-compatible server parse JSON errors, so those pages are replaced with the same shape as ours.
_MITM_STATUS_TO_ERROR = {
    400: ("invalid_request_error", "bad_request"),
    408: ("invalid_request_error", "request_timeout"),
    413: ("invalid_request_error", "request_too_large"),
    431: ("invalid_request_error", "request_header_too_large"),
    502: ("upstream_error", "upstream_unavailable"),
    504: ("upstream_error", "upstream_timeout"),
}
SERVER_HEADER = "warden"  # what Warden's own answers say they are (mitmproxy's pages said "mitmproxy 12.x")

# mitmproxy's messages about the upstream name its address ("Error connecting to '10.0.3.7:8000': ...") or quote
# the bytes it received ("unexpected server response: b'...'"), which may be the model's words. The client is
# told which kind of failure it was, in our words.
_UPSTREAM_FAILURES = (
    ("refused", "the connection was refused"),
    ("reset", "the connection was reset"),
    ("timed out", "the connection timed out"),
    ("timeout", "the connection timed out"),
    ("cannot parse http response", "it sent an invalid HTTP response"),
    ("unexpected server response", "it sent an invalid HTTP response"),
    ("server closed connection", "it closed the connection"),
    ("peer closed", "it closed the connection"),
    ("tls", "the TLS handshake failed"),
    ("certificate", "the TLS handshake failed"),
    ("name or service not known", "its name does not resolve"),
    ("nodename nor servname", "its name does not resolve"),
)


def upstream_failure(message: str) -> str:
    """A mitmproxy message about the upstream, as the client may read it: the kind of failure only."""
    lowered = message.lower()
    return next((said for cue, said in _UPSTREAM_FAILURES if cue in lowered), "the connection failed")


# The message a connect attempt is cancelled with when `upstream_connect_timeout` passes (stages/deadline.py):
# mitmproxy reports it as a failed connect (502); it is a gateway timeout, so it is answered as one.
CONNECT_TIMED_OUT = "upstream connect timed out"
# `flow.metadata` key set when `upstream_timeout` passed on a TLS upstream (stages/deadline.py): mitmproxy's error
# path then carries RESPONSE_TIMED_OUT in its message, which `mitm_error` turns into the 504.
UPSTREAM_TIMEOUT_MARK = "warden.upstream_timeout"
RESPONSE_TIMED_OUT = "no response headers within"
# proxy/mitm/wire_bounds.py's message for a whole answer over `max_response_bytes` (mitmproxy reports it as a 502).
ANSWER_TOO_LARGE = "answer exceeds the limit"


def mitm_error(status: int, message: str) -> ApiError:
    if status == 502 and CONNECT_TIMED_OUT in message:
        return ApiError(504, "upstream_error", "upstream_timeout", f"The model server is unreachable: {message}.")
    if status == 502 and RESPONSE_TIMED_OUT in message:
        return ApiError(504, "upstream_error", "upstream_timeout", f"The model server did not answer: {message}.")
    if status == 502 and ANSWER_TOO_LARGE in message:
        return ApiError(502, "upstream_error", "response_too_large", message)
    kind, code = _MITM_STATUS_TO_ERROR.get(status, ("server_error", "proxy_error"))
    if status == 502:
        message = f"The model server is unavailable: {upstream_failure(message)}."
    return ApiError(status, kind, code, message)
