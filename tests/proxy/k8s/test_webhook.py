from __future__ import annotations

import base64
import copy
import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from proxy.k8s.inject import InjectOptions, inject
from proxy.k8s.webhook import json_patch, make_server
from tests.tls import write_self_signed

DATA = Path(__file__).parent / "testdata" / "inject"
OPTIONS = InjectOptions(image="ghcr.io/warden/warden:test", version="test")


@pytest.fixture(scope="module")
def webhook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, ssl.SSLContext]]:
    cert, key = write_self_signed(tmp_path_factory.mktemp("tls"), "warden-webhook.warden-system.svc")
    server = make_server("127.0.0.1", 0, str(cert), str(key), OPTIONS)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    client = ssl.create_default_context(cafile=str(cert))  # verifies the chain and the 127.0.0.1 SAN
    yield server.server_address[1], client
    server.shutdown()
    server.server_close()


def call(webhook: tuple[int, ssl.SSLContext], method: str, path: str, body: Any = None) -> tuple[int, Any]:
    port, context = webhook
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def review(pod: dict[str, Any], uid: str = "7f0b2d8c-0000-4000-8000-000000000001") -> dict[str, Any]:
    """What the API server sends on a pod CREATE: the namespace in the request, not yet in the pod."""
    obj = copy.deepcopy(pod)
    namespace = obj["metadata"].pop("namespace", "llm")
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"}, "namespace": namespace,
        "operation": "CREATE", "object": obj, "dryRun": False}}


def apply_patch(doc: Any, patch: list[dict[str, Any]]) -> Any:
    """A tiny RFC 6902 applier (add, remove, replace: what the webhook emits), independent of the generator."""
    doc = copy.deepcopy(doc)
    for op in patch:
        *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        target = doc
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        key: Any = int(last) if isinstance(target, list) else last
        if op["op"] == "remove":
            del target[key]
        elif op["op"] in {"add", "replace"}:
            target[key] = op["value"]
        else:
            raise AssertionError(f"unexpected op {op}")
    return doc


def pod_from(name: str) -> dict[str, Any]:
    docs: list[dict[str, Any]] = [d for d in yaml.safe_load_all((DATA / name).read_text()) if d]
    return docs[0]


@pytest.mark.parametrize("name", ["vllm-pod.yaml", "multi-doc.yaml"])
def test_patch_equals_inject(webhook: tuple[int, ssl.SSLContext], name: str) -> None:
    pod = pod_from(name)
    status, answer = call(webhook, "POST", "/mutate", review(pod))
    assert status == 200
    assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
    response = answer["response"]
    assert response["uid"] == "7f0b2d8c-0000-4000-8000-000000000001"
    assert response["allowed"] is True and response["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(response["patch"]))
    sent = review(pod)["request"]["object"]
    assert apply_patch(sent, patch) == inject(sent, OPTIONS)
    assert any(op["path"] == "/metadata/annotations/warden.io~1status" for op in patch)


def test_patch_applies_with_jsonpatch_too(webhook: tuple[int, ssl.SSLContext]) -> None:
    jsonpatch = pytest.importorskip("jsonpatch")
    sent = review(pod_from("vllm-pod.yaml"))
    _, answer = call(webhook, "POST", "/mutate", sent)
    patch = json.loads(base64.b64decode(answer["response"]["patch"]))
    obj = sent["request"]["object"]
    assert jsonpatch.apply_patch(obj, patch) == inject(obj, OPTIONS)


def test_not_selected_and_already_injected_get_no_patch(webhook: tuple[int, ssl.SSLContext]) -> None:
    pod = pod_from("vllm-pod.yaml")
    pod["metadata"]["labels"]["warden.io/inject"] = "false"
    _, answer = call(webhook, "POST", "/mutate", review(pod))
    assert answer["response"] == {"uid": "7f0b2d8c-0000-4000-8000-000000000001", "allowed": True}
    _, answer = call(webhook, "POST", "/mutate", review(inject(pod_from("vllm-pod.yaml"), OPTIONS)))
    assert "patch" not in answer["response"] and answer["response"]["allowed"] is True


def test_bad_annotation_is_denied_with_the_reason(webhook: tuple[int, ssl.SSLContext]) -> None:
    pod = pod_from("vllm-pod.yaml")
    pod["metadata"]["annotations"]["warden.io/backend"] = "ollama"
    _, answer = call(webhook, "POST", "/mutate", review(pod))
    response = answer["response"]
    assert response["allowed"] is False and "patch" not in response
    assert response["status"]["code"] == 400
    assert "Pod llm/vllm" in response["status"]["message"] and "warden.io/backend" in response["status"]["message"]


def test_healthz_and_bad_requests(webhook: tuple[int, ssl.SSLContext]) -> None:
    assert call(webhook, "GET", "/healthz") == (200, {"status": "ok"})
    assert call(webhook, "GET", "/nope")[0] == 404
    assert call(webhook, "POST", "/mutate", b"{not json")[0] == 400
    assert call(webhook, "POST", "/mutate", {"kind": "AdmissionReview"})[0] == 400


def test_a_client_that_never_speaks_tls_does_not_stall_the_webhook(webhook: tuple[int, ssl.SSLContext]) -> None:
    """The TLS handshake runs in the request's own thread (with a timeout), not in the accept loop: a peer that
    connects and sends nothing must not stop the API server's calls (pod creation waits on them)."""
    port, _ = webhook
    with socket.create_connection(("127.0.0.1", port)):  # connects, never says a word
        started = time.monotonic()
        assert call(webhook, "GET", "/healthz") == (200, {"status": "ok"})
        assert time.monotonic() - started < 5
    with socket.create_connection(("127.0.0.1", port)) as garbage:  # not TLS at all: that connection alone fails
        garbage.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
        assert garbage.recv(100) == b""
    assert call(webhook, "GET", "/healthz") == (200, {"status": "ok"})


def test_a_content_length_that_is_not_a_number_is_a_400(webhook: tuple[int, ssl.SSLContext]) -> None:
    port, context = webhook
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        conn.putrequest("POST", "/mutate")
        conn.putheader("Content-Length", "ten")
        conn.endheaders()
        assert conn.getresponse().status == 400
    finally:
        conn.close()


def test_json_patch_escapes_pointers() -> None:
    before = {"a": {"x/y": 1, "t~": 2, "gone": 3}, "l": [1, 2]}
    after = {"a": {"x/y": 5, "t~": 2, "new": 4}, "l": [1, 2, 3]}
    patch = json_patch(before, after)
    assert {"op": "replace", "path": "/a/x~1y", "value": 5} in patch
    assert {"op": "remove", "path": "/a/gone"} in patch
    assert apply_patch(before, patch) == after
    assert json_patch(after, after) == []


def test_sigterm_stops_the_webhook_as_a_pid_namespaces_init(tmp_path: Path) -> None:
    """In a container the webhook is PID 1, to which the kernel delivers no signal left at its default action:
    without its handler the kubelet's SIGTERM was ignored until the grace period's SIGKILL. `unshare` gives it
    that place here."""
    import shutil
    import subprocess
    import sys

    if shutil.which("unshare") is None or subprocess.run(["unshare", "--pid", "--fork", "true"],
                                                         capture_output=True).returncode != 0:
        pytest.skip("this sandbox refuses a PID namespace (unshare --pid)")
    cert, key = write_self_signed(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    outer = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", sys.executable, "-m", "proxy.cli",
                              "webhook", "--listen", f"127.0.0.1:{port}", "--tls-cert", str(cert),
                              "--tls-key", str(key)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while b"serving on" not in (line := outer.stderr.readline() if outer.stderr else b""):
            assert line and time.monotonic() < deadline, "the webhook did not start"
        children = Path(f"/proc/{outer.pid}/task/{outer.pid}/children").read_text().split()
        init = int(children[0])  # the webhook, PID 1 inside its namespace
        subprocess.run(["kill", "-TERM", str(init)], check=True)
        assert outer.wait(10) == 0
    finally:
        if outer.poll() is None:
            outer.kill()
            outer.wait()
