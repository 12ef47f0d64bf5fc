"""A small OTLP/HTTP trace receiver on loopback: decodes `ExportTraceServiceRequest` protobufs (gzip or
not) into plain `ReceivedSpan` values, so tests and the telemetry benchmark check spans as they went over
the wire. Not a collector: traces only, no retries, everything kept in memory."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

SPAN_KINDS = {1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


def any_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    return None if kind is None else getattr(value, kind)


@dataclass(frozen=True)
class ReceivedEvent:
    name: str
    attributes: dict[str, Any]


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    events: tuple[ReceivedEvent, ...]
    status_code: int  # 0 unset, 1 ok, 2 error
    resource: dict[str, Any]
    trace_state: str = ""


@dataclass
class OtlpReceiver:
    server: ThreadingHTTPServer
    spans: list[ReceivedSpan] = field(default_factory=list)
    raw_bodies: list[bytes] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    keep_raw: bool = True
    decode: bool = True  # False: a sink that only counts (benchmarks: decoding here would compete for the CPU)
    bytes_received: int = 0
    requests_received: int = 0

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add(self, body: bytes) -> None:
        with self.lock:
            self.bytes_received += len(body)
            self.requests_received += 1
        if not self.decode:
            return
        request = ExportTraceServiceRequest.FromString(body)
        received: list[ReceivedSpan] = []
        for resource_spans in request.resource_spans:
            resource = {kv.key: any_value(kv.value) for kv in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append(ReceivedSpan(
                        name=span.name,
                        kind=SPAN_KINDS.get(span.kind, str(span.kind)),
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        attributes={kv.key: any_value(kv.value) for kv in span.attributes},
                        events=tuple(ReceivedEvent(e.name, {kv.key: any_value(kv.value) for kv in e.attributes})
                                     for e in span.events),
                        status_code=span.status.code,
                        resource=resource,
                        trace_state=span.trace_state,
                    ))
        with self.lock:
            self.spans.extend(received)
            if self.keep_raw:
                self.raw_bodies.append(body)

    def wait_for(self, predicate: Callable[[list[ReceivedSpan]], bool], timeout: float = 10.0) -> list[ReceivedSpan]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                snapshot = list(self.spans)
            if predicate(snapshot):
                return snapshot
            time.sleep(0.05)
        raise TimeoutError(f"spans never matched; got {[(s.name, s.kind) for s in snapshot]}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer
    receiver: OtlpReceiver

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding", "") == "gzip":
            body = gzip.decompress(body)
        if self.path.rstrip("/") != "/v1/traces":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.receiver.add(body)
        data = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def start_receiver(keep_raw: bool = True, decode: bool = True) -> OtlpReceiver:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    receiver = OtlpReceiver(server, keep_raw=keep_raw and decode, decode=decode)
    handler = type("Handler", (_Handler,), {"receiver": receiver})
    server.RequestHandlerClass = handler
    threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True).start()
    return receiver
