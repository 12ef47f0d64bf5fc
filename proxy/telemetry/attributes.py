"""Span attribute, event and value names: one module, our own constants (DESIGN section 6).

The OpenTelemetry GenAI conventions moved out of semantic-conventions and still change (`gen_ai.system`
became `gen_ai.provider.name`); the Python semconv package marks its gen_ai constants deprecated. Pinning the
names here keeps every span Warden emits stable across SDK upgrades, and a rename is one line.
Nothing named here ever carries request or answer content: ids, counts, model names, digests and verdicts.
"""

from __future__ import annotations

from typing import Final

# -- OpenTelemetry GenAI (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/) ---------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_REQUEST_STREAM: Final = "gen_ai.request.stream"
GEN_AI_REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
GEN_AI_REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
GEN_AI_REQUEST_TOP_P: Final = "gen_ai.request.top_p"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK: Final = "gen_ai.response.time_to_first_chunk"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"

# Guardrail results, one span event per guarded direction (never the matched text).
GEN_AI_GUARDRAIL_RESULT_EVENT: Final = "gen_ai.guardrail.result"
GUARDRAIL_COMPONENT: Final = "gen_ai.guardrail.component"
GUARDRAIL_POLICY_ID: Final = "gen_ai.guardrail.policy.id"
GUARDRAIL_POLICY_VERSION: Final = "gen_ai.guardrail.policy.version"
GUARDRAIL_RESULT: Final = "gen_ai.guardrail.result"
GUARDRAIL_SOURCE: Final = "gen_ai.guardrail.source"  # input | output
GUARDRAIL_RULE_IDS: Final = "gen_ai.guardrail.rule_ids"
GUARDRAIL_FINDING_KINDS: Final = "gen_ai.guardrail.finding_kinds"
GUARDRAIL_COMPONENT_VALUE: Final = "warden"

# Operation names of the GenAI conventions.
OP_CHAT: Final = "chat"
OP_TEXT_COMPLETION: Final = "text_completion"
OP_EMBEDDINGS: Final = "embeddings"
OP_GENERATE_CONTENT: Final = "generate_content"

# -- HTTP, network, errors (stable semantic conventions) ---------------------------------------------------
HTTP_REQUEST_METHOD: Final = "http.request.method"
HTTP_RESPONSE_STATUS_CODE: Final = "http.response.status_code"
HTTP_ROUTE: Final = "http.route"
URL_PATH: Final = "url.path"
URL_SCHEME: Final = "url.scheme"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
ERROR_TYPE: Final = "error.type"

# -- Warden's own -----------------------------------------------------------------------------------------
WARDEN_REQUEST_ID: Final = "warden.request_id"
WARDEN_ROUTE: Final = "warden.route"
WARDEN_OUTCOME: Final = "warden.outcome"
WARDEN_ACTION: Final = "warden.action"
WARDEN_INPUT_HMAC: Final = "warden.input.hmac"  # keyed HMAC-SHA256, never a plain hash (brute-forceable)
WARDEN_OUTPUT_HMAC: Final = "warden.output.hmac"
WARDEN_LORA_ADAPTER: Final = "warden.lora.adapter"
WARDEN_LORA_WEIGHTS_SHA256: Final = "warden.lora.weights_sha256"
WARDEN_BASE_MODEL: Final = "warden.base_model"
WARDEN_POLICY_VERSION: Final = "warden.policy.version"
WARDEN_AUDIT_SEQ: Final = "warden.audit.seq"
WARDEN_MODEL_ADMIN_ACTION: Final = "warden.model_admin.action"
WARDEN_MODEL_ADMIN_ALLOWED: Final = "warden.model_admin.allowed"
# Output schema validation (issue 21): the verdict (valid | invalid | reasked | rejected), the schema's SHA-256
# (of its canonical form: which schema, never the answer), request | route, and the answers checked.
WARDEN_SCHEMA_RESULT: Final = "warden.schema.result"
WARDEN_SCHEMA_SHA256: Final = "warden.schema.sha256"
WARDEN_SCHEMA_SOURCE: Final = "warden.schema.source"
WARDEN_SCHEMA_ATTEMPTS: Final = "warden.schema.attempts"

# The resource's service name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one.
DEFAULT_SERVICE_NAME: Final = "warden"
INSTRUMENTATION_SCOPE: Final = "warden.proxy"
