"""`warden standin`: a stand-in OpenAI-compatible model server for the demo, the tests and the benchmarks.

It speaks the parts of the OpenAI API (and vLLM's extras) that Warden cares about, deterministically (chat
and text completions, the Responses API, embeddings): replies echo the last prompt, SSE streams are cut into
raw writes of a configurable size so events split in awkward places (inside a multi-byte character, inside
`data:`), `usage` carries `prompt_tokens_details.cached_tokens` from a simulated prefix cache, and `/metrics`
uses vLLM's names.

Per-request behaviour is steered by an optional `standin` object in the request body (the openai client
sends it with `extra_body={"standin": {...}}`; a real server ignores it):
  reply: str            the answer text (default: "Echo: " + the last user text)
  chunk_bytes: int      raw bytes per SSE write (default from --chunk-bytes; 0 = one write per event)
  chars_per_event: int  characters of content per SSE event (default 4)
  pieces: [str]         the content of each SSE event, as a model's tokens would come (the reply is their
                        concatenation; chars_per_event is then unused)
  event_delay_ms: int   pause between SSE writes
  headers_delay_ms: int pause before the response headers (to test upstream timeouts)
  status: int           answer with this error status and an OpenAI-shaped error body
  drop_after_events: int close the connection after this many events (a broken stream)
  raw_sse: str          send these raw bytes as the whole SSE body (malformed streams)
  prefix_cache: bool    false: neither consult nor fill the simulated prefix cache (repeatable answers)
  compress: str         compress the SSE body: gzip, deflate or br whatever the client accepts, or `accepted`
                        (gzip only when the request's Accept-Encoding allows it)
  replies: [str]        one reply per attempt: replies[min(k, len(replies) - 1)], k = the number of
                        `role: assistant` messages in the request (chat `messages`, Responses `input`), so a
                        re-ask that appends the previous answer gets the next reply (`pieces` wins over it,
                        it wins over `reply`)
  tool_calls: [{"name": str, "arguments": str}]
                        answer with these function calls instead of text (or a list of such lists, one per
                        attempt, indexed like `replies`; an empty list there answers with text). Chat: whole,
                        `message.tool_calls` (ids `call_...`, content null, finish_reason `tool_calls`);
                        streamed, a first delta per call (index, id, type, name, empty arguments), then the
                        arguments in pieces of `chars_per_event`, the calls' pieces interleaved. Responses:
                        `function_call` output items, streamed as `response.function_call_arguments.delta`.

The Responses API (`POST /v1/responses`) answers `output: [{type: message, content: [{type: output_text,
text}]}]`; streamed, the typed events OpenAI sends (`event:` and `data:` lines, `sequence_number`):
`response.created`, `response.in_progress`, `response.output_item.added`, `response.content_part.added`,
`response.output_text.delta`..., `response.output_text.done`, `response.content_part.done`,
`response.output_item.done`, `response.completed`, and no `[DONE]`.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import json
import socket
import ssl
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BASE_MODEL = "standin-base"
LORA_ADAPTER = "standin-lora-sql"
RECEIVED_LOG_SIZE = 1000
CACHE_BLOCK_TOKENS = 16  # vLLM caches whole KV blocks: only full blocks of a shared prefix count as hits


def count_tokens(text: str) -> int:
    """A deterministic stand-in tokenizer: one token per CJK character, per word, per punctuation mark."""
    tokens = 0
    in_word = False
    for ch in text:
        if ch.isspace():
            in_word = False
        elif ord(ch) >= 0x2E80 or not ch.isalnum():
            tokens += 1
            in_word = False
        elif not in_word:
            tokens += 1
            in_word = True
    return tokens


@dataclass
class PrefixCache:
    """A tiny LRU of prompt prefixes, so repeated prompts report `cached_tokens` like vLLM's prefix cache."""

    capacity: int = 256
    _seen: OrderedDict[str, int] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    queries: int = 0
    hits: int = 0

    def lookup(self, prompt: str, prompt_tokens: int) -> int:
        key = hashlib.sha256(prompt.encode()).hexdigest()
        with self._lock:
            self.queries += prompt_tokens
            cached = 0
            if key in self._seen:
                self._seen.move_to_end(key)
                cached = (prompt_tokens // CACHE_BLOCK_TOKENS) * CACHE_BLOCK_TOKENS
            else:
                self._seen[key] = prompt_tokens
                if len(self._seen) > self.capacity:
                    self._seen.popitem(last=False)
            self.hits += cached
            return cached


@dataclass
class Counters:
    requests: int = 0
    prompt_tokens: int = 0
    generation_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True, slots=True)
class StandinConfig:
    chunk_bytes: int = 0
    chars_per_event: int = 4
    event_delay_ms: int = 0
    health: bool = True  # False: no health endpoint (404), like llama-cpp-python's server


def last_user_content(items: list[Any]) -> str:
    """The text of the last `role: user` item (chat messages, Responses input items): a string, or its
    parts' texts joined."""
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def last_user_text(body: dict[str, Any]) -> str:
    """The text a reply echoes: the last user message (chat), the prompt (completions)."""
    if isinstance(body.get("messages"), list):
        return last_user_content(body["messages"])
    prompt = body.get("prompt")
    if isinstance(prompt, list):
        return " ".join(str(p) for p in prompt)
    return str(prompt or "")


def responses_input_text(body: dict[str, Any]) -> str:
    """The text a Responses reply echoes: `input` as a string, or its last user item's text."""
    given = body.get("input")
    if isinstance(given, str):
        return given
    return last_user_content(given) if isinstance(given, list) else ""


def prompt_text(body: dict[str, Any]) -> str:
    if isinstance(body.get("messages"), list):
        return json.dumps(body["messages"], ensure_ascii=False, sort_keys=True)
    if "input" in body:
        return json.dumps([body.get("instructions"), body["input"]], ensure_ascii=False, sort_keys=True)
    return str(body.get("prompt", ""))


def assistant_turns(body: dict[str, Any]) -> int:
    """How many answers the conversation already holds (`role: assistant` in chat `messages` or Responses
    `input`): a re-ask appends the answer it re-asks about, so this is the attempt's index."""
    for key in ("messages", "input"):
        if isinstance(body.get(key), list):
            return sum(1 for m in body[key] if isinstance(m, dict) and m.get("role") == "assistant")
    return 0


def choose_reply(body: dict[str, Any], knobs: dict[str, Any], echoed: str) -> str:
    """The answer's text: `pieces` joined, else `replies` by attempt, else `reply`, else an echo."""
    pieces = event_pieces(knobs)
    if pieces is not None:
        return "".join(pieces)
    replies = knobs.get("replies")
    if isinstance(replies, list) and replies:
        return str(replies[min(assistant_turns(body), len(replies) - 1)])
    return str(knobs["reply"]) if "reply" in knobs else "Echo: " + echoed


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: str  # a JSON text as a model writes it: valid or not, the stand-in sends it as given


def choose_tool_calls(body: dict[str, Any], knobs: dict[str, Any]) -> list[ToolCall]:
    """The `tool_calls` knob for this attempt: [] answers with text."""
    calls = knobs.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return []
    if all(isinstance(c, list) for c in calls):  # one list per attempt, like `replies`
        calls = calls[min(assistant_turns(body), len(calls) - 1)]
    found = []
    for call in calls:
        if isinstance(call, dict):
            arguments = call.get("arguments", "")
            text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            found.append(ToolCall(str(call.get("name", "")), text))
    return found


def short_id(prefix: str, *parts: object) -> str:
    return prefix + hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()[:24]


def split_text(text: str, per_event: int) -> list[str]:
    return [text[i : i + per_event] for i in range(0, len(text), per_event)]


def split_bytes(data: bytes, size: int) -> Iterator[bytes]:
    if size <= 0:
        yield data
        return
    for i in range(0, len(data), size):
        yield data[i : i + size]


def event_pieces(knobs: dict[str, Any]) -> list[str] | None:
    """The `pieces` knob: each streamed event's content, as given (None when the knob is absent)."""
    return [str(p) for p in knobs["pieces"]] if "pieces" in knobs else None


class StandinHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked responses
    server: StandinServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # ---- plumbing -------------------------------------------------------------------------------------------

    def send_json(self, status: int, payload: object, extra_headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (extra_headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_error_json(self, status: int, message: str, code: str) -> None:
        self.send_json(status, {"error": {"message": message, "type": "invalid_request_error", "code": code}})

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        return raw

    # ---- routes ---------------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/health", "/v2/health/ready") and not self.server.config.health:
            self.send_json(404, {"detail": "Not Found"})  # FastAPI's 404, as llama-cpp-python answers it
        elif path in ("/health", "/v2/health/ready"):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/v1/models":
            self.send_json(200, self.server.models_payload())
        elif path == "/metrics":
            data = self.server.metrics_text().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif path.startswith("/echo"):
            self.send_json(200, self.echo_payload(b""))
        elif path == "/_standin/aborted":
            # Streams whose reader went away mid-way: lets tests see that a vanished client cancels upstream.
            self.send_json(200, {"aborted_streams": self.server.aborted_streams})
        elif path == "/_standin/received":
            self.send_json(200, {"received": list(self.server.received)})
        elif path == "/_standin/last":
            # What the model server last received: lets tests see what the proxy forwarded.
            data = self.server.last_body
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self.send_error_json(404, f"no route {path}", "not_found")

    def do_POST(self) -> None:
        raw = self.read_body()
        self.server.last_body = raw
        self.server.received.append({"method": self.command, "path": self.path,
                                     "body": raw.decode("utf-8", "replace")})
        path = self.path.split("?", 1)[0]
        if path.startswith("/echo"):
            self.send_json(200, self.echo_payload(raw))
            return
        try:
            body = json.loads(raw) if raw else {}
        except (json.JSONDecodeError, UnicodeDecodeError):
            self.send_error_json(400, "request body is not valid JSON", "invalid_json")
            return
        if not isinstance(body, dict):
            self.send_error_json(400, "request body must be a JSON object", "invalid_json")
            return
        try:
            json.dumps(body, ensure_ascii=False).encode()
        except UnicodeEncodeError:  # a lone surrogate ("\ud800"): strict servers (pydantic's parser) refuse it
            self.send_error_json(400, "request body holds a lone surrogate", "invalid_json")
            return
        knobs = body.get("standin") if isinstance(body.get("standin"), dict) else {}
        assert isinstance(knobs, dict)
        if knobs.get("headers_delay_ms"):
            time.sleep(int(knobs["headers_delay_ms"]) / 1000)
        if knobs.get("status"):
            self.send_error_json(int(knobs["status"]), "stand-in error on request", "standin_error")
            return
        if path == "/v1/chat/completions":
            self.completion(body, knobs, chat=True)
        elif path == "/v1/completions":
            self.completion(body, knobs, chat=False)
        elif path == "/v1/responses":
            self.responses_api(body, knobs)
        elif path == "/v1/embeddings":
            self.embeddings(body)
        elif path in ("/v1/load_lora_adapter", "/v1/unload_lora_adapter"):
            self.send_json(200, {"status": "ok"})
        else:
            self.send_error_json(404, f"no route {path}", "not_found")

    do_PUT = do_POST
    do_PATCH = do_POST
    do_DELETE = do_GET

    def echo_payload(self, raw: bytes) -> dict[str, Any]:
        """What the server saw: lets tests check exact pass-through of method, path, headers and body."""
        return {
            "method": self.command,
            "path": self.path,
            "headers": [[k, v] for k, v in self.headers.items()],
            "body_sha256": hashlib.sha256(raw).hexdigest(),
            "body_len": len(raw),
        }

    def embeddings(self, body: dict[str, Any]) -> None:
        inputs = body.get("input", "")
        items = inputs if isinstance(inputs, list) else [inputs]
        data = []
        for i, item in enumerate(items):
            digest = hashlib.sha256(str(item).encode()).digest()
            vector = [round((b - 128) / 128, 4) for b in digest[:16]]
            data.append({"object": "embedding", "index": i, "embedding": vector})
        tokens = sum(count_tokens(str(item)) for item in items)
        self.send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model", BASE_MODEL),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def account(self, body: dict[str, Any], knobs: dict[str, Any], generated: str) -> tuple[int, int, int]:
        """Count the exchange's tokens (and consult the prefix cache): prompt, completion, cached."""
        prompt_tokens = count_tokens(prompt_text(body))
        completion_tokens = count_tokens(generated)
        use_cache = knobs.get("prefix_cache", True) is not False
        cached = self.server.prefix_cache.lookup(prompt_text(body), prompt_tokens) if use_cache else 0
        with self.server.counters.lock:
            self.server.counters.requests += 1
            self.server.counters.prompt_tokens += prompt_tokens
            self.server.counters.generation_tokens += completion_tokens
        return prompt_tokens, completion_tokens, cached

    def completion(self, body: dict[str, Any], knobs: dict[str, Any], *, chat: bool) -> None:
        model = str(body.get("model") or BASE_MODEL)
        reply = choose_reply(body, knobs, last_user_text(body))
        calls = choose_tool_calls(body, knobs) if chat else []
        generated = "".join(c.arguments for c in calls) if calls else reply
        prompt_tokens, completion_tokens, cached = self.account(body, knobs, generated)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        ident = ("chatcmpl-" if chat else "cmpl-") + hashlib.sha256(
            (model + (json.dumps([[c.name, c.arguments] for c in calls]) if calls else reply)).encode()
        ).hexdigest()[:24]
        created = 1_700_000_000
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            if calls:
                self.stream_tool_calls(ident, created, model, calls, usage if include_usage else None, knobs)
            else:
                self.stream(ident, created, model, reply, usage if include_usage else None, knobs, chat=chat)
            return
        if calls:
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [
                    {"id": short_id("call_", ident, i), "type": "function",
                     "function": {"name": c.name, "arguments": c.arguments}}
                    for i, c in enumerate(calls)
                ]},
                "finish_reason": "tool_calls",
                "logprobs": None,
            }
            obj = "chat.completion"
        elif chat:
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": reply},
                "finish_reason": "stop",
                "logprobs": None,
            }
            obj = "chat.completion"
        else:
            choice = {"index": 0, "text": reply, "finish_reason": "stop", "logprobs": None}
            obj = "text_completion"
        self.send_json(
            200,
            {"id": ident, "object": obj, "created": created, "model": model, "choices": [choice], "usage": usage},
        )

    def responses_api(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        """The Responses API: one `message` output item with one `output_text` part, or `function_call`
        items for the `tool_calls` knob; streamed as its typed events."""
        model = str(body.get("model") or BASE_MODEL)
        reply = choose_reply(body, knobs, responses_input_text(body))
        calls = choose_tool_calls(body, knobs)
        generated = "".join(c.arguments for c in calls) if calls else reply
        input_tokens, output_tokens, cached = self.account(body, knobs, generated)
        ident = short_id("resp_", model, generated, [c.name for c in calls])
        text_format = body.get("text") if isinstance(body.get("text"), dict) else {"format": {"type": "text"}}
        response: dict[str, Any] = {
            "id": ident, "object": "response", "created_at": 1_700_000_000, "status": "in_progress",
            "error": None, "incomplete_details": None, "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"), "model": model, "output": [],
            "parallel_tool_calls": True, "previous_response_id": None, "store": False,
            "temperature": body.get("temperature", 1.0), "text": text_format,
            "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools", []),
            "top_p": body.get("top_p", 1.0), "truncation": "disabled", "usage": None, "metadata": {},
        }
        usage = {
            "input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        }
        items: list[dict[str, Any]]
        if calls:
            items = [{"type": "function_call", "id": short_id("fc_", ident, i), "call_id": short_id("call_", ident, i),
                      "name": c.name, "arguments": c.arguments, "status": "completed"}
                     for i, c in enumerate(calls)]
        else:
            items = [{"type": "message", "id": short_id("msg_", ident), "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": reply, "annotations": []}]}]
        done = {**response, "status": "completed", "output": items, "usage": usage}
        if not body.get("stream"):
            self.send_json(200, done)
            return
        per_event = max(1, int(knobs.get("chars_per_event", self.server.config.chars_per_event)))
        self.write_sse(list(responses_events(response, done, per_event, event_pieces(knobs))), knobs)

    def sse_events(
        self, ident: str, created: int, model: str, pieces: list[str], usage: dict[str, Any] | None, *,
        chat: bool,
    ) -> Iterator[bytes]:
        obj = "chat.completion.chunk" if chat else "text_completion"

        def event(choices: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> bytes:
            payload: dict[str, Any] = {"id": ident, "object": obj, "created": created, "model": model,
                                       "choices": choices}
            if usage is not None:
                payload["usage"] = None  # vLLM sends an explicit null until the final usage chunk
            payload.update(extra or {})
            return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"

        if chat:
            yield event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        for piece in pieces:
            if chat:
                yield event([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
            else:
                yield event([{"index": 0, "text": piece, "finish_reason": None}])
        if chat:
            yield event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
        else:
            yield event([{"index": 0, "text": "", "finish_reason": "stop"}])
        if usage is not None:
            yield event([], {"usage": usage})
        yield b"data: [DONE]\n\n"

    def chat_tool_events(
        self, ident: str, created: int, model: str, calls: list[ToolCall], usage: dict[str, Any] | None,
        per_event: int,
    ) -> Iterator[bytes]:
        """Tool calls streamed as OpenAI streams them: a first delta per call with its index, id, type, name
        and empty arguments, then argument pieces (one call's piece, then the next call's, in turn)."""

        def event(delta: dict[str, Any], finish: str | None = None, extra: dict[str, Any] | None = None,
                  choices: bool = True) -> bytes:
            payload: dict[str, Any] = {
                "id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}] if choices
                else [],
            }
            if usage is not None:
                payload["usage"] = None
            payload.update(extra or {})
            return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"

        for i, call in enumerate(calls):
            header = {"index": i, "id": short_id("call_", ident, i), "type": "function",
                      "function": {"name": call.name, "arguments": ""}}
            yield event({"role": "assistant", "content": None, "tool_calls": [header]} if i == 0
                        else {"tool_calls": [header]})
        pieces = [split_text(call.arguments, per_event) for call in calls]
        for n in range(max((len(p) for p in pieces), default=0)):
            for i, parts in enumerate(pieces):
                if n < len(parts):
                    yield event({"tool_calls": [{"index": i, "function": {"arguments": parts[n]}}]})
        yield event({}, "tool_calls")
        if usage is not None:
            yield event({}, extra={"usage": usage}, choices=False)
        yield b"data: [DONE]\n\n"

    def stream_tool_calls(
        self, ident: str, created: int, model: str, calls: list[ToolCall], usage: dict[str, Any] | None,
        knobs: dict[str, Any],
    ) -> None:
        per_event = max(1, int(knobs.get("chars_per_event", self.server.config.chars_per_event)))
        self.write_sse(list(self.chat_tool_events(ident, created, model, calls, usage, per_event)), knobs)

    def stream(
        self, ident: str, created: int, model: str, reply: str, usage: dict[str, Any] | None,
        knobs: dict[str, Any], *, chat: bool,
    ) -> None:
        per_event = max(1, int(knobs.get("chars_per_event", self.server.config.chars_per_event)))
        pieces = event_pieces(knobs) or split_text(reply, per_event)
        self.write_sse(list(self.sse_events(ident, created, model, pieces, usage, chat=chat)), knobs)

    def write_sse(self, events: list[bytes], knobs: dict[str, Any]) -> None:
        """Send SSE events as raw chunked writes, steered by the knobs (split, delayed, compressed, dropped,
        or replaced by `raw_sse`)."""
        config = self.server.config
        chunk_bytes = int(knobs.get("chunk_bytes", config.chunk_bytes))
        delay = int(knobs.get("event_delay_ms", config.event_delay_ms)) / 1000
        drop_after = knobs.get("drop_after_events")
        encoder = StreamEncoder.for_knob(knobs.get("compress"), self.headers.get("Accept-Encoding", ""))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        if encoder is not None:
            self.send_header("Content-Encoding", encoder.name)
        self.end_headers()
        self.wfile.flush()
        if "raw_sse" in knobs:
            events = [str(knobs["raw_sse"]).encode()]
        try:
            for n, data in enumerate(events):
                if drop_after is not None and n >= int(drop_after):
                    # A broken upstream: the stream stops mid-way and the connection goes away.
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                wire = encoder.encode(data) if encoder is not None else data
                for piece in split_bytes(wire, chunk_bytes):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                    if delay:
                        time.sleep(delay)
            if encoder is not None and (tail := encoder.finish()):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(tail), tail))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client (or the proxy on its behalf) went away mid-stream: stop generating, like vLLM does.
            self.server.aborted_streams += 1
            self.close_connection = True


def responses_events(
    started: dict[str, Any], done: dict[str, Any], per_event: int, pieces: list[str] | None,
) -> Iterator[bytes]:
    """A Responses API stream, as OpenAI sends it: `event: <type>` and `data: {"type": <type>,
    "sequence_number": n, ...}` for each step, ending with `response.completed` (there is no `[DONE]`)."""
    sequence = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal sequence
        payload = {"type": kind, "sequence_number": sequence, **fields}
        sequence += 1
        return f"event: {kind}\ndata: ".encode() + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"

    yield event("response.created", response=started)
    yield event("response.in_progress", response=started)
    for index, item in enumerate(done["output"]):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "function_call":
            yield event("response.output_item.added", output_index=index,
                        item={**item, "arguments": "", "status": "in_progress"})
            for piece in split_text(item["arguments"], per_event):
                yield event("response.function_call_arguments.delta", **at, delta=piece)
            yield event("response.function_call_arguments.done", **at, arguments=item["arguments"])
        else:
            text = item["content"][0]["text"]
            yield event("response.output_item.added", output_index=index,
                        item={**item, "status": "in_progress", "content": []})
            yield event("response.content_part.added", **at, content_index=0,
                        part={"type": "output_text", "text": "", "annotations": []})
            for piece in pieces if pieces is not None else split_text(text, per_event):
                yield event("response.output_text.delta", **at, content_index=0, delta=piece, logprobs=[])
            yield event("response.output_text.done", **at, content_index=0, text=text, logprobs=[])
            yield event("response.content_part.done", **at, content_index=0, part=item["content"][0])
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=done)


class StreamEncoder:
    """A compressed SSE body, event by event (each flushed, as a compressing server writes them): the `compress`
    knob forces `gzip`, `deflate` or `br` whatever the client accepts (a misbehaving upstream), or `accepted`
    compresses with gzip only when the request's Accept-Encoding allows it (a well-behaved one)."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "br":
            import brotli  # a dependency of mitmproxy

            self._br = brotli.Compressor()
        else:
            self._zlib = zlib.compressobj(wbits=31 if name == "gzip" else 15)

    @classmethod
    def for_knob(cls, knob: object, accept_encoding: str) -> StreamEncoder | None:
        if knob == "accepted":
            return cls("gzip") if "gzip" in accept_encoding.lower() else None
        return cls(str(knob)) if knob in ("gzip", "deflate", "br") else None

    def encode(self, data: bytes) -> bytes:
        if self.name == "br":
            return bytes(self._br.process(data) + self._br.flush())
        return self._zlib.compress(data) + self._zlib.flush(zlib.Z_SYNC_FLUSH)

    def finish(self) -> bytes:
        return bytes(self._br.finish()) if self.name == "br" else self._zlib.flush()


class StandinServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], config: StandinConfig,
                 tls: ssl.SSLContext | None = None) -> None:
        super().__init__(address, StandinHandler)
        self.config = config
        self.tls = tls
        self.prefix_cache = PrefixCache()
        self.counters = Counters()
        self.aborted_streams = 0
        self.last_body = b""
        # Every request line and body received, in order (the last RECEIVED_LOG_SIZE): tests assert on what
        # reached the model server, including requests the proxy never saw as such (smuggled ones).
        self.received: collections.deque[dict[str, object]] = collections.deque(maxlen=RECEIVED_LOG_SIZE)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        if self.tls is None:
            return sock, address
        # The handshake runs on the first read, in the request's own thread: not in the accept loop.
        return self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def models_payload(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": BASE_MODEL, "object": "model", "owned_by": "warden-standin", "root": BASE_MODEL,
                 "parent": None},
                {"id": LORA_ADAPTER, "object": "model", "owned_by": "warden-standin",
                 "root": "/adapters/" + LORA_ADAPTER, "parent": BASE_MODEL},
            ],
        }

    def metrics_text(self) -> str:
        """Counters under vLLM's metric names, so metric merging and KV-cache hit rate can be tested."""
        labels = f'{{model_name="{BASE_MODEL}"}}'
        lines = [
            "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.",
            "# TYPE vllm:prompt_tokens_total counter",
            f"vllm:prompt_tokens_total{labels} {self.counters.prompt_tokens}",
            "# HELP vllm:generation_tokens_total Number of generation tokens processed.",
            "# TYPE vllm:generation_tokens_total counter",
            f"vllm:generation_tokens_total{labels} {self.counters.generation_tokens}",
            "# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.",
            "# TYPE vllm:prefix_cache_queries_total counter",
            f"vllm:prefix_cache_queries_total{labels} {self.prefix_cache.queries}",
            "# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.",
            "# TYPE vllm:prefix_cache_hits_total counter",
            f"vllm:prefix_cache_hits_total{labels} {self.prefix_cache.hits}",
            "# HELP vllm:num_requests_running Number of requests in model execution batches.",
            "# TYPE vllm:num_requests_running gauge",
            f"vllm:num_requests_running{labels} 0",
        ]
        return "\n".join(lines) + "\n"


def serve(host: str, port: int, config: StandinConfig) -> StandinServer:
    """Start a stand-in server in a background thread and return it (port 0 picks a free port)."""
    server = StandinServer((host, port), config)
    threading.Thread(target=server.serve_forever, name="standin", daemon=True).start()
    return server


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="warden standin", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--chunk-bytes", type=int, default=0, help="raw bytes per SSE write (0: per event)")
    parser.add_argument("--chars-per-event", type=int, default=4)
    parser.add_argument("--event-delay-ms", type=int, default=0)
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (and --tls-key)")
    parser.add_argument("--tls-key")
    parser.add_argument("--no-health", dest="health", action="store_false",
                        help="answer /health with 404, as llama-cpp-python's server does (llama-server has one)")
    args = parser.parse_args(argv)
    config = StandinConfig(args.chunk_bytes, args.chars_per_event, args.event_delay_ms, args.health)
    tls = None
    if args.tls_cert:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(args.tls_cert, args.tls_key)
    server = StandinServer((args.host, args.port), config, tls)
    scheme = "https" if tls else "http"
    print(f"standin listening on {scheme}://{args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
