"""Canonical JSON: the one byte form of a record or checkpoint body that MACs, hashes and signatures cover.

Sorted keys (by code point; every key we write is ASCII, where this equals RFC 8785's UTF-16 order), UTF-8,
no insignificant whitespace, no floats (their text form is not canonical across languages), integers inside
the IEEE-754 safe range (RFC 7493 I-JSON section 2.2) so any JSON reader gets them exactly.
"""

from __future__ import annotations

import json
import time
from calendar import timegm
from collections.abc import Mapping

from audit.errors import RecordError

MAX_SAFE_INT = 2**53 - 1

_encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _ok(value: object) -> bool:
    """Fast path of `check_value`: no path strings, exact types only (the common case)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -MAX_SAFE_INT <= value <= MAX_SAFE_INT  # type: ignore[operator]
    if kind is dict:
        return all(type(key) is str and _ok(item) for key, item in value.items())  # type: ignore[attr-defined]
    if kind is list or kind is tuple:
        return all(_ok(item) for item in value)  # type: ignore[attr-defined]
    return False


def check_value(value: object, path: str = "$") -> None:
    """Raise RecordError (with the JSON path) unless `value` is canonical-JSON safe."""
    if _ok(value):
        return
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, int):
        if -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            return
        raise RecordError("integer outside the safe range", expected=f"|x| <= {MAX_SAFE_INT}", found=value,
                          where=path)
    if isinstance(value, float):
        raise RecordError("floats are not canonical; use integers (e.g. milliseconds)", found=value,
                          where=path)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise RecordError("object keys must be strings", found=type(key).__name__, where=path)
            check_value(item, f"{path}.{key}")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            check_value(item, f"{path}[{i}]")
        return
    if isinstance(value, Mapping):
        raise RecordError("mappings must be plain dicts", found=type(value).__name__, where=path)
    raise RecordError("value is not JSON", found=type(value).__name__, where=path)


def encode(value: object, *, checked: bool = False) -> bytes:
    """The canonical bytes of `value`; validates it first unless the caller already did."""
    if not checked:
        check_value(value)
    try:
        return _encoder.encode(value).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RecordError("string is not valid UTF-8 (lone surrogate)", found=exc.object[exc.start:exc.end],
                          where="$") from exc


def is_canonical(data: bytes) -> bool:
    """True when `data` parses and re-encodes to exactly the same bytes."""
    try:
        return _encoder.encode(json.loads(data)).encode("utf-8") == data
    except (ValueError, UnicodeError):
        return False


_ts_cache: tuple[int, str] = (-1, "")


def format_ts(seconds: float) -> str:
    """RFC 3339 UTC with milliseconds, the record and checkpoint time format: 2026-11-29T17:13:00.123Z."""
    global _ts_cache  # noqa: PLW0603 - a one-entry cache of the formatted second; tuple swap is atomic
    millis = int(seconds * 1000)
    second, prefix = _ts_cache
    if millis // 1000 != second:
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000))
        _ts_cache = (millis // 1000, prefix)
    return f"{prefix}.{millis % 1000:03d}Z"


def parse_ts(text: str) -> float:
    """Inverse of `format_ts`; raises ValueError on anything else."""
    if len(text) != 24 or text[-1] != "Z" or text[19] != ".":
        raise ValueError(f"not an audit timestamp: {text!r}")
    base = timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    return base + int(text[20:23]) / 1000
