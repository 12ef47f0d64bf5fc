"""Sidecar injection: one pure function shared by `warden inject` and `warden webhook` (DESIGN section 8).

`inject(obj, options)` takes one Kubernetes object (a plain dict as parsed from YAML/JSON) and returns a new
dict; it never mutates its input and does no I/O. Kinds: Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet,
Job, CronJob (their pod template), List (each item). Every other kind comes back unchanged.

Selection: a pod (template) is injected when its label `warden.io/inject` is `"true"` (or, with
`InjectOptions(require_label=False)`, when the label is absent); `"false"` always opts out. A pod that already
carries the `warden.io/status` annotation comes back unchanged, which makes `inject(inject(x)) == inject(x)`.

Configuration, by pod annotations:
- `warden.io/upstream-port`: the model server's Service-facing port P (default: the first container's first
  containerPort, else 8000);
- `warden.io/internal-port`: the loopback port I the model server moves to (default P + 10000);
- `warden.io/admin-port`: Warden's /healthz, /readyz, /metrics port A (default 9464);
- `warden.io/backend`: vllm | triton | llama_cpp | sglang | tgi | openai (default vllm), passed as --backend so
  /readyz follows that server's own health endpoint;
- `warden.io/policy`: `NAME` or `NAME:KEY[,KEY...]`: a ConfigMap whose keys (default `rules.yaml`) are mounted
  read-only at /etc/warden/policy and passed with --rules. A missing key fails the pod's start (fail closed).
- `warden.io/admin-token-secret`: `NAME` or `NAME:KEY` (the same form as the policy), default
  `warden-admin-token:token`: the Secret key holding the bearer token /metrics requires. Every injected pod
  mounts it, because the admin port must listen on the pod IP and `warden serve` refuses a non-loopback admin
  address without a token (exit 78). It is a read-only volume at /etc/warden/admin-token/token passed with
  --admin-token-file, not an env var: an env var's value is in the process environment (/proc/PID/environ,
  inherited by every child, copied into crash reports and debug dumps). Either way a rotated Secret takes a
  restart: the file is read once at start-up. A missing Secret or key fails the pod visibly: the kubelet
  cannot mount the volume, so the pod stays Pending (ContainerCreating or Init:0/N) with a FailedMount event
  naming the Secret, instead of starting with /metrics open or crash-looping.

Redirection is port takeover. Exactly this is rewritten, nothing else:
1. The model container is the container that declares containerPort P, else the first container. Its port
   entry for P (name and protocol kept) moves to the sidecar, which runs `warden serve --listen 0.0.0.0:P
   --upstream http://127.0.0.1:I`. Services keep targeting P (by number or by name) and now reach Warden.
2. The model server is told to listen on I: when a token `--port` / `--port=N` (`--http-port` for Triton)
   appears in the model container's command or args, its value becomes I, and the backend's host flag
   (`--host`, `--hostname` for TGI, `--http-address` for Triton) is set to 127.0.0.1 in the same list (replaced
   when present, else appended). Otherwise the env var PORT is set to I (TGI and many servers read it); the
   server then binds its own default address, so the example NetworkPolicy admits traffic only on P and A.
   Shell strings (`sh -c "vllm serve ... --port 8000"`) are not parsed: use the PORT fallback or list args.
3. The model container's httpGet/tcpSocket probes that targeted P (by number or by the moved port's name) get
   the number P: the kubelet probes the pod IP, where the loopback-bound server cannot be reached, so the probe
   goes through Warden, which passes unknown routes such as /health through unchanged.

The sidecar is a native sidecar (an init container with `restartPolicy: Always`, Kubernetes >= 1.29, appended
after the pod's own init containers) unless `native_sidecar=False`, then the last regular container. It gets
readiness /readyz, liveness /healthz and a startup probe /healthz on A (so the model container starts after
Warden listens), POD_NAME/POD_NAMESPACE from the downward API (audit origins), a non-root read-only
securityContext, emptyDirs for /var/lib/warden (audit log and keys: lost with the pod, mirror them with
`--audit-s3` for retention) and /tmp, and the admin token volume. Its volumes are named `warden-*`; a pod
that already has a volume (or a container) of one of those names is an InjectError, not a silent clash. The
`warden.io/status` annotation records what was done.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from proxy.exceptions import ProxyError

LABEL_INJECT = "warden.io/inject"
ANN_STATUS = "warden.io/status"
ANN_UPSTREAM_PORT = "warden.io/upstream-port"
ANN_INTERNAL_PORT = "warden.io/internal-port"
ANN_ADMIN_PORT = "warden.io/admin-port"
ANN_BACKEND = "warden.io/backend"
ANN_POLICY = "warden.io/policy"
ANN_ADMIN_TOKEN_SECRET = "warden.io/admin-token-secret"  # noqa: S105 - this and below: names, not tokens
ANN_DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"

SIDECAR_NAME = "warden"
ADMIN_PORT_NAME = "warden-admin"  # the PodMonitor scrapes this name
DATA_VOLUME = "warden-data"
TMP_VOLUME = "warden-tmp"
POLICY_VOLUME = "warden-policy"
TOKEN_VOLUME = "warden-admin-token"  # noqa: S105
DATA_DIR = "/var/lib/warden"
POLICY_DIR = "/etc/warden/policy"
TOKEN_DIR = "/etc/warden/admin-token"  # noqa: S105
TOKEN_FILE = "token"  # noqa: S105 - the file under TOKEN_DIR, whatever the Secret's key is called
# The PodMonitor's credentials (deploy/kubernetes/podmonitor.yaml) name the same Secret and key.
DEFAULT_TOKEN_SECRET = "warden-admin-token"  # noqa: S105
DEFAULT_TOKEN_KEY = "token"  # noqa: S105
DEFAULT_UPSTREAM_PORT = 8000
DEFAULT_ADMIN_PORT = 9464
INTERNAL_PORT_OFFSET = 10000
DEFAULT_POLICY_KEY = "rules.yaml"
BACKENDS = ("vllm", "triton", "llama_cpp", "sglang", "tgi", "openai")

# backend -> (port flag, host flag) of its server's command line; the generic pair for the rest.
_PORT_FLAGS: dict[str, tuple[str, str]] = {"tgi": ("--port", "--hostname"), "triton": ("--http-port", "--http-address")}
_GENERIC_FLAGS = ("--port", "--host")
# Pod template locations per kind (keys from the object's root).
_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
_DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
_CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]{1,253}")  # Secret keys follow the same rule


class InjectError(ProxyError, ValueError):
    """The object cannot be injected as asked; the message names the object, the annotation and the value."""


def _package_version() -> str:
    try:
        return version("llm-warden")
    except PackageNotFoundError:  # a source checkout that was never installed
        return "0.0.0"


def default_image() -> str:
    return f"ghcr.io/warden/warden:{_package_version()}"


@dataclass(frozen=True, slots=True)
class InjectOptions:
    image: str = field(default_factory=default_image)
    native_sidecar: bool = True
    require_label: bool = True  # False: inject unlabeled pods too (`warden inject --all`)
    cluster: str | None = None  # WARDEN_CLUSTER for audit origins
    cpu_request: str = "100m"
    memory_request: str = "256Mi"
    cpu_limit: str = "2"
    memory_limit: str = "1Gi"  # the semantic model's ONNX session lives here
    version: str = field(default_factory=_package_version)


@dataclass(frozen=True, slots=True)
class PodSettings:
    """What the annotations resolved to for one pod."""

    model_container: str
    upstream_port: int
    internal_port: int
    admin_port: int
    backend: str
    policy: str | None
    policy_keys: tuple[str, ...]
    token_secret: str
    token_key: str


def inject(obj: dict[str, Any], options: InjectOptions) -> dict[str, Any]:
    """A copy of `obj` with the Warden sidecar in every selected pod (template); see the module docstring."""
    out = copy.deepcopy(obj)
    kind = out.get("kind")
    if kind == "List":
        out["items"] = [inject(item, options) for item in out.get("items") or []]
        return out
    if kind == "Pod":
        _inject_pod(out, options, _describe(out))
        return out
    path = _TEMPLATE_PATHS.get(str(kind))
    if path is None:
        return out
    template: Any = out
    for key in path:
        template = template.get(key) if isinstance(template, dict) else None
    if isinstance(template, dict):
        _inject_pod(template, options, _describe(out))
    return out


def is_selected(pod: dict[str, Any], options: InjectOptions) -> bool:
    meta = pod.get("metadata") or {}
    label = (meta.get("labels") or {}).get(LABEL_INJECT)
    if label == "false" or ANN_STATUS in (meta.get("annotations") or {}):
        return False
    return label == "true" or (label is None and not options.require_label)


def settings(pod: dict[str, Any], where: str) -> PodSettings:
    """Resolve the annotations of one pod (template) against its containers; raise InjectError on bad values."""
    meta = pod.get("metadata") or {}
    ann: dict[str, str] = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
    containers = (pod.get("spec") or {}).get("containers") or []
    if not containers:
        raise InjectError(f"{where}: the pod has no containers")
    first_ports = containers[0].get("ports") or []
    default_port = int(first_ports[0]["containerPort"]) if first_ports else DEFAULT_UPSTREAM_PORT
    upstream = _port(ann, ANN_UPSTREAM_PORT, default_port, where)
    internal = _port(ann, ANN_INTERNAL_PORT, upstream + INTERNAL_PORT_OFFSET, where)
    admin = _port(ann, ANN_ADMIN_PORT, DEFAULT_ADMIN_PORT, where)
    if len({upstream, internal, admin}) != 3:
        raise InjectError(f"{where}: upstream {upstream}, internal {internal} and admin {admin} ports must differ")
    backend = ann.get(ANN_BACKEND, "vllm")
    if backend not in BACKENDS:
        raise InjectError(f"{where}: {ANN_BACKEND}={backend!r}, expected one of {', '.join(BACKENDS)}")
    model = next((c for c in containers if any(_port_number(p) == upstream for p in c.get("ports") or [])),
                 containers[0])
    # every declared port but the one that moves from the model container to the sidecar
    taken = {_port_number(p) for c in [*containers, *(pod["spec"].get("initContainers") or [])]
             for p in c.get("ports") or [] if c is not model or _port_number(p) != upstream}
    clash = sorted(taken & {upstream, internal, admin})
    if clash:
        raise InjectError(f"{where}: port(s) {clash} already declared by another container")
    policy, keys = _policy(ann.get(ANN_POLICY), where)
    token_secret, token_key = _token_secret(ann.get(ANN_ADMIN_TOKEN_SECRET), where)
    _check_names(pod["spec"], policy is not None, where)
    return PodSettings(str(model["name"]), upstream, internal, admin, backend, policy, keys, token_secret, token_key)


def _check_names(spec: dict[str, Any], with_policy: bool, where: str) -> None:
    """The API server rejects a pod with two volumes or two containers of one name; say which, and why."""
    ours = {DATA_VOLUME, TMP_VOLUME, TOKEN_VOLUME} | ({POLICY_VOLUME} if with_policy else set())
    volumes = sorted(ours & {str(v.get("name")) for v in spec.get("volumes") or []})
    if volumes:
        raise InjectError(f"{where}: volume(s) {volumes} already declared by the pod; the sidecar needs those names")
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    if any(c.get("name") == SIDECAR_NAME for c in containers):
        raise InjectError(f"{where}: a container is already named {SIDECAR_NAME!r}; the sidecar needs that name")


def _inject_pod(pod: dict[str, Any], options: InjectOptions, where: str) -> None:
    if not is_selected(pod, options):
        return
    s = settings(pod, where)
    spec = pod["spec"]
    model = next(c for c in spec["containers"] if c.get("name") == s.model_container)
    moved = [p for p in model.get("ports") or [] if _port_number(p) == s.upstream_port]
    rest = [p for p in model.get("ports") or [] if _port_number(p) != s.upstream_port]
    if rest:
        model["ports"] = rest
    else:
        model.pop("ports", None)
    moved_names = {str(p["name"]) for p in moved if "name" in p}
    rewrite = _move_model_server(model, s)
    _retarget_probes(model, s.upstream_port, moved_names)
    listen_port: dict[str, Any] = dict(moved[0]) if moved else {"containerPort": s.upstream_port}
    sidecar = _sidecar(s, options, listen_port)
    if options.native_sidecar:
        sidecar["restartPolicy"] = "Always"
        spec["initContainers"] = [*(spec.get("initContainers") or []), sidecar]
    else:
        spec["containers"] = [*spec["containers"], sidecar]
    volumes = [{"name": DATA_VOLUME, "emptyDir": {}}, {"name": TMP_VOLUME, "emptyDir": {}}]
    if s.policy is not None:
        items = [{"key": k, "path": k} for k in s.policy_keys]
        volumes.append({"name": POLICY_VOLUME, "configMap": {"name": s.policy, "items": items}})
    # Not `optional`: a missing Secret or key must stop the pod (FailedMount), never start it without a token.
    # No defaultMode: the kubelet writes the file owned by root (0644), and the sidecar runs as 65532 without
    # an fsGroup, so 0400 would be unreadable; only the sidecar mounts the volume.
    volumes.append({"name": TOKEN_VOLUME, "secret": {
        "secretName": s.token_secret, "items": [{"key": s.token_key, "path": TOKEN_FILE}]}})
    spec["volumes"] = [*(spec.get("volumes") or []), *volumes]
    meta = pod.setdefault("metadata", {})
    annotations = meta.setdefault("annotations", {})
    annotations.setdefault(ANN_DEFAULT_CONTAINER, s.model_container)
    annotations[ANN_STATUS] = json.dumps({
        "version": options.version,
        "container": SIDECAR_NAME,
        "native": options.native_sidecar,
        "modelContainer": s.model_container,
        "ports": {"listen": s.upstream_port, "upstream": s.internal_port, "admin": s.admin_port},
        "adminToken": {"secret": s.token_secret, "key": s.token_key},
        "rewrite": rewrite,
    }, sort_keys=True, separators=(",", ":"))


def _sidecar(s: PodSettings, options: InjectOptions, listen_port: dict[str, Any]) -> dict[str, Any]:
    args = [
        "serve",
        "--upstream", f"http://127.0.0.1:{s.internal_port}",
        "--listen", f"0.0.0.0:{s.upstream_port}",
        # the kubelet probes and Prometheus scrapes the pod IP, so the admin port cannot stay on loopback, and
        # off loopback `warden serve` requires a token (proxy/admin.py admin_token)
        "--admin", f"0.0.0.0:{s.admin_port}",
        "--admin-token-file", f"{TOKEN_DIR}/{TOKEN_FILE}",
        "--backend", s.backend,
        "--audit-dir", f"{DATA_DIR}/audit",
    ]
    for key in s.policy_keys if s.policy else ():
        args += ["--rules", f"{POLICY_DIR}/{key}"]
    env: list[dict[str, Any]] = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "HOME", "value": "/tmp"},  # noqa: S108 - an emptyDir: the root filesystem is read-only
        {"name": "WARDEN_MODEL_CACHE", "value": f"{DATA_DIR}/models"},
    ]
    if options.cluster:
        env.append({"name": "WARDEN_CLUSTER", "value": options.cluster})
    mounts: list[dict[str, Any]] = [
        {"name": DATA_VOLUME, "mountPath": DATA_DIR},
        {"name": TMP_VOLUME, "mountPath": "/tmp"},  # noqa: S108 - mitmproxy's private confdir
    ]
    if s.policy is not None:
        mounts.append({"name": POLICY_VOLUME, "mountPath": POLICY_DIR, "readOnly": True})
    mounts.append({"name": TOKEN_VOLUME, "mountPath": TOKEN_DIR, "readOnly": True})

    def probe(path: str, period: int, failures: int) -> dict[str, Any]:
        return {"httpGet": {"path": path, "port": s.admin_port}, "periodSeconds": period,
                "failureThreshold": failures, "timeoutSeconds": 2}

    return {
        "name": SIDECAR_NAME,
        "image": options.image,
        "command": ["warden"],
        "args": args,
        "ports": [listen_port, {"name": ADMIN_PORT_NAME, "containerPort": s.admin_port, "protocol": "TCP"}],
        "env": env,
        "volumeMounts": mounts,
        "readinessProbe": probe("/readyz", 5, 3),
        "livenessProbe": probe("/healthz", 10, 3),
        "startupProbe": probe("/healthz", 1, 60),
        "resources": {
            "requests": {"cpu": options.cpu_request, "memory": options.memory_request},
            "limits": {"cpu": options.cpu_limit, "memory": options.memory_limit},
        },
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65532,
            "runAsGroup": 65532,
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def _move_model_server(model: dict[str, Any], s: PodSettings) -> str:
    """Point the model server at 127.0.0.1:I; returns how: `command`, `args` or `env` (module docstring, 2)."""
    port_flag, host_flag = _PORT_FLAGS.get(s.backend, _GENERIC_FLAGS)
    for key in ("args", "command"):
        tokens = model.get(key)
        if not isinstance(tokens, list):
            continue
        new = [str(t) for t in tokens]
        if not _set_flag(new, port_flag, str(s.internal_port)):
            continue
        if not _set_flag(new, host_flag, "127.0.0.1"):
            new += [host_flag, "127.0.0.1"]
        model[key] = new
        return key
    env = [e for e in model.get("env") or [] if e.get("name") != "PORT"]
    model["env"] = [*env, {"name": "PORT", "value": str(s.internal_port)}]
    return "env"


def _set_flag(tokens: list[str], flag: str, value: str) -> bool:
    """Replace the value of `flag` (`--flag V` or `--flag=V`) in place; False when the flag is absent."""
    found = False
    for i, token in enumerate(tokens):
        if token == flag and i + 1 < len(tokens):
            tokens[i + 1] = value
            found = True
        elif token.startswith(flag + "="):
            tokens[i] = f"{flag}={value}"
            found = True
    return found


def _retarget_probes(model: dict[str, Any], port: int, names: set[str]) -> None:
    for kind in ("readinessProbe", "livenessProbe", "startupProbe"):
        probe = model.get(kind)
        if not isinstance(probe, dict):
            continue
        for handler in ("httpGet", "tcpSocket"):
            action = probe.get(handler)
            if isinstance(action, dict) and (action.get("port") == port or action.get("port") in names):
                action["port"] = port


def _port(ann: dict[str, str], key: str, default: int, where: str) -> int:
    raw = ann.get(key)
    if raw is None:
        value = default
    elif raw.strip().isdigit():
        value = int(raw)
    else:
        raise InjectError(f"{where}: {key}={raw!r} is not a port number")
    if not 1 <= value <= 65535:
        raise InjectError(f"{where}: {key} resolves to {value}, outside 1-65535")
    return value


def _port_number(port: dict[str, Any]) -> int:
    return int(port.get("containerPort", 0))


def _policy(raw: str | None, where: str) -> tuple[str | None, tuple[str, ...]]:
    if raw is None:
        return None, ()
    name, _, keys = raw.strip().partition(":")
    parsed = tuple(k.strip() for k in keys.split(",") if k.strip()) or (DEFAULT_POLICY_KEY,)
    if not _DNS1123.fullmatch(name) or not all(_CONFIGMAP_KEY.fullmatch(k) for k in parsed):
        raise InjectError(f"{where}: {ANN_POLICY}={raw!r}, expected CONFIGMAP or CONFIGMAP:KEY[,KEY...]")
    return name, parsed


def _token_secret(raw: str | None, where: str) -> tuple[str, str]:
    if raw is None:
        return DEFAULT_TOKEN_SECRET, DEFAULT_TOKEN_KEY
    name, sep, key = raw.strip().partition(":")
    key = key.strip() if sep else DEFAULT_TOKEN_KEY
    if not _DNS1123.fullmatch(name) or not _CONFIGMAP_KEY.fullmatch(key):
        raise InjectError(f"{where}: {ANN_ADMIN_TOKEN_SECRET}={raw!r}, expected SECRET or SECRET:KEY")
    return name, key


def _describe(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or "<unnamed>"
    namespace = meta.get("namespace")
    return f"{obj.get('kind')} {namespace + '/' if namespace else ''}{name}"
