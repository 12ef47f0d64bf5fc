"""The things stages share, built once at start-up and injected (DESIGN section 10.7)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from audit import AuditLog
from proxy.config import WardenConfig
from proxy.digest import Digester
from proxy.guard.engine import Guard
from proxy.lora import LoraRegistry
from proxy.telemetry.metrics import Metrics
from proxy.telemetry.tracing import Tracing


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
