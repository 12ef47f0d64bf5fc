"""Stage 3 (responseheaders): SSE responses are relayed event by event, never buffered (DESIGN section 4).

The relay re-frames events from raw upstream chunks, guards their text (proxy/guard/stream.py) when the route
is one we inspect, checks it against the answer's JSON schemas as it arrives (proxy/schemas/stream_gate.py)
when the exchange has any, stamps the time to first chunk and collects `usage` on the way, because mitmproxy
keeps no body after a streamed response. A stream with neither guard nor schema passes through unparsed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from mitmproxy import http

from audit.records import Verdict
from proxy.answer import peek_chunk, record_usage
from proxy.bodies import StreamDecodeError, StreamDecoder
from proxy.errors import ApiError, upstream_unavailable
from proxy.guard.ledger import Direction, strongest
from proxy.guard.stream import Judge, StreamGuard, closing_events
from proxy.headers import header, set_headers, strip_hop_by_hop
from proxy.mitm.client_wire import write_to_client
from proxy.mitm.fast_lane import arm
from proxy.schemas.answer import offered_functions
from proxy.schemas.plan import SchemaPolicy
from proxy.schemas.stream_gate import StreamGate
from proxy.services import Services
from proxy.sse import SseEvent, SseFramer
from proxy.stages.base import fail_closed
from proxy.state import INSPECTED_ROUTES, FlowState, Outcome, get_state
from rules.findings import Action
from rules.pseudonym import PseudonymVault
from rules.scanner import ScanResult

log = logging.getLogger("warden.stream")

MAX_DECODED_CHUNK = 16 * 1024 * 1024  # bytes one compressed upstream chunk may expand to (a bomb ends the stream)
# Bytes of one unfinished SSE event the relay holds (a Responses `response.completed` event repeats the whole
# answer, so this is generous): an upstream that never ends its event must not fill memory.
MAX_PENDING_EVENT = 8 * 1024 * 1024
# Guarded events of one upstream read are handled in batches of at most this many (proxy/guard/stream.py,
# `StreamGuard.on_events`), each written out before the next is scanned: a batch of plain deltas costs a few
# microseconds per event, so the first event of a read waits well under a millisecond for the last.
BATCH_EVENTS = 64

# Responses API streams end with one of these typed events instead of `data: [DONE]`.
TERMINAL_EVENTS = frozenset({"response.completed", "response.failed", "response.incomplete"})


class SseRelay:
    """The `flow.response.stream` callable: raw chunks in, whole (guarded) events out."""

    __slots__ = ("clock", "framer", "guard", "hasher", "peek", "recorded", "state")

    def __init__(self, state: FlowState, clock: Callable[[], float], guard: StreamGuard | None,
                 hasher: hmac.HMAC) -> None:
        self.state = state
        self.clock = clock
        self.guard = guard
        self.hasher = hasher
        self.framer = SseFramer()
        self.recorded = False
        # While a span records, the answer's id, model and finish reasons are read on the way (from the
        # upstream's events: identity and finish reasons are not content, and the guard does not change them).
        spans = state.provenance.spans
        self.peek = spans is not None and spans.sampled

    def __call__(self, chunk: bytes) -> Iterable[bytes]:
        # Never b"": mitmproxy forwards a returned b"" as an empty HTTP/1 chunk, which is the
        # chunked-encoding terminator and would end the client's stream early. [] holds data back.
        events = self.framer.feed(chunk) if chunk else self.framer.flush()  # b"" marks the end
        if self.framer.pending > MAX_PENDING_EVENT:
            return self._overlong(events)
        if self.guard is None:
            if events:
                self.observe_all(events)
            data = b"" if not events else events[0].raw if len(events) == 1 else b"".join(e.raw for e in events)
            if data:
                self.hasher.update(data)
            if not chunk:
                self.finish()  # after the last event (flushed unterminated at the end) is in the output digest
            return [data] if data else []
        if self.guard.ended:  # blocked or failed: nothing more reaches the client
            if not chunk:
                self.finish()
            return []
        if len(events) == 1 and chunk:
            # One event per upstream chunk is what vLLM, llama.cpp's Python server and the stand-in send:
            # no generator, no flush clock.
            return self._guarded_one(events[0])
        if chunk and len(events) <= BATCH_EVENTS:
            return self._guarded_batch(events)
        # A generator: mitmproxy writes each batch out before the next one is scanned.
        return self._guarded(events, end=not chunk)

    def _overlong(self, events: list[SseEvent]) -> list[bytes]:
        """An event still unfinished after MAX_PENDING_EVENT bytes (an upstream that never ends its event). Not
        held any longer: unguarded, its bytes go on as they came (pass-through frames only to observe);
        guarded, the stream ends closed, since an event that cannot be parsed cannot be judged."""
        rest = self.framer.take_pending()
        if self.guard is None:
            data = b"".join([*(e.raw for e in events), rest])
            self.hasher.update(data)
            return [data]
        out = [] if self.guard.ended else list(self._guarded(events, end=False))
        if self.guard.ended:
            return out
        log.warning("upstream event too long; ending the stream", extra={
            "request_id": self.state.request_id, "limit_bytes": MAX_PENDING_EVENT})
        return [*out, self.end_upstream_error(f"an event longer than {MAX_PENDING_EVENT} bytes")]

    def _guarded_one(self, event: SseEvent) -> list[bytes]:
        guard = self.guard
        assert guard is not None
        self.observe(event)
        try:
            out = guard.on_event(event)
        except Exception:
            return list(self._failed())
        if not out:
            return []
        return [self._emit(out)]

    def _guarded_batch(self, events: list[SseEvent]) -> list[bytes]:
        """Several events in one read (llama.cpp's server, a busy vLLM): guarded as one batch, one write."""
        guard = self.guard
        assert guard is not None
        self.observe_all(events)
        try:
            out = guard.on_events(events)
        except Exception:
            return list(self._failed())
        if not out:
            return []
        return [self._emit(out)]

    def _failed(self) -> Iterator[bytes]:
        """The guard raised: end the stream closed (a bug of ours must not let unguarded text through)."""
        guard = self.guard
        assert guard is not None
        log.exception("stream guard failed; ending the stream", extra={"request_id": self.state.request_id})
        self.state.outcome = Outcome.INTERNAL_ERROR
        guard.ended = True
        failure = ApiError(500, "server_error", "internal_error",
                           f"Warden failed while guarding this stream (request id {self.state.request_id}).")
        yield self._emit([closing_events(failure)])

    def _guarded(self, events: list[SseEvent], *, end: bool) -> Iterator[bytes]:
        """Guarded events of one upstream read, in batches of BATCH_EVENTS, each written as one piece before
        the next is scanned; at the end of the stream, what the lanes still hold."""
        guard = self.guard
        assert guard is not None
        out: list[bytes] = []
        if events:
            self.observe_all(events)
        try:
            for i in range(0, len(events), BATCH_EVENTS):
                out = guard.on_events(events[i:i + BATCH_EVENTS])
                if out:
                    yield self._emit(out)
                out = []
            if end:
                out += guard.end()
        except Exception:
            # A bug of ours must not let unguarded text through: end the stream closed, keep serving.
            yield from self._failed()
            out = []
        if out:
            yield self._emit(out)
        if end:
            self.finish()

    def broken_off(self, detail: str) -> bytes | None:
        """The upstream broke off: the bytes that end the client's stream (an error event and [DONE]; text the
        guard still holds back is dropped), or None when the stream has already ended (complete, blocked,
        failed). Not yet in the output digest: `sent` adds them once they are written."""
        if self.state.answer.stream_complete or (self.guard is not None and self.guard.ended):
            return None
        if self.guard is not None:
            self.guard.ended = True
        error = upstream_unavailable(f"the stream broke off ({detail})")
        return closing_events(error)

    def end_upstream_error(self, detail: str) -> bytes:
        """The upstream's stream cannot be guarded any further (it cannot be decoded, an event never ends): the
        bytes that end the client's stream closed (an error event and [DONE]); nothing more reaches it."""
        self.state.outcome = Outcome.UPSTREAM_UNAVAILABLE
        if self.guard is not None:
            self.guard.ended = True
        error = upstream_unavailable(f"the stream cannot be relayed ({detail})")
        return self._emit([closing_events(error)])

    def sent(self, data: bytes) -> None:
        """`data` reached the client outside the stream callable: the output digest covers it too."""
        self.hasher.update(data)

    def _emit(self, pieces: list[bytes]) -> bytes:
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        self.hasher.update(data)
        return data

    def observe(self, event: SseEvent) -> None:
        data = event.data
        if data is None:
            return
        answer = self.state.answer
        answer.sse_events += 1
        if event.is_done or event.event in TERMINAL_EVENTS:
            answer.stream_complete = True
        if answer.first_chunk_at is None:
            answer.first_chunk_at = self.clock()
        # Only the usage chunk is parsed here: vLLM sends `"usage": null` on every other chunk.
        if b'"usage":' in data and b'"usage":null' not in data and b'"usage": null' not in data:
            with contextlib.suppress(ValueError, AttributeError, RecursionError):
                record_usage(answer, json.loads(data).get("usage"))
        if self.peek:
            peek_chunk(data, answer)

    def observe_all(self, events: list[SseEvent]) -> None:
        """`observe` for the events of one read, with the per-read work done once."""
        answer = self.state.answer
        peek = self.peek
        count = 0
        for event in events:
            data = event.data
            if data is None:
                continue
            count += 1
            if count == 1 and answer.first_chunk_at is None:
                answer.first_chunk_at = self.clock()
            if data == b"[DONE]" or event.event in TERMINAL_EVENTS:
                answer.stream_complete = True
            # One search per event (vLLM sends `"usage": null` on every chunk but the last).
            at = data.find(b'"usage":')
            if at >= 0 and not data.startswith(b"null", at + 9 if data[at + 8:at + 9] == b" " else at + 8) \
                    and b'"usage":null' not in data and b'"usage": null' not in data:
                with contextlib.suppress(ValueError, AttributeError, RecursionError):
                    record_usage(answer, json.loads(data).get("usage"))
            if peek:
                peek_chunk(data, answer)
        answer.sse_events += count

    def finish(self) -> None:
        """Record the guard's verdicts and the digest of what the client got; safe to call twice."""
        if self.recorded:
            return
        self.recorded = True
        self.state.output_digest = self.hasher.hexdigest()
        guard = self.guard
        if guard is not None and guard.gate is not None:
            guard.gate.settle()
        if guard is not None and guard.scans:
            verdicts = guard.verdicts
            self.state.ledger.record(Direction.RESPONSE, verdicts.action, verdicts.decisions, verdicts.seconds)
            if guard.pending:  # judged windows whose verdict comes after the stream: back on the loop
                loop = asyncio.get_running_loop()
                for _, future in guard.pending:
                    future.add_done_callback(lambda f: loop.call_soon_threadsafe(self._late_verdict, f))

    def _late_verdict(self, future: Future[ScanResult]) -> None:
        """A semantic verdict on the last window, after the stream ended: recorded (telemetry and audit read
        it when they have not run yet) and logged when it would have blocked; the client already has the text."""
        if future.cancelled() or future.exception() is not None:
            return
        decisions = [d for d in future.result().decisions if d.finding.kind == "semantic"]
        if not decisions:
            return
        action = functools.reduce(strongest, (d.action for d in decisions))
        self.state.ledger.record(Direction.RESPONSE, action, decisions)
        if action is Action.BLOCK:
            log.warning("semantic block verdict arrived after the stream ended",
                        extra={"request_id": self.state.request_id,
                               "rules": sorted({d.finding.rule for d in decisions})})
        else:
            self.state.ledger.verdicts.setdefault(Direction.RESPONSE, Verdict.SKIPPED)


class DecodingRelay:
    """The stream callable of a guarded answer the upstream compressed although Warden asked for identity:
    chunks are decoded (bounded: proxy.bodies.StreamDecoder) before the SseRelay frames and guards them, and
    the client gets the events uncompressed (`Stream.responseheaders` dropped Content-Encoding). A chunk that
    cannot be decoded ends the stream closed."""

    __slots__ = ("decoder", "failed", "relay")

    def __init__(self, relay: SseRelay, decoder: StreamDecoder) -> None:
        self.relay = relay
        self.decoder = decoder
        self.failed = False

    def __call__(self, chunk: bytes) -> Iterable[bytes]:
        relay = self.relay
        if self.failed:
            if not chunk:
                relay.finish()
            return []
        try:
            plain = self.decoder.decode(chunk) if chunk else self.decoder.finish()
        except StreamDecodeError as exc:
            self.failed = True
            closing = []
            if relay.guard is None or not relay.guard.ended:  # a blocked stream has said its last word
                log.warning("cannot decode the upstream's stream; ending it", extra={
                    "request_id": relay.state.request_id, "encoding": self.decoder.encoding, "reason": str(exc)})
                closing.append(relay.end_upstream_error(f"it cannot be decoded: {exc}"))
            if not chunk:
                relay.finish()  # after the closing bytes: the output digest covers them
            return closing
        out = list(relay(plain)) if plain else []  # b"" would mean the end to the relay
        if not chunk:
            out += relay(b"")
        return out


class OpaqueRelay:
    """The stream callable of an unguarded answer in a content-encoding: its bytes go on as they come (framing
    compressed bytes finds no events and would hold the whole answer back until its end). The time to first
    chunk is stamped and the output digested; events are not observed (no usage from such a stream)."""

    __slots__ = ("relay",)

    def __init__(self, relay: SseRelay) -> None:
        self.relay = relay

    def __call__(self, chunk: bytes) -> Iterable[bytes]:
        relay = self.relay
        if not chunk:
            relay.finish()
            return []
        answer = relay.state.answer
        if answer.first_chunk_at is None:
            answer.first_chunk_at = relay.clock()
        relay.hasher.update(chunk)
        return [chunk]


def sse_relay_of(flow: http.HTTPFlow) -> SseRelay | None:
    """The flow's SseRelay, behind a DecodingRelay or an OpaqueRelay or not; None when its answer is not
    relayed by us."""
    stream = flow.response.stream if flow.response is not None else None
    if isinstance(stream, DecodingRelay | OpaqueRelay):
        return stream.relay
    return stream if isinstance(stream, SseRelay) else None


class Stream:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.clock = services.clock
        # One thread judges streamed windows with the semantic model: the model uses a core per call, and
        # a queue of windows is better than several calls fighting over two cores.
        self.judge_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warden-judge")

    @fail_closed
    def responseheaders(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        assert flow.response is not None
        headers = flow.response.headers
        strip_hop_by_hop(headers)
        if state is None:
            return
        ours: dict[bytes, str] = {}  # set in one pass (proxy/headers.py set_headers), in this order
        if state.client_close:
            # mitmproxy closes after this exchange when the response says so: the client's own `close` was
            # stripped with the other hop-by-hop headers before mitmproxy could read it (RFC 9112 section 9.6).
            ours[b"connection"] = "close"
        ours[b"x-warden-request-id"] = state.request_id
        if not header(headers, b"content-type").startswith("text/event-stream"):
            set_headers(headers, ours)
            return
        state.stream = True
        # The action known so far (the prompt's); the answer's own verdict goes to metrics and audit.
        ours[b"x-warden-action"] = state.ledger.action.value
        set_headers(headers, ours)
        guard = None
        config = self.services.config
        answered = 200 <= flow.response.status_code < 300
        gate = None
        if state.schema is not None and answered:
            gate = StreamGate(state, state.schema, SchemaPolicy(config.schema_policy),
                              offered_functions(state.route, state.request_json))
        if config.guard and state.route in INSPECTED_ROUTES and answered:
            vault = state.ledger.vault or PseudonymVault()

            def on_block(rules: tuple[str, ...]) -> None:
                state.outcome = Outcome.BLOCKED
                state.ledger.blocked_rules = rules

            policy = self.services.guard.policy
            judge = Judge(policy.whole_response, self.judge_pool) if policy.offload else None
            guard = StreamGuard(policy.response, vault, state.route, config.block_status, on_block, judge, gate)
        elif gate is not None:
            # The content guard is off, the schema is not: events are framed and parsed for the gate alone.
            guard = StreamGuard(None, PseudonymVault(), state.route, config.block_status, gate=gate)
        relay = SseRelay(state, self.clock, guard, self.services.digester.stream())
        encoding = header(headers, b"content-encoding").strip().lower()
        if encoding in ("", "identity"):
            flow.response.stream = relay
            if config.fast_lane:
                arm(flow, relay)  # False leaves every chunk to mitmproxy's own path
        elif guard is None:
            flow.response.stream = OpaqueRelay(relay)  # pass-through is exact: the client gets it compressed
        else:
            # Compressed although Warden asked for identity (or, schema only, did not ask): decoded here, so the
            # client gets it uncompressed.
            del flow.response.headers["content-encoding"]
            flow.response.headers.pop("content-length", None)
            flow.response.stream = DecodingRelay(relay, StreamDecoder(encoding, MAX_DECODED_CHUNK))

    def error(self, flow: http.HTTPFlow) -> None:
        """A stream cut short (client gone, upstream gone): still record what was decided and sent. When the
        upstream broke off, the client's stream ends with an OpenAI-shaped error event and [DONE] instead of
        a torn connection."""
        relay = sse_relay_of(flow)
        if relay is None:
            return
        message = flow.error.msg if flow.error else ""
        if not relay.recorded and "client" not in message.lower():
            try:
                closing = relay.broken_off(message or "connection lost")
                if closing is not None and write_to_client(flow, closing):
                    relay.sent(closing)
                elif closing is not None:
                    log.info("stream broke off; the error event could not be written, the client gets a reset or close",
                             extra={"request_id": relay.state.request_id})
            except Exception:  # the exchange is over either way: record it
                log.exception("cannot tell the client the stream broke off",
                              extra={"request_id": relay.state.request_id})
        relay.finish()
