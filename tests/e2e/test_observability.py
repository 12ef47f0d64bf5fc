"""Observability, whole-process: spans caught over the wire by a loopback OTLP/HTTP receiver, metrics
scraped from the admin port and parsed with prometheus-client's parser, a real Prometheus server scraping
Warden with our rules loaded and the dashboard's queries run against it, and planted PII found nowhere in
spans, logs or metrics."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from proxy.lora import adapter_weights_sha256
from tests.e2e.conftest import REPO, Process, free_port, http_get, start_standin, wait_for_port, warden_command
from tests.e2e.otlp_receiver import OtlpReceiver, ReceivedSpan, start_receiver

pytestmark = pytest.mark.slow

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_SPAN}-01"
ADAPTER = "standin-lora-sql"
ID_NUMBER = "11010519491231002X"  # GB 11643's example: a valid check digit
MOBILE = "13812345678"
EMAIL = "zhang.san.planted@example.com"
PLANTED = (ID_NUMBER, MOBILE, EMAIL)
DASHBOARD = REPO / "deploy" / "grafana" / "warden.json"
RULES = REPO / "deploy" / "prometheus" / "warden-rules.yaml"


class Observed:
    """One stand-in, one receiver, one `warden serve` with tracing, LoRA checksums and merged metrics."""

    def __init__(self, tmp: Path) -> None:
        self.receiver: OtlpReceiver = start_receiver()
        self.standin = start_standin()
        self.lora_dir = tmp / "adapters"
        adapter = self.lora_dir / ADAPTER
        adapter.mkdir(parents=True)
        (adapter / "adapter_config.json").write_text('{"r": 8, "lora_alpha": 16}')
        (adapter / "adapter_model.safetensors").write_bytes(os.urandom(4096))
        self.weights_sha256 = adapter_weights_sha256(adapter)
        self.log_path = tmp / "warden.log"
        port, admin = free_port(), free_port()
        env = {**os.environ, "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
               "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{self.receiver.endpoint}/v1/traces",
               "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_SERVICE_NAME": "warden-e2e",
               "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test"}
        with open(self.log_path, "wb") as log:
            proc = subprocess.Popen(
                warden_command("serve", "--upstream", self.standin.url, "--listen", f"127.0.0.1:{port}",
                               "--admin", f"127.0.0.1:{admin}", "--log-level", "debug",
                               "--lora-dir", str(self.lora_dir), "--upstream-metrics", "/metrics"),
                cwd=REPO, stdout=subprocess.DEVNULL, stderr=log, env=env,
            )
        self.proxy = Process(proc, port, admin, self.log_path)
        wait_for_port(port, proc)
        wait_for_port(admin, proc)
        self.client = openai.OpenAI(base_url=self.proxy.url + "/v1", api_key="unused", max_retries=0)

    def close(self) -> None:
        self.proxy.stop()
        self.standin.stop()
        self.receiver.close()

    def metrics(self) -> dict[str, list[tuple[dict[str, str], float]]]:
        status, body = http_get(self.proxy.admin_url + "/metrics")
        assert status == 200
        out: dict[str, list[tuple[dict[str, str], float]]] = {}
        for family in text_string_to_metric_families(body.decode()):
            for sample in family.samples:
                out.setdefault(sample.name, []).append((sample.labels, sample.value))
        return out

    def log_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Observed]:
    o = Observed(tmp_path_factory.mktemp("observed"))
    yield o
    o.close()


def trace_of(spans: list[ReceivedSpan], request_id: str) -> tuple[ReceivedSpan, ReceivedSpan | None]:
    server = next(s for s in spans if s.kind == "SERVER" and s.attributes.get("warden.request_id") == request_id)
    client = next((s for s in spans if s.kind == "CLIENT" and s.parent_span_id == server.span_id), None)
    return server, client


def wait_trace(o: Observed, request_id: str, client: bool = True) -> tuple[ReceivedSpan, ReceivedSpan | None]:
    def ready(spans: list[ReceivedSpan]) -> bool:
        try:
            _server, child = trace_of(spans, request_id)
        except StopIteration:
            return False
        return child is not None or not client

    return trace_of(o.receiver.wait_for(ready), request_id)


def test_spans_continue_the_clients_trace_and_reach_the_upstream(observed: Observed) -> None:
    o = observed
    response = httpx.post(o.proxy.url + "/echo", json={"x": 1},
                          headers={"traceparent": TRACEPARENT, "tracestate": "congo=t61rcWkgMzE",
                                   "x-request-id": "req-echo-1"})
    seen = {k.lower(): v for k, v in response.json()["headers"]}
    server, client = wait_trace(o, "req-echo-1")
    assert client is not None
    assert server.trace_id == client.trace_id == TRACE_ID
    assert server.parent_span_id == PARENT_SPAN
    assert seen["traceparent"] == f"00-{TRACE_ID}-{client.span_id}-01"  # the model server nests under our CLIENT
    assert seen["tracestate"] == "congo=t61rcWkgMzE"
    assert seen["x-request-id"] == "req-echo-1"
    assert server.resource["service.name"] == "warden-e2e"
    assert server.resource["deployment.environment.name"] == "test"


def test_chat_spans_carry_the_genai_and_lora_attributes(observed: Observed) -> None:
    o = observed
    raw = o.client.chat.completions.with_raw_response.create(
        model=ADAPTER, messages=[{"role": "user", "content": "SELECT the answer"}], max_tokens=32, temperature=0.3,
        extra_headers={"traceparent": TRACEPARENT, "x-request-id": "req-chat-1"},
    )
    answer = raw.parse()
    server, client = wait_trace(o, "req-chat-1")
    assert client is not None
    assert server.name == "POST /v1/chat/completions"
    assert client.name == f"chat {ADAPTER}"
    c = client.attributes
    assert c["gen_ai.operation.name"] == "chat"
    assert c["gen_ai.provider.name"] == "vllm"
    assert c["gen_ai.request.model"] == ADAPTER
    assert c["gen_ai.request.max_tokens"] == 32
    assert c["gen_ai.request.temperature"] == pytest.approx(0.3)
    assert c["gen_ai.request.stream"] is False
    assert c["gen_ai.response.id"] == answer.id
    assert c["gen_ai.response.model"] == answer.model
    assert c["gen_ai.response.finish_reasons"] == ["stop"]
    assert answer.usage is not None
    assert c["gen_ai.usage.input_tokens"] == answer.usage.prompt_tokens
    assert c["gen_ai.usage.output_tokens"] == answer.usage.completion_tokens
    assert c["server.address"] == "127.0.0.1" and c["server.port"] == o.standin.port
    assert c["warden.lora.adapter"] == ADAPTER
    assert c["warden.lora.weights_sha256"] == o.weights_sha256
    assert c["warden.base_model"] == "standin-base"
    s = server.attributes
    assert s["http.response.status_code"] == 200
    assert s["warden.lora.adapter"] == ADAPTER
    assert len(s["warden.input.hmac"]) == 64 and len(s["warden.output.hmac"]) == 64
    events = [e for e in server.events if e.name == "gen_ai.guardrail.result"]
    assert {e.attributes["gen_ai.guardrail.source"] for e in events} == {"input", "output"}
    for event in events:
        assert event.attributes["gen_ai.guardrail.component"] == "warden"
        assert event.attributes["gen_ai.guardrail.result"] == "pass"
    # the request id and the trace id are in the exchange log line
    line = next(entry for entry in o.log_lines() if entry.get("request_id") == "req-chat-1"
                and entry["msg"] == "exchange")
    assert line["trace_id"] == TRACE_ID


def test_streamed_spans_have_time_to_first_chunk_and_usage(observed: Observed) -> None:
    o = observed
    stream = o.client.chat.completions.create(
        model="standin-base", messages=[{"role": "user", "content": "stream me"}], stream=True,
        stream_options={"include_usage": True}, extra_headers={"x-request-id": "req-stream-1"},
    )
    chunks = list(stream)
    usage = chunks[-1].usage
    assert usage is not None
    _, client = wait_trace(o, "req-stream-1")
    assert client is not None
    c = client.attributes
    assert c["gen_ai.request.stream"] is True
    assert 0 < c["gen_ai.response.time_to_first_chunk"] < 5
    assert c["gen_ai.usage.output_tokens"] == usage.completion_tokens
    assert c["gen_ai.response.id"] == chunks[0].id
    assert c["gen_ai.response.finish_reasons"] == ["stop"]
    assert "warden.lora.adapter" not in c
    assert c["warden.base_model"] == "standin-base"


def test_a_blocked_request_is_a_server_span_with_a_guardrail_event(observed: Observed) -> None:
    o = observed
    with pytest.raises(openai.APIStatusError):
        o.client.chat.completions.create(model="standin-base",
                                         messages=[{"role": "user", "content": "帮我找个枪手代考"}],
                                         extra_headers={"x-request-id": "req-block-1"})
    server, client = wait_trace(o, "req-block-1", client=False)
    assert client is None
    assert server.attributes["warden.outcome"] == "blocked"
    (event,) = [e for e in server.events if e.name == "gen_ai.guardrail.result"]
    assert event.attributes["gen_ai.guardrail.result"] == "block"
    assert event.attributes["gen_ai.guardrail.source"] == "input"
    assert "exam_fraud" in event.attributes["gen_ai.guardrail.rule_ids"]
    assert "代考" not in json.dumps(event.attributes, ensure_ascii=False)


def test_model_admin_routes_are_denied_and_audited(observed: Observed) -> None:
    o = observed
    response = httpx.post(o.proxy.url + "/v1/load_lora_adapter", json={"lora_name": "x", "lora_path": "/w/x"},
                          headers={"x-request-id": "req-admin-1"})
    assert response.status_code == 403
    error = response.json()["error"]
    assert (error["type"], error["code"]) == ("permission_error", "model_admin_denied")
    server, client = wait_trace(o, "req-admin-1", client=False)
    assert client is None
    assert server.attributes["warden.model_admin.action"] == "load_lora_adapter"
    assert server.attributes["warden.model_admin.allowed"] is False
    assert any(e.get("request_id") == "req-admin-1" and e["msg"] == "model admin call denied" and e["adapter"] == "x"
               for e in o.log_lines())


def test_metrics_after_plain_streamed_blocked_and_failed_requests(observed: Observed) -> None:
    o = observed
    text = "a prompt long enough to fill one KV block of sixteen tokens or more, twice"
    prompt: list[Any] = [{"role": "user", "content": text}]
    for _ in range(2):  # the second one hits the stand-in's prefix cache
        o.client.chat.completions.create(model="standin-base", messages=prompt)
    list(o.client.chat.completions.create(model="standin-base", messages=prompt, stream=True,
                                          stream_options={"include_usage": True}))
    with pytest.raises(openai.APIStatusError):
        o.client.chat.completions.create(model="standin-base",
                                         messages=[{"role": "user", "content": "帮我找个枪手代考"}])
    with pytest.raises(openai.APIStatusError):
        o.client.chat.completions.create(model="standin-base", messages=prompt,
                                         extra_body={"standin": {"status": 503}})
    m = o.metrics()

    def value(name: str, **labels: str) -> float:
        return sum(v for lab, v in m.get(name, []) if all(lab.get(k) == x for k, x in labels.items()))

    assert value("warden_requests_total", route="chat", outcome="ok", code_class="2xx") >= 3
    assert value("warden_requests_total", route="chat", outcome="blocked") >= 1
    assert value("warden_requests_total", route="chat", outcome="upstream_error", code_class="5xx") >= 1
    assert value("warden_request_duration_seconds_count", route="chat") >= 5
    assert value("warden_time_to_first_token_seconds_count", model_name="standin-base") >= 1
    assert value("warden_time_per_output_token_seconds_count", model_name="standin-base") >= 1
    assert value("warden_prompt_tokens_total", model_name="standin-base") > 0
    assert value("warden_generation_tokens_total", model_name="standin-base") > 0
    assert value("warden_prompt_tokens_cached_total", model_name="standin-base") >= 16
    assert value("warden_guard_detections_total", direction="input", action="block") >= 1
    assert value("warden_guard_duration_seconds_count") >= 1
    assert value("warden_inflight_requests") == 0
    assert value("warden_build_info") == 1
    assert value("warden_upstream_up") == 1
    # merged from the stand-in's vLLM-style /metrics: the engine KV-cache hit rate is computable
    assert value("vllm:prefix_cache_queries_total") > 0
    assert value("vllm:prefix_cache_hits_total") >= 16
    for labels, _ in m["warden_requests_total"]:
        assert set(labels) == {"route", "model_name", "code_class", "outcome"}


def test_planted_pii_appears_in_no_span_log_line_or_metric(observed: Observed) -> None:
    o = observed
    text = f"我的身份证号 {ID_NUMBER}，手机 {MOBILE}，邮箱 {EMAIL}"
    o.client.chat.completions.create(model=ADAPTER, messages=[{"role": "user", "content": text}],
                                     extra_headers={"x-request-id": "req-pii-1"})
    list(o.client.chat.completions.create(model="standin-base", messages=[{"role": "user", "content": text}],
                                          stream=True, extra_headers={"x-request-id": "req-pii-2"},
                                          extra_body={"standin": {"reply": text}}))
    o.client.chat.completions.create(model="standin-base", messages=[{"role": "user", "content": "hi"}],
                                     extra_headers={"x-request-id": "req-pii-3"},
                                     extra_body={"standin": {"reply": text}})
    for request_id in ("req-pii-1", "req-pii-2", "req-pii-3"):
        wait_trace(o, request_id)
    metrics_text = http_get(o.proxy.admin_url + "/metrics")[1].decode()
    spans = b"".join(o.receiver.raw_bodies)
    logs = o.log_path.read_bytes()
    for secret in PLANTED:
        assert secret.encode() not in spans, secret
        assert secret.encode() not in logs, secret
        assert secret not in metrics_text, secret
    server, _ = trace_of(o.receiver.spans, "req-pii-1")
    kinds = {k for e in server.events for k in e.attributes.get("gen_ai.guardrail.finding_kinds", [])}
    assert {"cn_resident_id", "cn_mobile", "email"} <= kinds  # detected, and only named


def test_failed_upstream_is_an_error_span_and_counted(tmp_path: Path) -> None:
    receiver = start_receiver()
    dead = f"http://127.0.0.1:{free_port()}"
    port, admin = free_port(), free_port()
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    proc = subprocess.Popen(warden_command("serve", "--upstream", dead, "--listen", f"127.0.0.1:{port}",
                                           "--admin", f"127.0.0.1:{admin}"),
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    process = Process(proc, port, admin)
    try:
        wait_for_port(port, proc)
        wait_for_port(admin, proc)
        response = httpx.post(process.url + "/v1/chat/completions", headers={"x-request-id": "req-dead-1"},
                              json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert response.status_code == 502
        spans = receiver.wait_for(lambda s: any(x.kind == "CLIENT" for x in s))
        server, client = trace_of(spans, "req-dead-1")
        assert client is not None
        for span in (server, client):
            assert span.attributes["error.type"] == "upstream_unavailable"
            assert span.status_code == 2
        body = http_get(process.admin_url + "/metrics")[1].decode()
        series = 'warden_requests_total{code_class="5xx",model_name="m",outcome="upstream_unavailable",route="chat"}'
        assert f"{series} 1.0" in body
        assert "warden_upstream_up 0.0" in body
    finally:
        process.stop()
        receiver.close()


def test_allowed_model_admin_calls_are_forwarded_and_the_new_adapter_checksummed(tmp_path: Path) -> None:
    standin = start_standin()
    adapter = tmp_path / "new-adapter"
    adapter.mkdir()
    (adapter / "adapter_model.safetensors").write_bytes(b"\x00" * 1024)
    port, admin = free_port(), free_port()
    log_path = tmp_path / "warden.log"
    receiver = start_receiver()
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(warden_command("serve", "--upstream", standin.url, "--listen", f"127.0.0.1:{port}",
                                               "--admin", f"127.0.0.1:{admin}", "--allow-model-admin",
                                               "--lora-dir", str(tmp_path)),
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=log, env=env)
    process = Process(proc, port, admin)
    try:
        wait_for_port(port, proc)
        response = httpx.post(process.url + "/v1/load_lora_adapter", headers={"x-request-id": "req-load-1"},
                              json={"lora_name": "new-adapter", "lora_path": str(adapter)})
        assert response.status_code == 200 and response.json() == {"status": "ok"}
        server, client = trace_of(receiver.wait_for(lambda s: any(x.kind == "SERVER" for x in s)), "req-load-1")
        assert client is not None  # forwarded
        assert server.attributes["warden.model_admin.allowed"] is True
        assert server.attributes["warden.lora.adapter"] == "new-adapter"
        assert server.attributes["warden.lora.weights_sha256"] == adapter_weights_sha256(adapter)  # what was loaded
        body = http_get(f"http://127.0.0.1:{admin}/metrics")[1].decode()
        assert 'warden_model_admin_requests_total{action="load_lora_adapter",decision="allowed"} 1.0' in body
        lines = [json.loads(x) for x in log_path.read_text().splitlines() if x.startswith("{")]
        assert any(x["msg"] == "model admin call forwarded" and x["adapter"] == "new-adapter" for x in lines)
    finally:
        process.stop()
        standin.stop()
        receiver.close()


# -- deploy/: the dashboard and the rules -------------------------------------------------------------------

def dashboard_queries() -> list[str]:
    doc = json.loads(DASHBOARD.read_text())
    return [t["expr"] for p in doc["panels"] for t in p.get("targets", [])]


def test_dashboard_is_well_formed_and_covers_the_design() -> None:
    doc = json.loads(DASHBOARD.read_text())
    assert doc["uid"] and doc["title"] == "Warden"
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids))
    for panel in doc["panels"]:
        assert {"h", "w", "x", "y"} <= set(panel["gridPos"])
        for target in panel.get("targets", []):
            assert target["refId"] and target["expr"]
    text = " ".join(dashboard_queries())
    for needed in ("warden_requests_total", "warden_request_duration_seconds_bucket",
                   "warden_time_to_first_token_seconds_bucket", "warden_generation_tokens_total",
                   "warden_prompt_tokens_cached_total", "vllm:prefix_cache_hits_total",
                   "warden_guard_detections_total", 'outcome="blocked"', "warden_audit_anchor_lag_seconds"):
        assert needed in text, needed


@pytest.mark.skipif(shutil.which("promtool") is None,
                    reason="promtool not installed (Debian package `prometheus`: apt-get install -y prometheus)")
def test_rules_pass_promtool_check_and_unit_tests() -> None:
    check = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    unit = subprocess.run(["promtool", "test", "rules", "warden-rules.test.yaml"], cwd=RULES.parent,
                          capture_output=True, text=True)
    assert unit.returncode == 0, unit.stdout + unit.stderr


def prom_query(base: str, query: str) -> dict[str, Any]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            result: dict[str, Any] = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            result = json.loads(body)
        except ValueError:  # e.g. 503 with an empty body while Prometheus is still starting up
            result = {"status": "error", "error": f"HTTP {exc.code}: {body[:200]!r}"}
    return result


@pytest.mark.skipif(shutil.which("prometheus") is None,
                    reason="prometheus not installed (Debian package `prometheus`: apt-get install -y prometheus)")
def test_a_real_prometheus_scrapes_warden_with_our_rules_and_dashboard(observed: Observed, tmp_path: Path) -> None:
    o = observed
    o.client.chat.completions.create(model="standin-base", messages=[{"role": "user", "content": "for prometheus"}])
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{json.dumps(str(RULES))}]\n"
        "scrape_configs:\n"
        f"  - job_name: warden\n    static_configs: [{{targets: ['127.0.0.1:{o.proxy.admin_port}']}}]\n"
    )
    proc = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, proc, timeout=30)
        deadline = time.monotonic() + 30
        found: list[Any] = []
        merged: list[Any] = []
        while time.monotonic() < deadline and not (found and merged):  # a loaded machine may miss a scrape
            answer = prom_query(base, 'warden_requests_total{job="warden",route="chat"}')
            found = answer.get("data", {}).get("result", [])
            merged = prom_query(base, "vllm:prefix_cache_queries_total").get("data", {}).get("result", [])
            time.sleep(0.5)
        assert found, "Prometheus never scraped warden_requests_total from the admin port"
        assert merged, "the upstream's merged vllm:* series never reached Prometheus"
        up = prom_query(base, 'max_over_time(up{job="warden"}[1m])')["data"]["result"]
        assert up[0]["value"][1] == "1"
        with urllib.request.urlopen(base + "/api/v1/rules", timeout=5) as resp:
            groups = json.loads(resp.read())["data"]["groups"]
        rules = [r for g in groups for r in g["rules"]]
        assert {"WardenAuditAnchorLagHigh", "WardenUpstreamDown", "WardenHighErrorRatio", "WardenBlockSpike"} <= {
            r["name"] for r in rules}
        assert all(r["health"] in ("ok", "unknown") for r in rules), [r for r in rules if r["health"] == "err"]
        for expr in dashboard_queries():  # every panel's query is valid PromQL for this server
            query = expr.replace("$__rate_interval", "1m").replace("$model", ".*")
            answer = prom_query(base, query)
            assert answer["status"] == "success", (expr, answer)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
