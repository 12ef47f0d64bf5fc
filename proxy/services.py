"""The things stages share, built once at start-up and injected (DESIGN section 10.7).

proxy/serve.py `build_services` is the composition root: the one place that opens the audit log, loads the
detectors and builds tracing, the LoRA registry and the upstream's probes and collectors. Tests build a
`Services` by hand with the parts they exercise; the defaults are the inert ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from audit import AuditLog
from proxy.admin import Readiness
from proxy.config import WardenConfig
from proxy.digest import Digester
from proxy.guard.engine import Guard
from proxy.lora import LoraRegistry
from proxy.schemas.sources import RouteSchemas
from proxy.telemetry.metrics import Metrics
from proxy.telemetry.tracing import Tracing
from proxy.telemetry.upstream_metrics import UpstreamHealth, UpstreamMetrics
from rules.schema import SchemaCache


@dataclass(frozen=True, slots=True)
class Services:
    config: WardenConfig
    metrics: Metrics
    guard: Guard
    clock: Callable[[], float] = field(default=time.perf_counter)
    digester: Digester = field(default_factory=Digester)
    tracing: Tracing = field(default_factory=Tracing.disabled)  # OTEL_* (proxy/telemetry/tracing.py)
    lora: LoraRegistry | None = None  # adapters and base models the upstream serves (proxy/lora.py)
    audit: AuditLog | None = None  # the tamper-evident log, when audit_dir is set
    # The upstream's health probe, read by /readyz and by warden_upstream_up (`upstream_health`); the proxy
    # server needs it (proxy/server.py WardenProxy), the stages do not.
    readiness: Readiness | None = None
    upstream_health: UpstreamHealth | None = None  # registered on `metrics`
    upstream_metrics: UpstreamMetrics | None = None  # the upstream's own metrics merged into ours, when configured
    schema_cache: SchemaCache = field(default_factory=SchemaCache)  # compiled schemas by content hash, bounded
    route_schemas: RouteSchemas = field(default_factory=RouteSchemas)  # `schema`, `schemas:` (proxy/schemas)
