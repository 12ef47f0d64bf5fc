"""Prometheus metrics on the admin port (DESIGN section 6). Labels are bounded; never ids, hashes or text."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Protocol

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger("warden.metrics")

# Buckets of the OpenTelemetry GenAI metric conventions (gen-ai-metrics.md): client operation duration,
# server time to first token, server time per output token; guard scans are sub-millisecond to a second.
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
GUARD_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)

OTHER = "other"
DYNAMIC_MODEL_LIMIT = 32  # without an allowlist, the first N model names are kept, the rest become "other"
KIND_LIMIT = 64  # detector kinds are a bounded set, but rule files may add some: cap them all the same
SCRAPE_HOOK_SECONDS = 3.0  # a slow upstream never holds a scrape longer than this


def build_version() -> str:
    try:
        return version("llm-warden")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0+unknown"


class ModelLabels:
    """Bounds the `model_name` label: an explicit allowlist, or the first N names seen."""

    def __init__(self, allowlist: tuple[str, ...] = (), dynamic_limit: int = DYNAMIC_MODEL_LIMIT) -> None:
        self._allow = frozenset(allowlist)
        self._fixed = bool(allowlist)
        self._seen: set[str] = set()
        self._limit = dynamic_limit
        self._lock = threading.Lock()

    def label(self, model: str | None) -> str:
        if not model:
            return "none"
        if self._fixed:
            return model if model in self._allow else OTHER
        if model in self._seen:
            return model
        with self._lock:
            if len(self._seen) < self._limit:
                self._seen.add(model)
                return model
        return OTHER


class BoundedLabels:
    """The first `limit` distinct values of a label are kept, later ones become `other`."""

    def __init__(self, limit: int) -> None:
        self._seen: set[str] = set()
        self._limit = limit
        self._lock = threading.Lock()

    def __call__(self, value: str) -> str:
        if value in self._seen:
            return value
        with self._lock:
            if len(self._seen) < self._limit:
                self._seen.add(value)
                return value
        return OTHER


class AuditStatsLike(Protocol):
    """What audit.log.AuditStats offers the metrics (kept structural: metrics never import the writer)."""

    @property
    def records_total(self) -> int: ...
    @property
    def checkpoints_total(self) -> int: ...
    @property
    def write_failures_total(self) -> int: ...
    @property
    def sign_failures_total(self) -> int: ...
    @property
    def store_failures_total(self) -> int: ...
    @property
    def anchor_lag_seconds(self) -> float: ...


class AuditCollector(Collector):
    """Audit counters read from the log's own statistics at scrape time: nothing on the request path."""

    def __init__(self, stats: Callable[[], AuditStatsLike]) -> None:
        self._stats = stats

    def describe(self) -> Iterable[Any]:
        return []  # collected lazily; describing would call `stats()` at registration

    def collect(self) -> Iterator[Any]:
        try:
            s = self._stats()
        except Exception:  # a failing writer must not break the scrape; readiness reports it
            log.exception("audit statistics unavailable")
            return
        yield CounterMetricFamily("warden_audit_records", "Audit records appended by this process.",
                                  value=s.records_total)
        yield CounterMetricFamily("warden_audit_checkpoints", "Signed checkpoints stored by this process.",
                                  value=s.checkpoints_total)
        failures = CounterMetricFamily("warden_audit_failures", "Audit write, sign and store failures.",
                                       labels=["step"])
        failures.add_metric(["write"], s.write_failures_total)
        failures.add_metric(["sign"], s.sign_failures_total)
        failures.add_metric(["store"], s.store_failures_total)
        yield failures
        yield GaugeMetricFamily("warden_audit_anchor_lag_seconds",
                                "Age of the oldest audit record not yet covered by a stored checkpoint.",
                                value=s.anchor_lag_seconds)


class ChildCache:
    """`metric.labels(...)` costs microseconds per call (it validates and stringifies every value); the
    children are cached per label tuple, which is safe because label values are bounded."""

    __slots__ = ("_children", "_metric")

    def __init__(self, metric: Any) -> None:
        self._metric = metric
        self._children: dict[tuple[str, ...], Any] = {}

    def __call__(self, *values: str) -> Any:
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = self._metric.labels(*values)
        return child


class Metrics:
    """Every Warden series (DESIGN section 6). Hot-path code uses the `*_child` caches, never `.labels()`."""

    def __init__(self, registry: CollectorRegistry | None = None, model_allowlist: tuple[str, ...] = ()) -> None:
        disable_created_metrics()  # `_created` series double the exposition for no use here
        self.registry = registry or CollectorRegistry(auto_describe=True)
        self.models = ModelLabels(model_allowlist)
        self.kinds = BoundedLabels(KIND_LIMIT)
        self.scrape_hooks: list[Callable[[], Awaitable[None]]] = []
        r = self.registry
        self.requests = Counter(
            "warden_requests", "Exchanges handled, by route, model, status class and outcome.",
            ["route", "model_name", "code_class", "outcome"], registry=r,
        )
        self.duration = Histogram(
            "warden_request_duration_seconds", "Time from request headers to the end of the response.",
            ["route", "model_name"], buckets=DURATION_BUCKETS, registry=r,
        )
        self.ttft = Histogram(
            "warden_time_to_first_token_seconds", "Time from request headers to the first streamed event.",
            ["route", "model_name"], buckets=TTFT_BUCKETS, registry=r,
        )
        self.tpot = Histogram(
            "warden_time_per_output_token_seconds",
            "Streamed answers: time after the first event per further output token.",
            ["route", "model_name"], buckets=TPOT_BUCKETS, registry=r,
        )
        self.prompt_tokens = Counter(
            "warden_prompt_tokens", "Prompt tokens reported by the upstream.", ["model_name"], registry=r
        )
        self.generation_tokens = Counter(
            "warden_generation_tokens", "Generated tokens reported by the upstream.", ["model_name"], registry=r
        )
        self.cached_prompt_tokens = Counter(
            "warden_prompt_tokens_cached", "Prompt tokens served from the upstream's prefix cache.",
            ["model_name"], registry=r,
        )
        self.guard_detections = Counter(
            "warden_guard_detections", "Guard findings, by guard stage, detector kind, direction and action.",
            ["stage", "kind", "direction", "action"], registry=r,
        )
        self.guard_duration = Histogram(
            "warden_guard_duration_seconds", "Time spent scanning, per guard stage and exchange.",
            ["stage"], buckets=GUARD_BUCKETS, registry=r,
        )
        self.schema_validations = Counter(
            "warden_schema_validations", "Answers checked against a JSON Schema, by result (valid, invalid, reasked, "
            "rejected; one per answer, so a re-asked exchange counts each attempt) and where the schema came from "
            "(request, route).", ["result", "source"], registry=r,
        )
        self.model_admin = Counter(
            "warden_model_admin_requests", "Model administration calls (LoRA load/unload), by action and decision.",
            ["action", "decision"], registry=r,
        )
        self.span_export_failures = Counter(
            "warden_span_export_failures", "Span batches the OTLP exporter could not deliver.", registry=r
        )
        self.connections_closed = Counter(
            "warden_connections_closed", "Client connections closed by a bound (proxy/mitm/wire_bounds.py), by reason: "
            "header_too_large, header_timeout, idle_timeout, linger_done.", ["reason"], registry=r,
        )
        self.shed = Counter(
            "warden_shed_requests", "Exchanges refused with 429 because the proxy was at capacity, by reason: "
            "queue_full or queue_timeout.", ["reason"], registry=r,
        )
        self.guard_over_budget = Counter(
            "warden_guard_over_budget", "Inspections that did not finish within guard_budget, by direction and "
            "what the configured fail mode did: refused (closed) or forwarded uninspected (open).",
            ["direction", "fail_mode"], registry=r,
        )
        self.queued = Gauge("warden_queued_requests", "Exchanges waiting for a slot (max_inflight).", registry=r)
        self.requests_child = ChildCache(self.requests)
        self.duration_child = ChildCache(self.duration)
        self.ttft_child = ChildCache(self.ttft)
        self.tpot_child = ChildCache(self.tpot)
        self.prompt_tokens_child = ChildCache(self.prompt_tokens)
        self.generation_tokens_child = ChildCache(self.generation_tokens)
        self.cached_prompt_tokens_child = ChildCache(self.cached_prompt_tokens)
        self.guard_detections_child = ChildCache(self.guard_detections)
        self.guard_duration_child = ChildCache(self.guard_duration)
        self.schema_validations_child = ChildCache(self.schema_validations)
        self.model_admin_child = ChildCache(self.model_admin)
        self.inflight = Gauge("warden_inflight_requests", "Exchanges in progress.", registry=r)
        self.build_info = Info("warden_build", "Warden build information.", registry=r)
        self.build_info.info({"version": build_version()})

    def watch_audit(self, stats: Callable[[], AuditStatsLike]) -> None:
        """Expose the audit log's counters and anchor lag (pass `AuditLog.stats`)."""
        self.registry.register(AuditCollector(stats))

    def add_scrape_hook(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run `hook` (bounded) before each scrape: fetching the upstream's metrics, probing its health."""
        self.scrape_hooks.append(hook)

    async def exposition(self) -> bytes:
        """The Prometheus text exposition, after the scrape hooks have refreshed what they collect."""
        if self.scrape_hooks:
            results = await asyncio.gather(
                *(asyncio.wait_for(hook(), SCRAPE_HOOK_SECONDS) for hook in self.scrape_hooks),
                return_exceptions=True,
            )
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, TimeoutError):
                    log.warning("scrape hook failed", extra={"error": repr(result)})
        return generate_latest(self.registry)
