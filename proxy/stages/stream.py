"""Stage 3 (responseheaders): SSE responses are relayed event by event, never buffered (DESIGN section 4).

The relay re-frames events from raw upstream chunks, stamps the time to first chunk and collects `usage`
on the way, because mitmproxy keeps no body after a streamed response.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable

from mitmproxy import http

from proxy.headers import strip_hop_by_hop
from proxy.sse import SseEvent, SseFramer
from proxy.stages.base import fail_closed
from proxy.state import FlowState, get_state


def record_usage(state: FlowState, usage: object) -> None:
    """Copy an OpenAI `usage` object into the flow state (absent cached tokens stay unknown)."""
    if not isinstance(usage, dict):
        return
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if isinstance(prompt, int):
        state.usage.prompt_tokens = prompt
    if isinstance(completion, int):
        state.usage.completion_tokens = completion
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        state.usage.cached_tokens = details["cached_tokens"]


# Responses API streams end with one of these typed events instead of `data: [DONE]`.
TERMINAL_EVENTS = frozenset({"response.completed", "response.failed", "response.incomplete"})


class SseRelay:
    """The `flow.response.stream` callable: raw chunks in, whole events out."""

    __slots__ = ("clock", "framer", "state")

    def __init__(self, state: FlowState, clock: Callable[[], float]) -> None:
        self.state = state
        self.clock = clock
        self.framer = SseFramer()

    def __call__(self, chunk: bytes) -> list[bytes]:
        # Always a list: mitmproxy forwards a returned b"" as an empty HTTP/1 chunk, which is the
        # chunked-encoding terminator and would end the client's stream early. [] holds data back.
        events = self.framer.feed(chunk) if chunk else self.framer.flush()  # b"" marks the end
        if not events:
            return []
        for event in events:
            self.observe(event)
        return [events[0].raw if len(events) == 1 else b"".join(e.raw for e in events)]

    def observe(self, event: SseEvent) -> None:
        data = event.data
        if data is None:
            return
        state = self.state
        state.sse_events += 1
        if event.is_done or event.event in TERMINAL_EVENTS:
            state.stream_complete = True
        if state.first_chunk_at is None:
            state.first_chunk_at = self.clock()
        # Only the usage chunk is parsed: vLLM sends `"usage": null` on every other chunk.
        if b'"usage":' in data and b'"usage":null' not in data and b'"usage": null' not in data:
            with contextlib.suppress(ValueError, AttributeError):
                record_usage(state, json.loads(data).get("usage"))


class Stream:
    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock

    @fail_closed
    def responseheaders(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        assert flow.response is not None
        strip_hop_by_hop(flow.response.headers)
        if state is None:
            return
        content_type = flow.response.headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            state.stream = True
            flow.response.stream = SseRelay(state, self.clock)
