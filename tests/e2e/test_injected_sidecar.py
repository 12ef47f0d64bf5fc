"""The injected sidecar's own command line, run: `warden inject` on the example Deployment, then `warden serve`
with exactly the sidecar's args and env, its volumes as directories (the policy ConfigMap's rules, the admin
token Secret made as the README says), the ports moved to free ones and the upstream to the stand-in. The one
flag added is --no-semantic (the model takes hundreds of MiB and seconds to load, and is not the point)."""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from proxy.k8s.inject import InjectOptions, inject
from tests import kubelet
from tests.e2e.conftest import REPO, Process, free_port, wait_for_port, warden_command

EXAMPLE = REPO / "deploy" / "kubernetes" / "example-vllm.yaml"


def example(kind: str, name: str) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text(encoding="utf-8")) if d]
    found: dict[str, Any] = next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)
    return found


def replace(args: list[str], flag: str, value: str) -> None:
    args[args.index(flag) + 1] = value


@pytest.fixture
def sidecar_process(standin: Process, tmp_path: Path) -> Iterator[tuple[Process, str]]:
    template = inject(example("Deployment", "vllm"), InjectOptions())["spec"]["template"]
    spec = template["spec"]
    side = next(c for c in spec["initContainers"] if c["name"] == "warden")
    # `kubectl create secret generic warden-admin-token --from-literal=token=$(openssl rand -hex 32)`
    token = secrets.token_hex(32)
    policy = example("ConfigMap", "vllm-policy")
    started = kubelet.start(spec, side, tmp_path, secrets={"warden-admin-token": {"token": token}},
                            config_maps={"vllm-policy": policy["data"]},
                            field_refs={"metadata.name": "vllm-0", "metadata.namespace": "llm"})
    args = started.args
    listen, admin = free_port(), free_port()
    assert args[args.index("--admin") + 1].startswith("0.0.0.0:")  # the pod IP: the token check applies
    replace(args, "--admin", f"0.0.0.0:{admin}")
    replace(args, "--listen", f"127.0.0.1:{listen}")
    replace(args, "--upstream", standin.url)
    assert side["command"] == ["warden"] and args[0] == "serve"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDEN_")} | started.env
    log = tmp_path / "sidecar.log"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(warden_command(*args, "--no-semantic"), cwd=REPO, env=env,
                                stdout=subprocess.DEVNULL, stderr=stderr)
    process = Process(proc, listen, admin, log)
    try:
        try:
            wait_for_port(admin, proc, timeout=60)
            wait_for_port(listen, proc, timeout=60)
        except (RuntimeError, TimeoutError) as exc:
            raise AssertionError(f"{exc}\n{log.read_text()}") from None
        yield process, token
    finally:
        process.stop()


def test_the_injected_sidecar_starts_and_prometheus_can_scrape_it(sidecar_process: tuple[Process, str]) -> None:
    process, token = sidecar_process
    scraped = httpx.get(process.admin_url + "/metrics", headers={"Authorization": f"Bearer {token}"})
    assert scraped.status_code == 200 and "warden_build_info" in scraped.text
    assert httpx.get(process.admin_url + "/metrics").status_code == 401
    assert httpx.get(process.admin_url + "/healthz").status_code == 200  # the kubelet's probes need no token
    assert httpx.get(process.admin_url + "/readyz").status_code == 200
    assert httpx.get(process.url + "/v1/models").status_code == 200  # and the Service-facing port proxies
    assert process.log_path is not None
    log = process.log_path.read_text()
    assert "bearer token required" in log and token not in log
