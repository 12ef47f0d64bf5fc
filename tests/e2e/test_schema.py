"""Output JSON-Schema validation in the real proxy (issue 21): `warden serve` in front of `warden standin`, the
official `openai` client and raw httpx as callers.

Four proxies serve the whole module (processes cost seconds to start): one per `--schema-policy` (reject,
flag, reask with `--schema-reask 2` and an audit log), all with a `schemas:` config map (`routed-*` -> a
schema file, injected upstream as `response_format`), and one with `--schema-inject off` and the route schema
from `WARDEN_SCHEMA`; beside them, a `warden serve` that must refuse to start on a route schema it cannot
use. Every exchange carries a fresh tag in its prompt, so the upstream's requests for it are
found in the stand-in's log (`/_standin/received`) whatever else ran before.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pydantic
import pytest
from prometheus_client.parser import text_string_to_metric_families

from proxy.dev.standin import count_tokens
from tests.e2e.conftest import REPO, Process, ProxyFactory, http_get, warden_command

pytestmark = pytest.mark.slow

PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
ROUTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "confidence": {"type": "number", "maximum": 1}},
    "required": ["answer"],
    "additionalProperties": False,
}
WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "maximum": 14}},
    "required": ["city"],
    "additionalProperties": False,
}
CLOCK: dict[str, Any] = {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "get_time", "parameters": CLOCK}}]

# The name is in no schema and no message of ours: if it shows in an error, the answer's text leaked.
NAME = "Zygmunt"
VALID = f'{{"name": "{NAME}", "age": 36}}'
# Valid documents that a matcher encoding one serialization would cut (issue 21, "Soundness first").
VALID_VARIANTS = {
    "plain": VALID,
    "leading newline": "\n" + VALID,
    "other key order": f'{{"age": 36, "name": "{NAME}"}}',
    "1.0 for an integer": f'{{"name": "{NAME}", "age": 1.0}}',
    "indented, escapes, surrounding whitespace": (
        '  {\n    "tags" : [ "a\\"b", "\\u00e9\\ud83d\\ude00" ] ,\n\t"age":36,\r\n'
        f'    "name": "{NAME[:3]}\\u006d{NAME[4:]}"\n}}\n\n'),
}


@dataclass(frozen=True)
class Bad:
    """An answer that does not fit PERSON: the violation's pointer and keyword; `never_released`, a piece of it
    past the first character that cannot lead to a valid document, which a cut stream must never release;
    `whole`, when only the complete text shows it (a truncated document)."""

    answer: str
    pointer: str
    keyword: str
    never_released: str | None = None
    whole: bool = False


# A property name repeated in one object makes the answer invalid (rules/schema/document.py: parsers disagree
# on which value wins), so a member's value is final as it arrives and is cut at its first impossible
# character, like member names, the root and the items of a root array.
INVALID = {
    "wrong type": Bad(f'{{"name": "{NAME}", "age": "36"}}', "/age", "type", '"3'),
    "root of another type": Bad(f'[{{"name": "{NAME}", "age": 36}}]', "", "type", "[{"),
    "array item of another type": Bad(f'{{"name": "{NAME}", "age": 36, "tags": ["a", 7, "b"]}}', "/tags/1", "type"),
    "missing required": Bad(f'{{"name": "{NAME}"}}', "", "required"),
    "additionalProperties": Bad(f'{{"name": "{NAME}", "age": 36, "nickname": "Z"}}', "", "additionalProperties",
                                '"nickname"'),
    "prose-wrapped": Bad(f'Sure! Here it is: {{"name": "{NAME}", "age": 36}}', "", "json", "Sure"),
    "not JSON": Bad(f"I would rather not say, {NAME}.", "", "json", "I would"),
    "truncated": Bad(f'{{"name": "{NAME}", "ag', "", "json", whole=True),
    "over maxLength": Bad(f'{{"name": "{NAME * 6}", "age": 36}}', "/name", "maxLength"),
}


def person_format(strict: bool = True) -> Any:  # Any: the openai client's parameter is a TypedDict
    return {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": strict}}


def canonical_sha256(schema: object) -> str:
    """The schema's identity as rules/schema/compiled.py computes it (the span's and the audit record's)."""
    return hashlib.sha256(json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                          .encode()).hexdigest()


# ---- processes ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proxies:
    reject: Process
    flag: Process
    reask: Process
    inject_off: Process
    audit_dir: Path
    route_schema_file: Path
    refused_start: subprocess.CompletedProcess[str]  # `warden serve --schema` with a schema it cannot use

    def by_policy(self, policy: str) -> Process:
        proxy: Process = getattr(self, policy)
        return proxy


@pytest.fixture(scope="module")
def proxies(standin: Process, start_proxy_module: ProxyFactory,
            tmp_path_factory: pytest.TempPathFactory) -> Proxies:
    work = tmp_path_factory.mktemp("schema")
    route_file = work / "answer.json"
    route_file.write_text(json.dumps(ROUTE_SCHEMA, indent=2))
    config = work / "warden.yaml"
    config.write_text('schemas:\n  "routed-*": answer.json\n')  # found next to the config file
    audit_dir = work / "audit" / "log"
    starts = {
        "reject": ((standin.url, "--config", str(config), "--schema-policy", "reject"), {}),
        "flag": ((standin.url, "--config", str(config), "--schema-policy", "flag"), {}),
        "reask": ((standin.url, "--config", str(config), "--schema-reask", "2", "--audit-dir", str(audit_dir)), {}),
        "inject_off": ((standin.url, "--schema-inject", "off", "--schema-policy", "flag"),
                       {"env": {"WARDEN_SCHEMA": str(route_file)}}),
    }
    bad_file = work / "remote.json"
    bad_file.write_text(json.dumps({"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}}))
    refuse = warden_command("serve", "--no-semantic", "--upstream", standin.url, "--listen", "127.0.0.1:0",
                            "--admin", "127.0.0.1:0", "--schema", str(bad_file))
    # Two at a time (the machine has two cores): each start is seconds of CPU (imports, the rule packs), and
    # more at once only makes every one of them slower.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(start_proxy_module, *args, **kwargs) for name, (args, kwargs) in starts.items()}
        refused = pool.submit(subprocess.run, refuse, cwd=REPO, capture_output=True, text=True, timeout=120)
        started = {name: future.result() for name, future in futures.items()}
        # A port that free_port() handed out can be taken by another test session before our proxy binds it:
        # the port then answers, but not from our proxy, which has exited.
        assert all(proxy.proc.poll() is None for proxy in started.values()), "a proxy lost its port and exited"
        return Proxies(**started, audit_dir=audit_dir, route_schema_file=route_file, refused_start=refused.result())


# ---- helpers --------------------------------------------------------------------------------------------------


def new_tag() -> str:
    return "tag-" + uuid.uuid4().hex


def chat_body(tag: str, knobs: dict[str, Any], *, response_format: dict[str, Any] | None = None,
              model: str = "standin-base", stream: bool = False, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": f"who is it? {tag}"}],
                            "standin": knobs, **extra}
    if response_format is not None:
        body["response_format"] = response_format
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def post(proxy: Process, body: dict[str, Any], path: str = "/v1/chat/completions") -> httpx.Response:
    return httpx.post(proxy.url + path, json=body, timeout=30)


def post_stream(proxy: Process, body: dict[str, Any], path: str = "/v1/chat/completions") -> bytes:
    with httpx.stream("POST", proxy.url + path, json=body, timeout=30) as response:
        assert response.status_code == 200, response.read()
        return response.read()


def sse(raw: bytes) -> list[Any]:
    """Each event's data: parsed JSON, or the string "[DONE]"."""
    found: list[Any] = []
    for block in raw.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [line[5:].removeprefix(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
        if lines:
            data = b"\n".join(lines)
            found.append("[DONE]" if data == b"[DONE]" else json.loads(data))
    return found


def content_of(events: list[Any]) -> str:
    return "".join(choice["delta"].get("content") or "" for e in events if isinstance(e, dict) and "choices" in e
                   for choice in e["choices"])


def finish_reasons(events: list[Any]) -> list[str]:
    return [choice["finish_reason"] for e in events if isinstance(e, dict) and "choices" in e
            for choice in e["choices"] if choice.get("finish_reason")]


def tool_arguments(events: list[Any]) -> dict[int, str]:
    found: dict[int, str] = {}
    for e in events:
        for choice in e.get("choices", []) if isinstance(e, dict) else []:
            for call in choice["delta"].get("tool_calls") or []:
                found[call["index"]] = found.get(call["index"], "") + call["function"].get("arguments", "")
    return found


def assert_whole_stream(events: list[Any]) -> None:
    assert events[-1] == "[DONE]"
    assert not any(isinstance(e, dict) and "error" in e for e in events)
    assert isinstance(events[-2], dict) and events[-2]["usage"] is not None  # the usage chunk got through


def assert_cut(events: list[Any], *, never_released: str | None = None) -> dict[str, Any]:
    """The stream ended for its schema: an error event, then `[DONE]`, nothing else after; no finish chunk and
    no usage chunk (they came after the violation). Returns the error."""
    assert events[-1] == "[DONE]", events[-3:]
    error = events[-2].get("error") if isinstance(events[-2], dict) else None
    assert error is not None and error["code"] == "schema_violation", events[-3:]
    assert events.count("[DONE]") == 1
    before = events[:-2]
    assert not any("error" in e or e.get("usage") for e in before)
    assert "stop" not in finish_reasons(before) and "tool_calls" not in finish_reasons(before)
    if never_released is not None:
        released = content_of(before) + "".join(tool_arguments(before).values())
        assert never_released not in released
    assert NAME * 2 not in json.dumps(error, ensure_ascii=False)
    return dict(error)


def upstream_bodies(standin: Process, tag: str, path: str = "/v1/chat/completions") -> list[dict[str, Any]]:
    """What the model server received for the exchange tagged `tag`, in order (re-asks included)."""
    status, raw = http_get(standin.url + "/_standin/received")
    assert status == 200
    return [json.loads(r["body"]) for r in json.loads(raw)["received"]
            if r["path"] == path and tag in r["body"]]


def error_of(response: httpx.Response) -> dict[str, Any]:
    error: dict[str, Any] = response.json()["error"]
    return error


def assert_violation(response: httpx.Response, pointer: str, keyword: str) -> dict[str, Any]:
    assert response.status_code == 502, response.text
    error = error_of(response)
    assert error["code"] == "schema_violation" and error["type"]
    assert f"`{keyword}`" in error["message"]
    assert (f"at {pointer}" if pointer else "at the document root") in error["message"]
    assert NAME not in response.text  # the answer's text never comes back in the error
    assert "x-warden-schema" not in response.headers or response.headers["x-warden-schema"] == "invalid"
    return error


def client(proxy: Process) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0, timeout=30)


# ---- whole answers, each policy --------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["reject", "flag", "reask"])
@pytest.mark.parametrize("case", list(VALID_VARIANTS))
def test_a_valid_whole_answer_passes_unchanged(proxies: Proxies, standin: Process, policy: str, case: str) -> None:
    tag, answer = new_tag(), VALID_VARIANTS[case]
    response = post(proxies.by_policy(policy), chat_body(tag, {"reply": answer}, response_format=person_format()))
    assert response.status_code == 200, response.text
    assert response.headers["x-warden-schema"] == "valid"
    assert response.json()["choices"][0]["message"]["content"] == answer
    sent = upstream_bodies(standin, tag)
    assert len(sent) == 1  # no re-ask
    assert sent[0]["response_format"] == person_format()  # a request's own schema goes on as it came


@pytest.mark.parametrize("case", list(INVALID))
def test_reject_answers_502_naming_the_pointer_and_keyword(proxies: Proxies, standin: Process, case: str) -> None:
    tag, bad = new_tag(), INVALID[case]
    response = post(proxies.reject, chat_body(tag, {"reply": bad.answer}, response_format=person_format()))
    error = assert_violation(response, bad.pointer, bad.keyword)
    assert error["param"] == "output"  # the answer's text, as a blocked answer names it
    assert len(upstream_bodies(standin, tag)) == 1


@pytest.mark.parametrize("case", list(INVALID))
def test_flag_passes_an_invalid_answer_unchanged_with_the_header(proxies: Proxies, case: str) -> None:
    bad = INVALID[case]
    response = post(proxies.flag, chat_body(new_tag(), {"reply": bad.answer}, response_format=person_format()))
    assert response.status_code == 200
    assert response.headers["x-warden-schema"] == "invalid"
    assert response.json()["choices"][0]["message"]["content"] == bad.answer


@pytest.mark.parametrize("case", list(INVALID))
def test_reask_sends_the_violations_back_and_delivers_the_answer_that_fits(
    proxies: Proxies, standin: Process, case: str
) -> None:
    tag, bad = new_tag(), INVALID[case]
    response = post(proxies.reask, chat_body(tag, {"replies": [bad.answer, VALID]}, response_format=person_format()))
    assert response.status_code == 200, response.text
    assert response.headers["x-warden-schema"] == "valid"
    assert response.json()["choices"][0]["message"]["content"] == VALID
    # The body is the second answer as the upstream sent it, its `usage` too (the records add both up).
    assert response.json()["usage"]["completion_tokens"] == count_tokens(VALID)
    first, again = upstream_bodies(standin, tag)
    asked = first["messages"]
    assert again["messages"][: len(asked)] == asked  # the conversation, then the previous answer and why not
    turn, complaint = again["messages"][len(asked):]
    assert turn == {"role": "assistant", "content": bad.answer}
    assert complaint["role"] == "user" and f"`{bad.keyword}`" in complaint["content"]
    assert not again.get("stream")
    assert again["response_format"] == first["response_format"] == person_format()


def test_reask_gives_up_after_n_reasks_with_a_502(proxies: Proxies, standin: Process) -> None:
    tag, bad = new_tag(), INVALID["wrong type"]
    response = post(proxies.reask, chat_body(tag, {"reply": bad.answer}, response_format=person_format()))
    error = assert_violation(response, "/age", "type")
    assert "after 3 attempts" in error["message"]
    sent = upstream_bodies(standin, tag)
    assert len(sent) == 3  # the question and --schema-reask 2 re-asks, no more
    assert [m["role"] for m in sent[2]["messages"]] == ["user", "assistant", "user", "assistant", "user"]


def test_a_request_without_a_schema_is_not_judged(proxies: Proxies) -> None:
    response = post(proxies.reject, chat_body(new_tag(), {"reply": "plain prose"}))
    assert response.status_code == 200 and "x-warden-schema" not in response.headers
    assert response.json()["choices"][0]["message"]["content"] == "plain prose"


@pytest.mark.parametrize(("answer", "valid"), [('{"any": ["thing", 1]}', True), ("\n {}\n", True),
                                               ("[1, 2]", False), ("yes", False)])
def test_json_object_mode_wants_any_object(proxies: Proxies, answer: str, valid: bool) -> None:
    response = post(proxies.flag, chat_body(new_tag(), {"reply": answer}, response_format={"type": "json_object"}))
    assert response.status_code == 200
    assert response.headers["x-warden-schema"] == ("valid" if valid else "invalid")
    rejected = post(proxies.reject, chat_body(new_tag(), {"reply": answer}, response_format={"type": "json_object"}))
    assert rejected.status_code == (200 if valid else 502)


def test_a_reasked_answer_is_guarded_like_any_answer(proxies: Proxies) -> None:
    """The answer that replaces the first one goes through the response inspection: its PII is masked."""
    card = "6222021234567894"
    response = post(proxies.reask, chat_body(new_tag(), {"replies": ["no", f'{{"name": "{card}", "age": 3}}']},
                                             response_format=person_format()))
    assert response.status_code == 200 and response.headers["x-warden-schema"] == "valid"
    assert json.loads(response.json()["choices"][0]["message"]["content"]) == {"name": "************7894", "age": 3}


def test_a_violation_never_quotes_the_answer_not_even_its_keys(proxies: Proxies) -> None:
    """Under additionalProperties a key is the model's own text: the pointer shows it as `*`."""
    ages: Any = {"type": "json_schema", "json_schema": {"name": "ages", "schema": {
        "type": "object", "additionalProperties": {"type": "integer"}}}}
    response = post(proxies.reject, chat_body(new_tag(), {"reply": f'{{"Ada": 36, "{NAME}": "old"}}'},
                                              response_format=ages))
    error = assert_violation(response, "/*", "type")
    assert NAME not in error["message"]


@pytest.mark.parametrize("draft", ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema"])
def test_an_older_declared_draft_is_validated_as_that_draft(proxies: Proxies, draft: str) -> None:
    """Validated whole as its draft; a stream is followed for syntax only and judged at its end."""
    older: Any = {"type": "json_schema", "json_schema": {"name": "older", "schema": {**PERSON, "$schema": draft}}}
    assert post(proxies.reject, chat_body(new_tag(), {"reply": VALID}, response_format=older)).status_code == 200
    assert_violation(post(proxies.reject, chat_body(new_tag(), {"reply": "[1]"}, response_format=older)), "", "type")
    events = sse(post_stream(proxies.reject, chat_body(new_tag(), {"reply": "[1, 2]", "chunk_bytes": 5},
                                                       response_format=older, stream=True)))
    assert_cut(events)
    assert content_of(events) == "[1, 2]"  # the type was only judged at the end
    events = sse(post_stream(proxies.reject, chat_body(new_tag(), {"reply": "[1, }", "chunk_bytes": 5},
                                                       response_format=older, stream=True)))
    assert_cut(events)
    assert content_of(events) == "[1, "  # syntax is followed as it arrives


def test_the_openai_client_parses_a_reasked_answer(proxies: Proxies, standin: Process) -> None:
    """The official client's structured outputs (`parse` with a pydantic model) get a document that fits,
    though the model's first answer did not."""

    class Person(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        name: str
        age: int

    tag = new_tag()
    raw = client(proxies.reask).chat.completions.with_raw_response.parse(
        model="standin-base", messages=[{"role": "user", "content": f"who? {tag}"}], response_format=Person,
        extra_body={"standin": {"replies": [f"Sure! {VALID}", f'{{"age": 36, "name": "{NAME}"}}']}})
    assert raw.headers["x-warden-schema"] == "valid"
    parsed = raw.parse().choices[0].message.parsed
    assert parsed == Person(name=NAME, age=36)
    sent = upstream_bodies(standin, tag)
    assert len(sent) == 2 and sent[0]["response_format"]["type"] == "json_schema"


def test_the_openai_client_sees_a_rejection_as_a_502(proxies: Proxies) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        client(proxies.reject).chat.completions.create(
            model="standin-base", messages=[{"role": "user", "content": "who?"}], response_format=person_format(),
            extra_body={"standin": {"reply": INVALID["wrong type"].answer}})
    assert info.value.status_code == 502
    body = info.value.body
    assert isinstance(body, dict) and body["code"] == "schema_violation"
    assert NAME not in info.value.message


# ---- streams ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["reject", "flag", "reask"])
@pytest.mark.parametrize("case", list(VALID_VARIANTS))
def test_a_valid_stream_is_never_cut(proxies: Proxies, policy: str, case: str) -> None:
    answer = VALID_VARIANTS[case]
    for chunk_bytes, per_event in ((3, 1), (7, 3)):  # raw writes split inside `data:`, escapes and UTF-8
        raw = post_stream(proxies.by_policy(policy), chat_body(
            new_tag(), {"reply": answer, "chunk_bytes": chunk_bytes, "chars_per_event": per_event},
            response_format=person_format(), stream=True))
        events = sse(raw)
        assert_whole_stream(events)
        assert content_of(events) == answer
        assert finish_reasons(events) == ["stop"]


@pytest.mark.parametrize("policy", ["reject", "reask"])
@pytest.mark.parametrize("case", list(INVALID))
def test_an_invalid_stream_ends_with_an_error_event(proxies: Proxies, standin: Process, policy: str, case: str) -> None:
    tag, bad = new_tag(), INVALID[case]
    raw = post_stream(proxies.by_policy(policy), chat_body(
        tag, {"reply": bad.answer, "chunk_bytes": 5, "chars_per_event": 2},
        response_format=person_format(), stream=True))
    events = sse(raw)
    error = assert_cut(events, never_released=bad.never_released)
    assert f"`{bad.keyword}`" in error["message"] and error["param"] == "output"
    released = content_of(events)
    assert bad.answer.startswith(released)
    if not bad.whole:
        assert len(released) < len(bad.answer)  # cut before its end, at the first impossible character
    assert len(upstream_bodies(standin, tag)) == 1  # no re-ask on a stream


@pytest.mark.parametrize("case", list(INVALID))
def test_flag_lets_an_invalid_stream_through_unchanged(proxies: Proxies, case: str) -> None:
    bad = INVALID[case]
    with httpx.stream("POST", proxies.flag.url + "/v1/chat/completions", timeout=30, json=chat_body(
            new_tag(), {"reply": bad.answer, "chunk_bytes": 4}, response_format=person_format(), stream=True)) as r:
        raw = r.read()
        assert "x-warden-schema" not in r.headers  # the headers left before the verdict
    events = sse(raw)
    assert_whole_stream(events)
    assert content_of(events) == bad.answer and finish_reasons(events) == ["stop"]


TAGS_FORMAT: Any = {"type": "json_schema", "json_schema": {"name": "tags", "schema": {
    "type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 4}}}


@pytest.mark.parametrize(("answer", "released", "keyword"), [
    (f'["a", "{NAME}", 7, "c"]', f'["a", "{NAME}", ', "type"),
    (f'[\n  "a",\n  "{NAME * 2}"]', '[\n  "a",\n  "' + (NAME * 2)[:8], "maxLength"),
    ('["a", "b", "c", "d", "e"]', '["a", "b", "c", "d"', "maxItems"),
])
def test_a_root_array_is_cut_at_its_first_impossible_item(
    proxies: Proxies, answer: str, released: str, keyword: str
) -> None:
    """Through the official client: the text up to the first character that cannot lead to a valid document,
    then the error (the client raises on it)."""
    stream = client(proxies.reject).chat.completions.create(
        model="standin-base", messages=[{"role": "user", "content": "tags?"}], response_format=TAGS_FORMAT,
        stream=True, extra_body={"standin": {"reply": answer, "chunk_bytes": 6, "chars_per_event": 3}})
    text = ""
    with pytest.raises(openai.APIError) as info:
        for chunk in stream:
            text += (chunk.choices[0].delta.content or "") if chunk.choices else ""
    assert text == released
    assert f"`{keyword}`" in info.value.message and NAME not in info.value.message


# ---- tool calls -------------------------------------------------------------------------------------------------

GOOD_WEATHER = {"name": "get_weather", "arguments": '{"city": "Paris", "days": 3.0}'}
GOOD_TIME = {"name": "get_time", "arguments": '\n{"tz": "Europe/Paris", "dst": true}'}
BAD_WEATHER = {"name": "get_weather", "arguments": '{"city": "Paris", "days": 30}'}
BAD_TIME = {"name": "get_time", "arguments": '{"tz": 5}'}
EXTRA_WEATHER = {"name": "get_weather", "arguments": '{"city": "Paris", "units": "metric"}'}


@pytest.mark.parametrize("policy", ["reject", "flag", "reask"])
def test_valid_tool_calls_pass(proxies: Proxies, policy: str) -> None:
    proxy = proxies.by_policy(policy)
    calls = [GOOD_WEATHER, GOOD_TIME]
    response = post(proxy, chat_body(new_tag(), {"tool_calls": calls}, tools=TOOLS))
    assert response.status_code == 200 and response.headers["x-warden-schema"] == "valid"
    message = response.json()["choices"][0]["message"]
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [
        (c["name"], c["arguments"]) for c in calls]
    raw = post_stream(proxy, chat_body(new_tag(), {"tool_calls": calls, "chunk_bytes": 9, "chars_per_event": 3},
                                       tools=TOOLS, stream=True))
    events = sse(raw)
    assert_whole_stream(events)
    assert tool_arguments(events) == {0: GOOD_WEATHER["arguments"], 1: GOOD_TIME["arguments"]}
    assert finish_reasons(events) == ["tool_calls"]


def test_invalid_tool_arguments_whole(proxies: Proxies, standin: Process) -> None:
    calls = [GOOD_WEATHER, BAD_TIME]
    rejected = post(proxies.reject, chat_body(new_tag(), {"tool_calls": calls}, tools=TOOLS))
    error = assert_violation(rejected, "/tz", "type")
    assert error["param"] == "tool_calls[1].function.arguments"
    flagged = post(proxies.flag, chat_body(new_tag(), {"tool_calls": calls}, tools=TOOLS))
    assert flagged.status_code == 200 and flagged.headers["x-warden-schema"] == "invalid"
    assert flagged.json()["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"] == BAD_TIME["arguments"]
    # Re-asked: the model's turn with its calls goes back, each call answered by a tool message.
    tag = new_tag()
    reasked = post(proxies.reask, chat_body(tag, {"tool_calls": [[BAD_WEATHER], [GOOD_WEATHER]]}, tools=TOOLS))
    assert reasked.status_code == 200 and reasked.headers["x-warden-schema"] == "valid"
    assert reasked.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == GOOD_WEATHER[
        "arguments"]
    first, again = upstream_bodies(standin, tag)
    turn, answer = again["messages"][len(first["messages"]):]
    assert turn["role"] == "assistant"
    assert turn["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": BAD_WEATHER["arguments"]}
    assert answer["role"] == "tool" and answer["tool_call_id"] == turn["tool_calls"][0]["id"]
    assert "/days" in answer["content"] and "`maximum`" in answer["content"]


@pytest.mark.parametrize("policy", ["reject", "reask"])
@pytest.mark.parametrize(("calls", "index", "keyword", "never_released"), [
    # `"tz": 5` is decided when its object closes (a repeated "tz" could still replace it): the brace stays.
    ([GOOD_WEATHER, BAD_TIME], 1, "type", "}"),
    ([EXTRA_WEATHER, GOOD_TIME], 0, "additionalProperties", '"units"'),  # no property starts "u"
], ids=["member type", "additionalProperties"])
def test_invalid_tool_arguments_streamed_interleaved_are_cut(
    proxies: Proxies, policy: str, calls: list[dict[str, str]], index: int, keyword: str, never_released: str
) -> None:
    raw = post_stream(proxies.by_policy(policy), chat_body(
        new_tag(), {"tool_calls": calls, "chunk_bytes": 11, "chars_per_event": 2}, tools=TOOLS, stream=True))
    events = sse(raw)
    error = assert_cut(events)
    assert error["param"] == f"tool_calls[{index}].function.arguments" and f"`{keyword}`" in error["message"]
    released = tool_arguments(events[:-2])
    for i, call in enumerate(calls):
        assert call["arguments"].startswith(released.get(i, ""))
    assert never_released not in released.get(index, "")


def test_invalid_tool_arguments_streamed_under_flag_pass(proxies: Proxies) -> None:
    raw = post_stream(proxies.flag, chat_body(new_tag(), {"tool_calls": [BAD_WEATHER, BAD_TIME], "chunk_bytes": 5},
                                              tools=TOOLS, stream=True))
    events = sse(raw)
    assert_whole_stream(events)
    assert tool_arguments(events) == {0: BAD_WEATHER["arguments"], 1: BAD_TIME["arguments"]}


# ---- the Responses API ----------------------------------------------------------------------------------------


def responses_body(tag: str, knobs: dict[str, Any], stream: bool = False) -> dict[str, Any]:
    return {"model": "standin-base", "input": f"who is it? {tag}", "stream": stream, "standin": knobs,
            "text": {"format": {"type": "json_schema", "name": "person", "schema": PERSON, "strict": True}}}


def test_responses_text_format(proxies: Proxies, standin: Process) -> None:
    ok = post(proxies.reject, responses_body(new_tag(), {"reply": "\n" + VALID}), "/v1/responses")
    assert ok.status_code == 200 and ok.headers["x-warden-schema"] == "valid"
    assert ok.json()["output"][0]["content"][0]["text"] == "\n" + VALID
    bad = INVALID["wrong type"]
    assert_violation(post(proxies.reject, responses_body(new_tag(), {"reply": bad.answer}), "/v1/responses"),
                     "/age", "type")
    flagged = post(proxies.flag, responses_body(new_tag(), {"reply": bad.answer}), "/v1/responses")
    assert flagged.status_code == 200 and flagged.headers["x-warden-schema"] == "invalid"
    tag = new_tag()
    reasked = client(proxies.reask).responses.with_raw_response.create(
        **{k: v for k, v in responses_body(tag, {}).items() if k in ("model", "input", "text")},
        extra_body={"standin": {"replies": [bad.answer, VALID]}})
    assert reasked.headers["x-warden-schema"] == "valid" and reasked.parse().output_text == VALID
    _, again = upstream_bodies(standin, tag, "/v1/responses")
    assert isinstance(again["input"], list) and any(
        isinstance(item, dict) and item.get("role") == "assistant" for item in again["input"])


def test_responses_streams(proxies: Proxies) -> None:
    raw = post_stream(proxies.reject, responses_body(new_tag(), {"reply": VALID_VARIANTS["other key order"],
                                                                 "chunk_bytes": 13, "chars_per_event": 3}, True),
                      "/v1/responses")
    events = sse(raw)
    assert events[-1]["type"] == "response.completed"
    assert "".join(e["delta"] for e in events if e.get("type") == "response.output_text.delta") == VALID_VARIANTS[
        "other key order"]
    bad = INVALID["additionalProperties"]
    raw = post_stream(proxies.reject, responses_body(new_tag(), {"reply": bad.answer, "chunk_bytes": 13,
                                                                 "chars_per_event": 3}, True), "/v1/responses")
    events = sse(raw)
    assert events[-1] == "[DONE]" and events[-2]["error"]["code"] == "schema_violation"
    released = "".join(e["delta"] for e in events if isinstance(e, dict) and e.get("type") ==
                       "response.output_text.delta")
    assert bad.answer.startswith(released) and '"nickname"' not in released
    assert not any(isinstance(e, dict) and e.get("type") in ("response.output_text.done", "response.completed")
                   for e in events)


def test_responses_function_calls(proxies: Proxies) -> None:
    tools = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
    body = {"model": "m", "input": "weather?", "tools": tools}
    ok = post(proxies.reject, {**body, "standin": {"tool_calls": [GOOD_WEATHER]}}, "/v1/responses")
    assert ok.status_code == 200 and ok.headers["x-warden-schema"] == "valid"
    error = assert_violation(post(proxies.reject, {**body, "standin": {"tool_calls": [BAD_WEATHER]}}, "/v1/responses"),
                             "/days", "maximum")
    assert error["param"] == "output[0].arguments"
    raw = post_stream(proxies.reject, {**body, "stream": True, "standin": {
        "tool_calls": [EXTRA_WEATHER], "chunk_bytes": 7, "chars_per_event": 3}}, "/v1/responses")
    events = sse(raw)
    assert events[-1] == "[DONE]" and events[-2]["error"]["code"] == "schema_violation"
    released = "".join(e["delta"] for e in events if isinstance(e, dict)
                       and e.get("type") == "response.function_call_arguments.delta")
    assert EXTRA_WEATHER["arguments"].startswith(released) and '"units"' not in released


def test_an_upstream_error_is_not_judged(proxies: Proxies) -> None:
    response = post(proxies.reject, chat_body(new_tag(), {"status": 503}, response_format=person_format()))
    assert response.status_code == 503 and "x-warden-schema" not in response.headers
    assert error_of(response)["code"] == "standin_error"


# ---- route schemas and guided decoding ------------------------------------------------------------------------


def test_a_route_schema_is_injected_upstream_and_enforced(proxies: Proxies, standin: Process) -> None:
    on_file = json.loads(proxies.route_schema_file.read_text())
    tag = new_tag()
    good = post(proxies.reject, chat_body(tag, {"reply": '{"confidence": 1.0, "answer": "yes"}'}, model="routed-7b"))
    assert good.status_code == 200 and good.headers["x-warden-schema"] == "valid"
    (sent,) = upstream_bodies(standin, tag)
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"] == on_file
    assert sent["response_format"]["json_schema"]["name"]
    assert_violation(post(proxies.reject, chat_body(new_tag(), {"reply": '{"answer": "yes", "confidence": 2}'},
                                                    model="routed-7b")), "/confidence", "maximum")
    # A model no glob matches has no route schema: nothing injected, nothing judged.
    tag = new_tag()
    plain = post(proxies.reject, chat_body(tag, {"reply": "prose"}, model="other-model"))
    assert plain.status_code == 200 and "x-warden-schema" not in plain.headers
    assert "response_format" not in upstream_bodies(standin, tag)[0]
    # A request's own response_format wins over the route schema and goes upstream as it came.
    tag = new_tag()
    own = post(proxies.reject, chat_body(tag, {"reply": VALID}, model="routed-7b", response_format=person_format()))
    assert own.status_code == 200 and own.headers["x-warden-schema"] == "valid"
    assert upstream_bodies(standin, tag)[0]["response_format"] == person_format()


def test_a_route_schema_reask_keeps_the_injected_format(proxies: Proxies, standin: Process) -> None:
    tag = new_tag()
    response = post(proxies.reask, chat_body(tag, {"replies": ['{"answer": 1}', '{"answer": "one"}']},
                                             model="routed-x"))
    assert response.status_code == 200 and response.json()["choices"][0]["message"]["content"] == '{"answer": "one"}'
    first, again = upstream_bodies(standin, tag)
    assert first["response_format"] == again["response_format"]
    assert again["response_format"]["json_schema"]["schema"] == ROUTE_SCHEMA


def test_schema_inject_off_validates_without_telling_the_upstream(proxies: Proxies, standin: Process) -> None:
    """`--schema-inject off`, the route schema from WARDEN_SCHEMA (every model), under flag."""
    tag = new_tag()
    good = post(proxies.inject_off, chat_body(tag, {"reply": '{"answer": "x"}'}))
    assert good.status_code == 200 and good.headers["x-warden-schema"] == "valid"
    assert "response_format" not in upstream_bodies(standin, tag)[0]
    bad = post(proxies.inject_off, chat_body(new_tag(), {"reply": '{"answer": "x", "extra": 1}'}))
    assert bad.status_code == 200 and bad.headers["x-warden-schema"] == "invalid"


def test_a_route_schema_warden_cannot_use_stops_the_start(proxies: Proxies) -> None:
    refused = proxies.refused_start
    assert refused.returncode == 78, refused.stderr
    assert "remote.json" in refused.stderr and "never fetched" in refused.stderr


# ---- schemas Warden refuses ---------------------------------------------------------------------------------


@pytest.fixture
def trap() -> Iterator[socket.socket]:
    """A listening socket that a fetched remote `$ref` would connect to."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        yield listener


def deep_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_unusable_schemas_get_400_and_nothing_goes_upstream(
    proxies: Proxies, standin: Process, trap: socket.socket
) -> None:
    port = trap.getsockname()[1]
    refs = {"$ref": f"http://127.0.0.1:{port}/schema.json"}
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {
            "name": "x", "schema": {"type": "strnig"}}}}, "response_format.json_schema.schema"),
        ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {
            "name": "x", "schema": {"type": "object", "properties": {"a": refs}}}}},
         "response_format.json_schema.schema"),
        ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {
            "name": "x", "schema": deep_schema(40)}}}, "response_format.json_schema.schema"),
        ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {
            "name": "x", "schema": {"type": "object", "description": "x" * 300_000}}}},
         "response_format.json_schema.schema"),
        ("/v1/chat/completions", {"tools": [{"type": "function", "function": {
            "name": "f", "parameters": {"type": "object", "required": "city"}}}]}, "tools[0].function.parameters"),
        ("/v1/responses", {"text": {"format": {"type": "json_schema", "name": "x", "schema": refs}}}, "text.format"),
        ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {
            "name": "x", "schema": {"$schema": "https://example.com/my-draft", "type": "object"}}}},
         "response_format.json_schema.schema"),
    ]
    for policy in ("reject", "reask"):
        for path, extra, param in cases:
            tag = new_tag()
            body = ({"model": "m", "input": tag} if path == "/v1/responses"
                    else {"model": "m", "messages": [{"role": "user", "content": tag}]})
            response = post(proxies.by_policy(policy), {**body, **extra}, path)
            assert response.status_code == 400, (param, response.text)
            error = error_of(response)
            assert error["code"] == "invalid_schema" and error["param"].startswith(param), error
            assert upstream_bodies(standin, tag, path) == []
    with pytest.raises(BlockingIOError):
        trap.accept()  # the remote $ref was never fetched


# ---- metrics and the audit record -----------------------------------------------------------------------------


def validations(proxy: Process) -> dict[tuple[str, str], float]:
    status, text = http_get(proxy.admin_url + "/metrics")
    assert status == 200
    found: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            if sample.name == "warden_schema_validations_total":
                found[(sample.labels["result"], sample.labels["source"])] = sample.value
    return found


def delta(before: dict[tuple[str, str], float], after: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    return {key: after[key] - before.get(key, 0) for key in after if after[key] != before.get(key, 0)}


def test_metrics_count_every_validation_by_result_and_source(proxies: Proxies) -> None:
    before = validations(proxies.reask)
    assert post(proxies.reask, chat_body(new_tag(), {"reply": VALID}, response_format=person_format())
                ).status_code == 200
    assert post(proxies.reask, chat_body(new_tag(), {"replies": ['{"answer": 1}', '{"answer": "a"}']},
                                         model="routed-m")).status_code == 200
    assert post(proxies.reask, chat_body(new_tag(), {"reply": "no"}, response_format=person_format())
                ).status_code == 502
    post_stream(proxies.reask, chat_body(new_tag(), {"reply": "no"}, response_format=person_format(), stream=True))
    assert post(proxies.reask, chat_body(new_tag(), {"reply": "prose"})).status_code == 200  # no schema: no count
    assert delta(before, validations(proxies.reask)) == {
        ("valid", "request"): 1, ("reasked", "route"): 1, ("valid", "route"): 1,
        ("reasked", "request"): 2, ("rejected", "request"): 2,
    }
    before = validations(proxies.flag)
    assert post(proxies.flag, chat_body(new_tag(), {"reply": "no"}, response_format=person_format())
                ).status_code == 200
    post_stream(proxies.flag, chat_body(new_tag(), {"reply": "no"}, response_format=person_format(), stream=True))
    assert delta(before, validations(proxies.flag)) == {("invalid", "request"): 2}


def audit_record(audit_dir: Path, request_id: str, timeout: float = 5.0) -> dict[str, Any]:
    """The exchange's record, read from the live log (a whole answer is held until its record is durable;
    a stream's record is queued, hence the wait)."""
    deadline = time.monotonic() + timeout
    while True:
        for segment in sorted((audit_dir / "segments").glob("*")):
            for line in segment.read_bytes().splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line being written
                if record.get("kind") == "exchange" and record["exchange"]["request_id"] == request_id:
                    return dict(record)
        assert time.monotonic() < deadline, f"no audit record for {request_id}"
        time.sleep(0.05)


def test_the_audit_record_carries_the_schema_verdict(proxies: Proxies) -> None:
    person = canonical_sha256(PERSON)
    reasked = post(proxies.reask, chat_body(new_tag(), {"replies": ["no", VALID]}, response_format=person_format()))
    rejected = post(proxies.reask, chat_body(new_tag(), {"reply": "no"}, response_format=person_format()))
    routed = post(proxies.reask, chat_body(new_tag(), {"reply": '{"answer": "a"}'}, model="routed-1"))
    plain = post(proxies.reask, chat_body(new_tag(), {"reply": "prose"}))
    assert [r.status_code for r in (reasked, rejected, routed, plain)] == [200, 502, 200, 200]
    with httpx.stream("POST", proxies.reask.url + "/v1/chat/completions", timeout=30, json=chat_body(
            new_tag(), {"reply": "no"}, response_format=person_format(), stream=True)) as cut:
        cut.read()

    def schema_of(response: httpx.Response) -> object:
        return audit_record(proxies.audit_dir, response.headers["x-warden-request-id"]).get("schema")

    assert schema_of(reasked) == {"result": "valid", "sha256": person, "source": "request", "attempts": 2}
    # The upstream generated both answers for this exchange: the record counts both.
    tokens = audit_record(proxies.audit_dir, reasked.headers["x-warden-request-id"])["exchange"]["tokens"]
    assert tokens["output"] == count_tokens("no") + count_tokens(VALID)
    assert schema_of(rejected) == {"result": "rejected", "sha256": person, "source": "request", "attempts": 3}
    assert schema_of(routed) == {"result": "valid", "sha256": canonical_sha256(ROUTE_SCHEMA), "source": "route",
                                 "attempts": 1}
    assert schema_of(plain) is None
    assert schema_of(cut) == {"result": "rejected", "sha256": person, "source": "request", "attempts": 1}
    record = audit_record(proxies.audit_dir, rejected.headers["x-warden-request-id"])
    assert record["exchange"]["outcome"] == "schema_violation"
    assert NAME not in json.dumps(record)
