"""What an exchange's answer must fit, decided at the request (proxy/stages/schema_request.py), and what came
of it (read by the answer's checks, telemetry and audit)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from rules.schema import CompiledSchema


class SchemaSource(StrEnum):
    """Where the schema came from: the request itself, or Warden's configuration for the route (a label)."""

    REQUEST = "request"
    ROUTE = "route"


class SchemaPolicy(StrEnum):
    REJECT = "reject"  # 502 schema_violation
    FLAG = "flag"  # passed unchanged, X-Warden-Schema: invalid
    REASK = "reask"  # back to the upstream with the violations, at most schema_reask times, then reject


class SchemaResult(StrEnum):
    """The label values of warden_schema_validations_total{result}: one per answer checked."""

    VALID = "valid"
    INVALID = "invalid"  # passed on as it is (flag), or a stream already partly released
    REASKED = "reasked"  # a re-ask was sent for it
    REJECTED = "rejected"  # refused (reject, re-asks used up, a stream cut)


@dataclass(frozen=True, slots=True)
class SchemaPlan:
    """The schemas an answer is checked against. `content`: the message text (chat `response_format`, a
    route schema, Responses `text.format`); `json_object` marks `{"type": "json_object"}` (any JSON object).
    `tools`: tool name -> its `function.parameters`, for tool-call arguments."""

    source: SchemaSource
    content: CompiledSchema | None = None
    tools: Mapping[str, CompiledSchema] = field(default_factory=dict)
    injected: bool = False  # a route schema was added to the upstream request as `response_format`

    @property
    def sha256(self) -> str:
        """One digest for the span and the audit record: the content schema's, else over the tools' ones."""
        if self.content is not None and not self.tools:
            return self.content.sha256
        parts = [self.content.sha256 if self.content else ""]
        parts += [f"{name}={schema.sha256}" for name, schema in sorted(self.tools.items())]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@dataclass(slots=True)
class SchemaFacts:
    """One per exchange that has a plan (FlowState.schema): the plan, the answers' results in order (one per
    attempt), and the violations that decided the last one (our words, no answer text)."""

    plan: SchemaPlan
    results: list[SchemaResult] = field(default_factory=list)
    violations: tuple[str, ...] = ()  # Violation.message() of the last invalid answer

    @property
    def attempts(self) -> int:
        """Answers checked: 1 + the re-asks sent."""
        return len(self.results)

    @property
    def verdict(self) -> SchemaResult | None:
        """The exchange's verdict: the last answer's result (None before any answer was checked)."""
        return self.results[-1] if self.results else None
