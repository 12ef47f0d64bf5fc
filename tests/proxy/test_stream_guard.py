"""The stream guard: for real payloads split at every byte position, the client gets the same text as the
non-streamed answer, and no listed value is ever visible."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.extract import TextField
from proxy.guard import Policy, compile_policy, inspect
from proxy.sse import SseFramer
from proxy.state import Route
from proxy.stream_guard import StreamGuard
from rules import masking
from rules.pseudonym import PseudonymVault

ID = "110105199003071239"
CARD = "6222021234567894"
PHONE = "13812345678"
ANSWER = f"好的，您的身份证{ID}和银行卡{CARD[:4]} {CARD[4:8]} {CARD[8:12]} {CARD[12:]}已登记，联系 <CN_MOBILE_1> 即可。"


@pytest.fixture(scope="module")
def policy() -> Policy:
    return compile_policy([], request_pii="pseudonymize")


def chat_sse(text: str, per_event: int = 3, usage: bool = True) -> bytes:
    def event(payload: dict[str, object]) -> bytes:
        return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"

    out = [event({"id": "c1", "object": "chat.completion.chunk",
                  "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})]
    for i in range(0, len(text), per_event):
        out.append(event({"id": "c1", "object": "chat.completion.chunk",
                          "choices": [{"index": 0, "delta": {"content": text[i:i + per_event]},
                                       "finish_reason": None}]}))
    out.append(event({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    if usage:
        out.append(event({"id": "c1", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 9}}))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def vault_with_phone() -> PseudonymVault:
    vault = PseudonymVault()
    assert vault.pseudonymize("CN_MOBILE", PHONE) == "<CN_MOBILE_1>"
    return vault


def relay(policy: Policy, raw: bytes, cuts: list[int], route: Route = Route.CHAT) -> bytes:
    """What the client receives when the upstream's bytes arrive cut at `cuts`."""
    guard = StreamGuard(policy.response, vault_with_phone(), route, 400)
    framer = SseFramer()
    out: list[bytes] = []
    last = 0
    for cut in [*sorted(set(cuts)), len(raw)]:
        for event in framer.feed(raw[last:cut]):
            out += guard.on_event(event)
        last = cut
    for event in framer.flush():
        out += guard.on_event(event)
    out += guard.end()
    return b"".join(out)


def client_text(raw: bytes) -> str:
    text = ""
    for block in raw.split(b"\n\n"):
        if block.startswith(b"data: {"):
            payload = json.loads(block[6:])
            for choice in payload.get("choices", []):
                text += choice.get("delta", {}).get("content") or choice.get("text") or ""
    return text


def expected_text(policy: Policy, text: str) -> str:
    vault = vault_with_phone()
    result = policy.response.scan(text)
    return vault.restore(masking.apply(text, result, vault))


def test_whole_answer_masked_and_restored(policy: Policy) -> None:
    out = relay(policy, chat_sse(ANSWER), [])
    text = client_text(out)
    assert text == expected_text(policy, ANSWER)
    assert ID not in text and CARD[:4] + " " + CARD[4:8] not in text
    assert PHONE in text  # the client's own value, restored
    assert out.endswith(b"data: [DONE]\n\n")
    assert b'"usage": {"prompt_tokens": 3' in out


def test_every_single_cut_position(policy: Policy) -> None:
    raw = chat_sse(ANSWER, per_event=5)
    want = expected_text(policy, ANSWER)
    for cut in range(len(raw) + 1):  # inside multi-byte characters, inside `data:`, everywhere
        out = relay(policy, raw, [cut])
        assert client_text(out) == want, cut
        assert ID.encode() not in out, cut


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=4000), max_size=25), st.integers(min_value=1, max_value=9))
def test_any_split_any_event_size_equals_whole(policy: Policy, cuts: list[int], per_event: int) -> None:
    raw = chat_sse(ANSWER, per_event=per_event)
    out = relay(policy, raw, [c for c in cuts if c <= len(raw)])
    assert client_text(out) == expected_text(policy, ANSWER)
    for value in (ID.encode(), CARD.encode(), " ".join([CARD[:4], CARD[4:8], CARD[8:12], CARD[12:]]).encode()):
        assert value not in out


def test_streamed_equals_non_streamed_inspection(policy: Policy) -> None:
    """The non-streamed path (proxy.guard.inspect, then restore) gives the client the same text."""
    vault = vault_with_phone()
    inspection = inspect(policy.response, [TextField(("t",), ANSWER)], vault)
    whole = vault.restore(inspection.rewritten[0][1])
    assert client_text(relay(policy, chat_sse(ANSWER), [7, 100, 333])) == whole


def test_block_mid_stream_ends_with_error_event_and_done(policy: Policy) -> None:
    answer = "Sure. Here is how to make a bomb: step one, and more text after it."
    out = relay(policy, chat_sse(answer), [11, 50])
    events = [e for e in out.split(b"\n\n") if e]
    assert events[-1] == b"data: [DONE]"
    error = json.loads(events[-2][6:])["error"]
    assert error["code"] == "content_blocked" and error["rules"] == ["weapons"]
    text = client_text(out)
    assert "bomb" not in text and text.startswith("Sure.")
    assert "step one" not in out.decode()


def test_completions_stream(policy: Policy) -> None:
    def event(text: str, finish: str | None = None) -> bytes:
        return b"data: " + json.dumps({"choices": [{"index": 0, "text": text, "finish_reason": finish}]}).encode() \
            + b"\n\n"

    raw = b"".join([event(f"id {ID[:9]}"), event(ID[9:] + " ok"), event("", "stop"), b"data: [DONE]\n\n"])
    out = relay(policy, raw, [], Route.COMPLETIONS)
    assert client_text(out) == "id 110105********1239 ok"


def test_responses_api_typed_events(policy: Policy) -> None:
    def event(name: str, payload: dict[str, object]) -> bytes:
        return f"event: {name}\n".encode() + b"data: " + json.dumps({"type": name, **payload}).encode() + b"\n\n"

    raw = b"".join([
        event("response.output_text.delta", {"output_index": 0, "content_index": 0, "delta": "card " + CARD[:7]}),
        event("response.output_text.delta", {"output_index": 0, "content_index": 0, "delta": CARD[7:] + " done"}),
        event("response.output_text.done", {"output_index": 0, "content_index": 0, "text": "card " + CARD + " done"}),
        event("response.completed", {"response": {"output": [{"type": "message", "content": [
            {"type": "output_text", "text": "card " + CARD + " done"}]}]}}),
    ])
    out = relay(policy, raw, [30, 61, 200], Route.RESPONSES)
    assert CARD.encode() not in out
    deltas = "".join(json.loads(b[b.index(b"data: ") + 6:])["delta"]
                     for b in out.split(b"\n\n") if b"output_text.delta" in b)
    assert deltas == "card ************7894 done"
    done = [json.loads(b[b.index(b"data: ") + 6:]) for b in out.split(b"\n\n") if b"output_text.done" in b]
    assert [d["text"] for d in done] == ["card ************7894 done"]
    assert out.count(b"event: response.completed") == 1


def test_comments_and_unknown_events_pass_unchanged(policy: Policy) -> None:
    raw = b": ping\n\nevent: custom\ndata: {\"x\": 1}\n\ndata: [DONE]\n\n"
    assert relay(policy, raw, [3]) == raw


def test_an_event_that_is_not_json_ends_the_stream_closed(policy: Policy) -> None:
    out = relay(policy, b"data: {not json\n\ndata: [DONE]\n\n", [])
    assert b"invalid_upstream_stream" in out and out.endswith(b"data: [DONE]\n\n")


def test_a_bug_in_the_guard_ends_the_stream_closed(policy: Policy) -> None:
    import hmac

    from proxy.stages.stream import SseRelay
    from proxy.state import FlowState, Outcome

    class Exploding(StreamGuard):
        def on_event(self, event: object) -> list[bytes]:  # type: ignore[override]
            raise RuntimeError("bug")

    state = FlowState("rid", Route.CHAT, 0.0)
    relay = SseRelay(state, lambda: 0.0, Exploding(policy.response, PseudonymVault(), Route.CHAT, 400),
                     hmac.new(b"k", digestmod="sha256"))
    out = b"".join(relay(chat_sse("some text with " + ID)))
    assert ID.encode() not in out
    assert b"internal_error" in out and out.endswith(b"data: [DONE]\n\n")
    assert state.outcome is Outcome.INTERNAL_ERROR
    assert list(relay(b"data: more\n\n")) == []  # nothing after the failure
