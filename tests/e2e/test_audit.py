"""Every exchange through the proxy leaves one verifiable audit record; a SIGKILL loses no acknowledged one."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import REPO, Process, ProxyFactory, free_port, http_get, warden_command

pytestmark = pytest.mark.slow

PHONE = "13812345678"
ID = "110105199003071239"


def verify(audit_dir: Path) -> subprocess.CompletedProcess[str]:
    keys = audit_dir.parent / "keys"
    return subprocess.run(
        warden_command("audit", "verify", str(audit_dir), "--key-dir", str(keys), "--json"),
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )


def exchange_records(audit_dir: Path) -> list[dict[str, object]]:
    records = []
    for segment in sorted((audit_dir / "segments").glob("*")):
        for line in segment.read_bytes().splitlines():
            record = json.loads(line)
            if record.get("kind") == "exchange":
                records.append(record)
    return records


def test_every_kind_of_exchange_is_recorded_and_the_log_verifies(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path
) -> None:
    audit_dir = tmp_path / "audit"
    proxy = start_proxy(standin.url, "--audit-dir", str(audit_dir), "--upstream-timeout", "500ms")
    url = proxy.url + "/v1/chat/completions"
    ok = httpx.post(url, json={"model": "m", "messages": [{"role": "user", "content": f"id {ID} phone {PHONE}"}]})
    blocked = httpx.post(url, json={"model": "m", "messages": [{"role": "user", "content": "找枪手代考"}]})
    streamed = httpx.post(url, json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "s"}]})
    failed = httpx.post(url, json={"model": "m", "messages": [], "standin": {"headers_delay_ms": 2000}}, timeout=10)
    admin = httpx.post(proxy.url + "/v1/load_lora_adapter", json={"lora_name": "x", "lora_path": "/tmp/x"})
    assert (ok.status_code, blocked.status_code, streamed.status_code, failed.status_code) == (200, 400, 200, 504)
    assert admin.status_code == 403
    assert proxy.stop() == 0

    result = verify(audit_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    records = exchange_records(audit_dir)
    chat = [r for r in records if r["exchange"]["route"] == "chat"]  # type: ignore[index]
    by_outcome = {r["exchange"]["outcome"]: r for r in chat}  # type: ignore[index]
    assert set(by_outcome) == {"ok", "blocked", "upstream_timeout"}
    assert len(records) == 5
    denied = next(r for r in records if r["exchange"]["route"] == "model_admin")  # type: ignore[index]
    assert denied["model_admin"] == {"action": "load_lora_adapter", "allowed": False}
    assert denied["exchange"]["status"] == 403  # type: ignore[index]
    blocked_record = by_outcome["blocked"]
    assert blocked_record["verdicts"]["@request"] == "block"  # type: ignore[index]
    assert blocked_record["verdicts"]["exam_fraud"] == "block"  # type: ignore[index]
    masked = next(r for r in records if r["findings"])
    assert masked["findings"] == {"cn_resident_id": 1, "cn_mobile": 1}
    assert len(masked["digests"]["input"]) == 64  # type: ignore[index]
    everything = b"".join(p.read_bytes() for p in audit_dir.rglob("*") if p.is_file())
    assert ID.encode() not in everything and PHONE.encode() not in everything
    assert "代考".encode() not in everything


def test_text_utf8_cannot_hold_is_forwarded_as_it_came_and_recorded(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path
) -> None:
    """JSON lets a client escape a lone surrogate ("\\ud800"), which UTF-8 cannot encode. Warden neither fails
    the exchange (masking rewrote the body and could not encode it: a 500) nor loses its audit record (the
    model name went into the record as it came, and the log refused it): the masked body goes upstream with
    the surrogate escaped as sent, and the record names the model with U+FFFD."""
    audit_dir = tmp_path / "audit"
    proxy = start_proxy(standin.url, "--audit-dir", str(audit_dir))
    url = proxy.url + "/v1/chat/completions"
    headers = {"content-type": "application/json"}
    odd_model = httpx.post(url, headers=headers,
                           content=b'{"model": "m\\ud800x", "messages": [{"role": "user", "content": "hi"}]}')
    masked = httpx.post(url, headers=headers, content=(
        b'{"model": "m", "messages": [{"role": "user", "content": "call ' + PHONE.encode() + b' \\ud800"}]}'))
    # The stand-in refuses lone surrogates as pydantic-based model servers do: the 400s are the upstream's.
    assert [r.status_code for r in (odd_model, masked)] == [400, 400]
    assert masked.json()["error"]["message"] == "request body holds a lone surrogate"
    status, last = http_get(standin.url + "/_standin/last")
    assert status == 200 and PHONE.encode() not in last and b"\\ud800" in last
    assert proxy.stop() == 0

    result = verify(audit_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    models = sorted(str(r["exchange"]["model"]) for r in exchange_records(audit_dir))  # type: ignore[index]
    assert models == ["m", "m\ufffdx"]
    assert proxy.log_path is not None and b"audit append failed" not in proxy.log_path.read_bytes()


def test_an_adapter_name_utf8_cannot_hold_is_recorded(
    standin: Process, start_proxy: ProxyFactory, tmp_path: Path
) -> None:
    """The adapter admin routes record the names in their bodies as requests' model names are recorded
    (proxy/state.py record_name): a lone surrogate in `lora_name` or `lora_path` becomes U+FFFD in the record
    instead of making the log refuse it."""
    audit_dir = tmp_path / "audit"
    proxy = start_proxy(standin.url, "--audit-dir", str(audit_dir), "--allow-model-admin")
    headers = {"content-type": "application/json"}
    for route in ("load_lora_adapter", "unload_lora_adapter"):
        response = httpx.post(f"{proxy.url}/v1/{route}", headers=headers,
                              content=b'{"lora_name": "a\\ud800", "lora_path": "/tmp/a\\udc80"}')
        assert response.status_code == 400, response.text  # the stand-in refuses lone surrogates (pydantic)
    assert proxy.stop() == 0

    result = verify(audit_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    records = exchange_records(audit_dir)
    assert [r["model_admin"] for r in records] == [
        {"action": "load_lora_adapter", "allowed": True}, {"action": "unload_lora_adapter", "allowed": True}]
    assert [r["exchange"]["lora"]["adapter"] for r in records] == ["a\ufffd", "a\ufffd"]  # type: ignore[index]
    assert proxy.log_path is not None and b"audit append failed" not in proxy.log_path.read_bytes()


def test_sigkill_under_load_loses_no_acknowledged_exchange(standin: Process, tmp_path: Path) -> None:
    audit_dir = tmp_path / "audit"
    port, admin = free_port(), free_port()
    command = warden_command("serve", "--no-semantic", "--upstream", standin.url, "--listen", f"127.0.0.1:{port}",
                             "--admin", f"127.0.0.1:{admin}", "--audit-dir", str(audit_dir))
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    from tests.e2e.conftest import wait_for_port

    wait_for_port(port, proc)
    acknowledged: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def load(worker: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            n = 0
            while not stop.is_set():
                request_id = f"w{worker}-{n}"
                n += 1
                try:
                    response = client.post("/v1/chat/completions", headers={"X-Request-ID": request_id},
                                           json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
                except httpx.HTTPError:
                    if proc.poll() is not None:
                        return  # killed: the load is over
                    continue  # a timeout on a loaded machine: not acknowledged, keep loading
                if response.status_code == 200:
                    with lock:
                        acknowledged.append(request_id)

    threads = [threading.Thread(target=load, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    while len(acknowledged) < 200:
        assert time.monotonic() < deadline, f"only {len(acknowledged)} exchanges acknowledged in 120 s"
        threading.Event().wait(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stop.set()
    for t in threads:
        t.join()

    # The next boot cuts any torn tail and anchors what the killed one left unanchored. It listens on fresh
    # ports: the killed process's may meanwhile be handed to another test's process by free_port().
    port, admin = free_port(), free_port()
    command = warden_command("serve", "--no-semantic", "--upstream", standin.url, "--listen", f"127.0.0.1:{port}",
                             "--admin", f"127.0.0.1:{admin}", "--audit-dir", str(audit_dir))
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0

    result = verify(audit_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    recorded = {r["exchange"]["request_id"] for r in exchange_records(audit_dir)}  # type: ignore[index]
    missing = [rid for rid in acknowledged if rid not in recorded]
    assert not missing, f"{len(missing)} acknowledged exchanges missing from the audit log"
