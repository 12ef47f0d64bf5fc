"""`warden serve`: the reverse proxy in front of a model server."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from audit.errors import AuditError
from models.errors import ModelsError
from proxy.admin import Readiness, with_admin_token
from proxy.audit_setup import open_audit
from proxy.config import ConfigError, WardenConfig, resolve
from proxy.cpus import default_workers
from proxy.digest import Digester
from proxy.exceptions import ProxyError
from proxy.guard.engine import Guard, warm
from proxy.guard.semantic import fusion_filters, load_detectors
from proxy.lora import LoraRegistry
from proxy.schemas.sources import RouteSchemas
from proxy.server import StartupError, WardenProxy
from proxy.services import Services
from proxy.telemetry.logs import setup_logging
from proxy.telemetry.metrics import Metrics
from proxy.telemetry.tracing import Tracing
from proxy.telemetry.upstream_metrics import merge_upstream_metrics, watch_upstream_health
from rules.errors import RulesError
from rules.schema import SchemaCache

EXIT_CONFIG = 78  # EX_CONFIG
log = logging.getLogger("warden.serve")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="warden serve",
        description="Run Warden as a reverse proxy in front of a model server. "
        "Flags override WARDEN_* environment variables, which override the config file.",
    )
    p.add_argument("--upstream", help="model server base URL, e.g. http://127.0.0.1:8000 (WARDEN_UPSTREAM)")
    p.add_argument("--listen", help="HOST:PORT for clients (default 0.0.0.0:8080)")
    p.add_argument("--admin", help="HOST:PORT for /healthz, /readyz, /metrics (default 127.0.0.1:9464)")
    p.add_argument("--workers", help="processes serving the listening port: a count, or auto (default): the CPUs "
                   "of the container's cgroup quota, at most 8, and 1 without a quota (WARDEN_WORKERS)")
    p.add_argument("--config", type=Path, help="YAML config file (WARDEN_CONFIG)")
    p.add_argument("--backend", help="vllm, triton, llama_cpp, sglang, tgi or openai (readiness path default)")
    p.add_argument("--health-path", dest="health_path", help="upstream readiness path, overrides the backend's")
    p.add_argument("--upstream-timeout", dest="upstream_timeout", help="time to response headers (e.g. 120s)")
    p.add_argument("--upstream-connect-timeout", dest="upstream_connect_timeout",
                   help="time to connect to the model server (default 10s)")
    p.add_argument("--max-body", dest="max_body_bytes", help="request body limit (default 8MiB)")
    p.add_argument("--max-response-body", dest="max_response_bytes",
                   help="whole-answer body limit (default 64MiB; streams are never limited as a whole)")
    p.add_argument("--max-header", dest="max_header_bytes", help="request line and headers limit (default 64KiB)")
    p.add_argument("--header-timeout", dest="header_timeout", help="time to send a request head (default 30s)")
    p.add_argument("--idle-timeout", dest="idle_timeout", help="idle keep-alive connection timeout (default 75s)")
    p.add_argument("--max-inflight", dest="max_inflight", help="exchanges forwarded at once (default 256)")
    p.add_argument("--max-queue", dest="max_queue", help="exchanges waiting for a slot before 429 (default 64)")
    p.add_argument("--queue-timeout", dest="queue_timeout", help="longest wait for a slot (default 10s)")
    p.add_argument("--guard-budget", dest="guard_budget",
                   help="detection time per direction of an exchange (default 5s)")
    p.add_argument("--guard-fail-mode", dest="guard_fail_mode", choices=("closed", "open"),
                   help="over the guard budget: refuse (closed, default) or forward, recorded failed_open")
    p.add_argument("--admin-token", dest="admin_token",
                   help="bearer token for /metrics (required when --admin is not loopback)")
    p.add_argument("--admin-token-file", dest="admin_token_file", help="read the admin token from this file")
    p.add_argument("--drain-grace", dest="drain_grace", help="SIGTERM grace period (default 30s)")
    p.add_argument("--tls-cert", dest="tls_cert", help="serve TLS (and HTTP/2) with this certificate (PEM)")
    p.add_argument("--tls-key", dest="tls_key", help="private key for --tls-cert (PEM)")
    p.add_argument("--upstream-ca", dest="upstream_ca",
                   help="PEM bundle of the CAs that sign an https upstream's certificate (default: certifi's)")
    p.add_argument("--log-level", dest="log_level", help="debug, info, warning, error (default info)")
    p.add_argument("--rules", action="append", metavar="FILE",
                   help="rule file on top of the builtin packs (repeatable; same formats as `warden scan`)")
    p.add_argument("--no-guard", dest="guard", action="store_const", const=False,
                   help="pass-through: inspect nothing (observability and audit only; verdicts say skipped)")
    p.add_argument("--no-semantic", dest="semantic", action="store_const", const=False,
                   help="lexical detectors only (the semantic model judges prompts by default)")
    p.add_argument("--no-attack-heads", dest="attack_heads", action="store_const", const=False,
                   help="leave out the semantic heads of prompt_injection and self_harm (their word lists stay; "
                        "WARDEN_ATTACK_HEADS=false)")
    p.add_argument("--no-fast-lane", dest="fast_lane", action="store_const", const=False,
                   help="relay every chunk of a streamed answer through mitmproxy's layers (the fast lane reads "
                        "them off the upstream socket while mitmproxy holds none; WARDEN_FAST_LANE=false)")
    p.add_argument("--heads", metavar="FILE",
                   help="your own categories' heads, beside the builtin ones (`warden models train --categories "
                        "DIR --out FILE`; WARDEN_HEADS)")
    p.add_argument("--request-pii", dest="request_pii", choices=("mask", "pseudonymize", "block"),
                   help="what PII in prompts becomes (default mask; answers are always masked)")
    p.add_argument("--block-status", dest="block_status", help="HTTP status of a policy block (default 400)")
    p.add_argument("--audit-dir", dest="audit_dir", help="write the tamper-evident audit log to this directory")
    p.add_argument("--audit-key-dir", dest="audit_key_dir", help="local audit keys (default <audit-dir>/../keys)")
    p.add_argument("--audit-s3", dest="audit_s3", metavar="s3://BUCKET/PREFIX", help="S3 Object Lock mirror")
    p.add_argument("--audit-kms-data-key", dest="audit_kms_data_key", help="KMS key id for the chain key")
    p.add_argument("--audit-kms-sign-key", dest="audit_kms_sign_key", help="KMS ECC P-256 key id for checkpoints")
    p.add_argument("--aws-endpoint-url", dest="aws_endpoint_url", help="KMS/S3 endpoint (e.g. a local moto)")
    p.add_argument("--cluster", help="cluster name in audit origins (default local)")
    p.add_argument("--scan-unknown-routes", dest="scan_unknown_routes", action="store_const", const=True,
                   help="also scan the raw body of routes Warden does not know")
    p.add_argument("--lora-dir", dest="lora_dir", help="directory of LoRA adapter weights (checksums)")
    p.add_argument("--lora-adapter", dest="lora_adapters", action="append", metavar="NAME=PATH",
                   help="an adapter the upstream serves and its weights path (repeatable)")
    p.add_argument("--base-model", dest="base_model", help="the served base model, if /v1/models does not say")
    p.add_argument("--allow-model-admin", dest="allow_model_admin", action="store_const", const=True,
                   help="forward the upstream's adapter/model load and unload routes (denied by default)")
    p.add_argument("--upstream-metrics", dest="upstream_metrics", metavar="PATH_OR_URL",
                   help="merge the upstream's Prometheus metrics (e.g. /metrics) into ours")
    p.add_argument("--upstream-metrics-prefix", dest="upstream_metrics_prefixes", action="append",
                   metavar="PREFIX", help="metric name prefixes to merge (repeatable; default vllm:, sglang:, ...)")
    p.add_argument("--schema", dest="schema", metavar="FILE",
                   help="JSON Schema for chat answers of requests without a response_format (WARDEN_SCHEMA)")
    p.add_argument("--schema-policy", dest="schema_policy", choices=("reject", "flag", "reask"),
                   help="an answer that does not fit its schema: 502, passed with a flag, or re-asked (default)")
    p.add_argument("--schema-reask", dest="schema_reask", metavar="N",
                   help="re-asks before a reject under the reask policy (default 1)")
    p.add_argument("--schema-inject", dest="schema_inject", choices=("auto", "off"),
                   help="add a route schema to the upstream request as response_format (default auto)")
    return p


def config_from_args(args: argparse.Namespace) -> WardenConfig:
    flags = {k: v for k, v in vars(args).items() if k != "config"}
    return resolve(flags, config_file=args.config)


def build_services(config: WardenConfig, worker: int | None = None) -> Services:
    """The composition root: every service `warden serve` runs is built here and nowhere else, before any port
    is opened, so that everything start-up can refuse (bad rules, OTEL_* or adapter settings; an audit log
    that cannot be written) refuses here (fail closed).

    `worker`: the index of a worker of `--workers N` (proxy/workers.py). Its audit log is its own chain
    (proxy/audit_setup.py), and the upstream's health gauge and merged metrics are left to the supervisor,
    which asks the upstream once for the pod (proxy/supervisor.py)."""
    detectors = (load_detectors(heads=config.heads, attack=config.attack_heads)
                 if config.guard and config.semantic else [])
    guard = Guard.load(config.rules, request_pii=config.request_pii, extra_detectors=detectors,
                       filters=fusion_filters(detectors))
    warm(guard.policy)
    metrics = Metrics(model_allowlist=config.model_allowlist)
    tracing = Tracing.from_env(on_export_failure=metrics.span_export_failures.inc)
    lora = LoraRegistry.from_config(config)
    readiness = Readiness(config)
    schema_cache = SchemaCache()
    route_schemas = RouteSchemas.load(config.schema, config.schemas, schema_cache)
    # The audit log last of what can be refused: it writes a boot record when it opens.
    audit_log = open_audit(config, worker=worker)
    if audit_log is not None:
        metrics.watch_audit(audit_log.stats)  # records, checkpoints, failures and anchor lag on /metrics
    return Services(
        config=config, metrics=metrics, guard=guard, tracing=tracing, lora=lora, audit=audit_log,
        digester=Digester(audit_log.digest_key) if audit_log is not None else Digester(),
        readiness=readiness,
        upstream_health=watch_upstream_health(readiness.upstream, metrics) if worker is None else None,
        upstream_metrics=merge_upstream_metrics(config, metrics) if worker is None else None,
        schema_cache=schema_cache, route_schemas=route_schemas,
    )


async def started(proxy: WardenProxy, services: Services) -> bool:
    """Open the proxy's ports; when they cannot be opened, say why, close the audit log (its boot record was
    written) and answer False."""
    try:
        await proxy.start()
    except StartupError as exc:
        log.error(str(exc))
        if services.audit is not None:
            await asyncio.to_thread(services.audit.close, 10.0)
        return False
    return True


async def run(config: WardenConfig) -> int:
    try:
        # First: an admin port that would serve /metrics to anyone is refused before the slow start-up.
        config = with_admin_token(config)
        services = build_services(config)
    except (ProxyError, RulesError, AuditError, ModelsError, ValueError) as exc:
        log.error("cannot start: %s", exc)
        return EXIT_CONFIG
    proxy = WardenProxy(services)
    if not await started(proxy, services):
        return 1
    log.info("serving", extra={"listen": [f"{h}:{p}" for h, p in proxy.listen_addrs()],
                               "admin": f"{config.admin.host}:{proxy.admin.port}", "upstream": config.upstream})
    await proxy.serve_until_stopped()
    return 0


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = config_from_args(args)
    except ConfigError as exc:
        print(f"warden serve: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    setup_logging(config.log_level)
    workers = config.workers or default_workers()
    if workers > 1:
        from proxy.supervisor import supervise  # one process never loads it

        return asyncio.run(supervise(config, workers))
    return asyncio.run(run(config))
