"""Fast OTLP trace encoding, by hand: Warden's own spans written straight from their parts (`SpanWriter`, the
hot path, see proxy/telemetry/tracing.py), and SDK `ReadableSpan`s to `ExportTraceServiceRequest` protobuf bytes
(`OtlpWireEncoder`, for spans of other origin).

Why: the SDK's encoder builds one protobuf object per attribute through generic Python code and costs ~90 us
per span (measured, bench/telemetry.py); with two spans per exchange that alone is ~15% of a request's CPU.
Writing the wire format directly (protobuf encoding, opentelemetry-proto `trace.proto` field numbers), with
the resource, scope and attribute keys encoded once, is several times cheaper. The output decodes to the same
message as the SDK's `encode_spans` (tests/proxy/telemetry/test_otlp_wire.py and test_tracing.py compare them,
the latter on whole exchanges).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

_FIXED64 = struct.Struct("<Q")
_DOUBLE = struct.Struct("<d")
_FIXED32 = struct.Struct("<I")
_U64 = (1 << 64) - 1
# Span.flags: bits 8 and 9 say whether the parent was remote (opentelemetry-proto trace.proto SpanFlags).
_HAS_IS_REMOTE = 0x100
_IS_REMOTE = 0x200


def _varint(n: int) -> bytes:
    if n < 0x80:
        return bytes((n,))
    if n < 0x4000:
        return bytes(((n & 0x7F) | 0x80, n >> 7))
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _ld(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field."""
    return tag + _varint(len(payload)) + payload


# Tags: (field number << 3) | wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32).
T1_LD, T2_LD, T3_LD, T4_LD, T5_LD = b"\x0a", b"\x12", b"\x1a", b"\x22", b"\x2a"


def _utf8(text: str) -> bytes:
    """UTF-8 for a protobuf string. Text from a request may hold lone surrogates (JSON allows `"\\ud800"`),
    which UTF-8 cannot encode and OTLP receivers must reject: they are written as `?` (a request of hundreds
    of spans is not lost to one hostile model name)."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def _any_value(value: Any) -> bytes:
    """An AnyValue message body."""
    if isinstance(value, str):
        return _ld(T1_LD, _utf8(value))
    if isinstance(value, bool):
        return b"\x10" + (b"\x01" if value else b"\x00")
    if isinstance(value, int):
        return b"\x18" + _varint(value & _U64)
    if isinstance(value, float):
        return b"\x21" + _DOUBLE.pack(value)
    if isinstance(value, bytes):
        return _ld(b"\x3a", value)
    if isinstance(value, Sequence):
        return _ld(b"\x2a", b"".join(_ld(T1_LD, _any_value(v)) for v in value))
    return _ld(T1_LD, _utf8(str(value)))


class OtlpWireEncoder:
    """Encodes span batches; caches the encoded resource, scope and attribute keys (bounded)."""

    CACHE_LIMIT = 8192

    def __init__(self, unique_keys: frozenset[str] = frozenset()) -> None:
        """`unique_keys` name attributes whose values rarely repeat (ids, digests): never cached."""
        self._keys: dict[str, bytes] = {}
        self._pairs: dict[tuple[bytes, str, object, bool], bytes] = {}  # whole KeyValue fields, repeating values
        self._unique = unique_keys
        self._resources: dict[int, bytes] = {}
        self._scopes: dict[tuple[str, str | None], bytes] = {}

    def _attributes(self, tag: bytes, attributes: Mapping[str, Any] | None) -> bytes:
        """Repeated KeyValue fields under `tag`. The hot loop of the encoder, hence written out flat."""
        if not attributes:
            return b""
        keys, pairs, unique = self._keys, self._pairs, self._unique
        parts: list[bytes] = []
        append = parts.append
        for key, value in attributes.items():
            kind = type(value)
            cacheable = (kind is str or kind is int or kind is bool) and key not in unique
            if cacheable:
                cached = pairs.get((tag, key, value, kind is bool))  # True == 1: the type is part of the key
                if cached is not None:
                    append(cached)
                    continue
            prefix = keys.get(key)
            if prefix is None:
                prefix = _ld(T1_LD, _utf8(key))
                if len(keys) < self.CACHE_LIMIT:
                    keys[key] = prefix
            if kind is str:
                raw = _utf8(value)
                n = len(raw)
                any_value = (b"\x0a" + bytes((n,)) if n < 0x80 else b"\x0a" + _varint(n)) + raw
            else:
                any_value = _any_value(value)
            n = len(any_value)
            body = prefix + (b"\x12" + bytes((n,)) if n < 0x80 else b"\x12" + _varint(n)) + any_value
            n = len(body)
            encoded = tag + (bytes((n,)) if n < 0x80 else _varint(n)) + body
            if cacheable:
                if len(pairs) >= self.CACHE_LIMIT:
                    pairs.clear()
                pairs[(tag, key, value, kind is bool)] = encoded
            append(encoded)
        return b"".join(parts)

    def _resource(self, resource: Any) -> bytes:
        cached = self._resources.get(id(resource))
        if cached is None:
            cached = _ld(T1_LD, self._attributes(T1_LD, resource.attributes if resource is not None else None))
            self._resources[id(resource)] = cached
        return cached

    def _scope(self, scope: Any) -> bytes:
        key = (scope.name, scope.version) if scope is not None else ("", None)
        cached = self._scopes.get(key)
        if cached is None:
            body = _ld(T1_LD, _utf8(key[0])) + (_ld(T2_LD, _utf8(key[1])) if key[1] else b"")
            cached = self._scopes[key] = _ld(T1_LD, body)
        return cached

    def span(self, span: Any) -> bytes:
        ctx = span.context
        out = [b"\x0a\x10" + ctx.trace_id.to_bytes(16, "big"), b"\x12\x08" + ctx.span_id.to_bytes(8, "big")]
        trace_state = ctx.trace_state.to_header() if ctx.trace_state else ""
        if trace_state:
            out.append(_ld(T3_LD, _utf8(trace_state)))
        parent = span.parent
        flags = _HAS_IS_REMOTE  # as the SDK's encoder: the W3C flag bits are not copied (all spans sent are sampled)
        if parent is not None:
            out.append(b"\x22\x08" + parent.span_id.to_bytes(8, "big"))
            if parent.is_remote:
                flags |= _IS_REMOTE
        out.append(_ld(T5_LD, _utf8(span.name)))
        out.append(b"\x30" + _varint(span.kind.value + 1))  # proto SpanKind = SDK SpanKind + 1 (0 is unspecified)
        out.append(b"\x39" + _FIXED64.pack(span.start_time or 0))
        out.append(b"\x41" + _FIXED64.pack(span.end_time or 0))
        out.append(self._attributes(b"\x4a", span.attributes))
        for event in span.events:
            body = b"\x09" + _FIXED64.pack(event.timestamp) + _ld(T2_LD, _utf8(event.name))
            body += self._attributes(T3_LD, event.attributes)
            out.append(_ld(b"\x5a", body))
        status = span.status
        code = status.status_code.value
        status_body = (_ld(T2_LD, _utf8(status.description)) if status.description else b"") + \
            (b"\x18" + _varint(code) if code else b"")
        out.append(_ld(b"\x7a", status_body))
        out.append(b"\x85\x01" + _FIXED32.pack(flags))  # field 16, fixed32
        return b"".join(out)

    def encode_written(self, resource: Any, scope: Any, spans: Sequence[bytes]) -> bytes:
        """ExportTraceServiceRequest bytes of spans encoded by `SpanWriter.span`, all of one resource and
        scope (Warden's own)."""
        body = self._resource(resource) + _ld(T2_LD, self._scope(scope) + b"".join(spans))
        schema = getattr(resource, "schema_url", "") if resource is not None else ""
        if schema:
            body += _ld(T3_LD, _utf8(schema))
        return _ld(T1_LD, body)

    def encode(self, spans: Sequence[Any]) -> bytes:
        """ExportTraceServiceRequest bytes, spans grouped by resource and instrumentation scope."""
        groups: dict[int, tuple[Any, dict[tuple[str, str | None], tuple[Any, list[bytes]]]]] = {}
        for span in spans:
            resource = span.resource
            scope = span.instrumentation_scope
            _, scopes = groups.setdefault(id(resource), (resource, {}))
            key = (scope.name, scope.version) if scope is not None else ("", None)
            scopes.setdefault(key, (scope, []))[1].append(self.span(span))
        out = []
        for resource, scopes in groups.values():
            body = [self._resource(resource)]
            for scope, encoded in scopes.values():
                body.append(_ld(T2_LD, self._scope(scope) + b"".join(_ld(T2_LD, s) for s in encoded)))
            schema = getattr(resource, "schema_url", "") if resource is not None else ""
            if schema:
                body.append(_ld(T3_LD, _utf8(schema)))
            out.append(_ld(T1_LD, b"".join(body)))
        return b"".join(out)


class _Flags:
    __slots__ = ()
    sampled = True


class _Context:
    __slots__ = ()
    trace_flags = _Flags()


# What the SDK's span processors read of a queued span (`span.context.trace_flags.sampled`), for the objects
# Warden queues instead of SDK spans (proxy/telemetry/tracing.py PendingSpan): only sampled spans are ever queued.
SAMPLED_CONTEXT = _Context()


class SpanWriter:
    """Encodes Warden's own spans straight from their parts, without SDK span objects (proxy/telemetry/tracing.py).

    Attributes come in two groups: `shared`, a flat tuple `(key, value, key, value, ...)` of low-cardinality
    values (method, route, model, outcome, provider, ...) encoded once per distinct tuple and then looked up
    whole; and `unique`, pairs whose values rarely repeat (ids, digests, counts), encoded every time. A None
    value means "absent". One key always carries one value type (tracing.py builds them so), which is why the
    tuple alone can key the cache (True == 1 would otherwise collide). Measured (bench/telemetry.py and
    /tmp micro-benchmarks): ~5 us per span instead of ~21 us through `OtlpWireEncoder.encode` of a ReadableSpan.
    """

    CACHE_LIMIT = 4096

    def __init__(self) -> None:
        self._keys: dict[str, bytes] = {}
        self._prefixes: dict[tuple[bytes, str, int], bytes] = {}
        self._shared: dict[tuple[bytes, tuple[Any, ...]], bytes] = {}
        self._events: dict[tuple[str, tuple[Any, ...]], bytes] = {}

    def _pair(self, tag: bytes, key: str, value: Any) -> bytes:
        """One KeyValue field under `tag`. Strings and small ints, the common values, take a prefix (tag,
        lengths, key, value tag) cached by key and length: ids and digests of one kind have one length."""
        kind = type(value)
        if kind is str:
            raw: bytes = _utf8(value)
            prefix = self._prefixes.get((tag, key, len(raw)))
            if prefix is None:
                prefix = self._prefix(tag, key, b"\x0a" + _varint(len(raw)), len(raw))
            return prefix + raw
        if kind is int and value >= 0:
            raw = _varint(value)
            prefix = self._prefixes.get((tag, key, -len(raw)))  # negative: a varint of that many bytes
            if prefix is None:
                prefix = self._prefix(tag, key, b"\x18", len(raw), -len(raw))
            return prefix + raw
        key_field = self._key(key)
        any_value = _any_value(value)
        body = key_field + b"\x12" + _varint(len(any_value)) + any_value
        return tag + _varint(len(body)) + body

    def _key(self, key: str) -> bytes:
        field = self._keys.get(key)
        if field is None:
            field = _ld(T1_LD, _utf8(key))
            if len(self._keys) < self.CACHE_LIMIT:
                self._keys[key] = field
        return field

    def _prefix(self, tag: bytes, key: str, value_head: bytes, value_size: int, size_key: int | None = None) -> bytes:
        """The bytes of a KeyValue field up to its value's payload of `value_size` bytes."""
        any_size = len(value_head) + value_size
        body_size = len(self._key(key)) + 1 + len(_varint(any_size)) + any_size
        prefix = tag + _varint(body_size) + self._key(key) + b"\x12" + _varint(any_size) + value_head
        if len(self._prefixes) >= self.CACHE_LIMIT:
            self._prefixes.clear()
        self._prefixes[(tag, key, value_size if size_key is None else size_key)] = prefix
        return prefix

    def shared(self, flat: tuple[Any, ...], tag: bytes = b"\x4a") -> bytes:
        """Repeated KeyValue fields (span attributes by default) of a flat `(key, value, ...)` tuple, cached."""
        cache_key = (tag, flat)
        cached = self._shared.get(cache_key)
        if cached is None:
            pair = self._pair
            cached = b"".join([pair(tag, flat[i], flat[i + 1]) for i in range(0, len(flat), 2)
                               if flat[i + 1] is not None])
            if len(self._shared) >= self.CACHE_LIMIT:
                self._shared.clear()
            self._shared[cache_key] = cached
        return cached

    def unique(self, pairs: Sequence[tuple[str, Any]], tag: bytes = b"\x4a") -> bytes:
        """Repeated KeyValue fields of values that rarely repeat: encoded every time."""
        pair = self._pair
        return b"".join([pair(tag, key, value) for key, value in pairs if value is not None])

    def event(self, timestamp: int, name: str, flat: tuple[Any, ...]) -> bytes:
        """A Span.Event field (tag included); its name and attributes are cached by value."""
        body = self._events.get((name, flat))
        if body is None:
            body = _ld(T2_LD, _utf8(name)) + self.shared(flat, T3_LD)
            if len(self._events) >= self.CACHE_LIMIT:
                self._events.clear()
            self._events[(name, flat)] = body
        body = b"\x09" + _FIXED64.pack(timestamp) + body
        n = len(body)
        return b"\x5a" + (bytes((n,)) if n < 0x80 else _varint(n)) + body

    @staticmethod
    def span(trace_id: int, span_id: int, trace_state: str, parent_id: int, parent_remote: bool, name: str,
             kind: int, start: int, end: int, attributes: bytes, events: bytes, error: bool) -> bytes:
        """One ScopeSpans.spans field (tag and length included). `kind` is the SDK's SpanKind value; `error`
        sets status ERROR (else UNSET), without a description, as Warden's spans have none."""
        parts = [b"\x0a\x10" + trace_id.to_bytes(16, "big") + b"\x12\x08" + span_id.to_bytes(8, "big")]
        if trace_state:
            parts.append(_ld(T3_LD, _utf8(trace_state)))
        flags = _HAS_IS_REMOTE
        if parent_id:
            parts.append(b"\x22\x08" + parent_id.to_bytes(8, "big"))
            if parent_remote:
                flags |= _IS_REMOTE
        raw_name = _utf8(name)
        n = len(raw_name)
        parts.append((b"\x2a" + bytes((n,)) if n < 0x80 else b"\x2a" + _varint(n)) + raw_name)
        parts.append(b"\x30" + bytes((kind + 1,)) + b"\x39" + _FIXED64.pack(start) + b"\x41" + _FIXED64.pack(end))
        parts.append(attributes)
        parts.append(events)
        parts.append(b"\x7a\x02\x18\x02" if error else b"\x7a\x00")  # Status{code = ERROR} or Status{}
        parts.append(b"\x85\x01" + _FIXED32.pack(flags))
        body = b"".join(parts)
        return _ld(T2_LD, body)


class EncodedRequest:
    """Stands in for the protobuf message the SDK's HTTP exporter serializes."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def SerializePartialToString(self) -> bytes:
        return self.data

    SerializeToString = SerializePartialToString
