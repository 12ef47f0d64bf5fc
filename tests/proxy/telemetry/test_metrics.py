from __future__ import annotations

import asyncio
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from proxy.telemetry.metrics import (
    DURATION_BUCKETS,
    OTHER,
    TPOT_BUCKETS,
    TTFT_BUCKETS,
    BoundedLabels,
    Metrics,
    ModelLabels,
)

# DESIGN section 6: every one of these is on the admin port.
DESIGN_FAMILIES = {
    "warden_requests", "warden_request_duration_seconds", "warden_time_to_first_token_seconds",
    "warden_time_per_output_token_seconds", "warden_prompt_tokens", "warden_generation_tokens",
    "warden_prompt_tokens_cached", "warden_guard_detections", "warden_guard_duration_seconds",
    "warden_schema_validations", "warden_audit_records", "warden_audit_anchor_lag_seconds",
    "warden_inflight_requests", "warden_build_info",
}


@dataclass(frozen=True)
class FakeAuditStats:
    records_total: int = 7
    checkpoints_total: int = 2
    write_failures_total: int = 0
    sign_failures_total: int = 1
    store_failures_total: int = 0
    anchor_lag_seconds: float = 1.5


def families(metrics: Metrics) -> dict[str, object]:
    text = asyncio.run(metrics.exposition()).decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_model_labels_allowlist_and_dynamic_limit() -> None:
    fixed = ModelLabels(("a", "b"))
    assert [fixed.label(m) for m in ("a", "c", None)] == ["a", OTHER, "none"]
    dynamic = ModelLabels(dynamic_limit=2)
    assert [dynamic.label(m) for m in ("x", "y", "z", "x")] == ["x", "y", OTHER, "x"]


def test_bounded_labels() -> None:
    kinds = BoundedLabels(2)
    assert [kinds(k) for k in ("email", "ipv4", "iban", "email")] == ["email", "ipv4", OTHER, "email"]


def test_child_cache_returns_one_child_per_label_tuple() -> None:
    metrics = Metrics()
    first = metrics.requests_child("chat", "m", "2xx", "ok")
    assert metrics.requests_child("chat", "m", "2xx", "ok") is first
    first.inc()
    assert metrics.requests.labels("chat", "m", "2xx", "ok")._value.get() == 1


def test_buckets_follow_the_genai_conventions() -> None:
    assert DURATION_BUCKETS[0] == 0.01 and DURATION_BUCKETS[-1] == 81.92
    assert TTFT_BUCKETS[0] == 0.001 and TTFT_BUCKETS[-1] == 10.0
    assert TPOT_BUCKETS[0] == 0.01 and TPOT_BUCKETS[-1] == 2.5


def test_all_design_families_are_exposed_with_audit_watched() -> None:
    metrics = Metrics()
    metrics.watch_audit(FakeAuditStats)
    found = families(metrics)
    assert set(found) >= DESIGN_FAMILIES, DESIGN_FAMILIES - set(found)
    lag = found["warden_audit_anchor_lag_seconds"]
    assert [s.value for s in lag.samples] == [1.5]  # type: ignore[attr-defined]
    failures = {s.labels["step"]: s.value for s in found["warden_audit_failures"].samples}  # type: ignore[attr-defined]
    assert failures == {"write": 0, "sign": 1, "store": 0}


def test_a_failing_audit_source_does_not_break_the_scrape() -> None:
    def broken() -> FakeAuditStats:
        raise RuntimeError("writer gone")

    metrics = Metrics()
    metrics.watch_audit(broken)
    assert "warden_requests" in families(metrics)


def test_scrape_hooks_run_before_the_exposition_and_are_bounded(monkeypatch: object) -> None:
    import proxy.telemetry.metrics as module

    module_any: object = module
    setattr(module_any, "SCRAPE_HOOK_SECONDS", 0.05)  # noqa: B010
    try:
        metrics = Metrics()
        calls: list[str] = []

        async def quick() -> None:
            calls.append("quick")
            metrics.inflight.set(3)

        async def stuck() -> None:
            await asyncio.sleep(10)

        async def failing() -> None:
            raise ValueError("boom")

        for hook in (quick, stuck, failing):
            metrics.add_scrape_hook(hook)
        found = families(metrics)
        assert calls == ["quick"]
        assert [s.value for s in found["warden_inflight_requests"].samples] == [3]  # type: ignore[attr-defined]
    finally:
        setattr(module_any, "SCRAPE_HOOK_SECONDS", 3.0)  # noqa: B010
