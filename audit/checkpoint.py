"""Signed checkpoints: the tree head of the record stream, chained on the hash of the signed body.

A checkpoint file is one canonical JSON object:

    {"body": {...}, "hint": {"frontier": [...]}, "sig": {"alg": "ecdsa-p256-sha256", "key": "sha256:..",
     "value": "<base64 DER>"}}

Only `body` is signed and only its canonical bytes are hashed for `prev` (never the signature, which is
randomized and malleable). `hint.frontier` is the unsigned compact range at `size`, used by the writer to
resume without rescanning; it is trusted only if it folds to the signed root.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from audit.canonical import encode
from audit.errors import AuditError
from audit.signers import ALGORITHM

FORMAT = "warden-audit-checkpoint/1"
CHECKPOINT_DIR = "checkpoints"
SEGMENT_DIR = "segments"
REASONS = frozenset({"interval", "heartbeat", "shutdown", "recovery", "manual"})


class CheckpointFormatError(AuditError):
    """A checkpoint file does not parse into a well-formed checkpoint."""


def checkpoint_name(n: int) -> str:
    return f"{CHECKPOINT_DIR}/{n:012d}.json"


def segment_name(first_seq: int) -> str:
    return f"{SEGMENT_DIR}/{first_seq:020d}.jsonl"


@dataclass(frozen=True, slots=True)
class SegmentRef:
    """A sealed segment: its store name, SHA-256 and length of its bytes, and the seq range it holds."""

    name: str
    sha256: str
    bytes: int
    first: int
    last: int

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "sha256": self.sha256, "bytes": self.bytes, "first": self.first,
                "last": self.last}


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The signed body. `consistency` proves (prev_size, prev's root) is a prefix of (size, root)."""

    log: str
    origin: str
    n: int
    size: int
    root: bytes
    prev: str | None
    prev_size: int
    consistency: tuple[bytes, ...]
    segments: tuple[SegmentRef, ...]
    key: str
    ts: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {
            "format": FORMAT, "log": self.log, "origin": self.origin, "n": self.n, "size": self.size,
            "root": self.root.hex(), "prev": self.prev, "prev_size": self.prev_size,
            "consistency": [h.hex() for h in self.consistency],
            "segments": [s.to_json() for s in self.segments], "key": self.key, "ts": self.ts,
            "reason": self.reason,
        }

    def body_bytes(self) -> bytes:
        return encode(self.to_json())

    def body_hash(self) -> str:
        return hashlib.sha256(self.body_bytes()).hexdigest()


@dataclass(frozen=True, slots=True)
class SignedCheckpoint:
    checkpoint: Checkpoint
    signature: bytes
    frontier: tuple[bytes, ...] = ()

    def to_bytes(self) -> bytes:
        return encode({
            "body": self.checkpoint.to_json(),
            "sig": {"alg": ALGORITHM, "key": self.checkpoint.key,
                    "value": base64.b64encode(self.signature).decode("ascii")},
            "hint": {"frontier": [h.hex() for h in self.frontier]},
        }) + b"\n"


def _get(obj: Mapping[str, object], key: str, kind: type | tuple[type, ...], where: str) -> object:
    value = obj.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise CheckpointFormatError(f"field {key!r} has the wrong type", where=where,
                                    expected=getattr(kind, "__name__", str(kind)), found=type(value).__name__)
    return value


def _int(obj: Mapping[str, object], key: str, where: str) -> int:
    value = _get(obj, key, int, where)
    assert isinstance(value, int)
    if value < 0:
        raise CheckpointFormatError(f"field {key!r} is negative", where=where, found=value)
    return value


def _str(obj: Mapping[str, object], key: str, where: str) -> str:
    value = _get(obj, key, str, where)
    assert isinstance(value, str)
    return value


def _hash(text: object, where: str) -> bytes:
    if not isinstance(text, str) or len(text) != 64:
        raise CheckpointFormatError("not a hex SHA-256", where=where, found=text)
    try:
        return bytes.fromhex(text)
    except ValueError as exc:
        raise CheckpointFormatError("not a hex SHA-256", where=where, found=text) from exc


def _hashes(value: object, where: str) -> tuple[bytes, ...]:
    if not isinstance(value, list):
        raise CheckpointFormatError("expected a list of hashes", where=where, found=type(value).__name__)
    return tuple(_hash(h, f"{where}[{i}]") for i, h in enumerate(value))


def parse_body(body: object, where: str) -> Checkpoint:
    if not isinstance(body, dict):
        raise CheckpointFormatError("body is not an object", where=where)
    if body.get("format") != FORMAT:
        raise CheckpointFormatError("unknown checkpoint format", where=where, expected=FORMAT,
                                    found=body.get("format"))
    prev = body.get("prev")
    if prev is not None:
        _hash(prev, f"{where}: prev")
    segments_raw = _get(body, "segments", list, where)
    assert isinstance(segments_raw, list)
    segments: list[SegmentRef] = []
    for i, seg in enumerate(segments_raw):
        w = f"{where}: segments[{i}]"
        if not isinstance(seg, dict):
            raise CheckpointFormatError("segment entry is not an object", where=w)
        _hash(seg.get("sha256"), w)
        segments.append(SegmentRef(_str(seg, "name", w), _str(seg, "sha256", w), _int(seg, "bytes", w),
                                   _int(seg, "first", w), _int(seg, "last", w)))
    checkpoint = Checkpoint(
        log=_str(body, "log", where), origin=_str(body, "origin", where), n=_int(body, "n", where),
        size=_int(body, "size", where), root=_hash(body.get("root"), f"{where}: root"),
        prev=prev if isinstance(prev, str) else None, prev_size=_int(body, "prev_size", where),
        consistency=_hashes(body.get("consistency"), f"{where}: consistency"), segments=tuple(segments),
        key=_str(body, "key", where), ts=_str(body, "ts", where), reason=_str(body, "reason", where))
    if checkpoint.to_json() != body:
        raise CheckpointFormatError("body has unknown or non-canonical fields", where=where)
    return checkpoint


def parse_checkpoint(data: bytes, where: str) -> SignedCheckpoint:
    """Parse a checkpoint file; raises CheckpointFormatError naming `where` and the field."""
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: nesting no writer makes
        raise CheckpointFormatError("not JSON", where=where, found=str(exc)[:200]) from exc
    if not isinstance(obj, dict):
        raise CheckpointFormatError("not a JSON object", where=where)
    checkpoint = parse_body(obj.get("body"), where)
    sig = obj.get("sig")
    if not isinstance(sig, dict) or sig.get("alg") != ALGORITHM:
        raise CheckpointFormatError("missing or unknown signature algorithm", where=where, expected=ALGORITHM,
                                    found=sig.get("alg") if isinstance(sig, dict) else sig)
    if sig.get("key") != checkpoint.key:
        raise CheckpointFormatError("signature key differs from the body's key", where=where,
                                    expected=checkpoint.key, found=sig.get("key"))
    try:
        signature = base64.b64decode(str(sig.get("value")), validate=True)
    except ValueError as exc:
        raise CheckpointFormatError("signature is not base64", where=where) from exc
    frontier: tuple[bytes, ...] = ()
    hint = obj.get("hint")
    if isinstance(hint, dict):
        try:
            frontier = _hashes(hint.get("frontier"), f"{where}: hint")
        except CheckpointFormatError:
            frontier = ()  # only a hint: the writer falls back to a rescan
    return SignedCheckpoint(checkpoint, signature, frontier)


def chain_tail(checkpoints: Sequence[SignedCheckpoint]) -> SignedCheckpoint | None:
    return max(checkpoints, key=lambda c: c.checkpoint.n, default=None)
