"""proxy/telemetry/aggregate.py: workers' expositions merged by type, a dead worker's counters kept."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from proxy.telemetry.aggregate import Merger, exposition, parse, requests_of
from proxy.telemetry.metrics import Metrics


@dataclass(frozen=True)
class Stats:
    records_total: int = 0
    checkpoints_total: int = 0
    write_failures_total: int = 0
    sign_failures_total: int = 0
    store_failures_total: int = 0
    anchor_lag_seconds: float = 0.0


def worker(requests: int, duration: float, inflight: int, lag: float) -> list:  # type: ignore[type-arg]
    m = Metrics()
    for _ in range(requests):
        m.requests_child("chat", "m", "2xx", "ok").inc()
        m.duration_child("chat", "m").observe(duration)
    m.inflight.set(inflight)
    m.watch_audit(lambda: Stats(records_total=requests, anchor_lag_seconds=lag))
    return parse(asyncio.run(m.exposition()).decode())


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text.decode()) for s in f.samples}


REQ = ("warden_requests_total", (("code_class", "2xx"), ("model_name", "m"), ("outcome", "ok"), ("route", "chat")))


def test_counters_histograms_and_gauges_merge_by_their_meaning() -> None:
    a, b = worker(3, 0.015, 2, 0.5), worker(5, 3.0, 1, 4.0)
    merged = samples(exposition(Merger().merge([a, b])))
    assert merged[REQ] == 8
    duration = (("model_name", "m"), ("route", "chat"))
    assert merged[("warden_request_duration_seconds_count", duration)] == 8
    assert merged[("warden_request_duration_seconds_bucket", (("le", "0.02"), *duration))] == 3
    assert merged[("warden_request_duration_seconds_bucket", (("le", "+Inf"), *duration))] == 8
    assert abs(merged[("warden_request_duration_seconds_sum", duration)] - (3 * 0.015 + 5 * 3.0)) < 1e-9
    assert merged[("warden_inflight_requests", ())] == 3  # the pod's in-flight exchanges
    assert merged[("warden_audit_anchor_lag_seconds", ())] == 4.0  # the oldest unanchored record in the pod
    assert merged[("warden_audit_records_total", ())] == 8
    assert sum(1 for name, _ in merged if name == "warden_build_info") == 1


def test_a_dead_workers_counters_stay_in_the_sums_and_its_gauges_go() -> None:
    merger = Merger()
    a, b = worker(3, 0.1, 2, 0.0), worker(5, 0.1, 7, 0.0)
    assert samples(exposition(merger.merge([a, b])))[REQ] == 8
    merger.retire(b)  # worker b died; its replacement starts from zero
    fresh = worker(1, 0.1, 0, 0.0)
    merged = samples(exposition(merger.merge([a, fresh])))
    assert merged[REQ] == 3 + 5 + 1  # never backwards: no counter reset seen by Prometheus
    assert merged[("warden_inflight_requests", ())] == 2  # the dead worker's in-flight gauge is gone
    assert requests_of(b) == 5


def test_no_worker_yet_gives_an_empty_but_valid_exposition() -> None:
    assert list(text_string_to_metric_families(exposition(Merger().merge([])).decode())) == []
