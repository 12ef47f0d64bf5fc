"""InspectResponse on mitmproxy's test flows: a whole answer is parsed once, and telemetry reuses that parse."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.test import tflow

from proxy import answer
from proxy.config import WardenConfig
from proxy.guard.engine import Guard
from proxy.guard.ledger import Direction
from proxy.services import Services
from proxy.stages.inspect_response import InspectResponse
from proxy.stages.settle import Settle
from proxy.stages.telemetry import Telemetry
from proxy.state import STATE_KEY, FlowState, Outcome, Route
from proxy.telemetry.metrics import Metrics

_GUARD = Guard.load()
PHONE = "13812345678"


def answered(body: dict[str, Any]) -> tuple[http.HTTPFlow, FlowState]:
    flow = tflow.tflow()
    flow.response = http.Response.make(200, json.dumps(body).encode(), {"content-type": "application/json"})
    state = FlowState("r", Route.CHAT, 0.0)
    flow.metadata[STATE_KEY] = state
    return flow, state


@pytest.fixture
def json_parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every parse of an answer body, counted where proxy/answer.py parses."""
    seen: list[bytes] = []
    real: Callable[[bytes], Any] = answer.parse_json

    def loads(data: bytes) -> Any:
        seen.append(data)
        return real(data)

    monkeypatch.setattr(answer, "parse_json", loads)
    return seen


@pytest.mark.parametrize("guard", [True, False])
def test_the_answer_is_parsed_once_and_telemetry_reuses_it(guard: bool, json_parses: list[bytes]) -> None:
    services = Services(config=WardenConfig(upstream="http://u:1", guard=guard), metrics=Metrics(), guard=_GUARD)
    services.metrics.inflight.inc()
    flow, state = answered({"id": "c-1", "model": "m", "usage": {"prompt_tokens": 7, "completion_tokens": 3},
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": f"call {PHONE}"}}]})
    assert InspectResponse(services).response(flow) is None
    Settle(services).response(flow)
    Telemetry(services).response(flow)
    assert len(json_parses) == 1  # by the inspection when it guards the answer, else by telemetry
    assert (state.answer.usage.prompt_tokens, state.answer.usage.completion_tokens) == (7, 3)
    assert state.answer.response_id == "c-1" and state.outcome is Outcome.OK
    assert flow.response is not None
    content = json.loads(flow.response.content or b"")["choices"][0]["message"]["content"]
    assert content == ("call 138****5678" if guard else f"call {PHONE}")
    assert state.ledger.verdicts[Direction.RESPONSE].value == ("mask" if guard else "skipped")
    assert flow.response.headers["x-warden-action"] == ("mask" if guard else "allow")


def test_an_answer_that_is_not_json_is_refused_and_not_parsed_again(json_parses: list[bytes]) -> None:
    services = Services(config=WardenConfig(upstream="http://u:1"), metrics=Metrics(), guard=_GUARD)
    services.metrics.inflight.inc()
    flow = tflow.tflow()
    flow.response = http.Response.make(200, b'{"usage": ', {"content-type": "application/json"})
    state = FlowState("r", Route.CHAT, 0.0)
    flow.metadata[STATE_KEY] = state
    InspectResponse(services).response(flow)
    Settle(services).response(flow)
    Telemetry(services).response(flow)
    assert flow.response is not None and flow.response.status_code == 502
    assert state.ledger.verdicts[Direction.RESPONSE].value == "error" and len(json_parses) == 1
