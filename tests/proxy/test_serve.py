"""proxy/serve.py: `build_services`, the composition root of `warden serve`."""

from __future__ import annotations

import asyncio
import typing
from pathlib import Path

import pytest

from proxy.admin import Readiness
from proxy.config import WardenConfig, resolve
from proxy.lora import LoraError, LoraRegistry
from proxy.serve import build_services
from proxy.services import Services
from proxy.telemetry.tracing import Tracing
from proxy.telemetry.upstream_metrics import UpstreamHealth, UpstreamMetrics


def config(**flags: object) -> WardenConfig:
    return resolve({"upstream": "http://127.0.0.1:1", "semantic": False, **flags}, env={})


@pytest.fixture(autouse=True)
def no_otel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)


def test_services_are_typed_without_any() -> None:
    hints = typing.get_type_hints(Services)
    assert all("Any" not in str(hint) for hint in hints.values()), hints


def test_build_services_builds_each_part_with_its_type(tmp_path: Path) -> None:
    services = build_services(config(audit_dir=str(tmp_path / "audit"), lora_adapters=["mine=/w/mine"],
                                     upstream_metrics="/metrics"))
    try:
        assert isinstance(services.tracing, Tracing) and not services.tracing.enabled
        assert isinstance(services.lora, LoraRegistry) and services.lora.models_url == "http://127.0.0.1:1/v1/models"
        assert services.audit is not None and (tmp_path / "audit").is_dir()
        assert isinstance(services.readiness, Readiness)
        assert isinstance(services.upstream_health, UpstreamHealth)
        assert isinstance(services.upstream_metrics, UpstreamMetrics)
        assert services.upstream_metrics.url == "http://127.0.0.1:1/metrics"
        # Both collectors are registered on Warden's registry, and each scrape refreshes them (upstream down).
        text = asyncio.run(services.metrics.exposition()).decode()
        assert "warden_upstream_up 0.0" in text and "warden_upstream_metrics_up 0.0" in text
    finally:
        if services.audit is not None:
            services.audit.close(10.0)


def test_without_upstream_metrics_nothing_is_merged(tmp_path: Path) -> None:
    services = build_services(config())
    assert services.upstream_metrics is None and services.audit is None
    assert isinstance(services.upstream_health, UpstreamHealth)


def test_a_bad_adapter_entry_is_refused_before_the_audit_log_opens(tmp_path: Path) -> None:
    """Opening the log writes a boot record and starts its threads: refusals come first."""
    with pytest.raises(LoraError):
        build_services(config(audit_dir=str(tmp_path / "audit"), lora_adapters=["no-path"]))
    assert not (tmp_path / "audit").exists()
