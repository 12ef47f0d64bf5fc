"""Guarding streamed answers event by event (DESIGN section 4), for chat and completions SSE and the
Responses API's typed events.

Each text lane (a choice's content, a tool call's arguments, a Responses output part) has its own
`rules.stream.StreamScanner`, which holds back only what could still become a match and never rescans
released text, followed by a pseudonym restorer. Events are rewritten only when their text changed; the
rest pass through byte for byte. A block ends the stream with an OpenAI-shaped error event and
`data: [DONE]`, and everything after it is swallowed.

When the answer has a JSON schema, a `StreamGate` (proxy/schemas/stream_gate.py) checks each lane's raw text
before its scanner, and ends the stream with a `schema_violation` error event the same way, after the text
before the violation and what the lane held back. With the content guard off (`scanner` None) the guard only
frames lanes for the gate: text passes unscanned and events unchanged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

import orjson

from proxy.bodies import json_bytes
from proxy.errors import ApiError
from proxy.exceptions import ProxyError
from proxy.guard.engine import inspect
from proxy.guard.extract import MESSAGE_TEXT_KEYS, put, response_texts
from proxy.guard.ledger import strongest
from proxy.schemas.stream_gate import RESPONSES, RESPONSES_CALL, MalformedLane, SchemaCut, StreamGate
from proxy.sse import SseEvent
from proxy.state import Route
from rules.findings import Action
from rules.policy import Decision
from rules.pseudonym import PseudonymVault, StreamRestorer
from rules.scanner import Scanner, ScanResult
from rules.stream import StreamScanner, StreamStep

LaneKey = tuple[Any, ...]
DONE = b"data: [DONE]\n\n"


def sse_data(obj: object) -> bytes:
    return b"data: " + json_bytes(obj) + b"\n\n"


def closing_events(error: ApiError) -> bytes:
    """The last bytes of a stream Warden ends itself: the OpenAI-shaped error event and `data: [DONE]`."""
    return sse_data(error.payload()) + DONE


class Lenient(dict[str, Any]):
    """An event object that only the standard library's parser accepted (NaN, integers beyond 64 bits, lone
    surrogates, UTF-16): it is written back by the standard library too, so no value changes on the way."""


orjson_loads = orjson.loads


def parse_event_data(data: bytes) -> Any:
    """An event's JSON. orjson first: it parses a typical 200-byte chunk in ~0.8 us against ~3.7 us for
    `json.loads` (measured here), and this runs once per streamed event. Whatever orjson rejects is parsed
    again by `json.loads`, so exactly the documents the standard library accepts are accepted."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        obj = json.loads(data)
        return Lenient(obj) if isinstance(obj, dict) else obj


def event_data(obj: dict[str, Any]) -> bytes:
    """A rewritten event: orjson (~0.2 us against ~4.7 us for `json.dumps` on a chunk) unless the event came
    through the lenient parser or holds something orjson cannot write."""
    if not isinstance(obj, Lenient):
        try:
            return b"data: " + orjson.dumps(obj) + b"\n\n"
        except TypeError:
            pass
    return sse_data(obj)


_DELTA_TEXT_KEYS = ("content", *MESSAGE_TEXT_KEYS)  # each is its own lane per choice
_OTHER_TEXT = frozenset(MESSAGE_TEXT_KEYS)


@dataclass(slots=True)
class Lane:
    scanner: StreamScanner
    restorer: StreamRestorer
    emitted: list[str] = field(default_factory=list)  # what the client got, for Responses `.done` events
    released: int = 0  # characters emitted so far
    judged: int = 0  # characters already handed to the semantic judge

    def out(self, step: StreamStep) -> str:
        text = step.text
        # Text without "<" holds no placeholder, nor the start of one: the restorer is skipped (this runs once
        # per streamed event) unless it holds the start of one from an earlier event.
        if text and ("<" in text or self.restorer.holding):
            text = self.restorer.feed(text)
        if text:
            self.emitted.append(text)
            self.released += len(text)
        return text

    def flush(self) -> tuple[str, StreamStep]:
        step = self.scanner.flush()
        text = self.out(step)
        tail = self.restorer.flush()
        if tail:
            self.emitted.append(tail)
            self.released += len(tail)
        return text + tail, step

    def unjudged(self, overlap: int) -> str:
        """The released text not yet judged, with `overlap` characters of what was, for context."""
        text = "".join(self.emitted)
        start = max(0, self.judged - overlap)
        self.judged = len(text)
        return text[start:]


# A plain text delta in a run (`StreamGuard.on_events`): the event, its parsed object, the dict holding its
# text, the text's key in that dict, the text.
RunItem = tuple[SseEvent, dict[str, Any], dict[str, Any], str, str]


def plain_delta(event: SseEvent, obj: Any) -> tuple[LaneKey, dict[str, Any], str, str] | None:
    """The event as a plain text delta of one lane (its lane, the dict holding its text, the text's key, the
    text), or None when it is anything else (finished, several choices, tool calls, other text fields, an
    index that is not a plain integer, a lenient document): those go through `on_parsed` one at a time.
    Chat: one choice with a delta whose only text is `content` (missing or null counts as empty);
    completions: one choice with `text`; Responses: `response.output_text.delta`."""
    if type(obj) is not dict:  # Lenient included: written back by the standard library, one at a time
        return None
    choices = obj.get("choices")
    if choices is None:
        kind = obj.get("type")
        if not isinstance(kind, str):
            kind = event.event
        text = obj.get("delta")
        if kind != "response.output_text.delta" or type(text) is not str:
            return None
        output, content = obj.get("output_index"), obj.get("content_index")
        if not (output is None or type(output) is int) or not (content is None or type(content) is int):
            return None
        return ("responses", output, content), obj, "delta", text
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict or choice.get("finish_reason") is not None:
        return None
    index = choice.get("index", 0)
    if type(index) is not int:
        return None
    delta = choice.get("delta")
    if type(delta) is dict:
        if "tool_calls" in delta or not _OTHER_TEXT.isdisjoint(delta):
            return None
        text = delta.get("content")
        if text is None:
            text = ""
        elif type(text) is not str:
            return None
        return (index, "content"), delta, "content", text
    if delta is not None or "delta" in choice or type(choice.get("text")) is not str:
        return None
    return (index, "content"), choice, "text", choice["text"]


def split_run(run: list[RunItem], head: str, released: str, *, block: bool) -> list[bytes]:
    """Hand `released` (what a run released: `head`, the lane's text held back before the run, and the
    run's own text, masked, restored, held back in part) back to the run's events. Against the raw text
    (`head` before the first event's), each event whose text lies wholly within the unchanged beginning of
    `released` keeps it (the first one with `head` before it); the event where the two part gets its own text
    up to there and all the rest; the events after it get none (with `block`, they are dropped, and so is
    the parting event when it would carry only withheld text). Concatenated, the events carry `released`."""
    p = 0  # length of the common beginning of `released` and head + the run's text
    n = len(released)
    for k, item in enumerate(run):
        text = head + item[4] if k == 0 and head else item[4]
        if released.startswith(text, p):
            p += len(text)
            continue
        m = min(len(text), n - p)
        j = 0
        while j < m and released[p + j] == text[j]:
            j += 1
        p += j
        break
    out: list[bytes] = []
    start = 0
    last = len(run) - 1
    given = False
    for i, (event, obj, holder, name, own) in enumerate(run):
        text = head + own if i == 0 and head else own
        end = start + len(text)
        if given:
            if block:
                break
            piece = ""
        elif end <= p and i < last:
            piece = text
        else:
            piece = text[:p - start] + released[p:]
            given = True
        start = end
        if block and given and not piece and own:
            break
        if piece == own:
            out.append(event.raw)
            continue
        holder[name] = piece
        out.append(StreamGuard.reframe(event, obj) if name == "delta" else event_data(obj))
    return out


class MalformedEvent(ProxyError):
    """An event no client could follow (a choice index that is a list or an object): the stream ends as the
    upstream's error, like an event that is not JSON, not as a failure of Warden's own."""


class StreamBlocked(ProxyError):
    """A lane released a blocking decision; `text` is what it released before the blocking finding."""

    def __init__(self, key: LaneKey, text: str) -> None:
        super().__init__("stream blocked")
        self.key = key
        self.text = text


# What ends a stream from inside the guard: a block, a schema cut, an event or lane no client could follow.
STREAM_ENDINGS = (StreamBlocked, SchemaCut, MalformedEvent, MalformedLane)


@dataclass(slots=True)
class StreamVerdicts:
    """What the guard decided on this stream so far: fed into FlowState by the relay."""

    action: Action = Action.ALLOW
    decisions: list[Decision] = field(default_factory=list)
    blocking_rules: tuple[str, ...] = ()
    seconds: float = 0.0  # CPU spent scanning this stream

    def add(self, decisions: tuple[Decision, ...]) -> None:
        for d in decisions:
            self.decisions.append(d)
            self.action = strongest(self.action, d.action)


JUDGE_EVERY = 96  # released characters between two semantic verdicts on a stream
JUDGE_OVERLAP = 64  # characters of already judged text given again as context


@dataclass(frozen=True, slots=True)
class Judge:
    """The semantic model on a stream: windows of released text are judged in a worker thread, and a verdict
    that arrives later ends the stream at the next event (the model never runs in the stream callable)."""

    scanner: Scanner  # a scanner with the semantic detector; only its semantic decisions are used
    executor: Executor


class StreamGuard:
    """Not thread-safe: one per stream, fed from the stream callable. `scanner` None: the content guard is
    off and the guard only carries the schema `gate` (text passes as it came)."""

    def __init__(self, scanner: Scanner | None, vault: PseudonymVault, route: Route, block_status: int,
                 on_block: Callable[[tuple[str, ...]], None] | None = None, judge: Judge | None = None,
                 gate: StreamGate | None = None) -> None:
        self.scanner = scanner
        self.gate = gate
        self.vault = vault
        self.route = route
        self.block_status = block_status
        self.on_block = on_block
        self.judge = judge
        self.pending: list[tuple[LaneKey, Future[ScanResult]]] = []
        self.lanes: dict[LaneKey, Lane] = {}
        self.verdicts = StreamVerdicts()
        self.ended = False  # blocked or failed: nothing more goes to the client

    # -- the semantic judge --------------------------------------------------------------------------------

    def submit_judgement(self, key: LaneKey, lane: Lane, *, final: bool = False) -> None:
        if self.judge is None or lane.released - lane.judged < (1 if final else JUDGE_EVERY):
            return
        window = lane.unjudged(JUDGE_OVERLAP)
        self.pending.append((key, self.judge.executor.submit(self.judge.scanner.scan, window)))

    def collect_verdicts(self) -> None:
        """Verdicts that have arrived; a semantic block ends the stream now (StreamBlocked)."""
        if not self.pending:
            return
        waiting = []
        for key, future in self.pending:
            if not future.done():
                waiting.append((key, future))
                continue
            decisions = tuple(d for d in future.result().decisions if d.finding.kind == "semantic")
            self.verdicts.add(decisions)
            if any(d.action is Action.BLOCK for d in decisions):
                self.pending = []
                raise StreamBlocked(key, "")
        self.pending = waiting

    # -- lanes -------------------------------------------------------------------------------------------

    @property
    def scans(self) -> bool:
        """Whether the content guard scans this stream (else it only carries the schema gate)."""
        return self.scanner is not None

    def lane(self, key: LaneKey) -> Lane:
        lane = self.get_lane(key)
        if lane is None:
            assert self.scanner is not None
            lane = self.lanes[key] = Lane(StreamScanner(self.scanner, self.vault), self.vault.stream_restorer())
        return lane

    def get_lane(self, key: LaneKey) -> Lane | None:
        try:
            return self.lanes.get(key)
        except TypeError:  # an index from the event that cannot be hashed: a list or an object
            raise MalformedEvent("the model server sent an event whose index is not a number") from None

    def feed(self, key: LaneKey, text: str) -> str:
        """A lane's raw text: the schema gate's check first (SchemaCut at a character that cannot lead to a
        valid document), then the scan (StreamBlocked); what the client may see now is returned."""
        gate = self.gate
        if gate is not None:
            at = gate.check(key, text)
            if at is not None:
                self.cut_lane(key, text[:at])
            if self.scanner is None:
                return text
        return self.scan(key, text)

    def cut_lane(self, key: LaneKey, head: str) -> None:
        """The gate refused `key` after `head`: `head` is guarded as usual and the lane flushed, then
        SchemaCut (StreamBlocked when what is released holds a blocking finding: the block wins)."""
        assert self.gate is not None
        out = self.scan(key, head) if head and self.scanner is not None else head
        try:
            out += self.flush(key)
        except StreamBlocked as blocked:
            raise StreamBlocked(key, out + blocked.text) from None
        raise SchemaCut([(key, out)], self.gate.reject(key))

    def scan(self, key: LaneKey, text: str) -> str:
        lane = self.get_lane(key) or self.lane(key)
        started = time.perf_counter()
        step = lane.scanner.feed(text)
        self.verdicts.seconds += time.perf_counter() - started
        if step.decisions:
            self.verdicts.add(step.decisions)
        out = lane.out(step) if step.text else ""
        if step.blocked:
            raise StreamBlocked(key, out)
        if self.judge is not None:
            self.submit_judgement(key, lane)
        return out

    def flush(self, key: LaneKey) -> str:
        lane = self.get_lane(key)
        if lane is None:
            return ""
        text, step = lane.flush()
        self.verdicts.add(step.decisions)
        if step.blocked:
            raise StreamBlocked(key, text)
        self.submit_judgement(key, lane, final=True)  # its verdict may come after the stream: audited then
        return text

    # -- events ------------------------------------------------------------------------------------------

    def on_event(self, event: SseEvent) -> list[bytes]:
        if self.ended:
            return []
        data = event.data
        if data is None:
            return [event.raw]  # comments and keep-alives carry no text
        try:
            if self.pending:
                self.collect_verdicts()
            if data == b"[DONE]":
                return [*self.flush_all(), event.raw]
            try:
                obj = parse_event_data(data)
            except (ValueError, UnicodeDecodeError, RecursionError):
                return self.fail("the model server sent an event that is not JSON")
            return self.on_parsed(event, obj)
        except STREAM_ENDINGS as exc:
            return self.end_on(exc)

    def on_parsed(self, event: SseEvent, obj: Any) -> list[bytes]:
        """`on_event` once the event's JSON is parsed (semantic verdicts already collected)."""
        try:
            if not isinstance(obj, dict):
                return self.fail("the model server sent an event that is not a JSON object")
            choices = obj.get("choices")
            if isinstance(choices, list):
                if len(choices) == 1:
                    fast = self.on_one_delta(event, obj, choices[0])
                    if fast is not None:
                        return fast
                return self.on_choices(event, obj, choices)
            kind = obj.get("type") if isinstance(obj.get("type"), str) else event.event
            if isinstance(kind, str) and kind.startswith("response."):
                return self.on_responses_event(event, obj, kind)
            return [event.raw]
        except STREAM_ENDINGS as exc:
            return self.end_on(exc)

    def end_on(self, exc: StreamBlocked | SchemaCut | MalformedEvent | MalformedLane) -> list[bytes]:
        """The events that end the stream for one of STREAM_ENDINGS."""
        if isinstance(exc, StreamBlocked):
            return self.block(exc)
        if isinstance(exc, SchemaCut):
            return self.cut(exc)
        return self.fail(str(exc))

    # -- batches: the events of one upstream read ---------------------------------------------------------

    def on_events(self, events: list[SseEvent]) -> list[bytes]:
        """The events of one upstream read, for what `on_event` one at a time gives the client, in fewer
        steps. Each run of consecutive plain text deltas of one lane (`plain_delta`) is scanned as one text,
        and what the scan releases is split back over the run's events (`split_run`): every event keeps its
        own fields (id, logprobs, usage, indices, sequence numbers), only its text may change, and no event
        is merged or added. The released text is the same as one event at a time (the scanner's split
        invariant: a run is one more way to cut the lane's text), and so is the text before a block.
        With a schema gate the events go one at a time: its cuts are placed within an event."""
        if self.gate is not None or self.scanner is None:
            out: list[bytes] = []
            for event in events:
                out += self.on_event(event)
            return out
        out = []
        run: list[RunItem] = []
        run_key: LaneKey = ()
        for event in events:
            if self.ended:
                break
            data = event.data
            obj: Any = None
            plain = None
            if data is not None and data != b"[DONE]":
                try:
                    obj = orjson_loads(data)  # parse_event_data's first step, without the call
                except orjson.JSONDecodeError:
                    try:
                        obj = parse_event_data(data)
                    except (ValueError, UnicodeDecodeError, RecursionError):
                        obj = None
                if obj is not None:
                    plain = plain_delta(event, obj)
            if plain is not None:
                key, holder, name, text = plain
                if run and key != run_key:
                    out += self.scan_run(run_key, run)
                    run = []
                    if self.ended:
                        break
                run_key = key
                run.append((event, obj, holder, name, text))
                continue
            if run:
                out += self.scan_run(run_key, run)
                run = []
                if self.ended:
                    break
            if obj is None:
                out += self.on_event(event)  # no data, [DONE], or not JSON (parsed again only to fail)
                continue
            if self.pending:
                try:
                    self.collect_verdicts()
                except StreamBlocked as blocked:
                    out += self.block(blocked)
                    break
            out += self.on_parsed(event, obj)
        if run and not self.ended:
            out += self.scan_run(run_key, run)
        return out

    def scan_run(self, key: LaneKey, run: list[RunItem]) -> list[bytes]:
        """One lane's run of plain deltas: its joined text scanned once, the released text split back."""
        joined = run[0][4] if len(run) == 1 else "".join([item[4] for item in run])
        lane = self.lanes.get(key)
        head = lane.scanner.held if lane is not None and not lane.restorer.holding else ""
        try:
            if self.pending:
                self.collect_verdicts()
            released = self.scan(key, joined) if joined else ""
        except StreamBlocked as blocked:
            if blocked.key != key:  # a semantic verdict on another lane: nothing of this run goes out
                return self.block(blocked)
            # The text before the blocking finding, in the run's events up to where it ends; the events after
            # it never go out (their other fields, logprobs among them, would tell of the withheld text).
            out = split_run(run, head, blocked.text, block=True)
            return [*out, *self.block(StreamBlocked(key, ""))]
        if released == joined and not head:
            return [item[0].raw for item in run]
        return split_run(run, head, released, block=False)

    def on_one_delta(self, event: SseEvent, obj: dict[str, Any], choice: Any) -> list[bytes] | None:
        """The shape of nearly every chat chunk (one choice, a delta with `content` and nothing else to
        guard, not finished): the same result as `on_choices` with fewer steps. None: not that shape."""
        if not isinstance(choice, dict) or choice.get("finish_reason") is not None:
            return None
        delta = choice.get("delta")
        if not isinstance(delta, dict) or "tool_calls" in delta or not _OTHER_TEXT.isdisjoint(delta):
            return None
        text = delta.get("content")
        if not isinstance(text, str) or not text:
            return [event.raw]  # the role chunk, an empty delta: nothing to guard
        out = self.feed((choice.get("index", 0), "content"), text)
        if out == text:
            return [event.raw]
        delta["content"] = out
        return [event_data(obj)]

    def on_choices(self, event: SseEvent, obj: dict[str, Any], choices: list[Any]) -> list[bytes]:
        changed = False
        before: list[bytes] = []
        gate = self.gate
        released: list[tuple[LaneKey, str]] = []  # this event's guarded text so far, for a schema cut within it
        try:
            for position, choice in enumerate(choices):
                if not isinstance(choice, dict):
                    continue
                index = choice.get("index", position)
                delta = choice.get("delta")
                if isinstance(delta, dict):  # chat
                    for key in _DELTA_TEXT_KEYS:
                        text = delta.get(key)
                        if isinstance(text, str) and text:
                            out = self.feed((index, key), text)
                            changed |= out != text
                            delta[key] = out
                            released.append(((index, key), out))
                    calls = delta.get("tool_calls")
                    if isinstance(calls, list):
                        for n, call in enumerate(calls):
                            function = call.get("function") if isinstance(call, dict) else None
                            if not isinstance(function, dict):
                                continue
                            lane = (index, "tool", call.get("index", n))
                            if gate is not None and isinstance(function.get("name"), str) \
                                    and gate.name(lane, function["name"]):
                                raise SchemaCut([], gate.reject(lane))  # a function the request does not offer
                            if isinstance(function.get("arguments"), str):
                                out = self.feed(lane, function["arguments"])
                                changed |= out != function["arguments"]
                                function["arguments"] = out
                                released.append((lane, out))
                elif isinstance(choice.get("text"), str) and choice["text"]:  # completions
                    out = self.feed((index, "content"), choice["text"])
                    changed |= out != choice["text"]
                    choice["text"] = out
                if choice.get("finish_reason") is not None:
                    changed |= self.finish_choice(index, choice, before, obj)
        except SchemaCut as cut:
            cut.prior = before
            cut.released[:0] = released
            raise
        if not changed:
            return [*before, event.raw]
        return [*before, event_data(obj)]

    def finish_choice(self, index: Any, choice: dict[str, Any], before: list[bytes], obj: dict[str, Any]) -> bool:
        """Release what a finished choice still holds, inside its last event (tool arguments in an event of
        their own just before it). With a schema, its lanes are judged whole first: a violation ends the
        stream instead of this finish chunk (SchemaCut)."""
        if self.gate is not None:
            try:
                refused = self.gate.end_choice(index)
            except TypeError:
                raise MalformedEvent("the model server sent an event whose index is not a number") from None
            if refused is not None:
                self.cut_at_end(refused, [k for k in self.lanes if k[0] == index])
        changed = False
        for key in [k for k in self.lanes if k[0] == index]:
            tail = self.flush(key)
            if not tail:
                continue
            changed = True
            if key[1] == "tool":
                call = {"index": key[2], "function": {"arguments": tail}}
                extra = {k: v for k, v in obj.items() if k not in ("choices", "usage")}
                before.append(sse_data({**extra, "choices": [
                    {"index": index, "delta": {"tool_calls": [call]}, "finish_reason": None}]}))
            else:
                # The finish chunk's own text goes first, then the tail. Servers send `"content": null` there
                # (and `"text": null`); a value that is not text at all is left as it came, and the tail goes
                # in an event of its own just before.
                holder = choice["delta"] if isinstance(choice.get("delta"), dict) else choice
                name = key[1] if holder is not choice else "text"
                own = holder.get(name)
                if own is None or isinstance(own, str):
                    holder[name] = (own or "") + tail
                else:
                    before.append(self.text_event(key, tail))
        return changed

    def cut_at_end(self, refused: LaneKey, keys: list[LaneKey]) -> None:
        """A lane's whole text fails its schema: the `keys` lanes release what they hold, then SchemaCut."""
        assert self.gate is not None
        released = [(key, self.flush(key)) for key in keys]  # StreamBlocked from a flush: the block wins
        raise SchemaCut(released, self.gate.reject(refused))

    def on_responses_event(self, event: SseEvent, obj: dict[str, Any], kind: str) -> list[bytes]:
        key = ("responses", obj.get("output_index"), obj.get("content_index"))
        if kind == "response.output_text.delta" and isinstance(obj.get("delta"), str):
            out = self.feed(key, obj["delta"])
            if out == obj["delta"]:
                return [event.raw]
            obj["delta"] = out
            return [self.reframe(event, obj)]
        gate = self.gate
        if kind == "response.output_text.done":
            if gate is not None and gate.end_lane(key):
                self.cut_at_end(key, [key])
            if self.scanner is None:
                return [event.raw]
            tail = self.flush(key)
            before = []
            if tail:
                delta = {k: v for k, v in obj.items() if k not in ("text", "type", "sequence_number")}
                before.append(self.reframe(event, {"type": "response.output_text.delta", **delta, "delta": tail},
                                           "response.output_text.delta"))
            lane = self.get_lane(key)
            obj["text"] = "".join(lane.emitted) if lane else obj.get("text", "")
            return [*before, self.reframe(event, obj)]
        if gate is not None:
            self.gate_responses_event(gate, obj, kind)
        if self.scanner is None:
            return [event.raw]
        return [self.mask_whole(event, obj)]

    def gate_responses_event(self, gate: StreamGate, obj: dict[str, Any], kind: str) -> None:
        """The Responses events the schema gate reads beyond output text: function calls (their name on the
        added item, their arguments' deltas and end) and the answer's own end. A Responses function call's
        arguments are checked, not scanned (the content guard reads them in the whole `.done` events)."""
        call = (RESPONSES_CALL, obj.get("output_index"))
        if kind == "response.output_item.added":
            item = obj.get("item")
            if isinstance(item, dict) and item.get("type") == "function_call" and isinstance(item.get("name"), str) \
                    and gate.name(call, item["name"]):
                raise SchemaCut([], gate.reject(call))  # a function the request does not offer
        elif kind == "response.function_call_arguments.delta" and isinstance(obj.get("delta"), str):
            at = gate.check(call, obj["delta"])
            if at is not None:
                raise SchemaCut([(call, obj["delta"][:at])], gate.reject(call))
        elif kind == "response.function_call_arguments.done":
            if gate.end_lane(call):
                raise SchemaCut([], gate.reject(call))
        elif kind in ("response.completed", "response.incomplete"):
            refused = gate.end_all()
            if refused is not None:
                self.cut_at_end(refused, list(self.lanes))
        elif kind == "response.refusal.delta":
            gate.refusal(RESPONSES)
        elif kind == "response.failed":
            gate.abandon()  # the upstream's own failure: no answer to judge

    def mask_whole(self, event: SseEvent, obj: dict[str, Any]) -> bytes:
        """Events that repeat finished text (`response.completed`, `...item.done`, `...part.done`) are
        masked as whole answers: the same result the deltas got, by the stream scanner's invariant."""
        assert self.scanner is not None
        changed = False
        for container_key, route_body in (("response", lambda o: o), ("item", lambda o: {"output": [o]}),
                                          ("part", lambda o: {"output": [{"content": [o]}]})):
            inner = obj.get(container_key)
            if not isinstance(inner, dict):
                continue
            wrapped = route_body(inner)
            fields = response_texts(Route.RESPONSES, wrapped)
            inspection = inspect(self.scanner, fields, self.vault)
            self.verdicts.add(tuple(inspection.decisions))
            if inspection.action is Action.BLOCK:
                raise StreamBlocked(("whole",), "")
            new = {f.path: f.text for f in fields}
            new.update({f.path: text for f, text in inspection.rewritten})
            for f in fields:
                text = self.vault.restore(new[f.path]) if len(self.vault) else new[f.path]
                if text != f.text:
                    put(wrapped, f.path, text)
                    changed = True
        return self.reframe(event, obj) if changed else event.raw

    @staticmethod
    def reframe(event: SseEvent, obj: dict[str, Any], name: str | None = None) -> bytes:
        name = name or event.event
        head = f"event: {name}\n".encode() if name else b""
        return head + event_data(obj)

    def flush_all(self) -> list[bytes]:
        """End of stream without finish events (or with lanes still holding text): release the rest. With a
        schema, every lane still open is judged whole first (SchemaCut instead of the end)."""
        if self.gate is not None:
            refused = self.gate.end_all()
            if refused is not None:
                self.cut_at_end(refused, list(self.lanes))
        out: list[bytes] = []
        for key in list(self.lanes):
            tail = self.flush(key)
            if tail:
                out.append(self.text_event(key, tail))
        return out

    def text_event(self, key: LaneKey, text: str) -> bytes:
        """A synthetic event carrying `text` for one lane, in the shape of the stream it belongs to."""
        if key[0] == "responses":
            return self.reframe(SseEvent(b"", "response.output_text.delta", None),
                                {"type": "response.output_text.delta", "output_index": key[1],
                                 "content_index": key[2], "delta": text})
        if key[0] == RESPONSES_CALL:
            return self.reframe(SseEvent(b"", "response.function_call_arguments.delta", None),
                                {"type": "response.function_call_arguments.delta", "output_index": key[1],
                                 "delta": text})
        if len(key) > 2 and key[1] == "tool":
            return sse_data({"choices": [{"index": key[0], "delta": {"tool_calls": [
                {"index": key[2], "function": {"arguments": text}}]}, "finish_reason": None}]})
        if self.route is Route.COMPLETIONS:
            return sse_data({"choices": [{"index": key[0], "text": text, "finish_reason": None}]})
        return sse_data({"choices": [{"index": key[0], "delta": {key[1]: text}, "finish_reason": None}]})

    def end(self) -> list[bytes]:
        """The upstream's stream ended (b""): whatever lanes still hold is released."""
        if self.ended:
            return []
        try:
            return self.flush_all()
        except StreamBlocked as blocked:
            return self.block(blocked)
        except SchemaCut as cut:
            return self.cut(cut)

    # -- endings -----------------------------------------------------------------------------------------

    def block(self, blocked: StreamBlocked) -> list[bytes]:
        """Release the text before the blocking finding, then an error event and [DONE]."""
        self.ended = True
        rules = tuple(sorted({d.finding.rule for d in self.verdicts.decisions if d.action is Action.BLOCK}))
        self.verdicts.blocking_rules = rules
        if self.on_block is not None:
            self.on_block(rules)
        out: list[bytes] = []
        if blocked.text:
            out.append(self.text_event(blocked.key, blocked.text))
        error = ApiError(self.block_status, "invalid_request_error", "content_blocked",
                         f"The model's answer was blocked by policy (rules: {', '.join(rules) or 'unknown'}).",
                         param="output", rules=rules)
        out.append(closing_events(error))
        return out

    def cut(self, cut: SchemaCut) -> list[bytes]:
        """The answer cannot fit its schema: what was released before the violation, then the
        schema_violation error event and [DONE] (recorded by the gate)."""
        self.ended = True
        out = [*cut.prior, *(self.text_event(key, text) for key, text in cut.released if text)]
        out.append(closing_events(cut.error))
        return out

    def fail(self, why: str) -> list[bytes]:
        self.ended = True
        error = ApiError(502, "upstream_error", "invalid_upstream_stream", why)
        return [closing_events(error)]
