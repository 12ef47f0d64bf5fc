"""Prometheus metrics on the admin port (DESIGN section 6). Labels are bounded; never ids, hashes or text."""

from __future__ import annotations

import threading
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, disable_created_metrics

# OpenTelemetry GenAI semantic conventions: gen_ai.client.operation.duration and time_to_first_token buckets.
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)

OTHER = "other"
DYNAMIC_MODEL_LIMIT = 32  # without an allowlist, the first N model names are kept, the rest become "other"


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
    def __init__(self, registry: CollectorRegistry | None = None, model_allowlist: tuple[str, ...] = ()) -> None:
        disable_created_metrics()  # `_created` series double the exposition for no use here
        self.registry = registry or CollectorRegistry(auto_describe=True)
        self.models = ModelLabels(model_allowlist)
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
        self.requests_child = ChildCache(self.requests)
        self.duration_child = ChildCache(self.duration)
        self.ttft_child = ChildCache(self.ttft)
        self.prompt_tokens_child = ChildCache(self.prompt_tokens)
        self.generation_tokens_child = ChildCache(self.generation_tokens)
        self.cached_prompt_tokens_child = ChildCache(self.cached_prompt_tokens)
        self.inflight = Gauge("warden_inflight_requests", "Exchanges in progress.", registry=r)
        self.build_info = Info("warden_build", "Warden build information.", registry=r)
        self.build_info.info({"version": build_version()})
