"""Sidecar injection: one pure function shared by `warden inject` and `warden webhook` (DESIGN section 8).

`inject(obj, options)` takes one Kubernetes object (a plain dict as parsed from YAML/JSON) and returns a new
dict; it never mutates its input and does no I/O. Kinds: Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet,
Job, CronJob (their pod template), List (each item). Every other kind comes back unchanged. A pod that cannot be
injected with certainty raises InjectError; `inject_report` instead returns, beside the object, a `Decision` per
pod (template) or object: injected, skipped (and why) or refused (and why, naming the container).

Selection: a pod (template) is injected when its label `warden.io/inject` is `"true"` (or, with
`InjectOptions(require_label=False)`, when the label is absent); `"false"` always opts out. A pod that already
carries the `warden.io/status` annotation comes back unchanged, which makes `inject(inject(x)) == inject(x)`.

Configuration, by pod annotations:
- `warden.io/upstream-port`: the model server's Service-facing port P (default: the first container's first
  containerPort, else its server's port flag, else 8000). An annotated P must be a containerPort or the value of
  a container's port flag: anything else is refused;
- `warden.io/internal-port`: the loopback port I the model server moves to (default P + 10000);
- `warden.io/admin-port`: Warden's /healthz, /readyz, /metrics port A (default 9464);
- `warden.io/backend`: vllm | triton | llama_cpp | sglang | tgi | openai, passed as --backend so /readyz follows
  that server's own health endpoint (/health; Triton /v2/health/ready; /v1/models where /health answers 404, as
  with llama-cpp-python: proxy/admin.py `Readiness`). Default: the server recognized in the command line
  (proxy/k8s/servers.py), else vllm; an annotation that contradicts the recognized server is refused;
- `warden.io/image`: the sidecar image for this pod (default `InjectOptions.image`: `--image`, else
  ghcr.io/warden/warden:<package version>);
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
1. The model container is the container that declares containerPort P (else whose port flag says P, else the
   first container). Its port entry for P (name and protocol kept) moves to the sidecar, which runs `warden serve
   --listen 0.0.0.0:P --upstream http://127.0.0.1:I`. Services keep targeting P (by number or by name) and now
   reach Warden.
2. The model server is told to listen on 127.0.0.1:I by proxy/k8s/ports.py `move`: its port flag's value becomes
   I and its host flag 127.0.0.1 (appended when absent), in the exec-form command/args or inside a `sh -c`
   script that is one simple command line; a variable is set only for a server that reads it (TGI's PORT and
   HOSTNAME, llama-cpp-python's PORT and HOST). Whenever the port cannot be moved with certainty the pod is
   refused (InjectError naming the container): a webhook denial, `warden inject` exit status 1. A pod selected
   only by `--all` in which no model server is recognized is skipped, not refused.
3. The model container's httpGet/tcpSocket probes that targeted P (by number or by the moved port's name) get
   the number P: the kubelet probes the pod IP, where the loopback-bound server cannot be reached, so the probe
   goes through Warden, which passes unknown routes such as /health through unchanged.
4. `terminationGracePeriodSeconds` grows by what Warden needs after SIGTERM (SIDECAR_STOP_SECONDS: drain_grace,
   then the proxy's stop and the audit log's final checkpoint, proxy/server.py `drain`). A native sidecar gets
   SIGTERM only after the model container has exited, so the pod's own grace (default 30 s) is kept for the model
   server and Warden's is added to it; no preStop hook is needed. A regular sidecar stops alongside the model
   server, so the larger of the two is enough.

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
import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from proxy.config import WardenConfig
from proxy.exceptions import ProxyError
from proxy.k8s import ports
from proxy.k8s.servers import RefusedError

LABEL_INJECT = "warden.io/inject"
ANN_STATUS = "warden.io/status"
ANN_UPSTREAM_PORT = "warden.io/upstream-port"
ANN_INTERNAL_PORT = "warden.io/internal-port"
ANN_ADMIN_PORT = "warden.io/admin-port"
ANN_BACKEND = "warden.io/backend"
ANN_POLICY = "warden.io/policy"
ANN_ADMIN_TOKEN_SECRET = "warden.io/admin-token-secret"  # noqa: S105 - this and below: names, not tokens
ANN_IMAGE = "warden.io/image"
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
DEFAULT_GRACE_SECONDS = 30  # Kubernetes' terminationGracePeriodSeconds when the pod names none
_DRAIN_GRACE = next(f.default for f in dataclasses.fields(WardenConfig) if f.name == "drain_grace")
# proxy/server.py `drain`: the drain grace, then up to 10 s for the proxy to stop and 10 s for the audit log's
# shutdown record and final signed checkpoint.
SIDECAR_STOP_SECONDS = math.ceil(float(_DRAIN_GRACE)) + 10 + 10  # type: ignore[arg-type]
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


class NoModelServerError(InjectError):
    """No model server is recognized in the pod and no annotation names one (skipped when not labeled)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What injection did with one pod (template) or object, for `warden inject`'s report and the webhook's log."""

    where: str  # "Deployment llm/vllm"
    outcome: str  # injected | skipped | refused
    reason: str  # for a refusal, the InjectError's message (which names the object and the container)

    def __str__(self) -> str:
        if self.outcome == "refused":
            return f"refused: {self.reason}"
        return f"{self.where}: {self.outcome}: {self.reason}"


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
    image: str
    moved: ports.Moved


def inject(obj: dict[str, Any], options: InjectOptions) -> dict[str, Any]:
    """A copy of `obj` with the Warden sidecar in every selected pod (template); see the module docstring.
    InjectError when any pod is refused (every refusal in the message)."""
    out, decisions = inject_report(obj, options)
    refused = [d.reason for d in decisions if d.outcome == "refused"]
    if refused:
        raise InjectError("; ".join(refused))
    return out


def inject_report(obj: dict[str, Any], options: InjectOptions) -> tuple[dict[str, Any], list[Decision]]:
    """`inject` that never raises for a pod: a copy of `obj` with every pod that could be injected injected (a
    refused one left as it was), and what was decided for each pod (template) or object, in order."""
    out = copy.deepcopy(obj)
    decisions: list[Decision] = []
    _inject_object(out, options, decisions)
    return out, decisions


def _inject_object(out: dict[str, Any], options: InjectOptions, decisions: list[Decision]) -> None:
    kind = out.get("kind")
    if kind == "List":
        for item in out.get("items") or []:
            if isinstance(item, dict):
                _inject_object(item, options, decisions)
        return
    where = _describe(out)
    if kind == "Pod":
        decisions.append(_inject_pod(out, options, where))
        return
    path = _TEMPLATE_PATHS.get(str(kind))
    template: Any = out if path else None
    for key in path or ():
        template = template.get(key) if isinstance(template, dict) else None
    if isinstance(template, dict):
        decisions.append(_inject_pod(template, options, where))
    else:
        decisions.append(Decision(where, "skipped", "no pod template in this kind"))


def skip_reason(pod: dict[str, Any], options: InjectOptions) -> str | None:
    """Why the pod (template) is not selected; None when it is."""
    meta = pod.get("metadata") or {}
    label = (meta.get("labels") or {}).get(LABEL_INJECT)
    if ANN_STATUS in (meta.get("annotations") or {}):
        return f"already injected ({ANN_STATUS} is set)"
    if label == "false":
        return f'opted out ({LABEL_INJECT}: "false")'
    if label is None and options.require_label:
        return f"not selected (no {LABEL_INJECT} label; --all takes unlabeled pods)"
    if label not in (None, "true"):
        return f'not selected ({LABEL_INJECT} is {label!r}, not "true")'
    return None


def is_selected(pod: dict[str, Any], options: InjectOptions) -> bool:
    return skip_reason(pod, options) is None


def settings(pod: dict[str, Any], where: str, image: str | None = None) -> PodSettings:
    """Resolve the annotations of one pod (template) against its containers, and how its model server moves;
    raise InjectError on bad values and on a server whose port cannot be moved with certainty."""
    meta = pod.get("metadata") or {}
    ann: dict[str, str] = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
    containers = (pod.get("spec") or {}).get("containers") or []
    if not containers:
        raise InjectError(f"{where}: the pod has no containers")
    backend = ann.get(ANN_BACKEND)
    if backend is not None and backend not in BACKENDS:
        raise InjectError(f"{where}: {ANN_BACKEND}={backend!r}, expected one of {', '.join(BACKENDS)}")
    upstream, model = _upstream(ann, containers, backend, where)
    internal = _port(ann, ANN_INTERNAL_PORT, upstream + INTERNAL_PORT_OFFSET, where)
    admin = _port(ann, ANN_ADMIN_PORT, DEFAULT_ADMIN_PORT, where)
    if len({upstream, internal, admin}) != 3:
        raise InjectError(f"{where}: upstream {upstream}, internal {internal} and admin {admin} ports must differ")
    # every declared port but the one that moves from the model container to the sidecar
    taken = {_port_number(p) for c in [*containers, *(pod["spec"].get("initContainers") or [])]
             for p in c.get("ports") or [] if c is not model or _port_number(p) != upstream}
    clash = sorted(taken & {upstream, internal, admin})
    if clash:
        raise InjectError(f"{where}: port(s) {clash} already declared by another container")
    policy, keys = _policy(ann.get(ANN_POLICY), where)
    token_secret, token_key = _token_secret(ann.get(ANN_ADMIN_TOKEN_SECRET), where)
    _check_names(pod["spec"], policy is not None, where)
    chosen = ann.get(ANN_IMAGE, image or default_image()).strip()
    if not chosen or any(c.isspace() for c in chosen):
        raise InjectError(f"{where}: {ANN_IMAGE}={chosen!r} is not an image reference")
    try:
        moved = ports.move(model, backend, upstream, internal, where)
    except ports.NoServerError as exc:
        raise NoModelServerError(str(exc)) from exc
    except RefusedError as exc:
        raise InjectError(str(exc)) from exc
    return PodSettings(str(model["name"]), upstream, internal, admin, moved.backend, policy, keys, token_secret,
                       token_key, chosen, moved)


def _upstream(ann: dict[str, str], containers: list[dict[str, Any]], backend: str | None,
              where: str) -> tuple[int, dict[str, Any]]:
    """The upstream port P and the model container (module docstring, 1)."""
    def declares(c: dict[str, Any], port: int) -> bool:
        return any(_port_number(p) == port for p in c.get("ports") or [])

    if ANN_UPSTREAM_PORT in ann:
        upstream = _port(ann, ANN_UPSTREAM_PORT, DEFAULT_UPSTREAM_PORT, where)
        model = next((c for c in containers if declares(c, upstream)), None) or next(
            (c for c in containers if str(upstream) in ports.port_values(c, backend)), None)
        if model is None:
            raise InjectError(f"{where}: {ANN_UPSTREAM_PORT}={upstream} matches no containerPort and no port flag "
                              "of any container: Warden would listen where no server does")
        return upstream, model
    first_ports = containers[0].get("ports") or []
    flagged = [v for v in ports.port_values(containers[0], backend) if v.isdigit()]
    upstream = int(first_ports[0]["containerPort"]) if first_ports else (
        int(flagged[0]) if flagged else DEFAULT_UPSTREAM_PORT)
    if not 1 <= upstream <= 65535:
        raise InjectError(f"{where}: the upstream port resolves to {upstream}, outside 1-65535")
    return upstream, next((c for c in containers if declares(c, upstream)), containers[0])


def _check_names(spec: dict[str, Any], with_policy: bool, where: str) -> None:
    """The API server rejects a pod with two volumes or two containers of one name; say which, and why."""
    ours = {DATA_VOLUME, TMP_VOLUME, TOKEN_VOLUME} | ({POLICY_VOLUME} if with_policy else set())
    volumes = sorted(ours & {str(v.get("name")) for v in spec.get("volumes") or []})
    if volumes:
        raise InjectError(f"{where}: volume(s) {volumes} already declared by the pod; the sidecar needs those names")
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    if any(c.get("name") == SIDECAR_NAME for c in containers):
        raise InjectError(f"{where}: a container is already named {SIDECAR_NAME!r}; the sidecar needs that name")


def _inject_pod(pod: dict[str, Any], options: InjectOptions, where: str) -> Decision:
    """Inject one pod (template) in place; a refusal leaves it untouched (everything is resolved first)."""
    skip = skip_reason(pod, options)
    if skip is not None:
        return Decision(where, "skipped", skip)
    try:
        s = settings(pod, where, options.image)
    except NoModelServerError as exc:
        if ((pod.get("metadata") or {}).get("labels") or {}).get(LABEL_INJECT) != "true":
            return Decision(where, "skipped", f"no model server found ({exc})")
        return Decision(where, "refused", str(exc))
    except InjectError as exc:
        return Decision(where, "refused", str(exc))
    spec = pod["spec"]
    model = next(c for c in spec["containers"] if c.get("name") == s.model_container)
    moved = [p for p in model.get("ports") or [] if _port_number(p) == s.upstream_port]
    rest = [p for p in model.get("ports") or [] if _port_number(p) != s.upstream_port]
    if rest:
        model["ports"] = rest
    else:
        model.pop("ports", None)
    moved_names = {str(p["name"]) for p in moved if "name" in p}
    model.update(s.moved.fields)
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
    own = spec.get("terminationGracePeriodSeconds")
    base = own if isinstance(own, int) else DEFAULT_GRACE_SECONDS
    spec["terminationGracePeriodSeconds"] = (base + SIDECAR_STOP_SECONDS if options.native_sidecar
                                             else max(base, SIDECAR_STOP_SECONDS))
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
        "rewrite": s.moved.how,
        "server": s.moved.server,
        "backend": s.backend,
    }, sort_keys=True, separators=(",", ":"))
    return Decision(where, "injected", f"{s.moved.server} in container {s.model_container!r} moved from port "
                    f"{s.upstream_port} to 127.0.0.1:{s.internal_port} ({s.moved.how}); sidecar {s.image}, "
                    f"--backend {s.backend}")


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
        "image": s.image,
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
