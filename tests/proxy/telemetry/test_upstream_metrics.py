from __future__ import annotations

import asyncio

from prometheus_client.parser import text_string_to_metric_families

from proxy.httpget import ProbeError
from proxy.telemetry.metrics import Metrics
from proxy.telemetry.upstream_metrics import UpstreamHealth, UpstreamMetrics, filter_families, metrics_url

VLLM = """# HELP vllm:prefix_cache_hits_total Prefix cache hits.
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{model_name="m"} 16.0
# HELP vllm:prefix_cache_queries_total Prefix cache queries.
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{model_name="m"} 64.0
# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 12.0
# HELP warden_requests_total fake
# TYPE warden_requests_total counter
warden_requests_total 1e9
"""


def test_filter_keeps_prefixed_families_and_never_ours() -> None:
    names = {f.name for f in filter_families(VLLM, ("vllm:", "warden_"))}
    assert names == {"vllm:prefix_cache_hits", "vllm:prefix_cache_queries"}
    assert filter_families(VLLM, ()) == []


def test_metrics_url() -> None:
    assert metrics_url("http://up:8000", "/metrics") == "http://up:8000/metrics"
    assert metrics_url("http://up:8000", "http://up:8002/metrics") == "http://up:8002/metrics"


def scrape(metrics: Metrics) -> dict[str, list[tuple[dict[str, str], float]]]:
    text = asyncio.run(metrics.exposition()).decode()
    return {s.name: [] for f in text_string_to_metric_families(text) for s in f.samples} | {
        f.name: [(s.labels, s.value) for s in f.samples] for f in text_string_to_metric_families(text)
    }


def test_merged_upstream_metrics_and_health_in_our_exposition() -> None:
    answers = {"/metrics": (200, VLLM.encode()), "/health": (200, b"")}

    async def fetch(url: str) -> tuple[int, bytes]:
        path = url.split("8000", 1)[1]
        if path not in answers:
            raise ProbeError("ConnectionRefusedError")
        return answers[path]

    async def health() -> tuple[bool, str]:  # stands in for the admin port's Readiness.upstream
        try:
            return (await fetch("http://up:8000/health"))[0] == 200, ""
        except ProbeError as exc:
            return False, str(exc)

    metrics = Metrics()
    for collector in (UpstreamMetrics("http://up:8000/metrics", ("vllm:",), fetch=fetch), UpstreamHealth(health)):
        metrics.registry.register(collector)
        metrics.add_scrape_hook(collector.refresh)
    found = scrape(metrics)
    assert found["vllm:prefix_cache_hits"] == [({"model_name": "m"}, 16.0)]
    assert found["warden_upstream_up"] == [({}, 1.0)]
    assert found["warden_upstream_metrics_up"] == [({}, 1.0)]
    assert "python_gc_objects_collected" not in found
    assert [v for _, v in found["warden_requests"]] == []  # ours, untouched by the upstream's fake
    del answers["/metrics"], answers["/health"]
    found = scrape(metrics)
    assert "vllm:prefix_cache_hits" not in found
    assert found["warden_upstream_up"] == [({}, 0.0)]
    assert found["warden_upstream_metrics_up"] == [({}, 0.0)]
