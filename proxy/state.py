"""Per-flow data shared by the stages: one `FlowState` under one key of `flow.metadata` (DESIGN section 2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from proxy.guard.ledger import GuardLedger
from rules.findings import utf8_safe

if TYPE_CHECKING:
    from mitmproxy import http

    from proxy.answer import ParsedAnswer
    from proxy.errors import ApiError
    from proxy.schemas.plan import SchemaFacts
    from proxy.telemetry.tracing import FlowSpans

STATE_KEY = "warden"
MAX_NAME_CHARS = 256  # a model or adapter name as Warden's records carry it


def record_name(value: object) -> str | None:
    """A model or adapter name from a request or the upstream's `/v1/models`, as Warden's records carry it (spans,
    audit records, logs, the LoRA lookup): None unless a string; at most MAX_NAME_CHARS characters; lone
    surrogates as U+FFFD. JSON lets a client write `"\\ud800"`, which UTF-8 cannot encode: left in, the audit
    log refused the record (an exchange without a record) and span export failed. The request itself is
    forwarded as it came."""
    if not isinstance(value, str):
        return None
    name = value[:MAX_NAME_CHARS]
    return utf8_safe(name)


class Route(StrEnum):
    CHAT = "chat"
    COMPLETIONS = "completions"
    RESPONSES = "responses"
    EMBEDDINGS = "embeddings"
    MODELS = "models"
    KSERVE_V2 = "kserve_v2"
    TRITON_GENERATE = "triton_generate"
    MODEL_ADMIN = "model_admin"
    HEALTH = "health"
    OTHER = "other"


# Routes whose JSON bodies Warden knows how to read (proxy/guard/extract.py) and therefore inspects.
INSPECTED_ROUTES = frozenset(
    {Route.CHAT, Route.COMPLETIONS, Route.RESPONSES, Route.EMBEDDINGS, Route.KSERVE_V2, Route.TRITON_GENERATE}
)


class Outcome(StrEnum):
    """How an exchange ended; a bounded label value and an audit field."""

    OK = "ok"
    UPSTREAM_ERROR = "upstream_error"  # the upstream answered with a 4xx/5xx of its own
    UPSTREAM_UNAVAILABLE = "upstream_unavailable"  # refused, reset, or broke off mid-response
    UPSTREAM_TIMEOUT = "upstream_timeout"
    TOO_LARGE = "too_large"
    BAD_REQUEST = "bad_request"
    BLOCKED = "blocked"
    CLIENT_ABORTED = "client_aborted"
    INTERNAL_ERROR = "internal_error"
    SHED = "shed"  # refused with 429: at capacity (proxy/admission.py)
    GUARD_TIMEOUT = "guard_timeout"  # inspection over its budget, failing closed
    SCHEMA_VIOLATION = "schema_violation"  # the answer did not fit its JSON schema and was refused or cut


EXACT_ROUTES: dict[str, Route] = {
    "/v1/chat/completions": Route.CHAT,
    "/v1/completions": Route.COMPLETIONS,
    "/v1/responses": Route.RESPONSES,
    "/v1/embeddings": Route.EMBEDDINGS,
    "/v1/models": Route.MODELS,
    "/v1/load_lora_adapter": Route.MODEL_ADMIN,
    "/v1/unload_lora_adapter": Route.MODEL_ADMIN,
    "/health": Route.HEALTH,
    "/v2/health/ready": Route.HEALTH,
    "/v2/health/live": Route.HEALTH,
}


# The last segment of a `/v2/models/{model}/...` path (KServe v2 and Triton's generate extension).
MODEL_ACTIONS: dict[str, Route] = {
    "infer": Route.KSERVE_V2,
    "generate": Route.TRITON_GENERATE,
    "generate_stream": Route.TRITON_GENERATE,
}


def classify_route(path: str) -> Route:
    """Map a request path (query ignored) to the API it speaks; unknown paths are `other`. It reads the path as
    spelled: proxy/paths.py decides whether that spelling is the one the model server routes on."""
    if "?" in path:
        path = path.split("?", 1)[0]
    path = path.rstrip("/") or "/"
    route = EXACT_ROUTES.get(path)
    if route is not None:
        return route
    if path.startswith("/v2/models/"):
        return MODEL_ACTIONS.get(path[path.rfind("/") + 1:], Route.OTHER)
    if path.startswith("/v2/repository/"):
        return Route.MODEL_ADMIN
    return Route.OTHER


def route_pattern(path: str) -> str:
    """The pattern of the route `path` is classified as (`/v2/models/{model}/infer`), to name it in an answer
    without echoing the client's text; `/` for an unknown route."""
    path = path.split("?", 1)[0].rstrip("/") or "/"
    if path in EXACT_ROUTES:
        return path
    if path.startswith("/v2/models/") and classify_route(path) is not Route.OTHER:
        return "/v2/models/{model}/" + path.rsplit("/", 1)[1]
    if path.startswith("/v2/repository/"):
        return "/v2/repository/..."
    return "/"


@dataclass(slots=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None  # None = the upstream did not say (not zero: see FACTS on vLLM)


@dataclass(slots=True)
class AnswerFacts:
    """What the answer says about itself, read on the way (proxy/answer.py): never its content."""

    usage: Usage = field(default_factory=Usage)
    finish_reasons: list[str] = field(default_factory=list)
    response_id: str | None = None  # the upstream's answer id (`chatcmpl-...`), an identifier, not content
    response_model: str | None = None
    first_chunk_at: float | None = None
    sse_events: int = 0
    stream_complete: bool = False  # the terminal event (`[DONE]`, `response.completed`) reached the client
    # A whole answer's body, parsed at most once by whichever stage needs it first (proxy/answer.py).
    parsed: ParsedAnswer | None = None


@dataclass(slots=True)
class Provenance:
    """Which model, adapter and policy served the exchange, and where it is recorded (trace, audit)."""

    trace_id: str | None = None  # W3C trace id (32 hex): ours when tracing, else the client's traceparent's
    spans: FlowSpans | None = None  # while tracing is on
    lora_adapter: str | None = None  # the request's model when it names a LoRA adapter (or the one an admin call loads)
    lora_weights_sha256: str | None = None  # SHA-256 over the adapter's files (proxy/lora.py)
    base_model: str | None = None  # the adapter's parent, or the model itself when it is a base model
    model_admin_action: str | None = None  # load_lora_adapter, unload_lora_adapter, ... on MODEL_ADMIN routes
    model_admin_allowed: bool | None = None
    policy_id: str | None = None  # which policy judged this exchange ...
    policy_version: str | None = None  # ... and its version (rules digest)
    audit_seq: int | None = None  # the record's sequence number, when audit is on


@dataclass(slots=True)
class FlowState:
    """Everything the stages learn about one exchange, filled in as the flow moves (so mutable). Its own fields
    are the exchange (ids, route, method, model names, stream flag, timings, status, outcome, the request body
    parsed once, the keyed digests); its parts are what the guard decided (`ledger`), what the answer says about
    itself (`answer`) and where it came from and is recorded (`provenance`)."""

    request_id: str
    route: Route
    started: float  # time.perf_counter() at request headers
    method: str = ""
    client_close: bool = False  # the client asked to close its HTTP/1 connection after this exchange
    admitted: bool = False  # holds a slot of max_inflight (proxy/stages/admission.py) until it ends
    model: str | None = None  # as records carry it: PII in it masked (Guard.recordable_name)
    requested_model: str | None = None  # as the client sent it (bounded): only for looking the model up
    stream: bool = False
    finished_at: float | None = None
    outcome: Outcome = Outcome.OK
    status: int | None = None
    error_detail: str | None = None  # our own words, never content
    done: bool = False  # accounted for by telemetry (response or error seen)
    audited: bool = False  # the one audit record of this exchange has been appended
    request_json: dict[str, object] | None = None  # the parsed body, see stages.base.request_json
    request_json_parsed: bool = False
    request_body: bytes | None = None  # the decoded body request_json parsed
    request_body_error: ApiError | None = None  # why the body could not be parsed
    input_digest: str | None = None  # keyed HMAC of the request body, hex (proxy/digest.py)
    output_digest: str | None = None  # keyed HMAC of the answer as the client got it, hex
    schema: SchemaFacts | None = None  # the answer's schemas and what came of them (proxy/schemas), if any

    ledger: GuardLedger = field(default_factory=GuardLedger)
    answer: AnswerFacts = field(default_factory=AnswerFacts)
    provenance: Provenance = field(default_factory=Provenance)

    @property
    def time_to_first_chunk(self) -> float | None:
        first = self.answer.first_chunk_at
        return None if first is None else first - self.started


def get_state(flow: http.HTTPFlow) -> FlowState | None:
    state = flow.metadata.get(STATE_KEY)
    return state if isinstance(state, FlowState) else None
