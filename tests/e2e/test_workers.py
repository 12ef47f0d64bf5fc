"""`warden serve --workers 2` as a real process tree: one port, one admin port, two workers (proxy/supervisor.py).

One pod serves the whole module, in order: both workers serve and /metrics adds them up, SIGHUP reaches both,
a killed worker is restarted and counted without the pod's counters going back, SIGTERM drains, and the
pod's audit directory (one chain per worker) verifies."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import REPO, Process, ProxyFactory, http_get, warden_command

pytestmark = pytest.mark.slow

START_SECONDS = 120.0  # two workers load the rules at once on a shared 2-core machine


@dataclass
class Pod:
    proxy: Process
    rules: Path
    root: Path

    @property
    def audit(self) -> Path:
        return self.root / "audit"

    def logs(self) -> list[dict[str, object]]:
        assert self.proxy.log_path is not None
        out = []
        for line in self.proxy.log_path.read_text().splitlines():
            if line.startswith("{"):
                out.append(json.loads(line))
        return out

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        status, body = http_get(self.proxy.admin_url + "/metrics")
        assert status == 200
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(body.decode()) for s in family.samples}


def total(metrics: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str) -> float:
    return sum(value for (sample, _), value in metrics.items() if sample == name)


def per_worker(metrics: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str) -> dict[str, float]:
    return {dict(labels)["worker"]: value for (sample, labels), value in metrics.items() if sample == name}


def wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {seconds} s"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def pod(standin: Process, start_proxy_module: ProxyFactory, tmp_path_factory: pytest.TempPathFactory) -> Pod:
    root = tmp_path_factory.mktemp("pod")
    rules = root / "site.yaml"
    rules.write_text('[{"pattern": "(?i)project bluebird", "level": 2}]\n')
    proxy = start_proxy_module(standin.url, "--workers", "2", "--rules", str(rules), "--audit-dir",
                               str(root / "audit"), "--drain-grace", "20s", wait_ready=False)
    wait_until(lambda: _admin_up(proxy), START_SECONDS, "the pod did not start")
    return Pod(proxy, rules, root)


def _admin_up(proxy: Process) -> bool:
    assert proxy.proc.poll() is None, (proxy.log_path.read_text() if proxy.log_path else "exited")
    try:
        return http_get(proxy.admin_url + "/healthz", timeout=1)[0] == 200
    except OSError:
        return False


def chat(pod: Pod, text: str = "hello there") -> int:
    """One chat request on a connection of its own (a kept-alive connection stays with one worker)."""
    client = openai.OpenAI(base_url=pod.proxy.url + "/v1", api_key="unused", max_retries=0, timeout=30)
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
        return 200
    except openai.APIStatusError as exc:
        return exc.status_code
    finally:
        client.close()


def test_both_workers_serve_and_the_metrics_add_up(pod: Pod) -> None:
    sent = 0
    with ThreadPoolExecutor(8) as pool:
        while sent < 400:
            assert set(pool.map(lambda _: chat(pod), range(16))) == {200}
            sent += 16
            served = per_worker(pod.metrics(), "warden_worker_requests_total")
            if len(served) == 2 and min(served.values()) > 0:
                break
    metrics = pod.metrics()
    served = per_worker(metrics, "warden_worker_requests_total")
    assert min(served.values()) > 0, served  # the shared socket spread the connections over both workers
    assert total(metrics, "warden_requests_total") == sent == sum(served.values())
    assert total(metrics, "warden_request_duration_seconds_count") == sent  # histograms add up too
    assert metrics[("warden_workers", ())] == 2
    assert per_worker(metrics, "warden_worker_up") == {"0": 1, "1": 1}
    assert per_worker(metrics, "warden_worker_restarts_total") == {"0": 0, "1": 0}
    assert total(metrics, "warden_audit_records_total") >= sent  # each worker's chain, summed
    assert metrics[("warden_upstream_up", ())] == 1
    status, body = http_get(pod.proxy.admin_url + "/readyz")
    assert status == 200 and "2/2 workers ready" in json.loads(body)["reason"]
    if shutil.which("promtool"):  # the merged exposition is one a Prometheus server accepts, lint included
        _, text = http_get(pod.proxy.admin_url + "/metrics")
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, timeout=30)
        assert lint.returncode == 0, lint.stdout + lint.stderr
    origins = {entry["audit_origin"] for entry in pod.logs() if entry.get("msg") == "worker serving"}
    assert {str(o).rsplit("/", 1)[1][:3] for o in origins} == {"w0-", "w1-"}  # the origin names the worker


def test_sighup_reloads_the_rules_of_every_worker(pod: Pod) -> None:
    ask = "tell me about project nightjar"
    assert chat(pod, ask) == 200
    pod.rules.write_text('[{"pattern": "(?i)project nightjar", "level": 2}]\n')
    pod.proxy.proc.send_signal(signal.SIGHUP)
    wait_until(lambda: {e.get("worker") for e in pod.logs() if e.get("msg") == "rules reloaded"} == {0, 1},
               30, "both workers did not log the reload")
    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(lambda _: chat(pod, ask), range(16))) == {400}


def _children(pid: int) -> set[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return {int(p) for p in text.split()}


def test_a_killed_worker_is_restarted_and_counted(pod: Pod) -> None:
    before = pod.metrics()  # the supervisor keeps a dead worker's counters as of its last reading
    pids = {int(str(e["pid"])): e["worker"] for e in pod.logs()
            if e.get("msg") == "worker serving" and int(str(e["pid"])) in _children(pod.proxy.proc.pid)}
    victim = next(pid for pid, worker in pids.items() if worker == 0)
    subprocess.run(["kill", "-KILL", str(victim)], check=True)

    def restarted() -> bool:
        m = pod.metrics()
        return per_worker(m, "warden_worker_restarts_total")["0"] == 1 and per_worker(m, "warden_worker_up")["0"] == 1

    wait_until(restarted, START_SECONDS, "worker 0 was not restarted")
    after = pod.metrics()
    assert total(after, "warden_requests_total") >= total(before, "warden_requests_total")  # no counter reset
    assert per_worker(after, "warden_worker_restarts_total")["1"] == 0
    exits = [e for e in pod.logs() if e.get("msg") == "worker exited; restarting"]
    assert exits and exits[-1]["worker"] == 0 and exits[-1]["signal"] == "SIGKILL"
    assert victim not in _children(pod.proxy.proc.pid)
    with ThreadPoolExecutor(4) as pool:
        assert set(pool.map(lambda _: chat(pod), range(8))) == {200}


def test_sigterm_drains_every_worker_and_the_pod_log_verifies(pod: Pod) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "d" * 40}], "stream": True,
            "standin": {"chars_per_event": 2, "event_delay_ms": 40}}
    received: list[str] = []
    errors: list[BaseException] = []
    streaming = threading.Event()

    def consume() -> None:
        try:
            with httpx.stream("POST", pod.proxy.url + "/v1/chat/completions", json=body, timeout=30) as r:
                for line in r.iter_lines():
                    streaming.set()
                    if line.startswith("data:"):
                        received.append(line)
        except BaseException as exc:
            errors.append(exc)

    reader = threading.Thread(target=consume)
    reader.start()
    assert streaming.wait(30)  # the stream is open in one of the workers
    pod.proxy.proc.send_signal(signal.SIGTERM)

    def refused() -> bool:  # every worker and the supervisor let go of the port: new connections are refused
        try:
            httpx.get(pod.proxy.url + "/v1/models", timeout=2)
        except httpx.ConnectError:
            return True
        except httpx.HTTPError:
            pass
        return False

    wait_until(refused, 10, "the port still accepted connections while draining")
    reader.join(30)
    assert pod.proxy.proc.wait(60) == 0
    assert not errors and received[-1] == "data: [DONE]"
    drained = {e.get("worker") for e in pod.logs() if e.get("msg") == "stopped" and "worker" in e}
    assert drained == {0, 1}
    result = subprocess.run(
        warden_command("audit", "verify", str(pod.audit), "--key-dir", str(pod.root / "keys"), "--json"),
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert sorted(log["name"] for log in report["logs"]) == ["worker-0", "worker-1"]
    assert all(log["closed"] for log in report["logs"])  # every worker wrote its shutdown checkpoint


def test_a_bad_configuration_stops_the_pod_with_78(tmp_path: Path) -> None:
    """Fail closed as one process does: the workers refuse the rule file, the supervisor exits with their code."""
    bad = tmp_path / "bad.yaml"
    bad.write_text('[{"pattern": "(?<=x)y", "level": 2}]\n')
    command = warden_command("serve", "--no-semantic", "--workers", "2", "--upstream", "http://127.0.0.1:1",
                             "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--rules", str(bad))
    result = subprocess.run(command, cwd=REPO, capture_output=True, timeout=120)
    assert result.returncode == 78
    assert b"bad.yaml" in result.stderr and b"worker failed to start" in result.stderr
