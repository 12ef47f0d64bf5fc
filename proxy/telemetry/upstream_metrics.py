"""What Warden learns from the model server at scrape time: its own Prometheus metrics, merged into ours
(vLLM's `vllm:prefix_cache_queries_total` and `..._hits_total` give the engine's KV-cache hit rate), and
whether it answers its health check (`warden_upstream_up`, for the upstream-down alert).

Both refresh in a scrape hook (proxy/telemetry/metrics.py `Metrics.exposition`): one scrape of Warden is one fetch of
the upstream, and nothing runs between scrapes. Parsing happens in a worker thread (vLLM's exposition is
tens of kilobytes of histograms). Only families whose names start with a configured prefix are merged, and
never `warden_` ones, so the upstream can neither shadow nor inflate our series.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from proxy.config import WardenConfig
from proxy.httpget import ProbeError, http_get
from proxy.telemetry.metrics import Metrics

log = logging.getLogger("warden.upstream_metrics")

Fetch = Callable[[str], Awaitable[tuple[int, bytes]]]
RESERVED_PREFIX = "warden_"


def filter_families(text: str, prefixes: tuple[str, ...]) -> list[Any]:
    """Parse a Prometheus text exposition and keep the families whose name starts with one of `prefixes`."""
    keep = tuple(p for p in prefixes if p and not p.startswith(RESERVED_PREFIX))
    if not keep:
        return []
    return [family for family in text_string_to_metric_families(text) if family.name.startswith(keep)]


def metrics_url(upstream: str, setting: str) -> str:
    """`/metrics` (a path on the upstream) or a full URL (Triton serves metrics on its own port)."""
    return setting if setting.startswith(("http://", "https://")) else upstream.rstrip("/") + "/" + setting.lstrip("/")


class UpstreamMetrics(Collector):
    def __init__(self, url: str, prefixes: tuple[str, ...], fetch: Fetch | None = None,
                 verify_tls: bool | str = True) -> None:
        self.url = url
        self.prefixes = prefixes
        self._fetch = fetch or (lambda u: http_get(u, 2.0, verify_tls=verify_tls))
        self._families: list[Any] = []
        self._up = 0.0

    def describe(self) -> Iterable[Any]:
        return []  # the names are only known after a fetch

    async def refresh(self) -> None:
        try:
            status, body = await self._fetch(self.url)
            if status != 200:
                raise ProbeError(f"status {status}")
            self._families = await asyncio.to_thread(filter_families, body.decode("utf-8", "replace"), self.prefixes)
            self._up = 1.0
        except (ProbeError, ValueError) as exc:
            if self._up:
                log.warning("cannot read the upstream's metrics", extra={"url": self.url, "error": str(exc)})
            self._families, self._up = [], 0.0

    def collect(self) -> Iterator[Any]:
        yield GaugeMetricFamily("warden_upstream_metrics_up",
                                "1 when the last fetch of the upstream's own metrics succeeded.", value=self._up)
        yield from self._families


class UpstreamHealth(Collector):
    """`warden_upstream_up`: the upstream answered its health check at the last scrape. `check` is the admin
    port's readiness probe of the upstream (proxy/admin.py `Readiness.upstream`), so the gauge and `/readyz`
    read one result, including its fallback when the health path answers 404."""

    def __init__(self, check: Callable[[], Awaitable[tuple[bool, str]]]) -> None:
        self._check = check
        self._up = 0.0

    def describe(self) -> Iterable[Any]:
        return []

    async def refresh(self) -> None:
        # Down until shown up: a check cut short by the scrape hook's bound must not leave a stale 1.
        self._up = 0.0
        ok, _ = await self._check()
        self._up = 1.0 if ok else 0.0

    def collect(self) -> Iterator[Any]:
        yield GaugeMetricFamily("warden_upstream_up", "1 when the upstream answered its health check at the "
                                "last scrape.", value=self._up)


def merge_upstream_metrics(config: WardenConfig, metrics: Metrics) -> UpstreamMetrics | None:
    """The upstream's own metrics, registered on `metrics` and refreshed at each scrape; None when
    `upstream_metrics` is not configured. (Built by proxy/serve.py `build_services`.)"""
    if not config.upstream_metrics:
        return None
    merged = UpstreamMetrics(metrics_url(config.upstream, config.upstream_metrics), config.upstream_metrics_prefixes,
                             verify_tls=config.upstream_verify)
    metrics.registry.register(merged)
    metrics.add_scrape_hook(merged.refresh)
    return merged


def watch_upstream_health(check: Callable[[], Awaitable[tuple[bool, str]]], metrics: Metrics) -> UpstreamHealth:
    """`warden_upstream_up`, registered on `metrics`. `check` is the readiness probe (proxy/admin.py
    `Readiness.upstream`), so the alert and `/readyz` never disagree. (Built by `build_services`.)"""
    health = UpstreamHealth(check)
    metrics.registry.register(health)
    metrics.add_scrape_hook(health.refresh)
    return health
