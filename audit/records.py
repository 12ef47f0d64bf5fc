"""Audit records: kinds, verdicts, the body checks, the canonical record, the MAC chain step, the exchange body.

A record is the canonical JSON of its body merged with the header the log writes (`seq`, `ts`, `origin`,
`kind`); how it is stored, one line with its MAC first, is `audit.line`.

    mac_i = HMAC-SHA256(K_epoch, mac_{i-1} || record_i)      (mac_{-1} = 32 zero bytes)
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from audit.canonical import check_value, encode
from audit.errors import RecordError
from audit.line import MAC_SIZE, encode_line, parse_line

GENESIS_MAC = bytes(MAC_SIZE)

# Header fields the log writes itself; a body may not set them.
RESERVED_KEYS = frozenset({"_mac", "seq", "ts", "origin", "kind"})
_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
_KIND = re.compile(r"[a-z][a-z0-9_.]{0,63}")


class Kind(StrEnum):
    """Record kinds. The log writes the lifecycle ones itself; callers write `exchange` (or their own)."""

    EXCHANGE = "exchange"
    EPOCH_START = "epoch_start"
    HEARTBEAT = "heartbeat"
    SHUTDOWN = "shutdown"


LIFECYCLE_KINDS = frozenset({Kind.EPOCH_START, Kind.HEARTBEAT, Kind.SHUTDOWN})


class Verdict(StrEnum):
    """Per-rule verdicts (DESIGN 7): a skipped or timed-out scan is never recorded as `pass`."""

    PASS = "pass"  # noqa: S105 - a verdict, not a password
    ANNOTATE = "annotate"
    MASK = "mask"
    PSEUDONYMIZE = "pseudonymize"
    BLOCK = "block"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"
    FAILED_OPEN = "failed_open"
    ERROR = "error"


def check_kind(kind: str) -> None:
    if not _KIND.fullmatch(kind):
        raise RecordError("record kind must be a lower-case identifier", found=kind, where="kind")


_key_ok: dict[str, bool] = {}


def _body_key_ok(key: object) -> bool:
    if not isinstance(key, str):
        return False
    ok = _key_ok.get(key)
    if ok is None:
        ok = bool(_KEY.fullmatch(key)) and key not in RESERVED_KEYS
        if len(_key_ok) < 4096:
            _key_ok[key] = ok
    return ok


def check_body(body: Mapping[str, object]) -> None:
    """Raise RecordError unless `body` can be merged into a record: own keys only, canonical values."""
    for key, value in body.items():
        if not _body_key_ok(key):
            if isinstance(key, str) and key in RESERVED_KEYS:
                raise RecordError("body key is reserved for the record header", found=key, where="body")
            raise RecordError("body keys must be lower-case identifiers", found=key, where="body")
        check_value(value, f"$.{key}")


def encode_record(seq: int, ts: str, origin: str, kind: str, body: Mapping[str, object]) -> bytes:
    """The canonical record without its MAC. `body` must already have passed `check_body`."""
    record = dict(body)
    record["seq"] = seq
    record["ts"] = ts
    record["origin"] = origin
    record["kind"] = kind
    return encode(record, checked=True)


def chain_mac(key: bytes, prev_mac: bytes, record: bytes) -> bytes:
    """One step of the chain: HMAC-SHA256(K_epoch, mac_{i-1} || record_i)."""
    return hmac.digest(key, prev_mac + record, "sha256")


# The line format is defined in audit.line; these are its names from before it had a module of its own.
make_line = encode_line
split_line = parse_line


def digest_hex(key: bytes, data: bytes) -> str:
    """Keyed digest of content (input, output): HMAC-SHA256, so low-entropy PII cannot be brute-forced."""
    return hmac.new(key, data, hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class ExchangeRecord:
    """The body of one `exchange` record (DESIGN 7). Digests come from `AuditLog.digest`; never raw text."""

    request_id: str
    route: str
    status: int | None
    latency_ms: int | None
    trace_id: str | None = None
    model: str | None = None
    lora_adapter: str | None = None
    lora_sha256: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    input_digest: str | None = None
    output_digest: str | None = None
    outcome: str | None = None  # "ok", "blocked", "upstream_error", "client_aborted", ...
    verdicts: Mapping[str, str] = field(default_factory=dict)  # rule id -> Verdict value
    findings: Mapping[str, int] = field(default_factory=dict)  # finding kind -> count

    def to_body(self) -> dict[str, object]:
        for rule, verdict in self.verdicts.items():
            if verdict not in Verdict.__members__.values():
                raise RecordError("unknown verdict", expected=sorted(Verdict), found=verdict,
                                  where=f"verdicts.{rule}")
        return {
            "exchange": {
                "request_id": self.request_id,
                "trace_id": self.trace_id,
                "route": self.route,
                "model": self.model,
                "lora": {"adapter": self.lora_adapter, "sha256": self.lora_sha256},
                "status": self.status,
                "latency_ms": self.latency_ms,
                "outcome": self.outcome,
                "tokens": {"input": self.input_tokens, "output": self.output_tokens,
                           "cached": self.cached_tokens},
            },
            "digests": {"input": self.input_digest, "output": self.output_digest},
            "verdicts": {str(k): str(v) for k, v in self.verdicts.items()},
            "findings": {str(k): int(v) for k, v in self.findings.items()},
        }
