"""One `/metrics` for the pod from N workers' expositions (`warden serve --workers N`, proxy/supervisor.py).

Why scraping and merging, not prometheus-client's multiprocess mode: multiprocess mode supports only the
library's own Counter/Gauge/Histogram values kept in mmap files; Warden's audit series come from a custom
collector reading the log's statistics at scrape time (proxy/telemetry/metrics.py AuditCollector), and the
upstream's own metrics are merged in by another (proxy/telemetry/upstream_metrics.py): neither could be
exposed. So each worker keeps its ordinary registry behind a private admin socket, and the supervisor parses
each exposition with prometheus-client's own parser and merges by the family's type:

- counters and histograms (buckets, `_count`, `_sum`): summed over workers; series names and labels are those
  of one process, so dashboards and alerts do not change. A worker that dies takes its counts with it, which
  would make the pod's sum go backwards (Prometheus reads that as a counter reset and over-counts): the last
  values seen from a dead worker (at the last scrape or the periodic snapshot) are kept and added for the
  rest of the pod's life, so the sums never decrease; what the dead worker counted after that snapshot is
  lost (at most SNAPSHOT_SECONDS of one worker).
- gauges: summed by default (in-flight and queued exchanges are the pod's); a few by their meaning
  (GAUGE_RULES): the audit anchor lag is the largest (the oldest unanchored record in the pod); build
  information is the same in every worker (the first is taken). A dead worker's gauges are dropped.
- anything else: the first worker's.

No `worker` label is added to the merged series (it would multiply every series by N); the supervisor's
own series say what each worker does (`warden_worker_requests_total{worker}`, `warden_worker_up{worker}`,
`warden_worker_restarts_total{worker}`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

SUM, MAX, MIN, FIRST = "sum", "max", "min", "first"
SUMMED_TYPES = frozenset({"counter", "histogram"})
GAUGE_RULES: dict[str, str] = {
    "warden_audit_anchor_lag_seconds": MAX,
    "warden_build_info": FIRST,
}
REQUESTS_SAMPLE = "warden_requests_total"

SampleKey = tuple[str, tuple[tuple[str, str], ...]]


def parse(text: str) -> list[Metric]:
    """Families of a Prometheus text exposition (raises ValueError on a malformed one)."""
    return list(text_string_to_metric_families(text))


def rule_for(family: Metric) -> str:
    if family.type in SUMMED_TYPES:
        return SUM
    if family.type == "gauge":
        return GAUGE_RULES.get(family.name, SUM)
    return FIRST


def _key(sample: Any) -> SampleKey:
    return sample.name, tuple(sorted(sample.labels.items()))


@dataclass(slots=True)
class _Family:
    name: str
    documentation: str
    type: str
    samples: dict[SampleKey, float] = field(default_factory=dict)

    def fold(self, key: SampleKey, value: float, rule: str) -> None:
        old = self.samples.get(key)
        if old is None:
            self.samples[key] = value
        elif rule == SUM:
            self.samples[key] = old + value
        elif rule == MAX:
            self.samples[key] = max(old, value)
        elif rule == MIN:
            self.samples[key] = min(old, value)

    def metric(self) -> Metric:
        out = Metric(self.name, self.documentation, self.type)
        for (name, labels), value in self.samples.items():
            out.add_sample(name, dict(labels), value)
        return out


def requests_of(families: Iterable[Metric]) -> float:
    """Exchanges one worker counted (the sum of its `warden_requests_total`)."""
    return sum(s.value for f in families if f.name == "warden_requests" for s in f.samples
               if s.name == REQUESTS_SAMPLE)


class Merger:
    """Merges workers' families, keeping the counters of workers that died (see the module docstring)."""

    def __init__(self) -> None:
        self._retired: dict[str, _Family] = {}

    def retire(self, families: Iterable[Metric]) -> None:
        """A worker died: its last counters and histograms stay in the pod's sums."""
        for family in families:
            if family.type not in SUMMED_TYPES:
                continue
            kept = self._retired.setdefault(family.name, _Family(family.name, family.documentation, family.type))
            for sample in family.samples:
                kept.fold(_key(sample), sample.value, SUM)

    def merge(self, workers: Iterable[Iterable[Metric]]) -> list[Metric]:
        merged: dict[str, _Family] = {}
        for families in workers:
            for family in families:
                into = merged.get(family.name)
                if into is None:
                    into = merged[family.name] = _Family(family.name, family.documentation, family.type)
                elif into.type != family.type:
                    continue  # two builds disagreeing on a type: keep the first worker's reading
                rule = rule_for(family)
                for sample in family.samples:
                    into.fold(_key(sample), sample.value, rule)
        for name, kept in self._retired.items():
            into = merged.get(name)
            if into is None:
                into = merged[name] = _Family(kept.name, kept.documentation, kept.type)
            if into.type == kept.type:
                for key, value in kept.samples.items():
                    into.fold(key, value, SUM)
        return [family.metric() for family in merged.values()]


class _Fixed(Collector):
    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


def exposition(families: list[Metric]) -> bytes:
    """Prometheus text format of `families` (prometheus-client's own writer)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(families))
    return generate_latest(registry)
