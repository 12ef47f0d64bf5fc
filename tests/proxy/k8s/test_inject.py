from __future__ import annotations

import copy
import io
import json
import os
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from proxy import serve
from proxy.admin import admin_token, is_loopback
from proxy.config import ConfigError, WardenConfig, resolve
from proxy.k8s import inject_cli
from proxy.k8s.inject import ANN_STATUS, InjectError, InjectOptions, default_image, inject, inject_report
from tests import kubelet

DATA = Path(__file__).parent / "testdata" / "inject"
INPUTS = sorted(p for p in DATA.glob("*.yaml") if not p.name.endswith(".injected.yaml"))
K8S_VERSION = "1.33.0"
# Set WARDEN_UPDATE_GOLDEN=1 to rewrite the *.injected.yaml files after an intended change (review the diff).
UPDATE = os.environ.get("WARDEN_UPDATE_GOLDEN") == "1"
TOKEN = "0123456789abcdef-inject-test"


def options_for(path: Path) -> InjectOptions:
    # a fixed version and image keep the golden files stable across releases
    return InjectOptions(image="ghcr.io/warden/warden:test", version="test", native_sidecar="regular" not in path.name)


def load(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def validate(obj: dict[str, Any]) -> None:
    """strict=True rejects unknown fields. `List` has no schema of its own: validate its items."""
    if obj["kind"] == "List":
        for item in obj["items"]:
            validate(item)
        return
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def injected(path: Path) -> list[dict[str, Any]]:
    return [inject(doc, options_for(path)) for doc in load(path)]


def pods(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pod (template) in obj that was injected."""
    if obj["kind"] == "List":
        return [p for item in obj["items"] for p in pods(item)]
    spec = obj.get("spec", {})
    candidates = [obj] if obj["kind"] == "Pod" else [
        spec.get("template"), spec.get("jobTemplate", {}).get("spec", {}).get("template")]
    return [p for p in candidates if p and ANN_STATUS in p.get("metadata", {}).get("annotations", {})]


def sidecar(pod: dict[str, Any]) -> dict[str, Any]:
    spec = pod["spec"]
    return next(c for c in [*spec.get("initContainers", []), *spec["containers"]] if c["name"] == "warden")


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_golden(path: Path) -> None:
    golden = path.with_name(path.stem + ".injected.yaml")
    result = injected(path)
    if UPDATE:
        golden.write_text(yaml.safe_dump_all(result, sort_keys=False, explicit_start=len(result) > 1))
    assert result == load(golden)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_idempotent(path: Path) -> None:
    once = injected(path)
    assert [inject(doc, options_for(path)) for doc in once] == once


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_input_and_output_validate_strictly(path: Path) -> None:
    for doc in load(path):
        validate(doc)
    for doc in injected(path):
        validate(doc)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_input_is_not_mutated(path: Path) -> None:
    docs = load(path)
    before = copy.deepcopy(docs)
    for doc in docs:
        inject(doc, options_for(path))
    assert docs == before


def sidecar_config(pod: dict[str, Any], root: Path) -> WardenConfig:
    """The sidecar's configuration as `warden serve` resolves it inside the pod: its args through serve's own
    parser (an unknown flag fails), its env, and its volumes as files under `root`, every Secret and ConfigMap
    the pod names present (the admin token Secret holds TOKEN with a trailing newline, as hand-made ones do)."""
    spec = pod["spec"]
    secrets = {v["secret"]["secretName"]: {i["key"]: TOKEN + "\n" for i in v["secret"]["items"]}
               for v in spec["volumes"] if "secret" in v}
    config_maps = {v["configMap"]["name"]: {i["key"]: "[]\n" for i in v["configMap"]["items"]}
                   for v in spec["volumes"] if "configMap" in v}
    started = kubelet.start(spec, sidecar(pod), root, secrets=secrets, config_maps=config_maps,
                            field_refs={"metadata.name": "p-0", "metadata.namespace": "llm"})
    assert started.args[0] == "serve"
    args = serve.build_parser().parse_args(started.args[1:])
    return resolve({k: v for k, v in vars(args).items() if k != "config"}, env=started.env, config_file=args.config)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_sidecar_args_are_a_valid_warden_serve_config(path: Path, tmp_path: Path) -> None:
    """The sidecar's command line, env and mounted files pass `warden serve`'s start-up checks through the admin
    token (proxy/admin.py `admin_token`, which `warden serve` runs first and answers with exit 78)."""
    for n, pod in enumerate(p for doc in injected(path) for p in pods(doc)):
        config = sidecar_config(pod, tmp_path / str(n))
        # the admin port must take the pod IP (kubelet probes, Prometheus), so it needs the mounted token
        assert not is_loopback(config.admin.host)
        assert admin_token(config) == TOKEN
        status = json.loads(pod["metadata"]["annotations"][ANN_STATUS])
        assert config.upstream == f"http://127.0.0.1:{status['ports']['upstream']}"
        assert config.listen.port == status["ports"]["listen"]
        assert config.admin.port == status["ports"]["admin"]
        for file in config.rules:  # the policy ConfigMap's keys, where --rules looks for them
            assert Path(file).is_file() and Path(file).is_relative_to(tmp_path)
        assert config.audit_dir is not None and Path(config.audit_dir).is_relative_to(tmp_path)  # an emptyDir


def test_the_config_check_refuses_a_sidecar_without_the_token(tmp_path: Path) -> None:
    """What test_sidecar_args_are_a_valid_warden_serve_config guards against: the sidecar as injected before
    the admin token existed, which `warden serve` refuses (every injected pod crash-looped)."""
    (pod,) = injected(DATA / "vllm-pod.yaml")
    args = sidecar(pod)["args"]
    at = args.index("--admin-token-file")
    del args[at:at + 2]
    with pytest.raises(ConfigError, match="not loopback"):
        admin_token(sidecar_config(pod, tmp_path))


def test_admin_token_secret_annotation() -> None:
    pod = load(DATA / "vllm-pod.yaml")[0]
    for value, secret, key in [(None, "warden-admin-token", "token"), ("llm-metrics", "llm-metrics", "token"),
                               ("llm-metrics:bearer.txt", "llm-metrics", "bearer.txt")]:
        if value is not None:
            pod["metadata"]["annotations"]["warden.io/admin-token-secret"] = value
        out = inject(pod, InjectOptions(version="test"))
        volume = next(v for v in out["spec"]["volumes"] if v["name"] == "warden-admin-token")
        assert volume == {"name": "warden-admin-token",
                          "secret": {"secretName": secret, "items": [{"key": key, "path": "token"}]}}
        assert "optional" not in volume["secret"]  # a missing Secret stops the pod (FailedMount)
        side = sidecar(out)
        assert {"name": "warden-admin-token", "mountPath": "/etc/warden/admin-token", "readOnly": True} \
            in side["volumeMounts"]
        assert side["args"][side["args"].index("--admin-token-file") + 1] == "/etc/warden/admin-token/token"
        # only the sidecar sees the token, and never through its environment
        assert all(m["name"] != "warden-admin-token" for c in out["spec"]["containers"]
                   for m in c.get("volumeMounts", []))
        assert all("TOKEN" not in e["name"] for e in side["env"])
        assert json.loads(out["metadata"]["annotations"][ANN_STATUS])["adminToken"] == {"secret": secret, "key": key}


@pytest.mark.parametrize("volume", ["warden-data", "warden-tmp", "warden-admin-token", "warden-policy"])
def test_volume_names_of_the_pod_are_not_clobbered(volume: str) -> None:
    pod = load(DATA / "vllm-pod.yaml")[0]  # annotated with a policy: warden-policy is taken too
    pod["spec"]["volumes"] = [{"name": volume, "emptyDir": {}}]
    with pytest.raises(InjectError, match=rf"Pod llm/vllm: volume\(s\) \['{volume}'\] already declared"):
        inject(pod, InjectOptions())
    del pod["metadata"]["annotations"]["warden.io/policy"]
    if volume == "warden-policy":  # without a policy the sidecar does not need that name
        out = inject(pod, InjectOptions())
        assert [v["name"] for v in out["spec"]["volumes"]].count("warden-policy") == 1


def test_a_container_named_warden_is_an_error() -> None:
    pod = load(DATA / "vllm-pod.yaml")[0]
    pod["spec"]["initContainers"] = [{"name": "warden", "image": "busybox"}]
    with pytest.raises(InjectError, match="already named 'warden'"):
        inject(pod, InjectOptions())


def test_vllm_port_takeover() -> None:
    (pod,) = injected(DATA / "vllm-pod.yaml")
    model, = pod["spec"]["containers"]
    assert model["args"] == ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--port", "18000", "--host", "127.0.0.1"]
    assert "ports" not in model  # the Service-facing port moved
    assert model["readinessProbe"]["httpGet"]["port"] == 8000  # the name left with the port: probe via Warden
    side = sidecar(pod)
    assert side["restartPolicy"] == "Always" and pod["spec"]["initContainers"][-1] is side
    assert side["ports"][0] == {"name": "http", "containerPort": 8000, "protocol": "TCP"}
    assert side["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 9464}
    assert side["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 9464}
    assert side["securityContext"]["readOnlyRootFilesystem"] is True
    assert side["args"][-2:] == ["--rules", "/etc/warden/policy/rules.yaml"]
    env = {e["name"]: e for e in side["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    status = json.loads(pod["metadata"]["annotations"][ANN_STATUS])
    assert status == {"version": "test", "container": "warden", "native": True, "modelContainer": "vllm",
                      "ports": {"listen": 8000, "upstream": 18000, "admin": 9464},
                      "adminToken": {"secret": "warden-admin-token", "key": "token"}, "rewrite": "args",
                      "server": "vllm (warden.io/backend)", "backend": "vllm"}


def test_env_fallback_and_other_containers_untouched() -> None:
    source = load(DATA / "deployment-env.yaml")[0]
    (deployment,) = injected(DATA / "deployment-env.yaml")
    spec = deployment["spec"]["template"]["spec"]
    tgi, shipper = spec["containers"]
    assert {"name": "PORT", "value": "10080"} in tgi["env"]
    assert shipper == source["spec"]["template"]["spec"]["containers"][1]
    assert [c["name"] for c in spec["initContainers"]] == ["fetch-weights", "warden"]
    assert "--admin" in sidecar(deployment["spec"]["template"])["args"]


def test_selection() -> None:
    docs = load(DATA / "cronjob-list.yaml")
    (out,) = injected(DATA / "cronjob-list.yaml")
    assert [bool(pods(item)) for item in out["items"]] == [True, False, False, False, False]
    assert out["items"][1:] == docs[0]["items"][1:]
    everything, decisions = inject_report(docs[0], InjectOptions(require_label=False, version="test"))
    # --all takes the unlabeled Job, but busybox runs no model server: skipped, said why, not refused
    assert [bool(pods(item)) for item in everything["items"]] == [True, False, False, False, False]
    assert [(d.where, d.outcome) for d in decisions] == [
        ("CronJob nightly-eval", "injected"), ("DaemonSet opted-out", "skipped"), ("Job unlabeled", "skipped"),
        ("Service vllm", "skipped"), ("ConfigMap vllm-policy", "skipped")]
    assert "no model server found" in decisions[2].reason and "'x'" in decisions[2].reason
    assert decisions[1].reason == 'opted out (warden.io/inject: "false")'


def test_already_injected_by_annotation_is_left_alone() -> None:
    pod = load(DATA / "vllm-pod.yaml")[0]
    pod["metadata"]["annotations"][ANN_STATUS] = "{}"
    assert inject(pod, InjectOptions(version="test")) == pod


@pytest.mark.parametrize(("annotations", "message"), [
    ({"warden.io/upstream-port": "http"}, "not a port number"),
    ({"warden.io/internal-port": "70000"}, "outside 1-65535"),
    ({"warden.io/upstream-port": "8080"}, "matches no containerPort and no port flag"),
    ({"warden.io/admin-port": "8000"}, "must differ"),
    ({"warden.io/backend": "ollama"}, "expected one of"),
    ({"warden.io/policy": "Bad_Name"}, "CONFIGMAP"),
    ({"warden.io/admin-token-secret": "Bad_Name"}, "SECRET or SECRET:KEY"),
    ({"warden.io/admin-token-secret": "metrics:"}, "SECRET or SECRET:KEY"),
    ({"warden.io/admin-token-secret": "metrics/token"}, "SECRET or SECRET:KEY"),
])
def test_bad_annotations_are_errors(annotations: dict[str, str], message: str) -> None:
    pod = load(DATA / "vllm-pod.yaml")[0]
    pod["metadata"]["annotations"].update(annotations)
    with pytest.raises(InjectError, match=message) as info:
        inject(pod, InjectOptions())
    assert "Pod llm/vllm" in str(info.value)


def test_port_clash_with_another_container() -> None:
    pod = load(DATA / "vllm-pod.yaml")[0]
    pod["spec"]["containers"].append({"name": "exporter", "image": "x", "ports": [{"containerPort": 9464}]})
    with pytest.raises(InjectError, match=r"\[9464\] already declared"):
        inject(pod, InjectOptions())
    pod = load(DATA / "multi-doc.yaml")[0]  # Triton's own grpc port
    pod["metadata"]["annotations"]["warden.io/admin-port"] = "8001"
    with pytest.raises(InjectError, match=r"\[8001\] already declared"):
        inject(pod, InjectOptions())


def test_other_kinds_pass_through() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}}
    assert inject(secret, InjectOptions()) == secret


def test_default_image_carries_the_package_version() -> None:
    from importlib.metadata import version

    assert default_image() == f"ghcr.io/warden/warden:{version('llm-warden')}"
    assert InjectOptions().image == default_image()


def test_cli_file_to_file(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    argv = ["-f", str(DATA / "statefulset-regular.yaml"), "-o", str(out), "--no-native-sidecar",
            "--image", "ghcr.io/warden/warden:test"]
    assert inject_cli.main(argv) == 0
    (doc,) = load(out)
    expected = load(DATA / "statefulset-regular.injected.yaml")[0]
    # the CLI stamps the installed version; everything else equals the golden file
    for d in (doc, expected):
        d["spec"]["template"]["metadata"]["annotations"][ANN_STATUS] = "x"
    assert doc == expected


def test_cli_stdin_multi_document(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO((DATA / "multi-doc.yaml").read_text()))
    assert inject_cli.main(["-f", "-"]) == 0
    docs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    assert [d["kind"] for d in docs] == ["Pod", "Service"]
    assert sidecar(docs[0])["image"] == default_image()


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p", "labels": {"warden.io/inject": "true"}}, "spec": {"containers": []}}))
    assert inject_cli.main(["-f", str(bad)]) == 1
    assert "no containers" in capsys.readouterr().err
    assert inject_cli.main(["-f", str(tmp_path / "missing.yaml")]) == 1
    assert inject_cli.main([]) == 64


def test_image_annotation_and_default_tag() -> None:
    pod = load(DATA / "vllm-pod.yaml")[0]
    assert sidecar(inject(pod, InjectOptions()))["image"] == default_image()
    assert sidecar(inject(pod, InjectOptions(image="registry.local/warden:1")))["image"] == "registry.local/warden:1"
    pod["metadata"]["annotations"]["warden.io/image"] = "registry.local/warden@sha256:" + "a" * 64
    assert sidecar(inject(pod, InjectOptions(image="x:1")))["image"] == "registry.local/warden@sha256:" + "a" * 64
    pod["metadata"]["annotations"]["warden.io/image"] = "two words"
    with pytest.raises(InjectError, match="not an image reference"):
        inject(pod, InjectOptions())


@pytest.mark.parametrize(("native", "own", "expected"), [(True, None, 30 + 50), (True, 120, 120 + 50),
                                                         (False, None, 50), (False, 120, 120)])
def test_grace_period_covers_drain_and_final_checkpoint(native: bool, own: int | None, expected: int) -> None:
    """A native sidecar gets SIGTERM after the model container exits: Warden's 50 s (drain_grace 30 s, the
    proxy's stop and the audit log's final checkpoint, 10 s each) come on top of the pod's own grace; a regular
    sidecar stops beside the model server."""
    import dataclasses

    from proxy.config import WardenConfig
    from proxy.k8s.inject import SIDECAR_STOP_SECONDS

    drain = next(f.default for f in dataclasses.fields(WardenConfig) if f.name == "drain_grace")
    assert drain == 30.0 and SIDECAR_STOP_SECONDS == 30 + 20
    pod = load(DATA / "vllm-pod.yaml")[0]
    if own is not None:
        pod["spec"]["terminationGracePeriodSeconds"] = own
    out = inject(pod, InjectOptions(native_sidecar=native))
    assert out["spec"]["terminationGracePeriodSeconds"] == expected
    assert all("lifecycle" not in c for c in [*out["spec"]["containers"], *out["spec"].get("initContainers", [])])
