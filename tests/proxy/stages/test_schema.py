"""SchemaCheck on mitmproxy's test flows: whole answers against their schemas under each policy, and re-asks
sent to a real stand-in model server on loopback (proxy/dev/standin.py, in process), whose log of received
bodies shows what the upstream got."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.test import tflow, tutils

from proxy.addons import default_stages
from proxy.config import WardenConfig
from proxy.dev.standin import StandinConfig, StandinServer, serve
from proxy.guard.engine import Guard
from proxy.schemas.plan import SchemaResult
from proxy.services import Services
from proxy.stages.correlate import Correlate
from proxy.stages.inspect_response import InspectResponse
from proxy.stages.schema import SchemaCheck
from proxy.stages.schema_request import SchemaRequest
from proxy.state import FlowState, Outcome, get_state
from proxy.telemetry.metrics import Metrics

_GUARD = Guard.load()
PERSON = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
          "required": ["name"], "additionalProperties": False}
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
           "additionalProperties": False}
GOOD = '{"name": "Ann", "age": 7}'
BAD = '{"name": "Ann", "age": "seven"}'
SECRET = "Zaphod-7c1e"  # answer text that must never reach an error message
TRACEPARENT = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"


@pytest.fixture(scope="module")
def standin() -> Iterator[StandinServer]:
    server = serve("127.0.0.1", 0, StandinConfig())
    yield server
    server.shutdown()
    server.server_close()


def port_of(server: ThreadingHTTPServer) -> int:
    return int(server.server_address[1])


def received(server: StandinServer) -> list[dict[str, Any]]:
    """What the stand-in got, from its own log (GET /_standin/received): the bodies as JSON."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port_of(server)}/_standin/received", timeout=5) as answer:
        log = json.loads(answer.read())["received"]
    return [json.loads(r["body"]) for r in log if r["method"] == "POST"]


def services(port: int, **config: Any) -> Services:
    return Services(config=WardenConfig(upstream=f"http://127.0.0.1:{port}", **config), metrics=Metrics(),
                    guard=_GUARD)


def chat(knobs: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "who?"}],
                            "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": PERSON}},
                            **extra}
    if knobs is not None:
        body["standin"] = {"prefix_cache": False, **knobs}
    return body


def flow_for(svc: Services, port: int, body: dict[str, Any], path: str = "/v1/chat/completions") -> http.HTTPFlow:
    """A flow planned as the request stages plan it, addressed to the upstream on `port`."""
    request = tutils.treq(host="127.0.0.1", port=port, path=path.encode(), method=b"POST",
                          content=json.dumps(body).encode(),
                          headers=http.Headers(content_type="application/json", traceparent=TRACEPARENT,
                                               accept_encoding="gzip, br", connection="keep-alive"))
    flow = tflow.tflow(req=request)
    correlate = Correlate(svc)
    correlate.requestheaders(flow)
    correlate.request(flow)
    SchemaRequest(svc).request(flow)
    return flow


def ask_upstream(flow: http.HTTPFlow) -> None:
    """The first answer, from the upstream itself: the request as it was forwarded."""
    request = urllib.request.Request(flow.request.url, data=flow.request.content, method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        flow.response = http.Response.make(answer.status, answer.read(), dict(answer.headers))


def answered_with(flow: http.HTTPFlow, body: dict[str, Any], status: int = 200) -> None:
    flow.response = http.Response.make(status, json.dumps(body).encode(), {"content-type": "application/json"})


def run(svc: Services, flow: http.HTTPFlow) -> FlowState:
    result = SchemaCheck(svc).response(flow)
    if result is not None:
        assert inspect.isawaitable(result)  # the re-ask never blocks the event loop

        async def main() -> None:
            await result

        asyncio.run(main())
    state = get_state(flow)
    assert state is not None
    return state


def content_of(flow: http.HTTPFlow, choice: int = 0) -> Any:
    assert flow.response is not None
    return json.loads(flow.response.content or b"")["choices"][choice]["message"]["content"]


def error_of(flow: http.HTTPFlow) -> dict[str, Any]:
    assert flow.response is not None
    error: dict[str, Any] = json.loads(flow.response.content or b"")["error"]
    return error


def test_the_stage_runs_just_before_the_response_inspection(standin: StandinServer) -> None:
    names = [type(s).__name__ for s in default_stages(services(port_of(standin)))]
    assert names.index("SchemaCheck") + 1 == names.index("InspectResponse")


# -- valid, flag, reject ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["reject", "flag", "reask"])
def test_a_valid_answer_is_marked_and_passes_unchanged(standin: StandinServer, policy: str) -> None:
    svc = services(port_of(standin), schema_policy=policy)
    flow = flow_for(svc, port_of(standin), chat({"reply": "\n" + GOOD + "\n"}))
    ask_upstream(flow)
    assert flow.response is not None
    before = flow.response.content
    state = run(svc, flow)
    assert flow.response.content == before and flow.response.headers["x-warden-schema"] == "valid"
    assert state.schema is not None and state.schema.results == [SchemaResult.VALID]
    assert state.schema.attempts == 1 and state.outcome is Outcome.OK


def test_flag_passes_an_invalid_answer_unchanged_and_says_so(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="flag")
    flow = flow_for(svc, port_of(standin), chat({"reply": BAD}))
    ask_upstream(flow)
    state = run(svc, flow)
    assert flow.response is not None and flow.response.status_code == 200 and content_of(flow) == BAD
    assert flow.response.headers["x-warden-schema"] == "invalid"
    assert state.schema is not None and state.schema.results == [SchemaResult.INVALID]
    assert "at /age" in state.schema.violations[0] and state.outcome is Outcome.OK


@pytest.mark.parametrize(("reply", "said"), [
    (f'{{"name": "{SECRET}", "age": "x"}}', "at /age: expected type \"integer\" (keyword `type`)"),
    (f'Here you are: {{"name": "{SECRET}"}}', "text before it"),  # prose-wrapped
    (f'```json\n{{"name": "{SECRET}"}}\n```', "text before it"),  # fenced
    (f'{{"name": "{SECRET}", "age":', "not valid JSON"),  # truncated by max_tokens
    (f"My name is {SECRET}.", "text before it"),  # not JSON at all
    (f'{{"name": "{SECRET}", "extra": 1}}', "a property the schema does not allow"),
])
def test_reject_answers_502_in_the_schema_s_words(standin: StandinServer, reply: str, said: str) -> None:
    svc = services(port_of(standin), schema_policy="reject")
    flow = flow_for(svc, port_of(standin), chat({"reply": reply}))
    ask_upstream(flow)
    sent = len(received(standin))
    state = run(svc, flow)
    assert flow.response is not None and flow.response.status_code == 502
    error = error_of(flow)
    assert error["code"] == "schema_violation" and error["param"] == "output" and said in error["message"]
    assert SECRET not in json.dumps(error)
    assert state.outcome is Outcome.SCHEMA_VIOLATION and state.schema is not None
    assert state.schema.results == [SchemaResult.REJECTED] and state.schema.attempts == 1
    assert len(received(standin)) == sent  # nothing was asked again


def test_n_choices_are_each_checked(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="reject")
    flow = flow_for(svc, port_of(standin), chat(n=2))
    answered_with(flow, {"choices": [{"index": 0, "message": {"role": "assistant", "content": GOOD}},
                                     {"index": 1, "message": {"role": "assistant", "content": BAD}}]})
    state = run(svc, flow)
    assert error_of(flow)["param"] == "choices[1].message.content"
    assert state.schema is not None and state.schema.results == [SchemaResult.REJECTED]


def test_a_refusal_is_not_a_violation_nor_a_validation(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="reject")
    flow = flow_for(svc, port_of(standin), chat())
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": None,
                                                   "refusal": "I can't help with that."}}]}
    answered_with(flow, answer)
    state = run(svc, flow)
    assert flow.response is not None and json.loads(flow.response.content or b"") == answer
    assert "x-warden-schema" not in flow.response.headers
    assert state.schema is not None and state.schema.results == [] and state.outcome is Outcome.OK


@pytest.mark.parametrize("case", ["stream", "error status", "not ok", "no plan", "not json"])
def test_answers_that_are_not_checked(standin: StandinServer, case: str) -> None:
    svc = services(port_of(standin), schema_policy="reject")
    body = chat() if case != "no plan" else {"model": "m", "messages": []}
    flow = flow_for(svc, port_of(standin), body)
    answered_with(flow, {"choices": [{"message": {"content": "nope"}}]}, 500 if case == "error status" else 200)
    assert flow.response is not None
    if case == "stream":
        flow.response.stream = True
    if case == "not json":
        flow.response.content = b"nope"
    state = get_state(flow)
    assert state is not None
    if case == "not ok":
        state.outcome = Outcome.BLOCKED
    assert SchemaCheck(svc).response(flow) is None
    assert "x-warden-schema" not in flow.response.headers
    assert state.schema is None or state.schema.results == []


# -- re-ask ----------------------------------------------------------------------------------------------------


def test_reask_sends_the_violations_back_and_the_answer_that_fits_replaces_the_first(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="reask", schema_reask=1)
    flow = flow_for(svc, port_of(standin), chat({"replies": [BAD, GOOD]}, stream_options={"include_usage": True}))
    ask_upstream(flow)
    first_usage = json.loads(flow.response.content or b"")["usage"] if flow.response else None
    state = run(svc, flow)
    assert flow.response is not None and flow.response.status_code == 200 and content_of(flow) == GOOD
    assert flow.response.headers["x-warden-schema"] == "valid"
    assert int(flow.response.headers["content-length"]) == len(flow.response.raw_content or b"")
    assert state.schema is not None and state.schema.results == [SchemaResult.REASKED, SchemaResult.VALID]
    assert state.schema.attempts == 2 and state.outcome is Outcome.OK
    first, again = received(standin)[-2:]
    assert again["messages"][:1] == first["messages"] and again["stream"] is False
    assert "stream_options" not in again and again["response_format"] == first["response_format"]
    assistant, user = again["messages"][1:]
    assert assistant == {"role": "assistant", "content": BAD}
    assert user["role"] == "user" and 'at /age: expected type "integer"' in user["content"]
    final_usage = json.loads(flow.response.content or b"")["usage"]
    assert first_usage is not None  # tokens are summed over the attempts
    assert state.answer.usage.completion_tokens == first_usage["completion_tokens"] + final_usage["completion_tokens"]
    assert state.answer.parsed is not None and state.answer.parsed.body is not None
    assert state.answer.parsed.body["choices"][0]["message"]["content"] == GOOD  # what the inspection reads


def test_reask_at_most_n_times_then_reject(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="reask", schema_reask=2)
    flow = flow_for(svc, port_of(standin), chat({"replies": [BAD, "nope", f"{SECRET}"]}))
    ask_upstream(flow)
    before = len(received(standin))
    state = run(svc, flow)
    bodies = received(standin)
    assert len(bodies) == before + 2  # never more than schema_reask re-asks
    assert [m["role"] for m in bodies[-1]["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert state.schema is not None
    assert state.schema.results == [SchemaResult.REASKED, SchemaResult.REASKED, SchemaResult.REJECTED]
    error = error_of(flow)
    assert error["code"] == "schema_violation" and "after 3 attempts" in error["message"]
    assert SECRET not in error["message"] and state.outcome is Outcome.SCHEMA_VIOLATION


def test_reask_zero_is_reject(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="reask", schema_reask=0)
    flow = flow_for(svc, port_of(standin), chat({"reply": BAD}))
    ask_upstream(flow)
    state = run(svc, flow)
    assert state.schema is not None and state.schema.results == [SchemaResult.REJECTED]


def test_reask_a_tool_call_with_a_tool_message_per_call(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="reask")
    tools = [{"type": "function", "function": {"name": "weather", "parameters": WEATHER}}]
    calls = [[{"name": "weather", "arguments": '{"town": "Oslo"}'}],
             [{"name": "weather", "arguments": '{"city": "Oslo"}'}]]
    body = {"model": "m", "messages": [{"role": "user", "content": "weather?"}], "tools": tools,
            "standin": {"tool_calls": calls, "prefix_cache": False}}
    flow = flow_for(svc, port_of(standin), body)
    ask_upstream(flow)
    state = run(svc, flow)
    assert state.schema is not None and state.schema.results == [SchemaResult.REASKED, SchemaResult.VALID]
    assert flow.response is not None
    final = json.loads(flow.response.content or b"")["choices"][0]["message"]["tool_calls"]
    assert final[0]["function"]["arguments"] == '{"city": "Oslo"}'
    again = received(standin)[-1]
    assistant, tool = again["messages"][1:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"town": "Oslo"}'
    assert tool["role"] == "tool" and tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert "missing the required property \"city\"" in tool["content"]


def test_reject_names_the_failing_tool_call(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="reject")
    tools = [{"type": "function", "function": {"name": "weather", "parameters": WEATHER}}]
    calls = [{"name": "weather", "arguments": '{"city": "Oslo"}'}, {"name": "weather", "arguments": SECRET}]
    body = {"model": "m", "messages": [{"role": "user", "content": "?"}], "tools": tools,
            "standin": {"tool_calls": calls}}
    flow = flow_for(svc, port_of(standin), body)
    ask_upstream(flow)
    run(svc, flow)
    error = error_of(flow)
    assert error["param"] == "tool_calls[1].function.arguments" and SECRET not in error["message"]


def test_reask_on_the_responses_api(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="reask")
    body = {"model": "m", "input": "who?", "text": {"format": {"type": "json_schema", "name": "p", "schema": PERSON}},
            "standin": {"replies": ["nope", GOOD], "prefix_cache": False}}
    flow = flow_for(svc, port_of(standin), body, "/v1/responses")
    ask_upstream(flow)
    state = run(svc, flow)
    assert state.schema is not None and state.schema.results == [SchemaResult.REASKED, SchemaResult.VALID]
    assert flow.response is not None
    output = json.loads(flow.response.content or b"")["output"]
    assert output[0]["content"][0]["text"] == GOOD
    again = received(standin)[-1]
    assert [i.get("role") for i in again["input"]] == ["user", "assistant", "user"]
    assert again["input"][0] == {"role": "user", "content": "who?"}


def test_the_answer_that_replaced_the_first_is_then_inspected(standin: StandinServer) -> None:
    svc = services(port_of(standin), schema_policy="reask")
    flow = flow_for(svc, port_of(standin), chat({"replies": ["nope", '{"name": "call 13812345678"}']}))
    ask_upstream(flow)
    run(svc, flow)
    InspectResponse(svc).response(flow)
    assert json.loads(content_of(flow)) == {"name": "call 138****5678"}


# -- the upstream fails the re-ask -----------------------------------------------------------------------------


def closed_port() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = port_of(server)
    server.server_close()
    return port


class _NotJson(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-length", "4")
        self.end_headers()
        self.wfile.write(b"nope")


@pytest.fixture(scope="module")
def not_json() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotJson)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("case", ["refused", "error status", "timeout", "not json"])
def test_a_failed_reask_is_a_502_with_the_attempts_recorded(standin: StandinServer, not_json: ThreadingHTTPServer,
                                                             case: str) -> None:
    port = {"refused": closed_port(), "not json": port_of(not_json)}.get(case, port_of(standin))
    svc = services(port, schema_policy="reask", upstream_timeout=0.3)
    knobs = {"status": 500} if case == "error status" else {"headers_delay_ms": 2000} if case == "timeout" else {}
    flow = flow_for(svc, port, chat(knobs))
    answered_with(flow, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "nope"}}]})
    state = run(svc, flow)
    assert flow.response is not None and flow.response.status_code == 502
    error = error_of(flow)
    assert error["code"] == "upstream_unavailable"
    assert {"refused": "refused", "error status": "status 500", "timeout": "within 0.3 s",
            "not json": "not a JSON object"}[case] in error["message"]
    assert state.outcome is Outcome.UPSTREAM_UNAVAILABLE
    assert state.schema is not None and state.schema.results == [SchemaResult.REASKED]


class _Capture(BaseHTTPRequestHandler):
    """Records the re-ask's head and answers with a valid chat answer."""

    seen: list[tuple[str, list[tuple[str, str]]]] = []  # noqa: RUF012

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        _Capture.seen.append((self.path, list(self.headers.items())))
        data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": GOOD}}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))


def test_the_reask_carries_the_client_s_headers_less_hop_by_hop() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        svc = services(port_of(server), schema_policy="reask")
        flow = flow_for(svc, port_of(server), chat())
        flow.request.path = "/v1/chat/completions?api-version=1"
        flow.request.headers["authorization"] = "Bearer k"
        answered_with(flow, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "nope"}}]})
        state = run(svc, flow)
    finally:
        server.shutdown()
        server.server_close()
    assert state.schema is not None and state.schema.verdict is SchemaResult.VALID
    assert flow.response is not None and "transfer-encoding" not in flow.response.headers
    path, headers = _Capture.seen[-1]
    sent = {name.lower(): value for name, value in headers}
    assert path == "/v1/chat/completions?api-version=1"
    assert sent["traceparent"] == TRACEPARENT and sent["authorization"] == "Bearer k"
    assert sent["accept-encoding"] == "identity" and sent["connection"] == "close"
    assert sent["content-type"] == "application/json"
