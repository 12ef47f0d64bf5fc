"""Streamed answers checked against their JSON schemas as they arrive (issue 21; DESIGN sections 4 and 5).

One `rules.schema.incremental.StreamChecker` per text lane that has a schema: a chat choice's `content`
(`plan.content`), a chat tool call's `function.arguments` (`plan.tools[name]`, the name from the first delta
of that tool-call index), a Responses output text part (`plan.content`) and a Responses function call's
arguments (`plan.tools[name]`, the name on its `response.output_item.added` item). Reasoning and refusal
lanes are not the answer and are not checked. The gate sits before the stream guard's scanner in each lane
(proxy/guard/stream.py): the model's own text is judged, then the guard masks what it releases, the order
whole answers get (the schema judges the model's answer, masking comes after).

Under `reject`, and `reask` (a stream's text is already released: it is never asked again), the first
character that cannot lead to a valid document ends the stream: the text before it is released (guarded),
then an error event with code `schema_violation` and `data: [DONE]`; nothing after it reaches the client.
At a lane's end (its choice's finish_reason, `.done`, `response.completed`, `[DONE]`, the upstream closing)
the full validator judges the complete text before the finish chunk goes out: a document invalid only as a
whole (a missing `required` property, an unfinished document cut by max_tokens) ends the stream the same
way, instead of the finish chunk. Under `flag` nothing is cut, early or late, and the result INVALID is
recorded; the `X-Warden-Schema` header cannot say so on a stream, whose headers left before its first event
(telemetry and the audit record carry the result).

One result per exchange in FlowState.schema.results: REJECTED at a cut; else, when the stream ends, INVALID
if a lane failed (flag; REJECTED under reject, when the content guard's block ended the stream first), VALID
if every lane with a schema ended valid, and none when the stream ended before its lanes did (blocked,
broken off, failed upstream): no complete answer was judged.

What counts is what counts for whole answers (proxy/schemas/answer.py), and `param` names the failing text
the same way: a choice (or a Responses answer) that ends with no text, refusal or tool call is judged as the
empty text against `plan.content` (not a document); a refusal, content that is only whitespace beside tool
calls (models emit "\\n\\n" before calling a tool) and a call to an offered function without `parameters`
are not judged; a call to a function the request does not offer, while the plan has tool schemas, is a
violation at its name (keyword `name`), before any of that call reaches the client.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from proxy.errors import ApiError, schema_violation
from proxy.exceptions import ProxyError
from proxy.schemas.answer import MAX_MESSAGES, MAX_NAMES_LISTED, declared_names
from proxy.schemas.plan import SchemaFacts, SchemaPolicy, SchemaResult
from proxy.state import FlowState, Outcome, Route
from rules.schema import CompiledSchema, Violation
from rules.schema.document import JSON_WHITESPACE
from rules.schema.incremental import StreamChecker

log = logging.getLogger("warden.schema")

LaneKey = tuple[Any, ...]  # the stream guard's lane keys, plus RESPONSES_CALL lanes of the gate's own
RESPONSES = "responses"  # ("responses", output_index, content_index): a Responses output text part
RESPONSES_CALL = "responses-call"  # ("responses-call", output_index): a Responses function call's arguments
TOOL = "tool"  # (choice index, "tool", tool-call index): a chat tool call's arguments
CONTENT = "content"  # (choice index, "content"): a chat choice's message text
REFUSAL = "refusal"  # (choice index, "refusal"): a chat choice's refusal (not judged: it answers all the same)


class Checker(Protocol):
    """What the gate needs of a lane's checker (rules.schema.incremental.StreamChecker)."""

    violation: Violation | None

    def feed(self, text: str) -> int | None: ...

    def end(self) -> Violation | None: ...


class SchemaCut(ProxyError):
    """The stream ends for its schema: `released` is the guarded text of each lane to send before the error
    event (the text before the violation, then what the lane held back), `prior` whole events to send
    before those; `error` is the schema_violation event's payload."""

    def __init__(self, released: list[tuple[LaneKey, str]], error: ApiError) -> None:
        super().__init__("stream cut for its schema")
        self.released = released
        self.error = error
        self.prior: list[bytes] = []


class MalformedLane(ProxyError):
    """A lane index from the event that cannot be a key (a list, an object): the upstream's stream is broken."""


@dataclass(slots=True)
class GateLane:
    param: str  # where the client reads this text, for the error's `param`
    schema: CompiledSchema | None
    checker: Checker | None  # None: nothing to check (a tool without a parameters schema, whitespace by tools)
    blank: bool = True  # only JSON whitespace so far
    ended: bool = False
    valid: bool = False  # ended, and the full validator accepted the whole text
    violation: str | None = None  # why not (a rules.schema Violation message: the schema's words, no answer text)


MAX_INDEX_DIGITS = 4  # a pointer's all-digit token longer than this is shown as `*` (see `quotable`)


def quotable(violation: Violation | None, schema: CompiledSchema) -> str:
    """The violation's message with its pointer's object keys that the schema does not spell as `*`, as whole
    answers quote them (proxy.schemas.answer.quotable): a map's keys are the model's own text. A stream is
    judged before its document exists, so an all-digit token cannot be told an array index from a key: it is
    kept up to MAX_INDEX_DIGITS digits (an index; a key that short says little) and shown as `*` beyond."""
    if violation is None:
        violation = Violation("", "json", "the answer cannot become a valid document")
    if not violation.pointer:
        return violation.message()
    names = declared_names(schema)
    tokens = []
    for token in violation.pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        digits = token.isdigit() and token.isascii() and len(token) <= MAX_INDEX_DIGITS
        tokens.append(token if digits or key in names else "*")
    return Violation("".join("/" + t for t in tokens), violation.keyword, violation.detail).message()


def not_offered(offered: Collection[str], tools: Collection[str]) -> str:
    """The violation of a call to a function the request does not offer (proxy/schemas/answer.py's words)."""
    listed = sorted(set(offered) | set(tools))
    names = ", ".join(listed[:MAX_NAMES_LISTED]) + (", ..." if len(listed) > MAX_NAMES_LISTED else "")
    return f"the function called is not one the request offers ({names}) (keyword `name`)"


def _answer_of(key: LaneKey) -> object:
    """The answer a lane belongs to: a chat choice's index, or the one Responses answer."""
    return RESPONSES if key[0] in (RESPONSES, RESPONSES_CALL) else key[0]


def unique_keys_checker(schema: CompiledSchema) -> StreamChecker:
    """Answers with a repeated property name are refused whole (rules/schema/document.py), so a member's value
    is final when it ends and is judged there: a wrong type is cut at its first character, not at `}`."""
    return StreamChecker(schema, unique_keys=True)


class StreamGate:
    """The schema checks of one stream. Not thread-safe: fed from the stream callable, through the guard.
    `offered`: the request's function names (proxy.schemas.answer.offered_functions)."""

    __slots__ = ("abandoned", "cuts", "facts", "lanes", "make_checker", "offered", "plan", "recorded", "refused",
                 "route", "skipped", "state")

    def __init__(self, state: FlowState, facts: SchemaFacts, policy: SchemaPolicy, offered: Collection[str] = (),
                 make_checker: Callable[[CompiledSchema], Checker] = unique_keys_checker) -> None:
        self.state = state
        self.facts = facts
        self.plan = facts.plan
        self.route = state.route
        self.cuts = policy is not SchemaPolicy.FLAG  # reask is reject on a stream: its text is already out
        self.offered = offered
        self.make_checker = make_checker
        self.lanes: dict[LaneKey, GateLane] = {}
        self.skipped: set[LaneKey] = set()  # lanes that are not the answer (reasoning, refusal)
        self.refused: set[object] = set()  # answers (a choice index, RESPONSES) that carry a refusal
        self.abandoned = False  # the upstream reported its own failure: there is no answer to judge
        self.recorded = False

    # -- lanes -------------------------------------------------------------------------------------------

    def _open(self, key: LaneKey, name: str | None = None) -> GateLane | None:
        plan = self.plan
        head = key[0]
        schema: CompiledSchema | None
        if head == RESPONSES:
            schema, param = plan.content, "output"
        elif head == RESPONSES_CALL:
            schema, param = plan.tools.get(name) if name else None, f"output[{key[1]}].arguments"
        elif len(key) == 3 and key[1] == TOOL:
            where = "" if head == 0 else f"choices[{head}].message."
            schema, param = plan.tools.get(name) if name else None, f"{where}tool_calls[{key[2]}].function.arguments"
        elif len(key) == 2 and key[1] == CONTENT:
            schema, param = plan.content, "output" if head == 0 else f"choices[{head}].message.content"
        else:
            if len(key) == 2 and key[1] == REFUSAL:
                self.refused.add(head)
            self.skipped.add(key)
            return None
        lane = self.lanes[key] = GateLane(param, schema, self.make_checker(schema) if schema is not None else None)
        return lane

    def name(self, key: LaneKey, name: str) -> bool:
        """A tool call's name, from its first delta (chat) or its `output_item.added` item (Responses): its
        lane opens with that tool's parameters schema (later names for the same call change nothing). True:
        the request offers no such function, and the stream must end here (`reject` gives its error)."""
        try:
            if key in self.lanes:
                return False
            lane = self._open(key, name)
        except TypeError:
            raise MalformedLane("the model server sent an event whose index is not a number") from None
        tools = self.plan.tools
        if lane is None or name in tools or not tools or name in self.offered:
            return False
        lane.param = lane.param.removesuffix(".arguments") + ".name"
        lane.violation = not_offered(self.offered, tools)
        return self.cuts

    def refusal(self, answer: object) -> None:
        """A Responses answer carries a refusal (`response.refusal.delta`): it is not judged as empty."""
        self.refused.add(answer)

    def check(self, key: LaneKey, text: str) -> int | None:
        """Feed a lane's raw text: None to go on, else the index in `text` of the first character that cannot
        lead to a valid document, and the stream must end there (`reject` then gives its error). Under
        `flag` never an index: the violation is only recorded."""
        try:
            lane = self.lanes.get(key)
            if lane is None:
                if key in self.skipped:
                    return None
                lane = self._open(key)
                if lane is None:
                    return None
        except TypeError:
            raise MalformedLane("the model server sent an event whose index is not a number") from None
        checker = lane.checker
        if checker is None or lane.ended or lane.violation is not None:
            # Text after a lane's end (an upstream that goes on after finish_reason) is not judged again.
            return None
        if lane.blank and text.strip(JSON_WHITESPACE):
            lane.blank = False
        at = checker.feed(text)
        if at is None:
            return None
        assert lane.schema is not None
        lane.violation = quotable(checker.violation, lane.schema)
        return at if self.cuts else None

    def end_lane(self, key: LaneKey) -> bool:
        """A lane's text is complete: the full validator judges it. True: the stream must end for it."""
        lane = self.lanes.get(key)
        if lane is None or lane.ended:
            return False
        lane.ended = True
        if lane.checker is None or lane.violation is not None:
            return False
        violation = lane.checker.end()
        if violation is None:
            lane.valid = True
            return False
        assert lane.schema is not None
        lane.violation = quotable(violation, lane.schema)
        return self.cuts

    def _end(self, keys: Iterable[LaneKey]) -> LaneKey | None:
        """End the lanes of one answer; the first that must end the stream, if any."""
        keys = list(keys)
        tools = any(len(k) == 3 and k[1] == TOOL for k in keys)
        for key in keys:
            lane = self.lanes[key]
            if tools and lane.blank and not lane.ended and key[1:] == (CONTENT,):
                lane.checker = None  # chat's "\n\n" before a tool call is no answer of its own
            if self.end_lane(key):
                return key
        return None

    def _empty(self, key: LaneKey) -> LaneKey | None:
        """An answer that ended without text, refusal or tool call: judged as the empty text, when it has a
        content schema."""
        if self.plan.content is None or key in self.lanes or _answer_of(key) in self.refused:
            return None
        self._open(key)
        return key if self.end_lane(key) else None

    def end_choice(self, index: object) -> LaneKey | None:
        """A chat choice finished (its finish_reason): its lanes end. The lane that must end the stream, if any."""
        keys = [k for k in self.lanes if k[0] == index and k[0] not in (RESPONSES, RESPONSES_CALL)]
        if not keys:
            return self._empty((index, CONTENT))
        return self._end(keys)

    def end_all(self) -> LaneKey | None:
        """The answer is complete (`[DONE]`, `response.completed` or `.incomplete`, the upstream closing):
        every lane still open ends. The lane that must end the stream, if any."""
        if self.abandoned:
            return None
        if not self.lanes:
            return self._empty((RESPONSES, 0, 0) if self.route is Route.RESPONSES else (0, CONTENT))
        answers: dict[object, list[LaneKey]] = {}
        for key in self.lanes:
            answers.setdefault(_answer_of(key), []).append(key)
        for keys in answers.values():
            found = self._end(keys)
            if found is not None:
                return found
        return None

    def abandon(self) -> None:
        """The upstream reported its own failure (`response.failed`): open lanes end unjudged."""
        self.abandoned = True
        for lane in self.lanes.values():
            lane.ended = True

    # -- results -----------------------------------------------------------------------------------------

    def reject(self, key: LaneKey) -> ApiError:
        """The stream ends for `key`'s violation: recorded (REJECTED, the exchange's outcome), and the error
        event's payload returned."""
        lane = self.lanes[key]
        messages = (lane.violation,) if lane.violation is not None else ()
        facts = self.facts
        facts.results.append(SchemaResult.REJECTED)
        facts.violations = messages
        self.recorded = True
        self.state.outcome = Outcome.SCHEMA_VIOLATION
        self.state.error_detail = "schema_violation"  # as a whole answer refused for its schema records it
        log.info("streamed answer cut for its schema", extra={
            "request_id": self.state.request_id, "param": lane.param, "violations": messages})
        return schema_violation(lane.param, messages, facts.attempts)

    def settle(self) -> None:
        """The stream is over: its one result, unless a cut already recorded it. Safe to call twice."""
        if self.recorded:
            return
        self.recorded = True
        judged = [lane for lane in self.lanes.values() if lane.checker is not None or lane.violation is not None]
        invalid = [lane for lane in judged if lane.violation is not None]
        if invalid:
            several = len(invalid) > 1  # each message then says which text, as whole answers' do
            # Under reject a violation without a cut is one the content guard's block ended first: refused all
            # the same.
            self.facts.results.append(SchemaResult.REJECTED if self.cuts else SchemaResult.INVALID)
            self.facts.violations = tuple(f"{lane.param}: {lane.violation}" if several else str(lane.violation)
                                          for lane in invalid[:MAX_MESSAGES])
        elif judged and all(lane.valid for lane in judged):
            self.facts.results.append(SchemaResult.VALID)
