"""What the kubelet hands an injected container, on this machine: its volumes as directories under a temp root
(Secret and ConfigMap items written as files, emptyDirs empty), its env resolved (plain values, the downward
API, Secret keys), and its args and env with every mount path moved to where that volume really is.

A Secret or ConfigMap (or key) the pod names but the test did not supply raises FailedMount, as the kubelet
would refuse to start the pod. Used by tests/proxy/k8s/test_inject.py and tests/e2e/test_injected_sidecar.py to
run the injected `warden serve` command line through the real start-up code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Data = Mapping[str, Mapping[str, str]]  # object name -> key -> value


class FailedMountError(LookupError):
    """The pod names a Secret, a ConfigMap or a key that does not exist: the kubelet would not start it."""


@dataclass(frozen=True, slots=True)
class Started:
    args: list[str]
    env: dict[str, str]
    mounts: dict[str, Path]  # mountPath in the container -> directory here


def start(pod_spec: dict[str, Any], container: dict[str, Any], root: Path, *, secrets: Data | None = None,
          config_maps: Data | None = None, field_refs: Mapping[str, str] | None = None) -> Started:
    """`container`'s args and env as it would see them, its volumes materialized under `root`."""
    secrets, config_maps, field_refs = secrets or {}, config_maps or {}, field_refs or {}
    volumes = {v["name"]: v for v in pod_spec.get("volumes") or []}
    mounts: dict[str, Path] = {}
    for mount in container.get("volumeMounts") or []:
        volume = volumes[mount["name"]]  # KeyError: the pod spec itself is broken
        directory = root / volume["name"]
        directory.mkdir(parents=True, exist_ok=True)
        if "secret" in volume:
            _project(directory, volume["secret"], "Secret", volume["secret"]["secretName"], secrets)
        elif "configMap" in volume:
            _project(directory, volume["configMap"], "ConfigMap", volume["configMap"]["name"], config_maps)
        elif "emptyDir" not in volume:
            raise NotImplementedError(f"volume {volume['name']}: only secret, configMap and emptyDir")
        mounts[mount["mountPath"]] = directory
    move = _mover(mounts)
    env: dict[str, str] = {}
    for var in container.get("env") or []:
        if "value" in var:
            env[var["name"]] = move(var["value"])
        elif "fieldRef" in var.get("valueFrom", {}):
            env[var["name"]] = field_refs[var["valueFrom"]["fieldRef"]["fieldPath"]]
        else:
            ref = var["valueFrom"]["secretKeyRef"]
            env[var["name"]] = _lookup(secrets, "Secret", ref["name"], ref["key"])
    return Started([move(a) for a in container.get("args") or []], env, mounts)


def _project(directory: Path, source: dict[str, Any], kind: str, name: str, data: Data) -> None:
    if name not in data:
        raise FailedMountError(f"{kind} {name!r} not found")
    items = source.get("items") or [{"key": k, "path": k} for k in data[name]]
    for item in items:
        (directory / item["path"]).write_text(_lookup(data, kind, name, item["key"]), encoding="utf-8")


def _lookup(data: Data, kind: str, name: str, key: str) -> str:
    if name not in data or key not in data[name]:
        raise FailedMountError(f"couldn't find key {key} in {kind} {name}")
    return data[name][key]


def _mover(mounts: dict[str, Path]) -> Callable[[str], str]:
    """A function moving a path under a mount (or `--flag=path`) to the mount's directory here."""
    ordered = sorted(mounts, key=len, reverse=True)  # /etc/warden/policy before a hypothetical /etc/warden

    def move(value: str) -> str:
        flag, eq, rest = value.partition("=")
        if eq and flag.startswith("--"):
            return f"{flag}={move(rest)}"
        for path in ordered:
            if value == path or value.startswith(path + "/"):
                return str(mounts[path]) + value[len(path):]
        return value

    return move
