"""./Dockerfile agrees with what the package and the injected sidecar assume, without building it (the build is
tests/deploy/test_image.py, after deploy/image/build.sh)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from proxy.k8s.inject import DATA_DIR, InjectOptions, inject
from tests.deploy.test_manifests import by_kind

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = (REPO / "Dockerfile").read_text(encoding="utf-8")
IGNORE = (REPO / ".dockerignore").read_text(encoding="utf-8").split("\n")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def instructions(name: str) -> list[str]:
    """The arguments of every `NAME ...` instruction, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE)
    return [m.group(1).strip() for m in re.finditer(rf"^{name} (.+)$", joined, re.MULTILINE)]


def runtime_stage() -> str:
    return DOCKERFILE.rsplit("\nFROM ", 1)[1]


def test_every_package_is_copied_and_not_ignored() -> None:
    packages = [p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]]
    copied = {c.split()[0] for c in instructions("COPY") if not c.startswith("--from")}
    assert set(packages) <= copied
    assert {"pyproject.toml", "README.md"} <= {w for c in instructions("COPY") for w in c.split()[:-1]}
    # deny by default, then allow: .venv, .git, .cache (the built image) never enter the build context
    assert IGNORE.index("*") < min(i for i, line in enumerate(IGNORE) if line.startswith("!"))
    for name in [*packages, "pyproject.toml", "README.md"]:
        assert f"!{name}/" in IGNORE or f"!{name}" in IGNORE, name


def test_the_runtime_user_is_the_one_injection_runs_as() -> None:
    (deployment,) = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "vllm"]
    spec = inject(deployment, InjectOptions())["spec"]["template"]["spec"]
    (sidecar,) = [c for c in spec["initContainers"] if c["name"] == "warden"]
    context = sidecar["securityContext"]
    (user,) = re.findall(r"^USER (\S+)$", runtime_stage(), re.MULTILINE)
    assert user == f"{context['runAsUser']}:{context['runAsGroup']}"  # numeric: runAsNonRoot checks it
    assert sidecar["command"] == ["warden"] and 'ENTRYPOINT ["warden"]' in runtime_stage()


def test_writable_paths_are_volumes_and_the_model_is_not_on_one() -> None:
    stage = runtime_stage()
    assert f'VOLUME ["{DATA_DIR}", "/tmp"]' in stage
    (cache,) = re.findall(r"WARDEN_MODEL_CACHE=(\S+)", stage)
    assert not cache.startswith((DATA_DIR, "/tmp"))
    assert f"ENV WARDEN_MODEL_CACHE={cache}" in DOCKERFILE  # the build stage writes the model there
    assert "warden models build" in DOCKERFILE
    assert "warden --version" in stage  # the smoke test runs as the runtime user


def test_the_compiler_stays_in_the_build_stage() -> None:
    assert "gcc" not in runtime_stage() and "python3-dev" not in runtime_stage()
    assert "COPY --from=build /opt/warden /opt/warden" in runtime_stage()
