"""Warden's configuration: one frozen value, resolved as flags > `WARDEN_*` environment > YAML file > defaults."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from proxy.exceptions import ProxyError

BACKEND_HEALTH_PATHS: dict[str, str] = {
    "vllm": "/health",
    "sglang": "/health",
    "tgi": "/health",
    "llama_cpp": "/health",
    "triton": "/v2/health/ready",
    "openai": "/v1/models",
}


class ConfigError(ProxyError, ValueError):
    """A configuration value is missing or malformed; the message names the source and the key."""


@dataclass(frozen=True, slots=True)
class HostPort:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class WardenConfig:
    upstream: str
    listen: HostPort = HostPort("0.0.0.0", 8080)  # noqa: S104 - a sidecar serves the pod's network
    admin: HostPort = HostPort("127.0.0.1", 9464)
    # Bearer token for /metrics, required when `admin` is not loopback; kept out of the repr (logs, tracebacks).
    admin_token: str | None = field(default=None, repr=False)
    admin_token_file: str | None = None  # ... or read from this file (a mounted Secret)
    backend: str = "vllm"
    health_path: str | None = None
    upstream_timeout: float = 120.0  # seconds until the upstream's response headers
    upstream_connect_timeout: float = 10.0  # seconds for the TCP connect (the OS would wait ~2 min)
    max_body_bytes: int = 8 * 1024 * 1024  # request bodies
    # Whole (non-streamed) answers: larger than requests, since a legitimate embeddings answer runs to tens of
    # MB. Streams are framed event by event and never limited as a whole.
    max_response_bytes: int = 64 * 1024 * 1024
    max_header_bytes: int = 64 * 1024  # the request line and headers together (nginx: 4 x 8k by default)
    header_timeout: float = 30.0  # seconds to receive a whole request head (nginx's client_header_timeout)
    idle_timeout: float = 75.0  # seconds a keep-alive connection may sit idle between requests
    max_inflight: int = 256  # exchanges forwarded at once (vLLM's default max_num_seqs is 256)
    max_queue: int = 64  # exchanges waiting for a slot; beyond it: 429 with Retry-After
    queue_timeout: float = 10.0  # seconds a queued exchange waits for a slot before its 429
    guard_budget: float = 5.0  # seconds of detection work per direction of one exchange
    guard_fail_mode: str = "closed"  # closed: over budget is refused; open: forwarded, recorded failed_open
    drain_grace: float = 30.0
    tls_cert: str | None = None
    tls_key: str | None = None
    upstream_tls_verify: bool = True
    upstream_ca: str | None = None  # PEM bundle of the CAs that sign an https upstream (default: certifi's roots)
    model_allowlist: tuple[str, ...] = ()
    log_level: str = "info"
    # Processes serving the one listening port (proxy/supervisor.py); 0 = auto: the CPUs the container's cgroup
    # quota allows, capped at 8, and 1 when no quota is set (proxy/cpus.py default_workers).
    workers: int = 0
    # SSE answer bodies read off the upstream socket without mitmproxy's per-chunk path while it holds nothing of
    # them (proxy/mitm/fast_lane.py); false: every chunk through mitmproxy's layers
    fast_lane: bool = True
    # -- guard (rules) --
    guard: bool = True  # false: pass-through, nothing inspected (recorded as `skipped`, never as `pass`)
    semantic: bool = True  # the ONNX semantic stage on prompts (built on first use)
    heads: str | None = None  # your own categories' heads (`warden models train --categories DIR --out FILE`)
    # the attack categories' heads (prompt_injection, self_harm; models/attack_heads.py) beside the builtin ones
    attack_heads: bool = True
    rules: tuple[str, ...] = ()  # rule files on top of the builtin packs
    request_pii: str = "mask"  # mask | pseudonymize | block: what PII rules do to prompts
    block_status: int = 400  # status of a policy block
    scan_unknown_routes: bool = False  # scan the raw body of routes Warden does not know
    # -- output schema validation (proxy/schemas) --
    schema: str | None = None  # JSON Schema file for chat answers of requests without a response_format
    schemas: tuple[tuple[str, str], ...] = ()  # (model glob, schema file), first match wins, before `schema`
    schema_policy: str = "reask"  # reject | flag | reask: what an answer that does not fit gets
    schema_reask: int = 1  # re-asks before a reject, under the reask policy
    schema_inject: str = "auto"  # auto: a route schema goes upstream as `response_format` (guided decoding)
    # -- audit --
    audit_dir: str | None = None  # write the tamper-evident log here (keys in <audit_dir>/../keys)
    audit_key_dir: str | None = None
    audit_s3: str | None = None  # s3://bucket/prefix: Object Lock mirror of segments and checkpoints
    audit_kms_data_key: str | None = None  # KMS key id for GenerateDataKey (the chain key K_epoch)
    audit_kms_sign_key: str | None = None  # KMS ECC_NIST_P256 key id that signs checkpoints
    aws_endpoint_url: str | None = None  # a KMS/S3-compatible endpoint (tests use moto's server)
    cluster: str = "local"  # origin = cluster/namespace/pod/boot id (namespace and pod from POD_* env)
    # -- observability (issue 6) --
    lora_dir: str | None = None  # adapters' weight directories live here (checksums are computed only inside it)
    lora_adapters: tuple[str, ...] = ()  # `name=path` entries (path absolute or relative to lora_dir)
    base_model: str | None = None  # the served base model, when the upstream's /v1/models does not say
    allow_model_admin: bool = False  # forward /v1/load_lora_adapter, /v1/unload_lora_adapter, /v2/repository/*
    upstream_metrics: str | None = None  # path or URL of the upstream's Prometheus metrics to merge into ours
    upstream_metrics_prefixes: tuple[str, ...] = ("vllm:", "sglang:", "llamacpp:", "tgi_", "nv_inference_")

    @property
    def upstream_verify(self) -> bool | str:
        """How an https upstream's certificate is checked: not at all (False), against `upstream_ca` (its
        path), or against the default roots (True)."""
        if not self.upstream_tls_verify:
            return False
        return self.upstream_ca or True

    @property
    def readiness_path(self) -> str:
        return self.health_path or BACKEND_HEALTH_PATHS.get(self.backend, "/health")


MAX_SCHEMA_REASK = 5  # the client waits for every re-ask in turn: more is a misconfiguration, not persistence

_SIZE_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2,
               "mib": 1024**2, "g": 1000**3, "gb": 1000**3, "gib": 1024**3}
_DURATION_UNITS = {"": 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_size(value: object) -> int:
    """`8MiB`, `512k`, `1048576` -> bytes."""
    if isinstance(value, int):
        return value
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(value))
    if not match or match.group(2).lower() not in _SIZE_UNITS:
        raise ConfigError(f"not a size: {value!r} (examples: 8MiB, 512k, 1048576)")
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2).lower()])


def parse_duration(value: object) -> float:
    """`30s`, `250ms`, `2m`, `1.5` -> seconds."""
    if isinstance(value, int | float):
        return float(value)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", str(value))
    if not match or match.group(2) not in _DURATION_UNITS:
        raise ConfigError(f"not a duration: {value!r} (examples: 30s, 250ms, 2m)")
    return float(match.group(1)) * _DURATION_UNITS[match.group(2)]


def parse_hostport(value: object) -> HostPort:
    text = str(value)
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"not HOST:PORT: {text!r}")
    return HostPort(host.strip("[]") or "0.0.0.0", int(port))  # noqa: S104


def parse_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"not a boolean: {value!r}")


def parse_count(value: object) -> int:
    text = str(value).strip()
    if not text.isdigit():
        raise ConfigError(f"not a non-negative integer: {value!r}")
    return int(text)


def parse_workers(value: object) -> int:
    """`auto` (0: decided at start from the cgroup CPU quota) or a count of processes, 1 to 64."""
    text = str(value).strip().lower()
    if text == "auto":
        return 0
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise ConfigError(f"not a worker count: {value!r} (auto or 1 to 64)")
    return int(text)


def parse_status(value: object) -> int:
    text = str(value).strip()
    if not text.isdigit() or not 400 <= int(text) <= 599:
        raise ConfigError(f"not a 4xx or 5xx status: {value!r}")
    return int(text)


def parse_schema_map(value: object) -> tuple[tuple[str, str], ...]:
    """`schemas:` in the file is a mapping of model glob -> schema file; in the environment or a flag,
    `GLOB=FILE,GLOB=FILE`. Order is kept: the first glob that matches a model wins."""
    if isinstance(value, tuple) and all(isinstance(v, tuple) for v in value):
        return value
    if isinstance(value, dict):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    else:
        pairs = []
        for entry in parse_list(value):
            glob, sep, path = entry.partition("=")
            if not sep or not glob.strip() or not path.strip():
                raise ConfigError(f"not GLOB=FILE: {entry!r}")
            pairs.append((glob.strip(), path.strip()))
    for glob, path in pairs:
        if not glob or not path:
            raise ConfigError(f"a schemas entry needs a model glob and a file, got {glob!r}: {path!r}")
    return tuple(pairs)


def parse_list(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    return tuple(part.strip() for part in str(value).split(",") if part.strip())


_PARSERS: dict[str, Any] = {
    "listen": parse_hostport,
    "admin": parse_hostport,
    "upstream_timeout": parse_duration,
    "upstream_connect_timeout": parse_duration,
    "drain_grace": parse_duration,
    "max_body_bytes": parse_size,
    "max_response_bytes": parse_size,
    "max_header_bytes": parse_size,
    "header_timeout": parse_duration,
    "idle_timeout": parse_duration,
    "max_inflight": parse_count,
    "max_queue": parse_count,
    "queue_timeout": parse_duration,
    "guard_budget": parse_duration,
    "upstream_tls_verify": parse_bool,
    "model_allowlist": parse_list,
    "lora_adapters": parse_list,
    "allow_model_admin": parse_bool,
    "upstream_metrics_prefixes": parse_list,
    "rules": parse_list,
    "block_status": parse_status,
    "scan_unknown_routes": parse_bool,
    "guard": parse_bool,
    "semantic": parse_bool,
    "attack_heads": parse_bool,
    "schemas": parse_schema_map,
    "schema_reask": parse_count,
    "workers": parse_workers,
    "fast_lane": parse_bool,
}

FIELD_NAMES = tuple(f.name for f in fields(WardenConfig))


def _coerce(key: str, value: object, source: str) -> object:
    try:
        parser = _PARSERS.get(key)
        return parser(value) if parser else (None if value is None else str(value))
    except ConfigError as exc:
        raise ConfigError(f"{source}: {key}: {exc}") from None


def from_env(env: Mapping[str, str]) -> dict[str, object]:
    """`WARDEN_UPSTREAM`, `WARDEN_MAX_BODY_BYTES`, ... -> raw values keyed by field name."""
    return {name: env[f"WARDEN_{name.upper()}"] for name in FIELD_NAMES if f"WARDEN_{name.upper()}" in env}


def from_file(path: Path) -> dict[str, object]:
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: the config file must be a mapping")
    values = {str(k).replace("-", "_"): v for k, v in loaded.items()}
    unknown = sorted(set(values) - set(FIELD_NAMES))
    if unknown:
        raise ConfigError(f"{path}: unknown keys {unknown}; known: {sorted(FIELD_NAMES)}")
    # Schema files named in the file are found next to it, wherever warden is started from.
    if isinstance(values.get("schema"), str):
        values["schema"] = str(path.parent / str(values["schema"]))
    if isinstance(values.get("heads"), str):
        values["heads"] = str(path.parent / str(values["heads"]))
    if isinstance(values.get("schemas"), dict):
        values["schemas"] = {glob: str(path.parent / str(file)) for glob, file in values["schemas"].items()}
    return values


def resolve(
    flags: Mapping[str, object], env: Mapping[str, str] | None = None, config_file: Path | None = None
) -> WardenConfig:
    """Merge the sources, highest precedence first: flags, environment, file, defaults."""
    env = os.environ if env is None else env
    layers: list[tuple[str, Mapping[str, object]]] = [
        ("flag", {k: v for k, v in flags.items() if v is not None}),
        ("environment", from_env(env)),
    ]
    file_path = config_file or (Path(env["WARDEN_CONFIG"]) if env.get("WARDEN_CONFIG") else None)
    if file_path is not None:
        layers.append((str(file_path), from_file(file_path)))
    merged: dict[str, object] = {}
    for source, values in reversed(layers):
        for key, value in values.items():
            merged[key] = _coerce(key, value, source)
    if not merged.get("upstream"):
        raise ConfigError("no upstream: pass --upstream URL, set WARDEN_UPSTREAM, or `upstream:` in the file")
    upstream = str(merged["upstream"])
    if not re.fullmatch(r"https?://[^/\s]+/?", upstream):
        raise ConfigError(f"upstream must be http(s)://host[:port], got {upstream!r}")
    if merged.get("backend") and str(merged["backend"]) not in BACKEND_HEALTH_PATHS:
        raise ConfigError(f"backend must be one of {sorted(BACKEND_HEALTH_PATHS)}, got {merged['backend']!r}")
    if merged.get("request_pii", "mask") not in ("mask", "pseudonymize", "block"):
        raise ConfigError(f"request_pii must be mask, pseudonymize or block, got {merged['request_pii']!r}")
    if merged.get("guard_fail_mode", "closed") not in ("closed", "open"):
        raise ConfigError(f"guard_fail_mode must be closed or open, got {merged['guard_fail_mode']!r}")
    if merged.get("schema_policy", "reask") not in ("reject", "flag", "reask"):
        raise ConfigError(f"schema_policy must be reject, flag or reask, got {merged['schema_policy']!r}")
    if int(str(merged.get("schema_reask", 1))) > MAX_SCHEMA_REASK:
        raise ConfigError(f"schema_reask is at most {MAX_SCHEMA_REASK} (each re-ask is a whole generation), "
                          f"got {merged['schema_reask']}")
    if merged.get("schema_inject", "auto") not in ("auto", "off"):
        raise ConfigError(f"schema_inject must be auto or off, got {merged['schema_inject']!r}")
    if merged.get("heads") and merged.get("semantic") is False:
        raise ConfigError("heads (your own categories) need the semantic stage, which is off (semantic: false, "
                          "--no-semantic)")
    if bool(merged.get("tls_cert")) != bool(merged.get("tls_key")):
        raise ConfigError("tls_cert and tls_key go together")
    merged["upstream"] = upstream.rstrip("/")
    return dataclasses.replace(WardenConfig(upstream=upstream), **merged)  # type: ignore[arg-type]
