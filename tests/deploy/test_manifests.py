"""Every Kubernetes manifest under deploy/kubernetes validates strictly against the 1.33 schemas; custom
resources (cert-manager, Prometheus Operator), which have no bundled schema, get structural checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from proxy.k8s.inject import (
    ADMIN_PORT_NAME,
    DEFAULT_TOKEN_KEY,
    DEFAULT_TOKEN_SECRET,
    LABEL_INJECT,
    TOKEN_VOLUME,
    InjectOptions,
    inject,
)

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
RULES = DEPLOY.parent / "prometheus" / "warden-rules.yaml"
FILES = sorted(DEPLOY.glob("*.yaml"))
K8S_VERSION = "1.33.0"
CUSTOM = {("cert-manager.io/v1", "Issuer"), ("cert-manager.io/v1", "Certificate"),
          ("monitoring.coreos.com/v1", "PodMonitor")}


def docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def all_docs() -> list[dict[str, Any]]:
    return [d for path in FILES for d in docs(path)]


def by_kind(kind: str) -> list[dict[str, Any]]:
    return [d for d in all_docs() if d["kind"] == kind]


def test_there_are_manifests() -> None:
    assert {p.name for p in FILES} >= {"webhook.yaml", "podmonitor.yaml", "example-vllm.yaml", "cert-manager.yaml"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_validates_strictly(path: Path) -> None:
    for doc in docs(path):
        if (doc["apiVersion"], doc["kind"]) in CUSTOM:
            assert doc["metadata"]["name"] and isinstance(doc["spec"], dict)
            continue
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_injected_form_validates_strictly(path: Path) -> None:
    for doc in docs(path):
        if (doc["apiVersion"], doc["kind"]) not in CUSTOM:
            kubernetes_validate.validate(inject(doc, InjectOptions()), K8S_VERSION, strict=True)


def test_webhook_configuration_is_narrow_and_fails_closed() -> None:
    (config,) = by_kind("MutatingWebhookConfiguration")
    (hook,) = config["webhooks"]
    assert hook["failurePolicy"] == "Fail" and hook["sideEffects"] == "None"
    assert hook["admissionReviewVersions"] == ["v1"]
    assert hook["namespaceSelector"] == {"matchLabels": {"warden.io/injection": "enabled"}}
    assert hook["objectSelector"] == {"matchLabels": {LABEL_INJECT: "true"}}
    assert hook["rules"] == [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                              "resources": ["pods"], "scope": "Namespaced"}]
    service = hook["clientConfig"]["service"]
    (svc,) = [s for s in by_kind("Service") if s["metadata"]["name"] == service["name"]]
    assert svc["metadata"]["namespace"] == service["namespace"]
    assert service["path"] == "/mutate"
    (cert,) = [d for d in all_docs() if d["kind"] == "Certificate"]
    namespace, name = config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].split("/")
    assert (cert["metadata"]["namespace"], cert["metadata"]["name"]) == (namespace, name)
    assert f"{service['name']}.{service['namespace']}.svc" in cert["spec"]["dnsNames"]
    (deployment,) = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "warden-webhook"]
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    assert {"name": "tls", "secret": {"secretName": cert["spec"]["secretName"]}} in volumes


def test_the_injector_namespace_is_not_selected() -> None:
    (config,) = by_kind("MutatingWebhookConfiguration")
    namespace = config["webhooks"][0]["clientConfig"]["service"]["namespace"]
    (ns,) = [n for n in by_kind("Namespace") if n["metadata"]["name"] == namespace]
    assert ns["metadata"]["labels"].get("warden.io/injection") != "enabled"


def test_podmonitor_scrapes_the_sidecar_admin_port() -> None:
    (monitor,) = by_kind("PodMonitor")
    assert monitor["spec"]["selector"] == {"matchLabels": {LABEL_INJECT: "true"}}
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["port"] == ADMIN_PORT_NAME and endpoint["path"] == "/metrics"
    (deployment,) = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "vllm"]
    template = inject(deployment, InjectOptions())["spec"]["template"]
    ports = [p["name"] for c in template["spec"]["initContainers"] for p in c.get("ports", []) if "name" in p]
    assert ADMIN_PORT_NAME in ports


def test_podmonitor_presents_the_token_the_injected_sidecars_mount() -> None:
    """prometheus-operator's SafeAuthorization: `credentials` is a SecretKeySelector read in the PodMonitor's
    own namespace; the example pod's sidecar mounts the same Secret name and key in its namespace."""
    (monitor,) = by_kind("PodMonitor")
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["authorization"] == {"type": "Bearer",
                                         "credentials": {"name": DEFAULT_TOKEN_SECRET, "key": DEFAULT_TOKEN_KEY}}
    assert "bearerTokenSecret" not in endpoint and "basicAuth" not in endpoint
    (deployment,) = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "vllm"]
    spec = inject(deployment, InjectOptions())["spec"]["template"]["spec"]
    (volume,) = [v for v in spec["volumes"] if v["name"] == TOKEN_VOLUME]
    assert volume["secret"]["secretName"] == DEFAULT_TOKEN_SECRET
    assert [item["key"] for item in volume["secret"]["items"]] == [DEFAULT_TOKEN_KEY]
    assert not [d for d in all_docs() if d["kind"] == "Secret"]  # no token is committed: README says how to make it


def test_the_scrape_failure_alert_watches_the_podmonitors_job() -> None:
    (monitor,) = by_kind("PodMonitor")
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    (job,) = [r["replacement"] for r in endpoint["relabelings"] if r.get("targetLabel") == "job"]
    rules = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    (alert,) = [r for g in rules["groups"] for r in g["rules"] if r.get("alert") == "WardenMetricsUnreachable"]
    assert alert["expr"] == f'up{{job="{job}"}} == 0'


def test_example_networkpolicy_names_ports_that_exist_after_injection() -> None:
    (deployment,) = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "vllm"]
    template = inject(deployment, InjectOptions())["spec"]["template"]
    spec = template["spec"]
    declared = {p.get("name") for c in [*spec["containers"], *spec["initContainers"]] for p in c.get("ports", [])}
    (policy,) = [p for p in by_kind("NetworkPolicy") if p["metadata"]["namespace"] == "llm"]
    named = {port["port"] for rule in policy["spec"]["ingress"] for port in rule["ports"]}
    assert named <= declared
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= template["metadata"]["labels"].items()


def test_webhook_keeps_a_replica_through_a_voluntary_disruption() -> None:
    """failurePolicy Fail: while no webhook replica answers, no labeled pod can be created, so a node drain
    must never evict the last one."""
    (deployment,) = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "warden-webhook"]
    assert deployment["spec"]["replicas"] >= 2
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    (budget,) = [b for b in by_kind("PodDisruptionBudget")
                 if b["metadata"]["namespace"] == deployment["metadata"]["namespace"]]
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert budget["spec"]["minAvailable"] == 1 < deployment["spec"]["replicas"]


def test_model_pod_admits_traffic_only_on_the_sidecars_ports() -> None:
    """Every port the example NetworkPolicy admits is one the injected sidecar listens on (its takeover port
    and the admin port); the model server's loopback port is admitted from nowhere."""
    (deployment,) = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "vllm"]
    spec = inject(deployment, InjectOptions())["spec"]["template"]["spec"]
    (sidecar,) = [c for c in spec["initContainers"] if c["name"] == "warden"]
    sidecar_ports = {p["name"] for p in sidecar["ports"]} | {p["containerPort"] for p in sidecar["ports"]}
    model_ports = {p.get("name") for c in spec["containers"] for p in c.get("ports", [])}
    (policy,) = [p for p in by_kind("NetworkPolicy") if p["metadata"]["namespace"] == "llm"]
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    admitted = [port["port"] for rule in policy["spec"]["ingress"] for port in rule["ports"]]
    assert admitted and all(port in sidecar_ports and port not in model_ports for port in admitted)
    assert all(rule.get("ports") for rule in policy["spec"]["ingress"])  # no rule admits every port
