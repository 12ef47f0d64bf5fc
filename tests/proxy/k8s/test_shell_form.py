"""Shell-form model servers (issue 25): golden files through `warden inject` run as a process and through the
webhook over HTTPS, every output validated against the 1.33 schemas, the rewritten script read back by shlex,
the injected sidecar's readiness asked through the real `Readiness` against each server's health routes, and
the refusals (CLI stderr golden, webhook denials)."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import os
import shlex
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from proxy.admin import Readiness
from proxy.k8s.inject import ANN_STATUS, SIDECAR_STOP_SECONDS, InjectOptions, inject, inject_report
from proxy.k8s.servers import identify
from tests.proxy.k8s.test_inject import K8S_VERSION, pods, sidecar, sidecar_config, validate
from tests.proxy.k8s.test_webhook import apply_patch, call, review, webhook

__all__ = ["webhook"]  # the module-scoped HTTPS webhook fixture, shared with test_webhook.py

REPO = Path(__file__).resolve().parents[3]
DATA = Path(__file__).parent / "testdata" / "shell"
REFUSED = DATA / "refused.yaml"
INPUTS = sorted(p for p in DATA.glob("*.yaml") if not p.name.endswith(".injected.yaml") and p != REFUSED)
OPTIONS = InjectOptions(image="ghcr.io/warden/warden:test", version="test")
UPDATE = os.environ.get("WARDEN_UPDATE_GOLDEN") == "1"
# What each server answers on its health routes (None: 404): llama-cpp-python's server has no /health.
HEALTH_ROUTES = {
    "vllm": {"/health", "/v1/models"}, "sglang": {"/health", "/v1/models"},
    "text-generation-launcher": {"/health", "/v1/models"},
    "tritonserver": {"/v2/health/ready"}, "llama-server": {"/health", "/v1/models"},
    "llama_cpp.server": {"/v1/models"},
}
# The flags each server reads for its port and its address (proxy/k8s/servers.py cites their sources).
FLAGS = {"vllm": ("--port", "--host"), "sglang": ("--port", "--host"),
         "text-generation-launcher": ("-p", "--hostname"),
         "tritonserver": ("--http-port", "--http-address"), "llama-server": ("--port", "--host"),
         "llama_cpp.server": ("--port", "--host")}


def load(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def warden_inject(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "proxy.cli", "inject", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)


def stamped(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The CLI stamps the installed version in warden.io/status; the golden files say "test"."""
    docs = copy.deepcopy(docs)
    for doc in docs:
        for pod in pods(doc):
            status = json.loads(pod["metadata"]["annotations"][ANN_STATUS])
            pod["metadata"]["annotations"][ANN_STATUS] = json.dumps(
                {**status, "version": "test"}, sort_keys=True, separators=(",", ":"))
    return docs


def script_of(container: dict[str, Any]) -> str:
    line = [*(container.get("command") or []), *(container.get("args") or [])]
    assert line[1] in ("-c", "-ec")
    return str(line[2])


@pytest.fixture(scope="module")
def cli_runs() -> dict[str, subprocess.CompletedProcess[str]]:
    """`warden inject` on every golden input once (each run is a Python start-up on a shared machine)."""
    return {p.stem: warden_inject("-f", str(p), "--image", "ghcr.io/warden/warden:test") for p in INPUTS}


def test_every_server_has_a_golden_file() -> None:
    servers = {json.loads(p["metadata"]["annotations"][ANN_STATUS])["server"]
               for path in INPUTS for doc in load(path) for p in pods(inject(doc, OPTIONS))}
    assert servers == set(HEALTH_ROUTES)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_cli_golden(path: Path, cli_runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    run = cli_runs[path.stem]
    assert run.returncode == 0, run.stderr
    out = stamped(load_text(run.stdout))
    golden = path.with_name(path.stem + ".injected.yaml")
    if UPDATE:
        golden.write_text(yaml.safe_dump_all(out, sort_keys=False, explicit_start=len(out) > 1))
    assert out == load(golden)
    assert out == [inject(d, OPTIONS) for d in load(path)]  # the CLI and the library agree
    assert [inject(d, OPTIONS) for d in out] == out  # idempotent: warden.io/status is set
    for doc in out:
        validate(doc)
    (line,) = run.stderr.splitlines()
    doc = load(path)[0]
    assert line.startswith(f"warden inject: {doc['kind']} llm/{doc['metadata']['name']}: injected: ")


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_script_is_kept_but_for_the_port_and_host(path: Path) -> None:
    """Read back with shlex: the same words, but the port and host values (and the flags appended at the end);
    what the server then parses is 127.0.0.1 and the internal port, and nothing else in the script moved."""
    (source,) = [p for d in load(path) for p in [d.get("spec", {}).get("template", d)]]
    (pod,) = pods(inject(load(path)[0], OPTIONS))
    status = json.loads(pod["metadata"]["annotations"][ANN_STATUS])
    internal, server = str(status["ports"]["upstream"]), status["server"]
    before = script_of(next(c for c in source["spec"]["containers"] if c["name"] == status["modelContainer"]))
    after = script_of(next(c for c in pod["spec"]["containers"] if c["name"] == status["modelContainer"]))
    old, new = shlex.split(before.replace("\\\n", "")), shlex.split(after.replace("\\\n", ""))
    assert new[:len(old)] != old or len(new) > len(old)
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b]
    port_flag, host_flag = FLAGS[server]
    for i in changed:  # only values of the port and host flags, in either of their forms
        assert new[i] in (internal, "127.0.0.1") or new[i] in (f"{port_flag}={internal}", f"{host_flag}=127.0.0.1")
    appended = new[len(old):]
    assert appended in ([], [host_flag, "127.0.0.1"], [port_flag, internal, host_flag, "127.0.0.1"])
    start = next(i for i in range(len(new)) if identify(new[i:]))
    found = identify(new[start:])
    assert found is not None and found[0].name == server
    values = {flag: [new[i + 1] for i in range(len(new) - 1) if new[i] == flag]
              + [w.split("=", 1)[1] for w in new if w.startswith(flag + "=")] for flag in (port_flag, host_flag)}
    assert values == {port_flag: [internal], host_flag: ["127.0.0.1"]}
    # the characters outside the replaced words are the script's own (a multi-line script keeps its lines)
    assert after.count("\n") == before.count("\n")


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_readiness_follows_the_server(path: Path, tmp_path: Path) -> None:
    """The sidecar's /readyz (proxy/admin.py Readiness, configured from the injected command line) is ready
    against the server's own health routes, /health or not, and the kubelet's probe asks /readyz."""
    (pod,) = pods(inject(load(path)[0], OPTIONS))
    status = json.loads(pod["metadata"]["annotations"][ANN_STATUS])
    config = sidecar_config(pod, tmp_path)
    routes = HEALTH_ROUTES[status["server"]]
    asked: list[str] = []

    async def probe(url: str) -> tuple[int, bytes]:
        path_asked = url.removeprefix(config.upstream)
        asked.append(path_asked)
        return (200, b"{}") if path_asked in routes else (404, b"")

    ok, reason = asyncio.run(Readiness(config, probe=probe).check())
    assert ok, reason
    assert asked[-1] in routes
    assert sidecar(pod)["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": status["ports"]["admin"]}


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_grace_period_covers_warden_after_the_model_server(path: Path) -> None:
    source = load(path)[0]
    template = source.get("spec", {}).get("template", source)
    (pod,) = pods(inject(source, OPTIONS))
    own = template["spec"].get("terminationGracePeriodSeconds", 30)
    assert pod["spec"]["terminationGracePeriodSeconds"] == own + SIDECAR_STOP_SECONDS
    assert all("lifecycle" not in c for c in pod["spec"]["initContainers"])  # no preStop: a native sidecar


def test_cli_refusals_name_every_container_and_write_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    run = warden_inject("-f", str(REFUSED), "-o", str(out))
    golden = DATA / "refused.stderr"
    if UPDATE:
        golden.write_text(run.stderr)
    assert run.returncode == 1
    assert run.stdout == "" and not out.exists()
    assert run.stderr == golden.read_text()
    names = [d["metadata"]["name"] for d in load(REFUSED)]
    lines = run.stderr.splitlines()
    assert len(lines) == len(names) + 1 and lines[-1] == f"warden inject: {len(names)} refused; nothing written"
    for name, line in zip(names, lines, strict=False):
        assert line.startswith(f"warden inject: refused: Pod llm/{name}")
        assert "container '" in line or "warden.io/upstream-port" in line


def test_cli_says_why_nothing_was_injected() -> None:
    run = warden_inject("-f", str(DATA.parent / "inject" / "cronjob-list.yaml"), "--image", "x:1")
    assert run.returncode == 0
    assert run.stderr.splitlines() == [
        "warden inject: CronJob nightly-eval: injected: sglang in container 'sglang' moved from port 30000 to "
        "127.0.0.1:40000 (command); sidecar x:1, --backend sglang",
        'warden inject: DaemonSet opted-out: skipped: opted out (warden.io/inject: "false")',
        "warden inject: Job unlabeled: skipped: not selected (no warden.io/inject label; --all takes unlabeled pods)",
        "warden inject: Service vllm: skipped: no pod template in this kind",
        "warden inject: ConfigMap vllm-policy: skipped: no pod template in this kind",
    ]
    unlabeled = warden_inject("-f", str(DATA.parent / "inject" / "cronjob-list.yaml"), "--all")
    assert "warden inject: Job unlabeled: skipped: no model server found (Job unlabeled container 'x': no model " \
           "server recognized" in unlabeled.stderr and unlabeled.returncode == 0
    nothing = warden_inject("-f", str(REPO / "deploy" / "kubernetes" / "podmonitor.yaml"))
    assert nothing.returncode == 0 and nothing.stderr.splitlines()[-1] == "warden inject: nothing injected"


def as_pod(doc: dict[str, Any]) -> dict[str, Any]:
    """The pod the API server would be asked to create from `doc` (its template, named after it)."""
    if doc["kind"] == "Pod":
        return copy.deepcopy(doc)
    template = copy.deepcopy(doc["spec"]["template"])
    meta = {**template["metadata"], "name": doc["metadata"]["name"] + "-0",
            "namespace": doc["metadata"]["namespace"]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_webhook_patch_equals_the_golden_pod(webhook: tuple[int, ssl.SSLContext], path: Path) -> None:
    pod = as_pod(load(path)[0])
    sent = review(pod)
    status, answer = call(webhook, "POST", "/mutate", sent)
    assert status == 200 and answer["response"]["allowed"] is True
    patched = apply_patch(sent["request"]["object"], json.loads(base64.b64decode(answer["response"]["patch"])))
    expected = inject(sent["request"]["object"], OPTIONS)
    assert patched == expected
    (golden,) = pods(load(path.with_name(path.stem + ".injected.yaml"))[0])
    assert patched["spec"] == golden["spec"]  # the same rewrite as `warden inject` gave the template
    validate({**patched, "metadata": {**patched["metadata"], "namespace": "llm"}})


@pytest.mark.parametrize("pod", load(REFUSED), ids=lambda d: d["metadata"]["name"])
def test_webhook_denies_each_refusal_with_the_cli_reason(webhook: tuple[int, ssl.SSLContext],
                                                         pod: dict[str, Any]) -> None:
    _, answer = call(webhook, "POST", "/mutate", review(pod))
    response = answer["response"]
    assert response["allowed"] is False and "patch" not in response and response["status"]["code"] == 400
    _, (decision,) = inject_report(pod, OPTIONS)
    assert decision.outcome == "refused"
    assert response["status"]["message"] == f"warden injection: {decision.reason}"
    line = f"warden inject: refused: {decision.reason}"
    assert line in (DATA / "refused.stderr").read_text().splitlines()


def test_refused_inputs_are_valid_pods() -> None:
    """The refusals are about the command line, not about a malformed pod."""
    import kubernetes_validate

    for doc in load(REFUSED):
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def load_text(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d is not None]
