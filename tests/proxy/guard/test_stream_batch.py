"""Batches (`StreamGuard.on_events`): the events of one upstream read, guarded together, give the client the
same text as one event at a time, block at the same point, and keep every event and its own fields."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.guard.engine import Policy, compile_policy
from proxy.guard.stream import StreamGuard
from proxy.sse import SseFramer
from proxy.state import Route
from tests.proxy.guard.test_stream import ANSWER, CARD, ID, chat_sse, client_text, expected_text, vault_with_phone

BOMB = "Sure. Here is how to make a bomb: step one, and more text after it."


@pytest.fixture(scope="module")
def policy() -> Policy:
    return compile_policy([], request_pii="pseudonymize")


def run(policy: Policy, raw: bytes, cuts: list[int], *, batched: bool, route: Route = Route.CHAT) -> bytes:
    """What the client receives when the upstream's bytes arrive cut at `cuts`: each read's events guarded
    as one batch, or one at a time."""
    guard = StreamGuard(policy.response, vault_with_phone(), route, 400)
    framer = SseFramer()
    out: list[bytes] = []

    def handle(events: list[Any]) -> None:
        if batched:
            out.extend(guard.on_events(events))
        else:
            for event in events:
                out.extend(guard.on_event(event))

    last = 0
    for cut in [*sorted(set(cuts)), len(raw)]:
        handle(framer.feed(raw[last:cut]))
        last = cut
    handle(framer.flush())
    out += guard.end()
    return b"".join(out)


def blocks(raw: bytes) -> list[bytes]:
    return [b for b in raw.split(b"\n\n") if b]


def before_error(raw: bytes) -> tuple[str, list[bytes]]:
    """The client's text before the error event, and the events from the error event on."""
    events = blocks(raw)
    at = next((i for i, b in enumerate(events) if b.startswith(b'data: {"error"')), len(events))
    return client_text(b"\n\n".join(events[:at]) + b"\n\n"), events[at:]


def test_every_single_cut_position(policy: Policy) -> None:
    raw = chat_sse(ANSWER, per_event=5)
    want = expected_text(policy, ANSWER)
    for cut in range(len(raw) + 1):  # inside multi-byte characters, inside `data:`, everywhere
        out = run(policy, raw, [cut], batched=True)
        assert client_text(out) == want, cut
        assert ID.encode() not in out, cut
        assert len(blocks(out)) == len(blocks(raw)), cut  # no event merged, none added


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=4000), max_size=25), st.integers(min_value=1, max_value=9))
def test_batched_and_one_at_a_time_release_the_same_text(policy: Policy, cuts: list[int], per_event: int) -> None:
    raw = chat_sse(ANSWER, per_event=per_event)
    cuts = [c for c in cuts if c <= len(raw)]
    batched = run(policy, raw, cuts, batched=True)
    assert client_text(batched) == client_text(run(policy, raw, cuts, batched=False)) \
        == expected_text(policy, ANSWER)
    for value in (ID.encode(), CARD.encode(), " ".join([CARD[:4], CARD[4:8], CARD[8:12], CARD[12:]]).encode()):
        assert value not in batched


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3000), max_size=12), st.integers(min_value=1, max_value=9))
def test_batched_and_one_at_a_time_block_at_the_same_point(policy: Policy, cuts: list[int], per_event: int) -> None:
    raw = chat_sse(BOMB, per_event=per_event)
    cuts = [c for c in cuts if c <= len(raw)]
    text, ending = before_error(run(policy, raw, cuts, batched=True))
    assert (text, ending) == before_error(run(policy, raw, cuts, batched=False))
    assert text.startswith("Sure.") and "bomb" not in text
    assert json.loads(ending[0][6:])["error"]["code"] == "content_blocked" and ending[1:] == [b"data: [DONE]"]


def test_block_at_every_cut_position(policy: Policy) -> None:
    raw = chat_sse(BOMB, per_event=4)
    for cut in range(0, len(raw) + 1, 3):
        batched = run(policy, raw, [cut], batched=True)
        assert before_error(batched) == before_error(run(policy, raw, [cut], batched=False)), cut
        assert b"step one" not in batched and b"bomb" not in batched, cut


def test_every_event_keeps_its_own_fields(policy: Policy) -> None:
    """Only the text field changes: ids, logprobs, usage and indices stay on the event they came with."""
    pieces = [ANSWER[i:i + 3] for i in range(0, len(ANSWER), 3)]
    events = [{"id": f"c{k}", "object": "chat.completion.chunk", "usage": None,
               "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None,
                            "logprobs": {"content": [{"token": f"t{k}", "logprob": -0.5}]}}]}
              for k, piece in enumerate(pieces)]
    raw = b"".join(b"data: " + json.dumps(e, ensure_ascii=False).encode() + b"\n\n" for e in events)
    out = [json.loads(b[6:]) for b in blocks(run(policy, raw + b"data: [DONE]\n\n", [], batched=True))
           if b.startswith(b"data: {")]

    def without_text(e: dict[str, Any]) -> dict[str, Any]:
        e = json.loads(json.dumps(e))
        for choice in e["choices"]:
            choice["delta"].pop("content", None)
        return e

    assert [without_text(e) for e in out[:len(events)]] == [without_text(e) for e in events]
    assert client_text(b"\n\n".join(b"data: " + json.dumps(e).encode() for e in out) + b"\n\n") \
        == expected_text(policy, ANSWER)


def test_completions_and_responses_streams(policy: Policy) -> None:
    def completion(text: str, finish: str | None = None) -> bytes:
        return b"data: " + json.dumps({"choices": [{"index": 0, "text": text, "finish_reason": finish}]}).encode() \
            + b"\n\n"

    text = f"id {ID} ok and card {CARD} done"
    raw = b"".join([*(completion(text[i:i + 4]) for i in range(0, len(text), 4)), completion("", "stop"),
                    b"data: [DONE]\n\n"])
    for cut in range(0, len(raw), 11):
        assert client_text(run(policy, raw, [cut], batched=True, route=Route.COMPLETIONS)) \
            == client_text(run(policy, raw, [cut], batched=False, route=Route.COMPLETIONS)) \
            == "id 110105********1239 ok and card ************7894 done"

    def typed(name: str, payload: dict[str, object]) -> bytes:
        return f"event: {name}\n".encode() + b"data: " + json.dumps({"type": name, **payload}).encode() + b"\n\n"

    raw = b"".join([
        *(typed("response.output_text.delta", {"output_index": 0, "content_index": 0, "delta": text[i:i + 5],
                                               "sequence_number": i}) for i in range(0, len(text), 5)),
        typed("response.output_text.done", {"output_index": 0, "content_index": 0, "text": text}),
    ])

    def deltas(out: bytes) -> tuple[str, list[int]]:
        parsed = [json.loads(b[b.index(b"data: ") + 6:]) for b in blocks(out) if b"output_text.delta" in b]
        return "".join(p["delta"] for p in parsed), [p["sequence_number"] for p in parsed if "sequence_number" in p]

    for cut in range(0, len(raw), 13):
        batched = run(policy, raw, [cut], batched=True, route=Route.RESPONSES)
        assert deltas(batched)[0] == deltas(run(policy, raw, [cut], batched=False, route=Route.RESPONSES))[0] \
            == "id 110105********1239 ok and card ************7894 done"
        assert deltas(batched)[1] == list(range(0, len(text), 5))  # every event, its own sequence number
        assert CARD.encode() not in batched


def test_interleaved_choices_are_guarded_per_lane(policy: Policy) -> None:
    """n=2: the runs break at every change of lane, and each choice gets the text one at a time gives it."""
    texts = [f"A 身份证{ID} end", f"B card {CARD} end"]
    events = []
    for i in range(0, max(map(len, texts)), 3):
        for index, text in enumerate(texts):
            if text[i:i + 3]:
                events.append({"choices": [{"index": index, "delta": {"content": text[i:i + 3]},
                                            "finish_reason": None}]})
    raw = b"".join(b"data: " + json.dumps(e, ensure_ascii=False).encode() + b"\n\n" for e in events) \
        + b"data: [DONE]\n\n"

    def per_choice(out: bytes) -> list[str]:
        got = ["", ""]
        for b in blocks(out):
            if b.startswith(b"data: {"):
                for choice in json.loads(b[6:])["choices"]:
                    got[choice["index"]] += choice["delta"].get("content") or ""
        return got

    assert per_choice(run(policy, raw, [], batched=True)) == per_choice(run(policy, raw, [], batched=False)) \
        == [expected_text(policy, t) for t in texts]
