"""The image built from ./Dockerfile (deploy/image/build.sh: mmdebstrap + buildah, an OCI layout unpacked by
umoci), run with runc as Kubernetes runs the injected sidecar: the injected container's args and env, its
volumes as bind mounts (emptyDirs, the admin token Secret, the policy ConfigMap), a read-only root filesystem,
UID 65532, no capabilities. A request goes through it to the stand-in upstream on loopback.

The build takes minutes, so `.ci/run` runs it as its own step before the tests; here the tests skip, with the
reason, when no image was built (WARDEN_IMAGE_DIR, default .cache/image) or the build script found that the
sandbox refuses containers (its skip-reason file)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import shutil
import signal
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml

from proxy.k8s.inject import DATA_DIR, POLICY_VOLUME, TOKEN_FILE, TOKEN_VOLUME, InjectOptions, inject
from tests.e2e.conftest import REPO, Process, free_port, wait_for_port, warden_command
from tests.tls import write_self_signed

pytestmark = pytest.mark.slow

IMAGE_DIR = Path(os.environ.get("WARDEN_IMAGE_DIR") or REPO / ".cache" / "image")
EXAMPLE = REPO / "deploy" / "kubernetes" / "example-vllm.yaml"
WEBHOOK = REPO / "deploy" / "kubernetes" / "webhook.yaml"
UID = 65532
PATH_IN_IMAGE = "/opt/warden/bin/warden"


def built_image() -> Path:
    """The unpacked bundle, or a skip naming why there is none."""
    reason = IMAGE_DIR / "skip-reason"
    if reason.is_file():
        pytest.skip(f"the image was not built here: {reason.read_text(encoding='utf-8').strip()}")
    bundle = IMAGE_DIR / "bundle"
    if not (bundle / "config.json").is_file():
        pytest.skip(f"no image in {IMAGE_DIR}: run deploy/image/build.sh (CI builds it before the tests)")
    return bundle


def image_config() -> dict[str, Any]:
    """The OCI image config the layout's only manifest names (what `docker inspect` shows)."""
    layout = IMAGE_DIR / "oci"
    (manifest_ref,) = json.loads((layout / "index.json").read_text(encoding="utf-8"))["manifests"]
    manifest = json.loads(blob(layout, manifest_ref["digest"]))
    config: dict[str, Any] = json.loads(blob(layout, manifest["config"]["digest"]))
    return config


def blob(layout: Path, digest: str) -> bytes:
    algorithm, _, hexdigest = digest.partition(":")
    return (layout / "blobs" / algorithm / hexdigest).read_bytes()


def test_the_bundle_is_the_layouts_image() -> None:
    bundle = built_image()
    unpacked = json.loads((bundle / "umoci.json").read_text(encoding="utf-8"))
    (manifest_ref,) = json.loads((IMAGE_DIR / "oci" / "index.json").read_text(encoding="utf-8"))["manifests"]
    assert unpacked["from_descriptor_path"]["descriptor_walk"][0]["digest"] == manifest_ref["digest"]


def test_image_config_is_what_the_manifests_assume() -> None:
    built_image()
    config = image_config()["config"]
    assert config["User"] == f"{UID}:{UID}"  # numeric: runAsNonRoot can check it without /etc/passwd
    assert config["Entrypoint"] == ["warden"]
    assert set(config["Volumes"]) == {DATA_DIR, "/tmp"}  # the injected emptyDirs
    env = dict(e.split("=", 1) for e in config["Env"])
    assert env["WARDEN_MODEL_CACHE"].startswith("/opt/warden/")  # in the image, not on a volume
    assert env["PATH"].startswith("/opt/warden/bin:")


def test_the_semantic_model_is_in_the_image_and_readable_by_the_runtime_user() -> None:
    rootfs = built_image() / "rootfs"
    (model,) = [p for p in (rootfs / "opt" / "warden" / "models").iterdir() if p.is_dir()]
    for path in [model, *model.iterdir()]:
        mode = path.stat().st_mode
        assert mode & 0o004 and not mode & 0o022, f"{path}: {oct(mode)}"
    assert (rootfs / "opt" / "warden" / "bin" / "warden").is_file()
    assert not list(rootfs.glob("usr/bin/gcc*"))  # the compiler stayed in the build stage


def example(kind: str, name: str, path: Path = EXAMPLE) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    found: dict[str, Any] = next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)
    return found


def runc_config(bundle: Path, args: list[str], env: dict[str, str], mounts: dict[str, Path]) -> dict[str, Any]:
    """umoci's config.json for the image, turned into the injected sidecar's container."""
    config: dict[str, Any] = json.loads((bundle / "config.json").read_text(encoding="utf-8"))
    process = config["process"]
    assert process["user"] == {"uid": UID, "gid": UID}  # from the image, not set here
    image_env = dict(e.split("=", 1) for e in process["env"])
    process["args"] = ["warden", *args]  # command: [warden] replaces the entrypoint, as in the pod
    process["env"] = [f"{k}={v}" for k, v in (image_env | env).items()]
    process["terminal"] = False
    process["noNewPrivileges"] = True
    process["capabilities"] = {k: [] for k in ("bounding", "effective", "inheritable", "permitted", "ambient")}
    config["root"] = {"path": str((bundle / "rootfs").resolve()), "readonly": True}
    # The host's network: the stand-in and the test's client are on loopback (a pod's containers share one too).
    config["linux"]["namespaces"] = [n for n in config["linux"]["namespaces"] if n["type"] != "network"]
    volumes = [{"destination": dest, "type": "bind", "source": str(src), "options": ["rbind", "rw"]}
               for dest, src in mounts.items()]
    kept = [m for m in config["mounts"] if m["destination"] not in mounts]
    config["mounts"] = [*kept, *volumes]
    return config


@pytest.fixture
def standin_upstream() -> Iterator[Process]:
    port = free_port()
    proc = subprocess.Popen(warden_command("standin", "--port", str(port)), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    process = Process(proc, port)
    wait_for_port(port, proc)
    yield process
    process.stop()


def runnable_image() -> Path:
    bundle = built_image()
    if os.geteuid() != 0:
        pytest.skip("runc runs the bundle as root here (the bundle was unpacked as root)")
    if shutil.which("runc") is None:
        pytest.skip("runc is not installed (deploy/image/build.sh installs it)")
    return bundle


@contextlib.contextmanager
def run_container(bundle: Path, root: Path, args: list[str], env: dict[str, str], mounts: dict[str, Path],
                  port: int, admin_port: int = 0, stop_timeout: float = 15.0) -> Iterator[Process]:
    """`runc run` of the image with these args, env and bind mounts; yields once `admin_port` (else `port`)
    listens, and deletes the container afterwards."""
    run = root / "bundle"
    run.mkdir()
    (run / "config.json").write_text(json.dumps(runc_config(bundle, args, env, mounts)), encoding="utf-8")
    name = f"warden-test-{port}"
    state = root / "runc"
    log = root / "container.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(["runc", "--root", str(state), "run", "--bundle", str(run), name],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    process = Process(proc, port, admin_port, log)
    try:
        try:
            wait_for_port(admin_port or port, proc, timeout=120)  # warden serve: once the model is loaded
        except (RuntimeError, TimeoutError) as exc:
            raise RuntimeError(f"{exc}\n{log.read_text(errors='replace')}") from None
        yield process
    finally:
        process.stop(timeout=stop_timeout)
        subprocess.run(["runc", "--root", str(state), "delete", "--force", name], capture_output=True)


def volume_dirs(spec: dict[str, Any], container: dict[str, Any], root: Path,
                files: dict[str, dict[str, str]]) -> dict[str, Path]:
    """The container's volumes as directories under root: emptyDirs 0777 as the kubelet makes them, Secret
    and ConfigMap items as root-owned 0644 files (`files`: volume name -> file name -> text)."""
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts: dict[str, Path] = {}
    for mount in container["volumeMounts"]:
        directory = root / mount["name"]
        directory.mkdir()
        if "emptyDir" in volumes[mount["name"]]:
            directory.chmod(0o777)
        for file, text in files.get(mount["name"], {}).items():
            (directory / file).write_text(text, encoding="utf-8")
        mounts[mount["mountPath"]] = directory
    return mounts


@pytest.fixture
def container(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Process, str]]:
    bundle = runnable_image()
    standin_upstream: Process = request.getfixturevalue("standin_upstream")  # only once the image is there
    template = inject(example("Deployment", "vllm"), InjectOptions())["spec"]["template"]
    spec = template["spec"]
    side = next(c for c in spec["initContainers"] if c["name"] == "warden")
    token = secrets.token_hex(32)
    mounts = volume_dirs(spec, side, tmp_path, {
        TOKEN_VOLUME: {TOKEN_FILE: token},
        POLICY_VOLUME: dict(example("ConfigMap", "vllm-policy")["data"]),
    })
    listen, admin = free_port(), free_port()
    args = list(side["args"])
    args[args.index("--listen") + 1] = f"127.0.0.1:{listen}"
    args[args.index("--admin") + 1] = f"0.0.0.0:{admin}"  # off loopback: the token file is required
    args[args.index("--upstream") + 1] = standin_upstream.url
    fields = {"metadata.name": "vllm-0", "metadata.namespace": "llm"}
    env = {e["name"]: e["value"] if "value" in e else fields[e["valueFrom"]["fieldRef"]["fieldPath"]]
           for e in side["env"]}
    # The image's model, whatever injection says: see test_injection_keeps_the_images_model.
    env.pop("WARDEN_MODEL_CACHE", None)
    with run_container(bundle, tmp_path, args, env, mounts, listen, admin) as process:
        yield process, token


def ask(proxy: Process, text: str) -> str:
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0, timeout=60)
    answer = client.chat.completions.create(model="standin-base", messages=[{"role": "user", "content": text}])
    return answer.choices[0].message.content or ""


def test_the_injected_sidecar_serves_from_the_image(container: tuple[Process, str]) -> None:
    """One container for every check (the model takes seconds to load): a request passes, the image's semantic
    model blocks a paraphrase without having been built at start, /metrics takes the mounted token, and
    SIGTERM drains and leaves an audit log that verifies."""
    proxy, token = container
    assert ask(proxy, "hello from the image") == "Echo: hello from the image"
    with pytest.raises(openai.BadRequestError) as info:
        ask(proxy, "need some snow for the party tonight")
    body = info.value.body
    assert isinstance(body, dict) and body["code"] == "content_blocked"
    assert any(rule.startswith("semantic.") for rule in body["rules"])
    assert httpx.get(proxy.admin_url + "/readyz", timeout=5).status_code == 200
    metrics = httpx.get(proxy.admin_url + "/metrics", headers={"authorization": f"Bearer {token}"}, timeout=5)
    assert metrics.status_code == 200 and "warden_" in metrics.text
    assert httpx.get(proxy.admin_url + "/metrics", timeout=5).status_code == 401

    assert proxy.log_path is not None
    assert proxy.stop() == 0, proxy.log_path.read_text(errors="replace")
    assert "building the semantic model" not in proxy.log_path.read_text(errors="replace")
    data = proxy.log_path.parent / "warden-data"
    verified = subprocess.run(warden_command("audit", "verify", str(data / "audit"), "--key-dir", str(data / "keys")),
                              cwd=REPO, capture_output=True, text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr


@contextlib.contextmanager
def webhook_container(tmp_path: Path, stop_timeout: float = 5) -> Iterator[tuple[Process, ssl.SSLContext]]:
    """webhook.yaml's container as written: its args, read-only root, only the TLS Secret mounted."""
    bundle = runnable_image()
    deployment = example("Deployment", "warden-webhook", WEBHOOK)
    spec = deployment["spec"]["template"]["spec"]
    (hook,) = spec["containers"]
    assert hook["securityContext"]["readOnlyRootFilesystem"] and hook["command"] == ["warden"]
    cert, key = write_self_signed(tmp_path, "warden-webhook.warden-system.svc")
    root = tmp_path / "pod"
    root.mkdir()
    mounts = volume_dirs(spec, hook, root, {
        "tls": {"tls.crt": cert.read_text(encoding="utf-8"), "tls.key": key.read_text(encoding="utf-8")}})
    port = free_port()
    args = [f"--listen=127.0.0.1:{port}" if a.startswith("--listen=") else a for a in hook["args"]]
    with run_container(bundle, root, args, {}, mounts, port, stop_timeout=stop_timeout) as process:
        yield process, ssl.create_default_context(cafile=str(cert))


def test_the_webhook_deployment_runs_from_the_image(tmp_path: Path) -> None:
    """It answers an AdmissionReview for the example pod with a patch."""
    pod = example("Deployment", "vllm")["spec"]["template"]
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "7f0b2d8c-0000-4000-8000-000000000002", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"}, "namespace": "llm",
        "operation": "CREATE", "object": {"apiVersion": "v1", "kind": "Pod", **pod}, "dryRun": False}}
    with webhook_container(tmp_path) as (process, context):
        conn = http.client.HTTPSConnection("127.0.0.1", process.port, timeout=30, context=context)
        try:
            conn.request("POST", "/mutate", body=json.dumps(review), headers={"Content-Type": "application/json"})
            answer = json.loads(conn.getresponse().read())["response"]
        finally:
            conn.close()
    assert answer["allowed"] is True and answer["patchType"] == "JSONPatch" and answer["patch"]


def test_the_webhook_stops_on_sigterm_as_pid_1(tmp_path: Path) -> None:
    with webhook_container(tmp_path, stop_timeout=1) as (process, _):
        process.proc.send_signal(signal.SIGTERM)  # runc forwards it to the container's PID 1
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.proc.wait(5)
        assert process.proc.returncode is not None


def test_injection_keeps_the_images_model() -> None:
    template = inject(example("Deployment", "vllm"), InjectOptions())["spec"]["template"]
    side = next(c for c in template["spec"]["initContainers"] if c["name"] == "warden")
    assert "WARDEN_MODEL_CACHE" not in {e["name"] for e in side["env"]}
